/* timelimit.h - vulnid-filter's time limit, as the library sees it
 *
 * The filter ends itself from its SIGALRM handler: with 75 while the mail
 * is not committed, with 0 once it is and only the delivery of its replies
 * (which stay queued) and the audit flush remain.  intake_message() marks
 * that point right after its commit; the handler asks (async-signal-safe).
 * Code that must finish within the limit (an SMTP session) asks how much
 * of it is left. */
#ifndef VULNID_TIMELIMIT_H
#define VULNID_TIMELIMIT_H

#include <glib.h>

void time_limit_mark_committed(void);
gboolean time_limit_committed(void);

/* What is left of the process's alarm (alarm(), ITIMER_REAL), in ms;
 * 0: none is set. */
guint64 time_limit_left_ms(void);

#endif
