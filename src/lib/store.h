/* store.h - the SQLite database of an instance: schema, transactions, rows */
#ifndef VULNID_STORE_H
#define VULNID_STORE_H

#include <glib.h>

#include "status.h"

/* Schema version this program writes (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 11

typedef struct store store;

typedef enum {
	STORE_OPEN_EXISTING,	/* the database must exist; migrate it forward */
	STORE_OPEN_CREATE,	/* create a new database (vulnid init) */
	STORE_OPEN_READONLY,	/* read-only commands (an older schema is refused, saying how
				 * to migrate it) */
	STORE_OPEN_COPY,	/* read-only, any schema: vulnid backup, also of a database
				 * an older version made, before the upgrade migrates it */
} store_open_mode;

vulnid_status store_open(const char *path, gint64 busy_timeout_ms,
			 store_open_mode mode, store **out, GError **err);
void store_close(store *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(store, store_close)

/* An upgrade is never silent.  The hook, when set (once per process, by
 * the program: it writes the audit event), runs inside the transaction
 * that migrates an existing database from schema `from` to `to`; a
 * failure rolls the migration back.  store_migrated_from() is the schema
 * this open found and migrated, or -1; store_migration_text() says what
 * the migrations from `from` to `to` did, for the operator. */
typedef vulnid_status (*store_migrate_hook)(store *st, int from, int to, GError **err);
void store_set_migrate_hook(store_migrate_hook hook);
int store_migrated_from(const store *st);
char *store_migration_text(int from, int to);

/* BEGIN IMMEDIATE: every transaction that writes takes the write lock at
 * its start, so that it waits for busy_timeout instead of failing on
 * upgrade. */
vulnid_status store_begin(store *st, GError **err);
vulnid_status store_commit(store *st, GError **err);
void store_rollback(store *st);
/* BEGIN (deferred): a read transaction, so that several reads see one
 * snapshot; ended by store_rollback(). */
vulnid_status store_begin_read(store *st, GError **err);


/* A process that handles many mails on one connection (vulnid-lmtpd) keeps
 * the statements the database layer compiles (store-db.h): compiling them
 * (with the append-only triggers they fire) was the largest part of
 * applying a mail.  Off by default. */
void store_keep_statements(store *st, gboolean keep);


/* Current time as RFC 3339 UTC with seconds (VULNID_TEST_NOW, an RFC 3339
 * time, overrides the clock for the test suite). */
char *store_now(void);
GDateTime *store_now_datetime(void);

/* Content-addressed blobs. */
vulnid_status store_blob_put_fd(store *st, int fd, gint64 size,
				const char *sha256, GError **err);
vulnid_status store_blob_put_mem(store *st, const void *data, gsize len,
				 char sha256_out[65], GError **err);
/* Store under the SHA-256 of the clear bytes, but encrypted to the robot
 * (embargoed mail that arrived in clear). */
vulnid_status store_blob_put_sealed(store *st, int fd, gint64 size, const char *sha256,
				    const char *robot_fpr, GError **err);
vulnid_status store_blob_put_sealed_bytes(store *st, GBytes *clear, const char *sha256,
					  const char *robot_fpr, GError **err);
vulnid_status store_blob_get(store *st, const char *sha256, GBytes **out, GError **err);

typedef struct {
	const char *received;
	const char *raw_sha256;
	const char *dedup_key;
	const char *message_id;
	const char *envelope_from;
	const char *envelope_to;
	const char *from_addr;
	const char *subject;
	const char *disposition;	/* request, help, rejected, quarantined */
	const char *client_address;	/* the SMTP client, as the MTA said, or NULL */
	const char *client_net;	/* its /24 (IPv4) or /64 (IPv6), or NULL */
	const char *sender_domain;	/* of the envelope sender, lower case, or NULL */
	const char *from_verified;	/* "dmarc" or "dkim": From authenticated, or NULL */
} store_message;

/* Id of the message recorded under dedup_key, or 0. */
vulnid_status store_message_find(store *st, const char *dedup_key, gint64 *id, GError **err);
vulnid_status store_message_insert(store *st, const store_message *m, gint64 *id, GError **err);

/* SAVEPOINT name / RELEASE name / ROLLBACK TO name (and release it), in
 * the caller's transaction; name is a fixed identifier. */
vulnid_status store_savepoint(store *st, const char *name, GError **err);
vulnid_status store_release(store *st, const char *name, GError **err);
vulnid_status store_rollback_to(store *st, const char *name, GError **err);

/* Next number for year inside blocks; VULNID_ERR_EXHAUSTED when none left.
 * Must run inside the transaction that inserts the entry. */
vulnid_status store_next_number(store *st, int year, const GArray *blocks,
				gint64 *number, GError **err);
vulnid_status store_entry_insert(store *st, const char *id, int year, gint64 number,
				 const char *digest, const char *created, const char *embargo,
				 gint64 message, GError **err);

typedef struct {
	const char *entry;
	gint64 seq;
	const char *created;
	const char *kind;	/* request, ... */
	gint64 message;		/* 0: none */
	const char *author;
	const char *author_name;
	const char *role;	/* creator, ... */
	const char *auth;	/* JSON: {"method":"none"} */
	const char *subject;	/* Subject of the mail, one line */
	const char *fields;	/* JSON: [["Key","value"],...] */
	const char *body;
	const char *sha256;	/* of the record's canonical bytes */
	const char *sealed;	/* armored ciphertext of them, for embargoed content */
	gint64 opens;		/* a release: seq of the sealed record disclosed */
} store_record;

vulnid_status store_record_insert(store *st, const store_record *r, gint64 *id, GError **err);
/* The withheld key behind a record and the salt of its commitment. */
vulnid_status store_record_signer_insert(store *st, gint64 record, const char *fingerprint,
					 const char *salt, GError **err);
vulnid_status store_attachment_insert(store *st, gint64 record, int idx,
				      const char *filename, const char *content_type,
				      gint64 size, const char *sha256, GError **err);
/* An attachment the record withholds: kept aside with its salt. */
vulnid_status store_withheld_attachment_insert(store *st, gint64 record, int idx, const char *filename,
					       const char *content_type, gint64 size, const char *sha256,
					       const char *salt, GError **err);
vulnid_status store_quarantine_insert(store *st, gint64 message, const char *created,
				      const char *reason, const char *detail,
				      gint64 *id, GError **err);

#endif
