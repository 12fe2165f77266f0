/* intake.h - what vulnid-filter does with one mail, from stdin to outbox */
#ifndef VULNID_INTAKE_H
#define VULNID_INTAKE_H

#include <glib.h>

#include "config.h"
#include "status.h"

typedef struct {
	const char *sender;	/* envelope sender (-f), or NULL */
	const char *recipient;	/* envelope recipient (-r), or NULL */
	const char *client_address;	/* the SMTP client's IP address (-a, or an
					 * LMTP server's XFORWARD ADDR), or NULL;
					 * "received": from the topmost Received field */
} intake_envelope;

typedef enum {
	INTAKE_ASSIGNED,	/* new entries, ack queued */
	INTAKE_DUPLICATE,	/* seen before: nothing new */
	INTAKE_REJECTED,	/* request with errors: error reply, nothing assigned */
	INTAKE_HELP,		/* help reply */
	INTAKE_KEY,		/* the robot's key sent back */
	INTAKE_QUARANTINED,	/* malformed or automatic: archived, set aside */
	INTAKE_BOUNCE,		/* a bounce of our own mail, recorded */
	INTAKE_ENTRY,		/* mail to an entry: records appended, replies queued */
	INTAKE_COMMANDS,	/* commands only */
} intake_outcome;

typedef struct {
	intake_outcome outcome;
	GPtrArray *ids;		/* assigned identifiers */
	char *reason;		/* quarantine or rejection reason */
	char *warning;		/* post-commit trouble (delivery, audit file) */
} intake_result;

void intake_result_free(intake_result *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(intake_result, intake_result_free)

const char *intake_outcome_str(intake_outcome o);

struct request;
/* Whether any block of a parsed request asks for an embargo. */
gboolean intake_request_embargoed(const struct request *r);

/* Handle one mail read from in_fd.  On any status but VULNID_OK nothing
 * was recorded and the MTA must retry (or bounce, for VULNID_ERR_TOOBIG). */
vulnid_status intake_message(const vulnid_config *cfg, int in_fd, const intake_envelope *env,
			     intake_result **result, GError **err);

#endif
