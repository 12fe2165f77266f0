/* message-pgp.c - OpenPGP at the top of a mail: decrypt, verify, and
 * the digest of what was decrypted
 *
 * What gpg is handed is checked first (crypto_signature_sane(),
 * crypto_ciphertext_sane()), each gpg run has the configured deadline,
 * and what decryption yields is written to a file of its own as gpg
 * writes it, counted against a cap (a compression bomb is stopped where
 * it crosses it), then measured and checked as received mail is
 * (message_spool_file(), the same limits) before GMime parses it.  So a
 * mail costs the same bounded time and memory whether its parts came in
 * clear or encrypted. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "header.h"
#include "message.h"
#include "message-private.h"
#include "text.h"

/* Below this, what a mail decrypts to is never refused for its ratio. */
#define DECRYPTED_FLOOR (1024 * 1024)

/* --- helpers ------------------------------------------------------------------ */

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

static gint64
timeout_ms(const message *m)
{
	return (m->lim.openpgp_time_limit > 0 ? m->lim.openpgp_time_limit : 10) * 1000;
}

/* A new unlinked file for what OpenPGP needs on disk, or -1 (the mail
 * must wait: crypto_unavailable). */
static int
scratch_file(message *m)
{
	const char *dir = m->lim.spool_dir != NULL ? m->lim.spool_dir : g_get_tmp_dir();
	g_autofree char *tmpl = g_build_filename(dir, "pgp.XXXXXX", NULL);
	int fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0) {
		m->crypto_unavailable = TRUE;
		g_free(m->crypto_why);
		m->crypto_why = g_strdup_printf("cannot create a file in '%s': %s", dir, g_strerror(errno));
		return -1;
	}
	unlink(tmpl);
	return fd;
}

/* A failed OpenPGP operation: past its deadline the mail is set aside
 * and answered (a problem), never retried; gpg that cannot work now
 * makes the mail wait; anything else is the caller's (FALSE). */
static gboolean
pgp_failed(message *m, vulnid_status s, const GError *e, const char *what)
{
	if (s == VULNID_ERR_TIMEOUT) {
		message_add_problem(m, "openpgp-timeout", "%s took longer than %" G_GINT64_FORMAT
				    " seconds and was stopped: the mail is not read", what,
				    timeout_ms(m) / 1000);
		return TRUE;
	}
	if (s == VULNID_ERR_TEMP || s == VULNID_ERR_IO || s == VULNID_ERR_NOSPACE || s == VULNID_ERR_NOMEM) {
		m->crypto_unavailable = TRUE;
		g_free(m->crypto_why);
		m->crypto_why = g_strdup(e != NULL ? e->message : vulnid_status_str(s));
		return TRUE;
	}
	return FALSE;
}

/* Write what a part holds (decoded, or the entity itself) into a new
 * file: the file, at offset 0, or -1. */
static int
part_to_file(message *m, GMimeObject *o, gboolean entity, gboolean crlf)
{
	int fd = scratch_file(m);
	g_autoptr(GMimeStream) fs = NULL;
	gboolean ok;

	if (fd < 0)
		return -1;
	fs = g_mime_stream_fs_new(dup(fd));
	g_mime_stream_fs_set_owner(GMIME_STREAM_FS(fs), TRUE);
	if (entity) {
		GMimeFormatOptions *options = g_mime_format_options_new();

		if (crlf)
			g_mime_format_options_set_newline_format(options, GMIME_NEWLINE_FORMAT_DOS);
		ok = g_mime_object_write_to_stream(o, options, fs) >= 0;
		g_mime_format_options_free(options);
	} else {
		GMimeDataWrapper *w = GMIME_IS_PART(o) ? g_mime_part_get_content(GMIME_PART(o)) : NULL;

		ok = w == NULL || g_mime_data_wrapper_write_to_stream(w, fs) >= 0;
	}
	if (!ok || g_mime_stream_flush(fs) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		m->crypto_unavailable = TRUE;
		g_free(m->crypto_why);
		m->crypto_why = g_strdup_printf("cannot write a spool file: %s", g_strerror(errno ? errno : EIO));
		close(fd);
		return -1;
	}
	return fd;
}

static int
bytes_to_file(message *m, GBytes *b)
{
	int fd = scratch_file(m);
	gsize n;
	const char *p = g_bytes_get_data(b, &n);

	if (fd < 0)
		return -1;
	if (!fileio_write_all(fd, p, n) || lseek(fd, 0, SEEK_SET) < 0) {
		m->crypto_unavailable = TRUE;
		m->crypto_why = g_strdup_printf("cannot write a spool file: %s", g_strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* --- signatures ------------------------------------------------------------------ */

/* Verify the multipart/signed at m->signed_object: its content as it
 * was sent (RFC 3156 5.1: CRLF), from a file, against the signature
 * part, which must be only signatures. */
static void
verify_multipart(message *m, GBytes *signature)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *why = NULL;
	vulnid_status s;

	m->sig->present = TRUE;
	if (!crypto_signature_sane(signature, &why)) {
		m->sig->valid = FALSE;
		g_free(m->sig->reason);
		m->sig->reason = g_steal_pointer(&why);
		return;
	}
	if (m->signed_fd < 0) {
		GMimeObject *content = g_mime_multipart_get_part(GMIME_MULTIPART(m->signed_object), 0);

		m->signed_fd = part_to_file(m, content, TRUE, TRUE);
		if (m->signed_fd < 0)
			return;
	}
	if (lseek(m->signed_fd, 0, SEEK_SET) < 0) {
		pgp_failed(m, VULNID_ERR_IO, NULL, "verifying the signature");
		return;
	}
	s = crypto_verify_fd(m->signed_fd, signature, timeout_ms(m), m->sig, &e);
	if (s != VULNID_OK && !pgp_failed(m, s, e, "verifying the signature")) {
		m->sig->valid = FALSE;
		g_free(m->sig->reason);
		m->sig->reason = g_strdup_printf("the signature could not be checked (%s)", e->message);
	}
}

/* PGP/MIME multipart/signed: the signed part to read the text from. */
static GMimeObject *
open_signed(message *m, GMimeObject *body)
{
	GMimeContentType *ct = g_mime_object_get_content_type(body);
	const char *proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
	const char *micalg = ct != NULL ? g_mime_content_type_get_parameter(ct, "micalg") : NULL;
	GMimeObject *sigpart;

	m->signed_object = g_object_ref(body);
	m->sig->present = TRUE;
	sigpart = g_mime_multipart_get_count(GMIME_MULTIPART(body)) == 2
		? g_mime_multipart_get_part(GMIME_MULTIPART(body), 1) : NULL;
	if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-signature") != 0 ||
	    micalg == NULL || g_ascii_strncasecmp(micalg, "pgp-", 4) != 0 || sigpart == NULL ||
	    !message_content_is(sigpart, "application", "pgp-signature")) {
		m->sig->reason = g_strdup("the multipart/signed parameters are wrong (protocol must "
					  "be application/pgp-signature and micalg pgp-*, with two parts)");
		return body;
	}
	set_raw_signature(m, part_bytes(sigpart));
	verify_multipart(m, m->sig->raw);
	return g_mime_multipart_get_part(GMIME_MULTIPART(body), 0);
}

/* Put what was verified or decrypted in the place of a text part's
 * content, as read from fd (or from bytes). */
static void
replace_content(GMimeObject *part, int fd, GBytes *bytes)
{
	g_autoptr(GMimeStream) stream = NULL;
	GMimeDataWrapper *w;

	if (fd >= 0) {
		lseek(fd, 0, SEEK_SET);
		stream = g_mime_stream_fs_new(dup(fd));
		g_mime_stream_fs_set_owner(GMIME_STREAM_FS(stream), TRUE);
	} else {
		stream = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	}
	g_mime_stream_reset(stream);
	w = g_mime_data_wrapper_new_with_stream(stream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(GMIME_PART(part), w);
	g_object_unref(w);
}

/* An inline cleartext-signed text: the whole part must be the block;
 * the text read is what the signature covers. */
static void
open_inline_signed(message *m, GMimeObject *body)
{
	g_autoptr(GBytes) text = part_bytes(body);
	g_autoptr(GBytes) clear = NULL;
	g_autoptr(GError) e = NULL;
	g_autofree char *why = NULL;
	vulnid_status s;

	m->sig->present = TRUE;
	if (!whole_armor(text, "-----BEGIN PGP SIGNED MESSAGE-----", "-----END PGP SIGNATURE-----")) {
		m->sig->reason = g_strdup("there is text before or after the signed block, "
					  "which the signature does not cover");
		return;
	}
	m->signed_object = g_object_ref(body);
	set_raw_signature(m, g_bytes_ref(text));
	if (!crypto_signature_sane(text, &why)) {
		m->sig->reason = g_steal_pointer(&why);
		return;
	}
	s = crypto_verify_cleartext(text, timeout_ms(m), (gint64) g_bytes_get_size(text), &clear, m->sig, &e);
	if (s != VULNID_OK) {
		if (!pgp_failed(m, s, e, "verifying the signature"))
			m->sig->reason = g_strdup_printf("the signature could not be checked (%s)", e->message);
		return;
	}
	if (g_bytes_get_size(clear) > 0)
		replace_content(body, -1, clear);
}

/* --- decryption ---------------------------------------------------------------- */

/* How much an encrypted part of n bytes may decrypt to. */
static gint64
decrypted_cap(const message *m, gint64 n)
{
	gint64 ratio = m->lim.max_decrypted_ratio > 0 ? m->lim.max_decrypted_ratio : 100;
	gint64 cap = n > G_MAXINT64 / ratio ? G_MAXINT64 : n * ratio;

	cap = MAX(cap, DECRYPTED_FLOOR);
	return m->lim.max_message_size > 0 ? MIN(cap, m->lim.max_message_size) : cap;
}

static void
decrypt_failed(message *m, const char *why)
{
	message_add_problem(m, "decrypt-failed",
			    "the mail could not be decrypted (%s): encrypt it to this robot's "
			    "key (mail the word \"key\" to get it), with integrity protection", why);
}

/* The head of the encrypted data, checked before gpg sees any of it. */
static gboolean
ciphertext_checked(message *m, int fd)
{
	char head[384 * 1024];
	ssize_t n = pread(fd, head, sizeof head, 0);
	g_autofree char *why = NULL;

	if (n < 0) {
		pgp_failed(m, VULNID_ERR_IO, NULL, "reading the encrypted part");
		return FALSE;
	}
	if (!crypto_ciphertext_sane(head, (gsize) n, &why)) {
		decrypt_failed(m, why);
		return FALSE;
	}
	return TRUE;
}

/* Decrypt the data in m->cipher_fd into m->clear_fd, within the cap and
 * the deadline; the signature inside (if any) judged into m->sig.
 * FALSE when the mail stays closed (a problem, or crypto_unavailable). */
static gboolean
decrypt_file(message *m, crypto_signature *inner)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *session = NULL;
	off_t size = lseek(m->cipher_fd, 0, SEEK_END);
	gint64 cap;
	vulnid_status s;

	if (size < 0 || lseek(m->cipher_fd, 0, SEEK_SET) < 0) {
		pgp_failed(m, VULNID_ERR_IO, NULL, "reading the encrypted part");
		return FALSE;
	}
	if (!ciphertext_checked(m, m->cipher_fd))
		return FALSE;
	m->clear_fd = scratch_file(m);
	if (m->clear_fd < 0)
		return FALSE;
	cap = decrypted_cap(m, (gint64) size);
	s = crypto_decrypt_fd(m->cipher_fd, m->clear_fd, cap, timeout_ms(m), inner, &session, &e);
	if (s == VULNID_ERR_TOOBIG) {
		message_add_problem(m, "decrypted-too-big",
				    "the mail decrypts to more than %" G_GINT64_FORMAT " bytes (at most %"
				    G_GINT64_FORMAT " times its encrypted size, and [limits] max_message_size): "
				    "it is not read", cap, m->lim.max_decrypted_ratio > 0 ? m->lim.max_decrypted_ratio : 100);
		return FALSE;
	}
	if (s != VULNID_OK) {
		if (!pgp_failed(m, s, e, "decrypting the mail"))
			decrypt_failed(m, e->message);
		return FALSE;
	}
	m->decrypted = TRUE;
	g_free(m->cipher_sha256);
	m->cipher_sha256 = g_steal_pointer(&session);
	return TRUE;
}

/* Signed and encrypted in one: the signature gpg judged while it
 * decrypted is the mail's, and what carries it is kept (raw) for the
 * replay check and for verifying again. */
static void
take_inner_signature(message *m, crypto_signature *inner, GMimeObject *sealed, GBytes *raw)
{
	crypto_signature *keep = m->sig;

	if (!inner->present)
		return;
	m->sig = crypto_signature_new();
	*m->sig = *inner;
	memset(inner, 0, sizeof *inner);
	crypto_signature_free(keep);
	m->sealed_object = g_object_ref(sealed);
	set_raw_signature(m, g_bytes_ref(raw));
}

/* What the mail decrypted to, measured as received mail is measured:
 * over the limits, it is not parsed at all. */
static gboolean
clear_measured(message *m, gboolean entity)
{
	guint before = m->problems->len;

	if (lseek(m->clear_fd, 0, SEEK_SET) < 0 ||
	    message_spool_file(m->clear_fd, m->lim.spool_dir != NULL ? m->lim.spool_dir : g_get_tmp_dir(),
			       G_MAXINT64, &m->clear_spool, NULL) != VULNID_OK) {
		pgp_failed(m, VULNID_ERR_IO, NULL, "reading what the mail decrypted to");
		return FALSE;
	}
	g_free(m->plain_sha256);
	m->plain_sha256 = g_strdup(m->clear_spool->raw_sha256);
	if (m->cipher_sha256 == NULL)
		m->cipher_sha256 = g_strdup(m->clear_spool->raw_sha256);
	if (entity) {
		message_check_spool_limits(m, m->clear_spool, &m->lim, " in what the mail decrypts to");
	} else if (m->clear_spool->longest_line > m->lim.max_line_length) {
		message_add_problem(m, "line-too-long",
				    "a line of %" G_GINT64_FORMAT " bytes in what the mail decrypts to (the limit is %"
				    G_GINT64_FORMAT ")", m->clear_spool->longest_line, m->lim.max_line_length);
	}
	return m->problems->len == before;
}

/* The decrypted MIME entity, parsed from its file as the mail is: the
 * bounded copy of its header, then its body in place. */
static GMimeObject *
clear_parse(message *m)
{
	const message_spool *sp = m->clear_spool;
	g_autoptr(GBytes) head = header_scan_parser_header(sp->scan);
	g_autoptr(GMimeStream) cat = g_mime_stream_cat_new();
	g_autoptr(GMimeStream) hs = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(head, NULL),
									g_bytes_get_size(head));
	g_autoptr(GMimeStream) fs = g_mime_stream_fs_new(dup(sp->fd));
	g_autoptr(GMimeParserOptions) opts = g_mime_parser_options_new();
	g_autoptr(GMimeParser) parser = NULL;
	const char *fallback[] = { "UTF-8", "windows-1252", NULL };
	GMimeObject *o;

	g_mime_stream_fs_set_owner(GMIME_STREAM_FS(fs), TRUE);
	g_mime_stream_seek(fs, 0, GMIME_STREAM_SEEK_SET);
	g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), hs);
	if (sp->body_offset < sp->size) {
		g_autoptr(GMimeStream) body = g_mime_stream_substream(fs, sp->body_offset, sp->size);

		g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), body);
	}
	g_mime_parser_options_set_fallback_charsets(opts, fallback);
	g_mime_parser_options_set_warning_callback(opts, message_parser_warning, m);
	parser = g_mime_parser_new_with_stream(cat);
	o = g_mime_parser_construct_part(parser, opts);
	g_mime_parser_options_set_warning_callback(opts, NULL, NULL);
	if (o == NULL)
		message_add_problem(m, "malformed-mime", "what the mail decrypts to is not a MIME entity");
	return o;
}

/* PGP/MIME multipart/encrypted: the decrypted body, or NULL when it
 * stays closed (a problem is noted). */
static GMimeObject *
open_encrypted(message *m, GMimeObject *top)
{
	GMimeContentType *ct = g_mime_object_get_content_type(top);
	const char *proto = ct != NULL ? g_mime_content_type_get_parameter(ct, "protocol") : NULL;
	GMimeObject *enc = g_mime_multipart_get_count(GMIME_MULTIPART(top)) == 2
		? g_mime_multipart_get_part(GMIME_MULTIPART(top), 1) : NULL;
	g_autoptr(crypto_signature) inner = crypto_signature_new();

	if (proto == NULL || g_ascii_strcasecmp(proto, "application/pgp-encrypted") != 0 ||
	    enc == NULL || !GMIME_IS_PART(enc)) {
		message_add_problem(m, "encrypted", "the mail is encrypted with something other than "
				    "OpenPGP (protocol application/pgp-encrypted, two parts)");
		return NULL;
	}
	m->cipher_fd = part_to_file(m, enc, FALSE, FALSE);
	if (m->cipher_fd < 0 || !decrypt_file(m, inner) || !clear_measured(m, TRUE))
		return NULL;
	m->clear = clear_parse(m);
	if (m->clear == NULL)
		return NULL;
	if (!GMIME_IS_MULTIPART_SIGNED(m->clear)) {
		g_autoptr(GBytes) raw = part_bytes(enc);

		take_inner_signature(m, inner, top, raw);
	}
	return m->clear;
}

/* An inline encrypted text at the top: decrypted in place. */
static void
open_inline_encrypted(message *m, GMimeObject *body)
{
	g_autoptr(GBytes) text = part_bytes(body);
	g_autoptr(crypto_signature) inner = crypto_signature_new();

	if (!whole_armor(text, "-----BEGIN PGP MESSAGE-----", "-----END PGP MESSAGE-----")) {
		m->encrypted = TRUE;
		return;
	}
	m->cipher_fd = bytes_to_file(m, text);
	if (m->cipher_fd < 0 || !decrypt_file(m, inner) || !clear_measured(m, FALSE))
		return;
	take_inner_signature(m, inner, body, text);
	replace_content(body, m->clear_fd, NULL);
}

/* --- the top ---------------------------------------------------------------------- */

gboolean
message_can_reverify(const message *m)
{
	return m->signed_object != NULL || m->sealed_object != NULL;
}

void
message_reverify(message *m)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *session = NULL;
	vulnid_status s;

	if (m->sealed_object != NULL && m->cipher_fd >= 0) {
		/* signed inside the encryption: decrypted again, what it
		 * decrypts to (checked already) thrown away */
		if (lseek(m->cipher_fd, 0, SEEK_SET) < 0)
			return;
		s = crypto_decrypt_fd(m->cipher_fd, -1, 0, timeout_ms(m), m->sig, &session, &e);
		if (s != VULNID_OK)
			pgp_failed(m, s, e, "decrypting the mail again");
		return;
	}
	if (m->signed_object == NULL)
		return;
	if (GMIME_IS_MULTIPART_SIGNED(m->signed_object) && m->sig->raw != NULL) {
		g_autoptr(GBytes) raw = g_bytes_ref(m->sig->raw);

		verify_multipart(m, raw);
	} else if (m->sig->raw != NULL) {
		s = crypto_verify_cleartext(m->sig->raw, timeout_ms(m), 0, NULL, m->sig, &e);
		if (s != VULNID_OK)
			pgp_failed(m, s, e, "verifying the signature");
	}
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
