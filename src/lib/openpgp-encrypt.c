/* openpgp-encrypt.c - transferable public keys read, and messages encrypted
 * to one of their keys (openpgp-encrypt.h) */
#include "autoconfig.h"

#include <dlfcn.h>
#include <string.h>
#include <gio/gio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "openpgp.h"
#include "openpgp-encrypt.h"
#include "random.h"

/* --- libcrypto, loaded on first use ------------------------------------------------ */

/* The functions are libcrypto's, through these pointers (as smtp.c does
 * for libESMTP): linked, libcrypto took half again the instructions of
 * vulnid-filter's start-up, for every mail, and most mails seal nothing.
 * Hashes are GLib's (GChecksum); only what GLib lacks comes from here. */
#define LIBCRYPTO_FUNCTIONS(X) \
	X(ERR_clear_error) \
	X(EVP_CIPHER_CTX_new) \
	X(EVP_CIPHER_CTX_free) \
	X(EVP_CIPHER_CTX_set_flags) \
	X(EVP_EncryptInit_ex) \
	X(EVP_EncryptUpdate) \
	X(EVP_EncryptFinal_ex) \
	X(EVP_aes_128_wrap) \
	X(EVP_aes_192_wrap) \
	X(EVP_aes_256_wrap) \
	X(EVP_aes_256_cfb128) \
	X(EVP_PKEY_new_raw_private_key) \
	X(EVP_PKEY_new_raw_public_key) \
	X(EVP_PKEY_get_raw_public_key) \
	X(EVP_PKEY_free) \
	X(EVP_PKEY_CTX_new) \
	X(EVP_PKEY_CTX_new_from_name) \
	X(EVP_PKEY_CTX_free) \
	X(EVP_PKEY_derive_init) \
	X(EVP_PKEY_derive_set_peer) \
	X(EVP_PKEY_derive) \
	X(EVP_PKEY_fromdata_init) \
	X(EVP_PKEY_fromdata) \
	X(EVP_PKEY_encrypt_init) \
	X(EVP_PKEY_CTX_set_rsa_padding) \
	X(EVP_PKEY_encrypt) \
	X(OSSL_PARAM_BLD_new) \
	X(OSSL_PARAM_BLD_push_BN) \
	X(OSSL_PARAM_BLD_to_param) \
	X(OSSL_PARAM_BLD_free) \
	X(OSSL_PARAM_free) \
	X(BN_bin2bn) \
	X(BN_free)

static struct {
#define LC_POINTER(f) __typeof__(f) *f;
	LIBCRYPTO_FUNCTIONS(LC_POINTER)
#undef LC_POINTER
} lc;
static char *lc_why;	/* why it could not be loaded */

static gpointer
lc_load_once(gpointer unused)
{
	void *h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		const char *e = dlerror();

		lc_why = g_strdup_printf("cannot load libcrypto: %s", e != NULL ? e : CRYPTO_SONAME);
		return NULL;
	}
#define LC_SYMBOL(f) \
	if ((*(void **) &lc.f = dlsym(h, #f)) == NULL) { \
		lc_why = g_strdup_printf("cannot load libcrypto: %s has no %s", CRYPTO_SONAME, #f); \
		dlclose(h); \
		return NULL; \
	}
	LIBCRYPTO_FUNCTIONS(LC_SYMBOL)
#undef LC_SYMBOL
	return h;
}

static vulnid_status
lc_load(GError **err)
{
	static GOnce once = G_ONCE_INIT;

	g_once(&once, lc_load_once, NULL);
	if (once.retval == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "%s", lc_why);
	return VULNID_OK;
}

/* A libcrypto call failed: its error queue emptied (the same thread may
 * speak TLS later and read it). */
static vulnid_status
lc_fail(GError **err, vulnid_status s, const char *what)
{
	lc.ERR_clear_error();
	return vulnid_fail(err, s, "%s", what);
}

/* --- reading ------------------------------------------------------------------------- */

typedef struct {
	const guint8 *p, *end;
} rd;

static gsize
rd_left(const rd *r)
{
	return (gsize) (r->end - r->p);
}

static gboolean
rd_bytes(rd *r, gsize n, const guint8 **out)
{
	if (rd_left(r) < n)
		return FALSE;
	*out = r->p;
	r->p += n;
	return TRUE;
}

static gboolean
rd_u8(rd *r, guint8 *v)
{
	const guint8 *b;

	if (!rd_bytes(r, 1, &b))
		return FALSE;
	*v = b[0];
	return TRUE;
}

static gboolean
rd_u16(rd *r, guint *v)
{
	const guint8 *b;

	if (!rd_bytes(r, 2, &b))
		return FALSE;
	*v = (guint) b[0] << 8 | b[1];
	return TRUE;
}

static gboolean
rd_u32(rd *r, guint32 *v)
{
	const guint8 *b;

	if (!rd_bytes(r, 4, &b))
		return FALSE;
	*v = (guint32) b[0] << 24 | (guint32) b[1] << 16 | (guint32) b[2] << 8 | b[3];
	return TRUE;
}

/* An MPI (RFC 9580 3.2): the value without its leading zero octets
 * (there should be none; a hostile key may have them). */
static gboolean
rd_mpi(rd *r, const guint8 **v, gsize *len)
{
	guint bits;

	if (!rd_u16(r, &bits) || !rd_bytes(r, (bits + 7) / 8, v))
		return FALSE;
	*len = (bits + 7) / 8;
	while (*len > 0 && **v == 0) {
		(*v)++;
		(*len)--;
	}
	return TRUE;
}

/* --- ASCII armor --------------------------------------------------------------------- */

#define ARMOR_BEGIN "-----BEGIN PGP PUBLIC KEY BLOCK-----"
#define ARMOR_END "-----END PGP PUBLIC KEY BLOCK-----"

/* The next line of text (without its end and trailing blanks), or FALSE
 * at the end. */
static gboolean
next_line(const char **p, const char *end, const char **line, gsize *len)
{
	const char *e;

	if (*p >= end)
		return FALSE;
	e = memchr(*p, '\n', (gsize) (end - *p));
	if (e == NULL)
		e = end;
	*line = *p;
	*p = e < end ? e + 1 : end;
	while (e > *line && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*len = (gsize) (e - *line);
	return TRUE;
}

static gboolean
line_is(const char *line, gsize len, const char *s)
{
	return len == strlen(s) && memcmp(line, s, len) == 0;
}

static gboolean
is_base64(const char *s, gsize len)
{
	gsize i = 0;

	while (i < len && (g_ascii_isalnum(s[i]) || s[i] == '+' || s[i] == '/'))
		i++;
	while (i < len && s[i] == '=' && len - i <= 2)
		i++;
	return i == len;
}

/* The first public key block of text (RFC 9580 6.2): armor header lines
 * up to an empty line, base64 lines, an optional CRC-24 line, the end. */
static vulnid_status
dearmor(const char *text, gsize len, GByteArray *out, GError **err)
{
	const char *p = text, *end = text + len, *line;
	gsize n, crc_len = 0;
	gint state = 0;
	guint save = 0;
	gboolean begun = FALSE, body = FALSE;
	guchar crc[4];

	while (next_line(&p, end, &line, &n)) {
		if (!begun) {
			begun = line_is(line, n, ARMOR_BEGIN);
			continue;
		}
		if (!body) {
			/* "Key: value" armor headers, then an empty line */
			if (n == 0)
				body = TRUE;
			else if (memchr(line, ':', n) == NULL)
				return vulnid_fail(err, VULNID_ERR_INVALID, "armor header line without a colon");
			continue;
		}
		if (line_is(line, n, ARMOR_END)) {
			if (crc_len != 0) {
				guint32 want = (guint32) crc[0] << 16 | (guint32) crc[1] << 8 | crc[2];

				if (openpgp_crc24(out->data, out->len) != want)
					return vulnid_fail(err, VULNID_ERR_INVALID, "armor checksum does not match");
			}
			return VULNID_OK;
		}
		if (crc_len != 0)
			return vulnid_fail(err, VULNID_ERR_INVALID, "armor goes on after its checksum");
		if (n == 5 && line[0] == '=' && is_base64(line + 1, 4)) {
			gint s = 0;
			guint v = 0;

			crc_len = g_base64_decode_step(line + 1, 4, crc, &s, &v);
			if (crc_len != 3)
				return vulnid_fail(err, VULNID_ERR_INVALID, "armor checksum is not 3 octets");
			continue;
		}
		if (!is_base64(line, n))
			return vulnid_fail(err, VULNID_ERR_INVALID, "armor line is not base64");
		if (out->len + n / 4 * 3 + 3 > OPENPGP_KEY_MAX_BYTES)
			return vulnid_fail(err, VULNID_ERR_INVALID, "key longer than %d octets", OPENPGP_KEY_MAX_BYTES);
		{
			guint at = out->len;

			g_byte_array_set_size(out, at + (guint) (n / 4 * 3 + 3));
			g_byte_array_set_size(out, at + (guint) g_base64_decode_step(line, n, out->data + at,
										 &state, &save));
		}
	}
	return vulnid_fail(err, VULNID_ERR_INVALID, begun ? "armor without its end line" : "no public key block");
}

/* --- packets --------------------------------------------------------------------------- */

#define TAG_SIGNATURE 2
#define TAG_SECRET_KEY 5
#define TAG_PUBLIC_KEY 6
#define TAG_SECRET_SUBKEY 7
#define TAG_USER_ID 13
#define TAG_PUBLIC_SUBKEY 14
#define TAG_USER_ATTRIBUTE 17

typedef struct {
	guint8 tag;
	const guint8 *body;
	gsize len;
} packet;

/* The next packet's header (RFC 9580 4.2), in either format.  Partial
 * and indeterminate lengths are for data packets only: never in a key. */
static vulnid_status
next_packet(rd *r, packet *pk, GError **err)
{
	guint8 h, o1, o2;
	guint32 len32;
	guint len16;
	gsize len = 0;

	if (!rd_u8(r, &h) || !(h & 0x80))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not an OpenPGP packet");
	if (h & 0x40) {
		pk->tag = h & 0x3f;
		if (!rd_u8(r, &o1))
			return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
		if (o1 < 192)
			len = o1;
		else if (o1 < 224) {
			if (!rd_u8(r, &o2))
				return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
			len = ((gsize) (o1 - 192) << 8) + o2 + 192;
		} else if (o1 == 255) {
			if (!rd_u32(r, &len32))
				return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
			len = len32;
		} else
			return vulnid_fail(err, VULNID_ERR_INVALID, "partial length in a key");
	} else {
		pk->tag = (h >> 2) & 0x0f;
		switch (h & 3) {
		case 0:
			if (!rd_u8(r, &o1))
				return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
			len = o1;
			break;
		case 1:
			if (!rd_u16(r, &len16))
				return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
			len = len16;
			break;
		case 2:
			if (!rd_u32(r, &len32))
				return vulnid_fail(err, VULNID_ERR_INVALID, "packet header cut short");
			len = len32;
			break;
		default:
			return vulnid_fail(err, VULNID_ERR_INVALID, "indeterminate length in a key");
		}
	}
	if (!rd_bytes(r, len, &pk->body))
		return vulnid_fail(err, VULNID_ERR_INVALID, "packet (tag %u, %zu octets) runs past the end",
				   pk->tag, len);
	pk->len = len;
	return VULNID_OK;
}

/* --- keys ------------------------------------------------------------------------------ */

void
openpgp_pubkey_free(openpgp_pubkey *k)
{
	if (k == NULL)
		return;
	if (k->body != NULL)
		g_bytes_unref(k->body);
	g_free(k);
}

openpgp_pubkey *
openpgp_pubkey_copy(const openpgp_pubkey *k)
{
	openpgp_pubkey *c = g_new(openpgp_pubkey, 1);

	*c = *k;
	if (c->body != NULL)
		g_bytes_ref(c->body);
	return c;
}

void
openpgp_cert_free(openpgp_cert *cert)
{
	if (cert == NULL)
		return;
	openpgp_pubkey_free(cert->primary);
	if (cert->subkeys != NULL)
		g_ptr_array_unref(cert->subkeys);
	g_free(cert);
}

/* A public key or subkey packet (RFC 9580 5.5.2).  Its material is read
 * when it is encrypted to; a version 4 key gets its fingerprint here. */
static vulnid_status
key_read(const packet *pk, openpgp_pubkey **out, GError **err)
{
	g_autoptr(openpgp_pubkey) k = g_new0(openpgp_pubkey, 1);
	rd r = { pk->body, pk->body + pk->len };
	guint32 created;

	if (!rd_u8(&r, &k->version) || !rd_u32(&r, &created))
		return vulnid_fail(err, VULNID_ERR_INVALID, "key packet cut short");
	k->created = created;
	if (k->version == 2 || k->version == 3) {
		const guint8 *validity;

		if (!rd_bytes(&r, 2, &validity))
			return vulnid_fail(err, VULNID_ERR_INVALID, "key packet cut short");
	}
	if (!rd_u8(&r, &k->algo))
		return vulnid_fail(err, VULNID_ERR_INVALID, "key packet cut short");
	if (k->version == 4) {
		/* SHA-1 of 0x99, the two-octet length, the body (RFC 4880 12.2) */
		g_autoptr(GChecksum) sha1 = g_checksum_new(G_CHECKSUM_SHA1);
		guint8 head[3] = { 0x99, (guint8) (pk->len >> 8), (guint8) pk->len };
		gsize n = sizeof k->fpr;

		if (pk->len > 0xffff)
			return vulnid_fail(err, VULNID_ERR_INVALID, "version 4 key packet over 65535 octets");
		g_checksum_update(sha1, head, 3);
		g_checksum_update(sha1, pk->body, (gssize) pk->len);
		g_checksum_get_digest(sha1, k->fpr, &n);
		memcpy(k->keyid, k->fpr + 12, 8);
	}
	k->body = g_bytes_new(pk->body, pk->len);
	*out = g_steal_pointer(&k);
	return VULNID_OK;
}

/* What a signature says about a key, from its subpackets: those that
 * qualify the key only from the hashed area, the issuer from either. */
typedef struct {
	guint8 type;
	gint64 created;
	gboolean has_key_expiry;
	guint32 key_expiry;	/* seconds after the key's creation; 0: never */
	gboolean has_flags;
	guint8 flags;
	gboolean has_issuer_keyid, has_issuer_fpr;
	guint8 issuer_keyid[8], issuer_fpr[20];
} sig_info;

#define SUBPKT_CREATED 2
#define SUBPKT_KEY_EXPIRY 9
#define SUBPKT_ISSUER_KEYID 16
#define SUBPKT_KEY_FLAGS 27
#define SUBPKT_ISSUER_FPR 33

static gboolean
subpackets(const guint8 *area, gsize len, gboolean hashed, sig_info *si)
{
	rd r = { area, area + len };

	while (rd_left(&r) > 0) {
		guint8 o1, o2, type;
		guint32 n32;
		gsize n;
		const guint8 *d;

		if (!rd_u8(&r, &o1))
			return FALSE;
		if (o1 < 192)
			n = o1;
		else if (o1 < 255) {
			if (!rd_u8(&r, &o2))
				return FALSE;
			n = ((gsize) (o1 - 192) << 8) + o2 + 192;
		} else {
			if (!rd_u32(&r, &n32))
				return FALSE;
			n = n32;
		}
		if (n == 0 || !rd_bytes(&r, n, &d))
			return FALSE;
		type = d[0] & 0x7f;	/* the top bit: critical */
		d++;
		n--;
		if (type == SUBPKT_ISSUER_KEYID && n == 8) {
			si->has_issuer_keyid = TRUE;
			memcpy(si->issuer_keyid, d, 8);
		} else if (type == SUBPKT_ISSUER_FPR && n == 21 && d[0] == 4) {
			si->has_issuer_fpr = TRUE;
			memcpy(si->issuer_fpr, d + 1, 20);
		} else if (!hashed)
			continue;
		else if (type == SUBPKT_CREATED && n == 4)
			si->created = (gint64) ((guint32) d[0] << 24 | (guint32) d[1] << 16 | (guint32) d[2] << 8 | d[3]);
		else if (type == SUBPKT_KEY_EXPIRY && n == 4) {
			si->has_key_expiry = TRUE;
			si->key_expiry = (guint32) d[0] << 24 | (guint32) d[1] << 16 | (guint32) d[2] << 8 | d[3];
		} else if (type == SUBPKT_KEY_FLAGS && n >= 1) {
			si->has_flags = TRUE;
			si->flags = d[0];
		}
	}
	return TRUE;
}

/* A version 4 signature packet's subpackets (RFC 9580 5.2.3); FALSE for
 * any other version or a malformed one, which is then left out, as gpg
 * leaves out what it cannot read. */
static gboolean
sig_read(const packet *pk, sig_info *si)
{
	rd r = { pk->body, pk->body + pk->len };
	guint8 version, algo, hash;
	guint n;
	const guint8 *area;

	memset(si, 0, sizeof *si);
	if (!rd_u8(&r, &version) || version != 4 || !rd_u8(&r, &si->type) || !rd_u8(&r, &algo) ||
	    !rd_u8(&r, &hash))
		return FALSE;
	if (!rd_u16(&r, &n) || !rd_bytes(&r, n, &area) || !subpackets(area, n, TRUE, si))
		return FALSE;
	if (!rd_u16(&r, &n) || !rd_bytes(&r, n, &area) || !subpackets(area, n, FALSE, si))
		return FALSE;
	return si->created != 0;
}

static gboolean
sig_by(const sig_info *si, const openpgp_pubkey *primary)
{
	if (si->has_issuer_fpr)
		return primary->version == 4 && memcmp(si->issuer_fpr, primary->fpr, 20) == 0;
	return si->has_issuer_keyid && primary->version == 4 && memcmp(si->issuer_keyid, primary->keyid, 8) == 0;
}

/* What a self or binding signature says of key, when it is the newest. */
static void
sig_apply(openpgp_pubkey *k, const sig_info *si, gint64 *newest)
{
	if (k->bound && si->created < *newest)
		return;
	*newest = si->created;
	k->bound = TRUE;
	k->has_flags = si->has_flags;
	k->flags = si->flags;
	k->expires = si->has_key_expiry && si->key_expiry != 0 ? k->created + si->key_expiry : 0;
}

#define SIG_CERT_GENERIC 0x10
#define SIG_CERT_POSITIVE 0x13
#define SIG_SUBKEY_BINDING 0x18
#define SIG_DIRECT_KEY 0x1f
#define SIG_KEY_REVOCATION 0x20
#define SIG_SUBKEY_REVOCATION 0x28
#define SIG_CERT_REVOCATION 0x30

/* Where in the key the packets are: what a signature is about. */
typedef struct {
	openpgp_cert *cert;
	enum { AT_PRIMARY, AT_USER_ID, AT_SUBKEY, AT_OTHER } at;
	openpgp_pubkey *subkey;		/* AT_SUBKEY */
	gint64 primary_newest, subkey_newest;
	/* the user ID being read: its newest self-certification and
	 * revocation; it counts for the primary key unless revoked after */
	sig_info uid_cert;
	gboolean uid_has_cert;
	gint64 uid_revoked;
} key_reader;

static void
uid_end(key_reader *kr)
{
	if (kr->at == AT_USER_ID && kr->uid_has_cert && kr->uid_revoked < kr->uid_cert.created)
		sig_apply(kr->cert->primary, &kr->uid_cert, &kr->primary_newest);
	kr->uid_has_cert = FALSE;
	kr->uid_revoked = 0;
}

static void
sig_of_key(key_reader *kr, const packet *pk)
{
	openpgp_pubkey *primary = kr->cert->primary;
	sig_info si;

	if (!sig_read(pk, &si) || !sig_by(&si, primary))
		return;		/* third-party certifications tell nothing here */
	switch (kr->at) {
	case AT_PRIMARY:
		if (si.type == SIG_DIRECT_KEY)
			sig_apply(primary, &si, &kr->primary_newest);
		else if (si.type == SIG_KEY_REVOCATION)
			primary->revoked = TRUE;
		break;
	case AT_USER_ID:
		if (si.type >= SIG_CERT_GENERIC && si.type <= SIG_CERT_POSITIVE &&
		    (!kr->uid_has_cert || si.created >= kr->uid_cert.created)) {
			kr->uid_cert = si;
			kr->uid_has_cert = TRUE;
		} else if (si.type == SIG_CERT_REVOCATION)
			kr->uid_revoked = MAX(kr->uid_revoked, si.created);
		break;
	case AT_SUBKEY:
		if (si.type == SIG_SUBKEY_BINDING)
			sig_apply(kr->subkey, &si, &kr->subkey_newest);
		else if (si.type == SIG_SUBKEY_REVOCATION)
			kr->subkey->revoked = TRUE;
		break;
	case AT_OTHER:
		break;
	}
	/* a key revocation stands wherever it is */
	if (si.type == SIG_KEY_REVOCATION)
		primary->revoked = TRUE;
}

static vulnid_status
cert_packets(const guint8 *data, gsize len, openpgp_cert **out, GError **err)
{
	g_autoptr(openpgp_cert) cert = g_new0(openpgp_cert, 1);
	key_reader kr = { .cert = cert, .at = AT_PRIMARY };
	rd r = { data, data + len };
	guint count = 0;
	vulnid_status s;

	cert->subkeys = g_ptr_array_new_with_free_func((GDestroyNotify) openpgp_pubkey_free);
	if (len > OPENPGP_KEY_MAX_BYTES)
		return vulnid_fail(err, VULNID_ERR_INVALID, "key longer than %d octets", OPENPGP_KEY_MAX_BYTES);
	while (rd_left(&r) > 0) {
		packet pk;

		if (++count > OPENPGP_KEY_MAX_PACKETS)
			return vulnid_fail(err, VULNID_ERR_INVALID, "key of more than %d packets", OPENPGP_KEY_MAX_PACKETS);
		s = next_packet(&r, &pk, err);
		if (s != VULNID_OK)
			return s;
		if (pk.tag == TAG_SECRET_KEY || pk.tag == TAG_SECRET_SUBKEY)
			return vulnid_fail(err, VULNID_ERR_INVALID, "a secret key, not a public key");
		if (cert->primary == NULL) {
			if (pk.tag != TAG_PUBLIC_KEY)
				return vulnid_fail(err, VULNID_ERR_INVALID, "no public key packet first (tag %u)", pk.tag);
			s = key_read(&pk, &cert->primary, err);
			if (s != VULNID_OK)
				return s;
			continue;
		}
		switch (pk.tag) {
		case TAG_PUBLIC_KEY:
			return vulnid_fail(err, VULNID_ERR_INVALID, "more than one key");
		case TAG_SIGNATURE:
			sig_of_key(&kr, &pk);
			break;
		case TAG_USER_ID:
		case TAG_USER_ATTRIBUTE:
			uid_end(&kr);
			kr.at = pk.tag == TAG_USER_ID ? AT_USER_ID : AT_OTHER;
			break;
		case TAG_PUBLIC_SUBKEY:
			uid_end(&kr);
			if (cert->subkeys->len == OPENPGP_KEY_MAX_SUBKEYS)
				return vulnid_fail(err, VULNID_ERR_INVALID, "key of more than %d subkeys",
						   OPENPGP_KEY_MAX_SUBKEYS);
			s = key_read(&pk, &kr.subkey, err);
			if (s != VULNID_OK)
				return s;
			g_ptr_array_add(cert->subkeys, kr.subkey);
			kr.at = AT_SUBKEY;
			kr.subkey_newest = 0;
			break;
		default:
			/* trust packets, markers, what a later version adds:
			 * they say nothing about encryption */
			break;
		}
	}
	uid_end(&kr);
	if (cert->primary == NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no key");
	*out = g_steal_pointer(&cert);
	return VULNID_OK;
}

vulnid_status
openpgp_cert_parse(const void *data, gsize len, openpgp_cert **out, GError **err)
{
	const char *t = data;
	gsize skip = 0;

	*out = NULL;
	while (skip < len && g_ascii_isspace(t[skip]))
		skip++;
	if (len - skip >= strlen(ARMOR_BEGIN) && memcmp(t + skip, "-----BEGIN PGP ", 15) == 0) {
		g_autoptr(GByteArray) bin = g_byte_array_new();
		vulnid_status s;

		/* base64 is 4 characters for 3 octets, in lines */
		if (len > OPENPGP_KEY_MAX_BYTES / 3 * 4 * 2)
			return vulnid_fail(err, VULNID_ERR_INVALID, "armored key longer than %d octets",
					   OPENPGP_KEY_MAX_BYTES / 3 * 4 * 2);
		s = dearmor(t, len, bin, err);
		if (s != VULNID_OK)
			return s;
		return cert_packets(bin->data, bin->len, out, err);
	}
	return cert_packets(data, len, out, err);
}

/* Whether k may encrypt as its signature says, or by its algorithm when
 * the signature gives no key flags (as gpg decides). */
static gboolean
can_encrypt(const openpgp_pubkey *k)
{
	if (k->has_flags)
		return (k->flags & 0x0c) != 0;
	return k->algo == OPENPGP_PK_RSA || k->algo == OPENPGP_PK_RSA_ENCRYPT || k->algo == OPENPGP_PK_ELGAMAL ||
	       k->algo == OPENPGP_PK_ECDH;
}

static gboolean
usable(const openpgp_pubkey *k, gint64 now)
{
	return k->version == 4 && k->bound && !k->revoked && k->created <= now &&
	       (k->expires == 0 || k->expires > now);
}

const openpgp_pubkey *
openpgp_cert_encryption_key(const openpgp_cert *cert, gint64 now)
{
	const openpgp_pubkey *best = NULL;

	if (!usable(cert->primary, now))
		return NULL;
	for (guint i = 0; i < cert->subkeys->len; i++) {
		const openpgp_pubkey *k = g_ptr_array_index(cert->subkeys, i);

		if (usable(k, now) && can_encrypt(k) && (best == NULL || k->created > best->created))
			best = k;
	}
	if (best == NULL && can_encrypt(cert->primary))
		best = cert->primary;
	return best;
}

/* --- encryption ------------------------------------------------------------------------ */

#define SYM_AES128 7
#define SYM_AES192 8
#define SYM_AES256 9
#define HASH_SHA256 8
#define HASH_SHA384 9
#define HASH_SHA512 10
#define SESSION_KEY_LEN 32	/* AES-256 */
#define SESSION_LEN (1 + SESSION_KEY_LEN + 2)	/* algorithm, key, checksum */
#define AES_BLOCK 16

#define TAG_PKESK 1
#define TAG_COMPRESSED 8
#define TAG_LITERAL 11
#define TAG_SEIPD 18
#define COMPRESS_ZLIB 2
#define TAG_MDC 19

/* Curve25519 in a version 4 ECDH key: OID 1.3.6.1.4.1.3029.1.5.1 */
static const guint8 cv25519_oid[] = { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01 };

/* An MPI of a big-endian value: bit count, octets without leading zeros. */
static void
put_mpi(GByteArray *b, const guint8 *v, gsize len)
{
	guint bits = 0;

	while (len > 0 && *v == 0) {
		v++;
		len--;
	}
	if (len > 0) {
		bits = (guint) (len - 1) * 8;
		for (guint8 top = v[0]; top != 0; top >>= 1)
			bits++;
	}
	openpgp_put16(b, bits);
	g_byte_array_append(b, v, (guint) len);
}

/* The session key as a public-key algorithm carries it (RFC 9580
 * 5.1.3, version 3): the symmetric algorithm, the key, a two-octet sum of
 * its octets. */
static void
session_block(const guint8 *key, guint8 *out)
{
	guint sum = 0;

	out[0] = SYM_AES256;
	memcpy(out + 1, key, SESSION_KEY_LEN);
	for (gsize i = 0; i < SESSION_KEY_LEN; i++)
		sum += key[i];
	out[1 + SESSION_KEY_LEN] = (guint8) (sum >> 8);
	out[2 + SESSION_KEY_LEN] = (guint8) sum;
}

/* RFC 3394 key wrap of in (a multiple of 8 octets) with kek. */
static vulnid_status
aes_wrap(const guint8 *kek, gsize kek_len, const guint8 *in, gsize len, guint8 *out, GError **err)
{
	const EVP_CIPHER *c = kek_len == 16 ? lc.EVP_aes_128_wrap() : kek_len == 24 ? lc.EVP_aes_192_wrap()
										 : lc.EVP_aes_256_wrap();
	EVP_CIPHER_CTX *ctx = lc.EVP_CIPHER_CTX_new();
	int n = 0, fin = 0;
	gboolean ok;

	if (ctx == NULL)
		return lc_fail(err, VULNID_ERR_NOMEM, "cannot wrap the session key");
	lc.EVP_CIPHER_CTX_set_flags(ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	ok = lc.EVP_EncryptInit_ex(ctx, c, NULL, kek, NULL) == 1 &&
	     lc.EVP_EncryptUpdate(ctx, out, &n, in, (int) len) == 1 &&
	     lc.EVP_EncryptFinal_ex(ctx, out + n, &fin) == 1 && (gsize) (n + fin) == len + 8;
	lc.EVP_CIPHER_CTX_free(ctx);
	return ok ? VULNID_OK : lc_fail(err, VULNID_ERR_INTERNAL, "cannot wrap the session key");
}

/* X25519 of a new ephemeral key with the recipient's point: the
 * ephemeral public key and the shared secret. */
static vulnid_status
x25519(const guint8 *peer, guint8 *eph_pub, guint8 *shared, GError **err)
{
	guint8 secret[32];
	EVP_PKEY *mine = NULL, *theirs = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	size_t pub_len = 32, shared_len = 32;
	vulnid_status s = VULNID_OK;

	if (!random_bytes(secret, sizeof secret, err))
		return VULNID_ERR_TEMP;
	mine = lc.EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, secret, sizeof secret);
	explicit_bzero(secret, sizeof secret);
	theirs = lc.EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer, 32);
	if (mine == NULL || theirs == NULL || lc.EVP_PKEY_get_raw_public_key(mine, eph_pub, &pub_len) != 1 ||
	    pub_len != 32 || (ctx = lc.EVP_PKEY_CTX_new(mine, NULL)) == NULL)
		s = lc_fail(err, VULNID_ERR_INTERNAL, "cannot make an X25519 key");
	else if (lc.EVP_PKEY_derive_init(ctx) != 1 || lc.EVP_PKEY_derive_set_peer(ctx, theirs) != 1 ||
		 lc.EVP_PKEY_derive(ctx, shared, &shared_len) != 1 || shared_len != 32)
		/* OpenSSL refuses a point of small order (an all-zero secret) */
		s = lc_fail(err, VULNID_ERR_INVALID, "the key's Curve25519 point is not usable");
	lc.EVP_PKEY_CTX_free(ctx);
	lc.EVP_PKEY_free(mine);
	lc.EVP_PKEY_free(theirs);
	return s;
}

/* The session key for an ECDH key on Curve25519 (RFC 6637 sections 7
 * and 8, RFC 9580 11.5): X25519 with an ephemeral key, the KDF over the
 * shared secret and the key's parameters, the padded session block
 * wrapped with the key-encryption key it gives. */
static vulnid_status
pkesk_ecdh(const openpgp_pubkey *key, rd *m, const guint8 *session, GByteArray *out, GError **err)
{
	static const char sender[] = "Anonymous Sender    ";
	guint8 oid_len, kdf_len, reserved, hash_id, kek_id;
	const guint8 *oid, *point;
	gsize point_len, kek_len, digest_len = 64;
	GChecksumType hash;
	guint8 eph_pub[33], shared[32], digest[64], padded[40], wrapped[48];
	g_autoptr(GChecksum) kdf = NULL;
	g_autoptr(GByteArray) param = g_byte_array_new();
	vulnid_status s;

	if (!rd_u8(m, &oid_len) || oid_len == 0 || oid_len == 0xff || !rd_bytes(m, oid_len, &oid))
		return vulnid_fail(err, VULNID_ERR_INVALID, "ECDH key without a curve");
	if (oid_len != sizeof cv25519_oid || memcmp(oid, cv25519_oid, oid_len) != 0)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "ECDH on a curve other than Curve25519");
	if (!rd_mpi(m, &point, &point_len) || !rd_u8(m, &kdf_len) || kdf_len != 3 || !rd_u8(m, &reserved) ||
	    reserved != 1 || !rd_u8(m, &hash_id) || !rd_u8(m, &kek_id))
		return vulnid_fail(err, VULNID_ERR_INVALID, "ECDH key material malformed");
	if (point_len != 33 || point[0] != 0x40)
		return vulnid_fail(err, VULNID_ERR_INVALID, "Curve25519 point not in the native form");
	switch (hash_id) {
	case HASH_SHA256: hash = G_CHECKSUM_SHA256; break;
	case HASH_SHA384: hash = G_CHECKSUM_SHA384; break;
	case HASH_SHA512: hash = G_CHECKSUM_SHA512; break;
	default: return vulnid_fail(err, VULNID_ERR_NOTFOUND, "ECDH KDF hash %u", hash_id);
	}
	switch (kek_id) {
	case SYM_AES128: kek_len = 16; break;
	case SYM_AES192: kek_len = 24; break;
	case SYM_AES256: kek_len = 32; break;
	default: return vulnid_fail(err, VULNID_ERR_NOTFOUND, "ECDH key wrap algorithm %u", kek_id);
	}
	eph_pub[0] = 0x40;
	s = x25519(point + 1, eph_pub + 1, shared, err);
	if (s != VULNID_OK)
		return s;
	/* Param: the curve, the algorithm, the KDF parameters, the sender
	 * (anonymous), the recipient's fingerprint */
	openpgp_put8(param, oid_len);
	g_byte_array_append(param, oid, oid_len);
	openpgp_put8(param, OPENPGP_PK_ECDH);
	openpgp_put8(param, 3);
	openpgp_put8(param, 1);
	openpgp_put8(param, hash_id);
	openpgp_put8(param, kek_id);
	g_byte_array_append(param, (const guint8 *) sender, 20);
	g_byte_array_append(param, key->fpr, 20);
	kdf = g_checksum_new(hash);
	g_checksum_update(kdf, (const guint8 *) "\0\0\0\1", 4);
	g_checksum_update(kdf, shared, sizeof shared);
	g_checksum_update(kdf, param->data, param->len);
	g_checksum_get_digest(kdf, digest, &digest_len);
	explicit_bzero(shared, sizeof shared);
	/* PKCS#5 padding to a multiple of 8: 35 octets and five 0x05 */
	memcpy(padded, session, SESSION_LEN);
	memset(padded + SESSION_LEN, sizeof padded - SESSION_LEN, sizeof padded - SESSION_LEN);
	s = aes_wrap(digest, kek_len, padded, sizeof padded, wrapped, err);
	explicit_bzero(digest, sizeof digest);
	explicit_bzero(padded, sizeof padded);
	if (s != VULNID_OK)
		return s;
	put_mpi(out, eph_pub, sizeof eph_pub);
	openpgp_put8(out, sizeof wrapped);
	g_byte_array_append(out, wrapped, sizeof wrapped);
	return VULNID_OK;
}

#define RSA_MIN_BITS 1024
#define RSA_MAX_BITS 16384

/* The session key for an RSA key: EME-PKCS1-v1_5 (RFC 8017 7.2.1) with
 * padding from the kernel's random source, then the bare RSA operation. */
static vulnid_status
pkesk_rsa(rd *m, const guint8 *session, GByteArray *out, GError **err)
{
	const guint8 *n, *e;
	gsize n_len, e_len, ps_len;
	g_autofree guint8 *em = NULL, *c = NULL;
	size_t c_len;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	BIGNUM *bn_n = NULL, *bn_e = NULL;
	EVP_PKEY_CTX *pctx = NULL, *ectx = NULL;
	EVP_PKEY *pkey = NULL;
	vulnid_status s = VULNID_OK;

	if (!rd_mpi(m, &n, &n_len) || !rd_mpi(m, &e, &e_len))
		return vulnid_fail(err, VULNID_ERR_INVALID, "RSA key material malformed");
	if (n_len * 8 < RSA_MIN_BITS || n_len * 8 > RSA_MAX_BITS)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "RSA key of %zu bits", n_len * 8);
	/* an even modulus or an exponent of 1 (the session key in clear)
	 * is no key; an exponent over 64 bits none that gpg makes */
	if (!(n[n_len - 1] & 1) || e_len == 0 || e_len > 8 || !(e[e_len - 1] & 1) || (e_len == 1 && e[0] == 1))
		return vulnid_fail(err, VULNID_ERR_INVALID, "RSA key with a modulus or exponent no key has");
	/* 0x00 0x02, nonzero random octets, 0x00, the session block */
	em = g_malloc(n_len);
	ps_len = n_len - 3 - SESSION_LEN;
	em[0] = 0;
	em[1] = 2;
	if (!random_bytes(em + 2, ps_len, err))
		return VULNID_ERR_TEMP;
	for (gsize i = 0; i < ps_len; i++)
		while (em[2 + i] == 0)
			if (!random_bytes(em + 2 + i, 1, err)) {
				explicit_bzero(em, n_len);
				return VULNID_ERR_TEMP;
			}
	em[2 + ps_len] = 0;
	memcpy(em + 3 + ps_len, session, SESSION_LEN);
	c = g_malloc(n_len);
	c_len = n_len;
	if ((bld = lc.OSSL_PARAM_BLD_new()) == NULL || (bn_n = lc.BN_bin2bn(n, (int) n_len, NULL)) == NULL ||
	    (bn_e = lc.BN_bin2bn(e, (int) e_len, NULL)) == NULL ||
	    lc.OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) != 1 ||
	    lc.OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) != 1 ||
	    (params = lc.OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (pctx = lc.EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) == NULL ||
	    lc.EVP_PKEY_fromdata_init(pctx) != 1 || lc.EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1 ||
	    (ectx = lc.EVP_PKEY_CTX_new(pkey, NULL)) == NULL || lc.EVP_PKEY_encrypt_init(ectx) != 1 ||
	    lc.EVP_PKEY_CTX_set_rsa_padding(ectx, RSA_NO_PADDING) != 1 ||
	    lc.EVP_PKEY_encrypt(ectx, c, &c_len, em, n_len) != 1 || c_len != n_len)
		s = lc_fail(err, VULNID_ERR_INVALID, "cannot encrypt to the RSA key");
	explicit_bzero(em, n_len);
	lc.EVP_PKEY_CTX_free(ectx);
	lc.EVP_PKEY_free(pkey);
	lc.EVP_PKEY_CTX_free(pctx);
	lc.OSSL_PARAM_free(params);
	lc.BN_free(bn_n);
	lc.BN_free(bn_e);
	lc.OSSL_PARAM_BLD_free(bld);
	if (s == VULNID_OK)
		put_mpi(out, c, c_len);
	return s;
}

/* The public-key encrypted session key packet, version 3 (5.1). */
static vulnid_status
pkesk(const openpgp_pubkey *key, const guint8 *session, GByteArray *out, GError **err)
{
	gsize len;
	const guint8 *body = g_bytes_get_data(key->body, &len);
	rd m = { body + 6, body + len };	/* version, time, algorithm */
	g_autoptr(GByteArray) p = g_byte_array_new();
	vulnid_status s;

	openpgp_put8(p, 3);
	g_byte_array_append(p, key->keyid, 8);
	openpgp_put8(p, key->algo);
	if (key->algo == OPENPGP_PK_ECDH)
		s = pkesk_ecdh(key, &m, session, p, err);
	else
		s = pkesk_rsa(&m, session, p, err);
	if (s != VULNID_OK)
		return s;
	openpgp_put_header(out, TAG_PKESK, p->len);
	g_byte_array_append(out, p->data, p->len);
	return VULNID_OK;
}

/* AES-256 in CFB mode, zero IV, in place: how a version 1 SEIPD packet
 * is encrypted (RFC 9580 5.13.1: no resynchronisation after the prefix). */
static vulnid_status
aes256_cfb(const guint8 *key, guint8 *buf, gsize len, GError **err)
{
	static const guint8 iv[AES_BLOCK] = { 0 };
	EVP_CIPHER_CTX *ctx = lc.EVP_CIPHER_CTX_new();
	gboolean ok;
	int n, fin = 0;

	if (ctx == NULL)
		return lc_fail(err, VULNID_ERR_NOMEM, "cannot encrypt");
	ok = lc.EVP_EncryptInit_ex(ctx, lc.EVP_aes_256_cfb128(), NULL, key, iv) == 1;
	for (gsize off = 0; ok && off < len; off += (gsize) n) {
		int chunk = (int) MIN(len - off, 1 << 20);

		ok = lc.EVP_EncryptUpdate(ctx, buf + off, &n, buf + off, chunk) == 1 && n == chunk;
	}
	ok = ok && lc.EVP_EncryptFinal_ex(ctx, buf + len, &fin) == 1 && fin == 0;
	lc.EVP_CIPHER_CTX_free(ctx);
	return ok ? VULNID_OK : lc_fail(err, VULNID_ERR_INTERNAL, "cannot encrypt");
}

/* Literal data (5.9): binary, no file name, date 0. */
static GByteArray *
literal_packet(const void *data, gsize len)
{
	GByteArray *p = g_byte_array_sized_new((guint) (len + 12));

	openpgp_put_header(p, TAG_LITERAL, 6 + len);
	openpgp_put8(p, 'b');
	openpgp_put8(p, 0);
	openpgp_put32(p, 0);
	g_byte_array_append(p, data, (guint) len);
	return p;
}

/* The packet compressed (5.6, ZLIB, which gpg and Sequoia read), as gpg
 * does by default: sealed mail is text, and stays for ever.  NULL when
 * it would not be smaller. */
static GByteArray *
compressed_packet(const GByteArray *lit)
{
	g_autoptr(GZlibCompressor) z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_ZLIB, 6);
	g_autoptr(GByteArray) out = g_byte_array_sized_new(lit->len / 2 + 64);
	gsize in_off = 0;

	for (;;) {
		guint8 buf[65536];
		gsize read = 0, written = 0;
		GConverterResult r = g_converter_convert(G_CONVERTER(z), lit->data + in_off, lit->len - in_off,
							 buf, sizeof buf, G_CONVERTER_INPUT_AT_END, &read,
							 &written, NULL);

		if (r == G_CONVERTER_ERROR)
			return NULL;
		in_off += read;
		g_byte_array_append(out, buf, (guint) written);
		if (out->len + 8 >= lit->len)
			return NULL;	/* no gain */
		if (r == G_CONVERTER_FINISHED)
			break;
	}
	{
		GByteArray *p = g_byte_array_sized_new(out->len + 8);

		openpgp_put_header(p, TAG_COMPRESSED, 1 + out->len);
		openpgp_put8(p, COMPRESS_ZLIB);
		g_byte_array_append(p, out->data, out->len);
		return p;
	}
}

/* The most encrypted here, in memory, with one-packet lengths (a
 * four-octet length holds 4 GiB); sealed content is mail within the
 * size limits, far less. */
#define ENCRYPT_MAX (1024 * 1024 * 1024)

vulnid_status
openpgp_encrypt(const openpgp_pubkey *key, const void *data, gsize len, char **armored, GError **err)
{
	guint8 session_key[SESSION_KEY_LEN], session[SESSION_LEN], prefix[AES_BLOCK + 2], mdc[20];
	gsize inner, start, mdc_len = sizeof mdc;
	g_autoptr(GByteArray) msg = NULL;
	g_autoptr(GByteArray) literal = NULL;
	g_autoptr(GByteArray) compressed = NULL;
	const GByteArray *payload;
	g_autoptr(GChecksum) sha1 = NULL;
	vulnid_status s;

	*armored = NULL;
	if (key->version != 4 || (key->algo != OPENPGP_PK_ECDH && key->algo != OPENPGP_PK_RSA &&
				  key->algo != OPENPGP_PK_RSA_ENCRYPT))
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "encryption to a version %u key of algorithm %u "
				   "is not built in", key->version, key->algo);
	if (g_bytes_get_size(key->body) < 6)
		return vulnid_fail(err, VULNID_ERR_INVALID, "key packet cut short");
	if (len > ENCRYPT_MAX)
		return vulnid_fail(err, VULNID_ERR_INVALID, "%zu octets are too many to encrypt here", len);
	s = lc_load(err);
	if (s != VULNID_OK)
		return s;
	if (!random_bytes(session_key, sizeof session_key, err) || !random_bytes(prefix, AES_BLOCK, err))
		return VULNID_ERR_TEMP;
	session_block(session_key, session);
	literal = literal_packet(data, len);
	compressed = compressed_packet(literal);
	payload = compressed != NULL ? compressed : literal;
	/* the payload, the prefix and the MDC packet: one allocation,
	 * encrypted in place */
	inner = sizeof prefix + payload->len + 2 + sizeof mdc;
	msg = g_byte_array_sized_new((guint) (inner + 64 + RSA_MAX_BITS / 8));
	s = pkesk(key, session, msg, err);
	explicit_bzero(session, sizeof session);
	if (s != VULNID_OK) {
		explicit_bzero(session_key, sizeof session_key);
		return s;
	}
	openpgp_put_header(msg, TAG_SEIPD, 1 + inner);
	openpgp_put8(msg, 1);		/* version */
	start = msg->len;
	/* random octets, their last two repeated (5.13.1) */
	prefix[AES_BLOCK] = prefix[AES_BLOCK - 2];
	prefix[AES_BLOCK + 1] = prefix[AES_BLOCK - 1];
	g_byte_array_append(msg, prefix, sizeof prefix);
	g_byte_array_append(msg, payload->data, payload->len);
	/* the MDC covers the prefix, the plaintext and its own header */
	openpgp_put8(msg, 0xc0 | TAG_MDC);
	openpgp_put8(msg, sizeof mdc);
	sha1 = g_checksum_new(G_CHECKSUM_SHA1);
	g_checksum_update(sha1, msg->data + start, (gssize) (msg->len - start));
	g_checksum_get_digest(sha1, mdc, &mdc_len);
	g_byte_array_append(msg, mdc, sizeof mdc);
	g_assert(msg->len - start == inner);
	s = aes256_cfb(session_key, msg->data + start, inner, err);
	explicit_bzero(session_key, sizeof session_key);
	/* what was clear in these copies goes with them */
	explicit_bzero(literal->data, literal->len);
	if (compressed != NULL)
		explicit_bzero(compressed->data, compressed->len);
	if (s != VULNID_OK) {
		explicit_bzero(msg->data, msg->len);
		return s;
	}
	*armored = openpgp_armor("MESSAGE", msg->data, msg->len);
	return VULNID_OK;
}
