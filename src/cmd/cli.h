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

typedef struct {
	const char *conf;	/* -c, or NULL for $VULNID_CONF */
} cli_global;

typedef struct {
	const char *name;
	int (*run)(const cli_global *g, int argc, char **argv);
	const char *summary;
} cli_command;

/* Exit status for a failed status (sysexits.h). */
int cli_exit(vulnid_status s);

/* Print "vulnid: message" for err and return cli_exit(s). */
int cli_fail(vulnid_status s, GError *err);

/* Load the configuration and open the database. */
int cli_open(const cli_global *g, store_open_mode mode, vulnid_config **cfg, store **st);

/* Print a JSON node, pretty, with a newline. */
void cli_print_json(JsonNode *node);

/* Parse options with GOptionContext; returns FALSE (message printed) on
 * a usage error. */
gboolean cli_parse(const char *usage, const char *summary, GOptionEntry *entries,
		   int *argc, char ***argv);

/* A note key given on the command line: the key text itself, or a file
 * holding it. */
vulnid_status cli_note_key(const char *arg, guint8 type, note_key **key, GError **err);

/* Deliver what is due (vulnid queue run, vulnid tick). */
int cli_queue_run(const vulnid_config *cfg, store *st, gboolean force);

int cmd_init(const cli_global *g, int argc, char **argv);
int cmd_show(const cli_global *g, int argc, char **argv);
int cmd_list(const cli_global *g, int argc, char **argv);
int cmd_queue(const cli_global *g, int argc, char **argv);
int cmd_quarantine(const cli_global *g, int argc, char **argv);
int cmd_audit(const cli_global *g, int argc, char **argv);
int cmd_vendor(const cli_global *g, int argc, char **argv);
int cmd_tick(const cli_global *g, int argc, char **argv);
int cmd_key(const cli_global *g, int argc, char **argv);
int cmd_keys(const cli_global *g, int argc, char **argv);
int cmd_export(const cli_global *g, int argc, char **argv);
int cmd_verify_feed(const cli_global *g, int argc, char **argv);
int cmd_backup(const cli_global *g, int argc, char **argv);
int cmd_prove(const cli_global *g, int argc, char **argv);
int cmd_witness(const cli_global *g, int argc, char **argv);

#endif
