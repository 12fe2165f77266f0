/* lmtpd.h - the resident LMTP server of an instance (vulnid-lmtpd(8))
 *
 * Sessions (one thread each, at most [lmtpd] sessions) speak LMTP (lmtp.c)
 * and spool each mail; one engine thread runs every mail through the same
 * intake phases as vulnid-filter, parses them outside any transaction and
 * applies the mails that are ready together, each in its own SAVEPOINT of
 * one BEGIN IMMEDIATE ... COMMIT: several mails share one sync, and a
 * failing mail is rolled back alone.  Each recipient is answered after
 * the commit.  Delivery of what the mails queued and the audit.log flush
 * run in a helper process (the same program, lmtpd_delivery_agent()),
 * woken after each commit, so that signing and sending never hold up the
 * next commit and the library runs single-threaded in each process. */
#ifndef VULNID_LMTPD_H
#define VULNID_LMTPD_H

#include <glib.h>

#include "status.h"

/* Serve until SIGTERM or SIGINT (then drain: no new sessions, running
 * mails are finished and answered); SIGHUP reloads the configuration.
 * self: this program's path, to start the delivery agent. */
typedef struct {
	guint64 mails;		/* recipients answered 250 */
	guint64 commits;	/* transactions committed */
	guint64 syncs;		/* fdatasync() of the WAL that made them durable */
} lmtpd_stats;

vulnid_status lmtpd_run(const char *conf_path, const char *self, lmtpd_stats *stats, GError **err);

/* The delivery agent: reads wake-up bytes on stdin; after each, delivers
 * the due outbox items (within [delivery] filter_budget) and flushes
 * audit.log.  Returns at end of input. */
vulnid_status lmtpd_delivery_agent(const char *conf_path, GError **err);

#endif
