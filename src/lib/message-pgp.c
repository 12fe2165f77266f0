/* message-pgp.c - OpenPGP at the top of a mail: decrypt, verify, and
 * the digest of the signed content */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header.h"
#include "message.h"
#include "message-private.h"
#include "text.h"

/* --- OpenPGP at the top ---------------------------------------------------- */

static GBytes *
part_bytes(GMimeObject *o)
{
	GMimeDataWrapper *w = GMIME_IS_PART(o) ? g_mime_part_get_content(GMIME_PART(o)) : NULL;
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *b;

	if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
		return g_bytes_new(NULL, 0);
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	return g_bytes_new(b->data, b->len);
}

static void
set_raw_signature(message *m, GBytes *raw)
{
	if (m->sig->raw != NULL)
		g_bytes_unref(m->sig->raw);
	m->sig->raw = raw;
	g_free(m->sig->raw_sha256);
	m->sig->raw_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, raw);
}

/* Whether text is one armored block of the given kind and nothing else. */
static gboolean
whole_armor(GBytes *text, const char *begin, const char *end)
{
	gsize n;
	const char *p = g_bytes_get_data(text, &n);
	g_autofree char *t = NULL;

	if (p == NULL || n == 0 || memchr(p, '\0', n) != NULL)
		return FALSE;
	t = g_strstrip(g_strndup(p, n));
	return g_str_has_prefix(t, begin) && g_str_has_suffix(t, end);
}

static void
verify_signed(message *m)
{
	g_autoptr(GError) e = NULL;
	GMimeSignatureList *sigs = NULL;

	if (GMIME_IS_MULTIPART_SIGNED(m->signed_object))
		sigs = crypto_verify_multipart_signed(GMIME_MULTIPART_SIGNED(m->signed_object), &e);
	else if (GMIME_IS_PART(m->signed_object))
		sigs = g_mime_part_openpgp_verify(GMIME_PART(m->signed_object), GMIME_VERIFY_NONE, &e);
	m->sig->present = TRUE;
	if (sigs == NULL) {
		g_free(m->sig->reason);
		m->sig->reason = g_strdup_printf("the signature could not be checked (%s)",
						 e != NULL ? e->message : "no signature found");
		m->sig->valid = FALSE;
		return;
	}
	crypto_judge(m->sig, sigs);
	g_object_unref(sigs);
}

static void
restore_content(GMimeObject *part, GBytes *raw)
{
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GMimeDataWrapper *w;

	g_mime_stream_write(mem, g_bytes_get_data(raw, NULL), g_bytes_get_size(raw));
	g_mime_stream_reset(mem);
	w = g_mime_data_wrapper_new_with_stream(mem, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(GMIME_PART(part), w);
	g_object_unref(w);
}

gboolean
message_can_reverify(const message *m)
{
	return m->signed_object != NULL || m->sealed_object != NULL;
}

void
message_reverify(message *m)
{
	if (m->sealed_object != NULL) {
		/* signed inside the encryption: decrypt and verify again */
		g_autoptr(GError) e = NULL;
		GMimeDecryptResult *res = NULL;
		GMimeObject *clear = NULL;

		g_clear_pointer(&m->sig->fpr, g_free);
		if (GMIME_IS_MULTIPART_ENCRYPTED(m->sealed_object)) {
			clear = g_mime_multipart_encrypted_decrypt(GMIME_MULTIPART_ENCRYPTED(m->sealed_object),
								   GMIME_DECRYPT_NONE, NULL, &res, &e);
			g_clear_object(&clear);
		} else if (GMIME_IS_PART(m->sealed_object) && m->sig->raw != NULL) {
			restore_content(m->sealed_object, m->sig->raw);
			res = g_mime_part_openpgp_decrypt(GMIME_PART(m->sealed_object), GMIME_DECRYPT_NONE,
							  NULL, &e);
		}
		if (res != NULL) {
			crypto_judge(m->sig, g_mime_decrypt_result_get_signatures(res));
			g_object_unref(res);
		}
		return;
	}
	if (m->signed_object == NULL)
		return;
	if (GMIME_IS_PART(m->signed_object) && m->sig->raw != NULL)
		restore_content(m->signed_object, m->sig->raw);	/* the verify replaced it */
	g_clear_pointer(&m->sig->fpr, g_free);
	verify_signed(m);
}

/* SHA-256 of what o writes (an entity, or a part's decoded content when
 * content_only), line ends read as LF, without holding it in memory. */
static char *
plain_digest(GMimeObject *o, gboolean content_only)
{
	g_autoptr(GMimeStream) null = g_mime_stream_null_new();
	g_autoptr(GMimeStream) f = g_mime_stream_filter_new(null);
	GMimeFilter *d2u = g_mime_filter_dos2unix_new(FALSE);
	GMimeFilter *sum = g_mime_filter_checksum_new(G_CHECKSUM_SHA256);
	char *hex;

	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), d2u);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), sum);
	if (content_only && GMIME_IS_PART(o) && g_mime_part_get_content(GMIME_PART(o)) != NULL)
		g_mime_data_wrapper_write_to_stream(g_mime_part_get_content(GMIME_PART(o)), f);
	else if (!content_only)
		g_mime_object_write_to_stream(o, NULL, f);
	g_mime_stream_flush(f);
	hex = g_mime_filter_checksum_get_string(GMIME_FILTER_CHECKSUM(sum));
	g_object_unref(d2u);
	g_object_unref(sum);
	return hex;
}

/* Remember what was decrypted (see message.h): the session key gpg used,
 * hashed at once; the ciphertext's own bytes only if gpg gave none. */
static void
note_decrypted(message *m, GMimeDecryptResult *res, GMimeObject *ct_part, GBytes *ct_bytes,
	       GMimeObject *plain, gboolean plain_is_content)
{
	const char *sk = res != NULL ? g_mime_decrypt_result_get_session_key(res) : NULL;

	g_free(m->cipher_sha256);
	if (sk != NULL && *sk != '\0')
		m->cipher_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, sk, -1);
	else if (ct_bytes != NULL)
		m->cipher_sha256 = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, ct_bytes);
	else
		m->cipher_sha256 = plain_digest(ct_part, TRUE);
	g_free(m->plain_sha256);
	m->plain_sha256 = plain_digest(plain, plain_is_content);
}

/* Whether a decryption failed because the robot's key cannot be used just
 * now (gpg-agent down): then the mail must wait, not be refused. */
static gboolean
key_unusable_now(void)
{
	g_autoptr(GError) e = NULL;

	return crypto_robot_key_check(&e) == VULNID_ERR_TEMP;
}

/* Check and open what sits at the top of the message: a PGP/MIME
 * encrypted or signed body, or one inline OpenPGP block.  Only this is
 * ever decrypted or counted as signed.  Returns the entity to read the
 * text from. */
/* A signature inside what was decrypted (encrypted and signed in one):
 * judged, and what carries it kept for verifying again. */
static void
note_sealed_signature(message *m, GMimeDecryptResult *res, GMimeObject *sealed, GBytes *raw)
{
	GMimeSignatureList *sigs = res != NULL ? g_mime_decrypt_result_get_signatures(res) : NULL;

	if (sigs != NULL && g_mime_signature_list_length(sigs) > 0) {
		m->sig->present = TRUE;
		crypto_judge(m->sig, sigs);
		m->sealed_object = g_object_ref(sealed);
		if (raw != NULL)
			set_raw_signature(m, raw);
	} else if (raw != NULL) {
		g_bytes_unref(raw);
	}
}

static void
decrypt_failed(message *m, const GError *e)
{
	m->crypto_unavailable = key_unusable_now();
	message_add_problem(m, "decrypt-failed",
			    "the mail could not be decrypted (%s): encrypt it to this robot's "
			    "key (mail the word \"key\" to get it), with integrity protection",
			    e != NULL ? e->message : "unknown error");
}

/* PGP/MIME multipart/encrypted: the decrypted body, or NULL when it
 * stays closed (a problem is noted). */
static GMimeObject *
open_encrypted(message *m, GMimeObject *top)
{
	GMimeContentType *ct = g_mime_object_get_content_type(top);
	const char *proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
	g_autoptr(GError) e = NULL;
	GMimeDecryptResult *res = NULL;
	GMimeObject *clear, *enc;

	if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-encrypted") != 0) {
		message_add_problem(m, "encrypted", "the mail is encrypted with something other than "
				    "OpenPGP (protocol application/pgp-encrypted)");
		return NULL;
	}
	clear = g_mime_multipart_encrypted_decrypt(GMIME_MULTIPART_ENCRYPTED(top),
						   GMIME_DECRYPT_EXPORT_SESSION_KEY, NULL, &res, &e);
	if (clear == NULL) {
		decrypt_failed(m, e);
		if (res != NULL)
			g_object_unref(res);
		return NULL;
	}
	m->decrypted = TRUE;
	m->clear = clear;
	enc = g_mime_multipart_get_part(GMIME_MULTIPART(top), 1);
	note_decrypted(m, res, enc, NULL, clear, FALSE);
	if (!GMIME_IS_MULTIPART_SIGNED(clear))
		note_sealed_signature(m, res, top, enc != NULL ? part_bytes(enc) : NULL);
	if (res != NULL)
		g_object_unref(res);
	return clear;
}

/* PGP/MIME multipart/signed: the signed part to read the text from. */
static GMimeObject *
open_signed(message *m, GMimeObject *body)
{
	GMimeContentType *ct = g_mime_object_get_content_type(body);
	const char *proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
	const char *micalg = ct != NULL ? g_mime_content_type_get_parameter(ct, "micalg") : NULL;

	m->signed_object = g_object_ref(body);
	m->sig->present = TRUE;
	if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-signature") != 0 ||
	    micalg == NULL || g_ascii_strncasecmp(micalg, "pgp-", 4) != 0 ||
	    g_mime_multipart_get_count(GMIME_MULTIPART(body)) != 2) {
		m->sig->reason = g_strdup("the multipart/signed parameters are wrong (protocol must "
					  "be application/pgp-signature and micalg pgp-*, with two parts)");
		return body;
	}
	set_raw_signature(m, part_bytes(g_mime_multipart_get_part(GMIME_MULTIPART(body), 1)));
	verify_signed(m);
	return g_mime_multipart_get_part(GMIME_MULTIPART(body), 0);
}

/* An inline cleartext-signed text: the whole part must be the block. */
static void
open_inline_signed(message *m, GMimeObject *body)
{
	g_autoptr(GBytes) text = part_bytes(body);

	m->sig->present = TRUE;
	if (!whole_armor(text, "-----BEGIN PGP SIGNED MESSAGE-----", "-----END PGP SIGNATURE-----")) {
		m->sig->reason = g_strdup("there is text before or after the signed block, "
					  "which the signature does not cover");
		return;
	}
	m->signed_object = g_object_ref(body);
	set_raw_signature(m, g_bytes_ref(text));
	verify_signed(m);
}

/* An inline encrypted text at the top: decrypted in place. */
static void
open_inline_encrypted(message *m, GMimeObject *body)
{
	g_autoptr(GBytes) text = part_bytes(body);
	g_autoptr(GError) e = NULL;
	GMimeDecryptResult *res;

	if (!whole_armor(text, "-----BEGIN PGP MESSAGE-----", "-----END PGP MESSAGE-----")) {
		m->encrypted = TRUE;
		return;
	}
	res = g_mime_part_openpgp_decrypt(GMIME_PART(body), GMIME_DECRYPT_EXPORT_SESSION_KEY, NULL, &e);
	if (res == NULL) {
		decrypt_failed(m, e);
		return;
	}
	note_decrypted(m, res, NULL, text, body, TRUE);
	m->decrypted = TRUE;
	note_sealed_signature(m, res, body, g_bytes_ref(text));
	g_object_unref(res);
}

GMimeObject *
message_open_top(message *m, GMimeObject *top)
{
	GMimeObject *body = top;

	if (GMIME_IS_MULTIPART_ENCRYPTED(top)) {
		body = open_encrypted(m, top);
		if (body == NULL)
			return top;
	}
	if (GMIME_IS_MULTIPART_SIGNED(body))
		return open_signed(m, body);
	if (GMIME_IS_PART(body) && message_content_is(body, "text", "plain") &&
	    !message_is_attachment_disposition(body)) {
		GMimeOpenPGPData kind = g_mime_part_get_openpgp_data(GMIME_PART(body));

		if (kind == GMIME_OPENPGP_DATA_SIGNED)
			open_inline_signed(m, body);
		else if (kind == GMIME_OPENPGP_DATA_ENCRYPTED && body == top)
			open_inline_encrypted(m, body);
	}
	return body;
}
