/* fileio.h - file descriptor helpers GLib does not offer */
#ifndef VULNID_FILEIO_H
#define VULNID_FILEIO_H

#include <glib.h>

/* Write all len bytes of buf to fd, going on after short writes and
 * EINTR.  FALSE with errno set when a write fails (part of buf may have
 * been written: appenders rely on the next run cutting a torn line). */
gboolean fileio_write_all(int fd, const void *buf, gsize len);

#endif
