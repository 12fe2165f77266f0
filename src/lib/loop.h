/* loop.h - does a mail look like an answer from a robot?
 *
 * Headers that mark automatic mail (Auto-Submitted, Precedence, X-Loop)
 * are often stripped on the way, so the text is looked at as well: mail
 * that answers the robot's own mail (In-Reply-To or References naming one
 * of its Message-IDs, a Subject carrying one of its [ID] tags), that
 * quotes its Message-IDs, its VERP addresses, a token it issued or its
 * signature line back, or that repeats an earlier mail of the same sender
 * word for word, is "suspect": the outgoing-mail policy answers an address
 * at most [policy] loop_answers times per loop_hours for such mail
 * (policy.h), so two robots stop after a few mails.  Bounded: the text is
 * scanned once; the tokens it quotes were counted when they were taken
 * out of the mail (mail_redact()). */
#ifndef VULNID_LOOP_H
#define VULNID_LOOP_H

#include <glib.h>

#include "mailctx.h"
#include "status.h"

/* *why is a static phrase, or NULL when the mail is not suspect. */
vulnid_status loop_suspect(mail_ctx *c, gint64 body_repeats_since_hours, const char **why, GError **err);

#endif
