/* jsonb.c - JsonBuilder helpers (see jsonb.h) */
#include "autoconfig.h"

#include "jsonb.h"

void
jsonb_str_or_null(JsonBuilder *b, const char *name, const char *v)
{
	json_builder_set_member_name(b, name);
	if (v != NULL)
		json_builder_add_string_value(b, v);
	else
		json_builder_add_null_value(b);
}

void
jsonb_str_opt(JsonBuilder *b, const char *name, const char *v)
{
	if (v == NULL)
		return;
	json_builder_set_member_name(b, name);
	json_builder_add_string_value(b, v);
}

void
jsonb_str_array(JsonBuilder *b, const char *name, const GPtrArray *a)
{
	json_builder_set_member_name(b, name);
	json_builder_begin_array(b);
	for (guint i = 0; i < a->len; i++)
		json_builder_add_string_value(b, g_ptr_array_index(a, i));
	json_builder_end_array(b);
}

void
jsonb_str_array_of(JsonBuilder *b, const char *name, const GPtrArray *a, jsonb_str_fn get)
{
	json_builder_set_member_name(b, name);
	json_builder_begin_array(b);
	for (guint i = 0; i < a->len; i++)
		json_builder_add_string_value(b, get(g_ptr_array_index(a, i)));
	json_builder_end_array(b);
}
