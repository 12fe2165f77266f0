/* u-template.c - unit tests for src/lib/template.c */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "config.h"
#include "status.h"
#include "template.h"

static char *
render(const char *text, ...)
{
	g_autoptr(GHashTable) vars = g_hash_table_new(g_str_hash, g_str_equal);
	va_list ap;
	const char *k;

	va_start(ap, text);
	while ((k = va_arg(ap, const char *)) != NULL)
		g_hash_table_insert(vars, (gpointer) k, (gpointer) va_arg(ap, const char *));
	va_end(ap);
	return template_render(text, vars);
}

static void
check_render(const char *text, const char *want, const char *k1, const char *v1)
{
	g_autofree char *s = render(text, k1, v1, "id", "TEST-2026-0001", NULL);

	g_assert_cmpstr(s, ==, want);
}

static void
test_render(void)
{
	check_render("", "", "name", "Alice");
	check_render("no placeholders", "no placeholders", "name", "Alice");
	check_render("Hello {{name}}!", "Hello Alice!", "name", "Alice");
	check_render("{{name}}", "Alice", "name", "Alice");
	check_render("{{name}}{{name}}", "AliceAlice", "name", "Alice");
	check_render("{{ name }} / {{  id\t}}", "Alice / TEST-2026-0001", "name", "Alice");
	check_render("Your ID is {{id}}.\n", "Your ID is TEST-2026-0001.\n", "name", "Alice");
	check_render("multi\nline {{name}}\n", "multi\nline Alice\n", "name", "Alice");
	check_render("caf\xc3\xa9 {{name}}", "caf\xc3\xa9 \xe2\x82\xac", "name", "\xe2\x82\xac");
}

static void
test_render_unknown(void)
{
	check_render("[{{nosuch}}]", "[]", "name", "Alice");
	check_render("[{{}}]", "[]", "name", "Alice");
	check_render("[{{ }}]", "[]", "name", "Alice");
	check_render("[{{Name}}]", "[]", "name", "Alice");	/* case matters */
	{
		g_autofree char *s = template_render("a{{name}}b", NULL);

		g_assert_cmpstr(s, ==, "ab");
	}
}

static void
test_render_literal(void)
{
	g_autofree char *far = NULL;
	g_autofree char *far_out = NULL;

	check_render("open {{name", "open {{name", "name", "Alice");
	check_render("{{", "{{", "name", "Alice");
	check_render("a {{ b", "a {{ b", "name", "Alice");
	check_render("single {name} braces", "single {name} braces", "name", "Alice");
	check_render("close }} only", "close }} only", "name", "Alice");
	check_render("{{name}} then {{", "Alice then {{", "name", "Alice");

	/* A "}}" far away does not make a placeholder of everything between. */
	{
		g_autofree char *pad = g_strnfill(100, 'x');

		/* (a long line: wrapped at its spaces once rendered) */
		far = g_strconcat("a {{", pad, "}} b {{name}}", NULL);
		far_out = g_strconcat("a {{", pad, "}}\nb Alice", NULL);
	}
	check_render(far, far_out, "name", "Alice");
}

static void
test_render_verbatim(void)
{
	/* Values are inserted as they are, and not rendered again. */
	check_render("<{{name}}>", "<{{id}}>", "name", "{{id}}");
	check_render("<{{name}}>", "<a\r\nBcc: x>", "name", "a\r\nBcc: x");
	check_render("<{{name}}>", "<  spaced  >", "name", "  spaced  ");
	check_render("<{{name}}>", "<>", "name", "");
	check_render("<{{name}}>", "<\\n %s &amp;>", "name", "\\n %s &amp;");
}

/* The mail reads well: empty lines and headings left out, long lines
 * wrapped, values with line ends inserted as they are. */
static void
test_render_layout(void)
{
	check_render("  Vendor:  {{name}}\n  Type:    {{type}}\nend\n", "  Vendor:  Alice\nend\n", "name", "Alice");
	check_render("a\n\nReferences:\n{{refs}}\n\nb\n", "a\n\nb\n", "name", "Alice");
	check_render("a\n\nDescription:\n\n{{refs}}\n\nb\n", "a\n\nb\n", "name", "Alice");
	check_render("a\n\nReferences:\n{{name}}\n\nb\n", "a\n\nReferences:\nAlice\n\nb\n", "name", "Alice");
	check_render("x\n{{token_line}}\n-- \n", "x\n-- \n", "name", "Alice");
	check_render("[{{nothing}}]\n", "[]\n", "name", "Alice");
	check_render("Subject: {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}}\n\n"
		     "Dear {{name}}, {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}} {{name}}\n",
		     "Subject: Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice "
		     "Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice\n\n"
		     "Dear Alice Alice Alice, Alice Alice Alice Alice Alice Alice Alice Alice Alice\n"
		     "Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice Alice\n"
		     "Alice Alice Alice Alice Alice\n",
		     "name", "Alice Alice Alice");
	check_render("{{name}}\nnext\n", "a very long line of a value that has its own line ends and is kept as it is, "
		     "whatever its length\nsecond\nnext\n", "name",
		     "a very long line of a value that has its own line ends and is kept as it is, whatever its length\nsecond");
}

static void
check_split(const char *in, const char *want_subject, const char *want_body)
{
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;

	template_split(in, &subject, &body);
	g_assert_cmpstr(subject, ==, want_subject);
	g_assert_cmpstr(body, ==, want_body);
}

static void
test_split(void)
{
	check_split("Subject: Your ID\n\nHello.\n", "Your ID", "Hello.\n");
	check_split("Subject:   padded   \n\nbody", "padded", "body");
	check_split("subject: lower\n\nbody", "lower", "body");
	check_split("Subject: no blank line\nbody", "no blank line", "body");
	check_split("Subject: only", "only", "");
	check_split("Subject: two\n\nline one\n\nline two\n", "two", "line one\n\nline two\n");
	check_split("Subject: x\n\n\nbody", "x", "\nbody");	/* only one blank line goes */
	/* no Subject: the whole text is the body */
	check_split("Hello.\n", NULL, "Hello.\n");
	check_split("\nSubject: late\n", NULL, "\nSubject: late\n");
	check_split("Dear Subject: x\n", NULL, "Dear Subject: x\n");
	check_split("", NULL, "");
}

/* --- template_load ------------------------------------------------------- */

static char *
make_dir(void)
{
	g_autoptr(GError) err = NULL;
	char *dir = g_dir_make_tmp("u-template-XXXXXX", &err);

	g_assert_no_error(err);
	g_assert_nonnull(dir);
	return dir;
}

static void
put_file(const char *dir, const char *name, const char *data, gssize len)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autoptr(GError) err = NULL;

	g_assert_true(g_file_set_contents(path, data, len, &err));
	g_assert_no_error(err);
}

static void
remove_dir(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	if (d != NULL)
		while ((name = g_dir_read_name(d)) != NULL) {
			g_autofree char *path = g_build_filename(dir, name, NULL);

			g_assert_cmpint(g_remove(path), ==, 0);
		}
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void
test_load_builtin(void)
{
	g_autofree char *dir = make_dir();
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	put_file(dir, "ack.txt", "Subject: ack {{id}}\n\nbuilt-in\n", -1);
	g_setenv("VULNID_TEMPLATE_DIR", dir, TRUE);

	g_assert_cmpint(template_load(NULL, "ack.txt", &text, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(text, ==, "Subject: ack {{id}}\n\nbuilt-in\n");
	g_clear_pointer(&text, g_free);

	/* A configuration without template_dir uses the built-in set. */
	{
		vulnid_config *cfg = g_new0(vulnid_config, 1);

		g_assert_cmpint(template_load(cfg, "ack.txt", &text, &err), ==, VULNID_OK);
		g_assert_no_error(err);
		g_assert_cmpstr(text, ==, "Subject: ack {{id}}\n\nbuilt-in\n");
		g_clear_pointer(&text, g_free);
		g_free(cfg);
	}

	g_unsetenv("VULNID_TEMPLATE_DIR");
	remove_dir(dir);
}

static void
test_load_operator(void)
{
	g_autofree char *builtin = make_dir();
	g_autofree char *operator = make_dir();
	g_autofree char *missing = g_build_filename(operator, "no-such-dir", NULL);
	vulnid_config *cfg = g_new0(vulnid_config, 1);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	put_file(builtin, "ack.txt", "built-in ack\n", -1);
	put_file(builtin, "help.txt", "built-in help\n", -1);
	put_file(operator, "ack.txt", "operator ack\n", -1);
	g_setenv("VULNID_TEMPLATE_DIR", builtin, TRUE);

	cfg->template_dir = operator;
	/* the operator's file wins */
	g_assert_cmpint(template_load(cfg, "ack.txt", &text, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(text, ==, "operator ack\n");
	g_clear_pointer(&text, g_free);
	/* what the operator does not have comes from the built-in set */
	g_assert_cmpint(template_load(cfg, "help.txt", &text, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(text, ==, "built-in help\n");
	g_clear_pointer(&text, g_free);

	/* an operator directory that does not exist is no error */
	cfg->template_dir = missing;
	g_assert_cmpint(template_load(cfg, "ack.txt", &text, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(text, ==, "built-in ack\n");
	g_clear_pointer(&text, g_free);

	g_free(cfg);
	g_unsetenv("VULNID_TEMPLATE_DIR");
	remove_dir(operator);
	remove_dir(builtin);
}

static void
test_load_missing(void)
{
	g_autofree char *builtin = make_dir();
	g_autofree char *operator = make_dir();
	vulnid_config *cfg = g_new0(vulnid_config, 1);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	g_setenv("VULNID_TEMPLATE_DIR", builtin, TRUE);

	g_assert_cmpint(template_load(NULL, "nosuch.txt", &text, &err), ==, VULNID_ERR_CONFIG);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_CONFIG);
	g_assert_nonnull(strstr(err->message, "nosuch.txt"));
	g_assert_null(text);
	g_clear_error(&err);

	cfg->template_dir = operator;
	g_assert_cmpint(template_load(cfg, "nosuch.txt", &text, &err), ==, VULNID_ERR_CONFIG);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_CONFIG);
	g_assert_null(text);
	g_clear_error(&err);

	/* a NULL GError is allowed */
	g_assert_cmpint(template_load(cfg, "nosuch.txt", &text, NULL), ==, VULNID_ERR_CONFIG);
	g_assert_null(text);

	g_free(cfg);
	g_unsetenv("VULNID_TEMPLATE_DIR");
	remove_dir(operator);
	remove_dir(builtin);
}

static void
test_load_not_utf8(void)
{
	g_autofree char *builtin = make_dir();
	g_autofree char *operator = make_dir();
	vulnid_config *cfg = g_new0(vulnid_config, 1);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;

	put_file(builtin, "latin1.txt", "caf\xe9\n", -1);
	put_file(builtin, "nul.txt", "a\0b\n", 4);
	put_file(builtin, "ack.txt", "good\n", -1);
	put_file(operator, "ack.txt", "bad \xff\xfe\n", -1);
	g_setenv("VULNID_TEMPLATE_DIR", builtin, TRUE);

	g_assert_cmpint(template_load(NULL, "latin1.txt", &text, &err), ==, VULNID_ERR_CONFIG);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_CONFIG);
	g_assert_null(text);
	g_clear_error(&err);

	g_assert_cmpint(template_load(NULL, "nul.txt", &text, &err), ==, VULNID_ERR_CONFIG);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_CONFIG);
	g_assert_null(text);
	g_clear_error(&err);

	/* A broken operator template is an error, not a silent fallback. */
	cfg->template_dir = operator;
	g_assert_cmpint(template_load(cfg, "ack.txt", &text, &err), ==, VULNID_ERR_CONFIG);
	g_assert_error(err, VULNID_ERROR, VULNID_ERR_CONFIG);
	g_assert_null(text);
	g_clear_error(&err);

	g_free(cfg);
	g_unsetenv("VULNID_TEMPLATE_DIR");
	remove_dir(operator);
	remove_dir(builtin);
}

static void
test_load_render(void)
{
	/* load, render and split together, as the robot does */
	g_autofree char *dir = make_dir();
	g_autofree char *text = NULL;
	g_autofree char *out = NULL;
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;
	g_autoptr(GError) err = NULL;

	put_file(dir, "ack.txt", "Subject: [{{id}}] {{title}}\n\nAssigned {{id}} to \"{{ title }}\".\n", -1);
	g_setenv("VULNID_TEMPLATE_DIR", dir, TRUE);
	g_assert_cmpint(template_load(NULL, "ack.txt", &text, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	out = render(text, "title", "XSS in login", "id", "TEST-2026-0007", NULL);
	template_split(out, &subject, &body);
	g_assert_cmpstr(subject, ==, "[TEST-2026-0007] XSS in login");
	g_assert_cmpstr(body, ==, "Assigned TEST-2026-0007 to \"XSS in login\".\n");

	g_unsetenv("VULNID_TEMPLATE_DIR");
	remove_dir(dir);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/template/render/basic", test_render);
	g_test_add_func("/template/render/unknown", test_render_unknown);
	g_test_add_func("/template/render/literal", test_render_literal);
	g_test_add_func("/template/render/verbatim", test_render_verbatim);
	g_test_add_func("/template/render/layout", test_render_layout);
	g_test_add_func("/template/split", test_split);
	g_test_add_func("/template/load/builtin", test_load_builtin);
	g_test_add_func("/template/load/operator", test_load_operator);
	g_test_add_func("/template/load/missing", test_load_missing);
	g_test_add_func("/template/load/not-utf8", test_load_not_utf8);
	g_test_add_func("/template/load/render", test_load_render);
	return g_test_run();
}
