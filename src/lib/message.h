/* message.h - one incoming mail: spooled to disk, parsed with GMime, checked */
#ifndef VULNID_MESSAGE_H
#define VULNID_MESSAGE_H

#include <glib.h>
#include <gmime/gmime.h>

#include "crypto.h"
#include "gmime-autoptr.h"
#include "status.h"

typedef struct {
	gint64 max_message_size;
	gint64 max_header_size;
	gint64 max_headers;
	gint64 max_line_length;
	gint64 max_parts;
	gint64 max_depth;
	gint64 max_request_text;	/* [limits] max_request_text; 0: the default */
	/* OpenPGP at the top: each gpg run within openpgp_time_limit seconds
	 * (0: 10); what decryption yields at most max_decrypted_ratio times
	 * the ciphertext (0: 100), 1 MiB always, never over max_message_size;
	 * its files go into spool_dir (NULL: the temporary directory) */
	gint64 openpgp_time_limit;
	gint64 max_decrypted_ratio;
	const char *spool_dir;
} message_limits;

/* The raw message, copied from the input into an unlinked file so that
 * GMime can parse it from a seekable stream (memory stays flat) and the
 * archive can stream it into the database. */
typedef struct {
	int fd;
	gint64 size;
	char raw_sha256[65];	/* of the bytes stored (mbox From_ line removed) */
	char body_sha256[65];	/* of the body, line ends normalised */
	char header_sha256[65];	/* of the header, trace fields left out */
	char *mbox_sender;	/* from a leading "From " line, or NULL */
	guint64 header_count;
	gint64 longest_header;
	gint64 longest_line;
	gboolean header_has_nul;
	gint64 body_offset;	/* where the body starts (after the blank line) */
	struct header_scan *scan;	/* the header as read (header.h) */
} message_spool;

/* Copy in_fd to a new unlinked file in spool_dir.  VULNID_ERR_TOOBIG when
 * more than max_size bytes arrive (the rest is not read). */
vulnid_status message_spool_input(int in_fd, const char *spool_dir, gint64 max_size,
				  message_spool **out, GError **err);
/* The same for a mail that is in a seekable file already, at offset 0
 * (vulnid-lmtpd spools the data itself): read once for the hashes and
 * figures, not copied; the spool keeps a dup of fd, which shares its
 * offset.  (A leading From_ line is left out by copying after all.) */
vulnid_status message_spool_file(int fd, const char *spool_dir, gint64 max_size,
				 message_spool **out, GError **err);
void message_spool_free(message_spool *sp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(message_spool, message_spool_free)

typedef struct {
	char *filename;		/* cleaned, may be NULL */
	char *content_type;	/* type/subtype, lower case */
	GMimeObject *object;	/* the part, or the message/rfc822 part */
} message_attachment;

typedef struct {
	message_spool *spool;	/* borrowed */
	GMimeMessage *mime;	/* NULL when the input is not a message */

	/* Why the message cannot be handled as a request: short code of the
	 * first problem (e.g. "nesting") and human sentences for the reply. */
	char *problem;
	GPtrArray *problems;

	char *message_id;	/* without <>, NULL when absent or unusable */
	char *from_addr;
	char *from_name;
	char *reply_addr;	/* Reply-To, else From */
	char *subject;		/* UTF-8, cleaned to one line, at most 998 characters */
	glong subject_chars;	/* characters of the whole Subject (more: it was cut) */
	char *in_reply_to;	/* without <> */
	GPtrArray *references;	/* without <> */
	char *auto_submitted;
	char *precedence;
	GPtrArray *x_loop;
	GPtrArray *hashcash;	/* X-Hashcash values without white space (at most 5) */
	char *list_id;
	char *delivered_to;	/* first Delivered-To, X-Original-To, To */

	char *text;		/* the request text, UTF-8, \n line ends */
	gint64 text_cut_from;	/* the text part was this long and cut (see
				 * MESSAGE_MAX_TEXT_DEFAULT), else 0 */
	gint64 text_kept;	/* ... to its first this many bytes */
	char *text_kept_as;	/* ... and is whole the attachment of this name */
	gint64 max_text;	/* the limit it was cut at */
	GMimeObject *text_part;	/* where the text comes from, or NULL (borrowed) */
	const char *text_type;	/* "text/plain", "text/html" or NULL */
	gboolean encrypted;	/* OpenPGP ciphertext this robot did not (or could not) read */
	gboolean decrypted;	/* the body came encrypted to the robot and was read */
	/* What identifies what was decrypted, for replay protection: the
	 * SHA-256 of its session key (the same for the same encrypted payload
	 * however it is wrapped: PGP/MIME or inline, armor headers, packet
	 * framing, other recipients) and of the plaintext as read (the
	 * decrypted entity or text, line ends LF).  Lower-case hex, or NULL. */
	char *cipher_sha256;
	char *plain_sha256;
	gboolean partial_signature;	/* a signature covers only part of the mail */
	/* The text is clearsigned (gpg --clearsign, sq sign --cleartext-signature)
	 * but was not verified: it is a part of multipart/mixed, not the whole
	 * mail.  The text read is the signed text, armor and dash escapes
	 * removed; the mail counts as unsigned. */
	gboolean unopened_clearsigned;
	crypto_signature *sig;	/* the signature at the top, judged; never NULL */
	GMimeObject *signed_object;	/* what carries it, for verifying again */
	GMimeObject *sealed_object;	/* encrypted and signed in one: decrypt again */
	GMimeObject *clear;	/* the decrypted body, when decrypted */
	message_limits lim;	/* as parsed */
	/* Unlinked files of the OpenPGP at the top, kept for verifying again:
	 * the encrypted data, what it decrypted to (GMime reads the clear
	 * body from it), the signed content of a multipart/signed as it was
	 * verified (CRLF); -1 when none. */
	int cipher_fd, clear_fd, signed_fd;
	message_spool *clear_spool;	/* the decrypted body, measured as a spool */
	char *crypto_why;	/* why gpg could not work, with crypto_unavailable */
	GBytes *pgp_keys;	/* the first application/pgp-keys attachment */
	gboolean crypto_unavailable;	/* gpg could not work now (not started, agent away): retry */
	GPtrArray *attachments;	/* message_attachment* */
	guint part_count;
	guint depth;
	gint64 offset_shift;	/* parser offsets in the body + this = offsets in the mail */
	gboolean header_only;	/* refused for its header or structure: the body is not parsed */
} message;

/* Of a text part longer than this many bytes (decoded), only the head is
 * read as the request text: up to its last whole line (unless that line is
 * longer than half of it), with a note at its end, and the whole part
 * becomes an attachment (request-text.txt unless it has a name).  [limits]
 * max_request_text (message_limits).  A mail's memory then grows with
 * what is read, not with what is archived. */
#define MESSAGE_MAX_TEXT_DEFAULT (G_GINT64_CONSTANT(512) * 1024)

void message_init(void);
void message_shutdown(void);

/* Parse the spooled mail.  Malformed input is not an error: the result
 * then has ->problem set.  Errors are only for I/O and resources. */
vulnid_status message_parse(message_spool *sp, const message_limits *lim,
			    message **out, GError **err);
void message_free(message *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(message, message_free)

/* The text part as one more attachment, unless it is one already (a cut
 * text is).  For reading a stored mail's attachments again whatever
 * max_request_text is now: the embargo release matches them by SHA-256. */
void message_text_as_attachment(message *m);

/* Verify the top-level signature again (after its key was imported). */
gboolean message_can_reverify(const message *m);
void message_reverify(message *m);

/* The key under which a delivery is recognised when it comes again. */
char *message_dedup_key(const message *m);

/* Decode an attachment into a new unlinked file in dir; its size and
 * SHA-256 come back. */
vulnid_status message_attachment_spool(const message_attachment *a, const char *dir,
				       int *fd, gint64 *size, char sha256[65], GError **err);

/* Whether m is an automatic message that must never be answered
 * (RFC 3834), and why. */
gboolean message_is_automatic(const message *m, const char *envelope_sender,
			      const char *loop_address, const char **why);

#endif
