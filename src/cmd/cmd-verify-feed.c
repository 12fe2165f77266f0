/* cmd-verify-feed.c - vulnid verify-feed DIR --key robot.asc
 *
 * A mirror has the feed's files and the robot's public key, nothing else:
 * this command needs no instance and no keyring of its own. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crypto.h"
#include "feed.h"
#include "text.h"

#define MAX_KEY_FILE (1024 * 1024)

static void
print_line(const char *line, gsize len, gpointer data)
{
	fwrite(line, 1, len, stdout);
	fputc('\n', stdout);
}

/* Remove what this command created under a private temporary directory
 * (two levels at most: gpg's scratch keyrings are removed by crypto). */
static void
remove_tree(const char *dir, int depth)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *p = g_build_filename(dir, name, NULL);

		if (depth > 0 && g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
			remove_tree(p, depth - 1);
		else
			unlink(p);
	}
	rmdir(dir);
}

int
cmd_verify_feed(const cli_global *g, int argc, char **argv)
{
	g_autofree char *key_path = NULL;
	g_autofree char *previous = NULL;
	gint64 since = -1;
	gint64 max_line = 0;
	GOptionEntry entries[] = {
		{ "key", 0, 0, G_OPTION_ARG_FILENAME, &key_path, "the robot's public key (required)", "FILE" },
		{ "since", 0, 0, G_OPTION_ARG_INT64, &since,
		  "after verifying, print the lines with pos > POS (the cursor of the last sync)", "POS" },
		{ "previous", 0, 0, G_OPTION_ARG_FILENAME, &previous,
		  "a HEAD.json verified before: the feed must extend it", "FILE" },
		{ "max-line-length", 0, 0, G_OPTION_ARG_INT64, &max_line,
		  "refuse lines longer than this many bytes (default 64 MiB)", "N" },
		{ NULL }
	};
	g_autoptr(GError) err = NULL;
	g_autofree char *contents = NULL;
	g_autofree char *tmp = NULL;
	g_autofree char *home = NULL;
	g_autoptr(GBytes) key = NULL;
	feed_verify_result res = { 0 };
	feed_verify_opts o = { 0 };
	gsize len = 0;
	vulnid_status s;
	GStatBuf sb;

	(void) g;
	if (!cli_parse("DIR --key FILE", "Verify a vulnid feed (vulnid-feed(5)): the signature on HEAD.json,\n"
		       "every hash chain, every record hash and every embargo commitment.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2 || key_path == NULL || max_line < 0 || since < -1) {
		fprintf(stderr, "vulnid: usage: vulnid verify-feed DIR --key FILE [--since POS] [--previous HEAD.json]\n");
		return EX_USAGE;
	}
	if (g_stat(key_path, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > MAX_KEY_FILE ||
	    !g_file_get_contents(key_path, &contents, &len, &err)) {
		fprintf(stderr, "vulnid: cannot read key '%s': %s\n", key_path,
			err != NULL ? err->message : errno != 0 ? g_strerror(errno) : "not a small regular file");
		return EX_NOINPUT;
	}
	key = g_bytes_new_take(g_steal_pointer(&contents), len);

	/* A keyring of our own, thrown away afterwards: the signature is
	 * checked against the given key only. */
	tmp = g_dir_make_tmp("vulnid-verify-XXXXXX", &err);
	if (tmp == NULL)
		return cli_fail(VULNID_ERR_IO, err);
	home = g_build_filename(tmp, "gnupg", NULL);
	if (g_mkdir(home, 0700) < 0) {
		remove_tree(tmp, 2);
		fprintf(stderr, "vulnid: cannot create '%s': %s\n", home, g_strerror(errno));
		return EX_CANTCREAT;
	}
	s = crypto_set_home(home, &err);
	o.max_line = (gsize) max_line;
	o.since = since;
	o.previous = previous;
	if (s == VULNID_OK)
		s = feed_verify(argv[1], key, &o, since >= 0 ? print_line : NULL, NULL, &res, &err);
	remove_tree(tmp, 2);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feed_verify_result_clear(&res);
		return cli_exit(s);
	}
	fprintf(since >= 0 ? stderr : stdout,
		"%s: feed verified: %" G_GUINT64_FORMAT " lines in %u years, %" G_GUINT64_FORMAT " entries"
		" (%" G_GUINT64_FORMAT " under embargo, %" G_GUINT64_FORMAT " released and matching"
		" their commitments), signed by %s at %s, pos %" G_GINT64_FORMAT "\n",
		argv[1], res.lines, res.years, res.entries, res.embargoed, res.released, res.robot, res.time,
		res.pos);
	feed_verify_result_clear(&res);
	return EX_OK;
}
