/* canonjson.h - deterministic JSON text for hashed data (records, audit log)
 *
 * Hashes over JSON are only verifiable if every writer produces the same
 * bytes, so this writer fixes the rules (those of RFC 8785 for strings):
 * keys in the order the caller writes them, no white space, strings as
 * UTF-8 with only '"', '\\' and U+0000..U+001F escaped (\b \t \n \f \r,
 * else \u00xx in lower case), integers in plain decimal. */
#ifndef VULNID_CANONJSON_H
#define VULNID_CANONJSON_H

#include <glib.h>

/* Append a JSON string; NULL becomes null; invalid UTF-8 is repaired. */
void canonjson_string(GString *out, const char *value);

/* Append `"key":` preceded by a comma unless *first is set (then clears it). */
void canonjson_key(GString *out, gboolean *first, const char *key);

/* Convenience: key then value. */
void canonjson_member_str(GString *out, gboolean *first, const char *key, const char *value);
void canonjson_member_int(GString *out, gboolean *first, const char *key, gint64 value);

#endif
