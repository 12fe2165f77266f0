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
#include <sys/stat.h>

#include "cli.h"
#include "crypto.h"
#include "feed-verify.h"
#include "feedlog.h"
#include "text.h"

#define MAX_KEY_FILE (1024 * 1024)

typedef struct {
	const char *dir;
	GBytes *key;
	const feed_verify_result *res;
	gint64 since;			/* print lines with a greater pos; < 0: none */
	feedlog_checker *checker;	/* the logs, checked line by line */
	GError *err;
} line_ctx;

static void
on_line(const char *line, gsize len, gpointer data)
{
	line_ctx *c = data;
	int year;
	guint64 n;
	gint64 pos;

	if (c->since >= 0 && feed_line_frame(line, len, &year, &n, &pos) && pos > c->since) {
		fwrite(line, 1, len, stdout);
		fputc('\n', stdout);
	}
	if (c->err != NULL)
		return;
	if (c->checker == NULL)
		feedlog_checker_new(c->dir, c->key, c->res->robot, &c->checker, &c->err);
	if (c->checker != NULL)
		feedlog_check_line(c->checker, line, len);
}

/* What HEAD.json names must be the checkpoint the lines make. */
static vulnid_status
head_names(const char *dir, const char *member, const char *origin, gint64 size, const char *root,
	   const char *have_origin, guint64 have_size, const char *have_root, GError **err)
{
	if (g_strcmp0(origin, have_origin) == 0 && (origin == NULL || ((guint64) size == have_size &&
								       g_strcmp0(root, have_root) == 0)))
		return VULNID_OK;
	if (origin == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' has a log (%s), but HEAD.json names no \"%s\"", dir,
				   have_origin, member);
	return vulnid_fail(err, VULNID_ERR_CORRUPT, "HEAD.json's \"%s\" names another checkpoint (%s, %" G_GINT64_FORMAT
			   " entries) than the log of '%s' has", member, origin, size, dir);
}

/* The logs of a verified feed: their checkpoints are what its lines make
 * and what HEAD.json names, signed with the keys the robot bound; the
 * current one cosigned as asked, and consistent with a previous
 * checkpoint (of either log, by its origin). */
static vulnid_status
verify_log(line_ctx *c, const feed_verify_result *res, const feedlog_policy *pol, feedlog_result *lr,
	   feedlog_result *lr1, GError **err)
{
	g_autofree char *prev_origin = pol->previous != NULL ? feedlog_checkpoint_origin(pol->previous) : NULL;
	g_autofree char *logdir = g_build_filename(c->dir, FEEDLOG_DIR, NULL);
	feedlog_state st = { 0 };
	feedlog_loc cur = { 0 }, v1 = { (char *) c->dir, 1 };
	vulnid_status s;

	if (c->err != NULL) {
		s = (vulnid_status) c->err->code;
		g_propagate_error(err, g_steal_pointer(&c->err));
		return s;
	}
	if (c->checker == NULL) {
		s = feedlog_checker_new(c->dir, c->key, res->robot, &c->checker, err);
		if (s != VULNID_OK)
			return s;
	}
	s = feedlog_check_end(c->checker, &st, err);
	if (s == VULNID_OK)
		s = head_names(c->dir, "checkpoint", res->v1_origin, res->v1_size, res->v1_root, st.v1_origin,
			       st.v1_size, st.v1_root, err);
	if (s == VULNID_OK)
		s = head_names(c->dir, "log", res->log_origin, res->log_size, res->log_root, st.origin, st.size,
			       st.root, err);
	cur = st.origin != NULL ? (feedlog_loc) { logdir, 2 } : v1;
	/* A previous checkpoint of the version-1 log is checked against it;
	 * the witnesses cosign the current log. */
	if (s == VULNID_OK && st.origin != NULL && st.v1_origin != NULL && g_strcmp0(prev_origin, st.v1_origin) == 0) {
		feedlog_policy p1 = { NULL, 0, NULL, pol->previous, FEEDLOG_TILES_NEEDED };
		feedlog_policy p2 = *pol;

		p2.previous = NULL;
		s = feedlog_verify_checkpoint(&v1, feedlog_checker_key(c->checker, 1), &p1, lr1, err);
		if (s == VULNID_OK)
			s = feedlog_verify_checkpoint(&cur, feedlog_checker_key(c->checker, 2), &p2, lr, err);
	} else if (s == VULNID_OK) {
		feedlog_policy p = *pol;

		s = feedlog_verify_checkpoint(&cur, feedlog_checker_key(c->checker, cur.version), &p, lr, err);
		if (s == VULNID_OK && st.origin != NULL && st.v1_origin != NULL)
			s = feedlog_verify_checkpoint(&v1, feedlog_checker_key(c->checker, 1), NULL, lr1, err);
	}
	feedlog_state_clear(&st);
	return s;
}

static void
print_proven(const char *line, gsize len, guint64 index, gpointer data)
{
	(void) index;
	(void) data;
	fwrite(line, 1, len, stdout);
	fputc('\n', stdout);
}

static void
print_log(FILE *f, const char *what, const feedlog_result *r)
{
	fprintf(f, "%s: log %s%s of %" G_GUINT64_FORMAT " entries, root %s", what, r->version == 1 ? "(version 1) " : "",
		r->origin, r->size, r->root);
	if (r->cosignatures > 0)
		fprintf(f, ", %u cosignatures", r->cosignatures);
	if (r->consistent)
		fprintf(f, ", consistent with the previous checkpoint of %" G_GUINT64_FORMAT " entries (proof of %u"
			" hashes, %u hash operations)", r->old_size, r->proof_hashes, r->hash_ops);
	fputc('\n', f);
}

static gboolean
read_small_file(const char *path, gsize max, char **data, gsize *len, GError **err)
{
	GStatBuf sb;

	if (g_stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) || (gsize) sb.st_size > max) {
		vulnid_fail(err, VULNID_ERR_INVALID, "cannot read '%s': not a regular file of at most %"
			    G_GSIZE_FORMAT " bytes", path, max);
		return FALSE;
	}
	return g_file_get_contents(path, data, len, err);
}

/* --proof FILE or --consistency FILE: no feed, only the log's key. */
static int
verify_offline(const char *proof, const char *consistency, const note_key *log_key, const feedlog_policy *pol)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *data = NULL;
	feedlog_result r = { 0 };
	vulnid_status s;
	gsize len = 0;

	if (!read_small_file(proof != NULL ? proof : consistency, FEEDLOG_MAX_PROOF_FILE, &data, &len, &err))
	{
		cli_fail(VULNID_ERR_NOTFOUND, err);
		return EX_NOINPUT;
	}
	if (proof != NULL)
		s = feedlog_verify_proofs(data, len, log_key, pol, print_proven, NULL, &r, &err);
	else
		s = feedlog_verify_consistency(data, len, log_key, pol, &r, &err);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feedlog_result_clear(&r);
		return EX_DATAERR;
	}
	if (proof != NULL)
		fprintf(stderr, "%s: included in the log %s of %" G_GUINT64_FORMAT " entries (last proof: %u hashes,"
			" %u hash operations)%s\n", proof, r.origin, r.size, r.proof_hashes, r.hash_ops,
			r.cosignatures > 0 ? ", cosigned" : "");
	else
		print_log(stdout, consistency, &r);
	feedlog_result_clear(&r);
	return EX_OK;
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

static void
witness_key_free(gpointer p)
{
	note_key_free(p);
}

/* Only the log's checkpoint (and its witnesses), with the log key: the
 * log of DIR (a feed, or a copy of a log alone) named as the key. */
static int
verify_checkpoint_only(const char *dir, const note_key *log_key, feedlog_policy *pol)
{
	g_autoptr(GError) err = NULL;
	feedlog_result lr = { 0 };
	feedlog_loc loc = { 0 };
	vulnid_status s;

	s = feedlog_locate(dir, log_key->name, &loc, &err);
	if (s == VULNID_OK)
		s = feedlog_verify_checkpoint(&loc, log_key, pol, &lr, &err);
	feedlog_loc_clear(&loc);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feedlog_result_clear(&lr);
		return s == VULNID_ERR_NOTFOUND ? EX_NOINPUT : EX_DATAERR;
	}
	print_log(stdout, dir, &lr);
	fprintf(stdout, "%s: %u tiles read", dir, lr.tiles_read);
	if (pol->tiles != FEEDLOG_TILES_NEEDED)
		fprintf(stdout, "; %" G_GUINT64_FORMAT " tiles and %" G_GUINT64_FORMAT " entry bundles checked%s",
			lr.tiles.checked, lr.tiles.bundles, pol->tiles == FEEDLOG_TILES_NEW ? " (the new part)" : "");
	fputc('\n', stdout);
	feedlog_result_clear(&lr);
	return EX_OK;
}

/* The whole feed against the robot's key (and its log, when it has one). */
static int
verify_whole_feed(const char *dir, const char *key_path, gint64 since, gint64 max_line, const char *previous,
		  feedlog_policy *pol)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *contents = NULL;
	g_autofree char *tmp = NULL;
	g_autofree char *home = NULL;
	g_autofree char *cp_path = NULL;
	g_autofree char *cp2_path = NULL;
	g_autoptr(GBytes) key = NULL;
	feed_verify_result res = { 0 };
	feed_verify_opts o = { 0 };
	feedlog_result lr = { 0 }, lr1 = { 0 };
	line_ctx lc = { 0 };
	gboolean has_log = FALSE;
	gsize len = 0;
	vulnid_status s;
	GStatBuf sb;

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
	cp_path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	cp2_path = g_build_filename(dir, FEEDLOG_DIR, FEEDLOG_CHECKPOINT, NULL);
	has_log = g_file_test(cp_path, G_FILE_TEST_EXISTS) || g_file_test(cp_path, G_FILE_TEST_IS_SYMLINK) ||
		  g_file_test(cp2_path, G_FILE_TEST_EXISTS) || g_file_test(cp2_path, G_FILE_TEST_IS_SYMLINK);
	s = crypto_set_home(home, &err);
	o.max_line = (gsize) max_line;
	/* Every line, in log order, for the log; those after --since printed. */
	o.since = has_log ? 0 : since;
	o.previous = previous;
	lc = (line_ctx) { dir, key, &res, since, NULL, NULL };
	if (s == VULNID_OK)
		s = feed_verify(dir, key, &o, has_log || since >= 0 ? on_line : NULL, &lc, &res, &err);
	if (s == VULNID_OK && !has_log && (res.log_origin != NULL || res.v1_origin != NULL))
		s = vulnid_fail(&err, VULNID_ERR_CORRUPT, "'%s': missing, but HEAD.json names a checkpoint",
				res.log_origin != NULL ? cp2_path : cp_path);
	if (s == VULNID_OK && has_log)
		s = verify_log(&lc, &res, pol, &lr, &lr1, &err);
	remove_tree(tmp, 2);
	feedlog_checker_free(lc.checker);
	g_clear_error(&lc.err);
	if (s == VULNID_OK && !has_log && (pol->previous != NULL || pol->witnesses->len > 0))
		s = vulnid_fail(&err, VULNID_ERR_CORRUPT, "'%s' has no transparency log (no checkpoint)", dir);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feed_verify_result_clear(&res);
		feedlog_result_clear(&lr);
		feedlog_result_clear(&lr1);
		return cli_exit(s);
	}
	fprintf(since >= 0 ? stderr : stdout,
		"%s: feed verified: %" G_GUINT64_FORMAT " lines in %u years, %" G_GUINT64_FORMAT " entries"
		" (%" G_GUINT64_FORMAT " under embargo, %" G_GUINT64_FORMAT " released and matching"
		" their commitments), signed by %s at %s, pos %" G_GINT64_FORMAT "\n",
		dir, res.lines, res.years, res.entries, res.embargoed, res.released, res.robot, res.time,
		res.pos);
	if (has_log)
		print_log(since >= 0 ? stderr : stdout, dir, &lr);
	if (lr1.origin != NULL)
		print_log(since >= 0 ? stderr : stdout, dir, &lr1);
	feed_verify_result_clear(&res);
	feedlog_result_clear(&lr);
	feedlog_result_clear(&lr1);
	return EX_OK;
}

int
cmd_verify_feed(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *key_path = NULL;
	g_autofree char *previous = NULL;
	g_autofree char *log_vkey = NULL;
	g_autofree char *prev_cp = NULL;
	g_autofree char *proof = NULL;
	g_autofree char *consistency = NULL;
	g_auto(GStrv) witness_keys = NULL;
	g_auto(GStrv) cosigned = NULL;
	g_autofree char *tiles = NULL;
	gint64 since = -1;
	gint64 max_line = 0;
	gint64 min_cosig = -1;
	GOptionEntry entries[] = {
		{ "key", 0, 0, G_OPTION_ARG_FILENAME, &key_path, "the robot's public key (the whole feed)", "FILE" },
		{ "since", 0, 0, G_OPTION_ARG_INT64, &since,
		  "after verifying, print the lines with pos > POS (the cursor of the last sync)", "POS" },
		{ "previous", 0, 0, G_OPTION_ARG_FILENAME, &previous,
		  "a HEAD.json verified before: the feed must extend it", "FILE" },
		{ "max-line-length", 0, 0, G_OPTION_ARG_INT64, &max_line,
		  "refuse lines longer than this many bytes (default 64 MiB)", "N" },
		{ "log-key", 0, 0, G_OPTION_ARG_STRING, &log_vkey,
		  "the log's verifier key (or a file holding it): check the checkpoint and proofs only", "VKEY" },
		{ "previous-checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &prev_cp,
		  "a checkpoint verified before: prove the log consistent with it", "FILE" },
		{ "proof", 0, 0, G_OPTION_ARG_FILENAME, &proof,
		  "check the tlog-proofs in FILE (vulnid prove) and print the lines they prove", "FILE" },
		{ "consistency", 0, 0, G_OPTION_ARG_FILENAME, &consistency,
		  "check the consistency proof in FILE (vulnid prove --consistency) against --previous-checkpoint",
		  "FILE" },
		{ "witness-key", 0, 0, G_OPTION_ARG_STRING_ARRAY, &witness_keys,
		  "a witness's verifier key (or file); repeat for more", "VKEY" },
		{ "cosignatures", 0, 0, G_OPTION_ARG_INT64, &min_cosig,
		  "require N good cosignatures of the witnesses (default: all given)", "N" },
		{ "cosigned", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &cosigned,
		  "more copies of the checkpoint with cosignatures (a file, or a witness's --out directory)", "PATH" },
		{ "tiles", 0, 0, G_OPTION_ARG_STRING, &tiles,
		  "with --log-key: check all tiles and entry bundles (the default), the new ones past"
		  " --previous-checkpoint, or only those the root needs", "all|new|needed" },
		{ NULL }
	};
	g_autoptr(GError) err = NULL;
	g_autoptr(note_key) log_key = NULL;
	g_autoptr(GPtrArray) witnesses = g_ptr_array_new_with_free_func(witness_key_free);
	g_autoptr(GPtrArray) cosigned_paths = g_ptr_array_new();
	feedlog_policy pol = { 0 };
	vulnid_status s;

	if (!cli_parse(ctx, "DIR --key FILE | DIR --log-key VKEY | --proof FILE --log-key VKEY",
		       "Verify a vulnid feed (vulnid-feed(5)): the signature on HEAD.json, every hash\n"
		       "chain, every record hash and every embargo commitment, and its transparency log;\n"
		       "or only the log's checkpoint, or proofs of inclusion and consistency.",
		       entries, &argc, &argv))
		return EX_USAGE;
	pol.tiles = tiles == NULL || strcmp(tiles, "all") == 0 ? FEEDLOG_TILES_ALL :
		    strcmp(tiles, "new") == 0 ? FEEDLOG_TILES_NEW : FEEDLOG_TILES_NEEDED;
	if (max_line < 0 || since < -1 || min_cosig < -1 ||
	    (tiles != NULL && strcmp(tiles, "all") != 0 && strcmp(tiles, "new") != 0 && strcmp(tiles, "needed") != 0) ||
	    (pol.tiles == FEEDLOG_TILES_NEW && prev_cp == NULL) ||
	    !((argc == 2 && (key_path != NULL || log_vkey != NULL) && proof == NULL && consistency == NULL) ||
	      (argc == 1 && log_vkey != NULL && (proof != NULL) != (consistency != NULL) &&
	       (consistency == NULL || prev_cp != NULL)))) {
		fprintf(stderr, "vulnid: usage: vulnid verify-feed DIR --key FILE [--since POS] [--previous HEAD.json]"
			" [--previous-checkpoint FILE] [--witness-key VKEY --cosignatures N]\n"
			"       vulnid verify-feed DIR --log-key VKEY [--previous-checkpoint FILE] [--tiles all|new|needed]\n"
			"       vulnid verify-feed --proof FILE --log-key VKEY\n"
			"       vulnid verify-feed --consistency FILE --previous-checkpoint FILE --log-key VKEY\n");
		return EX_USAGE;
	}
	for (guint i = 0; witness_keys != NULL && witness_keys[i] != NULL; i++) {
		note_key *wk = NULL;

		s = cli_note_key(witness_keys[i], NOTE_COSIGNATURE, &wk, &err);
		if (s != VULNID_OK) {
			cli_fail(s, err);
			return EX_USAGE;
		}
		g_ptr_array_add(witnesses, wk);
	}
	for (guint i = 0; cosigned != NULL && cosigned[i] != NULL; i++)
		g_ptr_array_add(cosigned_paths, cosigned[i]);
	pol.witnesses = witnesses;
	pol.min_cosignatures = min_cosig >= 0 ? (guint) min_cosig : witnesses->len;
	pol.cosigned = cosigned_paths;
	pol.previous = prev_cp;
	if (log_vkey != NULL) {
		s = cli_note_key(log_vkey, NOTE_ED25519, &log_key, &err);
		if (s != VULNID_OK) {
			cli_fail(s, err);
			return EX_USAGE;
		}
	}
	if (argc == 1)
		return verify_offline(proof, consistency, log_key, &pol);
	if (key_path == NULL)
		return verify_checkpoint_only(argv[1], log_key, &pol);
	/* The lines make every tile and bundle again: the checkpoint's root
	 * is all that is left to read. */
	pol.tiles = FEEDLOG_TILES_NEEDED;
	return verify_whole_feed(argv[1], key_path, since, max_line, previous, &pol);
}
