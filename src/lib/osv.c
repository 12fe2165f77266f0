/* osv.c - OSV records of the public entries (osv.h), rendered from their
 * public views; validated in the tests against the official schema */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "ids.h"
#include "jsonb.h"
#include "osv.h"
#include "text.h"

/* The value of a claim, for jsonb_str_array_of(). */
static const char *
claim_str(gconstpointer c)
{
	return ((const entry_claim *) c)->value;
}

/* ---- mapping to OSV's vocabulary ------------------------------------------ */

/* OSV's ecosystems (its schema's ecosystemName list). */
static const char *const osv_ecosystems[] = {
	"AlmaLinux", "Alpaquita", "Alpine", "Android", "Azure Linux", "Bioconductor", "Bitnami",
	"Chainguard", "ConanCenter", "CRAN", "crates.io", "Debian", "FreeBSD", "GHC",
	"GitHub Actions", "Go", "Hackage", "Hex", "Julia", "Kubernetes", "Linux", "Mageia",
	"Maven", "MinimOS", "npm", "NuGet", "opam", "openEuler", "openSUSE", "OSS-Fuzz",
	"Packagist", "Photon OS", "Pub", "PyPI", "Red Hat", "Rocky Linux", "Root", "RubyGems",
	"SUSE", "SwiftURL", "Ubuntu", "VSCode", "Wolfi",
};

const char *
osv_ecosystem(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(osv_ecosystems); i++)
		if (g_ascii_strcasecmp(osv_ecosystems[i], name) == 0)
			return osv_ecosystems[i];
	return NULL;
}

/* Package URL types whose packages have an OSV ecosystem, and how the
 * name is written there ('/' joins namespace and name unless noted). */
static const struct {
	const char *type, *ecosystem;
	char sep;		/* between namespace and name; 0: name only */
} purl_types[] = {
	{ "pypi", "PyPI", 0 }, { "npm", "npm", '/' }, { "cargo", "crates.io", 0 },
	{ "golang", "Go", '/' }, { "maven", "Maven", ':' }, { "nuget", "NuGet", 0 },
	{ "composer", "Packagist", '/' }, { "gem", "RubyGems", 0 }, { "hex", "Hex", 0 },
	{ "pub", "Pub", 0 }, { "hackage", "Hackage", 0 }, { "cran", "CRAN", 0 },
};

/* pkg:type/namespace/name@version?qualifiers#subpath -> ecosystem, name */
gboolean
osv_purl_map(const char *purl, char **ecosystem, char **name)
{
	g_autofree char *path = NULL;
	g_autofree char *type = NULL;
	const char *slash, *end;

	if (!g_str_has_prefix(purl, "pkg:") || strlen(purl) > 512)
		return FALSE;
	slash = strchr(purl + 4, '/');
	if (slash == NULL)
		return FALSE;
	type = g_ascii_strdown(purl + 4, slash - (purl + 4));
	end = slash + 1 + strcspn(slash + 1, "@?#");
	path = g_uri_unescape_segment(slash + 1, end, NULL);
	if (path == NULL || *path == '\0' || !g_utf8_validate(path, -1, NULL))
		return FALSE;
	for (gsize i = 0; i < G_N_ELEMENTS(purl_types); i++) {
		const char *last;

		if (strcmp(type, purl_types[i].type) != 0)
			continue;
		last = strrchr(path, '/');
		*ecosystem = g_strdup(purl_types[i].ecosystem);
		if (purl_types[i].sep == 0 || last == NULL)
			*name = g_strdup(last != NULL ? last + 1 : path);
		else if (purl_types[i].sep == '/')
			*name = g_strdup(path);
		else
			*name = g_strdup_printf("%.*s%c%s", (int) (last - path), path,
						purl_types[i].sep, last + 1);
		return **name != '\0';
	}
	return FALSE;
}


/* ---- OSV ----------------------------------------------------------------------- */

char *
osv_id(const osv_opts *o, const char *id)
{
	return g_strconcat(o->id_prefix != NULL ? o->id_prefix : "x_", id, NULL);
}

gboolean
osv_wanted(const entry_view *v)
{
	return export_open(v) && v->facts->state == ENTRY_PUBLIC;
}

static gboolean
url_ok(const char *u)
{
	if (!(g_str_has_prefix(u, "https://") || g_str_has_prefix(u, "http://")) || strlen(u) > 2000)
		return FALSE;
	for (const unsigned char *p = (const unsigned char *) u; *p; p++)
		if (*p <= 0x20 || *p == 0x7f || *p == '"' || *p == '<' || *p == '>' || *p == '\\')
			return FALSE;
	return TRUE;
}

/* A plain version, as OSV's versions[] wants, not a range ("< 2.5"). */
static gboolean
plain_version(const char *v)
{
	if (*v == '\0' || strlen(v) > 100 || strchr("<>=~^!*", *v) != NULL)
		return FALSE;
	for (const char *p = v; *p; p++)
		if (g_ascii_isspace(*p) || *p == ',')
			return FALSE;
	return TRUE;
}

/* Our own identifiers in related/upstream get the OSV prefix, so that they
 * resolve in the same database; anything else stays as written. */
static char *
related_id(const osv_opts *o, const char *v)
{
	g_autofree char *prefix = NULL;

	if (ids_parse(v, &prefix, NULL, NULL) && g_str_has_prefix(o->id_prefix != NULL ? o->id_prefix : "x_", "x_"))
		return osv_id(o, v);
	return g_strdup(v);
}

static const char *
cv(const entry_claim *c)
{
	return c != NULL ? c->value : NULL;
}

/* The description: what the creator wrote, then what verified roles
 * added (unverified text stays on the entry's page, not in OSV). */
static char *
osv_details(const entry_view *v)
{
	GString *d = g_string_new(NULL);

	for (guint i = 0; i < v->records->len; i++) {
		const view_record *vr = g_ptr_array_index(v->records, i);
		const entry_record *r = vr->r;

		if (!vr->content || r->body == NULL || *r->body == '\0' ||
		    (r->kind != ENTRY_KIND_REQUEST && r->kind != ENTRY_KIND_ADDITION) ||
		    (r->kind == ENTRY_KIND_ADDITION && !entry_how_verified(r->how)))
			continue;
		if (d->len > 0)
			g_string_append_printf(d, "\n\nAdded %s (%s):\n\n", r->created, entry_role_str(r->role));
		g_string_append(d, r->body);
	}
	return g_string_free(d, FALSE);
}

typedef struct {
	char *ecosystem, *package, *purl;
} osv_package;

/* Ecosystem and package: a package URL in Package or Product names both;
 * else an Ecosystem field OSV knows and the Package (or Product). */
static void
osv_package_of(const entry_facts *f, osv_package *p)
{
	const char *pkg = cv(f->package), *product = cv(f->product);
	const char *purl = pkg != NULL && g_str_has_prefix(pkg, "pkg:") ? pkg
			 : product != NULL && g_str_has_prefix(product, "pkg:") ? product : NULL;

	memset(p, 0, sizeof *p);
	if (purl != NULL) {
		if (osv_purl_map(purl, &p->ecosystem, &p->package))
			p->purl = g_strdup(purl);
		return;
	}
	if (f->ecosystem == NULL || osv_ecosystem(f->ecosystem->value) == NULL)
		return;
	p->ecosystem = g_strdup(osv_ecosystem(f->ecosystem->value));
	p->package = g_strdup(pkg != NULL ? pkg : product);
	if (p->package == NULL)
		g_clear_pointer(&p->ecosystem, g_free);
}

static void
osv_affected(JsonBuilder *b, const entry_facts *f, const osv_package *p)
{
	g_autoptr(GPtrArray) plain = g_ptr_array_new_with_free_func(g_free);

	for (guint k = 0; k < f->versions->len; k++) {
		const char *ver = ((entry_claim *) g_ptr_array_index(f->versions, k))->value;

		if (plain_version(ver))
			g_ptr_array_add(plain, g_strdup(ver));
	}
	json_builder_set_member_name(b, "affected");
	json_builder_begin_array(b);
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "package");
	json_builder_begin_object(b);
	jsonb_str_opt(b, "ecosystem", p->ecosystem);
	jsonb_str_opt(b, "name", p->package);
	jsonb_str_opt(b, "purl", p->purl);
	json_builder_end_object(b);
	if (f->fixed_in != NULL && plain_version(f->fixed_in->value)) {
		json_builder_set_member_name(b, "ranges");
		json_builder_begin_array(b);
		json_builder_begin_object(b);
		jsonb_str_opt(b, "type", "ECOSYSTEM");
		json_builder_set_member_name(b, "events");
		json_builder_begin_array(b);
		json_builder_begin_object(b);
		jsonb_str_opt(b, "introduced", "0");
		json_builder_end_object(b);
		json_builder_begin_object(b);
		jsonb_str_opt(b, "fixed", f->fixed_in->value);
		json_builder_end_object(b);
		json_builder_end_array(b);
		json_builder_end_object(b);
		json_builder_end_array(b);
	}
	if (plain->len > 0)
		jsonb_str_array(b, "versions", plain);
	json_builder_end_object(b);
	json_builder_end_array(b);
}

static void
osv_references(JsonBuilder *b, const entry_view *v, const osv_opts *o, GPtrArray *other_refs)
{
	const entry_facts *f = v->facts;

	json_builder_set_member_name(b, "references");
	json_builder_begin_array(b);
	for (guint k = 0; k < f->references->len; k++) {
		const entry_claim *c = g_ptr_array_index(f->references, k);

		/* a reference, then its mirrors (the same file elsewhere) */
		for (guint m = 0; m <= (c->mirrors != NULL ? c->mirrors->len : 0); m++) {
			const char *u = m == 0 ? c->value : ((entry_claim *) g_ptr_array_index(c->mirrors, m - 1))->value;

			if (!url_ok(u)) {
				g_ptr_array_add(other_refs, g_strdup(u));
				continue;
			}
			json_builder_begin_object(b);
			jsonb_str_opt(b, "type", "WEB");
			jsonb_str_opt(b, "url", u);
			json_builder_end_object(b);
		}
	}
	if (o->base_url != NULL && url_ok(o->base_url)) {
		g_autofree char *u = g_strdup_printf("%s%sentries/%s.html", o->base_url,
						     g_str_has_suffix(o->base_url, "/") ? "" : "/", v->e->id);

		json_builder_begin_object(b);
		jsonb_str_opt(b, "type", "REPORT");
		jsonb_str_opt(b, "url", u);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

/* References whose checksum was given (a single file), with their mirrors:
 * OSV's references have no place for a checksum. */
static void
osv_checksums(JsonBuilder *b, const entry_facts *f)
{
	gboolean any = FALSE;

	for (guint k = 0; k < f->references->len; k++) {
		const entry_claim *c = g_ptr_array_index(f->references, k);

		if (c->sha256 == NULL)
			continue;
		if (!any) {
			json_builder_set_member_name(b, "reference_checksums");
			json_builder_begin_array(b);
		}
		any = TRUE;
		json_builder_begin_object(b);
		jsonb_str_opt(b, "url", c->value);
		jsonb_str_opt(b, "sha256", c->sha256);
		json_builder_set_member_name(b, "mirrors");
		json_builder_begin_array(b);
		for (guint m = 0; c->mirrors != NULL && m < c->mirrors->len; m++)
			json_builder_add_string_value(b, ((entry_claim *) g_ptr_array_index(c->mirrors, m))->value);
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	if (any)
		json_builder_end_array(b);
}

/* The reporter, and the endorsed contributors whose signed additions the
 * entry took (each once, as the public view names them). */
static void
osv_credits(JsonBuilder *b, const entry_view *v)
{
	const view_record *first = v->records->len > 0 ? g_ptr_array_index(v->records, 0) : NULL;
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	gboolean any = FALSE;

	for (guint i = 0; i < v->records->len; i++) {
		const view_record *vr = g_ptr_array_index(v->records, i);
		const char *type = vr == first && vr->r->role == ENTRY_ROLE_CREATOR ? "REPORTER"
				 : vr->r->role == ENTRY_ROLE_CONTRIBUTOR && vr->content && vr->r->fields->len > 0
				 ? "ANALYST" : NULL;
		const char *name;

		if (type == NULL || vr->author == NULL)
			continue;
		name = vr->author_name != NULL && *vr->author_name != '\0' ? vr->author_name : vr->author;
		if (g_hash_table_contains(seen, name))
			continue;
		g_hash_table_add(seen, (gpointer) name);
		if (!any) {
			json_builder_set_member_name(b, "credits");
			json_builder_begin_array(b);
		}
		any = TRUE;
		json_builder_begin_object(b);
		jsonb_str_opt(b, "name", name);
		jsonb_str_opt(b, "type", type);
		json_builder_end_object(b);
	}
	if (any)
		json_builder_end_array(b);
}

static void
osv_database_specific(JsonBuilder *b, const entry_view *v, const osv_package *p, GPtrArray *other_refs)
{
	const entry_facts *f = v->facts;

	json_builder_set_member_name(b, "database_specific");
	json_builder_begin_object(b);
	jsonb_str_opt(b, "vulnid_id", v->e->id);
	jsonb_str_opt(b, "digest", v->e->digest);
	json_builder_set_member_name(b, "records");
	json_builder_add_int_value(b, v->e->records->len);
	jsonb_str_opt(b, "created", v->e->created);
	jsonb_str_opt(b, "vendor", cv(f->vendor));
	jsonb_str_opt(b, "product", cv(f->product));
	jsonb_str_array_of(b, "versions", f->versions, claim_str);
	jsonb_str_opt(b, "type", cv(f->type));
	jsonb_str_opt(b, "severity", cv(f->severity));
	if (f->vendor_status != NULL) {
		json_builder_set_member_name(b, "vendor_position");
		json_builder_begin_object(b);
		jsonb_str_opt(b, "status", f->vendor_status->value);
		jsonb_str_opt(b, "time", f->vendor_status->record->created);
		jsonb_str_opt(b, "statement", f->vendor_status->record->body);
		json_builder_end_object(b);
	}
	if (f->proposals->len > 0) {
		/* what unverified senders said: kept, never in the fields above */
		json_builder_set_member_name(b, "unverified");
		json_builder_begin_array(b);
		for (guint k = 0; k < f->proposals->len; k++) {
			const entry_claim *c = g_ptr_array_index(f->proposals, k);

			json_builder_begin_object(b);
			jsonb_str_opt(b, "field", c->key);
			jsonb_str_opt(b, "value", c->value);
			jsonb_str_opt(b, "role", entry_role_str(c->record->role));
			jsonb_str_opt(b, "how", entry_how_str(c->record->how));
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
	}
	if (f->reviewed != NULL) {
		/* a moderator checked that the claim is about a real product */
		json_builder_set_member_name(b, "reviewed");
		json_builder_begin_object(b);
		jsonb_str_opt(b, "product", f->reviewed_product);
		jsonb_str_opt(b, "version", f->reviewed_version);
		jsonb_str_opt(b, "time", f->reviewed->record->created);
		json_builder_end_object(b);
	}
	osv_checksums(b, f);
	jsonb_str_opt(b, "duplicate_of", cv(f->duplicate_of));
	if (f->withdrawn != NULL && g_ascii_strcasecmp(f->withdrawn->value, "yes") != 0)
		jsonb_str_opt(b, "withdrawn_reason", f->withdrawn->value);
	if (p->ecosystem == NULL && cv(f->package) != NULL && !g_str_has_prefix(cv(f->package), "pkg:"))
		jsonb_str_opt(b, "package", cv(f->package));
	if (other_refs->len > 0)
		jsonb_str_array(b, "other_references", other_refs);
	json_builder_end_object(b);
}

JsonNode *
osv_record(const export_set *set, guint i, const osv_opts *o)
{
	const entry_view *v = g_ptr_array_index(set->views, i);
	const entry_facts *f = v->facts;
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autofree char *id = osv_id(o, v->e->id);
	g_autofree char *details = osv_details(v);
	g_autofree char *summary = text_clean_line(entry_view_title(v), 0);
	g_autoptr(GPtrArray) related = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) other_refs = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *dups = g_hash_table_lookup(set->duplicates, v->e->id);
	osv_package p;

	osv_package_of(f, &p);
	if (f->duplicate_of != NULL)
		g_ptr_array_add(related, related_id(o, f->duplicate_of->value));
	for (guint k = 0; dups != NULL && k < dups->len; k++)
		g_ptr_array_add(related, related_id(o, g_ptr_array_index(dups, k)));
	for (guint k = 0; k < f->related->len; k++)
		g_ptr_array_add(related, related_id(o, ((entry_claim *) g_ptr_array_index(f->related, k))->value));

	json_builder_begin_object(b);
	jsonb_str_opt(b, "schema_version", "1.6.0");
	jsonb_str_opt(b, "id", id);
	jsonb_str_opt(b, "modified", f->modified);
	jsonb_str_opt(b, "published", f->published);
	jsonb_str_opt(b, "withdrawn", f->withdrawn != NULL ? f->withdrawn->record->created : NULL);
	jsonb_str_array_of(b, "aliases", f->aliases, claim_str);
	jsonb_str_array(b, "related", related);
	jsonb_str_opt(b, "summary", summary);
	jsonb_str_opt(b, "details", details);
	if (f->cvss->len > 0) {
		json_builder_set_member_name(b, "severity");
		json_builder_begin_array(b);
		for (guint k = 0; k < f->cvss->len; k++) {
			const entry_cvss *r = g_ptr_array_index(f->cvss, k);

			json_builder_begin_object(b);
			jsonb_str_opt(b, "type", r->type);
			jsonb_str_opt(b, "score", r->score);
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
	}
	/* affected[] only where an ecosystem maps; the rest stays in
	 * database_specific, where nothing is lost */
	if (p.ecosystem != NULL && p.package != NULL)
		osv_affected(b, f, &p);
	osv_references(b, v, o, other_refs);
	osv_credits(b, v);
	osv_database_specific(b, v, &p, other_refs);
	json_builder_end_object(b);
	g_free(p.ecosystem);
	g_free(p.package);
	g_free(p.purl);
	return json_builder_get_root(b);
}

vulnid_status
osv_export(store *st, const char *dir, const osv_opts *o, guint *count, GError **err)
{
	g_autoptr(export_set) set = NULL;
	g_autoptr(GHashTable) written = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	vulnid_status s;

	*count = 0;
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   dir, g_strerror(errno));
	s = export_set_load(st, &set, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < set->views->len; i++) {
		const entry_view *v = g_ptr_array_index(set->views, i);
		g_autoptr(JsonNode) n = NULL;
		g_autofree char *text = NULL;
		g_autofree char *oid = NULL;
		g_autofree char *name = NULL;
		g_autofree char *path = NULL;

		if (!osv_wanted(v))
			continue;
		n = osv_record(set, i, o);
		text = export_json_text(n);
		oid = osv_id(o, v->e->id);
		name = g_strconcat(oid, ".json", NULL);
		path = g_build_filename(dir, name, NULL);
		s = export_write_file(path, text, strlen(text), 0644, err);
		if (s != VULNID_OK)
			return s;
		g_hash_table_add(written, g_steal_pointer(&name));
		(*count)++;
	}
	export_remove_stale(dir, o->id_prefix != NULL ? o->id_prefix : "x_", ".json", written);
	return VULNID_OK;
}
