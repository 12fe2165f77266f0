/* u-canonjson.c - unit tests for src/util/canonjson.c */
#include "autoconfig.h"

#include <string.h>

#include "canonjson.h"

static void
check_str(const char *in, const char *want)
{
	g_autoptr(GString) s = g_string_new(NULL);

	canonjson_string(s, in);
	g_assert_cmpstr(s->str, ==, want);
}

static void
test_string_plain(void)
{
	check_str("", "\"\"");
	check_str("abc", "\"abc\"");
	check_str("with space / slash", "\"with space / slash\"");
	check_str(NULL, "null");
	check_str("null", "\"null\"");
}

static void
test_string_escapes(void)
{
	check_str("say \"hi\"", "\"say \\\"hi\\\"\"");
	check_str("back\\slash", "\"back\\\\slash\"");
	check_str("\b\t\n\f\r", "\"\\b\\t\\n\\f\\r\"");
	check_str("\x01", "\"\\u0001\"");
	check_str("\x0b", "\"\\u000b\"");
	check_str("\x0e\x1a\x1b\x1f", "\"\\u000e\\u001a\\u001b\\u001f\"");
	check_str(" ", "\" \"");	/* U+0020 is not escaped */
	check_str("<>&'", "\"<>&'\"");
}

static void
test_string_all_c0(void)
{
	/* Every C0 control: the five short forms, the rest \u00xx lower case. */
	for (int c = 1; c < 0x20; c++) {
		char in[2] = { (char) c, '\0' };
		g_autofree char *want = NULL;

		switch (c) {
		case '\b': want = g_strdup("\"\\b\""); break;
		case '\t': want = g_strdup("\"\\t\""); break;
		case '\n': want = g_strdup("\"\\n\""); break;
		case '\f': want = g_strdup("\"\\f\""); break;
		case '\r': want = g_strdup("\"\\r\""); break;
		default: want = g_strdup_printf("\"\\u%04x\"", (unsigned) c);
		}
		check_str(in, want);
	}
}

static void
test_string_literal(void)
{
	/* DEL, C1 and other non-ASCII characters are written as UTF-8. */
	check_str("\x7f", "\"\x7f\"");
	check_str("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	check_str("\xc2\x85", "\"\xc2\x85\"");
	check_str("\xe2\x80\xae", "\"\xe2\x80\xae\"");
	check_str("\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\"");
}

static void
test_string_invalid_utf8(void)
{
	g_autoptr(GString) s = g_string_new(NULL);

	check_str("a\xff" "b", "\"a\xef\xbf\xbd" "b\"");
	check_str("caf\xe9", "\"caf\xef\xbf\xbd\"");
	check_str("\xc3", "\"\xef\xbf\xbd\"");		/* truncated sequence */
	check_str("\xc0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\"");	/* overlong NUL */

	canonjson_string(s, "x\xfe\"\n");
	g_assert_true(g_utf8_validate(s->str, -1, NULL));
	g_assert_cmpstr(s->str, ==, "\"x\xef\xbf\xbd\\\"\\n\"");
}

static void
test_string_appends(void)
{
	g_autoptr(GString) s = g_string_new("[");

	canonjson_string(s, "a");
	g_string_append_c(s, ',');
	canonjson_string(s, NULL);
	g_string_append_c(s, ']');
	g_assert_cmpstr(s->str, ==, "[\"a\",null]");
}

static void
test_members(void)
{
	g_autoptr(GString) s = g_string_new("{");
	gboolean first = TRUE;

	canonjson_member_str(s, &first, "id", "TEST-2026-0001");
	g_assert_false(first);
	canonjson_member_int(s, &first, "n", 42);
	canonjson_member_str(s, &first, "none", NULL);
	canonjson_member_int(s, &first, "neg", -7);
	canonjson_member_int(s, &first, "zero", 0);
	canonjson_member_int(s, &first, "max", G_MAXINT64);
	canonjson_member_int(s, &first, "min", G_MININT64);
	canonjson_member_str(s, &first, "q\"k", "v\n");
	g_string_append_c(s, '}');
	g_assert_cmpstr(s->str, ==,
			"{\"id\":\"TEST-2026-0001\",\"n\":42,\"none\":null,\"neg\":-7,\"zero\":0,"
			"\"max\":9223372036854775807,\"min\":-9223372036854775808,"
			"\"q\\\"k\":\"v\\n\"}");
}

static void
test_member_first(void)
{
	g_autoptr(GString) a = g_string_new(NULL);
	g_autoptr(GString) b = g_string_new(NULL);
	g_autoptr(GString) c = g_string_new(NULL);
	gboolean first = TRUE;

	/* The first member of an object has no comma, whatever its type. */
	canonjson_member_int(a, &first, "n", 1);
	g_assert_cmpstr(a->str, ==, "\"n\":1");
	g_assert_false(first);

	first = TRUE;
	canonjson_member_str(b, &first, "s", "x");
	g_assert_cmpstr(b->str, ==, "\"s\":\"x\"");
	g_assert_false(first);

	/* Not first: a comma before the key. */
	canonjson_member_str(b, &first, "t", "");
	g_assert_cmpstr(b->str, ==, "\"s\":\"x\",\"t\":\"\"");

	first = FALSE;
	canonjson_key(c, &first, "k");
	g_assert_cmpstr(c->str, ==, ",\"k\":");
	g_assert_false(first);

	/* Nested objects use their own flag. */
	{
		g_autoptr(GString) s = g_string_new("{");
		gboolean outer = TRUE, inner = TRUE;

		canonjson_member_int(s, &outer, "a", 1);
		canonjson_key(s, &outer, "o");
		g_string_append_c(s, '{');
		canonjson_member_int(s, &inner, "b", 2);
		canonjson_member_int(s, &inner, "c", 3);
		g_string_append_c(s, '}');
		canonjson_member_str(s, &outer, "d", "e");
		g_string_append_c(s, '}');
		g_assert_cmpstr(s->str, ==, "{\"a\":1,\"o\":{\"b\":2,\"c\":3},\"d\":\"e\"}");
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/canonjson/string/plain", test_string_plain);
	g_test_add_func("/canonjson/string/escapes", test_string_escapes);
	g_test_add_func("/canonjson/string/all-c0", test_string_all_c0);
	g_test_add_func("/canonjson/string/literal", test_string_literal);
	g_test_add_func("/canonjson/string/invalid-utf8", test_string_invalid_utf8);
	g_test_add_func("/canonjson/string/appends", test_string_appends);
	g_test_add_func("/canonjson/members", test_members);
	g_test_add_func("/canonjson/member-first", test_member_first);
	return g_test_run();
}
