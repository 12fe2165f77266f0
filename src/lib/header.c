/* header.c - the top-level header read once, while the mail is spooled
 * (see header.h) */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "header.h"
#include "text.h"

#define HEADER_MAX_PROBLEMS 20
#define HEADER_NAME_MAX 64
#define CTYPE_KEEP 4096		/* bytes of a Content-Type read for its boundary */
#define BOUNDARIES_MAX 10000	/* distinct boundaries remembered */

enum { BODY_TEXT, BODY_PART_HEADER };

/* Fields RFC 5322 allows once, and the Content-* fields: GMime calls a
 * second one with another value a conflict, and so does this scan. */
static const char *const single_fields[] = {
	"bcc", "cc", "date", "from", "in-reply-to", "message-id", "references", "reply-to",
	"sender", "subject", "to",
};

/* Fields of the trace block: what MTAs, filters and the final delivery
 * put on top of a mail.  Only Received and Authentication-Results are
 * kept; the others do not end the block. */
static const char *const trace_prefixes[] = {
	"received", "authentication-results", "return-path", "delivered-to", "x-original-to",
	"envelope-to", "x-envelope-to", "arc-", "received-spf", "x-spam", "x-virus", "x-rspamd",
	"dkim-filter", "dmarc-filter", "x-greylist", "x-amavis",
};

struct header_scan {
	GByteArray *out;
	GPtrArray *problems;
	GPtrArray *trace;
	GHashTable *seen;	/* lower-case name -> count (GUINT) */
	GHashTable *first_sum;	/* single field -> SHA-256 of its first value */
	gboolean in_trace_block;
	gboolean ended;
	/* the field being read */
	gboolean in_field;
	char name[HEADER_NAME_MAX + 1];	/* lower case */
	char spelled[HEADER_NAME_MAX + 1];	/* as written */
	gint64 offset;
	gboolean keep;		/* copied for the parser */
	gsize kept;
	gboolean cut;
	GChecksum *sum;		/* single fields: the value, for conflicts */
	GString *trace_value;	/* Received, Authentication-Results at the top */
	GString *ctype;		/* a Content-Type being read, for its boundary */
	/* the body: MIME delimiter lines and the part headers after them */
	GHashTable *boundaries;	/* every boundary declared so far */
	int body_state;
	gboolean part_is_message;	/* its body starts with another header */
	gboolean at_body_start;
	guint64 parts, part_fields, most_part_fields;
	gint64 part_field_len, longest_part_field;
};

static void trace_field_free(gpointer p);

header_scan *
header_scan_new(void)
{
	header_scan *h = g_new0(header_scan, 1);

	h->out = g_byte_array_new();
	h->problems = g_ptr_array_new_with_free_func(g_free);
	h->trace = g_ptr_array_new_with_free_func(trace_field_free);
	h->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	h->first_sum = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	h->in_trace_block = TRUE;
	h->boundaries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return h;
}

static void
trace_field_free(gpointer p)
{
	header_trace_field *f = p;

	g_free(f->name);
	g_free(f->value);
	g_free(f);
}

void
header_scan_free(header_scan *h)
{
	if (h == NULL)
		return;
	g_byte_array_unref(h->out);
	g_ptr_array_unref(h->problems);
	g_ptr_array_unref(h->trace);
	g_hash_table_unref(h->seen);
	g_hash_table_unref(h->first_sum);
	if (h->sum != NULL)
		g_checksum_free(h->sum);
	if (h->trace_value != NULL)
		g_string_free(h->trace_value, TRUE);
	if (h->ctype != NULL)
		g_string_free(h->ctype, TRUE);
	g_hash_table_unref(h->boundaries);
	g_free(h);
}

static void problem(header_scan *h, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void
problem(header_scan *h, const char *fmt, ...)
{
	va_list ap;

	if (h->problems->len >= HEADER_MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	g_ptr_array_add(h->problems, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

static gboolean
name_in(const char *name, const char *const *list, gsize n)
{
	for (gsize i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return TRUE;
	return FALSE;
}

static gboolean
is_trace_name(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(trace_prefixes); i++)
		if (g_str_has_prefix(name, trace_prefixes[i]))
			return TRUE;
	return FALSE;
}

/* How many fields of this name GMime gets: those the robot reads (once,
 * but X-Loop up to 100 times and X-Hashcash 5) and those MIME needs. */
static guint
keep_count(const char *name)
{
	static const char *const once[] = {
		"from", "reply-to", "to", "subject", "date", "message-id", "in-reply-to", "references",
		"mime-version", "auto-submitted", "precedence", "list-id", "delivered-to",
		"x-original-to", "envelope-to",
	};

	if (g_str_has_prefix(name, "content-") || name_in(name, once, G_N_ELEMENTS(once)))
		return 1;
	if (strcmp(name, "x-loop") == 0)
		return 100;
	if (strcmp(name, "x-hashcash") == 0)
		return 5;	/* HASHCASH_MAX_FIELDS */
	return 0;
}

/* The boundary parameter of a Content-Type value is remembered: lines
 * "--boundary" further down are MIME delimiters. */
static void
ctype_end(header_scan *h)
{
	const char *v, *p;
	GString *b;

	if (h->ctype == NULL)
		return;
	v = h->ctype->str;
	h->part_is_message = g_ascii_strncasecmp(v + strspn(v, " \t\r\n"), "message/", 8) == 0;
	for (p = v; (p = strchr(p, '=')) != NULL; p++) {
		const char *k = p;

		while (k > v && (k[-1] == ' ' || k[-1] == '\t'))
			k--;
		if (k - v < 8 || g_ascii_strncasecmp(k - 8, "boundary", 8) != 0)
			continue;
		p++;
		p += strspn(p, " \t\r\n");
		b = g_string_new(NULL);
		if (*p == '"')
			for (p++; *p && *p != '"'; p++)
				g_string_append_c(b, *p);
		else
			for (; *p && !strchr(" \t\r\n;", *p); p++)
				g_string_append_c(b, *p);
		if (b->len > 0 && g_hash_table_size(h->boundaries) < BOUNDARIES_MAX)
			g_hash_table_add(h->boundaries, g_string_free(b, FALSE));
		else
			g_string_free(b, TRUE);
		break;
	}
	g_string_free(g_steal_pointer(&h->ctype), TRUE);
}

/* The end of the field being read: conflicts and the trace value. */
static void
field_end(header_scan *h)
{
	ctype_end(h);
	if (!h->in_field)
		return;
	if (h->keep && (h->out->len == 0 || h->out->data[h->out->len - 1] != '\n'))
		g_byte_array_append(h->out, (const guint8 *) "\n", 1);
	if (h->sum != NULL) {
		const char *first = g_hash_table_lookup(h->first_sum, h->name);
		const char *sum = g_checksum_get_string(h->sum);

		if (first == NULL)
			g_hash_table_insert(h->first_sum, g_strdup(h->name), g_strdup(sum));
		else if (strcmp(first, sum) != 0)
			problem(h, "conflicting %s headers near byte %" G_GINT64_FORMAT, h->spelled, h->offset);
		g_clear_pointer(&h->sum, g_checksum_free);
	}
	if (h->trace_value != NULL) {
		header_trace_field *f = g_new0(header_trace_field, 1);

		/* unfolded as GMime unfolds (line ends go, the white space
		 * after them stays, the value is trimmed) */
		f->name = g_strdup(h->name);
		f->value = g_mime_utils_header_unfold(h->trace_value->str);
		g_string_free(g_steal_pointer(&h->trace_value), TRUE);
		f->offset = h->offset;
		g_ptr_array_add(h->trace, f);
	}
	h->in_field = FALSE;
}

/* The field name at the start of a line, lower case, or FALSE (GMime's
 * rule: no control characters, blanks only between the name and ':'). */
static gboolean
field_name(const char *p, gsize len, char name[HEADER_NAME_MAX + 1], char spelled[HEADER_NAME_MAX + 1])
{
	gsize n = 0, i;

	for (i = 0; i < len && i <= HEADER_NAME_MAX + 16; i++) {
		guchar c = (guchar) p[i];

		if (c == ':')
			break;
		if (c == ' ' || c == '\t')
			continue;
		if (c < 33 || c > 126 || (i > 0 && (p[i - 1] == ' ' || p[i - 1] == '\t')))
			return FALSE;
		if (n == HEADER_NAME_MAX)
			return FALSE;
		spelled[n] = (char) c;
		name[n++] = g_ascii_tolower((char) c);
	}
	name[n] = spelled[n] = '\0';
	return n > 0 && i < len && p[i] == ':';
}

static void
field_start(header_scan *h, const char *p, gsize len, gint64 offset, gsize *value_at)
{
	guint count;

	field_end(h);
	*value_at = len;
	if (!field_name(p, len, h->name, h->spelled)) {
		g_autofree char *head = g_strndup(p, MIN(len, 120));
		g_autofree char *what = text_clean_line(head, 60);

		problem(h, "an invalid header name near byte %" G_GINT64_FORMAT " ('%s')", offset, what);
		h->in_trace_block = FALSE;
		return;
	}
	h->in_field = TRUE;
	h->offset = offset;
	h->kept = 0;
	h->cut = FALSE;
	*value_at = (gsize) ((const char *) memchr(p, ':', len) - p) + 1;
	count = GPOINTER_TO_UINT(g_hash_table_lookup(h->seen, h->name)) + 1;
	g_hash_table_replace(h->seen, g_strdup(h->name), GUINT_TO_POINTER(count));
	h->keep = count <= keep_count(h->name);
	if (name_in(h->name, single_fields, G_N_ELEMENTS(single_fields)) || g_str_has_prefix(h->name, "content-"))
		h->sum = g_checksum_new(G_CHECKSUM_SHA256);
	if (strcmp(h->name, "content-type") == 0 && count == 1)
		h->ctype = g_string_new(NULL);
	if (h->in_trace_block && !is_trace_name(h->name))
		h->in_trace_block = FALSE;
	if (h->in_trace_block && h->trace->len < HEADER_TRACE_MAX &&
	    (strcmp(h->name, "received") == 0 || strcmp(h->name, "authentication-results") == 0))
		h->trace_value = g_string_new(NULL);
}

void
header_scan_feed(header_scan *h, const char *piece, gsize len, gboolean line_start, gint64 offset)
{
	gsize value_at = 0;

	if (h->ended || len == 0)
		return;
	if (line_start && piece[0] != ' ' && piece[0] != '\t')
		field_start(h, piece, len, offset, &value_at);
	if (!h->in_field)
		return;
	if (h->keep && !h->cut) {
		gsize n = MIN(len, HEADER_FIELD_KEEP - h->kept);

		g_byte_array_append(h->out, (const guint8 *) piece, (guint) n);
		h->kept += n;
		h->cut = n < len;
	}
	if (h->sum != NULL) {
		/* the value with its line ends as "\n", as GMime compares it */
		const char *v = piece + value_at;
		gsize vl = len - value_at;

		if (vl >= 2 && v[vl - 2] == '\r' && v[vl - 1] == '\n') {
			g_checksum_update(h->sum, (const guchar *) v, vl - 2);
			g_checksum_update(h->sum, (const guchar *) "\n", 1);
		} else
			g_checksum_update(h->sum, (const guchar *) v, vl);
	}
	if (h->ctype != NULL && h->ctype->len < CTYPE_KEEP)
		g_string_append_len(h->ctype, piece + value_at, (gssize) MIN(len - value_at, CTYPE_KEEP - h->ctype->len));
	if (h->trace_value != NULL && h->trace_value->len < HEADER_TRACE_KEEP)
		g_string_append_len(h->trace_value, piece + value_at,
				    (gssize) MIN(len - value_at, HEADER_TRACE_KEEP - h->trace_value->len));
}

void
header_scan_end(header_scan *h)
{
	if (h->ended)
		return;
	field_end(h);
	g_byte_array_append(h->out, (const guint8 *) "\n", 1);
	h->ended = TRUE;
	h->at_body_start = TRUE;
	h->body_state = h->part_is_message ? BODY_PART_HEADER : BODY_TEXT;
}

/* A line "--boundary" or "--boundary--" (transport padding allowed) for a
 * boundary declared before; *close for the second. */
static gboolean
is_delimiter(header_scan *h, const char *p, gsize len, gboolean *close)
{
	g_autofree char *b = NULL;
	gsize n = len;

	if (len < 3 || p[0] != '-' || p[1] != '-' || g_hash_table_size(h->boundaries) == 0)
		return FALSE;
	while (n > 2 && g_ascii_isspace(p[n - 1]))
		n--;
	b = g_strndup(p + 2, n - 2);
	*close = FALSE;
	if (g_hash_table_contains(h->boundaries, b))
		return TRUE;
	if (n >= 4 && p[n - 1] == '-' && p[n - 2] == '-') {
		b[n - 4] = '\0';
		*close = TRUE;
		return g_hash_table_contains(h->boundaries, b);
	}
	return FALSE;
}

static void
part_header_end(header_scan *h)
{
	ctype_end(h);
	h->most_part_fields = MAX(h->most_part_fields, h->part_fields);
	h->part_fields = 0;
	h->part_field_len = 0;
}

void
header_scan_body_feed(header_scan *h, const char *piece, gsize len, gboolean line_start)
{
	gboolean close;

	if (!h->ended || len == 0)
		return;
	if (!line_start) {
		/* the rest of a long line */
		if (h->body_state == BODY_PART_HEADER) {
			h->part_field_len += (gint64) len;
			h->longest_part_field = MAX(h->longest_part_field, h->part_field_len);
			if (h->ctype != NULL && h->ctype->len < CTYPE_KEEP)
				g_string_append_len(h->ctype, piece, (gssize) MIN(len, CTYPE_KEEP - h->ctype->len));
		}
		return;
	}
	if (is_delimiter(h, piece, MIN(len, 1000), &close)) {
		if (h->body_state == BODY_PART_HEADER)
			part_header_end(h);
		h->parts++;
		h->part_is_message = FALSE;
		h->body_state = close ? BODY_TEXT : BODY_PART_HEADER;
		return;
	}
	if (h->body_state != BODY_PART_HEADER)
		return;
	if (piece[0] == '\n' || (len >= 2 && piece[0] == '\r' && piece[1] == '\n')) {
		part_header_end(h);
		/* message/rfc822: its own header follows */
		h->body_state = h->part_is_message ? BODY_PART_HEADER : BODY_TEXT;
		h->part_is_message = FALSE;
		return;
	}
	if (piece[0] == ' ' || piece[0] == '\t') {
		h->part_field_len += (gint64) len;
		if (h->ctype != NULL && h->ctype->len < CTYPE_KEEP)
			g_string_append_len(h->ctype, piece, (gssize) MIN(len, CTYPE_KEEP - h->ctype->len));
	} else {
		ctype_end(h);
		h->part_fields++;
		h->part_field_len = (gint64) len;
		if (len > 13 && g_ascii_strncasecmp(piece, "content-type:", 13) == 0) {
			h->ctype = g_string_new(NULL);
			g_string_append_len(h->ctype, piece + 13, (gssize) MIN(len - 13, CTYPE_KEEP));
		}
	}
	h->longest_part_field = MAX(h->longest_part_field, h->part_field_len);
}

void
header_scan_body_stats(header_scan *h, guint64 *parts, guint64 *most_part_fields, gint64 *longest_part_field)
{
	if (h->body_state == BODY_PART_HEADER)
		part_header_end(h);
	*parts = h->parts;
	*most_part_fields = h->most_part_fields;
	*longest_part_field = h->longest_part_field;
}

GBytes *
header_scan_parser_header(const header_scan *h)
{
	return g_bytes_new(h->out->data, h->out->len);
}

GPtrArray *
header_scan_problems(const header_scan *h)
{
	return h->problems;
}

GPtrArray *
header_scan_trace(const header_scan *h)
{
	return h->trace;
}
