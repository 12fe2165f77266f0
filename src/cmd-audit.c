/* cmd-audit.c - vulnid audit verify|flush */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"

int
cmd_audit(const cli_global *g, int argc, char **argv)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	if (!cli_parse("verify|flush", "Check the audit log against the database chain, or\n"
		       "append committed events the file is missing.", NULL, &argc, &argv))
		return EX_USAGE;
	if (argc != 2 || (strcmp(argv[1], "verify") != 0 && strcmp(argv[1], "flush") != 0)) {
		fprintf(stderr, "vulnid: usage: vulnid audit verify | flush\n");
		return EX_USAGE;
	}
	rc = cli_open(g, STORE_OPEN_EXISTING, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (strcmp(argv[1], "flush") == 0) {
		s = audit_flush(st, cfg->audit_path, &err);
		return s == VULNID_OK ? EX_OK : cli_fail(s, err);
	} else {
		guint64 lines = 0, bad = 0;

		s = audit_verify(st, cfg->audit_path, &lines, &bad, &err);
		if (s != VULNID_OK) {
			fprintf(stderr, "vulnid: %s: %s\n", cfg->audit_path, err->message);
			return cli_exit(s);
		}
		printf("%s: %" G_GUINT64_FORMAT " lines, chain intact\n", cfg->audit_path, lines);
		return EX_OK;
	}
}
