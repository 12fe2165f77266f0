/* u-tokens.c - unit tests for src/lib/tokens.c: the shape of tokens, their
 * checksum, redaction by shape without the database, tokens of the old
 * shape found by lookup (on a store in a temporary directory), and the
 * Token lines of commands.c */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "commands.h"
#include "store-db.h"
#include "tokens.h"

typedef struct {
	char *dir;
	store *st;
} fixture;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *path = NULL;

	(void) data;
	f->dir = g_dir_make_tmp("u-tokens-XXXXXX", &err);
	g_assert_no_error(err);
	path = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(path, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	/* the rows a token refers to */
	g_assert_cmpint(store_exec(f->st,
		"INSERT INTO blobs (sha256, size, data) VALUES ('00', 1, x'00');"
		"INSERT INTO messages (id, received, raw_sha256, dedup_key, disposition)"
		" VALUES (1, '2026-01-01T00:00:00Z', '00', 'k', 'request');"
		"INSERT INTO entries (id, year, number, digest, created, message)"
		" VALUES ('TEST-2026-0001', 2026, 1, 'd', '2026-01-01T00:00:00Z', 1);", &err), ==, VULNID_OK);
	g_assert_no_error(err);
}

static void
teardown(fixture *f, gconstpointer data)
{
	const char *names[] = { "vulnid.db", "vulnid.db-wal", "vulnid.db-shm", "vulnid.db-journal" };

	(void) data;
	store_close(f->st);
	for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *p = g_build_filename(f->dir, names[i], NULL);

		g_unlink(p);
	}
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->dir);
}

static char *
issue(fixture *f, const char *role)
{
	g_autoptr(GError) err = NULL;
	char *t = NULL;

	g_assert_cmpint(tokens_issue(f->st, "TEST-2026-0001", role, "alice@example.net", &t, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	return t;
}

/* Every token has the documented shape, and its checksum holds; changing
 * any one character breaks it. */
static void
test_shape(fixture *f, gconstpointer data)
{
	(void) data;
	for (int n = 0; n < 50; n++) {
		g_autofree char *t = issue(f, "creator");
		g_autofree char *up = g_ascii_strup(t, -1);

		g_assert_cmpuint(strlen(t), ==, TOKENS_LEN);
		g_assert_true(g_str_has_prefix(t, "vulnid_"));
		for (gsize i = TOKENS_PREFIX_LEN; i < TOKENS_LEN; i++)
			g_assert_nonnull(strchr("abcdefghijklmnopqrstuvwxyz234567", t[i]));
		g_assert_true(tokens_valid(t, strlen(t)));
		g_assert_true(tokens_valid(up, strlen(up)));	/* any case */
		for (gsize i = TOKENS_PREFIX_LEN; i < TOKENS_LEN; i++) {
			char save = t[i];

			t[i] = t[i] == 'a' ? 'b' : 'a';
			g_assert_false(tokens_valid(t, strlen(t)));
			t[i] = save;
		}
		g_assert_false(tokens_valid(t, TOKENS_LEN - 1));
	}
}

/* A token is found in any case; one with a wrong checksum never is. */
static void
test_find(fixture *f, gconstpointer data)
{
	g_autofree char *t = issue(f, "vendor");
	g_autofree char *up = g_ascii_strup(t, -1);
	g_autoptr(token_row) row = NULL;
	g_autoptr(token_row) row2 = NULL;
	g_autoptr(token_row) none = NULL;
	g_autoptr(GError) err = NULL;

	(void) data;
	g_assert_cmpint(tokens_find(f->st, t, &row, &err), ==, VULNID_OK);
	g_assert_nonnull(row);
	g_assert_cmpstr(row->role, ==, "vendor");
	g_assert_cmpstr(row->entry, ==, "TEST-2026-0001");
	g_assert_cmpint(tokens_find(f->st, up, &row2, &err), ==, VULNID_OK);
	g_assert_nonnull(row2);
	t[TOKENS_LEN - 1] = t[TOKENS_LEN - 1] == 'a' ? 'b' : 'a';
	g_assert_cmpint(tokens_find(f->st, t, &none, &err), ==, VULNID_OK);
	g_assert_null(none);
}

static void
redacts(const char *in, const char *want, guint valid)
{
	guint n = 0;
	g_autofree char *out = tokens_redact_shape(in, &n);

	g_assert_cmpstr(out, ==, want);
	g_assert_cmpuint(n, ==, valid);
}

/* By shape alone: a token anywhere, glued or not, in any case, valid or
 * not, whole or most of it; a body without its prefix only when its
 * checksum holds; the names of this program's functions are no tokens. */
static void
test_redact_shape(fixture *f, gconstpointer data)
{
	g_autofree char *t = issue(f, "creator");
	g_autofree char *up = g_ascii_strup(t, -1);
	g_autofree char *in = NULL;
	g_autofree char *bad = g_strdup(t);
	g_autofree char *cut = g_strndup(t, TOKENS_PREFIX_LEN + 20);
	g_autofree char *body = g_strdup(t + TOKENS_PREFIX_LEN);
	g_autofree char *badbody = NULL;

	(void) data;
	bad[TOKENS_LEN - 1] = bad[TOKENS_LEN - 1] == 'a' ? 'b' : 'a';
	badbody = g_strdup(bad + TOKENS_PREFIX_LEN);
	in = g_strdup_printf("Token: %s\n> x%sy\n%s, %s; cut %s.\n", t, t, up, bad, cut);
	redacts(in, "Token: [token removed]\n> x[token removed]y\n[token removed], [token removed]; "
		"cut [token removed].\n", 3);
	g_free(in);
	in = g_strdup_printf("bare %s and %s, glued z%s", body, badbody, body);
	{
		g_autofree char *want = g_strdup_printf("bare [token removed] and %s, glued z%s", badbody, body);

		redacts(in, want, 1);
	}
	redacts("vulnid_config_load() and vulnid_status, vulnid_", "vulnid_config_load() and vulnid_status, vulnid_", 0);
	redacts("", "", 0);
}

/* Linear: a megabyte of near-tokens and of prefixes takes no time. */
static void
test_redact_linear(fixture *f, gconstpointer data)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_autofree char *out = NULL;

	(void) f;
	(void) data;
	while (s->len < 1024 * 1024)
		g_string_append(s, "vulnid_vulnid_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ");
	out = tokens_redact_shape(s->str, NULL);
	g_assert_null(strstr(out, "aaaaaaaaaaaaaaaa"));
}

/* A token of the old shape (32 hex digits) is found by lookup, in any
 * case, also inside a longer run of hex digits (a commit id) and among
 * hundreds of commit ids: no budget. */
static void
test_legacy(fixture *f, gconstpointer data)
{
	const char *old = "0123456789abcdef0123456789abcdef";
	g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, old, -1);
	g_autofree char *sql = g_strdup_printf("INSERT INTO tokens (sha256, entry, role, address, created)"
					       " VALUES ('%s', 'TEST-2026-0001', 'creator', NULL, 'x')", sha);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GError) err = NULL;
	g_autoptr(token_row) row = NULL;
	guint found = 0;
	char *x;

	(void) data;
	/* without such rows nothing is looked up (and nothing found) */
	x = g_strdup(old);
	g_assert_cmpint(tokens_redact(f->st, &x, &found, &err), ==, VULNID_OK);
	g_assert_cmpstr(x, ==, old);
	g_free(x);
	g_assert_cmpint(store_exec(f->st, sql, &err), ==, VULNID_OK);
	g_assert_cmpint(tokens_find(f->st, "0123456789ABCDEF0123456789ABCDEF", &row, &err), ==, VULNID_OK);
	g_assert_nonnull(row);
	for (int i = 0; i < 300; i++) {
		g_autofree char *c = g_compute_checksum_for_data(G_CHECKSUM_SHA1, (const guchar *) &i, sizeof i);

		g_string_append_printf(text, "fixed in %s\n", c);
	}
	g_string_append_printf(text, "> Token: %s\ncommit deadbeef%s\n0X%s.\n", old, "0123456789ABCDEF0123456789ABCDEF", old);
	x = g_strdup(text->str);
	g_assert_cmpint(tokens_redact(f->st, &x, &found, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_null(strcasestr(x, old));
	g_assert_nonnull(strstr(x, "> Token: [token removed]\ncommit deadbeef[token removed]\n0X[token removed].\n"));
	g_assert_cmpuint(found, ==, 3);
	g_free(x);
}

/* The Token line takes either shape; the mark left by the redaction is a
 * token line too, never a malformed one. */
static void
test_token_lines(fixture *f, gconstpointer data)
{
	g_autofree char *t = issue(f, "creator");
	g_autofree char *text = g_strdup_printf("Token: %s\nToken: [token removed]\nToken: vulnid_short\nlookup\n", t);
	g_autoptr(mail_text) mt = commands_split(text, "TEST", 100);

	(void) data;
	g_assert_cmpuint(mt->tokens->len, ==, 2);
	g_assert_cmpstr(g_ptr_array_index(mt->tokens, 0), ==, t);
	g_assert_cmpuint(mt->bad_tokens, ==, 1);
	g_autofree char *v1 = tokens_line_value("vulnid_short");
	g_autofree char *v2 = tokens_line_value("0123456789ABCDEF0123456789abcdef");

	g_assert_null(v1);
	g_assert_cmpstr(v2, ==, "0123456789abcdef0123456789abcdef");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define T(name, fn) g_test_add("/tokens/" name, fixture, NULL, setup, fn, teardown)
	T("shape", test_shape);
	T("find", test_find);
	T("redact-shape", test_redact_shape);
	T("redact-linear", test_redact_linear);
	T("legacy", test_legacy);
	T("token-lines", test_token_lines);
	return g_test_run();
}
