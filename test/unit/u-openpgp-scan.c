/* u-openpgp-scan.c - what OpenPGP data holds, read before gpg sees it
 * (openpgp-scan.c), the checks built on it (crypto_signature_sane(),
 * crypto_ciphertext_sane()) and the bounded gpg process (gpgrun.c). */
#include "autoconfig.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "crypto.h"
#include "gpgrun.h"
#include "openpgp-scan.h"

static GBytes *
fixture(const char *name)
{
	const char *srcdir = g_getenv("VULNID_SRCDIR");
	g_autofree char *path = g_build_filename(srcdir != NULL ? srcdir : ".", "test", "corpora", "openpgp",
						 name, NULL);
	g_autoptr(GError) e = NULL;
	char *text;
	gsize len;

	g_assert_true(g_file_get_contents(path, &text, &len, &e));
	return g_bytes_new_take(text, len);
}

/* A new-format packet of tag with a one-octet length. */
static void
packet(GByteArray *a, guint tag, gsize len)
{
	guint8 h[2] = { (guint8) (0xC0 | tag), (guint8) len };

	g_assert_cmpuint(len, <, 192);
	g_byte_array_append(a, h, 2);
	for (gsize i = 0; i < len; i++)
		g_byte_array_append(a, (const guint8 *) "x", 1);
}

static void
test_headers(void)
{
	g_autoptr(GByteArray) a = g_byte_array_new();
	/* old format, two-octet length (signature, 3 bytes); new format
	 * with a partial body (literal: 2 + 1 bytes); a five-octet length */
	static const guint8 odd[] = {
		0x89, 0x00, 0x03, 1, 2, 3,
		0xCB, 0xE1, 'a', 'b', 0x01, 'c',
		0xC2, 0xFF, 0, 0, 0, 2, 9, 9,
	};
	openpgp_scan sc;

	g_assert_true(openpgp_scan_data(odd, sizeof odd, 10, &sc));
	g_assert_false(sc.malformed);
	g_assert_cmpuint(sc.packets, ==, 3);
	g_assert_cmpuint(sc.tags[OPENPGP_TAG_SIGNATURE], ==, 2);
	g_assert_cmpuint(sc.tags[OPENPGP_TAG_LITERAL], ==, 1);
	/* a length past the end */
	packet(a, OPENPGP_TAG_SIGNATURE, 10);
	g_byte_array_set_size(a, a->len - 1);
	g_assert_true(openpgp_scan_data(a->data, a->len, 10, &sc));
	g_assert_true(sc.malformed);
	/* not OpenPGP at all */
	g_assert_false(openpgp_scan_data("hello", 5, 10, &sc));
}

static void
test_flood(void)
{
	g_autoptr(GByteArray) a = g_byte_array_new();
	openpgp_scan sc;

	for (int i = 0; i < 20000; i++)
		packet(a, OPENPGP_TAG_SIGNATURE, 60);
	g_assert_true(openpgp_scan_data(a->data, a->len, CRYPTO_MAX_SIGNATURES + 1, &sc));
	g_assert_true(sc.too_many);
	g_assert_cmpuint(sc.packets, ==, CRYPTO_MAX_SIGNATURES + 1);
	{
		g_autoptr(GBytes) b = g_bytes_new(a->data, a->len);
		g_autofree char *why = NULL;

		g_assert_false(crypto_signature_sane(b, &why));
		g_assert_nonnull(strstr(why, "more than 8 signatures"));
	}
	{
		/* two signatures are fine; a key among them is not */
		g_autoptr(GByteArray) two = g_byte_array_new();
		g_autoptr(GBytes) b = NULL;
		g_autofree char *why = NULL;

		packet(two, OPENPGP_TAG_SIGNATURE, 60);
		packet(two, OPENPGP_TAG_SIGNATURE, 60);
		b = g_bytes_new(two->data, two->len);
		g_assert_true(crypto_signature_sane(b, &why));
		g_clear_pointer(&b, g_bytes_unref);
		packet(two, OPENPGP_TAG_PUBLIC_KEY, 20);
		b = g_bytes_new(two->data, two->len);
		g_assert_false(crypto_signature_sane(b, &why));
	}
}

static void
test_ciphertext(void)
{
	g_autoptr(GByteArray) a = g_byte_array_new();
	g_autofree char *why = NULL;
	/* an encrypted data packet whose body goes on past what is given */
	static const guint8 seipd[] = { 0xD2, 0xFF, 0, 1, 0, 0, 1 };

	packet(a, OPENPGP_TAG_PKESK, 80);
	g_byte_array_append(a, seipd, sizeof seipd);
	g_assert_true(crypto_ciphertext_sane(a->data, a->len, &why));
	/* a passphrase (SKESK) */
	g_byte_array_set_size(a, 0);
	packet(a, OPENPGP_TAG_SKESK, 20);
	g_byte_array_append(a, seipd, sizeof seipd);
	g_assert_false(crypto_ciphertext_sane(a->data, a->len, &why));
	g_assert_nonnull(strstr(why, "passphrase"));
	g_clear_pointer(&why, g_free);
	/* too many session keys */
	g_byte_array_set_size(a, 0);
	for (int i = 0; i < CRYPTO_MAX_RECIPIENTS + 1; i++)
		packet(a, OPENPGP_TAG_PKESK, 80);
	g_byte_array_append(a, seipd, sizeof seipd);
	g_assert_false(crypto_ciphertext_sane(a->data, a->len, &why));
	g_assert_nonnull(strstr(why, "more than 64 keys"));
	g_clear_pointer(&why, g_free);
	/* no integrity protection (SED) */
	g_byte_array_set_size(a, 0);
	packet(a, OPENPGP_TAG_PKESK, 80);
	packet(a, OPENPGP_TAG_SED, 40);
	g_assert_false(crypto_ciphertext_sane(a->data, a->len, &why));
	g_assert_nonnull(strstr(why, "integrity"));
}

static void
test_keys(void)
{
	g_autoptr(GBytes) armored = fixture("unit-ed25519.pub.asc");
	g_autoptr(GBytes) bin = openpgp_binary(g_bytes_get_data(armored, NULL), g_bytes_get_size(armored),
					       g_bytes_get_size(armored));
	g_autoptr(GPtrArray) keys = NULL;
	const openpgp_block_key *k;

	g_assert_nonnull(bin);
	keys = openpgp_block_keys(bin, 4);
	g_assert_nonnull(keys);
	g_assert_cmpuint(keys->len, ==, 1);
	k = openpgp_block_find(keys, "fa1f495f1f353ebeae4259e5cf5b422d7560f9a8");
	g_assert_nonnull(k);
	g_assert_cmpstr(k->fpr, ==, "FA1F495F1F353EBEAE4259E5CF5B422D7560F9A8");	/* as gpg lists it */
	g_assert_nonnull(openpgp_block_find(keys, "CF5B422D7560F9A8"));	/* by key ID */
	g_assert_null(openpgp_block_find(keys, "0000000000000000"));
	g_assert_false(k->secret);
	g_assert_cmpuint(k->uids->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(k->uids, 0), ==, "vulnid unit test <unit-ed25519@example.org>");
	{
		/* the same key twice is two keys; at most one allowed */
		g_autoptr(GByteArray) two = g_byte_array_new();
		g_autoptr(GBytes) b = NULL;

		g_byte_array_append(two, g_bytes_get_data(bin, NULL), (guint) g_bytes_get_size(bin));
		g_byte_array_append(two, g_bytes_get_data(bin, NULL), (guint) g_bytes_get_size(bin));
		b = g_bytes_new(two->data, two->len);
		g_assert_null(openpgp_block_keys(b, 1));
	}
	{
		/* a secret key is seen as one, and not identified */
		g_autoptr(GBytes) sec = fixture("unit-ed25519.sec.asc");
		g_autoptr(GBytes) sbin = openpgp_binary(g_bytes_get_data(sec, NULL), g_bytes_get_size(sec),
							g_bytes_get_size(sec));
		g_autoptr(GPtrArray) skeys = openpgp_block_keys(sbin, 4);

		g_assert_nonnull(skeys);
		g_assert_true(((openpgp_block_key *) g_ptr_array_index(skeys, 0))->secret);
		g_assert_null(openpgp_block_find(skeys, "FA1F495F1F353EBEAE4259E5CF5B422D7560F9A8"));
	}
}

static void
test_uid_email(void)
{
	static const struct {
		const char *uid, *email;
	} cases[] = {
		{ "Alice <Alice@Example.NET>", "alice@example.net" },
		{ "bob@example.org", "bob@example.org" },
		{ "Carol (work) <c@x.example> ", "c@x.example" },
		{ "No address", NULL },
		{ "Broken <a b@c>", NULL },
		{ "<>", NULL },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *e = openpgp_uid_email(cases[i].uid);

		g_assert_cmpstr(e, ==, cases[i].email);
	}
}

/* gpgrun: a program that ignores its arguments stands in for gpg. */
static void
test_gpgrun_bounds(void)
{
	g_autoptr(gpgrun_result) r = NULL;
	g_autoptr(GError) e = NULL;
	static const char *const none[] = { NULL };
	gpgrun_opts o = { .args = none, .input_fd = -1, .out_fd = -1 };
	g_autofree char *script = g_build_filename(g_get_tmp_dir(), "u-gpgrun-XXXXXX", NULL);
	int fd = g_mkstemp(script);
	const char *body =
		"#!/bin/sh\n"
		"case \"$VULNID_UNIT_MODE\" in\n"
		"status) echo '[GNUPG:] NEWSIG' >&3; echo '[GNUPG:] GOODSIG 1 x' >&3; cat; exit 0 ;;\n"
		"flood) yes A ;;\n"
		"sleep) exec sleep 30 ;;\n"
		"esac\n";

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, body, strlen(body)), ==, (gssize) strlen(body));
	close(fd);
	g_chmod(script, 0700);
	gpgrun_set_gpg_path(script);

	/* status lines and output come back */
	g_setenv("VULNID_UNIT_MODE", "status", TRUE);
	o.input = g_bytes_new_static("data", 4);
	o.max_out = 100;
	g_assert_cmpint(gpgrun(&o, &r, &e), ==, VULNID_OK);
	g_assert_true(gpgrun_ok(r));
	g_assert_cmpuint(gpgrun_status_count(r, "NEWSIG"), ==, 1);
	g_assert_cmpstr(gpgrun_status(r, "GOODSIG"), ==, "1 x");
	g_assert_cmpint(r->out->len, ==, 4);
	g_clear_pointer(&r, gpgrun_result_free);
	g_bytes_unref(o.input);
	o.input = NULL;

	/* endless output: stopped at the cap */
	g_setenv("VULNID_UNIT_MODE", "flood", TRUE);
	o.max_out = 1 << 20;
	g_assert_cmpint(gpgrun(&o, &r, &e), ==, VULNID_OK);
	g_assert_true(r->too_big);
	g_assert_false(gpgrun_ok(r));
	g_assert_cmpint(r->out_len, <=, 1 << 20);
	g_clear_pointer(&r, gpgrun_result_free);

	/* no end: stopped at the deadline */
	g_setenv("VULNID_UNIT_MODE", "sleep", TRUE);
	o.timeout_ms = 300;
	g_assert_cmpint(gpgrun(&o, &r, &e), ==, VULNID_OK);
	g_assert_true(r->timed_out);
	g_clear_pointer(&r, gpgrun_result_free);

	/* a program that is not there: TEMP */
	gpgrun_set_gpg_path("/nonexistent/gpg");
	g_assert_cmpint(gpgrun(&o, &r, &e), ==, VULNID_ERR_TEMP);
	g_clear_error(&e);
	gpgrun_set_gpg_path(NULL);
	unlink(script);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/openpgp-scan/headers", test_headers);
	g_test_add_func("/openpgp-scan/flood", test_flood);
	g_test_add_func("/openpgp-scan/ciphertext", test_ciphertext);
	g_test_add_func("/openpgp-scan/keys", test_keys);
	g_test_add_func("/openpgp-scan/uid-email", test_uid_email);
	g_test_add_func("/gpgrun/bounds", test_gpgrun_bounds);
	return g_test_run();
}
