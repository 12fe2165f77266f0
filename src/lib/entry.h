/* entry.h - entries and their records: canonical bytes, derived view */
#ifndef VULNID_ENTRY_H
#define VULNID_ENTRY_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "status.h"
#include "store.h"

typedef struct {
	char *sha256;
	char *filename;		/* may be NULL */
	char *content_type;
	gint64 size;
} entry_attachment;

/* The canonical bytes of a record, whose SHA-256 is the record's hash and,
 * for the first record, the entry's digest (doc/ARCHITECTURE.md). */
char *entry_record_canonical(const char *entry, gint64 seq, const char *created,
			     const char *kind, const char *auth_json, const char *subject,
			     const char *fields_json, const char *body,
			     const GPtrArray *attachments /* entry_attachment* */);
/* A record's attachment list as canonical JSON, appended to s (the
 * "attachments" member of entry_record_canonical(), also in exports). */
void entry_attachments_canonical(GString *s, const GPtrArray *attachments /* entry_attachment* */);

typedef struct {
	gint64 rowid;
	gint64 seq;
	char *created;
	char *kind;
	char *author;
	char *author_name;
	char *role;
	char *auth;		/* JSON */
	char *subject;
	char *fields;		/* JSON [[k,v],...] */
	char *body;
	char *sha256;
	char *sealed;		/* armored ciphertext of the content while embargoed */
	gint64 opens;		/* a release record: seq of the sealed record it discloses */
	gboolean disclosed;	/* sealed, and a later release record disclosed it */
	GPtrArray *attachments;	/* entry_attachment* */
} entry_record;

typedef struct {
	char *id;
	int year;
	gint64 number;
	char *digest;
	char *created;
	char *embargo;		/* as requested (YYYY-MM-DD or yes), or NULL */
	GPtrArray *records;	/* entry_record*, in order */
} entry;

vulnid_status entry_load(store *st, const char *id, entry **out, GError **err);
void entry_free(entry *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(entry, entry_free)
void entry_attachment_free(gpointer p);

/* "reserved" (nothing said yet), "embargoed" or "public". */
const char *entry_state(const entry *e);
/* Title from the records: the latest Title field, else the first subject. */
char *entry_title(const entry *e);
/* Latest value of a single-valued field over all records, or NULL. */
char *entry_field(const entry *e, const char *key);

/* The public view (exports, announcements, lookups by others): an
 * embargoed entry is a stub (id, created, embargo, commitment); the
 * addresses of anonymous researchers are left out; sealed content never. */
JsonNode *entry_to_public_json(const entry *e);
/* The embargo in force: the latest Embargo field of the records, else the
 * one requested; NULL when there is none. */
char *entry_embargo(const entry *e);

/* Decrypt sealed records in memory (the robot's own use: vendor
 * notifications encrypted to a vendor key, release).  The entry stays
 * embargoed; *canonical gets record seq 1's canonical text if sealed. */
vulnid_status entry_unseal(entry *e, GError **err);

/* Fill record r's content from canonical record text (as sealed). */
vulnid_status entry_record_from_canonical(entry_record *r, const char *canonical, GError **err);

/* Whether the creator asked for anonymity. */
gboolean entry_is_anonymous(const entry *e);

/* Human-readable view for a terminal (control characters masked); the
 * public one is the stub for embargoed entries and hides anonymous
 * creators' addresses. */
char *entry_to_text(const entry *e);
char *entry_to_text_view(const entry *e, gboolean public);
/* The documented JSON view (doc/vulnid-json.7). */
JsonNode *entry_to_json(const entry *e);

/* IDs of entries, oldest first; year 0 means all years. */
vulnid_status entry_list_ids(store *st, int year, GPtrArray **ids, GError **err);

#endif
