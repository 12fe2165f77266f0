/* export-backup.c - `vulnid backup`: a consistent copy of the database put
 * in place atomically */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "export.h"
#include "store-export.h"

vulnid_status
export_backup(store *st, const char *path, gboolean force, gint64 busy_timeout_ms, GError **err)
{
	g_autofree char *tmp = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	vulnid_status s = VULNID_OK;
	int fd;

	if (!force && g_file_test(path, G_FILE_TEST_EXISTS))
		return vulnid_fail(err, VULNID_ERR_EXISTS, "'%s' exists (use --force to replace it)", path);
	tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	/* The copy holds every mail, sealed or not: private from the start. */
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmp, g_strerror(errno));
	close(fd);
	s = store_export_backup_copy(st, tmp, busy_timeout_ms, err);
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
	unlink(tmp);
	{
		g_autofree char *j = g_strconcat(tmp, "-journal", NULL);

		unlink(j);
	}
	return s;
}
