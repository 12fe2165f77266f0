/* cmd-show.c - vulnid show and vulnid list */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "entry.h"
#include "ids.h"

int
cmd_show(const cli_global *g, int argc, char **argv)
{
	gboolean json = FALSE, private = FALSE;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "print JSON (doc/vulnid-json.7)", NULL },
		{ "private", 0, 0, G_OPTION_ARG_NONE, &private,
		  "the operator's view: embargoed content unsealed, every address shown", NULL },
		{ NULL }
	};
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(entry) e = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	if (!cli_parse("ID", "Show an entry and its records (the public view unless --private).",
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
	rc = cli_open(g, STORE_OPEN_EXISTING, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = entry_load(st, argv[1], &e, &err);
	if (s == VULNID_OK && private && strcmp(entry_state(e), "embargoed") == 0)
		s = entry_unseal(e, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (json) {
		g_autoptr(JsonNode) n = private ? entry_to_json(e) : entry_to_public_json(e);

		cli_print_json(n);
	} else {
		g_autofree char *text = entry_to_text_view(e, !private);

		fputs(text, stdout);
	}
	return EX_OK;
}

int
cmd_list(const cli_global *g, int argc, char **argv)
{
	gboolean json = FALSE;
	gint year = 0;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "print JSON", NULL },
		{ "year", 0, 0, G_OPTION_ARG_INT, &year, "only entries of year Y", "Y" },
		{ NULL }
	};
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(GPtrArray) ids = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonArray) arr = json_array_new();
	vulnid_status s;
	int rc;

	if (!cli_parse("", "List entries, oldest first.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 1 || year < 0 || year > 9999) {
		fprintf(stderr, "vulnid: usage: vulnid list [--year Y] [--json]\n");
		return EX_USAGE;
	}
	rc = cli_open(g, STORE_OPEN_EXISTING, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = entry_list_ids(st, year, &ids, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autofree char *title = NULL;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		title = entry_title(e);
		if (json) {
			JsonObject *o = json_object_new();
			g_autofree char *vendor = entry_field(e, "Vendor");
			g_autofree char *product = entry_field(e, "Product");

			json_object_set_string_member(o, "id", e->id);
			json_object_set_string_member(o, "digest", e->digest);
			json_object_set_string_member(o, "created", e->created);
			json_object_set_string_member(o, "state", entry_state(e));
			json_object_set_string_member(o, "title", title);
			if (vendor != NULL)
				json_object_set_string_member(o, "vendor", vendor);
			else
				json_object_set_null_member(o, "vendor");
			if (product != NULL)
				json_object_set_string_member(o, "product", product);
			else
				json_object_set_null_member(o, "product");
			json_object_set_int_member(o, "records", e->records->len);
			json_array_add_object_element(arr, o);
		} else {
			g_autofree char *clean = g_strdup(title);

			g_strdelimit(clean, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
				     "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f", ' ');
			printf("%s  %s  %-9s  %s\n", e->id, e->created, entry_state(e), clean);
		}
	}
	if (json) {
		g_autoptr(JsonNode) n = json_node_new(JSON_NODE_ARRAY);

		json_node_set_array(n, arr);
		cli_print_json(n);
	}
	return EX_OK;
}
