/* message-spool.c - copy one incoming mail into a private spool file,
 * bounded, with the digest that recognises a redelivery */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "header.h"
#include "message.h"
#include "message-private.h"
#include "text.h"

/* --- spooling ---------------------------------------------------------- */

/* Trace fields that a relay or redelivery may add; they do not make a
 * message a different one. */
static const char *const trace_fields[] = {
	"received", "return-path", "delivered-to", "x-original-to",
	"x-envelope-to", "envelope-to", "x-spam-status", "x-spam-score",
	"x-spam-level", "x-spam-flag", "x-spam-checker-version",
	"authentication-results", "arc-seal", "arc-message-signature",
	"arc-authentication-results", "x-virus-scanned", "received-spf",
};

typedef struct {
	int fd;
	char buf[65536];
	size_t start, end;
	gboolean eof;
} piece_reader;

/* Next piece: a whole line with its '\n', or as much of a long line as the
 * buffer holds.  Returns FALSE at end of input, -1 in *error on failure. */
static gboolean
piece_next(piece_reader *r, const char **piece, size_t *len, int *error)
{
	char *nl;

	*error = 0;
	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl != NULL || r->eof || (r->start == 0 && r->end == sizeof r->buf))
			break;
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		{
			ssize_t n = read(r->fd, r->buf + r->end, sizeof r->buf - r->end);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				*error = errno;
				return FALSE;
			}
			if (n == 0)
				r->eof = TRUE;
			r->end += (size_t) n;
		}
	}
	if (r->start == r->end)
		return FALSE;
	*piece = r->buf + r->start;
	*len = nl != NULL ? (size_t) (nl - (r->buf + r->start)) + 1 : r->end - r->start;
	r->start += *len;
	return TRUE;
}

static gboolean
is_trace_field(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len < 80 ? len : 80);
	size_t n;

	if (colon == NULL)
		return FALSE;
	n = (size_t) (colon - line);
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	for (gsize i = 0; i < G_N_ELEMENTS(trace_fields); i++)
		if (strlen(trace_fields[i]) == n && g_ascii_strncasecmp(line, trace_fields[i], n) == 0)
			return TRUE;
	return FALSE;
}

/* Feed a piece to a checksum with "\r\n" at its end as "\n". */
static void
checksum_normalized(GChecksum *c, const char *p, size_t len)
{
	if (len >= 2 && p[len - 2] == '\r' && p[len - 1] == '\n') {
		g_checksum_update(c, (const guchar *) p, len - 2);
		g_checksum_update(c, (const guchar *) "\n", 1);
	} else
		g_checksum_update(c, (const guchar *) p, len);
}

static vulnid_status
write_all(int fd, const char *p, size_t len, GError **err)
{
	if (!fileio_write_all(fd, p, len))
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot write spool file: %s", g_strerror(errno));
	return VULNID_OK;
}

/* Writes to the spool file go through a buffer: a mail of short lines
 * would otherwise cost a system call per line (25 MB of 3-byte lines took
 * 8 million of them, 100 s). */
typedef struct {
	int fd;
	gsize len;
	char buf[65536];
} spool_writer;

static vulnid_status
spool_flush(spool_writer *w, GError **err)
{
	vulnid_status st = write_all(w->fd, w->buf, w->len, err);

	w->len = 0;
	return st;
}

static vulnid_status
spool_write(spool_writer *w, const char *p, gsize len, GError **err)
{
	if (w->len + len > sizeof w->buf) {
		vulnid_status st = spool_flush(w, err);

		if (st != VULNID_OK)
			return st;
		if (len >= sizeof w->buf)
			return write_all(w->fd, p, len, err);
	}
	memcpy(w->buf + w->len, p, len);
	w->len += len;
	return VULNID_OK;
}

static int
spool_tempfile(const char *dir, GError **err, vulnid_status *st)
{
	g_autofree char *tmpl = g_build_filename(dir, "spool.XXXXXX", NULL);
	int fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0) {
		*st = vulnid_fail(err, vulnid_status_from_errno(errno),
				  "cannot create a file in '%s': %s", dir, g_strerror(errno));
		return -1;
	}
	unlink(tmpl);
	*st = VULNID_OK;
	return fd;
}

void
message_spool_free(message_spool *sp)
{
	if (sp == NULL)
		return;
	if (sp->fd >= 0)
		close(sp->fd);
	header_scan_free(sp->scan);
	g_free(sp->mbox_sender);
	g_free(sp);
}

/* What is measured of the mail as it passes: the longest line, the
 * header (fields, their longest, NUL bytes, its digest without trace
 * fields), the body's digest; the header scan (header.h) sees it too. */
typedef struct {
	gboolean in_header;
	gboolean header_included;	/* the current field counts for the digest */
	gint64 line_len;
	gint64 header_len;		/* of the current field, with its continuations */
	GChecksum *body;
	GChecksum *head;
} spool_measure;

static void
measure_piece(message_spool *sp, spool_measure *m, const char *piece, size_t len,
	      gboolean at_line_start, gboolean ends_line)
{
	m->line_len = at_line_start ? (gint64) len : m->line_len + (gint64) len;
	if (m->line_len - (ends_line ? 1 : 0) > sp->longest_line)
		sp->longest_line = m->line_len - (ends_line ? 1 : 0);
	if (!m->in_header) {
		checksum_normalized(m->body, piece, len);
		header_scan_body_feed(sp->scan, piece, len, at_line_start);
		return;
	}
	if (at_line_start && (piece[0] == '\n' || (len >= 2 && piece[0] == '\r' && piece[1] == '\n'))) {
		m->in_header = FALSE;	/* the blank line belongs to neither */
		header_scan_end(sp->scan);
		sp->body_offset = sp->size;
		return;
	}
	header_scan_feed(sp->scan, piece, len, at_line_start, sp->size - (gint64) len);
	if (memchr(piece, '\0', len) != NULL)
		sp->header_has_nul = TRUE;
	if (at_line_start && piece[0] != ' ' && piece[0] != '\t') {
		sp->header_count++;
		m->header_included = !is_trace_field(piece, len);
		m->header_len = 0;
	}
	m->header_len += (gint64) len;
	sp->longest_header = MAX(sp->longest_header, m->header_len);
	if (m->header_included)
		checksum_normalized(m->head, piece, len);
}

/* Read the mail from in_fd, hashing and measuring it; with copy, into a
 * new spool file (the writes gathered by the spool writer), else in_fd is
 * a spool already.  *from_line: without copy, in_fd starts with an mbox From_
 * line, which a spool must not hold; nothing was done. */
static vulnid_status
spool_read(int in_fd, const char *spool_dir, gint64 max_size, gboolean copy,
	   gboolean *from_line, message_spool **out, GError **err)
{
	g_autoptr(message_spool) sp = g_new0(message_spool, 1);
	g_autoptr(GChecksum) raw = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GChecksum) body = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GChecksum) head = g_checksum_new(G_CHECKSUM_SHA256);
	spool_measure m = { .in_header = TRUE, .header_included = TRUE, .body = body, .head = head };
	g_autofree piece_reader *r = g_new0(piece_reader, 1);
	g_autofree spool_writer *w = g_new0(spool_writer, 1);
	gboolean at_line_start = TRUE, first_line = TRUE, skipping_from = FALSE;
	const char *piece;
	size_t len;
	int rerr;
	vulnid_status st;

	*from_line = FALSE;
	sp->fd = copy ? spool_tempfile(spool_dir, err, &st) : dup(in_fd);
	if (sp->fd < 0)
		return copy ? st : vulnid_fail(err, vulnid_status_from_errno(errno), "dup: %s",
					       g_strerror(errno));
	sp->scan = header_scan_new();
	r->fd = in_fd;
	w->fd = sp->fd;
	while (piece_next(r, &piece, &len, &rerr)) {
		gboolean ends_line = piece[len - 1] == '\n';

		if (at_line_start && first_line && len >= 5 && memcmp(piece, "From ", 5) == 0) {
			/* mbox From_ line from procmail or Postfix pipe flag F:
			 * envelope data, not part of the message. */
			const char *s = piece + 5, *e;

			if (!copy) {
				*from_line = TRUE;
				return VULNID_OK;
			}

			while (s < piece + len && *s == ' ')
				s++;
			e = s;
			while (e < piece + len && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n')
				e++;
			sp->mbox_sender = g_strndup(s, (gsize) (e - s));
			skipping_from = TRUE;
		}
		first_line = FALSE;
		if (skipping_from) {
			if (ends_line) {
				skipping_from = FALSE;
				at_line_start = TRUE;
			}
			continue;
		}
		if (sp->size + (gint64) len > max_size)
			return vulnid_fail(err, VULNID_ERR_TOOBIG,
					   "message larger than %" G_GINT64_FORMAT " bytes", max_size);
		if (copy) {
			st = spool_write(w, piece, len, err);
			if (st != VULNID_OK)
				return st;
		}
		sp->size += (gint64) len;
		g_checksum_update(raw, (const guchar *) piece, len);

		measure_piece(sp, &m, piece, len, at_line_start, ends_line);
		at_line_start = ends_line;
	}
	if (rerr != 0)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read the message: %s", g_strerror(rerr));
	if (m.in_header) {
		header_scan_end(sp->scan);
		sp->body_offset = sp->size;
	}
	if (copy) {
		st = spool_flush(w, err);
		if (st != VULNID_OK)
			return st;
	}
	if (lseek(sp->fd, 0, SEEK_SET) < 0)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot rewind spool file: %s", g_strerror(errno));
	g_strlcpy(sp->raw_sha256, g_checksum_get_string(raw), sizeof sp->raw_sha256);
	g_strlcpy(sp->body_sha256, g_checksum_get_string(m.body), sizeof sp->body_sha256);
	g_strlcpy(sp->header_sha256, g_checksum_get_string(m.head), sizeof sp->header_sha256);
	*out = g_steal_pointer(&sp);
	return VULNID_OK;
}

vulnid_status
message_spool_input(int in_fd, const char *spool_dir, gint64 max_size,
		    message_spool **out, GError **err)
{
	gboolean from_line;

	return spool_read(in_fd, spool_dir, max_size, TRUE, &from_line, out, err);
}

vulnid_status
message_spool_file(int fd, const char *spool_dir, gint64 max_size,
		   message_spool **out, GError **err)
{
	gboolean from_line;
	vulnid_status s = spool_read(fd, spool_dir, max_size, FALSE, &from_line, out, err);

	if (s != VULNID_OK || !from_line)
		return s;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot rewind the mail: %s", g_strerror(errno));
	return message_spool_input(fd, spool_dir, max_size, out, err);
}

vulnid_status
message_attachment_spool(const message_attachment *a, const char *dir,
			 int *fd_out, gint64 *size, char sha256[65], GError **err)
{
	g_autoptr(GChecksum) c = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GMimeStream) fs = NULL;
	vulnid_status st;
	char buf[65536];
	gint64 total = 0;
	ssize_t n;
	int fd = spool_tempfile(dir, err, &st);

	if (fd < 0)
		return st;
	fs = g_mime_stream_fs_new(dup(fd));
	if (GMIME_IS_MESSAGE_PART(a->object)) {
		GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(a->object));

		if (inner != NULL && g_mime_object_write_to_stream(GMIME_OBJECT(inner), NULL, fs) < 0)
			goto write_failed;
	} else {
		GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(a->object));

		if (w != NULL && g_mime_data_wrapper_write_to_stream(w, fs) < 0)
			goto write_failed;
	}
	if (g_mime_stream_flush(fs) < 0)
		goto write_failed;
	while ((n = pread(fd, buf, sizeof buf, total)) > 0) {
		g_checksum_update(c, (const guchar *) buf, (gsize) n);
		total += n;
	}
	if (n < 0) {
		close(fd);
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read attachment spool: %s", g_strerror(errno));
	}
	g_strlcpy(sha256, g_checksum_get_string(c), 65);
	*size = total;
	*fd_out = fd;
	return VULNID_OK;
write_failed:
	close(fd);
	return vulnid_fail(err, vulnid_status_from_errno(errno ? errno : EIO),
			   "cannot write attachment spool: %s", g_strerror(errno ? errno : EIO));
}
