/* u-ratelimit.c - unit tests for src/lib/ratelimit.c: client addresses
 * and networks, and the limits per key, sender, network, domain and for
 * everyone, counted by the database's per-minute counters, with the
 * clock fixed; on a store in a temporary directory */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "config.h"
#include "mailctx.h"
#include "message.h"
#include "ratelimit.h"
#include "store-intake.h"
#include "store.h"

#define MOD "0123456789ABCDEF0123456789ABCDEF01234567"
#define OTHER "89ABCDEF0123456789ABCDEF0123456789ABCDEF"

typedef struct {
	char *dir;
	vulnid_config *cfg;
	store *st;
	char sha[65];
	int n;			/* messages inserted */
} fixture;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *db = NULL;
	/* lower case and spaced as gpg prints it: read like the signer's */
	const char *text = "[instance]\nprefix = TEST\ndomain = robot.example\n"
			   "[lifecycle]\nrate_requests_per_hour = 3\nrate_additions_per_hour = 2\n"
			   "rate_network_per_hour = 5\nrate_domain_per_hour = 7\nrate_global_per_hour = 10\n"
			   "moderators = 0123 4567 89ab cdef 0123  4567 89AB CDEF 0123 4567\n";

	(void) data;
	f->dir = g_dir_make_tmp("u-ratelimit-XXXXXX", &err);
	g_assert_no_error(err);
	g_assert_cmpint(config_load_text(f->dir, text, &f->cfg, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	db = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(db, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_blob_put_mem(f->st, "x", 1, f->sha, &err), ==, VULNID_OK);
}

static void
teardown(fixture *f, gconstpointer data)
{
	(void) data;
	store_close(f->st);
	config_free(f->cfg);
	for (const char *n = "vulnid.db\0vulnid.db-wal\0vulnid.db-shm\0vulnid.db-journal\0"; *n; n += strlen(n) + 1) {
		g_autofree char *p = g_build_filename(f->dir, n, NULL);

		g_unlink(p);
	}
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->dir);
}

typedef struct {
	const char *from, *env, *net, *verified, *key;
	const char *disposition;	/* NULL: request */
} mail;

/* A mail as intake records it, received at when. */
static void
insert(fixture *f, const char *when, const mail *m)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *key = g_strdup_printf("u-ratelimit-%d", f->n++);
	const char *at = m->env != NULL ? strrchr(m->env, '@') : NULL;
	g_autofree char *dom = at != NULL ? g_ascii_strdown(at + 1, -1) : NULL;
	store_message sm = { 0 };
	gint64 row = 0;

	sm.received = when;
	sm.raw_sha256 = f->sha;
	sm.dedup_key = key;
	sm.from_addr = m->from;
	sm.envelope_from = m->env;
	sm.disposition = m->disposition != NULL ? m->disposition : "request";
	sm.client_net = m->net;
	sm.sender_domain = dom;
	sm.from_verified = m->verified;
	g_assert_cmpint(store_message_insert(f->st, &sm, &row, &err), ==, VULNID_OK);
	if (m->key != NULL) {
		g_autofree char *rk = g_strdup_printf("replay-%d", f->n);

		g_assert_cmpint(store_intake_signature_insert(f->st, rk, m->key, row, when, &err), ==, VULNID_OK);
	}
	g_assert_no_error(err);
}

static void
insert_n(fixture *f, int n, const char *when, const mail *m)
{
	for (int i = 0; i < n; i++)
		insert(f, when, m);
}

/* Is mail m, handled at now, over a limit?  Which one in *which. */
static gboolean
over_at(fixture *f, const char *now, gboolean requests, const mail *m, const char **which)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(now, NULL);
	message msg = { 0 };
	mail_ctx c = { 0 };
	gboolean over = TRUE;
	const char *w = "unset";

	g_assert_nonnull(t);
	msg.from_addr = (char *) m->from;
	c.cfg = f->cfg;
	c.st = f->st;
	c.m = &msg;
	c.now_dt = t;
	c.envelope_sender = m->env;
	c.client_net = (char *) m->net;
	c.from_verified = m->verified;
	c.signer = m->key;
	g_assert_cmpint(ratelimit_check(&c, requests, &over, &w, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_true(over == (w != NULL));
	if (which != NULL)
		*which = w;
	return over;
}

static void
test_client_address(void)
{
	const char *cases[][2] = {
		{ "192.0.2.1", "192.0.2.1" },
		{ " 192.0.2.1 ", "192.0.2.1" },
		{ "[192.0.2.1]", "192.0.2.1" },
		{ "IPv6:2001:DB8::1", "2001:db8::1" },
		{ "ipv6:2001:db8:0:0:0:0:0:1", "2001:db8::1" },
		{ "[2001:db8::1]", "2001:db8::1" },
		{ "[IPv6:2001:db8::1]", "2001:db8::1" },
		{ "::ffff:192.0.2.1", "::ffff:192.0.2.1" },
		{ "", NULL },
		{ "unknown", NULL },
		{ "[UNAVAILABLE]", NULL },
		{ "[]", NULL },
		{ "fe80::1%eth0", NULL },
		{ "192.0.2.1.example", NULL },
		{ "192.0.2.256", NULL },
		{ "mx.example.net", NULL },
		{ "2001:db8::1 2001:db8::2", NULL },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *a = ratelimit_client_address(cases[i][0]);

		g_test_message("'%s'", cases[i][0]);
		g_assert_cmpstr(a, ==, cases[i][1]);
	}
	g_assert_null(ratelimit_client_address(NULL));
	{
		g_autofree char *huge = g_strnfill(100000, '1');
		g_autofree char *a = ratelimit_client_address(huge);

		g_assert_null(a);
	}
}

static void
test_client_net(void)
{
	const char *cases[][2] = {
		{ "192.0.2.1", "192.0.2.0/24" },
		{ "192.0.2.255", "192.0.2.0/24" },
		{ "10.0.0.1", "10.0.0.0/24" },
		{ "2001:db8::1", "2001:db8:0:0::/64" },
		{ "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64" },
		{ "2001:db8:1:2:ffff::", "2001:db8:1:2::/64" },
		/* IPv4-mapped: the IPv4 network, not one /64 for all of IPv4 */
		{ "::ffff:192.0.2.1", "192.0.2.0/24" },
		{ "::1", "0:0:0:0::/64" },
		{ "not an address", NULL },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *n = ratelimit_client_net(cases[i][0]);

		g_test_message("'%s'", cases[i][0]);
		g_assert_cmpstr(n, ==, cases[i][1]);
	}
	g_assert_null(ratelimit_client_net(NULL));
}

static void
test_since(void)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601("2026-01-01T00:10:00+01:00", NULL);
	g_autofree char *s = ratelimit_since(t, 3600);
	g_autofree char *z = ratelimit_since(t, 0);

	g_assert_cmpstr(s, ==, "2025-12-31T22:10:00Z");
	g_assert_cmpstr(z, ==, "2025-12-31T23:10:00Z");
}

/* The sender's own limit: rate_requests_per_hour requests, counted apart
 * from additions; the address in any case; From before envelope sender. */
static void
test_per_sender(fixture *f, gconstpointer data)
{
	const mail a = { "a@x.example", "bounce@y.example", NULL, NULL, NULL, NULL };
	const mail upper = { "A@X.Example", NULL, NULL, NULL, NULL, NULL };
	const mail add = { "b@x.example", NULL, NULL, NULL, NULL, "entry" };
	const mail b = { "b@x.example", NULL, NULL, NULL, NULL, NULL };
	const mail env_only = { NULL, "c@z.example", NULL, NULL, NULL, NULL };
	const char *which = NULL;

	(void) data;
	insert_n(f, 2, "2026-01-01T10:00:00Z", &a);
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &a, NULL));
	insert(f, "2026-01-01T10:01:00Z", &upper);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &a, &which));
	g_assert_cmpstr(which, ==, "From or envelope sender");
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &upper, NULL));
	/* additions are another budget, and below theirs */
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", FALSE, &a, NULL));
	/* two additions: over the additions, not the requests */
	insert_n(f, 2, "2026-01-01T10:00:00Z", &add);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", FALSE, &b, &which));
	g_assert_cmpstr(which, ==, "From or envelope sender");
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &b, NULL));
	/* the envelope sender when there is no From */
	insert_n(f, 3, "2026-01-01T10:00:00Z", &env_only);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &env_only, NULL));
	/* quarantined mail and bounces cost nothing */
	{
		const mail q = { "q@x.example", NULL, NULL, NULL, NULL, "quarantined" };
		const mail bo = { "q@x.example", NULL, NULL, NULL, NULL, "bounce" };

		insert_n(f, 5, "2026-01-01T10:00:00Z", &q);
		insert_n(f, 5, "2026-01-01T10:00:00Z", &bo);
		g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &q, NULL));
	}
}

/* The hour is counted in whole minutes: the minute that holds now - 1h
 * counts, the one before does not, across an hour and a year boundary. */
static void
test_hour_boundary(fixture *f, gconstpointer data)
{
	const mail a = { "a@x.example", NULL, NULL, NULL, NULL, NULL };
	const mail b = { "b@x.example", NULL, NULL, NULL, NULL, NULL };

	(void) data;
	insert(f, "2025-12-31T23:29:10Z", &a);
	insert(f, "2025-12-31T23:30:00Z", &a);
	insert(f, "2025-12-31T23:59:59Z", &a);
	/* now 00:29:50: since 23:29:50, the minute 23:29 counts whole */
	g_assert_true(over_at(f, "2026-01-01T00:29:50Z", TRUE, &a, NULL));
	g_assert_true(over_at(f, "2026-01-01T00:29:00Z", TRUE, &a, NULL));
	/* from 00:30 the minute 23:29 is out: two left */
	g_assert_false(over_at(f, "2026-01-01T00:30:00Z", TRUE, &a, NULL));
	/* now given in another zone is the same instant */
	g_assert_true(over_at(f, "2026-01-01T01:29:50+01:00", TRUE, &a, NULL));
	g_assert_false(over_at(f, "2026-01-01T01:30:00+01:00", TRUE, &a, NULL));
	/* mail stamped later still counts when the clock has stepped back */
	insert_n(f, 3, "2026-01-01T02:00:00Z", &b);
	g_assert_true(over_at(f, "2026-01-01T01:59:00Z", TRUE, &b, NULL));
	g_assert_true(over_at(f, "2026-01-01T02:59:59Z", TRUE, &b, NULL));
	g_assert_false(over_at(f, "2026-01-01T03:01:00Z", TRUE, &b, NULL));
}

/* Wider keys count requests and additions together, whoever sent them. */
static void
test_network_domain_everyone(fixture *f, gconstpointer data)
{
	const char *which = NULL;

	(void) data;
	for (int i = 0; i < 5; i++) {
		g_autofree char *from = g_strdup_printf("n%d@x%d.example", i, i);
		const mail m = { from, NULL, "192.0.2.0/24", NULL, NULL, i % 2 ? "entry" : "request" };

		insert(f, "2026-01-01T10:00:00Z", &m);
	}
	{
		const mail fresh = { "new@fresh.example", NULL, "192.0.2.0/24", NULL, NULL, NULL };
		const mail other = { "new@fresh.example", NULL, "198.51.100.0/24", NULL, NULL, NULL };
		const mail nonet = { "new@fresh.example", NULL, NULL, NULL, NULL, NULL };

		g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &fresh, &which));
		g_assert_cmpstr(which, ==, "client network");
		g_assert_true(over_at(f, "2026-01-01T10:30:00Z", FALSE, &fresh, NULL));
		g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &other, NULL));
		g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &nonet, NULL));
	}
	/* the envelope sender's domain, in any case: 7 */
	for (int i = 0; i < 4; i++) {
		g_autofree char *env = g_strdup_printf("d%d@Bulk.Example", i);
		const mail m = { NULL, env, NULL, NULL, NULL, NULL };

		insert(f, "2026-01-01T10:00:00Z", &m);
	}
	{
		const mail d = { "x@y.example", "z@bulk.example", NULL, NULL, NULL, NULL };

		/* 4 so far, 9 for everyone */
		g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &d, NULL));
		insert_n(f, 3, "2026-01-01T10:00:00Z", &(mail) { NULL, "e@bulk.example", NULL, NULL, NULL, "entry" });
		/* 7 for the domain, 12 for everyone: the domain is named first */
		g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &d, &which));
		g_assert_cmpstr(which, ==, "envelope sender domain");
	}
	{
		const mail anyone = { "new@else.example", "new@else.example", "203.0.113.0/24", NULL, NULL, NULL };

		g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &anyone, &which));
		g_assert_cmpstr(which, ==, "everyone");
		/* an hour on, nobody is limited */
		g_assert_false(over_at(f, "2026-01-01T11:01:00Z", TRUE, &anyone, NULL));
	}
}

/* A From the MTA authenticated has a budget of its own: forged mail naming
 * it does not use that up, and it is no longer counted as a bare address. */
static void
test_verified_from(fixture *f, gconstpointer data)
{
	const mail forged = { "ceo@x.example", NULL, NULL, NULL, NULL, NULL };
	const mail real = { "ceo@x.example", NULL, NULL, "dmarc", NULL, NULL };
	const char *which = NULL;

	(void) data;
	insert_n(f, 3, "2026-01-01T10:00:00Z", &forged);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &forged, NULL));
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &real, NULL));
	insert_n(f, 3, "2026-01-01T10:00:00Z", &real);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &real, &which));
	g_assert_cmpstr(which, ==, "authenticated From");
}

/* Signed mail counts by key; a moderator's key is never limited (the
 * configured fingerprint spaced and in lower case), nor a vendor's. */
static void
test_keys(fixture *f, gconstpointer data)
{
	const mail other = { "o@x.example", NULL, NULL, NULL, OTHER, NULL };
	const mail other_new_from = { "fresh@x.example", NULL, NULL, NULL, OTHER, NULL };
	const mail mod = { "m@x.example", NULL, "192.0.2.0/24", NULL, MOD, NULL };
	const mail mod_lower = { "m@x.example", NULL, NULL, NULL,
				 "0123456789abcdef0123456789abcdef01234567", NULL };
	const mail unsigned_m = { "m@x.example", NULL, NULL, NULL, NULL, NULL };
	const char *which = NULL;

	(void) data;
	insert_n(f, 3, "2026-01-01T10:00:00Z", &other);
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &other_new_from, &which));
	g_assert_cmpstr(which, ==, "key");
	/* 11 from the moderator: over every limit, but exempt */
	insert_n(f, 11, "2026-01-01T10:00:00Z", &mod);
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &mod, NULL));
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", FALSE, &mod, NULL));
	g_assert_false(over_at(f, "2026-01-01T10:30:00Z", TRUE, &mod_lower, NULL));
	/* the same address unsigned is limited */
	g_assert_true(over_at(f, "2026-01-01T10:30:00Z", TRUE, &unsigned_m, NULL));
}

/* A limit of 0 is no limit. */
static void
test_zero_is_unlimited(void)
{
	fixture f = { 0 };
	g_autoptr(GError) err = NULL;
	const char *text = "[instance]\nprefix = TEST\ndomain = robot.example\n"
			   "[lifecycle]\nrate_requests_per_hour = 0\nrate_network_per_hour = 0\n"
			   "rate_domain_per_hour = 0\nrate_global_per_hour = 0\n";
	const mail a = { "a@x.example", "a@x.example", "192.0.2.0/24", NULL, NULL, NULL };

	setup(&f, NULL);
	config_free(f.cfg);
	f.cfg = NULL;
	g_assert_cmpint(config_load_text(f.dir, text, &f.cfg, &err), ==, VULNID_OK);
	insert_n(&f, 400, "2026-01-01T10:00:00Z", &a);
	g_assert_false(over_at(&f, "2026-01-01T10:30:00Z", TRUE, &a, NULL));
	teardown(&f, NULL);
}

/* vulnid tick removes counters older than two hours (the clock fixed by
 * VULNID_TEST_NOW); the hour's stay and still count. */
static void
test_purge(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	const mail a = { "a@x.example", NULL, NULL, NULL, NULL, NULL };
	gint64 removed = -1;

	(void) data;
	insert(f, "2026-01-01T07:59:00Z", &a);
	insert(f, "2026-01-01T08:00:00Z", &a);
	insert_n(f, 2, "2026-01-01T09:30:00Z", &a);
	g_setenv("VULNID_TEST_NOW", "2026-01-01T10:00:30Z", TRUE);
	g_assert_cmpint(ratelimit_purge(f->st, &removed, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	/* the 07:59 minute for two keys (sender, everyone) */
	g_assert_cmpint(removed, ==, 2);
	g_assert_false(over_at(f, "2026-01-01T10:00:30Z", TRUE, &a, NULL));
	g_assert_true(over_at(f, "2026-01-01T08:59:00Z", TRUE, &a, NULL));
	g_assert_cmpint(ratelimit_purge(f->st, &removed, &err), ==, VULNID_OK);
	g_assert_cmpint(removed, ==, 0);
	g_unsetenv("VULNID_TEST_NOW");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/ratelimit/client-address", test_client_address);
	g_test_add_func("/ratelimit/client-net", test_client_net);
	g_test_add_func("/ratelimit/since", test_since);
	g_test_add("/ratelimit/per-sender", fixture, NULL, setup, test_per_sender, teardown);
	g_test_add("/ratelimit/hour-boundary", fixture, NULL, setup, test_hour_boundary, teardown);
	g_test_add("/ratelimit/network-domain-everyone", fixture, NULL, setup, test_network_domain_everyone,
		   teardown);
	g_test_add("/ratelimit/verified-from", fixture, NULL, setup, test_verified_from, teardown);
	g_test_add("/ratelimit/keys", fixture, NULL, setup, test_keys, teardown);
	g_test_add_func("/ratelimit/zero-is-unlimited", test_zero_is_unlimited);
	g_test_add("/ratelimit/purge", fixture, NULL, setup, test_purge, teardown);
	return g_test_run();
}
