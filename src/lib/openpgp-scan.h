/* openpgp-scan.h - what OpenPGP data holds, read before gpg sees it
 *
 * gpg's cost grows with what it is given: every signature packet of a
 * signature part is verified, every key of an attachment imported, every
 * public-key encrypted session key tried.  A mail can carry thousands of
 * them in a few hundred kilobytes (20,000 copies of one signature took gpg
 * 19 s).  This module walks the packet headers (RFC 9580 section 4.2) in
 * one linear pass, without interpreting the packets, so that the caller
 * refuses data over small maxima before gpg is started; and it splits a
 * key block into its keys (primary key, subkeys, user IDs, version 4
 * fingerprints), so that trust on first use hands gpg the one key it
 * wants.  Formats only; gpg stays the authority on what a key or
 * signature is worth. */
#ifndef VULNID_OPENPGP_SCAN_H
#define VULNID_OPENPGP_SCAN_H

#include <glib.h>

/* Packet tags (RFC 9580 section 5) */
#define OPENPGP_TAG_PKESK 1
#define OPENPGP_TAG_SIGNATURE 2
#define OPENPGP_TAG_SKESK 3
#define OPENPGP_TAG_ONE_PASS 4
#define OPENPGP_TAG_SECRET_KEY 5
#define OPENPGP_TAG_PUBLIC_KEY 6
#define OPENPGP_TAG_SECRET_SUBKEY 7
#define OPENPGP_TAG_COMPRESSED 8
#define OPENPGP_TAG_SED 9
#define OPENPGP_TAG_MARKER 10
#define OPENPGP_TAG_LITERAL 11
#define OPENPGP_TAG_TRUST 12
#define OPENPGP_TAG_USER_ID 13
#define OPENPGP_TAG_PUBLIC_SUBKEY 14
#define OPENPGP_TAG_USER_ATTRIBUTE 17
#define OPENPGP_TAG_SEIPD 18
#define OPENPGP_TAG_MDC 19
#define OPENPGP_TAG_AEAD 20
#define OPENPGP_TAG_PADDING 21

typedef struct {
	guint packets;			/* all packets read */
	guint tags[64];			/* packets by tag */
	gboolean malformed;		/* a header or length that does not fit the data */
	gboolean too_many;		/* more than max_packets: the walk stopped */
	gboolean armored;		/* the data was ASCII armor */
} openpgp_scan;

/* Walk the packets of data: binary, or one or more ASCII-armored blocks
 * (anything outside the armor lines is ignored; the checksum line is not
 * checked, gpg does that).  At most max_packets are counted.  FALSE when
 * nothing could be read as OpenPGP. */
gboolean openpgp_scan_data(const void *data, gsize len, guint max_packets, openpgp_scan *out);

/* The packets before the encrypted data of an encrypted message (binary:
 * openpgp_binary()), up to and including the first encrypted data packet
 * (SEIPD, AEAD or SED), whose body may go on past the data given.  At
 * most max_packets before it.  FALSE when there is no such packet or a
 * header does not fit. */
gboolean openpgp_scan_encrypted(const void *data, gsize len, guint max_packets, openpgp_scan *out);

/* The binary packets of data (the armor taken off, several blocks
 * joined), or NULL when it holds no armor and does not start like a
 * packet.  Only the first max_len bytes are decoded and returned. */
GBytes *openpgp_binary(const void *data, gsize len, gsize max_len);

/* One key of a key block: its packets as they came, and what identifies
 * it.  Only version 4 keys have fingerprints here (gpg 2.2 reads no
 * other); others have fpr "". */
typedef struct {
	char fpr[41];		/* primary key, upper-case hex */
	GPtrArray *subkeys;	/* char*: subkey fingerprints */
	GPtrArray *uids;	/* char*: user IDs as given (UTF-8 made valid) */
	GBytes *packets;	/* the transferable public key: primary to before the next */
	gboolean secret;	/* it has secret key material */
} openpgp_block_key;

void openpgp_block_key_free(openpgp_block_key *k);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(openpgp_block_key, openpgp_block_key_free)

/* The keys of binary key data (openpgp_binary()), at most max_keys;
 * NULL when the data is malformed or holds more. */
GPtrArray *openpgp_block_keys(GBytes *binary, guint max_keys);

/* The key whose primary or subkey fingerprint is fpr (40 hex digits,
 * either case, or a key ID of 16 that ends one), or NULL. */
const openpgp_block_key *openpgp_block_find(GPtrArray *keys, const char *fpr);

/* The e-mail address of a user ID as gpg reads it: between the last
 * angle brackets, or the whole ID when it looks like an address; lower
 * case; NULL when it has none. */
char *openpgp_uid_email(const char *uid);

#endif
