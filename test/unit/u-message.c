/* u-message.c - the spool and the MIME walk (src/lib/message-spool.c,
 * message.c, message-auto.c) on mails given as strings */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "message.h"

static char *spool_dir;
static GPtrArray *spools;

static const message_limits limits = {
	.max_message_size = 1024 * 1024,
	.max_header_size = 64 * 1024,
	.max_headers = 100,
	.max_line_length = 10000,
	.max_parts = 20,
	.max_depth = 5,
};

/* A file descriptor that reads text from its start. */
static int
fd_of(const char *text)
{
	g_autofree char *tmpl = g_build_filename(spool_dir, "in.XXXXXX", NULL);
	int fd = g_mkstemp(tmpl);

	g_assert_cmpint(fd, >=, 0);
	g_unlink(tmpl);
	g_assert_cmpint(write(fd, text, strlen(text)), ==, (gssize) strlen(text));
	g_assert_cmpint(lseek(fd, 0, SEEK_SET), ==, 0);
	return fd;
}

static message_spool *
spool(const char *text, gint64 max, vulnid_status want)
{
	g_autoptr(GError) err = NULL;
	message_spool *sp = NULL;
	int fd = fd_of(text);

	g_assert_cmpint(message_spool_input(fd, spool_dir, max, &sp, &err), ==, want);
	close(fd);
	if (want == VULNID_OK)
		g_assert_no_error(err);
	return sp;
}

static const char plain[] =
	"From: Alice <alice@example.org>\n"
	"To: robot@example.net\n"
	"Subject: a request\n"
	"Message-ID: <one@example.org>\n"
	"\n"
	"Product: thing\n";

static void
test_spool_hashes(void)
{
	g_autoptr(message_spool) a = spool(plain, 1024 * 1024, VULNID_OK);
	g_autofree char *relayed = g_strconcat("Received: from somewhere\n", plain, NULL);
	g_autoptr(message_spool) b = spool(relayed, 1024 * 1024, VULNID_OK);
	g_autofree char *crlf = NULL;
	g_autoptr(message_spool) c = NULL;
	g_autofree char *mbox = g_strconcat("From alice@example.org Mon Jan  1 00:00:00 2026\n", plain, NULL);
	g_autoptr(message_spool) d = spool(mbox, 1024 * 1024, VULNID_OK);
	g_autofree char *want = g_compute_checksum_for_string(G_CHECKSUM_SHA256, plain, -1);
	g_auto(GStrv) lines = g_strsplit(plain, "\n", -1);

	g_assert_cmpint(a->size, ==, (gint64) strlen(plain));
	g_assert_cmpstr(a->raw_sha256, ==, want);
	g_assert_cmpuint(a->header_count, ==, 4);
	g_assert_cmpint(a->body_offset, ==, (gint64) (strstr(plain, "\n\n") - plain + 2));
	g_assert_null(a->mbox_sender);
	/* a trace field does not make another mail */
	g_assert_cmpstr(a->header_sha256, ==, b->header_sha256);
	g_assert_cmpstr(a->body_sha256, ==, b->body_sha256);
	g_assert_cmpstr(a->raw_sha256, !=, b->raw_sha256);
	/* nor do CRLF line ends in the body */
	crlf = g_strjoinv("\r\n", lines);
	c = spool(crlf, 1024 * 1024, VULNID_OK);
	g_assert_cmpstr(a->body_sha256, ==, c->body_sha256);
	/* the mbox From_ line is not stored, its sender is kept */
	g_assert_cmpstr(d->raw_sha256, ==, want);
	g_assert_cmpstr(d->mbox_sender, ==, "alice@example.org");
}

static void
test_spool_too_big(void)
{
	message_spool *sp = spool(plain, 10, VULNID_ERR_TOOBIG);

	g_assert_null(sp);
}

static message *
parse(const char *text)
{
	g_autoptr(GError) err = NULL;
	message_spool *sp = spool(text, 1024 * 1024, VULNID_OK);
	message *m = NULL;

	g_assert_cmpint(message_parse(sp, &limits, &m, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	g_ptr_array_add(spools, sp);	/* the message borrows it */
	return m;
}

static void
test_walk_plain(void)
{
	g_autoptr(message) m = parse(plain);
	const char *why = NULL;

	g_assert_null(m->problem);
	g_assert_cmpstr(m->from_addr, ==, "alice@example.org");
	g_assert_cmpstr(m->from_name, ==, "Alice");
	g_assert_cmpstr(m->subject, ==, "a request");
	g_assert_cmpstr(m->message_id, ==, "one@example.org");
	g_assert_cmpstr(m->text, ==, "Product: thing\n");
	g_assert_cmpstr(m->text_type, ==, "text/plain");
	g_assert_cmpuint(m->attachments->len, ==, 0);
	g_assert_false(message_is_automatic(m, "alice@example.org", "robot@example.net", &why));
	g_assert_true(message_is_automatic(m, "", "robot@example.net", &why));
	g_assert_true(message_is_automatic(m, "MAILER-DAEMON@example.org", "robot@example.net", &why));
}

static void
test_walk_multipart(void)
{
	static const char mail[] =
		"From: bob@example.org\n"
		"Subject: =?UTF-8?Q?caf=C3=A9?=\n"
		"MIME-Version: 1.0\n"
		"Content-Type: multipart/mixed; boundary=\"b\"\n"
		"Auto-Submitted: auto-replied\n"
		"\n"
		"--b\n"
		"Content-Type: text/plain; charset=utf-8\n"
		"\n"
		"Product: thing\n"
		"--b\n"
		"Content-Type: application/octet-stream\n"
		"Content-Disposition: attachment; filename=\"poc.bin\"\n"
		"Content-Transfer-Encoding: base64\n"
		"\n"
		"AAEC\n"
		"--b--\n";
	g_autoptr(message) m = parse(mail);
	message_attachment *a;
	const char *why = NULL;

	g_assert_null(m->problem);
	g_assert_cmpstr(m->subject, ==, "caf\xc3\xa9");
	/* the line end before a boundary belongs to the boundary */
	g_assert_cmpstr(m->text, ==, "Product: thing");
	g_assert_cmpuint(m->attachments->len, ==, 1);
	a = g_ptr_array_index(m->attachments, 0);
	g_assert_cmpstr(a->filename, ==, "poc.bin");
	g_assert_cmpstr(a->content_type, ==, "application/octet-stream");
	g_assert_true(message_is_automatic(m, "bob@example.org", "robot@example.net", &why));
	g_assert_cmpstr(why, ==, "Auto-Submitted header (RFC 3834)");
}

static void
test_walk_depth(void)
{
	GString *mail = g_string_new("From: eve@example.org\nMIME-Version: 1.0\n");
	g_autoptr(message) m = NULL;

	/* nested deeper than max_depth: a problem, not an error */
	for (int i = 0; i < 8; i++)
		g_string_append_printf(mail, "Content-Type: multipart/mixed; boundary=\"b%d\"\n\n--b%d\n", i, i);
	g_string_append(mail, "Content-Type: text/plain\n\nhello\n");
	for (int i = 7; i >= 0; i--)
		g_string_append_printf(mail, "--b%d--\n", i);
	m = parse(mail->str);
	g_string_free(mail, TRUE);
	g_assert_nonnull(m->problem);
}

int
main(int argc, char **argv)
{
	g_autoptr(GError) err = NULL;
	int rc;

	g_test_init(&argc, &argv, NULL);
	message_init();
	spools = g_ptr_array_new_with_free_func((GDestroyNotify) message_spool_free);
	spool_dir = g_dir_make_tmp("u-message-XXXXXX", &err);
	g_assert_no_error(err);
	g_test_add_func("/message/spool/hashes", test_spool_hashes);
	g_test_add_func("/message/spool/too-big", test_spool_too_big);
	g_test_add_func("/message/walk/plain", test_walk_plain);
	g_test_add_func("/message/walk/multipart", test_walk_multipart);
	g_test_add_func("/message/walk/depth", test_walk_depth);
	rc = g_test_run();
	g_ptr_array_unref(spools);
	g_rmdir(spool_dir);
	g_free(spool_dir);
	message_shutdown();
	return rc;
}
