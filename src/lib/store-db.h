/* store-db.h - the database layer's own tools: SQLite connections,
 * statements and rows.  Only src/lib/store*.c include it (T003 checks
 * that nothing else includes <sqlite3.h> or calls sqlite3_*): the rest of
 * the program reaches the database through the typed accessors of
 * store.h and store-AREA.h. */
#ifndef VULNID_STORE_DB_H
#define VULNID_STORE_DB_H

#include <glib.h>
#include <sqlite3.h>

#include "status.h"
#include "store.h"

sqlite3 *store_db(store *st);

/* Map a SQLite result code to a status and fill err with `what: message`. */
vulnid_status store_fail(store *st, int rc, const char *what, GError **err);
vulnid_status store_exec(store *st, const char *sql, GError **err);
/* The audit chain's head as the transaction in progress last appended it,
 * or NULL (not known, or no transaction): the head is read once per
 * transaction, not once per event.  Forgotten at every begin, commit and
 * rollback, also to a savepoint. */
const char *store_audit_head_cached(store *st);
void store_audit_head_remember(store *st, const char *hash);
/* Prepared statement or NULL (err set, *status set). */
sqlite3_stmt *store_prepare(store *st, const char *sql, vulnid_status *status, GError **err);

/* A statement from store_prepare() is given back with store_stmt_release(),
 * never sqlite3_finalize(): when the connection keeps its statements
 * (store_keep_statements()), it is only reset and waits for the next
 * store_prepare() of the same SQL; otherwise it is finalized. */
int store_stmt_release(sqlite3_stmt *stmt);

/* Bind a string, NULL as SQL NULL. */
void store_bind_text(sqlite3_stmt *stmt, int i, const char *v);
/* Run a statement that returns no rows, then release it. */
vulnid_status store_step_done(store *st, sqlite3_stmt *stmt, const char *what, GError **err);
/* Named statements (the SQL_* constants of each store-AREA.c): prepared
 * once per connection and kept.  The caller never finalizes one; it resets
 * it (sqlite3_reset(), or store_step_reset(): step, expect SQLITE_DONE,
 * reset) as soon as it has read the row, so that no read stays open. */
sqlite3_stmt *store_prepare_cached(store *st, const char *sql, vulnid_status *status, GError **err);
vulnid_status store_step_reset(store *st, sqlite3_stmt *stmt, const char *what, GError **err);
/* A text column as a new string, or NULL. */
char *store_col_text(sqlite3_stmt *stmt, int i);

#endif
