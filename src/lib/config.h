/* config.h - the instance configuration (DIR/vulnid.conf, a GKeyFile) */
#ifndef VULNID_CONFIG_H
#define VULNID_CONFIG_H

#include <glib.h>
#include "status.h"

typedef struct {
	char *dir;		/* instance directory, absolute */
	char *conf_path;	/* DIR/vulnid.conf */
	char *db_path;		/* DIR/vulnid.db */
	char *audit_path;	/* DIR/audit.log */
	char *spool_dir;	/* DIR/tmp: incoming mail is spooled here */

	char *prefix;		/* identifier prefix, upper case */
	char *domain;		/* mail domain of the robot */
	char *request_local;	/* local part of the request address */
	char *bounce_local;	/* local part of the envelope sender */
	char *request_address;	/* request_local@domain */
	char *bounce_address;	/* bounce_local@domain */

	char *blocks;		/* identifier blocks, e.g. "1-" or "1-999,5000-5999" */
	GKeyFile *keyfile;	/* kept for per-year block overrides */

	gint64 max_message_size;
	gint64 max_header_size;
	gint64 max_headers;
	gint64 max_line_length;
	gint64 max_request_text;
	gint64 max_parts;
	gint64 max_depth;
	gint64 max_ids;
	gint64 max_fields;
	gint64 max_field_length;

	gint64 busy_timeout;	/* milliseconds */
	gint64 time_limit;	/* seconds one mail may take in the filter */
	gint64 openpgp_time_limit;	/* seconds of one gpg run on a mail */
	gint64 max_decrypted_ratio;	/* plaintext at most this times the ciphertext */

	char *transport;	/* "maildir:PATH" or "smtp://HOST[:PORT]" */
	char *maildir;		/* resolved PATH of a maildir transport, else NULL */
	char *smtp_host;	/* of an smtp transport, else NULL */
	int smtp_port;
	char *starttls;		/* no, if-available, required */
	char *tls_verify;	/* yes, no, remote (verify unless the relay is on loopback) */
	char *tls_ca_file;	/* resolved path of trusted CAs (PEM), or NULL: the system's */
	char **tls_fingerprints;	/* pinned SHA-256s, lower-case hex (NULL-terminated), or NULL */
	char *smtp_user;	/* empty: no AUTH */
	char *smtp_password_file;
	gint64 smtp_timeout;	/* seconds per protocol step */
	gint64 filter_budget;	/* seconds the filter may spend delivering */
	gint64 lifetime;	/* seconds before undeliverable mail is given up */
	char *helo;

	gboolean notify_vendors;
	char **announce_to;	/* list addresses (NULL-terminated, maybe empty) */
	char *announce_digest;	/* none or daily */

	char *gnupg_home;	/* the robot's keyring, DIR/gnupg */
	char *sign;		/* pgpmime, inline or none */

	char *template_dir;	/* operator's override directory, or NULL */

	/* [lmtpd]: vulnid-lmtpd(8) */
	char *lmtpd_socket;	/* absolute path, or "" for none */
	gint64 lmtpd_socket_mode;
	char *lmtpd_socket_group;	/* "" : the user's */
	char *lmtpd_listen;	/* HOST:PORT, or "" */
	GPtrArray *lmtpd_allow;	/* GInetAddressMask*; empty: loopback only */
	gint64 lmtpd_sessions;
	gint64 lmtpd_group_max;
	gint64 lmtpd_delivery_agents;
	gint64 lmtpd_max_mails;
	gint64 lmtpd_max_recipients;
	gint64 lmtpd_max_errors;
	gint64 lmtpd_timeout;
	gint64 lmtpd_session_time_limit;
	gint64 lmtpd_parse_workers;	/* 0: the processors, at least 2 */
	gboolean lmtpd_xforward;

	/* [lifecycle], [policy], [auth], [export]: read where they are used,
	 * through config_key_*() or these fields, checked at load time */
	char *moderators;	/* fingerprints, as written (comma- or ';'-separated) */
	gint64 rate_requests_per_hour;
	gint64 rate_additions_per_hour;
	gint64 rate_network_per_hour;
	gint64 rate_domain_per_hour;
	gint64 rate_global_per_hour;
	gboolean confirm_unsigned;
	char *access_granted_by;	/* creator, creator-and-moderators */
	gint64 hashcash_bits;		/* [hashcash]: 0 turns stamps off */
	gint64 hashcash_validity_days;
	gint64 hashcash_ceiling_per_hour;
	gint64 third_party_per_mail;
	gint64 amplification;
	gint64 amplification_floor;
	gint64 per_address_per_day;
	gint64 per_domain_per_day;
	gint64 loop_answers;
	gint64 loop_hours;
	gint64 unverified_answer_bytes;
	gint64 unverified_answer_hours;
	char *allow_reserved_domains;
	char *authserv_id;
	gint64 trusted_received;
	char *export_osv_id_prefix;
	char *export_base_url;	/* "" : relative links only */
	char *export_title;	/* "" : "PREFIX vulnerability identifiers" */
	char *export_log_origin;	/* "" : DOMAIN/vulnid/PREFIX/FPR16/log */
	char **export_witnesses;	/* "VKEY URL" or "VKEY PATH" (note_witness_parse()) */
} vulnid_config;

/* Where the built-in templates live; VULNID_TEMPLATE_DIR in the environment
 * overrides it (used by the test suite and the demo, never needed once
 * installed). */
const char *config_builtin_template_dir(void);

/* Find the configuration file: explicit path, else $VULNID_CONF. */
char *config_locate(const char *explicit_path);

/* Become the owner of the instance whose configuration is at path (the
 * owner of its directory): root switches to that user, anyone else but
 * the owner is refused (owner_become()).  Call it before anything else
 * touches the instance.  NULL path: nothing to do. */
vulnid_status config_become_owner(const char *path, GError **err);

/* Read and check vulnid.conf: an unknown group or key, a key set twice or
 * a line of no known form is refused as a wrong value is, the message
 * naming the file and the line ("PATH:LINE: unknown key 'transprot' in
 * [delivery] (did you mean transport?)"). */
vulnid_status config_load(const char *path, vulnid_config **out, GError **err);

/* The same from text in memory, for the instance directory dir (which
 * need not exist): for unit tests that build a context without an
 * instance.  "[instance]\nprefix = T\ndomain = example.org\n" gives the
 * defaults of every other key. */
vulnid_status config_load_text(const char *dir, const char *text, vulnid_config **out, GError **err);
/* Every mistake in the file at path, for vulnid config check: each line
 * that is not [group], key = value or a comment, each unknown group or
 * key (with the nearest known one), each key set twice, then the first
 * value that is refused.  Appended to problems (char *, "PATH:LINE:
 * what"); an error only when the file cannot be read. */
vulnid_status config_check_file(const char *path, GPtrArray *problems, GError **err);

void config_free(vulnid_config *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(vulnid_config, config_free)

/* The blocks that apply to a year: `blocks_YYYY` if present, else `blocks`. */
char *config_blocks_for_year(const vulnid_config *cfg, int year);

/* A key of the table, by name: its loaded value (checked at load time,
 * the default when the file does not set it).  A key that is not in the
 * table, or of another type, is a programming error: 0, FALSE or "". */
gint64 config_key_int(const vulnid_config *cfg, const char *group, const char *key);
gboolean config_key_bool(const vulnid_config *cfg, const char *group, const char *key);
char *config_key_string(const vulnid_config *cfg, const char *group, const char *key);

/* Text of a new, fully commented configuration file, made from the key
 * table. */
char *config_default_text(const char *prefix, const char *domain);

/* The key table as text, one key a line: group, key, type, minimum,
 * maximum, default, separated by tabs ("-" where there is none).
 * vulnid config keys prints it; the test suite checks vulnid.conf(5)
 * against it. */
char *config_table_text(void);

/* A domain name: letters, digits, '-' and '.', not starting with either. */
gboolean config_domain_valid(const char *domain);

/* A plain addr-spec (local@domain.tld) that is safe in a header. */
gboolean config_address_valid(const char *address);

/* Resolve a path from the configuration against the instance directory. */
char *config_resolve_path(const vulnid_config *cfg, const char *path);

#endif
