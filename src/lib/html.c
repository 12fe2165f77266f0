/* html.c - the static web archive */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "export.h"
#include "html.h"
#include "ids.h"
#include "osv.h"
#include "pubmail.h"

#define HTML_ATOM "feed.atom"
#define HTML_LATEST 20		/* entries on the front page */
#define ATOM_ENTRIES 100	/* entries of the Atom feed */

/* Plain and readable; inline, so that the pages need nothing but
 * themselves and the Content-Security-Policy can forbid everything else. */
static const char css[] =
	"body{font-family:system-ui,sans-serif;line-height:1.5;max-width:60em;margin:0 auto;"
	"padding:1em;color:#1a1a1a;background:#fff}"
	"a{color:#0645ad}nav{margin-bottom:1em;font-size:.95em}"
	"h1{font-size:1.6em;margin:.3em 0}h1 .id{font-family:monospace;margin-right:.4em}"
	"h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}"
	"h3{font-size:1.05em;margin:.2em 0}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"th,td{text-align:left;vertical-align:top;padding:.2em .8em .2em 0}"
	"table.list td,table.list th{border-bottom:1px solid #eee}"
	"code,.hash{font-family:monospace;word-break:break-all}"
	".state{display:inline-block;padding:0 .5em;border-radius:.3em;background:#eee}"
	".state-public{background:#e3f1e3}.state-embargoed{background:#fdf0d5}"
	".state-reserved{background:#eef}.withdrawn{background:#fbe3e3;padding:.5em}"
	".vendor-confirmed{color:#1b5e20}.vendor-disputed{color:#b71c1c}.vendor-fixed{color:#0d47a1}"
	"ol.records{padding-left:0;list-style:none}"
	"ol.records>li{border:1px solid #ddd;border-radius:.4em;padding:.6em .8em;margin:.8em 0}"
	".meta{color:#555;font-size:.92em;margin:.1em 0}"
	".body,.statement{white-space:pre-wrap;font-family:monospace;background:#f7f7f7;"
	"padding:.6em;border-radius:.3em;overflow-wrap:anywhere}"
	"footer{margin-top:2em;color:#666;font-size:.85em}";

void
html_append_text(GString *out, const char *s, gboolean multiline)
{
	g_autofree char *fixed = NULL;

	if (s == NULL)
		return;
	if (!g_utf8_validate(s, -1, NULL))
		s = fixed = g_utf8_make_valid(s, -1);
	for (const char *p = s; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		switch (c) {
		case '&': g_string_append(out, "&amp;"); continue;
		case '<': g_string_append(out, "&lt;"); continue;
		case '>': g_string_append(out, "&gt;"); continue;
		case '"': g_string_append(out, "&quot;"); continue;
		case '\'': g_string_append(out, "&#39;"); continue;
		default: break;
		}
		if ((multiline && (c == '\n' || c == '\t')) ||
		    !(c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x200e || c == 0x200f || c == 0x061c ||
		      (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
		      c == 0x2028 || c == 0x2029))
			g_string_append_len(out, p, g_utf8_next_char(p) - p);
		else if (c == '\n' || c == '\t' || c == 0x2028 || c == 0x2029)
			g_string_append_c(out, ' ');
		else
			g_string_append(out, "\xef\xbf\xbd");
	}
}

static void
t(GString *out, const char *s)
{
	html_append_text(out, s, FALSE);
}

static void
page_begin(GString *out, const html_opts *o, const char *rel, const char *title)
{
	g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			"style-src 'unsafe-inline'; img-src 'self'\">\n"
			"<meta name=\"referrer\" content=\"no-referrer\">\n<title>");
	t(out, title);
	g_string_append(out, "</title>\n");
	/* feed readers find the Atom feed from any page */
	g_string_append_printf(out, "<link rel=\"alternate\" type=\"application/atom+xml\" href=\"%s%s\" title=\"",
			       rel, HTML_ATOM);
	t(out, o->title);
	g_string_append(out, " (Atom)\">\n<style>");
	g_string_append(out, css);
	g_string_append_printf(out, "</style>\n</head>\n<body>\n<nav><a href=\"%sindex.html\">", rel);
	t(out, o->title);
	g_string_append_printf(out, "</a> &middot; <a href=\"%svendors.html\">Vendors</a>"
			       " &middot; <a href=\"%s%s\">Atom feed</a>"
			       " &middot; <a href=\"%sverify.html\">How to verify</a></nav>\n<main>\n",
			       rel, rel, HTML_ATOM, rel);
}

static void
page_end(GString *out)
{
	g_string_append(out, "</main>\n<footer>Every record is kept for ever; the digest of an entry is "
			"the SHA-256 of its first record (vulnid-json(7)).</footer>\n</body>\n</html>\n");
}

static vulnid_status
write_page(const char *dir, const char *name, GString *page, GError **err)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);

	return export_write_file(path, page->str, page->len, 0644, err);
}

/* A reference to another entry: a link when it is one of ours and shown. */
static void
entry_ref(GString *out, const export_set *set, const char *id, const char *rel)
{
	const entry_view *v = ids_parse(id, NULL, NULL, NULL) ? export_set_view(set, id) : NULL;

	if (export_listed(v)) {
		/* ids_parse() allows only [A-Z0-9-]: safe in a path and an attribute */
		g_string_append_printf(out, "<a href=\"%sentries/%s.html\">", rel, id);
		t(out, id);
		g_string_append(out, "</a>");
	} else
		t(out, id);
}

static gboolean
url_ok(const char *u)
{
	if (!(g_str_has_prefix(u, "https://") || g_str_has_prefix(u, "http://")) || strlen(u) > 2000)
		return FALSE;
	for (const unsigned char *p = (const unsigned char *) u; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return FALSE;
	return TRUE;
}

static void
state_badge(GString *out, const entry_view *v)
{
	const char *st = entry_state_str(v->facts->state);

	g_string_append_printf(out, "<span class=\"state state-%s\">%s</span>", st, st);
	if (v->facts->marks & ENTRY_MARK_REVIEWED)
		g_string_append(out, " <span class=\"state state-reviewed\">reviewed</span>");
}

static void
row_begin(GString *out, const char *label)
{
	g_string_append(out, "<tr><th>");
	t(out, label);
	g_string_append(out, "</th><td>");
}

static void
row_text(GString *out, const char *label, const char *value)
{
	if (value == NULL || *value == '\0')
		return;
	row_begin(out, label);
	t(out, value);
	g_string_append(out, "</td></tr>\n");
}

static void
row_claim(GString *out, const char *label, const entry_claim *c)
{
	if (c != NULL)
		row_text(out, label, c->value);
}

static void
row_claims(GString *out, const char *label, GPtrArray *claims, const char *sep)
{
	if (claims->len == 0)
		return;
	row_begin(out, label);
	for (guint k = 0; k < claims->len; k++) {
		if (k > 0)
			g_string_append(out, sep);
		t(out, ((entry_claim *) g_ptr_array_index(claims, k))->value);
	}
	g_string_append(out, "</td></tr>\n");
}

/* Who wrote a record, in which role and how that is known: a signer's key
 * is shown (unless withheld for an anonymous researcher), and a role that
 * only an address or a domain established is marked unverified. */
static void
author_describe(GString *out, const view_record *vr)
{
	const entry_record *r = vr->r;

	g_string_append(out, "by <span class=\"author\">");
	if (vr->author_withheld)
		g_string_append(out, "an anonymous researcher");
	else if (vr->author != NULL)
		t(out, vr->author);
	else
		g_string_append(out, "unknown");
	g_string_append(out, "</span> &middot; ");
	if (r->kind == ENTRY_KIND_RELEASE) {
		g_string_append(out, "written by the robot itself");
		return;
	}
	g_string_append_printf(out, "<span class=\"how how-%s\">", entry_how_verified(r->how) ||
			       r->how == ENTRY_HOW_REQUEST ? "verified" : "unverified");
	t(out, entry_role_str(r->role));
	g_string_append(out, ", ");
	t(out, entry_how_phrase(r->how));
	{
		g_autofree char *endorsed = entry_view_record_endorsement(vr);

		if (endorsed != NULL) {
			g_string_append(out, ", ");
			t(out, endorsed);
		}
	}
	g_string_append(out, "</span>");
	if (r->signed_by_key) {
		g_string_append(out, " &middot; OpenPGP signature by ");
		if (vr->signer != NULL) {
			g_string_append(out, "key <code class=\"fpr\">");
			t(out, vr->signer);
			g_string_append(out, "</code>");
		} else
			g_string_append(out, vr->author_withheld ? "the researcher&#39;s key (withheld)"
								 : "a key that is withheld");
	} else if (r->auth_reason != NULL) {
		g_string_append(out, " &middot; a signature was not accepted: ");
		t(out, r->auth_reason);
	}
}

static void
vendor_position(GString *out, const entry_view *v)
{
	const entry_facts *f = v->facts;
	const entry_claim *c = f->vendor_status;

	g_string_append(out, "<h2 id=\"vendor\">The vendor&#39;s position</h2>\n");
	if (c == NULL)
		g_string_append(out, "<p>No verified response from the vendor is recorded.</p>\n");
	else {
		g_string_append_printf(out, "<p class=\"vendor vendor-%s\"><strong>", c->value);
		if (strcmp(c->value, "confirmed") == 0)
			g_string_append(out, "Confirmed by the vendor");
		else if (strcmp(c->value, "disputed") == 0)
			g_string_append(out, "Disputed by the vendor");
		else
			g_string_append(out, "Fixed, says the vendor");
		g_string_append(out, "</strong> (");
		t(out, c->record->created);
		g_string_append_printf(out, ", <a href=\"#r%" G_GINT64_FORMAT "\">record %" G_GINT64_FORMAT "</a>, ",
				       c->record->seq, c->record->seq);
		t(out, entry_how_phrase(c->record->how));
		g_string_append(out, ").</p>\n");
		if (c->record->body != NULL && *c->record->body != '\0') {
			g_string_append(out, "<div class=\"statement\">");
			html_append_text(out, c->record->body, TRUE);
			g_string_append(out, "</div>\n");
		}
	}
}

/* What unverified senders said: kept beside the headline, never in it. */
static void
proposals(GString *out, const entry_view *v)
{
	const GPtrArray *p = v->facts->proposals;

	if (p->len == 0)
		return;
	g_string_append(out, "<h2 id=\"unverified\">Unverified</h2>\n<p>Said by senders whose role "
			"nobody verified (no key, no token); shown, not taken:</p>\n<table class=\"proposals\">\n");
	for (guint k = 0; k < p->len; k++) {
		const entry_claim *c = g_ptr_array_index(p, k);

		g_string_append(out, "<tr><th>");
		t(out, c->key);
		g_string_append(out, "</th><td>");
		t(out, c->value);
		g_string_append_printf(out, " <span class=\"meta\">(<a href=\"#r%" G_GINT64_FORMAT "\">record %"
				       G_GINT64_FORMAT "</a>, ", c->record->seq, c->record->seq);
		t(out, entry_role_str(c->record->role));
		g_string_append(out, ", ");
		t(out, entry_how_phrase(c->record->how));
		g_string_append(out, ")</span></td></tr>\n");
	}
	g_string_append(out, "</table>\n");
}

static void
record_fields_table(GString *out, const entry_record *r)
{
	if (r->fields->len == 0)
		return;
	g_string_append(out, "<table class=\"fields\">\n");
	for (guint j = 0; j < r->fields->len; j++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, j);

		g_string_append(out, "<tr><th>");
		t(out, kv->key);
		g_string_append(out, "</th><td>");
		t(out, kv->value);
		g_string_append(out, "</td></tr>\n");
	}
	g_string_append(out, "</table>\n");
}

static void
commitments_list(GString *out, const entry_view *v)
{
	if (v->commitments->len == 0)
		return;
	g_string_append(out, "<ul class=\"commitments\">\n");
	for (guint k = 0; k < v->commitments->len; k++) {
		const entry_record *r = g_ptr_array_index(v->commitments, k);

		g_string_append_printf(out, "<li>record %" G_GINT64_FORMAT ", ", r->seq);
		t(out, r->created);
		g_string_append(out, ": <code>");
		t(out, r->sha256);
		g_string_append(out, "</code></li>\n");
	}
	g_string_append(out, "</ul>\n");
}

/* "record 4, 2026-05-01T10:00:00Z" with a link to the record when shown */
static void
record_ref(GString *out, const entry_record *r, gboolean link)
{
	if (link)
		g_string_append_printf(out, "<a href=\"#r%" G_GINT64_FORMAT "\">record %" G_GINT64_FORMAT "</a>, ",
				       r->seq, r->seq);
	else
		g_string_append_printf(out, "record %" G_GINT64_FORMAT ", ", r->seq);
	t(out, r->created);
}

/* The keys given access to the sealed records (and, once the entry is
 * public, those that asked): who, and when; never what they read. */
static void
access_list(GString *out, const entry_view *v)
{
	gboolean any = FALSE;

	for (guint k = 0; k < v->facts->access->len; k++) {
		const entry_access *a = g_ptr_array_index(v->facts->access, k);

		if (a->granted == NULL && v->stub)
			continue;
		if (!any)
			g_string_append(out, "<h2 id=\"access\">Access before the release</h2>\n<ul class=\"access\">\n");
		any = TRUE;
		g_string_append(out, "<li>key <code class=\"fpr\">");
		t(out, a->fpr);
		g_string_append(out, "</code>: asked (");
		record_ref(out, a->requested, !v->stub);
		g_string_append(out, ")");
		if (a->granted != NULL) {
			g_string_append(out, ", given access (");
			record_ref(out, a->granted, !v->stub);
			g_string_append_printf(out, "), sealed records sent %u time%s", a->deliveries,
					       a->deliveries == 1 ? "" : "s");
		}
		g_string_append(out, "</li>\n");
	}
	if (any)
		g_string_append(out, "</ul>\n");
}

static void
entry_page_stub(GString *out, const entry_view *v)
{
	g_string_append(out, "<h1><span class=\"id\">");
	t(out, v->e->id);
	g_string_append(out, "</span>under embargo</h1>\n<p><span class=\"state state-embargoed\">embargoed</span></p>\n"
			"<table class=\"facts\">\n");
	row_text(out, "Assigned", v->e->created);
	row_text(out, "Embargo", v->facts->embargo != NULL && g_ascii_strcasecmp(v->facts->embargo, "yes") != 0
		 ? v->facts->embargo : "until released");
	row_begin(out, "Commitment");
	g_string_append(out, "<code>");
	t(out, v->e->digest);
	g_string_append(out, "</code></td></tr>\n</table>\n"
			"<p>The content of this entry is sealed until the embargo ends. Each commitment is "
			"the SHA-256 of a sealed record: when the records are published, anyone can check "
			"that they are what was committed to.</p>\n");
	commitments_list(out, v);
	access_list(out, v);
}

static void
attachments_list(GString *out, const view_record *vr)
{
	if (vr->attachments->len == 0)
		return;
	g_string_append(out, "<ul class=\"attachments\">\n");
	for (guint j = 0; j < vr->attachments->len; j++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, j);
		const entry_attachment *a = va->a;

		if (va->withheld) {
			g_string_append(out, "<li>");
			t(out, entry_view_attachment_label(va));
			g_string_append(out, "</li>\n");
			continue;
		}
		g_string_append(out, "<li>");
		t(out, a->filename != NULL ? a->filename : "(no name)");
		g_string_append(out, " (");
		t(out, a->content_type);
		g_string_append_printf(out, ", %" G_GINT64_FORMAT " bytes), SHA-256 <code>", a->size);
		t(out, a->sha256);
		g_string_append(out, "</code></li>\n");
	}
	g_string_append(out, "</ul>\n");
}

static void
record_item(GString *out, const entry_view *v, const view_record *vr, GHashTable *mail_of)
{
	const entry_record *r = vr->r;
	g_autofree char *key = g_strdup_printf("%s/%" G_GINT64_FORMAT, v->e->id, r->seq);
	const char *mail = g_hash_table_lookup(mail_of, key);

	g_string_append_printf(out, "<li id=\"r%" G_GINT64_FORMAT "\">\n<h3>Record %" G_GINT64_FORMAT
			       " &middot; ", r->seq, r->seq);
	t(out, r->kind_name);
	g_string_append(out, " &middot; ");
	t(out, entry_role_str(r->role));
	g_string_append(out, "</h3>\n<p class=\"meta\">");
	t(out, r->created);
	g_string_append(out, " &middot; ");
	author_describe(out, vr);
	g_string_append(out, "</p>\n");
	if (r->opens > 0) {
		g_string_append_printf(out, "<p>Releases the sealed content of <a href=\"#r%" G_GINT64_FORMAT
				       "\">record %" G_GINT64_FORMAT "</a>, which is shown there; its hash is "
				       "the commitment published while it was sealed.</p>\n", r->opens, r->opens);
	} else if (vr->sealed) {
		g_string_append(out, "<p class=\"meta\">Sealed until the embargo ends; its hash is the "
				"commitment.</p>\n");
	} else {
		if (r->sealed != NULL)
			g_string_append(out, "<p class=\"meta\">Sealed under embargo when it was recorded; "
					"published at its release.</p>\n");
		if (r->subject != NULL && *r->subject != '\0') {
			g_string_append(out, "<p class=\"subject\">Subject: ");
			t(out, r->subject);
			g_string_append(out, "</p>\n");
		}
		record_fields_table(out, r);
		if (r->body != NULL && *r->body != '\0') {
			g_string_append(out, "<div class=\"body\">");
			html_append_text(out, r->body, TRUE);
			g_string_append(out, "</div>\n");
		}
		attachments_list(out, vr);
	}
	g_string_append(out, "<p class=\"meta\">SHA-256 <code>");
	t(out, r->sha256);
	g_string_append(out, "</code>");
	if (mail != NULL)
		/* mail names are made of an identifier and a number */
		g_string_append_printf(out, " &middot; <a href=\"../mail/%s\">as a mail</a>", mail);
	g_string_append(out, "</p>\n</li>\n");
}

static void
link_or_text(GString *out, const char *u)
{
	if (url_ok(u)) {
		g_string_append(out, "<a rel=\"nofollow noopener\" href=\"");
		t(out, u);
		g_string_append(out, "\">");
		t(out, u);
		g_string_append(out, "</a>");
	} else
		t(out, u);
}

/* Headline values from unverified senders that the creator approved. */
static void
approved_rows(GString *out, const entry_view *v)
{
	const entry_facts *f = v->facts;
	const entry_claim *single[] = { f->title, f->vendor, f->product, f->type, f->vendor_contact, f->severity,
					f->fixed_in, f->ecosystem, f->package };
	GPtrArray *lists[] = { f->versions, f->references, f->related, f->aliases };
	g_autoptr(GPtrArray) all = g_ptr_array_new();

	for (gsize i = 0; i < G_N_ELEMENTS(single); i++)
		if (single[i] != NULL && single[i]->approved != NULL)
			g_ptr_array_add(all, (gpointer) single[i]);
	for (gsize k = 0; k < G_N_ELEMENTS(lists); k++)
		for (guint i = 0; i < lists[k]->len; i++)
			if (((entry_claim *) g_ptr_array_index(lists[k], i))->approved != NULL)
				g_ptr_array_add(all, g_ptr_array_index(lists[k], i));
	for (guint i = 0; i < all->len; i++) {
		const entry_claim *c = g_ptr_array_index(all, i);

		row_begin(out, i == 0 ? "Approved" : "");
		t(out, c->key);
		g_string_append(out, ": ");
		t(out, c->value);
		g_string_append_printf(out, " <span class=\"meta\">(<a href=\"#r%" G_GINT64_FORMAT "\">record %"
				       G_GINT64_FORMAT "</a>, ", c->record->seq, c->record->seq);
		t(out, entry_role_str(c->record->role));
		g_string_append_printf(out, ", approved by the creator in <a href=\"#r%" G_GINT64_FORMAT
				       "\">record %" G_GINT64_FORMAT "</a>)</span></td></tr>\n",
				       c->approved->seq, c->approved->seq);
	}
}

static void
entry_facts_table(GString *out, const export_set *set, const entry_view *v)
{
	const entry_facts *f = v->facts;
	GPtrArray *dups = g_hash_table_lookup(set->duplicates, v->e->id);

	g_string_append(out, "<table class=\"facts\">\n");
	row_begin(out, "Digest");
	g_string_append(out, "<code>");
	t(out, v->e->digest);
	g_string_append(out, "</code></td></tr>\n");
	row_text(out, "Assigned", v->e->created);
	if (g_strcmp0(f->published, v->e->created) != 0)
		row_text(out, "Published", f->published);
	row_claim(out, "Vendor", f->vendor);
	row_claim(out, "Product", f->product);
	row_claims(out, "Versions", f->versions, ", ");
	row_claim(out, "Type", f->type);
	row_claim(out, "Fixed in", f->fixed_in);
	if (f->severity != NULL || f->cvss->len > 0) {
		row_begin(out, "Severity");
		if (f->severity != NULL)
			t(out, f->severity->value);
		for (guint k = 0; k < f->cvss->len; k++) {
			const entry_cvss *r = g_ptr_array_index(f->cvss, k);

			g_string_append(out, k > 0 || f->severity != NULL ? "<br><code>" : "<code>");
			t(out, r->score);
			g_string_append(out, "</code>");
		}
		g_string_append(out, "</td></tr>\n");
	}
	if (f->references->len > 0) {
		row_begin(out, "References");
		for (guint k = 0; k < f->references->len; k++) {
			const entry_claim *c = g_ptr_array_index(f->references, k);

			if (k > 0)
				g_string_append(out, "<br>");
			link_or_text(out, c->value);
			if (c->sha256 != NULL) {
				g_string_append(out, " <span class=\"meta\">SHA-256 <code>");
				t(out, c->sha256);
				g_string_append(out, "</code></span>");
			}
			for (guint m = 0; c->mirrors != NULL && m < c->mirrors->len; m++) {
				const entry_claim *mc = g_ptr_array_index(c->mirrors, m);

				g_string_append(out, "<br>&nbsp;&nbsp;mirror: ");
				link_or_text(out, mc->value);
				g_string_append_printf(out, " <span class=\"meta\">(<a href=\"#r%" G_GINT64_FORMAT
						       "\">record %" G_GINT64_FORMAT "</a>)</span>", mc->record->seq,
						       mc->record->seq);
			}
		}
		g_string_append(out, "</td></tr>\n");
	}
	approved_rows(out, v);
	if (f->reviewed != NULL) {
		row_begin(out, "Reviewed");
		if (f->reviewed_product != NULL) {
			t(out, f->reviewed_product);
			g_string_append(out, " ");
			t(out, f->reviewed_version != NULL ? f->reviewed_version : "");
			g_string_append(out, " ");
		}
		g_string_append(out, "<span class=\"meta\">(by a moderator, ");
		record_ref(out, f->reviewed->record, TRUE);
		g_string_append(out, ")</span></td></tr>\n");
	}
	for (guint k = 0; k < f->endorsements->len; k++) {
		const entry_claim *c = g_ptr_array_index(f->endorsements, k);

		row_begin(out, k == 0 ? "Endorsed keys" : "");
		g_string_append(out, "<code class=\"fpr\">");
		t(out, c->value);
		g_string_append(out, "</code> for ");
		t(out, c->fields != NULL ? c->fields : "all fields");
		g_string_append(out, " <span class=\"meta\">(");
		t(out, entry_role_str(c->record->role));
		g_string_append(out, ", ");
		record_ref(out, c->record, TRUE);
		g_string_append(out, ")</span></td></tr>\n");
	}
	row_claims(out, "Aliases", f->aliases, ", ");
	if (f->duplicate_of != NULL) {
		row_begin(out, "Duplicate of");
		entry_ref(out, set, f->duplicate_of->value, "../");
		g_string_append(out, "</td></tr>\n");
	}
	if (dups != NULL && dups->len > 0) {
		row_begin(out, "Duplicates");
		for (guint k = 0; k < dups->len; k++) {
			if (k > 0)
				g_string_append(out, ", ");
			entry_ref(out, set, g_ptr_array_index(dups, k), "../");
		}
		g_string_append(out, "</td></tr>\n");
	}
	if (f->related->len > 0 || f->links->len > 0) {
		row_begin(out, "Related");
		for (guint k = 0; k < f->related->len + f->links->len; k++) {
			const entry_claim *c = k < f->related->len ? g_ptr_array_index(f->related, k)
								     : g_ptr_array_index(f->links, k - f->related->len);

			if (k > 0)
				g_string_append(out, ", ");
			entry_ref(out, set, c->value, "../");
		}
		g_string_append(out, "</td></tr>\n");
	}
	g_string_append(out, "</table>\n");
}

static void
entry_page(GString *out, const html_opts *o, const export_set *set, guint i, GHashTable *mail_of)
{
	const entry_view *v = g_ptr_array_index(set->views, i);
	const entry_facts *f = v->facts;
	g_autofree char *title = g_strdup_printf("%s: %s", v->e->id, v->stub ? "under embargo" : entry_view_title(v));

	page_begin(out, o, "../", title);
	g_string_append_printf(out, "<p class=\"meta\"><a href=\"../%04d.html\">%04d</a></p>\n", v->e->year, v->e->year);
	if (v->stub) {
		entry_page_stub(out, v);
		page_end(out);
		return;
	}
	g_string_append(out, "<h1><span class=\"id\">");
	t(out, v->e->id);
	g_string_append(out, "</span>");
	t(out, *entry_view_title(v) != '\0' ? entry_view_title(v) : "(no title)");
	g_string_append(out, "</h1>\n<p>");
	state_badge(out, v);
	g_string_append(out, "</p>\n");
	if (f->withdrawn != NULL) {
		g_string_append(out, "<p class=\"withdrawn\"><strong>Withdrawn</strong> on ");
		t(out, f->withdrawn->record->created);
		if (g_ascii_strcasecmp(f->withdrawn->value, "yes") != 0) {
			g_string_append(out, ": ");
			t(out, f->withdrawn->value);
		}
		g_string_append(out, "</p>\n");
	}
	if (f->state == ENTRY_RESERVED)
		g_string_append(out, "<p>Reserved: the identifier was assigned, nothing has been said "
				"about it yet.</p>\n");
	entry_facts_table(out, set, v);
	vendor_position(out, v);
	proposals(out, v);
	access_list(out, v);
	g_string_append(out, "<h2 id=\"records\">Records</h2>\n<ol class=\"records\">\n");
	for (guint k = 0; k < v->records->len; k++)
		record_item(out, v, g_ptr_array_index(v->records, k), mail_of);
	g_string_append(out, "</ol>\n<h2>Machine-readable</h2>\n<ul>\n");
	if (osv_wanted(v)) {
		g_autofree char *osv = osv_id(&o->osv, v->e->id);

		/* the OSV prefix is configuration, the id an identifier */
		g_string_append(out, "<li><a href=\"../osv/");
		t(out, osv);
		g_string_append(out, ".json\">OSV record</a></li>\n");
	}
	g_string_append(out, "<li>each record as a mail is linked beside its hash</li>\n</ul>\n");
	page_end(out);
}

static void
list_row(GString *out, const entry_view *v, const char *rel)
{
	const entry_facts *f = v->facts;

	g_string_append_printf(out, "<tr><td><a href=\"%sentries/%s.html\"><code>", rel, v->e->id);
	t(out, v->e->id);
	g_string_append(out, "</code></a></td><td>");
	t(out, v->e->created);
	g_string_append(out, "</td><td>");
	state_badge(out, v);
	if (f->withdrawn != NULL)
		g_string_append(out, " withdrawn");
	g_string_append(out, "</td><td>");
	t(out, v->stub ? "(under embargo)" : entry_view_title(v));
	g_string_append(out, "</td><td>");
	if (!v->stub && f->vendor != NULL)
		t(out, f->vendor->value);
	g_string_append(out, "</td><td>");
	if (!v->stub && f->vendor_status != NULL)
		g_string_append_printf(out, "<span class=\"vendor-%s\">%s</span>", f->vendor_status->value,
				       f->vendor_status->value);
	g_string_append(out, "</td></tr>\n");
}

static const char list_head[] =
	"<table class=\"list\">\n<tr><th>Identifier</th><th>Assigned</th><th>State</th><th>Title</th>"
	"<th>Vendor</th><th>Vendor says</th></tr>\n";

typedef struct {
	char *key;		/* casefolded vendor name */
	char *name;		/* as first written */
	GArray *idx;		/* guint: positions in the set */
} vendor_group;

static void
vendor_group_free(gpointer p)
{
	vendor_group *g = p;

	g_free(g->key);
	g_free(g->name);
	g_array_unref(g->idx);
	g_free(g);
}

static gint
vendor_cmp(gconstpointer a, gconstpointer b)
{
	const vendor_group *x = *(vendor_group *const *) a;
	const vendor_group *y = *(vendor_group *const *) b;

	return strcmp(x->key, y->key);
}

/* Each public record as a mail (pubmail.h), and which record links to
 * which file. */
static vulnid_status
write_mails(const char *dir, const html_opts *o, const export_set *set, GHashTable *mail_of,
	    guint *count, GError **err)
{
	g_autoptr(GPtrArray) mails = pubmail_list(set);
	g_autoptr(GHashTable) keep = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *mdir = g_build_filename(dir, "mail", NULL);
	g_autoptr(GDir) d = NULL;
	const char *name;
	vulnid_status s;

	if (g_mkdir_with_parents(mdir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   mdir, g_strerror(errno));
	for (guint i = 0; i < mails->len; i++) {
		const pubmail *m = g_ptr_array_index(mails, i);
		g_autoptr(GBytes) b = pubmail_render(m, o->robot_domain);
		g_autofree char *fname = pubmail_name(m);
		g_autofree char *path = g_build_filename(mdir, fname, NULL);

		s = export_write_file(path, g_bytes_get_data(b, NULL), g_bytes_get_size(b), 0644, err);
		if (s != VULNID_OK)
			return s;
		g_hash_table_insert(mail_of, g_strdup_printf("%s/%" G_GINT64_FORMAT, m->v->e->id, m->vr->r->seq),
				    g_strdup(fname));
		g_hash_table_add(keep, g_steal_pointer(&fname));
		(*count)++;
	}
	/* Mails no longer public (an entry became spam), and the raw copies
	 * of mail that earlier versions published, go away. */
	d = g_dir_open(mdir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL)
		if (g_str_has_suffix(name, ".eml") && !g_hash_table_contains(keep, name)) {
			g_autofree char *p = g_build_filename(mdir, name, NULL);

			unlink(p);
		}
	return VULNID_OK;
}

/* The OSV record of entry i beside its page. */
static vulnid_status
write_osv(const char *odir, const html_opts *o, const export_set *set, guint i, GHashTable *keep_osv,
	  GError **err)
{
	const entry_view *v = g_ptr_array_index(set->views, i);
	g_autoptr(JsonNode) n = osv_record(set, i, &o->osv);
	g_autofree char *text = export_json_text(n);
	g_autofree char *osv = osv_id(&o->osv, v->e->id);
	g_autofree char *oname = g_strconcat(osv, ".json", NULL);
	g_autofree char *opath = g_build_filename(odir, oname, NULL);
	vulnid_status s = export_write_file(opath, text, strlen(text), 0644, err);

	if (s == VULNID_OK)
		g_hash_table_add(keep_osv, g_steal_pointer(&oname));
	return s;
}

/* Vendors as published: not for stubs, whose vendor is sealed. */
static void
group_by_vendor(const entry_view *v, guint i, GHashTable *vendors, GPtrArray *vlist)
{
	const char *vendor = v->facts->vendor != NULL ? v->facts->vendor->value : "";
	g_autofree char *folded = g_utf8_casefold(vendor, -1);
	vendor_group *g = g_hash_table_lookup(vendors, folded);

	if (v->stub)
		return;
	if (g == NULL) {
		g = g_new0(vendor_group, 1);
		g->key = g_steal_pointer(&folded);
		g->name = g_strdup(vendor);
		g->idx = g_array_new(FALSE, FALSE, sizeof(guint));
		g_hash_table_insert(vendors, g->key, g);
		g_ptr_array_add(vlist, g);
	}
	g_array_append_val(g->idx, i);
}

/* One page per listed entry (and its OSV record); the years that have
 * one, the entries grouped by vendor. */
static vulnid_status
write_entry_pages(const char *dir, const html_opts *o, const export_set *set, GHashTable *mail_of,
		  GArray *years, GPtrArray *vlist, html_result *res, GError **err)
{
	g_autoptr(GHashTable) keep_pages = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) keep_osv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) vendors = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree char *edir = g_build_filename(dir, "entries", NULL);
	g_autofree char *odir = g_build_filename(dir, "osv", NULL);
	g_autoptr(GString) page = g_string_new(NULL);
	vulnid_status s;

	for (guint i = 0; i < set->views->len; i++) {
		const entry_view *v = g_ptr_array_index(set->views, i);
		const entry *e = v->e;
		g_autofree char *name = NULL;

		if (!export_listed(v))
			continue;
		g_string_truncate(page, 0);
		entry_page(page, o, set, i, mail_of);
		name = g_strconcat(e->id, ".html", NULL);
		s = write_page(edir, name, page, err);
		if (s != VULNID_OK)
			return s;
		g_hash_table_add(keep_pages, g_steal_pointer(&name));
		res->entries++;
		if (years->len == 0 || g_array_index(years, int, years->len - 1) != e->year)
			g_array_append_val(years, e->year);
		if (osv_wanted(v)) {
			s = write_osv(odir, o, set, i, keep_osv, err);
			if (s != VULNID_OK)
				return s;
			res->osv++;
		}
		group_by_vendor(v, i, vendors, vlist);
	}
	export_remove_stale(edir, "", ".html", keep_pages);
	export_remove_stale(odir, o->osv.id_prefix != NULL ? o->osv.id_prefix : "x_", ".json", keep_osv);
	return VULNID_OK;
}

/* One page per year. */
static vulnid_status
write_year_pages(const char *dir, const html_opts *o, const export_set *set, const GArray *years,
		 GError **err)
{
	g_autoptr(GString) page = g_string_new(NULL);

	for (guint y = 0; y < years->len; y++) {
		int year = g_array_index(years, int, y);
		g_autofree char *title = g_strdup_printf("%s: %04d", o->title, year);
		g_autofree char *name = g_strdup_printf("%04d.html", year);
		vulnid_status s;

		g_string_truncate(page, 0);
		page_begin(page, o, "", title);
		g_string_append_printf(page, "<h1>%04d</h1>\n", year);
		g_string_append(page, list_head);
		for (guint i = 0; i < set->views->len; i++) {
			const entry_view *v = g_ptr_array_index(set->views, i);

			if (v->e->year == year && export_listed(v))
				list_row(page, v, "");
		}
		g_string_append(page, "</table>\n");
		page_end(page);
		s = write_page(dir, name, page, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* The index: the years, newest first, with their counts. */
static vulnid_status
write_index_page(const char *dir, const html_opts *o, const export_set *set, const GArray *years,
		 guint entries, GError **err)
{
	g_autoptr(GString) page = g_string_new(NULL);

	page_begin(page, o, "", o->title);
	g_string_append(page, "<h1>");
	t(page, o->title);
	g_string_append_printf(page, "</h1>\n<p>%u entries. Every entry page shows all records in "
			       "order, with their hashes. New entries and vendor positions are also in "
			       "the <a href=\"%s\">Atom feed</a>; <a href=\"verify.html\">how to verify</a> "
			       "this archive.</p>\n", entries, HTML_ATOM);
	/* the latest first: what a reader comes for */
	g_string_append(page, "<h2>Latest entries</h2>\n");
	g_string_append(page, list_head);
	for (guint i = set->views->len, n = 0; i > 0 && n < HTML_LATEST; i--) {
		const entry_view *v = g_ptr_array_index(set->views, i - 1);

		if (!export_listed(v))
			continue;
		list_row(page, v, "");
		n++;
	}
	g_string_append(page, "</table>\n<h2>By year</h2>\n<ul>\n");
	for (guint y = years->len; y > 0; y--) {
		int year = g_array_index(years, int, y - 1);
		guint n = 0;

		for (guint i = 0; i < set->views->len; i++) {
			const entry_view *v = g_ptr_array_index(set->views, i);

			n += v->e->year == year && export_listed(v);
		}
		g_string_append_printf(page, "<li><a href=\"%04d.html\">%04d</a> (%u)</li>\n", year, year, n);
	}
	g_string_append(page, "</ul>\n<h2>By vendor</h2>\n<p><a href=\"vendors.html\">All vendors</a></p>\n");
	page_end(page);
	return write_page(dir, "index.html", page, err);
}

/* Every vendor named, with its entries. */
static vulnid_status
write_vendor_page(const char *dir, const html_opts *o, const export_set *set, GPtrArray *vlist,
		  GError **err)
{
	g_autoptr(GString) page = g_string_new(NULL);

	g_ptr_array_sort(vlist, vendor_cmp);
	page_begin(page, o, "", "Vendors");
	g_string_append(page, "<h1>Vendors</h1>\n<ul>\n");
	for (guint k = 0; k < vlist->len; k++) {
		const vendor_group *g = g_ptr_array_index(vlist, k);

		g_string_append_printf(page, "<li><a href=\"#v%u\">", k + 1);
		t(page, *g->name != '\0' ? g->name : "(no vendor named)");
		g_string_append_printf(page, "</a> (%u)</li>\n", g->idx->len);
	}
	g_string_append(page, "</ul>\n");
	for (guint k = 0; k < vlist->len; k++) {
		const vendor_group *g = g_ptr_array_index(vlist, k);

		g_string_append_printf(page, "<h2 id=\"v%u\">", k + 1);
		t(page, *g->name != '\0' ? g->name : "(no vendor named)");
		g_string_append(page, "</h2>\n");
		g_string_append(page, list_head);
		for (guint j = 0; j < g->idx->len; j++) {
			guint i = g_array_index(g->idx, guint, j);

			list_row(page, g_ptr_array_index(set->views, i), "");
		}
		g_string_append(page, "</table>\n");
	}
	page_end(page);
	return write_page(dir, "vendors.html", page, err);
}

/* ---- the Atom feed (RFC 4287) ---------------------------------------------------- */

typedef struct {
	const char *when;		/* RFC 3339 */
	const entry_view *v;
	const entry_claim *status;	/* a vendor position, or NULL: the new entry */
} atom_item;

static gint
atom_cmp(gconstpointer a, gconstpointer b)
{
	const atom_item *x = *(atom_item *const *) a, *y = *(atom_item *const *) b;
	int c = strcmp(y->when, x->when);

	if (c == 0)
		c = strcmp(y->v->e->id, x->v->e->id);
	if (c == 0)
		c = (x->status != NULL ? (int) x->status->record->seq : 0) <
		    (y->status != NULL ? (int) y->status->record->seq : 0) ? 1 : -1;
	return c;
}

/* Where a page is: absolute under the base URL when there is one. */
static void
site_url(GString *out, const html_opts *o, const char *path)
{
	const char *b = o->osv.base_url;

	if (b != NULL && url_ok(b)) {
		t(out, b);
		g_string_append(out, g_str_has_suffix(b, "/") ? "" : "/");
	}
	t(out, path);
}

static void
atom_entry(GString *out, const html_opts *o, const atom_item *it)
{
	const entry_view *v = it->v;
	const entry_facts *f = v->facts;
	g_autofree char *page = g_strdup_printf("entries/%s.html", v->e->id);
	g_autofree char *year = g_strndup(v->e->created, 4);

	g_string_append(out, "<entry>\n<id>tag:");
	t(out, o->robot_domain);
	g_string_append_printf(out, ",%s:%s", year, v->e->id);
	if (it->status != NULL)
		g_string_append_printf(out, "/%" G_GINT64_FORMAT, it->status->record->seq);
	g_string_append(out, "</id>\n<title>");
	t(out, v->e->id);
	if (it->status != NULL) {
		g_string_append(out, ": the vendor says ");
		t(out, it->status->value);
	} else if (v->stub) {
		g_string_append(out, " (under embargo)");
	} else {
		g_string_append(out, ": ");
		t(out, *entry_view_title(v) != '\0' ? entry_view_title(v) : "(no title)");
	}
	g_string_append(out, "</title>\n<updated>");
	t(out, it->when);
	g_string_append(out, "</updated>\n<link rel=\"alternate\" type=\"text/html\" href=\"");
	site_url(out, o, page);
	g_string_append(out, "\"/>\n<summary type=\"text\">");
	if (it->status != NULL) {
		g_string_append(out, "Vendor position: ");
		t(out, it->status->value);
		g_string_append_printf(out, " (record %" G_GINT64_FORMAT ", ", it->status->record->seq);
		t(out, entry_how_phrase(it->status->record->how));
		g_string_append(out, ")");
	} else if (v->stub) {
		g_string_append(out, "Under embargo until ");
		t(out, entry_view_embargo_text(v));
		g_string_append(out, "; commitment ");
		t(out, v->e->digest);
	} else {
		if (f->vendor != NULL) {
			g_string_append(out, "Vendor: ");
			t(out, f->vendor->value);
			g_string_append(out, "; ");
		}
		if (f->product != NULL) {
			g_string_append(out, "Product: ");
			t(out, f->product->value);
			g_string_append(out, "; ");
		}
		g_string_append(out, "digest ");
		t(out, v->e->digest);
	}
	g_string_append(out, "</summary>\n</entry>\n");
}

/* The latest new entries and vendor positions, newest first. */
static vulnid_status
write_atom(const char *dir, const html_opts *o, const export_set *set, GError **err)
{
	g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) out = g_string_new(NULL);
	const char *first = NULL;

	for (guint i = 0; i < set->views->len; i++) {
		const entry_view *v = g_ptr_array_index(set->views, i);
		atom_item *it;

		if (!export_listed(v))
			continue;
		if (first == NULL || strcmp(v->e->created, first) < 0)
			first = v->e->created;
		it = g_new0(atom_item, 1);
		it->when = v->e->created;
		it->v = v;
		g_ptr_array_add(items, it);
		for (guint k = 0; !v->stub && k < v->facts->statuses->len; k++) {
			const entry_claim *c = g_ptr_array_index(v->facts->statuses, k);

			if (!entry_how_verified(c->record->how))
				continue;	/* unverified: a proposal, not a position */
			it = g_new0(atom_item, 1);
			it->when = c->record->created;
			it->v = v;
			it->status = c;
			g_ptr_array_add(items, it);
		}
	}
	g_ptr_array_sort(items, atom_cmp);
	g_string_append(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
			"<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<id>");
	if (o->osv.base_url != NULL && url_ok(o->osv.base_url))
		site_url(out, o, HTML_ATOM);
	else {
		/* a tag URI (RFC 4151) dated by the first entry: it never changes */
		g_autofree char *date = first != NULL ? g_strndup(first, 10) : g_strdup("2000-01-01");

		g_string_append(out, "tag:");
		t(out, o->robot_domain);
		g_string_append_printf(out, ",%s:vulnid", date);
	}
	g_string_append(out, "</id>\n<title>");
	t(out, o->title);
	g_string_append(out, "</title>\n<updated>");
	t(out, items->len > 0 ? ((atom_item *) g_ptr_array_index(items, 0))->when : "2000-01-01T00:00:00Z");
	g_string_append(out, "</updated>\n<author><name>vulnid at ");
	t(out, o->robot_domain);
	g_string_append(out, "</name></author>\n<link rel=\"alternate\" type=\"text/html\" href=\"");
	site_url(out, o, "index.html");
	g_string_append(out, "\"/>\n");
	if (o->osv.base_url != NULL && url_ok(o->osv.base_url)) {
		g_string_append(out, "<link rel=\"self\" type=\"application/atom+xml\" href=\"");
		site_url(out, o, HTML_ATOM);
		g_string_append(out, "\"/>\n");
	}
	g_string_append(out, "<generator>vulnid</generator>\n");
	for (guint i = 0; i < items->len && i < ATOM_ENTRIES; i++)
		atom_entry(out, o, g_ptr_array_index(items, i));
	g_string_append(out, "</feed>\n");
	return write_page(dir, HTML_ATOM, out, err);
}

/* ---- how to verify ---------------------------------------------------------------- */

static vulnid_status
write_verify_page(const char *dir, const html_opts *o, GError **err)
{
	g_autoptr(GString) p = g_string_new(NULL);

	page_begin(p, o, "", "How to verify this archive");
	g_string_append(p, "<h1>How to verify this archive</h1>\n"
			"<p>Every page here is made from the robot's public feed: JSON lines in "
			"SHA-256 chains, signed by the robot's OpenPGP key, and a transparency log "
			"over them (vulnid-feed(5)). Nothing in the feed is ever changed or removed; "
			"anyone can check a copy of it without trusting this site.</p>\n"
			"<h2>The robot's key</h2>\n<p>OpenPGP fingerprint: <code class=\"hash\">");
	t(p, o->robot_fpr != NULL ? o->robot_fpr : "(not known to this export)");
	g_string_append(p, "</code></p>\n<p>Compare it with the fingerprint published elsewhere by the "
			"robot's operator");
	if (o->request_address != NULL) {
		g_string_append(p, ", and with the key the robot mails back when you send the word "
				"<code>key</code> to <code>");
		t(p, o->request_address);
		g_string_append(p, "</code>");
	}
	g_string_append(p, ". Every mail the robot sends is signed with it.</p>\n"
			"<h2>The feed</h2>\n<p>The feed is at ");
	if (o->osv.base_url != NULL && url_ok(o->osv.base_url)) {
		g_string_append(p, "<a href=\"");
		site_url(p, o, "feed/");
		g_string_append(p, "\">");
		site_url(p, o, "feed/");
		g_string_append(p, "</a>");
	} else
		g_string_append(p, "<code>feed/</code> beside these pages");
	g_string_append(p, ". With a copy of it in FEED-DIR (for example <code>wget --mirror "
			"--no-parent</code> of that address) and the robot's key in robot.asc:</p>\n"
			"<pre>vulnid verify-feed FEED-DIR --key robot.asc</pre>\n"
			"<p>checks every line, every chain, the signed <code>HEAD.json</code>, the "
			"commitments of embargoed records and their releases, and that the log's tiles "
			"and checkpoint hold exactly these lines.</p>\n"
			"<h2>The transparency log</h2>\n<p>The log's key (its checkpoints are signed "
			"with it; FEED-DIR/log/log.vkey, itself signed by the robot's key in "
			"FEED-DIR/log/log.vkey.asc):</p>\n<pre class=\"hash\">");
	t(p, o->log_vkey != NULL ? o->log_vkey : "(not known to this export)");
	g_string_append(p, "</pre>\n<p>That an entry's records are in the log, with the log key "
			"alone:</p>\n<pre>vulnid prove FEED-DIR ID &gt; ID.tlog-proof\n"
			"vulnid verify-feed --proof ID.tlog-proof --log-key FEED-DIR/log/log.vkey</pre>\n"
			"<p>The log is a C2SP tlog-tiles log with a signed-note checkpoint, so "
			"independent code checks it too: Go's <code>golang.org/x/mod/sumdb/tlog</code> "
			"and <code>sumdb/note</code> (Debian: golang-golang-x-mod-dev) read its tiles "
			"and verify its checkpoint with the log key. Witnesses that cosign the "
			"checkpoint are checked with <code>vulnid verify-feed --witness-key</code>.</p>\n"
			"<h2>An entry</h2>\n<p>An entry's digest is the SHA-256 of its first record in "
			"canonical form (vulnid-json(7)); the researcher got it in the robot's "
			"acknowledgement, signed, and it is the first line of the entry in the feed. "
			"The <a href=\"");
	g_string_append(p, HTML_ATOM);
	g_string_append(p, "\">Atom feed</a> announces new entries and vendor positions.</p>\n");
	page_end(p);
	return write_page(dir, "verify.html", p, err);
}

vulnid_status
html_export(store *st, const char *dir, const html_opts *o, html_result *res, GError **err)
{
	g_autoptr(export_set) set = NULL;
	g_autoptr(GHashTable) mail_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GPtrArray) vlist = g_ptr_array_new_with_free_func(vendor_group_free);
	g_autoptr(GArray) years = g_array_new(FALSE, FALSE, sizeof(int));
	g_autofree char *edir = g_build_filename(dir, "entries", NULL);
	g_autofree char *odir = g_build_filename(dir, "osv", NULL);
	vulnid_status s;

	memset(res, 0, sizeof *res);
	if (g_mkdir_with_parents(edir, 0755) < 0 || g_mkdir_with_parents(odir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   dir, g_strerror(errno));
	s = export_set_load(st, &set, err);
	if (s == VULNID_OK)
		s = write_mails(dir, o, set, mail_of, &res->mails, err);
	if (s == VULNID_OK)
		s = write_entry_pages(dir, o, set, mail_of, years, vlist, res, err);
	if (s == VULNID_OK)
		s = write_year_pages(dir, o, set, years, err);
	if (s == VULNID_OK)
		s = write_index_page(dir, o, set, years, res->entries, err);
	if (s == VULNID_OK)
		s = write_vendor_page(dir, o, set, vlist, err);
	if (s == VULNID_OK)
		s = write_atom(dir, o, set, err);
	if (s == VULNID_OK)
		s = write_verify_page(dir, o, err);
	return s;
}
