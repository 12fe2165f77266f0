/* crypto-certify.c - whether a key carries a certification by one of some
 * keys, as gpg checks it: an endorsement by certification
 *
 * The key block sent with a mail and the candidates' public keys from the
 * robot's keyring go into a scratch keyring (never the robot's own), and
 * gpg checks every signature on the key's user IDs there (gpgme's keylist
 * with GPGME_KEYLIST_MODE_SIGS, which is gpg --check-sigs).  A
 * certification counts by the key that made it, never by what a user ID
 * says: its issuer key ID must be a candidate's, and no other key in the
 * scratch keyring (one brought along in the key block, say) may have that
 * key ID, so that no other key can stand in for the candidate.
 *
 * One gpgme context serves the scratch keyring (one engine probe), gpg
 * there never starts an agent (no-autostart: nothing secret is used), so
 * a check costs four gpg processes and no gpg-agent. */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <gpgme.h>

#include "crypto.h"

#include "crypto-private.h"

/* A scratch keyring in which gpg starts no agent. */
static char *
scratch_new(GError **err)
{
	g_autofree char *home = cr_scratch_home(err);
	g_autofree char *conf = NULL;
	GError *e2 = NULL;

	if (home == NULL)
		return NULL;
	conf = g_build_filename(home, "gpg.conf", NULL);
	if (!g_file_set_contents(conf, "no-autostart\n", -1, &e2)) {
		vulnid_fail(err, VULNID_ERR_IO, "cannot write '%s': %s", conf, e2->message);
		g_error_free(e2);
		cr_scratch_remove(home);
		return NULL;
	}
	return g_steal_pointer(&home);
}

/* Remove it: without an agent, the files are all there is. */
static void
scratch_remove(const char *home)
{
	g_autofree char *sock = g_build_filename(home, "S.gpg-agent", NULL);
	GDir *d;
	const char *name;

	if (g_file_test(sock, G_FILE_TEST_EXISTS)) {
		cr_scratch_remove(home);
		return;
	}
	d = g_dir_open(home, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *p = g_build_filename(home, name, NULL);
		GDir *d2;
		const char *n2;

		if (!g_file_test(p, G_FILE_TEST_IS_DIR) || g_file_test(p, G_FILE_TEST_IS_SYMLINK)) {
			unlink(p);
			continue;
		}
		d2 = g_dir_open(p, 0, NULL);
		while (d2 != NULL && (n2 = g_dir_read_name(d2)) != NULL) {
			g_autofree char *p2 = g_build_filename(p, n2, NULL);

			unlink(p2);
		}
		if (d2 != NULL)
			g_dir_close(d2);
		rmdir(p);
	}
	if (d != NULL)
		g_dir_close(d);
	rmdir(home);
}

static vulnid_status
import_data(gpgme_ctx_t ctx, GBytes *data, GError **err)
{
	gpgme_data_t d;
	gpgme_error_t e;

	gpgme_data_new_from_mem(&d, g_bytes_get_data(data, NULL), g_bytes_get_size(data), 0);
	e = gpgme_op_import(ctx, d);
	gpgme_data_release(d);
	return e != 0 ? cr_gpg_fail(err, e, "cannot import keys") : VULNID_OK;
}

/* The candidates that may certify (in the robot's keyring, neither revoked
 * nor expired), and their public keys exported in one go. */
static vulnid_status
candidates_export(const char *const *candidates, const char *subject, GPtrArray *present, GBytes **out,
		  GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	gpgme_error_t e;
	vulnid_status s;

	*out = NULL;
	for (const char *const *c = candidates; *c != NULL; c++) {
		g_autoptr(crypto_key) k = NULL;

		if (g_ascii_strcasecmp(*c, subject) == 0 || crypto_get_key(*c, &k, NULL) != VULNID_OK ||
		    k->revoked || k->expired || strlen(k->fpr) != 40)
			continue;
		g_ptr_array_add(present, g_ascii_strup(k->fpr, -1));
	}
	if (present->len == 0)
		return VULNID_OK;
	s = cr_ctx(crypto_homedir, &ctx, err);
	if (s != VULNID_OK)
		return s;
	g_ptr_array_add(present, NULL);
	gpgme_data_new(&d);
	e = gpgme_op_export_ext(ctx, (const char **) present->pdata, 0, d);
	g_ptr_array_remove_index(present, present->len - 1);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(d);
		return cr_gpg_fail(err, e, "cannot export the keys");
	}
	*out = cr_data_to_bytes(d);
	return VULNID_OK;
}

static const char *
keyid_of(const char *fpr)
{
	gsize n = fpr != NULL ? strlen(fpr) : 0;

	return n >= 16 ? fpr + n - 16 : "";
}

/* Whether keyid is the key ID of exactly one key or subkey of the listing,
 * and that one is candidate's primary key. */
static gboolean
keyid_unique(GPtrArray *keys, const char *candidate)
{
	const char *id = keyid_of(candidate);
	guint n = 0;
	gboolean primary = FALSE;

	for (guint i = 0; i < keys->len; i++) {
		gpgme_key_t k = g_ptr_array_index(keys, i);

		for (gpgme_subkey_t sk = k->subkeys; sk != NULL; sk = sk->next)
			if (sk->keyid != NULL && g_ascii_strcasecmp(sk->keyid, id) == 0) {
				n++;
				primary |= sk == k->subkeys && g_ascii_strcasecmp(k->fpr, candidate) == 0;
			}
	}
	return n == 1 && primary;
}

/* The latest certification and revocation of a certification, by the
 * candidate, on any valid user ID of key; gpg checked each (status 0). */
static void
latest_by(gpgme_key_t key, const char *candidate, long *cert, long *rev)
{
	const char *id = keyid_of(candidate);

	*cert = *rev = -1;
	for (gpgme_user_id_t u = key->uids; u != NULL; u = u->next) {
		if (u->revoked || u->invalid)
			continue;
		for (gpgme_key_sig_t sig = u->signatures; sig != NULL; sig = sig->next) {
			gboolean certification = sig->sig_class >= 0x10 && sig->sig_class <= 0x13;

			if (gpgme_err_code(sig->status) != GPG_ERR_NO_ERROR || sig->invalid || !sig->exportable ||
			    sig->keyid == NULL || g_ascii_strcasecmp(sig->keyid, id) != 0)
				continue;
			if (certification && !sig->revoked && !sig->expired && sig->timestamp > *cert)
				*cert = sig->timestamp;
			else if (sig->sig_class == 0x30 && sig->timestamp > *rev)
				*rev = sig->timestamp;
		}
	}
}

static void
key_unref(gpointer k)
{
	gpgme_key_unref(k);
}

/* Every key of the scratch keyring, with its signatures checked. */
static vulnid_status
list_checked(gpgme_ctx_t ctx, GPtrArray *keys, GError **err)
{
	gpgme_key_t k;
	gpgme_error_t e;

	gpgme_set_keylist_mode(ctx, GPGME_KEYLIST_MODE_LOCAL | GPGME_KEYLIST_MODE_SIGS);
	e = gpgme_op_keylist_start(ctx, NULL, 0);
	while (e == 0 && (e = gpgme_op_keylist_next(ctx, &k)) == 0)
		g_ptr_array_add(keys, k);
	gpgme_op_keylist_end(ctx);
	if (gpgme_err_code(e) != GPG_ERR_EOF)
		return cr_gpg_fail(err, e, "cannot list keys");
	return VULNID_OK;
}

vulnid_status
crypto_certified_by(GBytes *data, const char *subject, const char *const *candidates, char **certifier,
		    GError **err)
{
	g_autofree char *scratch = NULL;
	g_autoptr(GPtrArray) present = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(key_unref);
	g_autoptr(GBytes) pub = NULL;
	gpgme_key_t key = NULL;
	gpgme_ctx_t ctx = NULL;
	vulnid_status s;

	*certifier = NULL;
	if (data == NULL || subject == NULL || candidates == NULL || crypto_homedir == NULL)
		return VULNID_OK;
	s = candidates_export(candidates, subject, present, &pub, err);
	if (s != VULNID_OK || pub == NULL)
		return s;
	scratch = scratch_new(err);
	if (scratch == NULL)
		return VULNID_ERR_IO;
	s = cr_ctx(scratch, &ctx, err);
	if (s == VULNID_OK)
		s = import_data(ctx, data, err);
	if (s == VULNID_OK)
		s = import_data(ctx, pub, err);
	if (s == VULNID_OK)
		s = list_checked(ctx, keys, err);
	if (s != VULNID_OK)
		goto out;
	for (guint i = 0; i < keys->len && key == NULL; i++) {
		gpgme_key_t k = g_ptr_array_index(keys, i);

		if (k->fpr != NULL && g_ascii_strcasecmp(k->fpr, subject) == 0)
			key = k;
	}
	for (guint i = 0; key != NULL && i < present->len && *certifier == NULL; i++) {
		const char *c = g_ptr_array_index(present, i);
		long cert, rev;

		if (!keyid_unique(keys, c))
			continue;	/* another key shares its key ID: no certification counts */
		latest_by(key, c, &cert, &rev);
		if (cert >= 0 && cert > rev)
			*certifier = g_strdup(c);
	}
out:
	if (ctx != NULL)
		gpgme_release(ctx);
	scratch_remove(scratch);
	return s;
}
