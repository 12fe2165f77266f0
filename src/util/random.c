/* random.c - random bytes as hex (random.h) */
#include "autoconfig.h"

#include <errno.h>
#include <sys/random.h>

#include "random.h"

char *
random_hex(gsize bytes, GError **err)
{
	guint8 b[64];
	gsize got = 0;
	GString *s;

	g_return_val_if_fail(bytes <= sizeof b, NULL);
	while (got < bytes) {
		ssize_t n = getrandom(b + got, bytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* a token or a salt is a secret: no fallback */
			vulnid_fail(err, VULNID_ERR_TEMP, "cannot get random bytes: %s", g_strerror(errno));
			return NULL;
		}
		got += (gsize) n;
	}
	s = g_string_sized_new(bytes * 2);
	for (gsize i = 0; i < bytes; i++)
		g_string_append_printf(s, "%02x", b[i]);
	return g_string_free(s, FALSE);
}

gboolean
random_bytes(void *buf, gsize len, GError **err)
{
	guint8 *b = buf;
	gsize got = 0;

	while (got < len) {
		/* at most 256 bytes a call are never cut short by a signal */
		ssize_t n = getrandom(b + got, MIN(len - got, 256), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vulnid_fail(err, VULNID_ERR_TEMP, "cannot get random bytes: %s", g_strerror(errno));
			return FALSE;
		}
		got += (gsize) n;
	}
	return TRUE;
}
