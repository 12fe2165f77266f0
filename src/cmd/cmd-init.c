/* cmd-init.c - vulnid init: create an instance directory */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "feedlog.h"
#include "crypto.h"
#include "ids.h"
#include "owner.h"

static char *
default_domain(void)
{
	const char *h = g_get_host_name();

	return g_strdup(h != NULL && strchr(h, '.') != NULL ? h : "localhost");
}

static int
write_new_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t) len || fsync(fd) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

int
cmd_init(const cli_global *g, int argc, char **argv)
{
	g_autofree char *prefix = NULL;
	g_autofree char *domain = NULL;
	g_autofree char *dir = NULL;
	g_autofree char *conf = NULL;
	g_autofree char *text = NULL;
	g_autofree char *upper = NULL;
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	g_autofree char *key_algo = NULL;
	g_autofree char *fpr = NULL;
	g_autoptr(note_key) log_key = NULL;
	g_autofree char *vkey = NULL;
	GOptionEntry entries[] = {
		{ "prefix", 0, 0, G_OPTION_ARG_STRING, &prefix, "identifier prefix (default VULN)", "P" },
		{ "key-algo", 0, 0, G_OPTION_ARG_STRING, &key_algo,
		  "the robot key: ed25519 (default, with a cv25519 subkey) or rsa3072", "ALGO" },
		{ "domain", 0, 0, G_OPTION_ARG_STRING, &domain, "mail domain of the robot", "D" },
		{ NULL }
	};
	const char *subdirs[] = { "tmp", "templates", "sent", "sent/tmp", "sent/new", "sent/cur" };

	if (!cli_parse("DIR", "Create a vulnid instance in DIR.", entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2) {
		fprintf(stderr, "vulnid: usage: vulnid init [--prefix P] [--domain D] DIR\n");
		return EX_USAGE;
	}
	if (key_algo != NULL && strcmp(key_algo, "ed25519") != 0 && strcmp(key_algo, "rsa3072") != 0) {
		fprintf(stderr, "vulnid: --key-algo must be ed25519 or rsa3072\n");
		return EX_USAGE;
	}
	upper = g_ascii_strup(prefix != NULL ? prefix : "VULN", -1);
	if (!ids_prefix_valid(upper)) {
		fprintf(stderr, "vulnid: prefix '%s' must be 2-16 letters or digits, and not CVE\n", upper);
		return EX_USAGE;
	}
	if (domain == NULL)
		domain = default_domain();
	if (!config_domain_valid(domain)) {
		fprintf(stderr, "vulnid: '%s' is not a domain name\n", domain);
		return EX_USAGE;
	}
	dir = g_canonicalize_filename(argv[1], NULL);
	conf = g_build_filename(dir, "vulnid.conf", NULL);
	/* An existing directory (made with install -d -o vulnid ...) decides
	 * whose instance it is: root becomes that user before creating
	 * anything, the robot key and its gpg-agent included. */
	if (g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		s = owner_become(dir, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
	}
	{
		g_autofree char *db = g_build_filename(dir, "vulnid.db", NULL);

		if (g_file_test(conf, G_FILE_TEST_EXISTS) || g_file_test(db, G_FILE_TEST_EXISTS)) {
			fprintf(stderr, "vulnid: '%s' already holds an instance\n", dir);
			return EX_CANTCREAT;
		}
	}
	if (g_mkdir_with_parents(dir, 0700) < 0 || chmod(dir, 0700) < 0) {
		fprintf(stderr, "vulnid: cannot create '%s': %s\n", dir, g_strerror(errno));
		return EX_CANTCREAT;
	}
	text = config_default_text(upper, domain);
	if (write_new_file(conf, text) < 0) {
		fprintf(stderr, "vulnid: cannot write '%s': %s\n", conf, g_strerror(errno));
		return EX_CANTCREAT;
	}
	s = config_load(conf, &cfg, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	for (gsize i = 0; i < G_N_ELEMENTS(subdirs); i++) {
		g_autofree char *d = g_build_filename(dir, subdirs[i], NULL);

		if (mkdir(d, 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "vulnid: cannot create '%s': %s\n", d, g_strerror(errno));
			return EX_CANTCREAT;
		}
	}
	s = store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_CREATE, &st, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	s = crypto_generate_robot_key(cfg->gnupg_home, cfg->request_address, key_algo, &fpr, &err);
	if (s == VULNID_OK)
		s = crypto_set_home(cfg->gnupg_home, &err);
	/* The feed's log key, named by default (vulnid.conf(5) log_origin). */
	if (s == VULNID_OK)
		s = feedlog_key_open(cfg->dir, NULL, cfg->domain, cfg->prefix, fpr, &log_key, NULL, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	{
		g_autoptr(audit_event) ev = audit_event_new("init", NULL, NULL);

		audit_event_str(ev, "prefix", cfg->prefix);
		audit_event_str(ev, "fingerprint", fpr);
		audit_event_str(ev, "domain", cfg->domain);
		audit_event_str(ev, "version", PACKAGE_VERSION);
		s = audit_append_now(st, ev, &err);
		if (s == VULNID_OK)
			s = audit_flush(st, cfg->audit_path, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
	}
	printf("created instance in %s\n", dir);
	printf("identifiers: %s-YYYY-NNNN\n", cfg->prefix);
	printf("requests to: %s\n", cfg->request_address);
	printf("configuration: %s\n", conf);
	printf("robot key: %s\n", fpr);
	vkey = note_key_vkey(log_key);
	printf("log key: %s\n", vkey);
	return EX_OK;
}
