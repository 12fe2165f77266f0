/* jsonb.h - small additions to json-glib's JsonBuilder that the JSON
 * outputs (vendor list, OSV records, entry views) share */
#ifndef VULNID_JSONB_H
#define VULNID_JSONB_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* name: the string, or null when v is NULL. */
void jsonb_str_or_null(JsonBuilder *b, const char *name, const char *v);
/* name: the string; no member at all when v is NULL. */
void jsonb_str_opt(JsonBuilder *b, const char *name, const char *v);
/* name: an array of the strings in a (char *). */
void jsonb_str_array(JsonBuilder *b, const char *name, const GPtrArray *a);

/* The string of one item of an array, for jsonb_str_array_of(). */
typedef const char *(*jsonb_str_fn)(gconstpointer item);
/* name: an array of get(item) for every item of a. */
void jsonb_str_array_of(JsonBuilder *b, const char *name, const GPtrArray *a, jsonb_str_fn get);

#endif
