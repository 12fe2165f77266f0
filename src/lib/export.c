/* export.c - the public view of entries, OSV records, mbox, backup */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gmime/gmime.h>

#include "export.h"
#include "ids.h"
#include "message.h"
#include "text.h"

/* ---- facts ------------------------------------------------------------- */

JsonArray *
export_record_fields(const entry_record *r)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *root;

	if (r->fields == NULL || !json_parser_load_from_data(p, r->fields, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	if (root == NULL || !JSON_NODE_HOLDS_ARRAY(root))
		return NULL;
	return json_array_ref(json_node_get_array(root));
}

/* A record whose content is sealed (embargo not released) says nothing yet. */
static gboolean
record_sealed(const entry_record *r)
{
	return r->sealed != NULL && !r->disclosed;
}

static void
add_distinct(GPtrArray *a, const char *v)
{
	for (guint i = 0; i < a->len; i++)
		if (strcmp(g_ptr_array_index(a, i), v) == 0)
			return;
	g_ptr_array_add(a, g_strdup(v));
}

static void
set_str(char **dst, const char *v)
{
	g_free(*dst);
	*dst = g_strdup(v);
}

static void
rating_free(gpointer p)
{
	export_rating *r = p;

	g_free(r->type);
	g_free(r->score);
	g_free(r);
}

/* CVSS vectors: only the characters they are made of, so that a vector
 * given in a field never carries anything else into OSV. */
static const char *
cvss_type(const char *v)
{
	gsize n = strlen(v);

	if (n < 8 || n > 200)
		return NULL;
	for (const char *p = v; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != ':' && *p != '/' && *p != '.')
			return NULL;
	if (g_str_has_prefix(v, "CVSS:3.0/") || g_str_has_prefix(v, "CVSS:3.1/"))
		return "CVSS_V3";
	if (g_str_has_prefix(v, "CVSS:4.0/"))
		return "CVSS_V4";
	if (g_str_has_prefix(v, "AV:"))
		return "CVSS_V2";
	return NULL;
}

static void
add_rating(GPtrArray *ratings, const char *value)
{
	const char *type = cvss_type(value);

	if (type == NULL)
		return;
	/* One vector per version: a later one replaces an earlier one. */
	for (guint i = 0; i < ratings->len; i++) {
		export_rating *r = g_ptr_array_index(ratings, i);

		if (strcmp(r->type, type) == 0) {
			set_str(&r->score, value);
			return;
		}
	}
	{
		export_rating *r = g_new0(export_rating, 1);

		r->type = g_strdup(type);
		r->score = g_strdup(value);
		g_ptr_array_add(ratings, r);
	}
}

/* OSV's ecosystems (its schema's ecosystemName list). */
static const char *const osv_ecosystems[] = {
	"AlmaLinux", "Alpaquita", "Alpine", "Android", "Azure Linux", "Bioconductor", "Bitnami",
	"Chainguard", "ConanCenter", "CRAN", "crates.io", "Debian", "FreeBSD", "GHC",
	"GitHub Actions", "Go", "Hackage", "Hex", "Julia", "Kubernetes", "Linux", "Mageia",
	"Maven", "MinimOS", "npm", "NuGet", "opam", "openEuler", "openSUSE", "OSS-Fuzz",
	"Packagist", "Photon OS", "Pub", "PyPI", "Red Hat", "Rocky Linux", "Root", "RubyGems",
	"SUSE", "SwiftURL", "Ubuntu", "VSCode", "Wolfi",
};

static const char *
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
static gboolean
purl_map(const char *purl, char **ecosystem, char **name)
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

static gboolean
role_is(const entry_record *r, const char *a, const char *b)
{
	return r->role != NULL && (strcmp(r->role, a) == 0 || (b != NULL && strcmp(r->role, b) == 0));
}

static const char *const severity_words[] = { "none", "low", "medium", "moderate", "high", "critical" };

/* The one place where the meaning of records is derived for the public.
 * Single-valued facts take the first value inside a record and a later
 * record's value over an earlier one's, as entry_field() does. */
export_facts *
export_facts_derive(const entry *e)
{
	export_facts *f = g_new0(export_facts, 1);
	g_autofree char *spam = NULL;
	g_autofree char *withdrawn = NULL;
	g_autofree char *withdrawn_time = NULL;

	f->versions = g_ptr_array_new_with_free_func(g_free);
	f->references = g_ptr_array_new_with_free_func(g_free);
	f->aliases = g_ptr_array_new_with_free_func(g_free);
	f->related = g_ptr_array_new_with_free_func(g_free);
	f->ratings = g_ptr_array_new_with_free_func(rating_free);
	f->title = entry_title(e);
	f->vendor = entry_field(e, "Vendor");
	f->product = entry_field(e, "Product");
	f->type = entry_field(e, "Type");
	f->anonymous = entry_is_anonymous(e);
	f->published = g_strdup(e->created);
	f->modified = g_strdup(e->created);

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(JsonArray) fields = NULL;
		gboolean seen_status = FALSE, seen_spam = FALSE, seen_wd = FALSE, seen_dup = FALSE;
		gboolean seen_sev = FALSE, seen_fixed = FALSE, seen_eco = FALSE, seen_pkg = FALSE;
		gboolean vendor = role_is(r, "vendor", NULL) ||
				  (r->kind != NULL && strcmp(r->kind, "vendor-response") == 0);

		if (r->created != NULL && g_strcmp0(r->created, f->modified) > 0)
			set_str(&f->modified, r->created);
		/* A release makes the entry public: that is when it was published. */
		if (r->opens > 0 && i > 0 && r->opens == ((entry_record *) g_ptr_array_index(e->records, 0))->seq &&
		    ((entry_record *) g_ptr_array_index(e->records, 0))->sealed != NULL)
			set_str(&f->published, r->created);
		if (record_sealed(r))
			continue;
		fields = export_record_fields(r);
		for (guint j = 0; fields != NULL && j < json_array_get_length(fields); j++) {
			JsonArray *kv = json_array_get_array_element(fields, j);
			const char *k, *v;

			if (kv == NULL || json_array_get_length(kv) != 2)
				continue;
			k = json_array_get_string_element(kv, 0);
			v = json_array_get_string_element(kv, 1);
			if (k == NULL || v == NULL)
				continue;
			if (g_ascii_strcasecmp(k, "Version") == 0)
				add_distinct(f->versions, v);
			else if (g_ascii_strcasecmp(k, "Reference") == 0)
				add_distinct(f->references, v);
			else if (g_ascii_strcasecmp(k, "Alias") == 0)
				add_distinct(f->aliases, v);
			else if (g_ascii_strcasecmp(k, "Related") == 0)
				add_distinct(f->related, v);
			else if (g_ascii_strcasecmp(k, "Duplicate-Of") == 0 && !seen_dup) {
				seen_dup = TRUE;
				set_str(&f->duplicate_of, g_ascii_strcasecmp(v, "no") == 0 || *v == '\0' ? NULL : v);
			} else if (g_ascii_strcasecmp(k, "Withdrawn") == 0 && !seen_wd) {
				seen_wd = TRUE;
				set_str(&withdrawn, v);
				set_str(&withdrawn_time, r->created);
			} else if (g_ascii_strcasecmp(k, "Spam") == 0 && !seen_spam &&
				   role_is(r, "moderator", "operator")) {
				/* Only moderators decide what is spam; a creator's
				 * own "Spam: yes" would hide a real report. */
				seen_spam = TRUE;
				set_str(&spam, v);
			} else if (g_ascii_strcasecmp(k, "Status") == 0 && vendor && !seen_status) {
				g_autofree char *low = g_ascii_strdown(v, -1);

				if (strcmp(low, "confirmed") == 0 || strcmp(low, "disputed") == 0 ||
				    strcmp(low, "fixed") == 0) {
					seen_status = TRUE;
					set_str(&f->vendor_status, low);
					set_str(&f->vendor_status_time, r->created);
					set_str(&f->vendor_statement, r->body);
					f->vendor_status_seq = r->seq;
				}
			} else if (g_ascii_strcasecmp(k, "CVSS") == 0 || g_ascii_strcasecmp(k, "CVSS-Vector") == 0 ||
				   g_ascii_strcasecmp(k, "Rating") == 0 || g_ascii_strcasecmp(k, "Severity") == 0) {
				g_autofree char *low = g_ascii_strdown(v, -1);

				add_rating(f->ratings, v);
				for (gsize w = 0; w < G_N_ELEMENTS(severity_words); w++)
					if (strcmp(low, severity_words[w]) == 0 && !seen_sev) {
						seen_sev = TRUE;
						set_str(&f->severity, low);
					}
			} else if ((g_ascii_strcasecmp(k, "Fixed") == 0 || g_ascii_strcasecmp(k, "Fixed-In") == 0) &&
				   !seen_fixed) {
				seen_fixed = TRUE;
				set_str(&f->fixed_in, v);
			} else if (g_ascii_strcasecmp(k, "Ecosystem") == 0 && !seen_eco && osv_ecosystem(v) != NULL) {
				seen_eco = TRUE;
				set_str(&f->ecosystem, osv_ecosystem(v));
			} else if (g_ascii_strcasecmp(k, "Package") == 0 && !seen_pkg) {
				seen_pkg = TRUE;
				set_str(&f->package, v);
			}
		}
	}
	if (withdrawn != NULL && g_ascii_strcasecmp(withdrawn, "no") != 0) {
		f->withdrawn = g_steal_pointer(&withdrawn_time);
		if (g_ascii_strcasecmp(withdrawn, "yes") != 0)
			f->withdrawn_reason = g_steal_pointer(&withdrawn);
	}
	/* A package URL in Package or Product names the ecosystem itself. */
	{
		const char *purl = f->package != NULL && g_str_has_prefix(f->package, "pkg:") ? f->package
				 : f->product != NULL && g_str_has_prefix(f->product, "pkg:") ? f->product : NULL;
		char *eco = NULL, *name = NULL;

		if (purl != NULL && purl_map(purl, &eco, &name)) {
			g_free(f->ecosystem);
			f->ecosystem = eco;
			g_free(f->package);
			f->package = name;
			f->purl = g_strdup(purl);
		} else if (purl != NULL) {
			g_clear_pointer(&f->package, g_free);
		}
	}
	if (f->ecosystem != NULL && f->package == NULL && f->product != NULL)
		f->package = g_strdup(f->product);
	if (f->package == NULL)
		g_clear_pointer(&f->ecosystem, g_free);
	f->spam = spam != NULL && g_ascii_strcasecmp(spam, "yes") == 0;
	f->state = f->spam ? "spam" : entry_state(e);
	return f;
}

void
export_facts_free(export_facts *f)
{
	if (f == NULL)
		return;
	g_free(f->title);
	g_free(f->vendor);
	g_free(f->product);
	g_free(f->type);
	g_ptr_array_unref(f->versions);
	g_ptr_array_unref(f->references);
	g_ptr_array_unref(f->aliases);
	g_ptr_array_unref(f->related);
	g_free(f->duplicate_of);
	g_free(f->withdrawn);
	g_free(f->withdrawn_reason);
	g_free(f->vendor_status);
	g_free(f->vendor_status_time);
	g_free(f->vendor_statement);
	g_ptr_array_unref(f->ratings);
	g_free(f->severity);
	g_free(f->fixed_in);
	g_free(f->ecosystem);
	g_free(f->package);
	g_free(f->purl);
	g_free(f->published);
	g_free(f->modified);
	g_free(f);
}

gboolean
export_author_public(const export_facts *f, const entry_record *r)
{
	return r->author != NULL && !(f->anonymous && g_strcmp0(r->role, "creator") == 0);
}

gboolean
export_entry_listed(const export_facts *f)
{
	return !f->spam;
}

gboolean
export_osv_wanted(const export_facts *f)
{
	return strcmp(f->state, "public") == 0;
}

/* ---- the set of all entries ------------------------------------------------ */

void
export_set_free(export_set *set)
{
	if (set == NULL)
		return;
	g_ptr_array_unref(set->entries);
	g_ptr_array_unref(set->facts);
	g_hash_table_unref(set->index);
	g_hash_table_unref(set->duplicates);
	g_ptr_array_unref(set->anonymous);
	g_free(set);
}

vulnid_status
export_set_load(store *st, export_set **out, GError **err)
{
	g_autoptr(export_set) set = g_new0(export_set, 1);
	g_autoptr(GPtrArray) ids = NULL;
	vulnid_status s;

	set->entries = g_ptr_array_new_with_free_func((GDestroyNotify) entry_free);
	set->facts = g_ptr_array_new_with_free_func((GDestroyNotify) export_facts_free);
	set->index = g_hash_table_new(g_str_hash, g_str_equal);
	set->duplicates = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						(GDestroyNotify) g_ptr_array_unref);
	set->anonymous = g_ptr_array_new_with_free_func(g_free);
	/* One read transaction: every entry from the same snapshot. */
	s = store_exec(st, "BEGIN", err);
	if (s != VULNID_OK)
		return s;
	s = entry_list_ids(st, 0, &ids, err);
	for (guint i = 0; s == VULNID_OK && i < ids->len; i++) {
		entry *e = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK)
			break;
		g_ptr_array_add(set->entries, e);
		g_ptr_array_add(set->facts, export_facts_derive(e));
		g_hash_table_insert(set->index, e->id, GUINT_TO_POINTER(i + 1));
	}
	store_rollback(st);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < set->entries->len; i++) {
		const entry *e = g_ptr_array_index(set->entries, i);
		const export_facts *f = g_ptr_array_index(set->facts, i);
		GPtrArray *dups;

		for (guint k = 0; f->anonymous && k < e->records->len; k++) {
			const entry_record *r = g_ptr_array_index(e->records, k);

			if (r->author != NULL && *r->author != '\0' && g_strcmp0(r->role, "creator") == 0) {
				g_autofree char *low = g_ascii_strdown(r->author, -1);

				add_distinct(set->anonymous, low);
			}
		}
		if (f->duplicate_of == NULL || !export_entry_listed(f) || strcmp(f->state, "embargoed") == 0)
			continue;
		dups = g_hash_table_lookup(set->duplicates, f->duplicate_of);
		if (dups == NULL) {
			dups = g_ptr_array_new_with_free_func(g_free);
			g_hash_table_insert(set->duplicates, g_strdup(f->duplicate_of), dups);
		}
		g_ptr_array_add(dups, g_strdup(e->id));
	}
	*out = g_steal_pointer(&set);
	return VULNID_OK;
}

/* ---- files ----------------------------------------------------------------------- */

vulnid_status
export_write_file(const char *path, const void *data, gsize len, int mode, GError **err)
{
	g_autofree char *tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	g_autofree char *dir = g_path_get_dirname(path);
	vulnid_status s = VULNID_OK;
	gsize off = 0;
	int fd, dfd;

	fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, mode);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmp, g_strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, (const char *) data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write '%s': %s",
					tmp, g_strerror(errno));
			break;
		}
		off += (gsize) n;
	}
	if (s == VULNID_OK && fchmod(fd, (mode_t) mode) < 0)
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot chmod '%s': %s",
				tmp, g_strerror(errno));
	if (s == VULNID_OK && fsync(fd) < 0 && errno != EINVAL)
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot sync '%s': %s",
				tmp, g_strerror(errno));
	close(fd);
	if (s == VULNID_OK && rename(tmp, path) < 0)
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot rename '%s' to '%s': %s",
				tmp, path, g_strerror(errno));
	if (s != VULNID_OK) {
		unlink(tmp);
		return s;
	}
	/* The rename itself must survive a crash too. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return VULNID_OK;
}

char *
export_json_text(JsonNode *node)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autofree char *text = NULL;

	json_generator_set_pretty(gen, TRUE);
	json_generator_set_indent(gen, 2);
	json_generator_set_root(gen, node);
	text = json_generator_to_data(gen, NULL);
	return g_strconcat(text, "\n", NULL);
}

/* ---- OSV ----------------------------------------------------------------------- */

char *
export_osv_id(const export_osv_opts *o, const char *id)
{
	return g_strconcat(o->id_prefix != NULL ? o->id_prefix : "x_", id, NULL);
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
related_id(const export_osv_opts *o, const char *v)
{
	g_autofree char *prefix = NULL;

	if (ids_parse(v, &prefix, NULL, NULL) && g_str_has_prefix(o->id_prefix != NULL ? o->id_prefix : "x_", "x_"))
		return export_osv_id(o, v);
	return g_strdup(v);
}

static void
add_str_array(JsonBuilder *b, const char *name, GPtrArray *a)
{
	json_builder_set_member_name(b, name);
	json_builder_begin_array(b);
	for (guint i = 0; i < a->len; i++)
		json_builder_add_string_value(b, g_ptr_array_index(a, i));
	json_builder_end_array(b);
}

static void
add_opt_str(JsonBuilder *b, const char *name, const char *v)
{
	if (v == NULL)
		return;
	json_builder_set_member_name(b, name);
	json_builder_add_string_value(b, v);
}

/* The description: what the creator wrote, then later additions. */
static char *
osv_details(const entry *e)
{
	GString *d = g_string_new(NULL);

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (record_sealed(r) || r->body == NULL || *r->body == '\0' || r->opens > 0 ||
		    g_strcmp0(r->kind, "vendor-response") == 0 || g_strcmp0(r->kind, "command") == 0)
			continue;
		if (d->len > 0)
			g_string_append_printf(d, "\n\nAdded %s (%s):\n\n", r->created,
					       r->role != NULL ? r->role : "unknown");
		g_string_append(d, r->body);
	}
	return g_string_free(d, FALSE);
}

JsonNode *
export_osv_record(const export_set *set, guint i, const export_osv_opts *o)
{
	const entry *e = g_ptr_array_index(set->entries, i);
	const export_facts *f = g_ptr_array_index(set->facts, i);
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autofree char *osv_id = export_osv_id(o, e->id);
	g_autofree char *details = osv_details(e);
	g_autoptr(GPtrArray) related = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) other_refs = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *dups = g_hash_table_lookup(set->duplicates, e->id);
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	g_autofree char *summary = text_clean_line(f->title, 0);

	if (f->duplicate_of != NULL)
		g_ptr_array_add(related, related_id(o, f->duplicate_of));
	for (guint k = 0; dups != NULL && k < dups->len; k++)
		g_ptr_array_add(related, related_id(o, g_ptr_array_index(dups, k)));
	for (guint k = 0; k < f->related->len; k++)
		g_ptr_array_add(related, related_id(o, g_ptr_array_index(f->related, k)));

	json_builder_begin_object(b);
	add_opt_str(b, "schema_version", "1.6.0");
	add_opt_str(b, "id", osv_id);
	add_opt_str(b, "modified", f->modified);
	add_opt_str(b, "published", f->published);
	add_opt_str(b, "withdrawn", f->withdrawn);
	add_str_array(b, "aliases", f->aliases);
	add_str_array(b, "related", related);
	add_opt_str(b, "summary", summary);
	add_opt_str(b, "details", details);
	if (f->ratings->len > 0) {
		json_builder_set_member_name(b, "severity");
		json_builder_begin_array(b);
		for (guint k = 0; k < f->ratings->len; k++) {
			const export_rating *r = g_ptr_array_index(f->ratings, k);

			json_builder_begin_object(b);
			add_opt_str(b, "type", r->type);
			add_opt_str(b, "score", r->score);
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
	}
	/* affected[] only where an ecosystem maps; the rest stays in
	 * database_specific, where nothing is lost. */
	if (f->ecosystem != NULL && f->package != NULL) {
		g_autoptr(GPtrArray) plain = g_ptr_array_new_with_free_func(g_free);

		for (guint k = 0; k < f->versions->len; k++)
			if (plain_version(g_ptr_array_index(f->versions, k)))
				g_ptr_array_add(plain, g_strdup(g_ptr_array_index(f->versions, k)));
		json_builder_set_member_name(b, "affected");
		json_builder_begin_array(b);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "package");
		json_builder_begin_object(b);
		add_opt_str(b, "ecosystem", f->ecosystem);
		add_opt_str(b, "name", f->package);
		add_opt_str(b, "purl", f->purl);
		json_builder_end_object(b);
		if (f->fixed_in != NULL && plain_version(f->fixed_in)) {
			json_builder_set_member_name(b, "ranges");
			json_builder_begin_array(b);
			json_builder_begin_object(b);
			add_opt_str(b, "type", "ECOSYSTEM");
			json_builder_set_member_name(b, "events");
			json_builder_begin_array(b);
			json_builder_begin_object(b);
			add_opt_str(b, "introduced", "0");
			json_builder_end_object(b);
			json_builder_begin_object(b);
			add_opt_str(b, "fixed", f->fixed_in);
			json_builder_end_object(b);
			json_builder_end_array(b);
			json_builder_end_object(b);
			json_builder_end_array(b);
		}
		if (plain->len > 0)
			add_str_array(b, "versions", plain);
		json_builder_end_object(b);
		json_builder_end_array(b);
	}
	json_builder_set_member_name(b, "references");
	json_builder_begin_array(b);
	for (guint k = 0; k < f->references->len; k++) {
		const char *u = g_ptr_array_index(f->references, k);

		if (!url_ok(u)) {
			g_ptr_array_add(other_refs, g_strdup(u));
			continue;
		}
		json_builder_begin_object(b);
		add_opt_str(b, "type", "WEB");
		add_opt_str(b, "url", u);
		json_builder_end_object(b);
	}
	if (o->base_url != NULL && url_ok(o->base_url)) {
		g_autofree char *u = g_strdup_printf("%s%sentries/%s.html", o->base_url,
						     g_str_has_suffix(o->base_url, "/") ? "" : "/", e->id);

		json_builder_begin_object(b);
		add_opt_str(b, "type", "REPORT");
		add_opt_str(b, "url", u);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	if (first != NULL && export_author_public(f, first) && g_strcmp0(first->role, "creator") == 0) {
		json_builder_set_member_name(b, "credits");
		json_builder_begin_array(b);
		json_builder_begin_object(b);
		add_opt_str(b, "name", first->author_name != NULL && *first->author_name != '\0'
				       ? first->author_name : first->author);
		add_opt_str(b, "type", "REPORTER");
		json_builder_end_object(b);
		json_builder_end_array(b);
	}
	json_builder_set_member_name(b, "database_specific");
	json_builder_begin_object(b);
	add_opt_str(b, "vulnid_id", e->id);
	add_opt_str(b, "digest", e->digest);
	json_builder_set_member_name(b, "records");
	json_builder_add_int_value(b, e->records->len);
	add_opt_str(b, "created", e->created);
	add_opt_str(b, "vendor", f->vendor);
	add_opt_str(b, "product", f->product);
	add_str_array(b, "versions", f->versions);
	add_opt_str(b, "type", f->type);
	add_opt_str(b, "severity", f->severity);
	if (f->vendor_status != NULL) {
		json_builder_set_member_name(b, "vendor_position");
		json_builder_begin_object(b);
		add_opt_str(b, "status", f->vendor_status);
		add_opt_str(b, "time", f->vendor_status_time);
		add_opt_str(b, "statement", f->vendor_statement);
		json_builder_end_object(b);
	}
	add_opt_str(b, "duplicate_of", f->duplicate_of);
	add_opt_str(b, "withdrawn_reason", f->withdrawn_reason);
	if (other_refs->len > 0)
		add_str_array(b, "other_references", other_refs);
	json_builder_end_object(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

/* Remove DIR/NAME files of ours that the current export did not write:
 * only names of the form <prefix><ID><suffix>, never anything else. */
void
export_remove_stale(const char *dir, const char *prefix, const char *suffix, GHashTable *keep)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *id = NULL;
		gsize n = strlen(name);

		if (!g_str_has_prefix(name, prefix) || !g_str_has_suffix(name, suffix) ||
		    n <= strlen(prefix) + strlen(suffix) || g_hash_table_contains(keep, name))
			continue;
		id = g_strndup(name + strlen(prefix), n - strlen(prefix) - strlen(suffix));
		if (ids_parse(id, NULL, NULL, NULL)) {
			g_autofree char *p = g_build_filename(dir, name, NULL);

			unlink(p);
		}
	}
}

vulnid_status
export_osv(store *st, const char *dir, const export_osv_opts *o, guint *count, GError **err)
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
	for (guint i = 0; i < set->entries->len; i++) {
		const entry *e = g_ptr_array_index(set->entries, i);
		g_autoptr(JsonNode) n = NULL;
		g_autofree char *text = NULL;
		g_autofree char *osv_id = NULL;
		g_autofree char *name = NULL;
		g_autofree char *path = NULL;

		if (!export_osv_wanted(g_ptr_array_index(set->facts, i)))
			continue;
		n = export_osv_record(set, i, o);
		text = export_json_text(n);
		osv_id = export_osv_id(o, e->id);
		name = g_strconcat(osv_id, ".json", NULL);
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

/* ---- public mail ------------------------------------------------------------------ */

void
export_mail_free(gpointer p)
{
	export_mail *m = p;

	g_free(m->time);
	g_free(m->sender);
	g_free(m->entry);
	g_free(m);
}

static const export_facts *
set_facts(const export_set *set, const char *id, const entry **e)
{
	guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(set->index, id));

	if (pos == 0)
		return NULL;
	if (e != NULL)
		*e = g_ptr_array_index(set->entries, pos - 1);
	return g_ptr_array_index(set->facts, pos - 1);
}

/* Public now: listed, and not (or no longer) under embargo. */
static gboolean
entry_public_now(const export_facts *f)
{
	return f != NULL && export_entry_listed(f) && strcmp(f->state, "embargoed") != 0;
}

static gint
mail_cmp(gconstpointer a, gconstpointer b)
{
	const export_mail *x = *(export_mail *const *) a;
	const export_mail *y = *(export_mail *const *) b;
	int c = g_strcmp0(x->time, y->time);

	if (c != 0)
		return c;
	/* Times have seconds only: a request comes before the announcement
	 * it caused, and that before the next request. */
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if ((x->outbox != 0) != (y->outbox != 0))
		return x->outbox != 0 ? 1 : -1;
	return x->outbox < y->outbox ? -1 : x->outbox > y->outbox;
}

vulnid_status
export_mail_list(store *st, const export_set *set, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) mails = g_ptr_array_new_with_free_func(export_mail_free);
	sqlite3_stmt *stmt;
	vulnid_status s;
	export_mail *cur = NULL;
	gboolean cur_ok = FALSE;
	int rc;

	stmt = store_prepare(st,
		"SELECT r.message, r.entry, r.seq, r.role, m.received,"
		" coalesce(m.envelope_from, m.from_addr) FROM records r JOIN messages m ON m.id = r.message"
		" ORDER BY r.message, r.id", &s, err);
	if (stmt == NULL)
		return s;
	/* A mail is public only if every entry it made a record in is: a mail
	 * with two requests, one of them embargoed, stays private. */
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		gint64 msg = sqlite3_column_int64(stmt, 0);
		const char *id = (const char *) sqlite3_column_text(stmt, 1);
		const char *role = (const char *) sqlite3_column_text(stmt, 3);
		const entry *e = NULL;
		const export_facts *f = set_facts(set, id != NULL ? id : "", &e);

		if (cur == NULL || cur->message != msg) {
			if (cur != NULL && cur_ok)
				g_ptr_array_add(mails, cur);
			else if (cur != NULL)
				export_mail_free(cur);
			cur = g_new0(export_mail, 1);
			cur->message = msg;
			cur->order = msg;
			cur->time = g_strdup((const char *) sqlite3_column_text(stmt, 4));
			cur->sender = g_strdup((const char *) sqlite3_column_text(stmt, 5));
			cur->entry = g_strdup(id);
			cur->seq = sqlite3_column_int64(stmt, 2);
			cur_ok = TRUE;
		}
		if (!entry_public_now(f))
			cur_ok = FALSE;
		else if (f->anonymous && g_strcmp0(role, "creator") == 0)
			cur->anonymize = TRUE;
	}
	if (cur != NULL && cur_ok)
		g_ptr_array_add(mails, cur);
	else if (cur != NULL)
		export_mail_free(cur);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "records", err);

	/* Announcements went to lists: public once delivered. */
	stmt = store_prepare(st,
		"SELECT id, entry, created, envelope_from, coalesce(cause, 0) FROM outbox"
		" WHERE kind IN ('announce', 'announce-digest') AND status = 'delivered' ORDER BY id",
		&s, err);
	if (stmt == NULL)
		return s;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *id = (const char *) sqlite3_column_text(stmt, 1);
		export_mail *m;

		if (id != NULL && *id != '\0' && !entry_public_now(set_facts(set, id, NULL)))
			continue;
		m = g_new0(export_mail, 1);
		m->outbox = sqlite3_column_int64(stmt, 0);
		m->order = sqlite3_column_int64(stmt, 4) > 0 ? sqlite3_column_int64(stmt, 4) : G_MAXINT64;
		m->entry = g_strdup(id != NULL && *id != '\0' ? id : NULL);
		m->time = g_strdup((const char *) sqlite3_column_text(stmt, 2));
		m->sender = g_strdup((const char *) sqlite3_column_text(stmt, 3));
		g_ptr_array_add(mails, m);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "outbox", err);
	g_ptr_array_sort(mails, mail_cmp);
	*out = g_steal_pointer(&mails);
	return VULNID_OK;
}

/* Header fields kept in the mail of an anonymous author: what the mail is
 * and says, none of where it came from. */
static const char *const anon_keep[] = {
	"Subject", "Date", "To", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
	"Content-Disposition", "Content-Language",
};

static GBytes *
anonymize(GBytes *raw, const char *entry_id, gint64 seq, const char *domain)
{
	g_autoptr(GMimeStream) in = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(raw, NULL),
								       g_bytes_get_size(raw));
	g_autoptr(GMimeParser) p = g_mime_parser_new_with_stream(in);
	g_autoptr(GMimeMessage) msg = g_mime_parser_construct_message(p, NULL);
	GMimeHeaderList *hl;
	g_autofree char *mid = NULL;
	char *text;

	if (msg == NULL)
		return NULL;
	hl = g_mime_object_get_header_list(GMIME_OBJECT(msg));
	for (int i = g_mime_header_list_get_count(hl) - 1; i >= 0; i--) {
		GMimeHeader *h = g_mime_header_list_get_header_at(hl, i);
		const char *name = g_mime_header_get_name(h);
		gboolean keep = FALSE;

		for (gsize k = 0; k < G_N_ELEMENTS(anon_keep); k++)
			keep |= g_ascii_strcasecmp(name, anon_keep[k]) == 0;
		if (!keep)
			g_mime_header_list_remove_at(hl, i);
	}
	g_mime_object_prepend_header(GMIME_OBJECT(msg), "From", "Anonymous <anonymous@invalid>", NULL);
	mid = g_strdup_printf("%s.%" G_GINT64_FORMAT ".anonymous@%s", entry_id != NULL ? entry_id : "mail",
			      seq, domain != NULL && *domain != '\0' ? domain : "invalid");
	g_mime_message_set_message_id(msg, mid);
	text = g_mime_object_to_string(GMIME_OBJECT(msg), NULL);
	return g_bytes_new_take(text, strlen(text));
}

/* CRLF -> LF (mbox and files for mail clients use the local line end). */
static GBytes *
to_lf(GBytes *b)
{
	gsize n;
	const char *d = g_bytes_get_data(b, &n);
	GString *o = g_string_sized_new(n);

	for (gsize i = 0; i < n; i++)
		if (!(d[i] == '\r' && i + 1 < n && d[i + 1] == '\n'))
			g_string_append_c(o, d[i]);
	return g_string_free_to_bytes(o);
}

/* Every anonymous creator's address, in any case, becomes
 * anonymous@invalid: in quotes and signatures of any mail. */
static GBytes *
scrub(GBytes *b, const GPtrArray *addrs)
{
	gsize n;
	const char *d = g_bytes_get_data(b, &n);
	GString *o;

	if (addrs == NULL || addrs->len == 0)
		return g_bytes_ref(b);
	o = g_string_sized_new(n);
	for (gsize i = 0; i < n;) {
		gboolean hit = FALSE;

		for (guint k = 0; k < addrs->len && !hit; k++) {
			const char *a = g_ptr_array_index(addrs, k);
			gsize len = strlen(a);

			if (len > 0 && i + len <= n && g_ascii_strncasecmp(d + i, a, len) == 0) {
				g_string_append(o, "anonymous@invalid");
				i += len;
				hit = TRUE;
			}
		}
		if (!hit)
			g_string_append_c(o, d[i++]);
	}
	return g_string_free_to_bytes(o);
}

vulnid_status
export_mail_bytes(store *st, const export_set *set, const export_mail *m, const char *robot_domain,
		  GBytes **out, GError **err)
{
	g_autoptr(GBytes) raw = NULL;
	vulnid_status s;

	if (m->message > 0) {
		sqlite3_stmt *stmt = store_prepare(st, "SELECT raw_sha256 FROM messages WHERE id = ?", &s, err);
		g_autofree char *sha = NULL;
		int rc;

		if (stmt == NULL)
			return s;
		sqlite3_bind_int64(stmt, 1, m->message);
		rc = sqlite3_step(stmt);
		if (rc == SQLITE_ROW)
			sha = g_strdup((const char *) sqlite3_column_text(stmt, 0));
		sqlite3_finalize(stmt);
		if (rc != SQLITE_ROW)
			return rc == SQLITE_DONE ? vulnid_fail(err, VULNID_ERR_NOTFOUND, "no message %" G_GINT64_FORMAT,
							       m->message)
						 : store_fail(st, rc, "messages", err);
		s = store_blob_get(st, sha, &raw, err);
		if (s != VULNID_OK)
			return s;
	} else {
		sqlite3_stmt *stmt = store_prepare(st, "SELECT data FROM outbox WHERE id = ?", &s, err);
		int rc;

		if (stmt == NULL)
			return s;
		sqlite3_bind_int64(stmt, 1, m->outbox);
		rc = sqlite3_step(stmt);
		if (rc == SQLITE_ROW)
			raw = g_bytes_new(sqlite3_column_blob(stmt, 0), (gsize) sqlite3_column_bytes(stmt, 0));
		sqlite3_finalize(stmt);
		if (rc != SQLITE_ROW)
			return rc == SQLITE_DONE ? vulnid_fail(err, VULNID_ERR_NOTFOUND, "no outbox item %" G_GINT64_FORMAT,
							       m->outbox)
						 : store_fail(st, rc, "outbox", err);
	}
	if (m->anonymize) {
		GBytes *a = anonymize(raw, m->entry, m->seq, robot_domain);

		/* A mail GMime cannot parse is not published half-cleaned. */
		if (a == NULL)
			return vulnid_fail(err, VULNID_ERR_INVALID, "cannot anonymize message %" G_GINT64_FORMAT,
					   m->message);
		g_bytes_unref(raw);
		raw = a;
	}
	{
		g_autoptr(GBytes) lf = to_lf(raw);

		*out = scrub(lf, set != NULL ? set->anonymous : NULL);
	}
	return VULNID_OK;
}

/* asctime() form for the From_ line, in C locale names. */
static char *
mbox_date(const char *rfc3339)
{
	static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	g_autoptr(GDateTime) t = rfc3339 != NULL ? g_date_time_new_from_iso8601(rfc3339, NULL) : NULL;

	if (t == NULL)
		t = g_date_time_new_from_unix_utc(0);
	return g_strdup_printf("%s %s %2d %02d:%02d:%02d %d",
			       days[g_date_time_get_day_of_week(t) - 1],
			       months[g_date_time_get_month(t) - 1], g_date_time_get_day_of_month(t),
			       g_date_time_get_hour(t), g_date_time_get_minute(t),
			       g_date_time_get_second(t), g_date_time_get_year(t));
}

/* One envelope sender word for the From_ line: no spaces, no controls. */
static const char *
mbox_sender(const export_mail *m)
{
	if (m->anonymize)
		return "anonymous@invalid";
	if (m->sender == NULL || *m->sender == '\0' || strlen(m->sender) > 320)
		return "MAILER-DAEMON";
	for (const unsigned char *p = (const unsigned char *) m->sender; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f)
			return "MAILER-DAEMON";
	return m->sender;
}

static void
mbox_append(GString *out, const export_mail *m, GBytes *mail)
{
	gsize n;
	const char *d = g_bytes_get_data(mail, &n);
	g_autofree char *date = mbox_date(m->time);
	gsize i = 0;

	g_string_append_printf(out, "From %s %s\n", mbox_sender(m), date);
	/* mboxrd: every line that is ">*From " gets one more '>', so that
	 * readers can undo it exactly. */
	while (i < n) {
		const char *nl = memchr(d + i, '\n', n - i);
		gsize len = nl != NULL ? (gsize) (nl - (d + i)) + 1 : n - i;
		gsize j = i;

		while (j < i + len && d[j] == '>')
			j++;
		if (i + len - j >= 5 && memcmp(d + j, "From ", 5) == 0)
			g_string_append_c(out, '>');
		g_string_append_len(out, d + i, (gssize) len);
		i += len;
	}
	if (n == 0 || d[n - 1] != '\n')
		g_string_append_c(out, '\n');
	g_string_append_c(out, '\n');
}

vulnid_status
export_mbox(store *st, const char *path, const char *robot_domain, guint *count, GError **err)
{
	g_autoptr(export_set) set = NULL;
	g_autoptr(GPtrArray) mails = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	vulnid_status s;

	*count = 0;
	s = export_set_load(st, &set, err);
	if (s != VULNID_OK)
		return s;
	s = store_exec(st, "BEGIN", err);
	if (s != VULNID_OK)
		return s;
	s = export_mail_list(st, set, &mails, err);
	for (guint i = 0; s == VULNID_OK && i < mails->len; i++) {
		g_autoptr(GBytes) b = NULL;

		s = export_mail_bytes(st, set, g_ptr_array_index(mails, i), robot_domain, &b, err);
		if (s == VULNID_OK) {
			mbox_append(out, g_ptr_array_index(mails, i), b);
			(*count)++;
		}
	}
	store_rollback(st);
	if (s != VULNID_OK)
		return s;
	return export_write_file(path, out->str, out->len, 0644, err);
}

/* ---- backup ----------------------------------------------------------------------- */

vulnid_status
export_backup(store *st, const char *path, gboolean force, gint64 busy_timeout_ms, GError **err)
{
	g_autofree char *tmp = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	vulnid_status s = VULNID_OK;
	gint64 waited = 0;
	int rc, fd;

	if (!force && g_file_test(path, G_FILE_TEST_EXISTS))
		return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' exists (use --force to replace it)", path);
	tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	/* The copy holds every mail, sealed or not: private from the start. */
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmp, g_strerror(errno));
	close(fd);
	rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		s = vulnid_fail(err, VULNID_ERR_IO, "cannot open '%s': %s", tmp,
				dst != NULL ? sqlite3_errmsg(dst) : sqlite3_errstr(rc));
		goto out;
	}
	b = sqlite3_backup_init(dst, "main", store_db(st), "main");
	if (b == NULL) {
		s = vulnid_fail(err, VULNID_ERR_IO, "cannot start the backup: %s", sqlite3_errmsg(dst));
		goto out;
	}
	/* All pages in one step: one read snapshot, which in WAL mode never
	 * blocks the filters' writes; retried only while the source is busy
	 * (a checkpoint or a recovery in progress). */
	for (;;) {
		rc = sqlite3_backup_step(b, -1);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		if (waited >= busy_timeout_ms)
			break;
		sqlite3_sleep(50);
		waited += 50;
	}
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		s = rc == SQLITE_BUSY || rc == SQLITE_LOCKED
			? vulnid_fail(err, VULNID_ERR_BUSY, "backup: the database stayed busy")
			: vulnid_fail(err, rc == SQLITE_FULL ? VULNID_ERR_NOSPACE : VULNID_ERR_IO,
				      "backup: %s", sqlite3_errstr(rc));
		goto out;
	}
	/* One self-contained file, and checked before it replaces anything. */
	rc = sqlite3_exec(dst, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_stmt *q = NULL;

		rc = sqlite3_prepare_v2(dst, "PRAGMA quick_check", -1, &q, NULL);
		if (rc == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
		    g_strcmp0((const char *) sqlite3_column_text(q, 0), "ok") != 0)
			rc = SQLITE_CORRUPT;
		sqlite3_finalize(q);
	}
	if (rc != SQLITE_OK) {
		s = vulnid_fail(err, VULNID_ERR_IO, "backup copy does not check: %s", sqlite3_errstr(rc));
		goto out;
	}
	sqlite3_close_v2(dst);
	dst = NULL;
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot sync '%s': %s",
				tmp, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot rename '%s' to '%s': %s",
				tmp, path, g_strerror(errno));
		goto out;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return VULNID_OK;
out:
	if (dst != NULL)
		sqlite3_close_v2(dst);
	unlink(tmp);
	{
		g_autofree char *j = g_strconcat(tmp, "-journal", NULL);

		unlink(j);
	}
	return s;
}
