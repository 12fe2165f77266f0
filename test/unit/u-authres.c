/* u-authres.c - unit tests for src/lib/authres.c: which
 * Authentication-Results fields are believed, and what they prove about
 * the From.  The trace block is built by header.c from a header text, as
 * the filter builds it while spooling. */
#include "autoconfig.h"

#include <string.h>

#include "authres.h"
#include "config.h"
#include "header.h"

/* A configuration whose [auth] is extra. */
static vulnid_config *
cfg_with(const char *extra)
{
	g_autofree char *text = g_strdup_printf("[instance]\nprefix = TEST\ndomain = robot.example\n%s", extra);
	g_autoptr(GError) err = NULL;
	vulnid_config *cfg = NULL;

	vulnid_status s = config_load_text("/nonexistent/inst", text, &cfg, &err);

	g_assert_no_error(err);
	g_assert_cmpint(s, ==, VULNID_OK);
	return cfg;
}

/* The header text fed line by line, as the spooler does. */
static header_scan *
scan(const char *header)
{
	header_scan *h = header_scan_new();
	gint64 off = 0;

	for (const char *p = header; *p;) {
		const char *nl = strchr(p, '\n');
		gsize len = nl != NULL ? (gsize) (nl - p) + 1 : strlen(p);

		header_scan_feed(h, p, len, TRUE, off);
		off += (gint64) len;
		p += len;
	}
	header_scan_end(h);
	return h;
}

/* What the header proves about from under the configuration. */
static const char *
verified(const vulnid_config *cfg, const char *header, const char *from)
{
	g_autoptr(header_scan) h = scan(header);

	return authres_from_verified(cfg, header_scan_trace(h), from);
}

#define MX "[auth]\nauthserv_id = mx.robot.example\n"

static void
test_dmarc_pass(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);

	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example;\n"
				 "  dmarc=pass (p=reject dis=none) header.from=example.net\n"
				 "From: a@example.net\n", "a@example.net"), ==, "dmarc");
	/* the authserv-id, method, result and property names are case-insensitive */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: MX.Robot.Example 1; DMARC=Pass "
				 "Header.From=EXAMPLE.NET\n", "a@example.net"), ==, "dmarc");
	/* quoted property value, and an address in place of a domain */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass "
				 "header.from=\"a@example.net\"\n", "a@example.net"), ==, "dmarc");
}

/* dmarc=pass proves the domain named, not any other From. */
static void
test_dmarc_mismatch(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);

	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass header.from=evil.example\n",
			       "a@example.net"));
	/* a parent or a child of the From's domain is another domain for DMARC */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass header.from=net\n",
			       "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass header.from=sub.example.net\n",
			       "a@example.net"));
	/* without header.from nothing is proved */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass\n", "a@example.net"));
	/* nor by a result other than pass */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail header.from=example.net\n",
			       "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=passed header.from=example.net\n",
			       "a@example.net"));
	/* nor for a From without a domain */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n",
			       "postmaster"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n",
			       NULL));
}

/* Fields of another authserv-id say nothing, whatever they claim; with no
 * authserv-id configured no field is read. */
static void
test_other_authserv(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);
	g_autoptr(vulnid_config) none = cfg_with("");
	const char *hdr = "Authentication-Results: mx.evil.example; dmarc=pass header.from=example.net\n"
			  "Authentication-Results: mx.robot.example.evil; dkim=pass header.d=example.net\n"
			  "Authentication-Results: robot.example; dmarc=pass header.from=example.net\n";

	g_assert_null(verified(cfg, hdr, "a@example.net"));
	/* the configured one below them is still read */
	{
		g_autofree char *h2 = g_strconcat(hdr, "Authentication-Results: mx.robot.example; dmarc=pass "
						  "header.from=example.net\n", NULL);

		g_assert_cmpstr(verified(cfg, h2, "a@example.net"), ==, "dmarc");
		g_assert_null(verified(none, h2, "a@example.net"));
	}
	/* the id only in a comment, or a comment before it, is no authserv-id */
	g_assert_null(verified(cfg, "Authentication-Results: (mx.robot.example) mx.evil.example; dmarc=pass "
			       "header.from=example.net\n", "a@example.net"));
	g_assert_cmpstr(verified(cfg, "Authentication-Results: (via mx.evil.example) mx.robot.example; dmarc=pass "
				 "header.from=example.net\n", "a@example.net"), ==, "dmarc");
}

/* Only the trace block above the trusted Received fields is read: what
 * the sender wrote into the header stands below them. */
static void
test_trusted_received(void)
{
	g_autoptr(vulnid_config) top = cfg_with(MX);
	g_autoptr(vulnid_config) one = cfg_with(MX "trusted_received = 1\n");
	const char *forged = "Received: from mx.robot.example by robot.example\n"
			     "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n"
			     "Received: from client by mx.robot.example\n";
	const char *below_two = "Received: from mx.robot.example by robot.example\n"
				"Received: from client by mx.robot.example\n"
				"Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n";
	const char *after_other = "Subject: hi\n"
				  "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n";

	g_assert_null(verified(top, forged, "a@example.net"));
	g_assert_cmpstr(verified(one, forged, "a@example.net"), ==, "dmarc");
	g_assert_null(verified(one, below_two, "a@example.net"));
	/* a field below a non-trace field is not in the trace block */
	g_assert_null(verified(top, after_other, "a@example.net"));
	/* trace fields other than Received do not end the block */
	g_assert_cmpstr(verified(top, "Return-Path: <a@example.net>\nDelivered-To: x@robot.example\n"
				 "ARC-Seal: i=1; cv=none\n"
				 "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n",
				 "a@example.net"), ==, "dmarc");
}

/* The topmost result of a method counts: a pass lower down, or later in
 * the same field, does not overrule a fail above. */
static void
test_topmost(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);

	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail header.from=example.net\n"
			       "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n",
			       "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail header.from=example.net;"
			       " dmarc=pass header.from=example.net\n", "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dkim=fail header.d=example.net\n"
			       "Authentication-Results: mx.robot.example; dkim=pass header.d=example.net\n",
			       "a@example.net"));
	/* a topmost field without DMARC leaves the next one's DMARC read */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example; spf=pass smtp.mailfrom=example.net\n"
				 "Authentication-Results: mx.robot.example; dmarc=pass header.from=example.net\n",
				 "a@example.net"), ==, "dmarc");
}

/* A passing DKIM signature counts when it aligns with the From: the same
 * domain or a parent of it that is not a top-level domain. */
static void
test_dkim_alignment(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);
	const struct {
		const char *ar, *from, *want;
	} cases[] = {
		{ "dkim=pass header.d=example.net", "a@example.net", "dkim" },
		{ "dkim=pass header.d=example.net", "a@mail.example.net", "dkim" },
		{ "dkim=pass header.i=@example.net", "a@example.net", "dkim" },
		{ "dkim=pass header.i=list@example.net", "a@Example.NET", "dkim" },
		{ "dkim=pass header.d=net", "a@example.net", NULL },
		{ "dkim=pass header.d=ample.net", "a@example.net", NULL },
		{ "dkim=pass header.d=sub.example.net", "a@example.net", NULL },
		{ "dkim=pass header.d=evil.example", "a@example.net", NULL },
		{ "dkim=pass header.d=", "a@example.net", NULL },
		{ "dkim=pass", "a@example.net", NULL },
		{ "dkim=neutral header.d=example.net", "a@example.net", NULL },
		{ "dkim=pass (signature was good) header.d=example.net (header.d=evil)", "a@example.net", "dkim" },
		/* two signatures: one aligned pass is enough */
		{ "dkim=pass header.d=list.example; dkim=pass header.d=example.net", "a@example.net", "dkim" },
		/* a DMARC pass for another domain does not stop the DKIM one */
		{ "dmarc=pass header.from=other.example; dkim=pass header.d=example.net", "a@example.net", "dkim" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *h = g_strdup_printf("Authentication-Results: mx.robot.example; %s\n", cases[i].ar);

		g_test_message("%s / %s", cases[i].ar, cases[i].from);
		g_assert_cmpstr(verified(cfg, h, cases[i].from), ==, cases[i].want);
	}
}

/* Comments, quoting and folding: a property inside a comment or a quoted
 * string is no property. */
static void
test_comments_quoting(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);

	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail "
			       "(dmarc=pass header.from=example.net) header.from=example.net\n", "a@example.net"));
	/* nested comments, and a quoted ')' inside one */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail "
			       "(a (b) \\) header.from=x; dmarc=pass) header.from=example.net\n", "a@example.net"));
	/* a '(' in a quoted string opens no comment */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass "
				 "reason=\"(x\" header.from=example.net\n", "a@example.net"), ==, "dmarc");
	/* folded over lines, as MTAs write it */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example;\n"
				 "\tdkim=pass (2048-bit key)\n\t header.d=example.net header.s=s1;\n"
				 "\tspf=pass smtp.mailfrom=example.net\n", "a@example.net"), ==, "dkim");
	/* an unterminated comment hides the rest */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; (dmarc=pass header.from=example.net\n",
			       "a@example.net"));
	/* empty and malformed fields prove nothing and do not crash */
	g_assert_null(verified(cfg, "Authentication-Results:\n", "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: ;;;\n", "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; =pass; dmarc=; ;=\n", "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; none\n", "a@example.net"));
}

/* A ';' inside a quoted reason starts no new result: the MTA may copy text
 * the sender chose into a reason. */
static void
test_quoted_semicolon(void)
{
	g_autoptr(vulnid_config) cfg = cfg_with(MX);

	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dkim=fail "
			       "reason=\"x; dkim=pass header.d=example.net\"\n", "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dkim=fail "
			       "reason=\"x\\; dkim=pass header.d=example.net\"\n", "a@example.net"));
	/* an envelope sender with a quoted local part is the sender's to choose */
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; spf=pass "
			       "smtp.mailfrom=\"x; dkim=pass header.d=example.net x\"@evil.example\n",
			       "a@example.net"));
	g_assert_null(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=fail "
			       "reason=\"a header.from=example.net\" header.from=evil.example; "
			       "dkim=pass header.s=\"s header.d=example.net\" header.d=evil.example\n",
			       "a@example.net"));
	/* quoting of a property's own value still reads */
	g_assert_cmpstr(verified(cfg, "Authentication-Results: mx.robot.example; dmarc=pass reason=\"ok; fine\" "
				 "header.from=\"example.net\"\n", "a@example.net"), ==, "dmarc");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/authres/dmarc-pass", test_dmarc_pass);
	g_test_add_func("/authres/dmarc-mismatch", test_dmarc_mismatch);
	g_test_add_func("/authres/other-authserv-id", test_other_authserv);
	g_test_add_func("/authres/trusted-received", test_trusted_received);
	g_test_add_func("/authres/topmost", test_topmost);
	g_test_add_func("/authres/dkim-alignment", test_dkim_alignment);
	g_test_add_func("/authres/comments-quoting", test_comments_quoting);
	g_test_add_func("/authres/quoted-semicolon", test_quoted_semicolon);
	return g_test_run();
}
