/* export.c - the public archive's common ground: the set of public views,
 * file writing, the online backup */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "export.h"
#include "ids.h"

/* ---- the set of all entries ------------------------------------------------ */

void
export_set_free(export_set *set)
{
	if (set == NULL)
		return;
	/* views borrow their entries: free them first */
	g_ptr_array_unref(set->views);
	g_ptr_array_unref(set->entries);
	g_hash_table_unref(set->index);
	g_hash_table_unref(set->duplicates);
	g_free(set);
}

gboolean
export_listed(const entry_view *v)
{
	return v != NULL && !v->withheld;
}

gboolean
export_open(const entry_view *v)
{
	return export_listed(v) && !v->stub;
}

static gboolean
export_withheld_at(const entry *e, gint64 rowid)
{
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_PUBLIC, rowid, NULL);

	return v->withheld;
}

gint64
export_withheld_since(const entry *e)
{
	guint lo = 0, hi = e->records->len;

	if (hi == 0 || !export_withheld_at(e, G_MAXINT64))
		return 0;
	/* Withholding is for good (only "Spam: yes" is ever recorded), so the
	 * first record as of which the view is withheld is found by halving:
	 * O(records log records) for an entry marked spam, once. */
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		const entry_record *r = g_ptr_array_index(e->records, mid);

		if (export_withheld_at(e, r->rowid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return ((const entry_record *) g_ptr_array_index(e->records, MIN(lo, e->records->len - 1)))->rowid;
}

const entry_view *
export_set_view(const export_set *set, const char *id)
{
	guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(set->index, id));

	return pos > 0 ? g_ptr_array_index(set->views, pos - 1) : NULL;
}

vulnid_status
export_set_load(store *st, export_set **out, GError **err)
{
	g_autoptr(export_set) set = g_new0(export_set, 1);
	g_autoptr(GPtrArray) ids = NULL;
	g_autoptr(GDateTime) now = store_now_datetime();
	vulnid_status s;

	set->entries = g_ptr_array_new_with_free_func((GDestroyNotify) entry_free);
	set->views = g_ptr_array_new_with_free_func((GDestroyNotify) entry_view_free);
	set->index = g_hash_table_new(g_str_hash, g_str_equal);
	set->duplicates = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						(GDestroyNotify) g_ptr_array_unref);
	/* One read transaction: every entry from the same snapshot. */
	s = store_begin_read(st, err);
	if (s != VULNID_OK)
		return s;
	s = entry_list_ids(st, 0, &ids, err);
	for (guint i = 0; s == VULNID_OK && i < ids->len; i++) {
		entry *e = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK)
			break;
		g_ptr_array_add(set->entries, e);
		g_ptr_array_add(set->views, entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, now));
		g_hash_table_insert(set->index, e->id, GUINT_TO_POINTER(i + 1));
	}
	store_rollback(st);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < set->views->len; i++) {
		const entry_view *v = g_ptr_array_index(set->views, i);
		const entry_claim *dup = v->facts->duplicate_of;
		GPtrArray *dups;

		if (dup == NULL || !export_open(v))
			continue;
		dups = g_hash_table_lookup(set->duplicates, dup->value);
		if (dups == NULL) {
			dups = g_ptr_array_new_with_free_func(g_free);
			g_hash_table_insert(set->duplicates, g_strdup(dup->value), dups);
		}
		g_ptr_array_add(dups, g_strdup(v->e->id));
	}
	*out = g_steal_pointer(&set);
	return VULNID_OK;
}

/* ---- files ----------------------------------------------------------------------- */

vulnid_status
export_write_file(const char *path, const void *data, gsize len, int mode, GError **err)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autoptr(GError) e = NULL;
	int dfd;

	/* A temporary file beside, synced, renamed over the old one. */
	if (!g_file_set_contents_full(path, data, (gssize) len,
				      G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
				      mode, &e))
		return vulnid_fail(err, e->domain == G_FILE_ERROR && e->code == G_FILE_ERROR_NOSPC
				   ? VULNID_ERR_NOSPACE : VULNID_ERR_IO, "cannot write '%s': %s", path, e->message);
	/* The mode is given to open(), so the umask narrowed it; what we
	 * publish must be readable as asked. */
	if (g_chmod(path, mode) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot chmod '%s': %s",
				   path, g_strerror(errno));
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
