/* message.c - spool, parse and check one incoming mail */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header.h"
#include "message.h"
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
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vulnid_fail(err, vulnid_status_from_errno(errno),
					   "cannot write spool file: %s", g_strerror(errno));
		p += n;
		len -= (size_t) n;
	}
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
	g_autofree piece_reader *r = g_new0(piece_reader, 1);
	g_autofree spool_writer *w = g_new0(spool_writer, 1);
	gboolean at_line_start = TRUE, first_line = TRUE, skipping_from = FALSE;
	gboolean in_header = TRUE, header_included = TRUE;
	gint64 line_len = 0, header_len = 0;
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

		line_len = at_line_start ? (gint64) len : line_len + (gint64) len;
		if (line_len - (ends_line ? 1 : 0) > sp->longest_line)
			sp->longest_line = line_len - (ends_line ? 1 : 0);

		if (in_header) {
			if (at_line_start && (piece[0] == '\n' || (len >= 2 && piece[0] == '\r' && piece[1] == '\n'))) {
				in_header = FALSE;	/* the blank line belongs to neither */
				header_scan_end(sp->scan);
				sp->body_offset = sp->size;
			} else {
				header_scan_feed(sp->scan, piece, len, at_line_start, sp->size - (gint64) len);
				if (memchr(piece, '\0', len) != NULL)
					sp->header_has_nul = TRUE;
				if (at_line_start && piece[0] != ' ' && piece[0] != '\t') {
					sp->header_count++;
					header_included = !is_trace_field(piece, len);
					header_len = 0;
				}
				header_len += (gint64) len;
				sp->longest_header = MAX(sp->longest_header, header_len);
				if (header_included)
					checksum_normalized(head, piece, len);
			}
		} else {
			checksum_normalized(body, piece, len);
			header_scan_body_feed(sp->scan, piece, len, at_line_start);
		}
		at_line_start = ends_line;
	}
	if (rerr != 0)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read the message: %s", g_strerror(rerr));
	if (in_header) {
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
	g_strlcpy(sp->body_sha256, g_checksum_get_string(body), sizeof sp->body_sha256);
	g_strlcpy(sp->header_sha256, g_checksum_get_string(head), sizeof sp->header_sha256);
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

/* --- parsing ------------------------------------------------------------ */

void
message_init(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
	/* A mail brings a few large buffers at a time (the text read, its
	 * records, SQLite's rows).  glibc raises its mmap threshold to the
	 * size of the first such buffer freed, and the later ones then come
	 * from the heap, where they stay resident side by side; a fixed
	 * threshold (the default, 128 KiB) gives each back when it is freed:
	 * 1.5 MiB less peak RSS for a long request text. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	g_mime_init();
}

void
message_shutdown(void)
{
	g_mime_shutdown();
}

typedef struct {
	message *m;
	const message_limits *lim;
	GMimeObject *plain;	/* first text/plain body candidate */
	GMimeObject *html;	/* first text/html body candidate */
	gboolean parts_exceeded, depth_exceeded, headers_exceeded;
} walk_state;

static void
message_add_problem(message *m, const char *code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
message_add_problem(message *m, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (m->problem == NULL)
		m->problem = g_strdup(code);
	if (m->problems->len >= 20)
		return;
	va_start(ap, fmt);
	g_ptr_array_add(m->problems, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

static void
parser_warning(gint64 offset, GMimeParserWarning code, const gchar *item, gpointer data)
{
	message *m = data;
	/* item may be the rest of a long header: only its head is shown, so
	 * that a warning costs the same however much follows it */
	g_autofree char *head = item != NULL ? g_strndup(item, 240) : NULL;
	g_autofree char *what = text_clean_line(head, 60);

	if (m->header_only)
		return;	/* the body was left out on purpose */
	if (offset >= 0)
		offset += m->offset_shift;

	switch (code) {
	case GMIME_CRIT_INVALID_HEADER_NAME:
		message_add_problem(m, "malformed-header",
				    "an invalid header name near byte %" G_GINT64_FORMAT " ('%s')",
				    offset, what);
		break;
	case GMIME_CRIT_CONFLICTING_HEADER:
		message_add_problem(m, "malformed-header",
				    "conflicting %s headers near byte %" G_GINT64_FORMAT, what, offset);
		break;
	case GMIME_CRIT_CONFLICTING_PARAMETER:
		message_add_problem(m, "malformed-mime",
				    "a header parameter given twice with different values ('%s')", what);
		break;
	case GMIME_CRIT_MULTIPART_WITHOUT_BOUNDARY:
		message_add_problem(m, "malformed-mime",
				    "a multipart part without a boundary parameter near byte %" G_GINT64_FORMAT,
				    offset);
		break;
	case GMIME_CRIT_NESTING_OVERFLOW:
		message_add_problem(m, "nesting", "MIME parts nested too deeply");
		break;
	case GMIME_CRIT_PART_WITHOUT_HEADERS_OR_CONTENT:
		message_add_problem(m, "malformed-mime",
				    "a MIME part without headers or content near byte %" G_GINT64_FORMAT,
				    offset);
		break;
	case GMIME_WARN_TRUNCATED_MESSAGE:
		message_add_problem(m, "truncated",
				    "the message is truncated (a MIME part or its closing boundary is missing)");
		break;
	case GMIME_WARN_MALFORMED_MULTIPART:
		message_add_problem(m, "malformed-mime",
				    "a multipart part near byte %" G_GINT64_FORMAT
				    " has no parts (wrong or missing boundary)", offset);
		break;
	case GMIME_WARN_MALFORMED_MESSAGE:
		message_add_problem(m, "malformed-mime", "the message structure is malformed");
		break;
	default:
		/* Duplicated headers, raw 8-bit headers, bad encoded words and
		 * the like are everyday mail; GMime copes with them. */
		break;
	}
}

static char *
clean_msgid(const char *v)
{
	g_autofree char *id = NULL;

	if (v == NULL)
		return NULL;
	id = g_mime_utils_decode_message_id(v);
	if (!text_msgid_valid(id))
		return NULL;
	return g_steal_pointer(&id);
}

static char *
header_first_token(GMimeObject *obj, const char *name)
{
	const char *v = g_mime_object_get_header(obj, name);
	char *t, *e;

	if (v == NULL)
		return NULL;
	t = g_strstrip(g_strdup(v));
	for (e = t; *e && *e != ';' && *e != ' ' && *e != '\t' && *e != '('; e++)
		;
	*e = '\0';
	return t;
}

static char *
first_mailbox(InternetAddressList *list, char **name)
{
	if (list == NULL)
		return NULL;
	for (int i = 0; i < internet_address_list_length(list); i++) {
		InternetAddress *a = internet_address_list_get_address(list, i);

		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));

			if (addr == NULL || strchr(addr, '@') == NULL)
				continue;
			if (name != NULL) {
				const char *n = internet_address_get_name(a);

				*name = n != NULL ? text_clean_line(n, 200) : NULL;
			}
			return text_clean_line(addr, 320);
		}
	}
	return NULL;
}

static gboolean
content_is(GMimeObject *o, const char *type, const char *subtype)
{
	GMimeContentType *ct = g_mime_object_get_content_type(o);

	return ct != NULL && g_mime_content_type_is_type(ct, type, subtype);
}

static gboolean
is_attachment_disposition(GMimeObject *o)
{
	GMimeContentDisposition *d = g_mime_object_get_content_disposition(o);

	return d != NULL && g_mime_content_disposition_is_attachment(d);
}

static void
keep_pgp_keys(message *m, GMimeObject *o)
{
	GMimeDataWrapper *w;
	g_autoptr(GMimeStream) mem = NULL;
	GByteArray *b;

	if (m->pgp_keys != NULL || !GMIME_IS_PART(o) || !content_is(o, "application", "pgp-keys"))
		return;
	w = g_mime_part_get_content(GMIME_PART(o));
	mem = g_mime_stream_mem_new();
	if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
		return;
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	if (b->len > 0 && b->len < 1024 * 1024)
		m->pgp_keys = g_bytes_new(b->data, b->len);
}

static void
add_attachment(message *m, GMimeObject *o)
{
	message_attachment *a = g_new0(message_attachment, 1);
	GMimeContentType *ct = g_mime_object_get_content_type(o);
	const char *fn = NULL;

	if (GMIME_IS_PART(o))
		fn = g_mime_part_get_filename(GMIME_PART(o));
	if (fn != NULL) {
		/* A name, not a path: keep the last component only. */
		const char *slash = strrchr(fn, '/');
		const char *bslash = strrchr(fn, '\\');

		if (slash != NULL || bslash != NULL)
			fn = MAX(slash, bslash) + 1;
		a->filename = text_clean_line(fn, 200);
		if (*a->filename == '\0')
			g_clear_pointer(&a->filename, g_free);
	}
	if (ct != NULL) {
		g_autofree char *mt = g_mime_content_type_get_mime_type(ct);

		a->content_type = g_ascii_strdown(mt, -1);
	} else
		a->content_type = g_strdup("application/octet-stream");
	a->object = g_object_ref(o);
	g_ptr_array_add(m->attachments, a);
	keep_pgp_keys(m, o);
}

static void
attachment_free(gpointer p)
{
	message_attachment *a = p;

	g_free(a->filename);
	g_free(a->content_type);
	g_clear_object(&a->object);
	g_free(a);
}

/* Check the encoded form of a base64 part: GMime's decoder skips what it
 * does not understand, which would silently drop data. */
static void
check_base64(message *m, GMimePart *part)
{
	GMimeDataWrapper *w = g_mime_part_get_content(part);
	GMimeStream *s;
	char buf[8192];
	gssize n;

	if (w == NULL || g_mime_data_wrapper_get_encoding(w) != GMIME_CONTENT_ENCODING_BASE64)
		return;
	s = g_mime_data_wrapper_get_stream(w);
	if (s == NULL || g_mime_stream_reset(s) < 0)
		return;
	while ((n = g_mime_stream_read(s, buf, sizeof buf)) > 0) {
		for (gssize i = 0; i < n; i++) {
			unsigned char c = (unsigned char) buf[i];

			if (!g_ascii_isalnum(c) && c != '+' && c != '/' && c != '=' &&
			    c != '\r' && c != '\n' && c != ' ' && c != '\t') {
				message_add_problem(m, "bad-base64",
						    "a base64-encoded part contains characters that are not base64");
				g_mime_stream_reset(s);
				return;
			}
		}
	}
	g_mime_stream_reset(s);
}

static void
walk(walk_state *ws, GMimeObject *o, guint depth, gboolean in_alternative, gboolean top)
{
	message *m = ws->m;
	GMimeHeaderList *hl;

	if (ws->parts_exceeded || ws->depth_exceeded)
		return;
	if (++m->part_count > (guint) ws->lim->max_parts) {
		ws->parts_exceeded = TRUE;
		message_add_problem(m, "too-many-parts", "more than %" G_GINT64_FORMAT " MIME parts",
				    ws->lim->max_parts);
		return;
	}
	if (depth > (guint) ws->lim->max_depth) {
		ws->depth_exceeded = TRUE;
		message_add_problem(m, "nesting", "MIME parts nested more than %" G_GINT64_FORMAT
				    " levels deep", ws->lim->max_depth);
		return;
	}
	m->depth = MAX(m->depth, depth);
	hl = g_mime_object_get_header_list(o);
	if (hl != NULL && !ws->headers_exceeded &&
	    g_mime_header_list_get_count(hl) > (int) ws->lim->max_headers) {
		ws->headers_exceeded = TRUE;
		message_add_problem(m, "too-many-headers", "a MIME part with more than %" G_GINT64_FORMAT
				    " header fields", ws->lim->max_headers);
	}

	if (GMIME_IS_MESSAGE_PART(o)) {
		GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

		/* A forwarded message is an attachment, never the request. */
		add_attachment(m, o);
		if (inner != NULL && g_mime_message_get_mime_part(inner) != NULL)
			walk(ws, g_mime_message_get_mime_part(inner), depth + 1, FALSE, FALSE);
		return;
	}
	if (GMIME_IS_MULTIPART(o)) {
		GMimeMultipart *mp = GMIME_MULTIPART(o);
		gboolean alt = content_is(o, "multipart", "alternative");
		int n = g_mime_multipart_get_count(mp);

		/* Signed or encrypted parts below the top are never verified or
		 * decrypted: the robot is no oracle for captured mail. */
		if (GMIME_IS_MULTIPART_ENCRYPTED(o))
			m->encrypted = m->encrypted || depth == 0;
		if (GMIME_IS_MULTIPART_SIGNED(o) && o != ws->m->signed_object)
			m->partial_signature = TRUE;
		for (int i = 0; i < n; i++)
			walk(ws, g_mime_multipart_get_part(mp, i), depth + 1, alt, top);
		return;
	}
	if (!GMIME_IS_PART(o))
		return;
	check_base64(m, GMIME_PART(o));
	if (!top)
		return;	/* inside a forwarded message: counted, archived with it */
	if (!is_attachment_disposition(o)) {
		if (content_is(o, "text", "plain")) {
			if (ws->plain == NULL) {
				/* Inline OpenPGP ciphertext is not text to read. */
				if (g_mime_part_get_openpgp_data(GMIME_PART(o)) == GMIME_OPENPGP_DATA_ENCRYPTED &&
				    depth == 0 && !m->decrypted)
					m->encrypted = TRUE;
				ws->plain = o;
				return;
			}
		} else if (content_is(o, "text", "html")) {
			if (ws->html == NULL) {
				ws->html = o;
				return;
			}
			if (in_alternative)
				return;
		}
		if (in_alternative && content_is(o, "text", "*"))
			return;	/* another rendering of the same text */
	}
	add_attachment(m, o);
}

/* The decoded content of a leaf part, read from the spool as a stream:
 * its first `max` bytes in *out, the size of all of it in *total. */
static gboolean
part_decoded_head(GMimePart *part, gsize max, GByteArray **out, gint64 *total)
{
	GMimeDataWrapper *w = g_mime_part_get_content(part);
	g_autoptr(GByteArray) b = g_byte_array_new();
	g_autoptr(GMimeStream) filtered = NULL;
	GMimeStream *src;
	gboolean ok = TRUE;
	char buf[65536];

	*total = 0;
	if (w == NULL) {
		*out = g_steal_pointer(&b);
		return TRUE;
	}
	/* as g_mime_data_wrapper_write_to_stream(), without a copy of it all */
	src = g_mime_data_wrapper_get_stream(w);
	if (src == NULL)
		return FALSE;
	g_mime_stream_reset(src);
	filtered = g_mime_stream_filter_new(src);
	switch (g_mime_data_wrapper_get_encoding(w)) {
	case GMIME_CONTENT_ENCODING_BASE64:
	case GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE:
	case GMIME_CONTENT_ENCODING_UUENCODE: {
		GMimeFilter *f = g_mime_filter_basic_new(g_mime_data_wrapper_get_encoding(w), FALSE);

		g_mime_stream_filter_add(GMIME_STREAM_FILTER(filtered), f);
		g_object_unref(f);
		break;
	}
	default:
		break;
	}
	while (!g_mime_stream_eos(filtered)) {
		gssize n = g_mime_stream_read(filtered, buf, sizeof buf);

		if (n < 0) {
			ok = FALSE;
			break;
		}
		if (b->len < max)
			g_byte_array_append(b, (const guint8 *) buf, (guint) MIN((gsize) n, max - b->len));
		*total += n;
	}
	g_mime_stream_reset(src);
	if (ok)
		*out = g_steal_pointer(&b);
	return ok;
}

/* Decoded content of a leaf part, converted to UTF-8.  Beyond m->max_text
 * bytes only the head is read, mostly up to its last whole line;
 * *cut_from is then the size of all of it, else 0. */
static char *
part_text(message *m, GMimeObject *o, gint64 *cut_from)
{
	GMimeContentType *ct = g_mime_object_get_content_type(o);
	const char *charset = ct != NULL ? g_mime_content_type_get_parameter(ct, "charset") : NULL;
	const char *format = ct != NULL ? g_mime_content_type_get_parameter(ct, "format") : NULL;
	const char *delsp = ct != NULL ? g_mime_content_type_get_parameter(ct, "delsp") : NULL;
	g_autoptr(GByteArray) bytes = NULL;
	g_autofree char *utf8 = NULL;
	g_autofree char *nl = NULL;
	gsize utf8_len = 0;
	gint64 total = 0;

	*cut_from = 0;
	if (!part_decoded_head(GMIME_PART(o), (gsize) m->max_text, &bytes, &total)) {
		message_add_problem(m, "unreadable", "the text part cannot be decoded");
		return NULL;
	}
	if (bytes->len == 0)
		return g_strdup("");
	/* NUL is checked after conversion: UTF-16 text is full of zero bytes. */
	if (total == (gint64) bytes->len)
		utf8 = text_to_utf8((const char *) bytes->data, bytes->len, charset, &utf8_len);
	else {
		const char *last_nl;

		*cut_from = total;
		utf8 = text_to_utf8_prefix((const char *) bytes->data, bytes->len, charset, &utf8_len);
		/* The last line is likely cut short: end with the last whole
		 * one, unless that would drop more than half of what was read
		 * (one long line: it is cut, at a character). */
		last_nl = memrchr(utf8, '\n', utf8_len);
		if (last_nl != NULL && (gsize) (last_nl - utf8) >= utf8_len / 2) {
			utf8_len = (gsize) (last_nl - utf8) + 1;
			utf8[utf8_len] = '\0';
		}
	}
	g_clear_pointer(&bytes, g_byte_array_unref);
	if (memchr(utf8, '\0', utf8_len) != NULL) {
		message_add_problem(m, "nul-bytes", "the text contains NUL bytes");
		return NULL;
	}
	nl = text_normalize_newlines(utf8);
	if (format != NULL && g_ascii_strcasecmp(format, "flowed") == 0)
		return text_unflow(nl, delsp != NULL && g_ascii_strcasecmp(delsp, "yes") == 0);
	return g_steal_pointer(&nl);
}

/* The text part as an attachment (named request-text.txt or .html unless
 * it has a name). */
static message_attachment *
add_text_attachment(message *m, GMimeObject *o)
{
	message_attachment *a;

	add_attachment(m, o);
	a = g_ptr_array_index(m->attachments, m->attachments->len - 1);
	if (a->filename == NULL)
		a->filename = g_strdup(content_is(o, "text", "html") ? "request-text.html" : "request-text.txt");
	return a;
}

void
message_text_as_attachment(message *m)
{
	if (m->text_part != NULL && m->text_cut_from == 0)
		add_text_attachment(m, m->text_part);
}

/* The text part was longer than m->max_text: what was read of it says so at
 * its end, and the part becomes an attachment, so that all of it is
 * archived on its own (streamed from the spool, like any attachment). */
static void
text_was_cut(message *m, GMimeObject *o, gint64 total)
{
	g_autofree char *note = NULL;
	message_attachment *a = add_text_attachment(m, o);
	gsize len, nlen;
	char *text;

	len = strlen(m->text);
	while (len > 0 && g_ascii_isspace(m->text[len - 1]))
		len--;
	note = g_strdup_printf("%s[The text of this mail is %" G_GINT64_FORMAT " bytes long; only its first %"
			       G_GINT64_FORMAT "\nbytes were read. All of it is kept as the attachment %s.]\n",
			       len > 0 ? "\n\n" : "", total, m->max_text, a->filename);
	nlen = strlen(note);
	text = g_realloc(m->text, len + nlen + 1);	/* the text may be most of the memory */
	memcpy(text + len, note, nlen + 1);
	m->text = text;
	m->text_cut_from = total;
	m->text_kept = m->max_text;
	m->text_kept_as = g_strdup(a->filename);
}

static void
collect_headers(message *m)
{
	GMimeObject *o = GMIME_OBJECT(m->mime);
	GMimeHeaderList *hl = g_mime_object_get_header_list(o);
	const char *v;
	int n = hl != NULL ? g_mime_header_list_get_count(hl) : 0;

	m->message_id = clean_msgid(g_mime_object_get_header(o, "Message-ID"));
	m->from_addr = first_mailbox(g_mime_message_get_from(m->mime), &m->from_name);
	m->reply_addr = first_mailbox(g_mime_message_get_reply_to(m->mime), NULL);
	if (m->reply_addr == NULL && m->from_addr != NULL)
		m->reply_addr = g_strdup(m->from_addr);
	v = g_mime_message_get_subject(m->mime);
	m->subject = text_clean_line(v, 998);
	m->in_reply_to = clean_msgid(g_mime_object_get_header(o, "In-Reply-To"));
	v = g_mime_object_get_header(o, "References");
	if (v != NULL) {
		GMimeReferences *refs = g_mime_references_parse(NULL, v);

		for (int i = 0; refs != NULL && i < g_mime_references_length(refs) && i < 50; i++) {
			const char *id = g_mime_references_get_message_id(refs, i);

			if (text_msgid_valid(id))
				g_ptr_array_add(m->references, g_strdup(id));
		}
		if (refs != NULL)
			g_mime_references_free(refs);
	}
	m->auto_submitted = header_first_token(o, "Auto-Submitted");
	m->precedence = header_first_token(o, "Precedence");
	v = g_mime_object_get_header(o, "List-Id");
	m->list_id = v != NULL ? text_clean_line(v, 200) : NULL;
	for (int i = 0; i < n; i++) {
		GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
		const char *name = g_mime_header_get_name(h);

		if (g_ascii_strcasecmp(name, "X-Loop") == 0 && m->x_loop->len < 100)
			g_ptr_array_add(m->x_loop, text_clean_line(g_mime_header_get_value(h), 320));
		else if (m->delivered_to == NULL &&
			 (g_ascii_strcasecmp(name, "Delivered-To") == 0 ||
			  g_ascii_strcasecmp(name, "X-Original-To") == 0 ||
			  g_ascii_strcasecmp(name, "Envelope-To") == 0))
			m->delivered_to = text_clean_line(g_mime_header_get_value(h), 320);
	}
	if (m->delivered_to == NULL)
		m->delivered_to = first_mailbox(g_mime_message_get_to(m->mime), NULL);
}

/* --- OpenPGP at the top ---------------------------------------------------- */

static GBytes *
part_bytes(GMimeObject *o)
{
	GMimeDataWrapper *w = GMIME_IS_PART(o) ? g_mime_part_get_content(GMIME_PART(o)) : NULL;
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *b;

	if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
		return g_bytes_new(NULL, 0);
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	return g_bytes_new(b->data, b->len);
}

static void
set_raw_signature(message *m, GBytes *raw)
{
	if (m->sig->raw != NULL)
		g_bytes_unref(m->sig->raw);
	m->sig->raw = raw;
	g_free(m->sig->raw_sha256);
	m->sig->raw_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, raw);
}

/* Whether text is one armored block of the given kind and nothing else. */
static gboolean
whole_armor(GBytes *text, const char *begin, const char *end)
{
	gsize n;
	const char *p = g_bytes_get_data(text, &n);
	g_autofree char *t = NULL;

	if (p == NULL || n == 0 || memchr(p, '\0', n) != NULL)
		return FALSE;
	t = g_strstrip(g_strndup(p, n));
	return g_str_has_prefix(t, begin) && g_str_has_suffix(t, end);
}

static void
verify_signed(message *m)
{
	g_autoptr(GError) e = NULL;
	GMimeSignatureList *sigs = NULL;

	if (GMIME_IS_MULTIPART_SIGNED(m->signed_object))
		sigs = crypto_verify_multipart_signed(GMIME_MULTIPART_SIGNED(m->signed_object), &e);
	else if (GMIME_IS_PART(m->signed_object))
		sigs = g_mime_part_openpgp_verify(GMIME_PART(m->signed_object), GMIME_VERIFY_NONE, &e);
	m->sig->present = TRUE;
	if (sigs == NULL) {
		g_free(m->sig->reason);
		m->sig->reason = g_strdup_printf("the signature could not be checked (%s)",
						 e != NULL ? e->message : "no signature found");
		m->sig->valid = FALSE;
		return;
	}
	crypto_judge(m->sig, sigs);
	g_object_unref(sigs);
}

static void
restore_content(GMimeObject *part, GBytes *raw)
{
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GMimeDataWrapper *w;

	g_mime_stream_write(mem, g_bytes_get_data(raw, NULL), g_bytes_get_size(raw));
	g_mime_stream_reset(mem);
	w = g_mime_data_wrapper_new_with_stream(mem, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(GMIME_PART(part), w);
	g_object_unref(w);
}

gboolean
message_can_reverify(const message *m)
{
	return m->signed_object != NULL || m->sealed_object != NULL;
}

void
message_reverify(message *m)
{
	if (m->sealed_object != NULL) {
		/* signed inside the encryption: decrypt and verify again */
		g_autoptr(GError) e = NULL;
		GMimeDecryptResult *res = NULL;
		GMimeObject *clear = NULL;

		g_clear_pointer(&m->sig->fpr, g_free);
		if (GMIME_IS_MULTIPART_ENCRYPTED(m->sealed_object)) {
			clear = g_mime_multipart_encrypted_decrypt(GMIME_MULTIPART_ENCRYPTED(m->sealed_object),
								   GMIME_DECRYPT_NONE, NULL, &res, &e);
			g_clear_object(&clear);
		} else if (GMIME_IS_PART(m->sealed_object) && m->sig->raw != NULL) {
			restore_content(m->sealed_object, m->sig->raw);
			res = g_mime_part_openpgp_decrypt(GMIME_PART(m->sealed_object), GMIME_DECRYPT_NONE,
							  NULL, &e);
		}
		if (res != NULL) {
			crypto_judge(m->sig, g_mime_decrypt_result_get_signatures(res));
			g_object_unref(res);
		}
		return;
	}
	if (m->signed_object == NULL)
		return;
	if (GMIME_IS_PART(m->signed_object) && m->sig->raw != NULL)
		restore_content(m->signed_object, m->sig->raw);	/* the verify replaced it */
	g_clear_pointer(&m->sig->fpr, g_free);
	verify_signed(m);
}

/* SHA-256 of what o writes (an entity, or a part's decoded content when
 * content_only), line ends read as LF, without holding it in memory. */
static char *
plain_digest(GMimeObject *o, gboolean content_only)
{
	g_autoptr(GMimeStream) null = g_mime_stream_null_new();
	g_autoptr(GMimeStream) f = g_mime_stream_filter_new(null);
	GMimeFilter *d2u = g_mime_filter_dos2unix_new(FALSE);
	GMimeFilter *sum = g_mime_filter_checksum_new(G_CHECKSUM_SHA256);
	char *hex;

	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), d2u);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), sum);
	if (content_only && GMIME_IS_PART(o) && g_mime_part_get_content(GMIME_PART(o)) != NULL)
		g_mime_data_wrapper_write_to_stream(g_mime_part_get_content(GMIME_PART(o)), f);
	else if (!content_only)
		g_mime_object_write_to_stream(o, NULL, f);
	g_mime_stream_flush(f);
	hex = g_mime_filter_checksum_get_string(GMIME_FILTER_CHECKSUM(sum));
	g_object_unref(d2u);
	g_object_unref(sum);
	return hex;
}

/* Remember what was decrypted (see message.h): the session key gpg used,
 * hashed at once; the ciphertext's own bytes only if gpg gave none. */
static void
note_decrypted(message *m, GMimeDecryptResult *res, GMimeObject *ct_part, GBytes *ct_bytes,
	       GMimeObject *plain, gboolean plain_is_content)
{
	const char *sk = res != NULL ? g_mime_decrypt_result_get_session_key(res) : NULL;

	g_free(m->cipher_sha256);
	if (sk != NULL && *sk != '\0')
		m->cipher_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, sk, -1);
	else if (ct_bytes != NULL)
		m->cipher_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, ct_bytes);
	else
		m->cipher_sha256 = plain_digest(ct_part, TRUE);
	g_free(m->plain_sha256);
	m->plain_sha256 = plain_digest(plain, plain_is_content);
}

/* Whether a decryption failed because the robot's key cannot be used just
 * now (gpg-agent down): then the mail must wait, not be refused. */
static gboolean
key_unusable_now(void)
{
	g_autoptr(GError) e = NULL;

	return crypto_robot_key_check(&e) == VULNID_ERR_TEMP;
}

/* Check and open what sits at the top of the message: a PGP/MIME
 * encrypted or signed body, or one inline OpenPGP block.  Only this is
 * ever decrypted or counted as signed.  Returns the entity to read the
 * text from. */
static GMimeObject *
open_top(message *m, GMimeObject *top)
{
	GMimeObject *body = top;
	GMimeContentType *ct;

	if (GMIME_IS_MULTIPART_ENCRYPTED(top)) {
		g_autoptr(GError) e = NULL;
		GMimeDecryptResult *res = NULL;
		const char *proto;
		GMimeObject *clear;

		ct = g_mime_object_get_content_type(top);
		proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
		if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-encrypted") != 0) {
			message_add_problem(m, "encrypted", "the mail is encrypted with something other than "
					    "OpenPGP (protocol application/pgp-encrypted)");
			return top;
		}
		clear = g_mime_multipart_encrypted_decrypt(GMIME_MULTIPART_ENCRYPTED(top),
							   GMIME_DECRYPT_EXPORT_SESSION_KEY, NULL, &res, &e);
		if (clear == NULL) {
			m->crypto_unavailable = key_unusable_now();
			message_add_problem(m, "decrypt-failed",
					    "the mail could not be decrypted (%s): encrypt it to this robot's "
					    "key (mail the word \"key\" to get it), with integrity protection",
					    e != NULL ? e->message : "unknown error");
			if (res != NULL)
				g_object_unref(res);
			return top;
		}
		m->decrypted = TRUE;
		m->clear = clear;
		body = clear;
		note_decrypted(m, res, g_mime_multipart_get_part(GMIME_MULTIPART(top), 1), NULL, clear, FALSE);
		if (!GMIME_IS_MULTIPART_SIGNED(clear) && res != NULL) {
			GMimeSignatureList *sigs = g_mime_decrypt_result_get_signatures(res);

			if (sigs != NULL && g_mime_signature_list_length(sigs) > 0) {
				GMimeObject *enc = g_mime_multipart_get_part(GMIME_MULTIPART(top), 1);

				m->sig->present = TRUE;
				crypto_judge(m->sig, sigs);
				m->sealed_object = g_object_ref(top);
				if (enc != NULL)
					set_raw_signature(m, part_bytes(enc));
			}
		}
		if (res != NULL)
			g_object_unref(res);
	}
	if (GMIME_IS_MULTIPART_SIGNED(body)) {
		const char *proto, *micalg;

		ct = g_mime_object_get_content_type(body);
		proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
		micalg = ct != NULL ? g_mime_content_type_get_parameter(ct, "micalg") : NULL;
		m->signed_object = g_object_ref(body);
		m->sig->present = TRUE;
		if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-signature") != 0 ||
		    micalg == NULL || g_ascii_strncasecmp(micalg, "pgp-", 4) != 0 ||
		    g_mime_multipart_get_count(GMIME_MULTIPART(body)) != 2) {
			m->sig->reason = g_strdup("the multipart/signed parameters are wrong (protocol must "
						  "be application/pgp-signature and micalg pgp-*, with two parts)");
			return body;
		}
		set_raw_signature(m, part_bytes(g_mime_multipart_get_part(GMIME_MULTIPART(body), 1)));
		verify_signed(m);
		return g_mime_multipart_get_part(GMIME_MULTIPART(body), 0);
	}
	if (GMIME_IS_PART(body) && content_is(body, "text", "plain") && !is_attachment_disposition(body)) {
		GMimeOpenPGPData kind = g_mime_part_get_openpgp_data(GMIME_PART(body));
		g_autoptr(GBytes) text = NULL;

		if (kind == GMIME_OPENPGP_DATA_SIGNED) {
			text = part_bytes(body);
			m->sig->present = TRUE;
			if (!whole_armor(text, "-----BEGIN PGP SIGNED MESSAGE-----", "-----END PGP SIGNATURE-----")) {
				m->sig->reason = g_strdup("there is text before or after the signed block, "
							  "which the signature does not cover");
				return body;
			}
			m->signed_object = g_object_ref(body);
			set_raw_signature(m, g_bytes_ref(text));
			verify_signed(m);
		} else if (kind == GMIME_OPENPGP_DATA_ENCRYPTED && body == top) {
			g_autoptr(GError) e = NULL;
			GMimeDecryptResult *res;

			text = part_bytes(body);
			if (!whole_armor(text, "-----BEGIN PGP MESSAGE-----", "-----END PGP MESSAGE-----")) {
				m->encrypted = TRUE;
				return body;
			}
			res = g_mime_part_openpgp_decrypt(GMIME_PART(body), GMIME_DECRYPT_EXPORT_SESSION_KEY,
							  NULL, &e);
			if (res != NULL)
				note_decrypted(m, res, NULL, text, body, TRUE);
			if (res == NULL) {
				m->crypto_unavailable = key_unusable_now();
				message_add_problem(m, "decrypt-failed",
						    "the mail could not be decrypted (%s): encrypt it to this robot's "
						    "key (mail the word \"key\" to get it), with integrity protection",
						    e != NULL ? e->message : "unknown error");
				return body;
			}
			m->decrypted = TRUE;
			{
				GMimeSignatureList *sigs = g_mime_decrypt_result_get_signatures(res);

				if (sigs != NULL && g_mime_signature_list_length(sigs) > 0) {
					m->sig->present = TRUE;
					crypto_judge(m->sig, sigs);
					m->sealed_object = g_object_ref(body);
					set_raw_signature(m, g_bytes_ref(text));
				}
			}
			g_object_unref(res);
		}
	}
	return body;
}

/* What GMime parses: the bounded copy of the header (header.h), then the
 * body as it lies in the spool file.  A mail refused for its header gets
 * only that copy parsed, to answer the sender: the rest is not looked at. */
static GMimeStream *
parser_stream(message *m, const message_spool *sp, int fd)
{
	g_autoptr(GBytes) head = header_scan_parser_header(sp->scan);
	gsize hlen = g_bytes_get_size(head);
	GMimeStream *cat = g_mime_stream_cat_new();
	g_autoptr(GMimeStream) hs = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(head, NULL), hlen);
	g_autoptr(GMimeStream) fs = g_mime_stream_fs_new(fd);

	g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), hs);
	if (m->problem == NULL && sp->body_offset < sp->size) {
		g_autoptr(GMimeStream) body = g_mime_stream_substream(fs, sp->body_offset, sp->size);

		g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), body);
	} else
		m->header_only = TRUE;
	m->offset_shift = sp->body_offset - (gint64) hlen;
	return cat;
}

vulnid_status
message_parse(message_spool *sp, const message_limits *lim, message **out, GError **err)
{
	g_autoptr(message) m = g_new0(message, 1);
	g_autoptr(GMimeParserOptions) opts = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	g_autoptr(GMimeStream) stream = NULL;
	walk_state ws = { 0 };
	const char *fallback[] = { "UTF-8", "windows-1252", NULL };
	gint64 cut_from = 0;
	int fd;

	m->spool = sp;
	m->problems = g_ptr_array_new_with_free_func(g_free);
	m->references = g_ptr_array_new_with_free_func(g_free);
	m->x_loop = g_ptr_array_new_with_free_func(g_free);
	m->attachments = g_ptr_array_new_with_free_func(attachment_free);
	m->sig = crypto_signature_new();
	m->max_text = lim->max_request_text > 0 ? lim->max_request_text : MESSAGE_MAX_TEXT_DEFAULT;

	if (sp->longest_header > lim->max_header_size)
		message_add_problem(m, "header-too-long",
				    "a header field of %" G_GINT64_FORMAT " bytes (the limit is %" G_GINT64_FORMAT ")",
				    sp->longest_header, lim->max_header_size);
	if ((gint64) sp->header_count > lim->max_headers)
		message_add_problem(m, "too-many-headers",
				    "%" G_GUINT64_FORMAT " header fields (the limit is %" G_GINT64_FORMAT ")",
				    sp->header_count, lim->max_headers);
	if (sp->longest_line > lim->max_line_length)
		message_add_problem(m, "line-too-long",
				    "a line of %" G_GINT64_FORMAT " bytes (the limit is %" G_GINT64_FORMAT ")",
				    sp->longest_line, lim->max_line_length);
	if (sp->header_has_nul)
		message_add_problem(m, "nul-bytes", "the header contains NUL bytes");

	{
		/* What GMime would build from the body, counted while it was
		 * spooled: a mail over these limits is refused before GMime
		 * spends time and memory on a million parts or fields. */
		guint64 parts, fields;
		gint64 longest;

		header_scan_body_stats(sp->scan, &parts, &fields, &longest);
		if ((gint64) parts > lim->max_parts)
			message_add_problem(m, "too-many-parts", "more than %" G_GINT64_FORMAT " MIME parts",
					    lim->max_parts);
		if ((gint64) fields > lim->max_headers)
			message_add_problem(m, "too-many-headers", "a MIME part with more than %" G_GINT64_FORMAT
					    " header fields", lim->max_headers);
		if (longest > lim->max_header_size)
			message_add_problem(m, "header-too-long", "a header field of %" G_GINT64_FORMAT
					    " bytes in a MIME part (the limit is %" G_GINT64_FORMAT ")",
					    longest, lim->max_header_size);
	}
	for (guint i = 0; i < header_scan_problems(sp->scan)->len; i++)
		message_add_problem(m, "malformed-header", "%s",
				    (const char *) g_ptr_array_index(header_scan_problems(sp->scan), i));

	fd = dup(sp->fd);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "dup: %s", g_strerror(errno));
	stream = parser_stream(m, sp, fd);
	opts = g_mime_parser_options_new();
	g_mime_parser_options_set_fallback_charsets(opts, fallback);
	g_mime_parser_options_set_warning_callback(opts, parser_warning, m);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
	m->mime = g_mime_parser_construct_message(parser, opts);
	/* The callback's user data must not outlive this function. */
	g_mime_parser_options_set_warning_callback(opts, NULL, NULL);
	if (m->mime == NULL) {
		message_add_problem(m, "not-a-message", "the input is not an RFC 5322 message");
		*out = g_steal_pointer(&m);
		return VULNID_OK;
	}
	collect_headers(m);
	if (m->problem != NULL) {
		/* Refused already: the header is read only to answer the
		 * sender; the parts are not looked at. */
		*out = g_steal_pointer(&m);
		return VULNID_OK;
	}
	ws.m = m;
	ws.lim = lim;
	if (g_mime_message_get_mime_part(m->mime) != NULL) {
		GMimeObject *body = open_top(m, g_mime_message_get_mime_part(m->mime));

		walk(&ws, body, body == g_mime_message_get_mime_part(m->mime) ? 0 : 1, FALSE, TRUE);
	}
	if (ws.plain != NULL) {
		m->text = part_text(m, ws.plain, &cut_from);
		m->text_type = "text/plain";
	} else if (ws.html != NULL) {
		g_autofree char *html = part_text(m, ws.html, &cut_from);

		if (html != NULL)
			m->text = text_from_html(html);
		m->text_type = "text/html";
	}
	m->text_part = ws.plain != NULL ? ws.plain : ws.html;
	if (m->text != NULL && cut_from > 0)
		text_was_cut(m, m->text_part, cut_from);
	if (m->text == NULL && m->problem == NULL && !m->encrypted)
		message_add_problem(m, "no-text",
				    "no text/plain or text/html part to read the request from");
	*out = g_steal_pointer(&m);
	return VULNID_OK;
}

void
message_free(message *m)
{
	if (m == NULL)
		return;
	g_clear_object(&m->mime);
	g_clear_object(&m->signed_object);
	g_clear_object(&m->sealed_object);
	g_clear_object(&m->clear);
	crypto_signature_free(m->sig);
	if (m->pgp_keys != NULL)
		g_bytes_unref(m->pgp_keys);
	g_free(m->problem);
	g_ptr_array_unref(m->problems);
	g_free(m->message_id);
	g_free(m->from_addr);
	g_free(m->from_name);
	g_free(m->reply_addr);
	g_free(m->subject);
	g_free(m->cipher_sha256);
	g_free(m->plain_sha256);
	g_free(m->in_reply_to);
	g_ptr_array_unref(m->references);
	g_free(m->auto_submitted);
	g_free(m->precedence);
	g_ptr_array_unref(m->x_loop);
	g_free(m->list_id);
	g_free(m->delivered_to);
	g_free(m->text_kept_as);
	g_free(m->text);
	g_ptr_array_unref(m->attachments);
	g_free(m);
}

char *
message_dedup_key(const message *m)
{
	if (m->message_id != NULL)
		return g_strdup_printf("mid:%s:%s", m->message_id, m->spool->body_sha256);
	return g_strdup_printf("hdr:%s:%s", m->spool->header_sha256, m->spool->body_sha256);
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

static gboolean
address_is_robotic(const char *addr)
{
	g_autofree char *local = NULL;
	g_autofree char *lower = NULL;
	const char *at;

	if (addr == NULL)
		return FALSE;
	at = strchr(addr, '@');
	local = at != NULL ? g_strndup(addr, (gsize) (at - addr)) : g_strdup(addr);
	lower = g_ascii_strdown(local, -1);
	return g_ascii_strcasecmp(local, "mailer-daemon") == 0 ||
	       g_ascii_strcasecmp(local, "postmaster") == 0 ||
	       g_ascii_strncasecmp(local, "owner-", 6) == 0 ||
	       g_str_has_suffix(lower, "-request") || g_str_has_suffix(lower, "-bounces") ||
	       g_ascii_strcasecmp(local, "listserv") == 0 ||
	       g_ascii_strcasecmp(local, "majordomo") == 0;
}

gboolean
message_is_automatic(const message *m, const char *envelope_sender,
		     const char *loop_address, const char **why)
{
	if (envelope_sender != NULL && (*envelope_sender == '\0' || strcmp(envelope_sender, "<>") == 0)) {
		*why = "empty envelope sender (a bounce or notification)";
		return TRUE;
	}
	if (address_is_robotic(envelope_sender) || address_is_robotic(m->from_addr)) {
		*why = "sent by a mailer daemon, postmaster or list robot";
		return TRUE;
	}
	if (m->auto_submitted != NULL && g_ascii_strcasecmp(m->auto_submitted, "no") != 0) {
		*why = "Auto-Submitted header (RFC 3834)";
		return TRUE;
	}
	if (m->precedence != NULL &&
	    (g_ascii_strcasecmp(m->precedence, "bulk") == 0 ||
	     g_ascii_strcasecmp(m->precedence, "junk") == 0 ||
	     g_ascii_strcasecmp(m->precedence, "list") == 0)) {
		*why = "Precedence bulk, junk or list";
		return TRUE;
	}
	if (m->list_id != NULL) {
		*why = "mailing-list traffic (List-Id)";
		return TRUE;
	}
	for (guint i = 0; i < m->x_loop->len; i++)
		if (g_ascii_strcasecmp(g_ptr_array_index(m->x_loop, i), loop_address) == 0) {
			*why = "X-Loop: this robot's own mail came back";
			return TRUE;
		}
	return FALSE;
}
