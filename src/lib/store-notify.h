/* store-notify.h - the database accessors of mail to others (notify.c):
 * the daily digest's pending announcements, an entry's subscriptions.
 * Each runs in the caller's transaction; statements are prepared once per
 * connection. */
#ifndef VULNID_STORE_NOTIFY_H
#define VULNID_STORE_NOTIFY_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Keep entry_id for the digest (once: a second call changes nothing). */
vulnid_status store_notify_pending_add(store *st, const char *entry_id, const char *created, GError **err);
/* The entries kept before day (RFC 3339 date) and not yet sent, oldest first. */
vulnid_status store_notify_pending_list(store *st, const char *day, GPtrArray **ids, GError **err);
/* Mark those entries sent in digest outbox item outbox. */
vulnid_status store_notify_pending_sent(store *st, const char *day, gint64 outbox, GError **err);

/* One subscribe ("subscriber") or unsubscribe ("unsubscribed") of an entry. */
typedef struct {
	char *address;
	char *role;
} store_subscription;

/* The subscribes and unsubscribes of entry_id in the order they were
 * made, at most limit rows; an array of store_subscription*. */
vulnid_status store_notify_subscriptions(store *st, const char *entry_id, int limit, GPtrArray **out,
					 GError **err);

/* The Message-IDs of entry_id's request and of the robot's ack of it, in
 * that order, those that exist (without <>): the thread a notice to the
 * researcher answers (In-Reply-To the last, References all). */
vulnid_status store_notify_thread(store *st, const char *entry_id, GPtrArray **out, GError **err);

#endif
