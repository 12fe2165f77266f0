/* cmd-prove.c - vulnid prove DIR ID [--out DIR] | DIR --consistency SIZE
 *
 * Proofs from any copy of a feed (its lines, tiles and checkpoint): no
 * instance needed, so a researcher with a mirror can make them too. */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "feedlog.h"
#include "ids.h"
#include "text.h"

int
cmd_prove(cli_ctx *ctx, int argc, char **argv)
{
	gint64 old_size = -1;
	g_autofree char *out_dir = NULL;
	GOptionEntry entries[] = {
		{ "consistency", 0, 0, G_OPTION_ARG_INT64, &old_size,
		  "print a consistency proof from the checkpoint of SIZE entries instead", "SIZE" },
		{ "out", 0, 0, G_OPTION_ARG_FILENAME, &out_dir,
		  "write each tlog-proof to a file of its own, DIR/ID.INDEX.tlog-proof, and print their names", "DIR" },
		{ NULL }
	};
	g_autoptr(GError) err = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	vulnid_status s;
	guint proofs = 0;

	if (!cli_parse(ctx, "DIR ID [--out DIR] | DIR --consistency SIZE",
		       "Print C2SP tlog-proofs of the lines of entry ID in the feed in DIR against its\n"
		       "log's checkpoint (an empty line between two), or write one per file; or a\n"
		       "consistency proof (a tlog-witness add-checkpoint body).",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (!((argc == 3 && old_size < 0) || (argc == 2 && old_size >= 0 && out_dir == NULL))) {
		fprintf(stderr, "vulnid: usage: vulnid prove DIR ID [--out DIR] | vulnid prove DIR --consistency SIZE\n");
		return EX_USAGE;
	}
	if (old_size >= 0)
		s = feedlog_prove_consistency(argv[1], NULL, (guint64) old_size, out, &err);
	else if (!ids_parse(argv[2], NULL, NULL, NULL))
		s = vulnid_fail(&err, VULNID_ERR_INVALID, "'%s' is not an identifier", argv[2]);
	else
		s = feedlog_prove_entry(argv[1], argv[2], out_dir, out, &proofs, &err);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		return s == VULNID_ERR_NOTFOUND ? EX_NOINPUT : s == VULNID_ERR_INVALID ? EX_DATAERR : cli_exit(s);
	}
	fwrite(out->str, 1, out->len, stdout);
	if (fflush(stdout) != 0)
		return EX_IOERR;
	return EX_OK;
}
