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
#include "openpgp.h"

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
		else if (!cr_is_fingerprint(fpr))
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
	if (cr_ctx(crypto_homedir, &ctx, &e2) != VULNID_OK) {
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
