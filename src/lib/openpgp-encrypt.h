/* openpgp-encrypt.h - OpenPGP messages encrypted to one key, built in vulnid
 *
 * Sealed content is encrypted to the robot's own key, several times per
 * embargoed mail; through gpg that is a gpg process or two each time.
 * Here a transferable public key (RFC 9580 section 10.1, as `gpg --export`
 * writes it) is read into its primary key and subkeys, and a message is
 * encrypted to one of them: a public-key encrypted session key packet
 * (version 3) and a symmetrically encrypted integrity protected data
 * packet (version 1: AES-256 in OpenPGP's CFB mode, SHA-1 modification
 * detection code) around a literal data packet, ASCII-armored.  For ECDH
 * on Curve25519 (RFC 6637, RFC 9580 section 11.5) and RSA (PKCS#1 v1.5),
 * the two kinds of encryption key `vulnid init` makes.
 *
 * Signatures on the key are read, never verified: the key comes from the
 * robot's own keyring through gpg, which checked them when the key was
 * made or imported, and gpg decrypts what is sealed.  This module knows
 * the formats only; which key and from where is crypto.c's business.
 *
 * libcrypto (AES, X25519, RSA) is loaded with dlopen() on the first
 * encryption: most runs of the programs seal nothing, and linking it would
 * cost every run of vulnid-filter half again its start-up. */
#ifndef VULNID_OPENPGP_ENCRYPT_H
#define VULNID_OPENPGP_ENCRYPT_H

#include <glib.h>

#include "status.h"

/* RFC 9580 numbers (openpgp.h has those of signatures) */
#define OPENPGP_PK_RSA_ENCRYPT 2
#define OPENPGP_PK_ELGAMAL 16
#define OPENPGP_PK_ECDH 18

/* Bounds on a key: a real one is a few kilobytes, with a handful of user
 * IDs, subkeys and signatures.  Anything past them is refused whole. */
#define OPENPGP_KEY_MAX_BYTES (1024 * 1024)	/* binary, after the armor */
#define OPENPGP_KEY_MAX_PACKETS 4096
#define OPENPGP_KEY_MAX_SUBKEYS 64

/* A primary key or subkey, and what its newest self-signature (primary)
 * or binding signature (subkey) says of it. */
typedef struct {
	guint8 version;		/* 4; keys of other versions are listed but never chosen */
	guint8 algo;
	gint64 created;
	guint8 fpr[20];		/* version 4 fingerprint: SHA-1 of the packet (RFC 4880 12.2) */
	guint8 keyid[8];	/* its low 64 bits */
	GBytes *body;		/* the key packet's body */
	gboolean bound;		/* a self or binding signature was found */
	gboolean has_flags;	/* it had a key flags subpacket */
	guint8 flags;		/* the first octet of the key flags */
	gint64 expires;		/* Unix time; 0: never */
	gboolean revoked;	/* a revocation signature by the primary key */
} openpgp_pubkey;

typedef struct {
	openpgp_pubkey *primary;
	GPtrArray *subkeys;	/* openpgp_pubkey *, in the order of the key */
} openpgp_cert;

/* One transferable public key, binary or ASCII-armored ("-----BEGIN PGP
 * PUBLIC KEY BLOCK-----", the CRC-24 checked when present).  INVALID for
 * anything else: another packet first, a secret key, a second primary
 * key, a packet running past the end, partial or indeterminate lengths
 * (not allowed in keys), more than the bounds above.  Time and memory are
 * linear in len. */
vulnid_status openpgp_cert_parse(const void *data, gsize len, openpgp_cert **out, GError **err);
void openpgp_cert_free(openpgp_cert *cert);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(openpgp_cert, openpgp_cert_free)

/* The key gpg encrypts to at time now: none while the primary key is
 * revoked or expired; else the newest (by creation time, the first of
 * equals) subkey that is bound, neither revoked nor expired nor created
 * after now, and can encrypt (key flags 0x04 or 0x08, or by its algorithm
 * when the binding has no key flags); else the primary key if it can.
 * NULL when there is none. */
const openpgp_pubkey *openpgp_cert_encryption_key(const openpgp_cert *cert, gint64 now);

openpgp_pubkey *openpgp_pubkey_copy(const openpgp_pubkey *key);
void openpgp_pubkey_free(openpgp_pubkey *key);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(openpgp_pubkey, openpgp_pubkey_free)

/* data encrypted to key, as an armored message ("-----BEGIN PGP
 * MESSAGE-----", CRC-24, LF line ends).  NOTFOUND: a key of a kind not
 * encrypted to here (another algorithm or curve, another version, an RSA
 * key under 1024 or over 16384 bits), for which the caller lets gpg
 * encrypt; CONFIG: libcrypto cannot be loaded; TEMP: the kernel gave no
 * random bytes (there is no weaker source); INVALID: key material that is
 * not what it claims (a point of small order, an even modulus), or more
 * than 1 GiB of data. */
vulnid_status openpgp_encrypt(const openpgp_pubkey *key, const void *data, gsize len, char **armored,
			      GError **err);

#endif
