/* owner.h - running as the user who owns a directory */
#ifndef VULNID_OWNER_H
#define VULNID_OWNER_H

#include <glib.h>

#include "status.h"

/* Make this process the owner of dir, before it touches anything in it.
 * Run by root: switch for good to the owner (its primary group and its
 * other groups from the password database, or the directory's group for
 * a uid without an entry; HOME, USER and LOGNAME follow), as Postfix's
 * tools switch to the owner of their files.  Run by the owner: nothing to
 * do.  Run by anyone else: VULNID_ERR_CONFIG, saying whose it is.  A
 * directory that does not exist: VULNID_ERR_NOTFOUND. */
vulnid_status owner_become(const char *dir, GError **err);

/* Each of names in dir (those that exist) must be this process's, once it
 * runs as the owner: a file that root made there (a command of an older
 * version run as root, a copy by hand) locks the robot out with nothing
 * but "Permission denied".  VULNID_ERR_CONFIG names the file, its owner
 * and the chown that fixes it. */
vulnid_status owner_check_files(const char *dir, const char *const *names, GError **err);

#endif
