/* u-smtp.c - SMTP reply classification and transport URLs */
#include "autoconfig.h"

#include <string.h>

#include "smtp.h"

static void
test_classify(void)
{
	/* accepted all the way */
	g_assert_cmpint(smtp_classify(250, 250, 250), ==, SMTP_RESULT_DELIVERED);
	/* MAIL refused: decides for every recipient */
	g_assert_cmpint(smtp_classify(553, 0, 0), ==, SMTP_RESULT_PERMANENT);
	g_assert_cmpint(smtp_classify(451, 0, 0), ==, SMTP_RESULT_TEMPORARY);
	/* authentication trouble is configuration, so temporary */
	g_assert_cmpint(smtp_classify(530, 0, 0), ==, SMTP_RESULT_TEMPORARY);
	g_assert_cmpint(smtp_classify(250, 535, 0), ==, SMTP_RESULT_TEMPORARY);
	/* RCPT decides when refused */
	g_assert_cmpint(smtp_classify(250, 550, 503), ==, SMTP_RESULT_PERMANENT);
	g_assert_cmpint(smtp_classify(250, 450, 503), ==, SMTP_RESULT_TEMPORARY);
	/* a 2xx RCPT is only as good as the end of DATA */
	g_assert_cmpint(smtp_classify(250, 250, 554), ==, SMTP_RESULT_PERMANENT);
	g_assert_cmpint(smtp_classify(250, 250, 451), ==, SMTP_RESULT_TEMPORARY);
	/* no reply at all (connection refused, dropped, timed out) */
	g_assert_cmpint(smtp_classify(0, 0, 0), ==, SMTP_RESULT_TEMPORARY);
	g_assert_cmpint(smtp_classify(250, 250, 0), ==, SMTP_RESULT_TEMPORARY);
	g_assert_cmpint(smtp_classify(250, 0, 0), ==, SMTP_RESULT_TEMPORARY);
}

static void
test_parse_url(void)
{
	g_autofree char *host = NULL;
	g_autoptr(GError) err = NULL;
	int port = 0;

	g_assert_true(smtp_parse_url("smtp://mail.example.org", &host, &port, NULL));
	g_assert_cmpstr(host, ==, "mail.example.org");
	g_assert_cmpint(port, ==, 25);
	g_clear_pointer(&host, g_free);
	g_assert_true(smtp_parse_url("smtp://127.0.0.1:587", &host, &port, NULL));
	g_assert_cmpstr(host, ==, "127.0.0.1");
	g_assert_cmpint(port, ==, 587);
	g_clear_pointer(&host, g_free);
	g_assert_false(smtp_parse_url("http://x", &host, &port, &err));
	g_assert_nonnull(err);
	g_assert_false(smtp_parse_url("smtp://", &host, &port, NULL));
	g_assert_false(smtp_parse_url("smtp://h:0", &host, &port, NULL));
	g_assert_false(smtp_parse_url("smtp://h:70000", &host, &port, NULL));
	g_assert_false(smtp_parse_url("smtp://h:x", &host, &port, NULL));
	g_assert_false(smtp_parse_url("smtp://us@h", &host, &port, NULL));
	g_assert_false(smtp_parse_url("smtp://h/path", &host, &port, NULL));
}

static void
test_loopback(void)
{
	const char *yes[] = { "localhost", "LOCALHOST.", "127.0.0.1", "127.1.2.3", "::1", "[::1]",
			      "::ffff:127.0.0.1" };
	const char *no[] = { "mail.example.org", "128.0.0.1", "10.0.0.1", "::2", "127.0.0.1.example.org",
			     "localhost.example.org", "", "[127.0.0.1" };

	for (gsize i = 0; i < G_N_ELEMENTS(yes); i++)
		g_assert_true(smtp_host_is_loopback(yes[i]));
	for (gsize i = 0; i < G_N_ELEMENTS(no); i++)
		g_assert_false(smtp_host_is_loopback(no[i]));
}

static void
test_fingerprint(void)
{
	const char *hex = "5c0f8f6b0d3a0f8c1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899";
	g_autofree char *colons = NULL;
	g_autofree char *a = NULL, *b = NULL, *c = NULL;
	GString *cs = g_string_new("SHA256:");

	/* 65 digits: not a SHA-256 */
	g_assert_null(smtp_fingerprint_normalize(hex));
	for (int i = 0; i < 32; i++)
		g_string_append_printf(cs, "%s%02X", i ? ":" : "", (unsigned) (i * 7 + 1) & 0xff);
	colons = g_string_free(cs, FALSE);
	a = smtp_fingerprint_normalize(colons);
	g_assert_nonnull(a);
	g_assert_cmpuint(strlen(a), ==, 64);
	g_assert_cmpstr(a, ==, "01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da");
	b = smtp_fingerprint_normalize("  01080F161D242B323940474E555C636A71787F868D949BA2A9B0B7BEC5CCD3DA ");
	g_assert_cmpstr(a, ==, b);
	g_assert_null(smtp_fingerprint_normalize("01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3dax"));
	g_assert_null(smtp_fingerprint_normalize("01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da00"));
	c = smtp_fingerprint_normalize("sha1:0102030405060708090a0b0c0d0e0f1011121314");
	g_assert_null(c);
}

static void
test_refused(void)
{
	/* A closed port: every recipient is temporary, with a reason. */
	g_autoptr(GPtrArray) msgs = g_ptr_array_new_with_free_func((GDestroyNotify) smtp_message_free);
	g_autoptr(GBytes) data = g_bytes_new_static("Subject: x\r\n\r\nbody\r\n", 20);
	smtp_settings cfg = { (char *) "127.0.0.1", 1, SMTP_STARTTLS_NO, SMTP_TLS_VERIFY, NULL, NULL, 2,
			      (char *) "test", NULL, NULL, NULL };
	smtp_message *m = smtp_message_new("a@example.org", data);
	smtp_rcpt *r;

	smtp_message_add_rcpt(m, "b@example.org");
	g_ptr_array_add(msgs, m);
	g_assert_cmpint(smtp_send(&cfg, msgs, 5, NULL), ==, VULNID_OK);
	r = g_ptr_array_index(m->rcpts, 0);
	g_assert_cmpint(r->result, ==, SMTP_RESULT_TEMPORARY);
	g_assert_nonnull(r->reply);
	g_assert_nonnull(strstr(r->reply, "127.0.0.1:1"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/smtp/classify", test_classify);
	g_test_add_func("/smtp/parse-url", test_parse_url);
	g_test_add_func("/smtp/loopback", test_loopback);
	g_test_add_func("/smtp/fingerprint", test_fingerprint);
	g_test_add_func("/smtp/refused", test_refused);
	return g_test_run();
}
