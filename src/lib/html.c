/* html.c - the static web archive */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "export.h"
#include "html.h"
#include "ids.h"

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
	g_string_append(out, "</title>\n<style>");
	g_string_append(out, css);
	g_string_append_printf(out, "</style>\n</head>\n<body>\n<nav><a href=\"%sindex.html\">", rel);
	t(out, o->title);
	g_string_append_printf(out, "</a> &middot; <a href=\"%svendors.html\">Vendors</a></nav>\n<main>\n", rel);
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

static const export_facts *
facts_of(const export_set *set, const char *id, const entry **e)
{
	guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(set->index, id));

	if (pos == 0)
		return NULL;
	if (e != NULL)
		*e = g_ptr_array_index(set->entries, pos - 1);
	return g_ptr_array_index(set->facts, pos - 1);
}

/* A reference to another entry: a link when it is one of ours and shown. */
static void
entry_ref(GString *out, const export_set *set, const char *id, const char *rel)
{
	const export_facts *f = ids_parse(id, NULL, NULL, NULL) ? facts_of(set, id, NULL) : NULL;

	if (f != NULL && export_entry_listed(f)) {
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
state_badge(GString *out, const export_facts *f)
{
	g_string_append_printf(out, "<span class=\"state state-%s\">%s</span>", f->state, f->state);
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

/* How a record's author was authenticated, from its auth object. */
static void
auth_describe(GString *out, const char *auth)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonObject *o = NULL;
	const char *method = NULL, *fpr = NULL;

	if (auth != NULL && json_parser_load_from_data(p, auth, -1, NULL) &&
	    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
		o = json_node_get_object(json_parser_get_root(p));
		if (json_object_has_member(o, "method") &&
		    JSON_NODE_HOLDS_VALUE(json_object_get_member(o, "method")))
			method = json_object_get_string_member(o, "method");
		if (json_object_has_member(o, "fpr") && JSON_NODE_HOLDS_VALUE(json_object_get_member(o, "fpr")))
			fpr = json_object_get_string_member(o, "fpr");
	}
	if (method == NULL || strcmp(method, "none") == 0)
		g_string_append(out, "not authenticated");
	else if (strcmp(method, "pgp") == 0 || strcmp(method, "openpgp") == 0) {
		g_string_append(out, "OpenPGP signature");
		if (fpr != NULL) {
			g_string_append(out, " by key <code>");
			t(out, fpr);
			g_string_append(out, "</code>");
		}
	} else if (strcmp(method, "token") == 0)
		g_string_append(out, "capability token");
	else if (strcmp(method, "robot") == 0)
		g_string_append(out, "written by the robot itself");
	else {
		g_string_append(out, "authenticated by ");
		t(out, method);
	}
}

static void
vendor_position(GString *out, const export_facts *f)
{
	g_string_append(out, "<h2 id=\"vendor\">The vendor&#39;s position</h2>\n");
	if (f->vendor_status == NULL) {
		g_string_append(out, "<p>No response from the vendor is recorded.</p>\n");
		return;
	}
	g_string_append_printf(out, "<p class=\"vendor vendor-%s\"><strong>", f->vendor_status);
	if (strcmp(f->vendor_status, "confirmed") == 0)
		g_string_append(out, "Confirmed by the vendor");
	else if (strcmp(f->vendor_status, "disputed") == 0)
		g_string_append(out, "Disputed by the vendor");
	else
		g_string_append(out, "Fixed, says the vendor");
	g_string_append(out, "</strong> (");
	t(out, f->vendor_status_time);
	g_string_append_printf(out, ", <a href=\"#r%" G_GINT64_FORMAT "\">record %" G_GINT64_FORMAT "</a>).</p>\n",
			       f->vendor_status_seq, f->vendor_status_seq);
	if (f->vendor_statement != NULL && *f->vendor_statement != '\0') {
		g_string_append(out, "<div class=\"statement\">");
		html_append_text(out, f->vendor_statement, TRUE);
		g_string_append(out, "</div>\n");
	}
}

static void
record_fields_table(GString *out, const entry_record *r)
{
	g_autoptr(JsonArray) a = export_record_fields(r);
	guint n = a != NULL ? json_array_get_length(a) : 0;

	if (n == 0)
		return;
	g_string_append(out, "<table class=\"fields\">\n");
	for (guint j = 0; j < n; j++) {
		JsonArray *kv = json_array_get_array_element(a, j);

		if (kv == NULL || json_array_get_length(kv) != 2)
			continue;
		g_string_append(out, "<tr><th>");
		t(out, json_array_get_string_element(kv, 0));
		g_string_append(out, "</th><td>");
		t(out, json_array_get_string_element(kv, 1));
		g_string_append(out, "</td></tr>\n");
	}
	g_string_append(out, "</table>\n");
}

static void
entry_page_stub(GString *out, const entry *e)
{
	g_string_append(out, "<h1><span class=\"id\">");
	t(out, e->id);
	g_string_append(out, "</span>under embargo</h1>\n<p><span class=\"state state-embargoed\">embargoed</span></p>\n"
			"<table class=\"facts\">\n");
	row_text(out, "Assigned", e->created);
	row_text(out, "Embargo", e->embargo != NULL ? e->embargo : "until released");
	row_begin(out, "Commitment");
	g_string_append(out, "<code>");
	t(out, e->digest);
	g_string_append(out, "</code></td></tr>\n</table>\n"
			"<p>The content of this entry is sealed until the embargo ends. The commitment is "
			"the SHA-256 of its first record: when the records are published, anyone can check "
			"that they are what was committed to.</p>\n");
}

static void
record_item(GString *out, const entry *e, const export_facts *f, const entry_record *r,
	    GHashTable *mail_of)
{
	g_autofree char *key = g_strdup_printf("%s/%" G_GINT64_FORMAT, e->id, r->seq);
	const char *mail = g_hash_table_lookup(mail_of, key);

	g_string_append_printf(out, "<li id=\"r%" G_GINT64_FORMAT "\">\n<h3>Record %" G_GINT64_FORMAT
			       " &middot; ", r->seq, r->seq);
	t(out, r->kind);
	g_string_append(out, " &middot; ");
	t(out, r->role);
	g_string_append(out, "</h3>\n<p class=\"meta\">");
	t(out, r->created);
	g_string_append(out, " &middot; by <span class=\"author\">");
	if (export_author_public(f, r))
		t(out, r->author);
	else
		g_string_append(out, f->anonymous && g_strcmp0(r->role, "creator") == 0 ? "an anonymous researcher"
											 : "unknown");
	g_string_append(out, "</span> &middot; ");
	auth_describe(out, r->auth);
	g_string_append(out, "</p>\n");
	if (r->opens > 0) {
		g_string_append_printf(out, "<p>Releases the sealed content of <a href=\"#r%" G_GINT64_FORMAT
				       "\">record %" G_GINT64_FORMAT "</a>, which is shown there; its hash is "
				       "the commitment published while it was sealed.</p>\n", r->opens, r->opens);
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
		if (r->attachments->len > 0) {
			g_string_append(out, "<ul class=\"attachments\">\n");
			for (guint j = 0; j < r->attachments->len; j++) {
				const entry_attachment *a = g_ptr_array_index(r->attachments, j);

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
	}
	g_string_append(out, "<p class=\"meta\">SHA-256 <code>");
	t(out, r->sha256);
	g_string_append(out, "</code>");
	if (mail != NULL)
		/* mail names are made of an identifier and a number */
		g_string_append_printf(out, " &middot; <a href=\"../mail/%s\">raw mail</a>", mail);
	g_string_append(out, "</p>\n</li>\n");
}

static void
entry_page(GString *out, const html_opts *o, const export_set *set, guint i, GHashTable *mail_of,
	   GHashTable *announce_of)
{
	const entry *e = g_ptr_array_index(set->entries, i);
	const export_facts *f = g_ptr_array_index(set->facts, i);
	g_autofree char *title = g_strdup_printf("%s: %s", e->id,
						 strcmp(f->state, "embargoed") == 0 ? "under embargo" : f->title);
	GPtrArray *dups = g_hash_table_lookup(set->duplicates, e->id);
	GPtrArray *ann = g_hash_table_lookup(announce_of, e->id);

	page_begin(out, o, "../", title);
	g_string_append_printf(out, "<p class=\"meta\"><a href=\"../%04d.html\">%04d</a></p>\n", e->year, e->year);
	if (strcmp(f->state, "embargoed") == 0) {
		entry_page_stub(out, e);
		page_end(out);
		return;
	}
	g_string_append(out, "<h1><span class=\"id\">");
	t(out, e->id);
	g_string_append(out, "</span>");
	t(out, *f->title != '\0' ? f->title : "(no title)");
	g_string_append(out, "</h1>\n<p>");
	state_badge(out, f);
	g_string_append(out, "</p>\n");
	if (f->withdrawn != NULL) {
		g_string_append(out, "<p class=\"withdrawn\"><strong>Withdrawn</strong> on ");
		t(out, f->withdrawn);
		if (f->withdrawn_reason != NULL) {
			g_string_append(out, ": ");
			t(out, f->withdrawn_reason);
		}
		g_string_append(out, "</p>\n");
	}
	if (strcmp(f->state, "reserved") == 0)
		g_string_append(out, "<p>Reserved: the identifier was assigned, nothing has been said "
				"about it yet.</p>\n");
	g_string_append(out, "<table class=\"facts\">\n");
	row_begin(out, "Digest");
	g_string_append(out, "<code>");
	t(out, e->digest);
	g_string_append(out, "</code></td></tr>\n");
	row_text(out, "Assigned", e->created);
	if (g_strcmp0(f->published, e->created) != 0)
		row_text(out, "Published", f->published);
	row_text(out, "Vendor", f->vendor);
	row_text(out, "Product", f->product);
	if (f->versions->len > 0) {
		row_begin(out, "Versions");
		for (guint k = 0; k < f->versions->len; k++) {
			if (k > 0)
				g_string_append(out, ", ");
			t(out, g_ptr_array_index(f->versions, k));
		}
		g_string_append(out, "</td></tr>\n");
	}
	row_text(out, "Type", f->type);
	row_text(out, "Fixed in", f->fixed_in);
	if (f->severity != NULL || f->ratings->len > 0) {
		row_begin(out, "Severity");
		t(out, f->severity);
		for (guint k = 0; k < f->ratings->len; k++) {
			const export_rating *r = g_ptr_array_index(f->ratings, k);

			g_string_append(out, k > 0 || f->severity != NULL ? "<br><code>" : "<code>");
			t(out, r->score);
			g_string_append(out, "</code>");
		}
		g_string_append(out, "</td></tr>\n");
	}
	if (f->references->len > 0) {
		row_begin(out, "References");
		for (guint k = 0; k < f->references->len; k++) {
			const char *u = g_ptr_array_index(f->references, k);

			if (k > 0)
				g_string_append(out, "<br>");
			if (url_ok(u)) {
				g_string_append(out, "<a rel=\"nofollow noopener\" href=\"");
				t(out, u);
				g_string_append(out, "\">");
				t(out, u);
				g_string_append(out, "</a>");
			} else
				t(out, u);
		}
		g_string_append(out, "</td></tr>\n");
	}
	if (f->aliases->len > 0) {
		row_begin(out, "Aliases");
		for (guint k = 0; k < f->aliases->len; k++) {
			if (k > 0)
				g_string_append(out, ", ");
			t(out, g_ptr_array_index(f->aliases, k));
		}
		g_string_append(out, "</td></tr>\n");
	}
	if (f->duplicate_of != NULL) {
		row_begin(out, "Duplicate of");
		entry_ref(out, set, f->duplicate_of, "../");
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
	if (f->related->len > 0) {
		row_begin(out, "Related");
		for (guint k = 0; k < f->related->len; k++) {
			if (k > 0)
				g_string_append(out, ", ");
			entry_ref(out, set, g_ptr_array_index(f->related, k), "../");
		}
		g_string_append(out, "</td></tr>\n");
	}
	g_string_append(out, "</table>\n");
	vendor_position(out, f);
	g_string_append(out, "<h2 id=\"records\">Records</h2>\n<ol class=\"records\">\n");
	for (guint k = 0; k < e->records->len; k++)
		record_item(out, e, f, g_ptr_array_index(e->records, k), mail_of);
	g_string_append(out, "</ol>\n<h2>Machine-readable</h2>\n<ul>\n");
	if (export_osv_wanted(f)) {
		g_autofree char *osv = export_osv_id(&o->osv, e->id);

		/* the OSV prefix is configuration, the id an identifier */
		g_string_append(out, "<li><a href=\"../osv/");
		t(out, osv);
		g_string_append(out, ".json\">OSV record</a></li>\n");
	}
	for (guint k = 0; ann != NULL && k < ann->len; k++)
		g_string_append_printf(out, "<li><a href=\"../mail/%s\">announcement</a></li>\n",
				       (const char *) g_ptr_array_index(ann, k));
	g_string_append(out, "<li>the raw mail of each record is linked beside its hash</li>\n</ul>\n");
	page_end(out);
}

static void
list_row(GString *out, const entry *e, const export_facts *f, const char *rel)
{
	gboolean stub = strcmp(f->state, "embargoed") == 0;

	g_string_append_printf(out, "<tr><td><a href=\"%sentries/%s.html\"><code>", rel, e->id);
	t(out, e->id);
	g_string_append(out, "</code></a></td><td>");
	t(out, e->created);
	g_string_append(out, "</td><td>");
	state_badge(out, f);
	if (f->withdrawn != NULL)
		g_string_append(out, " withdrawn");
	g_string_append(out, "</td><td>");
	t(out, stub ? "(under embargo)" : f->title);
	g_string_append(out, "</td><td>");
	if (!stub)
		t(out, f->vendor);
	g_string_append(out, "</td><td>");
	if (!stub && f->vendor_status != NULL)
		g_string_append_printf(out, "<span class=\"vendor-%s\">%s</span>", f->vendor_status, f->vendor_status);
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

/* Mail files: which record links to which published mail. */
static vulnid_status
write_mails(store *st, const char *dir, const html_opts *o, const export_set *set,
	    GHashTable *mail_of, GHashTable *announce_of, guint *count, GError **err)
{
	g_autoptr(GPtrArray) mails = NULL;
	g_autoptr(GHashTable) name_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	g_autoptr(GHashTable) keep = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *mdir = g_build_filename(dir, "mail", NULL);
	g_autoptr(GDir) d = NULL;
	const char *name;
	sqlite3_stmt *stmt;
	vulnid_status s;
	int rc;

	if (g_mkdir_with_parents(mdir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   mdir, g_strerror(errno));
	s = store_exec(st, "BEGIN", err);
	if (s != VULNID_OK)
		return s;
	s = export_mail_list(st, set, &mails, err);
	for (guint i = 0; s == VULNID_OK && i < mails->len; i++) {
		const export_mail *m = g_ptr_array_index(mails, i);
		g_autoptr(GBytes) b = NULL;
		g_autofree char *fname = m->message > 0
			? g_strdup_printf("%s-%" G_GINT64_FORMAT ".eml", m->entry, m->seq)
			: g_strdup_printf("announce-%" G_GINT64_FORMAT ".eml", m->outbox);
		g_autofree char *path = g_build_filename(mdir, fname, NULL);

		s = export_mail_bytes(st, set, m, o->robot_domain, &b, err);
		if (s == VULNID_OK)
			s = export_write_file(path, g_bytes_get_data(b, NULL), g_bytes_get_size(b), 0644, err);
		if (s != VULNID_OK)
			break;
		if (m->message > 0) {
			gint64 *k = g_new(gint64, 1);

			*k = m->message;
			g_hash_table_insert(name_of, k, g_strdup(fname));
		} else if (m->entry != NULL) {
			GPtrArray *a = g_hash_table_lookup(announce_of, m->entry);

			if (a == NULL) {
				a = g_ptr_array_new_with_free_func(g_free);
				g_hash_table_insert(announce_of, g_strdup(m->entry), a);
			}
			g_ptr_array_add(a, g_strdup(fname));
		}
		g_hash_table_add(keep, g_steal_pointer(&fname));
		(*count)++;
	}
	if (s == VULNID_OK) {
		stmt = store_prepare(st, "SELECT entry, seq, message FROM records WHERE message IS NOT NULL", &s, err);
		while (stmt != NULL && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
			gint64 msg = sqlite3_column_int64(stmt, 2);
			const char *fname = g_hash_table_lookup(name_of, &msg);

			if (fname != NULL)
				g_hash_table_insert(mail_of, g_strdup_printf("%s/%" G_GINT64_FORMAT,
									     (const char *) sqlite3_column_text(stmt, 0),
									     (gint64) sqlite3_column_int64(stmt, 1)),
						    g_strdup(fname));
		}
		if (stmt != NULL) {
			if (rc != SQLITE_DONE)
				s = store_fail(st, rc, "records", err);
			sqlite3_finalize(stmt);
		}
	}
	store_rollback(st);
	if (s != VULNID_OK)
		return s;
	/* Mails no longer public (an entry became spam) go away. */
	d = g_dir_open(mdir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL)
		if (g_str_has_suffix(name, ".eml") && !g_hash_table_contains(keep, name)) {
			g_autofree char *p = g_build_filename(mdir, name, NULL);

			unlink(p);
		}
	return VULNID_OK;
}

vulnid_status
html_export(store *st, const char *dir, const html_opts *o, html_result *res, GError **err)
{
	g_autoptr(export_set) set = NULL;
	g_autoptr(GHashTable) mail_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GHashTable) announce_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
								   (GDestroyNotify) g_ptr_array_unref);
	g_autoptr(GHashTable) keep_pages = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) keep_osv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) vendors = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) vlist = g_ptr_array_new_with_free_func(vendor_group_free);
	g_autoptr(GArray) years = g_array_new(FALSE, FALSE, sizeof(int));
	g_autofree char *edir = g_build_filename(dir, "entries", NULL);
	g_autofree char *odir = g_build_filename(dir, "osv", NULL);
	g_autoptr(GString) page = g_string_new(NULL);
	vulnid_status s;

	memset(res, 0, sizeof *res);
	if (g_mkdir_with_parents(edir, 0755) < 0 || g_mkdir_with_parents(odir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   dir, g_strerror(errno));
	s = export_set_load(st, &set, err);
	if (s == VULNID_OK)
		s = write_mails(st, dir, o, set, mail_of, announce_of, &res->mails, err);
	if (s != VULNID_OK)
		return s;

	for (guint i = 0; i < set->entries->len; i++) {
		const entry *e = g_ptr_array_index(set->entries, i);
		const export_facts *f = g_ptr_array_index(set->facts, i);
		g_autofree char *name = NULL;

		if (!export_entry_listed(f))
			continue;
		g_string_truncate(page, 0);
		entry_page(page, o, set, i, mail_of, announce_of);
		name = g_strconcat(e->id, ".html", NULL);
		s = write_page(edir, name, page, err);
		if (s != VULNID_OK)
			return s;
		g_hash_table_add(keep_pages, g_steal_pointer(&name));
		res->entries++;
		if (years->len == 0 || g_array_index(years, int, years->len - 1) != e->year)
			g_array_append_val(years, e->year);
		if (export_osv_wanted(f)) {
			g_autoptr(JsonNode) n = export_osv_record(set, i, &o->osv);
			g_autofree char *text = export_json_text(n);
			g_autofree char *osv = export_osv_id(&o->osv, e->id);
			g_autofree char *oname = g_strconcat(osv, ".json", NULL);
			g_autofree char *opath = g_build_filename(odir, oname, NULL);

			s = export_write_file(opath, text, strlen(text), 0644, err);
			if (s != VULNID_OK)
				return s;
			g_hash_table_add(keep_osv, g_steal_pointer(&oname));
			res->osv++;
		}
		/* Vendors as published: not for stubs, whose vendor is sealed. */
		if (strcmp(f->state, "embargoed") != 0) {
			g_autofree char *folded = g_utf8_casefold(f->vendor != NULL ? f->vendor : "", -1);
			vendor_group *g = g_hash_table_lookup(vendors, folded);

			if (g == NULL) {
				g = g_new0(vendor_group, 1);
				g->key = g_steal_pointer(&folded);
				g->name = g_strdup(f->vendor != NULL ? f->vendor : "");
				g->idx = g_array_new(FALSE, FALSE, sizeof(guint));
				g_hash_table_insert(vendors, g->key, g);
				g_ptr_array_add(vlist, g);
			}
			g_array_append_val(g->idx, i);
		}
	}
	export_remove_stale(edir, "", ".html", keep_pages);
	export_remove_stale(odir, o->osv.id_prefix != NULL ? o->osv.id_prefix : "x_", ".json", keep_osv);

	/* One page per year, newest year first on the index. */
	for (guint y = 0; y < years->len; y++) {
		int year = g_array_index(years, int, y);
		g_autofree char *title = g_strdup_printf("%s: %04d", o->title, year);
		g_autofree char *name = g_strdup_printf("%04d.html", year);

		g_string_truncate(page, 0);
		page_begin(page, o, "", title);
		g_string_append_printf(page, "<h1>%04d</h1>\n", year);
		g_string_append(page, list_head);
		for (guint i = 0; i < set->entries->len; i++) {
			const entry *e = g_ptr_array_index(set->entries, i);
			const export_facts *f = g_ptr_array_index(set->facts, i);

			if (e->year == year && export_entry_listed(f))
				list_row(page, e, f, "");
		}
		g_string_append(page, "</table>\n");
		page_end(page);
		s = write_page(dir, name, page, err);
		if (s != VULNID_OK)
			return s;
	}
	g_string_truncate(page, 0);
	page_begin(page, o, "", o->title);
	g_string_append(page, "<h1>");
	t(page, o->title);
	g_string_append_printf(page, "</h1>\n<p>%u entries. Every entry page shows all records in "
			       "order, with their hashes and raw mails.</p>\n<h2>By year</h2>\n<ul>\n",
			       res->entries);
	for (guint y = years->len; y > 0; y--) {
		int year = g_array_index(years, int, y - 1);
		guint n = 0;

		for (guint i = 0; i < set->entries->len; i++)
			n += ((const entry *) g_ptr_array_index(set->entries, i))->year == year &&
			     export_entry_listed(g_ptr_array_index(set->facts, i));
		g_string_append_printf(page, "<li><a href=\"%04d.html\">%04d</a> (%u)</li>\n", year, year, n);
	}
	g_string_append(page, "</ul>\n<h2>By vendor</h2>\n<p><a href=\"vendors.html\">All vendors</a></p>\n");
	page_end(page);
	s = write_page(dir, "index.html", page, err);
	if (s != VULNID_OK)
		return s;

	g_ptr_array_sort(vlist, vendor_cmp);
	g_string_truncate(page, 0);
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

			list_row(page, g_ptr_array_index(set->entries, i), g_ptr_array_index(set->facts, i), "");
		}
		g_string_append(page, "</table>\n");
	}
	page_end(page);
	return write_page(dir, "vendors.html", page, err);
}
