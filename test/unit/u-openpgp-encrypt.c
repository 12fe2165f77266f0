/* u-openpgp-encrypt.c - src/lib/openpgp-encrypt.c: messages encrypted to
 * keys that gpg made (Curve25519 ECDH as `vulnid init` makes it, RSA 3072
 * as `vulnid init --key-algo rsa3072` makes it, RSA 2048, a key with
 * several encryption subkeys of which one expired and one revoked) must
 * decrypt to the same bytes with gpg and with Sequoia's sq; the subkey
 * chosen must be the one gpg itself encrypts to; keys of other kinds are
 * refused so that gpg encrypts; hostile keys (cut short, lengths past the
 * end, partial lengths, too many packets) are refused in bounded time. */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "openpgp.h"
#include "openpgp-encrypt.h"

static char *tmpdir;
static gboolean have_sq;

typedef struct {
	const char *name;
	char *home;		/* a keyring holding the key, secret part included */
	char *fpr;		/* primary fingerprint */
	GBytes *armored;	/* gpg --armor --export */
	GBytes *binary;		/* gpg --export */
	char *secret;		/* path of the armored secret key, for sq */
} test_key;

enum { K_CV25519, K_RSA3072, K_RSA2048, K_MULTI, K_P256, K_EXPIRED, K_REVOKED, K_PRIMARY_ONLY, K_COUNT };
static test_key keys[K_COUNT] = {
	[K_CV25519] = { "cv25519" }, [K_RSA3072] = { "rsa3072" }, [K_RSA2048] = { "rsa2048" },
	[K_MULTI] = { "multi" }, [K_P256] = { "p256" }, [K_EXPIRED] = { "expired" },
	[K_REVOKED] = { "revoked" }, [K_PRIMARY_ONLY] = { "primary-only" },
};

/* /bin/sh -c cmd; its stdout, or NULL (a test failure when must) when it
 * did not exit 0 */
static char *
sh_run(gboolean must, gsize *len, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static char *
sh_run(gboolean must, gsize *len, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *cmd = NULL, *out = NULL, *errout = NULL;
	g_autoptr(GError) err = NULL;
	const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	int status = 0;
	gsize n = 0;

	va_start(ap, fmt);
	cmd = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	argv[2] = cmd;
	if (!g_spawn_sync(tmpdir, (char **) argv, NULL, 0, NULL, NULL, &out, &errout, &status, &err)) {
		g_test_fail_printf("cannot run %s: %s", cmd, err->message);
		return NULL;
	}
	if (!g_spawn_check_wait_status(status, NULL)) {
		if (must)
			g_test_fail_printf("%s failed: %s", cmd, errout);
		return NULL;
	}
	/* g_spawn_sync()'s output may hold NUL octets: its length is that of
	 * what was read, not strlen() */
	if (out != NULL)
		n = strlen(out);
	if (len != NULL)
		*len = n;
	return g_steal_pointer(&out);
}

#define sh(...) sh_run(TRUE, NULL, __VA_ARGS__)

static GBytes *
read_file(const char *path)
{
	char *data = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &data, &len, NULL));
	return g_bytes_new_take(data, len);
}

/* --- the keys, made by gpg ----------------------------------------------------------- */

#define GPG "gpg --homedir '%s' --batch --no-tty --passphrase '' "

/* k's keys exported again (after a change to them) */
static void
key_export(test_key *k)
{
	g_autofree char *pub = g_strdup_printf("%s/%s.pub", tmpdir, k->name);
	g_autofree char *asc = g_strdup_printf("%s/%s.asc", tmpdir, k->name);
	g_autofree char *o1 = NULL, *o2 = NULL, *o3 = NULL;

	g_clear_pointer(&k->binary, g_bytes_unref);
	g_clear_pointer(&k->armored, g_bytes_unref);
	g_free(k->secret);
	k->secret = g_strdup_printf("%s/%s.sec.asc", tmpdir, k->name);
	o1 = sh(GPG "--yes --export -o '%s' %s", k->home, pub, k->fpr);
	o2 = sh(GPG "--yes --armor --export -o '%s' %s", k->home, asc, k->fpr);
	o3 = sh(GPG "--yes --armor --export-secret-keys -o '%s' %s", k->home, k->secret, k->fpr);
	k->binary = read_file(pub);
	k->armored = read_file(asc);
}

/* a home with a key: the primary ("algo usage expire") made on
 * 2020-01-01, the subkeys (the same) on the 2nd, 3rd, ..., at midnight
 * exactly (gpg's clock stopped there, whatever the load) */
static void
make_key(test_key *k, const char *primary, const char *const *subkeys)
{
	g_autofree char *o = NULL, *fpr = NULL;

	k->home = g_strdup_printf("%s/gnupg-%s", tmpdir, k->name);
	g_assert_cmpint(g_mkdir(k->home, 0700), ==, 0);
	o = sh(GPG "--faked-system-time 20200101T000000! --quick-gen-key '%s <%s@example.org>' %s 2>/dev/null",
	       k->home, k->name, k->name, primary);
	fpr = sh(GPG "--with-colons --list-keys | awk -F: '/^fpr/ { print $10; exit }'", k->home);
	g_assert_nonnull(fpr);
	k->fpr = g_strdup(g_strstrip(fpr));
	for (int i = 0; subkeys != NULL && subkeys[i] != NULL; i++) {
		g_autofree char *o2 = sh(GPG "--faked-system-time 202001%02dT000000! --quick-add-key %s %s 2>/dev/null",
					  k->home, i + 2, k->fpr, subkeys[i]);
	}
	key_export(k);
}

static void
setup_keys(void)
{
	static const char *const cv[] = { "cv25519 encr never", NULL };
	static const char *const rsa3072[] = { "rsa3072 encr never", NULL };
	static const char *const rsa2048[] = { "rsa2048 encr never", NULL };
	/* created on the 2nd to the 6th: the newest usable is the RSA one
	 * (the 3rd); the 4th expired a day after it was made, the 5th is
	 * revoked below, the 6th only signs */
	static const char *const multi[] = { "cv25519 encr never", "rsa2048 encr never", "cv25519 encr 1d",
					     "cv25519 encr never", "ed25519 sign never", NULL };
	static const char *const p256[] = { "nistp256 encr never", NULL };
	g_autofree char *o1 = NULL, *o2 = NULL, *o3 = NULL;

	make_key(&keys[K_CV25519], "ed25519 sign,cert never", cv);
	make_key(&keys[K_RSA3072], "rsa3072 sign,cert never", rsa3072);
	make_key(&keys[K_RSA2048], "ed25519 sign,cert never", rsa2048);
	make_key(&keys[K_MULTI], "ed25519 sign,cert never", multi);
	/* subkey 4 (counting the primary as 0) revoked */
	o1 = sh("printf 'key 4\\nrevkey\\ny\\n0\\n\\ny\\nsave\\n' | " GPG "--yes --command-fd 0 --edit-key %s >/dev/null 2>&1",
		keys[K_MULTI].home, keys[K_MULTI].fpr);
	key_export(&keys[K_MULTI]);
	make_key(&keys[K_P256], "ed25519 sign,cert never", p256);
	/* a primary key that expired on 2020-01-03 */
	make_key(&keys[K_EXPIRED], "ed25519 sign,cert 2d", cv);
	/* a primary key revoked with the certificate gpg made for it */
	make_key(&keys[K_REVOKED], "ed25519 sign,cert never", cv);
	o2 = sh("sed 's/^:-----/-----/' '%s/openpgp-revocs.d/%s.rev' | " GPG "--import 2>/dev/null",
		keys[K_REVOKED].home, keys[K_REVOKED].fpr, keys[K_REVOKED].home);
	key_export(&keys[K_REVOKED]);
	/* an RSA primary key that encrypts itself, without subkeys */
	make_key(&keys[K_PRIMARY_ONLY], "rsa2048 sign,cert,encr never", NULL);
	o3 = sh(GPG "--list-keys >/dev/null 2>&1", keys[K_MULTI].home);
}

/* --- helpers -------------------------------------------------------------------------- */

static char *
hex(const guint8 *b, gsize n)
{
	GString *s = g_string_new(NULL);

	for (gsize i = 0; i < n; i++)
		g_string_append_printf(s, "%02X", b[i]);
	return g_string_free(s, FALSE);
}

static openpgp_cert *
parse(GBytes *b)
{
	openpgp_cert *cert = NULL;
	g_autoptr(GError) err = NULL;

	if (openpgp_cert_parse(g_bytes_get_data(b, NULL), g_bytes_get_size(b), &cert, &err) != VULNID_OK)
		g_test_fail_printf("parse: %s", err->message);
	return cert;
}

static gint64
now(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* The key ID gpg encrypts to, for its own choice of subkey, or NULL when
 * gpg refuses to encrypt to the key. */
static char *
gpg_choice(const test_key *k)
{
	g_autofree char *out = sh_run(FALSE, NULL, "echo x | " GPG "--trust-model always --encrypt -r %s 2>/dev/null | "
				      GPG "--list-packets 2>/dev/null | sed -n 's/^:pubkey enc packet: .*keyid \\([0-9A-F]*\\)$/\\1/p'",
				      k->home, k->fpr, k->home);

	if (out == NULL || *g_strstrip(out) == '\0')
		return NULL;
	return g_steal_pointer(&out);
}

/* Encrypt data to k's key as chosen here; the armored message. */
static char *
encrypt_to(const test_key *k, const void *data, gsize len)
{
	g_autoptr(openpgp_cert) cert = parse(k->armored);
	const openpgp_pubkey *key = cert != NULL ? openpgp_cert_encryption_key(cert, now()) : NULL;
	g_autoptr(GError) err = NULL;
	char *armored = NULL;

	if (key == NULL) {
		g_test_fail_printf("no encryption key in %s", k->name);
		return NULL;
	}
	if (openpgp_encrypt(key, data, len, &armored, &err) != VULNID_OK)
		g_test_fail_printf("encrypt to %s: %s", k->name, err->message);
	return armored;
}

/* The armor as gpg writes it: its lines, LF only, 64 columns. */
static void
check_armor(const char *a)
{
	g_auto(GStrv) lines = g_strsplit(a, "\n", -1);
	guint n = g_strv_length(lines);

	g_assert_true(g_str_has_prefix(a, "-----BEGIN PGP MESSAGE-----\n\n"));
	g_assert_true(g_str_has_suffix(a, "\n=") == FALSE);
	g_assert_true(g_str_has_suffix(a, "-----END PGP MESSAGE-----\n"));
	g_assert_null(strchr(a, '\r'));
	g_assert_cmpuint(n, >=, 5);
	g_assert_cmpuint(strlen(lines[n - 3]), ==, 5);	/* =CRC */
	g_assert_cmpint(lines[n - 3][0], ==, '=');
	for (guint i = 2; i + 3 < n; i++)
		g_assert_cmpuint(strlen(lines[i]), <=, 64);
}

/* gpg and sq decrypt armored to exactly data */
static void
check_decrypts(const test_key *k, const char *armored, const void *data, gsize len, const char *tag)
{
	g_autofree char *in = g_strdup_printf("%s/%s-%s.asc", tmpdir, k->name, tag);
	g_autofree char *out_gpg = g_strdup_printf("%s/%s-%s.gpg.out", tmpdir, k->name, tag);
	g_autofree char *out_sq = g_strdup_printf("%s/%s-%s.sq.out", tmpdir, k->name, tag);
	g_autofree char *status = NULL, *o = NULL;
	g_autoptr(GBytes) got = NULL;

	g_assert_true(g_file_set_contents(in, armored, -1, NULL));
	status = sh(GPG "--status-fd 1 --decrypt -o '%s' '%s' 2>/dev/null", k->home, out_gpg, in);
	g_assert_nonnull(status);
	if (status == NULL)
		return;
	/* integrity protected (MDC), AES-256, good */
	g_assert_nonnull(strstr(status, "[GNUPG:] DECRYPTION_INFO 2 9"));
	g_assert_nonnull(strstr(status, "[GNUPG:] GOODMDC"));
	g_assert_nonnull(strstr(status, "[GNUPG:] DECRYPTION_OKAY"));
	got = read_file(out_gpg);
	g_assert_cmpmem(g_bytes_get_data(got, NULL), g_bytes_get_size(got), data, len);
	g_clear_pointer(&got, g_bytes_unref);
	if (!have_sq)
		return;
	o = sh("sq decrypt --recipient-key '%s' -o '%s' '%s' 2>&1", k->secret, out_sq, in);
	got = read_file(out_sq);
	g_assert_cmpmem(g_bytes_get_data(got, NULL), g_bytes_get_size(got), data, len);
	g_unlink(out_sq);
	g_unlink(out_gpg);
	g_unlink(in);
}

/* --- the keys as read here and as gpg lists them ------------------------------------------ */

static void
test_parse_fingerprints(void)
{
	for (int i = 0; i < K_COUNT; i++) {
		const test_key *k = &keys[i];
		g_autoptr(openpgp_cert) a = parse(k->armored);
		g_autoptr(openpgp_cert) b = parse(k->binary);
		g_autofree char *listed = sh(GPG "--with-colons --with-subkey-fingerprints --list-keys %s | "
					     "awk -F: '/^fpr/ { print $10 }'", k->home, k->fpr);
		GString *mine = g_string_new(NULL);
		g_autofree char *mine_s = NULL;

		g_assert_nonnull(a);
		g_assert_nonnull(b);
		if (a == NULL || b == NULL)
			continue;
		/* armored and binary are the same key */
		g_assert_cmpmem(a->primary->fpr, 20, b->primary->fpr, 20);
		g_assert_cmpuint(a->subkeys->len, ==, b->subkeys->len);
		{
			g_autofree char *f = hex(a->primary->fpr, 20);

			g_string_append_printf(mine, "%s\n", f);
		}
		for (guint j = 0; j < a->subkeys->len; j++) {
			const openpgp_pubkey *sk = g_ptr_array_index(a->subkeys, j);
			g_autofree char *f = hex(sk->fpr, 20);

			g_string_append_printf(mine, "%s\n", f);
			g_assert_cmpmem(sk->keyid, 8, sk->fpr + 12, 8);
		}
		mine_s = g_string_free(mine, FALSE);
		g_assert_cmpstr(mine_s, ==, listed);
	}
}

/* what the binding signatures say, read without verifying them */
static void
test_parse_bindings(void)
{
	g_autoptr(openpgp_cert) multi = parse(keys[K_MULTI].binary);
	g_autoptr(openpgp_cert) expired = parse(keys[K_EXPIRED].binary);
	g_autoptr(openpgp_cert) revoked = parse(keys[K_REVOKED].binary);
	const openpgp_pubkey *sk;

	g_assert_nonnull(multi);
	if (multi == NULL)
		return;
	g_assert_cmpuint(multi->subkeys->len, ==, 5);
	sk = g_ptr_array_index(multi->subkeys, 0);
	g_assert_true(sk->bound && sk->has_flags);
	g_assert_cmphex(sk->flags, ==, 0x0c);
	g_assert_cmpint(sk->algo, ==, OPENPGP_PK_ECDH);
	g_assert_cmpint(sk->created, ==, 1577923200);	/* 2020-01-02 */
	g_assert_cmpint(sk->expires, ==, 0);
	sk = g_ptr_array_index(multi->subkeys, 1);
	g_assert_cmpint(sk->algo, ==, OPENPGP_PK_RSA);
	sk = g_ptr_array_index(multi->subkeys, 2);
	g_assert_cmpint(sk->expires, ==, 1578096000 + 86400);	/* a day after the 4th */
	g_assert_false(sk->revoked);
	sk = g_ptr_array_index(multi->subkeys, 3);
	g_assert_true(sk->revoked);
	sk = g_ptr_array_index(multi->subkeys, 4);
	g_assert_cmphex(sk->flags, ==, 0x02);
	g_assert_false(multi->primary->revoked);
	g_assert_cmphex(multi->primary->flags, ==, 0x03);
	g_assert_cmpint(expired->primary->expires, ==, 1577836800 + 2 * 86400);
	g_assert_true(revoked->primary->revoked);
}

/* the subkey chosen is the one gpg encrypts to; where gpg refuses, none */
static void
test_choice_as_gpg(void)
{
	for (int i = 0; i < K_COUNT; i++) {
		const test_key *k = &keys[i];
		g_autoptr(openpgp_cert) cert = parse(k->binary);
		const openpgp_pubkey *key = cert != NULL ? openpgp_cert_encryption_key(cert, now()) : NULL;
		g_autofree char *gpg = gpg_choice(k);
		g_autofree char *mine = key != NULL ? hex(key->keyid, 8) : NULL;

		g_test_message("%s: gpg %s, here %s", k->name, gpg, mine);
		g_assert_cmpstr(mine, ==, gpg);
	}
	/* the one that would be chosen without the revocation is later */
	{
		g_autoptr(openpgp_cert) cert = parse(keys[K_MULTI].binary);
		const openpgp_pubkey *rsa = g_ptr_array_index(cert->subkeys, 1);

		g_assert_true(openpgp_cert_encryption_key(cert, now()) == rsa);
		/* before the 4th expired, it was the newest usable */
		g_assert_true(openpgp_cert_encryption_key(cert, 1578096000 + 3600) == g_ptr_array_index(cert->subkeys, 2));
		/* before any encryption subkey existed: none (the primary key
		 * signs only) */
		g_assert_null(openpgp_cert_encryption_key(cert, 1577836800 + 3600));
	}
}

/* --- encryption, decrypted by gpg and sq ---------------------------------------------------- */

static void
roundtrip(const test_key *k)
{
	static const gsize sizes[] = { 0, 1, 15, 16, 17, 1024 * 1024 };

	for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
		g_autofree guint8 *data = g_malloc(MAX(sizes[i], 1));
		g_autofree char *armored = NULL, *tag = g_strdup_printf("%zu", sizes[i]);

		for (gsize j = 0; j < sizes[i]; j++)
			data[j] = (guint8) g_random_int();
		armored = encrypt_to(k, data, sizes[i]);
		if (armored == NULL)
			return;
		check_armor(armored);
		check_decrypts(k, armored, data, sizes[i], tag);
	}
}

/* Mail is text: sealed compressed, as gpg would, and still read by gpg
 * and sq byte for byte; random bytes are not compressed (no gain). */
static void
test_compressed(void)
{
	GString *text = g_string_new(NULL);
	g_autofree char *armored = NULL;
	g_autofree char *listing = NULL, *in = g_strdup_printf("%s/compressed.asc", tmpdir);

	while (text->len < 512 * 1024)
		g_string_append_printf(text, "Received: from mx%u.example.org by relay.example.net; line %zu\n",
				       g_random_int_range(0, 10), text->len);
	armored = encrypt_to(&keys[K_CV25519], text->str, text->len);
	g_assert_nonnull(armored);
	g_assert_cmpuint(strlen(armored), <, text->len / 2);
	check_decrypts(&keys[K_CV25519], armored, text->str, text->len, "compressed");
	g_assert_true(g_file_set_contents(in, armored, -1, NULL));
	listing = sh(GPG "--list-packets '%s' 2>/dev/null", keys[K_CV25519].home, in);
	g_assert_nonnull(listing);
	g_assert_nonnull(strstr(listing, ":compressed packet: algo=2"));
	g_string_free(text, TRUE);
}

static void test_roundtrip_cv25519(void) { roundtrip(&keys[K_CV25519]); }
static void test_roundtrip_rsa3072(void) { roundtrip(&keys[K_RSA3072]); }
static void test_roundtrip_rsa2048(void) { roundtrip(&keys[K_RSA2048]); }

static void
test_roundtrip_multi(void)
{
	static const char text[] = "sealed to the newest usable subkey\n";
	g_autofree char *armored = encrypt_to(&keys[K_MULTI], text, strlen(text));
	g_autofree char *primary_only = encrypt_to(&keys[K_PRIMARY_ONLY], text, strlen(text));

	if (armored != NULL)
		check_decrypts(&keys[K_MULTI], armored, text, strlen(text), "multi");
	if (primary_only != NULL)
		check_decrypts(&keys[K_PRIMARY_ONLY], primary_only, text, strlen(text), "primary");
}

/* Every message is new: another session key and ephemeral key. */
static void
test_fresh(void)
{
	g_autofree char *a = encrypt_to(&keys[K_CV25519], "x", 1);
	g_autofree char *b = encrypt_to(&keys[K_CV25519], "x", 1);

	g_assert_cmpstr(a, !=, b);
}

/* A changed octet anywhere in the encrypted data fails gpg's check. */
static void
test_tampered(void)
{
	static const char text[] = "do not change me";
	g_autofree char *armored = encrypt_to(&keys[K_CV25519], text, strlen(text));
	g_autofree char *path = g_strdup_printf("%s/tampered.gpg", tmpdir);
	g_autofree char *o = NULL, *b64 = NULL;
	g_autoptr(GString) body = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;
	guchar *bin;
	gsize len;

	g_assert_nonnull(armored);
	lines = g_strsplit(armored, "\n", -1);
	for (guint i = 2; lines[i] != NULL && lines[i][0] != '='; i++)
		g_string_append(body, lines[i]);
	bin = g_base64_decode(body->str, &len);
	bin[len - 5] ^= 0x01;	/* in the MDC's digest, under the encryption */
	g_assert_true(g_file_set_contents(path, (const char *) bin, (gssize) len, NULL));
	g_free(bin);
	o = sh_run(FALSE, NULL, GPG "--decrypt '%s' 2>/dev/null", keys[K_CV25519].home, path);
	g_assert_null(o);
}

/* Keys of other kinds: NOTFOUND, for gpg to encrypt. */
static void
test_unsupported(void)
{
	g_autoptr(openpgp_cert) cert = parse(keys[K_P256].binary);
	const openpgp_pubkey *key = cert != NULL ? openpgp_cert_encryption_key(cert, now()) : NULL;
	g_autoptr(GError) err = NULL;
	char *armored = NULL;

	g_assert_nonnull(key);
	if (key == NULL)
		return;
	g_assert_cmpint(openpgp_encrypt(key, "x", 1, &armored, &err), ==, VULNID_ERR_NOTFOUND);
	g_assert_null(armored);
	g_assert_nonnull(strstr(err->message, "Curve25519"));
	g_clear_error(&err);
	/* the primary key (EdDSA) is of no kind encrypted to */
	g_assert_cmpint(openpgp_encrypt(cert->primary, "x", 1, &armored, &err), ==, VULNID_ERR_NOTFOUND);
	g_assert_nonnull(strstr(err->message, "not built in"));
}

/* A key (version 4, created 2020-01-01) of algorithm algo with material. */
static openpgp_pubkey *
synthetic(guint8 algo, const guint8 *material, gsize len)
{
	openpgp_pubkey *k = g_new0(openpgp_pubkey, 1);
	GByteArray *b = g_byte_array_new();
	guint8 head[6] = { 4, 0x5e, 0x0b, 0xe1, 0x00, algo };

	g_byte_array_append(b, head, 6);
	g_byte_array_append(b, material, (guint) len);
	k->version = 4;
	k->algo = algo;
	k->created = 1577836800;
	k->bound = TRUE;
	k->body = g_byte_array_free_to_bytes(b);
	return k;
}

/* Key material that is not what it claims: refused, never encrypted to. */
static void
test_hostile_material(void)
{
	/* Curve25519, the point 0 (of small order: X25519 gives all zeros) */
	guint8 zero_point[] = { 10, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01,
				0x01, 0x07, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				3, 1, 8, 7 };
	/* a point without the 0x40 prefix */
	guint8 no_prefix[sizeof zero_point];
	/* the KDF parameters cut short */
	guint8 short_kdf[sizeof zero_point - 2];
	/* RSA: a 1024-bit odd modulus and the exponent 1 */
	guint8 rsa_e1[2 + 128 + 3];
	guint8 rsa_even[2 + 128 + 5];
	guint8 rsa_short[2 + 64 + 5];
	struct {
		const char *what;
		guint8 algo;
		const guint8 *m;
		gsize len;
		vulnid_status want;
	} cases[] = {
		{ "small order point", OPENPGP_PK_ECDH, zero_point, sizeof zero_point, VULNID_ERR_INVALID },
		{ "no 0x40", OPENPGP_PK_ECDH, no_prefix, sizeof no_prefix, VULNID_ERR_INVALID },
		{ "short KDF", OPENPGP_PK_ECDH, short_kdf, sizeof short_kdf, VULNID_ERR_INVALID },
		{ "e = 1", OPENPGP_PK_RSA, rsa_e1, sizeof rsa_e1, VULNID_ERR_INVALID },
		{ "even n", OPENPGP_PK_RSA, rsa_even, sizeof rsa_even, VULNID_ERR_INVALID },
		{ "512 bits", OPENPGP_PK_RSA, rsa_short, sizeof rsa_short, VULNID_ERR_NOTFOUND },
		{ "nothing", OPENPGP_PK_RSA, rsa_short, 0, VULNID_ERR_INVALID },
	};

	memcpy(no_prefix, zero_point, sizeof zero_point);
	no_prefix[13] = 0x41;
	memcpy(short_kdf, zero_point, sizeof short_kdf);
	rsa_e1[0] = 0x04;
	rsa_e1[1] = 0x00;
	memset(rsa_e1 + 2, 0xab, 128);
	memcpy(rsa_e1 + 130, "\x00\x01\x01", 3);
	memcpy(rsa_even, rsa_e1, 130);
	rsa_even[129] = 0xaa;
	memcpy(rsa_even + 130, "\x00\x11\x01\x00\x01", 5);
	rsa_short[0] = 0x02;
	rsa_short[1] = 0x00;
	memset(rsa_short + 2, 0xab, 64);
	memcpy(rsa_short + 66, "\x00\x11\x01\x00\x01", 5);
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(openpgp_pubkey) k = synthetic(cases[i].algo, cases[i].m, cases[i].len);
		g_autoptr(GError) err = NULL;
		char *armored = NULL;

		g_test_message("%s", cases[i].what);
		g_assert_cmpint(openpgp_encrypt(k, "x", 1, &armored, &err), ==, cases[i].want);
		g_assert_null(armored);
		g_assert_nonnull(err);
	}
}

/* --- hostile keys ----------------------------------------------------------------------- */

static vulnid_status
parse_raw(const void *data, gsize len, char **why)
{
	g_autoptr(openpgp_cert) cert = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s = openpgp_cert_parse(data, len, &cert, &err);

	if (s == VULNID_OK) {
		g_assert_nonnull(cert);
		g_assert_null(err);
	} else {
		g_assert_null(cert);
		g_assert_nonnull(err);
		if (why != NULL)
			*why = g_strdup(err->message);
	}
	return s;
}

static void
expect_refused(GByteArray *b, const char *why)
{
	g_autofree char *msg = NULL;

	g_assert_cmpint(parse_raw(b->data, b->len, &msg), ==, VULNID_ERR_INVALID);
	if (msg != NULL && strstr(msg, why) == NULL)
		g_test_fail_printf("refused for '%s', not '%s'", msg, why);
}

static GByteArray *
key_bytes(const test_key *k)
{
	GByteArray *b = g_byte_array_new();

	g_byte_array_append(b, g_bytes_get_data(k->binary, NULL), (guint) g_bytes_get_size(k->binary));
	return b;
}

/* every prefix of a real key: refused or read as the packets it holds,
 * never past its end (ASan would see that) */
static void
test_hostile_truncated(void)
{
	gsize len;
	const guint8 *p = g_bytes_get_data(keys[K_MULTI].binary, &len);
	guint ok = 0;

	for (gsize n = 0; n < len; n++) {
		guint8 *copy = g_memdup2(p, n);

		if (parse_raw(copy, n, NULL) == VULNID_OK)
			ok++;
		g_free(copy);
	}
	/* the cut that fall between packets only */
	g_assert_cmpuint(ok, >, 0);
	g_assert_cmpuint(ok, <, 40);
}

static void
test_hostile_lengths(void)
{
	static const guint8 huge_new[] = { 0xc0 | 13, 0xff, 0xff, 0xff, 0xff, 0xff, 'x' };
	static const guint8 huge_old[] = { 0x80 | 13 << 2 | 2, 0x7f, 0xff, 0xff, 0xff, 'x' };
	static const guint8 partial[] = { 0xc0 | 13, 0xe1, 'a', 'b' };
	static const guint8 indeterminate[] = { 0x80 | 13 << 2 | 3, 'a', 'b' };
	static const guint8 no_ctb[] = { 0x3f, 'a' };
	static const guint8 cut_header[] = { 0xc0 | 13, 0xff, 0x00 };
	struct {
		const guint8 *tail;
		gsize len;
		const char *why;
	} cases[] = {
		{ huge_new, sizeof huge_new, "runs past the end" },
		{ huge_old, sizeof huge_old, "runs past the end" },
		{ partial, sizeof partial, "partial length" },
		{ indeterminate, sizeof indeterminate, "indeterminate length" },
		{ no_ctb, sizeof no_ctb, "not an OpenPGP packet" },
		{ cut_header, sizeof cut_header, "cut short" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GByteArray) b = key_bytes(&keys[K_CV25519]);

		g_byte_array_append(b, cases[i].tail, (guint) cases[i].len);
		expect_refused(b, cases[i].why);
	}
	{
		/* a public key packet with a partial length as the first */
		static const guint8 first[] = { 0xc0 | 6, 0xe0, 4 };
		g_autoptr(GByteArray) b = g_byte_array_new();

		g_byte_array_append(b, first, sizeof first);
		expect_refused(b, "partial length");
	}
}

static void
test_hostile_counts(void)
{
	g_autoptr(GByteArray) many = key_bytes(&keys[K_CV25519]);
	g_autoptr(GByteArray) subkeys = key_bytes(&keys[K_CV25519]);
	g_autoptr(GByteArray) big = key_bytes(&keys[K_CV25519]);
	g_autoptr(GByteArray) two = key_bytes(&keys[K_CV25519]);
	g_autoptr(GByteArray) secret = g_byte_array_new();
	g_autoptr(GByteArray) sig_first = g_byte_array_new();
	g_autoptr(openpgp_cert) cert = parse(keys[K_CV25519].binary);
	g_autoptr(GBytes) sec = NULL;
	g_autofree char *o = NULL;

	/* 10,000 user ID packets */
	for (int i = 0; i < 10000; i++)
		g_byte_array_append(many, (const guint8 *) "\xcd\x03" "abc", 5);
	expect_refused(many, "more than 4096 packets");
	/* 65 subkeys: the key's own subkey packet repeated */
	{
		gsize len;
		const guint8 *sk = g_bytes_get_data(((openpgp_pubkey *) g_ptr_array_index(cert->subkeys, 0))->body, &len);

		for (int i = 0; i < 65; i++) {
			guint8 h[2] = { 0xc0 | 14, (guint8) len };

			g_byte_array_append(subkeys, h, 2);
			g_byte_array_append(subkeys, sk, (guint) len);
		}
	}
	expect_refused(subkeys, "more than 64 subkeys");
	/* over the size limit, in one packet that would fit otherwise */
	{
		guint8 h[6] = { 0xc0 | 61, 0xff, 0x00, 0x10, 0x00, 0x00 };

		g_byte_array_append(big, h, sizeof h);
		g_byte_array_set_size(big, big->len + 0x100000);
	}
	expect_refused(big, "longer than");
	/* two keys */
	g_byte_array_append(two, g_bytes_get_data(keys[K_RSA2048].binary, NULL),
			    (guint) g_bytes_get_size(keys[K_RSA2048].binary));
	expect_refused(two, "more than one key");
	/* a secret key */
	o = sh(GPG "--export-secret-keys -o '%s/cv.sec' %s", keys[K_CV25519].home, tmpdir, keys[K_CV25519].fpr);
	{
		g_autofree char *path = g_strdup_printf("%s/cv.sec", tmpdir);

		sec = read_file(path);
	}
	g_byte_array_append(secret, g_bytes_get_data(sec, NULL), (guint) g_bytes_get_size(sec));
	expect_refused(secret, "secret key");
	/* a signature first */
	g_byte_array_append(sig_first, (const guint8 *) "\xc2\x01\x04", 3);
	expect_refused(sig_first, "no public key packet first");
	/* all of it at once: bounded, whatever the machine */
}

/* The packets of a key as gpg writes them (old-format headers with one-
 * or two-octet lengths, or new-format with one or two): the offset of
 * the last of tag. */
static gsize
last_packet(const guint8 *p, gsize len, guint8 tag, gsize *body)
{
	gsize last = len;

	for (gsize off = 0; off < len;) {
		guint8 t;
		gsize hl, n;

		g_assert_true(p[off] & 0x80);
		if (p[off] & 0x40) {
			t = p[off] & 0x3f;
			g_assert_cmpuint(p[off + 1], <, 224);
			if (p[off + 1] < 192) {
				hl = 2;
				n = p[off + 1];
			} else {
				hl = 3;
				n = ((gsize) (p[off + 1] - 192) << 8) + p[off + 2] + 192;
			}
		} else {
			t = (p[off] >> 2) & 0x0f;
			g_assert_cmpuint(p[off] & 3, <, 2);
			hl = (p[off] & 3) == 0 ? 2 : 3;
			n = (p[off] & 3) == 0 ? p[off + 1] : (gsize) p[off + 1] << 8 | p[off + 2];
		}
		if (t == tag) {
			last = off;
			*body = off + hl;
		}
		off += hl + n;
	}
	return last;
}

/* A binding signature that cannot be read binds nothing: the subkey is
 * never chosen (gpg would not use it either). */
static void
test_hostile_binding(void)
{
	gsize len, body = 0;
	const guint8 *p = g_bytes_get_data(keys[K_CV25519].binary, &len);
	g_autoptr(GByteArray) b = g_byte_array_new();
	g_autoptr(openpgp_cert) cert = NULL;
	g_autoptr(GError) err = NULL;

	/* the last packet is the subkey's binding signature: its hashed
	 * area made to run past it */
	g_assert_cmpuint(last_packet(p, len, 2, &body), <, len);
	g_byte_array_append(b, p, (guint) len);
	g_assert_cmpint(b->data[body], ==, 4);
	g_assert_cmpint(b->data[body + 1], ==, 0x18);
	b->data[body + 4] = 0xff;
	g_assert_cmpint(openpgp_cert_parse(b->data, b->len, &cert, &err), ==, VULNID_OK);
	if (cert == NULL)
		return;
	g_assert_false(((openpgp_pubkey *) g_ptr_array_index(cert->subkeys, 0))->bound);
	g_assert_null(openpgp_cert_encryption_key(cert, now()));
}

static void
test_hostile_armor(void)
{
	const char *a = g_bytes_get_data(keys[K_CV25519].armored, NULL);
	gsize alen = g_bytes_get_size(keys[K_CV25519].armored);
	g_autofree char *text = g_strndup(a, alen);
	g_autofree char *bad_crc = g_strdup(text);
	g_autofree char *no_end = g_strndup(text, strstr(text, "-----END") - text);
	g_autofree char *junk = g_strdup(text);
	g_autofree char *no_crc = NULL;
	g_autofree char *with_headers = NULL;
	char *crc = strstr(bad_crc, "\n=");

	g_assert_cmpint(parse_raw(text, strlen(text), NULL), ==, VULNID_OK);
	crc[2] = crc[2] == 'A' ? 'B' : 'A';
	g_assert_cmpint(parse_raw(bad_crc, strlen(bad_crc), NULL), ==, VULNID_ERR_INVALID);
	g_assert_cmpint(parse_raw(no_end, strlen(no_end), NULL), ==, VULNID_ERR_INVALID);
	strstr(junk, "\n\n")[3] = '*';
	g_assert_cmpint(parse_raw(junk, strlen(junk), NULL), ==, VULNID_ERR_INVALID);
	/* the checksum line is optional; armor headers and CRLF are allowed */
	{
		char *c = strstr(text, "\n=");
		char *e = strstr(c, "\n-----END");

		g_autofree char *head = g_strndup(text, (gsize) (c - text) + 1);

		no_crc = g_strconcat(head, e + 1, NULL);
	}
	g_assert_cmpint(parse_raw(no_crc, strlen(no_crc), NULL), ==, VULNID_OK);
	{
		g_autofree char *crlf = NULL;
		g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

		crlf = g_strjoinv("\r\n", lines);
		with_headers = g_strdup_printf("  \n-----BEGIN PGP PUBLIC KEY BLOCK-----\r\nComment: x\r\n%s",
					       strstr(crlf, "\r\n\r\n") + 2);
	}
	g_assert_cmpint(parse_raw(with_headers, strlen(with_headers), NULL), ==, VULNID_OK);
	g_assert_cmpint(parse_raw("-----BEGIN PGP MESSAGE-----\n\n", 29, NULL), ==, VULNID_ERR_INVALID);
	g_assert_cmpint(parse_raw("not a key", 9, NULL), ==, VULNID_ERR_INVALID);
	g_assert_cmpint(parse_raw("", 0, NULL), ==, VULNID_ERR_INVALID);
}

/* random octets changed in a real key, many times: no crash, no hang */
static void
test_hostile_mutations(void)
{
	gsize len;
	const guint8 *p = g_bytes_get_data(keys[K_MULTI].binary, &len);
	GRand *r = g_rand_new_with_seed(20);

	for (int i = 0; i < 20000; i++) {
		guint8 *copy = g_memdup2(p, len);
		g_autoptr(openpgp_cert) cert = NULL;

		for (int j = g_rand_int_range(r, 1, 5); j > 0; j--)
			copy[g_rand_int_range(r, 0, (gint32) len)] = (guint8) g_rand_int(r);
		if (openpgp_cert_parse(copy, len, &cert, NULL) == VULNID_OK)
			openpgp_cert_encryption_key(cert, now());
		g_free(copy);
	}
	g_rand_free(r);
}

/* --- set-up ------------------------------------------------------------------------------- */

static void
teardown(void)
{
	for (int i = 0; i < K_COUNT; i++) {
		if (keys[i].home != NULL) {
			g_autofree char *o = sh_run(FALSE, NULL, "gpgconf --homedir '%s' --kill all", keys[i].home);
		}
		g_free(keys[i].home);
		g_free(keys[i].fpr);
		g_free(keys[i].secret);
		if (keys[i].binary != NULL)
			g_bytes_unref(keys[i].binary);
		if (keys[i].armored != NULL)
			g_bytes_unref(keys[i].armored);
	}
	if (tmpdir != NULL) {
		g_autofree char *o = sh_run(FALSE, NULL, "rm -rf '%s'", tmpdir);
	}
	g_free(tmpdir);
}

int
main(int argc, char **argv)
{
	g_autofree char *gpg = g_find_program_in_path("gpg");
	g_autofree char *sq = g_find_program_in_path("sq");
	int rc;

	g_test_init(&argc, &argv, NULL);
	/* a failure must not end the program before teardown() stops the
	 * agents it started */
	g_test_set_nonfatal_assertions();
	if (gpg == NULL) {
		g_print("1..0 # SKIP gpg is not installed\n");
		return 0;
	}
	have_sq = sq != NULL;
	tmpdir = g_dir_make_tmp("vulnid-u-openpgp-encrypt.XXXXXX", NULL);
	g_assert_nonnull(tmpdir);
	setup_keys();
	g_test_add_func("/openpgp-encrypt/parse/fingerprints", test_parse_fingerprints);
	g_test_add_func("/openpgp-encrypt/parse/bindings", test_parse_bindings);
	g_test_add_func("/openpgp-encrypt/choice-as-gpg", test_choice_as_gpg);
	g_test_add_func("/openpgp-encrypt/roundtrip/cv25519", test_roundtrip_cv25519);
	g_test_add_func("/openpgp-encrypt/compressed", test_compressed);
	g_test_add_func("/openpgp-encrypt/roundtrip/rsa3072", test_roundtrip_rsa3072);
	g_test_add_func("/openpgp-encrypt/roundtrip/rsa2048", test_roundtrip_rsa2048);
	g_test_add_func("/openpgp-encrypt/roundtrip/multi", test_roundtrip_multi);
	g_test_add_func("/openpgp-encrypt/fresh", test_fresh);
	g_test_add_func("/openpgp-encrypt/tampered", test_tampered);
	g_test_add_func("/openpgp-encrypt/unsupported", test_unsupported);
	g_test_add_func("/openpgp-encrypt/hostile/material", test_hostile_material);
	g_test_add_func("/openpgp-encrypt/hostile/truncated", test_hostile_truncated);
	g_test_add_func("/openpgp-encrypt/hostile/lengths", test_hostile_lengths);
	g_test_add_func("/openpgp-encrypt/hostile/counts", test_hostile_counts);
	g_test_add_func("/openpgp-encrypt/hostile/binding", test_hostile_binding);
	g_test_add_func("/openpgp-encrypt/hostile/armor", test_hostile_armor);
	g_test_add_func("/openpgp-encrypt/hostile/mutations", test_hostile_mutations);
	rc = g_test_run();
	if (!have_sq)
		g_print("# sq is not installed: messages were decrypted with gpg only\n");
	teardown();
	return rc;
}
