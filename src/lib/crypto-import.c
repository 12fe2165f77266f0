/* crypto-import.c - importing keys through a scratch keyring; trust on first use and its conflicts */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gpgme.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "crypto.h"
#include "gmime-autoptr.h"
#include "openpgp.h"

#include "crypto-private.h"

/* A throwaway keyring under the spool directory of the instance. */
char *
cr_scratch_home(GError **err)
{
	g_autofree char *base = crypto_homedir != NULL ? g_path_get_dirname(crypto_homedir) : NULL;
	g_autofree char *tmpl = g_build_filename(base != NULL ? base : g_get_tmp_dir(), "tmp",
						 "gnupg.XXXXXX", NULL);
	g_autofree char *parent = g_path_get_dirname(tmpl);

	g_mkdir_with_parents(parent, 0700);
	if (g_mkdtemp_full(tmpl, 0700) == NULL) {
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
			    tmpl, g_strerror(errno));
		return NULL;
	}
	return g_steal_pointer(&tmpl);
}

void
cr_scratch_remove(const char *home)
{
	const char *argv[] = { "gpgconf", "--homedir", home, "--kill", "all", NULL };
	GDir *d;
	const char *name;

	g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
		     G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* two levels are all gpg creates */
	d = g_dir_open(home, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *p = g_build_filename(home, name, NULL);

		if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK)) {
			GDir *d2 = g_dir_open(p, 0, NULL);
			const char *n2;

			while (d2 != NULL && (n2 = g_dir_read_name(d2)) != NULL) {
				g_autofree char *p2 = g_build_filename(p, n2, NULL);

				unlink(p2);
			}
			if (d2 != NULL)
				g_dir_close(d2);
			rmdir(p);
		} else
			unlink(p);
	}
	if (d != NULL)
		g_dir_close(d);
	rmdir(home);
}

vulnid_status
cr_import_into(const char *home, GBytes *data, GPtrArray *fprs, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	gpgme_import_result_t r;
	gpgme_error_t e;
	vulnid_status s = cr_ctx(home, &ctx, err);

	if (s != VULNID_OK)
		return s;
	if (g_strcmp0(home, crypto_homedir) == 0)
		cr_key_cache_clear();
	gpgme_data_new_from_mem(&d, g_bytes_get_data(data, NULL), g_bytes_get_size(data), 0);
	e = gpgme_op_import(ctx, d);
	gpgme_data_release(d);
	if (e != 0) {
		gpgme_release(ctx);
		return cr_gpg_fail(err, e, "cannot import keys");
	}
	r = gpgme_op_import_result(ctx);
	for (gpgme_import_status_t i = r != NULL ? r->imports : NULL; i != NULL; i = i->next)
		if (i->result == 0 && i->fpr != NULL && fprs != NULL) {
			gboolean dup = FALSE;

			for (guint k = 0; k < fprs->len; k++)
				dup |= g_ascii_strcasecmp(g_ptr_array_index(fprs, k), i->fpr) == 0;
			if (!dup)
				g_ptr_array_add(fprs, g_strdup(i->fpr));
		}
	gpgme_release(ctx);
	return VULNID_OK;
}

static vulnid_status crypto_import_checked(GBytes *data, const char *required, GPtrArray **fprs_out,
					   crypto_conflict **conflict, GError **err);

vulnid_status
crypto_import(GBytes *data, GPtrArray **fprs_out, GError **err)
{
	return crypto_import_checked(data, NULL, fprs_out, NULL, err);
}

vulnid_status
crypto_import_if_contains(GBytes *data, const char *required, crypto_conflict **conflict, GError **err)
{
	return crypto_import_checked(data, required, NULL, conflict, err);
}

void
crypto_conflict_free(crypto_conflict *c)
{
	if (c == NULL)
		return;
	g_free(c->fpr);
	g_free(c->other);
	g_free(c->address);
	g_free(c);
}

/* Trust on first use checks the keyring and imports under this lock, so
 * that two filters cannot each import a key for the same new address. */
static int
tofu_lock(GError **err)
{
	g_autofree char *path = g_build_filename(crypto_homedir, "vulnid-tofu.lock", NULL);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0) {
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s", path, g_strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot lock '%s': %s", path, g_strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Another key of the robot's keyring that claims an address of key
 * primary (as listed in the scratch keyring), or *out NULL.  A key may
 * carry a newer version of itself (a new subkey): that is no conflict. */
static vulnid_status
claimed_elsewhere(const char *scratch, const char *primary, crypto_conflict **out, GError **err)
{
	g_autoptr(GPtrArray) mine = g_ptr_array_new_with_free_func((GDestroyNotify) crypto_key_free);
	g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func((GDestroyNotify) crypto_key_free);
	vulnid_status s;

	*out = NULL;
	s = cr_keylist(scratch, primary, mine, err);
	if (s == VULNID_OK)
		s = cr_keylist(crypto_homedir, NULL, all, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < mine->len; i++) {
		const crypto_key *k = g_ptr_array_index(mine, i);

		if (g_ascii_strcasecmp(k->fpr, primary) != 0)
			continue;
		for (guint j = 0; j < k->emails->len; j++)
			for (guint o = 0; o < all->len; o++) {
				const crypto_key *other = g_ptr_array_index(all, o);

				if (g_ascii_strcasecmp(other->fpr, primary) == 0)
					continue;
				for (guint l = 0; l < other->emails->len; l++)
					if (strcmp(g_ptr_array_index(k->emails, j), g_ptr_array_index(other->emails, l)) == 0) {
						crypto_conflict *c = g_new0(crypto_conflict, 1);

						c->fpr = g_ascii_strup(primary, -1);
						c->other = g_ascii_strup(other->fpr, -1);
						c->address = g_strdup(g_ptr_array_index(k->emails, j));
						*out = c;
						return VULNID_OK;
					}
			}
	}
	return VULNID_OK;
}

static vulnid_status
crypto_import_checked(GBytes *data, const char *required, GPtrArray **fprs_out,
		      crypto_conflict **conflict, GError **err)
{
	g_autoptr(GPtrArray) fprs = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *scratch = NULL;
	g_autofree char *robot_fpr = NULL;
	g_autoptr(GString) patterns = g_string_new(NULL);
	gpgme_ctx_t ctx = NULL;
	gpgme_data_t pub = NULL;
	int lock = -1;
	vulnid_status s;

	/* Through a scratch keyring: only public keys come out of it, and
	 * what they are is known before the robot's keyring is touched. */
	scratch = cr_scratch_home(err);
	if (scratch == NULL)
		return VULNID_ERR_IO;
	s = cr_import_into(scratch, data, fprs, err);
	if (s != VULNID_OK)
		goto out;
	if (fprs->len == 0) {
		s = vulnid_fail(err, VULNID_ERR_INVALID, "no OpenPGP public key in the data");
		goto out;
	}
	if (required != NULL) {
		/* Trust on first use takes the signer's key and nothing else
		 * that came along with it. */
		g_autofree char *primary = NULL;

		g_autoptr(crypto_conflict) c = NULL;

		if (cr_primary_in(scratch, required, &primary, NULL) != VULNID_OK) {
			s = vulnid_fail(err, VULNID_ERR_NOTFOUND, "the key %s is not in the data", required);
			goto out;
		}
		/* ... and only when no other key already claims one of its
		 * addresses: a key that copies someone's user ID must not
		 * become that someone without the operator's word. */
		lock = tofu_lock(err);
		if (lock < 0) {
			s = VULNID_ERR_IO;
			goto out;
		}
		s = claimed_elsewhere(scratch, primary, &c, err);
		if (s != VULNID_OK)
			goto out;
		if (c != NULL) {
			s = vulnid_fail(err, VULNID_ERR_EXISTS, "the key %s claims %s, which the key %s claims already",
					c->fpr, c->address, c->other);
			if (conflict != NULL)
				*conflict = g_steal_pointer(&c);
			goto out;
		}
		g_ptr_array_set_size(fprs, 0);
		g_ptr_array_add(fprs, g_steal_pointer(&primary));
	}
	if (crypto_robot_fingerprint(&robot_fpr, NULL) == VULNID_OK)
		for (guint i = 0; i < fprs->len; i++)
			if (g_ascii_strcasecmp(g_ptr_array_index(fprs, i), robot_fpr) == 0) {
				s = vulnid_fail(err, VULNID_ERR_INVALID,
						"refusing a key with the robot's own fingerprint");
				goto out;
			}
	s = cr_ctx(scratch, &ctx, err);
	if (s != VULNID_OK)
		goto out;
	g_ptr_array_add(fprs, NULL);
	gpgme_data_new(&pub);
	if (gpgme_op_export_ext(ctx, (const char **) fprs->pdata, 0, pub) != 0) {
		s = vulnid_fail(err, VULNID_ERR_INVALID, "cannot export the keys again");
		goto out;
	}
	g_ptr_array_remove_index(fprs, fprs->len - 1);
	{
		g_autoptr(GBytes) b = cr_data_to_bytes(pub);

		pub = NULL;
		s = cr_import_into(crypto_homedir, b, NULL, err);
	}
out:
	if (lock >= 0)
		close(lock);
	if (pub != NULL)
		gpgme_data_release(pub);
	if (ctx != NULL)
		gpgme_release(ctx);
	cr_scratch_remove(scratch);
	if (s == VULNID_OK && fprs_out != NULL)
		*fprs_out = g_steal_pointer(&fprs);
	return s;
}
