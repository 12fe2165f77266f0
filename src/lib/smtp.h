/* smtp.h - sending queued mail over SMTP with libESMTP
 *
 * libESMTP is the only code that speaks SMTP.  One call sends a batch of
 * messages over one connection and reports, per recipient, whether the
 * mail was delivered, failed for good, or should be tried again. */
#ifndef VULNID_SMTP_H
#define VULNID_SMTP_H

#include <glib.h>

#include "status.h"

typedef enum {
	SMTP_STARTTLS_NO,
	SMTP_STARTTLS_IF_AVAILABLE,
	SMTP_STARTTLS_REQUIRED,
} smtp_starttls;

/* Which server certificate the STARTTLS session accepts. */
typedef enum {
	SMTP_TLS_VERIFY,	/* one that chains to a trusted CA and names the host */
	SMTP_TLS_ENCRYPT,	/* any: encryption without authentication */
	SMTP_TLS_PIN,		/* only one whose SHA-256 is in fingerprints */
} smtp_tls_policy;

typedef struct {
	char *host;
	int port;
	smtp_starttls starttls;
	smtp_tls_policy tls;
	char *user;		/* NULL: no SMTP AUTH */
	char *password;
	int timeout;		/* seconds, for each protocol step */
	char *helo;		/* EHLO name */
	char *ca_file;		/* SMTP_TLS_VERIFY: trust these CAs (PEM), not the system's */
	char **fingerprints;	/* SMTP_TLS_PIN: SHA-256 of the certificate, 64 lower-case hex */
	char *client_dir;	/* where libESMTP looks for a client certificate:
				   CLIENT_DIR/libesmtp/private/HOST.pem (NULL: none) */
} smtp_settings;

typedef enum {
	SMTP_RESULT_DELIVERED,
	SMTP_RESULT_TEMPORARY,
	SMTP_RESULT_PERMANENT,
} smtp_result;

typedef struct {
	char *address;
	smtp_result result;
	char *reply;		/* the server's reply, or why there was none */
} smtp_rcpt;

typedef struct {
	char *envelope_from;
	GBytes *data;		/* the message, CRLF line ends */
	GPtrArray *rcpts;	/* smtp_rcpt* */
	gboolean offered;	/* the server answered its MAIL command (any code):
				 * FALSE for every message of a session means the
				 * relay was not reached (no connection, no greeting,
				 * EHLO, STARTTLS or AUTH failed) */
} smtp_message;

smtp_message *smtp_message_new(const char *envelope_from, GBytes *data);
void smtp_message_add_rcpt(smtp_message *m, const char *address);
void smtp_message_free(smtp_message *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(smtp_message, smtp_message_free)

/* Outcome of one recipient from the replies to MAIL, RCPT and the end of
 * DATA (0: no reply).  530 and 535 (authentication) are configuration
 * trouble, so temporary. */
smtp_result smtp_classify(int mail_code, int rcpt_code, int data_code);

/* Send all messages in one session, bounded by deadline seconds overall
 * (0: none) and by what is left of an alarm() the caller set (the filter's
 * time limit), less a reserve for recording the outcome.  When that
 * deadline passes the connection is shut down, whatever libESMTP waits
 * for; a recipient without a final reply by then is a temporary failure
 * (a message the server took but did not confirm is sent again later:
 * at least once).  Every recipient gets a result; the status is only for
 * failures to even try (out of memory).  One session at a time. */
vulnid_status smtp_send(const smtp_settings *cfg, GPtrArray *messages /* smtp_message* */,
			guint deadline, GError **err);

#endif
