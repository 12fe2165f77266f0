/* u-lifecycle: routing and the [lifecycle] configuration, decided in
 * memory: an instance in a temporary directory (its configuration as
 * vulnid init writes it, a database made with STORE_OPEN_CREATE), mails
 * parsed from strings, no binaries.  The roles are decided by
 * lc_role_for() of lifecycle-internal.h. */
#include "autoconfig.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "config.h"
#include "entry.h"
#include "lifecycle-internal.h"
#include "lifecycle.h"
#include "mailctx.h"
#include "message.h"
#include "store.h"

typedef struct {
	char *dir;
	vulnid_config *cfg;
	store *st;
} instance;

/* An instance whose configuration is the default one with edits (pairs
 * of a line and its replacement, NULL-terminated), and one entry
 * TEST-2026-0001. */
static void
instance_make(instance *in, const char *const *edits)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *text = config_default_text("TEST", "example.org");
	g_autofree char *conf = NULL;
	g_autofree char *spool = NULL;
	char sha[65];
	store_message sm = { 0 };
	gint64 row;

	in->dir = g_dir_make_tmp("u-lifecycle.XXXXXX", &err);
	g_assert_no_error(err);
	for (; edits != NULL && edits[0] != NULL; edits += 2) {
		g_auto(GStrv) parts = g_strsplit(text, edits[0], 2);

		g_assert_nonnull(parts[1]);	/* the line to edit is there */
		g_free(text);
		text = g_strjoin(edits[1], parts[0], parts[1], NULL);
	}
	conf = g_build_filename(in->dir, "vulnid.conf", NULL);
	spool = g_build_filename(in->dir, "tmp", NULL);
	g_assert_cmpint(g_mkdir(spool, 0700), ==, 0);
	g_assert_true(g_file_set_contents(conf, text, -1, NULL));
	g_assert_cmpint(config_load(conf, &in->cfg, &err), ==, VULNID_OK);
	g_assert_cmpint(store_open(in->cfg->db_path, 1000, STORE_OPEN_CREATE, &in->st, &err), ==, VULNID_OK);
	g_assert_cmpint(store_blob_put_mem(in->st, "x", 1, sha, &err), ==, VULNID_OK);
	sm.received = "2026-01-02T03:04:05Z";
	sm.raw_sha256 = sha;
	sm.dedup_key = "u-lifecycle";
	sm.disposition = "request";
	g_assert_cmpint(store_message_insert(in->st, &sm, &row, &err), ==, VULNID_OK);
	g_assert_cmpint(store_entry_insert(in->st, "TEST-2026-0001", 2026, 1, "digest-1", sm.received, NULL, row,
					   &err), ==, VULNID_OK);
	{
		/* its request, by a@example.net, unsigned */
		const char *auth = "{\"method\":\"none\"}";
		g_autofree char *canon = entry_record_canonical("TEST-2026-0001", 1, sm.received, "request", auth,
								"a bug", "[]", "A bug.", NULL);
		g_autofree char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
		store_record rec = { 0 };
		gint64 rec_row;

		rec.entry = "TEST-2026-0001";
		rec.seq = 1;
		rec.created = sm.received;
		rec.kind = "request";
		rec.message = row;
		rec.author = "a@example.net";
		rec.role = "creator";
		rec.auth = auth;
		rec.subject = "a bug";
		rec.fields = "[]";
		rec.body = "A bug.";
		rec.sha256 = digest;
		g_assert_cmpint(store_record_insert(in->st, &rec, &rec_row, &err), ==, VULNID_OK);
	}
}

static void
instance_clear(instance *in)
{
	g_autofree char *cmd = NULL;

	g_clear_pointer(&in->st, store_close);
	g_clear_pointer(&in->cfg, config_free);
	/* the directory holds only what this test made */
	for (const char *f = "vulnid.db\0vulnid.db-wal\0vulnid.db-shm\0vulnid.conf\0"; *f; f += strlen(f) + 1) {
		g_autofree char *p = g_build_filename(in->dir, f, NULL);

		g_unlink(p);
	}
	{
		g_autofree char *spool = g_build_filename(in->dir, "tmp", NULL);

		g_rmdir(spool);
	}
	g_rmdir(in->dir);
	g_free(in->dir);
}

/* A mail parsed from text, as intake parses it. */
static message *
parse_mail(const instance *in, const char *text)
{
	g_autoptr(GError) err = NULL;
	g_autoptr(message_spool) sp = NULL;
	g_autofree char *path = g_build_filename(in->dir, "mail", NULL);
	message_limits lim = { 1 << 20, 64 * 1024, 100, 4096, 100, 10, 0 };
	message *m = NULL;
	int fd;

	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	fd = open(path, O_RDONLY);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(message_spool_input(fd, in->cfg->spool_dir, 1 << 20, &sp, &err), ==, VULNID_OK);
	close(fd);
	g_unlink(path);
	g_assert_cmpint(message_parse(sp, &lim, &m, &err), ==, VULNID_OK);
	return m;
}

/* Where a mail with this recipient, Subject and body goes. */
static lifecycle_route_kind
route(const instance *in, const char *recipient, const char *subject, const char *body, char **entry_id)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *text = g_strdup_printf("From: a@example.net\r\nTo: %s\r\nSubject: %s\r\n"
						"Message-ID: <u1@example.net>\r\n"
						"Date: Fri, 02 Jan 2026 03:04:05 +0000\r\n\r\n%s",
						recipient, subject, body);
	g_autoptr(message) m = parse_mail(in, text);
	mail_ctx c = { 0 };
	lifecycle_route_kind kind;

	c.cfg = in->cfg;
	c.st = in->st;
	c.m = m;
	c.recipient = recipient;
	c.envelope_sender = "a@example.net";
	g_assert_cmpint(lifecycle_route_target(&c, &kind, entry_id, &err), ==, VULNID_OK);
	return kind;
}

static void
test_route(void)
{
	instance in = { 0 };
	char *id = NULL;

	instance_make(&in, NULL);
	/* the plus address names an entry that exists */
	g_assert_cmpint(route(&in, "request+TEST-2026-0001@example.org", "hello", "Some text.\n", &id), ==,
			ROUTE_ENTRY);
	g_assert_cmpstr(id, ==, "TEST-2026-0001");
	g_clear_pointer(&id, g_free);
	/* an MTA may have folded it to lower case */
	g_assert_cmpint(route(&in, "request+test-2026-0001@example.org", "hello", "Some text.\n", &id), ==,
			ROUTE_ENTRY);
	g_assert_cmpstr(id, ==, "TEST-2026-0001");
	g_clear_pointer(&id, g_free);
	/* one that does not */
	g_assert_cmpint(route(&in, "request+TEST-2026-0099@example.org", "hello", "Some text.\n", &id), ==,
			ROUTE_UNKNOWN_ENTRY);
	g_assert_cmpstr(id, ==, "TEST-2026-0099");
	g_clear_pointer(&id, g_free);
	/* a plus detail that is no identifier */
	g_assert_cmpint(route(&in, "request+nonsense@example.org", "hello", "Some text.\n", &id), ==,
			ROUTE_UNKNOWN_ENTRY);
	g_clear_pointer(&id, g_free);
	/* the [ID] tag of the Subject, to the request address */
	g_assert_cmpint(route(&in, "request@example.org", "Re: [TEST-2026-0001] hello", "Text.\n", &id), ==,
			ROUTE_ENTRY);
	g_assert_cmpstr(id, ==, "TEST-2026-0001");
	g_clear_pointer(&id, g_free);
	/* commands only */
	g_assert_cmpint(route(&in, "request@example.org", "lookup", "lookup TEST-2026-0001\n", &id), ==,
			ROUTE_COMMANDS);
	g_assert_null(id);
	/* anything else is a new request */
	g_assert_cmpint(route(&in, "request@example.org", "a bug", "Vendor: Example\nProduct: thing\n\nA bug.\n",
			      &id), ==, ROUTE_NEW);
	g_assert_null(id);
	instance_clear(&in);
}

/* The role of a mail from sender (signed by signer, or NULL) with the
 * token rows given, for TEST-2026-0001. */
static void
role(const instance *in, const char *sender, const char *signer, GPtrArray *tokens, const char *want_role,
     const char *want_how)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *text = g_strdup_printf("From: %s\r\nTo: request+TEST-2026-0001@example.org\r\n"
						"Subject: more\r\nMessage-ID: <u2@example.net>\r\n\r\nMore.\n", sender);
	g_autoptr(message) m = parse_mail(in, text);
	g_autoptr(entry) e = NULL;
	mail_ctx c = { 0 };
	lc_mail l = { 0 };
	role_info ri;

	c.cfg = in->cfg;
	c.st = in->st;
	c.m = m;
	c.signer = signer;
	l.c = &c;
	l.tokens = tokens;
	g_assert_cmpint(entry_load(in->st, "TEST-2026-0001", &e, &err), ==, VULNID_OK);
	g_assert_cmpint(lc_role_for(&l, e, &ri, &err), ==, VULNID_OK);
	g_assert_cmpstr(ri.role, ==, want_role);
	g_assert_cmpstr(ri.how, ==, want_how);
}

static token_row *
token(const char *entry_id, const char *r)
{
	token_row *t = g_new0(token_row, 1);

	t->entry = g_strdup(entry_id);
	t->role = g_strdup(r);
	return t;
}

static void
test_roles(void)
{
	const char *moderators[] = { "\nmoderators = \n", "\nmoderators = 0123456789ABCDEF0123456789ABCDEF01234567, FEDCBA9876543210FEDCBA9876543210FEDCBA98\n", NULL };
	g_autoptr(GPtrArray) none = g_ptr_array_new_with_free_func(token_row_free);
	g_autoptr(GPtrArray) creator = g_ptr_array_new_with_free_func(token_row_free);
	g_autoptr(GPtrArray) vendor = g_ptr_array_new_with_free_func(token_row_free);
	g_autoptr(GPtrArray) other = g_ptr_array_new_with_free_func(token_row_free);
	instance in = { 0 };

	g_ptr_array_add(creator, token("TEST-2026-0001", "creator"));
	g_ptr_array_add(vendor, token("TEST-2026-0001", "vendor"));
	g_ptr_array_add(other, token("TEST-2026-0002", "creator"));
	instance_make(&in, moderators);
	/* the request's author, by address only (any case) */
	role(&in, "a@example.net", NULL, none, "creator", "address");
	role(&in, "A@Example.NET", NULL, none, "creator", "address");
	/* anyone else */
	role(&in, "b@example.com", NULL, none, "third-party", "none");
	/* a token decides, before the address; one of another entry does not */
	role(&in, "b@example.com", NULL, creator, "creator", "token");
	role(&in, "b@example.com", NULL, vendor, "vendor", "token");
	role(&in, "b@example.com", NULL, other, "third-party", "none");
	/* a moderator's key, case aside; another key is nobody */
	role(&in, "b@example.com", "fedcba9876543210fedcba9876543210fedcba98", none, "moderator", "key");
	role(&in, "b@example.com", "0123456789ABCDEF0123456789ABCDEF01234568", none, "third-party", "none");
	instance_clear(&in);
}

static void
test_text_names_entry(void)
{
	g_assert_true(lifecycle_text_names_entry("about TEST-2026-0001.", "TEST-2026-0001"));
	g_assert_true(lifecycle_text_names_entry("about test-2026-0001", "TEST-2026-0001"));
	g_assert_false(lifecycle_text_names_entry("about TEST-2026-00011", "TEST-2026-0001"));
	g_assert_false(lifecycle_text_names_entry("about XTEST-2026-0001", "TEST-2026-0001"));
	g_assert_false(lifecycle_text_names_entry("about TEST-2026-0002", "TEST-2026-0001"));
}

static void
test_confirm_unsigned(void)
{
	const char *yes[] = { "\nconfirm_unsigned = no\n", "\nconfirm_unsigned = yes\n", NULL };
	instance in = { 0 };

	instance_make(&in, NULL);
	g_assert_false(lifecycle_confirm_unsigned(in.cfg));
	instance_clear(&in);
	instance_make(&in, yes);
	g_assert_true(lifecycle_confirm_unsigned(in.cfg));
	instance_clear(&in);
}

int
main(int argc, char **argv)
{
	int rc;

	g_setenv("VULNID_TEST_NOW", "2026-01-02T03:04:05Z", TRUE);
	g_test_init(&argc, &argv, NULL);
	message_init();
	g_test_add_func("/lifecycle/route", test_route);
	g_test_add_func("/lifecycle/roles", test_roles);
	g_test_add_func("/lifecycle/text-names-entry", test_text_names_entry);
	g_test_add_func("/lifecycle/confirm-unsigned", test_confirm_unsigned);
	rc = g_test_run();
	message_shutdown();
	return rc;
}
