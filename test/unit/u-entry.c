/* u-entry.c - unit tests for the entry model (src/lib/entry.c), the
 * disclosure policy (src/lib/disclosure.c) and OSV's package mapping
 * (src/lib/osv.c), on entries built in memory */
#include "autoconfig.h"

#include <string.h>

#include "disclosure.h"
#include "entry.h"
#include "osv.h"
#include "render.h"

/* Append a record as intake would have written it. */
static void
add(entry *e, gint64 seq, const char *kind, const char *role, const char *how, const char *author,
    const char *fields, const char *body)
{
	store_record rec = { 0 };
	g_autofree char *created = g_strdup_printf("2026-01-%02dT00:00:00Z", (int) seq);
	g_autofree char *auth = how != NULL ? g_strdup_printf("{\"method\":\"none\",\"role\":\"%s\",\"how\":\"%s\"}",
							       role, how)
					    : g_strdup("{\"method\":\"none\"}");

	rec.entry = e->id;
	rec.seq = seq;
	rec.created = created;
	rec.kind = kind;
	rec.author = author;
	rec.role = role;
	rec.auth = auth;
	rec.sha256 = "00";
	entry_add_record(e, &rec, seq, "A subject", fields, body, NULL, NULL);
}

static void
test_headline(void)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_facts) f = NULL;

	e = entry_new_empty("TEST-2026-0001", "2026-01-01T00:00:00Z");
	add(e, 1, "request", "creator", NULL, "alice@example.net",
	    "[[\"Vendor\",\"Foo\"],[\"Product\",\"pkg:npm/%40scope/lib@1.0\"],[\"Version\",\"1.0\"],"
	    "[\"Alias\",\"CVE-2026-1\"],[\"Status\",\"fixed\"],[\"Spam\",\"yes\"],"
	    "[\"CVSS\",\"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H\"],[\"Severity\",\"High\"]]",
	    "the description");
	add(e, 2, "vendor-response", "vendor", "token", "sec@foo.example",
	    "[[\"Status\",\"confirmed\"],[\"Fixed\",\"1.1\"]]", "We confirm.");
	/* the vendor's domain alone: kept, shown, not taken */
	add(e, 3, "vendor-response", "vendor", "domain", "mallory@foo.example",
	    "[[\"Status\",\"disputed\"],[\"Title\",\"Not a bug\"]]", "");
	/* the creator's address alone (a forged From): proposals */
	add(e, 4, "addition", "creator", "address", "alice@example.net",
	    "[[\"Title\",\"Forged\"],[\"Vendor-Contact\",\"evil@attacker.example\"],[\"Version\",\"9.9\"]]", "");
	f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
	g_assert_cmpint(f->state, ==, ENTRY_PUBLIC);
	/* a creator's Status and Spam in a request are not the vendor's or
	 * a moderator's word */
	g_assert_false(f->marks & ENTRY_MARK_SPAM);
	g_assert_nonnull(f->vendor_status);
	g_assert_cmpstr(f->vendor_status->value, ==, "confirmed");
	g_assert_cmpint(f->vendor_status->record->seq, ==, 2);
	g_assert_cmpstr(f->fixed_in->value, ==, "1.1");
	g_assert_cmpstr(f->vendor->value, ==, "Foo");
	g_assert_null(f->title);
	g_assert_null(f->vendor_contact);
	g_assert_cmpuint(f->versions->len, ==, 1);
	g_assert_cmpstr(f->severity->value, ==, "high");
	g_assert_cmpuint(f->cvss->len, ==, 1);
	g_assert_cmpstr(((entry_cvss *) g_ptr_array_index(f->cvss, 0))->type, ==, "CVSS_V3");
	g_assert_cmpuint(f->statuses->len, ==, 2);
	/* disputed (domain), Title (domain), Title, Vendor-Contact, Version (address) */
	g_assert_cmpuint(f->proposals->len, ==, 5);
	g_assert_cmpstr(((entry_claim *) g_ptr_array_index(f->proposals, 0))->value, ==, "disputed");
	g_assert_cmpstr(f->modified, ==, "2026-01-04T00:00:00Z");
	g_clear_pointer(&f, entry_facts_free);

	/* the creator's token moves the headline */
	add(e, 5, "addition", "creator", "token", "alice@example.net", "[[\"Title\",\"Real title\"]]", "");
	add(e, 6, "command", "moderator", "key", "mod@example.org", "[[\"Spam\",\"yes\"]]", "");
	add(e, 7, "command", "creator", "address", "alice@example.net", "[[\"Withdrawn\",\"forged\"]]", "");
	add(e, 8, "command", "third-party", "none", "bob@example.net", "[[\"Alias\",\"CVE-2026-9\"]]", "");
	f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
	g_assert_cmpstr(f->title->value, ==, "Real title");
	g_assert_true(f->marks & ENTRY_MARK_SPAM);
	g_assert_null(f->withdrawn);	/* not verified: withdraws nothing */
	g_assert_cmpuint(f->aliases->len, ==, 1);	/* the request's only */
	g_clear_pointer(&f, entry_facts_free);

	/* as of an earlier record */
	f = entry_facts_derive(e, 1, FALSE, NULL);
	g_assert_null(f->vendor_status);
	g_assert_false(f->marks & ENTRY_MARK_SPAM);
}

static void
test_package(void)
{
	char *eco = NULL, *name = NULL;

	g_assert_true(osv_purl_map("pkg:npm/%40scope/lib@1.0", &eco, &name));
	g_assert_cmpstr(eco, ==, "npm");
	g_assert_cmpstr(name, ==, "@scope/lib");
	g_free(eco);
	g_free(name);
	g_assert_false(osv_purl_map("pkg:unknown/x", &eco, &name));
	g_assert_null(osv_ecosystem("Nonsense"));
	g_assert_cmpstr(osv_ecosystem("pypi"), ==, "PyPI");
}

static void
test_disclosure(void)
{
	g_autoptr(entry) e = entry_new_empty("TEST-2026-0002", "2026-01-01T00:00:00Z");
	g_autoptr(entry_view) pub = NULL;
	g_autoptr(entry_view) ven = NULL;
	g_autoptr(entry_view) cre = NULL;
	const view_record *vr;

	add(e, 1, "request", "creator", NULL, "alice@example.net", "[[\"Anonymous\",\"yes\"]]", "text");
	add(e, 2, "addition", "third-party", "none", "bob@example.net", "[]", "a comment");
	pub = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, NULL);
	ven = entry_view_new(e, AUDIENCE_VENDOR, G_MAXINT64, NULL);
	cre = entry_view_new(e, AUDIENCE_CREATOR, G_MAXINT64, NULL);
	g_assert_true(pub->facts->anonymous);
	vr = render_find_record(pub, 1);
	g_assert_null(vr->author);
	g_assert_true(vr->author_withheld);
	g_assert_null(render_find_record(ven, 1)->author);
	g_assert_cmpstr(render_find_record(cre, 1)->author, ==, "alice@example.net");
	/* only the researcher is anonymous */
	g_assert_cmpstr(render_find_record(pub, 2)->author, ==, "bob@example.net");
}

static void
test_sealed(void)
{
	g_autoptr(entry) e = entry_new_empty("TEST-2026-0003", "2026-01-01T00:00:00Z");
	g_autoptr(entry_view) pub = NULL;
	g_autoptr(entry_view) op = NULL;
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(vulnid_config) cfg = g_new0(vulnid_config, 1);
	store_record rec = { 0 };

	rec.entry = e->id;
	rec.seq = 1;
	rec.created = "2026-01-01T00:00:00Z";
	rec.kind = "request";
	rec.author = "alice@example.net";
	rec.role = "creator";
	rec.auth = "{\"method\":\"none\"}";
	rec.sha256 = "c0ffee";
	rec.sealed = "-----BEGIN PGP MESSAGE-----";
	/* in memory in clear, as intake holds it after sealing */
	entry_add_record(e, &rec, 1, "secret subject", "[[\"Title\",\"secret title\"]]", "secret text", NULL, NULL);
	pub = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, NULL);
	op = entry_view_new(e, AUDIENCE_OPERATOR, G_MAXINT64, NULL);
	g_assert_true(pub->stub);
	g_assert_cmpuint(pub->commitments->len, ==, 1);
	g_assert_false(render_find_record(pub, 1)->content);
	g_assert_cmpstr(entry_view_title(pub), ==, "");
	g_assert_false(op->stub);
	g_assert_cmpstr(entry_view_title(op), ==, "secret title");
	cfg->request_local = g_strdup("request");
	cfg->domain = g_strdup("example.org");
	vars = render_template_vars(cfg, pub);
	g_assert_null(strstr(g_hash_table_lookup(vars, "title"), "secret"));
	g_assert_null(strstr(g_hash_table_lookup(vars, "description"), "secret"));
	{
		g_autofree char *text = render_mail_text(pub);
		g_autofree char *json = NULL;
		g_autoptr(JsonNode) n = render_json(pub);
		g_autoptr(JsonGenerator) gen = json_generator_new();

		json_generator_set_root(gen, n);
		json = json_generator_to_data(gen, NULL);
		g_assert_null(strstr(text, "secret"));
		g_assert_null(strstr(json, "secret"));
		g_assert_nonnull(strstr(json, "c0ffee"));
	}
}

static void
test_redact(void)
{
	g_autoptr(researcher_identity) id = researcher_identity_new();
	g_autofree char *r = NULL;

	researcher_identity_add_address(id, "Alice.Smith@example.net");
	researcher_identity_add_name(id, "Alice Smith");
	researcher_identity_add_name(id, "Al");	/* too short to cut out of words */
	r = researcher_identity_redact(id, "Reported by Alice Smith <alice.smith@EXAMPLE.net>, "
				       "write to alice.smith@gmail.example. Also: All good.");
	g_assert_cmpstr(r, ==, "Reported by [the researcher] <[the researcher]>, "
			"write to [the researcher]@gmail.example. Also: All good.");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/entry/headline", test_headline);
	g_test_add_func("/entry/disclosure", test_disclosure);
	g_test_add_func("/entry/sealed", test_sealed);
	g_test_add_func("/entry/redact", test_redact);
	g_test_add_func("/osv/package", test_package);
	return g_test_run();
}
