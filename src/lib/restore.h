/* restore.h - an instance rebuilt from a backup (vulnid restore) */
#ifndef VULNID_RESTORE_H
#define VULNID_RESTORE_H

#include <glib.h>

#include "status.h"

typedef struct {
	char *made;		/* when the backup was made, its version, the */
	char *version;		/* instance it was made of: NULL for a backup */
	char *instance;		/* of the database only */
	guint files;		/* files of the instance written */
	int schema;		/* the backup's schema (migrated forward since) */
	gint64 entries;
	char *last;		/* the last identifier assigned, or NULL */
	char *fingerprint;	/* the robot key found in DIR/gnupg */
	gboolean log_key;	/* DIR/log.key is there */
} restore_result;

void restore_result_clear(restore_result *r);

/* Rebuild the instance in dir (which exists, is this process's, and holds
 * no database and no audit.log) from the backup read from fd, named name
 * in messages.  A backup of vulnid backup --all brings its files (dir
 * must hold none of them); one of the database only needs vulnid.conf
 * and gnupg/ copied into dir beforehand.  The database is checked, put
 * in place, migrated forward if it is older, the event "restored" added
 * to its audit chain and audit.log written anew from it; the missing
 * directories (tmp, sent, templates) are made.  Then the configuration
 * and the robot key are checked: a failure there leaves the instance
 * restored and says what to fix. */
vulnid_status restore_instance(const char *dir, int fd, const char *name, restore_result *r, GError **err);

#endif
