/* fuzz-intake.c - one whole mail through intake_message(): spool, GMime
 * parse and checks, request fields, commands and routing, the
 * transaction, replies into the Maildir, the audit file.
 *
 * A scratch instance is made once per process (no gnupg/ directory, so
 * crypto_home() stays NULL, and gpgme is pointed at a missing engine, so
 * no gpg is ever started).  Every input starts from the same fresh
 * database and is delivered twice.  Besides crashes, these properties are
 * checked after each input:
 *  - a mail the robot took (status OK) is a duplicate when it comes again;
 *  - a mail is never refused with a status that can only repeat on every
 *    redelivery (INVALID, INTERNAL, CORRUPT): the MTA would retry it for
 *    days ("poison mail").  CONFIG and TEMP are allowed: without a robot
 *    key (no gnupg/ here) key requests and embargoed requests fail so;
 *  - the audit file verifies against the database and every line is
 *    JSON, whatever the mail said. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "audit.h"
#include "config.h"
#include "crypto.h"
#include "intake.h"
#include "message.h"
#include "store.h"
#include "store-db.h"
#include "fuzz.h"

#define VERP "request-bounces+000000000000000000000000@example.org"
#define SEED_SQL \
	"BEGIN;" \
	"INSERT INTO blobs (sha256, size, data) VALUES " \
	" ('0000000000000000000000000000000000000000000000000000000000000000', 1, x'00');" \
	"INSERT INTO messages (id, received, raw_sha256, dedup_key, message_id, envelope_from, envelope_to," \
	" from_addr, subject, disposition) VALUES (1, '2026-01-01T00:00:00Z'," \
	" '0000000000000000000000000000000000000000000000000000000000000000', 'seed', 'seed@example.net'," \
	" 'alice@example.net', 'request@example.org', 'alice@example.net', 'seed', 'request');" \
	"INSERT INTO outbox (id, created, kind, entry, cause, message_id, envelope_from, recipients, data," \
	" status, attempts, next_attempt, updated) VALUES (1, '2026-01-01T00:00:00Z', 'vendor-notify', NULL, 1," \
	" 'vendor-notify.0123@example.org', '" VERP "', '[\"security@example.com\"]', 'x', 'delivered', 1," \
	" '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');" \
	"INSERT INTO outbox_recipients (outbox, address, status, reply, updated) VALUES" \
	" (1, 'security@example.com', 'delivered', '250 ok', '2026-01-01T00:00:00Z');" \
	"COMMIT;"

static vulnid_config *cfg;
static char *inst;
static GBytes *pristine_db;
static gboolean strict = TRUE;

static void
write_file(const char *path, const void *data, gsize len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, len) != (ssize_t) len)
		fuzz_fail("cannot write '%s': %s", path, g_strerror(errno));
	close(fd);
}

static void
empty_dir(const char *sub)
{
	g_autofree char *d = g_build_filename(inst, sub, NULL);

	fuzz_rm_rf(d);
	if (mkdir(d, 0700) < 0)
		fuzz_fail("cannot create '%s': %s", d, g_strerror(errno));
}

/* Back to the state right after `vulnid init` (without a key). */
static void
reset_instance(void)
{
	g_autofree char *wal = g_strconcat(cfg->db_path, "-wal", NULL);
	g_autofree char *shm = g_strconcat(cfg->db_path, "-shm", NULL);

	unlink(wal);
	unlink(shm);
	write_file(cfg->db_path, g_bytes_get_data(pristine_db, NULL), g_bytes_get_size(pristine_db));
	unlink(cfg->audit_path);
	empty_dir("tmp");
	empty_dir("sent");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *subdirs[] = { "tmp", "templates", "sent" };
	g_autofree char *text = NULL;
	g_autofree char *conf = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *db = NULL;
	gsize db_len;
	store *st = NULL;

	(void) argc;
	(void) argv;
	strict = g_getenv("FUZZ_INTAKE_LAX") == NULL;
	g_setenv("VULNID_TEST_NOW", FUZZ_NOW, TRUE);
	g_setenv("VULNID_TEMPLATE_DIR", fuzz_template_dir(), TRUE);
	inst = fuzz_scratch_dir("intake");
	for (gsize i = 0; i < G_N_ELEMENTS(subdirs); i++) {
		g_autofree char *d = g_build_filename(inst, subdirs[i], NULL);

		mkdir(d, 0700);
	}
	conf = g_build_filename(inst, "vulnid.conf", NULL);
	text = config_default_text("FUZZ", "example.org");
	write_file(conf, text, strlen(text));
	if (config_load(conf, &cfg, &err) != VULNID_OK)
		fuzz_fail("config_load: %s", err->message);
	if (g_strcmp0(cfg->transport, "maildir:sent") != 0)
		fuzz_fail("the default transport is '%s', not maildir:sent", cfg->transport);
	crypto_preinit();
	message_init();
	fuzz_no_gpg();
	if (store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_CREATE, &st, &err) != VULNID_OK)
		fuzz_fail("store_open: %s", err->message);
	/* Something this robot sent, so that a bounce to its VERP address
	 * (request-bounces+000000000000000000000000@example.org, see the
	 * seeds) reaches the DSN code. */
	if (sqlite3_exec(store_db(st), SEED_SQL, NULL, NULL, NULL) != SQLITE_OK)
		fprintf(stderr, "fuzz-intake: cannot add the sent mail for bounces (%s); "
			"the bounce path is not reached\n", sqlite3_errmsg(store_db(st)));
	store_close(st);
	if (!g_file_get_contents(cfg->db_path, &db, &db_len, &err))
		fuzz_fail("%s", err->message);
	pristine_db = g_bytes_new_take(g_steal_pointer(&db), db_len);
	return 0;
}

static vulnid_status
deliver(int fd, intake_outcome *outcome, char **why)
{
	g_autoptr(intake_result) res = NULL;
	g_autoptr(GError) err = NULL;
	intake_envelope env = { NULL, NULL };
	vulnid_status s;

	if (lseek(fd, 0, SEEK_SET) < 0)
		fuzz_fail("lseek: %s", g_strerror(errno));
	s = intake_message(cfg, fd, &env, &res, &err);
	if (s == VULNID_OK)
		*outcome = res->outcome;
	*why = g_strdup(err != NULL ? err->message : "");
	return s;
}

static void
check_audit(void)
{
	g_autoptr(store) st = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *log = NULL;
	g_auto(GStrv) lines = NULL;
	guint64 n, bad;
	gsize len;

	if (store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_READONLY, &st, &err) != VULNID_OK)
		fuzz_fail("store_open: %s", err->message);
	if (audit_verify(st, cfg->audit_path, &n, &bad, &err) != VULNID_OK)
		fuzz_fail("audit verify: %s", err->message);
	if (!g_file_get_contents(cfg->audit_path, &log, &len, &err))
		fuzz_fail("%s", err->message);
	lines = g_strsplit(log, "\n", -1);
	for (char **l = lines; *l != NULL; l++) {
		g_autoptr(JsonParser) p = NULL;
		g_autoptr(GError) je = NULL;

		if (**l == '\0')
			continue;
		p = json_parser_new();
		if (!json_parser_load_from_data(p, *l, -1, &je) ||
		    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
			fuzz_fail("audit line is not a JSON object (%s): %.300s",
				  je != NULL ? je->message : "not an object", *l);
	}
}

static gboolean
poison(vulnid_status s)
{
	return s == VULNID_ERR_INVALID || s == VULNID_ERR_INTERNAL || s == VULNID_ERR_CORRUPT;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	intake_outcome o1 = INTAKE_ASSIGNED, o2 = INTAKE_ASSIGNED;
	g_autofree char *why1 = NULL;
	g_autofree char *why2 = NULL;
	vulnid_status s1, s2;
	int fd;

	if (size > 4 * 1024 * 1024)
		return 0;
	if (fuzz_known_open("crash-dsn-empty-delivery-status") && fuzz_has_empty_dsn_part(data, size))
		return 0;	/* a known open crash (regressions/KNOWN-OPEN) */
	reset_instance();
	fd = memfd_create("mail", MFD_CLOEXEC);
	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t) size))
		fuzz_fail("memfd: %s", g_strerror(errno));
	s1 = deliver(fd, &o1, &why1);
	s2 = deliver(fd, &o2, &why2);
	close(fd);
	if (strict && poison(s1))
		fuzz_fail("a mail refused with %s, which every redelivery repeats: %s",
			  vulnid_status_str(s1), why1);
	if (s1 == VULNID_OK && (s2 != VULNID_OK || o2 != INTAKE_DUPLICATE))
		fuzz_fail("the same mail again was not a duplicate: %s, %s (%s)",
			  vulnid_status_str(s2), s2 == VULNID_OK ? intake_outcome_str(o2) : "-", why2);
	if (g_file_test(cfg->audit_path, G_FILE_TEST_EXISTS))
		check_audit();
	return 0;
}
