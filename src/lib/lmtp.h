/* lmtp.h - the LMTP protocol (RFC 2033) as a server speaks it, without I/O
 *
 * A session is fed the bytes a client sends and answers into a buffer; the
 * caller moves bytes between the socket and the session, and supplies the
 * recipient check, the spool for DATA and the delivery through callbacks.
 * Nothing here touches the network, the database or the mail itself, so
 * the whole protocol can be unit-tested and fuzzed on byte strings. */
#ifndef VULNID_LMTP_H
#define VULNID_LMTP_H

#include <glib.h>

/* Longest command line read (RFC 5321 says 512; SMTPUTF8 addresses and
 * XFORWARD need more), without CRLF. */
#define LMTP_MAX_LINE 2048
/* Longest address accepted in MAIL or RCPT. */
#define LMTP_MAX_ADDRESS 320

typedef enum {
	LMTP_CMD_UNKNOWN, LMTP_CMD_LHLO, LMTP_CMD_HELO, LMTP_CMD_MAIL, LMTP_CMD_RCPT,
	LMTP_CMD_DATA, LMTP_CMD_RSET, LMTP_CMD_NOOP, LMTP_CMD_QUIT, LMTP_CMD_VRFY,
	LMTP_CMD_XFORWARD,
} lmtp_verb;

/* One parsed command line. */
typedef struct {
	lmtp_verb verb;
	char *arg;		/* LHLO domain, or the raw argument */
	char *address;		/* MAIL and RCPT: the path without <>; "" is <> */
	gint64 size;		/* MAIL SIZE=, -1 when absent */
	gboolean smtputf8;	/* MAIL SMTPUTF8 */
	GPtrArray *xforward;	/* XFORWARD: name, value, name, value ... (decoded) */
	char *error;		/* a syntax error: the whole reply line */
} lmtp_command;

lmtp_command *lmtp_command_parse(const char *line, gsize len);
void lmtp_command_free(lmtp_command *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(lmtp_command, lmtp_command_free)

/* Decode xtext (RFC 3461: "+XX" hex escapes); NULL when malformed. */
char *lmtp_xtext_decode(const char *s);

/* The DATA decoder: dot-unstuffing and CRLF to LF line ends, up to the
 * line "." that ends the data.  Only CRLF ends a line (RFC 5321 2.3.8): a
 * bare LF or CR is kept as it is, never a line end, so "<LF>.<LF>" never
 * ends the data (SMTP smuggling: a second mail hidden in one DATA); the
 * mail is then refused (bare_newline, lmtp_session). */
typedef struct {
	int state;
	gboolean bare_newline;	/* a bare LF or CR was in the data */
} lmtp_data;

/* Feed len bytes; decoded bytes are appended to out.  Returns how many
 * bytes were used: all of them, or those up to and including the end of
 * the data (then *done is TRUE; the rest belongs to the next command). */
gsize lmtp_data_feed(lmtp_data *d, const char *in, gsize len, GByteArray *out, gboolean *done);

/* What a mail transaction carries to delivery. */
typedef struct {
	char *sender;		/* "" for the null sender */
	GPtrArray *recipients;	/* accepted RCPT addresses, in order */
	char *lhlo;		/* the client's LHLO name */
	/* XFORWARD from the MTA, NULL when not sent or unavailable */
	char *client_address;
	char *client_name;
	char *client_helo;
	char *client_proto;
	gint64 size;		/* bytes of the decoded mail */
} lmtp_envelope;

typedef struct {
	const char *hostname;	/* in the greeting and the LHLO reply */
	gint64 max_size;	/* SIZE: larger mail gets 552 5.3.4 */
	guint max_recipients;	/* per mail */
	guint max_mails;	/* per session, then 421 */
	guint max_errors;	/* bad commands before the session is ended */
	gboolean xforward;	/* announce and accept XFORWARD */
	void *data;		/* for the callbacks */
	/* NULL: accept the recipient; else the whole reply line. */
	const char *(*check_recipient)(void *data, const char *address);
	/* A file for the mail's bytes, at offset 0, or -1 (errno set); it
	 * stays the caller's (the session never closes it), and may hold
	 * bytes past the mail's size (env->size) from an earlier mail. */
	int (*spool_open)(void *data);
	/* The mail in fd (rewound) is complete: append one reply line (without
	 * CRLF) per recipient to replies, in order. */
	void (*deliver)(void *data, const lmtp_envelope *env, int fd, GPtrArray *replies);
} lmtp_server_config;

typedef struct lmtp_session lmtp_session;

/* The greeting is in the output at once. */
lmtp_session *lmtp_session_new(const lmtp_server_config *cfg);
void lmtp_session_free(lmtp_session *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(lmtp_session, lmtp_session_free)

/* Handle what the client sent.  Replies are appended to the output. */
void lmtp_session_input(lmtp_session *s, const char *buf, gsize len);
/* The client closed its side: an unfinished mail is dropped. */
void lmtp_session_eof(lmtp_session *s);
/* Replies not yet written; the caller removes what it wrote. */
GByteArray *lmtp_session_output(lmtp_session *s);
/* The session is over (QUIT, too many errors, too many mails): write
 * the output, then close. */
gboolean lmtp_session_closing(const lmtp_session *s);
/* Whether the session is inside DATA (for the caller's time limits). */
gboolean lmtp_session_in_data(const lmtp_session *s);
/* Between MAIL and the end of its data. */
gboolean lmtp_session_in_transaction(const lmtp_session *s);
/* End the session with a 421 line (time limit, shutdown). */
void lmtp_session_abort(lmtp_session *s, const char *reply);
/* Mails delivered in this session. */
guint lmtp_session_mails(const lmtp_session *s);

#endif
