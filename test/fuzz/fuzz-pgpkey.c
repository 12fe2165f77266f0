/* fuzz-pgpkey.c - a transferable public key as openpgp_cert_parse() reads
 * it (binary or ASCII-armored), the key gpg would encrypt to chosen from
 * it, and a message encrypted to that key (src/lib/openpgp-encrypt.c).
 * The robot reads only its own key, exported by gpg; hostile bytes must
 * still never crash, loop or read past the end.
 *
 * Properties: a parse that fails leaves no key and says why; one that
 * succeeds has a primary key and at most OPENPGP_KEY_MAX_SUBKEYS subkeys,
 * the key ID of each version 4 key the low 64 bits of its fingerprint;
 * the key chosen is one of the key's own, bound, not revoked, not expired
 * at the time; encrypting to it gives an armored message or an error with
 * a reason, never both. */
#include "autoconfig.h"

#include <string.h>

#include "openpgp-encrypt.h"
#include "fuzz.h"

static gint64 now;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(FUZZ_NOW, NULL);

	(void) argc;
	(void) argv;
	now = g_date_time_to_unix(t);
	return 0;
}

static void
check_key(const openpgp_pubkey *k)
{
	if (k->body == NULL)
		fuzz_fail("a key without its packet");
	if (k->version == 4 && memcmp(k->keyid, k->fpr + 12, 8) != 0)
		fuzz_fail("the key ID is not the end of the fingerprint");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(openpgp_cert) cert = NULL;
	g_autoptr(GError) err = NULL;
	const openpgp_pubkey *key;
	gboolean own = FALSE;
	char *armored = NULL;
	vulnid_status s;

	s = openpgp_cert_parse(data, size, &cert, &err);
	if (s != VULNID_OK) {
		if (cert != NULL || err == NULL)
			fuzz_fail("a failed parse returned a key, or no reason");
		return 0;
	}
	if (cert == NULL || cert->primary == NULL || err != NULL)
		fuzz_fail("a parse without a key, or with an error");
	if (cert->subkeys->len > OPENPGP_KEY_MAX_SUBKEYS)
		fuzz_fail("%u subkeys", cert->subkeys->len);
	check_key(cert->primary);
	for (guint i = 0; i < cert->subkeys->len; i++)
		check_key(g_ptr_array_index(cert->subkeys, i));
	key = openpgp_cert_encryption_key(cert, now);
	if (key == NULL)
		return 0;
	own = key == cert->primary;
	for (guint i = 0; i < cert->subkeys->len && !own; i++)
		own = key == g_ptr_array_index(cert->subkeys, i);
	if (!own)
		fuzz_fail("the key chosen is not one of the key's");
	if (!key->bound || key->revoked || key->version != 4 || key->created > now ||
	    (key->expires != 0 && key->expires <= now) || cert->primary->revoked)
		fuzz_fail("an unusable key chosen");
	s = openpgp_encrypt(key, "sealed", 6, &armored, &err);
	if (s == VULNID_OK) {
		if (armored == NULL || err != NULL || !g_str_has_prefix(armored, "-----BEGIN PGP MESSAGE-----\n\n") ||
		    !g_str_has_suffix(armored, "-----END PGP MESSAGE-----\n"))
			fuzz_fail("encrypted, but not to an armored message");
	} else if (armored != NULL || err == NULL)
		fuzz_fail("encryption failed with a message or without a reason");
	g_free(armored);
	return 0;
}
