/* cmd-backup.c - vulnid backup FILE: an online copy of the database */
#include "autoconfig.h"

#include <stdio.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "export.h"

int
cmd_backup(cli_ctx *ctx, int argc, char **argv)
{
	gboolean force = FALSE;
	GOptionEntry entries[] = {
		{ "force", 0, 0, G_OPTION_ARG_NONE, &force, "replace FILE if it exists", NULL },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	GStatBuf sb;
	int rc;

	if (!cli_parse(ctx, "FILE", "Copy the whole database to FILE (mode 0600), consistently, while\n"
		       "filters keep running.  The copy opens with sqlite3 or as DIR/vulnid.db.",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2) {
		fprintf(stderr, "vulnid: usage: vulnid backup [--force] FILE\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = export_backup(st, argv[1], force, cfg->busy_timeout, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (g_stat(argv[1], &sb) == 0)
		printf("%s: %lld bytes, a copy of %s\n", argv[1], (long long) sb.st_size, cfg->db_path);
	return EX_OK;
}
