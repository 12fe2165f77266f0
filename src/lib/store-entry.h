/* store-entry.h - the rows behind the entry model: entries, records,
 * attachments (read side; the entry model in entry.c builds its structs
 * from them) */
#ifndef VULNID_STORE_ENTRY_H
#define VULNID_STORE_ENTRY_H

#include <glib.h>

#include "status.h"
#include "store.h"

typedef struct {
	char *id;
	int year;
	gint64 number;
	char *digest;
	char *created;
	char *embargo;
} store_entry_row;

void store_entry_row_clear(store_entry_row *row);

/* The row of entry id; *found FALSE (and row zeroed) when there is none. */
vulnid_status store_entry_get(store *st, const char *id, store_entry_row *row, gboolean *found,
			      GError **err);

/* One record of an entry, its strings borrowed for the call only. */
typedef struct {
	gint64 rowid;
	gint64 seq;
	const char *created, *kind, *author, *author_name, *role, *auth;
	const char *subject, *fields, *body, *sha256, *sealed;
	gint64 opens;		/* 0: none */
	const char *signer;	/* record_signers.fingerprint, or NULL */
} store_entry_record_row;

typedef void (*store_entry_record_fn)(const store_entry_record_row *row, gpointer data);
/* The records of entry, in seq order. */
vulnid_status store_entry_records(store *st, const char *entry, store_entry_record_fn fn,
				  gpointer data, GError **err);

typedef struct {
	gint64 record;	/* rowid of its record */
	const char *sha256, *filename, *content_type;
	gint64 size;
	const char *salt;	/* withheld_attachments: its salt; NULL: public */
} store_entry_attachment_row;

typedef void (*store_entry_attachment_fn)(const store_entry_attachment_row *row, gpointer data);
/* The attachments of entry's records, in record rowid then index order,
 * the withheld ones (withheld_attachments) among them at their places. */
vulnid_status store_entry_attachments(store *st, const char *entry, store_entry_attachment_fn fn,
				      gpointer data, GError **err);

/* Ids of every entry of year (0: all years), in year and number order. */
vulnid_status store_entry_ids(store *st, int year, GPtrArray **ids, GError **err);
/* Ids of the entries (at most max) a command record gave the alias. */
vulnid_status store_entry_ids_by_alias(store *st, const char *alias, guint max, GPtrArray **ids,
				       GError **err);

#endif
