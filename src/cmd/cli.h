/* cli.h - shared plumbing of the vulnid subcommands (not library code) */
#ifndef VULNID_CLI_H
#define VULNID_CLI_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <sysexits.h>

#include "config.h"
#include "note.h"
#include "status.h"
#include "store.h"

/* What a command declares in the table of vulnid.c; the plumbing that
 * follows from it is done here, not in each cmd_*(). */
typedef enum {
	CLI_INSTANCE = 1 << 0,	/* uses an instance: cli_instance() loads and opens it */
	CLI_WRITES = 1 << 1,	/* opens the database read-write, migrating it forward
				 * (without it: read-only, so a backup or an export
				 * never takes the write lock) */
	CLI_JSON = 1 << 2,	/* offers --json (cli_parse() adds it; cli_ctx.json) */
	CLI_ANY_SCHEMA = 1 << 3,	/* read-only, and of any schema (vulnid backup: also
					 * of an older version's database) */
} cli_flags;

typedef struct cli_command cli_command;

/* One run of one command.  The dispatcher owns it: what cli_instance()
 * opened is closed after the command returns. */
typedef struct {
	const char *conf;	/* -c, or NULL for $VULNID_CONF */
	const cli_command *cmd;
	gboolean json;		/* --json was given (CLI_JSON commands) */
	vulnid_config *cfg;	/* after cli_instance() */
	store *st;
} cli_ctx;

struct cli_command {
	const char *name;
	int (*run)(cli_ctx *ctx, int argc, char **argv);
	unsigned flags;		/* cli_flags */
	const char *summary;	/* one line of vulnid --help, ending in the usage */
};

/* The commands of vulnid, in the order of vulnid --help. */
extern const cli_command cli_commands[];
extern const gsize cli_n_commands;

/* Exit status for a failed status (sysexits.h). */
int cli_exit(vulnid_status s);

/* Print "vulnid: message" for err and return cli_exit(s). */
int cli_fail(vulnid_status s, GError *err);

/* Load the configuration and open the database, as the command's flags
 * say (read-write or read-only); *cfg and *st (either may be NULL) stay
 * ctx's.  Call it after the arguments are checked, so that a usage error
 * is one whatever the instance. */
int cli_instance(cli_ctx *ctx, vulnid_config **cfg, store **st);

/* After an open that migrated the database: say so on standard error
 * (the audit event is written by the migration) and flush audit.log. */
void cli_report_migration(store *st, const vulnid_config *cfg);

/* Print a JSON node, pretty, with a newline. */
void cli_print_json(JsonNode *node);

/* Parse options with GOptionContext, with --json for a CLI_JSON command;
 * returns FALSE (message printed) on a usage error. */
gboolean cli_parse(cli_ctx *ctx, const char *usage, const char *summary, GOptionEntry *entries,
		   int *argc, char ***argv);

/* A note key given on the command line: the key text itself, or a file
 * holding it. */
vulnid_status cli_note_key(const char *arg, guint8 type, note_key **key, GError **err);

/* Deliver what is due (vulnid queue run, vulnid tick). */
int cli_queue_run(const vulnid_config *cfg, store *st, gboolean force);

int cmd_init(cli_ctx *ctx, int argc, char **argv);
int cmd_show(cli_ctx *ctx, int argc, char **argv);
int cmd_list(cli_ctx *ctx, int argc, char **argv);
int cmd_queue(cli_ctx *ctx, int argc, char **argv);
int cmd_quarantine(cli_ctx *ctx, int argc, char **argv);
int cmd_audit(cli_ctx *ctx, int argc, char **argv);
int cmd_vendor(cli_ctx *ctx, int argc, char **argv);
int cmd_tick(cli_ctx *ctx, int argc, char **argv);
int cmd_key(cli_ctx *ctx, int argc, char **argv);
int cmd_keys(cli_ctx *ctx, int argc, char **argv);
int cmd_export(cli_ctx *ctx, int argc, char **argv);
int cmd_verify_feed(cli_ctx *ctx, int argc, char **argv);
int cmd_backup(cli_ctx *ctx, int argc, char **argv);
int cmd_restore(cli_ctx *ctx, int argc, char **argv);
int cmd_prove(cli_ctx *ctx, int argc, char **argv);
int cmd_witness(cli_ctx *ctx, int argc, char **argv);
int cmd_config(cli_ctx *ctx, int argc, char **argv);

#endif
