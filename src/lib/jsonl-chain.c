/* jsonl-chain.c - hash-chained JSON lines (see jsonl-chain.h) */
#include "autoconfig.h"

#include <string.h>

#include "canonjson.h"
#include "jsonl-chain.h"

void
jsonl_chain_seal(GString *line, gsize start, gboolean *first, const char *prev, char hash_out[65])
{
	g_autofree char *h = NULL;

	canonjson_member_str(line, first, "prev", prev);
	h = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) line->str + start,
					line->len - start);
	canonjson_member_str(line, first, "hash", h);
	g_string_append_c(line, '}');
	if (hash_out != NULL)
		memcpy(hash_out, h, 65);
}

gboolean
jsonl_chain_is_hex64(const char *s, gsize len)
{
	if (len != 64)
		return FALSE;
	for (gsize i = 0; i < 64; i++)
		if (!g_ascii_isdigit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return FALSE;
	return TRUE;
}

char *
jsonl_chain_line_hash(const char *line, gsize len)
{
	if (len < JSONL_CHAIN_HASH_TAIL + 2 ||
	    memcmp(line + len - JSONL_CHAIN_HASH_TAIL, JSONL_CHAIN_HASH_KEY, JSONL_CHAIN_HASH_KEY_LEN) != 0 ||
	    memcmp(line + len - 2, "\"}", 2) != 0 ||
	    !jsonl_chain_is_hex64(line + len - JSONL_CHAIN_HASH_TAIL + JSONL_CHAIN_HASH_KEY_LEN, 64))
		return NULL;
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) line,
					   len - JSONL_CHAIN_HASH_TAIL);
}

gboolean
jsonl_chain_line_ok(const char *line, gsize len)
{
	g_autofree char *want = jsonl_chain_line_hash(line, len);

	return want != NULL &&
	       memcmp(line + len - JSONL_CHAIN_HASH_TAIL + JSONL_CHAIN_HASH_KEY_LEN, want, 64) == 0;
}

const char *
jsonl_chain_line_prev(const char *line, gsize len)
{
	const gsize at = JSONL_CHAIN_HASH_TAIL + JSONL_CHAIN_PREV_KEY_LEN + 64 + 1;
	const char *pv;

	if (len < at)
		return NULL;
	pv = line + len - at;
	if (memcmp(pv, JSONL_CHAIN_PREV_KEY, JSONL_CHAIN_PREV_KEY_LEN) != 0 ||
	    pv[JSONL_CHAIN_PREV_KEY_LEN + 64] != '"')
		return NULL;
	return pv + JSONL_CHAIN_PREV_KEY_LEN;
}
