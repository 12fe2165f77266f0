/* cmd-export.c - vulnid export feed|osv|mbox|html */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "crypto.h"
#include "export.h"
#include "feed-export.h"
#include "feedlog.h"
#include "html.h"
#include "http.h"
#include "osv.h"
#include "pubmail.h"
#include "text.h"

/* Seconds a witness has to answer add-checkpoint. */
#define WITNESS_TIMEOUT_S 30

/* A value of [export] in vulnid.conf (a field of the key table), or NULL
 * when it is empty. */
static char *
conf_export(const char *v)
{
	return *v != '\0' ? g_strdup(v) : NULL;
}

/* The OSV id prefix becomes part of file names: letters, digits, '_'
 * and '-' only. */
static gboolean
osv_prefix_ok(const char *p)
{
	if (strlen(p) > 32)
		return FALSE;
	for (; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-')
			return FALSE;
	return TRUE;
}

/* [export] witnesses, read in full (vulnid.conf checked their shape). */
static vulnid_status
feed_witnesses(const vulnid_config *cfg, GPtrArray **out, GError **err)
{
	g_autoptr(GPtrArray) w = g_ptr_array_new_with_free_func((GDestroyNotify) note_witness_free);

	for (char **p = cfg->export_witnesses; p != NULL && *p != NULL; p++) {
		note_witness *x = NULL;
		vulnid_status s = note_witness_parse(*p, &x, err);

		if (s != VULNID_OK) {
			g_prefix_error(err, "[export] witnesses: ");
			return VULNID_ERR_CONFIG;
		}
		g_ptr_array_add(w, x);
	}
	*out = g_steal_pointer(&w);
	return VULNID_OK;
}

static int
usage(void)
{
	fprintf(stderr, "vulnid: usage: vulnid export feed DIR | osv DIR | mbox FILE | html DIR\n");
	return EX_USAGE;
}

int
cmd_export(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *id_prefix = NULL;
	g_autofree char *base_url = NULL;
	g_autofree char *title = NULL;
	GOptionEntry entries[] = {
		{ "id-prefix", 0, 0, G_OPTION_ARG_STRING, &id_prefix,
		  "OSV id prefix (default [export] osv_id_prefix, else x_)", "P" },
		{ "base-url", 0, 0, G_OPTION_ARG_STRING, &base_url,
		  "where the web archive is published (default [export] base_url)", "URL" },
		{ "title", 0, 0, G_OPTION_ARG_STRING, &title, "title of the web archive", "T" },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	const char *what, *target;
	vulnid_status s;
	int rc;

	if (!cli_parse(ctx, "feed DIR | osv DIR | mbox FILE | html DIR",
		       "Publish the public archive: the signed, hash-chained feed (vulnid-feed(5)),\n"
		       "OSV records, an mbox of the public mail, or a static web site.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 3)
		return usage();
	what = argv[1];
	target = argv[2];
	if (strcmp(what, "feed") != 0 && strcmp(what, "osv") != 0 && strcmp(what, "mbox") != 0 &&
	    strcmp(what, "html") != 0)
		return usage();
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (id_prefix == NULL)
		id_prefix = conf_export(cfg->export_osv_id_prefix);
	if (id_prefix == NULL)
		id_prefix = g_strdup("x_");
	if (!osv_prefix_ok(id_prefix)) {
		fprintf(stderr, "vulnid: OSV id prefix '%s' may hold only letters, digits, '_' and '-'\n", id_prefix);
		return EX_USAGE;
	}
	if (base_url == NULL)
		base_url = conf_export(cfg->export_base_url);

	if (strcmp(what, "feed") == 0) {
		feed_export_result res = { 0 };
		feed_export_opts fo = { 0 };
		g_autoptr(note_key) log_key = NULL;
		g_autoptr(GPtrArray) witnesses = NULL;
		g_autoptr(http_client) http = http_client_new(WITNESS_TIMEOUT_S);
		g_autofree char *origin = conf_export(cfg->export_log_origin);
		g_autofree char *fpr = NULL;

		g_autofree char *key_path = g_build_filename(cfg->dir, FEEDLOG_KEY_FILE, NULL);
		g_autofree char *vkey_path = g_build_filename(target, FEEDLOG_DIR, FEEDLOG_VKEY, NULL);

		/* A published log needs the key that made it: never a new one
		 * (an instance restored without its log key). */
		if (!g_file_test(key_path, G_FILE_TEST_EXISTS) && g_file_test(vkey_path, G_FILE_TEST_EXISTS)) {
			fprintf(stderr, "vulnid: '%s' is published with a log key, but '%s' is missing: restore the"
				" log key that made it (vulnid backup --all carries it); nothing was written\n",
				target, key_path);
			return EX_DATAERR;
		}
		s = feed_witnesses(cfg, &witnesses, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		/* Signing needs the robot's keyring, whatever cli_open found. */
		s = crypto_set_home(cfg->gnupg_home, &err);
		if (s == VULNID_OK)
			s = crypto_robot_fingerprint(&fpr, &err);
		if (s == VULNID_OK)
			s = feedlog_key_open(cfg->dir, origin, cfg->domain, cfg->prefix, fpr, &log_key, NULL, &err);
		fo = (feed_export_opts) { log_key, witnesses, http_post, http };
		if (s == VULNID_OK)
			s = feed_export(st, target, &fo, &res, &err);
		if (s != VULNID_OK) {
			feed_export_result_clear(&res);
			return cli_fail(s, err);
		}
		printf("%s: %" G_GUINT64_FORMAT " new lines, %u years, complete up to pos %" G_GINT64_FORMAT "%s;"
		       " log of %" G_GUINT64_FORMAT " entries%s",
		       target, res.appended, res.years, res.pos, res.head_written ? ", HEAD signed" : "",
		       res.log_size, res.checkpoint_written ? ", checkpoint signed" : "");
		if (res.witnesses > 0)
			printf(", cosigned by %u of %u witnesses (%u new)", res.cosigned, res.witnesses,
			       res.cosignatures_added);
		putchar('\n');
		for (guint i = 0; res.witness_problems != NULL && i < res.witness_problems->len; i++) {
			g_autofree char *m = text_mask_controls(g_ptr_array_index(res.witness_problems, i));

			fprintf(stderr, "vulnid: %s\n", m);
		}
		feed_export_result_clear(&res);
	} else if (strcmp(what, "osv") == 0) {
		osv_opts o = { id_prefix, base_url };
		guint n = 0;

		s = osv_export(st, target, &o, &n, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		printf("%s: %u OSV records\n", target, n);
	} else if (strcmp(what, "mbox") == 0) {
		guint n = 0;

		s = pubmail_mbox(st, target, cfg->domain, &n, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		printf("%s: %u mails\n", target, n);
	} else {
		g_autofree char *conf_title = conf_export(cfg->export_title);
		g_autofree char *def_title = g_strdup_printf("%s vulnerability identifiers", cfg->prefix);
		g_autofree char *origin = conf_export(cfg->export_log_origin);
		g_autofree char *fpr = NULL;
		g_autofree char *vkey = NULL;
		g_autoptr(note_key) log_key = NULL;
		html_opts o = { title != NULL ? title : conf_title != NULL ? conf_title : def_title,
				cfg->domain, { id_prefix, base_url }, cfg->request_address, NULL, NULL };
		html_result res;

		/* the page on verifying the archive names both keys */
		s = crypto_set_home(cfg->gnupg_home, &err);
		if (s == VULNID_OK)
			s = crypto_robot_fingerprint(&fpr, &err);
		if (s == VULNID_OK)
			s = feedlog_key_open(cfg->dir, origin, cfg->domain, cfg->prefix, fpr, &log_key, NULL, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		vkey = note_key_vkey(log_key);
		o.robot_fpr = fpr;
		o.log_vkey = vkey;
		s = html_export(st, target, &o, &res, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
		printf("%s: %u entry pages, %u OSV records, %u mails\n", target, res.entries, res.osv, res.mails);
	}
	return EX_OK;
}
