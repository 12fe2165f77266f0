/* u-lmtp.c - the LMTP protocol: commands, xtext, DATA decoding, sessions */
#include "autoconfig.h"

#include <string.h>
#include <unistd.h>

#include "lmtp.h"

static lmtp_command *
parse(const char *line)
{
	return lmtp_command_parse(line, strlen(line));
}

static void
test_commands(void)
{
	g_autoptr(lmtp_command) a = parse("MAIL FROM:<alice@example.net> SIZE=1234 BODY=8BITMIME SMTPUTF8");
	g_autoptr(lmtp_command) b = parse("mail from: <>");
	g_autoptr(lmtp_command) c = parse("RCPT TO:<@relay.example,@b.example:request+TEST-2026-0001@example.org>");
	g_autoptr(lmtp_command) d = parse("RCPT TO:<\"odd > local\"@example.org>");
	g_autoptr(lmtp_command) e = parse("LHLO mx.example.net");

	g_assert_null(a->error);
	g_assert_cmpint(a->verb, ==, LMTP_CMD_MAIL);
	g_assert_cmpstr(a->address, ==, "alice@example.net");
	g_assert_cmpint(a->size, ==, 1234);
	g_assert_true(a->smtputf8);
	g_assert_null(b->error);
	g_assert_cmpstr(b->address, ==, "");
	g_assert_cmpint(b->size, ==, -1);
	g_assert_null(c->error);
	g_assert_cmpstr(c->address, ==, "request+TEST-2026-0001@example.org");
	g_assert_null(d->error);
	g_assert_cmpstr(d->address, ==, "\"odd > local\"@example.org");
	g_assert_cmpint(e->verb, ==, LMTP_CMD_LHLO);
	g_assert_cmpstr(e->arg, ==, "mx.example.net");
}

static void
test_command_errors(void)
{
	static const struct { const char *line; const char *code; } bad[] = {
		{ "MAIL FROM:alice@example.net", "501" },	/* no brackets */
		{ "MAIL FROM:<alice@example.net> RET=FULL", "555" },	/* DSN is not offered */
		{ "MAIL FROM:<alice@example.net> SIZE=12x", "555" },
		{ "MAIL FROM:<a b@example.net>", "501" },
		{ "MAIL FROM:<alice@example.net", "501" },
		{ "RCPT TO:<>", "501" },
		{ "RCPT TO:<rele.net>", "501" },	/* no domain (found by fuzz-lmtp) */
		{ "RCPT TO:<postmaster>", "501" },
		{ "RCPT TO:<@example.org>", "501" },
		{ "RCPT TO:<request@>", "501" },
		{ "MAIL FROM:<alice>", "501" },
		{ "RCPT TO:<\"a@b\">", "501" },	/* the @ is quoted */
		{ "RCPT TO:<request@example.org> NOTIFY=NEVER", "555" },
		{ "RCPT FROM:<request@example.org>", "501" },
		{ "LHLO", "501" },
		{ "DATA now", "501" },
		{ "BDAT 100 LAST", "500" },
		{ "XFORWARD", "501" },
		{ "XFORWARD FOO=bar", "501" },
		{ "XFORWARD ADDR=1.2.3.4+", "501" },	/* broken xtext */
	};
	g_autofree char *as = g_strnfill(400, 'a');
	g_autofree char *longaddr = g_strdup_printf("RCPT TO:<%s@example.org>", as);
	g_autoptr(lmtp_command) l = parse(longaddr);
	g_autoptr(lmtp_command) n = lmtp_command_parse("NOOP\0x", 6);
	g_autoptr(lmtp_command) u = lmtp_command_parse("RCPT TO:<\xff@example.org>", 24);

	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(lmtp_command) c = parse(bad[i].line);

		g_assert_nonnull(c->error);
		if (!g_str_has_prefix(c->error, bad[i].code))
			g_error("'%s': %s, expected %s", bad[i].line, c->error, bad[i].code);
	}
	g_assert_nonnull(l->error);
	g_assert_nonnull(n->error);
	g_assert_nonnull(u->error);
}

static void
test_xtext(void)
{
	g_autofree char *a = lmtp_xtext_decode("IPv6:2001:db8::1");
	g_autofree char *b = lmtp_xtext_decode("a+2Bb+3Dc");
	g_autofree char *c = lmtp_xtext_decode("a+2");
	g_autofree char *d = lmtp_xtext_decode("a=b");
	g_autoptr(lmtp_command) x = parse("XFORWARD NAME=spike.example.net ADDR=192.0.2.7 PROTO=ESMTP HELO=[UNAVAILABLE]");

	g_assert_cmpstr(a, ==, "IPv6:2001:db8::1");
	g_assert_cmpstr(b, ==, "a+b=c");
	g_assert_null(c);
	g_assert_null(d);
	g_assert_null(x->error);
	g_assert_cmpuint(x->xforward->len, ==, 8);
	g_assert_cmpstr(g_ptr_array_index(x->xforward, 2), ==, "ADDR");
	g_assert_cmpstr(g_ptr_array_index(x->xforward, 3), ==, "192.0.2.7");
}

/* Feed the decoder in every split of the input into two pieces; bare:
 * whether it must have seen a bare LF or CR. */
static void
check_data(const char *in, const char *want, const char *rest, gboolean bare)
{
	gsize len = strlen(in);

	for (gsize cut = 0; cut <= len; cut++) {
		g_autoptr(GByteArray) out = g_byte_array_new();
		lmtp_data d = { 0 };
		gboolean done = FALSE;
		gsize used = lmtp_data_feed(&d, in, cut, out, &done);

		if (!done)
			used += lmtp_data_feed(&d, in + cut, len - cut, out, &done);
		g_assert_true(done);
		g_assert_cmpmem(out->data, out->len, want, strlen(want));
		g_assert_cmpstr(in + used, ==, rest);
		g_assert_cmpint(d.bare_newline, ==, bare);
	}
}

static void
test_data(void)
{
	check_data("Subject: x\r\n\r\nbody\r\n.\r\n", "Subject: x\n\nbody\n", "", FALSE);
	/* dot-stuffing undone; a dot alone ends it, what follows is the next command */
	check_data("..leading dot\r\n...\r\n.\r\nQUIT\r\n", ".leading dot\n..\n", "QUIT\r\n", FALSE);
	/* bare CR, CR CR LF and a bare LF are no line ends, only seen */
	check_data("a\rb\r\r\nc\nd\r\n.\r\n", "a\rb\r\nc\nd\n", "", TRUE);
	/* the empty mail */
	check_data(".\r\n", "", "", FALSE);
	/* a dot not followed by the line end is stuffing */
	check_data(".x\r\n.\r\n", "x\n", "", FALSE);
	/* SMTP smuggling: "<LF>.<LF>", "<LF>.<CR><LF>", "<CR><LF>.<LF>" and
	 * "<CR>.<CR>" end nothing; the data ends at the one <CR><LF>.<CR><LF> */
	check_data("a\n.\nMAIL FROM:<x@evil>\r\n.\r\n", "a\n.\nMAIL FROM:<x@evil>\n", "", TRUE);
	check_data("a\n.\r\nRCPT\r\n.\r\nQUIT\r\n", "a\n.\nRCPT\n", "QUIT\r\n", TRUE);
	check_data("a\r\n.\nDATA\r\n.\r\n", "a\n\nDATA\n", "", TRUE);
	check_data("a\r.\rb\r\n.\r\n", "a\r.\rb\n", "", TRUE);
}

typedef struct {
	int fd;
	guint delivered;
	GString *last;
	char *client;
} fake;

static const char *
fake_check(void *data, const char *address)
{
	(void) data;
	return g_str_has_prefix(address, "request") ? NULL : "550 5.1.1 no such address at this robot";
}

static int
fake_spool(void *data)
{
	fake *f = data;

	lseek(f->fd, 0, SEEK_SET);
	return f->fd;
}

static void
fake_deliver(void *data, const lmtp_envelope *env, int fd, GPtrArray *replies)
{
	fake *f = data;
	char buf[4096];
	ssize_t n = pread(fd, buf, MIN((gsize) env->size, sizeof buf), 0);

	f->delivered++;
	g_string_assign(f->last, "");
	g_string_append_len(f->last, buf, n);
	g_free(f->client);
	f->client = g_strdup(env->client_address);
	for (guint i = 0; i < env->recipients->len; i++)
		g_ptr_array_add(replies, g_strdup_printf("250 2.0.0 ok %u", i));
}

static char *
converse(fake *f, guint max_size, const char *input)
{
	g_autofree char *path = NULL;
	lmtp_server_config cfg = {
		.hostname = "robot.example.org", .max_size = max_size, .max_recipients = 2,
		.max_mails = 3, .max_errors = 3, .xforward = TRUE, .data = f,
		.check_recipient = fake_check, .spool_open = fake_spool, .deliver = fake_deliver,
	};
	g_autoptr(lmtp_session) s = NULL;
	GByteArray *out;

	f->fd = g_file_open_tmp("u-lmtp.XXXXXX", &path, NULL);
	g_assert_cmpint(f->fd, >=, 0);
	unlink(path);
	s = lmtp_session_new(&cfg);
	/* byte by byte: every state must survive any split */
	for (const char *p = input; *p; p++)
		lmtp_session_input(s, p, 1);
	out = lmtp_session_output(s);
	close(f->fd);
	return g_strndup((const char *) out->data, out->len);
}

static void
test_session(void)
{
	fake f = { .last = g_string_new(NULL) };
	g_autofree char *out = converse(&f, 1000,
		"HELO x\r\n"
		"MAIL FROM:<a@example.net>\r\n"
		"LHLO mx.example.net\r\n"
		"XFORWARD ADDR=IPv6:2001:db8::7 NAME=client.example.net\r\n"
		"MAIL FROM:<a@example.net> SIZE=100\r\n"
		"XFORWARD ADDR=192.0.2.1\r\n"
		"RCPT TO:<nobody@example.org>\r\n"
		"RCPT TO:<request@example.org>\r\n"
		"RCPT TO:<request+X@example.org>\r\n"
		"RCPT TO:<request+Y@example.org>\r\n"
		"DATA\r\n"
		"Subject: hi\r\n\r\n..x\r\n.\r\n"
		"MAIL FROM:<a@example.net> SIZE=5000\r\n"
		"MAIL FROM:<a@example.net>\r\n"
		"RCPT TO:<request@example.org>\r\n"
		"DATA\r\n" "Subject: big\r\n\r\n");
	g_auto(GStrv) lines = g_strsplit(out, "\r\n", -1);
	const char *want[] = {
		"220 robot.example.org LMTP vulnid ready",
		"500 5.5.1 this is LMTP: use LHLO",
		"503 5.5.1 send LHLO first",
		"250-robot.example.org", "250-PIPELINING", "250-SIZE 1000", "250-ENHANCEDSTATUSCODES",
		"250-8BITMIME", "250-SMTPUTF8", "250 XFORWARD NAME ADDR PROTO HELO",
		"250 2.0.0 Ok",
		"250 2.1.0 Ok",
		"503 5.5.1 XFORWARD is not allowed in a mail transaction",
		"550 5.1.1 no such address at this robot",
		"250 2.1.5 Ok", "250 2.1.5 Ok",
		"452 4.5.3 too many recipients",
		"354 2.0.0 send the mail, end with <CR><LF>.<CR><LF>",
		"250 2.0.0 ok 0", "250 2.0.0 ok 1",
		"552 5.3.4 message too big for the robot",
		"250 2.1.0 Ok", "250 2.1.5 Ok",
		"354 2.0.0 send the mail, end with <CR><LF>.<CR><LF>",
		"",
	};

	g_assert_cmpuint(g_strv_length(lines), ==, G_N_ELEMENTS(want));
	for (gsize i = 0; i < G_N_ELEMENTS(want); i++)
		g_assert_cmpstr(lines[i], ==, want[i]);
	g_assert_cmpuint(f.delivered, ==, 1);
	g_assert_cmpstr(f.last->str, ==, "Subject: hi\n\n.x\n");
	g_assert_cmpstr(f.client, ==, "2001:db8::7");
	g_string_free(f.last, TRUE);
	g_free(f.client);
}

static void
test_session_limits(void)
{
	fake f = { .last = g_string_new(NULL) };
	g_autofree char *big = NULL;
	g_autofree char *xs = g_strnfill(3000, 'x');
	g_autofree char *too_long = g_strdup_printf("NOOP %s\r\n", xs);
	GString *in = g_string_new("LHLO a\r\n");
	g_auto(GStrv) lines = NULL;
	g_autofree char *out = NULL;
	guint n;

	/* data over the size: read to its end, then 552 per recipient */
	g_string_append(in, "MAIL FROM:<a@example.net>\r\nRCPT TO:<request@example.org>\r\nDATA\r\n");
	for (int i = 0; i < 40; i++)
		g_string_append(in, "0123456789012345678901234567890123456789\r\n");
	g_string_append(in, ".\r\n");
	g_string_append(in, too_long);
	/* three mails per session (the one too big counts): the third MAIL
	 * here ends it, and the NOOP after it is never read */
	for (int i = 0; i < 3; i++)
		g_string_append(in, "MAIL FROM:<a@example.net>\r\nRCPT TO:<request@example.org>\r\nDATA\r\nx\r\n.\r\n");
	g_string_append(in, "NOOP\r\n");
	big = g_string_free(in, FALSE);
	out = converse(&f, 1000, big);
	lines = g_strsplit(out, "\r\n", -1);
	n = g_strv_length(lines);
	g_assert_true(strstr(out, "552 5.3.4 message too big") != NULL);
	g_assert_true(strstr(out, "500 5.5.2 line too long") != NULL);
	g_assert_cmpuint(f.delivered, ==, 2);	/* the big one was never delivered */
	g_assert_cmpstr(lines[n - 2], ==, "421 4.7.0 too many mails in one session, closing it");
	g_string_free(f.last, TRUE);
	g_free(f.client);
}

/* A second mail smuggled inside the data after a bare "<LF>.<LF>" is part
 * of the one mail, which is refused for its bare line ends: nothing is
 * delivered, and the session goes on in step with the client. */
static void
test_session_smuggling(void)
{
	fake f = { .last = g_string_new(NULL) };
	g_autofree char *out = converse(&f, 10000,
		"LHLO mx.example.net\r\n"
		"MAIL FROM:<a@example.net>\r\n"
		"RCPT TO:<request@example.org>\r\n"
		"DATA\r\n"
		"Subject: first\r\n\r\nhello\n.\n"
		"MAIL FROM:<ceo@example.net>\r\n"
		"RCPT TO:<request@example.org>\r\n"
		"DATA\r\n"
		"Subject: smuggled\r\n\r\nwire the money\r\n"
		".\r\n"
		"NOOP\r\n");
	g_auto(GStrv) lines = g_strsplit(out, "\r\n", -1);
	guint n = g_strv_length(lines);

	g_assert_cmpuint(f.delivered, ==, 0);
	g_assert_cmpstr(lines[n - 3], ==, "550 5.5.2 bare <LF> or <CR> in the mail: every line must end with <CR><LF>");
	g_assert_cmpstr(lines[n - 2], ==, "250 2.0.0 Ok");	/* the NOOP: in step */
	g_assert_null(strstr(out, "2.1.0 Ok\r\n250 2.1.0"));	/* one MAIL answered, not two */
	g_string_free(f.last, TRUE);
	g_free(f.client);
}

static void
test_session_errors(void)
{
	fake f = { .last = g_string_new(NULL) };
	g_autofree char *out = converse(&f, 1000, "LHLO a\r\nFOO\r\nBAR\r\nBAZ\r\nQUX\r\nNOOP\r\n");

	/* max_errors 3: the fourth bad command ends the session, NOOP is never read */
	g_assert_true(g_str_has_suffix(out, "500 5.5.2 command not recognized\r\n"
				       "421 4.7.0 too many errors, closing the session\r\n"));
	g_string_free(f.last, TRUE);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/lmtp/commands", test_commands);
	g_test_add_func("/lmtp/command-errors", test_command_errors);
	g_test_add_func("/lmtp/xtext", test_xtext);
	g_test_add_func("/lmtp/data", test_data);
	g_test_add_func("/lmtp/session", test_session);
	g_test_add_func("/lmtp/session-limits", test_session_limits);
	g_test_add_func("/lmtp/session-smuggling", test_session_smuggling);
	g_test_add_func("/lmtp/session-errors", test_session_errors);
	return g_test_run();
}
