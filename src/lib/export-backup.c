/* export-backup.c - `vulnid backup`: a consistent copy of the database put
 * in place atomically; with --all, the files of the instance in it too */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "fileio.h"
#include "store-export.h"

#define BACKUP_MAX_FILE (64 * 1024 * 1024)
#define BACKUP_MAX_DEPTH 8

void
export_backup_info_clear(export_backup_info *info)
{
	g_clear_pointer(&info->skipped, g_ptr_array_unref);
}

/* What the database, rebuilt from it, or the machine holds: not carried.
 * The database is the backup itself; audit.log is written anew from it
 * (audit flush); tmp/ is scratch, sent/ the Maildir of outgoing mail
 * (the outbox keeps every mail); the robot key cache names a gpg-agent
 * socket of this machine, and the other caches of the keyring are made
 * again from it. */
static gboolean
backup_skip(const char *rel, const char *name)
{
	static const char *const top[] = {
		"vulnid.db", "vulnid.db-wal", "vulnid.db-shm", "vulnid.db-journal", "audit.log", "tmp",
		"sent", "lmtp.sock", "gnupg/vulnid-robot-key", "gnupg/vulnid-robot-pubkey",
		"gnupg/vulnid-keys", NULL
	};

	if (g_strv_contains(top, rel))
		return TRUE;
	if (strchr(rel, '/') == NULL && (g_str_has_prefix(name, "audit.log.") || g_str_has_prefix(name, "vulnid.db.")))
		return TRUE;
	/* gpg's lock files */
	return g_str_has_prefix(name, ".#lk") || g_str_has_suffix(name, ".lock");
}

static vulnid_status
collect_dir(const char *top, const char *rel, guint depth, GPtrArray *files, export_backup_info *info,
	    GError **err)
{
	g_autofree char *dir = rel != NULL ? g_build_filename(top, rel, NULL) : g_strdup(top);
	g_autoptr(GError) e = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, &e);
	const char *name;

	if (d == NULL)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s", dir, e->message);
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree char *r = rel != NULL ? g_strconcat(rel, "/", name, NULL) : g_strdup(name);
		g_autofree char *path = g_build_filename(top, r, NULL);
		struct stat sb;

		if (backup_skip(r, name) || lstat(path, &sb) < 0 || S_ISSOCK(sb.st_mode))
			continue;
		if (S_ISDIR(sb.st_mode) && depth < BACKUP_MAX_DEPTH) {
			vulnid_status s = collect_dir(top, r, depth + 1, files, info, err);

			if (s != VULNID_OK)
				return s;
		} else if (S_ISREG(sb.st_mode) && sb.st_size <= BACKUP_MAX_FILE) {
			store_backup_file *f = g_new0(store_backup_file, 1);
			g_autofree char *data = NULL;
			gsize len = 0;

			if (!g_file_get_contents(path, &data, &len, &e)) {
				g_free(f);
				return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s", path, e->message);
			}
			f->name = g_steal_pointer(&r);
			f->mode = sb.st_mode & 0777;
			f->data = g_bytes_new_take(g_steal_pointer(&data), len);
			g_ptr_array_add(files, f);
		} else
			g_ptr_array_add(info->skipped, g_steal_pointer(&r));
	}
	return VULNID_OK;
}

/* The copy of the database into tmp, and with instance_dir its files. */
static vulnid_status
backup_make(store *st, const char *instance_dir, const char *tmp, gint64 busy_timeout_ms,
	    export_backup_info *info, GError **err)
{
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func((GDestroyNotify) store_backup_file_free);
	g_autoptr(GHashTable) meta = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	vulnid_status s;

	memset(info, 0, sizeof *info);
	info->skipped = g_ptr_array_new_with_free_func(g_free);
	s = store_export_backup_copy(st, tmp, busy_timeout_ms, err);
	if (s != VULNID_OK || instance_dir == NULL)
		return s;
	s = collect_dir(instance_dir, NULL, 0, files, info, err);
	if (s != VULNID_OK)
		return s;
	g_hash_table_insert(meta, "made", store_now());
	g_hash_table_insert(meta, "version", g_strdup(PACKAGE_VERSION));
	g_hash_table_insert(meta, "instance", g_strdup(instance_dir));
	info->files = files->len;
	return store_export_backup_add(tmp, files, meta, err);
}

static void
unlink_tmp(const char *tmp)
{
	g_autofree char *j = g_strconcat(tmp, "-journal", NULL);

	unlink(tmp);
	unlink(j);
}

vulnid_status
export_backup(store *st, const char *instance_dir, const char *path, gboolean force, gint64 busy_timeout_ms,
	      export_backup_info *info, GError **err)
{
	g_autofree char *tmp = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	vulnid_status s = VULNID_OK;
	int fd;

	memset(info, 0, sizeof *info);
	if (!force && g_file_test(path, G_FILE_TEST_EXISTS))
		return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' exists (use --force to replace it)", path);
	tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	/* The copy holds every mail, sealed or not: private from the start. */
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmp, g_strerror(errno));
	close(fd);
	s = backup_make(st, instance_dir, tmp, busy_timeout_ms, info, err);
	if (s != VULNID_OK)
		goto out;
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot sync '%s': %s",
				tmp, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot rename '%s' to '%s': %s",
				tmp, path, g_strerror(errno));
		goto out;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return VULNID_OK;
out:
	unlink_tmp(tmp);
	return s;
}

vulnid_status
export_backup_to_fd(store *st, const char *instance_dir, const char *scratch_dir, int out, gint64 busy_timeout_ms,
		    export_backup_info *info, GError **err)
{
	g_autofree char *tmp = g_build_filename(scratch_dir, "backup.XXXXXX", NULL);
	char buf[65536];
	vulnid_status s;
	ssize_t n;
	int fd;

	memset(info, 0, sizeof *info);
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmp, g_strerror(errno));
	close(fd);
	s = backup_make(st, instance_dir, tmp, busy_timeout_ms, info, err);
	fd = s == VULNID_OK ? open(tmp, O_RDONLY | O_CLOEXEC) : -1;
	unlink_tmp(tmp);	/* read through fd from here */
	if (s != VULNID_OK)
		return s;
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot read '%s': %s", tmp,
				   g_strerror(errno));
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (!fileio_write_all(out, buf, (gsize) n)) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write the backup: %s",
					g_strerror(errno));
			break;
		}
	if (n < 0)
		s = vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s", tmp, g_strerror(errno));
	close(fd);
	return s;
}
