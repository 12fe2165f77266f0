/* store-policy.h - what the mail policy, the rate limits and the loop
 * brake read and write (mail_ledger, held tokens, counts over messages):
 * typed accessors over named statements.  The decisions are in policy.c,
 * ratelimit.c and loop.c; transactions are the caller's. */
#ifndef VULNID_STORE_POLICY_H
#define VULNID_STORE_POLICY_H

#include <glib.h>

#include "status.h"
#include "store.h"

/* ---- the mail ledger (policy.c) ---- */

typedef struct {
	const char *created;
	gint64 cause;		/* 0: none */
	gint64 outbox;
	const char *kind;
	const char *class_name;	/* answer, unsolicited, asked, operator */
	gboolean third_party;
	gboolean suspect;
	const char *address;
	const char *domain;
	gint64 bytes;
} store_ledger_row;

vulnid_status store_policy_ledger_add(store *st, const store_ledger_row *r, GError **err);
/* Mails nobody asked for (unsolicited, answers) to third parties since a
 * time: to address / to any address in domain. */
vulnid_status store_policy_unasked_to_address(store *st, const char *address, const char *since,
					      gint64 *n, GError **err);
vulnid_status store_policy_unasked_to_domain(store *st, const char *domain, const char *since,
					     gint64 *n, GError **err);
/* Third parties the mail cause wrote to, other than address. */
vulnid_status store_policy_third_parties_of(store *st, gint64 cause, const char *address, gint64 *n,
					    GError **err);
/* Bytes the mail cause sent to third parties. */
vulnid_status store_policy_third_party_bytes(store *st, gint64 cause, gint64 *n, GError **err);
/* Answers to address since a time to mail that looked like a loop,
 * counted up to upto (the brake's limit). */
vulnid_status store_policy_suspect_answers(store *st, const char *address, const char *since,
					   gint64 upto, gint64 *n, GError **err);
/* Size of the bytes of outbox item id. */
vulnid_status store_policy_outbox_size(store *st, gint64 id, gint64 *n, GError **err);

/* ---- held vendor contacts (policy.c) ---- */

/* Hold addresses of the entry's vendor under a token nobody can present
 * (sha256 of a secret that is thrown away). */
vulnid_status store_policy_hold(store *st, const char *sha256, const char *entry_id,
				const char *addresses, const char *now, GError **err);
vulnid_status store_policy_held_count(store *st, const char *entry_id, gint64 *n, GError **err);
/* The address columns (comma-separated lists, char*) of the entry's
 * vendor tokens since its embargo ended, if it had one. */
vulnid_status store_policy_vendor_told(store *st, const char *entry_id, GPtrArray *out, GError **err);

/* ---- rate limits (ratelimit.c) ---- */

typedef enum {
	STORE_RATE_KEY,		/* signing key fingerprint */
	STORE_RATE_FROM_VERIFIED,	/* authenticated From */
	STORE_RATE_SENDER,	/* From or envelope sender */
	STORE_RATE_NETWORK,	/* client network */
	STORE_RATE_DOMAIN,	/* envelope sender domain */
	STORE_RATE_EVERYONE,
} store_rate_key;

/* Messages since a time from value (ignored for EVERYONE): the first three
 * count requests (requests TRUE) or additions; the others both.  Counted
 * per minute: the whole minute that holds since counts. */
vulnid_status store_policy_rate_count(store *st, store_rate_key key, gboolean requests,
				      const char *value, const char *since, gint64 *n, GError **err);
/* Remove the counters of the minutes before the one that holds before. */
vulnid_status store_policy_rate_purge(store *st, const char *before, gint64 *removed, GError **err);
/* Vendors whose key has this fingerprint (upper case, no spaces). */
vulnid_status store_policy_vendor_keys(store *st, const char *fpr, gint64 *n, GError **err);
/* 'rate-limited' notices queued to address since a time. */
vulnid_status store_policy_rate_notices(store *st, const char *address, const char *since,
					gint64 *n, GError **err);

/* ---- the loop brake (loop.c) ---- */

/* Whether another message than msg, since a time, came from who with a
 * dedup key ending in ":BODY_SHA256". */
vulnid_status store_policy_body_repeated(store *st, const char *who, const char *since,
					 const char *body_sha256, gint64 msg, gboolean *found,
					 GError **err);

#endif
