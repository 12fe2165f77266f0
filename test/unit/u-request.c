/* u-request.c - unit tests for src/lib/request.c */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "request.h"

static GDateTime *now_dt;	/* 2026-12-03T00:00:00Z */
static const request_limits lim_default = { 10, 20, 200 };

static request *
parse_lim(const char *text, const char *subject, const request_limits *lim)
{
	request *r = request_parse(text, subject, lim, now_dt);

	g_assert_nonnull(r);
	g_assert_nonnull(r->blocks);
	g_assert_nonnull(r->errors);
	g_assert_nonnull(r->warnings);
	return r;
}

static request *
parse(const char *text)
{
	return parse_lim(text, "subject", &lim_default);
}

static const request_block *
block(const request *r, guint i)
{
	g_assert_cmpuint(i, <, r->blocks->len);
	return g_ptr_array_index(r->blocks, i);
}

static const request_field *
field(const request_block *b, guint i)
{
	g_assert_cmpuint(i, <, b->fields->len);
	return g_ptr_array_index(b->fields, i);
}

static void
assert_field(const request_block *b, guint i, const char *key, const char *value)
{
	const request_field *f = field(b, i);

	g_assert_cmpstr(f->key, ==, key);
	g_assert_cmpstr(f->value, ==, value);
}

/* Whether one of the messages contains needle. */
static gboolean
has_msg(const GPtrArray *msgs, const char *needle)
{
	for (guint i = 0; i < msgs->len; i++)
		if (strstr(g_ptr_array_index(msgs, i), needle) != NULL)
			return TRUE;
	return FALSE;
}

static void
assert_clean(const request *r)
{
	for (guint i = 0; i < r->errors->len; i++)
		g_test_message("error: %s", (const char *) g_ptr_array_index(r->errors, i));
	for (guint i = 0; i < r->warnings->len; i++)
		g_test_message("warning: %s", (const char *) g_ptr_array_index(r->warnings, i));
	g_assert_cmpuint(r->errors->len, ==, 0);
	g_assert_cmpuint(r->warnings->len, ==, 0);
}

/* One block, one field: the errors it gives. */
static request *
parse_field(const char *key, const char *value)
{
	g_autofree char *text = g_strdup_printf("%s: %s\n", key, value);

	return parse(text);
}

/* --- fields -------------------------------------------------------------- */

static void
test_fields(void)
{
	g_autoptr(request) r = parse("Vendor: Example Corp\n"
				     "Product: Widget\n"
				     "Version: 1.0\n"
				     "Title: XSS in login\n");
	const request_block *b;

	assert_clean(r);
	g_assert_false(r->is_help);
	g_assert_cmpuint(r->blocks->len, ==, 1);
	b = block(r, 0);
	g_assert_cmpuint(b->fields->len, ==, 4);
	assert_field(b, 0, "Vendor", "Example Corp");
	assert_field(b, 1, "Product", "Widget");
	assert_field(b, 2, "Version", "1.0");
	assert_field(b, 3, "Title", "XSS in login");
	g_assert_cmpstr(b->description, ==, "");
	g_assert_cmpstr(request_block_get(b, "Vendor"), ==, "Example Corp");
	g_assert_cmpstr(request_block_get(b, "vendor"), ==, "Example Corp");
	g_assert_null(request_block_get(b, "Type"));
}

static void
test_fields_canonical(void)
{
	g_autoptr(request) r = parse("vendor: a\n"
				     "PRODUCT: b\n"
				     "vErSiOn: c\n"
				     "vendor-contact: sec@example.org\n"
				     "ANONYMOUS: yes\n"
				     "reference: https://example.org/\n"
				     "type: XSS\n"
				     "embargo: no\n"
				     "title: t\n");
	const request_block *b;

	assert_clean(r);
	b = block(r, 0);
	g_assert_cmpuint(b->fields->len, ==, 9);
	assert_field(b, 0, "Vendor", "a");
	assert_field(b, 1, "Product", "b");
	assert_field(b, 2, "Version", "c");
	assert_field(b, 3, "Vendor-Contact", "sec@example.org");
	assert_field(b, 4, "Anonymous", "yes");
	assert_field(b, 5, "Reference", "https://example.org/");
	assert_field(b, 6, "Type", "XSS");
	assert_field(b, 7, "Embargo", "no");
	assert_field(b, 8, "Title", "t");
}

static void
test_fields_unknown(void)
{
	g_autoptr(request) r = parse("x-custom: one\n"
				     "CVSS-Vector: CVSS:3.1/AV:N\n"
				     "Vendor: v\n");
	const request_block *b;

	assert_clean(r);
	b = block(r, 0);
	g_assert_cmpuint(b->fields->len, ==, 3);
	assert_field(b, 0, "x-custom", "one");
	assert_field(b, 1, "CVSS-Vector", "CVSS:3.1/AV:N");
	assert_field(b, 2, "Vendor", "v");
}

static void
test_fields_values(void)
{
	g_autoptr(request) r = parse("Vendor:\tTabbed   value  \n"
				     "Product:\n"
				     "Title: a\x01" "b\xe2\x80\xae" "c\r\n"
				     "Type: caf\xc3\xa9\n");
	const request_block *b;

	b = block(r, 0);
	g_assert_cmpuint(b->fields->len, ==, 4);
	assert_field(b, 0, "Vendor", "Tabbed value");
	assert_field(b, 1, "Product", "");
	assert_field(b, 2, "Title", "a b c");
	assert_field(b, 3, "Type", "caf\xc3\xa9");
	g_assert_cmpuint(r->errors->len, ==, 0);
}

static void
test_fields_repeatable(void)
{
	g_autoptr(request) r = parse("Version: 1.0\n"
				     "Version: 1.1\n"
				     "Reference: https://a.example/\n"
				     "reference: https://b.example/\n"
				     "Version: 2.0\n");
	const request_block *b;

	assert_clean(r);
	b = block(r, 0);
	g_assert_cmpuint(b->fields->len, ==, 5);
	assert_field(b, 0, "Version", "1.0");
	assert_field(b, 1, "Version", "1.1");
	assert_field(b, 2, "Reference", "https://a.example/");
	assert_field(b, 3, "Reference", "https://b.example/");
	assert_field(b, 4, "Version", "2.0");
	g_assert_cmpstr(request_block_get(b, "Version"), ==, "1.0");
}

static void
test_fields_duplicate(void)
{
	g_autoptr(request) r = parse("Vendor: first\n"
				     "vendor: second\n"
				     "Title: t\n");
	const request_block *b = block(r, 0);

	g_assert_cmpuint(r->errors->len, ==, 0);
	g_assert_cmpuint(r->warnings->len, ==, 1);
	g_assert_true(has_msg(r->warnings, "Vendor given more than once"));
	/* both kept; the first one counts */
	g_assert_cmpuint(b->fields->len, ==, 3);
	assert_field(b, 1, "Vendor", "second");
	g_assert_cmpstr(request_block_get(b, "Vendor"), ==, "first");
}

static void
test_fields_continuation(void)
{
	g_autoptr(request) r = parse("Title: a long\n"
				     "  title that goes\n"
				     "\ton\n"
				     "Vendor: v\n"
				     "\n"
				     "  indented description\n");
	const request_block *b = block(r, 0);

	assert_clean(r);
	g_assert_cmpuint(b->fields->len, ==, 2);
	assert_field(b, 0, "Title", "a long title that goes on");
	assert_field(b, 1, "Vendor", "v");
	g_assert_cmpstr(b->description, ==, "  indented description");
}

static void
test_fields_not_field(void)
{
	/* "http://x" at the start of a line is text, not a field "http". */
	{
		g_autoptr(request) r = parse("http://example.org/advisory\nmore\n");
		const request_block *b = block(r, 0);

		assert_clean(r);
		g_assert_cmpuint(b->fields->len, ==, 0);
		g_assert_cmpstr(b->description, ==, "http://example.org/advisory\nmore");
	}
	{
		g_autoptr(request) r = parse("Vendor: v\nhttps://example.org/\n");
		const request_block *b = block(r, 0);

		g_assert_cmpuint(b->fields->len, ==, 1);
		g_assert_cmpstr(b->description, ==, "https://example.org/");
	}
	/* other lines that are not fields */
	{
		const char *texts[] = {
			"Vendor:x\n", "1abc: x\n", "-x: y\n", "a b: c\n", ": x\n", " Vendor: x\n",
			"Vendor : x\n", "Ve_ndor: x\n",
		};

		for (gsize i = 0; i < G_N_ELEMENTS(texts); i++) {
			g_autoptr(request) r = parse(texts[i]);

			g_assert_cmpuint(block(r, 0)->fields->len, ==, 0);
		}
	}
	/* a name of 64 characters is still a field, 65 is not */
	{
		g_autofree char *n64 = g_strnfill(64, 'a');
		g_autofree char *n65 = g_strnfill(65, 'a');
		g_autofree char *t64 = g_strdup_printf("%s: x\n", n64);
		g_autofree char *t65 = g_strdup_printf("%s: x\n", n65);
		g_autoptr(request) r64 = parse(t64);
		g_autoptr(request) r65 = parse(t65);

		g_assert_cmpuint(block(r64, 0)->fields->len, ==, 1);
		g_assert_cmpuint(block(r65, 0)->fields->len, ==, 0);
	}
}

/* --- descriptions and blocks --------------------------------------------- */

static void
test_description(void)
{
	{
		g_autoptr(request) r = parse("\n\nVendor: v\nProduct: p\n\n\nThe description\n\n  second paragraph  \n\n\n");
		const request_block *b = block(r, 0);

		assert_clean(r);
		g_assert_cmpuint(b->fields->len, ==, 2);
		g_assert_cmpstr(b->description, ==, "The description\n\n  second paragraph");
	}
	{
		/* The first line that is not a field ends the fields. */
		g_autoptr(request) r = parse("Vendor: v\nSome text\nProduct: p\n");
		const request_block *b = block(r, 0);

		g_assert_cmpuint(b->fields->len, ==, 1);
		g_assert_cmpstr(b->description, ==, "Some text\nProduct: p");
	}
	{
		/* Known fields double-spaced (Outlook's paragraphs) go on; an
		 * unknown one after a blank line belongs to the description. */
		g_autoptr(request) r = parse("Vendor: v\n\nProduct: p\n\n\nVersion: 1\n\nNote: n\n");
		const request_block *b = block(r, 0);

		g_assert_cmpuint(b->fields->len, ==, 3);
		g_assert_cmpstr(request_block_get(b, "Version"), ==, "1");
		g_assert_cmpstr(b->description, ==, "Note: n");
	}
	{
		/* a field after many blank lines is still a field; what it costs
		 * (linear: blank lines are read once) is measured by make bench
		 * with callgrind, never by a clock in a test (under
		 * AddressSanitizer g_strsplit()'s strstr alone is quadratic) */
		GString *g = g_string_new("Vendor: v\n");

		for (int i = 0; i < 200000; i++)
			g_string_append_c(g, '\n');
		g_string_append(g, "Product: p\n");
		{
			g_autoptr(request) r = parse(g->str);

			g_assert_cmpstr(request_block_get(block(r, 0), "Product"), ==, "p");
		}
		g_string_free(g, TRUE);
	}
	{
		/* a known field under the description is not read, and said so */
		g_autoptr(request) r = parse("Vendor: v\nSome text\nProduct: p\n");

		g_assert_cmpuint(r->warnings->len, ==, 1);
		g_assert_nonnull(strstr(g_ptr_array_index(r->warnings, 0), "\"Product: ...\""));
	}
	{
		/* Gmail's autolinks in plain text */
		g_autoptr(request) r = parse("Vendor: Example Corp <example.com <http://example.com>>\n"
					     "Vendor-Contact: security@example.com <mailto:security@example.com>\n");
		const request_block *b = block(r, 0);

		assert_clean(r);
		g_assert_cmpstr(request_block_get(b, "Vendor"), ==, "Example Corp <example.com>");
		g_assert_cmpstr(request_block_get(b, "Vendor-Contact"), ==, "security@example.com");
	}
	{
		/* the mail a reply quotes is no part of the request */
		g_autoptr(request) r = parse("Product: p\n\nText.\n\nOn Mon, 5 Jan 2026, vulnid wrote:\n> Hello\n");
		const request_block *b = block(r, 0);

		g_assert_cmpstr(b->description, ==, "Text.");
		g_assert_cmpuint(r->warnings->len, ==, 1);
	}
	{
		/* no fields at all */
		g_autoptr(request) r = parse("Just some text.\nAnother line.\n");
		const request_block *b = block(r, 0);

		g_assert_cmpuint(b->fields->len, ==, 0);
		g_assert_cmpstr(b->description, ==, "Just some text.\nAnother line.");
	}
	{
		/* CR LF line ends */
		g_autoptr(request) r = parse("Vendor: v\r\nProduct: p\r\n\r\nText\r\n");
		const request_block *b = block(r, 0);

		assert_clean(r);
		g_assert_cmpuint(b->fields->len, ==, 2);
		assert_field(b, 0, "Vendor", "v");
		assert_field(b, 1, "Product", "p");
		g_assert_cmpstr(b->description, ==, "Text");
	}
}

static void
test_blocks(void)
{
	g_autoptr(request) r = parse("Vendor: a\n"
				     "\n"
				     "first\n"
				     "---\n"
				     "Vendor: b\n"
				     "---   \t\n"
				     "\n"
				     "Vendor: c\n"
				     "\n"
				     "third\n");

	assert_clean(r);
	g_assert_cmpuint(r->blocks->len, ==, 3);
	g_assert_cmpuint(block(r, 0)->fields->len, ==, 1);
	assert_field(block(r, 0), 0, "Vendor", "a");
	g_assert_cmpstr(block(r, 0)->description, ==, "first");
	assert_field(block(r, 1), 0, "Vendor", "b");
	g_assert_cmpstr(block(r, 1)->description, ==, "");
	assert_field(block(r, 2), 0, "Vendor", "c");
	g_assert_cmpstr(block(r, 2)->description, ==, "third");
}

static void
test_blocks_separator(void)
{
	/* Only "---" alone (trailing white space allowed) separates. */
	g_autoptr(request) r = parse("Vendor: a\n\n----\n --- \n---x\n-- -\n");

	g_assert_cmpuint(r->blocks->len, ==, 1);
	g_assert_cmpstr(block(r, 0)->description, ==, "----\n --- \n---x\n-- -");
}

static void
test_blocks_trailing(void)
{
	{
		/* An empty block after the last separator is not one more ID. */
		g_autoptr(request) r = parse("Vendor: a\n---\nVendor: b\n---\n\n  \n");

		assert_clean(r);
		g_assert_cmpuint(r->blocks->len, ==, 2);
		assert_field(block(r, 0), 0, "Vendor", "a");
		assert_field(block(r, 1), 0, "Vendor", "b");
	}
	{
		g_autoptr(request) r = parse("Vendor: a\n---\n");

		g_assert_cmpuint(r->blocks->len, ==, 1);
	}
	{
		/* Empty blocks before the last one do count: reserved IDs. */
		g_autoptr(request) r = parse("---\n---\nVendor: c\n");

		assert_clean(r);
		g_assert_cmpuint(r->blocks->len, ==, 3);
		g_assert_cmpuint(block(r, 0)->fields->len, ==, 0);
		g_assert_cmpuint(block(r, 1)->fields->len, ==, 0);
		assert_field(block(r, 2), 0, "Vendor", "c");
	}
}

static void
test_empty(void)
{
	const char *texts[] = { "", "\n", "\n\n  \n", NULL };

	for (gsize i = 0; i < G_N_ELEMENTS(texts); i++) {
		g_autoptr(request) r = parse_lim(texts[i], "Reserve one", &lim_default);
		const request_block *b;

		assert_clean(r);
		g_assert_false(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 1);
		b = block(r, 0);
		g_assert_cmpuint(b->fields->len, ==, 0);
		g_assert_cmpstr(b->description, ==, "");
		g_assert_cmpstr(request_block_title(b, "Reserve one"), ==, "Reserve one");
	}
	{
		g_autoptr(request) r = parse_lim("", NULL, &lim_default);

		g_assert_false(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 1);
	}
}

static void
test_signature(void)
{
	{
		g_autoptr(request) r = parse("Vendor: v\n\nText\n-- \nAlice\nVendor: x\n---\nVendor: y\n");
		const request_block *b;

		assert_clean(r);
		g_assert_cmpuint(r->blocks->len, ==, 1);
		b = block(r, 0);
		g_assert_cmpuint(b->fields->len, ==, 1);
		g_assert_cmpstr(b->description, ==, "Text");
	}
	{
		/* only a signature: an empty request */
		g_autoptr(request) r = parse("-- \nAlice\n");

		g_assert_cmpuint(r->blocks->len, ==, 1);
		g_assert_cmpuint(block(r, 0)->fields->len, ==, 0);
		g_assert_cmpstr(block(r, 0)->description, ==, "");
	}
	{
		/* "--" without the space is not a signature separator */
		g_autoptr(request) r = parse("Text\n--\nmore\n");

		g_assert_cmpstr(block(r, 0)->description, ==, "Text\n--\nmore");
	}
}

static void
test_help(void)
{
	const char *bodies[] = { "help", "HELP\n", "  Help  \n\n", "help\n-- \nAlice\n" };

	for (gsize i = 0; i < G_N_ELEMENTS(bodies); i++) {
		g_autoptr(request) r = parse_lim(bodies[i], "anything", &lim_default);

		g_assert_true(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 0);
		g_assert_cmpuint(r->errors->len, ==, 0);
	}
	{
		g_autoptr(request) r = parse_lim("", "help", &lim_default);

		g_assert_true(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 0);
	}
	{
		g_autoptr(request) r = parse_lim("\n", " Help ", &lim_default);

		g_assert_true(r->is_help);
	}
	{
		/* a subject "help" with a request in the body is a request */
		g_autoptr(request) r = parse_lim("Vendor: v\n", "help", &lim_default);

		g_assert_false(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 1);
	}
	{
		g_autoptr(request) r = parse_lim("help me\n", "x", &lim_default);

		g_assert_false(r->is_help);
		g_assert_cmpuint(r->blocks->len, ==, 1);
	}
}

/* --- limits -------------------------------------------------------------- */

static void
test_too_many_blocks(void)
{
	const request_limits lim = { 2, 20, 200 };
	{
		g_autoptr(request) r = parse_lim("Vendor: a\n---\nVendor: b\n---\nVendor: c\n", "s", &lim);

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "3 identifiers"));
		g_assert_cmpuint(r->blocks->len, ==, 0);
	}
	{
		/* exactly the limit, with a trailing separator */
		g_autoptr(request) r = parse_lim("Vendor: a\n---\nVendor: b\n---\n", "s", &lim);

		assert_clean(r);
		g_assert_cmpuint(r->blocks->len, ==, 2);
	}
}

static void
test_too_many_fields(void)
{
	const request_limits lim = { 10, 2, 200 };
	g_autoptr(request) r = parse_lim("Vendor: a\nProduct: b\nVersion: c\nTitle: d\n", "s", &lim);
	const request_block *b = block(r, 0);

	g_assert_cmpuint(r->errors->len, ==, 1);
	g_assert_true(has_msg(r->errors, "more than 2 fields"));
	g_assert_cmpuint(b->fields->len, ==, 2);
	assert_field(b, 0, "Vendor", "a");
	assert_field(b, 1, "Product", "b");
	g_assert_cmpstr(b->description, ==, "");
}

static void
test_field_too_long(void)
{
	const request_limits lim = { 10, 20, 10 };
	{
		g_autoptr(request) r = parse_lim("Vendor: 12345678901\nProduct: 1234567890\n", "s", &lim);

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "Vendor: the value is longer than 10 characters"));
	}
	{
		/* characters, not bytes */
		g_autoptr(request) r = parse_lim("Title: \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
						 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n", "s", &lim);

		assert_clean(r);
	}
	{
		/* continuation lines count */
		g_autoptr(request) r = parse_lim("Title: 12345\n 67890\n", "s", &lim);

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "Title:"));
	}
}

/* --- validation ---------------------------------------------------------- */

static void
test_embargo(void)
{
	const char *good[] = { "yes", "YES", "no", "2026-12-03", "2026-12-04", "2027-01-15",
			       "2028-02-29" };
	const char *bad[] = { "2027-02-30", "2027-13-01", "2027-00-10", "2027-01-00", "2027-1-15",
			      "27-01-15", "2027-01-15x", "2027/01/15", "15.01.2027", "soon", "",
			      "2027-01-15 12:00", "maybe" };

	for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autoptr(request) r = parse_field("Embargo", good[i]);

		if (r->errors->len > 0)
			g_error("Embargo '%s': %s", good[i], (const char *) g_ptr_array_index(r->errors, 0));
	}
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(request) r = parse_field("Embargo", bad[i]);

		if (r->errors->len != 1)
			g_error("Embargo '%s' accepted", bad[i]);
		g_assert_true(has_msg(r->errors, "is not a date YYYY-MM-DD"));
	}
	{
		g_autoptr(request) r = parse_field("Embargo", "2026-12-02");

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "2026-12-02 is in the past"));
	}
	{
		g_autoptr(request) r = parse_field("Embargo", "1999-01-01");

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "in the past"));
	}
}

static void
test_embargo_strict(void)
{
	/* Only YYYY-MM-DD in digits is a date ("is not a date YYYY-MM-DD"):
	 * no signs, no blanks, which sscanf's %d would let through. */
	const char *bad[] = { "2027-+1-15", "2027-01- 5", "2027-01-+5", "2027- 1-15", "+2027-1-15" };

	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(request) r = parse_field("Embargo", bad[i]);
		const request_field *f = field(block(r, 0), 0);

		if (r->errors->len != 1) {
			/* keep going: report every value, then the other tests */
			g_test_message("Embargo '%s' (stored as '%s') accepted as a date",
				       bad[i], f->value);
			g_test_fail();
		}
	}
}

static void
test_anonymous(void)
{
	const char *good[] = { "yes", "no", "Yes", "NO" };
	const char *bad[] = { "true", "1", "", "y", "yes please" };

	for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autoptr(request) r = parse_field("Anonymous", good[i]);

		assert_clean(r);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(request) r = parse_field("Anonymous", bad[i]);

		g_assert_cmpuint(r->errors->len, ==, 1);
		g_assert_true(has_msg(r->errors, "Anonymous:"));
		g_assert_true(has_msg(r->errors, "must be yes or no"));
	}
}

static void
test_vendor_contact(void)
{
	const char *good[] = { "security@example.org", "Security Team <security@example.org>",
			       "\"Sec, Team\" <sec@mail.example.org>" };
	const char *bad[] = { "", "nobody", "a@b", "@example.org", "a@example.org, b@example.org",
			      "a@example.org b@example.org", "Group: a@example.org, b@example.org;",
			      "<>" };

	for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autoptr(request) r = parse_field("Vendor-Contact", good[i]);

		if (r->errors->len > 0)
			g_error("Vendor-Contact '%s': %s", good[i], (const char *) g_ptr_array_index(r->errors, 0));
	}
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(request) r = parse_field("Vendor-Contact", bad[i]);

		if (r->errors->len != 1)
			g_error("Vendor-Contact '%s' accepted", bad[i]);
		g_assert_true(has_msg(r->errors, "is not one mail address"));
	}
}

static void
test_reference(void)
{
	const char *urls[] = { "https://example.org/a", "http://example.org/", "ftp://ftp.example.org/x" };

	for (gsize i = 0; i < G_N_ELEMENTS(urls); i++) {
		g_autoptr(request) r = parse_field("Reference", urls[i]);

		assert_clean(r);
	}
	{
		g_autoptr(request) r = parse("Reference: see the mailing list\nReference: https://ok.example/\n");
		const request_block *b = block(r, 0);

		/* only a warning; the value is kept */
		g_assert_cmpuint(r->errors->len, ==, 0);
		g_assert_cmpuint(r->warnings->len, ==, 1);
		g_assert_true(has_msg(r->warnings, "'see the mailing list' is not an http"));
		g_assert_cmpuint(b->fields->len, ==, 2);
		assert_field(b, 0, "Reference", "see the mailing list");
	}
	{
		/* a checksum after the URL; sha256= inside a URL is the URL's */
		g_autoptr(request) ok1 = parse_field("Reference", "https://example.org/poc.tgz sha256="
						     "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08");
		g_autoptr(request) ok2 = parse_field("Reference", "https://example.org/get?sha256=abc");
		g_autoptr(request) bad = parse_field("Reference", "https://example.org/poc.tgz sha256=9f86d0");
		g_autoptr(request) m1 = parse_field("Mirror", "https://m.example/poc.tgz of https://example.org/poc.tgz");
		g_autoptr(request) m2 = parse_field("Mirror", "https://m.example/poc.tgz");

		assert_clean(ok1);
		assert_clean(ok2);
		g_assert_true(has_msg(bad->errors, "a checksum is written sha256= and 64 hexadecimal digits"));
		assert_clean(m1);
		g_assert_true(has_msg(m2->errors, "Mirror: 'https://m.example/poc.tgz' names no reference"));
	}
}

static void
test_messages_per_block(void)
{
	g_autoptr(request) r = parse("Anonymous: maybe\n---\nVendor: v\n---\nEmbargo: never\n");

	g_assert_cmpuint(r->blocks->len, ==, 3);
	g_assert_cmpuint(r->errors->len, ==, 2);
	g_assert_true(has_msg(r->errors, "block 1: Anonymous:"));
	g_assert_true(has_msg(r->errors, "block 3: Embargo:"));
}

/* --- helpers ------------------------------------------------------------- */

static void
test_title(void)
{
	g_autoptr(request) r = parse("Title: Own title\n---\nVendor: v\n---\nTitle:\n");

	g_assert_cmpuint(r->blocks->len, ==, 3);
	g_assert_cmpstr(request_block_title(block(r, 0), "Subject"), ==, "Own title");
	g_assert_cmpstr(request_block_title(block(r, 1), "Subject"), ==, "Subject");
	g_assert_cmpstr(request_block_title(block(r, 1), NULL), ==, "");
	g_assert_cmpstr(request_block_title(block(r, 2), "Subject"), ==, "Subject");
}

static void
test_fields_json(void)
{
	{
		g_autoptr(request) r = parse("Vendor: X\nVersion: 1\n");
		g_autofree char *json = request_block_fields_json(block(r, 0));

		g_assert_cmpstr(json, ==, "[[\"Vendor\",\"X\"],[\"Version\",\"1\"]]");
	}
	{
		g_autoptr(request) r = parse("Title: say \"hi\" \\o/\nx-Other: caf\xc3\xa9\n");
		g_autofree char *json = request_block_fields_json(block(r, 0));

		g_assert_cmpstr(json, ==,
				"[[\"Title\",\"say \\\"hi\\\" \\\\o/\"],[\"x-Other\",\"caf\xc3\xa9\"]]");
	}
	{
		g_autoptr(request) r = parse("no fields\n");
		g_autofree char *json = request_block_fields_json(block(r, 0));

		g_assert_cmpstr(json, ==, "[]");
	}
}

int
main(int argc, char **argv)
{
	int rc;

	g_test_init(&argc, &argv, NULL);
	g_mime_init();
	now_dt = g_date_time_new_utc(2026, 12, 3, 0, 0, 0);

	g_test_add_func("/request/fields/basic", test_fields);
	g_test_add_func("/request/fields/canonical", test_fields_canonical);
	g_test_add_func("/request/fields/unknown", test_fields_unknown);
	g_test_add_func("/request/fields/values", test_fields_values);
	g_test_add_func("/request/fields/repeatable", test_fields_repeatable);
	g_test_add_func("/request/fields/duplicate", test_fields_duplicate);
	g_test_add_func("/request/fields/continuation", test_fields_continuation);
	g_test_add_func("/request/fields/not-field", test_fields_not_field);
	g_test_add_func("/request/description", test_description);
	g_test_add_func("/request/blocks/split", test_blocks);
	g_test_add_func("/request/blocks/separator", test_blocks_separator);
	g_test_add_func("/request/blocks/trailing", test_blocks_trailing);
	g_test_add_func("/request/empty", test_empty);
	g_test_add_func("/request/signature", test_signature);
	g_test_add_func("/request/help", test_help);
	g_test_add_func("/request/limits/blocks", test_too_many_blocks);
	g_test_add_func("/request/limits/fields", test_too_many_fields);
	g_test_add_func("/request/limits/field-length", test_field_too_long);
	g_test_add_func("/request/validate/embargo", test_embargo);
	g_test_add_func("/request/validate/anonymous", test_anonymous);
	g_test_add_func("/request/validate/vendor-contact", test_vendor_contact);
	g_test_add_func("/request/validate/reference", test_reference);
	g_test_add_func("/request/validate/per-block", test_messages_per_block);
	g_test_add_func("/request/title", test_title);
	g_test_add_func("/request/fields-json", test_fields_json);
	/* Added last, in a suite of its own, so that it runs last: it fails
	 * (Embargo dates are parsed with sscanf's lenient %d). */
	g_test_add_func("/request/validate-strict/embargo-date", test_embargo_strict);

	rc = g_test_run();
	g_date_time_unref(now_dt);
	g_mime_shutdown();
	return rc;
}
