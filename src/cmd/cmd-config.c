/* cmd-config.c - vulnid config keys | check: the key table of
 * vulnid.conf(5), and a file checked against it */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text.h"

/* Every mistake of the file, one a line, without touching the instance
 * (nothing is opened but the file: packaging and operators run it before
 * a restart). */
static int
config_check_cmd(cli_ctx *ctx)
{
	g_autofree char *conf = config_locate(ctx->conf);
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) err = NULL;
	vulnid_status s;

	if (conf == NULL) {
		fprintf(stderr, "vulnid: no configuration: use -c DIR/vulnid.conf or set VULNID_CONF\n");
		return EX_USAGE;
	}
	s = config_check_file(conf, problems, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	for (guint i = 0; i < problems->len; i++) {
		g_autofree char *m = text_mask_controls(g_ptr_array_index(problems, i));

		fprintf(stderr, "vulnid: %s\n", m);
	}
	if (problems->len > 0)
		return EX_CONFIG;
	printf("%s: ok\n", conf);
	return EX_OK;
}

int
cmd_config(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *text = NULL;

	if (!cli_parse(ctx, "keys | check", "keys: print every key vulnid.conf may hold, one a line: group,\n"
		       "key, type, minimum, maximum and default, separated by tabs (- for\n"
		       "none, \"\" for empty).  Needs no instance.\n"
		       "check: check the configuration (-c or $VULNID_CONF) line by line:\n"
		       "every unknown group or key, key set twice or line of no known form,\n"
		       "then the first value that is refused (exit 78); \"ok\" otherwise.",
		       NULL, &argc, &argv))
		return EX_USAGE;
	if (argc == 2 && strcmp(argv[1], "check") == 0)
		return config_check_cmd(ctx);
	if (argc != 2 || strcmp(argv[1], "keys") != 0) {
		fprintf(stderr, "vulnid: usage: vulnid config keys | check\n");
		return EX_USAGE;
	}
	text = config_table_text();
	fputs(text, stdout);
	return EX_OK;
}
