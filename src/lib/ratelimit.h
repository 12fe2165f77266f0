/* ratelimit.h - how much mail one sender may make the robot handle
 *
 * Keyed on what a sender cannot choose freely, besides the From address
 * and the key: the SMTP client's network (a /24 or /64, from
 * vulnid-filter -a or the LMTP server's XFORWARD), the domain of the
 * envelope sender, a From that the operator's MTA authenticated (counted
 * apart from unauthenticated mail naming the same address), and a
 * ceiling for everyone together.  The limits are in [lifecycle]
 * (vulnid.conf(5)); the counts come from per-minute counters that the
 * database keeps as messages are inserted (rate_counts, schema 8), so a
 * check costs the same whatever the hour holds. */
#ifndef VULNID_RATELIMIT_H
#define VULNID_RATELIMIT_H

#include <glib.h>

#include "mailctx.h"
#include "status.h"
#include "store.h"

/* An SMTP client address as an MTA passes it ("192.0.2.1", "IPv6:2001:db8::1",
 * "[2001:db8::1]"), in its canonical text form, or NULL when it is no IP
 * address (empty, "unknown", "[UNAVAILABLE]"). */
char *ratelimit_client_address(const char *s);
/* The network counted for an address: "192.0.2.0/24", "2001:db8:0:1::/64"
 * (an IPv4-mapped IPv6 address counts as IPv4). */
char *ratelimit_client_net(const char *address);

/* Whether the mail is over one of the limits (requests: new requests;
 * else mail to entries), and which (a phrase for the audit log).  Mail
 * signed by a moderator's or a vendor's key is never limited; a mail that
 * paid with a Hashcash stamp (c->paid) passes the per-sender, per-key and
 * per-network limits up to hashcash_limit() (c->lifted when it did). */
vulnid_status ratelimit_check(mail_ctx *c, gboolean requests, gboolean *over, const char **which,
			      GError **err);

/* now - seconds, as stored (RFC 3339, UTC). */
char *ratelimit_since(GDateTime *now, gint64 seconds);

/* The counters are kept per minute; those older than this are of no use
 * (an hour is counted, and a clock may step back a little). */
#define RATELIMIT_KEEP_SECONDS (2 * 3600)
/* Remove the counters older than RATELIMIT_KEEP_SECONDS, in a transaction
 * of its own (vulnid tick).  The limits never read them, so this only
 * keeps the table small. */
vulnid_status ratelimit_purge(store *st, gint64 *removed, GError **err);

#endif
