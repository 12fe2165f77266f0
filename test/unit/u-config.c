/* u-config.c - unit tests for src/lib/config.c: the key table, loading,
 * validation and the accessors other modules use */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "config.h"

/* A fresh instance directory holding vulnid.conf with text. */
static char *
write_conf(const char *text)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *dir = g_dir_make_tmp("u-config-XXXXXX", &err);
	char *path;

	g_assert_no_error(err);
	g_assert_cmpint(g_chmod(dir, 0700), ==, 0);
	path = g_build_filename(dir, "vulnid.conf", NULL);
	g_assert_true(g_file_set_contents(path, text, -1, &err));
	g_assert_cmpint(g_chmod(path, 0600), ==, 0);
	return path;
}

static void
remove_conf(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);

	g_unlink(path);
	g_rmdir(dir);
}

/* Load text after the two required keys; the status, and the message in
 * *msg when it fails. */
static vulnid_status
load(const char *extra, vulnid_config **cfg, char **msg)
{
	g_autofree char *text = g_strdup_printf("[instance]\nprefix = TEST\ndomain = example.org\n%s", extra);
	g_autofree char *path = write_conf(text);
	g_autoptr(GError) err = NULL;
	vulnid_status s = config_load(path, cfg, &err);

	if (msg != NULL)
		*msg = err != NULL ? g_strdup(err->message) : NULL;
	remove_conf(path);
	return s;
}

/* The defaults of the table, as the loaded fields and through the
 * accessors. */
static void
test_defaults(void)
{
	g_autoptr(vulnid_config) cfg = NULL;

	g_assert_cmpint(load("", &cfg, NULL), ==, VULNID_OK);
	g_assert_cmpint(cfg->max_message_size, ==, 26214400);
	g_assert_cmpint(cfg->lmtpd_socket_mode, ==, 0660);
	g_assert_true(cfg->notify_vendors);
	g_assert_true(cfg->lmtpd_xforward);
	g_assert_cmpstr(cfg->request_address, ==, "request@example.org");
	g_assert_cmpstr(cfg->helo, ==, "example.org");	/* empty: the domain */
	g_assert_null(cfg->tls_fingerprints);		/* empty: none pinned */
	g_assert_null(cfg->tls_ca_file);
	g_assert_nonnull(cfg->announce_to);
	g_assert_null(cfg->announce_to[0]);
	g_assert_cmpuint(cfg->lmtpd_allow->len, ==, 0);
	g_assert_true(g_str_has_suffix(cfg->lmtpd_socket, "/lmtp.sock"));
	g_assert_true(g_str_has_suffix(cfg->maildir, "/sent"));
	g_assert_cmpint(config_key_int(cfg, "policy", "loop_hours"), ==, 24);
	g_assert_cmpint(config_key_int(cfg, "lifecycle", "rate_global_per_hour"), ==, 10000);
	g_assert_false(config_key_bool(cfg, "lifecycle", "confirm_unsigned"));
	{
		g_autofree char *v = config_key_string(cfg, "export", "osv_id_prefix");

		g_assert_cmpstr(v, ==, "x_");
	}
	g_assert_cmpstr(cfg->export_title, ==, "");
}

static void
test_values(void)
{
	g_autoptr(vulnid_config) cfg = NULL;

	g_assert_cmpint(load("[policy]\nloop_hours = 48\n"
			     "[lifecycle]\nconfirm_unsigned = TRUE\nmoderators = " "0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567\n"
			     "[delivery]\ntls_verify = false\ntls_fingerprint = AA:BB:" "CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99\n"
			     "[announce]\nto = a@example.org, ,b@example.net\n"
			     "[lmtpd]\nsocket_mode = 0600\nallow = 10.0.0.0/8, ::1\n"
			     "[export]\ntitle =  Our IDs  \n", &cfg, NULL), ==, VULNID_OK);
	g_assert_cmpint(config_key_int(cfg, "policy", "loop_hours"), ==, 48);
	g_assert_true(config_key_bool(cfg, "lifecycle", "confirm_unsigned"));
	g_assert_cmpstr(cfg->tls_verify, ==, "no");	/* false, as every boolean */
	g_assert_cmpstr(cfg->tls_fingerprints[0], ==,
			"aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899");
	g_assert_null(cfg->tls_fingerprints[1]);
	g_assert_cmpuint(g_strv_length(cfg->announce_to), ==, 2);
	g_assert_cmpstr(cfg->announce_to[1], ==, "b@example.net");
	g_assert_cmpint(cfg->lmtpd_socket_mode, ==, 0600);
	g_assert_cmpuint(cfg->lmtpd_allow->len, ==, 2);
	g_assert_cmpstr(cfg->export_title, ==, "Our IDs");
}

/* The message after "PATH:LINE: " (or "PATH: "): every complaint about
 * the file says where. */
static const char *
after_location(const char *msg)
{
	const char *p = strstr(msg, "vulnid.conf:");

	g_assert_nonnull(p);
	p += strlen("vulnid.conf:");
	while (g_ascii_isdigit(*p))
		p++;
	if (*p == ':')
		p++;
	g_assert_true(*p == ' ');
	return p + 1;
}

/* Every kind of bad value is refused with the message operators and the
 * test suite know, after the file and the line that set it. */
static void
test_refused(void)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
		{ "[limits]\nmax_depth = 0\n", "[limits] max_depth must be a whole number from 1 to 1000, not '0'" },
		{ "[limits]\nmax_depth = 12x\n", "[limits] max_depth must be a whole number from 1 to 1000, not '12x'" },
		{ "[lifecycle]\nrate_requests_per_hour = 1000001\n",
		  "[lifecycle] rate_requests_per_hour must be a whole number from 0 to 1000000, not '1000001'" },
		{ "[policy]\namplification = 0\n", "[policy] amplification must be a whole number from 1 to 1000, not '0'" },
		{ "[notify]\nvendors = maybe\n", "[notify] vendors must be yes or no, not 'maybe'" },
		{ "[crypto]\nsign = smime\n", "[crypto] sign must be pgpmime, inline or none, not 'smime'" },
		{ "[delivery]\nstarttls = sometimes\n",
		  "[delivery] starttls must be no, if-available or required, not 'sometimes'" },
		{ "[delivery]\ntls_verify = perhaps\n", "[delivery] tls_verify must be remote, yes or no, not 'perhaps'" },
		{ "[delivery]\ntls_fingerprint = abc\n", "[delivery] tls_fingerprint: 'abc' is not a SHA-256 fingerprint" },
		{ "[delivery]\ntransport = ftp://x\n",
		  "[delivery] transport 'ftp://x' is not maildir:PATH or smtp://HOST[:PORT]" },
		{ "[announce]\nto = list@example.org, nobody\n", "[announce] to: 'nobody' is not a mail address" },
		{ "[announce]\ndigest = weekly\n", "[announce] digest must be none or daily, not 'weekly'" },
		{ "[lifecycle]\nmoderators = 1234\n", "[lifecycle] moderators: '1234' is not an OpenPGP fingerprint" },
		{ "[lmtpd]\nsocket_mode = 0999\n", "[lmtpd] socket_mode must be octal, like 0660, not '0999'" },
		{ "[lmtpd]\nallow = 10.0.0.0/33\n", "[lmtpd] allow: '10.0.0.0/33' is not an address or network" },
		{ "[ids]\nblocks = 5-1\n", "[ids] blocks: " },
		{ "request_local = a+b\n",
		  "[instance] request_local and bounce_local must be letters, digits, '.', '-' or '_'" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(vulnid_config) cfg = NULL;
		g_autofree char *msg = NULL;

		g_assert_cmpint(load(cases[i].text, &cfg, &msg), ==, VULNID_ERR_CONFIG);
		g_assert_null(cfg);
		g_assert_nonnull(msg);
		g_assert_true(g_str_has_prefix(after_location(msg), cases[i].message) ||
			      (g_test_message("%s", msg), FALSE));
		g_assert_nonnull(strstr(msg, cases[i].text[0] == '[' ? "vulnid.conf:5: " : "vulnid.conf:4: "));
	}
}

/* What GKeyFile would take in silence is refused too: an unknown group or
 * key (with the nearest known one), a key of another group, a key set
 * twice, a line of no known form; each with its line. */
static void
test_unknown(void)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
		{ "[delivery]\ntransprot = smtp://127.0.0.1\n",
		  "vulnid.conf:5: unknown key 'transprot' in [delivery] (did you mean transport?)" },
		{ "[delivry]\ntransport = smtp://127.0.0.1\n",
		  "vulnid.conf:4: unknown group [delivry] (did you mean [delivery]?)" },
		{ "transport = smtp://127.0.0.1\n",
		  "vulnid.conf:4: 'transport' is not a key of [instance]: it belongs in [delivery]" },
		{ "[limits]\nmax_depth = 3\n\n# again\nmax_depth = 4\n",
		  "vulnid.conf:8: [limits] max_depth is set twice (also on line 5): remove one" },
		{ "[limits]\nmax depth\n", "vulnid.conf:5: 'max depth' is neither [group], key = value nor a # comment" },
		{ "[limits\n", "vulnid.conf:4: '[limits' is not a [group] line" },
		{ "[frobnicate]\nx = 1\n", "vulnid.conf:4: unknown group [frobnicate] (vulnid config keys lists them)" },
		{ "[ids]\nblocks_2027 = 9-3\n", "vulnid.conf:5: [ids] blocks_2027: " },
		{ "[ids]\nblocks_27 = 1-\n", "vulnid.conf:5: unknown key 'blocks_27' in [ids] (did you mean blocks?)" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(vulnid_config) cfg = NULL;
		g_autofree char *msg = NULL;

		g_assert_cmpint(load(cases[i].text, &cfg, &msg), ==, VULNID_ERR_CONFIG);
		g_assert_null(cfg);
		g_assert_true(strstr(msg, cases[i].message) != NULL || (g_test_message("%s", msg), FALSE));
	}
	/* a year's own blocks are a key of [ids] */
	{
		g_autoptr(vulnid_config) cfg = NULL;
		g_autofree char *b = NULL;

		g_assert_cmpint(load("[ids]\nblocks_2027 = 100-\n", &cfg, NULL), ==, VULNID_OK);
		b = config_blocks_for_year(cfg, 2027);
		g_assert_cmpstr(b, ==, "100-");
	}
}

/* config_check_file() lists every mistake, not only the first. */
static void
test_check_all(void)
{
	g_autofree char *path = write_conf("[instance]\nprefix = TEST\ndomain = example.org\nhelo = x\n"
					   "[delivry]\nfoo = 1\n[limits]\nmax_parts = 0\nmax_partz = 3\n");
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) err = NULL;

	g_assert_cmpint(config_check_file(path, problems, &err), ==, VULNID_OK);
	g_assert_cmpuint(problems->len, ==, 3);
	g_assert_nonnull(strstr(g_ptr_array_index(problems, 0), ":4: 'helo' is not a key of [instance]"));
	g_assert_nonnull(strstr(g_ptr_array_index(problems, 1), ":5: unknown group [delivry]"));
	g_assert_nonnull(strstr(g_ptr_array_index(problems, 2), ":9: unknown key 'max_partz' in [limits] (did you mean max_parts?)"));
	remove_conf(path);
	g_free(path);
	/* once every line is known, the first refused value */
	path = write_conf("[instance]\nprefix = TEST\ndomain = example.org\n[limits]\nmax_parts = 0\n");
	g_ptr_array_set_size(problems, 0);
	g_assert_cmpint(config_check_file(path, problems, &err), ==, VULNID_OK);
	g_assert_cmpuint(problems->len, ==, 1);
	g_assert_nonnull(strstr(g_ptr_array_index(problems, 0), ":5: [limits] max_parts must be"));
	remove_conf(path);
}

static void
test_required(void)
{
	g_autofree char *path = write_conf("[instance]\ndomain = example.org\n");
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GError) err = NULL;

	g_assert_cmpint(config_load(path, &cfg, &err), ==, VULNID_ERR_CONFIG);
	g_assert_true(g_str_has_suffix(err->message, "vulnid.conf: missing [instance] prefix"));
	remove_conf(path);
}

/* The file vulnid init writes loads, and gives the table's defaults. */
static void
test_default_text(void)
{
	g_autofree char *text = config_default_text("ABC", "example.net");
	g_autofree char *path = write_conf(text);
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *table = config_table_text();
	g_auto(GStrv) lines = g_strsplit(table, "\n", -1);

	g_assert_cmpint(config_load(path, &cfg, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(cfg->prefix, ==, "ABC");
	g_assert_cmpstr(cfg->bounce_address, ==, "request-bounces@example.net");
	remove_conf(path);
	/* every key of the table is in the text, as "key = " after its group */
	for (char **l = lines; *l != NULL && **l != '\0'; l++) {
		g_auto(GStrv) f = g_strsplit(*l, "\t", -1);
		g_autofree char *group = g_strdup_printf("\n[%s]\n", f[0]);
		g_autofree char *key = g_strdup_printf("\n%s = ", f[1]);
		const char *g = strstr(text, group);

		g_assert_cmpuint(g_strv_length(f), ==, 6);
		g_assert_nonnull(g);
		g_assert_nonnull(strstr(g, key));
	}
}

/* A configuration without a file, for contexts built in memory. */
static void
test_load_text(void)
{
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(GError) err = NULL;

	g_assert_cmpint(config_load_text("/nonexistent/inst", "[instance]\nprefix = T1\ndomain = example.org\n"
					 "[policy]\nper_domain_per_day = 7\n", &cfg, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_assert_cmpstr(cfg->db_path, ==, "/nonexistent/inst/vulnid.db");
	g_assert_cmpint(config_key_int(cfg, "policy", "per_domain_per_day"), ==, 7);
	g_assert_cmpint(config_key_int(cfg, "policy", "per_address_per_day"), ==, 20);
	g_clear_pointer(&cfg, config_free);
	g_assert_cmpint(config_load_text("/x", "[instance]\nprefix = T1\ndomain = example.org\n[limits]\nmax_ids = 0\n",
					 &cfg, &err), ==, VULNID_ERR_CONFIG);
	g_assert_null(cfg);
	g_assert_true(g_str_has_prefix(err->message, "/x/vulnid.conf:5: [limits] max_ids must be"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/config/defaults", test_defaults);
	g_test_add_func("/config/values", test_values);
	g_test_add_func("/config/refused", test_refused);
	g_test_add_func("/config/unknown", test_unknown);
	g_test_add_func("/config/check-all", test_check_all);
	g_test_add_func("/config/required", test_required);
	g_test_add_func("/config/default-text", test_default_text);
	g_test_add_func("/config/load-text", test_load_text);
	return g_test_run();
}
