/* cmd-vendor.c - vulnid vendor add|list|show|alias|domain|contact|remove-contact|import-securitytxt */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "audit.h"
#include "cli.h"
#include "crypto.h"
#include "jsonb.h"
#include "text.h"
#include "vendor.h"

static const char usage_text[] =
	"usage: vulnid vendor add NAME [--alias A]... [--domain D]... [--contact ADDR]... [--notes TEXT]\n"
	"       vulnid vendor list [--json]\n"
	"       vulnid vendor show NAME [--json]\n"
	"       vulnid vendor alias NAME ALIAS\n"
	"       vulnid vendor domain NAME DOMAIN\n"
	"       vulnid vendor contact NAME ADDR\n"
	"       vulnid vendor remove-contact NAME ADDR\n"
	"       vulnid vendor key NAME FILE\n"
	"       vulnid vendor import-securitytxt DOMAIN FILE\n";

static int
usage(void)
{
	fputs(usage_text, stderr);
	return EX_USAGE;
}

/* Print a value that came from input (an argument, a file, the
 * database) on a terminal: control characters masked. */
static void
put_masked(FILE *f, const char *prefix, const char *value)
{
	g_autofree char *m = text_mask_controls(value);

	fprintf(f, "%s%s\n", prefix, m);
}

static char *
join_masked(GPtrArray *a, const char *sep)
{
	g_autoptr(GString) out = g_string_new(NULL);

	if (a->len == 0)
		return g_strdup("-");
	for (guint i = 0; i < a->len; i++) {
		g_autofree char *m = text_mask_controls(g_ptr_array_index(a, i));

		if (i > 0)
			g_string_append(out, sep);
		g_string_append(out, m);
	}
	return g_strdup(out->str);
}

/* ---- output --------------------------------------------------------------- */

static void
vendor_to_json(JsonBuilder *b, const vendor *v)
{
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_int_value(b, v->id);
	jsonb_str_or_null(b, "name", v->name);
	jsonb_str_array(b, "aliases", v->aliases);
	jsonb_str_array(b, "domains", v->domains);
	jsonb_str_array(b, "contacts", v->contacts);
	jsonb_str_or_null(b, "notes", v->notes);
	jsonb_str_or_null(b, "key_fpr", v->key_fpr);
	jsonb_str_or_null(b, "encryption", v->encryption);
	jsonb_str_or_null(b, "languages", v->languages);
	jsonb_str_or_null(b, "expires", v->expires);
	jsonb_str_or_null(b, "created", v->created);
	jsonb_str_or_null(b, "updated", v->updated);
	json_builder_end_object(b);
}

static void
print_json(JsonBuilder *b)
{
	g_autoptr(JsonGenerator) gen = json_generator_new();
	g_autoptr(JsonNode) root = json_builder_get_root(b);
	g_autofree char *text = NULL;

	json_generator_set_pretty(gen, TRUE);
	json_generator_set_root(gen, root);
	text = json_generator_to_data(gen, NULL);
	printf("%s\n", text);
}

static void
vendor_print(const vendor *v)
{
	g_autofree char *aliases = join_masked(v->aliases, ", ");
	g_autofree char *domains = join_masked(v->domains, ", ");
	g_autofree char *contacts = join_masked(v->contacts, ", ");

	put_masked(stdout, "Name:       ", v->name);
	printf("Aliases:    %s\n", aliases);
	printf("Domains:    %s\n", domains);
	printf("Contacts:   %s\n", contacts);
	if (v->encryption != NULL)
		put_masked(stdout, "Encryption: ", v->encryption);
	if (v->languages != NULL)
		put_masked(stdout, "Languages:  ", v->languages);
	if (v->expires != NULL)
		put_masked(stdout, "Expires:    ", v->expires);
	if (v->key_fpr != NULL)
		put_masked(stdout, "Key:        ", v->key_fpr);
	put_masked(stdout, "Created:    ", v->created);
	put_masked(stdout, "Updated:    ", v->updated);
	if (v->notes != NULL) {
		g_auto(GStrv) lines = g_strsplit(v->notes, "\n", -1);

		printf("Notes:\n");
		for (char **l = lines; *l != NULL; l++)
			put_masked(stdout, "  ", *l);
	}
}

static int
vendor_cmd_list(cli_ctx *ctx, gboolean json)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GPtrArray) list = NULL;
	g_autoptr(GError) err = NULL;
	g_autoptr(JsonBuilder) b = json_builder_new();
	vulnid_status s;
	int rc;

	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = vendor_list(st, &list, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	json_builder_begin_array(b);
	for (guint i = 0; i < list->len; i++) {
		const vendor *v = g_ptr_array_index(list, i);

		if (json)
			vendor_to_json(b, v);
		else {
			g_autofree char *name = text_mask_controls(v->name);
			g_autofree char *domains = join_masked(v->domains, ",");
			g_autofree char *contacts = join_masked(v->contacts, ", ");

			printf("%s  %s  %s\n", name, domains, contacts);
		}
	}
	json_builder_end_array(b);
	if (json)
		print_json(b);
	return EX_OK;
}

static int
vendor_cmd_show(cli_ctx *ctx, const char *name, gboolean json)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(vendor) v = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = vendor_find(st, name, &v, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (json) {
		g_autoptr(JsonBuilder) b = json_builder_new();

		vendor_to_json(b, v);
		print_json(b);
	} else
		vendor_print(v);
	return EX_OK;
}

/* ---- changes -------------------------------------------------------------- */

/* What a change needs: the arguments, and a report that is printed only
 * once the transaction has committed. */
typedef struct {
	const char *name;
	const char *arg;
	const char *notes;
	char **aliases;
	char **domains;
	char **contacts;
	const securitytxt *stxt;
	GString *report;
	/* the one-argument changes: what to do, and what to report */
	vulnid_status (*op)(store *st, gint64 vendor_id, const char *arg, GError **err);
	const char *done;
} change;

typedef vulnid_status (*change_fn)(store *st, change *c, GError **err);

/* One change = one transaction with its audit events, then the events go
 * to audit.log.  A failed flush is not the change's failure: the next
 * command (or `vulnid audit flush`) catches the file up. */
static int
run_change(cli_ctx *ctx, change_fn fn, change *c)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	int rc;

	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = store_begin(st, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	s = fn(st, c, &err);
	if (s != VULNID_OK) {
		store_rollback(st);
		return cli_fail(s, err);
	}
	s = store_commit(st, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	audit_flush(st, cfg->audit_path, NULL);
	fputs(c->report->str, stdout);
	return EX_OK;
}

/* One line of the report: before, the value masked, after. */
static void
report(change *c, const char *before, const char *value, const char *after)
{
	g_autofree char *m = text_mask_controls(value);

	g_string_append(c->report, before);
	g_string_append(c->report, m);
	g_string_append(c->report, after);
	g_string_append_c(c->report, '\n');
}

/* The vendor's id and stored name. */
static vulnid_status
lookup(store *st, const char *name, gint64 *id, char **stored, GError **err)
{
	g_autoptr(vendor) v = NULL;
	vulnid_status s = vendor_find(st, name, &v, err);

	if (s != VULNID_OK)
		return s;
	*id = v->id;
	*stored = g_strdup(v->name);
	return VULNID_OK;
}

static vulnid_status
do_add(store *st, change *c, GError **err)
{
	g_autofree char *name = NULL;
	gint64 id = 0;
	vulnid_status s = vendor_add(st, c->name, c->notes, &id, err);

	if (s != VULNID_OK)
		return s;
	for (char **a = c->aliases; a != NULL && *a != NULL; a++)
		if ((s = vendor_add_alias(st, id, *a, err)) != VULNID_OK)
			return s;
	for (char **d = c->domains; d != NULL && *d != NULL; d++)
		if ((s = vendor_add_domain(st, id, *d, err)) != VULNID_OK)
			return s;
	for (char **a = c->contacts; a != NULL && *a != NULL; a++)
		if ((s = vendor_add_contact(st, id, *a, "operator", err)) != VULNID_OK)
			return s;
	if ((s = lookup(st, c->name, &id, &name, err)) != VULNID_OK)
		return s;
	report(c, "added vendor '", name, "'");
	return VULNID_OK;
}

static vulnid_status
add_operator_contact(store *st, gint64 vendor_id, const char *address, GError **err)
{
	return vendor_add_contact(st, vendor_id, address, "operator", err);
}

/* alias, domain, contact, remove-contact: look the vendor up, apply. */
static vulnid_status
do_vendor_op(store *st, change *c, GError **err)
{
	g_autofree char *name = NULL;
	gint64 id = 0;
	vulnid_status s;

	if ((s = lookup(st, c->name, &id, &name, err)) != VULNID_OK ||
	    (s = c->op(st, id, c->arg, err)) != VULNID_OK)
		return s;
	report(c, c->done, name, "'");
	return VULNID_OK;
}

static vulnid_status
do_key(store *st, change *c, GError **err)
{
	g_autofree char *name = NULL;
	g_autofree char *text = NULL;
	g_autoptr(GPtrArray) fprs = NULL;
	g_autoptr(GBytes) data = NULL;
	gsize len;
	gint64 id = 0;
	vulnid_status s;

	if ((s = lookup(st, c->name, &id, &name, err)) != VULNID_OK)
		return s;
	if (!g_file_get_contents(c->arg, &text, &len, NULL))
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "cannot read '%s'", c->arg);
	data = g_bytes_new_take(g_steal_pointer(&text), len);
	if ((s = crypto_import(data, &fprs, err)) != VULNID_OK)
		return s;
	if (fprs->len != 1)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the file must hold exactly one key");
	if ((s = vendor_set_key(st, id, g_ptr_array_index(fprs, 0), err)) != VULNID_OK)
		return s;
	report(c, "set the OpenPGP key of '", name, "'");
	return VULNID_OK;
}

/* The values joined for one column of the vendor, NULL for none.  The
 * column holds at most 1000 characters (vendor_set_securitytxt refuses
 * more), so values that do not fit are left out rather than failing the
 * whole import. */
static char *
join_bounded(GPtrArray *a, const char *sep)
{
	g_autoptr(GString) out = g_string_new(NULL);
	glong chars = 0;

	for (guint i = 0; i < a->len; i++) {
		const char *v = g_ptr_array_index(a, i);
		glong n = g_utf8_strlen(v, -1) + (out->len > 0 ? (glong) strlen(sep) : 0);

		if (chars + n > 1000)
			break;
		if (out->len > 0)
			g_string_append(out, sep);
		g_string_append(out, v);
		chars += n;
	}
	return out->len > 0 ? g_strdup(out->str) : NULL;
}

/* The vendor a security.txt fetched from DOMAIN belongs to: the owner of
 * DOMAIN, else the vendor named DOMAIN (which then gets the domain), else
 * a new vendor named DOMAIN. */
static vulnid_status
import_target(store *st, change *c, gint64 *id, GError **err)
{
	g_autoptr(vendor) v = NULL;
	g_autoptr(GError) e = NULL;
	g_autofree char *name = NULL;
	vulnid_status s = vendor_find_by_domain(st, c->name, &v, &e);

	if (s == VULNID_OK) {
		report(c, "vendor '", v->name, "'");
		*id = v->id;
		return VULNID_OK;
	}
	if (s == VULNID_ERR_NOTFOUND) {
		g_clear_error(&e);
		s = vendor_find(st, c->name, &v, &e);
	}
	if (s == VULNID_OK) {
		s = vendor_add_domain(st, v->id, c->name, err);
		if (s != VULNID_OK)
			return s;
		report(c, "vendor '", v->name, "': domain added");
		*id = v->id;
		return VULNID_OK;
	}
	if (s != VULNID_ERR_NOTFOUND) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s;
	}
	/* A domain's name is its lower-case form. */
	name = g_ascii_strdown(c->name, -1);
	if ((s = vendor_add(st, name, NULL, id, err)) != VULNID_OK ||
	    (s = vendor_add_domain(st, *id, name, err)) != VULNID_OK)
		return s;
	g_clear_pointer(&name, g_free);
	if ((s = lookup(st, c->name, id, &name, err)) != VULNID_OK)
		return s;
	report(c, "vendor '", name, "': new");
	return VULNID_OK;
}

static vulnid_status
do_import(store *st, change *c, GError **err)
{
	const securitytxt *t = c->stxt;
	g_autofree char *enc = NULL;
	g_autofree char *lang = NULL;
	guint added = 0;
	gint64 id = 0;
	vulnid_status s = import_target(st, c, &id, err);

	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < t->contacts->len; i++) {
		const char *a = g_ptr_array_index(t->contacts, i);
		g_autoptr(GError) e = NULL;

		s = vendor_add_contact(st, id, a, "security.txt", &e);
		if (s == VULNID_ERR_EXISTS) {
			report(c, "contact ", a, ": already listed");
			continue;
		}
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e));
			return s;
		}
		report(c, "contact ", a, ": added");
		added++;
	}
	for (guint i = 0; i < t->other_contacts->len; i++)
		report(c, "contact ", g_ptr_array_index(t->other_contacts, i), ": not a mail address, not used");
	enc = join_bounded(t->encryption, ", ");
	lang = join_bounded(t->languages, ", ");
	s = vendor_set_securitytxt(st, id, enc, lang, t->expires, err);
	if (s != VULNID_OK)
		return s;
	if (enc != NULL)
		report(c, "encryption: ", enc, "");
	if (lang != NULL)
		report(c, "languages: ", lang, "");
	report(c, "expires: ", t->expires != NULL ? t->expires : "(not given)", "");
	if (t->signed_text)
		report(c, "", "OpenPGP cleartext-signed (signature not verified)", "");
	g_string_append_printf(c->report, "imported %u new contact%s\n", added, added == 1 ? "" : "s");
	return VULNID_OK;
}

/* At most max + 1 bytes of path ("-": standard input), so that the
 * parser sees that a file is too big without our reading all of it. */
static vulnid_status
read_bounded(const char *path, gsize max, GString *out, GError **err)
{
	char buf[8192];
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	vulnid_status s = VULNID_OK;

	if (fd < 0) {
		int e = errno;

		return vulnid_fail(err, e == ENOENT ? VULNID_ERR_NOTFOUND : vulnid_status_from_errno(e),
				   "cannot open '%s': %s", path, g_strerror(e));
	}
	while (out->len <= max) {
		ssize_t n = read(fd, buf, MIN(sizeof buf, max + 1 - out->len));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot read '%s': %s",
					path, g_strerror(errno));
			break;
		}
		if (n == 0)
			break;
		g_string_append_len(out, buf, n);
	}
	if (fd != 0)
		close(fd);
	return s;
}

static int
vendor_cmd_import(cli_ctx *ctx, const char *domain, const char *path)
{
	g_autoptr(GString) data = g_string_new(NULL);
	g_autoptr(GString) rep = g_string_new(NULL);
	g_autoptr(securitytxt) t = NULL;
	g_autoptr(GError) err = NULL;
	change c = { .name = domain, .report = rep };
	vulnid_status s;

	s = read_bounded(path, 64 * 1024, data, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	s = securitytxt_parse(data->str, data->len, NULL, &t, &err);
	if (s != VULNID_OK) {
		g_autofree char *p = text_mask_controls(path);
		g_autofree char *m = text_mask_controls(err->message);

		fprintf(stderr, "vulnid: %s: %s\n", p, m);
		return cli_exit(s);
	}
	/* An expired or sloppy file still names the vendor's contacts; the
	 * operator is told and decides. */
	for (guint i = 0; i < t->warnings->len; i++)
		put_masked(stderr, "vulnid: warning: ", g_ptr_array_index(t->warnings, i));
	c.stxt = t;
	return run_change(ctx, do_import, &c);
}

/* ---- the command ---------------------------------------------------------- */

/* GOptionContext leaves "--" in place when an argument after it starts
 * with a dash ("vulnid vendor domain X -- -bad.example"); it has done
 * its work then, so the first one left is only the separator. */
static gboolean
parse_args(cli_ctx *ctx, const char *usage_line, const char *summary, GOptionEntry *entries,
	   int *argc, char ***argv)
{
	if (!cli_parse(ctx, usage_line, summary, entries, argc, argv))
		return FALSE;
	if (ctx->json && strcmp(usage_line, "list") != 0 && strcmp(usage_line, "show NAME") != 0) {
		fprintf(stderr, "vulnid: --json is for vendor list and show only\n");
		return FALSE;
	}
	for (int i = 1; i < *argc; i++)
		if (strcmp((*argv)[i], "--") == 0) {
			memmove(*argv + i, *argv + i + 1, (size_t) (*argc - i) * sizeof(char *));
			(*argc)--;
			break;
		}
	return TRUE;
}

/* vulnid vendor add [--alias A] [--domain D] [--contact ADDR] [--notes TEXT] NAME */
static int
vendor_cmd_add(cli_ctx *ctx, int sargc, char **sargv)
{
	g_auto(GStrv) aliases = NULL;
	g_auto(GStrv) domains = NULL;
	g_auto(GStrv) contacts = NULL;
	g_autofree char *notes = NULL;
	GOptionEntry add_entries[] = {
		{ "alias", 0, 0, G_OPTION_ARG_STRING_ARRAY, &aliases, "another name of the vendor", "A" },
		{ "domain", 0, 0, G_OPTION_ARG_STRING_ARRAY, &domains, "a mail domain of the vendor", "D" },
		{ "contact", 0, 0, G_OPTION_ARG_STRING_ARRAY, &contacts, "an address to tell about entries", "ADDR" },
		{ "notes", 0, 0, G_OPTION_ARG_STRING, &notes, "free text for operators", "TEXT" },
		{ NULL }
	};
	g_autoptr(GString) rep = g_string_new(NULL);
	change c = { 0 };

	if (!parse_args(ctx, "add NAME", "Add a vendor to the directory.", add_entries, &sargc, &sargv))
		return EX_USAGE;
	if (sargc != 2)
		return usage();
	c.name = sargv[1];
	c.notes = notes;
	c.aliases = aliases;
	c.domains = domains;
	c.contacts = contacts;
	c.report = rep;
	return run_change(ctx, do_add, &c);
}

int
cmd_vendor(cli_ctx *ctx, int argc, char **argv)
{
	static const struct {
		const char *name;
		int nargs;		/* after the subcommand */
		const char *args;
		change_fn fn;
		vulnid_status (*op)(store *st, gint64 vendor_id, const char *arg, GError **err);
		const char *done;
	} simple[] = {
		{ "alias", 2, "alias NAME ALIAS", do_vendor_op, vendor_add_alias, "added an alias to '" },
		{ "domain", 2, "domain NAME DOMAIN", do_vendor_op, vendor_add_domain, "added a domain to '" },
		{ "contact", 2, "contact NAME ADDR", do_vendor_op, add_operator_contact,
		  "added a contact to '" },
		{ "remove-contact", 2, "remove-contact NAME ADDR", do_vendor_op, vendor_remove_contact,
		  "removed a contact from '" },
		{ "key", 2, "key NAME FILE", do_key, NULL, NULL },
	};
	g_autoptr(GString) rep = g_string_new(NULL);
	const char *sub;
	int sargc;
	char **sargv;

	if (argc < 2)
		return usage();
	sub = argv[1];
	/* The subcommand stands where GOptionContext expects the program
	 * name, so each one has its own options. */
	sargc = argc - 1;
	sargv = argv + 1;

	if (strcmp(sub, "add") == 0)
		return vendor_cmd_add(ctx, sargc, sargv);
	if (strcmp(sub, "list") == 0 || strcmp(sub, "show") == 0) {
		gboolean show = strcmp(sub, "show") == 0;

		if (!parse_args(ctx, show ? "show NAME" : "list",
			       show ? "Show a vendor (by name or alias)." : "List the vendors by name.",
			       NULL, &sargc, &sargv))
			return EX_USAGE;
		if (sargc != (show ? 2 : 1))
			return usage();
		return show ? vendor_cmd_show(ctx, sargv[1], ctx->json) : vendor_cmd_list(ctx, ctx->json);
	}
	if (strcmp(sub, "import-securitytxt") == 0) {
		if (!parse_args(ctx, "import-securitytxt DOMAIN FILE",
			       "Add the mail contacts of DOMAIN's RFC 9116 security.txt (FILE, - for\n"
			       "standard input) to the vendor owning DOMAIN.", NULL, &sargc, &sargv))
			return EX_USAGE;
		if (sargc != 3)
			return usage();
		return vendor_cmd_import(ctx, sargv[1], sargv[2]);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(simple); i++) {
		change c = { 0 };

		if (strcmp(sub, simple[i].name) != 0)
			continue;
		if (!parse_args(ctx, simple[i].args, "Change a vendor of the directory.", NULL, &sargc, &sargv))
			return EX_USAGE;
		if (sargc != simple[i].nargs + 1)
			return usage();
		c.name = sargv[1];
		c.arg = sargv[2];
		c.op = simple[i].op;
		c.done = simple[i].done;
		c.report = rep;
		return run_change(ctx, simple[i].fn, &c);
	}
	if (strcmp(sub, "help") != 0 && strcmp(sub, "--help") != 0 && strcmp(sub, "-h") != 0) {
		g_autofree char *m = text_mask_controls(sub);

		fprintf(stderr, "vulnid: unknown vendor command '%s'\n", m);
		return usage();
	}
	fputs(usage_text, stdout);
	return EX_OK;
}
