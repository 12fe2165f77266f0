/* u-outbox.c - unit tests for the outbox and its database layer
 * (src/lib/outbox.c, src/lib/store-outbox.c) on a store created in a
 * temporary directory, with a configuration built in memory */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>
#include <gmime/gmime.h>

#include "outbox.h"
#include "store-db.h"
#include "store-outbox.h"

typedef struct {
	char *dir;
	store *st;
	vulnid_config *cfg;
} fixture;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *path = NULL;

	(void) data;
	f->dir = g_dir_make_tmp("u-outbox-XXXXXX", &err);
	g_assert_no_error(err);
	path = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(path, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	/* only what queueing reads; config_free() frees it */
	f->cfg = g_new0(vulnid_config, 1);
	f->cfg->prefix = g_strdup("TEST");
	f->cfg->domain = g_strdup("robot.example");
	f->cfg->bounce_local = g_strdup("bounces");
	f->cfg->request_address = g_strdup("request@robot.example");
	f->cfg->bounce_address = g_strdup("bounces@robot.example");
	f->cfg->busy_timeout = 1000;
}

static void
teardown(fixture *f, gconstpointer data)
{
	const char *names[] = { "vulnid.db", "vulnid.db-wal", "vulnid.db-shm", "vulnid.db-journal" };

	(void) data;
	store_close(f->st);
	config_free(f->cfg);
	for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *p = g_build_filename(f->dir, names[i], NULL);

		g_unlink(p);
	}
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->dir);
}

/* Queue a mail to the addresses in its own transaction, as callers do. */
static gint64
queue(fixture *f, const char *const *to)
{
	g_autoptr(GError) err = NULL;
	outbox_mail m = { 0 };
	gint64 id = 0;

	m.kind = "ack";
	m.entry = "TEST-2026-0001";
	m.to_list = to;
	m.subject = "Re: a request";
	m.body = "Your identifier is TEST-2026-0001.\n";
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(outbox_queue(f->st, f->cfg, 0, &m, &id, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(id, >, 0);
	return id;
}

static GPtrArray *
claimed(fixture *f, const char *run, const char *now)
{
	g_autoptr(GError) err = NULL;
	GPtrArray *items = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_item_free);

	g_assert_cmpint(store_outbox_claimed(f->st, "nobody", run, now, items, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	return items;
}

static void
claim(fixture *f, const char *run, const char *now, const char *until)
{
	g_autoptr(GError) err = NULL;
	store_outbox_due due = { 0, TRUE, now, run };

	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_outbox_claim_due(f->st, &due, until, 100, NULL, &err), ==, VULNID_OK);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
}

static void
test_queue(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", "bob\r\nBcc: x@evil.example", "alice@example.net", NULL };
	g_autoptr(GError) err = NULL;
	g_autoptr(GBytes) bytes = NULL;
	g_autoptr(GPtrArray) rcpts = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_row_free);
	g_autoptr(outbox_ref) ref = NULL;
	const store_outbox_row *r;
	int pending, failed, delivered;
	gint64 id;
	gsize len;
	const char *data_s;

	(void) data;
	id = queue(f, to);
	g_assert_cmpint(outbox_get_data(f->st, id, &bytes, &err), ==, VULNID_OK);
	data_s = g_bytes_get_data(bytes, &len);
	g_assert_nonnull(g_strstr_len(data_s, (gssize) len, "Your identifier is TEST-2026-0001."));
	/* the line break in an address never starts a header of its own */
	g_assert_null(g_strstr_len(data_s, (gssize) len, "\nBcc:"));
	g_assert_false(g_str_has_prefix(data_s, "Bcc:"));
	/* a repeated address is one recipient; a line break never survives */
	g_assert_cmpint(store_outbox_pending_recipients(f->st, id, rcpts, &err), ==, VULNID_OK);
	g_assert_cmpuint(rcpts->len, ==, 2);
	g_assert_cmpstr(g_ptr_array_index(rcpts, 0), ==, "alice@example.net");
	g_assert_null(strpbrk(g_ptr_array_index(rcpts, 1), "\r\n"));
	g_assert_cmpint(store_outbox_tally(f->st, id, &pending, &failed, &delivered, &err), ==, VULNID_OK);
	g_assert_cmpint(pending, ==, 2);
	g_assert_cmpint(failed + delivered, ==, 0);
	/* listed as queued, nobody holds it */
	g_assert_cmpint(store_outbox_list(f->st, "2026-01-01T00:00:00Z", FALSE, rows, &err), ==, VULNID_OK);
	g_assert_cmpuint(rows->len, ==, 1);
	r = g_ptr_array_index(rows, 0);
	g_assert_cmpint(r->id, ==, id);
	g_assert_cmpstr(r->status, ==, "queued");
	g_assert_cmpstr(r->kind, ==, "ack");
	g_assert_null(r->claimed_until);
	/* found by its Message-ID; an unknown VERP address finds nothing */
	{
		g_autoptr(outbox_ref) by_msgid = NULL;

		g_assert_cmpint(store_outbox_find_by_message_id(f->st, r->message_id, &by_msgid, &err), ==,
				VULNID_OK);
		g_assert_cmpint(by_msgid->id, ==, id);
		g_assert_true(g_str_has_prefix(r->message_id, "vulnid.ack."));
	}
	g_assert_cmpint(outbox_find_by_envelope(f->st, "bounces+nope@robot.example", &ref, &err), ==,
			VULNID_ERR_NOTFOUND);
	g_clear_error(&err);
	g_assert_cmpint(outbox_get_data(f->st, id + 1, &bytes, &err), ==, VULNID_ERR_NOTFOUND);
}

/* Two VERP tokens are never the same, and never guessable from each
 * other: 24 hex digits from the kernel's random source. */
static void
test_verp(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", NULL };
	g_autoptr(GError) err = NULL;
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	(void) data;
	for (int i = 0; i < 20; i++) {
		gint64 id = queue(f, to);
		g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_row_free);
		g_autofree char *msgid = NULL;
		g_autoptr(outbox_ref) ref = NULL;

		(void) id;
		g_assert_cmpint(store_outbox_list(f->st, "2026-01-01T00:00:00Z", FALSE, rows, &err), ==,
				VULNID_OK);
		msgid = g_strdup(((store_outbox_row *) g_ptr_array_index(rows, rows->len - 1))->message_id);
		g_assert_cmpint(outbox_find_by_message_id(f->st, msgid, &ref, &err), ==, VULNID_OK);
		g_assert_cmpint(ref->id, ==, id);
	}
	/* the envelope senders, read back through the bounce lookup */
	{
		g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_item_free);
		store_outbox_due due = { 0, TRUE, "2026-01-01T00:00:00Z", "run-v" };

		g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
		g_assert_cmpint(store_outbox_claim_due(f->st, &due, "2026-01-01T01:00:00Z", 100, NULL, &err), ==,
				VULNID_OK);
		g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
		g_assert_cmpint(store_outbox_claimed(f->st, "nobody", "run-v", "2026-01-01T00:00:00Z", all, &err),
				==, VULNID_OK);
		g_assert_cmpuint(all->len, ==, 20);
		for (guint i = 0; i < all->len; i++) {
			store_outbox_item *it = g_ptr_array_index(all, i);
			const char *plus = strchr(it->envelope_from, '+');
			const char *at = strchr(it->envelope_from, '@');
			g_autoptr(outbox_ref) ref = NULL;
			g_autofree char *upper = g_ascii_strup(it->envelope_from, -1);

			g_assert_true(g_str_has_prefix(it->envelope_from, "bounces+"));
			g_assert_nonnull(at);
			g_assert_cmpint(at - plus - 1, ==, 24);
			for (const char *p = plus + 1; p < at; p++)
				g_assert_true(g_ascii_isxdigit(*p) && !g_ascii_isupper(*p));
			g_assert_false(g_hash_table_contains(seen, it->envelope_from));
			g_hash_table_add(seen, g_strdup(it->envelope_from));
			g_assert_cmpint(outbox_find_by_envelope(f->st, upper, &ref, &err), ==, VULNID_OK);
			g_assert_cmpint(ref->id, ==, it->id);
		}
	}
}

/* Two runs claiming at once: the item goes to one of them only. */
static void
test_claim_once(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", NULL };
	const char *now = "2026-01-01T00:00:00Z";
	g_autoptr(GPtrArray) a = NULL;
	g_autoptr(GPtrArray) b = NULL;
	g_autoptr(GError) err = NULL;
	gboolean any = TRUE;
	store_outbox_due due_b = { 0, TRUE, now, "run-b" };
	gint64 id;

	(void) data;
	id = queue(f, to);
	claim(f, "run-a", now, "2026-01-01T01:00:00Z");
	claim(f, "run-b", now, "2026-01-01T01:00:00Z");
	a = claimed(f, "run-a", now);
	b = claimed(f, "run-b", now);
	g_assert_cmpuint(a->len, ==, 1);
	g_assert_cmpint(((store_outbox_item *) g_ptr_array_index(a, 0))->id, ==, id);
	g_assert_cmpuint(b->len, ==, 0);
	g_assert_cmpint(store_outbox_any_due(f->st, &due_b, &any, &err), ==, VULNID_OK);
	g_assert_false(any);
	/* the live claim is seen by others, not by its holder */
	{
		g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func(g_free);

		g_assert_cmpint(store_outbox_live_claims(f->st, "nobody", "run-b", now, live, &err), ==,
				VULNID_OK);
		g_assert_cmpuint(live->len, ==, 1);
		g_assert_cmpstr(g_ptr_array_index(live, 0), ==, "run-a");
		g_ptr_array_set_size(live, 0);
		g_assert_cmpint(store_outbox_live_claims(f->st, "nobody", "run-a", now, live, &err), ==,
				VULNID_OK);
		g_assert_cmpuint(live->len, ==, 0);
	}
}

/* A claim that lapsed can be taken by another run; a released one too;
 * the run that held it never claims the item again. */
static void
test_claim_expired(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", NULL };
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) a = NULL;
	g_autoptr(GPtrArray) b = NULL;
	g_autoptr(GPtrArray) c = NULL;
	gint64 id, n = 0;

	(void) data;
	id = queue(f, to);
	claim(f, "run-a", "2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z");
	/* after the claim lapsed, it is no longer run-a's */
	a = claimed(f, "run-a", "2026-01-01T00:20:00Z");
	g_assert_cmpuint(a->len, ==, 0);
	claim(f, "run-b", "2026-01-01T00:20:00Z", "2026-01-01T00:30:00Z");
	b = claimed(f, "run-b", "2026-01-01T00:20:00Z");
	g_assert_cmpuint(b->len, ==, 1);
	g_assert_cmpint(((store_outbox_item *) g_ptr_array_index(b, 0))->id, ==, id);
	/* released (its claimer died): due at once for a third run */
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_outbox_release_claim(f->st, "run-b", &n, &err), ==, VULNID_OK);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(n, ==, 1);
	claim(f, "run-c", "2026-01-01T00:21:00Z", "2026-01-01T00:30:00Z");
	c = claimed(f, "run-c", "2026-01-01T00:21:00Z");
	g_assert_cmpuint(c->len, ==, 1);
	/* released or lapsed, never claimed again by the same run */
	g_ptr_array_set_size(b, 0);
	claim(f, "run-c", "2026-01-01T00:40:00Z", "2026-01-01T00:50:00Z");
	{
		store_outbox_outcome o = { id, "deferred", "2026-01-01T00:22:00Z", "451 later",
					   "2026-01-01T00:23:00Z", "run-c", "nobody" };
		store_outbox_due due = { 0, TRUE, "2026-01-01T00:40:00Z", "run-c" };
		gboolean any = TRUE;

		g_assert_cmpint(store_outbox_set_outcome(f->st, &o, &err), ==, VULNID_OK);
		g_assert_cmpint(store_outbox_any_due(f->st, &due, &any, &err), ==, VULNID_OK);
		g_assert_false(any);
		due.run_token = "run-d";
		g_assert_cmpint(store_outbox_any_due(f->st, &due, &any, &err), ==, VULNID_OK);
		g_assert_true(any);
	}
}

/* A recipient's outcome only moves forward: a bounce recorded first stays
 * failed whatever the server said, a second bounce changes nothing. */
static void
test_forward_only(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", "bob@example.org", NULL };
	const char *now = "2026-01-01T00:00:00Z";
	g_autoptr(GError) err = NULL;
	g_autofree char *failed_addr = NULL;
	g_autofree char *again = NULL;
	gboolean changed = TRUE;
	int pending, failed, delivered;
	gint64 id;

	(void) data;
	id = queue(f, to);
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	/* the DSN names Bob in another case: found, failed now */
	g_assert_cmpint(outbox_mark_bounced(f->st, id, "BOB@example.org", NULL, "550 no such user",
					    &failed_addr, &err), ==, VULNID_OK);
	g_assert_cmpstr(failed_addr, ==, "bob@example.org");
	/* the server's late 250 for Bob does not make him delivered */
	g_assert_cmpint(store_outbox_recipient_verdict(f->st, id, "bob@example.org", "delivered", "250 ok",
						       now, &changed, &err), ==, VULNID_OK);
	g_assert_false(changed);
	g_assert_cmpint(store_outbox_recipient_verdict(f->st, id, "alice@example.net", "delivered",
						       "250 ok", now, &changed, &err), ==, VULNID_OK);
	g_assert_true(changed);
	/* a delivered recipient takes no deferral either */
	g_assert_cmpint(store_outbox_recipient_verdict(f->st, id, "alice@example.net", "deferred",
						       "451 later", now, &changed, &err), ==, VULNID_OK);
	g_assert_false(changed);
	/* a second DSN for Bob fails nothing */
	g_assert_cmpint(outbox_mark_bounced(f->st, id, "bob@example.org", NULL, "550 again", &again, &err),
			==, VULNID_OK);
	g_assert_null(again);
	/* an address the item was not sent to is not one of its recipients */
	g_assert_cmpint(outbox_mark_bounced(f->st, id, "carol@example.com", NULL, "550", &again, &err),
			==, VULNID_OK);
	g_assert_null(again);
	g_assert_cmpint(store_outbox_tally(f->st, id, &pending, &failed, &delivered, &err), ==, VULNID_OK);
	g_assert_cmpint(pending, ==, 0);
	g_assert_cmpint(failed, ==, 1);
	g_assert_cmpint(delivered, ==, 1);
	/* the database itself refuses to turn a failed recipient delivered */
	g_assert_cmpint(store_exec(f->st, "UPDATE outbox_recipients SET status = 'delivered'"
				   " WHERE address = 'bob@example.org'", &err), !=, VULNID_OK);
	g_clear_error(&err);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	/* retry makes the failed recipient queued again, never the delivered */
	g_assert_cmpint(outbox_retry(f->st, id, &err), ==, VULNID_OK);
	g_assert_cmpint(store_outbox_tally(f->st, id, &pending, &failed, &delivered, &err), ==, VULNID_OK);
	g_assert_cmpint(pending, ==, 1);
	g_assert_cmpint(delivered, ==, 1);
}

/* A one-recipient item is found by its VERP address alone. */
static void
test_bounce_one(fixture *f, gconstpointer data)
{
	const char *to[] = { "alice@example.net", NULL };
	g_autoptr(GError) err = NULL;
	g_autofree char *failed_addr = NULL;
	gint64 id;

	(void) data;
	id = queue(f, to);
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(outbox_mark_bounced(f->st, id, "rewritten@relay.example", NULL, "550 gone",
					    &failed_addr, &err), ==, VULNID_OK);
	g_assert_cmpstr(failed_addr, ==, "alice@example.net");
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	{
		g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_row_free);

		g_assert_cmpint(store_outbox_list(f->st, "2026-01-01T00:00:00Z", FALSE, rows, &err), ==,
				VULNID_OK);
		g_assert_cmpuint(rows->len, ==, 1);
		g_assert_cmpstr(((store_outbox_row *) g_ptr_array_index(rows, 0))->status, ==, "failed");
		g_assert_cmpstr(((store_outbox_row *) g_ptr_array_index(rows, 0))->last_error, ==, "550 gone");
	}
	/* an item that does not exist cannot be retried */
	g_assert_cmpint(outbox_retry(f->st, id + 7, &err), ==, VULNID_ERR_NOTFOUND);
}

int
main(int argc, char **argv)
{
	g_setenv("VULNID_TEST_NOW", "2026-01-01T00:00:00Z", TRUE);
	g_test_init(&argc, &argv, NULL);
	g_mime_init();
	g_test_add("/outbox/queue", fixture, NULL, setup, test_queue, teardown);
	g_test_add("/outbox/verp", fixture, NULL, setup, test_verp, teardown);
	g_test_add("/outbox/claim-once", fixture, NULL, setup, test_claim_once, teardown);
	g_test_add("/outbox/claim-expired", fixture, NULL, setup, test_claim_expired, teardown);
	g_test_add("/outbox/forward-only", fixture, NULL, setup, test_forward_only, teardown);
	g_test_add("/outbox/bounce-one", fixture, NULL, setup, test_bounce_one, teardown);
	return g_test_run();
}
