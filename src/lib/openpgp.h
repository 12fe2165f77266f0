/* openpgp.h - OpenPGP signatures built in vulnid, signed by gpg-agent
 *
 * A signature costs no gpg process: the digest that a version 4
 * signature packet covers (RFC 9580 section 5.2.4: the data, then the
 * packet's hashed part and trailer) is handed to gpg-agent over its Assuan
 * socket (SIGKEY, SETHASH, PKSIGN, the conversation gpg itself has with
 * the agent), and the agent's answer, an S-expression, becomes the MPIs
 * of the packet built here.  Packets are version 4 with SHA-256, for the
 * two kinds of key `vulnid init` makes: Ed25519 (EdDSA) and RSA.
 *
 * This module knows the formats and the protocol only; which key, which
 * socket and when to start the agent is crypto.c's business. */
#ifndef VULNID_OPENPGP_H
#define VULNID_OPENPGP_H

#include <glib.h>

#include "status.h"

/* RFC 9580 numbers */
#define OPENPGP_PK_RSA 1
#define OPENPGP_PK_EDDSA 22	/* EdDSALegacy: Ed25519 in a version 4 key */
#define OPENPGP_HASH_SHA256 8
#define OPENPGP_SIG_BINARY 0x00
#define OPENPGP_SIG_TEXT 0x01

#define OPENPGP_DIGEST_LEN 32	/* SHA-256 */

typedef struct {
	guint8 algo;		/* OPENPGP_PK_RSA or OPENPGP_PK_EDDSA */
	guint bits;		/* size of the RSA modulus (EdDSA: 255) */
	guint8 fpr[20];		/* version 4 fingerprint */
	char keygrip[41];	/* how gpg-agent names the secret key, 40 hex digits */
} openpgp_key;

/* Fill key from a hex fingerprint and keygrip; FALSE when either is not
 * 40 hex digits or the algorithm is not one this module signs with. */
gboolean openpgp_key_init(openpgp_key *key, guint8 algo, guint bits, const char *fpr,
			  const char *keygrip);

/* One signature in the making: its hashed part is fixed when it is
 * created (creation time and issuer fingerprint subpackets), the data is
 * added, then the digest is signed and the packet finished. */
typedef struct openpgp_sig openpgp_sig;

/* type: OPENPGP_SIG_BINARY or OPENPGP_SIG_TEXT (the data must then be
 * canonical text already: CRLF line ends, see openpgp_cleartext()). */
openpgp_sig *openpgp_sig_new(const openpgp_key *key, guint8 type, gint64 created);
void openpgp_sig_update(openpgp_sig *sig, const void *data, gsize len);
/* Ends the hashing; the OPENPGP_DIGEST_LEN bytes stay valid with sig. */
const guint8 *openpgp_sig_digest(openpgp_sig *sig);
/* The signature packet, from what PKSIGN answered for that digest:
 * (sig-val(eddsa(r R)(s S))) or (sig-val(rsa(s S))) as a canonical
 * S-expression.  Anything else is refused (INVALID). */
vulnid_status openpgp_sig_finish(openpgp_sig *sig, const void *sexp, gsize len, GBytes **packet,
				 GError **err);
void openpgp_sig_free(openpgp_sig *sig);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(openpgp_sig, openpgp_sig_free)

/* ASCII armor of a signature packet (RFC 9580 section 6.2), with the
 * CRC-24 checksum line; LF line ends. */
char *openpgp_armor_signature(GBytes *packet);
/* The same for any OpenPGP data: "-----BEGIN PGP what-----" (what:
 * "SIGNATURE", "MESSAGE"), base64 in lines of 64, the checksum line. */
char *openpgp_armor(const char *what, const void *data, gsize len);
guint32 openpgp_crc24(const guint8 *data, gsize len);

/* The cleartext signature framework (RFC 9580 section 7).  Of text, what
 * is shown (every line dash-escaped where it starts with "-" or "From ",
 * "\n" after every line) and what is signed (the same lines unescaped,
 * without trailing spaces and tabs, CRLF between them, none after the
 * last).  LF, CRLF and a lone CR each end a line, so that no CR is left
 * in the text; a last line end is part of the frame, as for every
 * verifier. */
void openpgp_cleartext(const char *text, GString *shown, GString *canonical);
/* The whole cleartext signed message: header, shown text, armored
 * signature of the canonical text. */
char *openpgp_cleartext_message(const char *shown, const char *armored_signature);

/* A connection to gpg-agent.  SIGPIPE must be ignored in the process
 * (gpgme_check_version() sees to it), as for gpgme itself. */
typedef struct openpgp_agent openpgp_agent;

/* NOTFOUND: nothing listens on socket (the agent is not running); TEMP:
 * any other failure. */
vulnid_status openpgp_agent_connect(const char *socket, openpgp_agent **out, GError **err);
/* The agent's signature over digest (SHA-256) with the key keygrip, as
 * the S-expression it returns; TEMP when the agent refused (key missing
 * or unusable) or the connection failed (the agent went away). */
vulnid_status openpgp_agent_pksign(openpgp_agent *agent, const char *keygrip, const guint8 *digest,
				   GBytes **sexp, GError **err);
void openpgp_agent_free(openpgp_agent *agent);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(openpgp_agent, openpgp_agent_free)

/* Writers of OpenPGP's big-endian numbers and of a packet header in the
 * new format (tag, then the length: RFC 4880 4.2.1), shared by the
 * signatures made here and the sealing of openpgp-encrypt.c. */
void openpgp_put8(GByteArray *b, guint8 v);
void openpgp_put16(GByteArray *b, guint v);
void openpgp_put32(GByteArray *b, guint32 v);
void openpgp_put_header(GByteArray *b, guint8 tag, gsize len);

#endif
