/* store-vendor.c - the vendors directory's tables (see store-vendor.h) */
#include "autoconfig.h"

#include <sqlite3.h>

#include "store-db.h"
#include "store-vendor.h"

static const char SQL_VENDOR_GET[] =
	"SELECT id, name, notes, key_fpr, encryption, languages, expires, created, updated"
	" FROM vendors WHERE id = ?";
static const char SQL_VENDOR_ALIASES[] =
	"SELECT alias FROM vendor_aliases WHERE vendor = ? ORDER BY alias";
static const char SQL_VENDOR_DOMAINS[] =
	"SELECT domain FROM vendor_domains WHERE vendor = ? ORDER BY domain";
static const char SQL_VENDOR_CONTACTS[] =
	"SELECT address FROM vendor_contacts WHERE vendor = ? ORDER BY added, rowid";
static const char SQL_VENDOR_FIND[] =
	"SELECT id FROM vendors WHERE name = ?1"
	" UNION ALL SELECT vendor FROM vendor_aliases WHERE alias = ?1 LIMIT 1";
static const char SQL_VENDOR_FIND_BY_DOMAIN[] =
	"SELECT vendor FROM vendor_domains WHERE domain = ?";
static const char SQL_VENDOR_NAME[] =
	"SELECT name FROM vendors WHERE id = ?";
static const char SQL_VENDOR_IDS[] =
	"SELECT id FROM vendors ORDER BY name, id";
static const char SQL_VENDOR_INSERT[] =
	"INSERT INTO vendors (name, notes, created, updated) VALUES (?, ?, ?, ?)";
static const char SQL_VENDOR_TOUCH[] =
	"UPDATE vendors SET updated = ? WHERE id = ?";
static const char SQL_VENDOR_ALIAS_INSERT[] =
	"INSERT INTO vendor_aliases (vendor, alias) VALUES (?, ?)";
static const char SQL_VENDOR_DOMAIN_INSERT[] =
	"INSERT INTO vendor_domains (vendor, domain) VALUES (?, ?)";
static const char SQL_VENDOR_CONTACT_FIND[] =
	"SELECT address FROM vendor_contacts WHERE vendor = ? AND address = ?";
static const char SQL_VENDOR_CONTACT_INSERT[] =
	"INSERT INTO vendor_contacts (vendor, address, source, added) VALUES (?, ?, ?, ?)";
static const char SQL_VENDOR_CONTACT_DELETE[] =
	"DELETE FROM vendor_contacts WHERE vendor = ? AND address = ?";
static const char SQL_VENDOR_SET_SECURITYTXT[] =
	"UPDATE vendors SET encryption = ?, languages = ?, expires = ?, updated = ? WHERE id = ?";
static const char SQL_VENDOR_SET_KEY[] =
	"UPDATE vendors SET key_fpr = ?, updated = ? WHERE id = ?";

vulnid_status
store_vendor_get(store *st, gint64 id, vendor *v, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_GET, &s, err);
	int rc;

	*found = FALSE;
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*found = TRUE;
		v->id = sqlite3_column_int64(stmt, 0);
		v->name = store_col_text(stmt, 1);
		v->notes = store_col_text(stmt, 2);
		v->key_fpr = store_col_text(stmt, 3);
		v->encryption = store_col_text(stmt, 4);
		v->languages = store_col_text(stmt, 5);
		v->expires = store_col_text(stmt, 6);
		v->created = store_col_text(stmt, 7);
		v->updated = store_col_text(stmt, 8);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "vendors", err);
	return VULNID_OK;
}

/* The first column of every row of sql (one int64 parameter) as strings. */
static vulnid_status
load_strings(store *st, const char *sql, gint64 id, GPtrArray *out, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(out, store_col_text(stmt, 0));
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "vendors", err);
	return VULNID_OK;
}

vulnid_status
store_vendor_aliases(store *st, gint64 id, GPtrArray *out, GError **err)
{
	return load_strings(st, SQL_VENDOR_ALIASES, id, out, err);
}

vulnid_status
store_vendor_domains(store *st, gint64 id, GPtrArray *out, GError **err)
{
	return load_strings(st, SQL_VENDOR_DOMAINS, id, out, err);
}

vulnid_status
store_vendor_contacts(store *st, gint64 id, GPtrArray *out, GError **err)
{
	return load_strings(st, SQL_VENDOR_CONTACTS, id, out, err);
}

/* One row, one int64 column, one text parameter: the value or 0. */
static vulnid_status
lookup_id(store *st, const char *sql, const char *what, const char *key, gint64 *id, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);
	int rc;

	*id = 0;
	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, key);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, what, err);
	return VULNID_OK;
}

vulnid_status
store_vendor_find(store *st, const char *name, gint64 *id, GError **err)
{
	return lookup_id(st, SQL_VENDOR_FIND, "vendors", name, id, err);
}

vulnid_status
store_vendor_find_by_domain(store *st, const char *domain, gint64 *id, GError **err)
{
	return lookup_id(st, SQL_VENDOR_FIND_BY_DOMAIN, "vendor_domains", domain, id, err);
}

vulnid_status
store_vendor_name(store *st, gint64 id, char **name, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_NAME, &s, err);
	int rc;

	*name = NULL;
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*name = store_col_text(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "vendors", err);
	return VULNID_OK;
}

vulnid_status
store_vendor_ids(store *st, GArray **ids, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_IDS, &s, err);
	int rc;

	*ids = NULL;
	if (stmt == NULL)
		return s;
	*ids = g_array_new(FALSE, FALSE, sizeof(gint64));
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		gint64 id = sqlite3_column_int64(stmt, 0);

		g_array_append_val(*ids, id);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		g_clear_pointer(ids, g_array_unref);
		return store_fail(st, rc, "vendors", err);
	}
	return VULNID_OK;
}

gboolean
store_vendor_in_transaction(store *st)
{
	return sqlite3_get_autocommit(store_db(st)) == 0;
}

vulnid_status
store_vendor_insert(store *st, const char *name, const char *notes, const char *now, gint64 *id,
		    GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, name);
	store_bind_text(stmt, 2, notes);
	store_bind_text(stmt, 3, now);
	store_bind_text(stmt, 4, now);
	s = store_step_reset(st, stmt, "vendors", err);
	if (s == VULNID_OK && id != NULL)
		*id = sqlite3_last_insert_rowid(store_db(st));
	return s;
}

vulnid_status
store_vendor_touch(store *st, gint64 id, const char *now, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_TOUCH, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, now);
	sqlite3_bind_int64(stmt, 2, id);
	return store_step_reset(st, stmt, "vendors", err);
}

/* A change with two parameters: the vendor id and one text value. */
static vulnid_status
change_pair(store *st, const char *sql, const char *what, gint64 id, const char *value, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, sql, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, value);
	return store_step_reset(st, stmt, what, err);
}

vulnid_status
store_vendor_alias_insert(store *st, gint64 id, const char *alias, GError **err)
{
	return change_pair(st, SQL_VENDOR_ALIAS_INSERT, "vendor_aliases", id, alias, err);
}

vulnid_status
store_vendor_domain_insert(store *st, gint64 id, const char *domain, GError **err)
{
	return change_pair(st, SQL_VENDOR_DOMAIN_INSERT, "vendor_domains", id, domain, err);
}

vulnid_status
store_vendor_contact_delete(store *st, gint64 id, const char *address, GError **err)
{
	return change_pair(st, SQL_VENDOR_CONTACT_DELETE, "vendor_contacts", id, address, err);
}

vulnid_status
store_vendor_contact_find(store *st, gint64 id, const char *address, char **stored, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_CONTACT_FIND, &s, err);
	int rc;

	*stored = NULL;
	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, address);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*stored = store_col_text(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "vendor_contacts", err);
	return VULNID_OK;
}

vulnid_status
store_vendor_contact_insert(store *st, gint64 id, const char *address, const char *source,
			    const char *added, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_CONTACT_INSERT, &s, err);

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, id);
	store_bind_text(stmt, 2, address);
	store_bind_text(stmt, 3, source);
	store_bind_text(stmt, 4, added);
	return store_step_reset(st, stmt, "vendor_contacts", err);
}

vulnid_status
store_vendor_set_securitytxt(store *st, gint64 id, const char *encryption, const char *languages,
			     const char *expires, const char *now, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_SET_SECURITYTXT, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, encryption);
	store_bind_text(stmt, 2, languages);
	store_bind_text(stmt, 3, expires);
	store_bind_text(stmt, 4, now);
	sqlite3_bind_int64(stmt, 5, id);
	return store_step_reset(st, stmt, "vendors", err);
}

vulnid_status
store_vendor_set_key(store *st, gint64 id, const char *fpr, const char *now, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare_cached(st, SQL_VENDOR_SET_KEY, &s, err);

	if (stmt == NULL)
		return s;
	store_bind_text(stmt, 1, fpr);
	store_bind_text(stmt, 2, now);
	sqlite3_bind_int64(stmt, 3, id);
	return store_step_reset(st, stmt, "vendors", err);
}
