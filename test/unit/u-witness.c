/* u-witness.c - unit tests for src/lib/witness-serve.c: the HTTP framing
 * of vulnid witness serve (one connection, CGI) on a socket pair, with a
 * witness in a temporary directory and a log key made here */
#include "autoconfig.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "note.h"
#include "witness.h"
#include "witness-serve.h"

typedef struct {
	char *dir;
	witness *w;
	note_key *log;
	GPtrArray *logs;
	char *req0;		/* an add-checkpoint body: the empty tree */
} fixture;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *text = NULL;
	g_autofree char *sig = NULL;
	tlog_hash empty;

	(void) data;
	f->dir = g_dir_make_tmp("u-witness-XXXXXX", &err);
	g_assert_no_error(err);
	g_assert_cmpint(witness_open(f->dir, "example.net/w", &f->w, NULL, &err), ==, VULNID_OK);
	g_assert_cmpint(note_key_generate("example.org/log", NOTE_ED25519, &f->log, &err), ==, VULNID_OK);
	f->logs = g_ptr_array_new();
	g_ptr_array_add(f->logs, f->log);
	tlog_empty_hash(&empty);
	text = checkpoint_text("example.org/log", 0, &empty);
	sig = note_sign(f->log, text);
	f->req0 = g_strconcat("old 0\n\n", text, "\n", sig, NULL);
}

static void
teardown(fixture *f, gconstpointer data)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);

	(void) data;
	g_assert_cmpint(system(cmd), ==, 0);
	witness_free(f->w);
	note_key_free(f->log);
	g_ptr_array_unref(f->logs);
	g_free(f->req0);
	g_free(f->dir);
}

/* What the witness answers on a connection given these bytes, the client
 * closing its side after them. */
static char *
converse(fixture *f, const char *in, gsize len, guint *served)
{
	int sv[2];
	g_autoptr(GError) err = NULL;
	GString *out = g_string_new(NULL);
	char buf[4096];
	ssize_t n;

	g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
	g_assert_cmpint(write(sv[0], in, len), ==, (ssize_t) len);
	g_assert_cmpint(shutdown(sv[0], SHUT_WR), ==, 0);
	witness_serve_connection(f->w, f->logs, sv[1], sv[1], served, &err);
	close(sv[1]);
	while ((n = read(sv[0], buf, sizeof buf)) > 0)
		g_string_append_len(out, buf, n);
	close(sv[0]);
	return g_string_free(out, FALSE);
}

static char *
post(const char *path, const char *body, const char *extra)
{
	return g_strdup_printf("POST %s HTTP/1.1\r\nHost: w\r\n%sContent-Length: %zu\r\n\r\n%s", path, extra,
			       strlen(body), body);
}

static void
test_add_checkpoint(fixture *f, gconstpointer data)
{
	g_autofree char *rq = post("/prefix/add-checkpoint", f->req0, "");
	g_autofree char *two = NULL;
	g_autofree char *out = NULL;
	guint served = 0;

	(void) data;
	out = converse(f, rq, strlen(rq), &served);
	g_assert_cmpuint(served, ==, 1);
	g_assert_true(g_str_has_prefix(out, "HTTP/1.1 200 OK\r\n"));
	g_assert_nonnull(strstr(out, "\r\n\r\n\xe2\x80\x94 example.net/w "));
	g_clear_pointer(&out, g_free);
	/* Keep-alive: the same request twice on one connection, then a GET
	 * of what was cosigned, and of a log it does not know. */
	{
		g_autofree char *h = g_compute_checksum_for_string(G_CHECKSUM_SHA256, "example.org/log", -1);
		g_auto(GStrv) parts = NULL;

		two = g_strconcat(rq, rq, "GET /prefix/", h, "/checkpoint HTTP/1.1\r\n\r\n",
				  "GET /prefix/0000000000000000000000000000000000000000000000000000000000000000"
				  "/checkpoint HTTP/1.1\r\n\r\n", NULL);
		out = converse(f, two, strlen(two), &served);
		g_assert_cmpuint(served, ==, 4);
		parts = g_strsplit(out, "HTTP/1.1 200 OK", -1);
		g_assert_cmpuint(g_strv_length(parts), ==, 4);
		g_assert_nonnull(strstr(parts[3], "example.org/log\n0\n"));
		g_assert_nonnull(strstr(out, "HTTP/1.1 404 Not Found"));
	}
}

static void
test_conflict(fixture *f, gconstpointer data)
{
	g_autofree char *body = g_strdup(f->req0);
	g_autofree char *rq = NULL;
	g_autofree char *out = NULL;
	guint served = 0;

	(void) data;
	body[4] = '3';		/* "old 3" for a tree of 0: beyond it */
	rq = post("/add-checkpoint", body, "");
	out = converse(f, rq, strlen(rq), &served);
	g_assert_true(g_str_has_prefix(out, "HTTP/1.1 400 "));
}

static void
test_framing(fixture *f, gconstpointer data)
{
	static const struct {
		const char *in;
		const char *status;
	} cases[] = {
		{ "GARBAGE\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET / HTTP/2.0\r\n\r\n", "HTTP/1.1 505 " },
		{ "GET relative HTTP/1.1\r\n\r\n", "HTTP/1.1 400 " },
		{ "POST /add-checkpoint HTTP/1.1\r\n\r\n", "HTTP/1.1 411 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 411 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "HTTP/1.1 400 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", "HTTP/1.1 413 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort", "HTTP/1.1 400 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nbad header\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET /add-checkpoint HTTP/1.1\r\n\r\n", "HTTP/1.1 405 " },
		{ "GET http://w.example/x/add-checkpoint?q=1 HTTP/1.1\r\n\r\n", "HTTP/1.1 405 " },
		{ "GET /somewhere HTTP/1.0\r\n\r\n", "HTTP/1.1 404 " },
		{ "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "HTTP/1.1 400 " },
		{ "GET / HTTP/1.1\r\nHost: w\r\n", "HTTP/1.1 400 " },	/* the head never ends */
	};

	(void) data;
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		guint served = 0;
		g_autofree char *out = converse(f, cases[i].in, strlen(cases[i].in), &served);

		if (!g_str_has_prefix(out, cases[i].status))
			g_error("case %zu: %s", i, out);
	}
	{
		/* A head longer than the limit. */
		g_autoptr(GString) h = g_string_new("GET / HTTP/1.1\r\n");
		g_autofree char *out = NULL;
		guint served = 0;

		while (h->len <= WITNESS_SERVE_MAX_HEAD)
			g_string_append(h, "X-Filler: 0123456789012345678901234567890123456789\r\n");
		g_string_append(h, "\r\n");
		out = converse(f, h->str, h->len, &served);
		g_assert_true(g_str_has_prefix(out, "HTTP/1.1 431 "));
	}
}

typedef struct {
	fixture *f;
	int fd;
	guint served;
} serve_arg;

static gpointer
serve_thread(gpointer data)
{
	serve_arg *a = data;
	g_autoptr(GError) err = NULL;

	witness_serve_connection(a->f->w, a->f->logs, a->fd, a->fd, &a->served, &err);
	close(a->fd);
	return NULL;
}

/* The head alone first: the witness asks for the body (100 Continue),
 * then answers. */
static void
test_expect_continue(fixture *f, gconstpointer data)
{
	g_autofree char *rq = post("/add-checkpoint", f->req0, "Expect: 100-continue\r\nConnection: close\r\n");
	gsize head = (gsize) (strstr(rq, "\r\n\r\n") + 4 - rq);
	GString *out = g_string_new(NULL);
	g_autofree char *all = NULL;
	serve_arg a = { f, -1, 0 };
	GThread *t;
	char buf[4096];
	ssize_t n;
	int sv[2];

	(void) data;
	g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
	a.fd = sv[1];
	t = g_thread_new("serve", serve_thread, &a);
	g_assert_cmpint(write(sv[0], rq, head), ==, (ssize_t) head);
	while (strstr(out->str, "\r\n\r\n") == NULL && (n = read(sv[0], buf, sizeof buf)) > 0)
		g_string_append_len(out, buf, n);
	g_assert_cmpstr(out->str, ==, "HTTP/1.1 100 Continue\r\n\r\n");
	g_assert_cmpint(write(sv[0], rq + head, strlen(rq) - head), ==, (ssize_t) (strlen(rq) - head));
	while ((n = read(sv[0], buf, sizeof buf)) > 0)
		g_string_append_len(out, buf, n);
	g_thread_join(t);
	close(sv[0]);
	all = g_string_free(out, FALSE);
	g_assert_cmpuint(a.served, ==, 1);
	g_assert_nonnull(strstr(all, "\r\n\r\nHTTP/1.1 200 OK\r\n"));
	g_assert_nonnull(strstr(all, "Connection: close\r\n"));
}

static void
test_cgi(fixture *f, gconstpointer data)
{
	int in[2], out[2];
	char buf[4096];
	ssize_t n;
	g_autoptr(GError) err = NULL;
	g_autofree char *len = g_strdup_printf("%zu", strlen(f->req0));

	(void) data;
	g_assert_cmpint(pipe(in), ==, 0);
	g_assert_cmpint(pipe(out), ==, 0);
	g_assert_cmpint(write(in[1], f->req0, strlen(f->req0)), ==, (ssize_t) strlen(f->req0));
	close(in[1]);
	g_assert_cmpint(witness_serve_cgi(f->w, f->logs, "POST", "/add-checkpoint", len, in[0], out[1], &err), ==,
			VULNID_OK);
	close(out[1]);
	n = read(out[0], buf, sizeof buf - 1);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	g_assert_true(g_str_has_prefix(buf, "Status: 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"));
	close(in[0]);
	close(out[0]);
	g_assert_cmpint(witness_serve_cgi(f->w, f->logs, NULL, NULL, NULL, 0, 1, &err), ==, VULNID_ERR_INVALID);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/witness/add-checkpoint", fixture, NULL, setup, test_add_checkpoint, teardown);
	g_test_add("/witness/old-beyond", fixture, NULL, setup, test_conflict, teardown);
	g_test_add("/witness/framing", fixture, NULL, setup, test_framing, teardown);
	g_test_add("/witness/expect-continue", fixture, NULL, setup, test_expect_continue, teardown);
	g_test_add("/witness/cgi", fixture, NULL, setup, test_cgi, teardown);
	return g_test_run();
}
