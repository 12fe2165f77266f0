/* template.c - load and render mail templates */
#include "autoconfig.h"

#include <string.h>

#include "template.h"
#include "text.h"

vulnid_status
template_load(const vulnid_config *cfg, const char *name, char **text, GError **err)
{
	const char *dirs[2] = { cfg != NULL ? cfg->template_dir : NULL, config_builtin_template_dir() };
	g_autoptr(GError) e = NULL;

	for (gsize i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *path = NULL;
		gsize len;

		if (dirs[i] == NULL)
			continue;
		path = g_build_filename(dirs[i], name, NULL);
		g_clear_error(&e);
		if (g_file_get_contents(path, text, &len, &e)) {
			if (!g_utf8_validate(*text, (gssize) len, NULL) || strlen(*text) != len) {
				g_clear_pointer(text, g_free);
				return vulnid_fail(err, VULNID_ERR_CONFIG,
						   "template '%s' is not UTF-8 text", path);
			}
			return VULNID_OK;
		}
		if (!g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return vulnid_fail(err, VULNID_ERR_CONFIG, "cannot read template '%s': %s",
					   path, e->message);
	}
	return vulnid_fail(err, VULNID_ERR_CONFIG, "template '%s' not found in '%s' or '%s'",
			   name, dirs[0] != NULL ? dirs[0] : "", dirs[1]);
}

/* What one template line became. */
typedef struct {
	GString *text;		/* rendered, without its line end */
	gboolean placeholders;	/* it had some */
	gboolean all_empty;	/* ... and they all rendered empty */
	gboolean multi_line;	/* a value brought line ends: as it is */
	gboolean label_only;	/* nothing but white space or "Label:" besides */
	gboolean heading;	/* no placeholders, ends with ':' */
	gboolean values_only;	/* placeholders and nothing else */
	gboolean blank;
	gboolean drop;		/* left out */
	gboolean merged;	/* reflowed into the line above */
} tline;

/* Whether s (the literal text of a line) is white space or a label such
 * as "  Type:", with nothing after the colon. */
static gboolean
label_only(const char *s)
{
	const char *colon = strchr(s, ':');

	for (const char *p = s; *p; p++)
		if (!g_ascii_isspace(*p) && (colon == NULL || p > colon))
			return FALSE;
	return TRUE;
}

static void
render_line(const char *line, gsize len, GHashTable *vars, tline *t)
{
	g_autoptr(GString) literal = g_string_new(NULL);
	const char *p = line, *end = line + len;

	t->text = g_string_new(NULL);
	t->all_empty = TRUE;
	for (;;) {
		const char *open = g_strstr_len(p, end - p, "{{");
		const char *close;

		if (open == NULL) {
			g_string_append_len(t->text, p, end - p);
			g_string_append_len(literal, p, end - p);
			break;
		}
		close = g_strstr_len(open + 2, end - open - 2, "}}");
		if (close == NULL || close - open > 66) {
			/* Not a placeholder: keep the braces literally. */
			g_string_append_len(t->text, p, open - p + 2);
			g_string_append_len(literal, p, open - p + 2);
			p = open + 2;
			continue;
		}
		g_string_append_len(t->text, p, open - p);
		g_string_append_len(literal, p, open - p);
		{
			g_autofree char *name = g_strstrip(g_strndup(open + 2, (gsize) (close - open - 2)));
			const char *v = vars != NULL ? g_hash_table_lookup(vars, name) : NULL;

			t->placeholders = TRUE;
			if (v != NULL && *v != '\0') {
				t->all_empty = FALSE;
				t->multi_line |= strchr(v, '\n') != NULL;
				g_string_append(t->text, v);
			}
		}
		p = close + 2;
	}
	t->label_only = label_only(literal->str);
	/* nothing but values: inserted as they are */
	t->values_only = t->placeholders && literal->str[0] == '\0';
	g_strchomp(literal->str);
	t->heading = !t->placeholders && literal->str[0] != '\0' &&
		     literal->str[strlen(literal->str) - 1] == ':';
	t->blank = !t->placeholders && literal->str[strspn(literal->str, " \t")] == '\0';
}

/* A line of running text: not indented, not blank, no value with line
 * ends, not the signature separator. */
static gboolean
prose(const tline *t)
{
	const char *s = t->text->str;

	return !t->multi_line && !t->values_only && !t->blank && *s != '\0' && *s != ' ' && *s != '\t' &&
	       strcmp(s, "-- ") != 0 && !(t->placeholders && t->all_empty);
}

/* Headings over nothing and lines with nothing in them are left out. */
static void
drop_empty(tline *t, guint n)
{
	for (guint i = 0; i < n; i++)
		t[i].drop = t[i].placeholders && t[i].all_empty && t[i].label_only;
	for (guint i = 0; i < n; i++) {
		guint j = i + 1, k;
		gboolean empty = TRUE;

		if (!t[i].heading)
			continue;
		if (j < n && t[j].blank)
			j++;	/* one blank line under a heading */
		for (k = j; k < n && !t[k].blank; k++)
			empty &= t[k].drop;
		if (k == j || !empty)
			continue;
		for (guint x = i; x < k; x++)
			t[x].drop = TRUE;
	}
}

char *
template_render(const char *text, GHashTable *vars)
{
	GString *out = g_string_sized_new(strlen(text) + 256);
	g_autoptr(GArray) lines = g_array_new(FALSE, TRUE, sizeof(tline));
	tline *t;
	gboolean header = TRUE, last_blank = FALSE, value_blank = FALSE, dropped = FALSE;
	guint para_end = 0;	/* the paragraph looked at already ends there */

	for (const char *p = text;;) {
		const char *nl = strchr(p, '\n');
		tline x = { 0 };

		render_line(p, nl != NULL ? (gsize) (nl - p) : strlen(p), vars, &x);
		g_array_append_val(lines, x);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	t = (tline *) (void *) lines->data;
	drop_empty(t, lines->len);
	for (guint i = 0; i < lines->len; i++) {
		gboolean last = i + 1 == lines->len;

		/* the Subject lines at the top are header, not text */
		if (header && !g_str_has_prefix(t[i].text->str, "Subject:"))
			header = FALSE;
		/* a blank line that follows one only because something
		 * between them was left out (or a value ended with one) goes
		 * too; the template's own blank lines stay */
		if (t[i].merged)
			continue;
		if (t[i].drop || (t[i].blank && last_blank && (dropped || value_blank) && !last)) {
			if (t[i].text != NULL)
				g_string_free(t[i].text, TRUE);
			dropped |= t[i].drop;
			continue;
		}
		if (!header && prose(&t[i])) {
			/* a paragraph of text: reflowed as a whole when a value
			 * made one of its lines too long */
			guint j = i;
			gboolean over = FALSE;

			while (i >= para_end && j < lines->len && !t[j].drop && prose(&t[j]))
				over |= g_utf8_strlen(t[j++].text->str, -1) > TEMPLATE_WIDTH;
			para_end = MAX(para_end, j);
			if (over) {
				g_autoptr(GString) para = g_string_new(NULL);
				g_autofree char *w = NULL;

				for (guint k = i; k < j; k++) {
					g_string_append_printf(para, "%s%s", k > i ? " " : "", t[k].text->str);
					if (k > i)
						g_string_free(t[k].text, TRUE);
				}
				w = text_wrap(para->str, TEMPLATE_WIDTH);
				g_string_assign(t[i].text, w);
				for (guint k = i + 1; k < j; k++) {
					t[k].merged = TRUE;
					t[k].text = NULL;
				}
			}
			g_string_append(out, t[i].text->str);
		} else if (!header && t[i].placeholders && !t[i].multi_line && !t[i].values_only) {
			g_autofree char *w = text_wrap(t[i].text->str, TEMPLATE_WIDTH);

			g_string_append(out, w);
		} else
			g_string_append(out, t[i].text->str);
		value_blank = !t[i].blank && (t[i].text->len == 0 || t[i].text->str[t[i].text->len - 1] == '\n');
		last_blank = t[i].blank || value_blank;
		if (!last_blank)
			dropped = FALSE;
		if (!last)
			g_string_append_c(out, '\n');
		g_string_free(t[i].text, TRUE);
	}
	return g_string_free(out, FALSE);
}

void
template_split(const char *rendered, char **subject, char **body)
{
	const char *p = rendered;

	*subject = NULL;
	while (g_ascii_strncasecmp(p, "Subject:", 8) == 0) {
		const char *nl = strchr(p, '\n');
		gsize n = nl != NULL ? (gsize) (nl - p) : strlen(p);

		g_free(*subject);
		*subject = g_strstrip(g_strndup(p + 8, n - 8));
		p = nl != NULL ? nl + 1 : p + n;
	}
	if (*subject != NULL && *p == '\n')
		p++;
	*body = g_strdup(p);
}
