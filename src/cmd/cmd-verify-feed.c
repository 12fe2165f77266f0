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
	feedlog_checker *checker;	/* the log, checked line by line */
	note_key *log_key;
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
	if (c->checker == NULL && feedlog_bound_key(c->dir, c->key, c->res->robot, &c->log_key, &c->err) == VULNID_OK)
		feedlog_checker_new(c->dir, c->log_key, &c->checker, &c->err);
	if (c->checker != NULL)
		feedlog_check_line(c->checker, line, len);
}

/* The log of a verified feed: its lines make the tiles and the root of
 * the checkpoint HEAD.json names, signed with the key the robot bound. */
static vulnid_status
verify_log(line_ctx *c, const feed_verify_result *res, const feedlog_policy *pol, feedlog_result *lr,
	   GError **err)
{
	g_autofree char *cp_path = g_build_filename(c->dir, FEEDLOG_CHECKPOINT, NULL);
	feedlog_state st = { 0 };
	vulnid_status s;

	if (c->err != NULL) {
		s = (vulnid_status) c->err->code;
		g_propagate_error(err, g_steal_pointer(&c->err));
		return s;
	}
	if (res->log_origin == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' has a log, but HEAD.json names no checkpoint", cp_path);
	if (c->checker == NULL) {
		s = feedlog_bound_key(c->dir, c->key, res->robot, &c->log_key, err);
		if (s == VULNID_OK)
			s = feedlog_checker_new(c->dir, c->log_key, &c->checker, err);
		if (s != VULNID_OK)
			return s;
	}
	s = feedlog_check_end(c->checker, &st, err);
	if (s == VULNID_OK && (strcmp(st.origin, res->log_origin) != 0 || (gint64) st.size != res->log_size ||
			       strcmp(st.root, res->log_root) != 0))
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "HEAD.json names another checkpoint than '%s' (%s, %"
				G_GINT64_FORMAT " entries)", cp_path, res->log_origin, res->log_size);
	feedlog_state_clear(&st);
	if (s == VULNID_OK)
		s = feedlog_verify_checkpoint(c->dir, c->log_key, pol, lr, err);
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
	fprintf(f, "%s: log %s of %" G_GUINT64_FORMAT " entries, root %s", what, r->origin, r->size, r->root);
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

/* Only the log's checkpoint (and its witnesses), with the log key. */
static int
verify_checkpoint_only(const char *dir, const note_key *log_key, feedlog_policy *pol)
{
	g_autoptr(GError) err = NULL;
	feedlog_result lr = { 0 };
	vulnid_status s;

	s = feedlog_verify_checkpoint(dir, log_key, pol, &lr, &err);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feedlog_result_clear(&lr);
		return EX_DATAERR;
	}
	print_log(stdout, dir, &lr);
	fprintf(stdout, "%s: %u tiles read\n", dir, lr.tiles_read);
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
	g_autoptr(GBytes) key = NULL;
	feed_verify_result res = { 0 };
	feed_verify_opts o = { 0 };
	feedlog_result lr = { 0 };
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
	has_log = g_file_test(cp_path, G_FILE_TEST_EXISTS) || g_file_test(cp_path, G_FILE_TEST_IS_SYMLINK);
	s = crypto_set_home(home, &err);
	o.max_line = (gsize) max_line;
	/* Every line, in log order, for the log; those after --since printed. */
	o.since = has_log ? 0 : since;
	o.previous = previous;
	lc = (line_ctx) { dir, key, &res, since, NULL, NULL, NULL };
	if (s == VULNID_OK)
		s = feed_verify(dir, key, &o, has_log || since >= 0 ? on_line : NULL, &lc, &res, &err);
	if (s == VULNID_OK && !has_log && res.log_origin != NULL)
		s = vulnid_fail(&err, VULNID_ERR_CORRUPT, "'%s': missing, but HEAD.json names a checkpoint", cp_path);
	if (s == VULNID_OK && has_log)
		s = verify_log(&lc, &res, pol, &lr, &err);
	remove_tree(tmp, 2);
	feedlog_checker_free(lc.checker);
	note_key_free(lc.log_key);
	g_clear_error(&lc.err);
	if (s == VULNID_OK && !has_log && (pol->previous != NULL || pol->witnesses->len > 0))
		s = vulnid_fail(&err, VULNID_ERR_CORRUPT, "'%s' has no transparency log (no checkpoint)", dir);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s\n", m);
		feed_verify_result_clear(&res);
		feedlog_result_clear(&lr);
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
	feed_verify_result_clear(&res);
	feedlog_result_clear(&lr);
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
	if (max_line < 0 || since < -1 || min_cosig < -1 ||
	    !((argc == 2 && (key_path != NULL || log_vkey != NULL) && proof == NULL && consistency == NULL) ||
	      (argc == 1 && log_vkey != NULL && (proof != NULL) != (consistency != NULL) &&
	       (consistency == NULL || prev_cp != NULL)))) {
		fprintf(stderr, "vulnid: usage: vulnid verify-feed DIR --key FILE [--since POS] [--previous HEAD.json]"
			" [--previous-checkpoint FILE] [--witness-key VKEY --cosignatures N]\n"
			"       vulnid verify-feed DIR --log-key VKEY [--previous-checkpoint FILE]\n"
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
	return verify_whole_feed(argv[1], key_path, since, max_line, previous, &pol);
}
