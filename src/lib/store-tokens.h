/* store-tokens.h - the database accessors of tokens (tokens.c): a token is
 * kept only as its SHA-256; statements prepared once per connection. */
#ifndef VULNID_STORE_TOKENS_H
#define VULNID_STORE_TOKENS_H

#include <glib.h>

#include "status.h"
#include "store.h"

vulnid_status store_tokens_insert(store *st, const char *sha256, const char *entry_id, const char *role,
				  const char *address, const char *created, GError **err);

/* The row of the token with hash sha256: *found, and its entry, role and
 * address (new strings, NULL when absent). */
vulnid_status store_tokens_find(store *st, const char *sha256, gboolean *found, char **entry_id,
				char **role, char **address, GError **err);

/* Whether a row has the key sha256 (one probe of the primary key). */
vulnid_status store_tokens_known(store *st, const char *sha256, gboolean *found, GError **err);

/* Whether any row has a key of the old form (bare hex): tokens issued
 * before the current shape, which must still be looked for in texts. */
vulnid_status store_tokens_legacy(store *st, gboolean *any, GError **err);

#endif
