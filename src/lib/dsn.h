/* dsn.h - delivery status notifications (RFC 3464) */
#ifndef VULNID_DSN_H
#define VULNID_DSN_H

#include <glib.h>
#include <gmime/gmime.h>

typedef struct {
	char *recipient;	/* Final-Recipient (or Original-Recipient) address */
	char *original;		/* Original-Recipient address, or NULL */
	char *action;		/* failed, delayed, delivered, relayed, expanded */
	char *status;		/* e.g. 5.1.1 */
	char *diagnostic;	/* Diagnostic-Code text, cleaned */
} dsn_recipient;

typedef struct {
	gboolean is_report;	/* a multipart/report with delivery-status */
	char *reporting_mta;
	GPtrArray *recipients;	/* dsn_recipient* */
	char *original_message_id;	/* of the returned message, if included */
} dsn_report;

/* Parse a DSN out of msg.  Never fails: a mail that is no DSN gives a
 * report with is_report FALSE and no recipients.  Bounded: at most 100
 * recipients and 64 KiB of delivery-status text are read. */
dsn_report *dsn_parse(GMimeMessage *msg);
/* Parse the text of a message/delivery-status part. */
void dsn_parse_status_text(dsn_report *r, const char *text, gsize len);
dsn_report *dsn_report_new(void);
void dsn_report_free(dsn_report *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(dsn_report, dsn_report_free)

#endif
