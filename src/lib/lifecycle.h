/* lifecycle.h - mail about an existing entry: additions, vendor responses,
 * commands (help, lookup, key, release, embargo, withdraw, alias, rate,
 * duplicate-of, spam, link, subscribe, unsubscribe, endorse, unendorse,
 * approve, access, grant, reviewed), roles, endorsed contributors,
 * access to sealed records */
#ifndef VULNID_LIFECYCLE_H
#define VULNID_LIFECYCLE_H

#include <glib.h>

#include "entry.h"
#include "mailctx.h"
#include "status.h"

typedef enum {
	ROUTE_NEW,		/* a new request: intake assigns identifiers */
	ROUTE_ENTRY,		/* mail to an entry: an addition and/or commands */
	ROUTE_UNKNOWN_ENTRY,	/* names an entry that does not exist */
	ROUTE_COMMANDS,		/* commands only, to the request address */
	ROUTE_LIMITED,		/* over a rate limit: archived and quarantined;
				 * the message's disposition should be
				 * "quarantined" */
} lifecycle_route_kind;

/* Where a mail goes, in order: the envelope recipient's plus-detail
 * (request+ID@D), an In-Reply-To or References naming a Message-ID the
 * robot sent, a [ID] tag in the Subject; a body that consists of command
 * lines, or a token in an answer to the robot's answer to commands (the
 * confirmations it asked for), is ROUTE_COMMANDS; anything else is
 * ROUTE_NEW.  The robot's answer to commands is tied to the entry whose
 * confirmation it asks for (its Message-ID, Reply-To and [ID] tag), when
 * there is one.  A sender (or key)
 * over its rate limit gets ROUTE_LIMITED instead.  *entry_id is set for
 * ROUTE_ENTRY and ROUTE_UNKNOWN_ENTRY (and may be for ROUTE_LIMITED).
 * Reads only. */
vulnid_status lifecycle_route(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err);
/* The same in two steps: where the mail goes (never ROUTE_LIMITED; also
 * for mail that is then set aside, to know what it is about), then the
 * rate limits on *kind. */
vulnid_status lifecycle_route_target(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id,
				     GError **err);
vulnid_status lifecycle_route_limit(mail_ctx *c, lifecycle_route_kind *kind, GError **err);

/* Whether text names entry id: the identifier in any case, not part of a
 * longer word or identifier.  A signature counts for an entry only when
 * its signed text names it (mail_ctx.unbound). */
gboolean lifecycle_text_names_entry(const char *text, const char *id);
/* An existing entry other than except that the mail's text names (of the
 * first 20 identifiers in it), or *other NULL. */
vulnid_status lifecycle_text_other_entry(mail_ctx *c, const char *except, char **other, GError **err);

/* Whether the mail's raw bytes must be archived sealed (store_blob_put_sealed,
 * no subject in the messages row): it is about an entry under embargo, and
 * its text becomes a sealed record of it. */
vulnid_status lifecycle_route_sealed(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id,
				     gboolean *sealed, GError **err);

/* Handle a routed mail inside the intake transaction: append records,
 * run commands, queue the replies.  Never for ROUTE_NEW. */
vulnid_status lifecycle_handle(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id,
			       GError **err);

/* confirm_unsigned ([lifecycle] confirm_unsigned = yes): an unsigned
 * request gets its identifier at once, but intake calls
 * lifecycle_defer_notify() instead of notify_vendor() and
 * notify_announce(); the first mail to the entry carrying the creator's
 * token then confirms it, and the vendor is notified and the entry
 * announced. */
gboolean lifecycle_confirm_unsigned(const vulnid_config *cfg);
vulnid_status lifecycle_defer_notify(mail_ctx *c, const char *entry_id, GError **err);

#endif
