/* jsonl-chain.h - hash-chained JSON lines, the format the audit log and the
 * public feed share
 *
 * A line is one canonical JSON object whose last two members are
 * "prev" (the hash of the line before, or the genesis for the first) and
 * "hash": the SHA-256 of the line's text up to, not including, the
 * `,"hash":"` that begins the last member.  The hash member must be the
 * last one, so that what it covers is unambiguous. */
#ifndef VULNID_JSONL_CHAIN_H
#define VULNID_JSONL_CHAIN_H

#include <glib.h>

#define JSONL_CHAIN_GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
#define JSONL_CHAIN_HASH_KEY ",\"hash\":\""
#define JSONL_CHAIN_HASH_KEY_LEN 9
#define JSONL_CHAIN_PREV_KEY ",\"prev\":\""
#define JSONL_CHAIN_PREV_KEY_LEN 9
/* `,"hash":"` + 64 hex + `"}` */
#define JSONL_CHAIN_HASH_TAIL (JSONL_CHAIN_HASH_KEY_LEN + 64 + 2)

/* Close the object begun at line->str + start: append "prev", hash what
 * the line holds from start, append "hash" and the closing brace.  first
 * is the canonjson member flag of the object; hash_out (may be NULL)
 * receives the hash. */
void jsonl_chain_seal(GString *line, gsize start, gboolean *first, const char *prev,
		      char hash_out[65]);

/* The hash a line (without its newline) must carry, or NULL when it does
 * not end in `,"hash":"<64 lower-case hex>"}`. */
char *jsonl_chain_line_hash(const char *line, gsize len);

/* Whether a line that ends well carries its own hash (jsonl_chain_line_hash
 * and the stored member agree). */
gboolean jsonl_chain_line_ok(const char *line, gsize len);

/* The 64 hex digits of the line's prev member, when it comes right
 * before the hash member; NULL otherwise.  The line must end well. */
const char *jsonl_chain_line_prev(const char *line, gsize len);

/* Whether s holds exactly 64 lower-case hex digits. */
gboolean jsonl_chain_is_hex64(const char *s, gsize len);

#endif
