/* witness-serve.c - tlog-witness over HTTP: one connection, or CGI
 * (witness-serve.h) */
#include "autoconfig.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "witness-serve.h"

#define ADD_CHECKPOINT "/add-checkpoint"
#define TEXT "text/plain; charset=utf-8"
#define TLOG_SIZE "text/x.tlog.size"

static const char *
reason(guint status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 422: return "Unprocessable Content";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

static void
answer_text(witness_response *rs, guint status, const char *msg)
{
	rs->status = status;
	rs->content_type = TEXT;
	g_string_assign(rs->body, msg);
	g_string_append_c(rs->body, '\n');
}

/* PREFIX/HASH/checkpoint: the 64 hex digits of HASH, or NULL. */
static const char *
cosigned_hash(const char *path)
{
	gsize n = strlen(path);
	const char *h;

	if (n < 64 + strlen("//checkpoint") || strcmp(path + n - strlen("/checkpoint"), "/checkpoint") != 0)
		return NULL;
	h = path + n - strlen("/checkpoint") - 64;
	if (h[-1] != '/' || strspn(h, "0123456789abcdef") != 64)
		return NULL;
	return h;
}

void
witness_serve_one(const witness *w, GPtrArray *logs, const witness_request *rq, guint64 now, witness_response *rs)
{
	gsize n = strlen(rq->path);
	const char *hash = cosigned_hash(rq->path);

	g_string_truncate(rs->body, 0);
	if (n >= strlen(ADD_CHECKPOINT) && strcmp(rq->path + n - strlen(ADD_CHECKPOINT), ADD_CHECKPOINT) == 0) {
		g_autoptr(GError) err = NULL;
		g_autofree char *cosig = NULL;
		witness_answer a = WITNESS_ERROR;
		guint64 current = 0;

		if (strcmp(rq->method, "POST") != 0) {
			answer_text(rs, 405, "add-checkpoint is a POST request");
			return;
		}
		witness_add_checkpoint(w, logs, rq->body, rq->len, now, &cosig, &current, &a, &err);
		if (a == WITNESS_COSIGNED) {
			rs->status = 200;
			rs->content_type = TEXT;
			g_string_assign(rs->body, cosig);
		} else if (a == WITNESS_CONFLICT) {
			rs->status = 409;
			rs->content_type = TLOG_SIZE;
			g_string_printf(rs->body, "%" G_GUINT64_FORMAT "\n", current);
		} else {
			answer_text(rs, a, err != NULL ? err->message : reason(a));
		}
		return;
	}
	if (hash != NULL) {
		g_autoptr(GBytes) cp = NULL;
		g_autofree char *hex = g_strndup(hash, 64);

		if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
			answer_text(rs, 405, "a cosigned checkpoint is read with GET");
			return;
		}
		if (witness_cosigned(w, hex, &cp, NULL) != VULNID_OK) {
			answer_text(rs, 404, "no checkpoint cosigned for that log");
			return;
		}
		rs->status = 200;
		rs->content_type = TEXT;
		g_string_append_len(rs->body, g_bytes_get_data(cp, NULL), (gssize) g_bytes_get_size(cp));
		return;
	}
	answer_text(rs, 404, "not a tlog-witness resource");
}

static guint64
now_seconds(void)
{
	return (guint64) (g_get_real_time() / G_USEC_PER_SEC);
}

/* ---- one connection ------------------------------------------------------------------- */

typedef struct {
	int in, out;
	GByteArray *buf;	/* read, not yet used */
} conn;

/* More bytes into c->buf: 1, or 0 at the end, -1 on an error or when
 * nothing came for the time limit. */
static int
read_more(conn *c)
{
	guint8 tmp[16384];
	struct pollfd p = { c->in, POLLIN, 0 };
	ssize_t n;
	int r;

	do
		r = poll(&p, 1, WITNESS_SERVE_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	do
		n = read(c->in, tmp, sizeof tmp);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	g_byte_array_append(c->buf, tmp, (guint) n);
	return 1;
}

/* Where the head ends (after its empty line), 0 while it has not. */
static gsize
head_end(const GByteArray *b)
{
	for (gsize i = 0; i + 1 < b->len; i++) {
		if (b->data[i] != '\n')
			continue;
		if (b->data[i + 1] == '\n')
			return i + 2;
		if (i + 2 < b->len && b->data[i + 1] == '\r' && b->data[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static vulnid_status
send_response(conn *c, const witness_response *rs, gboolean head_only, gboolean close_after, GError **err)
{
	g_autoptr(GString) h = g_string_new(NULL);

	g_string_printf(h, "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %" G_GSIZE_FORMAT "\r\n"
			"Cache-Control: no-store\r\n%s\r\n", rs->status, reason(rs->status), rs->content_type,
			rs->body->len, close_after ? "Connection: close\r\n" : "");
	if (!head_only)
		g_string_append_len(h, rs->body->str, (gssize) rs->body->len);
	if (!fileio_write_all(c->out, h->str, h->len))
		return vulnid_fail(err, VULNID_ERR_IO, "cannot answer: %s", g_strerror(errno));
	return VULNID_OK;
}

typedef struct {
	char *method, *path;
	gboolean http10, close, expect_continue, chunked;
	gint64 length;		/* -1: none */
	guint error;		/* a status to answer with instead, and close */
} request_head;

static void
request_head_clear(request_head *h)
{
	g_free(h->method);
	g_free(h->path);
}

static void
parse_header(request_head *h, const char *line)
{
	const char *colon = strchr(line, ':');
	g_autofree char *name = NULL;
	g_autofree char *value = NULL;

	if (colon == NULL || colon == line) {
		h->error = 400;
		return;
	}
	name = g_ascii_strdown(line, colon - line);
	value = g_strstrip(g_strdup(colon + 1));
	if (strcmp(name, "content-length") == 0) {
		guint64 v;

		if (!g_ascii_string_to_unsigned(value, 10, 0, G_MAXINT64, &v, NULL) ||
		    (h->length >= 0 && (guint64) h->length != v))
			h->error = 400;
		else
			h->length = (gint64) v;
	} else if (strcmp(name, "transfer-encoding") == 0) {
		h->chunked = TRUE;
	} else if (strcmp(name, "connection") == 0) {
		if (g_ascii_strcasecmp(value, "close") == 0)
			h->close = TRUE;
	} else if (strcmp(name, "expect") == 0) {
		if (g_ascii_strcasecmp(value, "100-continue") == 0)
			h->expect_continue = TRUE;
		else
			h->error = 400;
	}
}

/* "METHOD TARGET HTTP/1.x" and the header fields. */
static void
parse_head(const char *text, request_head *h)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_auto(GStrv) rl = NULL;
	char *target, *q;

	memset(h, 0, sizeof *h);
	h->length = -1;
	for (char **l = lines; *l != NULL; l++)
		g_strchomp(*l);
	rl = g_strsplit(lines[0], " ", -1);
	if (g_strv_length(rl) != 3 || *rl[0] == '\0' || *rl[1] == '\0') {
		h->error = 400;
		return;
	}
	if (strcmp(rl[2], "HTTP/1.1") != 0 && strcmp(rl[2], "HTTP/1.0") != 0) {
		h->error = g_str_has_prefix(rl[2], "HTTP/") ? 505 : 400;
		return;
	}
	h->http10 = strcmp(rl[2], "HTTP/1.0") == 0;
	h->close = h->http10;
	h->method = g_strdup(rl[0]);
	target = rl[1];
	/* An absolute URI names the path after its authority. */
	if (g_str_has_prefix(target, "http://") || g_str_has_prefix(target, "https://")) {
		char *slash = strchr(strstr(target, "://") + 3, '/');

		target = slash != NULL ? slash : "/";
	}
	if (target[0] != '/') {
		h->error = 400;
		return;
	}
	h->path = g_strdup(target);
	q = strpbrk(h->path, "?#");
	if (q != NULL)
		*q = '\0';
	for (char **l = lines + 1; *l != NULL && **l != '\0' && h->error == 0; l++)
		parse_header(h, *l);
}

/* One request: 1 answered (go on), 0 the connection ends. */
static int
serve_request(const witness *w, GPtrArray *logs, conn *c, guint *served, GError **err)
{
	g_autoptr(GString) body = g_string_new(NULL);
	witness_response rs = { 0, TEXT, body };
	request_head h = { 0 };
	gsize end;
	int r = 1;

	while ((end = head_end(c->buf)) == 0 && c->buf->len <= WITNESS_SERVE_MAX_HEAD && r > 0)
		r = read_more(c);
	if (end == 0 && c->buf->len == 0 && r == 0)
		return 0;		/* the client closed between requests */
	if (end == 0 || end > WITNESS_SERVE_MAX_HEAD) {
		answer_text(&rs, c->buf->len > WITNESS_SERVE_MAX_HEAD ? 431 : r < 0 ? 408 : 400,
			    "an incomplete or too long request head");
		send_response(c, &rs, FALSE, TRUE, err);
		return 0;
	}
	{
		g_autofree char *text = g_strndup((const char *) c->buf->data, end);

		parse_head(text, &h);
	}
	g_byte_array_remove_range(c->buf, 0, (guint) end);
	if (h.error == 0 && h.chunked)
		h.error = 411;
	if (h.error == 0 && h.length > WITNESS_SERVE_MAX_BODY)
		h.error = 413;
	if (h.error == 0 && h.length < 0 && strcmp(h.method, "POST") == 0)
		h.error = 411;
	if (h.error != 0) {
		answer_text(&rs, h.error, "a request this witness does not take");
		send_response(c, &rs, FALSE, TRUE, err);
		request_head_clear(&h);
		return 0;
	}
	if (h.expect_continue && h.length > (gint64) c->buf->len &&
	    !fileio_write_all(c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25)) {
		request_head_clear(&h);
		return 0;
	}
	while (h.length > 0 && (gint64) c->buf->len < h.length && (r = read_more(c)) > 0)
		;
	if (h.length > 0 && (gint64) c->buf->len < h.length) {
		answer_text(&rs, r < 0 ? 408 : 400, "an incomplete request body");
		send_response(c, &rs, FALSE, TRUE, err);
		request_head_clear(&h);
		return 0;
	}
	{
		gsize blen = h.length > 0 ? (gsize) h.length : 0;
		g_autofree char *b = g_strndup((const char *) c->buf->data, blen);
		witness_request rq = { h.method, h.path, b, blen };

		g_byte_array_remove_range(c->buf, 0, (guint) blen);
		witness_serve_one(w, logs, &rq, now_seconds(), &rs);
	}
	r = send_response(c, &rs, strcmp(h.method, "HEAD") == 0, h.close || *served + 1 >= WITNESS_SERVE_MAX_REQUESTS,
			  err) == VULNID_OK && !h.close;
	(*served)++;
	request_head_clear(&h);
	return r && *served < WITNESS_SERVE_MAX_REQUESTS;
}

vulnid_status
witness_serve_connection(const witness *w, GPtrArray *logs, int in_fd, int out_fd, guint *served, GError **err)
{
	g_autoptr(GByteArray) buf = g_byte_array_new();
	conn c = { in_fd, out_fd, buf };

	*served = 0;
	while (serve_request(w, logs, &c, served, err) > 0)
		;
	return err != NULL && *err != NULL ? (vulnid_status) (*err)->code : VULNID_OK;
}

/* ---- CGI ---------------------------------------------------------------------------------- */

vulnid_status
witness_serve_cgi(const witness *w, GPtrArray *logs, const char *method, const char *path_info,
		  const char *content_length, int in_fd, int out_fd, GError **err)
{
	g_autoptr(GString) body = g_string_new(NULL);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GByteArray) in = g_byte_array_new();
	witness_response rs = { 0, TEXT, body };
	conn c = { in_fd, out_fd, in };
	guint64 length = 0;
	int r = 1;

	if (method == NULL || *method == '\0')
		return vulnid_fail(err, VULNID_ERR_INVALID, "not run as a CGI program (no REQUEST_METHOD)");
	if (content_length != NULL && *content_length != '\0' &&
	    !g_ascii_string_to_unsigned(content_length, 10, 0, G_MAXINT64, &length, NULL))
		answer_text(&rs, 400, "a bad CONTENT_LENGTH");
	else if (length > WITNESS_SERVE_MAX_BODY)
		answer_text(&rs, 413, "a request this witness does not take");
	else {
		while (in->len < length && (r = read_more(&c)) > 0)
			;
		if (in->len < length) {
			answer_text(&rs, 400, "an incomplete request body");
		} else {
			g_autofree char *b = g_strndup((const char *) in->data, (gsize) length);
			witness_request rq = { method, path_info != NULL && *path_info != '\0' ? path_info : "/", b,
					       (gsize) length };

			witness_serve_one(w, logs, &rq, now_seconds(), &rs);
		}
	}
	g_string_printf(out, "Status: %u %s\r\nContent-Type: %s\r\nContent-Length: %" G_GSIZE_FORMAT "\r\n"
			"Cache-Control: no-store\r\n\r\n", rs.status, reason(rs.status), rs.content_type, body->len);
	if (strcmp(method, "HEAD") != 0)
		g_string_append_len(out, body->str, (gssize) body->len);
	if (!fileio_write_all(out_fd, out->str, out->len))
		return vulnid_fail(err, VULNID_ERR_IO, "cannot answer: %s", g_strerror(errno));
	return VULNID_OK;
}
