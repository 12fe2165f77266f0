/* vulnid-filter - read one mail from the MTA on stdin and handle it
 *
 * The exit status is the MTA contract (vulnid-filter(8)): 0 handled,
 * 75 try again later, 65 too large.  Nothing else. */
#include "autoconfig.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "crypto.h"
#include "intake.h"
#include "message.h"
#include "timelimit.h"
#include "text.h"

/* The wall-clock limit [limits] time_limit: whatever is in progress is
 * abandoned, from the signal handler, at once.
 *
 * Before the commit: 75.  An open SQLite transaction that never committed
 * leaves nothing behind (WAL), the spool file was unlinked when it was
 * made, and the MTA delivers the mail again later.
 *
 * After the commit (time_limit_committed(), marked by intake_message()):
 * 0, the status of a recorded mail.  What was left is delivery and the
 * audit flush, both repeated by later runs: a reply not yet recorded as
 * delivered stays queued (one being sent may be sent again: at least
 * once), and audit.log lines missing from the file are appended by the
 * next flush.  No line is torn by this exit: write() to a regular file is
 * not interrupted by a caught signal, so the handler runs before or after
 * a whole write(); and a partial last line (a full disk, a SIGKILL) is cut
 * off and written again whole by the next flush, under the file lock.
 *
 * smtp_send() keeps back part of what is left of the alarm, so that a
 * hanging SMTP server normally ends the session in time for the outcome
 * to be recorded and this handler never runs. */
static void
time_limit_reached(int sig)
{
	static const char msg[] = "vulnid-filter: temporary failure: time limit reached\n";

	(void) sig;
	if (time_limit_committed())
		_exit(EX_OK);	/* silent, like every 0 (vulnid-filter(8)) */
	(void) !write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(EX_TEMPFAIL);
}

static int
exit_code_for(vulnid_status s)
{
	switch (s) {
	case VULNID_OK:
		return EX_OK;
	case VULNID_ERR_TOOBIG:
		return EX_DATAERR;
	default:
		return EX_TEMPFAIL;
	}
}

int
main(int argc, char **argv)
{
	g_autofree char *conf_opt = NULL;
	g_autofree char *sender = NULL;
	g_autofree char *recipient = NULL;
	g_autofree char *client = NULL;
	g_autofree char *conf = NULL;
	g_autoptr(GOptionContext) oc = NULL;
	g_autoptr(vulnid_config) cfg = NULL;
	g_autoptr(intake_result) res = NULL;
	g_autoptr(GError) err = NULL;
	gboolean version = FALSE;
	intake_envelope env = { 0 };
	vulnid_status s;
	GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &conf_opt, "instance configuration", "CONF" },
		{ "sender", 'f', 0, G_OPTION_ARG_STRING, &sender, "envelope sender", "ADDRESS" },
		{ "recipient", 'r', 0, G_OPTION_ARG_STRING, &recipient, "envelope recipient", "ADDRESS" },
		{ "client-address", 'a', 0, G_OPTION_ARG_STRING, &client, "IP address of the SMTP client "
		  "(\"received\": from the topmost Received field)", "ADDRESS" },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL },
		{ NULL }
	};

	setlocale(LC_ALL, "C.UTF-8");
	openlog("vulnid-filter", LOG_PID, LOG_MAIL);
	oc = g_option_context_new("< MESSAGE");
	g_option_context_set_summary(oc, "Assign vulnerability identifiers to the mail on stdin.");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		/* A broken MTA configuration can be fixed: keep the mail. */
		fprintf(stderr, "vulnid-filter: %s\n", err->message);
		return EX_TEMPFAIL;
	}
	if (version) {
		printf("vulnid-filter %s (database schema %d)\n", PACKAGE_VERSION, STORE_SCHEMA_VERSION);
		return EX_OK;
	}
	conf = config_locate(conf_opt);
	/* Run as the instance's owner: as root, become it (a root-owned file
	 * or gpg-agent in the instance would lock the robot out); as anyone
	 * else, keep the mail (75) and say whose instance it is. */
	s = config_become_owner(conf, &err);
	if (s == VULNID_OK)
		s = config_load(conf, &cfg, &err);
	if (s != VULNID_OK) {
		fprintf(stderr, "vulnid-filter: %s\n", err->message);
		syslog(LOG_ERR, "%s", err->message);
		return EX_TEMPFAIL;
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = time_limit_reached;
		sigfillset(&sa.sa_mask);	/* nothing else runs in between */
		sigaction(SIGALRM, &sa, NULL);
	}
	alarm((unsigned) cfg->time_limit);
	env.sender = sender;
	env.recipient = recipient;
	env.client_address = client;
	crypto_preinit();
	message_init();
	store_set_migrate_hook(audit_schema_migrated);
	crypto_set_home(cfg->gnupg_home, NULL);
	s = intake_message(cfg, STDIN_FILENO, &env, &res, &err);
	if (s != VULNID_OK) {
		g_autofree char *m = text_mask_controls(err != NULL ? err->message : vulnid_status_str(s));

		if (s == VULNID_ERR_TOOBIG)
			fprintf(stderr, "vulnid-filter: message too large: the limit is %" G_GINT64_FORMAT " bytes\n",
				cfg->max_message_size);
		else
			fprintf(stderr, "vulnid-filter: temporary failure (%s): %s\n",
				vulnid_status_str(s), m);
		syslog(s == VULNID_ERR_TOOBIG ? LOG_NOTICE : LOG_ERR, "%s: %s", vulnid_status_str(s), m);
	} else {
		g_autofree char *ids = NULL;
		g_autofree char *reason = res->reason != NULL ? text_mask_controls(res->reason) : NULL;

		g_ptr_array_add(res->ids, NULL);
		ids = g_strjoinv(",", (char **) res->ids->pdata);
		syslog(LOG_INFO, "%s%s%s%s%s", intake_outcome_str(res->outcome),
		       *ids ? " " : "", ids, reason != NULL ? " reason=" : "",
		       reason != NULL ? reason : "");
	}
	message_shutdown();
	return exit_code_for(s);
}
