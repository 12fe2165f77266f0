/* random.c - random bytes as hex (random.h) */
#include "autoconfig.h"

#include <errno.h>
#include <sys/random.h>

#include "random.h"

gboolean
random_bytes(guint8 *buf, gsize bytes, GError **err)
{
	gsize got = 0;

	while (got < bytes) {
		ssize_t n = getrandom(buf + got, bytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* a token or a salt is a secret: no fallback */
			vulnid_fail(err, VULNID_ERR_TEMP, "cannot get random bytes: %s", g_strerror(errno));
			return FALSE;
		}
		got += (gsize) n;
	}
	return TRUE;
}

char *
random_hex(gsize bytes, GError **err)
{
	guint8 b[64];
	GString *s;

	g_return_val_if_fail(bytes <= sizeof b, NULL);
	if (!random_bytes(b, bytes, err))
		return NULL;
	s = g_string_sized_new(bytes * 2);
	for (gsize i = 0; i < bytes; i++)
		g_string_append_printf(s, "%02x", b[i]);
	return g_string_free(s, FALSE);
}
