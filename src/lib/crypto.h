/* crypto.h - OpenPGP through gpgme and GMime, in the instance's own keyring
 *
 * All crypto uses DIR/gnupg, set explicitly: an MTA passes no environment,
 * and gpg would otherwise create ~/.gnupg.  The robot's key has no
 * passphrase (GMime never sets up pinentry loopback); the directory is
 * protected by its permissions. */
#ifndef VULNID_CRYPTO_H
#define VULNID_CRYPTO_H

#include <glib.h>
#include <gmime/gmime.h>

#include "status.h"

/* Before g_mime_init(): skip gpgme's gpgconf start-up probes, which cost
 * more than a verification itself. */
void crypto_preinit(void);

/* After g_mime_init(): use home as GNUPGHOME for gpgme and GMime. */
vulnid_status crypto_set_home(const char *home, GError **err);
const char *crypto_home(void);

/* vulnid init: create home (0700) and a key without passphrase for
 * "vulnid <address>": algo "ed25519" (sign) + cv25519 (encrypt), or
 * "rsa3072". */
vulnid_status crypto_generate_robot_key(const char *home, const char *address,
					const char *algo, char **fpr, GError **err);

/* The robot's fingerprint: the secret key in the keyring (remembered in
 * GNUPGHOME/vulnid-robot-key, with what signing needs, while the
 * keyring's files are unchanged).  These two and the signing functions
 * (crypto_sign_mime(), crypto_clearsign(), crypto_sign_detached()) may be
 * called from several threads; the cache of keys that verification and
 * import use is not locked. */
vulnid_status crypto_robot_fingerprint(char **fpr, GError **err);
/* Whether the robot's secret key can be used now: listed afresh, through
 * gpg-agent (TEMP when the agent is the trouble). */
vulnid_status crypto_robot_key_check(GError **err);

/* "OpenPGP key FPR" for the signature line of mail, or NULL without a
 * keyring. */
char *crypto_robot_label(void);

/* ASCII-armored public key of fpr. */
vulnid_status crypto_export_public(const char *fpr, GBytes **out, GError **err);

typedef struct {
	char *fpr;
	GPtrArray *emails;	/* char*: e-mail addresses of its user IDs */
	GPtrArray *uids;	/* char*: user IDs as given */
	gboolean secret;
	gboolean revoked;
	gboolean expired;
	gboolean can_encrypt;
} crypto_key;

void crypto_key_free(crypto_key *k);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(crypto_key, crypto_key_free)

/* The primary key's fingerprint of a key or subkey fingerprint in the
 * keyring (NOTFOUND if none). */
vulnid_status crypto_primary_fpr(const char *fpr, char **primary, GError **err);

/* One key by fingerprint (NOTFOUND if not in the keyring). */
vulnid_status crypto_get_key(const char *fpr, crypto_key **out, GError **err);
/* All public keys. */
vulnid_status crypto_list_keys(GPtrArray **out /* crypto_key* */, GError **err);

/* Import armored or binary keys; the fingerprints of what was imported or
 * already present come back.  Secret keys are never imported, and a key
 * with the robot's own fingerprint is refused. */
vulnid_status crypto_import(GBytes *data, GPtrArray **fprs, GError **err);
/* Why trust on first use refused a key: another key in the keyring
 * already claims one of its addresses. */
typedef struct {
	char *fpr;		/* the key offered (its primary fingerprint) */
	char *other;		/* the key in the keyring that claims the address */
	char *address;		/* the address both claim (lower case) */
} crypto_conflict;

void crypto_conflict_free(crypto_conflict *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(crypto_conflict, crypto_conflict_free)

/* Trust on first use: import only the key required (the key that made a
 * signature, sent along with it: its fingerprint, or the key ID a
 * signature names), and only when no other key in the keyring claims any
 * of its addresses; NOTFOUND when the data does not hold it, EXISTS (and
 * *conflict) when an address is claimed already: then nothing is
 * imported and the operator decides (vulnid keys import).  The data is
 * read here first (openpgp-scan.h): over the CRYPTO_MAX_* maxima, or with
 * a secret key, it is refused (INVALID) before gpg sees it; then two gpg
 * processes at most, each within timeout_ms.  Concurrent filters check
 * and import one at a time. */
vulnid_status crypto_import_if_contains(GBytes *data, const char *required, gint64 timeout_ms,
					crypto_conflict **conflict, GError **err);

/* Endorsement by certification: which of the keys candidates (primary
 * fingerprints in the robot's keyring, NULL-terminated; revoked or expired
 * ones never count) certified a user ID of the key subject, as the copy of
 * subject in data (a key block sent with a mail) carries it.  gpg checks
 * each certification, in a scratch keyring that holds only subject (cut
 * out of data) and the candidates, every run within timeout_ms; a
 * certification its issuer revoked later does not count, and a user ID's
 * text is never looked at.  *certifier: the first such candidate (upper
 * case), or NULL. */
vulnid_status crypto_certified_by(GBytes *data, const char *subject, const char *const *candidates,
				  gint64 timeout_ms, char **certifier, GError **err);

/* What is known about the signature(s) on some content. */
typedef struct {
	gboolean present;	/* there was a signature at all */
	gboolean valid;		/* authenticated: exactly one good signature by a known key */
	gboolean key_missing;	/* good or bad, the key is not in the keyring */
	char *fpr;		/* signer, when known */
	char *reason;		/* why not valid (for the reply), or NULL */
	GBytes *raw;		/* the signature as received */
	char *raw_sha256;	/* its digest (where the raw signature is kept) */
	gint64 created;		/* signature creation time (Unix), 0 if unknown */
} crypto_signature;

crypto_signature *crypto_signature_new(void);
void crypto_signature_free(crypto_signature *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(crypto_signature, crypto_signature_free)

/* OpenPGP on a mail: each a single gpg process in the instance's
 * keyring (gpgrun.h), bounded by timeout_ms.  The verdict on signatures
 * comes from gpg's status lines: valid is exactly one key's good
 * signatures and nothing else; fpr is the primary key's (gpg names it,
 * no key listing); key_missing with fpr the issuer's fingerprint or key
 * ID as the signature names it.  They return TIMEOUT when gpg was
 * stopped at the deadline, TOOBIG when it wrote more than allowed, TEMP
 * when gpg could not run (or the robot's key could not be used: gpg-agent
 * down), OK otherwise, also for a bad or unreadable signature (*out says
 * why). */

/* Most signature packets in a signature part or block, and most
 * public-key encrypted session keys before an encrypted mail's data: a
 * real mail has one or two of the first and a few of the second; each is
 * work for gpg.  Keys attached to a mail: at most this many keys, each
 * with at most these many subkeys and user IDs, and this many packets in
 * all. */
#define CRYPTO_MAX_SIGNATURES 8
#define CRYPTO_MAX_RECIPIENTS 64
#define CRYPTO_MAX_KEYS 8
#define CRYPTO_MAX_SUBKEYS 32
#define CRYPTO_MAX_UIDS 64
#define CRYPTO_MAX_KEY_PACKETS 4096

/* Whether signature (a signature part, or the armored signature of a
 * cleartext block) holds 1 to CRYPTO_MAX_SIGNATURES signature packets and
 * nothing else; else *why says what is wrong. */
gboolean crypto_signature_sane(GBytes *signature, char **why);
/* Whether an encrypted message (armored or binary) starts with at most
 * CRYPTO_MAX_RECIPIENTS public-key encrypted session keys and then its
 * integrity-protected data; else *why. */
gboolean crypto_ciphertext_sane(const void *data, gsize len, char **why);

/* A detached signature over the data of data_fd (from its offset). */
vulnid_status crypto_verify_fd(int data_fd, GBytes *signature, gint64 timeout_ms,
			       crypto_signature *out, GError **err);
/* A cleartext-signed block: verified, and when text is not NULL the
 * signed text (dash escapes removed) comes back, at most max_text bytes. */
vulnid_status crypto_verify_cleartext(GBytes *block, gint64 timeout_ms, gint64 max_text,
				      GBytes **text, crypto_signature *out, GError **err);

/* Decrypt what in_fd holds (from its offset) into out_fd, at most
 * max_out bytes; a signature inside is judged into sig (sig->present
 * tells whether there was one).  *session_sha256: the SHA-256 of the
 * session key as gpg names it ("ALGO:HEX"), which is the same for the
 * same encrypted data however it is wrapped.  A mail that cannot be
 * decrypted (not to this robot, no integrity protection, damaged) gives
 * INVALID with gpg's reason; out_fd may then hold part of it. */
vulnid_status crypto_decrypt_fd(int in_fd, int out_fd, gint64 max_out, gint64 timeout_ms,
				 crypto_signature *sig, char **session_sha256, GError **err);

/* Verify a detached signature over data with a keyring of one key only
 * (the key attached to a request), without touching the robot's keyring.
 * *fpr is the signer when the signature is good. */
vulnid_status crypto_verify_with_key(GBytes *key, GBytes *data, GBytes *signature,
				     char **fpr, GError **err);

/* Signatures by the robot's key (signer: its fingerprint) cost no gpg
 * process: openpgp.c builds them and gpg-agent signs their digest, over a
 * connection kept for the process.  The agent is started when it is not
 * running, unless gpg.conf says no-autostart.  Keys of other kinds are
 * signed with by running gpg.  A failure (agent down, key unusable) is
 * TEMP, with the reason.
 *
 * Sign entity as PGP/MIME (multipart/signed) or encrypt (and sign, by
 * gpg) it to the given fingerprints. */
GMimeObject *crypto_sign_mime(GMimeObject *entity, const char *signer, GError **err);
GMimeObject *crypto_encrypt_mime(GMimeObject *entity, const char *signer,
				 GPtrArray *recipients /* char* fpr */, GError **err);
/* Clearsign text (inline). */
vulnid_status crypto_clearsign(const char *text, const char *signer, char **out, GError **err);
/* Detached armored signature over data (for exports). */
vulnid_status crypto_sign_detached(GBytes *data, const char *signer, GBytes **sig, GError **err);
/* Verify a detached signature against the keyring in home (or the current
 * one when home is NULL); *fpr is the good signer. */
vulnid_status crypto_verify_detached(const char *home, GBytes *data, GBytes *sig,
				     char **fpr, GError **err);

/* Close the connection to gpg-agent kept for signatures (the next one
 * opens another); after fork(), the child leaves the parent's alone. */
void crypto_agent_close(void);

/* Encrypt bytes to the robot's own key (sealed content) and back. */
vulnid_status crypto_seal(GBytes *clear, const char *robot_fpr, GBytes **sealed, GError **err);
vulnid_status crypto_unseal(GBytes *sealed, GBytes **clear, GError **err);

#endif
