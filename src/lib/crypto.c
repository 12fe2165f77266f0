/* crypto.c - OpenPGP operations in the instance's keyring */
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

static char *crypto_homedir;

static void robot_clear(void);


void
crypto_preinit(void)
{
	gpgme_set_global_flag("disable-gpgconf", "1");
}

const char *
crypto_home(void)
{
	return crypto_homedir;
}

static vulnid_status
gpg_fail(GError **err, gpgme_error_t e, const char *what)
{
	char buf[256];
	vulnid_status s;

	gpgme_strerror_r(e, buf, sizeof buf);
	switch (gpgme_err_code(e)) {
	case GPG_ERR_ENOMEM:
		s = VULNID_ERR_NOMEM;
		break;
	case GPG_ERR_NO_AGENT:
	case GPG_ERR_AGENT:
	case GPG_ERR_EPIPE:
	case GPG_ERR_ENOENT:
	case GPG_ERR_INV_ENGINE:
	case GPG_ERR_ENOSPC:
	case GPG_ERR_EIO:
		s = VULNID_ERR_TEMP;
		break;
	case GPG_ERR_NO_DATA:
	case GPG_ERR_BAD_DATA:
	case GPG_ERR_DECRYPT_FAILED:
	case GPG_ERR_NO_SECKEY:
	case GPG_ERR_BAD_SIGNATURE:
	case GPG_ERR_NO_PUBKEY:
	case GPG_ERR_UNUSABLE_PUBKEY:
	case GPG_ERR_INV_VALUE:
		s = VULNID_ERR_INVALID;
		break;
	default:
		s = VULNID_ERR_TEMP;
	}
	return vulnid_fail(err, s, "%s: %s", what, buf);
}

/* Keys looked up in this process, by primary fingerprint, and subkey
 * fingerprints to their primary: a signed request asks for its signer's
 * key several times (primary fingerprint, user IDs), and each listing is a
 * gpg process.  Anything imported into the keyring empties it. */
static GHashTable *key_cache;		/* primary fpr -> crypto_key */
static GHashTable *key_cache_primary;	/* any (sub)key fpr -> primary fpr */

static void
key_cache_clear(void)
{
	g_clear_pointer(&key_cache, g_hash_table_unref);
	g_clear_pointer(&key_cache_primary, g_hash_table_unref);
}

static crypto_key *
key_copy(const crypto_key *k)
{
	crypto_key *c = g_new0(crypto_key, 1);

	*c = *k;
	c->fpr = g_strdup(k->fpr);
	c->emails = g_ptr_array_copy(k->emails, (GCopyFunc) (void (*)(void)) g_strdup, NULL);
	g_ptr_array_set_free_func(c->emails, g_free);
	c->uids = g_ptr_array_copy(k->uids, (GCopyFunc) (void (*)(void)) g_strdup, NULL);
	g_ptr_array_set_free_func(c->uids, g_free);
	return c;
}

static crypto_key *key_from_gpgme(gpgme_key_t key);

static void
key_cache_init(void)
{
	if (key_cache != NULL)
		return;
	key_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) crypto_key_free);
	key_cache_primary = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static void
key_cache_put(gpgme_key_t key)
{
	char *primary;

	if (key->fpr == NULL)
		return;
	key_cache_init();
	primary = g_ascii_strup(key->fpr, -1);
	for (gpgme_subkey_t sk = key->subkeys; sk != NULL; sk = sk->next)
		if (sk->fpr != NULL)
			g_hash_table_replace(key_cache_primary, g_ascii_strup(sk->fpr, -1), g_strdup(primary));
	g_hash_table_replace(key_cache_primary, g_strdup(primary), g_strdup(primary));
	g_hash_table_replace(key_cache, primary, key_from_gpgme(key));
}

static void
key_cache_put_copy(const crypto_key *k)
{
	key_cache_init();
	if (g_hash_table_contains(key_cache_primary, k->fpr))
		return;
	g_hash_table_replace(key_cache_primary, g_ascii_strup(k->fpr, -1), g_ascii_strup(k->fpr, -1));
	g_hash_table_replace(key_cache, g_ascii_strup(k->fpr, -1), key_copy(k));
}

static const crypto_key *
key_cache_get(const char *fpr)
{
	g_autofree char *up = g_ascii_strup(fpr, -1);
	const char *primary = key_cache_primary != NULL ? g_hash_table_lookup(key_cache_primary, up) : NULL;

	return primary != NULL ? g_hash_table_lookup(key_cache, primary) : NULL;
}

vulnid_status
crypto_set_home(const char *home, GError **err)
{
	/* Never gpg's default home: an instance without a key still gets a
	 * keyring of its own (where contributors' keys go). */
	if (g_mkdir_with_parents(home, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   home, g_strerror(errno));
	/* gpg and gpg-agent find their home this way, and so do gpgme and
	 * GMime's contexts.  Not gpgme_set_engine_info(): every call of it
	 * (and of gpgme_ctx_set_engine_info()) runs `gpg --version` again,
	 * a process each. */
	g_setenv("GNUPGHOME", home, TRUE);
	g_free(crypto_homedir);
	crypto_homedir = g_strdup(home);
	robot_clear();
	crypto_agent_close();
	key_cache_clear();
	return VULNID_OK;
}

static vulnid_status
crypto_ctx(const char *home, gpgme_ctx_t *out, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_error_t e;

	if (gpgme_check_version("1.13.0") == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "gpgme is older than 1.13");
	e = gpgme_new(&ctx);
	if (e != 0)
		return gpg_fail(err, e, "gpgme_new");
	gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	gpgme_set_armor(ctx, 1);
	gpgme_set_offline(ctx, 1);	/* never a keyserver or dirmngr */
	/* The instance's keyring is GNUPGHOME already; only scratch keyrings
	 * need the engine told (which costs a `gpg --version`). */
	if (home != NULL && g_strcmp0(home, crypto_homedir) != 0) {
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, NULL, home);
		if (e != 0) {
			gpgme_release(ctx);
			return gpg_fail(err, e, "gpgme");
		}
	}
	*out = ctx;
	return VULNID_OK;
}

static GBytes *
data_to_bytes(gpgme_data_t d)
{
	size_t n = 0;
	char *p = gpgme_data_release_and_get_mem(d, &n);
	GBytes *b = g_bytes_new(p, n);

	gpgme_free(p);
	return b;
}

/* Every reply names the robot's key and is signed with it, and listing
 * the secret keys costs a gpg process and a gpg-agent round trip.  What
 * the signatures need is remembered in the keyring directory: the
 * fingerprint, the keygrip by which gpg-agent knows the secret key, its
 * algorithm, when it expires, and where gpg-agent listens.  The line is
 * stamped with the identity and modification time of the files that hold
 * keys: any change to them (a key imported, created or deleted, by vulnid
 * or by hand with gpg) makes the next process list again. */
typedef struct {
	char *fpr;
	char *keygrip;		/* of the primary key; NULL when not known */
	char *algo;		/* "ed25519", "rsa<bits>", or "other" (signed by gpg) */
	gint64 expires;		/* Unix time, 0 for never */
	char *socket;		/* gpg-agent's socket, NULL until asked */
	uid_t socket_uid;	/* whose (it may lie under /run/user/UID) */
	char *stamp;		/* of the keyring when the key was listed */
} robot_key;

/* The robot's key as this process knows it, under robot_lock (a resident
 * server signs from several threads). */
static robot_key *robot;
static GMutex robot_lock;

static void
robot_key_free(robot_key *r)
{
	if (r == NULL)
		return;
	g_free(r->fpr);
	g_free(r->keygrip);
	g_free(r->algo);
	g_free(r->socket);
	g_free(r->stamp);
	g_free(r);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(robot_key, robot_key_free)

static void
robot_clear(void)
{
	g_mutex_lock(&robot_lock);
	g_clear_pointer(&robot, robot_key_free);
	g_mutex_unlock(&robot_lock);
}

static char *
keyring_stamp(const char *home)
{
	static const char *const files[] = { "private-keys-v1.d", "pubring.kbx", "pubring.gpg" };
	GString *stamp = g_string_new(NULL);

	for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autofree char *path = g_build_filename(home, files[i], NULL);
		struct stat sb;

		if (i > 0)
			g_string_append_c(stamp, ' ');
		if (stat(path, &sb) < 0)
			g_string_append(stamp, "-");
		else
			g_string_append_printf(stamp, "%ju:%ju:%jd:%jd.%09ld", (uintmax_t) sb.st_dev,
					       (uintmax_t) sb.st_ino, (intmax_t) sb.st_size,
					       (intmax_t) sb.st_mtim.tv_sec, (long) sb.st_mtim.tv_nsec);
	}
	return g_string_free(stamp, FALSE);
}

static char *
robot_cache_path(const char *home)
{
	return g_build_filename(home, "vulnid-robot-key", NULL);
}

static gboolean is_fingerprint(const char *f);

static gboolean
is_keygrip(const char *g)
{
	return g != NULL && strlen(g) == 40 && strspn(g, "0123456789ABCDEFabcdef") == 40;
}

/* One line: FPR KEYGRIP ALGO EXPIRES SOCKET STAMP, where KEYGRIP and
 * SOCKET are "-" when not known, SOCKET is UID:PATH with PATH
 * URI-escaped, and STAMP is three fields. */
#define ROBOT_FIELDS 8

/* The socket field of a line (UID:PATH), when it is one. */
static void
robot_cache_socket(const char *field, robot_key *r)
{
	g_autofree char *f = g_strdup(field);
	char *colon = strchr(f, ':');
	guint64 uid;

	if (colon == NULL)
		return;
	*colon = '\0';
	if (g_ascii_string_to_unsigned(f, 10, 0, G_MAXUINT32, &uid, NULL)) {
		r->socket = g_uri_unescape_string(colon + 1, NULL);
		r->socket_uid = (uid_t) uid;
	}
}

/* What is remembered, if it still holds for the keyring; otherwise NULL,
 * and *socket_only (when given) gets where gpg-agent listened, which the
 * keyring does not change. */
static robot_key *
robot_cache_read(robot_key **socket_only)
{
	g_autofree char *path = NULL, *text = NULL, *stamp = NULL, *have = NULL;
	g_auto(GStrv) f = NULL;
	g_autoptr(robot_key) r = NULL;
	gint64 expires;
	char *end;

	if (crypto_homedir == NULL)
		return NULL;
	path = robot_cache_path(crypto_homedir);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	g_strchomp(text);
	f = g_strsplit(text, " ", -1);
	if (socket_only != NULL && g_strv_length(f) == ROBOT_FIELDS && strchr(text, '\n') == NULL) {
		*socket_only = g_new0(robot_key, 1);
		robot_cache_socket(f[4], *socket_only);
	}
	if (g_strv_length(f) != ROBOT_FIELDS || strchr(text, '\n') != NULL || !is_fingerprint(f[0]) ||
	    (strcmp(f[1], "-") != 0 && !is_keygrip(f[1])) ||
	    strspn(f[2], "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(f[2]))
		return NULL;
	expires = g_ascii_strtoll(f[3], &end, 10);
	if (*end != '\0' || end == f[3] || expires < 0)
		return NULL;
	stamp = keyring_stamp(crypto_homedir);
	have = g_strjoinv(" ", f + 5);
	if (strcmp(have, stamp) != 0)
		return NULL;
	r = g_new0(robot_key, 1);
	r->fpr = g_ascii_strup(f[0], -1);
	r->keygrip = strcmp(f[1], "-") != 0 ? g_ascii_strup(f[1], -1) : NULL;
	r->algo = g_strdup(f[2]);
	r->expires = expires;
	r->stamp = g_steal_pointer(&stamp);
	robot_cache_socket(f[4], r);
	return g_steal_pointer(&r);
}

static void
robot_cache_write(const char *home, const robot_key *r)
{
	g_autofree char *path = robot_cache_path(home);
	g_autofree char *sock = r->socket != NULL ? g_uri_escape_string(r->socket, "/", FALSE) : NULL;
	g_autofree char *socket_field = sock != NULL
		? g_strdup_printf("%ju:%s", (uintmax_t) r->socket_uid, sock) : g_strdup("-");
	g_autofree char *text = g_strdup_printf("%s %s %s %" G_GINT64_FORMAT " %s %s\n", r->fpr,
						r->keygrip != NULL ? r->keygrip : "-", r->algo, r->expires,
						socket_field, r->stamp);

	/* only a cache: losing it costs one listing.  Replaced whole (a
	 * file written in place keeps the end of a longer old line), and
	 * other processes read the old line or the new one. */
	g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
}

/* What signing needs of a secret key as gpgme lists it: its primary key
 * signs (as `gpg --local-user FPR!` would). */
static robot_key *
robot_key_from_gpgme(gpgme_key_t key, const char *stamp)
{
	gpgme_subkey_t pk = key->subkeys;
	robot_key *r = g_new0(robot_key, 1);

	r->fpr = g_ascii_strup(key->fpr, -1);
	r->stamp = g_strdup(stamp);
	r->keygrip = pk != NULL && is_keygrip(pk->keygrip) ? g_ascii_strup(pk->keygrip, -1) : NULL;
	r->expires = pk != NULL && pk->expires > 0 ? pk->expires : 0;
	if (pk == NULL || !pk->can_sign || pk->revoked || pk->disabled || pk->invalid || r->keygrip == NULL)
		r->algo = g_strdup("other");	/* gpg says why it cannot sign */
	else if (pk->pubkey_algo == GPGME_PK_EDDSA &&
		 g_ascii_strcasecmp(pk->curve != NULL ? pk->curve : "", "ed25519") == 0)
		r->algo = g_strdup("ed25519");
	else if (pk->pubkey_algo == GPGME_PK_RSA && pk->length >= 1024 && pk->length <= 16384)
		r->algo = g_strdup_printf("rsa%u", pk->length);
	else
		r->algo = g_strdup("other");
	return r;
}

static vulnid_status agent_socket_ask(const char *home, char **path, GError **err);

/* Remember where gpg-agent listens, for this uid.  Under robot_lock. */
static void
robot_remember_socket(const char *home, robot_key *r, const char *socket)
{
	if (r == NULL || (g_strcmp0(r->socket, socket) == 0 && r->socket_uid == geteuid()))
		return;
	g_free(r->socket);
	r->socket = g_strdup(socket);
	r->socket_uid = geteuid();
	robot_cache_write(home, r);
}

vulnid_status
crypto_generate_robot_key(const char *home, const char *address, const char *algo,
			  char **fpr, GError **err)
{
	g_autofree char *uid = g_strdup_printf("vulnid <%s>", address);
	gboolean rsa = algo != NULL && strcmp(algo, "rsa3072") == 0;
	gpgme_genkey_result_t r;
	gpgme_key_t key = NULL;
	gpgme_ctx_t ctx;
	gpgme_error_t e;
	vulnid_status s;

	if (algo != NULL && strcmp(algo, "ed25519") != 0 && !rsa)
		return vulnid_fail(err, VULNID_ERR_INVALID, "key algorithm '%s' is not ed25519 or rsa3072", algo);
	if (g_mkdir_with_parents(home, 0700) < 0 || chmod(home, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   home, g_strerror(errno));
	s = crypto_ctx(home, &ctx, err);
	if (s != VULNID_OK)
		return s;
	e = gpgme_op_createkey(ctx, uid, rsa ? "rsa3072" : "ed25519", 0, 0, NULL,
			       GPGME_CREATE_SIGN | GPGME_CREATE_CERT | GPGME_CREATE_NOPASSWD |
			       GPGME_CREATE_NOEXPIRE | GPGME_CREATE_FORCE);
	if (e != 0) {
		gpgme_release(ctx);
		return gpg_fail(err, e, "cannot create the robot key");
	}
	r = gpgme_op_genkey_result(ctx);
	*fpr = g_strdup(r->fpr);
	e = gpgme_get_key(ctx, *fpr, &key, 1);
	if (e == 0)
		e = gpgme_op_createsubkey(ctx, key, rsa ? "rsa3072" : "cv25519", 0, 0,
					  GPGME_CREATE_ENCR | GPGME_CREATE_NOPASSWD | GPGME_CREATE_NOEXPIRE);
	gpgme_release(ctx);
	if (e != 0) {
		if (key != NULL)
			gpgme_key_unref(key);
		g_clear_pointer(fpr, g_free);
		return gpg_fail(err, e, "cannot create the robot's encryption subkey");
	}
	{
		/* the first mail signs without a listing and without asking
		 * where the agent listens */
		g_autofree char *stamp = keyring_stamp(home);
		g_autoptr(robot_key) rk = robot_key_from_gpgme(key, stamp);
		g_autofree char *socket = NULL;

		if (agent_socket_ask(home, &socket, NULL) == VULNID_OK) {
			rk->socket = g_steal_pointer(&socket);
			rk->socket_uid = geteuid();
		}
		robot_cache_write(home, rk);
	}
	gpgme_key_unref(key);
	return VULNID_OK;
}

static vulnid_status robot_fingerprint(gboolean remembered, char **fpr, GError **err);

vulnid_status
crypto_robot_fingerprint(char **fpr, GError **err)
{
	vulnid_status s;

	g_mutex_lock(&robot_lock);
	s = robot_fingerprint(TRUE, fpr, err);
	g_mutex_unlock(&robot_lock);
	return s;
}

vulnid_status
crypto_robot_key_check(GError **err)
{
	g_autofree char *fpr = NULL;
	vulnid_status s;

	g_mutex_lock(&robot_lock);
	s = robot_fingerprint(FALSE, &fpr, err);
	g_mutex_unlock(&robot_lock);
	return s;
}

/* Under robot_lock. */
static vulnid_status
robot_fingerprint(gboolean remembered, char **fpr, GError **err)
{
	g_autofree char *stamp = NULL, *socket = NULL;
	gpgme_ctx_t ctx;
	gpgme_key_t key = NULL;
	gpgme_error_t e;
	vulnid_status s;
	uid_t socket_uid = 0;

	if (!remembered) {
		/* listed afresh; where the agent listens is still known */
		if (robot != NULL) {
			socket = g_steal_pointer(&robot->socket);
			socket_uid = robot->socket_uid;
		}
		g_clear_pointer(&robot, robot_key_free);
	} else if (robot == NULL) {
		g_autoptr(robot_key) old = NULL;

		robot = robot_cache_read(&old);
		if (robot == NULL && old != NULL) {
			/* the keyring changed, not where the agent listens */
			socket = g_steal_pointer(&old->socket);
			socket_uid = old->socket_uid;
		}
	}
	if (robot != NULL) {
		*fpr = g_strdup(robot->fpr);
		return VULNID_OK;
	}
	s = crypto_ctx(crypto_homedir, &ctx, err);
	if (s != VULNID_OK)
		return s;
	/* stamped before the listing: a change during it is seen next time */
	stamp = crypto_homedir != NULL ? keyring_stamp(crypto_homedir) : NULL;
	e = gpgme_op_keylist_start(ctx, NULL, 1);
	if (e == 0)
		e = gpgme_op_keylist_next(ctx, &key);
	gpgme_op_keylist_end(ctx);
	gpgme_release(ctx);
	if (e != 0 || key == NULL) {
		if (gpgme_err_code(e) == GPG_ERR_EOF) {
			/* Secret keys are listed through gpg-agent: none listed
			 * while key files are there means the agent is the
			 * trouble, which passes. */
			g_autofree char *keys = crypto_homedir != NULL
				? g_build_filename(crypto_homedir, "private-keys-v1.d", NULL) : NULL;
			GDir *d = keys != NULL ? g_dir_open(keys, 0, NULL) : NULL;
			gboolean have = d != NULL && g_dir_read_name(d) != NULL;

			if (d != NULL)
				g_dir_close(d);
			if (have)
				return vulnid_fail(err, VULNID_ERR_TEMP, "the robot's secret key cannot be "
						   "used now (is gpg-agent running?)");
			return vulnid_fail(err, VULNID_ERR_CONFIG, "the robot has no secret key in '%s'",
					   crypto_homedir != NULL ? crypto_homedir : "(unset)");
		}
		return gpg_fail(err, e, "cannot list the robot key");
	}
	robot = robot_key_from_gpgme(key, stamp != NULL ? stamp : "- - -");
	gpgme_key_unref(key);
	robot->socket = g_steal_pointer(&socket);
	robot->socket_uid = socket_uid;
	if (crypto_homedir != NULL)
		robot_cache_write(crypto_homedir, robot);
	*fpr = g_strdup(robot->fpr);
	return VULNID_OK;
}

char *
crypto_robot_label(void)
{
	g_autofree char *fpr = NULL;

	if (crypto_homedir == NULL || crypto_robot_fingerprint(&fpr, NULL) != VULNID_OK)
		return NULL;
	return g_strdup_printf("OpenPGP key %s", fpr);
}

vulnid_status
crypto_export_public(const char *fpr, GBytes **out, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(crypto_homedir, &ctx, err);

	if (s != VULNID_OK)
		return s;
	gpgme_data_new(&d);
	e = gpgme_op_export(ctx, fpr, 0, d);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(d);
		return gpg_fail(err, e, "cannot export the key");
	}
	*out = data_to_bytes(d);
	if (g_bytes_get_size(*out) == 0) {
		g_clear_pointer(out, g_bytes_unref);
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
	}
	return VULNID_OK;
}

void
crypto_key_free(crypto_key *k)
{
	if (k == NULL)
		return;
	g_free(k->fpr);
	g_ptr_array_unref(k->emails);
	g_ptr_array_unref(k->uids);
	g_free(k);
}

static crypto_key *
key_from_gpgme(gpgme_key_t key)
{
	crypto_key *k = g_new0(crypto_key, 1);

	k->fpr = g_strdup(key->fpr);
	k->emails = g_ptr_array_new_with_free_func(g_free);
	k->uids = g_ptr_array_new_with_free_func(g_free);
	for (gpgme_user_id_t u = key->uids; u != NULL; u = u->next) {
		if (u->revoked || u->invalid)
			continue;
		if (u->email != NULL && *u->email != '\0')
			g_ptr_array_add(k->emails, g_ascii_strdown(u->email, -1));
		if (u->uid != NULL)
			g_ptr_array_add(k->uids, g_strdup(u->uid));
	}
	k->secret = key->secret;
	k->revoked = key->revoked;
	k->expired = key->expired;
	k->can_encrypt = key->can_encrypt;
	return k;
}

static vulnid_status
crypto_keylist(const char *home, const char *pattern, GPtrArray *out, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_key_t key;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(home, &ctx, err);

	if (s != VULNID_OK)
		return s;
	e = gpgme_op_keylist_start(ctx, pattern, 0);
	while (e == 0 && (e = gpgme_op_keylist_next(ctx, &key)) == 0) {
		g_ptr_array_add(out, key_from_gpgme(key));
		gpgme_key_unref(key);
	}
	gpgme_op_keylist_end(ctx);
	gpgme_release(ctx);
	if (gpgme_err_code(e) != GPG_ERR_EOF)
		return gpg_fail(err, e, "cannot list keys");
	return VULNID_OK;
}

static vulnid_status
primary_in(const char *home, const char *fpr, char **primary, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_key_t key = NULL;
	gpgme_error_t e;
	gboolean ours = home != NULL && g_strcmp0(home, crypto_homedir) == 0;
	vulnid_status s;

	if (ours) {
		const crypto_key *k = key_cache_get(fpr);

		if (k != NULL) {
			*primary = g_strdup(k->fpr);
			return VULNID_OK;
		}
	}
	s = crypto_ctx(home, &ctx, err);
	if (s != VULNID_OK)
		return s;
	e = gpgme_op_keylist_start(ctx, fpr, 0);
	while (e == 0 && (e = gpgme_op_keylist_next(ctx, &key)) == 0) {
		for (gpgme_subkey_t sk = key->subkeys; sk != NULL; sk = sk->next)
			if (sk->fpr != NULL && g_ascii_strcasecmp(sk->fpr, fpr) == 0) {
				*primary = g_ascii_strup(key->fpr, -1);
				if (ours)
					key_cache_put(key);
				break;
			}
		gpgme_key_unref(key);
		if (*primary != NULL)
			break;
	}
	gpgme_op_keylist_end(ctx);
	gpgme_release(ctx);
	if (*primary == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
	return VULNID_OK;
}

vulnid_status
crypto_primary_fpr(const char *fpr, char **primary, GError **err)
{
	*primary = NULL;
	if (fpr == NULL || strlen(fpr) < 16)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a fingerprint");
	return primary_in(crypto_homedir, fpr, primary, err);
}

vulnid_status
crypto_get_key(const char *fpr, crypto_key **out, GError **err)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func((GDestroyNotify) crypto_key_free);
	vulnid_status s;

	if (fpr == NULL || strlen(fpr) < 16)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a fingerprint");
	{
		const crypto_key *k = key_cache_get(fpr);

		if (k != NULL && g_ascii_strcasecmp(k->fpr, fpr) == 0) {
			*out = key_copy(k);
			return VULNID_OK;
		}
	}
	s = crypto_keylist(crypto_homedir, fpr, keys, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < keys->len; i++) {
		crypto_key *k = g_ptr_array_index(keys, i);

		if (g_ascii_strcasecmp(k->fpr, fpr) == 0) {
			*out = g_ptr_array_steal_index(keys, i);
			key_cache_put_copy(*out);
			return VULNID_OK;
		}
	}
	return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
}

vulnid_status
crypto_list_keys(GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func((GDestroyNotify) crypto_key_free);
	vulnid_status s = crypto_keylist(crypto_homedir, NULL, keys, err);

	if (s == VULNID_OK)
		*out = g_steal_pointer(&keys);
	return s;
}

/* A throwaway keyring under the spool directory of the instance. */
static char *
scratch_home(GError **err)
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

static void
scratch_remove(const char *home)
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

static vulnid_status
import_into(const char *home, GBytes *data, GPtrArray *fprs, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	gpgme_import_result_t r;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(home, &ctx, err);

	if (s != VULNID_OK)
		return s;
	if (g_strcmp0(home, crypto_homedir) == 0)
		key_cache_clear();
	gpgme_data_new_from_mem(&d, g_bytes_get_data(data, NULL), g_bytes_get_size(data), 0);
	e = gpgme_op_import(ctx, d);
	gpgme_data_release(d);
	if (e != 0) {
		gpgme_release(ctx);
		return gpg_fail(err, e, "cannot import keys");
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
	s = crypto_keylist(scratch, primary, mine, err);
	if (s == VULNID_OK)
		s = crypto_keylist(crypto_homedir, NULL, all, err);
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
	scratch = scratch_home(err);
	if (scratch == NULL)
		return VULNID_ERR_IO;
	s = import_into(scratch, data, fprs, err);
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

		if (primary_in(scratch, required, &primary, NULL) != VULNID_OK) {
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
	s = crypto_ctx(scratch, &ctx, err);
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
		g_autoptr(GBytes) b = data_to_bytes(pub);

		pub = NULL;
		s = import_into(crypto_homedir, b, NULL, err);
	}
out:
	if (lock >= 0)
		close(lock);
	if (pub != NULL)
		gpgme_data_release(pub);
	if (ctx != NULL)
		gpgme_release(ctx);
	scratch_remove(scratch);
	if (s == VULNID_OK && fprs_out != NULL)
		*fprs_out = g_steal_pointer(&fprs);
	return s;
}

crypto_signature *
crypto_signature_new(void)
{
	return g_new0(crypto_signature, 1);
}

void
crypto_signature_free(crypto_signature *s)
{
	if (s == NULL)
		return;
	g_free(s->fpr);
	g_free(s->reason);
	if (s->raw != NULL)
		g_bytes_unref(s->raw);
	g_free(s->raw_sha256);
	g_free(s);
}

static gboolean
is_fingerprint(const char *f)
{
	gsize n = f != NULL ? strlen(f) : 0;

	if (n != 40 && n != 64)
		return FALSE;
	for (gsize i = 0; i < n; i++)
		if (!g_ascii_isxdigit(f[i]))
			return FALSE;
	return TRUE;
}

void
crypto_judge(crypto_signature *out, GMimeSignatureList *sigs)
{
	int n = sigs != NULL ? g_mime_signature_list_length(sigs) : 0;

	out->valid = FALSE;
	out->key_missing = FALSE;
	g_clear_pointer(&out->reason, g_free);
	if (n == 0) {
		if (out->present)
			out->reason = g_strdup("the signature could not be read");
		return;
	}
	out->present = TRUE;
	for (int i = 0; i < n; i++) {
		GMimeSignature *sig = g_mime_signature_list_get_signature(sigs, i);
		GMimeSignatureStatus st = g_mime_signature_get_status(sig);
		GMimeCertificate *cert = g_mime_signature_get_certificate(sig);
		const char *fpr = cert != NULL ? g_mime_certificate_get_fingerprint(cert) : NULL;
		const char *why = NULL;

		if (st & GMIME_SIGNATURE_STATUS_RED)
			why = "the signature is bad: the signed text was changed after signing";
		else if (st & GMIME_SIGNATURE_STATUS_KEY_MISSING)
			why = "the signing key is not known to this robot (send it as an application/pgp-keys "
			      "attachment of a request signed with it)";
		else if (st & GMIME_SIGNATURE_STATUS_KEY_REVOKED)
			why = "the signing key is revoked";
		else if (st & GMIME_SIGNATURE_STATUS_KEY_EXPIRED)
			why = "the signing key has expired";
		else if (st & GMIME_SIGNATURE_STATUS_SIG_EXPIRED)
			why = "the signature has expired";
		else if (st & (GMIME_SIGNATURE_STATUS_SYS_ERROR | GMIME_SIGNATURE_STATUS_BAD_POLICY))
			why = "the signature could not be checked";
		else if (!is_fingerprint(fpr))
			why = "the signing key is not known to this robot";
		if (st & GMIME_SIGNATURE_STATUS_KEY_MISSING)
			out->key_missing = TRUE;
		if (i == 0 && fpr != NULL && out->fpr == NULL)
			out->fpr = g_ascii_strup(fpr, -1);
		if (why != NULL) {
			out->reason = g_strdup(why);
			return;
		}
		if (out->fpr != NULL && g_ascii_strcasecmp(out->fpr, fpr) != 0) {
			out->reason = g_strdup("the mail carries signatures by more than one key");
			return;
		}
	}
	/* A key that signs with a subkey is still that key: the primary
	 * fingerprint is the identity everywhere else. */
	{
		g_autofree char *primary = NULL;

		if (crypto_primary_fpr(out->fpr, &primary, NULL) == VULNID_OK) {
			g_free(out->fpr);
			out->fpr = g_steal_pointer(&primary);
		}
	}
	out->created = g_mime_signature_get_created64(g_mime_signature_list_get_signature(sigs, 0));
	out->valid = TRUE;
}

/* What g_mime_multipart_signed_verify() does, through gpgme directly: GMime's
 * context probes the engine again and lists each signer's key, two gpg
 * processes that crypto_judge() and the caller would repeat anyway (their
 * key lookups are cached here).  The statuses are gpgme's summary bits, as
 * GMime reports them; a signature whose check failed outright is a system
 * error at least. */
GMimeSignatureList *
crypto_verify_multipart_signed(GMimeMultipartSigned *mps, GError **err)
{
	GMimeObject *content, *signature;
	const char *protocol;
	g_autofree char *sigtype = NULL;
	g_autoptr(GMimeStream) text = NULL;
	g_autoptr(GMimeStream) sigstream = NULL;
	GMimeFormatOptions *options;
	GByteArray *tb, *sb;
	GMimeSignatureList *list;
	gpgme_data_t d, sig;
	gpgme_verify_result_t r;
	gpgme_ctx_t ctx;
	gpgme_error_t e;
	g_autoptr(GError) e2 = NULL;

	if (g_mime_multipart_get_count(GMIME_MULTIPART(mps)) < 2) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_PARSE_ERROR, "missing subparts");
		return NULL;
	}
	protocol = g_mime_object_get_content_type_parameter(GMIME_OBJECT(mps), "protocol");
	if (protocol == NULL || (g_ascii_strcasecmp(protocol, "application/pgp-signature") != 0 &&
				 g_ascii_strcasecmp(protocol, "application/x-pgp-signature") != 0)) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_PROTOCOL_ERROR, "unsupported signature protocol '%s'",
			    protocol != NULL ? protocol : "(none)");
		return NULL;
	}
	signature = g_mime_multipart_get_part(GMIME_MULTIPART(mps), GMIME_MULTIPART_SIGNED_SIGNATURE);
	sigtype = g_mime_content_type_get_mime_type(g_mime_object_get_content_type(signature));
	if (!GMIME_IS_PART(signature) || g_ascii_strcasecmp(sigtype, protocol) != 0) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_PARSE_ERROR,
			    "signature content-type does not match protocol");
		return NULL;
	}
	content = g_mime_multipart_get_part(GMIME_MULTIPART(mps), GMIME_MULTIPART_SIGNED_CONTENT);
	/* RFC 3156, section 5.1: CRLF line ends, the part as received */
	text = g_mime_stream_mem_new();
	options = g_mime_format_options_new();
	g_mime_format_options_set_newline_format(options, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(content, options, text);
	g_mime_format_options_free(options);
	sigstream = g_mime_stream_mem_new();
	if (g_mime_part_get_content(GMIME_PART(signature)) != NULL)
		g_mime_data_wrapper_write_to_stream(g_mime_part_get_content(GMIME_PART(signature)), sigstream);
	tb = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(text));
	sb = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(sigstream));
	if (crypto_ctx(crypto_homedir, &ctx, &e2) != VULNID_OK) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "%s", e2->message);
		return NULL;
	}
	gpgme_data_new_from_mem(&d, (const char *) tb->data, tb->len, 0);
	gpgme_data_new_from_mem(&sig, (const char *) sb->data, sb->len, 0);
	e = gpgme_op_verify(ctx, sig, d, NULL);
	gpgme_data_release(d);
	gpgme_data_release(sig);
	if (e != 0) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "%s", gpgme_strerror(e));
		gpgme_release(ctx);
		return NULL;
	}
	r = gpgme_op_verify_result(ctx);
	list = g_mime_signature_list_new();
	for (gpgme_signature_t s = r != NULL ? r->signatures : NULL; s != NULL; s = s->next) {
		GMimeSignature *gs = g_mime_signature_new();
		GMimeCertificate *cert = g_mime_certificate_new();
		GMimeSignatureStatus st = (GMimeSignatureStatus) s->summary;

		if (gpgme_err_code(s->status) != GPG_ERR_NO_ERROR &&
		    !(st & (GMIME_SIGNATURE_STATUS_RED | GMIME_SIGNATURE_STATUS_KEY_MISSING |
			    GMIME_SIGNATURE_STATUS_KEY_REVOKED | GMIME_SIGNATURE_STATUS_KEY_EXPIRED |
			    GMIME_SIGNATURE_STATUS_SIG_EXPIRED)))
			st |= GMIME_SIGNATURE_STATUS_SYS_ERROR;
		g_mime_signature_set_status(gs, st);
		g_mime_signature_set_created(gs, (time_t) s->timestamp);
		g_mime_signature_set_expires(gs, (time_t) s->exp_timestamp);
		if (s->fpr != NULL)
			g_mime_certificate_set_fingerprint(cert, s->fpr);
		g_mime_signature_set_certificate(gs, cert);
		g_object_unref(cert);
		g_mime_signature_list_add(list, gs);
		g_object_unref(gs);
	}
	gpgme_release(ctx);
	return list;
}

static vulnid_status
verify_in(const char *home, GBytes *data, GBytes *signature, char **fpr, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d, sig;
	gpgme_verify_result_t r;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(home, &ctx, err);

	if (s != VULNID_OK)
		return s;
	gpgme_data_new_from_mem(&d, g_bytes_get_data(data, NULL), g_bytes_get_size(data), 0);
	gpgme_data_new_from_mem(&sig, g_bytes_get_data(signature, NULL), g_bytes_get_size(signature), 0);
	e = gpgme_op_verify(ctx, sig, d, NULL);
	gpgme_data_release(d);
	gpgme_data_release(sig);
	if (e != 0) {
		gpgme_release(ctx);
		return gpg_fail(err, e, "cannot verify");
	}
	r = gpgme_op_verify_result(ctx);
	if (r == NULL || r->signatures == NULL || r->signatures->next != NULL ||
	    gpgme_err_code(r->signatures->status) != GPG_ERR_NO_ERROR ||
	    (r->signatures->summary & (GPGME_SIGSUM_RED | GPGME_SIGSUM_KEY_REVOKED |
				       GPGME_SIGSUM_KEY_EXPIRED | GPGME_SIGSUM_SIG_EXPIRED |
				       GPGME_SIGSUM_KEY_MISSING | GPGME_SIGSUM_SYS_ERROR))) {
		gpgme_release(ctx);
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the signature does not verify");
	}
	*fpr = g_ascii_strup(r->signatures->fpr, -1);
	gpgme_release(ctx);
	return VULNID_OK;
}

vulnid_status
crypto_verify_with_key(GBytes *key, GBytes *data, GBytes *signature, char **fpr, GError **err)
{
	g_autofree char *scratch = scratch_home(err);
	vulnid_status s;

	if (scratch == NULL)
		return VULNID_ERR_IO;
	s = import_into(scratch, key, NULL, err);
	if (s == VULNID_OK)
		s = verify_in(scratch, data, signature, fpr, err);
	scratch_remove(scratch);
	return s;
}

vulnid_status
crypto_verify_detached(const char *home, GBytes *data, GBytes *sig, char **fpr, GError **err)
{
	return verify_in(home != NULL ? home : crypto_homedir, data, sig, fpr, err);
}

static vulnid_status sign_data(GBytes *data, const char *signer, GBytes **out, char **micalg,
				GError **err);

/* Parts that are not base64 already go quoted-printable: nothing in the
 * signed content may be changed by a 7-bit relay (RFC 3156, section 3). */
static void
sign_prepare(GMimeObject *o)
{
	if (GMIME_IS_MULTIPART_SIGNED(o) || GMIME_IS_MULTIPART_ENCRYPTED(o))
		return;
	if (GMIME_IS_MULTIPART(o)) {
		int n = g_mime_multipart_get_count(GMIME_MULTIPART(o));

		for (int i = 0; i < n; i++)
			sign_prepare(g_mime_multipart_get_part(GMIME_MULTIPART(o), i));
	} else if (GMIME_IS_MESSAGE_PART(o)) {
		GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

		if (m != NULL && g_mime_message_get_mime_part(m) != NULL)
			sign_prepare(g_mime_message_get_mime_part(m));
	} else if (GMIME_IS_PART(o) &&
		   g_mime_part_get_content_encoding(GMIME_PART(o)) != GMIME_CONTENT_ENCODING_BASE64)
		g_mime_part_set_content_encoding(GMIME_PART(o), GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
}

/* RFC 3156 multipart/signed, as g_mime_multipart_signed_sign() builds it,
 * but signed through sign_data(): GMime's context runs gpg and lists the
 * signer's secret key first, two gpg processes per mail. */
GMimeObject *
crypto_sign_mime(GMimeObject *entity, const char *signer, GError **err)
{
	g_autoptr(GMimeStream) clear = g_mime_stream_mem_new();
	g_autoptr(GMimeStream) canon = g_mime_stream_mem_new();
	g_autoptr(GBytes) sig = NULL;
	g_autofree char *micalg = NULL;
	GMimeStream *f;
	GMimeFilter *filter;
	GByteArray *buf;
	g_autoptr(GMimeParser) parser = NULL;
	GMimeObject *content;
	GMimePart *sigpart;
	GMimeDataWrapper *wrapper;
	GMimeMultipartSigned *mps;
	GMimeStream *sigstream;
	vulnid_status s;

	sign_prepare(entity);
	/* "From " armoured and trailing white space stripped (RFC 3156,
	 * sections 3 and 5.4) in what is sent ... */
	f = g_mime_stream_filter_new(clear);
	filter = g_mime_filter_from_new(GMIME_FILTER_FROM_MODE_ARMOR);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	filter = g_mime_filter_strip_new();
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	g_mime_object_write_to_stream(entity, NULL, f);
	g_mime_stream_flush(f);
	g_object_unref(f);
	g_mime_stream_reset(clear);
	/* ... and CRLF line ends in what is signed (section 5.1) */
	f = g_mime_stream_filter_new(canon);
	filter = g_mime_filter_unix2dos_new(FALSE);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	g_mime_stream_write_to_stream(clear, f);
	g_mime_stream_flush(f);
	g_object_unref(f);
	g_mime_stream_reset(clear);
	buf = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(canon));
	{
		g_autoptr(GBytes) data = g_bytes_new_static(buf->data, buf->len);
		g_autoptr(GError) e = NULL;

		s = sign_data(data, signer, &sig, &micalg, &e);
		if (s != VULNID_OK) {
			g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "%s", e != NULL ? e->message : "cannot sign");
			return NULL;
		}
	}
	parser = g_mime_parser_new_with_stream(clear);
	content = g_mime_parser_construct_part(parser, NULL);
	if (content == NULL) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_PARSE_ERROR, "cannot read back the signed part");
		return NULL;
	}
	sigpart = g_mime_part_new_with_type("application", "pgp-signature");
	sigstream = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
	wrapper = g_mime_data_wrapper_new_with_stream(sigstream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(sigpart, wrapper);
	g_object_unref(wrapper);
	g_object_unref(sigstream);
	mps = g_mime_multipart_signed_new();
	g_mime_multipart_add(GMIME_MULTIPART(mps), content);
	g_mime_multipart_add(GMIME_MULTIPART(mps), GMIME_OBJECT(sigpart));
	g_object_unref(content);
	g_object_unref(sigpart);
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(mps), "protocol", "application/pgp-signature");
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(mps), "micalg", micalg);
	g_mime_multipart_set_boundary(GMIME_MULTIPART(mps), NULL);
	return GMIME_OBJECT(mps);
}

GMimeObject *
crypto_encrypt_mime(GMimeObject *entity, const char *signer, GPtrArray *recipients, GError **err)
{
	g_autoptr(GMimeCryptoContext) ctx = g_mime_gpg_context_new();

	return GMIME_OBJECT(g_mime_multipart_encrypted_encrypt(ctx, entity, signer != NULL, signer,
							       GMIME_ENCRYPT_ALWAYS_TRUST, recipients, err));
}

/* Run a GnuPG program (argv) with input on its stdin; its stdout and
 * stderr come back whole, *status as waitpid() gives it.  posix_spawn(): no copy of
 * this process's page tables as with fork(), no helper thread as with
 * GSubprocess.  Its stdin is a socket, so that a gpg that quits early
 * makes send() fail instead of raising SIGPIPE. */
static gboolean
run_program(const char *const *argv, GBytes *input, GByteArray *out, GByteArray *errout, int *status,
	char **why)
{
	int in_sv[2] = { -1, -1 }, out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	const guint8 *in = g_bytes_get_data(input, NULL);
	gsize in_len = g_bytes_get_size(input), in_off = 0;
	gboolean ok = FALSE;
	pid_t pid = -1;
	int rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_sv) < 0 ||
	    pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0) {
		*why = g_strdup_printf("cannot run gpg: %s", g_strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in_sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);	/* what the MTA left open */
#endif
	rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *) argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		pid = -1;
		*why = g_strdup_printf("cannot run %s: %s", argv[0], g_strerror(rc));
		goto out;
	}
	close(in_sv[1]);
	close(out_p[1]);
	close(err_p[1]);
	in_sv[1] = out_p[1] = err_p[1] = -1;
	if (in_len == 0) {
		close(in_sv[0]);
		in_sv[0] = -1;
	}
	while (out_p[0] >= 0 || err_p[0] >= 0) {
		struct pollfd pf[3];
		int np = 0;

		if (in_sv[0] >= 0)
			pf[np++] = (struct pollfd) { .fd = in_sv[0], .events = POLLOUT };
		if (out_p[0] >= 0)
			pf[np++] = (struct pollfd) { .fd = out_p[0], .events = POLLIN };
		if (err_p[0] >= 0)
			pf[np++] = (struct pollfd) { .fd = err_p[0], .events = POLLIN };
		if (poll(pf, (nfds_t) np, -1) < 0) {
			if (errno == EINTR)
				continue;
			*why = g_strdup_printf("cannot talk to gpg: %s", g_strerror(errno));
			goto out;
		}
		for (int i = 0; i < np; i++) {
			if (pf[i].revents == 0)
				continue;
			if (pf[i].fd == in_sv[0]) {
				ssize_t w = send(in_sv[0], in + in_off, MIN(in_len - in_off, 65536),
						 MSG_NOSIGNAL | MSG_DONTWAIT);

				if (w < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (w > 0)
					in_off += (gsize) w;
				if (w < 0 || in_off == in_len) {
					close(in_sv[0]);	/* done, or gpg stopped reading */
					in_sv[0] = -1;
				}
			} else {
				int *fd = pf[i].fd == out_p[0] ? &out_p[0] : &err_p[0];
				GByteArray *to = pf[i].fd == out_p[0] ? out : errout;
				guint8 buf[16384];
				ssize_t r = read(*fd, buf, sizeof buf);

				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0) {
					close(*fd);
					*fd = -1;
				} else
					g_byte_array_append(to, buf, (guint) r);
			}
		}
	}
	ok = TRUE;
out:
	for (int i = 0; i < 2; i++) {
		if (in_sv[i] >= 0)
			close(in_sv[i]);
		if (out_p[i] >= 0)
			close(out_p[i]);
		if (err_p[i] >= 0)
			close(err_p[i]);
	}
	if (pid > 0) {
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
	}
	return ok;
}

/* Sign data with signer's key, running gpg directly: for the keys the
 * packets of openpgp.c are not made for (another algorithm, a primary key
 * that cannot sign, an expired key, a signer named otherwise than by its
 * fingerprint).  gpg is told the exact key ("FPR!"); what it says on its
 * status channel is checked: one signature, made by that key. */
static vulnid_status
sign_data_gpg(GBytes *data, const char *signer, gpgme_sig_mode_t mode, GBytes **out, char **micalg,
	  GError **err)
{
	g_autofree char *user = NULL;
	const char *argv[16];
	int n = 0;
	g_autoptr(GByteArray) sigbuf = g_byte_array_new();
	g_autoptr(GByteArray) statusbuf = g_byte_array_new();
	g_autofree char *spawn_why = NULL;
	int wstatus = 0;
	g_auto(GStrv) lines = NULL;
	const char *created = NULL;
	const char *gpg;

	if (signer == NULL || *signer == '\0')
		return vulnid_fail(err, VULNID_ERR_INVALID, "no signing key");
	user = is_fingerprint(signer) ? g_strconcat(signer, "!", NULL) : g_strdup(signer);
	/* the gpg gpgme uses (no PATH search: the MTA's PATH is not ours) */
	gpgme_check_version(NULL);	/* initialises gpgme; no process */
	gpg = gpgme_get_dirinfo("gpg-name");
	argv[n++] = gpg != NULL ? gpg : "gpg";
	argv[n++] = "--batch";
	argv[n++] = "--no-tty";
	argv[n++] = "--disable-dirmngr";
	argv[n++] = "--status-fd=2";
	argv[n++] = "--armor";
	argv[n++] = "--local-user";
	argv[n++] = user;
	if (crypto_homedir != NULL) {
		argv[n++] = "--homedir";
		argv[n++] = crypto_homedir;
	}
	argv[n++] = mode == GPGME_SIG_MODE_CLEAR ? "--clearsign" : "--detach-sign";
	if (mode == GPGME_SIG_MODE_CLEAR)
		argv[n++] = "--textmode";
	argv[n] = NULL;
	if (!run_program(argv, data, sigbuf, statusbuf, &wstatus, &spawn_why))
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign: %s", spawn_why);
	g_byte_array_append(statusbuf, (const guint8 *) "", 1);
	lines = g_strsplit((const char *) statusbuf->data, "\n", -1);
	for (char **l = lines; *l != NULL; l++)
		if (g_str_has_prefix(*l, "[GNUPG:] SIG_CREATED ")) {
			if (created != NULL) {
				created = NULL;	/* more than one: not what was asked */
				break;
			}
			created = *l + strlen("[GNUPG:] SIG_CREATED ");
		}
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || created == NULL || sigbuf->len == 0) {
		/* The secret key not usable now (gpg-agent down, a smart card
		 * away) and a key that is gone look alike here: wait. */
		g_autofree char *why = NULL;

		for (char **l = lines; *l != NULL && why == NULL; l++)
			if (**l != '\0' && !g_str_has_prefix(*l, "[GNUPG:]"))
				why = g_strdup(*l);
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign with %s: %s", signer,
				   why != NULL ? why : "gpg failed");
	}
	{
		/* SIG_CREATED type pk-algo hash-algo class time fingerprint */
		g_auto(GStrv) f = g_strsplit(created, " ", -1);

		if (g_strv_length(f) < 6 ||
		    (is_fingerprint(signer) && g_ascii_strcasecmp(g_strstrip(f[5]), signer) != 0))
			return vulnid_fail(err, VULNID_ERR_INTERNAL, "gpg signed with %s, not %s",
					   g_strv_length(f) >= 6 ? f[5] : "another key", signer);
		if (micalg != NULL) {
			const char *h = gpgme_hash_algo_name((gpgme_hash_algo_t) atoi(f[2]));
			g_autofree char *lower = g_ascii_strdown(h != NULL ? h : "sha256", -1);

			*micalg = g_strconcat("pgp-", lower, NULL);
		}
	}
	*out = g_byte_array_free_to_bytes(g_steal_pointer(&sigbuf));
	return VULNID_OK;
}

/* --- signatures through gpg-agent -------------------------------------------------- */

/* A GnuPG program installed beside the gpg that gpgme uses (no PATH
 * search: the MTA's PATH is not ours). */
static char *
gnupg_program(const char *name)
{
	const char *gpg;
	g_autofree char *dir = NULL;

	gpgme_check_version(NULL);	/* initialises gpgme; no process */
	gpg = gpgme_get_dirinfo("gpg-name");
	dir = g_path_get_dirname(gpg != NULL ? gpg : "/usr/bin/gpg");
	return g_build_filename(dir, name, NULL);
}

/* gpgconf --homedir HOME ARGS...; its output in out. */
static vulnid_status
run_gpgconf(const char *home, const char *a1, const char *a2, GByteArray *out, GError **err)
{
	g_autofree char *gpgconf = gnupg_program("gpgconf");
	const char *argv[] = { gpgconf, "--homedir", home, a1, a2, NULL };
	g_autoptr(GByteArray) errout = g_byte_array_new();
	g_autoptr(GByteArray) ignored = out == NULL ? g_byte_array_new() : NULL;
	g_autoptr(GBytes) none = g_bytes_new(NULL, 0);
	g_autofree char *why = NULL;
	int wstatus = 0;

	if (!run_program(argv, none, out != NULL ? out : ignored, errout, &wstatus, &why))
		return vulnid_fail(err, VULNID_ERR_TEMP, "%s", why);
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		g_autofree char *msg = g_strndup((const char *) errout->data, errout->len);

		return vulnid_fail(err, VULNID_ERR_TEMP, "gpgconf %s %s failed: %s", a1, a2,
				   *g_strstrip(msg) != '\0' ? msg : "no reason given");
	}
	return VULNID_OK;
}

/* Where gpg-agent listens for the keyring home, as gpgconf says: in the
 * keyring directory, or under /run/user/UID when that exists. */
static vulnid_status
agent_socket_ask(const char *home, char **path, GError **err)
{
	g_autoptr(GByteArray) out = g_byte_array_new();
	g_autofree char *text = NULL;
	vulnid_status s = run_gpgconf(home, "--list-dirs", "agent-socket", out, err);

	if (s != VULNID_OK)
		return s;
	text = g_strndup((const char *) out->data, out->len);
	g_strchomp(text);
	if (!g_path_is_absolute(text) || strchr(text, '\n') != NULL)
		return vulnid_fail(err, VULNID_ERR_TEMP, "gpgconf named no agent socket for '%s'", home);
	*path = g_steal_pointer(&text);
	return VULNID_OK;
}

/* gpg starts gpg-agent when it is not running, unless gpg.conf says
 * no-autostart; vulnid does as gpg would. */
static gboolean
agent_autostart(const char *home)
{
	g_autofree char *path = g_build_filename(home, "gpg.conf", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return TRUE;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l != NULL; l++)
		if (strcmp(g_strstrip(*l), "no-autostart") == 0)
			return FALSE;
	return TRUE;
}

/* One connection to gpg-agent per process, kept for the next signature
 * (a resident server signs many); one signature at a time on it. */
static GMutex agent_lock;
static openpgp_agent *agent;
static pid_t agent_pid;

void
crypto_agent_close(void)
{
	g_mutex_lock(&agent_lock);
	/* one inherited over fork() is the parent's: not closed here, where
	 * a goodbye would end the parent's session */
	if (agent != NULL && agent_pid == getpid())
		openpgp_agent_free(agent);
	agent = NULL;
	g_mutex_unlock(&agent_lock);
}

/* Connect, at the socket remembered or asked for; an agent that is not
 * running is started, as gpg would start it.  Under agent_lock. */
static vulnid_status
agent_open(GError **err)
{
	const char *home = crypto_homedir;
	g_autofree char *socket = NULL;
	g_autoptr(GError) e = NULL;
	gboolean asked = FALSE;
	vulnid_status s;

	if (home == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "no keyring");
	gpgme_check_version(NULL);	/* SIGPIPE ignored, as for gpgme's own connections */
	g_mutex_lock(&robot_lock);
	if (robot != NULL && robot->socket != NULL && robot->socket_uid == geteuid())
		socket = g_strdup(robot->socket);
	g_mutex_unlock(&robot_lock);
	if (socket == NULL) {
		s = agent_socket_ask(home, &socket, err);
		if (s != VULNID_OK)
			return s;
		asked = TRUE;
	}
	s = openpgp_agent_connect(socket, &agent, &e);
	if (s == VULNID_ERR_NOTFOUND && !asked) {
		/* the socket remembered may have moved (/run/user/UID made) */
		g_autofree char *now = NULL;

		asked = TRUE;
		if (agent_socket_ask(home, &now, NULL) == VULNID_OK && strcmp(now, socket) != 0) {
			g_free(socket);
			socket = g_steal_pointer(&now);
			g_clear_error(&e);
			s = openpgp_agent_connect(socket, &agent, &e);
		}
	}
	if (s == VULNID_ERR_NOTFOUND) {
		if (!agent_autostart(home))
			return vulnid_fail(err, VULNID_ERR_TEMP, "gpg-agent is not running (gpg.conf says "
					   "no-autostart): %s", e->message);
		g_clear_error(&e);
		s = run_gpgconf(home, "--launch", "gpg-agent", NULL, &e);
		if (s == VULNID_OK)
			s = openpgp_agent_connect(socket, &agent, &e);
	}
	if (s != VULNID_OK) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s == VULNID_ERR_NOTFOUND ? VULNID_ERR_TEMP : s;
	}
	agent_pid = getpid();
	if (asked) {
		g_mutex_lock(&robot_lock);
		robot_remember_socket(home, robot, socket);
		g_mutex_unlock(&robot_lock);
	}
	return VULNID_OK;
}

/* PKSIGN on the kept connection, or a new one.  A kept connection that
 * fails may be to an agent restarted since: one more try on a new one. */
static vulnid_status
agent_pksign(const char *keygrip, const guint8 *digest, GBytes **sexp, GError **err)
{
	vulnid_status s;

	g_mutex_lock(&agent_lock);
	if (agent != NULL && agent_pid != getpid())
		agent = NULL;	/* the parent's (see crypto_agent_close()) */
	for (int attempt = 0;; attempt++) {
		gboolean fresh = agent == NULL;
		g_autoptr(GError) e = NULL;

		if (fresh) {
			s = agent_open(err);
			if (s != VULNID_OK)
				break;
		}
		s = openpgp_agent_pksign(agent, keygrip, digest, sexp, &e);
		if (s == VULNID_OK)
			break;
		g_clear_pointer(&agent, openpgp_agent_free);
		if (fresh || attempt > 0) {
			g_propagate_error(err, g_steal_pointer(&e));
			break;
		}
	}
	g_mutex_unlock(&agent_lock);
	return s;
}

/* The robot's key as openpgp.c signs with it, or FALSE when gpg must
 * make the signature: another algorithm, a primary key that cannot sign,
 * an expired key (gpg then says why it cannot sign). */
static gboolean
robot_openpgp_key(const char *signer, openpgp_key *key)
{
	g_autofree char *fpr = NULL;
	gboolean ok = FALSE;
	guint64 bits;

	if (!is_fingerprint(signer))
		return FALSE;
	g_mutex_lock(&robot_lock);
	if (robot_fingerprint(TRUE, &fpr, NULL) != VULNID_OK || g_ascii_strcasecmp(fpr, signer) != 0 ||
	    robot->keygrip == NULL ||
	    (robot->expires != 0 && robot->expires <= g_get_real_time() / G_USEC_PER_SEC))
		ok = FALSE;
	else if (strcmp(robot->algo, "ed25519") == 0)
		ok = openpgp_key_init(key, OPENPGP_PK_EDDSA, 255, robot->fpr, robot->keygrip);
	else if (g_str_has_prefix(robot->algo, "rsa") &&
		 g_ascii_string_to_unsigned(robot->algo + 3, 10, 1024, 16384, &bits, NULL))
		ok = openpgp_key_init(key, OPENPGP_PK_RSA, (guint) bits, robot->fpr, robot->keygrip);
	g_mutex_unlock(&robot_lock);
	return ok;
}

/* The armored signature (type: binary or canonical text) over data. */
static vulnid_status
agent_sign(const openpgp_key *key, const char *signer, guint8 type, const void *data, gsize len,
	   char **armored, GError **err)
{
	g_autoptr(openpgp_sig) sig = openpgp_sig_new(key, type, g_get_real_time() / G_USEC_PER_SEC);
	g_autoptr(GBytes) sexp = NULL, packet = NULL;
	vulnid_status s;

	openpgp_sig_update(sig, data, len);
	s = agent_pksign(key->keygrip, openpgp_sig_digest(sig), &sexp, err);
	if (s == VULNID_OK)
		s = openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &packet, err);
	if (s == VULNID_OK)
		*armored = openpgp_armor_signature(packet);
	else if (err != NULL && *err != NULL)
		g_prefix_error(err, "cannot sign with %s: ", signer);
	return s;
}

/* A detached signature over data by signer: through gpg-agent, or by gpg
 * for keys of other kinds.  micalg: "pgp-sha256" or what gpg used. */
static vulnid_status
sign_data(GBytes *data, const char *signer, GBytes **out, char **micalg, GError **err)
{
	openpgp_key key;
	char *armored = NULL;
	vulnid_status s;

	if (!robot_openpgp_key(signer, &key))
		return sign_data_gpg(data, signer, GPGME_SIG_MODE_DETACH, out, micalg, err);
	s = agent_sign(&key, signer, OPENPGP_SIG_BINARY, g_bytes_get_data(data, NULL), g_bytes_get_size(data),
		       &armored, err);
	if (s != VULNID_OK)
		return s;
	*out = g_bytes_new_take(armored, strlen(armored));
	if (micalg != NULL)
		*micalg = g_strdup("pgp-sha256");
	return VULNID_OK;
}

vulnid_status
crypto_clearsign(const char *text, const char *signer, char **out, GError **err)
{
	g_autoptr(GString) shown = g_string_new(NULL);
	g_autoptr(GString) canonical = g_string_new(NULL);
	g_autofree char *armored = NULL;
	openpgp_key key;
	vulnid_status s;

	if (!robot_openpgp_key(signer, &key)) {
		g_autoptr(GBytes) in = g_bytes_new(text, strlen(text));
		g_autoptr(GBytes) sig = NULL;

		s = sign_data_gpg(in, signer, GPGME_SIG_MODE_CLEAR, &sig, NULL, err);
		if (s == VULNID_OK)
			*out = g_strndup(g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
		return s;
	}
	openpgp_cleartext(text, shown, canonical);
	s = agent_sign(&key, signer, OPENPGP_SIG_TEXT, canonical->str, canonical->len, &armored, err);
	if (s == VULNID_OK)
		*out = openpgp_cleartext_message(shown->str, armored);
	return s;
}

vulnid_status
crypto_sign_detached(GBytes *data, const char *signer, GBytes **sig, GError **err)
{
	return sign_data(data, signer, sig, NULL, err);
}

vulnid_status
crypto_seal(GBytes *clear, const char *robot_fpr, GBytes **sealed, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_key_t keys[2] = { NULL, NULL };
	gpgme_data_t in, out;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(crypto_homedir, &ctx, err);

	if (s != VULNID_OK)
		return s;
	e = gpgme_get_key(ctx, robot_fpr, &keys[0], 0);
	if (e != 0) {
		gpgme_release(ctx);
		return gpg_fail(err, e, "no robot key");
	}
	gpgme_data_new_from_mem(&in, g_bytes_get_data(clear, NULL), g_bytes_get_size(clear), 0);
	gpgme_data_new(&out);
	e = gpgme_op_encrypt(ctx, keys, GPGME_ENCRYPT_ALWAYS_TRUST, in, out);
	gpgme_key_unref(keys[0]);
	gpgme_data_release(in);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(out);
		return gpg_fail(err, e, "cannot encrypt");
	}
	*sealed = data_to_bytes(out);
	return VULNID_OK;
}

vulnid_status
crypto_unseal(GBytes *sealed, GBytes **clear, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t in, out;
	gpgme_error_t e;
	vulnid_status s = crypto_ctx(crypto_homedir, &ctx, err);

	if (s != VULNID_OK)
		return s;
	gpgme_data_new_from_mem(&in, g_bytes_get_data(sealed, NULL), g_bytes_get_size(sealed), 0);
	gpgme_data_new(&out);
	e = gpgme_op_decrypt(ctx, in, out);
	gpgme_data_release(in);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(out);
		return gpg_fail(err, e, "cannot decrypt sealed content");
	}
	*clear = data_to_bytes(out);
	return VULNID_OK;
}
