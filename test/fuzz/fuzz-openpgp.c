/* fuzz-openpgp.c - what OpenPGP data holds, read before gpg sees it:
 * openpgp_scan_data(), openpgp_scan_encrypted(), openpgp_binary() and
 * openpgp_block_keys() on hostile bytes (armored or binary), and the
 * checks built on them (crypto_signature_sane(), crypto_ciphertext_sane()).
 *
 * Properties: no walk counts more packets than it was allowed; a key
 * block is never split into more keys than allowed, every key's packets
 * lie inside the data, its fingerprint is empty or 40 upper-case hex
 * digits and its user IDs are valid UTF-8; a signature found sane holds
 * 1 to CRYPTO_MAX_SIGNATURES signature packets. */
#include "autoconfig.h"

#include <string.h>

#include "crypto.h"
#include "openpgp-scan.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	return 0;
}

static void
check_keys(GBytes *bin)
{
	g_autoptr(GPtrArray) keys = openpgp_block_keys(bin, CRYPTO_MAX_KEYS);

	if (keys == NULL)
		return;
	if (keys->len > CRYPTO_MAX_KEYS)
		fuzz_fail("%u keys read, at most %d allowed", keys->len, CRYPTO_MAX_KEYS);
	for (guint i = 0; i < keys->len; i++) {
		const openpgp_block_key *k = g_ptr_array_index(keys, i);

		if (g_bytes_get_size(k->packets) > g_bytes_get_size(bin))
			fuzz_fail("a key longer than the data");
		if (k->fpr[0] != '\0' && (strlen(k->fpr) != 40 || strspn(k->fpr, "0123456789ABCDEF") != 40))
			fuzz_fail("fingerprint '%s'", k->fpr);
		for (guint j = 0; j < k->uids->len; j++)
			if (!g_utf8_validate(g_ptr_array_index(k->uids, j), -1, NULL))
				fuzz_fail("a user ID that is not UTF-8");
		if (k->fpr[0] != '\0' && openpgp_block_find(keys, k->fpr) == NULL)
			fuzz_fail("key %s not found by its fingerprint", k->fpr);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	openpgp_scan sc;
	g_autoptr(GBytes) input = g_bytes_new(data, size);
	g_autoptr(GBytes) bin = openpgp_binary(data, size, size);
	g_autofree char *why = NULL;

	if (openpgp_scan_data(data, size, 16, &sc) && sc.packets > 16)
		fuzz_fail("%u packets counted, 16 allowed", sc.packets);
	if (openpgp_scan_encrypted(data, size, 4, &sc) && sc.packets > 5)
		fuzz_fail("%u packets before the encrypted data, 4 allowed", sc.packets);
	if (bin != NULL) {
		if (g_bytes_get_size(bin) > size)
			fuzz_fail("binary longer than the armor");
		check_keys(bin);
	}
	if (crypto_signature_sane(input, &why)) {
		openpgp_scan_data(data, size, 1000, &sc);
		if (sc.tags[OPENPGP_TAG_SIGNATURE] < 1 || sc.tags[OPENPGP_TAG_SIGNATURE] > CRYPTO_MAX_SIGNATURES)
			fuzz_fail("a signature found sane with %u signature packets", sc.tags[OPENPGP_TAG_SIGNATURE]);
	}
	g_clear_pointer(&why, g_free);
	crypto_ciphertext_sane(data, size, &why);
	return 0;
}
