/* cmd-restore.c - vulnid restore BACKUP DIR: an instance rebuilt from a
 * backup */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "feedlog.h"
#include "owner.h"
#include "restore.h"

/* The directory to restore into, as its owner: root becomes the user it
 * belongs to, as every command does; a new one is made only by a user
 * other than root (a root-owned instance would lock the robot out). */
static int
restore_dir(const char *dir)
{
	g_autoptr(GError) err = NULL;
	vulnid_status s;

	if (g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		s = owner_become(dir, &err);
		return s == VULNID_OK ? EX_OK : cli_fail(s, err);
	}
	if (geteuid() == 0) {
		fprintf(stderr, "vulnid: '%s' does not exist: make it the robot user's first, for example with"
			" install -d -o vulnid -g vulnid -m 0700 '%s'; restore then runs as that user\n", dir, dir);
		return EX_CANTCREAT;
	}
	if (g_mkdir_with_parents(dir, 0700) < 0) {
		fprintf(stderr, "vulnid: cannot create '%s': %s\n", dir, g_strerror(errno));
		return EX_CANTCREAT;
	}
	return EX_OK;
}

static void
restore_report(const char *dir, const char *backup, const restore_result *r)
{
	printf("restored instance in %s from %s\n", dir, backup);
	if (r->made != NULL)
		printf("backup: made %s by vulnid %s of %s, schema %d, %u files of the instance\n", r->made,
		       r->version, r->instance, r->schema, r->files);
	else
		printf("backup: of the database alone, schema %d\n", r->schema);
	if (r->schema < STORE_SCHEMA_VERSION)
		printf("database: migrated from schema %d to %d\n", r->schema, STORE_SCHEMA_VERSION);
	printf("entries: %" G_GINT64_FORMAT "%s%s\n", r->entries, r->last != NULL ? ", the last " : "",
	       r->last != NULL ? r->last : "");
	printf("robot key: %s\n", r->fingerprint);
	if (r->log_key)
		printf("log key: %s/" FEEDLOG_KEY_FILE "\n", dir);
	else
		printf("log key: none (copy the old " FEEDLOG_KEY_FILE " into %s before the next export feed into the"
		       " published feed, which refuses another key)\n", dir);
	printf("audit.log: written anew from the database chain\n");
	fprintf(stderr, "vulnid: mail the robot handled after the backup is not in %s: if it assigned"
		" identifiers after %s, set [ids] blocks_YYYY past them before it handles mail again"
		" (UPGRADING)\n", dir, r->last != NULL ? r->last : "the last one here");
}

int
cmd_restore(cli_ctx *ctx, int argc, char **argv)
{
	g_autofree char *dir = NULL;
	g_autoptr(GError) err = NULL;
	restore_result r;
	vulnid_status s;
	int fd, rc;

	if (!cli_parse(ctx, "BACKUP DIR", "Rebuild an instance in DIR (empty, or new) from a backup made by\n"
		       "vulnid backup --all (or, with vulnid.conf and gnupg/ copied into DIR\n"
		       "first, by vulnid backup).  - reads the backup from standard input.",
		       NULL, &argc, &argv))
		return EX_USAGE;
	if (argc != 3) {
		fprintf(stderr, "vulnid: usage: vulnid restore BACKUP DIR\n");
		return EX_USAGE;
	}
	/* read as whoever runs this: root's backup file, for root */
	fd = strcmp(argv[1], "-") == 0 ? dup(STDIN_FILENO) : open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "vulnid: cannot read '%s': %s\n", argv[1], g_strerror(errno));
		return EX_NOINPUT;
	}
	dir = g_canonicalize_filename(argv[2], NULL);
	rc = restore_dir(dir);
	if (rc != EX_OK) {
		close(fd);
		return rc;
	}
	s = restore_instance(dir, fd, argv[1], &r, &err);
	close(fd);
	if (s == VULNID_OK)
		restore_report(dir, argv[1], &r);
	restore_result_clear(&r);
	return s == VULNID_OK ? EX_OK : cli_fail(s, err);
}
