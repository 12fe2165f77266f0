/* crypto-verify.c - judging and checking signatures (PGP/MIME, detached, with a given key) */
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

gboolean
cr_is_fingerprint(const char *f)
{
	gsize n = f != NULL ? strlen(f) : 0;

	if (n != 40 && n != 64)
		return FALSE;
	for (gsize i = 0; i < n; i++)
		if (!g_ascii_isxdigit(f[i]))
			return FALSE;
	return TRUE;
}

/* --- gpg's verdict ------------------------------------------------------------ */

/* One signature as gpg's status lines describe it, from NEWSIG to the
 * next (doc/DETAILS of GnuPG). */
typedef struct {
	const char *why;	/* not good: why */
	gboolean good, key_missing;
	char *fpr;		/* primary key (VALIDSIG), else the issuer */
	gint64 created;
} sig_verdict;

static char *
status_field(const char *args, guint n)
{
	g_auto(GStrv) f = g_strsplit(args, " ", -1);

	return n < g_strv_length(f) ? g_strdup(f[n]) : NULL;
}

/* The lines of one signature: GOODSIG, EXPSIG, EXPKEYSIG, REVKEYSIG,
 * BADSIG, ERRSIG (rc 9: no public key) and VALIDSIG. */
static void
verdict_line(sig_verdict *v, const char *line)
{
	const char *args = strchr(line, ' ') != NULL ? strchr(line, ' ') + 1 : "";

	if (g_str_has_prefix(line, "BADSIG "))
		v->why = "the signature is bad: the signed text was changed after signing";
	else if (g_str_has_prefix(line, "REVKEYSIG ") && v->why == NULL)
		v->why = "the signing key is revoked";
	else if (g_str_has_prefix(line, "EXPKEYSIG ") && v->why == NULL)
		v->why = "the signing key has expired";
	else if (g_str_has_prefix(line, "EXPSIG ") && v->why == NULL)
		v->why = "the signature has expired";
	else if (g_str_has_prefix(line, "GOODSIG "))
		v->good = TRUE;
	else if (g_str_has_prefix(line, "ERRSIG ")) {
		/* keyid pkalgo hashalgo class time rc [fpr] */
		g_autofree char *rc = status_field(args, 5);
		g_autofree char *fpr = status_field(args, 6);
		g_autofree char *keyid = status_field(args, 0);

		if (g_strcmp0(rc, "9") == 0) {
			v->key_missing = TRUE;
			v->why = "the signing key is not known to this robot (send it as an application/pgp-keys "
				 "attachment of a request signed with it)";
		} else if (v->why == NULL)
			v->why = "the signature could not be checked";
		g_free(v->fpr);
		v->fpr = fpr != NULL && cr_is_fingerprint(fpr) ? g_ascii_strup(fpr, -1)
		       : keyid != NULL ? g_ascii_strup(keyid, -1) : NULL;
	} else if (g_str_has_prefix(line, "VALIDSIG ")) {
		/* fpr date timestamp expires version reserved pkalgo hashalgo
		 * class primary-fpr */
		g_autofree char *signing = status_field(args, 0);
		g_autofree char *ts = status_field(args, 2);
		g_autofree char *primary = status_field(args, 9);
		const char *fpr = primary != NULL && cr_is_fingerprint(primary) ? primary : signing;

		g_free(v->fpr);
		v->fpr = fpr != NULL && cr_is_fingerprint(fpr) ? g_ascii_strup(fpr, -1) : NULL;
		if (ts != NULL && strchr(ts, 'T') == NULL)
			v->created = g_ascii_strtoll(ts, NULL, 10);
	}
}

/* The verdict of a run's status lines on the signatures it checked. */
static void
judge_status(crypto_signature *out, const gpgrun_result *r)
{
	g_autoptr(GArray) sigs = g_array_new(FALSE, TRUE, sizeof(sig_verdict));
	sig_verdict *v = NULL;

	out->valid = FALSE;
	out->key_missing = FALSE;
	g_clear_pointer(&out->reason, g_free);
	g_clear_pointer(&out->fpr, g_free);
	for (guint i = 0; i < r->status->len; i++) {
		const char *line = g_ptr_array_index(r->status, i);

		if (strcmp(line, "NEWSIG") == 0 || g_str_has_prefix(line, "NEWSIG ")) {
			g_array_set_size(sigs, sigs->len + 1);
			v = &g_array_index(sigs, sig_verdict, sigs->len - 1);
			continue;
		}
		if (v != NULL)
			verdict_line(v, line);
	}
	if (sigs->len == 0) {
		if (out->present)
			out->reason = g_strdup("the signature could not be read");
		return;
	}
	out->present = TRUE;
	for (guint i = 0; i < sigs->len; i++) {
		sig_verdict *s = &g_array_index(sigs, sig_verdict, i);
		const char *why = s->why;

		if (why == NULL && (!s->good || s->fpr == NULL || !cr_is_fingerprint(s->fpr)))
			why = "the signature could not be checked";
		out->key_missing |= s->key_missing;
		if (out->fpr == NULL && s->fpr != NULL)
			out->fpr = g_strdup(s->fpr);
		if (why != NULL && out->reason == NULL)
			out->reason = g_strdup(why);
		if (why == NULL && out->reason == NULL && g_ascii_strcasecmp(out->fpr, s->fpr) != 0)
			out->reason = g_strdup("the mail carries signatures by more than one key");
		if (i == 0)
			out->created = s->created;
	}
	out->valid = out->reason == NULL;
	for (guint i = 0; i < sigs->len; i++)
		g_free(g_array_index(sigs, sig_verdict, i).fpr);
}

/* The status of a run that ended without a verdict. */
static vulnid_status
run_failed(const gpgrun_result *r, gint64 timeout_ms, GError **err)
{
	if (r->timed_out)
		return vulnid_fail(err, VULNID_ERR_TIMEOUT, "gpg took longer than %" G_GINT64_FORMAT
				   " s and was stopped", timeout_ms / 1000);
	if (r->too_big)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "gpg gave more than allowed and was stopped");
	if (r->too_many_signatures)
		return vulnid_fail(err, VULNID_ERR_INVALID, "it holds more than %d signatures",
				   CRYPTO_MAX_SIGNATURES);
	return VULNID_OK;
}

/* --- what gpg is given ---------------------------------------------------------- */

gboolean
crypto_signature_sane(GBytes *signature, char **why)
{
	openpgp_scan sc;
	gsize len;
	const void *p = g_bytes_get_data(signature, &len);

	*why = NULL;
	if (!openpgp_scan_data(p, len, CRYPTO_MAX_SIGNATURES + 1, &sc) || sc.malformed)
		*why = g_strdup("the signature is not OpenPGP data");
	else if (sc.too_many || sc.tags[OPENPGP_TAG_SIGNATURE] > CRYPTO_MAX_SIGNATURES)
		*why = g_strdup_printf("the signature holds more than %d signatures", CRYPTO_MAX_SIGNATURES);
	else if (sc.tags[OPENPGP_TAG_SIGNATURE] == 0 ||
		 sc.tags[OPENPGP_TAG_SIGNATURE] + sc.tags[OPENPGP_TAG_MARKER] != sc.packets)
		*why = g_strdup("the signature holds something other than signatures");
	return *why == NULL;
}

gboolean
crypto_ciphertext_sane(const void *data, gsize len, char **why)
{
	/* the session keys come first: the head of the data is enough */
	g_autoptr(GBytes) head = openpgp_binary(data, len, 256 * 1024);
	openpgp_scan sc;

	*why = NULL;
	if (head == NULL || !openpgp_scan_encrypted(g_bytes_get_data(head, NULL), g_bytes_get_size(head),
						    CRYPTO_MAX_RECIPIENTS, &sc))
		*why = g_strdup("the encrypted part is not OpenPGP data");
	else if (sc.too_many)
		*why = g_strdup_printf("the mail is encrypted to more than %d keys", CRYPTO_MAX_RECIPIENTS);
	else if (sc.tags[OPENPGP_TAG_SKESK] > 0)
		*why = g_strdup("the mail is encrypted with a passphrase; encrypt it to the robot's key");
	else if (sc.tags[OPENPGP_TAG_SED] > 0)
		*why = g_strdup("the mail is encrypted without integrity protection");
	else if (sc.tags[OPENPGP_TAG_PKESK] == 0 ||
		 sc.tags[OPENPGP_TAG_SEIPD] + sc.tags[OPENPGP_TAG_AEAD] != 1)
		*why = g_strdup("the encrypted part is not an encrypted OpenPGP message");
	return *why == NULL;
}

/* --- verifying and decrypting ----------------------------------------------------- */

static const char *const verify_args[] = { "--verify", "--", "-&4", "-", NULL };

vulnid_status
crypto_verify_fd(int data_fd, GBytes *signature, gint64 timeout_ms, crypto_signature *out, GError **err)
{
	gpgrun_opts o = { .home = crypto_homedir, .args = verify_args, .input_fd = data_fd,
			  .fd4 = signature, .out_fd = -1, .timeout_ms = timeout_ms,
			  .max_signatures = CRYPTO_MAX_SIGNATURES };
	g_autoptr(gpgrun_result) r = NULL;
	vulnid_status s = gpgrun(&o, &r, err);

	if (s == VULNID_OK)
		s = run_failed(r, timeout_ms, err);
	if (s != VULNID_OK)
		return s;
	out->present = TRUE;
	judge_status(out, r);
	return VULNID_OK;
}

vulnid_status
crypto_verify_cleartext(GBytes *block, gint64 timeout_ms, gint64 max_text, GBytes **text,
			crypto_signature *out, GError **err)
{
	static const char *const decrypt_args[] = { "--decrypt", NULL };
	static const char *const verify_only[] = { "--verify", NULL };
	gpgrun_opts o = { .home = crypto_homedir, .args = text != NULL ? decrypt_args : verify_only,
			  .input_fd = -1, .input = block, .out_fd = -1,
			  .max_out = text != NULL ? max_text : 0, .timeout_ms = timeout_ms,
			  .max_signatures = CRYPTO_MAX_SIGNATURES };
	g_autoptr(gpgrun_result) r = NULL;
	vulnid_status s = gpgrun(&o, &r, err);

	if (s == VULNID_OK)
		s = run_failed(r, timeout_ms, err);
	if (s != VULNID_OK)
		return s;
	out->present = TRUE;
	judge_status(out, r);
	if (text != NULL)
		*text = g_byte_array_free_to_bytes(g_steal_pointer(&r->out));
	return VULNID_OK;
}

/* Why a decryption failed, from the status lines and gpg's message; TEMP
 * when the robot's key could not be used now (gpg-agent away). */
static vulnid_status
decrypt_failed(const gpgrun_result *r, GError **err)
{
	const char *why = r->message != NULL ? r->message : "gpg failed";
	g_autoptr(GError) e = NULL;

	if (gpgrun_status(r, "NO_SECKEY") != NULL && gpgrun_status(r, "BEGIN_DECRYPTION") == NULL)
		why = "it is not encrypted to this robot's key";
	if (gpgrun_status(r, "DECRYPTION_FAILED") != NULL && crypto_robot_key_check(&e) == VULNID_ERR_TEMP)
		return vulnid_fail(err, VULNID_ERR_TEMP, "the robot's key cannot be used now: %s", e->message);
	return vulnid_fail(err, VULNID_ERR_INVALID, "%s", why);
}

vulnid_status
crypto_decrypt_fd(int in_fd, int out_fd, gint64 max_out, gint64 timeout_ms, crypto_signature *sig,
		  char **session_sha256, GError **err)
{
	static const char *const args[] = { "--decrypt", "--show-session-key", NULL };
	gpgrun_opts o = { .home = crypto_homedir, .args = args, .input_fd = in_fd, .out_fd = out_fd,
			  .max_out = max_out, .timeout_ms = timeout_ms, .max_signatures = CRYPTO_MAX_SIGNATURES };
	g_autoptr(gpgrun_result) r = NULL;
	vulnid_status s = gpgrun(&o, &r, err);
	const char *sk;

	*session_sha256 = NULL;
	if (s == VULNID_OK)
		s = run_failed(r, timeout_ms, err);
	if (s != VULNID_OK)
		return s;
	/* not gpg's exit status: it is 2 also for a good decryption whose
	 * signature could not be checked */
	if (gpgrun_status(r, "DECRYPTION_OKAY") == NULL || gpgrun_status(r, "DECRYPTION_FAILED") != NULL)
		return decrypt_failed(r, err);
	sk = gpgrun_status(r, "SESSION_KEY");
	if (sk != NULL && *sk != '\0')
		*session_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, sk, -1);
	judge_status(sig, r);
	return VULNID_OK;
}

static vulnid_status
verify_in(const char *home, GBytes *data, GBytes *signature, char **fpr, GError **err)
{
	gpgme_ctx_t ctx;
	gpgme_data_t d, sig;
	gpgme_verify_result_t r;
	gpgme_error_t e;
	vulnid_status s = cr_ctx(home, &ctx, err);

	if (s != VULNID_OK)
		return s;
	gpgme_data_new_from_mem(&d, g_bytes_get_data(data, NULL), g_bytes_get_size(data), 0);
	gpgme_data_new_from_mem(&sig, g_bytes_get_data(signature, NULL), g_bytes_get_size(signature), 0);
	e = gpgme_op_verify(ctx, sig, d, NULL);
	gpgme_data_release(d);
	gpgme_data_release(sig);
	if (e != 0) {
		gpgme_release(ctx);
		return cr_gpg_fail(err, e, "cannot verify");
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
	g_autofree char *scratch = cr_scratch_home(err);
	vulnid_status s;

	if (scratch == NULL)
		return VULNID_ERR_IO;
	s = cr_import_into(scratch, key, NULL, err);
	if (s == VULNID_OK)
		s = verify_in(scratch, data, signature, fpr, err);
	cr_scratch_remove(scratch);
	return s;
}

vulnid_status
crypto_verify_detached(const char *home, GBytes *data, GBytes *sig, char **fpr, GError **err)
{
	return verify_in(home != NULL ? home : crypto_homedir, data, sig, fpr, err);
}
