/* entry.h - the entry model: an entry loaded once, its records typed, their
 * fields parsed once, and what the records say derived in one place
 *
 * Everything the robot shows about an entry starts here.  entry_load()
 * reads the rows; entry_facts_derive() decides, once, the entry's state and
 * marks, who holds which role and how that was established, and which
 * values make the public headline.  What an audience may see of all that is
 * decided by disclosure.h, and every surface renders from that answer. */
#ifndef VULNID_ENTRY_H
#define VULNID_ENTRY_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "status.h"
#include "store.h"

/* ---- records ----------------------------------------------------------- */

typedef enum {
	ENTRY_KIND_REQUEST,		/* record 1: the request that made the entry */
	ENTRY_KIND_ADDITION,		/* text and fields added by mail */
	ENTRY_KIND_VENDOR_RESPONSE,	/* an addition in the vendor's role */
	ENTRY_KIND_COMMAND,		/* what an entry command decided */
	ENTRY_KIND_RELEASE,		/* discloses a sealed record at the embargo's end */
	ENTRY_KIND_DELIVERY,		/* the robot sent sealed records to a key given access */
	ENTRY_KIND_OTHER,		/* written by a later version: shown, never acted on */
} entry_kind;

typedef enum {
	ENTRY_ROLE_CREATOR,
	ENTRY_ROLE_VENDOR,
	ENTRY_ROLE_MODERATOR,
	ENTRY_ROLE_OPERATOR,
	ENTRY_ROLE_ROBOT,
	ENTRY_ROLE_THIRD_PARTY,
	ENTRY_ROLE_CONTRIBUTOR,	/* a third party whose key the creator or a moderator endorsed */
} entry_role;

/* How a record's role was established, strongest first.  Only KEY, TOKEN
 * and ROBOT carry authority; the others are kept and shown as unverified. */
typedef enum {
	ENTRY_HOW_KEY,		/* an OpenPGP signature by the role's key (moderators too) */
	ENTRY_HOW_TOKEN,	/* the capability token the robot sent to the role */
	ENTRY_HOW_ROBOT,	/* written by the robot itself (a release) */
	ENTRY_HOW_REQUEST,	/* the request that made the entry: its sender is the creator */
	ENTRY_HOW_DMARC,	/* From the role's address, DMARC passed at the operator's MTA */
	ENTRY_HOW_CONTACT,	/* from the address the vendor was notified at */
	ENTRY_HOW_DOMAIN,	/* from the vendor's domain */
	ENTRY_HOW_ADDRESS,	/* from the creator's address */
	ENTRY_HOW_NONE,		/* nothing: a third party */
} entry_how;

typedef struct {
	char *key;
	char *value;
} entry_kv;

/* The fingerprint member of an auth object whose key is withheld. */
#define ENTRY_KEY_WITHHELD "withheld"

typedef struct {
	char *sha256;
	char *filename;		/* may be NULL */
	char *content_type;
	gint64 size;
	/* Withheld (an anonymous researcher's key): the record's canonical
	 * bytes, and so the feed, hold only a commitment to it, salted with
	 * this secret that the robot keeps with it (withheld_attachments;
	 * vulnid-json(7)).  NULL for every other attachment. */
	char *salt;
	gboolean key;		/* an OpenPGP key, by its type or its first bytes (known
				 * when the mail is read, not stored) */
} entry_attachment;

/* The file name and size of a withheld attachment in canonical bytes. */
#define ENTRY_ATTACHMENT_WITHHELD "withheld"

typedef struct {
	gint64 rowid;		/* place in the database, and in the feed */
	gint64 seq;
	char *created;
	entry_kind kind;
	char *kind_name;	/* as stored (and hashed) */
	entry_role role;
	char *role_name;
	entry_how how;
	/* Who sent the mail behind it: private; disclosure.h decides. */
	char *author;
	char *author_name;
	/* The auth object as stored and hashed (canonical JSON), and what
	 * it says, parsed once. */
	char *auth;
	gboolean signed_by_key;	/* a valid OpenPGP signature is behind it */
	char *signer;		/* its key (private when withheld), or NULL */
	gboolean signer_withheld; /* the auth object does not name the key */
	char *auth_reason;	/* why a signature was not accepted, or NULL */
	char *auth_note;	/* e.g. "From is not one of the signing key's user IDs" */
	char *auth_ignored;	/* why the signature grants no role here, or NULL */
	/* A contributor's record: the key that endorsed the signer's, how
	 * ("command" or "certification"), and the headline fields it may set
	 * (canonical names separated by spaces; NULL: all). */
	char *endorsed_by;
	char *endorsement;
	char *endorsed_fields;
	gboolean came_encrypted;
	char *subject;
	char *fields_json;	/* canonical, as hashed */
	GPtrArray *fields;	/* entry_kv*, parsed once */
	char *body;
	char *sha256;		/* of the canonical bytes: the commitment when sealed */
	char *sealed;		/* armored ciphertext of the content while embargoed */
	gint64 opens;		/* a release: seq of the sealed record it discloses */
	/* A sealed record whose release record exists: its content is the
	 * disclosed content, and disclosed_at the release's rowid. */
	gboolean disclosed;
	gint64 disclosed_at;
	gboolean unsealed;	/* content decrypted in memory (entry_unseal) */
	GPtrArray *attachments;	/* entry_attachment* */
} entry_record;

typedef struct {
	char *id;
	int year;
	gint64 number;
	char *digest;
	char *created;
	char *embargo;		/* as requested (YYYY-MM-DD or yes), or NULL */
	GPtrArray *records;	/* entry_record*, in seq order */
} entry;

/* The canonical bytes of a record, whose SHA-256 is the record's hash and,
 * for the first record, the entry's digest (doc/vulnid-json.7). */
char *entry_record_canonical(const char *entry, gint64 seq, const char *created,
			     const char *kind, const char *auth_json, const char *subject,
			     const char *fields_json, const char *body,
			     const GPtrArray *attachments /* entry_attachment* */);
/* A record's attachment list as canonical JSON, appended to s.  A withheld
 * attachment (salt set) is {"sha256": its commitment, "size": 0,
 * "content_type": its type, "filename": "withheld"}. */
void entry_attachments_canonical(GString *s, const GPtrArray *attachments);
/* The commitment to a withheld attachment: the SHA-256 of
 * "vulnid-attachment-commitment:SALT:" and its canonical object as it
 * would be if it were not withheld (hex). */
char *entry_attachment_commitment(const entry_attachment *a);
/* Store attachment a as attachment idx of record row: a withheld one only
 * in the robot's private table. */
vulnid_status entry_attachment_store(store *st, gint64 row, int idx, const entry_attachment *a, GError **err);
/* Fields as canonical JSON ([[k,v],...]) from entry_kv*. */
char *entry_fields_canonical(const GPtrArray *fields);

vulnid_status entry_load(store *st, const char *id, entry **out, GError **err);
/* An entry with no records yet (for one made in memory). */
entry *entry_new_empty(const char *id, const char *created);
void entry_free(entry *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(entry, entry_free)
void entry_attachment_free(gpointer p);
entry_attachment *entry_attachment_copy(const entry_attachment *a);
void entry_kv_free(gpointer p);

/* Decrypt the sealed records that are not disclosed yet, in memory (the
 * robot's own use: the creator's and the vendor's mail, release, the
 * operator's view).  Each must hash to its commitment. */
vulnid_status entry_unseal(entry *e, GError **err);
/* Fill record r's content from canonical record text (as sealed). */
vulnid_status entry_record_from_canonical(entry_record *r, const char *canonical, GError **err);

/* Add a record written in the current transaction to a loaded entry, its
 * content in clear even when rec stores it sealed (rec->sealed); signer is
 * the key behind it when the auth object withholds it. */
void entry_add_record(entry *e, const store_record *rec, gint64 rowid, const char *subject,
		      const char *fields_json, const char *body, const GPtrArray *attachments,
		      const char *signer);

/* IDs of entries, oldest first; year 0 means all years. */
vulnid_status entry_list_ids(store *st, int year, GPtrArray **ids, GError **err);

/* Entries whose records name alias (an Alias command), at most max. */
vulnid_status entry_ids_by_alias(store *st, const char *alias, guint max, GPtrArray **ids, GError **err);

/* Whether a record's content is sealed and not disclosed as of rowid pos
 * (G_MAXINT64: now). */
gboolean entry_record_sealed_at(const entry_record *r, gint64 pos);
/* The auth object as stored (and hashed); with withhold_key, a key it
 * names is replaced by "withheld" (a record from before keys of anonymous
 * researchers were kept aside: its hash then no longer recomputes). */
JsonNode *entry_record_auth_node(const entry_record *r, gboolean withhold_key);
/* The record with this seq, or NULL. */
const entry_record *entry_record_by_seq(const entry *e, gint64 seq);
/* The first value of key (ASCII case-insensitive) in a record's fields. */
const char *entry_record_get(const entry_record *r, const char *key);

const char *entry_kind_str(entry_kind k);
const char *entry_role_str(entry_role r);
const char *entry_how_str(entry_how h);
entry_role entry_role_from_str(const char *s);
entry_how entry_how_from_str(const char *s);
/* Whether a role established this way carries authority. */
gboolean entry_how_verified(entry_how h);
/* "verified by OpenPGP signature", "unverified: sent from the vendor's
 * domain", ... for people. */
const char *entry_how_phrase(entry_how h);

/* ---- what the records say ----------------------------------------------- */

typedef enum {
	ENTRY_RESERVED,		/* nothing said yet */
	ENTRY_PUBLIC,
	ENTRY_EMBARGOED,	/* sealed content, or an embargo in force */
} entry_state;

/* Marks, set by the records that may set them. */
typedef enum {
	ENTRY_MARK_RELEASED = 1 << 0,	/* an embargo ended (release or "Embargo: no") */
	ENTRY_MARK_WITHDRAWN = 1 << 1,	/* the verified creator withdrew it */
	ENTRY_MARK_DUPLICATE = 1 << 2,	/* a moderator: duplicate of another entry */
	ENTRY_MARK_SPAM = 1 << 3,	/* a moderator: withheld from every public surface */
	ENTRY_MARK_CONFIRMED = 1 << 4,	/* confirm_unsigned: the creator answered */
	ENTRY_MARK_REVIEWED = 1 << 5,	/* a moderator reviewed the claim */
} entry_mark;

const char *entry_state_str(entry_state s);

/* A value with the record that said it (who, in which role, how). */
typedef struct entry_claim entry_claim;
struct entry_claim {
	char *key;
	char *value;
	const entry_record *record;	/* borrowed from the entry */
	/* The creator's approve command that took this unverified value into
	 * the headline, or NULL. */
	const entry_record *approved;
	char *sha256;		/* a reference: the checksum given for it (lower-case hex), or NULL */
	GPtrArray *mirrors;	/* a reference: entry_claim* of its mirrors (value: the URL) */
	char *fields;		/* an endorsement: the fields allowed, or NULL (all) */
};

/* A key that asked for access to the sealed records of an embargoed
 * entry (access), was given it by the creator (grant), and what the robot
 * sent it (delivery records). */
typedef struct {
	char *fpr;
	const entry_record *requested;	/* the first request */
	const entry_record *granted;	/* the grant, or NULL */
	const entry_record *delivered;	/* the latest delivery, or NULL */
	guint deliveries;
} entry_access;

typedef struct {
	char *type;		/* CVSS_V2, CVSS_V3 or CVSS_V4 (OSV's names) */
	char *score;		/* the vector */
} entry_cvss;

/* What the records visible at one point say.  The headline (title, vendor,
 * product, type, vendor contact, versions, references, ratings, fix,
 * package) moves only with the request and with verified roles; what
 * unverified senders said is kept as proposals beside it. */
typedef struct {
	entry_state state;
	guint marks;		/* entry_mark */
	gboolean anonymous;	/* the request asked for it */
	gboolean content_known;	/* record 1's content is visible (not a stub) */
	char *embargo;		/* in force or last set: YYYY-MM-DD, "yes", "no", or NULL */

	entry_claim *title, *vendor, *product, *type, *vendor_contact;
	GPtrArray *versions;	/* entry_claim*, distinct values */
	GPtrArray *references;
	GPtrArray *related;
	GPtrArray *aliases;
	GPtrArray *links;	/* moderator: linked entries */
	GPtrArray *cvss;	/* entry_cvss* */
	entry_claim *severity, *fixed_in, *ecosystem, *package;
	char *purl;

	entry_claim *withdrawn;		/* value: the reason ("yes" when none) */
	entry_claim *duplicate_of;
	entry_claim *spam;
	entry_claim *confirmed;
	entry_claim *vendor_status;	/* the latest verified vendor position */
	GPtrArray *statuses;		/* entry_claim*: every vendor Status, in order */
	GPtrArray *proposals;		/* entry_claim*: unverified values not adopted */
	GPtrArray *endorsements;	/* entry_claim*: keys endorsed for this entry (value: the
					 * fingerprint), by endorse commands in force */
	GPtrArray *access;		/* entry_access*, in the order of their requests */
	entry_claim *reviewed;		/* a moderator's review (value "yes"), or NULL */
	char *reviewed_product, *reviewed_version;	/* what it names, or NULL */

	guint rating_keys;		/* signed ratings, the latest per key */
	double rating_keys_avg;
	guint rating_unsigned;		/* unsigned ratings, the latest per address */
	double rating_unsigned_avg;

	char *published;	/* when the content became public */
	char *modified;		/* the newest visible record */
} entry_facts;

/* What the records with rowid <= as_of say, seen with sealed content when
 * with_sealed (the entry unsealed) or as commitments only otherwise. */
entry_facts *entry_facts_derive(const entry *e, gint64 as_of, gboolean with_sealed, GDateTime *now);
void entry_facts_free(entry_facts *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(entry_facts, entry_facts_free)

/* The entry's facts now, as the robot knows them (sealed content counts
 * only when the entry was unsealed). */
entry_facts *entry_facts_now(const entry *e);

/* Whether the entry is under embargo now (sealed, or a date in force). */
gboolean entry_embargoed(const entry *e);
/* Whether any record is sealed and not disclosed. */
gboolean entry_has_sealed(const entry *e);

/* The access of key fpr in facts f, or NULL. */
const entry_access *entry_facts_access(const entry_facts *f, const char *fpr);

/* A headline field an endorsement may allow (Version, Reference, ...), in
 * any case: its canonical spelling (Fixed is Fixed-In, CVSS-Vector is
 * CVSS), or NULL. */
const char *entry_headline_field(const char *name);

/* Two fingerprints are the same key (case and blanks aside). */
gboolean entry_fpr_equal(const char *a, const char *b);

/* A Reference or Mirror value: "URL", "URL sha256=HEX" or (a mirror)
 * "URL of URL".  *url the first URL, *sha256 the checksum in lower case
 * (or NULL), *of the URL after "of" (or NULL).  FALSE when the value has
 * more words that are neither. */
gboolean entry_reference_parse(const char *value, char **url, char **sha256, char **of);

#endif
