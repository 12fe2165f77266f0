/* cmd-show.c - vulnid show and vulnid list */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "disclosure.h"
#include "entry.h"
#include "ids.h"
#include "render.h"
#include "text.h"

/* The references of the view and their mirrors, a line each, for
 * vulnid-fetch-references: URL, the SHA-256 given (or -), and for a mirror
 * the URL of its reference (or -), separated by tabs. */
static void
print_references(const entry_view *v)
{
	for (guint i = 0; !v->stub && !v->withheld && i < v->facts->references->len; i++) {
		const entry_claim *c = g_ptr_array_index(v->facts->references, i);
		g_autofree char *url = text_mask_controls(c->value);

		if (strpbrk(url, " \t") != NULL)
			continue;	/* not a URL */
		printf("%s\t%s\t-\n", url, c->sha256 != NULL ? c->sha256 : "-");
		for (guint k = 0; c->mirrors != NULL && k < c->mirrors->len; k++) {
			g_autofree char *m = text_mask_controls(((entry_claim *) g_ptr_array_index(c->mirrors, k))->value);

			if (strpbrk(m, " \t") == NULL)
				printf("%s\t%s\t%s\n", m, c->sha256 != NULL ? c->sha256 : "-", url);
		}
	}
}

int
cmd_show(cli_ctx *ctx, int argc, char **argv)
{
	gboolean private = FALSE, references = FALSE;
	GOptionEntry entries[] = {
		{ "private", 0, 0, G_OPTION_ARG_NONE, &private,
		  "the operator's view: embargoed content unsealed, every address shown", NULL },
		{ "references", 0, 0, G_OPTION_ARG_NONE, &references,
		  "only the references and their mirrors, a line each: URL, SHA-256 (or -), the\n"
		  "                       reference a mirror is of (or -), separated by tabs", NULL },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(entry) e = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	if (!cli_parse(ctx, "ID", "Show an entry and its records (the public view unless --private).",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2) {
		fprintf(stderr, "vulnid: usage: vulnid show ID [--json]\n");
		return EX_USAGE;
	}
	if (!ids_parse(argv[1], NULL, NULL, NULL)) {
		fprintf(stderr, "vulnid: '%s' is not an identifier PREFIX-YYYY-NNNN\n", argv[1]);
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = entry_load(st, argv[1], &e, &err);
	if (s == VULNID_OK && private && entry_has_sealed(e))
		s = entry_unseal(e, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	{
		g_autoptr(GDateTime) now = store_now_datetime();
		g_autoptr(entry_view) v = entry_view_new(e, private ? AUDIENCE_OPERATOR : AUDIENCE_PUBLIC,
							 G_MAXINT64, now);

		if (references)
			print_references(v);
		else if (ctx->json) {
			g_autoptr(JsonNode) n = render_json(v);

			cli_print_json(n);
		} else {
			g_autofree char *text = render_text(v);

			fputs(text, stdout);
		}
	}
	return EX_OK;
}

int
cmd_list(cli_ctx *ctx, int argc, char **argv)
{
	gint year = 0;
	GOptionEntry entries[] = {
		{ "year", 0, 0, G_OPTION_ARG_INT, &year, "only entries of year Y", "Y" },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GPtrArray) ids = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonArray) arr = json_array_new();
	g_autoptr(GDateTime) now = store_now_datetime();
	vulnid_status s;
	int rc;

	if (!cli_parse(ctx, "", "List entries, oldest first.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 1 || year < 0 || year > 9999) {
		fprintf(stderr, "vulnid: usage: vulnid list [--year Y] [--json]\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = entry_list_ids(st, year, &ids, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autoptr(entry_view) v = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		/* the operator's list, of what anyone may know: no sealed
		 * content is read */
		v = entry_view_new(e, AUDIENCE_MODERATOR, G_MAXINT64, now);
		if (ctx->json)
			json_array_add_object_element(arr, render_list_json(v));
		else {
			g_autofree char *clean = text_clean_line(entry_view_title(v), 0);

			printf("%s  %s  %-9s  %s\n", e->id, e->created, entry_state_str(v->facts->state), clean);
		}
	}
	if (ctx->json) {
		g_autoptr(JsonNode) n = json_node_new(JSON_NODE_ARRAY);

		json_node_set_array(n, arr);
		cli_print_json(n);
	}
	return EX_OK;
}
