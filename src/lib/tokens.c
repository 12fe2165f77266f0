/* tokens.c - capability tokens (tokens.h) */
#include "autoconfig.h"

#include <string.h>

#include "random.h"
#include "store-tokens.h"
#include "tokens.h"

/* The key of a token row: "t:" and the SHA-256 of the token (lower case)
 * as hex.  Rows of tokens of the old shape are keyed by the bare hex, and
 * every hex digit sorts before 't': whether any such row exists is one
 * probe of the primary key's index (store_tokens_legacy()). */
#define KEY_PREFIX "t:"

static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

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

static gboolean
is_b32(char c)
{
	return g_ascii_isalpha(c) || (c >= '2' && c <= '7');
}

/* The checksum characters of prefix and random part s (lower case). */
static void
checksum(const char *s, char out[TOKENS_CHECK])
{
	g_autoptr(GChecksum) ck = g_checksum_new(G_CHECKSUM_SHA256);
	guint8 d[32];
	gsize dl = sizeof d;
	guint32 bits;

	g_checksum_update(ck, (const guchar *) s, TOKENS_PREFIX_LEN + TOKENS_RANDOM);
	g_checksum_get_digest(ck, d, &dl);
	bits = ((guint32) d[0] << 24 | (guint32) d[1] << 16 | (guint32) d[2] << 8 | d[3]) >> 2;
	for (int i = TOKENS_CHECK - 1; i >= 0; i--, bits >>= 5)
		out[i] = b32[bits & 31];
}

gboolean
tokens_valid(const char *s, gsize len)
{
	char low[TOKENS_LEN];
	char ck[TOKENS_CHECK];

	if (len != TOKENS_LEN || g_ascii_strncasecmp(s, TOKENS_PREFIX, TOKENS_PREFIX_LEN) != 0)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (i >= TOKENS_PREFIX_LEN && !is_b32(s[i]))
			return FALSE;
		low[i] = g_ascii_tolower(s[i]);
	}
	checksum(low, ck);
	return memcmp(ck, low + TOKENS_LEN - TOKENS_CHECK, TOKENS_CHECK) == 0;
}

/* A new token of the current shape. */
static char *
token_new(GError **err)
{
	guint8 r[17];	/* 136 bits, of which the first 130 are used */
	char *t = g_malloc(TOKENS_LEN + 1);
	guint acc = 0, nbits = 0, k = 0;

	if (!random_bytes(r, sizeof r, err)) {
		g_free(t);
		return NULL;
	}
	memcpy(t, TOKENS_PREFIX, TOKENS_PREFIX_LEN);
	for (gsize i = 0; i < sizeof r && k < TOKENS_RANDOM; i++) {
		acc = (acc << 8 | r[i]) & 0xfff;
		nbits += 8;
		while (nbits >= 5 && k < TOKENS_RANDOM) {
			nbits -= 5;
			t[TOKENS_PREFIX_LEN + k++] = b32[(acc >> nbits) & 31];
		}
	}
	checksum(t, t + TOKENS_PREFIX_LEN + TOKENS_RANDOM);
	t[TOKENS_LEN] = '\0';
	return t;
}

static char *
key_of(const char *token)
{
	g_autofree char *low = g_ascii_strdown(token, -1);
	g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, low, -1);

	if (g_ascii_strncasecmp(token, TOKENS_PREFIX, TOKENS_PREFIX_LEN) != 0)
		return g_steal_pointer(&sha);	/* the old shape */
	return g_strconcat(KEY_PREFIX, sha, NULL);
}

static vulnid_status
insert(store *st, const char *key, const char *entry_id, const char *role, const char *address, GError **err)
{
	g_autofree char *now = store_now();

	return store_tokens_insert(st, key, entry_id, role, address, now, err);
}

vulnid_status
tokens_issue(store *st, const char *entry_id, const char *role, const char *address, char **token,
	     GError **err)
{
	g_autofree char *t = token_new(err);
	g_autofree char *key = NULL;
	vulnid_status s;

	*token = NULL;
	if (t == NULL)
		return VULNID_ERR_TEMP;
	key = key_of(t);
	s = insert(st, key, entry_id, role, address, err);
	if (s == VULNID_OK)
		*token = g_steal_pointer(&t);
	return s;
}

char *
tokens_mark_key(GError **err)
{
	g_autofree char *t = token_new(err);

	return t != NULL ? key_of(t) : NULL;
}

vulnid_status
tokens_mark(store *st, const char *entry_id, const char *role, const char *address, GError **err)
{
	g_autofree char *key = tokens_mark_key(err);

	if (key == NULL)
		return VULNID_ERR_TEMP;
	return insert(st, key, entry_id, role, address, err);
}

vulnid_status
tokens_find(store *st, const char *token, token_row **out, GError **err)
{
	g_autofree char *key = NULL;
	gboolean found;
	token_row t = { 0 };
	vulnid_status s;

	*out = NULL;
	if (g_ascii_strncasecmp(token, TOKENS_PREFIX, TOKENS_PREFIX_LEN) == 0 && !tokens_valid(token, strlen(token)))
		return VULNID_OK;	/* mistyped or made up: no lookup */
	key = key_of(token);
	s = store_tokens_find(st, key, &found, &t.entry, &t.role, &t.address, err);
	if (s == VULNID_OK && found) {
		*out = g_new(token_row, 1);
		**out = t;
	}
	return s;
}

char *
tokens_line_value(const char *v)
{
	gsize n = strlen(v);

	if (n == TOKENS_LEN && g_ascii_strncasecmp(v, TOKENS_PREFIX, TOKENS_PREFIX_LEN) == 0) {
		for (gsize i = TOKENS_PREFIX_LEN; i < n; i++)
			if (!is_b32(v[i]))
				return NULL;
		return g_ascii_strdown(v, -1);
	}
	if (n < 24 || n > 128)
		return NULL;
	for (gsize i = 0; i < n; i++)
		if (!g_ascii_isxdigit(v[i]))
			return NULL;
	return g_ascii_strdown(v, -1);
}

/* ---- redaction ------------------------------------------------------------ */

static void
count_valid(const char *token, guint *n, GPtrArray *valid)
{
	if (n != NULL)
		(*n)++;
	if (valid != NULL)
		g_ptr_array_add(valid, g_ascii_strdown(token, TOKENS_LEN));
}

/* The length of the run of base32 characters at s, counting at most max. */
static gsize
b32_run(const char *s, gsize max)
{
	gsize k = 0;

	while (k < max && s[k] != '\0' && is_b32(s[k]))
		k++;
	return k;
}

/* What tokens_redact_shape() does; the tokens whose checksum holds are
 * added to valid (lower case) when it is not NULL. */
static char *
redact_shape(const char *text, guint *nvalid, GPtrArray *valid)
{
	GString *out;
	gsize i = 0, n;

	if (text == NULL)
		return NULL;
	n = strlen(text);
	out = g_string_sized_new(n);
	while (i < n) {
		const char *p = text + i;

		/* The prefix, anywhere (glued to other letters or not), with
		 * enough of a body to be a token or most of one. */
		if ((*p == 'v' || *p == 'V') && g_ascii_strncasecmp(p, TOKENS_PREFIX, TOKENS_PREFIX_LEN) == 0) {
			gsize k = b32_run(p + TOKENS_PREFIX_LEN, TOKENS_BODY);

			if (k >= TOKENS_SHAPE_MIN) {
				if (k == TOKENS_BODY && tokens_valid(p, TOKENS_LEN))
					count_valid(p, nvalid, valid);
				g_string_append(out, TOKENS_REMOVED);
				i += TOKENS_PREFIX_LEN + k;
				continue;
			}
		}
		/* A body without its prefix, as a word of its own: only when
		 * its checksum holds (a word of 32 such letters is rare, one
		 * whose checksum holds by chance one in a billion). */
		if (is_b32(*p) && (i == 0 || !g_ascii_isalnum(p[-1]))) {
			gsize k = b32_run(p, TOKENS_BODY + 1);

			if (k == TOKENS_BODY && !g_ascii_isalnum(p[k])) {
				char t[TOKENS_LEN];

				memcpy(t, TOKENS_PREFIX, TOKENS_PREFIX_LEN);
				memcpy(t + TOKENS_PREFIX_LEN, p, TOKENS_BODY);
				if (tokens_valid(t, TOKENS_LEN)) {
					count_valid(t, nvalid, valid);
					g_string_append(out, TOKENS_REMOVED);
					i += k;
					continue;
				}
			}
		}
		g_string_append_c(out, *p);
		i++;
	}
	return g_string_free(out, FALSE);
}

char *
tokens_redact_shape(const char *text, guint *valid)
{
	return redact_shape(text, valid, NULL);
}

/* Whether the 32 hex digits at s are a token of the old shape. */
static vulnid_status
legacy_known(store *st, GChecksum *ck, const char *s, gboolean *yes, GError **err)
{
	char low[TOKENS_LEGACY_HEX];

	for (gsize i = 0; i < TOKENS_LEGACY_HEX; i++)
		low[i] = g_ascii_tolower(s[i]);
	g_checksum_reset(ck);
	g_checksum_update(ck, (const guchar *) low, TOKENS_LEGACY_HEX);
	return store_tokens_known(st, g_checksum_get_string(ck), yes, err);
}

/* The second pass: tokens of the old shape.  Each window of 32 digits of
 * every run of hex digits is a candidate, whatever surrounds it (a token
 * glued to "0x" or to other digits; a 40-digit commit id is nine): one
 * lookup per digit at most, so linear in the text, and none at all when
 * no such token was ever issued here. */
static vulnid_status
redact_legacy(store *st, char **text, guint *found, GError **err)
{
	const char *s = *text;
	g_autoptr(GString) out = NULL;
	g_autoptr(GChecksum) ck = NULL;
	gboolean checked = FALSE, any = FALSE, changed = FALSE;
	gsize i = 0, n = strlen(s);
	vulnid_status r;

	out = g_string_sized_new(n);
	while (i < n) {
		gsize j = i, last = i;

		if (!g_ascii_isxdigit(s[i])) {
			g_string_append_c(out, s[i++]);
			continue;
		}
		while (j < n && g_ascii_isxdigit(s[j]))
			j++;
		if (j - i >= TOKENS_LEGACY_HEX && !checked) {
			checked = TRUE;
			r = store_tokens_legacy(st, &any, err);
			if (r != VULNID_OK)
				return r;
			ck = g_checksum_new(G_CHECKSUM_SHA256);
		}
		for (gsize w = i; any && w + TOKENS_LEGACY_HEX <= j;) {
			gboolean hit = FALSE;

			r = legacy_known(st, ck, s + w, &hit, err);
			if (r != VULNID_OK)
				return r;
			if (!hit) {
				w++;
				continue;
			}
			g_string_append_len(out, s + last, (gssize) (w - last));
			g_string_append(out, TOKENS_REMOVED);
			w += TOKENS_LEGACY_HEX;
			last = w;
			changed = TRUE;
			if (found != NULL)
				(*found)++;
		}
		g_string_append_len(out, s + last, (gssize) (j - last));
		i = j;
	}
	if (changed) {
		g_free(*text);
		*text = g_string_free(g_steal_pointer(&out), FALSE);
	}
	return VULNID_OK;
}

vulnid_status
tokens_redact(store *st, char **text, guint *found, GError **err)
{
	g_autoptr(GPtrArray) valid = g_ptr_array_new_with_free_func(g_free);
	char *shaped;

	if (*text == NULL)
		return VULNID_OK;
	shaped = redact_shape(*text, NULL, found != NULL ? valid : NULL);
	g_free(*text);
	*text = shaped;
	/* Which of those this robot issued: one lookup for each token whose
	 * checksum holds (each took 39 bytes of the text). */
	for (guint i = 0; i < valid->len; i++) {
		g_autofree char *key = key_of(g_ptr_array_index(valid, i));
		gboolean yes = FALSE;
		vulnid_status s = store_tokens_known(st, key, &yes, err);

		if (s != VULNID_OK)
			return s;
		*found += yes;
	}
	return redact_legacy(st, text, found, err);
}
