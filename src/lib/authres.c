/* authres.c - Authentication-Results of the operator's MTA (see authres.h) */
#include "autoconfig.h"

#include <string.h>

#include "authres.h"
#include "header.h"

/* c as kept: inside a quoted string (a reason, a local part the sender
 * chose) ';' and blanks are no separators, or its text would be read as
 * results and properties of their own. */
static void
put(GString *out, char c, gboolean quoted)
{
	g_string_append_c(out, quoted && (c == ';' || c == ' ' || c == '\t') ? '_' : c);
}

/* The value with (comments) removed, nested ones too. */
static char *
strip_comments(const char *v)
{
	GString *out = g_string_new(NULL);
	int depth = 0;
	gboolean quoted = FALSE;

	for (const char *p = v; *p; p++) {
		if (*p == '\\' && p[1] != '\0' && (quoted || depth > 0)) {
			if (depth == 0) {
				put(out, p[0], quoted);
				put(out, p[1], quoted);
			}
			p++;
		} else if (*p == '"' && depth == 0) {
			quoted = !quoted;
			g_string_append_c(out, *p);
		} else if (*p == '(' && !quoted)
			depth++;
		else if (*p == ')' && !quoted && depth > 0)
			depth--;
		else if (depth == 0)
			put(out, *p, quoted);
	}
	return g_string_free(out, FALSE);
}

/* The value of property name ("header.from") in one resinfo, or NULL. */
static char *
property(const char *resinfo, const char *name)
{
	g_auto(GStrv) words = g_strsplit_set(resinfo, " \t", -1);
	gsize n = strlen(name);

	for (char **w = words; *w != NULL; w++)
		if (g_ascii_strncasecmp(*w, name, n) == 0 && (*w)[n] == '=') {
			char *v = g_strdup(*w + n + 1);

			g_strdelimit(v, "\"", ' ');
			g_strstrip(v);
			if (strchr(v, '@') != NULL)	/* header.i=@d or user@d */
				memmove(v, strchr(v, '@') + 1, strlen(strchr(v, '@')));
			return v;
		}
	return NULL;
}

/* "method=result" at the start of a resinfo: result, method in *method. */
static char *
method_result(const char *resinfo, char **method)
{
	const char *p = resinfo + strspn(resinfo, " \t"), *eq = strchr(p, '=');
	gsize rl;

	*method = NULL;
	if (eq == NULL)
		return NULL;
	*method = g_ascii_strdown(p, eq - p);
	g_strstrip(*method);
	rl = strcspn(eq + 1, " \t");
	return g_ascii_strdown(eq + 1, (gssize) rl);
}

/* d aligns with the From domain: the same, or a parent of it. */
static gboolean
aligned(const char *d, const char *from_domain)
{
	gsize n = strlen(from_domain), m = strlen(d);

	if (m == 0 || n < m || g_ascii_strcasecmp(from_domain + n - m, d) != 0)
		return FALSE;
	return n == m || (from_domain[n - m - 1] == '.' && strchr(d, '.') != NULL);
}

const char *
authres_from_verified(const vulnid_config *cfg, GPtrArray *trace, const char *from_addr)
{
	g_autofree char *id = config_key_string(cfg, "auth", "authserv_id");
	gint64 trusted = config_key_int(cfg, "auth", "trusted_received");
	const char *from_domain = from_addr != NULL && strrchr(from_addr, '@') != NULL
				  ? strrchr(from_addr, '@') + 1 : NULL;
	gboolean seen_dmarc = FALSE, seen_dkim = FALSE, dkim_ok = FALSE;
	gint64 received = 0;

	if (*id == '\0' || from_domain == NULL || trace == NULL)
		return NULL;
	for (guint i = 0; i < trace->len; i++) {
		const header_trace_field *f = g_ptr_array_index(trace, i);
		g_autofree char *v = NULL;
		g_auto(GStrv) parts = NULL;
		gboolean has_dkim = FALSE;

		if (strcmp(f->name, "received") == 0) {
			if (++received > trusted)
				break;	/* below it, the sender could have written it */
			continue;
		}
		v = strip_comments(f->value);
		parts = g_strsplit(v, ";", -1);
		if (parts[0] == NULL)
			continue;	/* an empty field */
		{
			/* authserv-id [version] */
			g_auto(GStrv) head = g_strsplit_set(g_strstrip(parts[0]), " \t", 2);

			if (head[0] == NULL || g_ascii_strcasecmp(head[0], id) != 0)
				continue;
		}
		for (char **r = parts + 1; *r != NULL; r++) {
			g_autofree char *method = NULL;
			g_autofree char *result = method_result(*r, &method);

			if (result == NULL)
				continue;
			if (strcmp(method, "dmarc") == 0 && !seen_dmarc) {
				g_autofree char *hf = property(*r, "header.from");

				seen_dmarc = TRUE;
				if (strcmp(result, "pass") == 0 && hf != NULL && g_ascii_strcasecmp(hf, from_domain) == 0)
					return "dmarc";
			} else if (strcmp(method, "dkim") == 0 && !seen_dkim) {
				g_autofree char *d = property(*r, "header.d");

				if (d == NULL)
					d = property(*r, "header.i");
				has_dkim = TRUE;
				dkim_ok |= strcmp(result, "pass") == 0 && d != NULL && aligned(d, from_domain);
			}
		}
		/* only the topmost field with DKIM results counts for DKIM */
		seen_dkim |= has_dkim;
	}
	return dkim_ok ? "dkim" : NULL;
}
