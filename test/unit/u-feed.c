/* u-feed.c - unit tests for src/lib/feed.c, src/lib/export.c (facts) and src/lib/html.c (escaping) */
#include "autoconfig.h"

#include <string.h>

#include "export.h"
#include "feed.h"
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

static entry_record *
rec(gint64 seq, const char *kind, const char *role, const char *fields, const char *body)
{
	entry_record *r = g_new0(entry_record, 1);

	r->rowid = seq;
	r->seq = seq;
	r->created = g_strdup_printf("2026-01-0%dT00:00:00Z", (int) seq);
	r->kind = g_strdup(kind);
	r->role = g_strdup(role);
	r->author = g_strdup("someone@example.net");
	r->auth = g_strdup("{\"method\":\"none\"}");
	r->subject = g_strdup("A subject");
	r->fields = g_strdup(fields);
	r->body = g_strdup(body);
	r->sha256 = g_strdup("00");
	r->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	return r;
}

static void
record_free(gpointer p)
{
	entry_record *r = p;

	g_free(r->created);
	g_free(r->kind);
	g_free(r->role);
	g_free(r->author);
	g_free(r->auth);
	g_free(r->subject);
	g_free(r->fields);
	g_free(r->body);
	g_free(r->sha256);
	g_ptr_array_unref(r->attachments);
	g_free(r);
}

static entry *
make_entry(void)
{
	entry *e = g_new0(entry, 1);

	e->id = g_strdup("TEST-2026-0001");
	e->year = 2026;
	e->number = 1;
	e->digest = g_strdup("00");
	e->created = g_strdup("2026-01-01T00:00:00Z");
	e->records = g_ptr_array_new_with_free_func(record_free);
	return e;
}

static void
test_facts(void)
{
	g_autoptr(entry) e = make_entry();
	g_autoptr(export_facts) f = NULL;

	g_ptr_array_add(e->records, rec(1, "request", "creator",
		"[[\"Vendor\",\"Foo\"],[\"Product\",\"pkg:npm/%40scope/lib@1.0\"],[\"Version\",\"1.0\"],"
		"[\"Version\",\"< 2.0\"],[\"Alias\",\"CVE-2026-1\"],[\"Status\",\"fixed\"],[\"Spam\",\"yes\"],"
		"[\"CVSS\",\"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H\"],[\"Severity\",\"High\"]]",
		"the description"));
	g_ptr_array_add(e->records, rec(2, "vendor-response", "vendor",
		"[[\"Status\",\"Confirmed\"],[\"Fixed\",\"1.1\"]]", "We confirm."));
	g_ptr_array_add(e->records, rec(3, "addition", "creator",
		"[[\"Alias\",\"GHSA-xxxx\"],[\"Alias\",\"CVE-2026-1\"],[\"Duplicate-Of\",\"TEST-2026-0007\"]]", ""));
	f = export_facts_derive(e);
	g_assert_cmpstr(f->state, ==, "public");
	/* a creator's Status and Spam are not the vendor's or a moderator's word */
	g_assert_false(f->spam);
	g_assert_cmpstr(f->vendor_status, ==, "confirmed");
	g_assert_cmpint(f->vendor_status_seq, ==, 2);
	g_assert_cmpstr(f->vendor_statement, ==, "We confirm.");
	g_assert_cmpstr(f->fixed_in, ==, "1.1");
	g_assert_cmpuint(f->aliases->len, ==, 2);
	g_assert_cmpstr(f->duplicate_of, ==, "TEST-2026-0007");
	g_assert_cmpstr(f->ecosystem, ==, "npm");
	g_assert_cmpstr(f->package, ==, "@scope/lib");
	g_assert_cmpstr(f->severity, ==, "high");
	g_assert_cmpuint(f->ratings->len, ==, 1);
	g_assert_cmpstr(((export_rating *) g_ptr_array_index(f->ratings, 0))->type, ==, "CVSS_V3");
	g_assert_null(f->withdrawn);
	g_assert_cmpstr(f->modified, ==, "2026-01-03T00:00:00Z");
	g_clear_pointer(&f, export_facts_free);

	g_ptr_array_add(e->records, rec(4, "command", "moderator", "[[\"Spam\",\"yes\"],[\"Withdrawn\",\"bogus\"]]", ""));
	f = export_facts_derive(e);
	g_assert_true(f->spam);
	g_assert_cmpstr(f->state, ==, "spam");
	g_assert_false(export_entry_listed(f));
	g_assert_cmpstr(f->withdrawn, ==, "2026-01-04T00:00:00Z");
	g_assert_cmpstr(f->withdrawn_reason, ==, "bogus");
	g_clear_pointer(&f, export_facts_free);

	g_ptr_array_add(e->records, rec(5, "command", "moderator", "[[\"Spam\",\"no\"],[\"Withdrawn\",\"no\"]]", ""));
	f = export_facts_derive(e);
	g_assert_false(f->spam);
	g_assert_null(f->withdrawn);
}

static void
test_facts_no_ecosystem(void)
{
	g_autoptr(entry) e = make_entry();
	g_autoptr(export_facts) f = NULL;

	g_ptr_array_add(e->records, rec(1, "request", "creator",
		"[[\"Vendor\",\"Foo\"],[\"Product\",\"Foo Server\"],[\"Ecosystem\",\"Nonsense\"],"
		"[\"CVSS\",\"CVSS:3.1/AV:N\\\"<x>\"]]", "x"));
	f = export_facts_derive(e);
	g_assert_null(f->ecosystem);
	g_assert_null(f->package);
	g_assert_cmpuint(f->ratings->len, ==, 0);	/* not a vector: nothing carried over */
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
	g_test_add_func("/export/facts", test_facts);
	g_test_add_func("/export/facts-no-ecosystem", test_facts_no_ecosystem);
	return g_test_run();
}
