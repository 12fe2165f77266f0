/* hashcash.h - proof of work against garbage: Hashcash stamps (version 1,
 * http://www.hashcash.org/docs/hashcash.html#stamp_format) in X-Hashcash
 * fields, checked for the robot's address, the configured bits and the
 * date, and spent once
 *
 * A stamp "1:BITS:DATE:RESOURCE:EXT:RAND:COUNTER" is worth BITS when the
 * SHA-1 of the stamp, as written, starts with that many zero bits.  The
 * robot takes one minted for its own address ([hashcash] bits or more,
 * dated within validity_days), remembers the SHA-256 of each stamp it
 * accepted until its validity ends (a ledger: one indexed insert per
 * mail; vulnid tick forgets what has expired), and a mail that paid so
 * passes the per-sender and per-network rate limits up to a ceiling.
 * The rate limits ask hashcash_limit() and nothing else. */
#ifndef VULNID_HASHCASH_H
#define VULNID_HASHCASH_H

#include <glib.h>

#include "config.h"
#include "status.h"
#include "store.h"

#define HASHCASH_MAX_FIELDS 5	/* X-Hashcash fields looked at per mail */
#define HASHCASH_MAX_STAMP 512	/* characters of one stamp */

typedef struct {
	char *sha256;		/* of the stamp as written: what the ledger keeps */
	char *expires;		/* RFC 3339, UTC: when its validity ends */
	guint bits;		/* the zero bits it has */
} hashcash_stamp;

void hashcash_stamp_free(hashcash_stamp *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(hashcash_stamp, hashcash_stamp_free)

/* Check one stamp: version 1, at least bits (and as many as it claims)
 * leading zero bits of its SHA-1, its resource one of resources (ASCII
 * case-insensitive), its date (YYMMDD[hhmm[ss]], UTC) no more than
 * validity_days old and no more than a day ahead.  NULL, and *why, when
 * it is not good. */
hashcash_stamp *hashcash_stamp_check(const char *stamp, guint bits, const char *const *resources,
				     GDateTime *now, gint64 validity_days, const char **why);

/* The first good stamp among values (the X-Hashcash fields of a mail), for
 * the request address or, when it is one of the robot's, the envelope
 * recipient; NULL when stamps are off ([hashcash] bits = 0) or none is
 * good.  No database: a stamp found here still has to be spent. */
hashcash_stamp *hashcash_find(const vulnid_config *cfg, const GPtrArray *values, const char *recipient,
			      GDateTime *now);

/* Spend a stamp in the caller's transaction: *fresh is FALSE when it was
 * spent before (it then pays for nothing). */
vulnid_status hashcash_spend(store *st, const hashcash_stamp *h, gboolean *fresh, GError **err);

/* The rate limit that counts for a mail that paid (paid: a fresh stamp),
 * of one of the limits a stamp lifts (per sender, key or network): the
 * ceiling, if higher.  A limit of 0 (none) stays. */
gint64 hashcash_limit(const vulnid_config *cfg, gboolean paid, gint64 limit);

/* vulnid tick: forget the spent stamps whose validity ended before now. */
vulnid_status hashcash_purge(store *st, GDateTime *now, gint64 *purged, GError **err);

#endif
