/* cmd-queue.c - vulnid queue list|run */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "audit.h"
#include "cli.h"
#include "notify.h"
#include "outbox.h"
#include "text.h"

static int
queue_list(store *st, gboolean json)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT id, created, kind, coalesce(entry, ''), message_id, recipients, status,"
		" attempts, next_attempt, coalesce(last_error, ''),"
		" CASE WHEN claim_until > ?1 THEN claim_until END FROM outbox"
		" WHERE status <> 'delivered' ORDER BY id", &s, &err);
	g_autofree char *now = store_now();
	int rc;

	if (stmt == NULL)
		return cli_fail(s, err);
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_TRANSIENT);
	json_builder_begin_array(b);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *cols[] = { "id", "created", "kind", "entry", "message_id", "recipients",
				       "status", "attempts", "next_attempt", "last_error", "claimed_until" };

		if (json) {
			json_builder_begin_object(b);
			for (int i = 0; i < 11; i++) {
				json_builder_set_member_name(b, cols[i]);
				if (i == 0 || i == 7)
					json_builder_add_int_value(b, sqlite3_column_int64(stmt, i));
				else if (i == 5) {
					g_autoptr(JsonParser) p = json_parser_new();

					if (json_parser_load_from_data(p, (const char *) sqlite3_column_text(stmt, i), -1, NULL))
						json_builder_add_value(b, json_node_copy(json_parser_get_root(p)));
					else
						json_builder_add_null_value(b);
				} else if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
					json_builder_add_null_value(b);
				else
					json_builder_add_string_value(b, (const char *) sqlite3_column_text(stmt, i));
			}
			json_builder_end_object(b);
		} else {
			g_autofree char *why = text_mask_controls((const char *) sqlite3_column_text(stmt, 9));
			g_autofree char *to = text_mask_controls((const char *) sqlite3_column_text(stmt, 5));
			g_autofree char *claimed = sqlite3_column_type(stmt, 10) == SQLITE_NULL ? g_strdup("")
				: g_strdup_printf(" sending (claimed until %s)", sqlite3_column_text(stmt, 10));

			printf("%" G_GINT64_FORMAT "  %s  %-8s  %-6s  %s  attempts=%d next=%s%s %s\n",
			       (gint64) sqlite3_column_int64(stmt, 0), sqlite3_column_text(stmt, 1),
			       sqlite3_column_text(stmt, 6), sqlite3_column_text(stmt, 2), to,
			       sqlite3_column_int(stmt, 7), sqlite3_column_text(stmt, 8), claimed, why);
		}
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return cli_fail(store_fail(st, rc, "outbox", &err), err);
	json_builder_end_array(b);
	if (json) {
		g_autoptr(JsonNode) root = json_builder_get_root(b);

		cli_print_json(root);
	}
	return EX_OK;
}

/* What the queue holds that is deferred, with why, on stderr: a queue
 * that stays deferred must be noticed (cron mails this output; the
 * systemd unit fails).  Returns how many. */
static guint
report_deferred(store *st)
{
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT id, kind, recipients, attempts, next_attempt, coalesce(last_error, ''), created"
		" FROM outbox WHERE status = 'deferred' ORDER BY id", &s, &err);
	guint n = 0;

	if (stmt == NULL)
		return 0;
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		g_autofree char *why = text_mask_controls((const char *) sqlite3_column_text(stmt, 5));
		g_autofree char *to = text_mask_controls((const char *) sqlite3_column_text(stmt, 2));

		if (n++ < 50)
			fprintf(stderr, "vulnid: deferred: item %" G_GINT64_FORMAT " (%s to %s, queued %s,"
				" %d attempts, next %s): %s\n", (gint64) sqlite3_column_int64(stmt, 0),
				sqlite3_column_text(stmt, 1), to, sqlite3_column_text(stmt, 6),
				sqlite3_column_int(stmt, 3), sqlite3_column_text(stmt, 4), why);
	}
	sqlite3_finalize(stmt);
	if (n > 50)
		fprintf(stderr, "vulnid: deferred: %u more (vulnid queue list)\n", n - 50);
	return n;
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
cmd_queue(const cli_global *g, int argc, char **argv)
{
	gboolean json = FALSE, force = FALSE;
	GOptionEntry entries[] = {
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "list: as JSON", NULL },
		{ "force", 0, 0, G_OPTION_ARG_NONE, &force, "run: also items whose retry time has not come", NULL },
		{ NULL }
	};
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(GError) err = NULL;
	gint64 id = 0;
	int rc;

	if (!cli_parse("list|run|retry ID", "Show, deliver or retry the outgoing mail queue.",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (!(argc == 2 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "run") == 0)) &&
	    !(argc == 3 && strcmp(argv[1], "retry") == 0 &&
	      g_ascii_string_to_signed(argv[2], 10, 1, G_MAXINT64, &id, NULL))) {
		fprintf(stderr, "vulnid: usage: vulnid queue list [--json] | run [--force] | retry ID\n");
		return EX_USAGE;
	}
	if ((json && strcmp(argv[1], "list") != 0) || (force && strcmp(argv[1], "run") != 0)) {
		fprintf(stderr, "vulnid: %s is for queue %s only\n", json ? "--json" : "--force",
			json ? "list" : "run");
		return EX_USAGE;
	}
	rc = cli_open(g, STORE_OPEN_EXISTING, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	if (strcmp(argv[1], "list") == 0)
		return queue_list(st, json);
	if (strcmp(argv[1], "retry") == 0) {
		vulnid_status s = outbox_retry(st, id, &err);

		audit_flush(st, cfg->audit_path, NULL);
		return s == VULNID_OK ? EX_OK : cli_fail(s, err);
	}
	return cli_queue_run(cfg, st, force);
}
