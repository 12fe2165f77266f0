/* u-store-exports.c - the database accessors of the audit log, vendors,
 * entries and exports (src/lib/store-{audit,vendor,entry,export}.c) on a
 * store made in a temporary directory */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "audit.h"
#include "store.h"
#include "store-audit.h"
#include "store-entry.h"
#include "store-export.h"
#include "store-vendor.h"
#include "vendor.h"

typedef struct {
	char *dir;
	store *st;
} fixture;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *path = NULL;

	(void) data;
	f->dir = g_dir_make_tmp("u-store-XXXXXX", &err);
	g_assert_no_error(err);
	path = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(path, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	g_assert_no_error(err);
}

static void
teardown(fixture *f, gconstpointer data)
{
	g_autoptr(GDir) d = NULL;
	const char *name;

	(void) data;
	store_close(f->st);
	d = g_dir_open(f->dir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *p = g_build_filename(f->dir, name, NULL);

		g_unlink(p);
	}
	g_rmdir(f->dir);
	g_free(f->dir);
}

static void
append_event(store *st, const char *event, const char *fpr)
{
	g_autoptr(audit_event) ev = audit_event_new(event, NULL, NULL);
	g_autoptr(GError) err = NULL;

	if (fpr != NULL)
		audit_event_str(ev, "fingerprint", fpr);
	g_assert_cmpint(audit_append_now(st, ev, &err), ==, VULNID_OK);
	g_assert_no_error(err);
}

static void
test_audit(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GString) lines = g_string_new(NULL);
	g_autofree char *head = NULL;
	g_autofree char *head2 = NULL;
	g_auto(GStrv) split = NULL;
	guint64 count = 99, n = 0;
	gint64 seq = 0;
	gboolean found = TRUE;

	(void) data;
	g_assert_cmpint(store_audit_head(f->st, &head, &err), ==, VULNID_OK);
	g_assert_null(head);
	g_assert_cmpint(store_audit_summary(f->st, &count, &head, &err), ==, VULNID_OK);
	g_assert_cmpuint(count, ==, 0);
	g_assert_null(head);

	append_event(f->st, "key-imported", "AAAA");
	append_event(f->st, "key-refused", "BBBB");
	g_assert_cmpint(store_audit_summary(f->st, &count, &head, &err), ==, VULNID_OK);
	g_assert_cmpuint(count, ==, 2);
	g_assert_nonnull(head);
	g_assert_cmpint(store_audit_head(f->st, &head2, &err), ==, VULNID_OK);
	g_assert_cmpstr(head, ==, head2);
	g_assert_cmpint(store_audit_seq_of_hash(f->st, head, &seq, &err), ==, VULNID_OK);
	g_assert_cmpint(seq, ==, 2);
	g_assert_cmpint(store_audit_seq_of_hash(f->st, "nothing", &seq, &err), ==, VULNID_OK);
	g_assert_cmpint(seq, ==, -1);

	/* the lines after the first: one, whose hash is the head and whose
	 * prev is the first line's hash */
	g_assert_cmpint(store_audit_lines_after(f->st, 1, lines, &n, &err), ==, VULNID_OK);
	g_assert_cmpuint(n, ==, 1);
	g_assert_true(g_str_has_suffix(lines->str, "\"}\n"));
	g_assert_nonnull(strstr(lines->str, head));
	g_string_truncate(lines, 0);
	g_assert_cmpint(store_audit_lines_after(f->st, 0, lines, &n, &err), ==, VULNID_OK);
	g_assert_cmpuint(n, ==, 2);
	split = g_strsplit(lines->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(split), ==, 3);
	g_assert_nonnull(strstr(split[0], "\"prev\":\"" AUDIT_GENESIS "\""));

	/* an event of that kind with that fingerprint, not just the words */
	g_assert_cmpint(store_audit_has_fingerprint_event(f->st, "key-imported", "AAAA", &found, &err),
			==, VULNID_OK);
	g_assert_true(found);
	g_assert_cmpint(store_audit_has_fingerprint_event(f->st, "key-imported", "BBBB", &found, &err),
			==, VULNID_OK);
	g_assert_false(found);
	g_assert_cmpint(store_audit_has_fingerprint_event(f->st, "key-imported", "AAA", &found, &err),
			==, VULNID_OK);
	g_assert_false(found);
	g_assert_no_error(err);
}

static void
test_vendor(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) ids = NULL;
	g_autofree char *name = NULL;
	g_autofree char *stored = NULL;
	vendor v = { 0 };
	gint64 id = 0, found_id = 0;
	gboolean found = FALSE;

	(void) data;
	g_assert_false(store_vendor_in_transaction(f->st));
	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_true(store_vendor_in_transaction(f->st));
	g_assert_cmpint(store_vendor_insert(f->st, "Example", "a note", "2026-01-01T00:00:00Z", &id, &err),
			==, VULNID_OK);
	g_assert_cmpint(id, >, 0);
	g_assert_cmpint(store_vendor_alias_insert(f->st, id, "ExCorp", &err), ==, VULNID_OK);
	g_assert_cmpint(store_vendor_domain_insert(f->st, id, "example.org", &err), ==, VULNID_OK);
	g_assert_cmpint(store_vendor_contact_insert(f->st, id, "Sec@Example.org", "operator",
						    "2026-01-01T00:00:00Z", &err), ==, VULNID_OK);
	g_assert_cmpint(store_vendor_set_key(f->st, id, "ABCD", "2026-01-02T00:00:00Z", &err), ==, VULNID_OK);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);

	/* name and alias, case-insensitive */
	g_assert_cmpint(store_vendor_find(f->st, "example", &found_id, &err), ==, VULNID_OK);
	g_assert_cmpint(found_id, ==, id);
	g_assert_cmpint(store_vendor_find(f->st, "EXCORP", &found_id, &err), ==, VULNID_OK);
	g_assert_cmpint(found_id, ==, id);
	g_assert_cmpint(store_vendor_find(f->st, "other", &found_id, &err), ==, VULNID_OK);
	g_assert_cmpint(found_id, ==, 0);
	g_assert_cmpint(store_vendor_find_by_domain(f->st, "example.org", &found_id, &err), ==, VULNID_OK);
	g_assert_cmpint(found_id, ==, id);
	g_assert_cmpint(store_vendor_name(f->st, id, &name, &err), ==, VULNID_OK);
	g_assert_cmpstr(name, ==, "Example");
	g_clear_pointer(&name, g_free);
	g_assert_cmpint(store_vendor_name(f->st, id + 1, &name, &err), ==, VULNID_OK);
	g_assert_null(name);

	g_assert_cmpint(store_vendor_get(f->st, id, &v, &found, &err), ==, VULNID_OK);
	g_assert_true(found);
	g_assert_cmpstr(v.name, ==, "Example");
	g_assert_cmpstr(v.notes, ==, "a note");
	g_assert_cmpstr(v.key_fpr, ==, "ABCD");
	g_assert_cmpstr(v.updated, ==, "2026-01-02T00:00:00Z");
	g_free(v.name); g_free(v.notes); g_free(v.key_fpr); g_free(v.encryption);
	g_free(v.languages); g_free(v.expires); g_free(v.created); g_free(v.updated);

	g_assert_cmpint(store_vendor_contacts(f->st, id, list, &err), ==, VULNID_OK);
	g_assert_cmpuint(list->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(list, 0), ==, "Sec@Example.org");
	/* the stored form comes back for any case */
	g_assert_cmpint(store_vendor_contact_find(f->st, id, "sec@example.ORG", &stored, &err), ==, VULNID_OK);
	g_assert_cmpstr(stored, ==, "Sec@Example.org");

	g_assert_cmpint(store_begin(f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_vendor_contact_delete(f->st, id, stored, &err), ==, VULNID_OK);
	g_assert_cmpint(store_commit(f->st, &err), ==, VULNID_OK);
	g_clear_pointer(&stored, g_free);
	g_assert_cmpint(store_vendor_contact_find(f->st, id, "sec@example.org", &stored, &err), ==, VULNID_OK);
	g_assert_null(stored);

	g_assert_cmpint(store_vendor_ids(f->st, &ids, &err), ==, VULNID_OK);
	g_assert_cmpuint(ids->len, ==, 1);
	g_assert_cmpint(g_array_index(ids, gint64, 0), ==, id);
	g_assert_no_error(err);
}

static void
test_entry_empty(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GPtrArray) ids = NULL;
	g_autoptr(GArray) years = NULL;
	g_autofree char *sha = NULL;
	store_entry_row row;
	gboolean found = TRUE;
	gint64 pos = -1;

	(void) data;
	g_assert_cmpint(store_entry_get(f->st, "X-2026-0001", &row, &found, &err), ==, VULNID_OK);
	g_assert_false(found);
	g_assert_null(row.id);
	g_assert_cmpint(store_entry_ids(f->st, 0, &ids, &err), ==, VULNID_OK);
	g_assert_cmpuint(ids->len, ==, 0);
	g_clear_pointer(&ids, g_ptr_array_unref);
	g_assert_cmpint(store_entry_ids_by_alias(f->st, "CVE-2026-1", 10, &ids, &err), ==, VULNID_OK);
	g_assert_cmpuint(ids->len, ==, 0);
	g_assert_cmpint(store_export_last_record(f->st, &pos, &err), ==, VULNID_OK);
	g_assert_cmpint(pos, ==, 0);
	g_assert_cmpint(store_export_years(f->st, &years, &err), ==, VULNID_OK);
	g_assert_cmpuint(years->len, ==, 0);
	g_assert_cmpint(store_export_record_sha256(f->st, "X-2026-0001", 1, &sha, &err), ==, VULNID_OK);
	g_assert_null(sha);
	g_assert_no_error(err);
}

static void
test_backup_copy(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *copy = g_build_filename(f->dir, "copy.db", NULL);
	g_autoptr(store) st2 = NULL;
	g_autofree char *head = NULL;
	g_autofree char *head2 = NULL;
	guint64 count = 0;

	(void) data;
	append_event(f->st, "key-imported", "AAAA");
	g_assert_true(g_file_set_contents(copy, "", 0, NULL));
	g_assert_cmpint(store_export_backup_copy(f->st, copy, 1000, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpint(store_open(copy, 1000, STORE_OPEN_READONLY, &st2, &err), ==, VULNID_OK);
	g_assert_cmpint(store_audit_summary(st2, &count, &head2, &err), ==, VULNID_OK);
	g_assert_cmpuint(count, ==, 1);
	g_assert_cmpint(store_audit_head(f->st, &head, &err), ==, VULNID_OK);
	g_assert_cmpstr(head, ==, head2);
	g_assert_no_error(err);
}

int
main(int argc, char **argv)
{
	g_setenv("VULNID_TEST_NOW", "2026-03-01T12:00:00Z", TRUE);
	g_test_init(&argc, &argv, NULL);
	g_test_add("/store/audit", fixture, NULL, setup, test_audit, teardown);
	g_test_add("/store/vendor", fixture, NULL, setup, test_vendor, teardown);
	g_test_add("/store/entry-empty", fixture, NULL, setup, test_entry_empty, teardown);
	g_test_add("/store/backup-copy", fixture, NULL, setup, test_backup_copy, teardown);
	return g_test_run();
}
