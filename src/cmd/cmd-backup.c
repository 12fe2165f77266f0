/* cmd-backup.c - vulnid backup [--all] FILE|-: an online copy of the
 * database, with --all the files of the instance in it too */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "cli.h"
#include "export.h"
#include "fileio.h"
#include "text.h"

static void
report_skipped(const vulnid_config *cfg, const export_backup_info *info)
{
	for (guint i = 0; info->skipped != NULL && i < info->skipped->len; i++) {
		g_autofree char *m = text_mask_controls(g_ptr_array_index(info->skipped, i));

		fprintf(stderr, "vulnid: not in the backup: %s/%s (not a regular file, larger than 64 MiB"
			" or too deep)\n", cfg->dir, m);
	}
}

/* The backup on out (standard output, or the pipe to root's process). */
static int
backup_to_fd(cli_ctx *ctx, gboolean all, int out)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	export_backup_info info;
	vulnid_status s;
	int rc;

	if (isatty(out)) {
		fprintf(stderr, "vulnid: standard output is a terminal: redirect it to a file\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = export_backup_to_fd(st, all ? cfg->dir : NULL, cfg->spool_dir, out, cfg->busy_timeout, &info, &err);
	report_skipped(cfg, &info);
	export_backup_info_clear(&info);
	return s == VULNID_OK ? EX_OK : cli_fail(s, err);
}

/* Root backs up an instance of another user: the backup is made as that
 * user (as every command runs), streamed to this process, which stays
 * root and writes FILE where root may, a file of root's. */
static int
backup_as_root(cli_ctx *ctx, const char *file, gboolean force, gboolean all, const char *instance)
{
	g_autofree char *tmp = g_strdup_printf("%s.tmp.XXXXXX", file);
	g_autofree char *dir = g_path_get_dirname(file);
	char buf[65536];
	gboolean ok = TRUE;
	int p[2], fd, status = 0, e = 0;
	ssize_t n;
	GStatBuf sb;
	pid_t pid;

	if (!force && g_file_test(file, G_FILE_TEST_EXISTS)) {
		fprintf(stderr, "vulnid: '%s' exists (use --force to replace it)\n", file);
		return EX_CANTCREAT;
	}
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "vulnid: cannot create '%s': %s\n", tmp, g_strerror(errno));
		return EX_CANTCREAT;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "vulnid: cannot start the backup: %s\n", g_strerror(errno));
		close(fd);
		unlink(tmp);
		return EX_OSERR;
	}
	if (pid == 0) {
		close(p[0]);
		close(fd);
		_exit(backup_to_fd(ctx, all, p[1]));
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (ok && !fileio_write_all(fd, buf, (gsize) n))) {
			e = errno;
			ok = FALSE;	/* read on, so that the other side ends */
			if (n < 0)
				break;
		}
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ok && fsync(fd) < 0) {
		e = errno;
		ok = FALSE;
	}
	close(fd);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		unlink(tmp);
		return WIFEXITED(status) ? WEXITSTATUS(status) : EX_SOFTWARE;
	}
	if (!ok || rename(tmp, file) < 0) {
		fprintf(stderr, "vulnid: cannot write '%s': %s\n", ok ? file : tmp, g_strerror(ok ? errno : e));
		unlink(tmp);
		return EX_CANTCREAT;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	if (g_stat(file, &sb) == 0)
		printf("%s: %lld bytes, a copy of %s/vulnid.db%s\n", file, (long long) sb.st_size, instance,
		       all ? " and of the files of the instance" : "");
	return EX_OK;
}

/* The directory of the instance, when it belongs to another user than
 * root; else NULL. */
static char *
foreign_instance(cli_ctx *ctx)
{
	g_autofree char *conf = config_locate(ctx->conf);
	g_autofree char *abs = NULL;
	g_autofree char *dir = NULL;
	GStatBuf sb;

	if (conf == NULL)
		return NULL;
	abs = g_canonicalize_filename(conf, NULL);
	dir = g_path_get_dirname(abs);
	if (g_stat(dir, &sb) < 0 || sb.st_uid == 0)
		return NULL;
	return g_steal_pointer(&dir);
}

int
cmd_backup(cli_ctx *ctx, int argc, char **argv)
{
	gboolean force = FALSE, all = FALSE;
	GOptionEntry entries[] = {
		{ "all", 0, 0, G_OPTION_ARG_NONE, &all, "also the files of the instance: keyring, log keys, "
		  "vulnid.conf, witness state (vulnid restore rebuilds the instance from it)", NULL },
		{ "force", 0, 0, G_OPTION_ARG_NONE, &force, "replace FILE if it exists", NULL },
		{ NULL }
	};
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *foreign = NULL;
	export_backup_info info;
	vulnid_status s;
	GStatBuf sb;
	int rc;

	if (!cli_parse(ctx, "FILE|-", "Copy the whole database to FILE (mode 0600), consistently, while\n"
		       "filters keep running.  The copy opens with sqlite3 or as DIR/vulnid.db.\n"
		       "With --all, the files of the instance go into it too.  - writes the copy\n"
		       "to standard output.  As root, FILE is written as root.",
		       entries, &argc, &argv))
		return EX_USAGE;
	if (argc != 2) {
		fprintf(stderr, "vulnid: usage: vulnid backup [--all] [--force] FILE|-\n");
		return EX_USAGE;
	}
	if (strcmp(argv[1], "-") == 0)
		return backup_to_fd(ctx, all, STDOUT_FILENO);
	if (geteuid() == 0 && (foreign = foreign_instance(ctx)) != NULL)
		return backup_as_root(ctx, argv[1], force, all, foreign);
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = export_backup(st, all ? cfg->dir : NULL, argv[1], force, cfg->busy_timeout, &info, &err);
	report_skipped(cfg, &info);
	export_backup_info_clear(&info);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	if (g_stat(argv[1], &sb) == 0)
		printf("%s: %lld bytes, a copy of %s%s\n", argv[1], (long long) sb.st_size, cfg->db_path,
		       all ? " and of the files of the instance" : "");
	return EX_OK;
}
