/* crypto-certify.c - whether a key carries a certification by one of some
 * keys, as gpg checks it: an endorsement by certification
 *
 * The one key wanted is cut out of the key block sent with the mail
 * (openpgp-scan.h, as trust on first use does), put into a scratch keyring
 * with the candidates' public keys from the robot's keyring and nothing
 * else, and gpg checks every signature on its user IDs there (--check-sigs,
 * colon output).  A certification counts by the key that made it, never
 * by what a user ID says: by its issuer's fingerprint where the signature
 * names it, else by a key ID that no other key there shares.  Three gpg
 * processes, through gpgrun (bounded, no agent: no-autostart). */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "gpgrun.h"
#include "openpgp-scan.h"

#include "crypto-private.h"

/* A scratch keyring in which gpg starts no agent (nothing secret is used). */
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

/* Remove it: without an agent, its files are all there is. */
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

/* The packets of key subject in data, within the maxima trust on first
 * use keeps; NULL when data does not hold it as a public primary key. */
static GBytes *
subject_packets(GBytes *data, const char *subject)
{
	g_autoptr(GBytes) bin = openpgp_binary(g_bytes_get_data(data, NULL), g_bytes_get_size(data),
					       g_bytes_get_size(data));
	g_autoptr(GPtrArray) keys = NULL;
	const openpgp_block_key *k;
	openpgp_scan sc;

	if (bin == NULL || !openpgp_scan_data(g_bytes_get_data(bin, NULL), g_bytes_get_size(bin),
					      CRYPTO_MAX_KEY_PACKETS + 1, &sc) || sc.malformed || sc.too_many)
		return NULL;
	keys = openpgp_block_keys(bin, CRYPTO_MAX_KEYS);
	k = keys != NULL ? openpgp_block_find(keys, subject) : NULL;
	if (k == NULL || k->secret || g_ascii_strcasecmp(k->fpr, subject) != 0 ||
	    k->subkeys->len > CRYPTO_MAX_SUBKEYS || k->uids->len > CRYPTO_MAX_UIDS)
		return NULL;
	return g_bytes_ref(k->packets);
}

/* The candidates that may certify (in the robot's keyring, neither revoked
 * nor expired, version 4) and their public keys, in one gpg process. */
static vulnid_status
candidates_export(const char *const *candidates, const char *subject, gint64 timeout_ms, GPtrArray *present,
		  GBytes **out, GError **err)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_autoptr(gpgrun_result) r = NULL;
	gpgrun_opts o = { .home = crypto_homedir, .input_fd = -1, .out_fd = -1, .max_out = 4 * 1024 * 1024,
			  .timeout_ms = timeout_ms };
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
	g_ptr_array_add(args, (gpointer) "--export");
	g_ptr_array_add(args, (gpointer) "--");
	for (guint i = 0; i < present->len; i++)
		g_ptr_array_add(args, g_ptr_array_index(present, i));
	g_ptr_array_add(args, NULL);
	o.args = (const char *const *) args->pdata;
	s = gpgrun(&o, &r, err);
	if (s != VULNID_OK)
		return s;
	if (r->timed_out || r->too_big || r->out == NULL || r->out->len == 0)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot export the keys that may certify");
	*out = g_bytes_new(r->out->data, r->out->len);
	return VULNID_OK;
}

/* What a certification check found: per candidate, the latest
 * certification and the latest revocation of one (Unix times, -1: none). */
typedef struct {
	const char *fpr;
	long cert, rev;
} certifier;

/* Whether a signature line's issuer is candidate c: by the fingerprint
 * it names, else by its key ID when no other key of the listing has it. */
static gboolean
issued_by(const char *keyid, const char *issuer_fpr, const certifier *c, guint keyid_count)
{
	if (issuer_fpr != NULL && *issuer_fpr != '\0')
		return g_ascii_strcasecmp(issuer_fpr, c->fpr) == 0;
	return keyid != NULL && strlen(keyid) == 16 && g_ascii_strcasecmp(c->fpr + 24, keyid) == 0 &&
	       keyid_count == 1;
}

/* Key IDs of every key and subkey of the listing, counted. */
static GHashTable *
keyids_of(char **lines)
{
	GHashTable *ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (char **l = lines; *l != NULL; l++) {
		g_auto(GStrv) f = g_strsplit(*l, ":", 6);

		if (g_strv_length(f) > 4 && (strcmp(f[0], "pub") == 0 || strcmp(f[0], "sub") == 0)) {
			char *id = g_ascii_strup(f[4], -1);

			g_hash_table_insert(ids, id, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(ids, id)) + 1));
		}
	}
	return ids;
}

/* Read gpg --check-sigs for subject: the signatures gpg found good ("!")
 * on a valid user ID of the subject key, by the candidates. */
static void
read_checked(char **lines, const char *subject, certifier *cs, guint n)
{
	g_autoptr(GHashTable) ids = keyids_of(lines);
	gboolean in_subject = FALSE, want_fpr = FALSE, uid_ok = FALSE;
	gint64 now = g_get_real_time() / G_USEC_PER_SEC;

	for (char **l = lines; *l != NULL; l++) {
		g_auto(GStrv) f = g_strsplit(*l, ":", -1);
		guint nf = g_strv_length(f);

		if (nf == 0)
			continue;
		if (strcmp(f[0], "pub") == 0) {
			in_subject = FALSE;
			want_fpr = TRUE;
		} else if (strcmp(f[0], "fpr") == 0 && want_fpr && nf > 9) {
			in_subject = g_ascii_strcasecmp(f[9], subject) == 0;
			want_fpr = FALSE;
		} else if (strcmp(f[0], "sub") == 0) {
			uid_ok = FALSE;	/* subkey bindings follow, no certifications */
		} else if (strcmp(f[0], "uid") == 0 && nf > 1) {
			uid_ok = in_subject && f[1][0] != 'r' && f[1][0] != 'i';
		} else if ((strcmp(f[0], "sig") == 0 || strcmp(f[0], "rev") == 0) && uid_ok && nf > 10) {
			/* sig:!::ALGO:KEYID:CREATED:EXPIRES:::UID:CLASS::ISSUER-FPR,
			 * CLASS two hex digits, x (exportable) or l, for a
			 * revocation ",REASON" after them */
			const char *cls = f[10];
			gboolean sized = strlen(cls) >= 3;
			gboolean certification = sized && cls[0] == '1' && strchr("0123", cls[1]) != NULL;
			gboolean revocation = sized && cls[0] == '3' && cls[1] == '0';
			long created = (long) g_ascii_strtoll(f[5], NULL, 10);
			gint64 expires = g_ascii_strtoll(f[6], NULL, 10);
			g_autofree char *keyid = g_ascii_strup(f[4], -1);
			guint count = GPOINTER_TO_UINT(g_hash_table_lookup(ids, keyid));

			/* '!' is a signature gpg checked and found good; 'x'
			 * marks an exportable one (a local one never came here) */
			if (f[1][0] != '!' || (!certification && !revocation) || cls[2] != 'x' ||
			    (expires > 0 && expires <= now))
				continue;
			for (guint i = 0; i < n; i++) {
				if (!issued_by(keyid, nf > 12 ? f[12] : NULL, &cs[i], count))
					continue;
				if (certification && created > cs[i].cert)
					cs[i].cert = created;
				else if (revocation && created > cs[i].rev)
					cs[i].rev = created;
			}
		}
	}
}

vulnid_status
crypto_certified_by(GBytes *data, const char *subject, const char *const *candidates, gint64 timeout_ms,
		    char **certifier_out, GError **err)
{
	static const char *const import_args[] = { "--import", NULL };
	g_autofree char *scratch = NULL;
	g_autofree char *key = NULL;
	g_autoptr(GPtrArray) present = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GBytes) alone = NULL;
	g_autoptr(GBytes) pub = NULL;
	g_autoptr(GByteArray) both = NULL;
	g_autoptr(GBytes) input = NULL;
	g_autoptr(gpgrun_result) ri = NULL;
	g_autoptr(gpgrun_result) rl = NULL;
	g_auto(GStrv) lines = NULL;
	g_autofree certifier *cs = NULL;
	const char *list_args[] = { "--with-colons", "--fixed-list-mode", "--with-fingerprint", "--check-sigs",
				    "--", NULL, NULL };
	gpgrun_opts oi = { .args = import_args, .input_fd = -1, .out_fd = -1, .timeout_ms = timeout_ms };
	gpgrun_opts ol = { .args = list_args, .input_fd = -1, .out_fd = -1, .max_out = 4 * 1024 * 1024,
			   .timeout_ms = timeout_ms };
	vulnid_status s;

	*certifier_out = NULL;
	if (data == NULL || subject == NULL || candidates == NULL || crypto_homedir == NULL ||
	    !cr_is_fingerprint(subject) || strlen(subject) != 40)
		return VULNID_OK;
	alone = subject_packets(data, subject);
	if (alone == NULL)
		return VULNID_OK;	/* the key sent is not the signer's, or not one gpg would take */
	s = candidates_export(candidates, subject, timeout_ms, present, &pub, err);
	if (s != VULNID_OK || pub == NULL)
		return s;
	both = g_byte_array_new();
	g_byte_array_append(both, g_bytes_get_data(alone, NULL), (guint) g_bytes_get_size(alone));
	g_byte_array_append(both, g_bytes_get_data(pub, NULL), (guint) g_bytes_get_size(pub));
	input = g_byte_array_free_to_bytes(g_steal_pointer(&both));
	scratch = scratch_new(err);
	if (scratch == NULL)
		return VULNID_ERR_IO;
	key = g_ascii_strup(subject, -1);
	list_args[5] = key;
	oi.home = ol.home = scratch;
	oi.input = input;
	s = gpgrun(&oi, &ri, err);
	if (s == VULNID_OK && ri->timed_out)
		s = vulnid_fail(err, VULNID_ERR_TIMEOUT, "importing the keys to check a certification took too long");
	if (s == VULNID_OK)
		s = gpgrun(&ol, &rl, err);
	if (s == VULNID_OK && (rl->timed_out || rl->too_big))
		s = vulnid_fail(err, VULNID_ERR_TIMEOUT, "checking a certification took too long");
	scratch_remove(scratch);
	if (s != VULNID_OK)
		return s;
	cs = g_new0(certifier, present->len);
	for (guint i = 0; i < present->len; i++) {
		cs[i].fpr = g_ptr_array_index(present, i);
		cs[i].cert = cs[i].rev = -1;
	}
	g_byte_array_append(rl->out, (const guint8 *) "", 1);
	lines = g_strsplit((const char *) rl->out->data, "\n", -1);
	read_checked(lines, key, cs, present->len);
	for (guint i = 0; i < present->len && *certifier_out == NULL; i++)
		if (cs[i].cert >= 0 && cs[i].cert > cs[i].rev)
			*certifier_out = g_strdup(cs[i].fpr);
	return VULNID_OK;
}
