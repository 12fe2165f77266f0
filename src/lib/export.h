/* export.h - what the public may see of the archive, and the formats made
 * of it: OSV records, an mbox of the public mail, an online backup.
 *
 * Everything published about an entry is derived here, from its records,
 * in one place (export_facts_derive), so that the feed, OSV, mbox and the
 * web archive never disagree about what is public, withdrawn or spam. */
#ifndef VULNID_EXPORT_H
#define VULNID_EXPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "entry.h"
#include "status.h"
#include "store.h"

typedef struct {
	char *type;		/* CVSS_V2, CVSS_V3 or CVSS_V4 (OSV's names) */
	char *score;		/* the vector */
} export_rating;

/* What the records of an entry say, as published.  Absent data stays
 * absent (NULL or empty). */
typedef struct {
	const char *state;	/* "reserved", "public", "embargoed" or "spam" */
	gboolean spam;		/* a moderator's or operator's "Spam: yes" */
	gboolean anonymous;	/* the creator asked for it: no address shown */
	char *title;
	char *vendor, *product, *type;
	GPtrArray *versions;	/* char*: Version fields, distinct */
	GPtrArray *references;	/* char*: Reference fields, distinct */
	GPtrArray *aliases;	/* char*: Alias fields (CVE-..., GHSA-...) */
	GPtrArray *related;	/* char*: Related fields */
	char *duplicate_of;	/* Duplicate-Of, or NULL */
	char *withdrawn;	/* when a Withdrawn field (other than "no") came, or NULL */
	char *withdrawn_reason;
	char *vendor_status;	/* confirmed, disputed or fixed: the vendor's latest word */
	char *vendor_status_time;
	gint64 vendor_status_seq;
	char *vendor_statement;	/* the body of that response */
	GPtrArray *ratings;	/* export_rating*: CVSS vectors given */
	char *severity;		/* a word (low, medium, high, critical) when given */
	char *fixed_in;		/* Fixed field: first fixed version */
	char *ecosystem;	/* OSV ecosystem, when the fields map to one */
	char *package;		/* package name in that ecosystem */
	char *purl;
	char *published;	/* when the content became public (release time if embargoed) */
	char *modified;		/* the newest record */
} export_facts;

export_facts *export_facts_derive(const entry *e);
void export_facts_free(export_facts *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(export_facts, export_facts_free)

/* The fields of a record ([[k,v],...]) parsed, or NULL if unusable. */
JsonArray *export_record_fields(const entry_record *r);

/* Whether a record's author is shown: not for an anonymous creator. */
gboolean export_author_public(const export_facts *f, const entry_record *r);

/* Every entry with what is derived from it, read in one transaction. */
typedef struct {
	GPtrArray *entries;	/* entry*, ordered by year and number */
	GPtrArray *facts;	/* export_facts*, same order */
	GHashTable *index;	/* id -> GUINT_TO_POINTER(position + 1) */
	GHashTable *duplicates;	/* id -> GPtrArray of ids marked Duplicate-Of it */
	GPtrArray *anonymous;	/* char*: addresses of anonymous creators, lower case */
} export_set;

vulnid_status export_set_load(store *st, export_set **out, GError **err);
void export_set_free(export_set *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(export_set, export_set_free)

/* Shown in exports at all: not spam (embargoed ones as a stub). */
gboolean export_entry_listed(const export_facts *f);

typedef struct {
	const char *id_prefix;	/* OSV id prefix: "x_" unless registered with OSV */
	const char *base_url;	/* where the web archive lives, for references, or NULL */
} export_osv_opts;

/* The OSV id of an entry. */
char *export_osv_id(const export_osv_opts *o, const char *id);
/* One OSV record for a public entry (not for stubs or spam). */
JsonNode *export_osv_record(const export_set *set, guint i, const export_osv_opts *o);
/* Whether an entry gets an OSV record: public (not reserved, embargoed or spam). */
gboolean export_osv_wanted(const export_facts *f);
/* Write DIR/<osv id>.json for every such entry; files of entries that are
 * no longer published (spam) are removed.  *count: records written. */
vulnid_status export_osv(store *st, const char *dir, const export_osv_opts *o,
			 guint *count, GError **err);

/* Remove files DIR/<prefix><ID><suffix> not in keep (file names): what an
 * earlier export wrote for entries no longer published.  Nothing else. */
void export_remove_stale(const char *dir, const char *prefix, const char *suffix, GHashTable *keep);

/* Serialise JSON as the exports write it: indented, final newline. */
char *export_json_text(JsonNode *node);

/* Write a file atomically (temporary file, fsync, rename) with mode. */
vulnid_status export_write_file(const char *path, const void *data, gsize len, int mode,
				GError **err);

/* The raw mails of the archive that are public: messages behind records of
 * listed, non-embargoed entries, and delivered announcements. */
typedef struct {
	gint64 message;		/* messages.id, or 0 for an announcement */
	gint64 outbox;		/* outbox.id of an announcement, else 0 */
	char *time;		/* received or sent */
	char *sender;		/* envelope sender for the mbox From_ line */
	gboolean anonymize;	/* the author of a record behind it asked for anonymity */
	char *entry;		/* first entry it belongs to, or NULL */
	gint64 seq;		/* first record it made in that entry */
	gint64 order;		/* within a second: the message, or the one that caused the announcement */
} export_mail;

void export_mail_free(gpointer p);
/* Public mails, oldest first. */
vulnid_status export_mail_list(store *st, const export_set *set, GPtrArray **out, GError **err);
/* The bytes of a public mail as published (LF line ends; an anonymous
 * author's headers and traces replaced, and every anonymous creator's
 * address replaced wherever it appears, quotes in others' mail too);
 * robot_domain names the replacement Message-ID. */
vulnid_status export_mail_bytes(store *st, const export_set *set, const export_mail *m,
				const char *robot_domain, GBytes **out, GError **err);
/* Every public mail as an mbox (mboxrd quoting).  *count: mails written. */
vulnid_status export_mbox(store *st, const char *path, const char *robot_domain,
			  guint *count, GError **err);

/* A consistent copy of the whole database (SQLite backup API, one read
 * snapshot: filters keep writing meanwhile).  The copy is written next to
 * path and renamed into place; it is a self-contained file (rollback
 * journal mode), mode 0600. */
vulnid_status export_backup(store *st, const char *path, gboolean force, gint64 busy_timeout_ms,
			    GError **err);

#endif
