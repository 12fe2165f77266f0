/* u-ids.c - unit tests for src/util/ids.c */
#include "autoconfig.h"

#include <string.h>

#include "ids.h"

static void
test_prefix(void)
{
	g_assert_true(ids_prefix_valid("TEST"));
	g_assert_true(ids_prefix_valid("AB"));
	g_assert_true(ids_prefix_valid("A1"));
	g_assert_true(ids_prefix_valid("12"));
	g_assert_true(ids_prefix_valid("ABCDEFGHIJKLMNOP"));	/* 16 */
	g_assert_true(ids_prefix_valid("CVEX"));
	g_assert_true(ids_prefix_valid("XCVE"));

	g_assert_false(ids_prefix_valid(NULL));
	g_assert_false(ids_prefix_valid(""));
	g_assert_false(ids_prefix_valid("A"));
	g_assert_false(ids_prefix_valid("ABCDEFGHIJKLMNOPQ"));	/* 17 */
	g_assert_false(ids_prefix_valid("CVE"));
	g_assert_false(ids_prefix_valid("test"));
	g_assert_false(ids_prefix_valid("Test"));
	g_assert_false(ids_prefix_valid("cve"));
	g_assert_false(ids_prefix_valid("TE-ST"));
	g_assert_false(ids_prefix_valid("TE ST"));
	g_assert_false(ids_prefix_valid("TE_ST"));
	g_assert_false(ids_prefix_valid("T\xc3\x89ST"));	/* TÉST */
}

static void
test_format(void)
{
	struct {
		const char *prefix;
		int year;
		gint64 number;
		const char *want;
	} cases[] = {
		{ "TEST", 2026, 1, "TEST-2026-0001" },
		{ "TEST", 2026, 42, "TEST-2026-0042" },
		{ "TEST", 2026, 999, "TEST-2026-0999" },
		{ "TEST", 2026, 9999, "TEST-2026-9999" },
		{ "TEST", 2026, 12345, "TEST-2026-12345" },
		{ "AB", 1999, 1000000, "AB-1999-1000000" },
		{ "X1", 2026, IDS_NUMBER_MAX, "X1-2026-999999999999999" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *s = ids_format(cases[i].prefix, cases[i].year, cases[i].number);

		g_assert_cmpstr(s, ==, cases[i].want);
	}
}

static void
test_parse_ok(void)
{
	g_autofree char *prefix = NULL;
	int year = 0;
	gint64 number = 0;

	g_assert_true(ids_parse("TEST-2026-0001", &prefix, &year, &number));
	g_assert_cmpstr(prefix, ==, "TEST");
	g_assert_cmpint(year, ==, 2026);
	g_assert_cmpint(number, ==, 1);
	g_clear_pointer(&prefix, g_free);

	g_assert_true(ids_parse("A1-1999-12345", &prefix, &year, &number));
	g_assert_cmpstr(prefix, ==, "A1");
	g_assert_cmpint(year, ==, 1999);
	g_assert_cmpint(number, ==, 12345);
	g_clear_pointer(&prefix, g_free);

	g_assert_true(ids_parse("TEST-2026-0000", NULL, NULL, &number));
	g_assert_cmpint(number, ==, 0);
	g_assert_true(ids_parse("TEST-2026-999999999999999", NULL, NULL, &number));
	g_assert_cmpint(number, ==, IDS_NUMBER_MAX);

	/* All out parameters may be NULL. */
	g_assert_true(ids_parse("TEST-2026-0042", NULL, NULL, NULL));
}

static void
test_parse_roundtrip(void)
{
	const gint64 numbers[] = { 1, 9, 10, 999, 1000, 9999, 10000, 123456, 1000000000, IDS_NUMBER_MAX };
	const char *prefixes[] = { "TEST", "AB", "ABCDEFGHIJKLMNOP", "X9" };

	for (gsize p = 0; p < G_N_ELEMENTS(prefixes); p++)
		for (gsize i = 0; i < G_N_ELEMENTS(numbers); i++) {
			g_autofree char *id = ids_format(prefixes[p], 2026, numbers[i]);
			g_autofree char *prefix = NULL;
			g_autofree char *again = NULL;
			int year = 0;
			gint64 number = 0;

			g_assert_true(ids_parse(id, &prefix, &year, &number));
			g_assert_cmpstr(prefix, ==, prefixes[p]);
			g_assert_cmpint(year, ==, 2026);
			g_assert_cmpint(number, ==, numbers[i]);
			again = ids_format(prefix, year, number);
			g_assert_cmpstr(again, ==, id);
		}
}

static void
test_parse_bad(void)
{
	const char *bad[] = {
		"", "TEST", "TEST-", "TEST-2026", "TEST-2026-", "-2026-0001", "TEST--0001",
		"TEST-2026-001",		/* three digits */
		"TEST-2026-1",
		"TEST-2026-00012",		/* padding beyond four digits */
		"TEST-2026-01234",
		"test-2026-0001",		/* lower case */
		"Test-2026-0001",
		"CVE-2026-0001",		/* never a CVE identifier */
		"A-2026-0001",			/* prefix too short */
		"ABCDEFGHIJKLMNOPQ-2026-0001",	/* prefix too long */
		"TEST-226-0001", "TEST-20266-0001", "TEST-20a6-0001",
		"TEST-2026-00a1", "TEST-2026-0001-1", "TEST-2026-0001 ", " TEST-2026-0001",
		"TEST-2026-+001", "TEST-2026-1000000000000000",	/* 16 digits */
		"TEST_2026_0001",
	};
	g_autofree char *prefix = NULL;
	int year = -1;
	gint64 number = -1;

	g_assert_false(ids_parse(NULL, NULL, NULL, NULL));
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		if (ids_parse(bad[i], &prefix, &year, &number))
			g_error("ids_parse accepted '%s'", bad[i]);
		/* Nothing is written on failure. */
		g_assert_null(prefix);
		g_assert_cmpint(year, ==, -1);
		g_assert_cmpint(number, ==, -1);
	}
}

static GArray *
blocks_ok(const char *spec)
{
	GArray *blocks = NULL;
	g_autoptr(GError) err = NULL;

	if (!ids_blocks_parse(spec, &blocks, &err))
		g_error("ids_blocks_parse('%s'): %s", spec, err != NULL ? err->message : "(no error)");
	g_assert_no_error(err);
	g_assert_nonnull(blocks);
	return blocks;
}

static void
assert_block(const GArray *blocks, guint i, gint64 first, gint64 last)
{
	g_assert_cmpuint(i, <, blocks->len);
	g_assert_cmpint(g_array_index(blocks, ids_block, i).first, ==, first);
	g_assert_cmpint(g_array_index(blocks, ids_block, i).last, ==, last);
}

static void
test_blocks_parse(void)
{
	g_autoptr(GArray) open = blocks_ok("1-");
	g_autoptr(GArray) two = blocks_ok("1-999,5000-5999");
	g_autoptr(GArray) single = blocks_ok("7");
	g_autoptr(GArray) mixed = blocks_ok(" 3 , 10 - 20 ,100- ");
	g_autoptr(GArray) one = blocks_ok("5-5");

	g_assert_cmpuint(open->len, ==, 1);
	assert_block(open, 0, 1, IDS_NUMBER_MAX);

	g_assert_cmpuint(two->len, ==, 2);
	assert_block(two, 0, 1, 999);
	assert_block(two, 1, 5000, 5999);

	g_assert_cmpuint(single->len, ==, 1);
	assert_block(single, 0, 7, 7);

	g_assert_cmpuint(mixed->len, ==, 3);
	assert_block(mixed, 0, 3, 3);
	assert_block(mixed, 1, 10, 20);
	assert_block(mixed, 2, 100, IDS_NUMBER_MAX);

	g_assert_cmpuint(one->len, ==, 1);
	assert_block(one, 0, 5, 5);
}

static void
test_blocks_parse_bad(void)
{
	const char *bad[] = {
		"", "1-10,5-20",	/* overlap */
		"1-10,10-20",		/* touching is overlap */
		"1-,5-10",		/* after an open-ended block */
		"10-1",			/* descending range */
		"20-30,1-10",		/* descending order */
		"0", "0-5", "1-0",	/* numbers start at 1 */
		"abc", "1-x", "x-1", "-5", "1--5", "1-5-", ",", "1,", ",1", "1,,2",
		"+1", "1-+5", "1.5", "1 2", "0x10",
		"1000000000000000",	/* beyond IDS_NUMBER_MAX */
		"1-99999999999999999999",
	};
	GArray *blocks = NULL;

	g_assert_false(ids_blocks_parse(NULL, &blocks, NULL));
	g_assert_null(blocks);
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) err = NULL;

		if (ids_blocks_parse(bad[i], &blocks, &err))
			g_error("ids_blocks_parse accepted '%s'", bad[i]);
		g_assert_null(blocks);
		g_assert_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE);
	}
}

static gint64
next_of(const GArray *blocks, gint64 last)
{
	gint64 next = -1;

	g_assert_true(ids_blocks_next(blocks, last, &next));
	return next;
}

static void
test_blocks_next(void)
{
	g_autoptr(GArray) two = blocks_ok("1-999,5000-5999");
	g_autoptr(GArray) open = blocks_ok("1-");
	g_autoptr(GArray) later = blocks_ok("100-199,300-");
	g_autoptr(GArray) singles = blocks_ok("5,7");
	gint64 next = -1;

	/* first number */
	g_assert_cmpint(next_of(two, 0), ==, 1);
	g_assert_cmpint(next_of(open, 0), ==, 1);
	g_assert_cmpint(next_of(later, 0), ==, 100);
	g_assert_cmpint(next_of(singles, 0), ==, 5);

	/* inside a block */
	g_assert_cmpint(next_of(two, 1), ==, 2);
	g_assert_cmpint(next_of(two, 500), ==, 501);
	g_assert_cmpint(next_of(two, 998), ==, 999);
	g_assert_cmpint(next_of(two, 5000), ==, 5001);
	g_assert_cmpint(next_of(open, 12345), ==, 12346);
	g_assert_cmpint(next_of(later, 150), ==, 151);

	/* to the next block */
	g_assert_cmpint(next_of(two, 999), ==, 5000);
	g_assert_cmpint(next_of(two, 2000), ==, 5000);	/* between blocks */
	g_assert_cmpint(next_of(later, 199), ==, 300);
	g_assert_cmpint(next_of(later, 250), ==, 300);
	g_assert_cmpint(next_of(later, 1000000), ==, 1000001);
	g_assert_cmpint(next_of(singles, 5), ==, 7);
	g_assert_cmpint(next_of(singles, 6), ==, 7);

	/* exhaustion */
	next = -1;
	g_assert_false(ids_blocks_next(two, 5999, &next));
	g_assert_cmpint(next, ==, -1);
	g_assert_false(ids_blocks_next(singles, 7, &next));
	g_assert_false(ids_blocks_next(open, IDS_NUMBER_MAX, &next));
	g_assert_cmpint(next_of(open, IDS_NUMBER_MAX - 1), ==, IDS_NUMBER_MAX);

	/* last beyond all blocks (e.g. the blocks were shrunk) */
	g_assert_false(ids_blocks_next(two, 6000, &next));
	g_assert_false(ids_blocks_next(two, 100000, &next));
	g_assert_false(ids_blocks_next(singles, 8, &next));
	g_assert_cmpint(next, ==, -1);
}

static void
test_blocks_walk(void)
{
	/* Walking from 0 visits every number of every block in order. */
	g_autoptr(GArray) blocks = blocks_ok("2-4,7,10-11");
	const gint64 want[] = { 2, 3, 4, 7, 10, 11 };
	gint64 last = 0;

	for (gsize i = 0; i < G_N_ELEMENTS(want); i++) {
		g_assert_true(ids_blocks_next(blocks, last, &last));
		g_assert_cmpint(last, ==, want[i]);
	}
	g_assert_false(ids_blocks_next(blocks, last, &last));
	g_assert_cmpint(last, ==, 11);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/ids/prefix", test_prefix);
	g_test_add_func("/ids/format", test_format);
	g_test_add_func("/ids/parse/ok", test_parse_ok);
	g_test_add_func("/ids/parse/roundtrip", test_parse_roundtrip);
	g_test_add_func("/ids/parse/bad", test_parse_bad);
	g_test_add_func("/ids/blocks/parse", test_blocks_parse);
	g_test_add_func("/ids/blocks/parse-bad", test_blocks_parse_bad);
	g_test_add_func("/ids/blocks/next", test_blocks_next);
	g_test_add_func("/ids/blocks/walk", test_blocks_walk);
	return g_test_run();
}
