/* cmd-tick.c - vulnid tick: the time-based work, for cron or a timer */
#include "autoconfig.h"

#include <stdio.h>

#include "audit.h"
#include "embargo.h"
#include "hashcash.h"
#include "cli.h"
#include "notify.h"
#include "ratelimit.h"

int
cmd_tick(cli_ctx *ctx, int argc, char **argv)
{
	vulnid_config *cfg = NULL;
	store *st = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status s;
	guint digests = 0, released = 0;
	int rc;

	if (!cli_parse(ctx, "", "Run what is due: embargoes that end, the daily announcement\n"
		       "digest, then the outgoing queue; spent Hashcash stamps past their\n"
		       "validity are forgotten.", NULL, &argc, &argv))
		return EX_USAGE;
	if (argc != 1) {
		fprintf(stderr, "vulnid: usage: vulnid tick\n");
		return EX_USAGE;
	}
	rc = cli_instance(ctx, &cfg, &st);
	if (rc != EX_OK)
		return rc;
	s = embargo_release_due(st, cfg, &released, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	{
		/* spent Hashcash stamps whose validity ended: no longer needed
		 * to refuse them twice, since they are refused as expired */
		g_autoptr(GDateTime) now = store_now_datetime();
		gint64 purged = 0;

		s = hashcash_purge(st, now, &purged, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
	}
	/* Always the three lines, zeros too: a healthy tick is recognisable
	 * by its output (vulnid(8)), and a missing line is a failed step. */
	printf("released %u embargoed entr%s\n", released, released == 1 ? "y" : "ies");
	s = notify_digest_run(st, cfg, &digests, &err);
	if (s != VULNID_OK)
		return cli_fail(s, err);
	printf("queued %u announcement digest%s\n", digests, digests == 1 ? "" : "s");
	fflush(stdout);
	{
		gint64 removed = 0;

		/* the rate limits' counters of minutes no limit reads any more */
		s = ratelimit_purge(st, &removed, &err);
		if (s != VULNID_OK)
			return cli_fail(s, err);
	}
	return cli_queue_run(cfg, st, FALSE);
}
