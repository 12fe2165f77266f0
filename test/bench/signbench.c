/* signbench - the cost of signing a reply, as vulnid signs it: the
 * median of many crypto_sign_mime() calls on an acknowledgement-sized
 * text part, in one process, through gpg-agent.  Used by
 * test/bench/bench.sh (`make bench`); not part of the test suite.
 *
 *   signbench -c CONF [-n RUNS] [-k] [-o FILE]
 *
 * Without -k every signature opens a new connection to gpg-agent, as the
 * one signature of a vulnid-filter process does; with -k the connection
 * is kept, as in a resident server.  -o writes the bytes that are signed
 * (the MIME entity with CRLF line ends) to FILE, for timing gpg on the
 * same input.  Output, one line, as benchrun's:
 *   runs N ok N median_ms M p10_ms A p90_ms B mean_ms C total_s T rss_median_kb 0 rss_max_kb 0 */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gmime/gmime.h>

#include "config.h"
#include "crypto.h"
#include "message.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeObject, g_object_unref)

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

static double
pct(const double *v, int n, double p)
{
	double idx = p * (n - 1);
	int lo = (int) idx;

	return lo + 1 >= n ? v[n - 1] : v[lo] + (v[lo + 1] - v[lo]) * (idx - lo);
}

/* About what an acknowledgement says (templates/ack.txt, one entry). */
static GMimeObject *
reply_part(void)
{
	GString *text = g_string_new("Hello,\n\nyour request to request@example.org was recorded on "
				     "2026-06-01T10:00:00Z.\nThe following identifier was assigned:\n\n");
	GMimeTextPart *tp = g_mime_text_part_new_with_subtype("plain");

	g_string_append(text, "  TEST-2026-0001\n    digest:      "
			"53bb2a51289fe533f12abe3139d7564e6ccf4b20a69a92d390ca0fa4620143be\n"
			"    title:       A plausible report\n    product:     Bench\n");
	for (int i = 0; i < 14; i++)
		g_string_append(text, "A line of the reply's explanations, about as long as the real ones.\n");
	g_string_append(text, "\n-- \nvulnid at example.org (OpenPGP key 0123456789ABCDEF0123456789ABCDEF01234567)\n");
	g_mime_text_part_set_text(tp, text->str);
	g_string_free(text, TRUE);
	return GMIME_OBJECT(tp);
}

int
main(int argc, char **argv)
{
	const char *conf = NULL, *out = NULL;
	int runs = 100, keep = 0, opt, ok = 0;
	g_autoptr(GError) err = NULL;
	g_autofree char *fpr = NULL;
	g_autofree double *ms = NULL;
	vulnid_config *cfg = NULL;
	double sum = 0, t0;

	while ((opt = getopt(argc, argv, "c:n:ko:")) != -1) {
		switch (opt) {
		case 'c': conf = optarg; break;
		case 'n': runs = atoi(optarg); break;
		case 'k': keep = 1; break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: signbench -c CONF [-n RUNS] [-k] [-o FILE]\n");
			return 2;
		}
	}
	if (conf == NULL || runs < 1) {
		fprintf(stderr, "signbench: -c CONF is needed\n");
		return 2;
	}
	crypto_preinit();
	g_mime_init();
	if (config_load(conf, &cfg, &err) != VULNID_OK || crypto_set_home(cfg->gnupg_home, &err) != VULNID_OK ||
	    crypto_robot_fingerprint(&fpr, &err) != VULNID_OK) {
		fprintf(stderr, "signbench: %s\n", err->message);
		return 1;
	}
	if (out != NULL) {
		/* what crypto_sign_mime() signs: the entity, CRLF */
		g_autoptr(GMimeObject) part = reply_part();
		g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
		g_autofree char *s = NULL;

		g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
		g_mime_part_set_content_encoding(GMIME_PART(part), GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
		s = g_mime_object_to_string(part, fo);
		if (!g_file_set_contents(out, s, -1, &err)) {
			fprintf(stderr, "signbench: %s\n", err->message);
			return 1;
		}
	}
	ms = g_new0(double, runs);
	t0 = now_ms();
	for (int i = 0; i < runs; i++) {
		g_autoptr(GMimeObject) part = reply_part();
		g_autoptr(GError) e = NULL;
		GMimeObject *signed_part;
		double start;

		if (!keep)
			crypto_agent_close();
		start = now_ms();
		signed_part = crypto_sign_mime(part, fpr, &e);
		ms[i] = now_ms() - start;
		if (signed_part != NULL) {
			ok++;
			g_object_unref(signed_part);
		} else if (i == 0)
			fprintf(stderr, "signbench: %s\n", e != NULL ? e->message : "cannot sign");
	}
	for (int i = 0; i < runs; i++)
		sum += ms[i];
	qsort(ms, (size_t) runs, sizeof *ms, cmp_double);
	printf("runs %d ok %d median_ms %.3f p10_ms %.3f p90_ms %.3f mean_ms %.3f total_s %.3f "
	       "rss_median_kb 0 rss_max_kb 0\n", runs, ok, pct(ms, runs, 0.5), pct(ms, runs, 0.1),
	       pct(ms, runs, 0.9), sum / runs, (now_ms() - t0) / 1e3);
	crypto_agent_close();
	config_free(cfg);
	return ok == runs ? 0 : 1;
}
