/* cmd-config.c - vulnid config keys: the key table of vulnid.conf(5) */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int
cmd_config(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *text = NULL;

	if (!cli_parse(ctx, "keys", "Print every key vulnid.conf may hold, one a line: group, key,\n"
		       "type, minimum, maximum and default, separated by tabs (- for none,\n"
		       "\"\" for empty).  Needs no instance.", NULL, &argc, &argv))
		return EX_USAGE;
	if (argc != 2 || strcmp(argv[1], "keys") != 0) {
		fprintf(stderr, "vulnid: usage: vulnid config keys\n");
		return EX_USAGE;
	}
	text = config_table_text();
	fputs(text, stdout);
	return EX_OK;
}
