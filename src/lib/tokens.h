/* tokens.h - capability tokens: secrets the robot mails to a role (the
 * creator in the ack, the vendor in its notice, an address asked to
 * confirm a subscription); only their SHA-256 is stored
 *
 * A line "Token: T" in a mail to the entry acts with T's role.  A token is
 * recognisable by its shape, as the tokens of GitHub's secret scanning are:
 * the fixed prefix "vulnid_", then 32 characters of the lower-case base32
 * alphabet (RFC 4648: a-z and 2-7), 26 random ones (130 bits) and 6 that
 * are a checksum of what comes before them (the first 30 bits of its
 * SHA-256).  So every token-shaped string in a mail, valid or not, is
 * removed before anything of the mail is recorded, relayed or answered,
 * in one pass over the text and without the database (tokens_redact()).
 *
 * Tokens issued before this shape (32 lower-case hex digits) still work,
 * and are still removed: every 32-digit window of a run of hex digits is
 * one indexed lookup, done only when the database holds such tokens at
 * all (their keys are plain hex; the keys written now are not), so the
 * cost stays linear in the text and needs no budget. */
#ifndef VULNID_TOKENS_H
#define VULNID_TOKENS_H

#include <glib.h>

#include "status.h"
#include "store.h"

#define TOKENS_PREFIX "vulnid_"
#define TOKENS_PREFIX_LEN 7
#define TOKENS_RANDOM 26	/* base32 characters of randomness: 130 bits */
#define TOKENS_CHECK 6		/* base32 characters of checksum: 30 bits */
#define TOKENS_BODY (TOKENS_RANDOM + TOKENS_CHECK)
#define TOKENS_LEN (TOKENS_PREFIX_LEN + TOKENS_BODY)
/* The prefix followed by this many base32 characters is token-shaped (a
 * token cut short still tells most of itself); fewer, as in the names of
 * this program's own functions, is not. */
#define TOKENS_SHAPE_MIN 16
/* Tokens issued before: 16 random bytes as 32 lower-case hex digits. */
#define TOKENS_LEGACY_HEX 32
/* What a token is replaced by. */
#define TOKENS_REMOVED "[token removed]"

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
/* A row that marks a state (a subscription, a pending confirmation, held
 * vendor contacts): its key is the hash of a secret nobody keeps, so it
 * never works as a token. */
vulnid_status tokens_mark(store *st, const char *entry_id, const char *role, const char *address,
			  GError **err);
/* The key of such a row, for callers that insert it themselves. */
char *tokens_mark_key(GError **err);
/* The row of a token (either shape, any case), or *out NULL.  A token of
 * the current shape with a wrong checksum is not looked up. */
vulnid_status tokens_find(store *st, const char *token, token_row **out, GError **err);

/* Whether s (len bytes, any case) is a whole token of the current shape
 * whose checksum holds. */
gboolean tokens_valid(const char *s, gsize len);
/* The value of a "Token:" line as the robot reads it: a token of the
 * current shape (checksum or not) or of the old one (24 to 128 hex
 * digits), in lower case; NULL when it is neither. */
char *tokens_line_value(const char *v);

/* text with every token-shaped string (tokens_redact's first pass) replaced
 * by TOKENS_REMOVED; *valid (may be NULL) is increased by the number of
 * those whose checksum holds.  Pure, linear in the text. */
char *tokens_redact_shape(const char *text, guint *valid);
/* Replace in *text every token-shaped string, and every token of the old
 * shape that the database knows (in any case, glued to other letters or
 * not), by TOKENS_REMOVED.  *found (may be NULL) is increased by the number
 * of tokens removed that this robot issued. */
vulnid_status tokens_redact(store *st, char **text, guint *found, GError **err);

#endif
