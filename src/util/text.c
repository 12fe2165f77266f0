/* text.c - text handling for hostile mail content */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

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

/* One RFC 2047 encoded word at p ("=?charset?B|Q?text?="): its charset
 * (language suffix dropped), its bytes appended to out, and where it ends;
 * FALSE when p is no encoded word. */
static gboolean
encoded_word(const char *p, char **charset, GByteArray *out, const char **end, const char **no_end)
{
	const char *cs = p + 2, *q, *text, *stop;
	char enc;

	if (p[0] != '=' || p[1] != '?')
		return FALSE;
	for (q = cs; *q && *q != '?' && !g_ascii_isspace(*q) && q - cs < 64; q++)
		;
	if (*q != '?' || q == cs)
		return FALSE;
	enc = g_ascii_toupper(q[1]);
	if ((enc != 'B' && enc != 'Q') || q[2] != '?')
		return FALSE;
	text = q + 3;
	/* a word without its end: so is every word that starts before the
	 * white space the search stopped at (a long run is read once) */
	if (text < *no_end)
		return FALSE;
	for (stop = text; *stop && !(stop[0] == '?' && stop[1] == '=') && !g_ascii_isspace(*stop); stop++)
		;
	if (stop[0] != '?' || stop[1] != '=') {
		*no_end = stop;
		return FALSE;
	}
	if (enc == 'B') {
		/* each word on its own: its padding ends only it */
		gsize n = (gsize) (stop - text), len;
		guchar *buf = g_malloc(n / 4 * 3 + 3);
		gint state = 0;
		guint save = 0;

		len = g_base64_decode_step(text, n, buf, &state, &save);
		g_byte_array_append(out, buf, (guint) len);
		g_free(buf);
	} else {
		for (const char *t = text; t < stop; t++) {
			guint8 b = (guint8) *t;

			if (*t == '_')
				b = ' ';
			else if (*t == '=' && t + 2 < stop && g_ascii_isxdigit(t[1]) && g_ascii_isxdigit(t[2])) {
				b = (guint8) (g_ascii_xdigit_value(t[1]) * 16 + g_ascii_xdigit_value(t[2]));
				t += 2;
			}
			g_byte_array_append(out, &b, 1);
		}
	}
	{
		const char *star = memchr(cs, '*', (gsize) (q - cs));

		*charset = g_strndup(cs, (gsize) ((star != NULL ? star : q) - cs));
	}
	*end = stop + 2;
	return TRUE;
}

/* Bytes in charset (GMime's name for it, which knows the aliases mail
 * programs use) as UTF-8, appended to out. */
static void
append_converted(GString *out, GByteArray *bytes, const char *charset)
{
	const char *name = charset != NULL ? g_mime_charset_iconv_name(charset) : NULL;
	gsize n = 0;
	g_autofree char *u = text_to_utf8((const char *) bytes->data, bytes->len, name, &n);

	g_string_append_len(out, u, (gssize) n);
	g_byte_array_set_size(bytes, 0);
}

char *
text_decode_header(const char *raw)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GByteArray) run = g_byte_array_new();	/* adjacent words of one charset */
	g_autoptr(GByteArray) lit = g_byte_array_new();	/* what came since the last word */
	g_autoptr(GByteArray) word = g_byte_array_new();
	g_autofree char *run_charset = NULL;
	gboolean lit_space = TRUE;	/* lit is only white space */
	const char *p = raw != NULL ? raw : "";
	const char *no_end = p;

	while (*p) {
		char *cs = NULL;
		const char *end;
		gboolean first = run_charset == NULL;

		g_byte_array_set_size(word, 0);
		if (!encoded_word(p, &cs, word, &end, &no_end)) {
			g_byte_array_append(lit, (const guint8 *) p, 1);
			lit_space &= g_ascii_isspace(*p) != 0;
			p++;
			continue;
		}
		if (run_charset != NULL && lit_space && g_ascii_strcasecmp(cs, run_charset) == 0) {
			/* the same charset right after: one run (a character
			 * may be split between the words) */
			g_free(cs);
		} else {
			if (run_charset != NULL)
				append_converted(out, run, run_charset);
			g_free(run_charset);
			run_charset = cs;
		}
		/* white space between two encoded words is not shown */
		if (!lit_space || first)
			append_converted(out, lit, NULL);
		g_byte_array_set_size(lit, 0);
		lit_space = TRUE;
		g_byte_array_append(run, word->data, word->len);
		p = end;
	}
	if (run_charset != NULL)
		append_converted(out, run, run_charset);
	append_converted(out, lit, NULL);
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

/* The line at p (up to \n or the end) equals s, trailing white space aside. */
static gboolean
line_is(const char *p, const char *s)
{
	gsize n = strlen(s);

	if (strncmp(p, s, n) != 0)
		return FALSE;
	for (p += n; *p == ' ' || *p == '\t' || *p == '\r'; p++)
		;
	return *p == '\n' || *p == '\0';
}

static const char *
next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl != NULL ? nl + 1 : p + strlen(p);
}

char *
text_pgp_cleartext(const char *s)
{
	GString *out;
	const char *p = s, *begin;
	gboolean found = FALSE;

	if (s == NULL || strstr(s, "-----BEGIN PGP SIGNED MESSAGE-----") == NULL)
		return NULL;
	out = g_string_sized_new(strlen(s));
	while (*p) {
		const char *q, *text, *sig;

		if (!line_is(p, "-----BEGIN PGP SIGNED MESSAGE-----")) {
			begin = next_line(p);
			g_string_append_len(out, p, begin - p);
			p = begin;
			continue;
		}
		/* armor headers ("Hash: SHA256") up to a blank line */
		for (q = next_line(p); *q && !line_is(q, ""); q = next_line(q))
			;
		text = *q ? next_line(q) : q;
		for (sig = text; *sig && !line_is(sig, "-----BEGIN PGP SIGNATURE-----"); sig = next_line(sig))
			;
		for (q = sig; *q && !line_is(q, "-----END PGP SIGNATURE-----"); q = next_line(q))
			;
		if (*sig == '\0' || *q == '\0') {
			/* no complete block: the rest as it is */
			g_string_append(out, p);
			break;
		}
		for (const char *l = text; l < sig; l = next_line(l)) {
			const char *e = next_line(l);

			if (l[0] == '-' && l[1] == ' ')
				l += 2;
			g_string_append_len(out, l, e - l);
		}
		found = TRUE;
		p = next_line(q);
	}
	if (!found) {
		g_string_free(out, TRUE);
		return NULL;
	}
	return g_string_free(out, FALSE);
}

static gboolean
blank_line(const char *l)
{
	for (; *l; l++)
		if (!g_ascii_isspace(*l))
			return FALSE;
	return TRUE;
}

/* Words mail programs end an attribution with, in a few languages. */
static gboolean
attribution_text(const char *s)
{
	static const char *const words[] = {
		"wrote:", "writes:", "schrieb:", "crit :", "crit:", "escribi\xc3\xb3:", "scritto:",
		"schreef:", "napisa\xc5\x82:", "\xd0\xbd\xd0\xb0\xd0\xbf\xd0\xb8\xd1\x81\xd0\xb0\xd0\xbb",
		"skrev:", "kirjoitti:",
	};
	g_autofree char *low = g_utf8_strdown(s, -1);
	const char *lt = strrchr(s, '<');
	const char *at = lt != NULL ? strchr(lt, '@') : NULL;

	for (gsize i = 0; i < G_N_ELEMENTS(words); i++)
		if (strstr(low, words[i]) != NULL)
			return TRUE;
	/* "On <date>, Name <a@b.example>:" */
	return at != NULL && strchr(at, '>') != NULL;
}

/* Lines before line i that, with it (it ends in ':'), make an attribution
 * directly above a quote: 1 to 3, or 0 when they are none. */
/* The last character of line l that is not white space, or 0. */
static char
last_char(const char *l)
{
	gsize n = strlen(l);

	while (n > 0 && g_ascii_isspace(l[n - 1]))
		n--;
	return n > 0 ? l[n - 1] : '\0';
}

static guint
attribution_lines(char **lines, guint i)
{
	g_autofree char *last = NULL;

	/* cheap first: most lines do not end with a colon */
	if (last_char(lines[i]) != ':' || lines[i][0] == '>')
		return 0;
	last = g_strstrip(g_strdup(lines[i]));
	/* a line with the whole of it, or "wrote:" alone after a wrapped one */
	for (guint k = 1; k <= 3 && k <= i + 1; k++) {
		GString *joined = g_string_new(NULL);
		gboolean ok = TRUE;

		for (guint j = i + 1 - k; j <= i; j++) {
			if (blank_line(lines[j]) || lines[j][0] == '>')
				ok = FALSE;
			g_string_append_printf(joined, "%s%s", joined->len ? " " : "", lines[j]);
		}
		if (ok && joined->len <= 500 && attribution_text(joined->str) &&
		    (k > 1 || strlen(last) > 12 || i == 0 || blank_line(lines[i - 1]))) {
			g_string_free(joined, TRUE);
			return k;
		}
		g_string_free(joined, TRUE);
		if (!ok)
			break;
	}
	return 0;
}

/* Where an Outlook-style copy of the mail replied to starts at line i. */
static gboolean
outlook_separator(char **lines, guint i)
{
	const char *first = lines[i] + strspn(lines[i], " \t");
	g_autofree char *l = NULL;
	g_autofree char *low = NULL;
	gsize n, u = 0;

	/* cheap first: only these lines can start a separator */
	if (*first != '-' && *first != '_' && *first != 'F' && *first != 'f')
		return FALSE;
	l = g_strstrip(g_strdup(lines[i]));
	low = g_utf8_strdown(l, -1);
	n = strlen(l);

	if (g_str_has_prefix(l, "--") && g_str_has_suffix(l, "--") &&
	    (strstr(low, "original message") != NULL || strstr(low, "urspr\xc3\xbcngliche nachricht") != NULL ||
	     strstr(low, "message d'origine") != NULL || strstr(low, "mensaje original") != NULL))
		return TRUE;
	while (u < n && l[u] == '_')
		u++;
	if (u >= 10 && u == n) {
		for (guint j = i + 1; lines[j] != NULL && j <= i + 2; j++)
			if (g_ascii_strncasecmp(lines[j], "From:", 5) == 0)
				return TRUE;
		return FALSE;
	}
	return g_ascii_strncasecmp(l, "From:", 5) == 0 && lines[i + 1] != NULL &&
	       (g_ascii_strncasecmp(lines[i + 1], "Sent:", 5) == 0 ||
		g_ascii_strncasecmp(lines[i + 1], "Date:", 5) == 0);
}

char *
text_strip_quotes(const char *s, gboolean *stripped)
{
	g_auto(GStrv) lines = g_strsplit(s != NULL ? s : "", "\n", -1);
	guint n = g_strv_length(lines);
	g_autofree gboolean *drop = g_new0(gboolean, n + 1);
	g_autoptr(GString) out = g_string_new(NULL);
	gboolean quoting = FALSE, any = FALSE, text_before = FALSE;

	for (guint i = 0; i < n; i++) {
		if (outlook_separator(lines, i)) {
			for (guint j = i; j < n; j++)
				drop[j] = TRUE;
			any = TRUE;
			break;
		}
		if (lines[i][0] == '>') {
			if (!quoting && last_char(lines[i]) == ':') {
				/* "> On ..., X wrote:": an attribution quoted with the rest */
				g_autofree char *inner = g_strstrip(g_strdup(lines[i] + strspn(lines[i], "> ")));

				quoting = strlen(inner) > 12 && attribution_text(inner);
				any |= quoting;
			}
			drop[i] = quoting;
			continue;
		}
		if (blank_line(lines[i]))
			continue;
		{
			guint k = attribution_lines(lines, i), j = i + 1;

			while (k > 0 && j < n && blank_line(lines[j]))
				j++;
			if (k > 0 && j < n && lines[j][0] == '>') {
				for (guint a = i + 1 - k; a <= i; a++)
					drop[a] = TRUE;
				quoting = any = TRUE;
			}
		}
	}
	{
		/* nothing but '>' lines: all of it quotes another mail */
		gboolean own = FALSE, quote = FALSE;

		for (guint i = 0; i < n; i++) {
			own |= !drop[i] && lines[i][0] != '>' && !blank_line(lines[i]);
			quote |= lines[i][0] == '>';
		}
		if (quote && !own)
			for (guint i = 0; i < n; i++)
				drop[i] = any = TRUE;
	}
	/* out: kept lines; a run of dropped quote lines between kept text
	 * becomes "> [...]"; blank lines around what went collapse */
	for (guint i = 0; i < n; i++) {
		if (drop[i]) {
			guint j = i;
			gboolean later = FALSE;

			while (j < n && (drop[j] || blank_line(lines[j])))
				j++;
			for (guint k = j; k < n && !later; k++)
				later = !blank_line(lines[k]);
			if (text_before && later && lines[i][0] == '>')
				g_string_append(out, "> [...]\n\n");
			i = j - 1;
			continue;
		}
		if (!blank_line(lines[i]))
			text_before = TRUE;
		g_string_append(out, lines[i]);
		if (i + 1 < n)
			g_string_append_c(out, '\n');
	}
	if (stripped != NULL)
		*stripped = any;
	if (!any)
		return g_strdup(s != NULL ? s : "");
	while (out->len > 0 && g_ascii_isspace(out->str[out->len - 1]))
		g_string_truncate(out, out->len - 1);
	if (out->len > 0)
		g_string_append_c(out, '\n');
	return g_strdup(out->str);
}

/* A link target without its scheme and a trailing '/'. */
static char *
link_core(const char *s, gsize n)
{
	static const char *const schemes[] = { "http://", "https://", "mailto:", "ftp://" };

	for (gsize i = 0; i < G_N_ELEMENTS(schemes); i++) {
		gsize k = strlen(schemes[i]);

		if (n >= k && g_ascii_strncasecmp(s, schemes[i], k) == 0) {
			s += k;
			n -= k;
			break;
		}
	}
	while (n > 0 && s[n - 1] == '/')
		n--;
	return g_ascii_strdown(s, (gssize) n);
}

char *
text_unautolink(const char *v)
{
	GString *out = g_string_new(NULL);
	const char *p = v != NULL ? v : "";

	/* one pass: each "<target>" is compared with the word before it */
	while (*p) {
		const char *lt = strchr(p, '<'), *gt, *w, *t;
		gsize wl;

		if (lt == NULL) {
			g_string_append(out, p);
			break;
		}
		gt = strchr(lt + 1, '>');
		g_string_append_len(out, p, lt - p);
		p = lt;
		if (gt == NULL || memchr(lt + 1, '<', (gsize) (gt - lt - 1)) != NULL ||
		    memchr(lt + 1, ' ', (gsize) (gt - lt - 1)) != NULL ||
		    memchr(lt + 1, '\n', (gsize) (gt - lt - 1)) != NULL) {
			g_string_append_c(out, *p++);
			continue;
		}
		/* the word just before, in what was written so far */
		t = out->str + out->len;
		while (t > out->str && t[-1] == ' ')
			t--;
		for (w = t; w > out->str && w[-1] != ' ' && w[-1] != '\n' && w[-1] != '<'; w--)
			;
		wl = (gsize) (t - w);
		if (wl > 0) {
			g_autofree char *a = link_core(w, wl);
			g_autofree char *b = link_core(lt + 1, (gsize) (gt - lt - 1));

			if (*a != '\0' && strcmp(a, b) == 0) {
				g_string_truncate(out, (gsize) (t - out->str));
				p = gt + 1;
				continue;
			}
		}
		g_string_append_c(out, *p++);
	}
	return g_string_free(out, FALSE);
}

/* Where the lines after a break of line l start: under its value
 * ("  Digest:      x", "token: x"), after its bullet ("  - "), else at
 * its indentation. */
static gsize
wrap_hang(const char *l, gsize indent)
{
	const char *p = l + indent;
	const char *colon = strchr(p, ':');

	if ((p[0] == '-' || p[0] == '*') && p[1] == ' ')
		return indent + 2;
	if (colon != NULL && colon - p < 24 && colon[1] == ' ' && colon[2] == ' ') {
		const char *v = colon + 1;

		while (*v == ' ')
			v++;
		if (*v != '\0')
			return (gsize) g_utf8_pointer_to_offset(l, v);
	}
	return indent;
}

static void
wrap_line(GString *out, const char *l, gsize width, gssize force_hang)
{
	gsize indent = strspn(l, " "), hang, col;
	const char *p = l + indent;
	gboolean first_word = TRUE;

	if ((gsize) g_utf8_strlen(l, -1) <= width) {
		g_string_append(out, l);
		return;
	}
	hang = force_hang >= 0 ? (gsize) force_hang : wrap_hang(l, indent);
	if (hang + 20 > width)
		hang = indent + 20 > width ? 0 : indent;	/* no narrow column */
	g_string_append_len(out, l, (gssize) indent);
	col = indent;
	/* word by word, each with the spaces before it as written */
	while (*p) {
		const char *sep = p, *w, *e;
		gsize nsep, nw;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		w = p;
		for (e = w; *e && *e != ' '; e++)
			;
		nsep = (gsize) (w - sep);
		nw = (gsize) g_utf8_strlen(w, e - w);
		/* A word longer than a line, or a token, a digest, a URL or
		 * a key (32 characters or more) after a label, stays where it
		 * is: a break would not make the line short. */
		if (!first_word && col + nsep + nw > width && hang + nw <= width && (nw < 32 || col > 20)) {
			g_string_append_printf(out, "\n%*s", (int) hang, "");
			col = hang;
		} else {
			g_string_append_len(out, sep, (gssize) nsep);
			col += nsep;
		}
		g_string_append_len(out, w, e - w);
		col += nw;
		first_word = FALSE;
		p = e;
	}
}

static char *
wrap_all(const char *s, gsize width, gssize hang)
{
	g_auto(GStrv) lines = g_strsplit(s != NULL ? s : "", "\n", -1);
	GString *out = g_string_new(NULL);

	for (char **l = lines; *l != NULL; l++) {
		if (l != lines)
			g_string_append_c(out, '\n');
		wrap_line(out, *l, width, hang);
	}
	return g_string_free(out, FALSE);
}

char *
text_wrap(const char *s, gsize width)
{
	return wrap_all(s, width, -1);
}

char *
text_wrap_hanging(const char *s, gsize width, gsize hang)
{
	return wrap_all(s, width, (gssize) hang);
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

/* The href of an <a> tag whose attributes run from p to end, entities
 * decoded, when it is a link worth keeping (http, https, ftp, mailto), or
 * NULL. */
static char *
tag_href(const char *p, const char *end)
{
	for (; p + 5 < end; p++) {
		const char *v, *e;
		char quote = 0;
		g_autofree char *raw = NULL;
		GString *dec;

		if (g_ascii_strncasecmp(p, "href", 4) != 0 || (!g_ascii_isspace(p[-1]) && p[-1] != '"' && p[-1] != '\''))
			continue;
		for (v = p + 4; v < end && g_ascii_isspace(*v); v++)
			;
		if (v >= end || *v != '=')
			continue;
		for (v++; v < end && g_ascii_isspace(*v); v++)
			;
		if (v < end && (*v == '"' || *v == '\''))
			quote = *v++;
		for (e = v; e < end && (quote ? *e != quote : !g_ascii_isspace(*e)); e++)
			;
		if (e - v > 2048)
			return NULL;
		raw = g_strndup(v, (gsize) (e - v));
		dec = g_string_new(NULL);
		for (const char *q = raw; *q;)
			if (*q == '&')
				q = html_entity(q + 1, dec);
			else
				g_string_append_c(dec, *q++);
		g_strstrip(dec->str);
		if (g_ascii_strncasecmp(dec->str, "http://", 7) == 0 || g_ascii_strncasecmp(dec->str, "https://", 8) == 0 ||
		    g_ascii_strncasecmp(dec->str, "ftp://", 6) == 0 || g_ascii_strncasecmp(dec->str, "mailto:", 7) == 0) {
			char *clean = text_clean_line(dec->str, 2048);

			g_string_free(dec, TRUE);
			return clean;
		}
		g_string_free(dec, TRUE);
		return NULL;
	}
	return NULL;
}

/* The end of a link: its target after its text, unless the text says it
 * already ("https://x" for https://x, "a@b" for mailto:a@b). */
static void
link_end(GString *out, gsize start, char **href)
{
	g_autofree char *text = NULL;
	g_autofree char *a = NULL;
	g_autofree char *b = NULL;

	if (*href == NULL || start > out->len)
		goto done;
	text = g_strstrip(g_strndup(out->str + start, out->len - start));
	a = link_core(text, strlen(text));
	b = link_core(*href, strlen(*href));
	if (strcmp(a, b) != 0)
		g_string_append_printf(out, "%s<%s>", *text != '\0' ? " " : "", *href);
done:
	g_clear_pointer(href, g_free);
}

char *
text_from_html(const char *html)
{
	GString *out = g_string_new(NULL);
	const char *p = html;
	const char *skip_until = NULL;	/* "</script" or "</style" */
	gboolean in_pre = FALSE, space = FALSE;
	g_autofree char *href = NULL;	/* the open link's target */
	gsize link_start = 0;

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
			{
				const char *attrs = q;

				while (*q && *q != '>')
					q++;
				if (strcmp(name, "a") == 0) {
					if (closing)
						link_end(out, link_start, &href);
					else {
						link_end(out, link_start, &href);	/* unclosed before */
						href = tag_href(attrs, q);
						if (space && out->len > 0) {
							g_string_append_c(out, ' ');
							space = FALSE;
						}
						link_start = out->len;
					}
				}
			}
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
	link_end(out, link_start, &href);
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
