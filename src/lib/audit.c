/* audit.c - append-only, hash-chained audit log */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include <gio/gio.h>

#include "fileio.h"
#include "audit.h"
#include "canonjson.h"
#include "jsonl-chain.h"
#include "store-audit.h"

struct audit_event {
	GString *head;		/* {"ts":..,"event":..,"id":..,"message_id":.. */
	GString *rest;		/* ,"key":value ... */
};

#define HASH_KEY JSONL_CHAIN_HASH_KEY

audit_event *
audit_event_new(const char *event, const char *id, const char *message_id)
{
	audit_event *ev = g_new0(audit_event, 1);
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *ts = g_date_time_format(now, "%Y-%m-%dT%H:%M:%S");
	g_autofree char *tsz = g_strdup_printf("%s.%03dZ", ts,
					       g_date_time_get_microsecond(now) / 1000);
	gboolean first = TRUE;

	ev->head = g_string_new("{");
	ev->rest = g_string_new(NULL);
	canonjson_member_str(ev->head, &first, "ts", tsz);
	canonjson_member_str(ev->head, &first, "event", event);
	canonjson_member_str(ev->head, &first, "id", id);
	canonjson_member_str(ev->head, &first, "message_id", message_id);
	return ev;
}

void
audit_event_str(audit_event *ev, const char *key, const char *value)
{
	gboolean first = FALSE;
	g_autofree char *masked = NULL;

	/* Values from mail may carry anything; the log stays one line per
	 * event and free of terminal controls (canonjson escapes C0). */
	if (value != NULL && strlen(value) > 1000)
		value = masked = g_strndup(value, 1000);
	canonjson_member_str(ev->rest, &first, key, value);
}

void
audit_event_int(audit_event *ev, const char *key, gint64 value)
{
	gboolean first = FALSE;

	canonjson_member_int(ev->rest, &first, key, value);
}

void
audit_event_free(audit_event *ev)
{
	if (ev == NULL)
		return;
	g_string_free(ev->head, TRUE);
	g_string_free(ev->rest, TRUE);
	g_free(ev);
}

char *
audit_line_hash(const char *line, gsize len)
{
	const char *h = g_strrstr_len(line, (gssize) len, HASH_KEY);

	if (h == NULL)
		return NULL;
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) line,
					   (gsize) (h - line));
}

vulnid_status
audit_append(store *st, audit_event *ev, GError **err)
{
	g_autoptr(GString) line = g_string_new(NULL);
	g_autofree char *prev = NULL;
	char hash[65];
	vulnid_status s;
	gboolean first = FALSE;

	s = store_audit_head(st, &prev, err);
	if (s != VULNID_OK)
		return s;
	if (prev == NULL)
		prev = g_strdup(AUDIT_GENESIS);

	g_string_append_len(line, ev->head->str, (gssize) ev->head->len);
	g_string_append_len(line, ev->rest->str, (gssize) ev->rest->len);
	jsonl_chain_seal(line, 0, &first, prev, hash);

	return store_audit_insert(st, line->str, line->len, hash, err);
}

vulnid_status
audit_append_now(store *st, audit_event *ev, GError **err)
{
	vulnid_status s = store_begin(st, err);

	if (s != VULNID_OK)
		return s;
	s = audit_append(st, ev, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}

vulnid_status
audit_schema_migrated(store *st, int from, int to, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("migrated", NULL, NULL);
	g_autofree char *what = store_migration_text(from, to);

	audit_event_int(ev, "from", from);
	audit_event_int(ev, "to", to);
	audit_event_str(ev, "version", PACKAGE_VERSION);
	audit_event_str(ev, "what", what);
	/* for the filter and the LMTP server, which have no terminal */
	syslog(LOG_NOTICE, "upgraded the database from schema %d to %d (vulnid %s): %s", from, to,
	       PACKAGE_VERSION, what);
	return audit_append(st, ev, err);
}

/* The hash of the last line of the file ("" for an empty file).  Called
 * with the file locked: a partial last line can only be the torn write of
 * a flush that was killed, and every line is in the database, so it is cut
 * off here and written again whole. */
static vulnid_status
audit_file_last_hash(int fd, const char *path, char **out, GError **err)
{
	struct stat sb;
	char buf[8192];
	off_t end, start;
	ssize_t n;
	char *nl, *h;

	if (fstat(fd, &sb) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot stat '%s': %s", path, g_strerror(errno));
	end = sb.st_size;
	for (;;) {
		if (end == 0) {
			if (sb.st_size != 0 && ftruncate(fd, 0) < 0)
				return vulnid_fail(err, VULNID_ERR_IO, "cannot truncate '%s': %s",
						   path, g_strerror(errno));
			*out = g_strdup("");
			return VULNID_OK;
		}
		start = end > (off_t) sizeof buf ? end - (off_t) sizeof buf : 0;
		n = pread(fd, buf, (size_t) (end - start), start);
		if (n != end - start)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", path);
		if (buf[n - 1] == '\n')
			break;
		nl = memrchr(buf, '\n', (size_t) n);
		if (nl == NULL && start > 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT,
					   "'%s' ends in an overlong partial line", path);
		end = nl != NULL ? start + (nl - buf) + 1 : 0;
		if (end > 0 && ftruncate(fd, end) < 0)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot truncate '%s': %s",
					   path, g_strerror(errno));
	}
	buf[n - 1] = '\0';
	nl = strrchr(buf, '\n');
	h = strstr(nl != NULL ? nl : buf, HASH_KEY);
	if (h == NULL || strlen(h) < strlen(HASH_KEY) + 64 + 2)
		return vulnid_fail(err, VULNID_ERR_CORRUPT,
				   "the last line of '%s' carries no hash", path);
	*out = g_strndup(h + strlen(HASH_KEY), 64);
	return VULNID_OK;
}

/* ---- rotated files -------------------------------------------------------- */

/* logrotate keeps at most this many numbered files worth reading. */
#define AUDIT_MAX_ROTATED 10000

/* PATH.N or PATH.N.gz, whichever exists (NULL if neither). */
static char *
rotated_path(const char *path, guint n)
{
	g_autofree char *plain = g_strdup_printf("%s.%u", path, n);
	g_autofree char *gz = g_strdup_printf("%s.%u.gz", path, n);

	if (g_file_test(plain, G_FILE_TEST_IS_REGULAR))
		return g_steal_pointer(&plain);
	if (g_file_test(gz, G_FILE_TEST_IS_REGULAR))
		return g_steal_pointer(&gz);
	return NULL;
}

/* The files of the chain, oldest first: PATH.N[.gz] ... PATH.1[.gz]; the
 * live file itself is not in the list. */
static GPtrArray *
rotated_files(const char *path)
{
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	guint n = 1;
	char *p;

	while (n <= AUDIT_MAX_ROTATED && (p = rotated_path(path, n)) != NULL) {
		g_ptr_array_insert(files, 0, p);
		n++;
	}
	return files;
}

/* The whole content of an audit file, gunzipped if its name ends .gz. */
static vulnid_status
read_all(const char *path, GBytes **out, GError **err)
{
	g_autoptr(GError) e = NULL;

	if (g_str_has_suffix(path, ".gz")) {
		g_autoptr(GFile) f = g_file_new_for_path(path);
		g_autoptr(GFileInputStream) fin = g_file_read(f, NULL, &e);
		g_autoptr(GZlibDecompressor) dec = NULL;
		g_autoptr(GInputStream) in = NULL;
		g_autoptr(GByteArray) buf = g_byte_array_new();
		guint8 chunk[65536];
		gssize n;

		if (fin == NULL)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s", path, e->message);
		dec = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
		in = g_converter_input_stream_new(G_INPUT_STREAM(fin), G_CONVERTER(dec));
		while ((n = g_input_stream_read(in, chunk, sizeof chunk, NULL, &e)) > 0)
			g_byte_array_append(buf, chunk, (guint) n);
		if (n < 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "cannot decompress '%s': %s", path, e->message);
		*out = g_byte_array_free_to_bytes(g_steal_pointer(&buf));
		return VULNID_OK;
	} else {
		g_autoptr(GMappedFile) mf = g_mapped_file_new(path, FALSE, &e);

		if (mf == NULL)
			return vulnid_fail(err, e->code == G_FILE_ERROR_NOENT ? VULNID_ERR_NOTFOUND : VULNID_ERR_IO,
					   "cannot read '%s': %s", path, e->message);
		*out = g_mapped_file_get_bytes(mf);
		return VULNID_OK;
	}
}

/* The hash of the last complete line of content, or "" if there is none. */
static char *
content_last_hash(GBytes *b)
{
	gsize len;
	const char *d = g_bytes_get_data(b, &len);
	const char *end, *nl, *h;

	while (len > 0 && d[len - 1] != '\n')
		len--;
	if (len == 0)
		return g_strdup("");
	end = d + len - 1;
	nl = memrchr(d, '\n', (size_t) (end - d));
	nl = nl != NULL ? nl + 1 : d;
	h = g_strrstr_len(nl, end - nl, HASH_KEY);
	if (h == NULL || (gsize) (end - h) < strlen(HASH_KEY) + 64)
		return NULL;
	return g_strndup(h + strlen(HASH_KEY), 64);
}

/* The chain head of the newest rotated file, "" when there is none.  A
 * plain PATH.1 is locked shared first: a flush that opened the file
 * before logrotate renamed it may still be appending to it. */
static vulnid_status
rotated_last_hash(const char *path, char **out, GError **err)
{
	g_autofree char *p = rotated_path(path, 1);
	g_autoptr(GBytes) b = NULL;
	vulnid_status s;
	int fd = -1;

	if (p == NULL) {
		*out = g_strdup("");
		return VULNID_OK;
	}
	if (!g_str_has_suffix(p, ".gz")) {
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		while (fd >= 0 && flock(fd, LOCK_SH) < 0 && errno == EINTR)
			;
	}
	s = read_all(p, &b, err);
	if (fd >= 0)
		close(fd);
	if (s != VULNID_OK)
		return s;
	*out = content_last_hash(b);
	if (*out == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the last line of '%s' carries no hash", p);
	return VULNID_OK;
}

/* Open PATH for appending and lock it, making sure the lock is on the file
 * that PATH names now: logrotate or a repair may have renamed the file we
 * opened while we waited for the lock. */
static vulnid_status
open_locked(const char *path, int *out, GError **err)
{
	for (int tries = 0; tries < 10; tries++) {
		struct stat a, b;
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0)
			return vulnid_fail(err, vulnid_status_from_errno(errno),
					   "cannot open '%s': %s", path, g_strerror(errno));
		while (flock(fd, LOCK_EX) < 0)
			if (errno != EINTR) {
				close(fd);
				return vulnid_fail(err, VULNID_ERR_IO, "cannot lock '%s': %s",
						   path, g_strerror(errno));
			}
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			*out = fd;
			return VULNID_OK;
		}
		close(fd);
	}
	return vulnid_fail(err, VULNID_ERR_BUSY, "'%s' keeps being replaced", path);
}

vulnid_status
audit_flush(store *st, const char *path, GError **err)
{
	g_autofree char *last = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	vulnid_status s;
	gint64 after = 0;
	int fd;

	s = open_locked(path, &fd, err);
	if (s != VULNID_OK)
		return s;
	{
		/* Read (and repair) through a second descriptor without O_APPEND. */
		int rfd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

		if (rfd < 0) {
			s = vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s': %s",
					path, g_strerror(errno));
			goto out;
		}
		s = audit_file_last_hash(rfd, path, &last, err);
		close(rfd);
		if (s != VULNID_OK)
			goto out;
	}
	/* An empty file just after logrotate continues the rotated one. */
	if (*last == '\0') {
		g_free(last);
		last = NULL;
		s = rotated_last_hash(path, &last, err);
		if (s != VULNID_OK)
			goto out;
	}
	if (*last != '\0') {
		s = store_audit_seq_of_hash(st, last, &after, err);
		if (s != VULNID_OK)
			goto out;
		if (after < 0) {
			s = vulnid_fail(err, VULNID_ERR_CORRUPT,
					"the last line of '%s' is not in the database chain", path);
			goto out;
		}
	}
	s = store_audit_lines_after(st, after, out, NULL, err);
	if (s != VULNID_OK)
		goto out;
	if (!fileio_write_all(fd, out->str, out->len)) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno),
				"cannot write '%s': %s", path, g_strerror(errno));
		/* A torn line is cut off by the next flush. */
		goto out;
	}
	/* Not synced: the database holds the chain, and lines that a crash
	 * takes from the file are appended again by the next flush (a torn
	 * last line is cut off first).  A sync here was one of the filter's
	 * five per mail. */
	s = VULNID_OK;
out:
	close(fd);		/* releases the lock */
	return s;
}

void
audit_verify_result_clear(audit_verify_result *r)
{
	g_clear_pointer(&r->bad_file, g_free);
}

static vulnid_status
vbad(audit_verify_result *r, const char *file, guint64 line, GError **err, const char *fmt, ...)
	G_GNUC_PRINTF(5, 6);

static vulnid_status
vbad(audit_verify_result *r, const char *file, guint64 line, GError **err, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_free(r->bad_file);
	r->bad_file = g_strdup(file);
	r->bad_line = line;
	return vulnid_fail(err, VULNID_ERR_CORRUPT, "%s", msg);
}

vulnid_status
audit_verify_chain(store *st, const char *path, audit_verify_result *r, GError **err)
{
	g_autoptr(GPtrArray) files = rotated_files(path);
	g_autofree char *prev = NULL;
	g_autofree char *prev_file = NULL;
	g_autofree char *db_head = NULL;
	vulnid_status s;
	guint64 db_count = 0;

	memset(r, 0, sizeof *r);
	g_ptr_array_add(files, g_strdup(path));
	for (guint f = 0; f < files->len; f++) {
		const char *file = g_ptr_array_index(files, f);
		g_autoptr(GBytes) b = NULL;
		const char *p, *end;
		guint64 n = 0;
		gsize size;

		s = read_all(file, &b, err);
		if (s != VULNID_OK) {
			g_free(r->bad_file);
			r->bad_file = g_strdup(file);
			return s;
		}
		r->files++;
		p = g_bytes_get_data(b, &size);
		end = p + size;
		while (p != NULL && p < end) {
			const char *nl = memchr(p, '\n', (size_t) (end - p));
			const char *pv;
			gsize len;

			n++;
			if (nl == NULL)
				return vbad(r, file, n, err, "line %" G_GUINT64_FORMAT ": truncated (no newline)", n);
			len = (gsize) (nl - p);
			if (!jsonl_chain_line_ok(p, len))
				return vbad(r, file, n, err, "line %" G_GUINT64_FORMAT
					    ": hash does not match its content", n);
			pv = jsonl_chain_line_prev(p, len);
			if (pv == NULL)
				return vbad(r, file, n, err, "line %" G_GUINT64_FORMAT ": has no prev hash", n);
			if (prev == NULL) {
				/* The first line of all: the genesis, or (old
				 * files removed) a line of the database chain. */
				gint64 seq = 0;

				if (memcmp(pv, AUDIT_GENESIS, 64) != 0) {
					g_autofree char *ph = g_strndup(pv, 64);

					s = store_audit_seq_of_hash(st, ph, &seq, err);
					if (s != VULNID_OK)
						return s;
					if (seq < 0)
						return vbad(r, file, n, err, "line %" G_GUINT64_FORMAT
							    ": does not follow any event of the database chain", n);
				}
				r->first_seq = (guint64) seq + 1;
			} else if (memcmp(pv, prev, 64) != 0) {
				if (n > 1)
					return vbad(r, file, n, err, "line %" G_GUINT64_FORMAT ": does not follow line %"
						    G_GUINT64_FORMAT " (prev hash differs)", n, n - 1);
				return vbad(r, file, n, err, "line 1: does not follow the last line of '%s'"
					    " (prev hash differs)", prev_file);
			}
			g_free(prev);
			prev = g_strndup(nl - 2 - 64, 64);
			p = nl + 1;
		}
		r->lines += n;
		if (n > 0) {
			g_free(prev_file);
			prev_file = g_strdup(file);
		}
	}

	s = store_audit_summary(st, &db_count, &db_head, err);
	if (s != VULNID_OK)
		return s;
	if (r->first_seq == 0)
		r->first_seq = 1;
	if (r->first_seq - 1 + r->lines != db_count) {
		if (r->files == 1)
			return vbad(r, path, 0, err, "'%s' has %" G_GUINT64_FORMAT " lines, the database chain %"
				    G_GUINT64_FORMAT, path, r->lines, db_count);
		return vbad(r, path, 0, err, "'%s' and %u rotated files hold events %" G_GUINT64_FORMAT
			    " to %" G_GUINT64_FORMAT ", the database chain has %" G_GUINT64_FORMAT,
			    path, r->files - 1, r->first_seq, r->first_seq - 1 + r->lines, db_count);
	}
	if (r->lines > 0 && (db_head == NULL || strcmp(db_head, prev) != 0))
		return vbad(r, prev_file, 0, err, "the last line: the database chain ends in another hash");
	return VULNID_OK;
}

vulnid_status
audit_verify(store *st, const char *path, guint64 *lines, guint64 *bad_line, GError **err)
{
	audit_verify_result r;
	vulnid_status s = audit_verify_chain(st, path, &r, err);

	*lines = r.lines;
	*bad_line = r.bad_line;
	audit_verify_result_clear(&r);
	return s;
}

/* Every line of the database chain must hash right and follow the one
 * before: the file is written from it, so it must be sound itself. */
/* Does this line hash right and follow the one before? */
static gboolean
chain_link_ok(gint64 seq, const char *line, gsize len, const char *hash, gpointer data)
{
	char **prev = data;
	g_autofree char *want = line != NULL ? audit_line_hash(line, len) : NULL;
	g_autofree char *pv = g_strdup_printf(",\"prev\":\"%s\"" HASH_KEY, *prev);

	(void) seq;
	if (want == NULL || g_strcmp0(want, hash) != 0 || strstr(line, pv) == NULL)
		return FALSE;
	g_free(*prev);
	*prev = g_strdup(hash);
	return TRUE;
}

static vulnid_status
db_chain_check(store *st, GError **err)
{
	g_autofree char *prev = g_strdup(AUDIT_GENESIS);
	gint64 broken = 0;
	vulnid_status s = store_audit_foreach(st, chain_link_ok, &prev, &broken, err);

	if (s != VULNID_OK)
		return s;
	if (broken != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the database chain is broken at event %"
				   G_GINT64_FORMAT "; nothing was rewritten", broken);
	return VULNID_OK;
}

vulnid_status
audit_repair(store *st, const char *path, guint64 *written, char **saved, GError **err)
{
	g_autofree char *start_hash = NULL;
	g_autofree char *tmp = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GBytes) old = NULL;
	vulnid_status s;
	gint64 after = 0;
	int fd = -1, tfd = -1, dfd;

	*written = 0;
	*saved = NULL;
	s = db_chain_check(st, err);
	if (s != VULNID_OK)
		return s;
	/* Block flushes meanwhile; they find the new file when we are done. */
	s = open_locked(path, &fd, err);
	if (s != VULNID_OK)
		return s;
	s = rotated_last_hash(path, &start_hash, err);
	if (s != VULNID_OK)
		goto out;
	if (*start_hash != '\0') {
		s = store_audit_seq_of_hash(st, start_hash, &after, err);
		if (s == VULNID_OK && after < 0)
			s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the newest rotated file of '%s' does not end"
					" in an event of the database chain; nothing was rewritten", path);
		if (s != VULNID_OK)
			goto out;
	}
	s = store_audit_lines_after(st, after, out, written, err);
	if (s != VULNID_OK)
		goto out;
	s = read_all(path, &old, err);
	if (s != VULNID_OK)
		goto out;
	if (g_bytes_get_size(old) == out->len && memcmp(g_bytes_get_data(old, NULL), out->str, out->len) == 0)
		goto out;	/* nothing lost */
	/* The damaged file is evidence: kept beside, never overwritten. */
	if (g_bytes_get_size(old) > 0) {
		g_autoptr(GDateTime) now = store_now_datetime();
		g_autofree char *ts = g_date_time_format(now, "%Y%m%dT%H%M%SZ");

		int rc2;

		/* A name of its own, even for two repairs in one second. */
		*saved = g_strdup_printf("%s.damaged-%s", path, ts);
		for (int k = 1; (rc2 = link(path, *saved)) < 0 && errno == EEXIST && k < 100; k++) {
			g_free(*saved);
			*saved = g_strdup_printf("%s.damaged-%s.%d", path, ts, k);
		}
		if (rc2 < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot keep '%s' as '%s': %s",
					path, *saved, g_strerror(errno));
			g_clear_pointer(saved, g_free);
			goto out;
		}
	}
	tmp = g_strdup_printf("%s.repair.XXXXXX", path);
	tfd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0600);
	if (tfd < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				tmp, g_strerror(errno));
		goto out;
	}
	if (!fileio_write_all(tfd, out->str, out->len)) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write '%s': %s",
				tmp, g_strerror(errno));
		goto out;
	}
	if (fsync(tfd) < 0 || rename(tmp, path) < 0) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot replace '%s': %s",
				path, g_strerror(errno));
		goto out;
	}
	g_clear_pointer(&tmp, g_free);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
out:
	if (tfd >= 0)
		close(tfd);
	if (tmp != NULL)
		unlink(tmp);
	close(fd);
	return s;
}
