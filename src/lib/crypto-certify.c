/* crypto-certify.c - whether a key carries a certification by one of some
 * keys, as gpg checks it: an endorsement by certification
 *
 * The key as it was sent (a key block attached to a mail) is copied alone
 * into a scratch keyring, with the candidates from the robot's keyring
 * beside it and nothing else: a key that merely shares a candidate's key
 * ID cannot stand in for it there.  gpg checks every signature on the
 * key's user IDs (gpgme's keylist with GPGME_KEYLIST_MODE_SIGS, which is
 * gpg --check-sigs); what a user ID says is never looked at. */
#include "autoconfig.h"

#include <string.h>
#include <gpgme.h>

#include "crypto.h"

#include "crypto-private.h"

/* The key subject alone, as data holds it, exported from scratch. */
static vulnid_status
subject_alone(const char *scratch, GBytes *data, const char *subject, GBytes **out, GError **err)
{
	g_autofree char *primary = NULL;
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	gpgme_error_t e;
	vulnid_status s;

	*out = NULL;
	s = cr_import_into(scratch, data, NULL, err);
	if (s != VULNID_OK)
		return s;
	if (cr_primary_in(scratch, subject, &primary, NULL) != VULNID_OK ||
	    g_ascii_strcasecmp(primary, subject) != 0)
		return VULNID_OK;	/* not in the data, or not as a primary key */
	s = cr_ctx(scratch, &ctx, err);
	if (s != VULNID_OK)
		return s;
	gpgme_data_new(&d);
	e = gpgme_op_export(ctx, primary, 0, d);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(d);
		return cr_gpg_fail(err, e, "cannot export the key");
	}
	*out = cr_data_to_bytes(d);
	return VULNID_OK;
}

/* A candidate that may certify: in the robot's keyring, neither revoked
 * nor expired; its public key into scratch. */
static gboolean
candidate_into(const char *scratch, const char *fpr)
{
	g_autoptr(crypto_key) k = NULL;
	g_autoptr(GBytes) pub = NULL;

	if (crypto_get_key(fpr, &k, NULL) != VULNID_OK || k->revoked || k->expired)
		return FALSE;
	if (crypto_export_public(k->fpr, &pub, NULL) != VULNID_OK)
		return FALSE;
	return cr_import_into(scratch, pub, NULL, NULL) == VULNID_OK;
}

/* Whether a signature's 16-digit issuer key ID is fingerprint fpr's. */
static gboolean
issued_by(const char *keyid, const char *fpr)
{
	gsize n = fpr != NULL ? strlen(fpr) : 0;

	return keyid != NULL && strlen(keyid) == 16 && n == 40 && g_ascii_strcasecmp(fpr + n - 16, keyid) == 0;
}

/* The latest certification and revocation of a certification, by the
 * candidate, on any user ID of key; gpg checked each (status 0). */
static void
latest_by(gpgme_key_t key, const char *candidate, long *cert, long *rev)
{
	*cert = *rev = -1;
	for (gpgme_user_id_t u = key->uids; u != NULL; u = u->next) {
		if (u->revoked || u->invalid)
			continue;
		for (gpgme_key_sig_t sig = u->signatures; sig != NULL; sig = sig->next) {
			gboolean certification = sig->sig_class >= 0x10 && sig->sig_class <= 0x13;

			if (gpgme_err_code(sig->status) != GPG_ERR_NO_ERROR || sig->invalid ||
			    !sig->exportable || !issued_by(sig->keyid, candidate))
				continue;
			if (certification && !sig->revoked && !sig->expired && sig->timestamp > *cert)
				*cert = sig->timestamp;
			else if (sig->sig_class == 0x30 && sig->timestamp > *rev)
				*rev = sig->timestamp;
		}
	}
}

vulnid_status
crypto_certified_by(GBytes *data, const char *subject, const char *const *candidates, char **certifier,
		    GError **err)
{
	g_autofree char *scratch1 = NULL;
	g_autofree char *scratch2 = NULL;
	g_autoptr(GBytes) alone = NULL;
	g_autoptr(GPtrArray) present = g_ptr_array_new_with_free_func(g_free);
	gpgme_ctx_t ctx = NULL;
	gpgme_key_t key = NULL;
	gpgme_error_t e;
	vulnid_status s;

	*certifier = NULL;
	if (data == NULL || subject == NULL || candidates == NULL || crypto_homedir == NULL)
		return VULNID_OK;
	scratch1 = cr_scratch_home(err);
	if (scratch1 == NULL)
		return VULNID_ERR_IO;
	s = subject_alone(scratch1, data, subject, &alone, err);
	cr_scratch_remove(scratch1);
	if (s != VULNID_OK || alone == NULL || g_bytes_get_size(alone) == 0)
		return s;
	scratch2 = cr_scratch_home(err);
	if (scratch2 == NULL)
		return VULNID_ERR_IO;
	s = cr_import_into(scratch2, alone, NULL, err);
	for (const char *const *c = candidates; s == VULNID_OK && *c != NULL; c++)
		if (g_ascii_strcasecmp(*c, subject) != 0 && candidate_into(scratch2, *c))
			g_ptr_array_add(present, g_strdup(*c));
	if (s == VULNID_OK && present->len > 0)
		s = cr_ctx(scratch2, &ctx, err);
	if (s != VULNID_OK || present->len == 0)
		goto out;
	gpgme_set_keylist_mode(ctx, GPGME_KEYLIST_MODE_LOCAL | GPGME_KEYLIST_MODE_SIGS);
	e = gpgme_get_key(ctx, subject, &key, 0);
	if (e != 0) {
		s = gpgme_err_code(e) == GPG_ERR_EOF ? VULNID_OK : cr_gpg_fail(err, e, "cannot list the key");
		goto out;
	}
	for (guint i = 0; i < present->len && *certifier == NULL; i++) {
		long cert, rev;

		latest_by(key, g_ptr_array_index(present, i), &cert, &rev);
		if (cert >= 0 && cert > rev)
			*certifier = g_ascii_strup(g_ptr_array_index(present, i), -1);
	}
out:
	if (key != NULL)
		gpgme_key_unref(key);
	if (ctx != NULL)
		gpgme_release(ctx);
	cr_scratch_remove(scratch2);
	return s;
}
