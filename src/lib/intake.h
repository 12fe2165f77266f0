/* intake.h - what vulnid-filter does with one mail, from stdin to outbox */
#ifndef VULNID_INTAKE_H
#define VULNID_INTAKE_H

#include <glib.h>

#include "config.h"
#include "mailctx.h"
#include "status.h"
#include "store.h"


struct request;
/* Whether any block of a parsed request asks for an embargo. */
gboolean intake_request_embargoed(const struct request *r);

/* Handle one mail read from in_fd.  On any status but VULNID_OK nothing
 * was recorded and the MTA must retry (or bounce, for VULNID_ERR_TOOBIG).
 * It is the phases below, in one process for one mail (vulnid-filter). */
vulnid_status intake_message(const vulnid_config *cfg, int in_fd, const intake_envelope *env,
			     intake_result **result, GError **err);

/* The phases of one mail, for a process that handles many (vulnid-lmtpd)
 * and commits several in one transaction:
 *
 *   intake_parse()          spool, parse, verify, trust on first use; no
 *                           database, no transaction
 *   intake_apply()          everything the mail causes, inside the caller's
 *                           transaction (BEGIN IMMEDIATE, or a SAVEPOINT in
 *                           one); on failure the caller rolls it back
 *   intake_after_commit()   delivery of what it queued (within a budget)
 *                           and the audit.log flush; only after the commit
 *
 * The envelope is copied; the configuration must outlive the mail.
 * spooled: in_fd is a seekable file at offset 0 that stays unchanged
 * while the mail exists, used in place (message_spool_file()); else it is
 * copied (message_spool_input()). */
typedef struct intake_mail intake_mail;

vulnid_status intake_parse(const vulnid_config *cfg, int in_fd, gboolean spooled,
			   const intake_envelope *env, intake_mail **out, GError **err);
vulnid_status intake_apply(intake_mail *im, store *st, GError **err);
/* After intake_apply() failed and its effects were rolled back: what is
 * still owed in the caller's (next) transaction, the blocks-exhausted
 * event when no number was left.  VULNID_OK when nothing is owed. */
vulnid_status intake_apply_failed(intake_mail *im, store *st, vulnid_status failure, GError **err);
/* budget: seconds for delivering this mail's items; 0: no delivery here
 * (the caller leaves it to someone else, e.g. a queue run). */
void intake_after_commit(intake_mail *im, store *st, guint budget);
/* The outcome, once applied; the caller owns it. */
intake_result *intake_mail_steal_result(intake_mail *im);
/* The archived message's row once applied (the first copy's for a duplicate). */
gint64 intake_mail_row(const intake_mail *im);
void intake_mail_free(intake_mail *im);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(intake_mail, intake_mail_free)

#endif
