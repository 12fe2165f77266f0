/* cli.c - shared plumbing of the vulnid subcommands */
#include "autoconfig.h"

#include <stdio.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "audit.h"
#include "cli.h"
#include "crypto.h"
#include "text.h"

int
cli_exit(vulnid_status s)
{
	switch (s) {
	case VULNID_OK: return EX_OK;
	case VULNID_ERR_INVALID: return EX_DATAERR;
	case VULNID_ERR_CORRUPT: return EX_DATAERR;
	case VULNID_ERR_NOTFOUND: return EX_NOINPUT;
	case VULNID_ERR_EXISTS: return EX_CANTCREAT;
	case VULNID_ERR_CONFIG: return EX_CONFIG;
	case VULNID_ERR_INTERNAL: return EX_SOFTWARE;
	default: return EX_TEMPFAIL;
	}
}

int
cli_fail(vulnid_status s, GError *err)
{
	g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

	fprintf(stderr, "vulnid: %s\n", m);
	return cli_exit(s);
}

void
cli_report_migration(store *st, const vulnid_config *cfg)
{
	int from = store_migrated_from(st);
	g_autofree char *what = NULL;

	if (from < 0)
		return;
	what = store_migration_text(from, STORE_SCHEMA_VERSION);
	fprintf(stderr, "vulnid: upgraded '%s' from schema %d to %d (vulnid %s): %s;"
		" older versions cannot open it any more (UPGRADING says how to go back)\n",
		cfg->db_path, from, STORE_SCHEMA_VERSION, PACKAGE_VERSION, what);
	audit_flush(st, cfg->audit_path, NULL);
}

int
cli_instance(cli_ctx *ctx, vulnid_config **cfg, store **st)
{
	g_autofree char *conf = config_locate(ctx->conf);
	g_autoptr(GError) err = NULL;
	store_open_mode mode = (ctx->cmd->flags & CLI_WRITES) != 0 ? STORE_OPEN_EXISTING
			       : (ctx->cmd->flags & CLI_ANY_SCHEMA) != 0 ? STORE_OPEN_COPY : STORE_OPEN_READONLY;
	vulnid_status s;

	g_return_val_if_fail((ctx->cmd->flags & CLI_INSTANCE) != 0 && ctx->cfg == NULL, EX_SOFTWARE);
	/* as the instance's owner, or not at all: before anything is read */
	s = config_become_owner(conf, &err);
	if (s == VULNID_OK)
		s = config_load(conf, &ctx->cfg, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	crypto_set_home(ctx->cfg->gnupg_home, NULL);
	s = store_open(ctx->cfg->db_path, ctx->cfg->busy_timeout, mode, &ctx->st, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	cli_report_migration(ctx->st, ctx->cfg);
	if (cfg != NULL)
		*cfg = ctx->cfg;
	if (st != NULL)
		*st = ctx->st;
	return EX_OK;
}

vulnid_status
cli_note_key(const char *arg, guint8 type, note_key **key, GError **err)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	vulnid_status s;
	GStatBuf sb;

	if (g_stat(arg, &sb) == 0) {
		if (!S_ISREG(sb.st_mode) || sb.st_size > NOTE_MAX_KEY_TEXT + 2 ||
		    !g_file_get_contents(arg, &text, &len, NULL))
			return vulnid_fail(err, VULNID_ERR_INVALID, "cannot read the key file '%s'", arg);
	} else {
		text = g_strdup(arg);
		len = strlen(text);
	}
	s = note_key_parse(text, len, key, err);
	if (s == VULNID_OK && ((*key)->type != type || (*key)->has_private)) {
		g_clear_pointer(key, note_key_free);
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a %s verifier key", arg,
				   type == NOTE_ED25519 ? "log (type 1)" : "witness (type 4)");
	}
	if (s != VULNID_OK)
		g_prefix_error(err, "'%s': ", arg);
	return s;
}

gboolean
cli_parse(cli_ctx *ctx, const char *usage, const char *summary, GOptionEntry *entries, int *argc, char ***argv)
{
	g_autoptr(GOptionContext) oc = g_option_context_new(usage);
	g_autoptr(GError) err = NULL;
	GOptionEntry json[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &ctx->json, "print JSON (vulnid-json(7))", NULL },
		{ NULL }
	};

	g_option_context_set_summary(oc, summary);
	if (entries != NULL)
		g_option_context_add_main_entries(oc, entries, NULL);
	if ((ctx->cmd->flags & CLI_JSON) != 0)
		g_option_context_add_main_entries(oc, json, NULL);
	if (!g_option_context_parse(oc, argc, argv, &err)) {
		fprintf(stderr, "vulnid: %s\n", err->message);
		return FALSE;
	}
	return TRUE;
}

void
cli_print_json(JsonNode *node)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autofree char *text = NULL;

	json_generator_set_pretty(gen, TRUE);
	json_generator_set_root(gen, node);
	text = json_generator_to_data(gen, NULL);
	printf("%s\n", text);
}
