/* restore.c - an instance rebuilt from a backup (vulnid restore): the
 * database checked and put in place, the files of the instance written,
 * the audit chain told and audit.log written anew */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "crypto.h"
#include "fileio.h"
#include "feedlog.h"
#include "restore.h"
#include "store-export.h"

void
restore_result_clear(restore_result *r)
{
	g_clear_pointer(&r->made, g_free);
	g_clear_pointer(&r->version, g_free);
	g_clear_pointer(&r->instance, g_free);
	g_clear_pointer(&r->last, g_free);
	g_clear_pointer(&r->fingerprint, g_free);
}

/* A name from the backup, before it becomes a path: relative, down only. */
static gboolean
name_safe(const char *name)
{
	g_auto(GStrv) parts = NULL;

	if (*name == '\0' || *name == '/' || strlen(name) > 1024)
		return FALSE;
	for (const char *p = name; *p; p++)
		if ((unsigned char) *p < 0x20 || *p == 0x7f)
			return FALSE;
	parts = g_strsplit(name, "/", -1);
	for (char **p = parts; *p; p++)
		if (**p == '\0' || strcmp(*p, ".") == 0 || strcmp(*p, "..") == 0)
			return FALSE;
	return TRUE;
}

/* dir must hold no instance yet; what a backup would bring must not be
 * there either. */
static vulnid_status
check_empty_enough(const char *dir, GError **err)
{
	static const char *const taken[] = { "vulnid.db", "vulnid.db-wal", "vulnid.db-journal", "audit.log", NULL };

	for (const char *const *n = taken; *n != NULL; n++) {
		g_autofree char *p = g_build_filename(dir, *n, NULL);

		if (g_file_test(p, G_FILE_TEST_EXISTS))
			return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' holds an instance already (%s):"
					   " restore into an empty directory, or move it aside", dir, *n);
	}
	return VULNID_OK;
}

/* The backup's bytes into a new file of dir, synced. */
static vulnid_status
copy_in(int in, const char *dir, char **tmp, GError **err)
{
	char buf[65536];
	ssize_t n;
	int out;

	*tmp = g_build_filename(dir, "vulnid.db.restore.XXXXXX", NULL);
	out = g_mkstemp_full(*tmp, O_RDWR | O_CLOEXEC, 0600);
	if (out < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", *tmp,
				   g_strerror(errno));
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (!fileio_write_all(out, buf, (gsize) n))
			break;
	if (n != 0 || fsync(out) < 0) {
		int e = errno;

		close(out);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot copy the backup to '%s': %s", *tmp,
				   g_strerror(e));
	}
	close(out);
	return VULNID_OK;
}

static vulnid_status
mkdirs(const char *dir, const char *rel, GError **err)
{
	g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
	g_autofree char *path = g_strdup(dir);

	for (char **p = parts; *p != NULL && p[1] != NULL; p++) {
		char *next = g_build_filename(path, *p, NULL);
		struct stat sb;

		g_free(path);
		path = next;
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", path,
					   g_strerror(errno));
		if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
			return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' is not a directory", path);
	}
	return VULNID_OK;
}

/* Every file of the backup, none of them there yet; then written. */
static vulnid_status
write_files(const char *dir, GPtrArray *files, GError **err)
{
	for (guint i = 0; i < files->len; i++) {
		const store_backup_file *f = g_ptr_array_index(files, i);
		g_autofree char *path = NULL;

		if (!name_safe(f->name))
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "the backup holds a file named '%s'", f->name);
		path = g_build_filename(dir, f->name, NULL);
		if (g_file_test(path, G_FILE_TEST_EXISTS) || g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' exists, and the backup brings it too:"
					   " restore into an empty directory", path);
	}
	for (guint i = 0; i < files->len; i++) {
		const store_backup_file *f = g_ptr_array_index(files, i);
		g_autofree char *path = g_build_filename(dir, f->name, NULL);
		gsize len;
		const char *data = g_bytes_get_data(f->data, &len);
		vulnid_status s = mkdirs(dir, f->name, err);
		int fd;

		if (s != VULNID_OK)
			return s;
		/* never writable by others, whatever the backup says */
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (f->mode & 0755) | 0600);
		if (fd < 0)
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", path,
					   g_strerror(errno));
		if (!fileio_write_all(fd, data, len) || fsync(fd) < 0) {
			int e = errno;

			close(fd);
			return vulnid_fail(err, vulnid_status_from_errno(e), "cannot write '%s': %s", path,
					   g_strerror(e));
		}
		close(fd);
	}
	return VULNID_OK;
}

static vulnid_status
make_dirs(const char *dir, GError **err)
{
	static const char *const dirs[] = { "tmp", "templates", "sent", "sent/tmp", "sent/new", "sent/cur" };

	for (gsize i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *d = g_build_filename(dir, dirs[i], NULL);

		if (mkdir(d, 0700) < 0 && errno != EEXIST)
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", d,
					   g_strerror(errno));
	}
	return VULNID_OK;
}

/* The restored database: migrated if it is older, told, audit.log anew. */
static vulnid_status
restore_chain(const char *dir, const char *name, restore_result *r, GError **err)
{
	g_autofree char *db = g_build_filename(dir, "vulnid.db", NULL);
	g_autofree char *log = g_build_filename(dir, "audit.log", NULL);
	g_autoptr(store) st = NULL;
	g_autoptr(audit_event) ev = audit_event_new("restored", NULL, NULL);
	vulnid_status s = store_open(db, 10000, STORE_OPEN_EXISTING, &st, err);

	if (s != VULNID_OK)
		return s;
	s = store_export_entries_summary(st, &r->entries, &r->last, err);
	if (s != VULNID_OK)
		return s;
	audit_event_str(ev, "backup", name);
	audit_event_str(ev, "made", r->made);
	audit_event_str(ev, "version", r->version);
	audit_event_int(ev, "files", r->files);
	s = audit_append_now(st, ev, err);
	if (s == VULNID_OK)
		s = audit_flush(st, log, err);
	return s;
}

/* What the restored instance needs to work: a configuration that loads,
 * the robot's secret key. */
static vulnid_status
restore_check(const char *dir, restore_result *r, GError **err)
{
	g_autofree char *conf = g_build_filename(dir, "vulnid.conf", NULL);
	g_autofree char *log_key = g_build_filename(dir, FEEDLOG_KEY_FILE, NULL);
	g_autoptr(vulnid_config) cfg = NULL;
	vulnid_status s = config_load(conf, &cfg, err);

	if (s == VULNID_OK)
		s = crypto_set_home(cfg->gnupg_home, err);
	if (s == VULNID_OK)
		s = crypto_robot_fingerprint(&r->fingerprint, err);
	r->log_key = g_file_test(log_key, G_FILE_TEST_IS_REGULAR);
	if (s != VULNID_OK)
		g_prefix_error(err, "the instance in '%s' is restored, but ", dir);
	return s;
}

vulnid_status
restore_instance(const char *dir, int fd, const char *name, restore_result *r, GError **err)
{
	g_autoptr(GPtrArray) files = NULL;
	g_autoptr(GHashTable) info = NULL;
	g_autofree char *tmp = NULL;
	g_autofree char *db = g_build_filename(dir, "vulnid.db", NULL);
	vulnid_status s;
	int dfd;

	memset(r, 0, sizeof *r);
	s = check_empty_enough(dir, err);
	if (s == VULNID_OK)
		s = copy_in(fd, dir, &tmp, err);
	if (s == VULNID_OK)
		s = store_export_backup_take(tmp, &files, &info, err);
	if (s != VULNID_OK)
		goto fail;
	r->made = g_strdup(g_hash_table_lookup(info, "made"));
	r->version = g_strdup(g_hash_table_lookup(info, "version"));
	r->instance = g_strdup(g_hash_table_lookup(info, "instance"));
	r->schema = atoi(g_hash_table_lookup(info, "schema"));
	r->files = files->len;
	if (files->len == 0) {
		g_autofree char *conf = g_build_filename(dir, "vulnid.conf", NULL);
		g_autofree char *gnupg = g_build_filename(dir, "gnupg", NULL);

		if (!g_file_test(conf, G_FILE_TEST_IS_REGULAR) || !g_file_test(gnupg, G_FILE_TEST_IS_DIR)) {
			s = vulnid_fail(err, VULNID_ERR_NOTFOUND, "'%s' is a backup of the database alone: copy the"
					" instance's vulnid.conf, gnupg/, log keys (log2.key, log.key) and witness/ into '%s' first"
					" (vulnid backup --all carries them)", name, dir);
			goto fail;
		}
	}
	s = write_files(dir, files, err);
	if (s != VULNID_OK)
		goto fail;
	if (rename(tmp, db) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot rename '%s' to '%s': %s", tmp, db,
				g_strerror(errno));
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	s = make_dirs(dir, err);
	if (s == VULNID_OK)
		s = restore_chain(dir, name, r, err);
	if (s == VULNID_OK)
		s = restore_check(dir, r, err);
	return s;
fail:
	if (tmp != NULL)
		unlink(tmp);
	return s;
}
