/* vulnid-lmtpd - the resident LMTP server of an instance (vulnid-lmtpd(8))
 *
 * Exit status: 0 after a clean shutdown (SIGTERM), 75 when it cannot start
 * (configuration, socket, database), so that a service manager retries. */
#include "autoconfig.h"

#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "lmtpd.h"

int
main(int argc, char **argv)
{
	g_autofree char *conf_opt = NULL;
	g_autofree char *conf = NULL;
	g_autofree char *self = NULL;
	g_autoptr(GOptionContext) oc = NULL;
	g_autoptr(GError) err = NULL;
	gboolean version = FALSE, agent = FALSE;
	vulnid_status s;
	GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &conf_opt, "instance configuration", "CONF" },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL },
		{ "delivery-agent", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &agent, NULL, NULL },
		{ NULL }
	};

	setlocale(LC_ALL, "C.UTF-8");
	oc = g_option_context_new(NULL);
	g_option_context_set_summary(oc, "Receive mail for a vulnid instance over LMTP.");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "vulnid-lmtpd: %s\n", err->message);
		return EX_USAGE;
	}
	if (version) {
		printf("vulnid-lmtpd %s (database schema %d)\n", PACKAGE_VERSION, STORE_SCHEMA_VERSION);
		return EX_OK;
	}
	openlog(agent ? "vulnid-lmtpd/delivery" : "vulnid-lmtpd", LOG_PID, LOG_MAIL);
	store_set_migrate_hook(audit_schema_migrated);
	conf = config_locate(conf_opt);
	if (conf != NULL && !g_path_is_absolute(conf)) {
		g_autofree char *cwd = g_get_current_dir();
		char *abs = g_build_filename(cwd, conf, NULL);

		g_free(conf);
		conf = abs;
	}
	/* As vulnid-filter: run as the instance's owner (started as root,
	 * become it before anything in DIR is read or made; a root-owned
	 * socket, file or gpg-agent there would lock the robot out). */
	s = config_become_owner(conf, &err);
	if (s != VULNID_OK)
		;
	else if (agent)
		s = lmtpd_delivery_agent(conf, &err);
	else {
		lmtpd_stats st = { 0 };

		self = g_file_read_link("/proc/self/exe", NULL);
		s = lmtpd_run(conf, self != NULL ? self : argv[0], &st, &err);
		if (s == VULNID_OK) {
			/* for the operator (the journal) and the tests */
			fprintf(stderr, "vulnid-lmtpd: stopped: %" G_GUINT64_FORMAT " mails in %" G_GUINT64_FORMAT
				" commits, %" G_GUINT64_FORMAT " syncs\n", st.mails, st.commits, st.syncs);
			syslog(LOG_INFO, "stopped: %" G_GUINT64_FORMAT " mails in %" G_GUINT64_FORMAT
			       " commits, %" G_GUINT64_FORMAT " syncs", st.mails, st.commits, st.syncs);
		}
	}
	if (s != VULNID_OK) {
		fprintf(stderr, "vulnid-lmtpd: %s\n", err != NULL ? err->message : vulnid_status_str(s));
		syslog(LOG_ERR, "%s", err != NULL ? err->message : vulnid_status_str(s));
		return EX_TEMPFAIL;
	}
	return EX_OK;
}
