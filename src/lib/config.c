/* config.c - read vulnid.conf: one table of keys, from which loading,
 * validation, the file `vulnid init` writes and `vulnid config keys` (which
 * the test suite checks vulnid.conf(5) against) are all derived */
#include "autoconfig.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gio/gio.h>

#include "config.h"
#include "ids.h"
#include "owner.h"
#include "transport.h"

typedef enum {
	CK_STRING,	/* char *, stripped; an optional check */
	CK_INT,		/* gint64, decimal, from min to max */
	CK_OCTAL,	/* gint64, octal (a file mode), from min to max */
	CK_BOOL,	/* gboolean: yes, no, true or false */
	CK_CHOICE,	/* char *, one of the words of choices */
	CK_LIST,	/* char **, comma-separated, each item checked (and maybe rewritten) */
	CK_NETS,	/* GPtrArray of GInetAddressMask, comma-separated */
} config_type;

static const char *const type_names[] = { "string", "int", "octal", "bool", "choice", "list", "networks" };

typedef struct config_key config_key;

/* A string value's check: may replace *value (it owns it). */
typedef vulnid_status (*config_check)(const config_key *k, char **value, GError **err);

struct config_key {
	const char *group;
	const char *key;
	config_type type;
	gint64 min, max;	/* CK_INT, CK_OCTAL */
	const char *def;	/* NULL: required (filled in by vulnid init) */
	gsize offset;		/* of the field in vulnid_config */
	config_check check;	/* CK_STRING: the value; CK_LIST: each item */
	const char *choices;	/* CK_CHOICE: comma-separated */
	const char *doc;	/* the comment vulnid init writes */
};

static gboolean config_local_part_valid(const char *s);

/* Checks of what a type alone cannot say. */

static vulnid_status
check_prefix(const config_key *k, char **v, GError **err)
{
	(void) k;
	if (!ids_prefix_valid(*v))
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[instance] prefix '%s' is not 2-16 upper-case letters or digits (and not CVE)", *v);
	return VULNID_OK;
}

static vulnid_status
check_domain(const config_key *k, char **v, GError **err)
{
	(void) k;
	if (!config_domain_valid(*v))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[instance] domain '%s' is not a domain name", *v);
	return VULNID_OK;
}

/* request_local and bounce_local; entry addresses add +ID to the first. */
static vulnid_status
check_local(const config_key *k, char **v, GError **err)
{
	(void) k;
	if (!config_local_part_valid(*v) || strchr(*v, '+') != NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[instance] request_local and bounce_local must be letters, digits, '.', '-' or '_'");
	return VULNID_OK;
}

static vulnid_status
check_blocks(const config_key *k, char **v, GError **err)
{
	g_autoptr(GArray) b = NULL;
	g_autoptr(GError) be = NULL;

	(void) k;
	if (!ids_blocks_parse(*v, &b, &be))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[ids] blocks: %s", be->message);
	return VULNID_OK;
}

/* Fingerprints separated by ',' or ';', spaces inside allowed (as gpg
 * prints them); ratelimit.c reads the text the same way. */
static vulnid_status
check_moderators(const config_key *k, char **v, GError **err)
{
	g_auto(GStrv) list = g_strsplit_set(*v, ",;", -1);

	(void) k;
	for (char **f = list; *f; f++) {
		gsize n = 0;
		gboolean ok = TRUE;

		for (const char *p = *f; *p; p++) {
			if (*p == ' ' || *p == '\t')
				continue;
			ok = ok && g_ascii_isxdigit(*p);
			n++;
		}
		if (n != 0 && (!ok || (n != 40 && n != 64)))
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "[lifecycle] moderators: '%s' is not an OpenPGP fingerprint", *f);
	}
	return VULNID_OK;
}

static vulnid_status
item_address(const config_key *k, char **v, GError **err)
{
	if (!config_address_valid(*v))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s: '%s' is not a mail address", k->group, k->key, *v);
	return VULNID_OK;
}

/* Pinned certificates are compared as lower-case hex without colons. */
static vulnid_status
item_fingerprint(const config_key *k, char **v, GError **err)
{
	char *f = transport_fingerprint_normalize(*v);

	if (f == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s: '%s' is not a SHA-256 fingerprint",
				   k->group, k->key, *v);
	g_free(*v);
	*v = f;
	return VULNID_OK;
}

/* A witness of the feed's log: "VKEY URL" or "VKEY PATH".  Its shape
 * only: the key itself is read by vulnid export (note_witness_parse()),
 * so that the programs that read the configuration on every mail do not
 * load the log's cryptography. */
static vulnid_status
item_witness(const config_key *k, char **v, GError **err)
{
	g_auto(GStrv) w = g_strsplit_set(*v, " \t", -1);
	g_autoptr(GPtrArray) words = g_ptr_array_new();
	const char *vk;

	for (char **p = w; *p != NULL; p++)
		if (**p != '\0')
			g_ptr_array_add(words, *p);
	vk = words->len == 2 ? g_ptr_array_index(words, 0) : "";
	if (words->len != 2 || strchr(vk, '+') == NULL || strchr(strchr(vk, '+') + 1, '+') == NULL ||
	    !(g_str_has_prefix(g_ptr_array_index(words, 1), "https://") ||
	      g_str_has_prefix(g_ptr_array_index(words, 1), "http://") ||
	      ((const char *) g_ptr_array_index(words, 1))[0] == '/'))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s: '%s' is not \"VKEY URL\" or \"VKEY PATH\"",
				   k->group, k->key, *v);
	return VULNID_OK;
}

#define OFF(f) G_STRUCT_OFFSET(vulnid_config, f)
#define STRING(g, k, f, d, chk, doc) { g, k, CK_STRING, 0, 0, d, OFF(f), chk, NULL, doc }
#define INT(g, k, f, lo, hi, d, doc) { g, k, CK_INT, lo, hi, d, OFF(f), NULL, NULL, doc }
#define OCTAL(g, k, f, lo, hi, d, doc) { g, k, CK_OCTAL, lo, hi, d, OFF(f), NULL, NULL, doc }
#define BOOL(g, k, f, d, doc) { g, k, CK_BOOL, 0, 0, d, OFF(f), NULL, NULL, doc }
#define CHOICE(g, k, f, ch, d, doc) { g, k, CK_CHOICE, 0, 0, d, OFF(f), NULL, ch, doc }
#define LIST(g, k, f, item, d, doc) { g, k, CK_LIST, 0, 0, d, OFF(f), item, NULL, doc }
#define NETS(g, k, f, d, doc) { g, k, CK_NETS, 0, 0, d, OFF(f), NULL, NULL, doc }

/* The one table of configuration keys, in the order of the file that
 * vulnid init writes.  SQLite keeps a blob below 1e9 bytes: hence the
 * largest sizes. */
static const config_key config_keys[] = {
	STRING("instance", "prefix", prefix, NULL, check_prefix,
	  "Identifier prefix: 2-16 upper-case letters or digits (CVE is refused).\n"
	  "Identifiers look like PREFIX-YYYY-NNNN."),
	STRING("instance", "domain", domain, NULL, check_domain,
	  "Mail domain of the robot: requests go to request_local@domain."),
	STRING("instance", "request_local", request_local, "request", check_local,
	  "Local part of the request address; entries are request_local+ID@domain."),
	STRING("instance", "bounce_local", bounce_local, "request-bounces", check_local,
	  "Local part of the envelope sender of everything the robot sends."),
	STRING("ids", "blocks", blocks, "1-", check_blocks,
	  "Numbers this instance may assign, every year: comma-separated ranges\n"
	  "N-M, or N- for no upper bound.  Robots of one authority own disjoint\n"
	  "blocks.  A key blocks_YYYY overrides this for year YYYY."),
	INT("limits", "max_message_size", max_message_size, 1024, 900 * 1024 * 1024, "26214400",
	  "Largest message accepted, in bytes; larger mail is bounced (exit 65)."),
	INT("limits", "max_header_size", max_header_size, 998, 16 * 1024 * 1024, "65536",
	  "Largest single header field, in bytes, continuation lines included."),
	INT("limits", "max_headers", max_headers, 10, 1000000, "1000",
	  "Most header fields in one message or MIME part."),
	INT("limits", "max_line_length", max_line_length, 998, G_GINT64_CONSTANT(1) << 30, "65536",
	  "Longest line of the raw message, in bytes."),
	INT("limits", "max_parts", max_parts, 1, 100000, "500",
	  "Most MIME parts in one message."),
	INT("limits", "max_depth", max_depth, 1, 1000, "16",
	  "Deepest MIME nesting accepted."),
	INT("limits", "max_ids", max_ids, 1, 10000, "20",
	  "Most identifiers one request mail may ask for (blocks separated by ---)."),
	INT("limits", "max_fields", max_fields, 1, 10000, "100",
	  "Most pseudo-header fields in one request block."),
	INT("limits", "max_field_length", max_field_length, 16, 1000000, "1024",
	  "Longest value of one pseudo-header field, in characters."),
	INT("limits", "max_request_text", max_request_text, 1024, 900 * 1024 * 1024, "524288",
	  "Longest request text read, in bytes: of a longer text part only the\n"
	  "first this many bytes are read as the request (fields, description);\n"
	  "all of it is kept as an attachment and the sender is told."),
	INT("limits", "time_limit", time_limit, 1, 86400, "120",
	  "Seconds vulnid-filter may spend on one mail before it gives up with\n"
	  "exit 75 (nothing half-written; the MTA retries).  Keep it below the\n"
	  "MTA's own command time limit."),
	INT("limits", "openpgp_time_limit", openpgp_time_limit, 1, 3600, "10",
	  "Seconds one OpenPGP operation on a mail (gpg verifying, decrypting or\n"
	  "importing a key) may take.  Past it gpg is stopped, and the mail is set\n"
	  "aside and answered once, never retried."),
	INT("limits", "max_decrypted_ratio", max_decrypted_ratio, 1, 1000000, "100",
	  "What an encrypted mail decrypts to may be at most this many times as\n"
	  "large as its encrypted part (up to 1 MiB always), and never larger than\n"
	  "max_message_size: a compression bomb is stopped as gpg writes it, and\n"
	  "the mail set aside and answered."),
	INT("database", "busy_timeout", busy_timeout, 0, 3600 * 1000, "10000",
	  "How long to wait for the database lock, in milliseconds, before the\n"
	  "filter gives up with exit 75 and the MTA retries."),
	STRING("delivery", "transport", transport, "maildir:sent", NULL,
	  "How mail leaves: maildir:PATH delivers into a Maildir (relative paths\n"
	  "are inside the instance directory); smtp://HOST[:PORT] relays it over\n"
	  "SMTP (port 25 by default, 587 for submission)."),
	CHOICE("delivery", "starttls", starttls, "no,if-available,required", "if-available",
	  "SMTP: no, if-available or required.  With required, a server that does\n"
	  "not offer STARTTLS gets nothing and the mail is deferred."),
	CHOICE("delivery", "tls_verify", tls_verify, "remote,yes,no", "remote",
	  "SMTP with STARTTLS: which relay certificates to accept.  remote: a relay\n"
	  "on this machine (localhost, 127.0.0.0/8, ::1) any, so that a fresh\n"
	  "Debian MTA with its self-signed certificate works; every other relay\n"
	  "only one that verifies (a trusted CA, the relay's name or address).\n"
	  "yes: every relay only one that verifies.  no: any certificate\n"
	  "(encryption without authentication)."),
	STRING("delivery", "tls_ca_file", tls_ca_file, "", NULL,
	  "SMTP: a PEM file of the CAs to trust for tls_verify, instead of the\n"
	  "system's (relative paths are inside the instance directory)."),
	LIST("delivery", "tls_fingerprint", tls_fingerprints, item_fingerprint, "",
	  "SMTP: pin the relay's certificate: its SHA-256 fingerprint(s),\n"
	  "comma-separated (openssl x509 -noout -fingerprint -sha256).  When set,\n"
	  "only those certificates are accepted, whatever tls_verify says."),
	STRING("delivery", "smtp_user", smtp_user, "", NULL,
	  "SMTP AUTH user name; empty means no authentication."),
	STRING("delivery", "smtp_password_file", smtp_password_file, "", NULL,
	  "File holding the SMTP AUTH password (first line), mode 0600 or stricter\n"
	  "and owned by the user the robot runs as.  Never put it in this file."),
	INT("delivery", "timeout", smtp_timeout, 1, 3600, "30",
	  "SMTP: seconds allowed for connecting and for each protocol step."),
	INT("delivery", "filter_budget", filter_budget, 0, 3600, "10",
	  "Seconds vulnid-filter may spend delivering what one mail queued, after\n"
	  "the mail is recorded; the rest waits for vulnid queue run."),
	INT("delivery", "lifetime", lifetime, 60, 365 * 86400, "432000",
	  "Seconds after which mail that could not be delivered is given up\n"
	  "(default 5 days).  Retries back off from 1 minute, doubling, to 4 hours."),
	STRING("delivery", "helo", helo, "", NULL,
	  "Name sent in EHLO; empty means the domain."),
	BOOL("notify", "vendors", notify_vendors, "yes",
	  "Tell the vendor's security contact about each new entry (yes or no)."),
	LIST("announce", "to", announce_to, item_address, "",
	  "Mailing lists that receive an announcement when an entry becomes\n"
	  "public, comma-separated; empty means none."),
	CHOICE("announce", "digest", announce_digest, "none,daily", "none",
	  "none: one announcement per entry; daily: one mail a day listing the\n"
	  "day's entries, sent by vulnid tick."),
	STRING("lifecycle", "moderators", moderators, "", check_moderators,
	  "Fingerprints of the moderators' OpenPGP keys (comma-separated): mail\n"
	  "signed by them may run duplicate-of, spam and link."),
	INT("lifecycle", "rate_requests_per_hour", rate_requests_per_hour, 0, 1000000, "300",
	  "Most new requests one sender address or key may make in an hour;\n"
	  "more are archived and quarantined (one notice an hour).  0: no limit."),
	INT("lifecycle", "rate_additions_per_hour", rate_additions_per_hour, 0, 1000000, "300",
	  "Most mails to entries one sender address or key may send in an hour.\n"
	  "0: no limit.  Vendor and moderator keys are never limited."),
	INT("lifecycle", "rate_network_per_hour", rate_network_per_hour, 0, 100000000, "1000",
	  "Most mails (requests and mail to entries) from one SMTP client network\n"
	  "(a /24 for IPv4, a /64 for IPv6; vulnid-filter -a) in an hour.  0: no limit."),
	INT("lifecycle", "rate_domain_per_hour", rate_domain_per_hour, 0, 100000000, "1000",
	  "Most mails from envelope senders of one domain in an hour.  0: no limit."),
	INT("lifecycle", "rate_global_per_hour", rate_global_per_hour, 0, 100000000, "10000",
	  "Most mails the robot handles in an hour, from everyone together.\n"
	  "0: no limit."),
	BOOL("lifecycle", "confirm_unsigned", confirm_unsigned, "no",
	  "yes: an unsigned request gets its identifier at once, but the vendor\n"
	  "is told and the entry announced only after the sender sends back the\n"
	  "token from the acknowledgement (this proves a working mailbox)."),
	CHOICE("lifecycle", "access_granted_by", access_granted_by, "creator,creator-and-moderators", "creator",
	  "Who is asked, and may grant, when a key asks to read the sealed records\n"
	  "of an embargoed entry (access ID): the creator only, or the moderators\n"
	  "too (told at the address of their key's first user ID)."),
	INT("hashcash", "bits", hashcash_bits, 0, 40, "20",
	  "Proof of work: a mail with a Hashcash stamp (X-Hashcash, version 1) of at\n"
	  "least this many bits, minted for the robot's address, passes the\n"
	  "per-sender and per-network rate limits, up to ceiling_per_hour.\n"
	  "0: stamps are not looked at."),
	INT("hashcash", "validity_days", hashcash_validity_days, 1, 30, "2",
	  "Days a stamp is valid after the date in it (a stamp dated more than a day\n"
	  "ahead is refused too); each is accepted once in that time."),
	INT("hashcash", "ceiling_per_hour", hashcash_ceiling_per_hour, 0, 100000000, "3000",
	  "Most mails from one sender (or key) and from one SMTP client network in an\n"
	  "hour that a stamp lets past their limits; the domain and global limits\n"
	  "hold for stamped mail as for any."),
	INT("policy", "third_party_per_mail", third_party_per_mail, 0, 1000, "3",
	  "Most addresses that did not write to the robot (vendor contacts, relays,\n"
	  "a Reply-To in another domain) one mail not signed by a known key may\n"
	  "make it write to; the rest waits until the creator confirms with the\n"
	  "token (vulnid-filter(8), OUTGOING MAIL POLICY)."),
	INT("policy", "amplification", amplification, 1, 1000, "3",
	  "Bytes the robot sends to third parties because of one mail not signed\n"
	  "by a known key: at most this many times the mail's size ..."),
	INT("policy", "amplification_floor", amplification_floor, 0, 100000000, "4096",
	  "... where a mail counts as at least this many bytes."),
	INT("policy", "per_address_per_day", per_address_per_day, 0, 100000000, "20",
	  "Most mails nobody asked for (vendor notices, relays, notices to a\n"
	  "researcher) to one address in 24 hours; confirmed subscribers and the\n"
	  "announcement lists are not counted."),
	INT("policy", "per_domain_per_day", per_domain_per_day, 0, 100000000, "100",
	  "The same, for all addresses of one domain together."),
	INT("policy", "loop_answers", loop_answers, 0, 100000, "5",
	  "Answers to one address in loop_hours for mail that looks automatic or\n"
	  "repeats (it answers the robot's own mail, quotes its Message-IDs,\n"
	  "tokens or texts, or was sent before); more are recorded, not answered."),
	INT("policy", "loop_hours", loop_hours, 1, 24 * 365, "24",
	  "The period of loop_answers."),
	INT("policy", "unverified_answer_bytes", unverified_answer_bytes, 0, 100000000, "49152",
	  "Bytes of answers (acknowledgements, errors, help, lookups, replies) the\n"
	  "robot mails to one address in unverified_answer_hours for mail it cannot\n"
	  "tell came from there (not signed by a known key, no token sent to that\n"
	  "address, no DMARC pass of From): a forged From must not make it flood\n"
	  "someone.  Then it stops answering that address and says so once.\n"
	  "0: no limit."),
	INT("policy", "unverified_answer_hours", unverified_answer_hours, 1, 168, "24",
	  "The period of unverified_answer_bytes, in hours."),
	STRING("policy", "allow_reserved_domains", allow_reserved_domains, "", NULL,
	  "Reserved or local domains (example.com, .test, ...) that Vendor-Contact\n"
	  "and security@ addresses may name all the same, comma-separated; for\n"
	  "test installations."),
	STRING("auth", "authserv_id", authserv_id, "", NULL,
	  "The authserv-id of this site's own MTA in Authentication-Results fields\n"
	  "(RFC 8601).  Empty: such fields are ignored.  Only those at the top of\n"
	  "the header, above the Received fields counted by trusted_received, are\n"
	  "read; every other one, whatever it claims, is ignored."),
	INT("auth", "trusted_received", trusted_received, 0, 20, "0",
	  "Received fields at the top of the header that this site's own MTAs add\n"
	  "and that its Authentication-Results may stand below: 0 when the MTA puts\n"
	  "them on top; 1 if they come below its own Received field, and then the\n"
	  "MTA must remove such fields with its authserv-id from incoming mail."),
	STRING("export", "osv_id_prefix", export_osv_id_prefix, "x_", NULL,
	  "Prefix of OSV record ids (vulnid export osv): x_ for a database not\n"
	  "registered with OSV, giving x_PREFIX-YYYY-NNNN."),
	STRING("export", "base_url", export_base_url, "", NULL,
	  "Public URL where vulnid export html is published, for absolute links;\n"
	  "empty means relative links only."),
	STRING("export", "title", export_title, "", NULL,
	  "Title of the static web archive; empty means \"PREFIX vulnerability\n"
	  "identifiers\", with the prefix of [instance]."),
	STRING("export", "log_origin", export_log_origin, "", NULL,
	  "Name of the feed's transparency log (its checkpoint origin and note key),\n"
	  "used when the log key DIR/log2.key is made: best the URL where the\n"
	  "feed's log/ directory is published, without https://; empty means\n"
	  "DOMAIN/vulnid/PREFIX/FPR16/log (FPR16: the robot key's first 16 hex digits)."),
	LIST("export", "witnesses", export_witnesses, item_witness, "",
	  "Witnesses whose cosignatures vulnid export feed merges into the log's\n"
	  "checkpoint, comma-separated, each \"VKEY URL\" (the witness's tlog-witness\n"
	  "URL: the checkpoint is sent to URL/add-checkpoint) or \"VKEY PATH\" (a\n"
	  "directory of the checkpoints it cosigned, PATH/SHA256(ORIGIN)/checkpoint)."),
	CHOICE("crypto", "sign", sign, "pgpmime,inline,none", "pgpmime",
	  "How the robot signs what it sends: pgpmime (RFC 3156), inline\n"
	  "(clearsigned text, for list archives) or none.  Its key is in gnupg/."),
	STRING("lmtpd", "socket", lmtpd_socket, "lmtp.sock", NULL,
	  "vulnid-lmtpd(8): the unix socket the MTA delivers to over LMTP (relative\n"
	  "paths are inside the instance directory); empty: none.  Under systemd\n"
	  "socket activation the sockets come from the .socket unit instead."),
	OCTAL("lmtpd", "socket_mode", lmtpd_socket_mode, 0, 0777, "0660",
	  "Permissions of the socket (octal): the MTA's group must be able to write."),
	STRING("lmtpd", "socket_group", lmtpd_socket_group, "", NULL,
	  "Group given to the socket (the MTA's, e.g. postfix); empty: the user's."),
	STRING("lmtpd", "listen", lmtpd_listen, "", NULL,
	  "Also listen on TCP, HOST:PORT (e.g. 127.0.0.1:2424 or [::1]:2424);\n"
	  "empty: no TCP.  An address that is not loopback needs allow."),
	NETS("lmtpd", "allow", lmtpd_allow, "",
	  "Clients allowed on TCP: addresses or networks (192.0.2.10, 10.1.0.0/16,\n"
	  "2001:db8::/32), comma-separated; empty: loopback clients only.  Others\n"
	  "get 421 and are disconnected."),
	INT("lmtpd", "sessions", lmtpd_sessions, 1, 10000, "32",
	  "Most LMTP sessions at once; more connections wait until one ends."),
	INT("lmtpd", "parse_workers", lmtpd_parse_workers, 0, 256, "0",
	  "vulnid-lmtpd(8): threads that spool, parse, verify and decrypt mails\n"
	  "beside the one that writes the database, so that one slow mail delays\n"
	  "only itself; 0: as many as the machine has processors, at least 2."),
	INT("lmtpd", "group_max", lmtpd_group_max, 1, 10000, "64",
	  "Most mails committed in one transaction (one sync for all of them)."),
	INT("lmtpd", "delivery_agents", lmtpd_delivery_agents, 1, 32, "1",
	  "Delivery agents: processes that send what the mails queued, each over\n"
	  "a session of its own; more than 1 where the relay accepts parallel\n"
	  "sessions (read at the start only)."),
	INT("lmtpd", "max_mails_per_session", lmtpd_max_mails, 1, 1000000, "1000",
	  "Mails one session may deliver; then it is ended with 421 (the MTA\n"
	  "connects again)."),
	INT("lmtpd", "max_recipients", lmtpd_max_recipients, 1, 10000, "50",
	  "Recipients of one mail; more get 452 (the MTA sends them again)."),
	INT("lmtpd", "max_errors", lmtpd_max_errors, 0, 10000, "10",
	  "Bad commands in one session before it is ended with 421."),
	INT("lmtpd", "timeout", lmtpd_timeout, 1, 86400, "300",
	  "Seconds to wait for the client's next command or data; then 421."),
	INT("lmtpd", "session_time_limit", lmtpd_session_time_limit, 1, 7 * 86400, "3600",
	  "Seconds one session may last; then it is ended with 421 after the\n"
	  "current mail.  Each mail's own limit is [limits] time_limit, counted\n"
	  "from the end of its data: when it is reached before the mail is\n"
	  "committed, the recipients get 451 and the MTA retries."),
	BOOL("lmtpd", "xforward", lmtpd_xforward, "yes",
	  "Offer XFORWARD (Postfix lmtp_send_xforward_command): the client address\n"
	  "the MTA received the mail from is used for the rate limits."),
	STRING("templates", "dir", template_dir, "", NULL,
	  "Directory searched first for mail templates; empty means DIR/templates.\n"
	  "Templates missing there come from the installed set."),
};

#undef STRING
#undef INT
#undef OCTAL
#undef BOOL
#undef CHOICE
#undef LIST
#undef NETS

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

/* What the programs write in an instance: each must be the owner's (a few
 * lstat() calls, cheap beside the rest of a filter's start). */
static const char *const instance_files[] = {
	"vulnid.conf", "vulnid.db", "vulnid.db-wal", "vulnid.db-shm", "vulnid.db-journal", "audit.log",
	"log.key", "log2.key", "gnupg", "gnupg/pubring.kbx", "gnupg/trustdb.gpg", "gnupg/private-keys-v1.d",
	"tmp", "sent", "sent/new", "sent/cur", "sent/tmp", "templates", "witness", "lmtp.sock", NULL
};

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
	if (s == VULNID_OK)
		s = owner_check_files(dir, instance_files, &e);
	if (s != VULNID_OK)
		g_propagate_error(err, g_steal_pointer(&e));
	return s;
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
	/* every string and list field of the table, then the derived ones */
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++) {
		void *field = G_STRUCT_MEMBER_P(cfg, config_keys[i].offset);

		if (config_keys[i].type == CK_STRING || config_keys[i].type == CK_CHOICE)
			g_free(*(char **) field);
		else if (config_keys[i].type == CK_LIST)
			g_strfreev(*(char ***) field);
		else if (config_keys[i].type == CK_NETS && *(GPtrArray **) field != NULL)
			g_ptr_array_unref(*(GPtrArray **) field);
	}
	g_free(cfg->dir);
	g_free(cfg->conf_path);
	g_free(cfg->db_path);
	g_free(cfg->audit_path);
	g_free(cfg->spool_dir);
	g_free(cfg->request_address);
	g_free(cfg->bounce_address);
	if (cfg->keyfile != NULL)
		g_key_file_unref(cfg->keyfile);
	g_free(cfg->maildir);
	g_free(cfg->smtp_host);
	g_free(cfg->gnupg_home);
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

static const config_key *
config_find(const char *group, const char *key)
{
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++)
		if (strcmp(config_keys[i].group, group) == 0 && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

/* The value as written (stripped), else the default; NULL with an error
 * for a required key that is missing. */
static char *
config_raw(GKeyFile *kf, const config_key *k, GError **err)
{
	char *v = kf != NULL ? g_key_file_get_string(kf, k->group, k->key, NULL) : NULL;

	if (v == NULL) {
		if (k->def == NULL) {
			vulnid_fail(err, VULNID_ERR_CONFIG, "missing [%s] %s", k->group, k->key);
			return NULL;
		}
		v = g_strdup(k->def);
	}
	return g_strstrip(v);
}

static vulnid_status
parse_int(const config_key *k, const char *s, gint64 *out, GError **err)
{
	int base = k->type == CK_OCTAL ? 8 : 10;
	char *end = NULL;
	gint64 v = g_ascii_strtoll(s, &end, base);

	if (*s != '\0' && end != NULL && *end == '\0' && v >= k->min && v <= k->max) {
		*out = v;
		return VULNID_OK;
	}
	if (k->type == CK_OCTAL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s must be octal, like %s, not '%s'",
				   k->group, k->key, k->def, s);
	return vulnid_fail(err, VULNID_ERR_CONFIG,
			   "[%s] %s must be a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ", not '%s'",
			   k->group, k->key, k->min, k->max, s);
}

static vulnid_status
parse_bool(const config_key *k, const char *v, gboolean *out, GError **err)
{
	if (g_ascii_strcasecmp(v, "yes") == 0 || g_ascii_strcasecmp(v, "true") == 0)
		*out = TRUE;
	else if (g_ascii_strcasecmp(v, "no") == 0 || g_ascii_strcasecmp(v, "false") == 0)
		*out = FALSE;
	else
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s must be yes or no, not '%s'", k->group, k->key, v);
	return VULNID_OK;
}

/* "a,b,c" as "a, b or c", for the message. */
static char *
choices_text(const char *choices)
{
	g_auto(GStrv) w = g_strsplit(choices, ",", -1);
	guint n = g_strv_length(w);
	GString *s = g_string_new(w[0]);

	for (guint i = 1; i < n; i++)
		g_string_append_printf(s, "%s%s", i + 1 == n ? " or " : ", ", w[i]);
	return g_string_free(s, FALSE);
}

static vulnid_status
parse_choice(const config_key *k, char **v, GError **err)
{
	g_auto(GStrv) w = g_strsplit(k->choices, ",", -1);
	g_autofree char *text = NULL;

	/* a choice of yes and no takes true and false as every boolean key */
	if (g_strv_contains((const char *const *) w, "yes") && g_strv_contains((const char *const *) w, "no") &&
	    (g_ascii_strcasecmp(*v, "true") == 0 || g_ascii_strcasecmp(*v, "false") == 0)) {
		gboolean yes = g_ascii_strcasecmp(*v, "true") == 0;

		g_free(*v);
		*v = g_strdup(yes ? "yes" : "no");
	}
	if (g_strv_contains((const char *const *) w, *v))
		return VULNID_OK;
	text = choices_text(k->choices);
	return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s must be %s, not '%s'", k->group, k->key, text, *v);
}

/* Comma-separated, empty items skipped, each item checked. */
static vulnid_status
parse_list(const config_key *k, const char *v, char ***out, GError **err)
{
	g_auto(GStrv) parts = g_strsplit(v, ",", -1);
	g_autoptr(GPtrArray) b = g_ptr_array_new_with_free_func(g_free);

	for (char **p = parts; *p; p++) {
		g_autofree char *item = g_strstrip(g_strdup(*p));
		vulnid_status s;

		if (*item == '\0')
			continue;
		s = k->check(k, &item, err);
		if (s != VULNID_OK)
			return s;
		g_ptr_array_add(b, g_steal_pointer(&item));
	}
	g_ptr_array_set_free_func(b, NULL);
	g_ptr_array_add(b, NULL);
	*out = (char **) g_ptr_array_free(g_steal_pointer(&b), FALSE);
	return VULNID_OK;
}

static vulnid_status
parse_nets(const config_key *k, const char *v, GPtrArray **out, GError **err)
{
	g_auto(GStrv) parts = g_strsplit(v, ",", -1);
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_object_unref);

	for (char **p = parts; *p; p++) {
		g_autofree char *item = g_strstrip(g_strdup(*p));
		GInetAddressMask *mask;

		if (*item == '\0')
			continue;
		mask = g_inet_address_mask_new_from_string(item, NULL);
		if (mask == NULL)
			return vulnid_fail(err, VULNID_ERR_CONFIG, "[%s] %s: '%s' is not an address or network",
					   k->group, k->key, item);
		g_ptr_array_add(a, mask);
	}
	*out = g_steal_pointer(&a);
	return VULNID_OK;
}

/* Read, check and store one key of the table into its field. */
static vulnid_status
config_load_key(GKeyFile *kf, const config_key *k, vulnid_config *cfg, GError **err)
{
	void *field = G_STRUCT_MEMBER_P(cfg, k->offset);
	g_autofree char *v = config_raw(kf, k, err);
	vulnid_status s = VULNID_OK;

	if (v == NULL)
		return VULNID_ERR_CONFIG;
	switch (k->type) {
	case CK_INT:
	case CK_OCTAL:
		return parse_int(k, v, field, err);
	case CK_BOOL:
		return parse_bool(k, v, field, err);
	case CK_LIST:
		return parse_list(k, v, field, err);
	case CK_NETS:
		return parse_nets(k, v, field, err);
	case CK_CHOICE:
		s = parse_choice(k, &v, err);
		break;
	case CK_STRING:
		if (k->check != NULL)
			s = k->check(k, &v, err);
		break;
	}
	if (s == VULNID_OK)
		*(char **) field = g_steal_pointer(&v);
	return s;
}

/* The text of the key file at abs, refused when others could write the
 * instance. */
static vulnid_status
config_read_file(const char *abs, char **text, GError **err)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *dir = g_path_get_dirname(abs);
	g_autofree char *db = g_build_filename(dir, "vulnid.db", NULL);
	const char *paths[] = { dir, abs, db };

	if (!g_file_get_contents(abs, text, NULL, &e))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "cannot read '%s': %s", abs, e->message);
	/* Anyone who can write these can make the robot say anything: refuse
	 * to run on them (the Debian way: a dedicated user, a 0700 instance). */
	for (gsize i = 0; i < G_N_ELEMENTS(paths); i++) {
		struct stat sb;

		if (stat(paths[i], &sb) == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
			g_clear_pointer(text, g_free);
			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "'%s' is writable by group or others: chmod go-w it "
					   "(the instance must belong to the robot's user alone)", paths[i]);
		}
	}
	return VULNID_OK;
}

/* ---- the file as written: lines, groups and keys --------------------------------
 *
 * GKeyFile takes any group and any key, and of a key set twice the last
 * value: a misspelt key would leave its default in place in silence.  So
 * the text is read line by line first, as GKeyFile reads it, and every
 * group and key is looked up in the table; the line of each key is kept
 * for the messages about its value. */

typedef struct {
	const char *path;
	GHashTable *lines;	/* "group\nkey" -> its line number */
	GPtrArray *problems;	/* "PATH:N: what is wrong", in the order of the file */
} config_scan;

static void
config_scan_clear(config_scan *sc)
{
	g_clear_pointer(&sc->lines, g_hash_table_unref);
	g_clear_pointer(&sc->problems, g_ptr_array_unref);
}

static void config_problem(config_scan *sc, guint line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
config_problem(config_scan *sc, guint line, const char *fmt, ...)
{
	g_autofree char *m = NULL;
	va_list ap;

	va_start(ap, fmt);
	m = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_ptr_array_add(sc->problems, g_strdup_printf("%s:%u: %s", sc->path, line, m));
}

static gboolean
group_known(const char *group)
{
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++)
		if (strcmp(config_keys[i].group, group) == 0)
			return TRUE;
	return FALSE;
}

/* Keys outside the table: [ids] blocks_YYYY, the blocks of one year. */
static gboolean
key_per_year(const char *group, const char *key)
{
	return strcmp(group, "ids") == 0 && g_str_has_prefix(key, "blocks_") && strlen(key) == 11 &&
	       g_ascii_isdigit(key[7]) && g_ascii_isdigit(key[8]) && g_ascii_isdigit(key[9]) &&
	       g_ascii_isdigit(key[10]);
}

/* Edits between a and b: insertions, deletions, substitutions and swaps of
 * neighbours (restricted Damerau-Levenshtein), for "did you mean". */
static gsize
edit_distance(const char *a, const char *b)
{
	gsize n = strlen(a), m = strlen(b);
	g_autofree gsize *d = g_new0(gsize, (n + 1) * (m + 1));

#define D(i, j) d[(i) * (m + 1) + (j)]
	for (gsize i = 0; i <= n; i++)
		D(i, 0) = i;
	for (gsize j = 0; j <= m; j++)
		D(0, j) = j;
	for (gsize i = 1; i <= n; i++)
		for (gsize j = 1; j <= m; j++) {
			gsize cost = a[i - 1] == b[j - 1] ? 0 : 1;
			gsize v = MIN(MIN(D(i - 1, j) + 1, D(i, j - 1) + 1), D(i - 1, j - 1) + cost);

			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				v = MIN(v, D(i - 2, j - 2) + 1);
			D(i, j) = v;
		}
	return D(n, m);
#undef D
}

/* The known name nearest to name (a group when group is NULL, else a key
 * of group), or NULL when none is near enough to be a slip. */
static const char *
config_nearest(const char *group, const char *name)
{
	const char *best = NULL;
	gsize best_d = G_MAXSIZE, len = strlen(name);

	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++) {
		const char *cand = group == NULL ? config_keys[i].group : config_keys[i].key;
		gsize dist;

		if (group != NULL && strcmp(config_keys[i].group, group) != 0)
			continue;
		dist = edit_distance(name, cand);
		if (dist < best_d) {
			best = cand;
			best_d = dist;
		}
	}
	return best_d <= MAX((gsize) 2, len / 3) ? best : NULL;
}

/* The group whose key this is, when it is one of another group. */
static const char *
config_group_of(const char *key)
{
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++)
		if (strcmp(config_keys[i].key, key) == 0)
			return config_keys[i].group;
	return NULL;
}

static void
scan_key(config_scan *sc, guint n, const char *group, gboolean group_ok, const char *key)
{
	g_autofree char *id = g_strconcat(group, "\n", key, NULL);
	gpointer seen = g_hash_table_lookup(sc->lines, id);
	const char *near, *other;

	if (!group_ok)
		return;		/* said once, at the group */
	if (seen != NULL) {
		config_problem(sc, n, "[%s] %s is set twice (also on line %u): remove one", group, key,
			       GPOINTER_TO_UINT(seen));
		return;
	}
	g_hash_table_insert(sc->lines, g_steal_pointer(&id), GUINT_TO_POINTER(n));
	if (config_find(group, key) != NULL || key_per_year(group, key))
		return;
	other = config_group_of(key);
	if (other != NULL) {
		config_problem(sc, n, "'%s' is not a key of [%s]: it belongs in [%s]", key, group, other);
		return;
	}
	near = config_nearest(group, key);
	if (near != NULL)
		config_problem(sc, n, "unknown key '%s' in [%s] (did you mean %s?)", key, group, near);
	else
		config_problem(sc, n, "unknown key '%s' in [%s] (vulnid config keys lists them)", key, group);
}

/* Every line: blank, a # comment, [group] or key = value, as GKeyFile
 * reads them (leading white space ignored, the key stripped). */
static void
config_scan_text(config_scan *sc, const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree char *group = NULL;
	gboolean group_ok = FALSE;

	sc->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	sc->problems = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));
		guint n = i + 1;
		char *eq;

		if (*l == '\0' || *l == '#')
			continue;
		if (*l == '[') {
			gsize len = strlen(l);
			const char *near;

			if (len < 3 || l[len - 1] != ']' || strpbrk(l + 1, "[") != NULL ||
			    memchr(l + 1, ']', len - 2) != NULL) {
				config_problem(sc, n, "'%s' is not a [group] line", l);
				group_ok = FALSE;
				continue;
			}
			g_free(group);
			group = g_strndup(l + 1, len - 2);
			group_ok = group_known(group);
			if (group_ok)
				continue;
			near = config_nearest(NULL, group);
			if (near != NULL)
				config_problem(sc, n, "unknown group [%s] (did you mean [%s]?)", group, near);
			else
				config_problem(sc, n, "unknown group [%s] (vulnid config keys lists them)", group);
			continue;
		}
		eq = strchr(l, '=');
		if (eq == NULL || eq == l) {
			config_problem(sc, n, "'%s' is neither [group], key = value nor a # comment", l);
			continue;
		}
		*eq = '\0';
		g_strchomp(l);
		if (group == NULL) {
			config_problem(sc, n, "'%s' comes before any [group]", l);
			continue;
		}
		scan_key(sc, n, group, group_ok, l);
	}
}

/* The line that set group's key, or 0. */
static guint
config_line_of(const config_scan *sc, const char *group, const char *key)
{
	g_autofree char *id = g_strconcat(group, "\n", key, NULL);

	return GPOINTER_TO_UINT(g_hash_table_lookup(sc->lines, id));
}

/* The file and the line of a value's error, before the message. */
static vulnid_status
config_where(const config_scan *sc, const char *group, const char *key, vulnid_status s, GError **err)
{
	guint line = config_line_of(sc, group, key);

	if (s != VULNID_OK && err != NULL && *err != NULL) {
		if (line > 0)
			g_prefix_error(err, "%s:%u: ", sc->path, line);
		else
			g_prefix_error(err, "%s: ", sc->path);
	}
	return s;
}

/* [delivery] transport: a maildir path or an SMTP relay. */
static vulnid_status
config_transport(vulnid_config *cfg, GError **err)
{
	if (g_str_has_prefix(cfg->transport, "maildir:") && cfg->transport[8] != '\0') {
		cfg->maildir = config_resolve_path(cfg, cfg->transport + strlen("maildir:"));
	} else if (g_str_has_prefix(cfg->transport, "smtp://")) {
		g_autoptr(GError) ue = NULL;

		if (!transport_parse_url(cfg->transport, &cfg->smtp_host, &cfg->smtp_port, &ue))
			return vulnid_fail(err, VULNID_ERR_CONFIG, "[delivery] transport: %s", ue->message);
	} else
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "[delivery] transport '%s' is not maildir:PATH or smtp://HOST[:PORT]",
				   cfg->transport);
	return VULNID_OK;
}

/* *path relative to the instance directory; empty: fallback (may be NULL). */
static void
config_path(const vulnid_config *cfg, char **path, char *fallback)
{
	char *p = **path == '\0' ? fallback : config_resolve_path(cfg, *path);

	if (p != fallback)
		g_free(fallback);
	g_free(*path);
	*path = p;
}

/* What follows from the keys: addresses, paths, empty meaning a default. */
static vulnid_status
config_derive(vulnid_config *cfg, GError **err)
{
	vulnid_status s = config_transport(cfg, err);

	if (s != VULNID_OK)
		return s;
	if (*cfg->helo == '\0') {
		g_free(cfg->helo);
		cfg->helo = g_strdup(cfg->domain);
	}
	if (cfg->tls_fingerprints[0] == NULL)
		g_clear_pointer(&cfg->tls_fingerprints, g_strfreev);
	config_path(cfg, &cfg->tls_ca_file, NULL);
	config_path(cfg, &cfg->template_dir, g_build_filename(cfg->dir, "templates", NULL));
	config_path(cfg, &cfg->lmtpd_socket, g_strdup(""));
	cfg->request_address = g_strdup_printf("%s@%s", cfg->request_local, cfg->domain);
	cfg->bounce_address = g_strdup_printf("%s@%s", cfg->bounce_local, cfg->domain);
	return VULNID_OK;
}

/* Each [ids] blocks_YYYY, checked as blocks is. */
static vulnid_status
config_check_years(vulnid_config *cfg, const config_scan *sc, GError **err)
{
	g_auto(GStrv) keys = g_key_file_get_keys(cfg->keyfile, "ids", NULL, NULL);

	for (char **k = keys; k != NULL && *k != NULL; k++) {
		g_autofree char *v = NULL;
		g_autoptr(GArray) b = NULL;
		g_autoptr(GError) be = NULL;

		if (!key_per_year("ids", *k))
			continue;
		v = config_blocks_for_year(cfg, atoi(*k + 7));
		if (!ids_blocks_parse(v, &b, &be)) {
			vulnid_fail(err, VULNID_ERR_CONFIG, "[ids] %s: %s", *k, be->message);
			return config_where(sc, "ids", *k, VULNID_ERR_CONFIG, err);
		}
	}
	return VULNID_OK;
}

/* Everything below the instance directory, from text: every line known
 * to the table, every value checked. */
static vulnid_status
config_parse(vulnid_config *cfg, const char *text, GError **err)
{
	config_scan sc = { cfg->conf_path, NULL, NULL };
	g_autoptr(GError) e = NULL;
	vulnid_status s = VULNID_OK;

	config_scan_text(&sc, text);
	if (sc.problems->len > 0) {
		s = vulnid_fail(err, VULNID_ERR_CONFIG, "%s", (char *) g_ptr_array_index(sc.problems, 0));
		goto out;
	}
	cfg->keyfile = g_key_file_new();
	if (!g_key_file_load_from_data(cfg->keyfile, text, (gsize) -1, G_KEY_FILE_NONE, &e)) {
		s = vulnid_fail(err, VULNID_ERR_CONFIG, "cannot parse '%s': %s", cfg->conf_path, e->message);
		goto out;
	}
	cfg->db_path = g_build_filename(cfg->dir, "vulnid.db", NULL);
	cfg->audit_path = g_build_filename(cfg->dir, "audit.log", NULL);
	cfg->spool_dir = g_build_filename(cfg->dir, "tmp", NULL);
	cfg->gnupg_home = g_build_filename(cfg->dir, "gnupg", NULL);
	for (gsize i = 0; i < G_N_ELEMENTS(config_keys) && s == VULNID_OK; i++)
		s = config_where(&sc, config_keys[i].group, config_keys[i].key,
				 config_load_key(cfg->keyfile, &config_keys[i], cfg, err), err);
	if (s == VULNID_OK)
		s = config_check_years(cfg, &sc, err);
	if (s == VULNID_OK)
		s = config_where(&sc, "delivery", "transport", config_derive(cfg, err), err);
out:
	config_scan_clear(&sc);
	return s;
}

vulnid_status
config_load(const char *path, vulnid_config **out, GError **err)
{
	g_autoptr(vulnid_config) cfg = g_new0(vulnid_config, 1);
	g_autofree char *text = NULL;
	vulnid_status s;

	if (path == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "no configuration: use -c DIR/vulnid.conf or set VULNID_CONF");
	if (g_path_is_absolute(path))
		cfg->conf_path = g_strdup(path);
	else {
		g_autofree char *cwd = g_get_current_dir();

		cfg->conf_path = g_build_filename(cwd, path, NULL);
	}
	s = config_read_file(cfg->conf_path, &text, err);
	if (s != VULNID_OK)
		return s;
	cfg->dir = g_path_get_dirname(cfg->conf_path);
	s = config_parse(cfg, text, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&cfg);
	return s;
}

vulnid_status
config_load_text(const char *dir, const char *text, vulnid_config **out, GError **err)
{
	g_autoptr(vulnid_config) cfg = g_new0(vulnid_config, 1);
	vulnid_status s;

	cfg->dir = g_canonicalize_filename(dir, NULL);
	cfg->conf_path = g_build_filename(cfg->dir, "vulnid.conf", NULL);
	s = config_parse(cfg, text, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&cfg);
	return s;
}

vulnid_status
config_check_file(const char *path, GPtrArray *problems, GError **err)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GError) e = NULL;
	g_autofree char *abs = NULL;
	g_autofree char *text = NULL;
	config_scan sc = { NULL, NULL, NULL };
	vulnid_status s;

	if (path == NULL)
		return config_load(path, &cfg, err);
	if (g_path_is_absolute(path))
		abs = g_strdup(path);
	else {
		g_autofree char *cwd = g_get_current_dir();

		abs = g_build_filename(cwd, path, NULL);
	}
	s = config_read_file(abs, &text, err);
	if (s != VULNID_OK)
		return s;
	sc.path = abs;
	config_scan_text(&sc, text);
	for (guint i = 0; i < sc.problems->len; i++)
		g_ptr_array_add(problems, g_strdup(g_ptr_array_index(sc.problems, i)));
	config_scan_clear(&sc);
	/* the values, once every line is known (the first wrong one) */
	if (problems->len == 0 && config_load(abs, &cfg, &e) != VULNID_OK)
		g_ptr_array_add(problems, g_strdup(e->message));
	return VULNID_OK;
}

/* The table entry of a key read by name, of the type the caller expects. */
static const config_key *
config_typed(const char *group, const char *key, config_type t1, config_type t2)
{
	const config_key *k = config_find(group, key);

	if (k == NULL || (k->type != t1 && k->type != t2)) {
		g_critical("config: [%s] %s is not a key of that type in the table", group, key);
		return NULL;
	}
	return k;
}

gint64
config_key_int(const vulnid_config *cfg, const char *group, const char *key)
{
	const config_key *k = config_typed(group, key, CK_INT, CK_OCTAL);

	return k != NULL ? G_STRUCT_MEMBER(gint64, cfg, k->offset) : 0;
}

gboolean
config_key_bool(const vulnid_config *cfg, const char *group, const char *key)
{
	const config_key *k = config_typed(group, key, CK_BOOL, CK_BOOL);

	return k != NULL ? G_STRUCT_MEMBER(gboolean, cfg, k->offset) : FALSE;
}

char *
config_key_string(const vulnid_config *cfg, const char *group, const char *key)
{
	const config_key *k = config_typed(group, key, CK_STRING, CK_CHOICE);
	const char *v = k != NULL ? G_STRUCT_MEMBER(const char *, cfg, k->offset) : NULL;

	return g_strdup(v != NULL ? v : "");
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
		g_auto(GStrv) lines = g_strsplit(k->doc, "\n", -1);
		const char *v = k->def;

		if (group == NULL || strcmp(group, k->group) != 0) {
			g_string_append_printf(s, "\n[%s]\n", k->group);
			group = k->group;
		}
		for (char **l = lines; *l; l++)
			g_string_append_printf(s, "# %s\n", *l);
		if (strcmp(k->group, "instance") == 0 && strcmp(k->key, "prefix") == 0)
			v = prefix;
		else if (strcmp(k->group, "instance") == 0 && strcmp(k->key, "domain") == 0)
			v = domain;
		g_string_append_printf(s, "%s = %s\n\n", k->key, v);
	}
	return g_string_free(s, FALSE);
}

char *
config_table_text(void)
{
	GString *s = g_string_new(NULL);

	for (gsize i = 0; i < G_N_ELEMENTS(config_keys); i++) {
		const config_key *k = &config_keys[i];
		g_string_append_printf(s, "%s\t%s\t%s\t", k->group, k->key, type_names[k->type]);
		if (k->type == CK_INT)
			g_string_append_printf(s, "%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT, k->min, k->max);
		else if (k->type == CK_OCTAL)
			g_string_append_printf(s, "0%" G_GINT64_MODIFIER "o\t0%" G_GINT64_MODIFIER "o", k->min, k->max);
		else
			g_string_append(s, "-\t-");
		g_string_append_printf(s, "\t%s\n", k->def == NULL ? "-" : *k->def == '\0' ? "\"\"" : k->def);
	}
	return g_string_free(s, FALSE);
}
