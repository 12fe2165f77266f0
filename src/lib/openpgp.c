/* openpgp.c - version 4 signature packets, their armor, the cleartext
 * framework, and the conversation with gpg-agent that signs them */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <assuan.h>
#include <gpgme.h>

#include "openpgp.h"

#define SUBPKT_CREATED 2
#define SUBPKT_ISSUER_KEYID 16
#define SUBPKT_ISSUER_FPR 33

static gboolean
hex_to_bytes(const char *hex, guint8 *out, gsize n)
{
	if (hex == NULL || strlen(hex) != 2 * n)
		return FALSE;
	for (gsize i = 0; i < n; i++) {
		int hi = g_ascii_xdigit_value(hex[2 * i]), lo = g_ascii_xdigit_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return FALSE;
		out[i] = (guint8) (hi << 4 | lo);
	}
	return TRUE;
}

gboolean
openpgp_key_init(openpgp_key *key, guint8 algo, guint bits, const char *fpr, const char *keygrip)
{
	guint8 grip[20];

	memset(key, 0, sizeof *key);
	if ((algo != OPENPGP_PK_RSA && algo != OPENPGP_PK_EDDSA) || bits == 0 || bits > 16384 ||
	    !hex_to_bytes(fpr, key->fpr, sizeof key->fpr) || !hex_to_bytes(keygrip, grip, sizeof grip))
		return FALSE;
	key->algo = algo;
	key->bits = bits;
	for (gsize i = 0; i < 40; i++)
		key->keygrip[i] = g_ascii_toupper(keygrip[i]);
	return TRUE;
}

struct openpgp_sig {
	openpgp_key key;
	GByteArray *hashed;	/* version up to the end of the hashed subpackets */
	GChecksum *hash;
	guint8 digest[OPENPGP_DIGEST_LEN];
	gboolean finished;
};

void
openpgp_put16(GByteArray *b, guint v)
{
	guint8 x[2] = { (guint8) (v >> 8), (guint8) v };

	g_byte_array_append(b, x, 2);
}

void
openpgp_put32(GByteArray *b, guint32 v)
{
	guint8 x[4] = { (guint8) (v >> 24), (guint8) (v >> 16), (guint8) (v >> 8), (guint8) v };

	g_byte_array_append(b, x, 4);
}

void
openpgp_put8(GByteArray *b, guint8 v)
{
	g_byte_array_append(b, &v, 1);
}

openpgp_sig *
openpgp_sig_new(const openpgp_key *key, guint8 type, gint64 created)
{
	openpgp_sig *sig = g_new0(openpgp_sig, 1);
	GByteArray *b = g_byte_array_new();

	sig->key = *key;
	openpgp_put8(b, 4);		/* version */
	openpgp_put8(b, type);
	openpgp_put8(b, key->algo);
	openpgp_put8(b, OPENPGP_HASH_SHA256);
	openpgp_put16(b, 6 + 23);	/* the two subpackets below */
	/* signature creation time (RFC 9580 5.2.3.11) */
	openpgp_put8(b, 5);
	openpgp_put8(b, SUBPKT_CREATED);
	openpgp_put32(b, (guint32) CLAMP(created, 0, G_MAXUINT32));
	/* issuer fingerprint (5.2.3.35): version 4 key */
	openpgp_put8(b, 22);
	openpgp_put8(b, SUBPKT_ISSUER_FPR);
	openpgp_put8(b, 4);
	g_byte_array_append(b, key->fpr, sizeof key->fpr);
	sig->hashed = b;
	sig->hash = g_checksum_new(G_CHECKSUM_SHA256);
	return sig;
}

void
openpgp_sig_update(openpgp_sig *sig, const void *data, gsize len)
{
	g_return_if_fail(!sig->finished);
	g_checksum_update(sig->hash, data, (gssize) len);
}

const guint8 *
openpgp_sig_digest(openpgp_sig *sig)
{
	if (!sig->finished) {
		g_autoptr(GByteArray) trailer = g_byte_array_new();
		gsize n = sizeof sig->digest;

		/* the hashed part, then the version 4 trailer (5.2.4) */
		g_checksum_update(sig->hash, sig->hashed->data, sig->hashed->len);
		openpgp_put8(trailer, 4);
		openpgp_put8(trailer, 0xff);
		openpgp_put32(trailer, sig->hashed->len);
		g_checksum_update(sig->hash, trailer->data, trailer->len);
		g_checksum_get_digest(sig->hash, sig->digest, &n);
		sig->finished = TRUE;
	}
	return sig->digest;
}

void
openpgp_sig_free(openpgp_sig *sig)
{
	if (sig == NULL)
		return;
	g_byte_array_unref(sig->hashed);
	g_checksum_free(sig->hash);
	g_free(sig);
}

/* --- what PKSIGN returns: a canonical S-expression ----------------------------- */

/* A node: an atom (bytes) or a list of nodes.  The parser accepts
 * canonical S-expressions only (length-prefixed atoms, no display hints,
 * no white space), a few levels deep, and all of the input. */
typedef struct sx {
	const guint8 *data;	/* atom; NULL for a list */
	gsize len;
	GPtrArray *items;	/* list: struct sx *, owned by the parser */
} sx;

typedef struct {
	const guint8 *p, *end;
	GPtrArray *all;		/* every node, to free */
} sx_parser;

#define SX_MAX_DEPTH 6
#define SX_MAX_ITEMS 8

static void
sx_free(sx *n)
{
	if (n->items != NULL)
		g_ptr_array_unref(n->items);
	g_free(n);
}

static sx *
sx_node(sx_parser *ps, gboolean list)
{
	sx *n = g_new0(sx, 1);

	if (list)
		n->items = g_ptr_array_new();
	g_ptr_array_add(ps->all, n);
	return n;
}

static sx *
sx_parse(sx_parser *ps, int depth)
{
	const guint8 *start;
	gsize len = 0;
	sx *n;

	if (ps->p >= ps->end || depth > SX_MAX_DEPTH)
		return NULL;
	if (*ps->p == '(') {
		n = sx_node(ps, TRUE);
		ps->p++;
		while (ps->p < ps->end && *ps->p != ')') {
			sx *c = sx_parse(ps, depth + 1);

			if (c == NULL || n->items->len == SX_MAX_ITEMS)
				return NULL;
			g_ptr_array_add(n->items, c);
		}
		if (ps->p >= ps->end)
			return NULL;
		ps->p++;
		return n;
	}
	start = ps->p;
	while (ps->p < ps->end && g_ascii_isdigit(*ps->p) && ps->p - start < 6)
		len = len * 10 + (gsize) (*ps->p++ - '0');
	if (ps->p == start || ps->p >= ps->end || *ps->p != ':' || (*start == '0' && ps->p - start > 1))
		return NULL;
	ps->p++;
	if ((gsize) (ps->end - ps->p) < len)
		return NULL;
	n = sx_node(ps, FALSE);
	n->data = ps->p;
	n->len = len;
	ps->p += len;
	return n;
}

static gboolean
sx_is(const sx *n, const char *name)
{
	return n->data != NULL && n->len == strlen(name) && memcmp(n->data, name, n->len) == 0;
}

/* The algorithm list of (sig-val(ALGO (NAME VALUE)...)): ALGO must be
 * algo, and its parameters exactly names[], each once, in any order;
 * values[i] is the atom of names[i]. */
static gboolean
sx_sig_val(const sx *root, const char *algo, const char *const *names, const sx **values, guint n)
{
	const sx *alg;

	if (root->items == NULL || root->items->len != 2 || !sx_is(g_ptr_array_index(root->items, 0), "sig-val"))
		return FALSE;
	alg = g_ptr_array_index(root->items, 1);
	if (alg->items == NULL || alg->items->len != n + 1 || !sx_is(g_ptr_array_index(alg->items, 0), algo))
		return FALSE;
	memset(values, 0, n * sizeof *values);
	for (guint i = 1; i < alg->items->len; i++) {
		const sx *p = g_ptr_array_index(alg->items, i);
		guint j;

		if (p->items == NULL || p->items->len != 2)
			return FALSE;
		for (j = 0; j < n && !sx_is(g_ptr_array_index(p->items, 0), names[j]); j++)
			;
		if (j == n || values[j] != NULL || ((const sx *) g_ptr_array_index(p->items, 1))->data == NULL)
			return FALSE;
		values[j] = g_ptr_array_index(p->items, 1);
	}
	return TRUE;
}

/* An MPI (RFC 9580 3.2): the bit count, then the value without leading
 * zero octets.  The agent may hand a value with leading zeros (an EdDSA
 * r or s is 32 octets whatever its value); they are not part of an MPI. */
static gboolean
put_mpi(GByteArray *b, const sx *atom, guint max_bits)
{
	const guint8 *v = atom->data;
	gsize len = atom->len;
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
	if (bits > max_bits)
		return FALSE;
	openpgp_put16(b, bits);
	g_byte_array_append(b, v, (guint) len);
	return TRUE;
}

/* The signature's MPIs from the agent's answer, for the key's algorithm. */
static vulnid_status
sig_mpis(const openpgp_key *key, const void *sexp, gsize len, GByteArray *out, GError **err)
{
	static const char *const eddsa[] = { "r", "s" }, *const rsa[] = { "s" };
	sx_parser ps = { sexp, (const guint8 *) sexp + len, g_ptr_array_new_with_free_func((GDestroyNotify) sx_free) };
	const sx *values[2];
	sx *root = sx_parse(&ps, 0);
	gboolean ok;

	if (root == NULL || ps.p != ps.end)
		ok = FALSE;
	else if (key->algo == OPENPGP_PK_EDDSA)
		ok = sx_sig_val(root, "eddsa", eddsa, values, 2) &&
		     put_mpi(out, values[0], 256) && put_mpi(out, values[1], 256);
	else
		ok = sx_sig_val(root, "rsa", rsa, values, 1) && put_mpi(out, values[0], key->bits);
	g_ptr_array_unref(ps.all);
	if (!ok)
		return vulnid_fail(err, VULNID_ERR_INVALID, "gpg-agent returned no %s signature of this key",
				   key->algo == OPENPGP_PK_EDDSA ? "EdDSA" : "RSA");
	return VULNID_OK;
}

/* A packet in the OpenPGP (new) format: tag, then the length (4.2.1). */
void
openpgp_put_header(GByteArray *b, guint8 tag, gsize len)
{
	openpgp_put8(b, 0xc0 | tag);
	if (len < 192)
		openpgp_put8(b, (guint8) len);
	else if (len < 8384) {
		openpgp_put8(b, (guint8) (((len - 192) >> 8) + 192));
		openpgp_put8(b, (guint8) (len - 192));
	} else {
		openpgp_put8(b, 0xff);
		openpgp_put32(b, (guint32) len);
	}
}

vulnid_status
openpgp_sig_finish(openpgp_sig *sig, const void *sexp, gsize len, GBytes **packet, GError **err)
{
	g_autoptr(GByteArray) body = g_byte_array_new();
	g_autoptr(GByteArray) mpis = g_byte_array_new();
	GByteArray *pkt;
	const guint8 *digest = openpgp_sig_digest(sig);
	vulnid_status s;

	s = sig_mpis(&sig->key, sexp, len, mpis, err);
	if (s != VULNID_OK)
		return s;
	g_byte_array_append(body, sig->hashed->data, sig->hashed->len);
	/* unhashed: the issuer key ID (5.2.3.12), for older verifiers */
	openpgp_put16(body, 10);
	openpgp_put8(body, 9);
	openpgp_put8(body, SUBPKT_ISSUER_KEYID);
	g_byte_array_append(body, sig->key.fpr + 12, 8);
	/* the left 16 bits of the digest, then the signature */
	g_byte_array_append(body, digest, 2);
	g_byte_array_append(body, mpis->data, mpis->len);
	pkt = g_byte_array_sized_new(body->len + 6);
	openpgp_put_header(pkt, 2, body->len);
	g_byte_array_append(pkt, body->data, body->len);
	*packet = g_byte_array_free_to_bytes(pkt);
	return VULNID_OK;
}

/* --- armor ------------------------------------------------------------------------ */

/* A table of the CRC of every octet, made once: a sealed raw mail runs
 * to megabytes, eight shifts an octet would be most of its cost. */
static guint32 crc24_table[256];

static gpointer
crc24_table_init(gpointer unused)
{
	for (guint32 i = 0; i < 256; i++) {
		guint32 crc = i << 16;

		for (int b = 0; b < 8; b++) {
			crc <<= 1;
			if (crc & 0x1000000)
				crc ^= 0x1864cfb;
		}
		crc24_table[i] = crc & 0xffffff;
	}
	return NULL;
}

guint32
openpgp_crc24(const guint8 *data, gsize len)
{
	static GOnce once = G_ONCE_INIT;
	guint32 crc = 0xb704ce;

	g_once(&once, crc24_table_init, NULL);
	for (gsize i = 0; i < len; i++)
		crc = ((crc << 8) ^ crc24_table[((crc >> 16) ^ data[i]) & 0xff]) & 0xffffff;
	return crc;
}

char *
openpgp_armor(const char *what, const void *data, gsize len)
{
	g_autofree char *b64 = g_base64_encode(data, len);
	guint32 crc = openpgp_crc24(data, len);
	guint8 c[3] = { (guint8) (crc >> 16), (guint8) (crc >> 8), (guint8) crc };
	g_autofree char *crc64 = g_base64_encode(c, 3);
	gsize n = strlen(b64);
	GString *out = g_string_sized_new(n + n / 64 + 128);

	g_string_append_printf(out, "-----BEGIN PGP %s-----\n\n", what);
	for (gsize i = 0; i < n; i += 64) {
		g_string_append_len(out, b64 + i, (gssize) MIN(64, n - i));
		g_string_append_c(out, '\n');
	}
	g_string_append_printf(out, "=%s\n-----END PGP %s-----\n", crc64, what);
	return g_string_free(out, FALSE);
}

char *
openpgp_armor_signature(GBytes *packet)
{
	gsize n;
	const guint8 *p = g_bytes_get_data(packet, &n);

	return openpgp_armor("SIGNATURE", p, n);
}

/* --- the cleartext signature framework ---------------------------------------------- */

void
openpgp_cleartext(const char *text, GString *shown, GString *canonical)
{
	const char *p = text;

	while (*p != '\0') {
		const char *e = p + strcspn(p, "\r\n");
		const char *t = e;

		while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (shown != NULL) {
			/* 7.2: "-" must be escaped, "From " should be (mbox);
			 * trailing blanks stay, as gpg leaves them: not signed,
			 * but a "-- " signature separator keeps its space */
			if (*p == '-' || strncmp(p, "From ", 5) == 0)
				g_string_append(shown, "- ");
			g_string_append_len(shown, p, e - p);
			g_string_append_c(shown, '\n');
		}
		if (canonical != NULL) {
			if (p != text)
				g_string_append(canonical, "\r\n");
			g_string_append_len(canonical, p, t - p);
		}
		if (e[0] == '\r' && e[1] == '\n')
			e += 2;
		else if (e[0] != '\0')
			e++;
		p = e;
	}
	/* no text at all: one empty line, whose end is the frame's */
	if (shown != NULL && *text == '\0')
		g_string_append_c(shown, '\n');
}

char *
openpgp_cleartext_message(const char *shown, const char *armored_signature)
{
	return g_strconcat("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n", shown,
			   armored_signature, NULL);
}

/* --- gpg-agent --------------------------------------------------------------------- */

struct openpgp_agent {
	assuan_context_t ctx;
};

#define AGENT_MAX_ANSWER 16384

static vulnid_status
agent_fail(GError **err, gpg_error_t e, const char *what)
{
	char buf[256];

	gpgme_strerror_r(e, buf, sizeof buf);
	return vulnid_fail(err, VULNID_ERR_TEMP, "gpg-agent: %s: %s", what, buf);
}

static gpg_error_t
agent_data(void *arg, const void *data, size_t len)
{
	GByteArray *b = arg;

	if (b->len + len > AGENT_MAX_ANSWER)
		return gpg_error(GPG_ERR_TOO_LARGE);
	g_byte_array_append(b, data, (guint) len);
	return 0;
}

static vulnid_status
agent_command(openpgp_agent *a, const char *cmd, GByteArray *data, GError **err)
{
	/* no inquiry is answered: whatever the agent would ask for (a
	 * passphrase, a smart card) fails the command instead of waiting */
	gpg_error_t e = assuan_transact(a->ctx, cmd, data != NULL ? agent_data : NULL, data,
					NULL, NULL, NULL, NULL);
	g_autofree char *what = g_strndup(cmd, strcspn(cmd, " "));

	return e != 0 ? agent_fail(err, e, what) : VULNID_OK;
}

vulnid_status
openpgp_agent_connect(const char *socket_path, openpgp_agent **out, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	g_autoptr(openpgp_agent) a = g_new0(openpgp_agent, 1);
	gpg_error_t e;
	vulnid_status s;
	int fd;

	if (strlen(socket_path) >= sizeof sa.sun_path)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "gpg-agent's socket path is too long: '%s'", socket_path);
	memcpy(sa.sun_path, socket_path, strlen(socket_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot connect to gpg-agent: %s", g_strerror(errno));
	if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
		int errnum = errno;

		close(fd);
		return vulnid_fail(err, errnum == ENOENT || errnum == ECONNREFUSED ? VULNID_ERR_NOTFOUND : VULNID_ERR_TEMP,
				   "cannot connect to gpg-agent at '%s': %s", socket_path, g_strerror(errnum));
	}
	e = assuan_new(&a->ctx);
	if (e != 0) {
		close(fd);
		return agent_fail(err, e, "connect");
	}
	assuan_set_flag(a->ctx, ASSUAN_NO_LOGGING, 1);
	/* the context owns fd from here, and reads the agent's greeting */
	e = assuan_socket_connect_fd(a->ctx, fd, 0);
	if (e != 0)
		return agent_fail(err, e, "connect");
	/* A key with a passphrase fails at once instead of asking for it:
	 * nobody is there to type it. */
	s = agent_command(a, "OPTION pinentry-mode=cancel", NULL, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&a);
	return s;
}

vulnid_status
openpgp_agent_pksign(openpgp_agent *a, const char *keygrip, const guint8 *digest, GBytes **sexp,
		     GError **err)
{
	g_autofree char *sigkey = g_strdup_printf("SIGKEY %s", keygrip);
	g_autoptr(GString) sethash = g_string_new("SETHASH --hash=sha256 ");
	g_autoptr(GByteArray) answer = g_byte_array_new();
	vulnid_status s;

	for (gsize i = 0; i < OPENPGP_DIGEST_LEN; i++)
		g_string_append_printf(sethash, "%02X", digest[i]);
	s = agent_command(a, sigkey, NULL, err);
	if (s == VULNID_OK)
		s = agent_command(a, sethash->str, NULL, err);
	if (s == VULNID_OK)
		s = agent_command(a, "PKSIGN", answer, err);
	if (s == VULNID_OK)
		*sexp = g_byte_array_free_to_bytes(g_steal_pointer(&answer));
	return s;
}

void
openpgp_agent_free(openpgp_agent *a)
{
	if (a == NULL)
		return;
	if (a->ctx != NULL)
		assuan_release(a->ctx);
	g_free(a);
}
