/* transport.h - how the configuration names the way mail leaves: the
 * smtp:// URL of the relay, whether its host is this machine, pinned
 * certificate fingerprints.  Pure parsing, below both the configuration
 * and the SMTP client. */
#ifndef VULNID_TRANSPORT_H
#define VULNID_TRANSPORT_H

#include <glib.h>

#include "status.h"

/* "smtp://host[:port]" (port 25 by default); VULNID_ERR_CONFIG if not. */
gboolean transport_parse_url(const char *url, char **host, int *port, GError **err);

/* Whether a connection to host never leaves this machine: localhost, an
 * address in 127.0.0.0/8, ::1. */
gboolean transport_host_is_loopback(const char *host);

/* A certificate fingerprint as 64 lower-case hex digits, from hex with or
 * without colons (and an optional "sha256:" in front); NULL if it is not
 * a SHA-256. */
char *transport_fingerprint_normalize(const char *text);

#endif
