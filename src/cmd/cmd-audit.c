/* cmd-audit.c - vulnid audit verify|flush|repair */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "text.h"

static int
audit_verify_cmd(store *st, const vulnid_config *cfg)
{
	g_autoptr(GError) err = NULL;
	audit_verify_result r;
	vulnid_status s = audit_verify_chain(st, cfg->audit_path, &r, &err);

	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		fprintf(stderr, "vulnid: %s: %s%s\n", r.bad_file != NULL ? r.bad_file : cfg->audit_path, m,
			s == VULNID_ERR_NOTFOUND && g_strcmp0(r.bad_file, cfg->audit_path) == 0
			? " (vulnid audit flush writes it anew from the database)" : "");
		audit_verify_result_clear(&r);
		return cli_exit(s);
	}
	if (r.files > 1)
		printf("%s and %u rotated files: %" G_GUINT64_FORMAT " lines from event %" G_GUINT64_FORMAT
		       ", chain intact\n", cfg->audit_path, r.files - 1, r.lines, r.first_seq);
	else
		printf("%s: %" G_GUINT64_FORMAT " lines, chain intact\n", cfg->audit_path, r.lines);
	audit_verify_result_clear(&r);
	return EX_OK;
}

/* Rewrite the file from the database chain, and say so in the chain. */
static int
audit_repair_cmd(store *st, const vulnid_config *cfg)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *saved = NULL;
	guint64 written = 0;
	vulnid_status s = audit_repair(st, cfg->audit_path, &written, &saved, &err);

	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (saved == NULL) {
		printf("%s: %" G_GUINT64_FORMAT " lines, nothing to repair\n", cfg->audit_path, written);
		return EX_OK;
	}
	{
		g_autoptr(audit_event) ev = audit_event_new("audit-repaired", NULL, NULL);

		audit_event_int(ev, "lines", (gint64) written);
		audit_event_str(ev, "damaged", saved);
		s = audit_append_now(st, ev, &err);
		if (s == VULNID_OK)
			s = audit_flush(st, cfg->audit_path, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
	}
	printf("%s: rewritten from the database chain (%" G_GUINT64_FORMAT " lines); the damaged file is %s\n",
	       cfg->audit_path, written, saved);
	return EX_OK;
}

int
cmd_audit(cli_ctx *ctx, int argc, char **argv)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	if (!cli_parse(ctx, "verify|flush|repair",
		       "Check the audit log (and its rotated files) against the database chain,\n"
		       "append committed events the file is missing, or rewrite a file that lost\n"
		       "lines from the database chain (the damaged file is kept beside it).", NULL, &argc, &argv))
		return EX_USAGE;
	if (argc != 2 || (strcmp(argv[1], "verify") != 0 && strcmp(argv[1], "flush") != 0 &&
			  strcmp(argv[1], "repair") != 0)) {
		fprintf(stderr, "vulnid: usage: vulnid audit verify | flush | repair\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (strcmp(argv[1], "flush") == 0) {
		s = audit_flush(st, cfg->audit_path, &err);
		return s == VULNID_OK ? EX_OK : cli_fail(s, err);
	}
	if (strcmp(argv[1], "repair") == 0)
		return audit_repair_cmd(st, cfg);
	return audit_verify_cmd(st, cfg);
}
