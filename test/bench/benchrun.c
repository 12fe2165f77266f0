/* benchrun - run a command many times and measure each run: wall-clock
 * time from fork to exit, and peak resident memory (ru_maxrss).  Used by
 * test/bench/bench.sh (`make bench`); not part of the test suite.
 *
 *   benchrun [-n RUNS] [-j PARALLEL] [-i STDIN] [-e ERRFILE] [-k] -- CMD [ARGS...]
 *
 * STDIN may contain one %d, replaced by the run number (1..RUNS), so that
 * each run reads its own file.  With -j, up to PARALLEL runs go at once.
 * Output, one line:
 *   runs N ok N median_ms M p10_ms A p90_ms B mean_ms C total_s T rss_median_kb R rss_max_kb X
 * Exit status 1 if a run failed (non-zero exit or signal), unless -k. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *) a, y = *(const long *) b;

	return x < y ? -1 : x > y;
}

static double
pct(const double *v, int n, double p)
{
	double idx = p * (n - 1);
	int lo = (int) idx;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (v[lo + 1] - v[lo]) * (idx - lo);
}

int
main(int argc, char **argv)
{
	int runs = 10, par = 1, keep = 0, opt, started = 0, done = 0, ok = 0;
	const char *in = NULL, *errfile = "/dev/null";
	double *ms, t0, total;
	long *rss;
	pid_t *pids;
	double *start;

	while ((opt = getopt(argc, argv, "+n:j:i:e:k")) != -1) {
		switch (opt) {
		case 'n': runs = atoi(optarg); break;
		case 'j': par = atoi(optarg); break;
		case 'i': in = optarg; break;
		case 'e': errfile = optarg; break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr, "usage: benchrun [-n RUNS] [-j PAR] [-i STDIN] [-e ERRFILE] [-k] -- CMD...\n");
			return 2;
		}
	}
	if (optind >= argc || runs < 1 || par < 1) {
		fprintf(stderr, "benchrun: no command\n");
		return 2;
	}
	ms = calloc((size_t) runs, sizeof *ms);
	rss = calloc((size_t) runs, sizeof *rss);
	pids = calloc((size_t) runs, sizeof *pids);
	start = calloc((size_t) runs, sizeof *start);
	t0 = now_ms();
	while (done < runs) {
		while (started < runs && started - done < par) {
			char path[4096];
			int i = started++;
			pid_t p;

			if (in != NULL)
				snprintf(path, sizeof path, in, i + 1);
			start[i] = now_ms();
			p = fork();
			if (p < 0) {
				perror("fork");
				return 2;
			}
			if (p == 0) {
				int fd = in != NULL ? open(path, O_RDONLY) : open("/dev/null", O_RDONLY);
				int efd = open(errfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
				int nul = open("/dev/null", O_WRONLY);

				if (fd < 0) {
					perror(path);
					_exit(127);
				}
				dup2(fd, 0);
				dup2(nul, 1);
				if (efd >= 0)
					dup2(efd, 2);
				execvp(argv[optind], argv + optind);
				perror(argv[optind]);
				_exit(127);
			}
			pids[i] = p;
		}
		{
			struct rusage ru;
			int st, i;
			pid_t p = wait4(-1, &st, 0, &ru);

			if (p < 0) {
				if (errno == EINTR)
					continue;
				perror("wait4");
				return 2;
			}
			for (i = 0; i < runs && pids[i] != p; i++)
				;
			if (i == runs)
				continue;
			ms[i] = now_ms() - start[i];
			rss[i] = ru.ru_maxrss;
			done++;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				ok++;
		}
	}
	total = (now_ms() - t0) / 1e3;
	{
		double sum = 0;

		for (int i = 0; i < runs; i++)
			sum += ms[i];
		qsort(ms, (size_t) runs, sizeof *ms, cmp_double);
		qsort(rss, (size_t) runs, sizeof *rss, cmp_long);
		printf("runs %d ok %d median_ms %.2f p10_ms %.2f p90_ms %.2f mean_ms %.2f total_s %.3f "
		       "rss_median_kb %ld rss_max_kb %ld\n", runs, ok, pct(ms, runs, 0.5), pct(ms, runs, 0.1),
		       pct(ms, runs, 0.9), sum / runs, total, rss[runs / 2], rss[runs - 1]);
	}
	return ok == runs || keep ? 0 : 1;
}
