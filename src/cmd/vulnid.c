/* vulnid - the operator's command: init, show, list, queue, quarantine, audit */
#include "autoconfig.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "crypto.h"
#include "message.h"

static const cli_command commands[] = {
	{ "init", cmd_init, "create an instance: vulnid init [--prefix P] [--domain D] [--key-algo A] DIR" },
	{ "show", cmd_show, "show an entry: vulnid show ID [--json] [--private]" },
	{ "list", cmd_list, "list entries: vulnid list [--year Y] [--json]" },
	{ "queue", cmd_queue, "outgoing mail: vulnid queue list [--json] | run [--force] | retry N" },
	{ "quarantine", cmd_quarantine, "set-aside mail: vulnid quarantine list [--json] | show N [--raw]" },
	{ "audit", cmd_audit, "audit log: vulnid audit verify | flush | repair" },
	{ "vendor", cmd_vendor, "vendors directory: vulnid vendor add|list|show|alias|domain|contact|remove-contact|key|import-securitytxt" },
	{ "tick", cmd_tick, "time-based work for cron or a timer: vulnid tick" },
	{ "key", cmd_key, "the robot's OpenPGP key: vulnid key export [--fingerprint]" },
	{ "keys", cmd_keys, "contributors' keys: vulnid keys import FILE | list [--json]" },
	{ "export", cmd_export, "publish: vulnid export feed DIR | osv DIR | mbox FILE | html DIR" },
	{ "verify-feed", cmd_verify_feed, "check a published feed: vulnid verify-feed DIR --key robot.asc" },
	{ "prove", cmd_prove, "proofs from a feed's log: vulnid prove DIR ID | DIR --consistency SIZE" },
	{ "witness", cmd_witness, "cosign logs: vulnid witness [--state DIR] init NAME | key | add-checkpoint | cosign-feed" },
	{ "backup", cmd_backup, "online copy of the database: vulnid backup [--force] FILE" },
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: vulnid [-c CONF] COMMAND [ARGS]\n\ncommands:\n");
	for (gsize i = 0; i < G_N_ELEMENTS(commands); i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nThe instance is found by -c DIR/vulnid.conf or $VULNID_CONF.\n");
}

int
main(int argc, char **argv)
{
	cli_global g = { NULL };
	int i = 1, rc;

	setlocale(LC_ALL, "");
	while (i < argc && argv[i][0] == '-') {
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			g.conf = argv[i + 1];
			i += 2;
		} else if (g_str_has_prefix(argv[i], "--config=")) {
			g.conf = argv[i] + strlen("--config=");
			i++;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("vulnid %s\n", PACKAGE_VERSION);
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
	for (gsize k = 0; k < G_N_ELEMENTS(commands); k++)
		if (strcmp(argv[i], commands[k].name) == 0) {
			crypto_preinit();
			message_init();
			rc = commands[k].run(&g, argc - i, argv + i);
			message_shutdown();
			return rc;
		}
	fprintf(stderr, "vulnid: unknown command '%s'\n", argv[i]);
	usage(stderr);
	return EX_USAGE;
}
