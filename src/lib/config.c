/* config.c - read vulnid.conf; every key has a default and a comment here */
#include "autoconfig.h"

#include <string.h>
#include <sys/stat.h>
#include <gio/gio.h>

#include "config.h"
#include "ids.h"
#include "owner.h"
#include "smtp.h"

/* The one table of configuration keys: defaults for loading, and the text
 * of the file `vulnid init` writes. */
typedef struct {
	const char *group;
	const char *key;
	const char *def;	/* NULL: filled in by init */
	const char *comment;
} config_key;

static const config_key config_keys[] = {
	{ "instance", "prefix", NULL,
	  "Identifier prefix: 2-16 upper-case letters or digits (CVE is refused).\n"
	  "Identifiers look like PREFIX-YYYY-NNNN." },
	{ "instance", "domain", NULL,
	  "Mail domain of the robot: requests go to request_local@domain." },
	{ "instance", "request_local", "request",
	  "Local part of the request address; entries are request_local+ID@domain." },
	{ "instance", "bounce_local", "request-bounces",
	  "Local part of the envelope sender of everything the robot sends." },
	{ "ids", "blocks", "1-",
	  "Numbers this instance may assign, every year: comma-separated ranges\n"
	  "N-M, or N- for no upper bound.  Robots of one authority own disjoint\n"
	  "blocks.  A key blocks_YYYY overrides this for year YYYY." },
	{ "limits", "max_message_size", "26214400",
	  "Largest message accepted, in bytes; larger mail is bounced (exit 65)." },
	{ "limits", "max_header_size", "65536",
	  "Largest single header field, in bytes, continuation lines included." },
	{ "limits", "max_headers", "1000",
	  "Most header fields in one message or MIME part." },
	{ "limits", "max_line_length", "65536",
	  "Longest line of the raw message, in bytes." },
	{ "limits", "max_parts", "500",
	  "Most MIME parts in one message." },
	{ "limits", "max_depth", "16",
	  "Deepest MIME nesting accepted." },
	{ "limits", "max_ids", "20",
	  "Most identifiers one request mail may ask for (blocks separated by ---)." },
	{ "limits", "max_fields", "100",
	  "Most pseudo-header fields in one request block." },
	{ "limits", "max_field_length", "1024",
	  "Longest value of one pseudo-header field, in characters." },
	{ "limits", "max_request_text", "524288",
	  "Longest request text read, in bytes: of a longer text part only the\n"
	  "first this many bytes are read as the request (fields, description);\n"
	  "all of it is kept as an attachment and the sender is told." },
	{ "limits", "time_limit", "120",
	  "Seconds vulnid-filter may spend on one mail before it gives up with\n"
	  "exit 75 (nothing half-written; the MTA retries).  Keep it below the\n"
	  "MTA's own command time limit." },
	{ "database", "busy_timeout", "10000",
	  "How long to wait for the database lock, in milliseconds, before the\n"
	  "filter gives up with exit 75 and the MTA retries." },
	{ "delivery", "transport", "maildir:sent",
	  "How mail leaves: maildir:PATH delivers into a Maildir (relative paths\n"
	  "are inside the instance directory); smtp://HOST[:PORT] relays it over\n"
	  "SMTP (port 25 by default, 587 for submission)." },
	{ "delivery", "starttls", "if-available",
	  "SMTP: no, if-available or required.  With required, a server that does\n"
	  "not offer STARTTLS gets nothing and the mail is deferred." },
	{ "delivery", "tls_verify", "remote",
	  "SMTP with STARTTLS: which relay certificates to accept.  remote: a relay\n"
	  "on this machine (localhost, 127.0.0.0/8, ::1) any, so that a fresh\n"
	  "Debian MTA with its self-signed certificate works; every other relay\n"
	  "only one that verifies (a trusted CA, the relay's name or address).\n"
	  "yes: every relay only one that verifies.  no: any certificate\n"
	  "(encryption without authentication)." },
	{ "delivery", "tls_ca_file", "",
	  "SMTP: a PEM file of the CAs to trust for tls_verify, instead of the\n"
	  "system's (relative paths are inside the instance directory)." },
	{ "delivery", "tls_fingerprint", "",
	  "SMTP: pin the relay's certificate: its SHA-256 fingerprint(s),\n"
	  "comma-separated (openssl x509 -noout -fingerprint -sha256).  When set,\n"
	  "only those certificates are accepted, whatever tls_verify says." },
	{ "delivery", "smtp_user", "",
	  "SMTP AUTH user name; empty means no authentication." },
	{ "delivery", "smtp_password_file", "",
	  "File holding the SMTP AUTH password (first line), mode 0600 or stricter\n"
	  "and owned by the user the robot runs as.  Never put it in this file." },
	{ "delivery", "timeout", "30",
	  "SMTP: seconds allowed for connecting and for each protocol step." },
	{ "delivery", "filter_budget", "10",
	  "Seconds vulnid-filter may spend delivering what one mail queued, after\n"
	  "the mail is recorded; the rest waits for vulnid queue run." },
	{ "delivery", "lifetime", "432000",
	  "Seconds after which mail that could not be delivered is given up\n"
	  "(default 5 days).  Retries back off from 1 minute, doubling, to 4 hours." },
	{ "delivery", "helo", "",
	  "Name sent in EHLO; empty means the domain." },
	{ "notify", "vendors", "yes",
	  "Tell the vendor's security contact about each new entry (yes or no)." },
	{ "announce", "to", "",
	  "Mailing lists that receive an announcement when an entry becomes\n"
	  "public, comma-separated; empty means none." },
	{ "announce", "digest", "none",
	  "none: one announcement per entry; daily: one mail a day listing the\n"
	  "day's entries, sent by vulnid tick." },
	{ "lifecycle", "moderators", "",
	  "Fingerprints of the moderators' OpenPGP keys (comma-separated): mail\n"
	  "signed by them may run duplicate-of, spam and link." },
	{ "lifecycle", "rate_requests_per_hour", "300",
	  "Most new requests one sender address or key may make in an hour;\n"
	  "more are archived and quarantined (one notice an hour).  0: no limit." },
	{ "lifecycle", "rate_additions_per_hour", "300",
	  "Most mails to entries one sender address or key may send in an hour.\n"
	  "0: no limit.  Vendor and moderator keys are never limited." },
	{ "lifecycle", "rate_network_per_hour", "1000",
	  "Most mails (requests and mail to entries) from one SMTP client network\n"
	  "(a /24 for IPv4, a /64 for IPv6; vulnid-filter -a) in an hour.  0: no limit." },
	{ "lifecycle", "rate_domain_per_hour", "1000",
	  "Most mails from envelope senders of one domain in an hour.  0: no limit." },
	{ "lifecycle", "rate_global_per_hour", "10000",
	  "Most mails the robot handles in an hour, from everyone together.\n"
	  "0: no limit." },
	{ "lifecycle", "confirm_unsigned", "no",
	  "yes: an unsigned request gets its identifier at once, but the vendor\n"
	  "is told and the entry announced only after the sender sends back the\n"
	  "token from the acknowledgement (this proves a working mailbox)." },
	{ "policy", "third_party_per_mail", "3",
	  "Most addresses that did not write to the robot (vendor contacts, relays,\n"
	  "a Reply-To in another domain) one mail not signed by a known key may\n"
	  "make it write to; the rest waits until the creator confirms with the\n"
	  "token (vulnid-filter(8), OUTGOING MAIL POLICY)." },
	{ "policy", "amplification", "3",
	  "Bytes the robot sends to third parties because of one mail not signed\n"
	  "by a known key: at most this many times the mail's size ..." },
	{ "policy", "amplification_floor", "4096",
	  "... where a mail counts as at least this many bytes." },
	{ "policy", "per_address_per_day", "20",
	  "Most mails nobody asked for (vendor notices, relays, notices to a\n"
	  "researcher) to one address in 24 hours; confirmed subscribers and the\n"
	  "announcement lists are not counted." },
	{ "policy", "per_domain_per_day", "100",
	  "The same, for all addresses of one domain together." },
	{ "policy", "loop_answers", "5",
	  "Answers to one address in loop_hours for mail that looks automatic or\n"
	  "repeats (it answers the robot's own mail, quotes its Message-IDs,\n"
	  "tokens or texts, or was sent before); more are recorded, not answered." },
	{ "policy", "loop_hours", "24",
	  "The period of loop_answers." },
	{ "policy", "allow_reserved_domains", "",
	  "Reserved or local domains (example.com, .test, ...) that Vendor-Contact\n"
	  "and security@ addresses may name all the same, comma-separated; for\n"
	  "test installations." },
	{ "auth", "authserv_id", "",
	  "The authserv-id of this site's own MTA in Authentication-Results fields\n"
	  "(RFC 8601).  Empty: such fields are ignored.  Only those at the top of\n"
	  "the header, above the Received fields counted by trusted_received, are\n"
	  "read; every other one, whatever it claims, is ignored." },
	{ "auth", "trusted_received", "0",
	  "Received fields at the top of the header that this site's own MTAs add\n"
	  "and that its Authentication-Results may stand below: 0 when the MTA puts\n"
	  "them on top; 1 if they come below its own Received field, and then the\n"
	  "MTA must remove such fields with its authserv-id from incoming mail." },
	{ "export", "osv_id_prefix", "x_",
	  "Prefix of OSV record ids (vulnid export osv): x_ for a database not\n"
	  "registered with OSV, giving x_PREFIX-YYYY-NNNN." },
	{ "export", "base_url", "",
	  "Public URL where vulnid export html is published, for absolute links;\n"
	  "empty means relative links only." },
	{ "export", "title", "",
	  "Title of the static web archive; empty means \"PREFIX vulnerability\n"
	  "identifiers\", with the prefix of [instance]." },
	{ "export", "log_origin", "",
	  "Name of the feed's transparency log (its checkpoint origin and note key),\n"
	  "used when the log key DIR/log.key is made; empty means\n"
	  "DOMAIN/vulnid/PREFIX/FPR16 (the first 16 hex digits of the robot key)." },
	{ "crypto", "sign", "pgpmime",
	  "How the robot signs what it sends: pgpmime (RFC 3156), inline\n"
	  "(clearsigned text, for list archives) or none.  Its key is in gnupg/." },
	{ "lmtpd", "socket", "lmtp.sock",
	  "vulnid-lmtpd(8): the unix socket the MTA delivers to over LMTP (relative\n"
	  "paths are inside the instance directory); empty: none.  Under systemd\n"
	  "socket activation the sockets come from the .socket unit instead." },
	{ "lmtpd", "socket_mode", "0660",
	  "Permissions of the socket (octal): the MTA's group must be able to write." },
	{ "lmtpd", "socket_group", "",
	  "Group given to the socket (the MTA's, e.g. postfix); empty: the user's." },
	{ "lmtpd", "listen", "",
	  "Also listen on TCP, HOST:PORT (e.g. 127.0.0.1:2424 or [::1]:2424);\n"
	  "empty: no TCP.  An address that is not loopback needs allow." },
	{ "lmtpd", "allow", "",
	  "Clients allowed on TCP: addresses or networks (192.0.2.10, 10.1.0.0/16,\n"
	  "2001:db8::/32), comma-separated; empty: loopback clients only.  Others\n"
	  "get 421 and are disconnected." },
	{ "lmtpd", "sessions", "32",
	  "Most LMTP sessions at once; more connections wait until one ends." },
	{ "lmtpd", "group_max", "64",
	  "Most mails committed in one transaction (one sync for all of them)." },
	{ "lmtpd", "max_mails_per_session", "1000",
	  "Mails one session may deliver; then it is ended with 421 (the MTA\n"
	  "connects again)." },
	{ "lmtpd", "max_recipients", "50",
	  "Recipients of one mail; more get 452 (the MTA sends them again)." },
	{ "lmtpd", "max_errors", "10",
	  "Bad commands in one session before it is ended with 421." },
	{ "lmtpd", "timeout", "300",
	  "Seconds to wait for the client's next command or data; then 421." },
	{ "lmtpd", "session_time_limit", "3600",
	  "Seconds one session may last; then it is ended with 421 after the\n"
	  "current mail.  Each mail's own limit is [limits] time_limit, counted\n"
	  "from the end of its data: when it is reached before the mail is\n"
	  "committed, the recipients get 451 and the MTA retries." },
	{ "lmtpd", "xforward", "yes",
	  "Offer XFORWARD (Postfix lmtp_send_xforward_command): the client address\n"
	  "the MTA received the mail from is used for the rate limits." },
	{ "templates", "dir", "",
	  "Directory searched first for mail templates; empty means DIR/templates.\n"
	  "Templates missing there come from the installed set." },
};

/* Whole-number keys read where they are used (config_key_int()), checked
 * here at load time. */
static const struct {
	const char *group, *key;
	gint64 min, max;
} checked_ints[] = {
	{ "lifecycle", "rate_network_per_hour", 0, 100000000 },
	{ "lifecycle", "rate_domain_per_hour", 0, 100000000 },
	{ "lifecycle", "rate_global_per_hour", 0, 100000000 },
	{ "policy", "third_party_per_mail", 0, 1000 },
	{ "policy", "amplification", 1, 1000 },
	{ "policy", "amplification_floor", 0, 100000000 },
	{ "policy", "per_address_per_day", 0, 100000000 },
	{ "policy", "per_domain_per_day", 0, 100000000 },
	{ "policy", "loop_answers", 0, 100000 },
	{ "policy", "loop_hours", 1, 24 * 365 },
	{ "auth", "trusted_received", 0, 20 },
};

const char *
config_builtin_template_dir(void)
{
	const char *env = g_getenv("VULNID_TEMPLATE_DIR");

	if (env != NULL && *env != '\0')
		return env;
	return VULNID_TEMPLATEDIR;
}

char *
config_locate(const char *explicit_path)
{
	const char *env;

	if (explicit_path != NULL)
		return g_strdup(explicit_path);
	env = g_getenv("VULNID_CONF");
	if (env != NULL && *env != '\0')
		return g_strdup(env);
	return NULL;
}

vulnid_status
config_become_owner(const char *path, GError **err)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *abs = NULL;
	g_autofree char *dir = NULL;
	vulnid_status s;

	if (path == NULL)
		return VULNID_OK;	/* config_load() says what is missing */
	abs = g_canonicalize_filename(path, NULL);
	dir = g_path_get_dirname(abs);
	s = owner_become(dir, &e);
	if (s == VULNID_ERR_NOTFOUND)
		return VULNID_OK;	/* config_load() says it cannot read the file */
	if (s != VULNID_OK)
		g_propagate_error(err, g_steal_pointer(&e));
	return s;
}

static const char *
config_default(const char *group, const char *key)
{
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++)
		if (strcmp(config_keys[i].group, group) == 0 &&
		    strcmp(config_keys[i].key, key) == 0)
			return config_keys[i].def;
	return NULL;
}

static vulnid_status
config_get_string(GKeyFile *kf, const char *group, const char *key,
		  char **out, GError **err)
{
	g_autoptr(GError) e = NULL;
	char *v = g_key_file_get_string(kf, group, key, &e);

	if (v == NULL) {
		const char *def = config_default(group, key);

		if (def == NULL)
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "missing [%s] %s", group, key);
		v = g_strdup(def);
	}
	g_strstrip(v);
	*out = v;
	return VULNID_OK;
}

static vulnid_status
config_get_int(GKeyFile *kf, const char *group, const char *key,
	       gint64 min, gint64 max, gint64 *out, GError **err)
{
	g_autofree char *s = NULL;
	vulnid_status st;
	char *end = NULL;
	gint64 v;

	st = config_get_string(kf, group, key, &s, err);
	if (st != VULNID_OK)
		return st;
	v = g_ascii_strtoll(s, &end, 10);
	if (*s == '\0' || end == NULL || *end != '\0' || v < min || v > max)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[%s] %s must be a whole number from %" G_GINT64_FORMAT
				   " to %" G_GINT64_FORMAT ", not '%s'",
				   group, key, min, max, s);
	*out = v;
	return VULNID_OK;
}

static vulnid_status config_get_bool(GKeyFile *kf, const char *group, const char *key, gboolean *out,
				     GError **err);

/* [delivery] tls_verify, tls_ca_file, tls_fingerprint */
static vulnid_status
config_tls(GKeyFile *kf, vulnid_config *cfg, GError **err)
{
	g_autofree char *fprs = NULL;
	g_auto(GStrv) parts = NULL;
	g_autoptr(GPtrArray) list = g_ptr_array_new();
	vulnid_status st;

	/* yes and no as before; true and false as every boolean key */
	if (g_ascii_strcasecmp(cfg->tls_verify, "true") == 0 || g_ascii_strcasecmp(cfg->tls_verify, "false") == 0) {
		gboolean yes = g_ascii_strcasecmp(cfg->tls_verify, "true") == 0;

		g_free(cfg->tls_verify);
		cfg->tls_verify = g_strdup(yes ? "yes" : "no");
	}
	if (strcmp(cfg->tls_verify, "yes") != 0 && strcmp(cfg->tls_verify, "no") != 0 &&
	    strcmp(cfg->tls_verify, "remote") != 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[delivery] tls_verify must be remote, yes or no, not '%s'", cfg->tls_verify);
	st = config_get_string(kf, "delivery", "tls_fingerprint", &fprs, err);
	if (st != VULNID_OK)
		return st;
	parts = g_strsplit(fprs, ",", -1);
	for (char **p = parts; *p; p++) {
		char *f;

		if (*g_strstrip(*p) == '\0')
			continue;
		f = smtp_fingerprint_normalize(*p);
		if (f == NULL) {
			g_ptr_array_foreach(list, (GFunc) (void (*)(void)) g_free, NULL);
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "[delivery] tls_fingerprint: '%s' is not a SHA-256 fingerprint", *p);
		}
		g_ptr_array_add(list, f);
	}
	if (list->len > 0) {
		g_ptr_array_add(list, NULL);
		cfg->tls_fingerprints = (char **) g_ptr_array_free(g_steal_pointer(&list), FALSE);
	}
	return VULNID_OK;
}

static vulnid_status
config_get_bool(GKeyFile *kf, const char *group, const char *key, gboolean *out, GError **err)
{
	g_autofree char *v = NULL;
	vulnid_status st = config_get_string(kf, group, key, &v, err);

	if (st != VULNID_OK)
		return st;
	if (g_ascii_strcasecmp(v, "yes") == 0 || g_ascii_strcasecmp(v, "true") == 0)
		*out = TRUE;
	else if (g_ascii_strcasecmp(v, "no") == 0 || g_ascii_strcasecmp(v, "false") == 0)
		*out = FALSE;
	else
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s must be yes or no, not '%s'",
				   group, key, v);
	return VULNID_OK;
}

/* A plain addr-spec: one '@', a dotted domain, nothing that needs quoting. */
gboolean
config_address_valid(const char *a)
{
	const char *at = strchr(a, '@');

	if (at == NULL || at == a || strchr(at + 1, '@') != NULL || strchr(at + 1, '.') == NULL ||
	    strlen(a) > 254)
		return FALSE;
	for (const char *p = a; *p; p++)
		if ((unsigned char) *p <= 0x20 || (unsigned char) *p >= 0x7f || strchr("<>()[]\\,;:\"", *p) != NULL)
			return FALSE;
	return TRUE;
}

void
config_free(vulnid_config *cfg)
{
	if (cfg == NULL)
		return;
	g_free(cfg->dir);
	g_free(cfg->conf_path);
	g_free(cfg->db_path);
	g_free(cfg->audit_path);
	g_free(cfg->spool_dir);
	g_free(cfg->prefix);
	g_free(cfg->domain);
	g_free(cfg->request_local);
	g_free(cfg->bounce_local);
	g_free(cfg->request_address);
	g_free(cfg->bounce_address);
	g_free(cfg->blocks);
	if (cfg->keyfile != NULL)
		g_key_file_unref(cfg->keyfile);
	g_free(cfg->transport);
	g_free(cfg->maildir);
	g_free(cfg->smtp_host);
	g_free(cfg->starttls);
	g_free(cfg->tls_verify);
	g_free(cfg->tls_ca_file);
	g_strfreev(cfg->tls_fingerprints);
	g_free(cfg->smtp_user);
	g_free(cfg->smtp_password_file);
	g_free(cfg->helo);
	g_strfreev(cfg->announce_to);
	g_free(cfg->announce_digest);
	g_free(cfg->template_dir);
	g_free(cfg->gnupg_home);
	g_free(cfg->sign);
	g_free(cfg->lmtpd_socket);
	g_free(cfg->lmtpd_socket_group);
	g_free(cfg->lmtpd_listen);
	if (cfg->lmtpd_allow != NULL)
		g_ptr_array_unref(cfg->lmtpd_allow);
	g_free(cfg);
}

char *
config_resolve_path(const vulnid_config *cfg, const char *path)
{
	if (g_path_is_absolute(path))
		return g_strdup(path);
	return g_build_filename(cfg->dir, path, NULL);
}

static gboolean
config_local_part_valid(const char *s)
{
	if (*s == '\0' || strlen(s) > 64)
		return FALSE;
	for (const char *p = s; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
			return FALSE;
	return TRUE;
}

gboolean
config_domain_valid(const char *s)
{
	if (*s == '\0' || strlen(s) > 253 || *s == '.' || *s == '-')
		return FALSE;
	for (const char *p = s; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '-' && *p != '.')
			return FALSE;
	return TRUE;
}

/* [lmtpd] values that are more than a string or a number. */
static vulnid_status
config_lmtpd(GKeyFile *kf, vulnid_config *cfg, GError **err)
{
	g_autofree char *mode = NULL;
	g_autofree char *allow = NULL;
	g_auto(GStrv) parts = NULL;
	vulnid_status st;
	char *end = NULL;

	st = config_get_string(kf, "lmtpd", "socket_mode", &mode, err);
	if (st != VULNID_OK)
		return st;
	cfg->lmtpd_socket_mode = g_ascii_strtoll(mode, &end, 8);
	if (*mode == '\0' || *end != '\0' || cfg->lmtpd_socket_mode < 0 || cfg->lmtpd_socket_mode > 0777)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] socket_mode must be octal, like 0660, not '%s'",
				   mode);
	st = config_get_bool(kf, "lmtpd", "xforward", &cfg->lmtpd_xforward, err);
	if (st == VULNID_OK)
		st = config_get_string(kf, "lmtpd", "allow", &allow, err);
	if (st != VULNID_OK)
		return st;
	cfg->lmtpd_allow = g_ptr_array_new_with_free_func(g_object_unref);
	parts = g_strsplit(allow, ",", -1);
	for (char **p = parts; *p; p++) {
		g_autofree char *a = g_strstrip(g_strdup(*p));
		g_autoptr(GError) e = NULL;
		GInetAddressMask *mask;

		if (*a == '\0')
			continue;
		mask = g_inet_address_mask_new_from_string(a, &e);
		if (mask == NULL)
			return vulnid_fail(err, VULNID_ERR_CONFIG, "[lmtpd] allow: '%s' is not an address or network", a);
		g_ptr_array_add(cfg->lmtpd_allow, mask);
	}
	if (*cfg->lmtpd_socket != '\0') {
		char *abs = config_resolve_path(cfg, cfg->lmtpd_socket);

		g_free(cfg->lmtpd_socket);
		cfg->lmtpd_socket = abs;
	}
	return VULNID_OK;
}

vulnid_status
config_load(const char *path, vulnid_config **out, GError **err)
{
	g_autoptr(vulnid_config) cfg = g_new0(vulnid_config, 1);
	g_autoptr(GError) e = NULL;
	g_autofree char *abs = NULL;
	g_autofree char *tdir = NULL;
	vulnid_status st;
	GKeyFile *kf;

	if (path == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "no configuration: use -c DIR/vulnid.conf or set VULNID_CONF");
	if (g_path_is_absolute(path))
		abs = g_strdup(path);
	else {
		g_autofree char *cwd = g_get_current_dir();
		abs = g_build_filename(cwd, path, NULL);
	}
	kf = cfg->keyfile = g_key_file_new();
	if (!g_key_file_load_from_file(kf, abs, G_KEY_FILE_NONE, &e)) {
		if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT) ||
		    g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_ACCES) ||
		    e->domain == G_FILE_ERROR)
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "cannot read '%s': %s", abs, e->message);
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "cannot parse '%s': %s", abs, e->message);
	}
	cfg->conf_path = g_strdup(abs);
	{
		/* Anyone who can write these can make the robot say anything:
		 * refuse to run on them (the Debian way: a dedicated user, a
		 * 0700 instance). */
		g_autofree char *dir = g_path_get_dirname(abs);
		g_autofree char *db = g_build_filename(dir, "vulnid.db", NULL);
		const char *paths[] = { dir, abs, db };

		for (gsize i = 0; i < G_N_ELEMENTS(paths); i++) {
			struct stat sb;

			if (stat(paths[i], &sb) == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
				return vulnid_fail(err, VULNID_ERR_CONFIG,
						   "'%s' is writable by group or others: chmod go-w it "
						   "(the instance must belong to the robot's user alone)", paths[i]);
		}
	}
	cfg->dir = g_path_get_dirname(abs);
	cfg->db_path = g_build_filename(cfg->dir, "vulnid.db", NULL);
	cfg->audit_path = g_build_filename(cfg->dir, "audit.log", NULL);
	cfg->spool_dir = g_build_filename(cfg->dir, "tmp", NULL);
	cfg->gnupg_home = g_build_filename(cfg->dir, "gnupg", NULL);

#define STR(g, k, f) do { st = config_get_string(kf, g, k, &cfg->f, err); \
		if (st != VULNID_OK) return st; } while (0)
#define INT(g, k, lo, hi, f) do { st = config_get_int(kf, g, k, lo, hi, &cfg->f, err); \
		if (st != VULNID_OK) return st; } while (0)
	STR("instance", "prefix", prefix);
	STR("instance", "domain", domain);
	STR("instance", "request_local", request_local);
	STR("instance", "bounce_local", bounce_local);
	STR("ids", "blocks", blocks);
	/* SQLite keeps a blob below 1e9 bytes. */
	INT("limits", "max_message_size", 1024, 900 * 1024 * 1024, max_message_size);
	INT("limits", "max_header_size", 998, 16 * 1024 * 1024, max_header_size);
	INT("limits", "max_headers", 10, 1000000, max_headers);
	INT("limits", "max_line_length", 998, G_GINT64_CONSTANT(1) << 30, max_line_length);
	INT("limits", "max_parts", 1, 100000, max_parts);
	INT("limits", "max_depth", 1, 1000, max_depth);
	INT("limits", "max_ids", 1, 10000, max_ids);
	INT("limits", "max_fields", 1, 10000, max_fields);
	INT("limits", "max_field_length", 16, 1000000, max_field_length);
	INT("limits", "time_limit", 1, 86400, time_limit);
	INT("limits", "max_request_text", 1024, 900 * 1024 * 1024, max_request_text);
	INT("database", "busy_timeout", 0, 3600 * 1000, busy_timeout);
	STR("delivery", "transport", transport);
	STR("delivery", "starttls", starttls);
	STR("delivery", "tls_verify", tls_verify);
	STR("delivery", "tls_ca_file", tls_ca_file);
	STR("delivery", "smtp_user", smtp_user);
	STR("delivery", "smtp_password_file", smtp_password_file);
	INT("delivery", "timeout", 1, 3600, smtp_timeout);
	INT("delivery", "filter_budget", 0, 3600, filter_budget);
	INT("delivery", "lifetime", 60, 365 * 86400, lifetime);
	STR("delivery", "helo", helo);
	STR("announce", "digest", announce_digest);
	STR("templates", "dir", template_dir);
	STR("crypto", "sign", sign);
	STR("lmtpd", "socket", lmtpd_socket);
	STR("lmtpd", "socket_group", lmtpd_socket_group);
	STR("lmtpd", "listen", lmtpd_listen);
	INT("lmtpd", "sessions", 1, 10000, lmtpd_sessions);
	INT("lmtpd", "group_max", 1, 10000, lmtpd_group_max);
	INT("lmtpd", "max_mails_per_session", 1, 1000000, lmtpd_max_mails);
	INT("lmtpd", "max_recipients", 1, 10000, lmtpd_max_recipients);
	INT("lmtpd", "max_errors", 0, 10000, lmtpd_max_errors);
	INT("lmtpd", "timeout", 1, 86400, lmtpd_timeout);
	INT("lmtpd", "session_time_limit", 1, 7 * 86400, lmtpd_session_time_limit);
	st = config_lmtpd(kf, cfg, err);
	if (st != VULNID_OK)
		return st;
	st = config_get_bool(kf, "notify", "vendors", &cfg->notify_vendors, err);
	if (st == VULNID_OK)
		st = config_tls(kf, cfg, err);
	if (st != VULNID_OK)
		return st;
	{
		g_autofree char *to = NULL;
		g_auto(GStrv) parts = NULL;
		GPtrArray *list = g_ptr_array_new();

		st = config_get_string(kf, "announce", "to", &to, err);
		if (st != VULNID_OK) {
			g_ptr_array_free(list, TRUE);
			return st;
		}
		parts = g_strsplit(to, ",", -1);
		for (char **p = parts; *p; p++) {
			char *a = g_strstrip(g_strdup(*p));

			if (*a == '\0') {
				g_free(a);
				continue;
			}
			if (!config_address_valid(a)) {
				g_free(a);
				g_ptr_array_add(list, NULL);
				g_strfreev((char **) g_ptr_array_free(list, FALSE));
				return vulnid_fail(err, VULNID_ERR_CONFIG,
						   "[announce] to: '%s' is not a mail address", *p);
			}
			g_ptr_array_add(list, a);
		}
		g_ptr_array_add(list, NULL);
		cfg->announce_to = (char **) g_ptr_array_free(list, FALSE);
	}
	if (strcmp(cfg->announce_digest, "none") != 0 && strcmp(cfg->announce_digest, "daily") != 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[announce] digest must be none or daily, not '%s'", cfg->announce_digest);
	{
		/* [lifecycle] is read where it is used; refuse nonsense here. */
		gint64 rate;
		gboolean b;
		g_autofree char *mods = NULL;
		g_auto(GStrv) list = NULL;

		st = config_get_int(kf, "lifecycle", "rate_requests_per_hour", 0, 1000000, &rate, err);
		if (st == VULNID_OK)
			st = config_get_int(kf, "lifecycle", "rate_additions_per_hour", 0, 1000000, &rate, err);
		if (st == VULNID_OK)
			st = config_get_bool(kf, "lifecycle", "confirm_unsigned", &b, err);
		if (st == VULNID_OK)
			st = config_get_string(kf, "lifecycle", "moderators", &mods, err);
		if (st != VULNID_OK)
			return st;
		list = g_strsplit_set(mods, ",;", -1);
		for (char **f = list; *f; f++) {
			gsize n = 0;
			gboolean ok = TRUE;

			for (const char *p = *f; *p; p++) {
				if (*p == ' ' || *p == '\t')
					continue;
				ok = ok && g_ascii_isxdigit(*p);
				n++;
			}
			if (n == 0)
				continue;
			if (!ok || (n != 40 && n != 64))
				return vulnid_fail(err, VULNID_ERR_CONFIG,
						   "[lifecycle] moderators: '%s' is not an OpenPGP fingerprint", *f);
		}
	}
	for (gsize i = 0; i < G_N_ELEMENTS(checked_ints); i++) {
		gint64 v;

		st = config_get_int(kf, checked_ints[i].group, checked_ints[i].key, checked_ints[i].min,
				    checked_ints[i].max, &v, err);
		if (st != VULNID_OK)
			return st;
	}
	if (strcmp(cfg->sign, "pgpmime") != 0 && strcmp(cfg->sign, "inline") != 0 &&
	    strcmp(cfg->sign, "none") != 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[crypto] sign must be pgpmime, inline or none, not '%s'", cfg->sign);
	if (strcmp(cfg->starttls, "no") != 0 && strcmp(cfg->starttls, "if-available") != 0 &&
	    strcmp(cfg->starttls, "required") != 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[delivery] starttls must be no, if-available or required, not '%s'",
				   cfg->starttls);
#undef STR
#undef INT

	if (!ids_prefix_valid(cfg->prefix))
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[instance] prefix '%s' is not 2-16 upper-case letters or digits (and not CVE)",
				   cfg->prefix);
	if (!config_domain_valid(cfg->domain))
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[instance] domain '%s' is not a domain name", cfg->domain);
	if (!config_local_part_valid(cfg->request_local) ||
	    !config_local_part_valid(cfg->bounce_local) ||
	    strchr(cfg->request_local, '+') != NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[instance] request_local and bounce_local must be letters, digits, '.', '-' or '_'");
	{
		g_autoptr(GArray) b = NULL;
		g_autoptr(GError) be = NULL;

		if (!ids_blocks_parse(cfg->blocks, &b, &be))
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "[ids] blocks: %s", be->message);
	}
	if (g_str_has_prefix(cfg->transport, "maildir:") && cfg->transport[8] != '\0') {
		cfg->maildir = config_resolve_path(cfg, cfg->transport + strlen("maildir:"));
	} else if (g_str_has_prefix(cfg->transport, "smtp://")) {
		g_autoptr(GError) ue = NULL;

		if (!smtp_parse_url(cfg->transport, &cfg->smtp_host, &cfg->smtp_port, &ue))
			return vulnid_fail(err, VULNID_ERR_CONFIG, "[delivery] transport: %s", ue->message);
	} else
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[delivery] transport '%s' is not maildir:PATH or smtp://HOST[:PORT]",
				   cfg->transport);
	if (*cfg->helo == '\0') {
		g_free(cfg->helo);
		cfg->helo = g_strdup(cfg->domain);
	}
	if (*cfg->tls_ca_file == '\0') {
		g_clear_pointer(&cfg->tls_ca_file, g_free);
	} else {
		char *p = config_resolve_path(cfg, cfg->tls_ca_file);

		g_free(cfg->tls_ca_file);
		cfg->tls_ca_file = p;
	}
	if (*cfg->template_dir == '\0') {
		g_free(cfg->template_dir);
		cfg->template_dir = g_build_filename(cfg->dir, "templates", NULL);
	} else {
		tdir = config_resolve_path(cfg, cfg->template_dir);
		g_free(cfg->template_dir);
		cfg->template_dir = g_steal_pointer(&tdir);
	}
	cfg->request_address = g_strdup_printf("%s@%s", cfg->request_local, cfg->domain);
	cfg->bounce_address = g_strdup_printf("%s@%s", cfg->bounce_local, cfg->domain);
	*out = g_steal_pointer(&cfg);
	return VULNID_OK;
}

gint64
config_key_int(const vulnid_config *cfg, const char *group, const char *key)
{
	gint64 v = 0;

	if (config_get_int(cfg->keyfile, group, key, G_MININT64, G_MAXINT64, &v, NULL) != VULNID_OK)
		return 0;
	return v;
}

char *
config_key_string(const vulnid_config *cfg, const char *group, const char *key)
{
	char *v = NULL;

	if (config_get_string(cfg->keyfile, group, key, &v, NULL) != VULNID_OK)
		return g_strdup("");
	return v;
}

char *
config_blocks_for_year(const vulnid_config *cfg, int year)
{
	g_autofree char *key = g_strdup_printf("blocks_%04d", year);
	char *v = g_key_file_get_string(cfg->keyfile, "ids", key, NULL);

	if (v == NULL)
		return g_strdup(cfg->blocks);
	return g_strstrip(v);
}

char *
config_default_text(const char *prefix, const char *domain)
{
	GString *s = g_string_new("# vulnid.conf: configuration of one vulnid instance (see vulnid.conf(5)).\n"
				  "# Paths are relative to the directory that holds this file.\n");
	const char *group = NULL;

	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++) {
		const config_key *k = &config_keys[i];
		g_auto(GStrv) lines = g_strsplit(k->comment, "\n", -1);
		const char *v = k->def;

		if (group == NULL || strcmp(group, k->group) != 0) {
			g_string_append_printf(s, "\n[%s]\n", k->group);
			group = k->group;
		}
		for (char **l = lines; *l; l++)
			g_string_append_printf(s, "# %s\n", *l);
		if (strcmp(k->key, "prefix") == 0)
			v = prefix;
		else if (strcmp(k->key, "domain") == 0)
			v = domain;
		g_string_append_printf(s, "%s = %s\n\n", k->key, v);
	}
	return g_string_free(s, FALSE);
}
