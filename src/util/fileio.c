/* fileio.c - file descriptor helpers GLib does not offer */
#include "autoconfig.h"

#include <errno.h>
#include <unistd.h>

#include "fileio.h"

gboolean
fileio_write_all(int fd, const void *buf, gsize len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return FALSE;
		if (n == 0) {
			errno = EIO;	/* a write of nothing: no progress, ever */
			return FALSE;
		}
		p += n;
		len -= (gsize) n;
	}
	return TRUE;
}
