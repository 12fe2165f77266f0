/* u-hashcash.c - unit tests for src/lib/hashcash.c: stamps checked against
 * stamps minted by Debian's hashcash (hashcash -m -b 16 -t ...), and the
 * limit a stamp lifts */
#include "autoconfig.h"

#include <string.h>

#include "hashcash.h"

/* hashcash -m -q -b 16 -t 261204 request@example.org */
#define STAMP6 "1:16:261204:request@example.org::zts7hGOR+7bnMuDy:00000000000000000000000000000000000000000004kw"
/* the same with -z 10 -t 2612041530, and -z 12 -t 261204153045 */
#define STAMP10 "1:16:2612041530:request@example.org::S6U8zoOItlTdUsCK:0000000000000000000000000000000000000004xL"
#define STAMP12 "1:16:261204153045:request@example.org::AXA7QWixBs3do9B+:00000000000000000000000000000000000008BQ"
/* hashcash -m -q -b 20 -t 261204 request+TEST-2026-0001@example.org (it writes the resource in lower case) */
#define STAMP_ENTRY "1:20:261204:request+test-2026-0001@example.org::AAJQN4BPljS1bN14:0000000000000000000000000009n5/"

static const char *const ours[] = { "request@example.org", NULL };

static hashcash_stamp *
check_at(const char *stamp, guint bits, const char *const *resources, const char *now, const char **why)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(now, NULL);

	g_assert_nonnull(t);
	return hashcash_stamp_check(stamp, bits, resources, t, 2, why);
}

static void
test_good(void)
{
	const char *why = NULL;
	g_autoptr(hashcash_stamp) h = check_at(STAMP6, 16, ours, "2026-12-04T12:00:00Z", &why);
	g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, STAMP6, -1);

	g_assert_nonnull(h);
	g_assert_null(why);
	g_assert_cmpuint(h->bits, >=, 16);
	g_assert_cmpstr(h->sha256, ==, sha);
	g_assert_cmpstr(h->expires, ==, "2026-12-06T00:00:00Z");
	{
		g_autoptr(hashcash_stamp) h10 = check_at(STAMP10, 12, ours, "2026-12-05T12:00:00Z", &why);
		g_autoptr(hashcash_stamp) h12 = check_at(STAMP12, 16, ours, "2026-12-05T12:00:00Z", &why);

		g_assert_nonnull(h10);
		g_assert_cmpstr(h10->expires, ==, "2026-12-06T15:30:00Z");
		g_assert_nonnull(h12);
		g_assert_cmpstr(h12->expires, ==, "2026-12-06T15:30:45Z");
	}
}

static void
test_refused(void)
{
	static const char *const other[] = { "other@example.org", NULL };
	static const struct {
		const char *stamp;
		guint bits;
		const char *const *resources;
		const char *now;
		const char *why;
	} cases[] = {
		{ STAMP6, 17, ours, "2026-12-04T12:00:00Z", "worth fewer bits than the robot asks" },
		{ STAMP6, 16, other, "2026-12-04T12:00:00Z", "minted for another resource" },
		{ STAMP6, 16, ours, "2026-12-06T00:00:01Z", "expired" },
		{ STAMP6, 16, ours, "2026-12-02T23:59:59Z", "dated in the future" },
		/* the same stamp claiming more than its hash has */
		{ "1:24:261204:request@example.org::zts7hGOR+7bnMuDy:00000000000000000000000000000000000000000004kw", 16, ours,
		  "2026-12-04T12:00:00Z", "its hash has fewer zero bits than it claims" },
		/* one character changed: the hash is another */
		{ "1:16:261204:request@example.org::zts7hGOR+7bnMuDy:00000000000000000000000000000000000000000004kx", 16, ours,
		  "2026-12-04T12:00:00Z", "its hash has fewer zero bits than it claims" },
		{ "0:16:261204:request@example.org::zts7hGOR+7bnMuDy:x", 16, ours, "2026-12-04T12:00:00Z",
		  "not a version 1 stamp" },
		{ "1:16:261204:request@example.org::zts7hGOR+7bnMuDy", 16, ours, "2026-12-04T12:00:00Z",
		  "not a version 1 stamp" },
		{ "1:16:261304:request@example.org::a:0", 16, ours, "2026-12-04T12:00:00Z", "no valid date" },
		{ "1:16:26120:request@example.org::a:0", 16, ours, "2026-12-04T12:00:00Z", "no valid date" },
		{ "1:016x:261204:request@example.org::a:0", 16, ours, "2026-12-04T12:00:00Z",
		  "worth fewer bits than the robot asks" },
		{ " " STAMP6, 16, ours, "2026-12-04T12:00:00Z", "not one stamp" },
		{ "", 16, ours, "2026-12-04T12:00:00Z", "not one stamp" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		const char *why = NULL;
		hashcash_stamp *h = check_at(cases[i].stamp, cases[i].bits, cases[i].resources, cases[i].now, &why);

		g_test_message("%s", cases[i].stamp);
		g_assert_null(h);
		g_assert_cmpstr(why, ==, cases[i].why);
	}
}

static void
test_find(void)
{
	GError *err = NULL;
	vulnid_config *cfg = NULL;
	g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDateTime) now = g_date_time_new_utc(2026, 12, 4, 12, 0, 0);
	hashcash_stamp *h;

	config_load_text("/nonexistent", "[instance]\nprefix = TEST\ndomain = example.org\n[hashcash]\nbits = 16\n",
			 &cfg, &err);
	g_assert_no_error(err);
	g_ptr_array_add(values, g_strdup("garbage"));
	g_ptr_array_add(values, g_strdup(STAMP_ENTRY));
	/* for the entry's address only when the mail went there */
	g_assert_null(hashcash_find(cfg, values, "request@example.org", now));
	h = hashcash_find(cfg, values, "<REQUEST+TEST-2026-0001@example.org>", now);
	g_assert_nonnull(h);
	g_assert_cmpuint(h->bits, >=, 20);
	hashcash_stamp_free(h);
	/* not an address of the robot's */
	g_assert_null(hashcash_find(cfg, values, "request+TEST-2026-0001@example.org.evil.example", now));
	/* off */
	cfg->hashcash_bits = 0;
	g_assert_null(hashcash_find(cfg, values, "request+TEST-2026-0001@example.org", now));
	config_free(cfg);
}

static void
test_limit(void)
{
	GError *err = NULL;
	vulnid_config *cfg = NULL;

	config_load_text("/nonexistent", "[instance]\nprefix = TEST\ndomain = example.org\n"
			 "[hashcash]\nceiling_per_hour = 50\n", &cfg, &err);
	g_assert_no_error(err);
	g_assert_cmpint(cfg->hashcash_bits, ==, 20);
	g_assert_cmpint(hashcash_limit(cfg, FALSE, 10), ==, 10);
	g_assert_cmpint(hashcash_limit(cfg, TRUE, 10), ==, 50);
	g_assert_cmpint(hashcash_limit(cfg, TRUE, 100), ==, 100);
	g_assert_cmpint(hashcash_limit(cfg, TRUE, 0), ==, 0);	/* no limit stays none */
	cfg->hashcash_bits = 0;
	g_assert_cmpint(hashcash_limit(cfg, TRUE, 10), ==, 10);
	config_free(cfg);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/hashcash/good", test_good);
	g_test_add_func("/hashcash/refused", test_refused);
	g_test_add_func("/hashcash/find", test_find);
	g_test_add_func("/hashcash/limit", test_limit);
	return g_test_run();
}
