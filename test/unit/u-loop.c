/* u-loop.c - unit tests for src/lib/loop.c: which mails look like an
 * answer from another robot, on mails parsed as intake parses them and a
 * store in a temporary directory (for the same body sent again) */
#include "autoconfig.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gmime/gmime.h>

#include "config.h"
#include "loop.h"
#include "mailctx.h"
#include "message.h"
#include "store.h"

typedef struct {
	char *dir;
	vulnid_config *cfg;
	store *st;
	char sha[65];
	int n;
} fixture;

typedef struct {
	message_spool *sp;
	message *m;
} parsed;

static void
setup(fixture *f, gconstpointer data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *db = NULL;

	(void) data;
	f->dir = g_dir_make_tmp("u-loop-XXXXXX", &err);
	g_assert_no_error(err);
	g_assert_cmpint(config_load_text(f->dir, "[instance]\nprefix = TEST\ndomain = robot.example\n", &f->cfg,
					 &err), ==, VULNID_OK);
	db = g_build_filename(f->dir, "vulnid.db", NULL);
	g_assert_cmpint(store_open(db, 1000, STORE_OPEN_CREATE, &f->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_blob_put_mem(f->st, "x", 1, f->sha, &err), ==, VULNID_OK);
}

static void
teardown(fixture *f, gconstpointer data)
{
	(void) data;
	store_close(f->st);
	config_free(f->cfg);
	for (const char *n = "vulnid.db\0vulnid.db-wal\0vulnid.db-shm\0vulnid.db-journal\0mail\0"; *n;
	     n += strlen(n) + 1) {
		g_autofree char *p = g_build_filename(f->dir, n, NULL);

		g_unlink(p);
	}
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->dir);
}

/* A mail parsed from its header lines and body. */
static parsed
parse(fixture *f, const char *header, const char *body)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *path = g_build_filename(f->dir, "mail", NULL);
	g_autofree char *text = g_strdup_printf("Date: Thu, 01 Jan 2026 10:00:00 +0000\r\nTo: request@robot.example\r\n"
						"%s\r\n%s", header, body);
	message_limits lim = { 1 << 20, 64 * 1024, 100, 4096, 100, 10, 0, 0, 0, NULL };
	parsed p = { NULL, NULL };
	int fd;

	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	fd = open(path, O_RDONLY);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(message_spool_input(fd, f->dir, 1 << 20, &p.sp, &err), ==, VULNID_OK);
	close(fd);
	g_unlink(path);
	g_assert_cmpint(message_parse(p.sp, &lim, &p.m, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	return p;
}

static void
parsed_clear(parsed *p)
{
	g_clear_pointer(&p->m, message_free);
	g_clear_pointer(&p->sp, message_spool_free);
}

/* Recorded as intake records it: received at when, its row. */
static gint64
record(fixture *f, const parsed *p, const char *when)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *key = message_dedup_key(p->m);
	store_message sm = { 0 };
	gint64 row = 0;

	sm.received = when;
	sm.raw_sha256 = f->sha;
	sm.dedup_key = key;
	sm.from_addr = p->m->from_addr;
	sm.disposition = "request";
	g_assert_cmpint(store_message_insert(f->st, &sm, &row, &err), ==, VULNID_OK);
	return row;
}

/* Why the mail is suspect at now (NULL: it is not). */
static const char *
suspect(fixture *f, const parsed *p, gint64 row, guint quoted_tokens, const char *now)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(now, NULL);
	mail_ctx c = { 0 };
	const char *why = "unset";

	c.cfg = f->cfg;
	c.st = f->st;
	c.m = p->m;
	c.msg_row = row;
	c.now_dt = t;
	c.quoted_tokens = quoted_tokens;
	c.envelope_sender = "env@x.example";
	g_assert_cmpint(loop_suspect(&c, 24, &why, &err), ==, VULNID_OK);
	g_assert_no_error(err);
	return why;
}

/* One mail: (header, body) -> why, at a fixed time, nothing recorded. */
static const char *
one(fixture *f, const char *header, const char *body)
{
	parsed p = parse(f, header, body);
	const char *why = suspect(f, &p, 0, 0, "2026-01-01T10:00:00Z");

	parsed_clear(&p);
	return why;
}

#define FROM "From: a@x.example\r\nSubject: a bug\r\nMessage-ID: <m1@x.example>\r\n"

static void
test_plain(fixture *f, gconstpointer data)
{
	(void) data;
	g_assert_null(one(f, FROM, "There is a bug in libfoo.\r\n"));
	/* the robot's name or domain alone is nothing */
	g_assert_null(one(f, FROM, "I wrote to request@robot.example and vulnid.example.\r\n"));
	/* nor automatic-mail headers: intake decides on those, this looks at
	 * what remains when they are stripped */
	g_assert_null(one(f, FROM "Auto-Submitted: auto-replied\r\nPrecedence: bulk\r\nX-Loop: vulnid@robot.example\r\n",
			  "Out of office.\r\n"));
}

/* Threading headers naming one of the robot's Message-IDs. */
static void
test_threading(fixture *f, gconstpointer data)
{
	(void) data;
	g_assert_cmpstr(one(f, FROM "In-Reply-To: <vulnid.1a2b.3c@robot.example>\r\n", "ok\r\n"), ==,
			"it answers a mail of the robot (In-Reply-To)");
	g_assert_cmpstr(one(f, FROM "In-Reply-To: <vulnid.1a2b@ROBOT.Example>\r\n", "ok\r\n"), ==,
			"it answers a mail of the robot (In-Reply-To)");
	g_assert_cmpstr(one(f, FROM "References: <a@x.example>\r\n <vulnid.9@robot.example> <b@x.example>\r\n",
			    "ok\r\n"), ==, "it answers a mail of the robot (References)");
	/* other hosts, other local parts */
	g_assert_null(one(f, FROM "In-Reply-To: <vulnid.1@robot.example.evil>\r\n", "ok\r\n"));
	g_assert_null(one(f, FROM "In-Reply-To: <vulnid.1@sub.robot.example>\r\n", "ok\r\n"));
	g_assert_null(one(f, FROM "In-Reply-To: <x.vulnid.1@robot.example>\r\n", "ok\r\n"));
	g_assert_null(one(f, FROM "In-Reply-To: <vulnid@robot.example>\r\nReferences: <vulnid1@robot.example>\r\n",
			  "ok\r\n"));
}

static void
test_subject_tag(fixture *f, gconstpointer data)
{
	(void) data;
	g_assert_cmpstr(one(f, "From: a@x.example\r\nSubject: Re: [TEST-2026-0001] a bug\r\n", "ok\r\n"), ==,
			"its Subject carries an [ID] tag of the robot");
	/* encoded as a client may write it */
	g_assert_cmpstr(one(f, "From: a@x.example\r\nSubject: =?UTF-8?Q?Re=3A_=5BTEST-2026-0001=5D?=\r\n", "ok\r\n"),
			==, "its Subject carries an [ID] tag of the robot");
	g_assert_null(one(f, "From: a@x.example\r\nSubject: Re: [CVE-2026-0001] TEST-2026-0001\r\n", "ok\r\n"));
	g_assert_null(one(f, "From: a@x.example\r\nSubject: [TESTS-2026-0001]\r\n", "ok\r\n"));
}

/* The text quoting what only the robot writes. */
static void
test_quoted_text(fixture *f, gconstpointer data)
{
	g_autofree char *verp = g_strdup_printf("> Return-Path: <%s+42.abc@robot.example>\r\n", f->cfg->bounce_local);
	g_autofree char *plain_bounce = g_strdup_printf("write to %s@robot.example\r\n", f->cfg->bounce_local);

	(void) data;
	g_assert_cmpstr(one(f, FROM, "> --\r\n> vulnid at robot.example\r\n"), ==,
			"it quotes the robot's signature line");
	g_assert_cmpstr(one(f, FROM, "> Message-ID: <vulnid.77.x@robot.example>\r\n"), ==,
			"it quotes a Message-ID or envelope address of the robot");
	g_assert_cmpstr(one(f, FROM, "(vulnid.77@robot.example)"), ==,
			"it quotes a Message-ID or envelope address of the robot");
	g_assert_cmpstr(one(f, FROM, verp), ==, "it quotes a Message-ID or envelope address of the robot");
	/* the bounce address without a VERP part, or a local part only ending
	 * like the robot's, is not the robot's */
	g_assert_null(one(f, FROM, plain_bounce));
	g_assert_null(one(f, FROM, "see myvulnid.77@robot.example\r\n"));
	g_assert_null(one(f, FROM, "@robot.example vulnid.@robot.example x@robot.example\r\n"));
}

/* A local part longer than the scan looks back is not taken apart. */
static void
test_long_local_part(fixture *f, gconstpointer data)
{
	GString *b = g_string_new(NULL);

	(void) data;
	/* many '@domain' each looked at once, none the robot's */
	for (int i = 0; i < 10000; i++)
		g_string_append(b, i % 50 == 49 ? "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@robot.example\r\n"
				: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@robot.example ");
	g_string_append(b, "\r\n");
	g_assert_null(one(f, FROM, b->str));
	g_string_assign(b, "");
	for (int i = 0; i < 300; i++)
		g_string_append_c(b, 'x');
	g_string_append(b, "vulnid.1@robot.example\r\n");
	g_assert_null(one(f, FROM, b->str));
	g_string_free(b, TRUE);
}

static void
test_quoted_tokens(fixture *f, gconstpointer data)
{
	parsed p = parse(f, FROM, "ok\r\n");

	(void) data;
	g_assert_null(suspect(f, &p, 0, 0, "2026-01-01T10:00:00Z"));
	g_assert_cmpstr(suspect(f, &p, 0, 1, "2026-01-01T10:00:00Z"), ==, "it quotes a token the robot issued");
	parsed_clear(&p);
}

/* The same sender sending the same text again within the period: another
 * Message-ID, the line ends of another client, the address in other case. */
static void
test_repeated_body(fixture *f, gconstpointer data)
{
	parsed first = parse(f, FROM, "Your mail was received.\r\n");
	parsed again = parse(f, "From: A@X.Example\r\nSubject: other\r\nMessage-ID: <m2@x.example>\r\n",
			     "Your mail was received.\n");
	parsed other_text = parse(f, "From: a@x.example\r\nMessage-ID: <m3@x.example>\r\n", "Your mail was read.\r\n");
	parsed other_sender = parse(f, "From: b@x.example\r\nMessage-ID: <m4@x.example>\r\n",
				    "Your mail was received.\r\n");
	gint64 row1 = record(f, &first, "2026-01-01T09:00:00Z");
	gint64 row2;

	(void) data;
	/* a mail is no repeat of itself */
	g_assert_null(suspect(f, &first, row1, 0, "2026-01-01T09:00:00Z"));
	row2 = record(f, &again, "2026-01-01T10:00:00Z");
	g_assert_cmpstr(suspect(f, &again, row2, 0, "2026-01-01T10:00:00Z"), ==,
			"the same sender sent the same text before");
	g_assert_cmpstr(suspect(f, &again, row2, 0, "2026-01-02T09:00:00Z"), ==,
			"the same sender sent the same text before");
	/* the period is over */
	g_assert_null(suspect(f, &again, row2, 0, "2026-01-02T09:00:01Z"));
	g_assert_null(suspect(f, &other_text, record(f, &other_text, "2026-01-01T10:00:00Z"), 0,
			      "2026-01-01T10:00:00Z"));
	g_assert_null(suspect(f, &other_sender, record(f, &other_sender, "2026-01-01T10:00:00Z"), 0,
			      "2026-01-01T10:00:00Z"));
	parsed_clear(&first);
	parsed_clear(&again);
	parsed_clear(&other_text);
	parsed_clear(&other_sender);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_mime_init();
	g_test_add("/loop/plain", fixture, NULL, setup, test_plain, teardown);
	g_test_add("/loop/threading", fixture, NULL, setup, test_threading, teardown);
	g_test_add("/loop/subject-tag", fixture, NULL, setup, test_subject_tag, teardown);
	g_test_add("/loop/quoted-text", fixture, NULL, setup, test_quoted_text, teardown);
	g_test_add("/loop/long-local-part", fixture, NULL, setup, test_long_local_part, teardown);
	g_test_add("/loop/quoted-tokens", fixture, NULL, setup, test_quoted_tokens, teardown);
	g_test_add("/loop/repeated-body", fixture, NULL, setup, test_repeated_body, teardown);
	return g_test_run();
}
