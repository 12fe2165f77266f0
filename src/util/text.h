/* text.h - text from mail: charsets, header-safe values, HTML to text */
#ifndef VULNID_TEXT_H
#define VULNID_TEXT_H

#include <glib.h>

/* Bytes in charset (NULL or unknown: try UTF-8, then windows-1252, which
 * maps every byte) to valid UTF-8. */
char *text_to_utf8(const char *data, gsize len, const char *charset, gsize *out_len);

/* text_to_utf8() for the first len bytes of a longer text: a character
 * that the cut split at the end is left out instead of making the whole
 * conversion fail. */
char *text_to_utf8_prefix(const char *data, gsize len, const char *charset, gsize *out_len);

/* A value safe for a header or a one-line display: control characters
 * (C0, DEL, C1), line and paragraph separators and bidirectional overrides
 * become spaces, runs of white space collapse, ends are trimmed, and the
 * result is cut to at most max_chars characters (0: no limit). */
char *text_clean_line(const char *s, gsize max_chars);

/* s (UTF-8) as RFC 2047 encoded words, B encoding, each under 76
 * characters, separated by spaces: a header value the recipient decodes
 * exactly once. */
char *text_encoded_words_b(const char *s);

/* A header value as it came (raw: folded, encoded words, perhaps raw
 * 8-bit text) as UTF-8, its RFC 2047 encoded words decoded one by one:
 * white space between adjacent encoded words is dropped (RFC 2047 6.2),
 * the bytes of adjacent words in one charset are converted together (a
 * character split across words survives), a word that does not parse
 * stays as it is, and nothing after a word's '=' padding is lost (GMime
 * 3.2.13's g_mime_utils_header_decode_text() joins the base64 of adjacent
 * words and stops at the first padding).  Charset names go through
 * GMime's table of aliases, so GMime must be initialised.  Line ends stay;
 * text_clean_line() makes it one line.  Linear in the input. */
char *text_decode_header(const char *raw);

/* Mask control characters for a log line (keeps everything else). */
char *text_mask_controls(const char *s);

/* Plain text from HTML: tags dropped, script/style skipped, block elements
 * become line breaks, entities decoded.  Linear in the input. */
char *text_from_html(const char *html);

/* Undo RFC 3676 format=flowed (space-stuffing, soft breaks, DelSp). */
char *text_unflow(const char *s, gboolean delsp);

/* s (\n line ends) with every OpenPGP cleartext-signed block (RFC 9580
 * section 7: "-----BEGIN PGP SIGNED MESSAGE-----", armor headers, the
 * dash-escaped text, the signature) replaced by its text, dash escapes
 * undone: what the signer wrote, for reading it when the signature is not
 * checked.  NULL when s holds no complete block. */
char *text_pgp_cleartext(const char *s);

/* s (\n line ends) without the quotes of other mail that mail programs
 * add to a reply: an attribution ("On <date>, X wrote:", also wrapped
 * over up to three lines as Gmail does) with the '>' lines after it, and
 * every later '>' line (an interleaved reply keeps "> [...]" where a quote
 * sat between its own lines); and everything from an Outlook separator on
 * ("-----Original Message-----", a line of underscores before "From:", a
 * "From:" line followed by "Sent:"); a text of nothing but '>' lines.
 * Other '>' lines stay: they are the writer's own quoting.  *stripped tells whether anything went. */
char *text_strip_quotes(const char *s, gboolean *stripped);

/* A value or text with the links mail programs add to plain text taken
 * out: "example.com <http://example.com>" (Gmail), "x@example.com
 * <mailto:x@example.com>", "https://x<https://x>" (Outlook) become the
 * text alone; a link whose text differs from its target stays. */
char *text_unautolink(const char *v);

/* s with every line longer than width characters broken at spaces, for
 * plain text mail: the lines after a break are indented as the line was,
 * or under the value of a "Label:  value" line, or after a "- " bullet;
 * a word is never split: one longer than a line, or one of 32 characters
 * or more (a URL, a token, a digest, a key) after a label of at most 20,
 * stays where it is. */
char *text_wrap(const char *s, gsize width);
/* The same with the lines after a break indented by hang spaces. */
char *text_wrap_hanging(const char *s, gsize width, gsize hang);

/* Normalise line ends to \n. */
char *text_normalize_newlines(const char *s);

/* Whether an RFC 5322 msg-id (without <>) is safe to echo in a header. */
gboolean text_msgid_valid(const char *id);

#endif
