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

/* Mask control characters for a log line (keeps everything else). */
char *text_mask_controls(const char *s);

/* Plain text from HTML: tags dropped, script/style skipped, block elements
 * become line breaks, entities decoded.  Linear in the input. */
char *text_from_html(const char *html);

/* Undo RFC 3676 format=flowed (space-stuffing, soft breaks, DelSp). */
char *text_unflow(const char *s, gboolean delsp);

/* Normalise line ends to \n. */
char *text_normalize_newlines(const char *s);

/* Whether an RFC 5322 msg-id (without <>) is safe to echo in a header. */
gboolean text_msgid_valid(const char *id);

#endif
