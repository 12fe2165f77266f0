/* store-outbox.h - the outbox tables (outbox, outbox_recipients,
 * outbox_signed): typed accessors over named statements.  The delivery
 * logic (claims, rounds, outcomes) is in outbox.c; transactions are the
 * caller's. */
#ifndef VULNID_STORE_OUTBOX_H
#define VULNID_STORE_OUTBOX_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* A new item, status queued.  claim/claim_until NULL: nobody holds it. */
typedef struct {
	const char *created;
	const char *kind;
	const char *entry;	/* or NULL */
	gint64 cause;		/* 0: none */
	const char *message_id;
	const char *envelope_from;
	const char *recipients;	/* JSON array of the addresses */
	const guint8 *data;
	gsize len;
	const char *claim;
	const char *claim_until;
} store_outbox_new;

vulnid_status store_outbox_insert(store *st, const store_outbox_new *n, gint64 *id, GError **err);
/* A recipient of item id, status queued (a repeated address is ignored). */
vulnid_status store_outbox_add_recipient(store *st, gint64 id, const char *address,
					 const char *now, GError **err);

/* Recipients of item id by state. */
vulnid_status store_outbox_tally(store *st, gint64 id, int *pending, int *failed,
				 int *delivered, GError **err);

/* Move a recipient still pending (queued, deferred) to state with the
 * server's reply; *changed FALSE when it was settled already (forward
 * only: a bounce recorded meanwhile stays). */
vulnid_status store_outbox_recipient_verdict(store *st, gint64 id, const char *address,
					     const char *state, const char *reply, const char *now,
					     gboolean *changed, GError **err);

/* The outcome of one attempt at an item.  The claim ends with it when the
 * item is still held by run_token or process_token (attempts counts only
 * then); otherwise only the state derived from the recipients changes. */
typedef struct {
	gint64 id;
	const char *state;	/* delivered, deferred, failed */
	const char *now;
	const char *error;	/* or NULL: keep the last one (none if delivered) */
	const char *next_attempt;	/* or NULL: unchanged */
	const char *run_token;
	const char *process_token;
} store_outbox_outcome;

vulnid_status store_outbox_set_outcome(store *st, const store_outbox_outcome *o, GError **err);

/* Bytes of item id, or NOTFOUND. */
vulnid_status store_outbox_data(store *st, gint64 id, GBytes **out, GError **err);
/* The signed bytes of item id kept for mode, or *out NULL. */
vulnid_status store_outbox_signed_get(store *st, gint64 id, const char *mode, GBytes **out,
				      GError **err);
/* Keep signed bytes for the next attempt (the first ones kept stay). */
vulnid_status store_outbox_signed_keep(store *st, gint64 id, const char *mode, const char *now,
				       GBytes *data, GError **err);

/* The claims (char*) other than these two tokens that hold pending items
 * past now. */
vulnid_status store_outbox_live_claims(store *st, const char *process_token,
				       const char *run_token, const char *now, GPtrArray *claims,
				       GError **err);
/* End the live claim; *items: how many it held. */
vulnid_status store_outbox_release_claim(store *st, const char *claim, gint64 *items, GError **err);

/* Which items are due for a run. */
typedef struct {
	gint64 cause;		/* 0: all */
	gboolean force;		/* ignore next_attempt */
	const char *now;
	const char *run_token;	/* never an item this run claimed before */
} store_outbox_due;

vulnid_status store_outbox_any_due(store *st, const store_outbox_due *d, gboolean *any, GError **err);
/* Give up to limit due items the claim run_token until until (the items
 * of a cause and --force by id, else the earliest due first); *claimed:
 * how many. */
vulnid_status store_outbox_claim_due(store *st, const store_outbox_due *d, const char *until,
				     int limit, gint64 *claimed, GError **err);
/* Defer, as if each had been tried now and the relay had not answered
 * (reason), every item due now that nobody holds and that was created
 * after created_after (older ones are tried, to be given up); *items: how
 * many. */
vulnid_status store_outbox_defer_unreached(store *st, const char *reason, const char *now,
					   const char *created_after, gint64 *items, GError **err);

typedef struct {
	gint64 id;
	char *created;
	char *message_id;
	char *entry;
	char *kind;
	char *envelope_from;
	gint64 attempts;
	gint64 cause;
	gint64 claim_until;	/* unix time */
} store_outbox_item;

void store_outbox_item_free(store_outbox_item *it);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(store_outbox_item, store_outbox_item_free)

/* Pending items either token holds a live claim on, by id
 * (store_outbox_item*, the array frees them). */
vulnid_status store_outbox_claimed(store *st, const char *process_token, const char *run_token,
				   const char *now, GPtrArray *items, GError **err);
/* Addresses (char*) of item id still pending, in the order queued. */
vulnid_status store_outbox_pending_recipients(store *st, gint64 id, GPtrArray *out, GError **err);

/* Make item id due at now again, unless delivered; *found FALSE if no such
 * undelivered item.  Its failed and deferred recipients become queued. */
vulnid_status store_outbox_requeue(store *st, gint64 id, const char *now, gboolean *found,
				   GError **err);

typedef struct {
	gint64 id;
	char *kind;
	char *entry;
	char *message_id;
	gint64 cause;
} store_outbox_ref;

/* The item with this envelope sender / Message-ID (either case), or NOTFOUND. */
vulnid_status store_outbox_find_by_envelope(store *st, const char *address, store_outbox_ref **out,
					    GError **err);
vulnid_status store_outbox_find_by_message_id(store *st, const char *msgid, store_outbox_ref **out,
					      GError **err);

/* The item's recipient that is address (either case); with address NULL,
 * the only recipient of a one-recipient item.  *out NULL when none. */
vulnid_status store_outbox_recipient_match(store *st, gint64 id, const char *address, char **out,
					   GError **err);
/* A bounce: the recipient fails, unless it has failed already (*changed). */
vulnid_status store_outbox_recipient_bounce(store *st, gint64 id, const char *address,
					    const char *reason, const char *now,
					    gboolean *changed, GError **err);
/* The item fails as a whole. */
vulnid_status store_outbox_fail(store *st, gint64 id, const char *reason, const char *now,
				GError **err);

/* `vulnid queue list`: one row of an item not delivered. */
typedef struct {
	gint64 id;
	char *created;
	char *kind;
	char *entry;		/* "" when none */
	char *message_id;	/* may be NULL */
	char *recipients;	/* JSON array */
	char *status;
	gint64 attempts;
	char *next_attempt;	/* may be NULL */
	char *last_error;	/* "" when none */
	char *claimed_until;	/* NULL unless claimed past now */
	char *shown;		/* when queue list first showed it failed, or NULL */
} store_outbox_row;

void store_outbox_row_free(store_outbox_row *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(store_outbox_row, store_outbox_row_free)

/* Items not delivered (only_deferred: only the deferred ones), by id, as
 * store_outbox_row* (the array frees them). */
vulnid_status store_outbox_list(store *st, const char *now, gboolean only_deferred,
				GPtrArray *rows, GError **err);

/* What needs the operator's attention: items queued or deferred, and
 * failed ones not yet shown (vulnid queue list, which then marks them
 * with store_outbox_mark_shown(), in the caller's transaction). */
vulnid_status store_outbox_list_attention(store *st, const char *now, GPtrArray *rows, GError **err);
vulnid_status store_outbox_mark_shown(store *st, gint64 id, const char *now, GError **err);

#endif
