/* cmd-witness.c - vulnid witness: cosign other logs' checkpoints
 *
 *   vulnid witness [--state DIR] init NAME
 *   vulnid witness [--state DIR] key
 *   vulnid witness [--state DIR] add-checkpoint --log-key VKEY... [FILE]
 *   vulnid witness [--state DIR] cosign-feed --log-key VKEY FEED [--out DIR]
 *   vulnid witness [--state DIR] serve --log-key VKEY...
 *
 * The state defaults to DIR/witness of the instance (-c or $VULNID_CONF);
 * anyone else names a directory of their own. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "feedlog.h"
#include "text.h"
#include "witness.h"
#include "witness-serve.h"

#define MAX_REQUEST (NOTE_MAX_SIZE + 64 * 64)

static int
fail(vulnid_status s, GError *err)
{
	g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

	fprintf(stderr, "vulnid: %s\n", m);
	switch (s) {
	case VULNID_ERR_CORRUPT:
	case VULNID_ERR_INVALID:
	case VULNID_ERR_EXISTS:
	case VULNID_ERR_TOOBIG:
		return EX_DATAERR;
	case VULNID_ERR_NOTFOUND:
		return EX_NOINPUT;
	default:
		return cli_exit(s);
	}
}

static char *
default_state(cli_ctx *ctx)
{
	g_autofree char *conf = config_locate(ctx->conf);
	g_autoptr(vulnid_config) cfg = NULL;

	if (conf == NULL || config_load(conf, &cfg, NULL) != VULNID_OK)
		return NULL;
	return g_build_filename(cfg->dir, "witness", NULL);
}

static vulnid_status
read_request(const char *path, GString *out, GError **err)
{
	FILE *f = path == NULL || strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char buf[4096];
	size_t n;

	if (f == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "cannot open '%s': %s", path, g_strerror(errno));
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		g_string_append_len(out, buf, (gssize) n);
		if (out->len > MAX_REQUEST)
			break;
	}
	if (f != stdin)
		fclose(f);
	if (out->len > MAX_REQUEST)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "a request of more than %d bytes", MAX_REQUEST);
	return VULNID_OK;
}

/* Cosign the checkpoint of a feed directory (a mirror of another robot):
 * the consistency proof from what this witness cosigned last comes from
 * the feed's own tiles. */
static vulnid_status
cosign_feed(const witness *w, GPtrArray *logs, const char *feed, const char *out_dir, char **cosig, GError **err)
{
	const note_key *log_key = g_ptr_array_index(logs, 0);
	g_autoptr(GString) body = g_string_new(NULL);
	guint64 last = 0, current = 0;
	witness_answer answer;
	vulnid_status s;

	for (int attempt = 0; attempt < 3; attempt++) {
		g_clear_error(err);
		g_string_truncate(body, 0);
		s = witness_last(w, log_key->name, &last, err);
		if (s == VULNID_OK)
			s = feedlog_prove_consistency(feed, log_key->name, last, body, err);
		if (s == VULNID_OK)
			s = witness_add_checkpoint(w, logs, body->str, body->len,
						   (guint64) (g_get_real_time() / G_USEC_PER_SEC), cosig, &current,
						   &answer, err);
		/* Another run cosigned meanwhile: start again from there. */
		if (s != VULNID_ERR_EXISTS)
			break;
	}
	if (s == VULNID_OK && out_dir != NULL) {
		g_autofree char *base = witness_log_path(w, log_key->name);
		g_autofree char *src = g_strconcat(base, ".checkpoint", NULL);
		g_autofree char *name = g_path_get_basename(base);
		g_autofree char *dst = g_build_filename(out_dir, name, FEEDLOG_CHECKPOINT, NULL);
		g_autofree char *dir = g_path_get_dirname(dst);
		g_autofree char *data = NULL;
		gsize len = 0;

		if (g_mkdir_with_parents(dir, 0755) < 0 || !g_file_get_contents(src, &data, &len, NULL))
			return vulnid_fail(err, VULNID_ERR_IO, "cannot publish the cosigned checkpoint in '%s'", dir);
		s = export_write_file(dst, data, len, 0644, err);
	}
	return s;
}

/* tlog-witness over HTTP: as a CGI program when a web server runs it,
 * else on the connection inetd or systemd (Accept=yes) hands over, on
 * standard input and output or as the one socket of LISTEN_FDS. */
static int
serve(const witness *w, GPtrArray *logs)
{
	g_autoptr(GError) err = NULL;
	const char *gw = g_getenv("GATEWAY_INTERFACE");
	const char *fds = g_getenv("LISTEN_FDS");
	const char *pid = g_getenv("LISTEN_PID");
	int in = 0, out = 1;
	guint served = 0;
	vulnid_status s;

	if (gw != NULL && g_str_has_prefix(gw, "CGI/"))
		s = witness_serve_cgi(w, logs, g_getenv("REQUEST_METHOD"), g_getenv("PATH_INFO"),
				      g_getenv("CONTENT_LENGTH"), 0, 1, &err);
	else {
		if (fds != NULL && strcmp(fds, "1") == 0 && pid != NULL &&
		    g_ascii_strtoll(pid, NULL, 10) == (gint64) getpid())
			in = out = 3;	/* SD_LISTEN_FDS_START */
		s = witness_serve_connection(w, logs, in, out, &served, &err);
	}
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: witness serve: %s\n", m);
		return cli_exit(s);
	}
	return EX_OK;
}

static int
usage(void)
{
	fprintf(stderr, "vulnid: usage: vulnid witness [--state DIR] init NAME | key |"
		" add-checkpoint --log-key VKEY... [FILE] | cosign-feed --log-key VKEY FEED [--out DIR] |"
		" serve --log-key VKEY...\n");
	return EX_USAGE;
}

int
cmd_witness(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *state = NULL;
	g_auto(GStrv) log_vkeys = NULL;
	g_autofree char *out_dir = NULL;
	GOptionEntry entries[] = {
		{ "state", 0, 0, G_OPTION_ARG_FILENAME, &state, "the witness's directory (default: DIR/witness)", "DIR" },
		{ "log-key", 0, 0, G_OPTION_ARG_STRING_ARRAY, &log_vkeys,
		  "a log's verifier key, or a file holding it (add-checkpoint and serve: repeat for more logs)",
		  "VKEY" },
		{ "out", 0, 0, G_OPTION_ARG_FILENAME, &out_dir,
		  "cosign-feed: publish the cosigned checkpoint in OUT/SHA256(origin)/checkpoint", "DIR" },
		{ NULL }
	};
	g_autoptr(GError) err = NULL;
	g_autoptr(witness) w = NULL;
	g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify) note_key_free);
	g_autofree char *cosig = NULL;
	const char *op;
	guint nkeys;
	vulnid_status s;
	gboolean created = FALSE;

	if (!cli_parse(ctx, "init NAME | key | add-checkpoint [FILE] | cosign-feed FEED | serve",
		       "Cosign other logs' checkpoints after checking them consistent with the last\n"
		       "one cosigned (C2SP tlog-witness, tlog-cosignature), also over HTTP.", entries, &argc,
		       &argv))
		return EX_USAGE;
	op = argc >= 2 ? argv[1] : "";
	nkeys = log_vkeys != NULL ? g_strv_length(log_vkeys) : 0;
	if (!((strcmp(op, "init") == 0 && argc == 3) || (strcmp(op, "key") == 0 && argc == 2) ||
	      (strcmp(op, "add-checkpoint") == 0 && argc <= 3 && nkeys > 0) ||
	      (strcmp(op, "cosign-feed") == 0 && argc == 3 && nkeys == 1) ||
	      (strcmp(op, "serve") == 0 && argc == 2 && nkeys > 0)))
		return usage();
	if (state == NULL)
		state = default_state(ctx);
	if (state == NULL) {
		fprintf(stderr, "vulnid: no instance: name the witness's directory with --state\n");
		return EX_USAGE;
	}
	s = witness_open(state, strcmp(op, "init") == 0 ? argv[2] : NULL, &w, &created, &err);
	if (s != VULNID_OK)
		return fail(s, err);
	if (strcmp(op, "init") == 0 || strcmp(op, "key") == 0) {
		g_autofree char *vk = note_key_vkey(w->key);

		if (strcmp(op, "init") == 0 && !created)
			fprintf(stderr, "vulnid: '%s' has a witness key already (%s)\n", state, w->key->name);
		printf("%s\n", vk);
		return EX_OK;
	}
	for (guint i = 0; i < nkeys; i++) {
		note_key *k = NULL;

		s = cli_note_key(log_vkeys[i], NOTE_ED25519, &k, &err);
		if (s != VULNID_OK)
			return fail(s, err);
		g_ptr_array_add(logs, k);
	}
	if (strcmp(op, "serve") == 0)
		return serve(w, logs);
	if (strcmp(op, "add-checkpoint") == 0) {
		g_autoptr(GString) body = g_string_new(NULL);
		witness_answer answer;
		guint64 current = 0;

		s = read_request(argc == 3 ? argv[2] : NULL, body, &err);
		if (s == VULNID_OK)
			s = witness_add_checkpoint(w, logs, body->str, body->len,
						   (guint64) (g_get_real_time() / G_USEC_PER_SEC), &cosig, &current,
						   &answer, &err);
		if (s == VULNID_ERR_EXISTS)
			printf("%" G_GUINT64_FORMAT "\n", current);
	} else {
		s = cosign_feed(w, logs, argv[2], out_dir, &cosig, &err);
	}
	if (s != VULNID_OK)
		return fail(s, err);
	fputs(cosig, stdout);
	return fflush(stdout) == 0 ? EX_OK : EX_IOERR;
}
