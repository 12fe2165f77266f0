/* timelimit.c - the filter's time limit (timelimit.h) */
#include "autoconfig.h"

#include <signal.h>
#include <sys/time.h>

#include "timelimit.h"

static volatile sig_atomic_t committed;

void
time_limit_mark_committed(void)
{
	committed = 1;
}

gboolean
time_limit_committed(void)
{
	return committed != 0;
}

guint64
time_limit_left_ms(void)
{
	struct itimerval it;

	if (getitimer(ITIMER_REAL, &it) < 0)
		return 0;
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		return 0;
	return MAX((guint64) it.it_value.tv_sec * 1000 + (guint64) it.it_value.tv_usec / 1000, 1);
}
