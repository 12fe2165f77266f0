/* store-hashcash.h - the ledger of spent Hashcash stamps (hashcash.h):
 * one indexed insert per stamp, forgotten when its validity ends */
#ifndef VULNID_STORE_HASHCASH_H
#define VULNID_STORE_HASHCASH_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Remember the stamp sha256 until expires; *fresh is FALSE when it was
 * remembered already (spent before). */
vulnid_status store_hashcash_spend(store *st, const char *sha256, const char *expires, gboolean *fresh,
				   GError **err);
/* Forget the stamps whose validity ended before now (RFC 3339, UTC). */
vulnid_status store_hashcash_purge(store *st, const char *now, gint64 *purged, GError **err);

#endif
