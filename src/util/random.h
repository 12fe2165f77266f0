/* random.h - secrets: tokens, salts and VERP tags from the kernel's
 * random source, never from a weaker one */
#ifndef VULNID_RANDOM_H
#define VULNID_RANDOM_H

#include <glib.h>

#include "status.h"

/* bytes random bytes (at most 64) as lower-case hex, or NULL with err set
 * (VULNID_ERR_TEMP) when the kernel cannot give them. */
char *random_hex(gsize bytes, GError **err);

/* len random bytes into buf (keys, padding), or FALSE with err set
 * (VULNID_ERR_TEMP) when the kernel cannot give them. */
gboolean random_bytes(void *buf, gsize len, GError **err);

#endif
