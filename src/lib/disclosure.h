/* disclosure.h - the one disclosure policy: what an audience may see of an
 * entry as of one of its records
 *
 * Every surface that shows an entry (vulnid show and list, every mail the
 * robot writes about an entry, the feed, OSV, the mbox, the web archive)
 * renders from an entry_view and from nothing else: the records' JSON, the
 * archived mail and the private columns are read by entry.c and judged
 * here, once.  The rules (doc/vulnid-json.7, AUDIENCES):
 *
 *   - Sealed content (an embargo) is shown to the creator, the vendor, a
 *     key the creator gave access (a reader) and the operator, and only
 *     when the entry was unsealed for them; to everyone else an embargoed
 *     entry is a stub with its commitments, and with the keys given
 *     access and when.
 *   - An anonymous researcher's address, name and key are shown to the
 *     creator and the operator only: in her records (those of the creator,
 *     and those her key signed), the key that signed them, the keys she
 *     attached (everyone else sees "a key (withheld)").
 *   - An entry a moderator marked as spam is withheld from the public.
 *   - Tokens are never part of a record (intake removes them), so no view
 *     carries one. */
#ifndef VULNID_DISCLOSURE_H
#define VULNID_DISCLOSURE_H

#include <glib.h>

#include "entry.h"

typedef enum {
	AUDIENCE_PUBLIC,	/* anyone: lookups, subscribers, lists, feed, OSV, mbox, web */
	AUDIENCE_MODERATOR,	/* the public's view, and what is withheld as spam */
	AUDIENCE_VENDOR,	/* the vendor's contacts: the report, never an anonymous identity */
	AUDIENCE_READER,	/* a key given access to the sealed records: as the vendor */
	AUDIENCE_CREATOR,	/* the researcher who made the entry */
	AUDIENCE_OPERATOR,	/* vulnid show --private: everything */
} audience;

const char *audience_str(audience a);

/* One attachment of a record as the audience may see it. */
typedef struct {
	const entry_attachment *a;	/* borrowed; read only what this view allows */
	/* The anonymous researcher's key, for an audience that may not know
	 * her: only that it is a key, and the commitment the record's hash
	 * covers, may be shown (entry_view_attachment_label()). */
	gboolean withheld;
	gboolean private_only;	/* shown to this audience, withheld from the public */
	char *commitment;	/* withheld: what the canonical bytes say instead */
} view_attachment;

/* One record as the audience may see it. */
typedef struct {
	const entry_record *r;	/* borrowed; read only the members this view allows */
	gboolean content;	/* subject, fields, body and attachments may be shown */
	gboolean sealed;	/* sealed for this audience: only seq, time, kind and commitment */
	const char *author;	/* NULL: withheld or unknown */
	const char *author_name;
	gboolean author_withheld;	/* an anonymous researcher */
	const char *signer;	/* the signing key, when it may be shown */
	gboolean signer_withheld;	/* signed, by a key that is not shown */
	GPtrArray *attachments;	/* view_attachment*; empty unless content */
} view_record;

typedef struct {
	const entry *e;		/* borrowed */
	audience aud;
	gint64 as_of;		/* records with rowid <= as_of */
	gboolean stub;		/* under embargo: id, created, embargo and commitments only */
	gboolean withheld;	/* spam: the public sees that it exists, nothing more */
	entry_facts *facts;	/* as this audience may know them */
	GPtrArray *records;	/* view_record*, the records up to as_of */
	GPtrArray *commitments;	/* const entry_record*: sealed records not disclosed */
} entry_view;

/* The view of e for a, of the records with rowid <= as_of (G_MAXINT64:
 * all).  Sealed content appears only for the creator, the vendor and the
 * operator, and only if e was unsealed (entry_unseal()). now decides
 * embargoes by date; NULL counts sealing only (the feed, which must not
 * depend on when it is exported). */
entry_view *entry_view_new(const entry *e, audience a, gint64 as_of, GDateTime *now);
void entry_view_free(entry_view *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(entry_view, entry_view_free)

/* The title the audience sees: the headline's title, else the request's
 * Subject; "" when none (or a stub). */
const char *entry_view_title(const entry_view *v);
/* When the embargo ends: "2026-06-01", or "the researcher releases it"
 * for "yes" (to follow "until"). */
const char *entry_view_embargo_text(const entry_view *v);
/* How a record's author acted, in a few words, as the view may say it:
 * "creator, verified by token", "vendor, unverified: sent from the
 * vendor's domain", "creator, signed by the researcher's key (withheld)". */
char *entry_view_record_how(const view_record *vr);
/* What a withheld attachment is shown as: "a key (withheld)" or "an
 * attachment (withheld)". */
const char *entry_view_attachment_label(const view_attachment *va);
/* An endorsed contributor's record: "endorsed by the creator
 * (certification) for Version Reference", "endorsed by the moderator
 * FPR"; NULL for other records. */
char *entry_view_record_endorsement(const view_record *vr);

/* ---- the researcher's identity, for intake --------------------------- */

/* The addresses and name an anonymous researcher must never be seen under
 * (and that intake replaces in what the records say). */
typedef struct {
	GPtrArray *needles;	/* char*, longest first */
} researcher_identity;

researcher_identity *researcher_identity_new(void);
void researcher_identity_free(researcher_identity *id);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(researcher_identity, researcher_identity_free)
/* Add an address (and its local part when distinctive) or a display name. */
void researcher_identity_add_address(researcher_identity *id, const char *address);
void researcher_identity_add_name(researcher_identity *id, const char *name);
/* Add her key: its fingerprint (also as gpg prints it, in groups of four)
 * and its long key ID. */
void researcher_identity_add_key(researcher_identity *id, const char *fingerprint);
/* text with every mention of the identity replaced by "[the researcher]"
 * (ASCII case-insensitive), and every armored public key block by "[a key
 * (withheld)]"; linear in the text for each needle. */
char *researcher_identity_redact(const researcher_identity *id, const char *text);

#endif
