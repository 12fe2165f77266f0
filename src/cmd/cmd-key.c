/* cmd-key.c - vulnid key export, vulnid keys import|list */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "audit.h"
#include "cli.h"
#include "crypto.h"
#include "text.h"

int
cmd_key(cli_ctx *ctx, int argc, char **argv)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(GBytes) pub = NULL;
	g_autofree char *fpr = NULL;
	gboolean fingerprint = FALSE;
	GOptionEntry entries[] = {
		{ "fingerprint", 0, 0, G_OPTION_ARG_NONE, &fingerprint, "print only the fingerprint", NULL },
		{ NULL }
	};
	vulnid_status s;
	int rc;

	if (!cli_parse(ctx, "export", "Print the robot's public OpenPGP key.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2 || strcmp(argv[1], "export") != 0) {
		fprintf(stderr, "vulnid: usage: vulnid key export [--fingerprint]\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = crypto_robot_fingerprint(&fpr, &err);
	if (s == VULNID_OK && !fingerprint)
		s = crypto_export_public(fpr, &pub, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (fingerprint)
		printf("%s\n", fpr);
	else
		fwrite(g_bytes_get_data(pub, NULL), 1, g_bytes_get_size(pub), stdout);
	return EX_OK;
}

static int
keys_list(gboolean json)
{
	g_autoptr(GPtrArray) keys = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	vulnid_status s = crypto_list_keys(&keys, &err);

	if (s != VULNID_OK)
		return cli_fail(s, err);
	json_builder_begin_array(b);
	for (guint i = 0; i < keys->len; i++) {
		crypto_key *k = g_ptr_array_index(keys, i);

		if (json) {
			json_builder_begin_object(b);
			json_builder_set_member_name(b, "fingerprint");
			json_builder_add_string_value(b, k->fpr);
			json_builder_set_member_name(b, "uids");
			json_builder_begin_array(b);
			for (guint j = 0; j < k->uids->len; j++)
				json_builder_add_string_value(b, g_ptr_array_index(k->uids, j));
			json_builder_end_array(b);
			json_builder_set_member_name(b, "revoked");
			json_builder_add_boolean_value(b, k->revoked);
			json_builder_set_member_name(b, "expired");
			json_builder_add_boolean_value(b, k->expired);
			json_builder_end_object(b);
		} else {
			printf("%s%s%s", k->fpr, k->revoked ? " [revoked]" : "", k->expired ? " [expired]" : "");
			for (guint j = 0; j < k->uids->len; j++) {
				g_autofree char *u = text_mask_controls(g_ptr_array_index(k->uids, j));

				printf("%s%s", j == 0 ? "  " : ", ", u);
			}
			printf("\n");
		}
	}
	json_builder_end_array(b);
	if (json) {
		g_autoptr(JsonNode) root = json_builder_get_root(b);

		cli_print_json(root);
	}
	return EX_OK;
}

int
cmd_keys(cli_ctx *ctx, int argc, char **argv)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	int rc;

	if (!cli_parse(ctx, "import FILE | list", "Contributors' public keys in the robot's keyring.",
		       NULL, &argc, &argv))
		return EX_USAGE;
	if (!(argc == 2 && strcmp(argv[1], "list") == 0) &&
	    !(argc == 3 && strcmp(argv[1], "import") == 0)) {
		fprintf(stderr, "vulnid: usage: vulnid keys import FILE | list [--json]\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (strcmp(argv[1], "list") == 0)
		return keys_list(ctx->json);
	{
		g_autoptr(GPtrArray) fprs = NULL;
		g_autoptr(GBytes) data = NULL;
		g_autofree char *text = NULL;
		gsize len;
		vulnid_status s;

		if (!g_file_get_contents(argv[2], &text, &len, &err))
			return cli_fail(VULNID_ERR_NOTFOUND, err);
		data = g_bytes_new_take(g_steal_pointer(&text), len);
		s = crypto_import(data, &fprs, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		s = store_begin(st, &err);
		for (guint i = 0; s == VULNID_OK && i < fprs->len; i++) {
			g_autoptr(audit_event) ev = audit_event_new("key-imported", NULL, NULL);

			audit_event_str(ev, "fingerprint", g_ptr_array_index(fprs, i));
			audit_event_str(ev, "source", "operator");
			s = audit_append(st, ev, &err);
		}
		if (s == VULNID_OK)
			s = store_commit(st, &err);
		else
			store_rollback(st);
		audit_flush(st, cfg->audit_path, NULL);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		for (guint i = 0; i < fprs->len; i++)
			printf("imported %s\n", (const char *) g_ptr_array_index(fprs, i));
		return EX_OK;
	}
}
