/* text.c - text handling for hostile mail content */
#include "autoconfig.h"

#include <string.h>

#include "text.h"

char *
text_to_utf8(const char *data, gsize len, const char *charset, gsize *out_len)
{
	gsize written = 0;
	char *out;

	if (data == NULL || len == 0) {
		if (out_len != NULL)
			*out_len = 0;
		return g_strdup("");
	}
	if (charset != NULL && g_ascii_strcasecmp(charset, "utf-8") != 0 &&
	    g_ascii_strcasecmp(charset, "us-ascii") != 0) {
		out = g_convert(data, (gssize) len, "UTF-8", charset, NULL, &written, NULL);
		if (out != NULL && g_utf8_validate_len(out, written, NULL))
			goto done;
		g_free(out);
	}
	if (g_utf8_validate_len(data, len, NULL)) {
		out = g_malloc(len + 1);
		memcpy(out, data, len);
		out[len] = '\0';
		written = len;
		goto done;
	}
	out = g_convert(data, (gssize) len, "UTF-8", "WINDOWS-1252", NULL, &written, NULL);
	if (out == NULL) {
		/* windows-1252 leaves five bytes undefined; iconv may refuse them. */
		out = g_utf8_make_valid(data, (gssize) len);
		written = strlen(out);
	}
done:
	if (out_len != NULL)
		*out_len = written;
	return out;
}

char *
text_to_utf8_prefix(const char *data, gsize len, const char *charset, gsize *out_len)
{
	if (data == NULL || len == 0)
		return text_to_utf8(data, len, charset, out_len);
	if (charset != NULL && g_ascii_strcasecmp(charset, "utf-8") != 0 &&
	    g_ascii_strcasecmp(charset, "us-ascii") != 0) {
		/* Asked for bytes_read, g_convert() leaves out a character cut
		 * at the end instead of failing. */
		gsize read = 0, written = 0;
		char *out = g_convert(data, (gssize) len, "UTF-8", charset, &read, &written, NULL);

		if (out != NULL && g_utf8_validate_len(out, written, NULL)) {
			if (out_len != NULL)
				*out_len = written;
			return out;
		}
		g_free(out);
	}
	{
		const char *end = NULL;

		/* UTF-8 cut inside its last character: valid up to there */
		if (!g_utf8_validate_len(data, len, &end) && end != NULL &&
		    len - (gsize) (end - data) < 4 &&
		    g_utf8_get_char_validated(end, (gssize) (len - (gsize) (end - data))) == (gunichar) -2)
			len = (gsize) (end - data);
	}
	return text_to_utf8(data, len, NULL, out_len);
}

static gboolean
text_unsafe_char(gunichar c)
{
	if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0))
		return TRUE;
	if (c == 0x2028 || c == 0x2029)		/* line, paragraph separator */
		return TRUE;
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	    c == 0x200e || c == 0x200f || c == 0x061c)	/* bidi controls */
		return TRUE;
	return c == 0xfeff;
}

/* The character at p (NUL-terminated), and where the next one starts;
 * an invalid byte is U+FFFD, as g_utf8_make_valid() has it. */
static gunichar
next_char(const char *p, const char **next)
{
	gunichar c = g_utf8_get_char_validated(p, -1);

	if (c == (gunichar) -1 || c == (gunichar) -2 || c == 0) {
		*next = p + 1;
		return 0xfffd;
	}
	*next = g_utf8_next_char(p);
	return c;
}

char *
text_clean_line(const char *s, gsize max_chars)
{
	const char *next;
	GString *out;
	gboolean space = FALSE;
	gsize chars = 0;

	if (s == NULL)
		return g_strdup("");
	/* Linear in what is read: the input is validated character by
	 * character and reading stops once max_chars are out, so a short
	 * head of a long value costs as much as the head. */
	out = g_string_new(NULL);
	for (const char *p = s; *p; p = next) {
		gunichar c = next_char(p, &next);

		if (text_unsafe_char(c) || g_unichar_isspace(c)) {
			space = out->len > 0;
			continue;
		}
		if (max_chars > 0 && chars + (space ? 1 : 0) >= max_chars)
			break;
		if (space) {
			g_string_append_c(out, ' ');
			chars++;
			space = FALSE;
		}
		g_string_append_unichar(out, c);
		chars++;
	}
	return g_string_free(out, FALSE);
}

char *
text_encoded_words_b(const char *s)
{
	static const char head[] = "=?UTF-8?B?";
	GString *out = g_string_new(NULL);
	const char *p = s != NULL ? s : "";

	/* At most 45 bytes of UTF-8 per word: 60 base64 characters, 72 with
	 * the frame, under the 75 of RFC 2047; never a character split. */
	while (*p) {
		const char *q = p;
		g_autofree char *b64 = NULL;

		while (*q && (q == p || (gsize) (g_utf8_next_char(q) - p) <= 45))
			q = g_utf8_next_char(q);
		b64 = g_base64_encode((const guchar *) p, (gsize) (q - p));
		g_string_append_printf(out, "%s%s%s?=", out->len ? " " : "", head, b64);
		p = q;
	}
	return g_string_free(out, FALSE);
}

char *
text_mask_controls(const char *s)
{
	g_autofree char *valid = NULL;
	GString *out;

	if (s == NULL)
		return g_strdup("(null)");
	if (!g_utf8_validate(s, -1, NULL))
		s = valid = g_utf8_make_valid(s, -1);
	out = g_string_new(NULL);
	for (const char *p = s; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c < 0x20 || c == 0x7f)
			g_string_append_printf(out, "\\x%02x", c);
		else if (text_unsafe_char(c))
			g_string_append_printf(out, "\\u%04x", c);
		else
			g_string_append_unichar(out, c);
	}
	return g_string_free(out, FALSE);
}

char *
text_normalize_newlines(const char *s)
{
	GString *out;

	if (s == NULL)
		return g_strdup("");
	out = g_string_sized_new(strlen(s));

	for (const char *p = s; *p; p++) {
		if (*p == '\r') {
			g_string_append_c(out, '\n');
			if (p[1] == '\n')
				p++;
		} else
			g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

char *
text_unflow(const char *s, gboolean delsp)
{
	g_auto(GStrv) lines = g_strsplit(s, "\n", -1);
	GString *out = g_string_new(NULL);

	for (char **l = lines; *l; l++) {
		char *line = *l;
		gsize len;
		gboolean soft;

		if (*line == ' ')	/* space-stuffed */
			line++;
		len = strlen(line);
		/* A soft break is a trailing space, except on the signature line. */
		soft = len > 0 && line[len - 1] == ' ' && strcmp(line, "-- ") != 0 && l[1] != NULL;
		if (soft && delsp)
			len--;
		g_string_append_len(out, line, (gssize) len);
		if (!soft && l[1] != NULL)
			g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}

/* HTML entities worth knowing; numeric ones are decoded generically. */
static const struct {
	const char *name;
	gunichar c;
} html_entities[] = {
	{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' },
	{ "nbsp", ' ' }, { "copy", 0xa9 }, { "reg", 0xae }, { "hellip", 0x2026 },
	{ "mdash", 0x2014 }, { "ndash", 0x2013 }, { "lsquo", 0x2018 }, { "rsquo", 0x2019 },
	{ "ldquo", 0x201c }, { "rdquo", 0x201d }, { "bull", 0x2022 }, { "euro", 0x20ac },
};

static const char *const html_block_tags[] = {
	"br", "p", "div", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
	"blockquote", "table", "ul", "ol", "hr", "dt", "dd", "section", "article",
};

static const char *
html_entity(const char *p, GString *out)
{
	const char *semi;
	gsize n;

	/* p points after '&' */
	semi = p;
	while (*semi && *semi != ';' && semi - p < 10)
		semi++;
	if (*semi != ';') {
		g_string_append_c(out, '&');
		return p;
	}
	n = (gsize) (semi - p);
	if (n >= 2 && p[0] == '#') {
		guint64 v;
		char *end = NULL;

		if (p[1] == 'x' || p[1] == 'X')
			v = g_ascii_strtoull(p + 2, &end, 16);
		else
			v = g_ascii_strtoull(p + 1, &end, 10);
		if (end == semi && v > 0 && v <= 0x10ffff && g_unichar_validate((gunichar) v)) {
			g_string_append_unichar(out, (gunichar) v);
			return semi + 1;
		}
	} else {
		for (gsize i = 0; i < G_N_ELEMENTS(html_entities); i++)
			if (strlen(html_entities[i].name) == n &&
			    strncmp(html_entities[i].name, p, n) == 0) {
				g_string_append_unichar(out, html_entities[i].c);
				return semi + 1;
			}
	}
	g_string_append_c(out, '&');
	return p;
}

/* Case-insensitive search for an ASCII needle that starts with '<'. */
static const char *
find_tag_ci(const char *p, const char *needle)
{
	gsize n = strlen(needle);

	while ((p = strchr(p, '<')) != NULL) {
		if (g_ascii_strncasecmp(p, needle, n) == 0)
			return p;
		p++;
	}
	return NULL;
}

char *
text_from_html(const char *html)
{
	GString *out = g_string_new(NULL);
	const char *p = html;
	const char *skip_until = NULL;	/* "</script" or "</style" */
	gboolean in_pre = FALSE, space = FALSE;

	while (*p) {
		if (skip_until != NULL) {
			const char *e = find_tag_ci(p, skip_until);

			if (e == NULL)
				break;
			p = e;
			skip_until = NULL;
			continue;
		}
		if (*p == '<') {
			const char *q = p + 1;
			gboolean closing = FALSE;
			char name[16];
			gsize n = 0;

			if (strncmp(p, "<!--", 4) == 0) {
				const char *e = strstr(p + 4, "-->");

				p = e != NULL ? e + 3 : p + strlen(p);
				continue;
			}
			if (*q == '/') {
				closing = TRUE;
				q++;
			}
			while (g_ascii_isalnum(*q) && n < sizeof name - 1)
				name[n++] = g_ascii_tolower(*q++);
			name[n] = '\0';
			while (*q && *q != '>')
				q++;
			p = *q ? q + 1 : q;
			if (!closing && strcmp(name, "script") == 0)
				skip_until = "</script";
			else if (!closing && strcmp(name, "style") == 0)
				skip_until = "</style";
			else if (strcmp(name, "pre") == 0)
				in_pre = !closing;
			for (gsize i = 0; i < G_N_ELEMENTS(html_block_tags); i++)
				if (strcmp(name, html_block_tags[i]) == 0) {
					if (out->len > 0 && out->str[out->len - 1] != '\n')
						g_string_append_c(out, '\n');
					space = FALSE;
					break;
				}
			continue;
		}
		if (!in_pre && g_ascii_isspace(*p)) {
			space = out->len > 0 && out->str[out->len - 1] != '\n';
			p++;
			continue;
		}
		if (space) {
			g_string_append_c(out, ' ');
			space = FALSE;
		}
		if (*p == '&')
			p = html_entity(p + 1, out);
		else
			g_string_append_c(out, *p++);
	}
	return g_string_free(out, FALSE);
}

gboolean
text_msgid_valid(const char *id)
{
	gsize n;

	if (id == NULL)
		return FALSE;
	n = strlen(id);
	if (n == 0 || n > 250 || strchr(id, '@') == NULL)
		return FALSE;
	for (const char *p = id; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '<' || *p == '>' || *p == '"' ||
		    *p == '(' || *p == ')' || *p == ',' || *p == ';' || *p == '\\')
			return FALSE;
	return TRUE;
}
