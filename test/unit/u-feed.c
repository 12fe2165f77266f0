/* u-feed.c - unit tests for src/lib/feed.c, src/lib/export.c (facts) and src/lib/html.c (escaping) */
#include "autoconfig.h"

#include <string.h>

#include "export.h"
#include "feed.h"
#include "feed-export.h"
#include "feed-verify.h"
#include "html.h"

static char *
canon(const char *text)
{
	g_autoptr(JsonParser) p = json_parser_new();

	g_assert_true(json_parser_load_from_data(p, text, -1, NULL));
	return feed_json_canonical(json_parser_get_root(p));
}

static void
test_canonical_roundtrip(void)
{
	static const char *const same[] = {
		"{\"a\":1,\"b\":[true,false,null,\"x\\u0001\\n\"]}",
		"{\"z\":1,\"a\":2}",	/* member order is kept, not sorted */
		"[]", "{}", "\"caf\xc3\xa9 / \\\\ \\\"\"", "-42", "[[\"Vendor\",\"Foo <x>\"]]",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(same); i++) {
		g_autofree char *c = canon(same[i]);

		g_assert_cmpstr(c, ==, same[i]);
	}
}

static void
test_canonical_differs(void)
{
	g_autofree char *spaced = canon("{ \"a\" : 1 }");
	g_autofree char *escaped = canon("\"\\u0041\\/\"");
	g_autofree char *dup = canon("{\"a\":1,\"a\":2}");
	g_autofree char *frac = canon("[1.5]");

	/* Any text but the canonical one changes on the way through, which
	 * is how the verifier rejects it. */
	g_assert_cmpstr(spaced, ==, "{\"a\":1}");
	g_assert_cmpstr(escaped, ==, "\"A/\"");
	g_assert_cmpstr(dup, !=, "{\"a\":1,\"a\":2}");
	g_assert_null(frac);
}

static void
test_depth(void)
{
	g_assert_true(feed_json_depth_ok("[[[]]]", 6, 3));
	g_assert_false(feed_json_depth_ok("[[[[]]]]", 8, 3));
	g_assert_true(feed_json_depth_ok("[\"[[[[[[\"]", 10, 1));
	g_assert_true(feed_json_depth_ok("[\"\\\"[[[[\"]", 10, 1));
	g_assert_false(feed_json_depth_ok("{\"a\":{\"b\":{}}}", 14, 2));
	/* no stack is used: a million brackets are only counted */
	{
		gsize n = 1000000;
		g_autofree char *deep = g_malloc(n);

		memset(deep, '[', n);
		g_assert_false(feed_json_depth_ok(deep, n, 16));
	}
}

static void
test_line_hash(void)
{
	const char *body = "{\"feed\":\"vulnid-feed-1\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"";
	g_autofree char *h = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) body, strlen(body));
	g_autofree char *line = g_strdup_printf("%s,\"hash\":\"%s\"}", body, h);
	g_autofree char *got = feed_line_hash(line, strlen(line));
	g_autofree char *bad = g_strdup_printf("%s,\"hash\":\"%s\"} ", body, h);

	g_assert_cmpstr(got, ==, h);
	g_assert_null(feed_line_hash(bad, strlen(bad)));	/* hash must be the last member */
	g_assert_null(feed_line_hash("{}", 2));
}

static void
test_html_escape(void)
{
	g_autoptr(GString) s = g_string_new(NULL);

	html_append_text(s, "<script>alert('x')</script> & \"q\"", FALSE);
	g_assert_cmpstr(s->str, ==, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
	g_string_truncate(s, 0);
	/* RLO and other bidi overrides, C0 and C1 controls cannot act */
	html_append_text(s, "a\xe2\x80\xae" "b\x01" "c\xc2\x85" "d", FALSE);
	g_assert_cmpstr(s->str, ==, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd" "d");
	g_string_truncate(s, 0);
	html_append_text(s, "line1\nline2\t.", TRUE);
	g_assert_cmpstr(s->str, ==, "line1\nline2\t.");
	g_string_truncate(s, 0);
	html_append_text(s, "line1\nline2", FALSE);
	g_assert_cmpstr(s->str, ==, "line1 line2");
	g_string_truncate(s, 0);
	html_append_text(s, "bad \xff utf8", FALSE);
	g_assert_true(g_utf8_validate(s->str, -1, NULL));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/feed/canonical/roundtrip", test_canonical_roundtrip);
	g_test_add_func("/feed/canonical/differs", test_canonical_differs);
	g_test_add_func("/feed/depth", test_depth);
	g_test_add_func("/feed/line-hash", test_line_hash);
	g_test_add_func("/html/escape", test_html_escape);
	return g_test_run();
}
