/* u-securitytxt.c - unit tests for src/lib/vendor.c: security.txt, the Vendor
 * field, and who is told about an entry */
#include "autoconfig.h"

#include <string.h>
#include <unistd.h>
#include <gmime/gmime.h>

#include "vendor.h"

static GDateTime *now;	/* 2026-06-01T00:00:00Z */

static securitytxt *
parse_ok(const char *text)
{
	g_autoptr(GError) err = NULL;
	securitytxt *s = NULL;
	vulnid_status st = securitytxt_parse(text, strlen(text), now, &s, &err);

	g_assert_no_error(err);
	g_assert_cmpint(st, ==, VULNID_OK);
	g_assert_nonnull(s);
	return s;
}

static void
parse_fails(const char *text, gsize len, const char *message_part)
{
	g_autoptr(GError) err = NULL;
	securitytxt *s = NULL;
	vulnid_status st = securitytxt_parse(text, len, now, &s, &err);

	g_assert_cmpint(st, ==, VULNID_ERR_INVALID);
	g_assert_null(s);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_INVALID);
	if (message_part != NULL && strstr(err->message, message_part) == NULL)
		g_error("'%s' not in '%s'", message_part, err->message);
}

static void
assert_strv(GPtrArray *a, const char *const *want)
{
	guint n = want != NULL ? g_strv_length((char **) want) : 0;

	g_assert_cmpuint(a->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpstr(g_ptr_array_index(a, i), ==, want[i]);
}

/* Some warning contains part. */
static gboolean
has_warning(const securitytxt *s, const char *part)
{
	for (guint i = 0; i < s->warnings->len; i++)
		if (strstr(g_ptr_array_index(s->warnings, i), part) != NULL)
			return TRUE;
	return FALSE;
}

static void
test_plain(void)
{
	g_autoptr(securitytxt) s = parse_ok(
		"# Our security address\n"
		"Contact: mailto:security@example.com\n"
		"Expires: 2027-01-01T00:00:00.000Z\n"
		"Encryption: https://example.com/pgp-key.txt\n"
		"Preferred-Languages: en\n"
		"Canonical: https://example.com/.well-known/security.txt\n"
		"Policy: https://example.com/security-policy.html\n");
	static const char *const contacts[] = { "security@example.com", NULL };
	static const char *const enc[] = { "https://example.com/pgp-key.txt", NULL };
	static const char *const lang[] = { "en", NULL };

	assert_strv(s->contacts, contacts);
	assert_strv(s->other_contacts, NULL);
	assert_strv(s->encryption, enc);
	assert_strv(s->languages, lang);
	g_assert_cmpstr(s->expires, ==, "2027-01-01T00:00:00.000Z");
	g_assert_false(s->expired);
	g_assert_false(s->signed_text);
	g_assert_cmpuint(s->warnings->len, ==, 0);
}

static void
test_crlf(void)
{
	g_autoptr(securitytxt) s = parse_ok(
		"Contact: mailto:security@example.com\r\n"
		"contact: mailto:psirt@example.com\r\n"
		"EXPIRES: 2027-01-01T00:00:00+02:00\r\n"
		"Preferred-Languages: en, de\r\n");
	static const char *const contacts[] = { "security@example.com", "psirt@example.com", NULL };
	static const char *const lang[] = { "en", "de", NULL };

	assert_strv(s->contacts, contacts);
	assert_strv(s->languages, lang);
	g_assert_cmpstr(s->expires, ==, "2027-01-01T00:00:00+02:00");
	g_assert_false(s->expired);
	g_assert_cmpuint(s->warnings->len, ==, 0);
}

static const char signed_file[] =
	"-----BEGIN PGP SIGNED MESSAGE-----\n"
	"Hash: SHA512\n"
	"\n"
	"# Signed security.txt\n"
	"- Contact: mailto:dash@example.com\n"
	"Contact: mailto:security@example.com\n"
	"- -Unknown-Field: a dash-escaped line\n"
	"Expires: 2027-01-01T00:00:00Z\n"
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iHUEARYKAB0WIQTDpXZ3Y2QTExampleExampleExampleExampleAAoJEExample\n"
	"Contact: mailto:in-signature@example.com\n"
	"=abcd\n"
	"-----END PGP SIGNATURE-----\n";

static void
test_signed(void)
{
	g_autoptr(securitytxt) s = parse_ok(signed_file);
	static const char *const contacts[] = { "dash@example.com", "security@example.com", NULL };

	g_assert_true(s->signed_text);
	assert_strv(s->contacts, contacts);
	g_assert_false(s->expired);
	/* "-Unknown-Field:" is a field name after unescaping, just unknown */
	g_assert_cmpuint(s->warnings->len, ==, 0);
}

static void
test_signed_crlf_and_trailer(void)
{
	g_autoptr(GString) t = g_string_new(NULL);
	g_autoptr(securitytxt) s = NULL;
	static const char *const contacts[] = { "dash@example.com", "security@example.com", NULL };
	g_auto(GStrv) lines = g_strsplit(signed_file, "\n", -1);

	for (char **l = lines; *l != NULL && l[1] != NULL; l++)	/* not after the last \n */
		g_string_append_printf(t, "%s\r\n", *l);
	/* Nobody signed what follows the signature: it must not count. */
	g_string_append(t, "Contact: mailto:attacker@evil.example\r\n");
	s = parse_ok(t->str);
	g_assert_true(s->signed_text);
	assert_strv(s->contacts, contacts);
	g_assert_true(has_warning(s, "after the OpenPGP signature"));
}

static void
test_signed_malformed(void)
{
	static const char no_sig[] =
		"-----BEGIN PGP SIGNED MESSAGE-----\n"
		"Hash: SHA256\n"
		"\n"
		"Contact: mailto:security@example.com\n";
	static const char no_end[] =
		"-----BEGIN PGP SIGNED MESSAGE-----\n"
		"Hash: SHA256\n"
		"\n"
		"Contact: mailto:security@example.com\n"
		"-----BEGIN PGP SIGNATURE-----\n"
		"AAAA\n";
	static const char bad_header[] =
		"-----BEGIN PGP SIGNED MESSAGE-----\n"
		"this is no armor header\n"
		"\n"
		"Contact: mailto:security@example.com\n"
		"-----BEGIN PGP SIGNATURE-----\n"
		"-----END PGP SIGNATURE-----\n";

	parse_fails(no_sig, strlen(no_sig), "cleartext signature");
	parse_fails(no_end, strlen(no_end), "cleartext signature");
	parse_fails(bad_header, strlen(bad_header), "armor header");
}

static void
test_contacts(void)
{
	g_autoptr(securitytxt) s = parse_ok(
		"Contact: mailto:security@example.com?subject=Vulnerability%20report\n"
		"Contact: MAILTO:psirt%40example.com\n"
		"Contact: mailto:SECURITY@example.com\n"	/* a duplicate but for case */
		"Contact: https://example.com/report\n"
		"Contact: tel:+1-201-555-0123\n"
		"Contact: mailto:two@example.com,three@example.com\n"
		"Contact: mailto:not-an-address\n"
		"Contact: mailto:bad%zzescape@example.com\n"
		"Contact: mailto:nul%00@example.com\n"
		"Contact: mailto:Name%20%3Cx@example.com%3E\n"
		"Contact: bare@example.org\n"
		"Contact: just words\n"
		"Contact:\n"
		"Expires: 2027-01-01T00:00:00Z\n");
	static const char *const contacts[] = { "security@example.com", "psirt@example.com",
						 "bare@example.org", NULL };
	static const char *const other[] = { "https://example.com/report", "tel:+1-201-555-0123", NULL };

	assert_strv(s->contacts, contacts);
	assert_strv(s->other_contacts, other);
	g_assert_true(has_warning(s, "mailto:two@example.com,three@example.com"));
	g_assert_true(has_warning(s, "mailto:not-an-address"));
	g_assert_true(has_warning(s, "bad%zzescape"));
	g_assert_true(has_warning(s, "nul%00"));
	g_assert_true(has_warning(s, "%3Cx@example.com"));
	g_assert_true(has_warning(s, "read as mailto"));
	g_assert_true(has_warning(s, "'just words' is not a URI"));
	g_assert_true(has_warning(s, "empty Contact"));
}

static void
test_languages(void)
{
	g_autoptr(securitytxt) s = parse_ok(
		"Contact: mailto:security@example.com\n"
		"Preferred-Languages:  en ,de,, fr-CA , en \n"
		"Expires: 2027-01-01T00:00:00Z\n");
	static const char *const lang[] = { "en", "de", "fr-CA", NULL };

	assert_strv(s->languages, lang);
	g_assert_cmpuint(s->warnings->len, ==, 0);
}

static void
test_expires(void)
{
	{
		g_autoptr(securitytxt) s = parse_ok("Contact: mailto:a@example.com\n"
						    "Expires: 2026-06-01T00:00:01Z\n");

		g_assert_false(s->expired);
		g_assert_cmpuint(s->warnings->len, ==, 0);
	}
	{
		g_autoptr(securitytxt) s = parse_ok("Contact: mailto:a@example.com\n"
						    "Expires: 2026-05-31T23:59:59Z\n");

		g_assert_true(s->expired);
		g_assert_cmpstr(s->expires, ==, "2026-05-31T23:59:59Z");
		g_assert_true(has_warning(s, "expired"));
	}
	{
		/* 00:30 at +01:00 is 23:30 the day before in UTC */
		g_autoptr(securitytxt) s = parse_ok("Contact: mailto:a@example.com\n"
						    "Expires: 2026-06-01t00:30:00+01:00\n");

		g_assert_true(s->expired);
	}
	{
		g_autoptr(securitytxt) s = parse_ok("Contact: mailto:a@example.com\n");

		g_assert_null(s->expires);
		g_assert_false(s->expired);
		g_assert_true(has_warning(s, "no Expires field"));
	}
	static const char *const garbage[] = {
		"tomorrow", "2027-01-01", "2027-01-01T00:00:00", "2027-W01-1T00:00:00Z",
		"2027-13-01T00:00:00Z", "2027-01-01 00:00:00Z", "2027-01-01T00:00:00Zjunk",
		"2027-01-01T00:00:00+0100",
	};
	for (gsize i = 0; i < G_N_ELEMENTS(garbage); i++) {
		g_autofree char *text = g_strdup_printf("Contact: mailto:a@example.com\nExpires: %s\n",
							garbage[i]);
		g_autoptr(securitytxt) s = parse_ok(text);

		if (!s->expired)
			g_error("Expires '%s' was accepted", garbage[i]);
		g_assert_true(has_warning(s, "not an RFC 3339"));
	}
	{
		g_autoptr(securitytxt) s = parse_ok("Contact: mailto:a@example.com\n"
						    "Expires: 2027-01-01T00:00:00Z\n"
						    "Expires: 2020-01-01T00:00:00Z\n");

		g_assert_cmpstr(s->expires, ==, "2027-01-01T00:00:00Z");
		g_assert_false(s->expired);
		g_assert_true(has_warning(s, "more than one Expires"));
	}
}

static void
test_comments(void)
{
	g_autoptr(securitytxt) s = parse_ok(
		"\xef\xbb\xbf# a BOM, then a comment\n"
		"\n"
		"   \n"
		"# Contact: mailto:commented-out@example.com\n"
		"  Contact: mailto:security@example.com\n"
		"Hiring: https://example.com/jobs\n"
		"X-Extension: anything\n"
		"Expires: 2027-01-01T00:00:00Z");	/* no final line end */
	static const char *const contacts[] = { "security@example.com", NULL };

	assert_strv(s->contacts, contacts);
	g_assert_false(s->expired);
	g_assert_cmpuint(s->warnings->len, ==, 0);
}

static void
test_not_securitytxt(void)
{
	static const char html[] = "<html><body>Not Found</body></html>\n";
	static const char commented[] = "# Contact: mailto:a@example.com\nExpires: 2027-01-01T00:00:00Z\n";
	static const char nul[] = "Contact: mailto:a@example.com\n\0\n";

	parse_fails(html, strlen(html), "no Contact field");
	parse_fails(commented, strlen(commented), "no Contact field");
	parse_fails("", 0, "no Contact field");
	parse_fails(nul, sizeof nul - 1, "UTF-8");
	{
		static const char bad[] = "Contact: mailto:a@example.com\n\xff\n";

		parse_fails(bad, strlen(bad), "UTF-8");
	}
	{
		g_autoptr(GError) err = NULL;
		securitytxt *s = NULL;

		g_assert_cmpint(securitytxt_parse(NULL, 0, now, &s, &err), ==, VULNID_ERR_INVALID);
		g_assert_null(s);
	}
}

static void
test_limits(void)
{
	g_autoptr(GString) big = g_string_new("Contact: mailto:a@example.com\n");
	g_autoptr(GString) lines = g_string_new("Contact: mailto:a@example.com\n");

	/* exactly 64 KiB is fine, one byte more is not */
	while (big->len < 64 * 1024 - 1)
		g_string_append_c(big, '#');
	g_string_append_c(big, '\n');
	g_assert_cmpuint(big->len, ==, 64 * 1024);
	{
		g_autoptr(securitytxt) s = parse_ok(big->str);

		g_assert_cmpuint(s->contacts->len, ==, 1);
	}
	g_string_append_c(big, '\n');
	parse_fails(big->str, big->len, "64 KiB");

	/* 1000 lines are fine, 1001 are not */
	for (int i = 1; i < 1000; i++)
		g_string_append(lines, "# comment\n");
	{
		g_autoptr(securitytxt) s = parse_ok(lines->str);

		g_assert_cmpuint(s->contacts->len, ==, 1);
	}
	g_string_append(lines, "#");
	parse_fails(lines->str, lines->len, "1000 lines");
}

static void
test_warnings_bounded(void)
{
	g_autoptr(GString) t = g_string_new("Contact: mailto:a@example.com\nExpires: 2027-01-01T00:00:00Z\n");
	g_autoptr(securitytxt) s = NULL;

	for (int i = 0; i < 900; i++)
		g_string_append(t, "garbage\n");
	s = parse_ok(t->str);
	g_assert_cmpuint(s->warnings->len, <=, 51);
	g_assert_true(has_warning(s, "more warnings not shown"));
}

static void
check_split(const char *value, const char *want_name, const char *want_domain)
{
	g_autofree char *name = NULL;
	g_autofree char *domain = NULL;

	vendor_field_split(value, &name, &domain);
	g_assert_cmpstr(name, ==, want_name);
	g_assert_cmpstr(domain, ==, want_domain);
}

static void
test_field_split(void)
{
	check_split("Example Corp <example.com>", "Example Corp", "example.com");
	check_split("  Example   Corp   <Example.COM>  ", "Example Corp", "example.com");
	check_split("Example Corp<sub.example.co.uk>", "Example Corp", "sub.example.co.uk");
	check_split("Example Corp < example.com >", "Example Corp", "example.com");
	check_split("Example Corp", "Example Corp", NULL);
	check_split("  Example Corp\t", "Example Corp", NULL);
	check_split("<example.com>", "", "example.com");
	check_split("example.com", "example.com", NULL);	/* a name, never a guess */
	check_split("Example <not a domain>", "Example <not a domain>", NULL);
	check_split("Example <a@b.c>", "Example <a@b.c>", NULL);
	check_split("Example <localhost>", "Example <localhost>", NULL);
	check_split("Example <-example.com>", "Example <-example.com>", NULL);
	check_split("Example <example-.com>", "Example <example-.com>", NULL);
	check_split("Example <.example.com>", "Example <.example.com>", NULL);
	check_split("Example <example.com.>", "Example <example.com.>", NULL);
	check_split("Example <example..com>", "Example <example..com>", NULL);
	check_split("Example <exa_mple.com>", "Example <exa_mple.com>", NULL);
	check_split("Example <192.0.2.1>", "Example <192.0.2.1>", NULL);
	check_split("Example <>", "Example <>", NULL);
	check_split("Example <example.com> Inc", "Example <example.com> Inc", NULL);
	check_split("Ex\x01" "ample\n Corp <example.com>", "Ex ample Corp", "example.com");
	check_split("", "", NULL);
	check_split(NULL, "", NULL);
	{
		g_autoptr(GString) long_label = g_string_new("Example <");

		for (int i = 0; i < 64; i++)
			g_string_append_c(long_label, 'a');
		g_string_append(long_label, ".com>");
		check_split(long_label->str, long_label->str, NULL);
	}
	{
		g_autofree char *name = NULL;

		vendor_field_split("X <example.com>", &name, NULL);	/* outputs are optional */
		g_assert_cmpstr(name, ==, "X");
	}
}

/* vendor_contacts_for against a real database in a temporary directory. */
static void
test_contacts_for(void)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *dir = g_dir_make_tmp("u-securitytxt.XXXXXX", &err);
	g_autofree char *path = NULL;
	g_autoptr(store) st = NULL;
	gint64 id = 0, bare = 0;
	static const struct {
		const char *vendor, *contact, *how;
		const char *want[3];
	} cases[] = {
		{ "Example Corp", NULL, "directory", { "security@example.com", "psirt@example.com" } },
		{ "EXAMPLE corp", "x@other.example", "directory", { "security@example.com", "psirt@example.com" } },
		{ "ExCo", NULL, "directory", { "security@example.com", "psirt@example.com" } },
		{ "Someone <example.com>", NULL, "directory", { "security@example.com", "psirt@example.com" } },
		{ "<EXAMPLE.com>", NULL, "directory", { "security@example.com", "psirt@example.com" } },
		/* known but without contacts: fall through */
		{ "Bare Inc", "Team <team@bare.example>", "vendor-contact", { "team@bare.example" } },
		{ "Bare Inc <bare.example>", NULL, "security-at-domain", { "security@bare.example" } },
		{ "Unknown <unknown.example>", "a@b.example", "vendor-contact", { "a@b.example" } },
		{ "Unknown <unknown.example>", "a@b.example, c@d.example", "security-at-domain",
		  { "security@unknown.example" } },
		{ "Unknown <unknown.example>", "not an address", "security-at-domain",
		  { "security@unknown.example" } },
		{ "Unknown <unknown.example>", NULL, "security-at-domain", { "security@unknown.example" } },
		/* never an address guessed from a name */
		{ "unknown.example", NULL, "none", { NULL } },
		{ "Unknown Corp", NULL, "none", { NULL } },
		{ "Unknown <localhost>", NULL, "none", { NULL } },
		{ NULL, NULL, "none", { NULL } },
		{ NULL, "sec@x.example", "vendor-contact", { "sec@x.example" } },
	};

	g_assert_no_error(err);
	path = g_build_filename(dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(path, 1000, STORE_OPEN_CREATE, &st, &err), ==, VULNID_OK);

	/* changes outside a transaction are refused */
	g_assert_cmpint(vendor_add(st, "Example Corp", NULL, &id, &err), ==, VULNID_ERR_INTERNAL);
	g_clear_error(&err);

	g_assert_cmpint(store_begin(st, &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add(st, "Example Corp", NULL, &id, &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add_alias(st, id, "ExCo", &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add_domain(st, id, "Example.com", &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add_contact(st, id, "security@example.com", "operator", &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add_contact(st, id, "psirt@example.com", "security.txt", &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add(st, "Bare Inc", NULL, &bare, &err), ==, VULNID_OK);
	g_assert_cmpint(vendor_add_domain(st, bare, "bare.example", &err), ==, VULNID_OK);

	/* duplicates and bad input */
	g_assert_cmpint(vendor_add(st, "example CORP", NULL, NULL, &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add(st, "exco", NULL, NULL, &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add_alias(st, bare, "EXCO", &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add_alias(st, bare, "example corp", &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add_domain(st, bare, "EXAMPLE.COM", &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add_contact(st, id, "Security@Example.com", NULL, &err), ==, VULNID_ERR_EXISTS);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add(st, "two\nlines", NULL, NULL, &err), ==, VULNID_ERR_INVALID);
	g_clear_error(&err);
	g_assert_cmpint(vendor_add(st, " \t ", NULL, NULL, &err), ==, VULNID_ERR_INVALID);
	g_clear_error(&err);
	{
		g_autofree char *long_name = g_strnfill(201, 'x');

		g_assert_cmpint(vendor_add(st, long_name, NULL, NULL, &err), ==, VULNID_ERR_INVALID);
		g_clear_error(&err);
		long_name[200] = '\0';
		g_assert_cmpint(vendor_add(st, long_name, NULL, NULL, &err), ==, VULNID_OK);
	}
	{
		static const char *const bad_domains[] = { "localhost", "a..b", "-a.b", "a.b-", "a_b.c",
							   ".a.b", "a.b.", "1.2.3.4", "a b.c", "" };
		static const char *const bad_addresses[] = {
			"a", "a@b", "@b.c", "a@@b.c", "a@b@c.d", "a b@c.d", "<a@b.c>", "A <a@b.c>",
			"a@b.c, d@e.f", "a(x)@b.c", "a@b.c\nBcc: x@y.z", "a@.b.c", "a@b.c.", "a\x01@b.c", "",
		};

		for (gsize i = 0; i < G_N_ELEMENTS(bad_domains); i++) {
			g_assert_cmpint(vendor_add_domain(st, bare, bad_domains[i], &err), ==, VULNID_ERR_INVALID);
			g_clear_error(&err);
		}
		for (gsize i = 0; i < G_N_ELEMENTS(bad_addresses); i++) {
			if (vendor_add_contact(st, bare, bad_addresses[i], NULL, &err) != VULNID_ERR_INVALID)
				g_error("'%s' was accepted as a contact", bad_addresses[i]);
			g_clear_error(&err);
		}
	}
	g_assert_cmpint(vendor_add_alias(st, 999, "Nobody", &err), ==, VULNID_ERR_NOTFOUND);
	g_clear_error(&err);
	g_assert_cmpint(vendor_remove_contact(st, bare, "nobody@bare.example", &err), ==, VULNID_ERR_NOTFOUND);
	g_clear_error(&err);
	g_assert_cmpint(store_commit(st, &err), ==, VULNID_OK);

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) a = NULL;
		const char *how = NULL;

		g_assert_cmpint(vendor_contacts_for(st, cases[i].vendor, cases[i].contact, &a, &how, &err),
				==, VULNID_OK);
		g_assert_no_error(err);
		g_assert_cmpstr(how, ==, cases[i].how);
		for (guint k = 0; k < a->len || (k < 3 && cases[i].want[k] != NULL); k++)
			g_assert_cmpstr(k < a->len ? g_ptr_array_index(a, k) : NULL, ==,
					k < 3 ? cases[i].want[k] : "(more)");
	}

	{
		g_autoptr(vendor) v = NULL;
		g_autoptr(GPtrArray) list = NULL;

		g_assert_cmpint(vendor_find(st, "  exco ", &v, &err), ==, VULNID_OK);
		g_assert_cmpstr(v->name, ==, "Example Corp");
		g_assert_cmpuint(v->contacts->len, ==, 2);
		g_clear_pointer(&v, vendor_free);
		g_assert_cmpint(vendor_find_by_domain(st, "EXAMPLE.COM", &v, &err), ==, VULNID_OK);
		g_assert_cmpstr(v->name, ==, "Example Corp");
		g_clear_pointer(&v, vendor_free);
		g_assert_cmpint(vendor_find(st, "nobody", &v, &err), ==, VULNID_ERR_NOTFOUND);
		g_clear_error(&err);
		g_assert_cmpint(vendor_list(st, &list, &err), ==, VULNID_OK);
		g_assert_cmpuint(list->len, ==, 3);
		g_assert_cmpstr(((vendor *) g_ptr_array_index(list, 0))->name, ==, "Bare Inc");
		g_assert_cmpstr(((vendor *) g_ptr_array_index(list, 1))->name, ==, "Example Corp");
	}

	g_clear_pointer(&st, store_close);
	{
		g_autofree char *wal = g_strconcat(path, "-wal", NULL);
		g_autofree char *shm = g_strconcat(path, "-shm", NULL);

		unlink(wal);
		unlink(shm);
		unlink(path);
		rmdir(dir);
	}
}

int
main(int argc, char **argv)
{
	int rc;

	g_test_init(&argc, &argv, NULL);
	g_mime_init();
	now = g_date_time_new_from_iso8601("2026-06-01T00:00:00Z", NULL);
	g_test_add_func("/securitytxt/plain", test_plain);
	g_test_add_func("/securitytxt/crlf", test_crlf);
	g_test_add_func("/securitytxt/signed", test_signed);
	g_test_add_func("/securitytxt/signed-crlf-trailer", test_signed_crlf_and_trailer);
	g_test_add_func("/securitytxt/signed-malformed", test_signed_malformed);
	g_test_add_func("/securitytxt/contacts", test_contacts);
	g_test_add_func("/securitytxt/languages", test_languages);
	g_test_add_func("/securitytxt/expires", test_expires);
	g_test_add_func("/securitytxt/comments", test_comments);
	g_test_add_func("/securitytxt/not-securitytxt", test_not_securitytxt);
	g_test_add_func("/securitytxt/limits", test_limits);
	g_test_add_func("/securitytxt/warnings-bounded", test_warnings_bounded);
	g_test_add_func("/vendor/field-split", test_field_split);
	g_test_add_func("/vendor/contacts-for", test_contacts_for);
	rc = g_test_run();
	g_date_time_unref(now);
	g_mime_shutdown();
	return rc;
}
