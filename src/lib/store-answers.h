/* store-answers.h - the answer budget's counters (policy.c): bytes mailed
 * per address and hour in answers to mail the robot could not verify, and
 * whether the address was told that answers stopped.  Reading covers at
 * most the period's hours (a probe of the primary key per hour bucket);
 * writing one bucket, and forgets the address's buckets older than a week. */
#ifndef VULNID_STORE_ANSWERS_H
#define VULNID_STORE_ANSWERS_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* Bytes and notices of address (lower case) in the hours from since on. */
vulnid_status store_answers_used(store *st, const char *address, gint64 since, gint64 *bytes,
				 gint64 *notices, GError **err);

/* Add bytes (and notices) to the bucket of address and hour. */
vulnid_status store_answers_add(store *st, const char *address, gint64 hour, gint64 bytes, gint64 notices,
				GError **err);

#endif
