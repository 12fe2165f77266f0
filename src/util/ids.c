/* ids.c - identifier syntax and block arithmetic */
#include "autoconfig.h"

#include <string.h>

#include "ids.h"

gboolean
ids_prefix_valid(const char *prefix)
{
	size_t n;

	if (prefix == NULL)
		return FALSE;
	n = strlen(prefix);
	if (n < IDS_PREFIX_MIN || n > IDS_PREFIX_MAX)
		return FALSE;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isupper(prefix[i]) && !g_ascii_isdigit(prefix[i]))
			return FALSE;
	/* Our identifiers must never be mistaken for CVE identifiers. */
	return strcmp(prefix, "CVE") != 0;
}

char *
ids_format(const char *prefix, int year, gint64 number)
{
	return g_strdup_printf("%s-%04d-%04" G_GINT64_FORMAT, prefix, year, number);
}

static gboolean
ids_all_digits(const char *s, size_t n)
{
	if (n == 0)
		return FALSE;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isdigit(s[i]))
			return FALSE;
	return TRUE;
}

gboolean
ids_parse(const char *id, char **prefix, int *year, gint64 *number)
{
	const char *d1, *d2;
	size_t plen, nlen;
	g_autofree char *p = NULL;

	if (id == NULL)
		return FALSE;
	d1 = strchr(id, '-');
	if (d1 == NULL)
		return FALSE;
	d2 = strchr(d1 + 1, '-');
	if (d2 == NULL || d2 - d1 != 5)
		return FALSE;
	plen = (size_t) (d1 - id);
	nlen = strlen(d2 + 1);
	p = g_strndup(id, plen);
	if (!ids_prefix_valid(p) || !ids_all_digits(d1 + 1, 4) ||
	    !ids_all_digits(d2 + 1, nlen) || nlen < 4 || nlen > 15)
		return FALSE;
	/* Zero padding is to four digits exactly: 00012 is not 0012. */
	if (nlen > 4 && d2[1] == '0')
		return FALSE;
	if (year != NULL)
		*year = (int) g_ascii_strtoll(d1 + 1, NULL, 10);
	if (number != NULL)
		*number = g_ascii_strtoll(d2 + 1, NULL, 10);
	if (prefix != NULL)
		*prefix = g_steal_pointer(&p);
	return TRUE;
}

static gboolean
ids_parse_number(const char *s, gint64 *out)
{
	char *end = NULL;
	guint64 v;

	if (!g_ascii_isdigit(*s))
		return FALSE;
	v = g_ascii_strtoull(s, &end, 10);
	if (*end != '\0' || v < 1 || v > (guint64) IDS_NUMBER_MAX)
		return FALSE;
	*out = (gint64) v;
	return TRUE;
}

gboolean
ids_blocks_parse(const char *spec, GArray **out, GError **err)
{
	g_autoptr(GArray) blocks = g_array_new(FALSE, FALSE, sizeof(ids_block));
	g_auto(GStrv) parts = NULL;

	if (spec == NULL || *spec == '\0') {
		g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
			    "no blocks given");
		return FALSE;
	}
	parts = g_strsplit(spec, ",", -1);
	for (char **p = parts; *p; p++) {
		g_autofree char *r = g_strstrip(g_strdup(*p));
		char *dash = strchr(r, '-');
		ids_block b;

		if (dash == NULL) {
			if (!ids_parse_number(r, &b.first))
				goto bad;
			b.last = b.first;
		} else {
			*dash = '\0';
			if (!ids_parse_number(g_strstrip(r), &b.first))
				goto bad;
			if (*g_strstrip(dash + 1) == '\0')
				b.last = IDS_NUMBER_MAX;
			else if (!ids_parse_number(dash + 1, &b.last))
				goto bad;
			if (b.last < b.first)
				goto bad;
		}
		if (blocks->len > 0 &&
		    g_array_index(blocks, ids_block, blocks->len - 1).last >= b.first) {
			g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
				    "blocks must be in ascending order without overlap: '%s'", spec);
			return FALSE;
		}
		g_array_append_val(blocks, b);
		continue;
bad:
		g_set_error(err, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
			    "'%s' is not a range N-M or N- of numbers from 1 upward", *p);
		return FALSE;
	}
	*out = g_steal_pointer(&blocks);
	return TRUE;
}

gboolean
ids_blocks_next(const GArray *blocks, gint64 last, gint64 *next)
{
	for (guint i = 0; i < blocks->len; i++) {
		const ids_block *b = &g_array_index(blocks, ids_block, i);

		if (b->last <= last)
			continue;
		*next = last < b->first ? b->first : last + 1;
		return TRUE;
	}
	return FALSE;
}
