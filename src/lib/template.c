/* template.c - load and render mail templates */
#include "autoconfig.h"

#include <string.h>

#include "template.h"

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

char *
template_render(const char *text, GHashTable *vars)
{
	GString *out = g_string_sized_new(strlen(text) + 256);
	const char *p = text;

	for (;;) {
		const char *open = strstr(p, "{{");
		const char *close;

		if (open == NULL) {
			g_string_append(out, p);
			break;
		}
		close = strstr(open + 2, "}}");
		if (close == NULL || close - open > 66) {
			/* Not a placeholder: keep the braces literally. */
			g_string_append_len(out, p, open - p + 2);
			p = open + 2;
			continue;
		}
		g_string_append_len(out, p, open - p);
		{
			g_autofree char *name = g_strstrip(g_strndup(open + 2, (gsize) (close - open - 2)));
			const char *v = vars != NULL ? g_hash_table_lookup(vars, name) : NULL;

			if (v != NULL)
				g_string_append(out, v);
		}
		p = close + 2;
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
