/* tokens.h - capability tokens: secrets the robot mails to a role (the
 * creator in the ack, the vendor in its notice, an address asked to
 * confirm a subscription); only their SHA-256 is stored
 *
 * A line "Token: T" in a mail to the entry acts with T's role.  Tokens
 * never reach a record: tokens_scrub() removes every token it recognises
 * from text before it is recorded, so no view and no export can carry one. */
#ifndef VULNID_TOKENS_H
#define VULNID_TOKENS_H

#include <glib.h>

#include "status.h"
#include "store.h"

#define TOKENS_HEX 32	/* a token: 16 random bytes as lower-case hex */

typedef struct {
	char *entry;
	char *role;	/* creator, vendor, subscribe, unsubscribe, ... */
	char *address;	/* whom it was sent to, or NULL */
} token_row;

void token_row_free(gpointer p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(token_row, token_row_free)

/* A new token for entry and role, sent to address. */
vulnid_status tokens_issue(store *st, const char *entry_id, const char *role, const char *address,
			   char **token, GError **err);
/* A row that marks a state (a subscription, a pending confirmation): its
 * key is the hash of a secret nobody keeps, so it never works as a token. */
vulnid_status tokens_mark(store *st, const char *entry_id, const char *role, const char *address,
			  GError **err);
/* The row of a token, or *out NULL. */
vulnid_status tokens_find(store *st, const char *token, token_row **out, GError **err);

/* Replace every token in *text (any case, glued to other letters or not)
 * by "[token removed]".  At most *budget lookups (each hex run of 32 to
 * 128 digits costs one to three); the budget is shared by the texts of a
 * mail. */
vulnid_status tokens_scrub(store *st, char **text, guint *budget, GError **err);

#endif
