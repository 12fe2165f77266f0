/* owner.c - running as the user who owns a directory
 *
 * Everything in an instance belongs to one user: the MTA runs the filter
 * as that user, and a file or a gpg-agent of anyone else (root, after
 * "sudo vulnid queue run") locks the robot out of its own keyring and
 * Maildir.  So the programs become that user first, or refuse. */
#include "autoconfig.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner.h"

static char *
user_label(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	return pw != NULL ? g_strdup_printf("%s (uid %d)", pw->pw_name, (int) uid)
			  : g_strdup_printf("uid %d", (int) uid);
}

vulnid_status
owner_become(const char *dir, GError **err)
{
	struct stat sb;
	struct passwd *pw;
	uid_t me = geteuid();
	gid_t gid;

	if (stat(dir, &sb) < 0)
		return vulnid_fail(err, errno == ENOENT ? VULNID_ERR_NOTFOUND : vulnid_status_from_errno(errno),
				   "cannot find the instance '%s': %s", dir, g_strerror(errno));
	if (sb.st_uid == me)
		return VULNID_OK;
	if (me != 0) {
		g_autofree char *owner = user_label(sb.st_uid);
		g_autofree char *self = user_label(me);

		return vulnid_fail(err, VULNID_ERR_CONFIG,
				   "the instance '%s' belongs to %s, not to %s: run this as %s"
				   " (or as root, which switches to it)", dir, owner, self, owner);
	}
	pw = getpwuid(sb.st_uid);
	gid = pw != NULL ? pw->pw_gid : sb.st_gid;
	if ((pw != NULL ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 ||
	    setresgid(gid, gid, gid) < 0 || setresuid(sb.st_uid, sb.st_uid, sb.st_uid) < 0)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot switch to the owner of '%s': %s",
				   dir, g_strerror(errno));
	/* for good: root must not come back */
	if (setuid(0) == 0 || geteuid() != sb.st_uid)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot drop root for the owner of '%s'", dir);
	if (pw != NULL) {
		g_setenv("HOME", pw->pw_dir, TRUE);
		g_setenv("USER", pw->pw_name, TRUE);
		g_setenv("LOGNAME", pw->pw_name, TRUE);
	} else {
		g_unsetenv("HOME");	/* root's would be unreadable */
	}
	return VULNID_OK;
}

vulnid_status
owner_check_files(const char *dir, const char *const *names, GError **err)
{
	uid_t me = geteuid();

	for (const char *const *n = names; *n != NULL; n++) {
		g_autofree char *path = g_build_filename(dir, *n, NULL);
		struct stat sb;

		if (lstat(path, &sb) < 0 || sb.st_uid == me)
			continue;
		{
			g_autofree char *owner = user_label(sb.st_uid);
			g_autofree char *self = user_label(me);
			struct passwd *pw = getpwuid(me);
			struct group *gr = pw != NULL ? getgrgid(pw->pw_gid) : NULL;
			g_autofree char *who = pw != NULL ? g_strdup_printf("%s:%s", pw->pw_name,
									  gr != NULL ? gr->gr_name : "")
							  : g_strdup_printf("%d", (int) me);

			return vulnid_fail(err, VULNID_ERR_CONFIG,
					   "'%s' belongs to %s, not to %s, the owner of the instance, as whom every"
					   " vulnid program runs: as root, chown -R %s '%s'", path, owner, self, who, dir);
		}
	}
	return VULNID_OK;
}
