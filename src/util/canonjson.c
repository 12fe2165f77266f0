/* canonjson.c - deterministic JSON writer */
#include "autoconfig.h"

#include <string.h>

#include "canonjson.h"

void
canonjson_string(GString *out, const char *value)
{
	g_autofree char *fixed = NULL;

	if (value == NULL) {
		g_string_append(out, "null");
		return;
	}
	if (!g_utf8_validate(value, -1, NULL))
		value = fixed = g_utf8_make_valid(value, -1);
	g_string_append_c(out, '"');
	for (const unsigned char *p = (const unsigned char *) value; *p; p++) {
		switch (*p) {
		case '"': g_string_append(out, "\\\""); break;
		case '\\': g_string_append(out, "\\\\"); break;
		case '\b': g_string_append(out, "\\b"); break;
		case '\t': g_string_append(out, "\\t"); break;
		case '\n': g_string_append(out, "\\n"); break;
		case '\f': g_string_append(out, "\\f"); break;
		case '\r': g_string_append(out, "\\r"); break;
		default:
			if (*p < 0x20)
				g_string_append_printf(out, "\\u%04x", *p);
			else
				g_string_append_c(out, (char) *p);
		}
	}
	g_string_append_c(out, '"');
}

void
canonjson_key(GString *out, gboolean *first, const char *key)
{
	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	canonjson_string(out, key);
	g_string_append_c(out, ':');
}

void
canonjson_member_str(GString *out, gboolean *first, const char *key, const char *value)
{
	canonjson_key(out, first, key);
	canonjson_string(out, value);
}

void
canonjson_member_int(GString *out, gboolean *first, const char *key, gint64 value)
{
	canonjson_key(out, first, key);
	g_string_append_printf(out, "%" G_GINT64_FORMAT, value);
}
