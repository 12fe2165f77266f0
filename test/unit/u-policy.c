/* u-policy.c - unit tests for src/lib/policy.c: which addresses the
 * robot never writes to, and what policy_queue() lets go for each class
 * of mail (answers, unsolicited, asked for, the operator's), on a store in
 * a temporary directory with the clock fixed */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>
#include <gmime/gmime.h>

#include "config.h"
#include "outbox.h"
#include "policy.h"
#include "store-outbox.h"
#include "store-policy.h"
#include "store.h"

#define NOW "2026-01-01T10:00:00Z"
#define DAY_AGO "2025-12-31T10:00:00Z"

typedef struct {
	char *dir;
	vulnid_config *cfg;
	store *st;
} fixture;

static void
setup_with(fixture *f, const char *extra)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *db = NULL;
	g_autofree char *text = g_strdup_printf("[instance]\nprefix = TEST\ndomain = robot.example\n"
						"[crypto]\nsign = none\n[policy]\n%s", extra);

	f->dir = g_dir_make_tmp("u-policy-XXXXXX", &err);
	g_assert_no_error(err);
	g_assert_cmpint(config_load_text(f->dir, text, &f->cfg, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	db = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(db, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	{
		/* the mails that cause the robot's: rows 1 to 40 */
		char sha[65];

		g_assert_cmpint(store_blob_put_mem(f->st, "x", 1, sha, &err), ==, VULNID_OK);
		for (int i = 1; i <= 40; i++) {
			g_autofree char *key = g_strdup_printf("cause-%d", i);
			store_message sm = { 0 };
			gint64 row = 0;

			sm.received = NOW;
			sm.raw_sha256 = sha;
			sm.dedup_key = key;
			sm.disposition = "quarantined";
			g_assert_cmpint(store_message_insert(f->st, &sm, &row, &err), ==, VULNID_OK);
			g_assert_cmpint(row, ==, i);
		}
	}
}

static void
setup(fixture *f, gconstpointer data)
{
	setup_with(f, data != NULL ? data : "");
}

static void
teardown(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;

	(void) data;
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	store_close(f->st);
	config_free(f->cfg);
	for (const char *n = "vulnid.db\0vulnid.db-wal\0vulnid.db-shm\0vulnid.db-journal\0audit.log\0"; *n;
	     n += strlen(n) + 1) {
		g_autofree char *p = g_build_filename(f->dir, n, NULL);

		g_unlink(p);
	}
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->dir);
}

/* A mail of kind to one address (or to a list), body of n bytes; its id. */
static gint64
queue(fixture *f, gint64 cause, const char *kind, const char *to, const char *const *list, gsize n)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *body = g_strnfill(n, 'b');
	outbox_mail m = { 0 };
	gint64 id = -1;

	m.kind = kind;
	m.to_addr = to;
	m.to_list = list;
	m.subject = "s";
	m.body = body;
	vulnid_status s = policy_queue(f->st, f->cfg, cause, &m, &id, &err);

	g_assert_no_error(err);
	g_assert_cmpint(s, ==, VULNID_OK);
	g_assert_cmpint(id, >=, 0);
	return id;
}

/* The header of outbox item id names address as a recipient. */
static gboolean
sent_to(fixture *f, gint64 id, const char *address)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GBytes) b = NULL;
	g_autofree char *text = NULL;
	g_autofree char *to = g_strdup_printf("\nTo: %s", address);
	char *end;

	g_assert_cmpint(store_outbox_data(f->st, id, &b, &err), ==, VULNID_OK);
	text = g_strndup(g_bytes_get_data(b, NULL), g_bytes_get_size(b));
	end = strstr(text, "\r\n\r\n");
	if (end == NULL)
		end = strstr(text, "\n\n");
	if (end != NULL)
		*end = '\0';
	return strstr(text, to) != NULL || g_str_has_prefix(text, to + 1);
}

static gint64
unasked_to(fixture *f, const char *address)
{
	g_autoptr(GError) err = NULL;
	gint64 n = -1;

	g_assert_cmpint(store_policy_unasked_to_address(f->st, address, DAY_AGO, &n, &err), ==, VULNID_OK);
	return n;
}

static void
test_address_refusal(void)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(vulnid_config) lab = NULL;
	const char *ok[] = {
		"security@vendor.org", "Security@Vendor.ORG", "a.b+c@sub.vendor.co.uk", "x@xn--bcher-kva.de",
	};
	const char *refused[][2] = {
		{ "nobody", "not one mail address" },
		{ "@vendor.org", "not one mail address" },
		{ "\"a b\"@vendor.org", "a quoted local part" },
		{ "a\\@b@vendor.org", "a quoted local part" },
		{ "a%b@vendor.org", "a source route or relay syntax in the local part" },
		{ "a!b@vendor.org", "a source route or relay syntax in the local part" },
		{ "@a:b@vendor.org", "a source route or relay syntax in the local part" },
		{ "a b@vendor.org", "a source route or relay syntax in the local part" },
		{ "a@[192.0.2.1]", "an address literal" },
		{ "a@[IPv6:2001:db8::1]", "an address literal" },
		{ "a@192.0.2.1", "an address literal" },
		{ "a@3232235777", "an address literal" },
		{ "a@robot.example", "the robot's own domain" },
		{ "a@MX.Robot.Example", "the robot's own domain" },
		{ "a@localhost", "a single-label (local) name" },
		{ "a@vendor", "a single-label (local) name" },
		{ "a@localhost.vendor.org", "a local name" },
		{ "a@vendor.test", "a local or reserved name" },
		{ "a@vendor.EXAMPLE", "a local or reserved name" },
		{ "a@x.local", "a local or reserved name" },
		{ "a@x.onion", "a local or reserved name" },
		{ "a@printer.home.arpa", "a local or reserved name" },
	};

	g_assert_cmpint(config_load_text("/nonexistent/inst", "[instance]\nprefix = TEST\ndomain = robot.example\n",
					 &cfg, &err), ==, VULNID_OK);
	g_assert_cmpint(config_load_text("/nonexistent/inst", "[instance]\nprefix = TEST\ndomain = robot.example\n"
					 "[policy]\nallow_reserved_domains = .lab.test, vendor\n", &lab, &err), ==,
			VULNID_OK);
	for (gsize i = 0; i < G_N_ELEMENTS(ok); i++)
		g_assert_null(policy_address_refusal(cfg, ok[i]));
	for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
		g_test_message("%s", refused[i][0]);
		g_assert_cmpstr(policy_address_refusal(cfg, refused[i][0]), ==, refused[i][1]);
	}
	g_assert_cmpstr(policy_address_refusal(cfg, NULL), ==, "not one mail address");
	/* the operator may allow reserved names, not what is never mail */
	g_assert_null(policy_address_refusal(lab, "a@x.lab.test"));
	g_assert_null(policy_address_refusal(lab, "a@vendor"));
	g_assert_cmpstr(policy_address_refusal(lab, "a@xlab.test"), ==, "a local or reserved name");
	g_assert_cmpstr(policy_address_refusal(lab, "a@robot.example"), ==, "the robot's own domain");
	g_assert_cmpstr(policy_address_refusal(lab, "a@[192.0.2.1]"), ==, "an address literal");
}

/* Mail to subscribers and the operator's lists is not limited. */
static void
test_asked_operator(fixture *f, gconstpointer data)
{
	const char *list[] = { "s1@a.example.org", "s2@a.example.org", "s3@a.example.org", "s4@a.example.org",
			       NULL };

	(void) data;
	for (int i = 0; i < 3; i++) {
		g_assert_cmpint(queue(f, 0, "announce", NULL, list, 100), >, 0);
		g_assert_cmpint(queue(f, 0, "subscription", "s1@a.example.org", NULL, 100), >, 0);
	}
	/* and counts nowhere as unasked mail */
	g_assert_cmpint(unasked_to(f, "s1@a.example.org"), ==, 0);
}

/* Unsolicited mail: per address and per domain and day, the batch of one
 * mail counted too. */
static void
test_unsolicited_caps(fixture *f, gconstpointer data)
{
	const char *list[] = { "d1@vendor.org", "d2@vendor.org", "d3@vendor.org", "d4@vendor.org", NULL };
	gint64 id;

	(void) data;
	g_assert_cmpint(queue(f, 0, "vendor-notify", "sec@one.org", NULL, 100), >, 0);
	g_assert_cmpint(queue(f, 0, "notify-failed", "sec@one.org", NULL, 100), >, 0);
	g_assert_cmpint(queue(f, 0, "vendor-notify", "SEC@One.org", NULL, 100), ==, 0);
	g_assert_cmpint(unasked_to(f, "sec@one.org"), ==, 2);
	/* per_domain_per_day = 3: one mail to four addresses there reaches three */
	id = queue(f, 0, "vendor-notify", NULL, list, 100);
	g_assert_cmpint(id, >, 0);
	g_assert_cmpint(unasked_to(f, "d1@vendor.org") + unasked_to(f, "d2@vendor.org") +
			unasked_to(f, "d3@vendor.org") + unasked_to(f, "d4@vendor.org"), ==, 3);
	g_assert_cmpint(unasked_to(f, "d4@vendor.org"), ==, 0);
	g_assert_cmpint(queue(f, 0, "vendor-notify", "d5@vendor.org", NULL, 100), ==, 0);
	/* a day later the caps are free again */
	g_setenv("VULNID_TEST_NOW", "2026-01-02T10:00:01Z", TRUE);
	g_assert_cmpint(queue(f, 0, "vendor-notify", "sec@one.org", NULL, 100), >, 0);
	g_setenv("VULNID_TEST_NOW", NOW, TRUE);
}

/* One mail not signed by a known key makes the robot write to at most
 * third_party_per_mail third parties; signed mail is not bounded so. */
static void
test_third_party_per_mail(fixture *f, gconstpointer data)
{
	policy_mail unsigned_pm = { 1, 100, FALSE, "r@researcher.org", "r@researcher.org", FALSE, NULL, FALSE };
	policy_mail signed_pm = { 2, 100, TRUE, "r@researcher.org", "r@researcher.org", FALSE, NULL, TRUE };
	int sent = 0;

	(void) data;
	policy_mail_begin(&unsigned_pm);
	policy_mail_begin(&signed_pm);
	for (int i = 0; i < 5; i++) {
		g_autofree char *a = g_strdup_printf("sec@v%d.org", i);

		sent += queue(f, 1, "relay-to-vendor", a, NULL, 100) > 0;
	}
	g_assert_cmpint(sent, ==, 2);
	/* the sender's own domain is no third party */
	g_assert_cmpint(queue(f, 1, "relay-to-vendor", "other@researcher.org", NULL, 100), >, 0);
	sent = 0;
	for (int i = 0; i < 5; i++) {
		g_autofree char *a = g_strdup_printf("sec@w%d.org", i);

		sent += queue(f, 2, "relay-to-vendor", a, NULL, 100) > 0;
	}
	g_assert_cmpint(sent, ==, 5);
	policy_mail_end(1);
	policy_mail_end(2);
}

/* Third parties get no more bytes than amplification times the mail's
 * size (at least the floor): a mail over it is held whole. */
static void
test_amplification(fixture *f, gconstpointer data)
{
	policy_mail pm = { 7, 1000, FALSE, "r@researcher.org", NULL, FALSE, NULL, FALSE };
	const char *two[] = { "a@v1.org", "b@v2.org", NULL };

	(void) data;
	policy_mail_begin(&pm);
	/* 2 * (3800 + headers) > 2 * 4096 */
	g_assert_cmpint(queue(f, 7, "vendor-notify", NULL, two, 3800), ==, 0);
	g_assert_cmpint(unasked_to(f, "a@v1.org"), ==, 0);
	/* one of them fits, then the budget is spent */
	g_assert_cmpint(queue(f, 7, "vendor-notify", "a@v1.org", NULL, 3800), >, 0);
	g_assert_cmpint(queue(f, 7, "vendor-notify", "b@v2.org", NULL, 3800), ==, 0);
	/* mail to the sender is no third-party mail */
	g_assert_cmpint(queue(f, 7, "entry-reply", "r@researcher.org", NULL, 3000), >, 0);
	policy_mail_end(7);
	/* a bigger mail has a bigger budget */
	pm.cause = 8;
	pm.size = 10000;
	policy_mail_begin(&pm);
	g_assert_cmpint(queue(f, 8, "vendor-notify", NULL, two, 3800), >, 0);
	policy_mail_end(8);
}

/* An answer to a Reply-To in another domain is a third party's: past its
 * caps it goes to From instead. */
static void
test_answer_reply_to(fixture *f, gconstpointer data)
{
	policy_mail pm = { 3, 100, FALSE, "r@researcher.org", "bounce@lists.researcher.org", FALSE, NULL, FALSE };
	gint64 id;

	(void) data;
	policy_mail_begin(&pm);
	/* two to the victim this day already (per_address_per_day = 2) */
	g_assert_cmpint(queue(f, 0, "vendor-notify", "victim@elsewhere.org", NULL, 100), >, 0);
	g_assert_cmpint(queue(f, 0, "vendor-notify", "victim@elsewhere.org", NULL, 100), >, 0);
	id = queue(f, 3, "ack", "victim@elsewhere.org", NULL, 100);
	g_assert_cmpint(id, >, 0);
	g_assert_true(sent_to(f, id, "r@researcher.org"));
	g_assert_false(sent_to(f, id, "victim@elsewhere.org"));
	/* the envelope sender's domain is the sender's too */
	id = queue(f, 3, "ack", "x@lists.researcher.org", NULL, 100);
	g_assert_true(sent_to(f, id, "x@lists.researcher.org"));
	policy_mail_end(3);
	/* no From to fall back on: held */
	pm.cause = 4;
	pm.from = NULL;
	policy_mail_begin(&pm);
	g_assert_cmpint(queue(f, 4, "ack", "victim@elsewhere.org", NULL, 100), ==, 0);
	policy_mail_end(4);
}

/* Mail that looks like a loop gets loop_answers answers per address and
 * period; the last one says so; mail signed by a known key is not braked. */
static void
test_loop_brake(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	gint64 ids[3];

	(void) data;
	for (int i = 0; i < 3; i++) {
		policy_mail pm = { 10 + i, 100, FALSE, "bot@robot2.org", "bot@robot2.org", TRUE,
				   "it quotes the robot's signature line", TRUE };
		outbox_mail m = { 0 };

		policy_mail_begin(&pm);
		m.kind = "entry-reply";
		m.to_addr = "bot@robot2.org";
		m.subject = "s";
		m.body = "Hello.\n\n-- \nvulnid at robot.example\n";
		g_assert_cmpint(policy_queue(f->st, f->cfg, 10 + i, &m, &ids[i], &err), ==, VULNID_OK);
		policy_mail_end(10 + i);
	}
	g_assert_cmpint(ids[0], >, 0);
	g_assert_cmpint(ids[1], >, 0);
	g_assert_cmpint(ids[2], ==, 0);
	{
		g_autoptr(GBytes) b0 = NULL;
		g_autoptr(GBytes) b1 = NULL;

		g_assert_cmpint(store_outbox_data(f->st, ids[0], &b0, &err), ==, VULNID_OK);
		g_assert_cmpint(store_outbox_data(f->st, ids[1], &b1, &err), ==, VULNID_OK);
		g_assert_null(g_strstr_len(g_bytes_get_data(b0, NULL), (gssize) g_bytes_get_size(b0), "last answer"));
		g_assert_nonnull(g_strstr_len(g_bytes_get_data(b1, NULL), (gssize) g_bytes_get_size(b1),
					      "This is the last answer"));
	}
	/* another address is not braked; nor the same one for mail not suspect */
	{
		policy_mail pm = { 20, 100, FALSE, "bot@robot3.org", NULL, TRUE, "x", TRUE };
		policy_mail calm = { 21, 100, FALSE, "bot@robot2.org", NULL, FALSE, NULL, TRUE };
		policy_mail signed_pm = { 22, 100, TRUE, "bot@robot2.org", NULL, TRUE, "x", TRUE };

		policy_mail_begin(&pm);
		policy_mail_begin(&calm);
		policy_mail_begin(&signed_pm);
		g_assert_cmpint(queue(f, 20, "ack", "bot@robot3.org", NULL, 10), >, 0);
		g_assert_cmpint(queue(f, 21, "ack", "bot@robot2.org", NULL, 10), >, 0);
		g_assert_cmpint(queue(f, 22, "ack", "bot@robot2.org", NULL, 10), >, 0);
		policy_mail_end(20);
		policy_mail_end(21);
		policy_mail_end(22);
	}
	/* a period later it is answered again */
	{
		policy_mail pm = { 23, 100, FALSE, "bot@robot2.org", NULL, TRUE, "x", TRUE };

		policy_mail_begin(&pm);
		g_setenv("VULNID_TEST_NOW", "2026-01-02T10:00:01Z", TRUE);
		g_assert_cmpint(queue(f, 23, "ack", "bot@robot2.org", NULL, 10), >, 0);
		g_setenv("VULNID_TEST_NOW", NOW, TRUE);
		policy_mail_end(23);
	}
}

/* Answers to mail that does not prove its address: unverified_answer_bytes
 * per period and address, then one notice, then nothing; verified mail is
 * not counted. */
static void
test_unverified_budget(fixture *f, gconstpointer data)
{
	policy_mail pm = { 30, 100, FALSE, "u@forged.org", NULL, FALSE, NULL, FALSE };
	policy_mail ok = { 31, 100, FALSE, "v@proved.org", NULL, FALSE, NULL, TRUE };
	int sent = 0;
	gint64 ids[6];

	(void) data;
	policy_mail_begin(&pm);
	policy_mail_begin(&ok);
	for (int i = 0; i < 6; i++) {
		ids[i] = queue(f, 30, "error", "u@forged.org", NULL, 2500);
		sent += ids[i] > 0;
	}
	/* 4000 bytes: one answer of about 3 kB fits, the next does not */
	g_assert_cmpint(sent, ==, 1);
	g_assert_cmpint(ids[0], >, 0);
	{
		/* the notice went once, after the first held answer */
		g_autoptr(GError) err = NULL;
		g_autoptr(GBytes) b = NULL;

		g_assert_cmpint(store_outbox_data(f->st, ids[0] + 1, &b, &err), ==, VULNID_OK);
		g_assert_true(sent_to(f, ids[0] + 1, "u@forged.org"));
		g_assert_cmpint(store_outbox_data(f->st, ids[0] + 2, &b, &err), ==, VULNID_ERR_NOTFOUND);
	}
	/* the case of the address does not make another budget */
	g_assert_cmpint(queue(f, 30, "error", "U@Forged.ORG", NULL, 2500), ==, 0);
	for (int i = 0; i < 6; i++)
		g_assert_cmpint(queue(f, 31, "error", "v@proved.org", NULL, 2500), >, 0);
	/* the next period has a budget again */
	g_setenv("VULNID_TEST_NOW", "2026-01-02T10:00:00Z", TRUE);
	g_assert_cmpint(queue(f, 30, "error", "u@forged.org", NULL, 2500), >, 0);
	g_setenv("VULNID_TEST_NOW", NOW, TRUE);
	policy_mail_end(30);
	policy_mail_end(31);
}

int
main(int argc, char **argv)
{
	g_setenv("VULNID_TEST_NOW", NOW, TRUE);
	g_test_init(&argc, &argv, NULL);
	g_mime_init();
	g_test_add_func("/policy/address-refusal", test_address_refusal);
	g_test_add("/policy/asked-operator", fixture, "per_address_per_day = 1\nper_domain_per_day = 1\n", setup,
		   test_asked_operator, teardown);
	g_test_add("/policy/unsolicited-caps", fixture, "per_address_per_day = 2\nper_domain_per_day = 3\n", setup,
		   test_unsolicited_caps, teardown);
	g_test_add("/policy/third-party-per-mail", fixture, "third_party_per_mail = 2\n", setup,
		   test_third_party_per_mail, teardown);
	g_test_add("/policy/amplification", fixture, "amplification = 2\namplification_floor = 4096\n", setup,
		   test_amplification, teardown);
	g_test_add("/policy/answer-reply-to", fixture, "per_address_per_day = 2\n", setup, test_answer_reply_to,
		   teardown);
	g_test_add("/policy/loop-brake", fixture, "loop_answers = 2\nloop_hours = 24\n", setup, test_loop_brake,
		   teardown);
	g_test_add("/policy/unverified-budget", fixture, "unverified_answer_bytes = 4000\n"
		   "unverified_answer_hours = 24\n", setup, test_unverified_budget, teardown);
	return g_test_run();
}
