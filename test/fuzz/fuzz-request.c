/* fuzz-request.c - the request format alone: request_parse() on hostile
 * text, with the derived values every later step relies on.
 *
 * Input: the first line is the Subject, the rest is the text, both made
 * what the message layer hands on (UTF-8, \n, no NUL).  The first byte
 * also picks small or default limits.  Properties: the fields JSON of
 * every block is a JSON array of [string, string]; keys and values are
 * one line; an accepted request (no errors) respects max_ids and
 * max_fields; help and key requests have no blocks. */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>
#include <json-glib/json-glib.h>

#include "request.h"
#include "store.h"
#include "fuzz.h"

static GDateTime *now;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	now = g_date_time_new_from_iso8601(FUZZ_NOW, NULL);
	g_mime_init();	/* the address parser needs GMime's defaults */
	return 0;
}

static void
check_fields_json(const char *json, guint nfields)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(GError) e = NULL;
	JsonArray *a;

	if (!json_parser_load_from_data(p, json, -1, &e))
		fuzz_fail("fields JSON does not parse (%s): %.300s", e->message, json);
	if (!JSON_NODE_HOLDS_ARRAY(json_parser_get_root(p)))
		fuzz_fail("fields JSON is not an array: %.300s", json);
	a = json_node_get_array(json_parser_get_root(p));
	if (json_array_get_length(a) != nfields)
		fuzz_fail("fields JSON has %u members for %u fields", json_array_get_length(a), nfields);
	for (guint i = 0; i < nfields; i++) {
		JsonNode *n = json_array_get_element(a, i);
		JsonArray *kv;

		if (!JSON_NODE_HOLDS_ARRAY(n) || json_array_get_length(kv = json_node_get_array(n)) != 2 ||
		    json_node_get_value_type(json_array_get_element(kv, 0)) != G_TYPE_STRING ||
		    json_node_get_value_type(json_array_get_element(kv, 1)) != G_TYPE_STRING)
			fuzz_fail("field %u is not [string, string]: %.300s", i, json);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *text = NULL;
	g_autofree char *subject = NULL;
	g_autoptr(request) r = NULL;
	request_limits lim = { 20, 100, 1024 };
	const char *nl;

	if (size > 0 && data[0] == '!') {
		/* small limits: the boundaries are reachable */
		request_limits small = { 2, 3, 16 };

		lim = small;
		data++;
		size--;
	}
	text = fuzz_text(data, size);
	if (text == NULL)
		return 0;
	nl = strchr(text, '\n');
	subject = g_strndup(text, nl != NULL ? (gsize) (nl - text) : strlen(text));
	r = request_parse(nl != NULL ? nl + 1 : "", subject, &lim, now);
	if (r == NULL || r->blocks == NULL || r->errors == NULL || r->warnings == NULL)
		fuzz_fail("request_parse returned an incomplete result");
	if ((r->is_help || r->is_key) && r->blocks->len > 0)
		fuzz_fail("a help or key request with blocks");
	if (r->errors->len == 0 && !r->is_help && !r->is_key && r->blocks->len > (guint) lim.max_ids)
		fuzz_fail("%u blocks accepted, max_ids is %" G_GINT64_FORMAT, r->blocks->len, lim.max_ids);
	for (guint bi = 0; bi < r->blocks->len; bi++) {
		const request_block *b = g_ptr_array_index(r->blocks, bi);
		g_autofree char *json = request_block_fields_json(b);

		if (b->description == NULL)
			fuzz_fail("block %u has no description string", bi);
		if (r->errors->len == 0 && b->fields->len > (guint) lim.max_fields)
			fuzz_fail("%u fields accepted, max_fields is %" G_GINT64_FORMAT, b->fields->len,
				  lim.max_fields);
		for (guint i = 0; i < b->fields->len; i++) {
			const request_field *f = g_ptr_array_index(b->fields, i);

			if (f->key == NULL || *f->key == '\0' || strpbrk(f->key, "\r\n:") != NULL)
				fuzz_fail("field name '%s' is not a name", f->key != NULL ? f->key : "(null)");
			if (f->value == NULL || strpbrk(f->value, "\r\n") != NULL)
				fuzz_fail("field %s: the value is not one line", f->key);
			if (!g_utf8_validate(f->value, -1, NULL))
				fuzz_fail("field %s: the value is not UTF-8", f->key);
			if (r->errors->len == 0 && g_utf8_strlen(f->value, -1) > lim.max_field_length)
				fuzz_fail("field %s: %ld characters accepted", f->key, g_utf8_strlen(f->value, -1));
		}
		check_fields_json(json, b->fields->len);
		(void) request_block_title(b, subject);
		(void) request_block_get(b, "Embargo");
	}
	return 0;
}
