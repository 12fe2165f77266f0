/* feed-private.h - what feed.c, feed-export.c and feed-verify.c share
 * beyond feed.h: the chain's constants and small helpers */
#ifndef VULNID_FEED_PRIVATE_H
#define VULNID_FEED_PRIVATE_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "jsonl-chain.h"

#define HASH_KEY_LEN JSONL_CHAIN_HASH_KEY_LEN
#define HASH_TAIL JSONL_CHAIN_HASH_TAIL
#define GENESIS JSONL_CHAIN_GENESIS
#define feed_is_hex64 jsonl_chain_is_hex64

char *feed_sha256_hex(const char *data, gsize len);
/* Parse text that must be canonical JSON of the given node type; the
 * canonical text back, or NULL. */
char *feed_canonical_of(const char *text, JsonNodeType type);
/* Whether name is a year file, YYYY.jsonl; its year. */
gboolean feed_year_file_name(const char *name, int *year);
/* A regular file of at most max bytes, or NULL with *err_no set. */
GBytes *feed_read_small(const char *path, gsize max, int *err_no);

static inline const char *
obj_str(JsonObject *o, const char *name)
{
	JsonNode *n = json_object_get_member(o, name);

	if (n == NULL || JSON_NODE_TYPE(n) != JSON_NODE_VALUE || json_node_get_value_type(n) != G_TYPE_STRING)
		return NULL;
	return json_node_get_string(n);
}

static inline gboolean
obj_int(JsonObject *o, const char *name, gint64 *v)
{
	JsonNode *n = json_object_get_member(o, name);

	if (n == NULL || JSON_NODE_TYPE(n) != JSON_NODE_VALUE || json_node_get_value_type(n) != G_TYPE_INT64)
		return FALSE;
	*v = json_node_get_int(n);
	return TRUE;
}

#endif
