/* crypto-keys.c - the keys of the instance's keyring as gpg lists them,
 * remembered for the process and on disk
 *
 * A signed mail needs its signer's key: its addresses (is From one of
 * them?) and whether it can encrypt (the acknowledgement under embargo).
 * Each listing is a gpg process, more than the verification itself, and
 * vulnid-filter is a new process for every mail.  So a key listed once is
 * remembered in the keyring directory (vulnid-keys/FPR), stamped with the
 * keyring's files (cr_keyring_stamp()) and valid until the key's or a
 * subkey's expiry: any change of the keyring, by vulnid or by hand with
 * gpg, and the passing of an expiry, make the next use list it again.
 * gpg stays the authority: nothing here is read from the keyring's files
 * themselves. */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "gpgrun.h"
#include "openpgp-scan.h"

#include "crypto-private.h"

/* A listed key, with what decides how long the listing holds. */
typedef struct {
	crypto_key *key;
	GPtrArray *subkeys;	/* char*: subkey fingerprints */
	gint64 until;		/* the first expiry still ahead (0: none) */
	char *stamp;		/* the keyring when it was listed */
} listed_key;

static void
listed_key_free(listed_key *l)
{
	if (l == NULL)
		return;
	crypto_key_free(l->key);
	g_ptr_array_unref(l->subkeys);
	g_free(l->stamp);
	g_free(l);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(listed_key, listed_key_free)

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
key_new(const char *fpr)
{
	crypto_key *k = g_new0(crypto_key, 1);

	k->fpr = g_ascii_strup(fpr, -1);
	k->emails = g_ptr_array_new_with_free_func(g_free);
	k->uids = g_ptr_array_new_with_free_func(g_free);
	return k;
}

static crypto_key *
key_copy(const crypto_key *k)
{
	crypto_key *c = key_new(k->fpr);

	c->secret = k->secret;
	c->revoked = k->revoked;
	c->expired = k->expired;
	c->can_encrypt = k->can_encrypt;
	for (guint i = 0; i < k->emails->len; i++)
		g_ptr_array_add(c->emails, g_strdup(g_ptr_array_index(k->emails, i)));
	for (guint i = 0; i < k->uids->len; i++)
		g_ptr_array_add(c->uids, g_strdup(g_ptr_array_index(k->uids, i)));
	return c;
}

/* --- gpg's colon listing ------------------------------------------------------ */

char *
cr_colon_unescape(const char *field)
{
	GString *out = g_string_new(NULL);

	for (const char *p = field; *p != '\0'; p++) {
		if (p[0] == '\\' && p[1] == 'x' && g_ascii_isxdigit(p[2]) && g_ascii_isxdigit(p[3])) {
			g_string_append_c(out, (char) (g_ascii_xdigit_value(p[2]) * 16 + g_ascii_xdigit_value(p[3])));
			p += 3;
		} else
			g_string_append_c(out, *p);
	}
	return g_utf8_make_valid(out->str, (gssize) out->len);
}

/* One record of the listing into the key being read. */
static void
colon_record(GPtrArray *out, listed_key **cur, gboolean *want_fpr, char **f, guint n, gint64 now)
{
	if (strcmp(f[0], "pub") == 0 || strcmp(f[0], "sub") == 0) {
		gint64 expires = n > 6 ? g_ascii_strtoll(f[6], NULL, 10) : 0;

		if (strcmp(f[0], "pub") == 0) {
			*cur = g_new0(listed_key, 1);
			(*cur)->subkeys = g_ptr_array_new_with_free_func(g_free);
			(*cur)->key = key_new("");
			(*cur)->key->revoked = n > 1 && f[1][0] == 'r';
			(*cur)->key->expired = n > 1 && f[1][0] == 'e';
			(*cur)->key->can_encrypt = n > 11 && strchr(f[11], 'E') != NULL;
			g_ptr_array_add(out, *cur);
		}
		if (*cur != NULL && expires > now && ((*cur)->until == 0 || expires < (*cur)->until))
			(*cur)->until = expires;
		*want_fpr = *cur != NULL;
	} else if (strcmp(f[0], "fpr") == 0 && *want_fpr && n > 9) {
		if ((*cur)->key->fpr[0] == '\0') {
			g_free((*cur)->key->fpr);
			(*cur)->key->fpr = g_ascii_strup(f[9], -1);
		} else
			g_ptr_array_add((*cur)->subkeys, g_ascii_strup(f[9], -1));
		*want_fpr = FALSE;
	} else if (strcmp(f[0], "uid") == 0 && *cur != NULL && n > 9 && f[1][0] != 'r' && f[1][0] != 'i') {
		char *uid = cr_colon_unescape(f[9]);
		char *email = openpgp_uid_email(uid);

		g_ptr_array_add((*cur)->key->uids, uid);
		if (email != NULL)
			g_ptr_array_add((*cur)->key->emails, email);
	}
}

/* The keys gpg lists for pattern (NULL: all), one gpg process. */
static vulnid_status
list_colons(const char *home, const char *pattern, GPtrArray *out /* listed_key* */, GError **err)
{
	const char *args[] = { "--list-keys", "--with-colons", "--fixed-list-mode", "--with-fingerprint",
			       "--with-subkey-fingerprint", pattern != NULL ? "--" : NULL, pattern, NULL };
	gpgrun_opts o = { .home = home, .args = args, .input_fd = -1, .out_fd = -1,
			  .max_out = 256 * 1024 * 1024, .timeout_ms = 120 * 1000 };
	g_autoptr(gpgrun_result) r = NULL;
	g_autofree char *stamp = cr_keyring_stamp(home);
	g_auto(GStrv) lines = NULL;
	listed_key *cur = NULL;
	gboolean want_fpr = FALSE;
	gint64 now = g_get_real_time() / G_USEC_PER_SEC;
	vulnid_status s = gpgrun(&o, &r, err);

	if (s != VULNID_OK)
		return s;
	if (r->timed_out || r->too_big)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot list the keys of '%s'", home);
	g_byte_array_append(r->out, (const guint8 *) "", 1);
	lines = g_strsplit((const char *) r->out->data, "\n", -1);
	for (char **l = lines; *l != NULL; l++) {
		g_auto(GStrv) f = g_strsplit(*l, ":", -1);

		if (f[0] != NULL)
			colon_record(out, &cur, &want_fpr, f, g_strv_length(f), now);
	}
	for (guint i = 0; i < out->len; i++)
		((listed_key *) g_ptr_array_index(out, i))->stamp = g_strdup(stamp);
	/* gpg exits 2 when nothing matched: an empty list all the same */
	return VULNID_OK;
}

/* --- remembered ------------------------------------------------------------------ */

static GMutex cache_lock;
static GHashTable *cache;	/* asked fpr (upper) -> listed_key */

void
cr_key_cache_clear(void)
{
	g_mutex_lock(&cache_lock);
	g_clear_pointer(&cache, g_hash_table_unref);
	g_mutex_unlock(&cache_lock);
}

static gboolean
listed_holds(const listed_key *l, const char *stamp)
{
	return strcmp(l->stamp, stamp) == 0 && (l->until == 0 || g_get_real_time() / G_USEC_PER_SEC < l->until);
}

static char *
disk_path(const char *fpr)
{
	g_autofree char *up = g_ascii_strup(fpr, -1);

	return g_build_filename(crypto_homedir, "vulnid-keys", up, NULL);
}

static void
disk_write(const char *asked, const listed_key *l)
{
	g_autofree char *path = disk_path(asked);
	g_autofree char *dir = g_path_get_dirname(path);
	GString *t = g_string_new(NULL);
	const crypto_key *k = l->key;

	g_string_append_printf(t, "stamp %s\nuntil %" G_GINT64_FORMAT "\nfpr %s\nflags %d %d %d\n", l->stamp,
			       l->until, k->fpr, k->revoked, k->expired, k->can_encrypt);
	for (guint i = 0; i < l->subkeys->len; i++)
		g_string_append_printf(t, "sub %s\n", (const char *) g_ptr_array_index(l->subkeys, i));
	for (guint i = 0; i < k->uids->len; i++) {
		g_autofree char *e = g_strescape(g_ptr_array_index(k->uids, i), NULL);

		g_string_append_printf(t, "uid %s\n", e);
	}
	/* only a cache: a failure costs a listing next time */
	if (g_mkdir_with_parents(dir, 0700) == 0)
		g_file_set_contents_full(path, t->str, (gssize) t->len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
	g_string_free(t, TRUE);
}

static listed_key *
disk_read(const char *asked, const char *stamp)
{
	g_autofree char *path = disk_path(asked);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(listed_key) l = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL) || strlen(text) > 1024 * 1024)
		return NULL;
	lines = g_strsplit(text, "\n", -1);
	l = g_new0(listed_key, 1);
	l->subkeys = g_ptr_array_new_with_free_func(g_free);
	for (char **p = lines; *p != NULL; p++) {
		char *v = strchr(*p, ' ');

		if (v == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(*p, "stamp") == 0)
			l->stamp = g_strdup(v);
		else if (strcmp(*p, "until") == 0)
			l->until = g_ascii_strtoll(v, NULL, 10);
		else if (strcmp(*p, "fpr") == 0 && l->key == NULL && cr_is_fingerprint(v))
			l->key = key_new(v);
		else if (strcmp(*p, "flags") == 0 && l->key != NULL)
			sscanf(v, "%d %d %d", &l->key->revoked, &l->key->expired, &l->key->can_encrypt);
		else if (strcmp(*p, "sub") == 0)
			g_ptr_array_add(l->subkeys, g_strdup(v));
		else if (strcmp(*p, "uid") == 0 && l->key != NULL) {
			char *uid = g_strcompress(v);
			char *email = openpgp_uid_email(uid);

			g_ptr_array_add(l->key->uids, uid);
			if (email != NULL)
				g_ptr_array_add(l->key->emails, email);
		}
	}
	if (l->key == NULL || l->stamp == NULL || !listed_holds(l, stamp))
		return NULL;
	return g_steal_pointer(&l);
}

/* The key that has fpr as its primary or subkey fingerprint: remembered
 * by this process, or on disk, or listed (and remembered). */
static vulnid_status
key_lookup(const char *fpr, crypto_key **out, gboolean *is_primary, GError **err)
{
	g_autofree char *up = g_ascii_strup(fpr, -1);
	g_autofree char *stamp = cr_keyring_stamp(crypto_homedir);
	g_autoptr(GPtrArray) keys = NULL;
	listed_key *l;
	vulnid_status s;

	g_mutex_lock(&cache_lock);
	if (cache == NULL)
		cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) listed_key_free);
	l = g_hash_table_lookup(cache, up);
	if (l == NULL || !listed_holds(l, stamp)) {
		l = disk_read(up, stamp);
		if (l != NULL)
			g_hash_table_replace(cache, g_strdup(up), l);
	}
	if (l != NULL) {
		*out = key_copy(l->key);
		*is_primary = g_ascii_strcasecmp(l->key->fpr, up) == 0;
		g_mutex_unlock(&cache_lock);
		return VULNID_OK;
	}
	g_mutex_unlock(&cache_lock);
	keys = g_ptr_array_new_with_free_func((GDestroyNotify) listed_key_free);
	s = list_colons(crypto_homedir, up, keys, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < keys->len; i++) {
		listed_key *k = g_ptr_array_index(keys, i);
		gboolean primary = strcmp(k->key->fpr, up) == 0;

		if (!primary && !g_ptr_array_find_with_equal_func(k->subkeys, up, g_str_equal, NULL))
			continue;
		disk_write(up, k);
		*out = key_copy(k->key);
		*is_primary = primary;
		g_mutex_lock(&cache_lock);
		if (cache != NULL)
			g_hash_table_replace(cache, g_strdup(up), g_ptr_array_steal_index(keys, i));
		else
			listed_key_free(g_ptr_array_steal_index(keys, i));
		g_mutex_unlock(&cache_lock);
		return VULNID_OK;
	}
	return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
}

vulnid_status
crypto_primary_fpr(const char *fpr, char **primary, GError **err)
{
	g_autoptr(crypto_key) k = NULL;
	gboolean is_primary;
	vulnid_status s;

	*primary = NULL;
	if (fpr == NULL || !cr_is_fingerprint(fpr))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a fingerprint");
	s = key_lookup(fpr, &k, &is_primary, err);
	if (s == VULNID_OK)
		*primary = g_strdup(k->fpr);
	return s;
}

vulnid_status
crypto_get_key(const char *fpr, crypto_key **out, GError **err)
{
	g_autoptr(crypto_key) k = NULL;
	gboolean is_primary;
	vulnid_status s;

	if (fpr == NULL || !cr_is_fingerprint(fpr))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a fingerprint");
	s = key_lookup(fpr, &k, &is_primary, err);
	if (s != VULNID_OK)
		return s;
	if (!is_primary)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no key %s", fpr);
	*out = g_steal_pointer(&k);
	return VULNID_OK;
}

vulnid_status
crypto_list_keys(GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func((GDestroyNotify) listed_key_free);
	vulnid_status s = list_colons(crypto_homedir, NULL, keys, err);

	if (s != VULNID_OK)
		return s;
	*out = g_ptr_array_new_with_free_func((GDestroyNotify) crypto_key_free);
	for (guint i = 0; i < keys->len; i++)
		g_ptr_array_add(*out, key_copy(((listed_key *) g_ptr_array_index(keys, i))->key));
	return VULNID_OK;
}
