/* tokens.c - capability tokens (tokens.h) */
#include "autoconfig.h"

#include <string.h>

#include "random.h"
#include "store-tokens.h"
#include "tokens.h"

void
token_row_free(gpointer p)
{
	token_row *t = p;

	if (t == NULL)
		return;
	g_free(t->entry);
	g_free(t->role);
	g_free(t->address);
	g_free(t);
}

static vulnid_status
insert(store *st, const char *sha, const char *entry_id, const char *role, const char *address, GError **err)
{
	g_autofree char *now = store_now();

	return store_tokens_insert(st, sha, entry_id, role, address, now, err);
}

vulnid_status
tokens_issue(store *st, const char *entry_id, const char *role, const char *address, char **token,
	     GError **err)
{
	g_autofree char *t = random_hex(TOKENS_HEX / 2, err);
	g_autofree char *sha = NULL;
	vulnid_status s;

	*token = NULL;
	if (t == NULL)
		return VULNID_ERR_TEMP;
	sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, t, -1);
	s = insert(st, sha, entry_id, role, address, err);
	if (s == VULNID_OK)
		*token = g_steal_pointer(&t);
	return s;
}

vulnid_status
tokens_mark(store *st, const char *entry_id, const char *role, const char *address, GError **err)
{
	g_autofree char *t = random_hex(TOKENS_HEX / 2, err);
	g_autofree char *sha = NULL;

	if (t == NULL)
		return VULNID_ERR_TEMP;
	sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, t, -1);
	return insert(st, sha, entry_id, role, address, err);
}

vulnid_status
tokens_find(store *st, const char *token, token_row **out, GError **err)
{
	g_autofree char *low = g_ascii_strdown(token, -1);
	g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, low, -1);
	gboolean found;
	token_row t = { 0 };
	vulnid_status s;

	*out = NULL;
	s = store_tokens_find(st, sha, &found, &t.entry, &t.role, &t.address, err);
	if (s == VULNID_OK && found) {
		*out = g_new(token_row, 1);
		**out = t;
	}
	return s;
}

/* Whether s[at..at+TOKENS_HEX) is a token; one lookup from the budget. */
static vulnid_status
window_is_token(store *st, const char *s, gsize at, guint *budget, gboolean *yes, GError **err)
{
	g_autofree char *cand = g_strndup(s + at, TOKENS_HEX);
	g_autoptr(token_row) row = NULL;
	vulnid_status r;

	*yes = FALSE;
	if (*budget == 0)
		return VULNID_OK;
	(*budget)--;
	r = tokens_find(st, cand, &row, err);
	*yes = row != NULL;
	return r;
}

vulnid_status
tokens_scrub(store *st, char **text, guint *budget, GError **err)
{
	const char *s = *text;
	g_autoptr(GString) out = NULL;
	gboolean changed = FALSE;
	gsize i = 0, n;

	if (s == NULL)
		return VULNID_OK;
	n = strlen(s);
	out = g_string_sized_new(n);
	while (i < n) {
		gsize j = i, len, at = 0;
		gboolean hit = FALSE;
		vulnid_status r = VULNID_OK;

		if (!g_ascii_isxdigit(s[i])) {
			g_string_append_c(out, s[i++]);
			continue;
		}
		while (j < n && g_ascii_isxdigit(s[j]))
			j++;
		len = j - i;
		/* A token may be glued to letters or digits on either side
		 * ("Token:abc...", "0x..."): the run's first and last 32
		 * digits are tried, and every window of a short run. */
		if (len >= TOKENS_HEX && len <= 128) {
			gsize last = len - TOKENS_HEX;

			for (gsize w = 0; w <= last && !hit && r == VULNID_OK; w++) {
				if (len > TOKENS_HEX + 8 && w != 0 && w != last)
					continue;
				r = window_is_token(st, s, i + w, budget, &hit, err);
				at = w;
			}
		}
		if (r != VULNID_OK)
			return r;
		if (hit) {
			g_string_append_len(out, s + i, (gssize) at);
			g_string_append(out, "[token removed]");
			g_string_append_len(out, s + i + at + TOKENS_HEX, (gssize) (len - at - TOKENS_HEX));
			changed = TRUE;
		} else
			g_string_append_len(out, s + i, (gssize) len);
		i = j;
	}
	if (changed) {
		g_free(*text);
		*text = g_string_free(g_steal_pointer(&out), FALSE);
	}
	return VULNID_OK;
}
