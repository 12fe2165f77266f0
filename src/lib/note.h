/* note.h - C2SP signed notes with Ed25519 (signed-note), checkpoints
 * (tlog-checkpoint) and timestamped cosignatures (tlog-cosignature)
 *
 * Keys are kept as text: a verifier key ("vkey") is
 *   NAME+HEX(key id)+BASE64(type || 32-byte public key)
 * and a private key file holds one line
 *   PRIVATE+KEY+NAME+HEX(key id)+BASE64(type || 32-byte seed)
 * as Go's golang.org/x/mod/sumdb/note writes them.  Type 0x01 signs notes
 * (a log's checkpoints), type 0x04 cosigns checkpoints (a witness). */
#ifndef VULNID_NOTE_H
#define VULNID_NOTE_H

#include <glib.h>

#include "status.h"
#include "tlog.h"

#define NOTE_ED25519 0x01
#define NOTE_COSIGNATURE 0x04

/* Hard limits for notes from elsewhere. */
#define NOTE_MAX_SIZE (64 * 1024)	/* a whole note, signatures included */
#define NOTE_MAX_SIGS 100		/* signature lines (the spec asks for at least 16) */
#define NOTE_MAX_NAME 256		/* bytes of a key name */
#define NOTE_MAX_KEY_TEXT 1024		/* a vkey or private key line */

typedef struct {
	char *name;
	guint32 id;
	guint8 type;		/* NOTE_ED25519 or NOTE_COSIGNATURE */
	guint8 pub[32];
	gboolean has_private;
	guint8 seed[32];
} note_key;

void note_key_free(note_key *k);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(note_key, note_key_free)

/* A key name as signed-note wants it: non-empty, no spaces, no '+',
 * printable UTF-8, at most NOTE_MAX_NAME bytes. */
gboolean note_name_valid(const char *name);

/* key ID = SHA-256(name || 0x0A || type || public key)[:4], big-endian. */
guint32 note_key_id(const char *name, guint8 type, const guint8 pub[32]);

/* A new key from OpenSSL's random generator. */
vulnid_status note_key_generate(const char *name, guint8 type, note_key **out, GError **err);
char *note_key_vkey(const note_key *k);
char *note_key_private_text(const note_key *k);
/* A vkey, or a private key line (then has_private). */
vulnid_status note_key_parse(const char *text, gsize len, note_key **out, GError **err);
/* Read a private key file (must not be readable by others), or make one
 * (mode 0600, created exclusively) when it is missing and name is not
 * NULL. */
vulnid_status note_key_load_or_create(const char *path, const char *name, guint8 type, note_key **out,
				      gboolean *created, GError **err);

typedef struct {
	char *name;
	guint32 id;
	guint8 *sig;		/* after the key id */
	gsize len;
	char *line;		/* the whole line with its newline */
} note_sig;

typedef struct {
	char *text;		/* up to and with the newline before the blank line */
	GPtrArray *sigs;	/* note_sig* */
} note;

void note_free(note *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(note, note_free)

/* Parse a signed note (signatures are not checked here). */
vulnid_status note_parse(const char *data, gsize len, note **out, GError **err);

/* The signature line "— NAME BASE64\n" of text by a NOTE_ED25519 key. */
char *note_sign(const note_key *k, const char *text);
/* A NOTE_COSIGNATURE key's signature line over a checkpoint's text at
 * time ts (seconds since the epoch). */
char *note_cosign(const note_key *k, const char *text, guint64 ts);

typedef enum {
	NOTE_SIG_ABSENT,	/* no signature line of this key */
	NOTE_SIG_GOOD,
	NOTE_SIG_BAD		/* a line of this key that does not verify */
} note_sig_result;

/* Check the signature lines of key k on n (name and id both match).
 * For a cosignature, *ts receives its time. */
note_sig_result note_verify_key(const note *n, const note_key *k, guint64 *ts);

/* A witness as vulnid.conf names one ([export] witnesses): its verifier
 * key (type 0x04), white space, and where it is reached: an http:// or
 * https:// URL (the tlog-witness submission prefix, where add-checkpoint
 * is posted) or an absolute path (a directory of cosigned checkpoints,
 * DIR/SHA256HEX(ORIGIN)/checkpoint as a witness serves them, or one
 * checkpoint file). */
typedef struct {
	note_key *key;
	char *url;		/* or NULL */
	char *path;		/* or NULL */
} note_witness;

void note_witness_free(note_witness *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(note_witness, note_witness_free)
vulnid_status note_witness_parse(const char *text, note_witness **out, GError **err);

/* A checkpoint's text: origin, size, root hash (base64), extension lines. */
typedef struct {
	char *origin;
	guint64 size;
	tlog_hash root;
} checkpoint;

void checkpoint_clear(checkpoint *c);
char *checkpoint_text(const char *origin, guint64 size, const tlog_hash *root);
vulnid_status checkpoint_parse(const char *text, checkpoint *c, GError **err);

/* Read a checkpoint note (at most NOTE_MAX_SIZE bytes) from a file and
 * check it is signed by the log key: *n and *c on success. */
vulnid_status checkpoint_open(const char *path, const note_key *log_key, note **n, checkpoint *c,
			      GError **err);

#endif
