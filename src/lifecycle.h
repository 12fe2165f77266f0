/* lifecycle.h - mail about an existing entry: additions, vendor responses,
 * commands (help, lookup, key, release, embargo, withdraw, alias, rate,
 * duplicate-of, spam, link, subscribe, unsubscribe), roles */
#ifndef VULNID_LIFECYCLE_H
#define VULNID_LIFECYCLE_H

#include <glib.h>

#include "mailctx.h"
#include "status.h"

typedef enum {
	ROUTE_NEW,		/* a new request: intake assigns identifiers */
	ROUTE_ENTRY,		/* mail to an entry: an addition and/or commands */
	ROUTE_UNKNOWN_ENTRY,	/* names an entry that does not exist */
	ROUTE_COMMANDS,		/* commands only, to the request address */
} lifecycle_route_kind;

/* Where a mail goes, in order: the envelope recipient's plus-detail
 * (request+ID@D), an In-Reply-To or References naming a Message-ID the
 * robot sent, a [ID] tag in the Subject; a body that starts with command
 * lines is ROUTE_COMMANDS; anything else is ROUTE_NEW.  *entry_id is set
 * for ROUTE_ENTRY and ROUTE_UNKNOWN_ENTRY.  Reads only. */
vulnid_status lifecycle_route(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err);

/* Handle a routed mail inside the intake transaction: append records,
 * run commands, queue the replies.  Never for ROUTE_NEW. */
vulnid_status lifecycle_handle(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id,
			       GError **err);

/* A new capability token for entry and role ("creator" in the ack,
 * "vendor" in the vendor notification), sent to address; only its hash is
 * stored.  A mail carrying a line "Token: T" then acts with that role. */
vulnid_status lifecycle_issue_token(store *st, const char *entry_id, const char *role,
				    const char *address, char **token, GError **err);

#endif
