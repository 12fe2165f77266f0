/* feed.c - the public feed's format, shared by the exporter (feed-export.c)
 * and the verifier (feed-verify.c): canonical JSON, the line frame and
 * hash, bounded reads */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canonjson.h"
#include "feed.h"
#include "feed-private.h"
#include "jsonl-chain.h"
#include "tlog.h"

/* ---- canonical JSON ----------------------------------------------------------- */

static gboolean
canon_append(GString *out, JsonNode *n)
{
	switch (JSON_NODE_TYPE(n)) {
	case JSON_NODE_NULL:
		g_string_append(out, "null");
		return TRUE;
	case JSON_NODE_VALUE: {
		GType t = json_node_get_value_type(n);

		if (t == G_TYPE_STRING) {
			canonjson_string(out, json_node_get_string(n));
			return TRUE;
		}
		if (t == G_TYPE_INT64) {
			g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(n));
			return TRUE;
		}
		if (t == G_TYPE_BOOLEAN) {
			g_string_append(out, json_node_get_boolean(n) ? "true" : "false");
			return TRUE;
		}
		return FALSE;	/* fractions and exponents have no canonical form here */
	}
	case JSON_NODE_ARRAY: {
		JsonArray *a = json_node_get_array(n);

		g_string_append_c(out, '[');
		for (guint i = 0; i < json_array_get_length(a); i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			if (!canon_append(out, json_array_get_element(a, i)))
				return FALSE;
		}
		g_string_append_c(out, ']');
		return TRUE;
	}
	case JSON_NODE_OBJECT: {
		JsonObject *o = json_node_get_object(n);
		g_autoptr(GList) names = json_object_get_members(o);
		gboolean first = TRUE;

		g_string_append_c(out, '{');
		for (GList *l = names; l != NULL; l = l->next) {
			canonjson_key(out, &first, l->data);
			if (!canon_append(out, json_object_get_member(o, l->data)))
				return FALSE;
		}
		g_string_append_c(out, '}');
		return TRUE;
	}
	}
	return FALSE;
}

char *
feed_json_canonical(JsonNode *node)
{
	GString *s = g_string_new(NULL);

	if (node == NULL || !canon_append(s, node)) {
		g_string_free(s, TRUE);
		return NULL;
	}
	return g_string_free(s, FALSE);
}

gboolean
feed_json_depth_ok(const char *t, gsize len, guint max_depth)
{
	guint depth = 0;
	gboolean in_str = FALSE;

	for (gsize i = 0; i < len; i++) {
		char c = t[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = FALSE;
			continue;
		}
		if (c == '"')
			in_str = TRUE;
		else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return FALSE;
		} else if ((c == ']' || c == '}') && depth > 0)
			depth--;
	}
	return TRUE;
}

/* The hash member must be the last one, so that what it covers is
 * unambiguous: everything before it. */
char *
feed_line_hash(const char *line, gsize len)
{
	return jsonl_chain_line_hash(line, len);
}

/* A decimal integer at *p, then the text `next`. */
static gboolean
frame_int(const char **p, const char *end, const char *next, guint64 *v)
{
	const char *q = *p;

	*v = 0;
	if (q >= end || !g_ascii_isdigit(*q) || (*q == '0' && q + 1 < end && g_ascii_isdigit(q[1])))
		return FALSE;
	for (; q < end && g_ascii_isdigit(*q); q++) {
		if (*v > (G_MAXINT64 - 9) / 10)
			return FALSE;
		*v = *v * 10 + (guint64) (*q - '0');
	}
	if ((gsize) (end - q) < strlen(next) || memcmp(q, next, strlen(next)) != 0)
		return FALSE;
	*p = q + strlen(next);
	return TRUE;
}

gboolean
feed_line_frame(const char *line, gsize len, int *year, guint64 *n, gint64 *pos)
{
	static const char start[] = "{\"feed\":\"" FEED_FORMAT "\",\"year\":";
	const char *p = line + strlen(start), *end = line + len;
	guint64 y, ps;

	if (len < strlen(start) || memcmp(line, start, strlen(start)) != 0 ||
	    !frame_int(&p, end, ",\"n\":", &y) || !frame_int(&p, end, ",\"pos\":", n) ||
	    !frame_int(&p, end, ",", &ps) || y > 9999)
		return FALSE;
	*year = (int) y;
	*pos = (gint64) ps;
	return TRUE;
}

/* A word of the characters allowed at *p up to the closing quote, then
 * the text `next`. */
static gboolean
frame_word(const char **p, const char *end, const char *allowed, gsize max, const char *next,
	   const char **w, gsize *wlen)
{
	const char *q = *p;

	*w = q;
	while (q < end && *q != '\0' && strchr(allowed, *q) != NULL && (gsize) (q - *w) < max)
		q++;
	*wlen = (gsize) (q - *w);
	if (*wlen == 0 || (gsize) (end - q) < strlen(next) || memcmp(q, next, strlen(next)) != 0)
		return FALSE;
	*p = q + strlen(next);
	return TRUE;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"

char *
feed_log_entry(const char *line, gsize len)
{
	static const char start[] = "{\"feed\":\"" FEED_FORMAT "\",\"year\":";
	const char *p = line + strlen(start), *end = line + len, *type, *id;
	gsize type_len, id_len;
	guint64 y, n, pos, seq;
	guint8 h[32];
	char sha[65];

	if (len < strlen(start) || memcmp(line, start, strlen(start)) != 0 ||
	    !frame_int(&p, end, ",\"n\":", &y) || !frame_int(&p, end, ",\"pos\":", &n) ||
	    !frame_int(&p, end, ",\"type\":\"", &pos) ||
	    !frame_word(&p, end, LOWER, 16, "\",\"entry\":\"", &type, &type_len) ||
	    !frame_word(&p, end, ID_CHARS, 64, "\",\"seq\":", &id, &id_len) ||
	    !frame_int(&p, end, ",", &seq) || y > 9999)
		return NULL;
	/* OpenSSL's SHA-256: every line of the feed goes through it. */
	tlog_sha256(line, len, h);
	for (int i = 0; i < 32; i++) {
		sha[2 * i] = "0123456789abcdef"[h[i] >> 4];
		sha[2 * i + 1] = "0123456789abcdef"[h[i] & 0xf];
	}
	sha[64] = '\0';
	return g_strdup_printf("{\"log\":\"" FEED_LOG_FORMAT "\",\"year\":%" G_GUINT64_FORMAT ",\"n\":%"
			       G_GUINT64_FORMAT ",\"pos\":%" G_GUINT64_FORMAT ",\"type\":\"%.*s\",\"entry\":\"%.*s\","
			       "\"seq\":%" G_GUINT64_FORMAT ",\"sha256\":\"%s\"}", y, n, pos, (int) type_len, type,
			       (int) id_len, id, seq, sha);
}

char *
feed_sha256_hex(const char *data, gsize len)
{
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) data, len);
}

/* Parse text that must be canonical JSON of the given node type; the
 * canonical text back, or NULL. */
char *
feed_canonical_of(const char *text, JsonNodeType type)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *root;

	if (text == NULL || !feed_json_depth_ok(text, strlen(text), FEED_MAX_DEPTH) ||
	    !json_parser_load_from_data(p, text, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	if (root == NULL || JSON_NODE_TYPE(root) != type)
		return NULL;
	return feed_json_canonical(root);
}

GBytes *
feed_read_small(const char *path, gsize max, int *err_no)
{
	struct stat sb;
	char *buf;
	gsize off = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*err_no = 0;
	if (fd < 0) {
		*err_no = errno;
		return NULL;
	}
	if (fstat(fd, &sb) < 0)
		*err_no = errno;
	else if (!S_ISREG(sb.st_mode))
		*err_no = EINVAL;
	else if (sb.st_size < 0 || (gsize) sb.st_size > max)
		*err_no = EFBIG;
	if (*err_no != 0) {
		close(fd);
		return NULL;
	}
	buf = g_malloc((gsize) sb.st_size + 1);
	while (off < (gsize) sb.st_size) {
		ssize_t n = read(fd, buf + off, (gsize) sb.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (gsize) n;
	}
	close(fd);
	buf[off] = '\0';
	return g_bytes_new_take(buf, off);
}

gboolean
feed_year_file_name(const char *name, int *year)
{
	if (strlen(name) != 10 || strcmp(name + 4, ".jsonl") != 0)
		return FALSE;
	for (int i = 0; i < 4; i++)
		if (!g_ascii_isdigit(name[i]))
			return FALSE;
	*year = atoi(name);
	return *year >= 1;
}
