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

/* Append a record with an auth object of its own (a signer, an
 * endorsement). */
static void
add_auth(entry *e, gint64 seq, const char *kind, const char *role, const char *auth, const char *fields)
{
	store_record rec = { 0 };
	g_autofree char *created = g_strdup_printf("2026-02-%02dT00:00:00Z", (int) seq);

	rec.entry = e->id;
	rec.seq = seq;
	rec.created = created;
	rec.kind = kind;
	rec.author = "someone@example.net";
	rec.role = role;
	rec.auth = auth;
	rec.sha256 = "00";
	entry_add_record(e, &rec, seq, "A subject", fields, "", NULL, NULL);
}

#define KEY_N "0123456789ABCDEF0123456789ABCDEF01234567"
#define KEY_K "89ABCDEF0123456789ABCDEF0123456789ABCDEF"
#define KEY_R "FEDCBA9876543210FEDCBA9876543210FEDCBA98"

static void
test_proposals(void)
{
	g_autoptr(entry) e = entry_new_empty("TEST-2026-0003", "2026-02-01T00:00:00Z");
	g_autoptr(entry_facts) f = NULL;
	const entry_claim *c;

	add(e, 1, "request", "creator", NULL, "alice@example.net",
	    "[[\"Product\",\"Foo\"],[\"Reference\",\"https://a.example/poc sha256="
	    "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789\"]]", "");
	/* an endorsed contributor, allowed Version only */
	add_auth(e, 2, "addition", "contributor",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_N "\",\"role\":\"contributor\",\"how\":\"key\","
		 "\"endorsed_by\":\"creator\",\"endorsement\":\"command\",\"fields\":\"Version\"}",
		 "[[\"Version\",\"2.0\"],[\"Title\",\"Pwned\"]]");
	/* the same auth, but its signature does not act here */
	add_auth(e, 3, "addition", "contributor",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_N "\",\"ignored\":\"no\",\"role\":\"contributor\","
		 "\"how\":\"key\",\"endorsed_by\":\"creator\",\"endorsement\":\"command\"}",
		 "[[\"Version\",\"3.0\"]]");
	/* a third party's key, twice; a mirror of the reference by its checksum */
	add_auth(e, 4, "addition", "third-party",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_K "\",\"role\":\"third-party\",\"how\":\"none\"}",
		 "[[\"Version\",\"4.0\"],[\"Mirror\",\"https://m.example/poc sha256="
		 "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789\"]]");
	add(e, 5, "addition", "third-party", "none", "bob@example.net",
	    "[[\"Version\",\"5.0\"],[\"Reference\",\"https://b.example/\"]]", "");
	add_auth(e, 6, "addition", "third-party",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_K "\",\"role\":\"third-party\",\"how\":\"none\"}",
		 "[[\"Fixed-In\",\"4.1\"]]");
	f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
	/* 1.0 is not there: versions are 2.0 only (the contributor's) */
	g_assert_cmpuint(f->versions->len, ==, 1);
	g_assert_cmpstr(((entry_claim *) g_ptr_array_index(f->versions, 0))->value, ==, "2.0");
	g_assert_null(f->title);
	/* Title (2), Version 3.0 (3), Version 4.0 (4), Version, Reference (5), Fixed-In (6) */
	g_assert_cmpuint(f->proposals->len, ==, 6);
	c = g_ptr_array_index(f->references, 0);
	g_assert_cmpstr(c->value, ==, "https://a.example/poc");
	g_assert_cmpstr(c->sha256, ==, "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
	g_assert_nonnull(c->mirrors);
	g_assert_cmpuint(c->mirrors->len, ==, 1);
	g_assert_cmpstr(((entry_claim *) g_ptr_array_index(c->mirrors, 0))->value, ==, "https://m.example/poc");
	g_clear_pointer(&f, entry_facts_free);

	/* the creator approves record 5 by token, key K by key */
	add(e, 7, "command", "creator", "token", "alice@example.net", "[[\"Approve\",\"5\"]]", "");
	add(e, 8, "command", "creator", "key", "alice@example.net", "[[\"Approve-Key\",\"" KEY_K "\"]]", "");
	/* unverified: approves nothing */
	add(e, 9, "command", "creator", "address", "alice@example.net", "[[\"Approve\",\"2\"]]", "");
	f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
	g_assert_cmpuint(f->versions->len, ==, 3);	/* 2.0, then 5.0 and 4.0 as approved */
	c = g_ptr_array_index(f->versions, 1);
	g_assert_cmpstr(c->value, ==, "5.0");
	g_assert_cmpint(c->record->seq, ==, 5);
	g_assert_cmpint(c->approved->seq, ==, 7);
	g_assert_cmpstr(((entry_claim *) g_ptr_array_index(f->versions, 2))->value, ==, "4.0");
	g_assert_cmpstr(f->fixed_in->value, ==, "4.1");
	g_assert_cmpint(f->fixed_in->approved->seq, ==, 8);
	g_assert_cmpuint(f->references->len, ==, 2);
	/* left: Title (2), Version 3.0 (3, its signature does not act) */
	g_assert_cmpuint(f->proposals->len, ==, 2);
	g_clear_pointer(&f, entry_facts_free);
	/* as of record 6, before the approvals */
	f = entry_facts_derive(e, 6, FALSE, NULL);
	g_assert_cmpuint(f->versions->len, ==, 1);
	g_clear_pointer(&f, entry_facts_free);

	/* endorsements, review, access */
	add(e, 10, "command", "creator", "key", "alice@example.net",
	    "[[\"Endorse\",\"" KEY_N "\"],[\"Endorse-Fields\",\"Version Reference\"]]", "");
	add(e, 11, "command", "creator", "token", "alice@example.net", "[[\"Endorse\",\"" KEY_K "\"]]", "");
	add(e, 12, "command", "creator", "token", "alice@example.net", "[[\"Unendorse\",\"" KEY_N "\"]]", "");
	add(e, 13, "command", "third-party", "none", "bob@example.net", "[[\"Endorse\",\"" KEY_R "\"]]", "");
	add(e, 14, "command", "moderator", "key", "mod@example.org",
	    "[[\"Reviewed\",\"yes\"],[\"Reviewed-Product\",\"Foo\"],[\"Reviewed-Version\",\"1.0\"]]", "");
	add(e, 15, "command", "creator", "address", "alice@example.net", "[[\"Reviewed\",\"yes\"]]", "");
	add_auth(e, 16, "command", "third-party",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_R "\",\"role\":\"third-party\",\"how\":\"none\"}",
		 "[[\"Access-Request\",\"" KEY_R "\"]]");
	/* a request for another key than the signer's does not count */
	add_auth(e, 17, "command", "third-party",
		 "{\"method\":\"pgp\",\"fingerprint\":\"" KEY_R "\",\"role\":\"third-party\",\"how\":\"none\"}",
		 "[[\"Access-Request\",\"" KEY_K "\"]]");
	/* a grant by a third party does not count; the creator's does */
	add(e, 18, "command", "third-party", "none", "bob@example.net", "[[\"Access-Grant\",\"" KEY_R "\"]]", "");
	add(e, 19, "command", "creator", "token", "alice@example.net", "[[\"Access-Grant\",\"" KEY_R "\"]]", "");
	add(e, 20, "delivery", "robot", "robot", "request@example.org",
	    "[[\"Delivered-To-Key\",\"" KEY_R "\"],[\"Records\",\"1\"]]", "");
	/* a delivery record by anyone but the robot counts for nothing */
	add(e, 21, "delivery", "creator", "token", "alice@example.net",
	    "[[\"Delivered-To-Key\",\"" KEY_R "\"],[\"Records\",\"1\"]]", "");
	f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
	g_assert_cmpuint(f->endorsements->len, ==, 1);
	c = g_ptr_array_index(f->endorsements, 0);
	g_assert_cmpstr(c->value, ==, KEY_K);
	g_assert_null(c->fields);
	g_assert_true(f->marks & ENTRY_MARK_REVIEWED);
	g_assert_cmpint(f->reviewed->record->seq, ==, 14);
	g_assert_cmpstr(f->reviewed_product, ==, "Foo");
	g_assert_cmpstr(f->reviewed_version, ==, "1.0");
	g_assert_cmpuint(f->access->len, ==, 1);
	{
		const entry_access *a = entry_facts_access(f, "fedcba9876543210fedcba9876543210fedcba98");

		g_assert_nonnull(a);
		g_assert_cmpint(a->requested->seq, ==, 16);
		g_assert_cmpint(a->granted->seq, ==, 19);
		g_assert_cmpuint(a->deliveries, ==, 1);
		g_assert_cmpint(a->delivered->seq, ==, 20);
	}
	g_assert_true(entry_fpr_equal("0123 4567", "01234567"));
	g_assert_false(entry_fpr_equal("", ""));
	g_assert_false(entry_fpr_equal("0123", "01234"));
}

static void
test_reference_parse(void)
{
	g_autofree char *u = NULL;
	g_autofree char *h = NULL;
	g_autofree char *o = NULL;

	g_assert_true(entry_reference_parse("https://x/ sha256=" "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789",
					    &u, &h, &o));
	g_assert_cmpstr(u, ==, "https://x/");
	g_assert_cmpstr(h, ==, "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
	g_assert_null(o);
	g_clear_pointer(&u, g_free);
	g_clear_pointer(&h, g_free);
	g_assert_true(entry_reference_parse("  https://m/  of  https://x/ ", &u, &h, &o));
	g_assert_cmpstr(u, ==, "https://m/");
	g_assert_cmpstr(o, ==, "https://x/");
	g_clear_pointer(&u, g_free);
	g_clear_pointer(&o, g_free);
	g_assert_false(entry_reference_parse("https://x/ sha256=abc", &u, &h, &o));
	g_clear_pointer(&u, g_free);
	g_assert_false(entry_reference_parse("https://x/ the advisory", &u, &h, &o));
	g_clear_pointer(&u, g_free);
	g_assert_false(entry_reference_parse("", &u, &h, &o));
	g_assert_cmpstr(entry_headline_field("fixed"), ==, "Fixed-In");
	g_assert_null(entry_headline_field("Status"));
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
	g_test_add_func("/entry/proposals", test_proposals);
	g_test_add_func("/entry/reference-parse", test_reference_parse);
	g_test_add_func("/osv/package", test_package);
	return g_test_run();
}
