/* cmd-quarantine.c - vulnid quarantine list|show */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "cli.h"
#include "store-quarantine.h"
#include "text.h"

/* Mail archived sealed (it asked for an embargo, or is about one) shows
 * no content here: its Subject is not stored, and its raw bytes are
 * encrypted to the robot's key. */
#define SEALED_SUBJECT "(sealed: the mail asked for or concerns an embargo)"

typedef struct {
	store *st;
	gboolean json, raw, show;
	JsonBuilder *b;
} quarantine_out;

static void
print_masked(const char *label, const char *v)
{
	g_autofree char *m = text_mask_controls(v);

	printf("%-11s %s\n", label, m);
}

/* show N --raw: the archived message itself. */
static vulnid_status
print_raw(const store_quarantine_row *r, store *st, GError **err)
{
	g_autoptr(GBytes) data = NULL;
	vulnid_status s = store_blob_get(st, r->sha256, &data, err);
	gsize len;
	const char *p;

	if (s != VULNID_OK)
		return s;
	p = g_bytes_get_data(data, &len);
	fwrite(p, 1, len, stdout);
	return VULNID_OK;
}

static void
add_json(const store_quarantine_row *r, JsonBuilder *b)
{
	const char *names[] = { "created", "reason", "detail", "message_id", "from", "sender", "subject", "sha256" };
	const char *values[] = { r->created, r->reason, r->detail, r->message_id, r->from, r->sender, r->subject,
				 r->sha256 };

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_int_value(b, r->id);
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		json_builder_set_member_name(b, names[i]);
		json_builder_add_string_value(b, values[i]);
		if (i == 2) {
			json_builder_set_member_name(b, "message");
			json_builder_add_int_value(b, r->message);
		}
	}
	json_builder_set_member_name(b, "sealed");
	json_builder_add_boolean_value(b, r->sealed);
	json_builder_end_object(b);
}

static void
print_show(const store_quarantine_row *r)
{
	g_auto(GStrv) lines = NULL;

	printf("%-11s %" G_GINT64_FORMAT "\n", "quarantine:", r->id);
	print_masked("received:", r->created);
	print_masked("reason:", r->reason);
	print_masked("message-id:", r->message_id);
	print_masked("from:", r->from);
	print_masked("sender:", r->sender);
	print_masked("subject:", r->sealed ? SEALED_SUBJECT : r->subject);
	print_masked("sha256:", r->sha256);
	if (r->sealed)
		printf("%-11s %s\n", "sealed:", "yes: the raw mail is stored encrypted to the robot's key "
		       "(--raw prints it so)");
	printf("detail:\n");
	lines = g_strsplit(r->detail, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_autofree char *m = text_mask_controls(*l);

		printf("  %s\n", m);
	}
}

static void
print_line(const store_quarantine_row *r)
{
	g_autofree char *subj = text_mask_controls(r->sealed ? SEALED_SUBJECT : r->subject);
	g_autofree char *from = text_mask_controls(r->from);

	printf("%" G_GINT64_FORMAT "  %s  %-16s  %s  %s\n", r->id, r->created, r->reason, from, subj);
}

static vulnid_status
one_row(const store_quarantine_row *r, gpointer data, GError **err)
{
	quarantine_out *o = data;

	if (o->show && o->raw)
		return print_raw(r, o->st, err);
	if (o->json)
		add_json(r, o->b);
	else if (o->show)
		print_show(r);
	else
		print_line(r);
	return VULNID_OK;
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
	quarantine_out o = { 0 };
	vulnid_status s;
	gint64 id = 0;
	guint rows = 0;
	int rc;

	if (!cli_parse(ctx, "list | show N", "Show mail that was set aside.", entries, &argc, &argv))
		return EX_USAGE;
	json = ctx->json;
	o.show = argc == 3 && strcmp(argv[1], "show") == 0;
	if (!(argc == 2 && strcmp(argv[1], "list") == 0) && !o.show) {
		fprintf(stderr, "vulnid: usage: vulnid quarantine list [--json] | show N [--raw]\n");
		return EX_USAGE;
	}
	if (o.show && !g_ascii_string_to_signed(argv[2], 10, 1, G_MAXINT64, &id, NULL)) {
		fprintf(stderr, "vulnid: '%s' is not a quarantine number\n", argv[2]);
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	o.st = st;
	o.json = json;
	o.raw = raw;
	o.b = b;
	json_builder_begin_array(b);
	s = store_quarantine_each(st, o.show ? id : 0, one_row, &o, &rows, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (o.show && rows == 0) {
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
