/* cmd-quarantine.c - vulnid quarantine list|show */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "cli.h"
#include "text.h"

/* Mail archived sealed (it asked for an embargo, or is about one) shows
 * no content here: its Subject is not stored, and its raw bytes are
 * encrypted to the robot's key. */
static const char quarantine_sql[] =
	"SELECT q.id, q.created, q.reason, q.detail, m.id, coalesce(m.message_id, ''),"
	" coalesce(m.from_addr, ''), coalesce(m.envelope_from, ''), coalesce(m.subject, ''),"
	" m.raw_sha256, coalesce(b.sealed, 0) FROM quarantine q JOIN messages m ON m.id = q.message"
	" LEFT JOIN blobs b ON b.sha256 = m.raw_sha256";

#define SEALED_SUBJECT "(sealed: the mail asked for or concerns an embargo)"

static void
print_masked(const char *label, const unsigned char *v)
{
	g_autofree char *m = text_mask_controls((const char *) v);

	printf("%-11s %s\n", label, m);
}

int
cmd_quarantine(cli_ctx *ctx, int argc, char **argv)
{
	gboolean json = FALSE, raw = FALSE;
	GOptionEntry entries[] = {
		{ "raw", 0, 0, G_OPTION_ARG_NONE, &raw, "show: print the archived message itself", NULL },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autofree char *sql = NULL;
	sqlite3_stmt *stmt;
	vulnid_status s;
	gboolean show;
	gint64 id = 0;
	int rc, rows = 0;

	if (!cli_parse(ctx, "list | show N", "Show mail that was set aside.", entries, &argc, &argv))
		return EX_USAGE;
	json = ctx->json;
	show = argc == 3 && strcmp(argv[1], "show") == 0;
	if (!(argc == 2 && strcmp(argv[1], "list") == 0) && !show) {
		fprintf(stderr, "vulnid: usage: vulnid quarantine list [--json] | show N [--raw]\n");
		return EX_USAGE;
	}
	if (show && !g_ascii_string_to_signed(argv[2], 10, 1, G_MAXINT64, &id, NULL)) {
		fprintf(stderr, "vulnid: '%s' is not a quarantine number\n", argv[2]);
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	sql = g_strdup_printf("%s%s ORDER BY q.id", quarantine_sql, show ? " WHERE q.id = ?" : "");
	stmt = store_prepare(st, sql, &s, &err);
	if (stmt == NULL)
		return cli_fail(s, err);
	if (show)
		sqlite3_bind_int64(stmt, 1, id);
	json_builder_begin_array(b);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		rows++;
		if (show && raw) {
			g_autoptr(GBytes) data = NULL;
			const char *sha = (const char *) sqlite3_column_text(stmt, 9);
			gsize len;
			const char *p;

			s = store_blob_get(st, sha, &data, &err);
			if (s != VULNID_OK) {
				sqlite3_finalize(stmt);
				return cli_fail(s, err);
			}
			p = g_bytes_get_data(data, &len);
			fwrite(p, 1, len, stdout);
		} else if (json) {
			const char *names[] = { "id", "created", "reason", "detail", "message", "message_id",
						"from", "sender", "subject", "sha256" };

			json_builder_begin_object(b);
			for (int i = 0; i < 10; i++) {
				json_builder_set_member_name(b, names[i]);
				if (i == 0 || i == 4)
					json_builder_add_int_value(b, sqlite3_column_int64(stmt, i));
				else
					json_builder_add_string_value(b, (const char *) sqlite3_column_text(stmt, i));
			}
			json_builder_set_member_name(b, "sealed");
			json_builder_add_boolean_value(b, sqlite3_column_int(stmt, 10) != 0);
			json_builder_end_object(b);
		} else if (show) {
			gboolean sealed = sqlite3_column_int(stmt, 10) != 0;

			printf("%-11s %" G_GINT64_FORMAT "\n", "quarantine:", (gint64) sqlite3_column_int64(stmt, 0));
			print_masked("received:", sqlite3_column_text(stmt, 1));
			print_masked("reason:", sqlite3_column_text(stmt, 2));
			print_masked("message-id:", sqlite3_column_text(stmt, 5));
			print_masked("from:", sqlite3_column_text(stmt, 6));
			print_masked("sender:", sqlite3_column_text(stmt, 7));
			print_masked("subject:", sealed ? (const unsigned char *) SEALED_SUBJECT
							: sqlite3_column_text(stmt, 8));
			print_masked("sha256:", sqlite3_column_text(stmt, 9));
			if (sealed)
				printf("%-11s %s\n", "sealed:", "yes: the raw mail is stored encrypted to the robot's key "
				       "(--raw prints it so)");
			printf("detail:\n");
			{
				g_auto(GStrv) lines = g_strsplit((const char *) sqlite3_column_text(stmt, 3), "\n", -1);

				for (char **l = lines; *l; l++) {
					g_autofree char *m = text_mask_controls(*l);

					printf("  %s\n", m);
				}
			}
		} else {
			g_autofree char *subj = text_mask_controls(sqlite3_column_int(stmt, 10) != 0 ? SEALED_SUBJECT
								   : (const char *) sqlite3_column_text(stmt, 8));
			g_autofree char *from = text_mask_controls((const char *) sqlite3_column_text(stmt, 6));

			printf("%" G_GINT64_FORMAT "  %s  %-16s  %s  %s\n", (gint64) sqlite3_column_int64(stmt, 0),
			       sqlite3_column_text(stmt, 1), sqlite3_column_text(stmt, 2), from, subj);
		}
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return cli_fail(store_fail(st, rc, "quarantine", &err), err);
	if (show && rows == 0) {
		fprintf(stderr, "vulnid: no quarantined mail %" G_GINT64_FORMAT "\n", id);
		return EX_NOINPUT;
	}
	json_builder_end_array(b);
	if (json && !raw) {
		g_autoptr(JsonNode) root = json_builder_get_root(b);

		cli_print_json(root);
	}
	return EX_OK;
}
