/* authres.h - RFC 8601 Authentication-Results of the operator's own MTA
 *
 * Only fields that carry [auth] authserv_id and stand at the top of the
 * header, above the Received field that [auth] trusted_received allows
 * (header.h collects that trace block), are read; every other
 * Authentication-Results field, whatever it claims, is ignored.  Of those,
 * the topmost result of each method counts.  A From whose domain passed
 * DMARC, or a DKIM signature aligned with it (the signing domain is the
 * From's domain or a parent of it), is "authenticated": a better key for
 * the rate limits and a stronger role than a bare address (still not a
 * key or a token). */
#ifndef VULNID_AUTHRES_H
#define VULNID_AUTHRES_H

#include <glib.h>

#include "config.h"

/* "dmarc", "dkim" or NULL. trace: header_trace_field*, top first. */
const char *authres_from_verified(const vulnid_config *cfg, GPtrArray *trace, const char *from_addr);

#endif
