/* message.c - parse and check one incoming mail: the MIME walk, its
 * limits and problems (the spool is message-spool.c, OpenPGP at the top
 * message-pgp.c, the automatic-mail test message-auto.c) */
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
#include "message-private.h"
#include "text.h"

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


void
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

void
message_parser_warning(gint64 offset, GMimeParserWarning code, const gchar *item, gpointer data)
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

/* The value of the first field name of o as it came (folded, encoded
 * words and all), or NULL. */
static const char *
raw_header(GMimeObject *o, const char *name)
{
	GMimeHeaderList *hl = g_mime_object_get_header_list(o);
	GMimeHeader *h = hl != NULL ? g_mime_header_list_get_header(hl, name) : NULL;

	return h != NULL ? g_mime_header_get_raw_value(h) : NULL;
}

/* The display name of the first mailbox of a raw address field, decoded
 * by text_decode_header() (GMime's own decoding of names loses encoded
 * words after a padded one): the phrase before the first '<' outside
 * quotes, unquoted; NULL when there is none. */
static char *
raw_display_name(const char *raw)
{
	g_autoptr(GString) phrase = g_string_new(NULL);
	gboolean quoted = FALSE;
	g_autofree char *d = NULL;

	if (raw == NULL)
		return NULL;
	for (const char *p = raw; *p; p++) {
		if (quoted && *p == '\\' && p[1] != '\0') {
			g_string_append_c(phrase, *++p);
			continue;
		}
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if (!quoted && (*p == '<' || *p == ','))
			break;
		g_string_append_c(phrase, *p);
	}
	d = text_decode_header(phrase->str);
	return text_clean_line(d, 200);
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

gboolean
message_content_is(GMimeObject *o, const char *type, const char *subtype)
{
	GMimeContentType *ct = g_mime_object_get_content_type(o);

	return ct != NULL && g_mime_content_type_is_type(ct, type, subtype);
}

gboolean
message_is_attachment_disposition(GMimeObject *o)
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

	if (m->pgp_keys != NULL || !GMIME_IS_PART(o) || !message_content_is(o, "application", "pgp-keys"))
		return;
	w = g_mime_part_get_content(GMIME_PART(o));
	mem = g_mime_stream_mem_new();
	if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
		return;
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	if (b->len > 0 && b->len < 1024 * 1024)
		m->pgp_keys = g_bytes_new(b->data, b->len);
}

/* The value of parameter name (not its RFC 2231 form) in a raw
 * Content-Disposition or Content-Type value, unquoted, or NULL. */
static char *
raw_param(const char *raw, const char *name)
{
	gsize n = strlen(name);

	for (const char *p = raw != NULL ? strchr(raw, ';') : NULL; p != NULL; p = strchr(p + 1, ';')) {
		const char *q = p + 1;
		GString *v;

		while (g_ascii_isspace(*q))
			q++;
		if (g_ascii_strncasecmp(q, name, n) != 0)
			continue;
		for (q += n; g_ascii_isspace(*q); q++)
			;
		if (*q != '=')
			continue;
		for (q++; g_ascii_isspace(*q); q++)
			;
		v = g_string_new(NULL);
		if (*q == '"') {
			for (q++; *q && *q != '"'; q++) {
				if (*q == '\\' && q[1] != '\0')
					q++;
				g_string_append_c(v, *q);
			}
		} else
			for (; *q && *q != ';' && !g_ascii_isspace(*q); q++)
				g_string_append_c(v, *q);
		return g_string_free(v, FALSE);
	}
	return NULL;
}

/* The file name of a part: GMime's (RFC 2231 included), but a name in
 * RFC 2047 encoded words (Outlook, Gmail) decoded word by word. */
static char *
part_filename(GMimeObject *o)
{
	const char *fn = g_mime_part_get_filename(GMIME_PART(o));
	const char *fields[][2] = { { "Content-Disposition", "filename" }, { "Content-Type", "name" } };

	if (fn == NULL)
		return NULL;
	for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) {
		g_autofree char *raw = raw_param(raw_header(o, fields[i][0]), fields[i][1]);

		if (raw != NULL && strstr(raw, "=?") != NULL)
			return text_decode_header(raw);
		if (raw != NULL)
			break;
	}
	return g_strdup(fn);
}

static void
add_attachment(message *m, GMimeObject *o)
{
	message_attachment *a = g_new0(message_attachment, 1);
	GMimeContentType *ct = g_mime_object_get_content_type(o);
	g_autofree char *name = GMIME_IS_PART(o) ? part_filename(o) : NULL;
	const char *fn = name;

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
		gboolean alt = message_content_is(o, "multipart", "alternative");
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
	if (!message_is_attachment_disposition(o)) {
		if (message_content_is(o, "text", "plain")) {
			if (ws->plain == NULL) {
				/* Inline OpenPGP ciphertext is not text to read. */
				if (g_mime_part_get_openpgp_data(GMIME_PART(o)) == GMIME_OPENPGP_DATA_ENCRYPTED &&
				    depth == 0 && !m->decrypted)
					m->encrypted = TRUE;
				ws->plain = o;
				return;
			}
		} else if (message_content_is(o, "text", "html")) {
			if (ws->html == NULL) {
				ws->html = o;
				return;
			}
			if (in_alternative)
				return;
		}
		if (in_alternative && message_content_is(o, "text", "*"))
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
		a->filename = g_strdup(message_content_is(o, "text", "html") ? "request-text.html" : "request-text.txt");
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
	v = raw_header(o, "From");
	if (m->from_name != NULL && v != NULL && strstr(v, "=?") != NULL && strchr(v, '<') != NULL) {
		char *name = raw_display_name(v);

		g_free(m->from_name);
		m->from_name = name;
	}
	m->reply_addr = first_mailbox(g_mime_message_get_reply_to(m->mime), NULL);
	if (m->reply_addr == NULL && m->from_addr != NULL)
		m->reply_addr = g_strdup(m->from_addr);
	{
		/* decoded word by word (text_decode_header()), never by GMime */
		g_autofree char *subj = text_decode_header(raw_header(o, "Subject"));
		g_autofree char *whole = text_clean_line(subj, 0);

		m->subject = text_clean_line(whole, 998);
		m->subject_chars = g_utf8_strlen(whole, -1);
	}
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
		else if (g_ascii_strcasecmp(name, "X-Hashcash") == 0 && m->hashcash->len < 5) {
			/* the stamp as minted, without the white space a folded
			 * field adds (hashcash -X folds it; a stamp has none) */
			const char *hv = g_mime_header_get_value(h);
			GString *stamp = g_string_new(NULL);

			for (; hv != NULL && *hv != '\0' && stamp->len <= 512; hv++)
				if (!g_ascii_isspace(*hv))
					g_string_append_c(stamp, *hv);
			g_ptr_array_add(m->hashcash, g_string_free(stamp, FALSE));
		} else if (m->delivered_to == NULL &&
			 (g_ascii_strcasecmp(name, "Delivered-To") == 0 ||
			  g_ascii_strcasecmp(name, "X-Original-To") == 0 ||
			  g_ascii_strcasecmp(name, "Envelope-To") == 0))
			m->delivered_to = text_clean_line(g_mime_header_get_value(h), 320);
	}
	if (m->delivered_to == NULL)
		m->delivered_to = first_mailbox(g_mime_message_get_to(m->mime), NULL);
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

/* The limits measured while spooling: a mail over them is refused
 * before GMime spends time and memory on it.  where: "" for the mail as
 * it came, else what is measured (" in what the mail decrypts to"). */
void
message_check_spool_limits(message *m, const message_spool *sp, const message_limits *lim, const char *where)
{
	if (sp->longest_header > lim->max_header_size)
		message_add_problem(m, "header-too-long",
				    "a header field of %" G_GINT64_FORMAT " bytes%s (the limit is %" G_GINT64_FORMAT ")",
				    sp->longest_header, where, lim->max_header_size);
	if ((gint64) sp->header_count > lim->max_headers)
		message_add_problem(m, "too-many-headers",
				    "%" G_GUINT64_FORMAT " header fields%s (the limit is %" G_GINT64_FORMAT ")",
				    sp->header_count, where, lim->max_headers);
	if (sp->longest_line > lim->max_line_length)
		message_add_problem(m, "line-too-long",
				    "a line of %" G_GINT64_FORMAT " bytes%s (the limit is %" G_GINT64_FORMAT ")",
				    sp->longest_line, where, lim->max_line_length);
	if (sp->header_has_nul)
		message_add_problem(m, "nul-bytes", "the header%s contains NUL bytes", where);

	{
		/* What GMime would build from the body, counted while it was
		 * spooled: a mail over these limits is refused before GMime
		 * spends time and memory on a million parts or fields. */
		guint64 parts, fields;
		gint64 longest;

		header_scan_body_stats(sp->scan, &parts, &fields, &longest);
		if ((gint64) parts > lim->max_parts)
			message_add_problem(m, "too-many-parts", "more than %" G_GINT64_FORMAT " MIME parts%s",
					    lim->max_parts, where);
		if ((gint64) fields > lim->max_headers)
			message_add_problem(m, "too-many-headers", "a MIME part%s with more than %" G_GINT64_FORMAT
					    " header fields", where, lim->max_headers);
		if (longest > lim->max_header_size)
			message_add_problem(m, "header-too-long", "a header field of %" G_GINT64_FORMAT
					    " bytes in a MIME part%s (the limit is %" G_GINT64_FORMAT ")",
					    longest, where, lim->max_header_size);
	}
	for (guint i = 0; i < header_scan_problems(sp->scan)->len; i++)
		message_add_problem(m, "malformed-header", "%s%s",
				    (const char *) g_ptr_array_index(header_scan_problems(sp->scan), i), where);
}

/* The request text: the first text/plain part, else the first text/html
 * one made text; a long one cut. */
static void
pick_text(message *m, const walk_state *ws)
{
	gint64 cut_from = 0;

	if (ws->plain != NULL) {
		g_autofree char *clear = NULL;

		m->text = part_text(m, ws->plain, &cut_from);
		m->text_type = "text/plain";
		/* Clearsigned text that the OpenPGP layer did not open (a part
		 * of multipart/mixed, text around the block): read as the
		 * signer wrote it, and counted as unsigned (mailctx.c says why). */
		if (m->text != NULL && (clear = text_pgp_cleartext(m->text)) != NULL) {
			g_free(m->text);
			m->text = g_steal_pointer(&clear);
			m->unopened_clearsigned = !m->sig->present;
		}
	} else if (ws->html != NULL) {
		g_autofree char *html = part_text(m, ws->html, &cut_from);

		if (html != NULL)
			m->text = text_from_html(html);
		m->text_type = "text/html";
	}
	m->text_part = ws->plain != NULL ? ws->plain : ws->html;
	if (m->text != NULL && cut_from > 0)
		text_was_cut(m, m->text_part, cut_from);
	if (m->text == NULL && m->problem == NULL && !m->encrypted)
		message_add_problem(m, "no-text",
				    "no text/plain or text/html part to read the request from");
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
	int fd;

	m->spool = sp;
	m->problems = g_ptr_array_new_with_free_func(g_free);
	m->references = g_ptr_array_new_with_free_func(g_free);
	m->x_loop = g_ptr_array_new_with_free_func(g_free);
	m->hashcash = g_ptr_array_new_with_free_func(g_free);
	m->attachments = g_ptr_array_new_with_free_func(attachment_free);
	m->sig = crypto_signature_new();
	m->max_text = lim->max_request_text > 0 ? lim->max_request_text : MESSAGE_MAX_TEXT_DEFAULT;

	m->lim = *lim;
	m->cipher_fd = m->clear_fd = m->signed_fd = -1;
	message_check_spool_limits(m, sp, lim, "");
	fd = dup(sp->fd);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "dup: %s", g_strerror(errno));
	stream = parser_stream(m, sp, fd);
	opts = g_mime_parser_options_new();
	g_mime_parser_options_set_fallback_charsets(opts, fallback);
	g_mime_parser_options_set_warning_callback(opts, message_parser_warning, m);
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
		GMimeObject *body = message_open_top(m, g_mime_message_get_mime_part(m->mime));

		walk(&ws, body, body == g_mime_message_get_mime_part(m->mime) ? 0 : 1, FALSE, TRUE);
	}
	pick_text(m, &ws);
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
	if (m->cipher_fd >= 0)
		close(m->cipher_fd);
	if (m->clear_fd >= 0)
		close(m->clear_fd);
	if (m->signed_fd >= 0)
		close(m->signed_fd);
	message_spool_free(m->clear_spool);
	g_free(m->crypto_why);
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
	g_ptr_array_unref(m->hashcash);
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
