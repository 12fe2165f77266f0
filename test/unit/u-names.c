/* u-names.c - unit tests for lifecycle_text_names_entry(): when the
 * signed text of a mail names the entry it was sent to (a signature
 * counts only then) */
#include "autoconfig.h"

#include "lifecycle.h"

#define ID "TEST-2026-0042"

static void
test_names(void)
{
	g_assert_true(lifecycle_text_names_entry(ID, ID));
	g_assert_true(lifecycle_text_names_entry("About " ID ": more.", ID));
	g_assert_true(lifecycle_text_names_entry("about test-2026-0042, in lower case", ID));
	g_assert_true(lifecycle_text_names_entry("[" ID "]", ID));
	g_assert_true(lifecycle_text_names_entry("> On a date the robot wrote:\n>   " ID "\n", ID));
	g_assert_true(lifecycle_text_names_entry("request+" ID "@example.org", ID));
	g_assert_true(lifecycle_text_names_entry("first TEST-2026-00421, then " ID ".", ID));
}

static void
test_does_not_name(void)
{
	g_assert_false(lifecycle_text_names_entry(NULL, ID));
	g_assert_false(lifecycle_text_names_entry("", ID));
	g_assert_false(lifecycle_text_names_entry("nothing here", ID));
	g_assert_false(lifecycle_text_names_entry("TEST-2026-00421", ID));	/* a longer number */
	g_assert_false(lifecycle_text_names_entry("XTEST-2026-0042", ID));	/* a longer prefix */
	g_assert_false(lifecycle_text_names_entry("OTHER-TEST-2026-0042", ID));
	g_assert_false(lifecycle_text_names_entry(ID "a", ID));
	g_assert_false(lifecycle_text_names_entry("TEST-2026-004", ID));	/* cut short */
	g_assert_false(lifecycle_text_names_entry("TEST-2026-0041", ID));
	g_assert_false(lifecycle_text_names_entry("anything", NULL));
	g_assert_false(lifecycle_text_names_entry("anything", ""));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/names/names", test_names);
	g_test_add_func("/names/does-not-name", test_does_not_name);
	return g_test_run();
}
