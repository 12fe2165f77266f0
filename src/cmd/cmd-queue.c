/* cmd-queue.c - vulnid queue list|run */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "audit.h"
#include "cli.h"
#include "notify.h"
#include "outbox.h"
#include "store-outbox.h"
#include "text.h"

static void
json_add_text(JsonBuilder *b, const char *name, const char *v)
{
	json_builder_set_member_name(b, name);
	if (v != NULL)
		json_builder_add_string_value(b, v);
	else
		json_builder_add_null_value(b);
}

static void
queue_row_json(JsonBuilder *b, const store_outbox_row *r)
{
	g_autoptr(JsonParser) p = json_parser_new();

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_int_value(b, r->id);
	json_add_text(b, "created", r->created);
	json_add_text(b, "kind", r->kind);
	json_add_text(b, "entry", r->entry);
	json_add_text(b, "message_id", r->message_id);
	json_builder_set_member_name(b, "recipients");
	if (r->recipients != NULL && json_parser_load_from_data(p, r->recipients, -1, NULL))
		json_builder_add_value(b, json_node_copy(json_parser_get_root(p)));
	else
		json_builder_add_null_value(b);
	json_add_text(b, "status", r->status);
	json_builder_set_member_name(b, "attempts");
	json_builder_add_int_value(b, r->attempts);
	json_add_text(b, "next_attempt", r->next_attempt);
	json_add_text(b, "last_error", r->last_error);
	json_add_text(b, "claimed_until", r->claimed_until);
	json_add_text(b, "shown", r->shown);
	json_builder_end_object(b);
}

static void
queue_row_print(const store_outbox_row *r)
{
	g_autofree char *why = text_mask_controls(r->last_error);
	g_autofree char *to = text_mask_controls(r->recipients);
	g_autofree char *claimed = r->claimed_until == NULL ? g_strdup("")
		: g_strdup_printf(" sending (claimed until %s)", r->claimed_until);

	printf("%" G_GINT64_FORMAT "  %s  %-8s  %-6s  %s  attempts=%d next=%s%s %s\n",
	       r->id, r->created, r->status, r->kind, to, (int) r->attempts,
	       r->next_attempt != NULL ? r->next_attempt : "(null)", claimed, why);
}

/* Failed items once shown leave the list: an empty list means again
 * that nothing needs attention.  In one transaction with nothing else. */
static vulnid_status
queue_mark_shown(store *st, GPtrArray *rows, const char *now, guint *failed, GError **err)
{
	vulnid_status s = VULNID_OK;

	*failed = 0;
	for (guint i = 0; i < rows->len; i++) {
		const store_outbox_row *r = g_ptr_array_index(rows, i);

		*failed += strcmp(r->status, "failed") == 0 && r->shown == NULL;
	}
	if (*failed == 0)
		return VULNID_OK;
	s = store_begin(st, err);
	for (guint i = 0; s == VULNID_OK && i < rows->len; i++) {
		const store_outbox_row *r = g_ptr_array_index(rows, i);

		if (strcmp(r->status, "failed") == 0 && r->shown == NULL)
			s = store_outbox_mark_shown(st, r->id, now, err);
	}
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}

static int
queue_list(store *st, gboolean json, gboolean all)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_row_free);
	g_autofree char *now = store_now();
	vulnid_status s = all ? store_outbox_list(st, now, FALSE, rows, &err)
			      : store_outbox_list_attention(st, now, rows, &err);
	guint failed = 0;

	if (s != VULNID_OK)
		return cli_fail(s, err);
	json_builder_begin_array(b);
	for (guint i = 0; i < rows->len; i++) {
		if (json)
			queue_row_json(b, g_ptr_array_index(rows, i));
		else
			queue_row_print(g_ptr_array_index(rows, i));
	}
	json_builder_end_array(b);
	if (json) {
		g_autoptr(JsonNode) root = json_builder_get_root(b);

		cli_print_json(root);
	}
	fflush(stdout);
	if (all)
		return EX_OK;
	s = queue_mark_shown(st, rows, now, &failed, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (failed > 0)
		fprintf(stderr, "vulnid: %u failed item%s shown this once; vulnid queue list --all lists %s"
			" again, vulnid queue retry N sends one again\n", failed, failed == 1 ? "" : "s",
			failed == 1 ? "it" : "them");
	return EX_OK;
}

/* What the queue holds that is deferred, with why, on stderr: a queue
 * that stays deferred must be noticed (cron mails this output; the
 * systemd unit fails).  Returns how many. */
static guint
report_deferred(store *st)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_row_free);
	g_autofree char *now = store_now();

	if (store_outbox_list(st, now, TRUE, rows, NULL) != VULNID_OK)
		return 0;
	for (guint i = 0; i < rows->len && i < 50; i++) {
		const store_outbox_row *r = g_ptr_array_index(rows, i);
		g_autofree char *why = text_mask_controls(r->last_error);
		g_autofree char *to = text_mask_controls(r->recipients);

		fprintf(stderr, "vulnid: deferred: item %" G_GINT64_FORMAT " (%s to %s, queued %s,"
			" %d attempts, next %s): %s\n", r->id, r->kind, to, r->created,
			(int) r->attempts, r->next_attempt != NULL ? r->next_attempt : "(null)", why);
	}
	if (rows->len > 50)
		fprintf(stderr, "vulnid: deferred: %u more (vulnid queue list)\n", rows->len - 50);
	return rows->len;
}

int
cli_queue_run(const vulnid_config *cfg, store *st, gboolean force)
{
	g_autoptr(GError) err = NULL;
	outbox_run_result r;
	/* Bounded, since connect() has no timeout of its own. */
	outbox_run_opts o = { 0, force, (guint) MIN(cfg->smtp_timeout * 20, 3600), notify_delivery_failed };
	vulnid_status s = outbox_run(st, cfg, &o, &r, &err);

	audit_flush(st, cfg->audit_path, NULL);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	printf("delivered %u, deferred %u, failed %u\n", r.delivered, r.deferred, r.failed);
	fflush(stdout);
	return report_deferred(st) > 0 ? EX_TEMPFAIL : EX_OK;
}

int
cmd_queue(cli_ctx *ctx, int argc, char **argv)
{
	gboolean force = FALSE, all = FALSE;
	GOptionEntry entries[] = {
		{ "force", 0, 0, G_OPTION_ARG_NONE, &force, "run: also items whose retry time has not come", NULL },
		{ "all", 0, 0, G_OPTION_ARG_NONE, &all, "list: also the failed items already shown", NULL },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id = 0;
	int rc;

	if (!cli_parse(ctx, "list|run|retry ID", "Show, deliver or retry the outgoing mail queue.",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (!(argc == 2 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "run") == 0)) &&
	    !(argc == 3 && strcmp(argv[1], "retry") == 0 &&
	      g_ascii_string_to_signed(argv[2], 10, 1, G_MAXINT64, &id, NULL))) {
		fprintf(stderr, "vulnid: usage: vulnid queue list [--all] [--json] | run [--force] | retry ID\n");
		return EX_USAGE;
	}
	if (((ctx->json || all) && strcmp(argv[1], "list") != 0) || (force && strcmp(argv[1], "run") != 0)) {
		fprintf(stderr, "vulnid: %s is for queue %s only\n", ctx->json ? "--json" : all ? "--all" : "--force",
			ctx->json || all ? "list" : "run");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (strcmp(argv[1], "list") == 0)
		return queue_list(st, ctx->json, all);
	if (strcmp(argv[1], "retry") == 0) {
		vulnid_status s = outbox_retry(st, id, &err);

		audit_flush(st, cfg->audit_path, NULL);
		return s == VULNID_OK ? EX_OK : cli_fail(s, err);
	}
	return cli_queue_run(cfg, st, force);
}
