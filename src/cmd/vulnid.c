/* vulnid - the operator's command: the table of commands and the dispatcher */
#include "autoconfig.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "crypto.h"
#include "message.h"

#define I CLI_INSTANCE
#define W CLI_WRITES
#define J CLI_JSON
#define A CLI_ANY_SCHEMA

/* Every command, its flags and its line of vulnid --help (which the bash
 * completion reads; T015 checks vulnid(8) and the completion against it).
 * Commands that read an instance but open it read-write migrate an older
 * database forward, as they always have; backup and export never take
 * the write lock. */
const cli_command cli_commands[] = {
	{ "init", cmd_init, 0, "create an instance: vulnid init [--prefix P] [--domain D] [--key-algo A] DIR" },
	{ "show", cmd_show, I | W | J, "show an entry: vulnid show ID [--json] [--private]" },
	{ "list", cmd_list, I | W | J, "list entries: vulnid list [--year Y] [--json]" },
	{ "queue", cmd_queue, I | W | J, "outgoing mail: vulnid queue list [--all] [--json] | run [--force] | retry N" },
	{ "quarantine", cmd_quarantine, I | W | J, "set-aside mail: vulnid quarantine list [--json] | show N [--raw]" },
	{ "audit", cmd_audit, I | W, "audit log: vulnid audit verify | flush | repair" },
	{ "vendor", cmd_vendor, I | W | J, "vendors directory: vulnid vendor add|list|show|alias|domain|contact|remove-contact|key|import-securitytxt" },
	{ "tick", cmd_tick, I | W, "time-based work for cron or a timer: vulnid tick" },
	{ "key", cmd_key, I | W, "the robot's OpenPGP key: vulnid key export [--fingerprint]" },
	{ "keys", cmd_keys, I | W | J, "contributors' keys: vulnid keys import FILE | list [--json]" },
	{ "export", cmd_export, I, "publish: vulnid export feed DIR | osv DIR | mbox FILE | html DIR" },
	{ "verify-feed", cmd_verify_feed, 0, "check a published feed: vulnid verify-feed DIR --key robot.asc" },
	{ "prove", cmd_prove, 0, "proofs from a feed's log: vulnid prove DIR ID | DIR --consistency SIZE" },
	{ "witness", cmd_witness, 0, "cosign logs: vulnid witness [--state DIR] init NAME | key | add-checkpoint | cosign-feed" },
	{ "backup", cmd_backup, I | A, "online copy of the instance: vulnid backup [--all] [--force] FILE|-" },
	{ "restore", cmd_restore, 0, "rebuild an instance from a backup: vulnid restore BACKUP DIR" },
	{ "config", cmd_config, 0, "vulnid.conf(5): vulnid config keys | check" },
};
const gsize cli_n_commands = G_N_ELEMENTS(cli_commands);

#undef I
#undef W
#undef J
#undef A

static void
usage(FILE *f)
{
	fprintf(f, "usage: vulnid [-c CONF] COMMAND [ARGS]\n\ncommands:\n");
	for (gsize i = 0; i < cli_n_commands; i++)
		fprintf(f, "  %-11s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fprintf(f, "\nThe instance is found by -c DIR/vulnid.conf or $VULNID_CONF.\n");
}

/* One command, with what its flags ask for done around it. */
static int
run(const cli_command *cmd, const char *conf, int argc, char **argv)
{
	cli_ctx c = { conf, cmd, FALSE, NULL, NULL };
	int rc;

	crypto_preinit();
	message_init();
	store_set_migrate_hook(audit_schema_migrated);
	rc = cmd->run(&c, argc, argv);
	g_clear_pointer(&c.st, store_close);
	g_clear_pointer(&c.cfg, config_free);
	message_shutdown();
	return rc;
}

int
main(int argc, char **argv)
{
	const char *conf = NULL;
	int i = 1;

	setlocale(LC_ALL, "");
	while (i < argc && argv[i][0] == '-') {
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			conf = argv[i + 1];
			i += 2;
		} else if (g_str_has_prefix(argv[i], "--config=")) {
			conf = argv[i] + strlen("--config=");
			i++;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("vulnid %s (database schema %d)\n", PACKAGE_VERSION, STORE_SCHEMA_VERSION);
			return EX_OK;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return EX_OK;
		} else {
			fprintf(stderr, "vulnid: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EX_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		usage(stdout);
		return EX_OK;
	}
	for (gsize k = 0; k < cli_n_commands; k++)
		if (strcmp(argv[i], cli_commands[k].name) == 0)
			return run(&cli_commands[k], conf, argc - i, argv + i);
	fprintf(stderr, "vulnid: unknown command '%s'\n", argv[i]);
	usage(stderr);
	return EX_USAGE;
}
