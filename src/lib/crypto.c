/* crypto.c - OpenPGP in the instance's keyring: the home, gpgme contexts, the key cache, the robot key, key lists, sealing */
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
#include "openpgp-encrypt.h"

#include "crypto-private.h"

char *crypto_homedir;	/* crypto-private.h */

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

vulnid_status
cr_gpg_fail(GError **err, gpgme_error_t e, const char *what)
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
	cr_key_cache_clear();
	return VULNID_OK;
}

vulnid_status
cr_ctx(const char *home, gpgme_ctx_t *out, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_error_t e;

	if (gpgme_check_version("1.13.0") == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "gpgme is older than 1.13");
	e = gpgme_new(&ctx);
	if (e != 0)
		return cr_gpg_fail(err, e, "gpgme_new");
	gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	gpgme_set_armor(ctx, 1);
	gpgme_set_offline(ctx, 1);	/* never a keyserver or dirmngr */
	/* The instance's keyring is GNUPGHOME already; only scratch keyrings
	 * need the engine told (which costs a `gpg --version`). */
	if (home != NULL && g_strcmp0(home, crypto_homedir) != 0) {
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, NULL, home);
		if (e != 0) {
			gpgme_release(ctx);
			return cr_gpg_fail(err, e, "gpgme");
		}
	}
	*out = ctx;
	return VULNID_OK;
}

GBytes *
cr_data_to_bytes(gpgme_data_t d)
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

/* The robot's key as this process knows it, under cr_robot_lock (a resident
 * server signs from several threads). */
robot_key *cr_robot;
GMutex cr_robot_lock;

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
	g_mutex_lock(&cr_robot_lock);
	g_clear_pointer(&cr_robot, robot_key_free);
	g_mutex_unlock(&cr_robot_lock);
}

char *
cr_keyring_stamp(const char *home)
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
	if (g_strv_length(f) != ROBOT_FIELDS || strchr(text, '\n') != NULL || !cr_is_fingerprint(f[0]) ||
	    (strcmp(f[1], "-") != 0 && !is_keygrip(f[1])) ||
	    strspn(f[2], "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(f[2]))
		return NULL;
	expires = g_ascii_strtoll(f[3], &end, 10);
	if (*end != '\0' || end == f[3] || expires < 0)
		return NULL;
	stamp = cr_keyring_stamp(crypto_homedir);
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


static void seal_restamp(const char *before);

void
cr_robot_restamp(const char *before)
{
	seal_restamp(before);
	g_mutex_lock(&cr_robot_lock);
	if (cr_robot != NULL && crypto_homedir != NULL && g_strcmp0(cr_robot->stamp, before) == 0) {
		g_free(cr_robot->stamp);
		cr_robot->stamp = cr_keyring_stamp(crypto_homedir);
		robot_cache_write(crypto_homedir, cr_robot);
	}
	g_mutex_unlock(&cr_robot_lock);
}

/* Remember where gpg-agent listens, for this uid.  Under cr_robot_lock. */
void
cr_robot_remember_socket(const char *home, robot_key *r, const char *socket)
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
	s = cr_ctx(home, &ctx, err);
	if (s != VULNID_OK)
		return s;
	e = gpgme_op_createkey(ctx, uid, rsa ? "rsa3072" : "ed25519", 0, 0, NULL,
			       GPGME_CREATE_SIGN | GPGME_CREATE_CERT | GPGME_CREATE_NOPASSWD |
			       GPGME_CREATE_NOEXPIRE | GPGME_CREATE_FORCE);
	if (e != 0) {
		gpgme_release(ctx);
		return cr_gpg_fail(err, e, "cannot create the robot key");
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
		return cr_gpg_fail(err, e, "cannot create the robot's encryption subkey");
	}
	{
		/* the first mail signs without a listing and without asking
		 * where the agent listens */
		g_autofree char *stamp = cr_keyring_stamp(home);
		g_autoptr(robot_key) rk = robot_key_from_gpgme(key, stamp);
		g_autofree char *socket = NULL;

		if (cr_agent_socket_ask(home, &socket, NULL) == VULNID_OK) {
			rk->socket = g_steal_pointer(&socket);
			rk->socket_uid = geteuid();
		}
		robot_cache_write(home, rk);
	}
	gpgme_key_unref(key);
	return VULNID_OK;
}


vulnid_status
crypto_robot_fingerprint(char **fpr, GError **err)
{
	vulnid_status s;

	g_mutex_lock(&cr_robot_lock);
	s = cr_robot_fingerprint(TRUE, fpr, err);
	g_mutex_unlock(&cr_robot_lock);
	return s;
}

vulnid_status
crypto_robot_key_check(GError **err)
{
	g_autofree char *fpr = NULL;
	vulnid_status s;

	g_mutex_lock(&cr_robot_lock);
	s = cr_robot_fingerprint(FALSE, &fpr, err);
	g_mutex_unlock(&cr_robot_lock);
	return s;
}

/* Under cr_robot_lock. */
vulnid_status
cr_robot_fingerprint(gboolean remembered, char **fpr, GError **err)
{
	g_autofree char *stamp = NULL, *socket = NULL;
	gpgme_ctx_t ctx;
	gpgme_key_t key = NULL;
	gpgme_error_t e;
	vulnid_status s;
	uid_t socket_uid = 0;

	if (!remembered) {
		/* listed afresh; where the agent listens is still known */
		if (cr_robot != NULL) {
			socket = g_steal_pointer(&cr_robot->socket);
			socket_uid = cr_robot->socket_uid;
		}
		g_clear_pointer(&cr_robot, robot_key_free);
	} else if (cr_robot == NULL) {
		g_autoptr(robot_key) old = NULL;

		cr_robot = robot_cache_read(&old);
		if (cr_robot == NULL && old != NULL) {
			/* the keyring changed, not where the agent listens */
			socket = g_steal_pointer(&old->socket);
			socket_uid = old->socket_uid;
		}
	}
	if (cr_robot != NULL) {
		*fpr = g_strdup(cr_robot->fpr);
		return VULNID_OK;
	}
	s = cr_ctx(crypto_homedir, &ctx, err);
	if (s != VULNID_OK)
		return s;
	/* stamped before the listing: a change during it is seen next time */
	stamp = crypto_homedir != NULL ? cr_keyring_stamp(crypto_homedir) : NULL;
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
		return cr_gpg_fail(err, e, "cannot list the robot key");
	}
	cr_robot = robot_key_from_gpgme(key, stamp != NULL ? stamp : "- - -");
	gpgme_key_unref(key);
	cr_robot->socket = g_steal_pointer(&socket);
	cr_robot->socket_uid = socket_uid;
	if (crypto_homedir != NULL)
		robot_cache_write(crypto_homedir, cr_robot);
	*fpr = g_strdup(cr_robot->fpr);
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
	vulnid_status s = cr_ctx(crypto_homedir, &ctx, err);

	if (s != VULNID_OK)
		return s;
	gpgme_data_new(&d);
	e = gpgme_op_export(ctx, fpr, 0, d);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(d);
		return cr_gpg_fail(err, e, "cannot export the key");
	}
	*out = cr_data_to_bytes(d);
	if (g_bytes_get_size(*out) == 0) {
		g_clear_pointer(out, g_bytes_unref);
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
	}
	return VULNID_OK;
}

/* --- sealing ------------------------------------------------------------------------ */

/* Sealing encrypts to the robot's own key, several times for one
 * embargoed mail; through gpg each time is a key lookup and an
 * encryption, two processes.  Instead the robot's public key is exported
 * once and kept beside vulnid-robot-key, in GNUPGHOME/vulnid-robot-pubkey
 * (a line "FPR STAMP", then the key as gpg armors it), stamped the same
 * way: a key made, imported or deleted exports it again.  openpgp-encrypt.c
 * reads it, chooses the subkey gpg would, and encrypts; a key of a kind it
 * does not encrypt to is left to gpg, which also decrypts everything. */
typedef struct {
	char *home, *fpr, *stamp;
	openpgp_cert *cert;
} seal_key;

static GMutex seal_lock;
static seal_key *seal_cache;	/* under seal_lock */

static void
seal_key_free(seal_key *k)
{
	if (k == NULL)
		return;
	g_free(k->home);
	g_free(k->fpr);
	g_free(k->stamp);
	openpgp_cert_free(k->cert);
	g_free(k);
}

static char *
seal_key_path(const char *home)
{
	return g_build_filename(home, "vulnid-robot-pubkey", NULL);
}

static gboolean
cert_is(const openpgp_cert *cert, const char *fpr)
{
	char hex[41];

	if (cert->primary->version != 4)
		return FALSE;
	for (int i = 0; i < 20; i++)
		g_snprintf(hex + 2 * i, 3, "%02X", cert->primary->fpr[i]);
	return strcmp(hex, fpr) == 0;
}

/* The key remembered in the file, when it is fpr's and the keyring's
 * stamp is still the one it was exported under. */
static openpgp_cert *
seal_key_read(const char *home, const char *fpr, const char *stamp)
{
	g_autofree char *path = seal_key_path(home), *text = NULL, *want = NULL;
	openpgp_cert *cert = NULL;
	const char *nl;
	gsize len;

	if (!g_file_get_contents(path, &text, &len, NULL) || (nl = memchr(text, '\n', len)) == NULL)
		return NULL;
	want = g_strdup_printf("%s %s", fpr, stamp);
	if ((gsize) (nl - text) != strlen(want) || memcmp(text, want, strlen(want)) != 0)
		return NULL;
	nl++;
	if (openpgp_cert_parse(nl, len - (gsize) (nl - text), &cert, NULL) != VULNID_OK)
		return NULL;
	if (!cert_is(cert, fpr))
		g_clear_pointer(&cert, openpgp_cert_free);
	return cert;
}

static void
seal_key_write(const char *home, const char *fpr, const char *stamp, GBytes *key)
{
	g_autofree char *path = seal_key_path(home);
	g_autoptr(GString) text = g_string_new(NULL);

	g_string_printf(text, "%s %s\n", fpr, stamp);
	g_string_append_len(text, g_bytes_get_data(key, NULL), (gssize) g_bytes_get_size(key));
	/* only a cache: a failure costs an export next time */
	g_file_set_contents_full(path, text->str, (gssize) text->len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
}

/* The robot's public key in seal_cache: kept from before, read from the
 * file, or exported now (one gpg process).  Under seal_lock. */
static vulnid_status
seal_cert(const char *fpr, GError **err)
{
	/* stamped before the export: a change during it is seen next time */
	g_autofree char *stamp = cr_keyring_stamp(crypto_homedir);
	g_autoptr(GBytes) exported = NULL;
	openpgp_cert *cert;
	vulnid_status s;

	if (seal_cache != NULL && strcmp(seal_cache->home, crypto_homedir) == 0 &&
	    strcmp(seal_cache->fpr, fpr) == 0 && strcmp(seal_cache->stamp, stamp) == 0)
		return VULNID_OK;
	g_clear_pointer(&seal_cache, seal_key_free);
	cert = seal_key_read(crypto_homedir, fpr, stamp);
	if (cert == NULL) {
		s = crypto_export_public(fpr, &exported, err);
		if (s == VULNID_OK)
			s = openpgp_cert_parse(g_bytes_get_data(exported, NULL), g_bytes_get_size(exported), &cert, err);
		if (s == VULNID_OK && !cert_is(cert, fpr)) {
			g_clear_pointer(&cert, openpgp_cert_free);
			s = vulnid_fail(err, VULNID_ERR_INVALID, "gpg exported another key than %s", fpr);
		}
		if (s != VULNID_OK)
			return s;
		seal_key_write(crypto_homedir, fpr, stamp, exported);
	}
	seal_cache = g_new0(seal_key, 1);
	seal_cache->home = g_strdup(crypto_homedir);
	seal_cache->fpr = g_strdup(fpr);
	seal_cache->stamp = g_steal_pointer(&stamp);
	seal_cache->cert = cert;
	return VULNID_OK;
}

/* After an import by this process, the robot's public key still holds:
 * its file and memory take the new stamp. */
static void
seal_restamp(const char *before)
{
	g_autofree char *path = NULL, *text = NULL;
	const char *nl;
	gsize len;

	g_mutex_lock(&seal_lock);
	if (seal_cache != NULL && crypto_homedir != NULL && strcmp(seal_cache->stamp, before) == 0 &&
	    strcmp(seal_cache->home, crypto_homedir) == 0) {
		g_free(seal_cache->stamp);
		seal_cache->stamp = cr_keyring_stamp(crypto_homedir);
		path = seal_key_path(crypto_homedir);
		if (g_file_get_contents(path, &text, &len, NULL) && (nl = memchr(text, '\n', len)) != NULL) {
			g_autoptr(GBytes) key = g_bytes_new(nl + 1, len - (gsize) (nl + 1 - text));

			seal_key_write(crypto_homedir, seal_cache->fpr, seal_cache->stamp, key);
		}
	}
	g_mutex_unlock(&seal_lock);
}

/* clear sealed without gpg.  *by_gpg is set, and err left alone, when
 * gpg is to do it instead (a key of another kind, no key exported, no
 * libcrypto); the one failure that stops is the kernel's random source
 * (TEMP). */
static vulnid_status
seal_builtin(GBytes *clear, const char *robot_fpr, GBytes **sealed, gboolean *by_gpg, GError **err)
{
	g_autofree char *fpr = NULL;
	g_autoptr(openpgp_pubkey) key = NULL;
	g_autoptr(GError) why = NULL;
	char *armored = NULL;
	vulnid_status s;

	*by_gpg = TRUE;
	if (crypto_homedir == NULL || robot_fpr == NULL || strlen(robot_fpr) != 40 || !cr_is_fingerprint(robot_fpr))
		return VULNID_ERR_NOTFOUND;
	fpr = g_ascii_strup(robot_fpr, -1);
	g_mutex_lock(&seal_lock);
	if (seal_cert(fpr, &why) == VULNID_OK) {
		const openpgp_pubkey *k = openpgp_cert_encryption_key(seal_cache->cert,
								      g_get_real_time() / G_USEC_PER_SEC);

		if (k != NULL)
			key = openpgp_pubkey_copy(k);
	}
	g_mutex_unlock(&seal_lock);
	if (key == NULL)
		return VULNID_ERR_NOTFOUND;
	s = openpgp_encrypt(key, g_bytes_get_data(clear, NULL), g_bytes_get_size(clear), &armored, &why);
	if (s == VULNID_OK)
		*sealed = g_bytes_new_take(armored, strlen(armored));
	if (s == VULNID_OK || s == VULNID_ERR_TEMP) {
		*by_gpg = FALSE;
		if (why != NULL)
			g_propagate_error(err, g_steal_pointer(&why));
	}
	return s;
}

static vulnid_status seal_any(GBytes *clear, const char *robot_fpr, GBytes **sealed, GError **err);
static void unseal_remember(GBytes *sealed, GBytes *clear);

vulnid_status
crypto_seal(GBytes *clear, const char *robot_fpr, GBytes **sealed, GError **err)
{
	vulnid_status s = seal_any(clear, robot_fpr, sealed, err);

	if (s == VULNID_OK)
		unseal_remember(*sealed, clear);
	return s;
}

static vulnid_status
seal_any(GBytes *clear, const char *robot_fpr, GBytes **sealed, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_key_t keys[2] = { NULL, NULL };
	gpgme_data_t in, out;
	gpgme_error_t e;
	gboolean by_gpg = FALSE;
	vulnid_status s = seal_builtin(clear, robot_fpr, sealed, &by_gpg, err);

	if (!by_gpg)
		return s;
	/* a key of another kind: gpg encrypts, or says why it cannot */
	s = cr_ctx(crypto_homedir, &ctx, err);
	if (s != VULNID_OK)
		return s;
	e = gpgme_get_key(ctx, robot_fpr, &keys[0], 0);
	if (e != 0) {
		gpgme_release(ctx);
		return cr_gpg_fail(err, e, "no robot key");
	}
	gpgme_data_new_from_mem(&in, g_bytes_get_data(clear, NULL), g_bytes_get_size(clear), 0);
	gpgme_data_new(&out);
	e = gpgme_op_encrypt(ctx, keys, GPGME_ENCRYPT_ALWAYS_TRUST, in, out);
	gpgme_key_unref(keys[0]);
	gpgme_data_release(in);
	gpgme_release(ctx);
	if (e != 0) {
		gpgme_data_release(out);
		return cr_gpg_fail(err, e, "cannot encrypt");
	}
	*sealed = cr_data_to_bytes(out);
	return VULNID_OK;
}

/* What this process sealed last, by the SHA-256 of the sealed bytes:
 * the mail that seals an embargoed record reads it back at once (the
 * acknowledgement, the vendor's notice), and a gpg --decrypt of what was
 * clear a moment ago in this very process protects nothing.  In memory
 * only, the newest few. */
#define UNSEAL_KEEP 32
#define UNSEAL_KEEP_BYTES (16 * 1024 * 1024)
static GHashTable *unseal_keep;	/* sealed SHA-256 -> GBytes (clear); under seal_lock */
static GQueue unseal_order = G_QUEUE_INIT;	/* of the keys, oldest first */
static gsize unseal_bytes;

static void
unseal_remember(GBytes *sealed, GBytes *clear)
{
	char *key = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, sealed);

	g_mutex_lock(&seal_lock);
	if (unseal_keep == NULL)
		unseal_keep = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
						    (GDestroyNotify) g_bytes_unref);
	if (g_bytes_get_size(clear) <= UNSEAL_KEEP_BYTES && !g_hash_table_contains(unseal_keep, key)) {
		g_hash_table_insert(unseal_keep, key, g_bytes_ref(clear));
		g_queue_push_tail(&unseal_order, key);
		unseal_bytes += g_bytes_get_size(clear);
		key = NULL;
		while (unseal_order.length > UNSEAL_KEEP || unseal_bytes > UNSEAL_KEEP_BYTES) {
			char *old = g_queue_pop_head(&unseal_order);

			unseal_bytes -= g_bytes_get_size(g_hash_table_lookup(unseal_keep, old));
			g_hash_table_remove(unseal_keep, old);
		}
	}
	g_free(key);
	g_mutex_unlock(&seal_lock);
}

static GBytes *
unseal_recalled(GBytes *sealed)
{
	g_autofree char *key = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, sealed);
	GBytes *clear = NULL;

	g_mutex_lock(&seal_lock);
	if (unseal_keep != NULL && (clear = g_hash_table_lookup(unseal_keep, key)) != NULL)
		g_bytes_ref(clear);
	g_mutex_unlock(&seal_lock);
	return clear;
}

vulnid_status
crypto_unseal(GBytes *sealed, GBytes **clear, GError **err)
{
	static const char *const args[] = { "--decrypt", NULL };
	gpgrun_opts o = { .home = crypto_homedir, .args = args, .input_fd = -1, .input = sealed,
			  .out_fd = -1, .max_out = G_GINT64_CONSTANT(1) << 30, .timeout_ms = 120 * 1000 };
	g_autoptr(gpgrun_result) r = NULL;
	g_autoptr(GError) e = NULL;
	vulnid_status s;

	*clear = unseal_recalled(sealed);
	if (*clear != NULL)
		return VULNID_OK;
	s = gpgrun(&o, &r, err);
	if (s != VULNID_OK)
		return s;
	if (gpgrun_status(r, "DECRYPTION_OKAY") == NULL || gpgrun_status(r, "DECRYPTION_FAILED") != NULL) {
		/* the robot's key away (gpg-agent) is worth a retry; a broken
		 * sealed record is not */
		if (crypto_robot_key_check(&e) == VULNID_ERR_TEMP)
			return vulnid_fail(err, VULNID_ERR_TEMP, "cannot decrypt sealed content: %s", e->message);
		return vulnid_fail(err, r->timed_out ? VULNID_ERR_TEMP : VULNID_ERR_INVALID,
				   "cannot decrypt sealed content: %s",
				   r->timed_out ? "gpg took too long" : r->message != NULL ? r->message : "gpg failed");
	}
	*clear = g_byte_array_free_to_bytes(g_steal_pointer(&r->out));
	return VULNID_OK;
}
