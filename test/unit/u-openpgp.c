/* u-openpgp.c - src/lib/openpgp.c: the signature packets byte for byte
 * (expected bytes computed independently, with Python's hashlib and
 * struct), the S-expressions refused, armor, the cleartext framework; then
 * signatures made through gpg-agent with two fixed keys (Ed25519 and RSA
 * 3072, test/corpora/openpgp/unit-*.sec.asc), which must come out as the
 * bytes recorded here and verify with gpg and with Sequoia's sqv. */
#include "autoconfig.h"

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gpgme.h>

#include "crypto.h"
#include "openpgp.h"

#define CREATED 1704067200	/* 2024-01-01T00:00:00Z, after the keys' creation (2020) */

typedef struct {
	const char *file, *fpr, *grip;
	guint8 algo;
	guint bits;
	char *home;		/* a keyring with the key imported */
	char *pub;		/* its public key, armored, for sqv */
	char *socket;		/* gpg-agent's socket for home */
} fixed_key;

static fixed_key keys[] = {
	{ "unit-ed25519.sec.asc", "FA1F495F1F353EBEAE4259E5CF5B422D7560F9A8",
	  "FE728B7EC5B31F84CF4F7E06907956DB6721161B", OPENPGP_PK_EDDSA, 255, NULL, NULL, NULL },
	{ "unit-rsa3072.sec.asc", "989AE064141BDF142B620FB824A072B47F15AF3C",
	  "2A64193EAA8FE1827F7706DD459D236CEB5BC038", OPENPGP_PK_RSA, 3072, NULL, NULL, NULL },
};
#define ED (&keys[0])
#define RSA (&keys[1])

static char *tmpdir;
static gboolean have_sqv;

static GBytes *
unhex(const char *hex)
{
	gsize n = strlen(hex) / 2;
	guint8 *b = g_malloc(n);

	for (gsize i = 0; i < n; i++)
		b[i] = (guint8) (g_ascii_xdigit_value(hex[2 * i]) << 4 | g_ascii_xdigit_value(hex[2 * i + 1]));
	return g_bytes_new_take(b, n);
}

static char *
tohex(GBytes *b)
{
	gsize n;
	const guint8 *p = g_bytes_get_data(b, &n);
	GString *s = g_string_new(NULL);

	for (gsize i = 0; i < n; i++)
		g_string_append_printf(s, "%02x", p[i]);
	return g_string_free(s, FALSE);
}

static void
key_of(const fixed_key *k, openpgp_key *key)
{
	g_assert_true(openpgp_key_init(key, k->algo, k->bits, k->fpr, k->grip));
}

/* --- formats, no agent ----------------------------------------------------------- */

static void
test_crc24(void)
{
	/* CRC-24/OPENPGP: the initial value, and the check value of "123456789" */
	g_assert_cmphex(openpgp_crc24((const guint8 *) "", 0), ==, 0xb704ce);
	g_assert_cmphex(openpgp_crc24((const guint8 *) "123456789", 9), ==, 0x21cf02);
}

static void
test_key_init(void)
{
	openpgp_key k;

	key_of(ED, &k);
	g_assert_cmpint(k.fpr[0], ==, 0xfa);
	g_assert_cmpint(k.fpr[19], ==, 0xa8);
	g_assert_cmpstr(k.keygrip, ==, ED->grip);
	g_assert_false(openpgp_key_init(&k, 17, 2048, ED->fpr, ED->grip));		/* DSA */
	g_assert_false(openpgp_key_init(&k, OPENPGP_PK_RSA, 3072, "FA1F", ED->grip));
	g_assert_false(openpgp_key_init(&k, OPENPGP_PK_RSA, 3072, ED->fpr, "not a keygrip"));
	g_assert_false(openpgp_key_init(&k, OPENPGP_PK_RSA, 0, ED->fpr, ED->grip));
}

/* (7:sig-val(ALGO...)) around params (already canonical) */
static GBytes *
sig_val(const char *algo, const GBytes *const *values, const char *const *names, guint n)
{
	GByteArray *b = g_byte_array_new();
	g_autofree char *head = g_strdup_printf("(7:sig-val(%zu:%s", strlen(algo), algo);

	g_byte_array_append(b, (const guint8 *) head, (guint) strlen(head));
	for (guint i = 0; i < n; i++) {
		gsize len;
		const guint8 *p = g_bytes_get_data((GBytes *) values[i], &len);
		g_autofree char *pre = g_strdup_printf("(%zu:%s%zu:", strlen(names[i]), names[i], len);

		g_byte_array_append(b, (const guint8 *) pre, (guint) strlen(pre));
		g_byte_array_append(b, p, (guint) len);
		g_byte_array_append(b, (const guint8 *) ")", 1);
	}
	g_byte_array_append(b, (const guint8 *) "))", 2);
	return g_byte_array_free_to_bytes(b);
}

static void
test_packet_eddsa(void)
{
	openpgp_key k;
	g_autoptr(openpgp_sig) sig = NULL;
	g_autoptr(GBytes) r = unhex("1111111111111111111111111111111111111111111111111111111111111111");
	/* leading zero octets: not part of the MPI (239 bits) */
	g_autoptr(GBytes) s = unhex("00007f2222222222222222222222222222222222222222222222222222222222");
	const GBytes *v[] = { r, s };
	const char *names[] = { "r", "s" };
	g_autoptr(GBytes) sexp = sig_val("eddsa", v, names, 2);
	g_autoptr(GBytes) pkt = NULL;
	g_autoptr(GBytes) want_digest = unhex("76c65100d79357555448884ebb81971f292cf8073c781a3600289426b3d1cb90");
	g_autofree char *hex = NULL;
	g_autoptr(GError) err = NULL;

	key_of(ED, &k);
	sig = openpgp_sig_new(&k, OPENPGP_SIG_BINARY, CREATED);
	openpgp_sig_update(sig, "vulnid", 6);
	openpgp_sig_update(sig, "\r\n", 2);
	g_assert_cmpmem(openpgp_sig_digest(sig), OPENPGP_DIGEST_LEN, g_bytes_get_data(want_digest, NULL), 32);
	g_assert_cmpint(openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &pkt, &err),
			==, VULNID_OK);
	hex = tohex(pkt);
	g_assert_cmpstr(hex, ==,
		"c273"				/* tag 2, new format, 115 octets */
		"04001608001d"			/* v4, binary, EdDSA, SHA-256, 29 octets hashed */
		"050265920080"			/* created 2024-01-01 */
		"162104fa1f495f1f353ebeae4259e5cf5b422d7560f9a8"	/* issuer fpr */
		"000a0910cf5b422d7560f9a8"	/* unhashed: issuer key ID */
		"76c6"				/* digest prefix */
		"00fd" "1111111111111111111111111111111111111111111111111111111111111111"	/* r: 253 bits */
		"00ef" "7f2222222222222222222222222222222222222222222222222222222222");	/* s: 239 */
}

static void
test_packet_rsa(void)
{
	openpgp_key k;
	g_autoptr(openpgp_sig) sig = NULL;
	g_autoptr(GString) shex = g_string_new("0001");
	g_autoptr(GBytes) s = NULL, pkt = NULL;
	g_autoptr(GBytes) want_digest = unhex("3f47ae11ea8123d9113e7a3fb7e71613800791aa8b0a8d18e46a54d31c5e6bfc");
	g_autoptr(GBytes) sexp = NULL;
	g_autofree char *hex = NULL;
	const char *names[] = { "s" };

	for (int i = 0; i < 382; i++)
		g_string_append(shex, "5a");
	s = unhex(shex->str);
	{
		const GBytes *v[] = { s };

		sexp = sig_val("rsa", v, names, 1);
	}
	key_of(RSA, &k);
	sig = openpgp_sig_new(&k, OPENPGP_SIG_TEXT, CREATED);
	openpgp_sig_update(sig, "line one\r\nline two", 18);
	g_assert_cmpmem(openpgp_sig_digest(sig), OPENPGP_DIGEST_LEN, g_bytes_get_data(want_digest, NULL), 32);
	g_assert_cmpint(openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &pkt, NULL),
			==, VULNID_OK);
	hex = tohex(pkt);
	/* two-octet length (434 octets), text signature, RSA, then an MPI of
	 * 3057 bits: the leading zero octet dropped */
	g_assert_true(g_str_has_prefix(hex, "c2c0f2" "04010108001d" "050265920080"
				       "162104989ae064141bdf142b620fb824a072b47f15af3c"
				       "000a091024a072b47f15af3c" "3f47" "0bf1015a5a"));
	g_assert_cmpuint(strlen(hex), ==, 2 * (3 + 434));
}

static void
test_packet_refused(void)
{
	static const struct {
		guint8 algo;
		const char *sexp;
	} bad[] = {
		{ OPENPGP_PK_EDDSA, "" },
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)))" },			/* no s */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:r1:\x01)))" },		/* r twice */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:s1:\x01)(1:x1:\x01)))" },	/* more */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(3:rsa(1:s1:\x01)))" },			/* other algorithm */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:s1:\x01)))x" },		/* trailing */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:s1:\x01))" },		/* unclosed */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r[1:x]1:\x01)(1:s1:\x01)))" },	/* display hint */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r01:\x01)(1:s1:\x01)))" },		/* 01: */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r9:\x01)(1:s1:\x01)))" },		/* too short */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r(1:a)(1:s1:\x01)))" },		/* a list */
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:s1:\x01))(1:x))" },	/* more */
		{ OPENPGP_PK_EDDSA, "(7:sig-vax(5:eddsa(1:r1:\x01)(1:s1:\x01)))" },
		{ OPENPGP_PK_EDDSA, "((((((((((1:a))))))))))" },
		{ OPENPGP_PK_EDDSA, "(7:sig-val(5:eddsa(1:r99999999999:\x01)(1:s1:\x01)))" },
		{ OPENPGP_PK_RSA, "(7:sig-val(3:rsa))" },
		{ OPENPGP_PK_RSA, "(7:sig-val(3:rsa(1:s)))" },
		{ OPENPGP_PK_RSA, "(7:sig-val(5:eddsa(1:r1:\x01)(1:s1:\x01)))" },
	};
	openpgp_key k;

	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(openpgp_sig) sig = NULL;
		g_autoptr(GBytes) pkt = NULL;
		g_autoptr(GError) err = NULL;

		key_of(bad[i].algo == OPENPGP_PK_RSA ? RSA : ED, &k);
		sig = openpgp_sig_new(&k, OPENPGP_SIG_BINARY, CREATED);
		g_assert_cmpint(openpgp_sig_finish(sig, bad[i].sexp, strlen(bad[i].sexp), &pkt, &err), ==,
				VULNID_ERR_INVALID);
		g_assert_null(pkt);
		g_assert_nonnull(err);
	}
	/* values too large for the key: an EdDSA r of 257 bits, an RSA s of
	 * more bits than the modulus */
	{
		g_autoptr(GBytes) big = unhex("01" "1111111111111111111111111111111111111111111111111111111111111111");
		g_autoptr(GBytes) one = unhex("01");
		const GBytes *v[] = { big, one };
		const char *names[] = { "r", "s" };
		g_autoptr(GBytes) sexp = sig_val("eddsa", v, names, 2);
		g_autoptr(openpgp_sig) sig = NULL;
		g_autoptr(GBytes) pkt = NULL;

		key_of(ED, &k);
		sig = openpgp_sig_new(&k, OPENPGP_SIG_BINARY, CREATED);
		g_assert_cmpint(openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &pkt,
						   NULL), ==, VULNID_ERR_INVALID);
	}
	{
		g_autoptr(GString) shex = g_string_new("01");
		g_autoptr(GBytes) s = NULL, sexp = NULL, pkt = NULL;
		g_autoptr(openpgp_sig) sig = NULL;
		const char *names[] = { "s" };

		for (int i = 0; i < 384; i++)
			g_string_append(shex, "ff");
		s = unhex(shex->str);
		{
			const GBytes *v[] = { s };

			sexp = sig_val("rsa", v, names, 1);
		}
		key_of(RSA, &k);
		sig = openpgp_sig_new(&k, OPENPGP_SIG_BINARY, CREATED);
		g_assert_cmpint(openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &pkt,
						   NULL), ==, VULNID_ERR_INVALID);
	}
}

static void
test_armor(void)
{
	g_autoptr(GBytes) pkt = unhex(
		"c27304001608001d050265920080162104fa1f495f1f353ebeae4259e5cf5b422d7560f9a8000a0910cf5b422d"
		"7560f9a876c600fd111111111111111111111111111111111111111111111111111111111111111100ef7f22222222"
		"22222222222222222222222222222222222222222222222222222222");
	g_autofree char *a = openpgp_armor_signature(pkt);
	g_autofree char *crc = NULL;
	guint32 c = openpgp_crc24(g_bytes_get_data(pkt, NULL), g_bytes_get_size(pkt));
	guint8 cb[3] = { (guint8) (c >> 16), (guint8) (c >> 8), (guint8) c };
	g_auto(GStrv) lines = g_strsplit(a, "\n", -1);
	g_autoptr(GString) b64 = g_string_new(NULL);
	gsize n = 0;
	guint i;

	crc = g_base64_encode(cb, 3);
	g_assert_cmpstr(lines[0], ==, "-----BEGIN PGP SIGNATURE-----");
	g_assert_cmpstr(lines[1], ==, "");
	for (i = 2; lines[i][0] != '='; i++) {
		g_assert_cmpuint(strlen(lines[i]), <=, 64);
		g_string_append(b64, lines[i]);
	}
	g_assert_cmpuint(i, ==, 5);	/* 117 octets: 156 characters, 3 lines */
	g_assert_cmpstr(lines[i] + 1, ==, crc);
	g_assert_cmpstr(lines[i + 1], ==, "-----END PGP SIGNATURE-----");
	g_assert_cmpstr(lines[i + 2], ==, "");
	g_assert_null(lines[i + 3]);
	{
		g_autofree guint8 *back = g_base64_decode(b64->str, &n);

		g_assert_cmpmem(back, n, g_bytes_get_data(pkt, NULL), g_bytes_get_size(pkt));
	}
}

static void
check_cleartext(const char *text, const char *shown, const char *canonical)
{
	g_autoptr(GString) sh = g_string_new(NULL);
	g_autoptr(GString) ca = g_string_new(NULL);

	openpgp_cleartext(text, sh, ca);
	g_assert_cmpstr(sh->str, ==, shown);
	g_assert_cmpstr(ca->str, ==, canonical);
}

static void
test_cleartext(void)
{
	check_cleartext("", "\n", "");
	check_cleartext("\n", "\n", "");
	check_cleartext("a", "a\n", "a");
	check_cleartext("a\n", "a\n", "a");
	check_cleartext("a\n\n", "a\n\n", "a\r\n");
	check_cleartext("a\r\nb\r\n", "a\nb\n", "a\r\nb");
	check_cleartext("a\rb\r", "a\nb\n", "a\r\nb");
	check_cleartext("a\r\r\nb", "a\n\nb\n", "a\r\n\r\nb");
	check_cleartext("a  \nb\t\n \t \nc", "a  \nb\t\n \t \nc\n", "a\r\nb\r\n\r\nc");
	check_cleartext("-- \nsig", "- -- \nsig\n", "--\r\nsig");
	check_cleartext("-x\n- y\n-----BEGIN PGP SIGNATURE-----\n--\n",
			"- -x\n- - y\n- -----BEGIN PGP SIGNATURE-----\n- --\n",
			"-x\r\n- y\r\n-----BEGIN PGP SIGNATURE-----\r\n--");
	check_cleartext("From me\nFrom\n>From x\n from",
			"- From me\nFrom\n>From x\n from\n", "From me\r\nFrom\r\n>From x\r\n from");
	check_cleartext(" lead\t in\t", " lead\t in\t\n", " lead\t in");
}

/* --- through gpg-agent ---------------------------------------------------------------- */

/* argv with stdin in; *out its stdout; exit status 0 */
static gboolean
run(const char *const *argv, const char *in, char **out, char **errout)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *o = NULL, *e = NULL;
	int status = 0;

	g_assert_null(in);
	if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &o, &e, &status, &err)) {
		g_test_fail_printf("cannot run %s: %s", argv[0], err->message);
		return FALSE;
	}
	if (out != NULL)
		*out = g_steal_pointer(&o);
	if (errout != NULL)
		*errout = g_steal_pointer(&e);
	return g_spawn_check_wait_status(status, NULL);
}

static char *
write_tmp(const char *name, const void *data, gsize len)
{
	char *path = g_build_filename(tmpdir, name, NULL);

	g_assert_true(g_file_set_contents(path, data, (gssize) len, NULL));
	return path;
}

/* gpg --verify and sqv accept sig (armored) over data (NULL: sig is a
 * cleartext signed message, checked by gpg only), made by k. */
static gboolean
check_verifies(const fixed_key *k, const char *sig_path, const char *data_path)
{
	g_autofree char *out = NULL, *errout = NULL;
	g_autofree char *want = g_strdup_printf("[GNUPG:] VALIDSIG %s ", k->fpr);
	const char *gpg[] = { "gpg", "--homedir", k->home, "--batch", "--no-tty", "--status-fd", "1",
			      "--verify", sig_path, data_path, NULL };

	if (!run(gpg, NULL, &out, &errout)) {
		g_test_fail_printf("gpg --verify failed: %s%s", out, errout);
		return FALSE;
	}
	g_assert_nonnull(strstr(out, want));
	g_assert_null(strstr(out, "BADSIG"));
	if (data_path != NULL && have_sqv) {
		const char *sqv[] = { "sqv", "--keyring", k->pub, sig_path, data_path, NULL };

		g_clear_pointer(&out, g_free);
		g_clear_pointer(&errout, g_free);
		if (!run(sqv, NULL, &out, &errout)) {
			g_test_fail_printf("sqv failed: %s%s", out, errout);
			return FALSE;
		}
		g_assert_cmpstr(g_strstrip(out), ==, k->fpr);
	}
	return TRUE;
}

/* a signature over data, as crypto.c makes one: the digest to the agent,
 * its answer into the packet */
static openpgp_agent *
agent_connect(const fixed_key *k)
{
	g_autoptr(GError) err = NULL;
	openpgp_agent *agent = NULL;

	if (openpgp_agent_connect(k->socket, &agent, &err) != VULNID_OK)
		g_test_fail_printf("%s", err->message);
	return agent;
}

static GBytes *
agent_packet(openpgp_agent *agent, const fixed_key *k, guint8 type, gint64 created, const char *data,
	     GBytes **answer)
{
	openpgp_key key;
	g_autoptr(openpgp_sig) sig = NULL;
	g_autoptr(GBytes) sexp = NULL;
	g_autoptr(GError) err = NULL;
	GBytes *pkt = NULL;

	key_of(k, &key);
	sig = openpgp_sig_new(&key, type, created);
	openpgp_sig_update(sig, data, strlen(data));
	if (agent == NULL)
		return NULL;
	if (openpgp_agent_pksign(agent, k->grip, openpgp_sig_digest(sig), &sexp, &err) != VULNID_OK ||
	    openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &pkt, &err) != VULNID_OK) {
		g_test_fail_printf("%s", err->message);
		return NULL;
	}
	if (answer != NULL)
		*answer = g_bytes_ref(sexp);
	return pkt;
}

static void
check_agent_signature(const fixed_key *k, const char *want_armor)
{
	const char *data = "vulnid\r\nsigned through gpg-agent\r\n";
	g_autoptr(openpgp_agent) agent = agent_connect(k);
	g_autoptr(GBytes) pkt = agent_packet(agent, k, OPENPGP_SIG_BINARY, CREATED, data, NULL);
	g_autofree char *armor = NULL, *sig = NULL, *dat = NULL;

	if (pkt == NULL)
		return;
	armor = openpgp_armor_signature(pkt);
	sig = write_tmp("agent.asc", armor, strlen(armor));
	dat = write_tmp("agent.dat", data, strlen(data));
	check_verifies(k, sig, dat);
	/* Ed25519 and RSA PKCS#1 v1.5 signatures are deterministic: the
	 * same key, time and data give the same bytes */
	if (g_strcmp0(armor, want_armor) != 0)
		g_test_fail_printf("signature changed; now:\n%s", armor);
}

static void
test_agent_eddsa(void)
{
	check_agent_signature(ED,
		"-----BEGIN PGP SIGNATURE-----\n\n"
		"wnUEABYIAB0FAmWSAIAWIQT6H0lfHzU+vq5CWeXPW0ItdWD5qAAKCRDPW0ItdWD5\n"
		"qGUXAQCxaenxioriSUguHLMbKWa9QwOd5XDEjvU+YZocDruoJgD/XKYec6ugI89v\n"
		"+AVA2JBtoA/jpJMPkrdx+/T+jjhbIwA=\n"
		"=ANOr\n"
		"-----END PGP SIGNATURE-----\n");
}

static void
test_agent_rsa(void)
{
	check_agent_signature(RSA,
		"-----BEGIN PGP SIGNATURE-----\n\n"
		"wsDzBAABCAAdBQJlkgCAFiEEmJrgZBQb3xQrYg+4JKBytH8VrzwACgkQJKBytH8V\n"
		"rzxv4gv/WgvR+A8XSrjIa8SzSIf+8CJBMqxYiITsC13RSVemFH1htwBs4qEfzAL2\n"
		"cv9JPnrKudRZ+cWHTcxucyosHgXVA6ioeq0JlhfcuFSky0I3jUNyci0xd2lGxuYl\n"
		"tApaP7nLMfL6xObiBshvO58gJttXEoUMHVEKoomYN3E6JR01zjOB39jQvf8One0H\n"
		"qhQMf6BQLRiE7aQEs9PBt0O07CVckKrmC0n1JjgDMMLBE17yFqMfuXJQXdzy9h7T\n"
		"CEh40LnMT8wNJ6KRlRte8Kwl65BZMskzAI2YZvqhYjFw954ABoGBMLVjqpIcc34e\n"
		"RZQErX0JvAbtU4PRCoiI2b4BEsvtuNhCN3VxILIOONxblvKqsYnNtl5fp0ozQb1o\n"
		"sLTKUODG5NF3PLbs0//L0vdIdEHLUdj5kfrjxgaND1XWHl55NydOL6eTaFDy9Zvf\n"
		"yvvZcEItfAECflcUJBmR3ShErrvYGYaQtvZof+mhPXocJYE202oq2Y53DX/paqUR\n"
		"8ekaCzPr\n"
		"=LLmX\n"
		"-----END PGP SIGNATURE-----\n");
}

/* A value whose first octet is zero is a shorter MPI; a verifier pads it
 * again.  Signing other data until one such comes up (about one in 128
 * for EdDSA's r and s, one in 256 or so for RSA's s), gpg and sqv must
 * accept it.  The search starts at the data where it ended when this was
 * written (signatures are deterministic), so it normally takes one. */
static void
check_leading_zero(const fixed_key *k, guint first, guint tries)
{
	g_autoptr(openpgp_agent) agent = agent_connect(k);

	for (guint i = first; i < first + tries; i++) {
		g_autofree char *data = g_strdup_printf("attempt %u\r\n", i);
		g_autoptr(GBytes) answer = NULL;
		g_autoptr(GBytes) pkt = agent_packet(agent, k, OPENPGP_SIG_BINARY, CREATED, data, &answer);
		gsize n;
		const char *a;

		if (pkt == NULL)
			return;
		a = g_bytes_get_data(answer, &n);
		/* the first octet of each value: after "32:" or "384:" */
		const char *r = g_strstr_len(a, (gssize) n, k->algo == OPENPGP_PK_RSA ? "384:" : "1:r32:");
		const char *s = k->algo == OPENPGP_PK_RSA ? NULL : g_strstr_len(a, (gssize) n, "1:s32:");
		gboolean zero;

		g_assert_nonnull(r);
		if (r == NULL)
			return;
		zero = r[k->algo == OPENPGP_PK_RSA ? 4 : 6] == 0 || (s != NULL && s[6] == 0);
		if (zero) {
			g_autofree char *armor = openpgp_armor_signature(pkt);
			g_autofree char *sig = write_tmp("zero.asc", armor, strlen(armor));
			g_autofree char *dat = write_tmp("zero.dat", data, strlen(data));

			g_test_message("a leading zero in the signature of attempt %u", i);
			g_assert_cmpuint(i, ==, first);
			check_verifies(k, sig, dat);
			return;
		}
	}
	g_test_incomplete("no value with a leading zero came up");
}

static void
test_agent_leading_zero(void)
{
	check_leading_zero(ED, 185, 4096);
	check_leading_zero(RSA, 242, 2048);
}

/* --- crypto.c's functions, the robot's key being the fixed one ------------------------------ */

static const char torture[] =
	"plain line\n"
	"trailing spaces   \n"
	"trailing tab\t\n"
	"crlf line\r\n"
	"crlf after spaces  \r\n"
	"lone cr\rafter the cr\n"
	"- a dash\n"
	"-----BEGIN PGP SIGNATURE-----\n"
	"-----END PGP SIGNATURE-----\n"
	"From the start of a line\n"
	"From\n"
	" leading space kept\n"
	"\n"
	"   \n"
	"\t\n"
	"\r\n"
	"mixed \t \t\n"
	"\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe2\x9c\x93\n"
	"last line without a line end  ";
/* what gpg reads out of it: every line end one LF (also after the
 * last line), trailing blanks gone (they are shown, not signed) */
static const char torture_text[] =
	"plain line\n"
	"trailing spaces\n"
	"trailing tab\n"
	"crlf line\n"
	"crlf after spaces\n"
	"lone cr\n"
	"after the cr\n"
	"- a dash\n"
	"-----BEGIN PGP SIGNATURE-----\n"
	"-----END PGP SIGNATURE-----\n"
	"From the start of a line\n"
	"From\n"
	" leading space kept\n"
	"\n"
	"\n"
	"\n"
	"\n"
	"mixed\n"
	"\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe2\x9c\x93\n"
	"last line without a line end\n";

/* The signed text and the signature of a cleartext message, read the way
 * RFC 9580 section 7 tells a verifier to: after the header block, up to
 * the armor; "- " removed; trailing blanks dropped; CRLF between lines. */
static void
split_cleartext(const char *msg, GString *text, GString *sig)
{
	const char *p = strstr(msg, "\n\n");
	const char *arm = strstr(msg, "\n-----BEGIN PGP SIGNATURE-----\n");
	g_autofree char *body = NULL;
	g_auto(GStrv) lines = NULL;

	g_assert_true(g_str_has_prefix(msg, "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"));
	g_assert_nonnull(p);
	g_assert_nonnull(arm);
	body = g_strndup(p + 2, (gsize) (arm - (p + 2)));
	lines = g_strsplit(body, "\n", -1);
	for (char **l = lines; *l != NULL; l++) {
		char *s = g_str_has_prefix(*l, "- ") ? *l + 2 : *l;
		gsize n = strlen(s);

		g_assert_null(strchr(s, '\r'));
		g_assert_false(**l == '-' && s == *l);	/* every dash line escaped */
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (l != lines)
			g_string_append(text, "\r\n");
		g_string_append_len(text, s, (gssize) n);
	}
	g_string_assign(sig, arm + 1);
}

static void
robot_home(const fixed_key *k)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *fpr = NULL;

	g_assert_cmpint(crypto_set_home(k->home, &err), ==, VULNID_OK);
	g_assert_cmpint(crypto_robot_fingerprint(&fpr, &err), ==, VULNID_OK);
	g_assert_cmpstr(fpr, ==, k->fpr);
}

static void
check_clearsign(const fixed_key *k)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *msg = NULL, *out = NULL, *errout = NULL;
	g_autofree char *msg_path = NULL, *txt_path = NULL, *sig_path = NULL;
	g_autoptr(GString) text = g_string_new(NULL), sig = g_string_new(NULL);

	robot_home(k);
	if (crypto_clearsign(torture, k->fpr, &msg, &err) != VULNID_OK) {
		g_test_fail_printf("%s", err->message);
		return;
	}
	msg_path = write_tmp("torture.asc", msg, strlen(msg));
	g_assert_nonnull(strstr(msg, "\ntrailing spaces   \n"));	/* shown, not signed */
	g_assert_null(strchr(msg, '\r'));
	check_verifies(k, msg_path, NULL);
	{
		/* what gpg reads out of it is the text */
		g_autofree char *out_path = g_build_filename(tmpdir, "torture.out", NULL);
		const char *gpg[] = { "gpg", "--homedir", k->home, "--batch", "--no-tty", "--yes", "--output",
				      out_path, "--decrypt", msg_path, NULL };
		g_autofree char *got = NULL;

		g_assert_true(run(gpg, NULL, &out, &errout));
		g_assert_true(g_file_get_contents(out_path, &got, NULL, NULL));
		g_assert_cmpstr(got, ==, torture_text);
	}
	/* sqv knows no cleartext framework: the text and signature apart */
	split_cleartext(msg, text, sig);
	txt_path = write_tmp("torture.txt", text->str, text->len);
	sig_path = write_tmp("torture.sig", sig->str, sig->len);
	check_verifies(k, sig_path, txt_path);
}

static void
test_clearsign(void)
{
	check_clearsign(ED);
	check_clearsign(RSA);
}

/* Detached signatures on the connection kept, also after the agent was
 * stopped between two of them (it is started again). */
static void
test_detached_restart(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
		fixed_key *k = &keys[i];
		g_autoptr(GBytes) data = g_bytes_new_static("{\"head\":1}\n", 11);
		g_autofree char *dat = write_tmp("head.json", "{\"head\":1}\n", 11);

		robot_home(k);
		for (int round = 0; round < 3; round++) {
			g_autoptr(GBytes) sig = NULL;
			g_autoptr(GError) err = NULL;
			g_autofree char *sig_path = NULL;

			if (round == 2) {
				const char *kill[] = { "gpgconf", "--homedir", k->home, "--kill", "gpg-agent", NULL };

				g_assert_true(run(kill, NULL, NULL, NULL));
			}
			if (crypto_sign_detached(data, k->fpr, &sig, &err) != VULNID_OK) {
				g_test_fail_printf("round %d: %s", round, err->message);
				return;
			}
			sig_path = write_tmp("head.json.asc", g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
			check_verifies(k, sig_path, dat);
		}
	}
}

/* Several threads signing at once (a resident server's workers), over
 * the one connection kept: every signature made, and good. */
#define THREADS 4
#define PER_THREAD 10

static gpointer
sign_thread(gpointer data)
{
	GBytes *last = NULL;

	for (int i = 0; i < PER_THREAD; i++) {
		g_autoptr(GBytes) in = g_bytes_new_static("{\"head\":2}\n", 11);
		g_autoptr(GError) err = NULL;
		GBytes *sig = NULL;

		if (crypto_sign_detached(in, data, &sig, &err) != VULNID_OK) {
			g_test_message("thread: %s", err->message);
			break;
		}
		if (last != NULL)
			g_bytes_unref(last);
		last = sig;
	}
	return last;
}

static void
test_threads(void)
{
	GThread *t[THREADS];
	g_autofree char *dat = write_tmp("threads.json", "{\"head\":2}\n", 11);

	robot_home(ED);
	for (int i = 0; i < THREADS; i++)
		t[i] = g_thread_new("sign", sign_thread, (gpointer) ED->fpr);
	for (int i = 0; i < THREADS; i++) {
		g_autoptr(GBytes) sig = g_thread_join(t[i]);
		g_autofree char *sig_path = NULL;

		g_assert_nonnull(sig);
		if (sig == NULL)
			continue;
		sig_path = write_tmp("threads.asc", g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
		check_verifies(ED, sig_path, dat);
	}
}

/* --- set-up ------------------------------------------------------------------------------- */

static void
setup_key(fixed_key *k, const char *corpora)
{
	g_autofree char *file = g_build_filename(corpora, k->file, NULL);
	g_autofree char *out = NULL, *errout = NULL;
	g_autofree char *pub = g_strconcat(k->file, ".pub", NULL);
	const char *import[] = { "gpg", "--homedir", NULL, "--batch", "--import", file, NULL };
	const char *export[] = { "gpg", "--homedir", NULL, "--batch", "--armor", "--export", k->fpr, NULL };
	const char *sock[] = { "gpgconf", "--homedir", NULL, "--list-dirs", "agent-socket", NULL };
	const char *launch[] = { "gpgconf", "--homedir", NULL, "--launch", "gpg-agent", NULL };

	k->home = g_build_filename(tmpdir, k->file, NULL);
	g_assert_cmpint(g_mkdir(k->home, 0700), ==, 0);
	import[2] = export[2] = sock[2] = launch[2] = k->home;
	if (!run(import, NULL, NULL, &errout))
		g_error("cannot import %s: %s", file, errout);	/* before any agent runs */
	g_assert_true(run(export, NULL, &out, NULL));
	k->pub = write_tmp(pub, out, strlen(out));
	g_clear_pointer(&out, g_free);
	g_assert_true(run(sock, NULL, &out, NULL));
	k->socket = g_strdup(g_strstrip(out));
	g_assert_true(run(launch, NULL, NULL, NULL));
}

static void
teardown(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
		const char *kill[] = { "gpgconf", "--homedir", keys[i].home, "--kill", "all", NULL };

		if (keys[i].home != NULL)
			run(kill, NULL, NULL, NULL);
	}
	crypto_agent_close();
	if (tmpdir != NULL) {
		const char *rm[] = { "rm", "-rf", tmpdir, NULL };

		run(rm, NULL, NULL, NULL);
	}
}

int
main(int argc, char **argv)
{
	const char *srcdir = g_getenv("VULNID_SRCDIR");
	g_autofree char *corpora = g_build_filename(srcdir != NULL ? srcdir : ".", "test", "corpora", "openpgp", NULL);
	g_autofree char *gpg = g_find_program_in_path("gpg");
	g_autofree char *sqv = g_find_program_in_path("sqv");
	int rc;

	g_test_init(&argc, &argv, NULL);
	/* a failure must not end the program before teardown() stops the
	 * agents it started */
	g_test_set_nonfatal_assertions();
	crypto_preinit();	/* as the programs: gpgme without gpgconf */
	gpgme_check_version(NULL);
	g_test_add_func("/openpgp/crc24", test_crc24);
	g_test_add_func("/openpgp/key-init", test_key_init);
	g_test_add_func("/openpgp/packet/eddsa", test_packet_eddsa);
	g_test_add_func("/openpgp/packet/rsa", test_packet_rsa);
	g_test_add_func("/openpgp/packet/refused", test_packet_refused);
	g_test_add_func("/openpgp/armor", test_armor);
	g_test_add_func("/openpgp/cleartext", test_cleartext);
	if (gpg != NULL) {
		have_sqv = sqv != NULL;
		tmpdir = g_dir_make_tmp("vulnid-u-openpgp.XXXXXX", NULL);
		g_assert_nonnull(tmpdir);
		for (gsize i = 0; i < G_N_ELEMENTS(keys); i++)
			setup_key(&keys[i], corpora);
		g_test_add_func("/openpgp/agent/eddsa", test_agent_eddsa);
		g_test_add_func("/openpgp/agent/rsa", test_agent_rsa);
		g_test_add_func("/openpgp/agent/leading-zero", test_agent_leading_zero);
		g_test_add_func("/openpgp/crypto/clearsign", test_clearsign);
		g_test_add_func("/openpgp/crypto/detached-restart", test_detached_restart);
		g_test_add_func("/openpgp/crypto/threads", test_threads);
	}
	rc = g_test_run();
	if (gpg != NULL && !have_sqv)
		g_print("# sqv is not installed: signatures were checked with gpg only\n");
	teardown();
	return rc;
}
