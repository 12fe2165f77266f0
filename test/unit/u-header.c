/* u-header.c - unit tests for src/lib/header.c: the bounded header copy
 * GMime parses, the problems found in one pass, the trace block and the
 * cost of the body's MIME structure */
#include "autoconfig.h"

#include <string.h>

#include "header.h"

/* Feed text as the spooler does: whole lines, each line longer than piece
 * bytes in parts (the first with line_start). */
static void
feed(header_scan *h, const char *text, gsize len, gsize piece, gint64 *off)
{
	for (gsize i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		gsize line = nl != NULL ? (gsize) (nl - (text + i)) + 1 : len - i;

		for (gsize j = 0; j < line; j += piece) {
			gsize n = MIN(piece, line - j);

			header_scan_feed(h, text + i + j, n, j == 0, *off);
			*off += (gint64) n;
		}
		i += line;
	}
}

static header_scan *
scan_len(const char *text, gsize len)
{
	header_scan *h = header_scan_new();
	gint64 off = 0;

	feed(h, text, len, 1000, &off);
	header_scan_end(h);
	return h;
}

static header_scan *
scan(const char *text)
{
	return scan_len(text, strlen(text));
}

/* The parser's copy as a string. */
static char *
parser_text(const header_scan *h)
{
	g_autoptr(GBytes) b = header_scan_parser_header(h);
	gsize n;
	const char *d = g_bytes_get_data(b, &n);

	return g_strndup(d, n);
}

static char *
problems_text(const header_scan *h)
{
	GPtrArray *p = header_scan_problems(h);
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < p->len; i++)
		g_string_append_printf(s, "%s|", (const char *) g_ptr_array_index(p, i));
	return g_string_free(s, FALSE);
}

/* Only the fields the robot reads or MIME needs reach GMime, each of them
 * once (X-Loop up to 100 times), folded lines with them. */
static void
test_kept_fields(void)
{
	g_autoptr(header_scan) h = scan("Received: from x\n"
					"From: a@example.net\n"
					"To: request@robot.example\n"
					"Cc: c1@example.net,\n c2@example.net\n"
					"Bcc: b@example.net\n"
					"X-Mailer: foo\n"
					"Subject: =?UTF-8?B?aMOpbGxv?=\n\t world\n"
					"Content-Type: text/plain;\r\n charset=utf-8\r\n"
					"X-Loop: vulnid@robot.example\n"
					"X-Loop: other\n"
					"MIME-Version: 1.0\n");
	g_autofree char *t = parser_text(h);

	g_assert_cmpstr(t, ==, "From: a@example.net\n"
			"To: request@robot.example\n"
			"Subject: =?UTF-8?B?aMOpbGxv?=\n\t world\n"
			"Content-Type: text/plain;\r\n charset=utf-8\r\n"
			"X-Loop: vulnid@robot.example\n"
			"X-Loop: other\n"
			"MIME-Version: 1.0\n"
			"\n");
	g_assert_cmpuint(header_scan_problems(h)->len, ==, 0);
}

/* A field given again: only the first reaches GMime; a different value of
 * a single field is a conflict, the same value (line ends aside) is not. */
static void
test_repeated_fields(void)
{
	g_autoptr(header_scan) same = scan("Subject: hi\r\nSubject: hi\nFrom: a@x.example\n");
	g_autoptr(header_scan) other = scan("Subject: hi\nFrom: a@x.example\nsubject: ho\n"
					    "Content-Type: text/plain\nContent-Type: text/html\n"
					    "Cc: a\nCc: b\nX-Other: 1\nX-Other: 2\n");
	g_autofree char *ts = parser_text(same);
	g_autofree char *to = parser_text(other);
	g_autofree char *po = problems_text(other);

	g_assert_cmpstr(ts, ==, "Subject: hi\r\nFrom: a@x.example\n\n");
	g_assert_cmpuint(header_scan_problems(same)->len, ==, 0);
	g_assert_cmpstr(to, ==, "Subject: hi\nFrom: a@x.example\nContent-Type: text/plain\n\n");
	/* Cc never reaches GMime, but its conflict is found all the same */
	g_assert_cmpstr(po, ==, "conflicting subject headers near byte 30|"
			"conflicting Content-Type headers near byte 67|"
			"conflicting Cc headers near byte 97|");
}

/* Names GMime refuses: blanks inside, control characters (NUL too),
 * 8-bit bytes, too long, no colon.  Each is a problem, none is kept. */
static void
test_invalid_names(void)
{
	static const char text[] = "From: a@x.example\n"
				   "Bad Name: 1\n"
				   "Ctl\001: 2\n"
				   "N\000L: 3\n"
				   "\303\251t\303\251: 4\n"
				   "no colon here\n"
				   "X-Okay : 5\n";
	g_autoptr(header_scan) h = scan_len(text, sizeof text - 1);
	g_autofree char *t = parser_text(h);
	GPtrArray *p = header_scan_problems(h);

	g_assert_cmpstr(t, ==, "From: a@x.example\n\n");
	g_assert_cmpuint(p->len, ==, 5);
	g_assert_true(g_str_has_prefix(g_ptr_array_index(p, 0), "an invalid header name near byte 18 ('Bad Name"));
	for (guint i = 0; i < p->len; i++)
		g_assert_true(g_str_has_prefix(g_ptr_array_index(p, i), "an invalid header name near byte "));
	{
		g_autofree char *n64 = g_strnfill(64, 'n');
		g_autofree char *n65 = g_strnfill(65, 'n');
		g_autofree char *t64 = g_strdup_printf("%s: v\n", n64);
		g_autofree char *t65 = g_strdup_printf("%s: v\n", n65);
		g_autoptr(header_scan) h64 = scan(t64);
		g_autoptr(header_scan) h65 = scan(t65);

		/* 64 bytes is a name; 65 is not */
		g_assert_cmpuint(header_scan_problems(h64)->len, ==, 0);
		g_assert_cmpuint(header_scan_problems(h65)->len, ==, 1);
	}
}

/* However many problems, at most 20 sentences. */
static void
test_problem_limit(void)
{
	GString *s = g_string_new(NULL);
	g_autoptr(header_scan) h = NULL;

	for (int i = 0; i < 10000; i++)
		g_string_append_printf(s, "bad name %d: x\nSubject: %d\n", i, i);
	h = scan(s->str);
	g_assert_cmpuint(header_scan_problems(h)->len, ==, 20);
	g_string_free(s, TRUE);
}

/* A field of any length costs the parser HEADER_FIELD_KEEP bytes at most,
 * whether it comes as one line in pieces or as many folded lines. */
static void
test_long_field(void)
{
	gsize big = 10 * HEADER_FIELD_KEEP;
	g_autofree char *line = g_malloc(big + 32);
	GString *folded = g_string_new("To: x\n");
	g_autoptr(header_scan) h = header_scan_new();
	g_autoptr(header_scan) hf = NULL;
	gint64 off = 0;
	g_autofree char *t = NULL;
	g_autofree char *tf = NULL;

	memcpy(line, "Subject: ", 9);
	memset(line + 9, 'a', big);
	strcpy(line + 9 + big, "\nFrom: a@x.example\n");
	feed(h, line, strlen(line), 4096, &off);
	header_scan_end(h);
	t = parser_text(h);
	/* the cut field, its line end added, and the next field whole */
	g_assert_cmpuint(strlen(t), ==, HEADER_FIELD_KEEP + 1 + strlen("From: a@x.example\n") + 1);
	g_assert_true(g_str_has_suffix(t, "a\nFrom: a@x.example\n\n"));

	for (int i = 0; i < 20000; i++)
		g_string_append(folded, " b@x.example,\n");
	hf = scan(folded->str);
	tf = parser_text(hf);
	g_assert_cmpuint(strlen(tf), <=, HEADER_FIELD_KEEP + 2);
	g_string_free(folded, TRUE);
}

/* The trace block: Received and Authentication-Results from the top,
 * unfolded, each cut to HEADER_TRACE_KEEP, at most HEADER_TRACE_MAX; the
 * block ends at the first field no MTA adds. */
static void
test_trace(void)
{
	g_autoptr(header_scan) h = scan("Return-Path: <a@x.example>\n"
					"Received: from a\n\tby b; Mon, 1 Jan 2026\n"
					"X-Spam-Status: No\n"
					"Authentication-Results: mx; dmarc=pass\n"
					"ARC-Seal: i=1\n"
					"Received: from c\n"
					"Subject: hi\n"
					"Received: from forged\n"
					"Authentication-Results: mx; dkim=pass\n");
	GPtrArray *tr = header_scan_trace(h);
	const header_trace_field *f;

	g_assert_cmpuint(tr->len, ==, 3);
	f = g_ptr_array_index(tr, 0);
	g_assert_cmpstr(f->name, ==, "received");
	g_assert_cmpstr(f->value, ==, "from a\tby b; Mon, 1 Jan 2026");
	g_assert_cmpint(f->offset, ==, 27);
	f = g_ptr_array_index(tr, 1);
	g_assert_cmpstr(f->name, ==, "authentication-results");
	g_assert_cmpstr(f->value, ==, "mx; dmarc=pass");
	f = g_ptr_array_index(tr, 2);
	g_assert_cmpstr(f->value, ==, "from c");

	/* an invalid field ends it too */
	{
		g_autoptr(header_scan) h2 = scan("Received: a\nbad name: x\nReceived: b\n");

		g_assert_cmpuint(header_scan_trace(h2)->len, ==, 1);
	}
}

static void
test_trace_limits(void)
{
	GString *s = g_string_new(NULL);
	g_autoptr(header_scan) h = NULL;
	g_autoptr(header_scan) hl = NULL;
	gint64 off = 0;
	g_autofree char *huge = g_strnfill(100000, 'r');
	g_autofree char *line = g_strdup_printf("Received: %s\n", huge);

	for (int i = 0; i < 1000; i++)
		g_string_append_printf(s, "Received: hop %d\n", i);
	g_string_append(s, "Authentication-Results: mx; dmarc=pass\n");
	h = scan(s->str);
	g_assert_cmpuint(header_scan_trace(h)->len, ==, HEADER_TRACE_MAX);
	g_assert_cmpstr(((header_trace_field *) g_ptr_array_index(header_scan_trace(h), 63))->value, ==, "hop 63");

	hl = header_scan_new();
	feed(hl, line, strlen(line), 777, &off);
	header_scan_end(hl);
	g_assert_cmpuint(header_scan_trace(hl)->len, ==, 1);
	g_assert_cmpuint(strlen(((header_trace_field *) g_ptr_array_index(header_scan_trace(hl), 0))->value), <=,
			 HEADER_TRACE_KEEP);
	g_assert_cmpuint(strlen(((header_trace_field *) g_ptr_array_index(header_scan_trace(hl), 0))->value), >=,
			 HEADER_TRACE_KEEP - 1);
	g_string_free(s, TRUE);
}

/* Nothing fed after the end counts; an empty header is the blank line. */
static void
test_end(void)
{
	g_autoptr(header_scan) h = header_scan_new();
	g_autofree char *t = NULL;

	header_scan_end(h);
	header_scan_feed(h, "From: a@x.example\n", 18, TRUE, 0);
	header_scan_end(h);
	t = parser_text(h);
	g_assert_cmpstr(t, ==, "\n");
	g_assert_cmpuint(header_scan_trace(h)->len, ==, 0);
}

static void
body(header_scan *h, const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		gsize len = nl != NULL ? (gsize) (nl - p) + 1 : strlen(p);

		header_scan_body_feed(h, p, len, TRUE);
		p += len;
	}
}

/* The body's cost: delimiters of declared boundaries, fields per part
 * header, the longest part field; message/rfc822 parts open a header. */
#define D50 "01234567890123456789012345678901234567890123456789"

static void
test_body_stats(void)
{
	g_autoptr(header_scan) h = scan("Content-Type: multipart/mixed;\n boundary=\"b1\"\n");
	guint64 parts = 0, most = 0;
	gint64 longest = 0;

	body(h, "preamble\n--nope\n"
	     "--b1\nContent-Type: text/plain\nX-A: 1\nX-B: 2\n\ntext\n--b1-not\n"
	     "--b1  \nContent-Type: message/rfc822\n\nSubject: inner\nContent-Type: multipart/alternative; boundary=b2\n"
	     "X-Long: " D50 "\n  " D50 "\n\n"
	     "--b2\n\nx\n--b2--\n"
	     "--b1--\n--b1\n");
	header_scan_body_stats(h, &parts, &most, &longest);
	/* b1, b1, b2, b2--, b1--, b1 */
	g_assert_cmpuint(parts, ==, 6);
	g_assert_cmpuint(most, ==, 3);
	g_assert_cmpint(longest, ==, (gint64) strlen("X-Long: " D50 "\n  " D50 "\n"));

	/* no boundary declared: no delimiter */
	{
		g_autoptr(header_scan) h2 = scan("Content-Type: text/plain\n");

		body(h2, "--b1\nX: y\n\n--b1--\n");
		header_scan_body_stats(h2, &parts, &most, &longest);
		g_assert_cmpuint(parts, ==, 0);
		g_assert_cmpuint(most, ==, 0);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/header/kept-fields", test_kept_fields);
	g_test_add_func("/header/repeated-fields", test_repeated_fields);
	g_test_add_func("/header/invalid-names", test_invalid_names);
	g_test_add_func("/header/problem-limit", test_problem_limit);
	g_test_add_func("/header/long-field", test_long_field);
	g_test_add_func("/header/trace", test_trace);
	g_test_add_func("/header/trace-limits", test_trace_limits);
	g_test_add_func("/header/end", test_end);
	g_test_add_func("/header/body-stats", test_body_stats);
	return g_test_run();
}
