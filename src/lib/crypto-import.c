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
#include "gpgrun.h"
#include "openpgp.h"
#include "openpgp-scan.h"

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

static vulnid_status crypto_import_checked(GBytes *data, GPtrArray **fprs_out, GError **err);

vulnid_status
crypto_import(GBytes *data, GPtrArray **fprs_out, GError **err)
{
	return crypto_import_checked(data, fprs_out, err);
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

static vulnid_status
crypto_import_checked(GBytes *data, GPtrArray **fprs_out, GError **err)
{
	g_autoptr(GPtrArray) fprs = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *scratch = NULL;
	g_autofree char *robot_fpr = NULL;
	gpgme_ctx_t ctx = NULL;
	gpgme_data_t pub = NULL;
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
	if (pub != NULL)
		gpgme_data_release(pub);
	if (ctx != NULL)
		gpgme_release(ctx);
	cr_scratch_remove(scratch);
	if (s == VULNID_OK && fprs_out != NULL)
		*fprs_out = g_steal_pointer(&fprs);
	return s;
}

/* --- trust on first use -------------------------------------------------------------- */

/* The keys in the robot's keyring that have a user ID with one of these
 * addresses, as gpg lists them (its pattern "<address>" is an exact
 * match of the address): a key whose primary fingerprint is not fpr
 * claims the address first.  One gpg process. */
static vulnid_status
tofu_claimed(const char *fpr, GPtrArray *emails, gint64 timeout_ms, crypto_conflict **out, GError **err)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(gpgrun_result) r = NULL;
	g_auto(GStrv) lines = NULL;
	g_autofree char *primary = NULL;
	gboolean want_fpr = FALSE;
	gpgrun_opts o = { .home = crypto_homedir, .input_fd = -1, .out_fd = -1,
			  .max_out = 4 * 1024 * 1024, .timeout_ms = timeout_ms };
	vulnid_status s;

	*out = NULL;
	g_ptr_array_add(args, g_strdup("--list-keys"));
	g_ptr_array_add(args, g_strdup("--with-colons"));
	g_ptr_array_add(args, g_strdup("--fixed-list-mode"));
	g_ptr_array_add(args, g_strdup("--"));
	for (guint i = 0; i < emails->len; i++)
		g_ptr_array_add(args, g_strdup_printf("<%s>", (const char *) g_ptr_array_index(emails, i)));
	g_ptr_array_add(args, NULL);
	o.args = (const char *const *) args->pdata;
	s = gpgrun(&o, &r, err);
	if (s != VULNID_OK)
		return s;
	if (r->timed_out || r->too_big)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot list the keyring's keys");
	g_byte_array_append(r->out, (const guint8 *) "", 1);
	lines = g_strsplit((const char *) r->out->data, "\n", -1);
	for (char **l = lines; *l != NULL; l++) {
		g_auto(GStrv) f = g_strsplit(*l, ":", -1);
		guint n = g_strv_length(f);

		if (n > 0 && strcmp(f[0], "pub") == 0) {
			g_clear_pointer(&primary, g_free);
			want_fpr = TRUE;
		} else if (n > 9 && strcmp(f[0], "fpr") == 0 && want_fpr) {
			primary = g_ascii_strup(f[9], -1);
			want_fpr = FALSE;
		} else if (n > 9 && strcmp(f[0], "uid") == 0 && primary != NULL &&
			   g_ascii_strcasecmp(primary, fpr) != 0 && f[1][0] != 'r' && f[1][0] != 'i') {
			g_autofree char *uid = cr_colon_unescape(f[9]);
			g_autofree char *addr = openpgp_uid_email(uid);

			for (guint i = 0; addr != NULL && i < emails->len; i++)
				if (strcmp(addr, g_ptr_array_index(emails, i)) == 0) {
					crypto_conflict *c = g_new0(crypto_conflict, 1);

					c->fpr = g_ascii_strup(fpr, -1);
					c->other = g_strdup(primary);
					c->address = g_strdup(addr);
					*out = c;
					return VULNID_OK;
				}
		}
	}
	return VULNID_OK;
}

/* Import one key's packets into the robot's keyring; it must come out as
 * that key.  One gpg process. */
static vulnid_status
tofu_import(const openpgp_block_key *k, gint64 timeout_ms, GError **err)
{
	static const char *const args[] = { "--import", NULL };
	gpgrun_opts o = { .home = crypto_homedir, .args = args, .input_fd = -1, .input = k->packets,
			  .out_fd = -1, .timeout_ms = timeout_ms };
	g_autoptr(gpgrun_result) r = NULL;
	g_autofree char *before = cr_keyring_stamp(crypto_homedir);
	vulnid_status s;

	cr_key_cache_clear();
	s = gpgrun(&o, &r, err);
	cr_robot_restamp(before);
	if (s != VULNID_OK)
		return s;
	if (r->timed_out)
		return vulnid_fail(err, VULNID_ERR_TIMEOUT, "importing the key took too long");
	for (guint i = 0; i < r->status->len; i++) {
		const char *l = g_ptr_array_index(r->status, i);
		const char *f = strrchr(l, ' ');

		if (g_str_has_prefix(l, "IMPORT_OK ") && f != NULL && g_ascii_strcasecmp(f + 1, k->fpr) == 0)
			return VULNID_OK;
	}
	return vulnid_fail(err, VULNID_ERR_INVALID, "the key %s could not be imported (%s)", k->fpr,
			   r->message != NULL ? r->message : "no valid user ID or self-signature");
}

/* The key of the data that holds required (a fingerprint or, from a
 * signature that names only that, a key ID), checked against the maxima
 * before gpg sees any of it. */
static vulnid_status
tofu_pick(GBytes *data, const char *required, GPtrArray **keys, const openpgp_block_key **key, GError **err)
{
	g_autoptr(GBytes) bin = openpgp_binary(g_bytes_get_data(data, NULL), g_bytes_get_size(data),
					       g_bytes_get_size(data));
	openpgp_scan sc;

	*key = NULL;
	if (bin == NULL || !openpgp_scan_data(g_bytes_get_data(bin, NULL), g_bytes_get_size(bin),
					       CRYPTO_MAX_KEY_PACKETS + 1, &sc) || sc.malformed)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the key sent is not OpenPGP data");
	if (sc.too_many)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the key sent holds more than %d packets",
				   CRYPTO_MAX_KEY_PACKETS);
	*keys = openpgp_block_keys(bin, CRYPTO_MAX_KEYS);
	if (*keys == NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the data sent holds more than %d keys, or "
				   "something other than keys", CRYPTO_MAX_KEYS);
	*key = openpgp_block_find(*keys, required);
	if (*key == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "the key %s is not in the data", required);
	if ((*key)->secret)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the data sent holds a secret key");
	if ((*key)->subkeys->len > CRYPTO_MAX_SUBKEYS || (*key)->uids->len > CRYPTO_MAX_UIDS)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the key sent has more than %d subkeys or "
				   "%d user IDs", CRYPTO_MAX_SUBKEYS, CRYPTO_MAX_UIDS);
	return VULNID_OK;
}

vulnid_status
crypto_import_if_contains(GBytes *data, const char *required, gint64 timeout_ms, crypto_conflict **conflict,
			  GError **err)
{
	g_autoptr(GPtrArray) keys = NULL;
	g_autoptr(GPtrArray) emails = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *robot_fpr = NULL;
	const openpgp_block_key *k;
	int lock;
	vulnid_status s;

	s = tofu_pick(data, required, &keys, &k, err);
	if (s != VULNID_OK)
		return s;
	if (crypto_robot_fingerprint(&robot_fpr, NULL) == VULNID_OK && g_ascii_strcasecmp(robot_fpr, k->fpr) == 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "refusing a key with the robot's own fingerprint");
	for (guint i = 0; i < k->uids->len; i++) {
		char *addr = openpgp_uid_email(g_ptr_array_index(k->uids, i));

		if (addr != NULL && !g_ptr_array_find_with_equal_func(emails, addr, g_str_equal, NULL))
			g_ptr_array_add(emails, addr);
		else
			g_free(addr);
	}
	/* checked and imported under the lock: two filters never each
	 * import a key for the same new address */
	lock = tofu_lock(err);
	if (lock < 0)
		return VULNID_ERR_IO;
	if (emails->len > 0)
		s = tofu_claimed(k->fpr, emails, timeout_ms, conflict, err);
	if (s == VULNID_OK && *conflict != NULL)
		s = vulnid_fail(err, VULNID_ERR_EXISTS, "the key %s claims %s, which the key %s claims already",
				(*conflict)->fpr, (*conflict)->address, (*conflict)->other);
	if (s == VULNID_OK)
		s = tofu_import(k, timeout_ms, err);
	close(lock);
	return s;
}
