/* feed-export.c - `vulnid export feed`: append what is new to the year
 * files, the log and the signed HEAD (doc/vulnid-feed.5) */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "audit.h"
#include "canonjson.h"
#include "crypto.h"
#include "entry.h"
#include "export.h"
#include "feed.h"
#include "feed-export.h"
#include "feed-private.h"
#include "jsonl-chain.h"
#include "feedlog.h"
#include "ids.h"
#include "store-export.h"

/* ---- lines ----------------------------------------------------------------------- */

/* {"feed":..,"year":..,"n":..,"pos":.. MEMBERS ,"prev":..,"hash":..}\n */
static void
line_build(GString *out, int year, guint64 n, gint64 pos, const char *members,
	   const char *prev, char hash_out[65])
{
	gsize start = out->len;
	gboolean first = TRUE;

	g_string_append_c(out, '{');
	canonjson_member_str(out, &first, "feed", FEED_FORMAT);
	canonjson_member_int(out, &first, "year", year);
	canonjson_member_int(out, &first, "n", (gint64) n);
	canonjson_member_int(out, &first, "pos", pos);
	g_string_append(out, members);
	jsonl_chain_seal(out, start, &first, prev, hash_out);
	g_string_append_c(out, '\n');
}

/* ---- export ----------------------------------------------------------------------- */

typedef struct {
	gint64 pos;
	gint64 seq;
	char *members;		/* from ,"type": to before ,"prev" */
} feed_item;

static void
feed_item_free(gpointer p)
{
	feed_item *it = p;

	g_free(it->members);
	g_free(it);
}

static gint
item_cmp(gconstpointer a, gconstpointer b)
{
	const feed_item *x = *(feed_item *const *) a;
	const feed_item *y = *(feed_item *const *) b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct {
	int year;
	char *name;		/* YYYY.jsonl */
	char *path;
	guint64 n;		/* lines in the file */
	gint64 pos, seq;	/* of its last line: the cursor */
	char hash[65];		/* of its last line, or the genesis */
	char *last_type, *last_entry, *last_sha;
	GPtrArray *items;	/* feed_item*, new */
} feed_year;

static void
feed_year_free(gpointer p)
{
	feed_year *y = p;

	g_free(y->name);
	g_free(y->path);
	g_free(y->last_type);
	g_free(y->last_entry);
	g_free(y->last_sha);
	g_ptr_array_unref(y->items);
	g_free(y);
}

/* Offset of the last '\n' before `before`, -1 if none; FALSE on a read
 * error or when more than limit bytes were searched. */
static gboolean
last_nl_before(int fd, off_t before, gsize limit, off_t *at)
{
	char buf[65536];
	off_t end = before;

	while (end > 0) {
		off_t start = end > (off_t) sizeof buf ? end - (off_t) sizeof buf : 0;
		ssize_t n = pread(fd, buf, (size_t) (end - start), start);
		char *p;

		if (n != end - start)
			return FALSE;
		p = memrchr(buf, '\n', (size_t) n);
		if (p != NULL) {
			*at = start + (p - buf);
			return TRUE;
		}
		end = start;
		if ((gsize) (before - end) > limit)
			return FALSE;
	}
	*at = -1;
	return TRUE;
}

/* Find where an existing year file ends: its last line gives the line
 * count, the cursor and the chain head.  A torn last line (an export
 * killed while writing) is cut off; it is written again. */
static vulnid_status
year_read_tail(feed_year *y, GError **err)
{
	g_autofree char *line = NULL;
	g_autofree char *h = NULL;
	g_autoptr(JsonParser) p = NULL;
	JsonObject *o;
	struct stat sb;
	off_t size, nl, start;
	gint64 n, year;
	int fd;

	memcpy(y->hash, GENESIS, 65);
	fd = open(y->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return VULNID_OK;
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s",
				   y->path, g_strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a regular file", y->path);
	}
	size = sb.st_size;
	if (size > 0) {
		char c;

		if (pread(fd, &c, 1, size - 1) != 1)
			goto ioerr;
		if (c != '\n') {
			if (!last_nl_before(fd, size, FEED_MAX_LINE_DEFAULT, &nl))
				goto ioerr;
			size = nl + 1;
			if (ftruncate(fd, size) < 0)
				goto ioerr;
		}
	}
	if (size == 0) {
		close(fd);
		return VULNID_OK;
	}
	if (!last_nl_before(fd, size - 1, FEED_MAX_LINE_DEFAULT, &nl))
		goto ioerr;
	start = nl + 1;
	line = g_malloc((gsize) (size - 1 - start) + 1);
	if (pread(fd, line, (size_t) (size - 1 - start), start) != size - 1 - start)
		goto ioerr;
	close(fd);
	line[size - 1 - start] = '\0';
	h = feed_line_hash(line, (gsize) (size - 1 - start));
	p = json_parser_new();
	if (h == NULL || memcmp(h, line + (size - 1 - start) - HASH_TAIL + HASH_KEY_LEN, 64) != 0 ||
	    !feed_json_depth_ok(line, (gsize) (size - 1 - start), FEED_MAX_DEPTH) ||
	    !json_parser_load_from_data(p, line, size - 1 - start, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is damaged"
				   " (vulnid verify-feed tells more)", y->path);
	o = json_node_get_object(json_parser_get_root(p));
	if (g_strcmp0(obj_str(o, "feed"), FEED_FORMAT) != 0 || !obj_int(o, "year", &year) ||
	    year != y->year || !obj_int(o, "n", &n) || n < 1 || !obj_int(o, "pos", &y->pos) ||
	    !obj_int(o, "seq", &y->seq) || obj_str(o, "type") == NULL || obj_str(o, "entry") == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is not a feed line", y->path);
	y->n = (guint64) n;
	memcpy(y->hash, h, 65);
	y->last_type = g_strdup(obj_str(o, "type"));
	y->last_entry = g_strdup(obj_str(o, "entry"));
	y->last_sha = g_strdup(obj_str(o, strcmp(y->last_type, "stub") == 0 ? "commitment" : "sha256"));
	return VULNID_OK;
ioerr:
	{
		int e = errno;

		close(fd);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot read '%s': %s", y->path,
				   g_strerror(e));
	}
}

/* The feed in DIR must be ours: its last line names a record of this
 * database with the same hash. */
static vulnid_status
year_check_owner(store *st, const feed_year *y, GError **err)
{
	g_autofree char *sha = NULL;
	vulnid_status s;

	if (y->n == 0)
		return VULNID_OK;
	s = store_export_record_sha256(st, y->last_entry != NULL ? y->last_entry : "", y->seq, &sha, err);
	if (s != VULNID_OK)
		return s;
	if (sha == NULL || g_strcmp0(sha, y->last_sha) != 0)
		return vulnid_fail(err, VULNID_ERR_INVALID,
				   "'%s' is not this instance's feed: its last line does not match record %s/%"
				   G_GINT64_FORMAT " of the database", y->path, y->last_entry, y->seq);
	return VULNID_OK;
}

/* Whether any record of e is sealed, and not disclosed, as of pos. */
static gboolean
embargoed_asof(const entry *e, gint64 pos)
{
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (r->rowid <= pos && entry_record_sealed_at(r, pos))
			return TRUE;
	}
	return FALSE;
}

/* A record's line: what it said, exactly as hashed, and its author as the
 * public view shows it (vr). */
static vulnid_status
record_members(const entry *e, const view_record *vr, char **out, GError **err)
{
	const entry_record *r = vr->r;
	g_autofree char *auth = feed_canonical_of(r->auth, JSON_NODE_OBJECT);
	g_autofree char *fields = feed_canonical_of(r->fields_json, JSON_NODE_ARRAY);
	g_autofree char *canon = NULL;
	g_autofree char *sha = NULL;
	GString *s;
	gboolean first = FALSE;

	/* What the feed says must recompute to the stored hash, or every
	 * verifier would reject the feed from here on. */
	if (auth == NULL || strcmp(auth, r->auth) != 0 || fields == NULL || strcmp(fields, r->fields_json) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "record %s/%" G_GINT64_FORMAT
				   ": auth or fields are not canonical JSON", e->id, r->seq);
	canon = entry_record_canonical(e->id, r->seq, r->created, r->kind_name, r->auth, r->subject,
				       r->fields_json, r->body, r->attachments);
	sha = feed_sha256_hex(canon, strlen(canon));
	if (g_strcmp0(sha, r->sha256) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "record %s/%" G_GINT64_FORMAT
				   ": its stored sha256 does not match its canonical bytes", e->id, r->seq);
	/* A release must disclose exactly what the opened record committed to
	 * (verify-feed(5), check 6). */
	for (guint i = 0; r->opens > 0 && i <= e->records->len; i++) {
		const entry_record *o = i < e->records->len ? g_ptr_array_index(e->records, i) : NULL;
		g_autofree char *c2 = NULL;
		g_autofree char *h2 = NULL;

		if (o != NULL && o->seq != r->opens)
			continue;
		if (o != NULL) {
			c2 = entry_record_canonical(e->id, o->seq, o->created, o->kind_name, o->auth, r->subject,
						    r->fields_json, r->body, r->attachments);
			h2 = feed_sha256_hex(c2, strlen(c2));
		}
		if (o == NULL || o->seq >= r->seq || g_strcmp0(h2, o->sha256) != 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "release %s/%" G_GINT64_FORMAT
					   " does not disclose what record %" G_GINT64_FORMAT " committed to",
					   e->id, r->seq, r->opens);
		break;
	}
	s = g_string_new(NULL);
	canonjson_member_str(s, &first, "type", "record");
	canonjson_member_str(s, &first, "entry", e->id);
	canonjson_member_int(s, &first, "seq", r->seq);
	canonjson_member_str(s, &first, "created", r->created);
	canonjson_member_str(s, &first, "kind", r->kind_name);
	canonjson_member_str(s, &first, "role", r->role_name);
	canonjson_member_str(s, &first, "author", vr->author);
	canonjson_key(s, &first, "opens");
	if (r->opens > 0)
		g_string_append_printf(s, "%" G_GINT64_FORMAT, r->opens);
	else
		g_string_append(s, "null");
	canonjson_key(s, &first, "auth");
	g_string_append(s, r->auth);
	canonjson_member_str(s, &first, "subject", r->subject);
	canonjson_key(s, &first, "fields");
	g_string_append(s, r->fields_json);
	canonjson_member_str(s, &first, "body", r->body);
	canonjson_key(s, &first, "attachments");
	entry_attachments_canonical(s, r->attachments);
	canonjson_member_str(s, &first, "sha256", r->sha256);
	*out = g_string_free(s, FALSE);
	return VULNID_OK;
}

static char *
stub_members(const entry *e, const entry_record *sealed)
{
	GString *s = g_string_new(NULL);
	gboolean first = FALSE;

	canonjson_member_str(s, &first, "type", "stub");
	canonjson_member_str(s, &first, "entry", e->id);
	canonjson_member_int(s, &first, "seq", sealed->seq);
	canonjson_member_str(s, &first, "digest", e->digest);
	canonjson_member_str(s, &first, "created", e->created);
	canonjson_member_str(s, &first, "state", "embargoed");
	canonjson_member_str(s, &first, "embargo", e->embargo != NULL && *e->embargo != '\0' ? e->embargo : "yes");
	canonjson_member_str(s, &first, "commitment", sealed->sha256);
	return g_string_free(s, FALSE);
}

static gint
view_rowid_cmp(gconstpointer a, gconstpointer b)
{
	const entry_record *x = (*(view_record *const *) a)->r;
	const entry_record *y = (*(view_record *const *) b)->r;

	return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

static gboolean
after_cursor(gint64 pos, gint64 seq, const feed_year *y)
{
	return pos > y->pos || (pos == y->pos && seq > y->seq);
}

/* The lines an entry contributes, each at the rowid of the record that
 * caused it: a public record at its own place; a sealed record as a stub,
 * its commitment, at its place; while anything is sealed nothing else; at
 * the release, every record held back until then, in seq order.  Authors
 * are shown as the public view shows them. */
static vulnid_status
gen_entry(const entry *e, const entry_view *v, feed_year *y, GError **err)
{
	guint n = v->records->len;
	g_autoptr(GPtrArray) order = g_ptr_array_sized_new(n);
	g_autoptr(GHashTable) emitted = g_hash_table_new(g_direct_hash, g_direct_equal);
	/* An entry withheld from the public (spam) keeps what it published:
	 * the record that withholds it is its last line (the public view
	 * hides it, the log does not lose it), and nothing follows. */
	gint64 withheld = v->withheld ? export_withheld_since(e) : 0;

	for (guint i = 0; i < n; i++)
		g_ptr_array_add(order, g_ptr_array_index(v->records, i));
	g_ptr_array_sort(order, view_rowid_cmp);
	for (guint k = 0; k < n; k++) {
		const entry_record *r = ((const view_record *) g_ptr_array_index(order, k))->r;
		gint64 pos = r->rowid;

		if (withheld > 0 && pos > withheld)
			break;

		if (embargoed_asof(e, pos)) {
			if (entry_record_sealed_at(r, pos) && after_cursor(pos, r->seq, y)) {
				feed_item *it = g_new0(feed_item, 1);

				it->pos = pos;
				it->seq = r->seq;
				it->members = stub_members(e, r);
				g_ptr_array_add(y->items, it);
			}
			continue;
		}
		for (guint j = 0; j < n; j++) {
			const view_record *x = g_ptr_array_index(v->records, j);
			feed_item *it;
			vulnid_status s;

			if (x->r->rowid > pos || g_hash_table_contains(emitted, x))
				continue;
			g_hash_table_add(emitted, (gpointer) x);
			if (!after_cursor(pos, x->r->seq, y))
				continue;
			it = g_new0(feed_item, 1);
			it->pos = pos;
			it->seq = x->r->seq;
			s = record_members(e, x, &it->members, err);
			if (s != VULNID_OK) {
				feed_item_free(it);
				return s;
			}
			g_ptr_array_add(y->items, it);
		}
	}
	return VULNID_OK;
}

static void
head_log(GString *s, gboolean *first, const char *name, const char *origin, guint64 size, const char *root)
{
	gboolean f = TRUE;

	canonjson_key(s, first, name);
	g_string_append_c(s, '{');
	canonjson_member_str(s, &f, "origin", origin);
	canonjson_member_int(s, &f, "size", (gint64) size);
	canonjson_member_str(s, &f, "root", root);
	g_string_append_c(s, '}');
}

static char *
head_text(const char *time, const char *fpr, gint64 pos, GPtrArray *years, const feedlog_state *log)
{
	GString *s = g_string_new("{");
	gboolean first = TRUE;

	canonjson_member_str(s, &first, "feed", FEED_FORMAT);
	canonjson_member_str(s, &first, "time", time);
	canonjson_member_str(s, &first, "robot", fpr);
	canonjson_member_int(s, &first, "pos", pos);
	canonjson_key(s, &first, "years");
	g_string_append_c(s, '[');
	for (guint i = 0, k = 0; i < years->len; i++) {
		const feed_year *y = g_ptr_array_index(years, i);
		gboolean f = TRUE;

		if (y->n == 0)
			continue;
		if (k++ > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '{');
		canonjson_member_int(s, &f, "year", y->year);
		canonjson_member_int(s, &f, "lines", (gint64) y->n);
		canonjson_member_str(s, &f, "hash", y->hash);
		g_string_append_c(s, '}');
	}
	g_string_append_c(s, ']');
	/* The version-1 log (frozen) as "checkpoint", the log as "log". */
	if (log != NULL && log->v1_origin != NULL)
		head_log(s, &first, "checkpoint", log->v1_origin, log->v1_size, log->v1_root);
	if (log != NULL && log->origin != NULL)
		head_log(s, &first, "log", log->origin, log->size, log->root);
	g_string_append(s, "}\n");
	return g_string_free(s, FALSE);
}

static gint
year_cmp(gconstpointer a, gconstpointer b)
{
	const feed_year *x = *(feed_year *const *) a;
	const feed_year *y = *(feed_year *const *) b;

	return x->year - y->year;
}

static feed_year *
year_new(const char *dir, int year)
{
	feed_year *y = g_new0(feed_year, 1);

	y->year = year;
	y->name = g_strdup_printf("%04d.jsonl", year);
	y->path = g_build_filename(dir, y->name, NULL);
	y->items = g_ptr_array_new_with_free_func(feed_item_free);
	memcpy(y->hash, GENESIS, 65);
	return y;
}

static vulnid_status
append_lines(feed_year *y, guint64 *appended, GError **err)
{
	g_autoptr(GString) out = g_string_new(NULL);
	int fd;

	if (y->items->len == 0)
		return VULNID_OK;
	g_ptr_array_sort(y->items, item_cmp);
	for (guint i = 0; i < y->items->len; i++) {
		const feed_item *it = g_ptr_array_index(y->items, i);
		char h[65];

		line_build(out, y->year, y->n + 1, it->pos, it->members, y->hash, h);
		y->n++;
		y->pos = it->pos;
		y->seq = it->seq;
		memcpy(y->hash, h, 65);
	}
	fd = open(y->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s",
				   y->path, g_strerror(errno));
	if (!fileio_write_all(fd, out->str, out->len)) {
		int e = errno;

		close(fd);
		/* A torn line is cut off by the next export. */
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot write '%s': %s",
				   y->path, g_strerror(e));
	}
	if (fdatasync(fd) < 0 && errno != EINVAL) {
		int e = errno;

		close(fd);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot sync '%s': %s",
				   y->path, g_strerror(e));
	}
	close(fd);
	*appended += y->items->len;
	return VULNID_OK;
}

/* The transparency log follows the year files, which are complete and
 * synced by now (feedlog.c); HEAD.json then names its checkpoint. */
static vulnid_status
log_update(const char *dir, const note_key *key, const char *fpr, GPtrArray *years, feedlog_state *log,
	   GError **err)
{
	g_autofree feedlog_file *files = g_new0(feedlog_file, years->len + 1);
	guint n = 0;

	if (key == NULL)
		return VULNID_OK;
	for (guint i = 0; i < years->len; i++) {
		const feed_year *y = g_ptr_array_index(years, i);

		if (y->n > 0)
			files[n++] = (feedlog_file) { y->path, y->n };
	}
	return feedlog_update(dir, key, fpr, files, n, log, err);
}

/* One exporter at a time per directory; the lock lives on the directory
 * itself, so no lock file is ever published. */
static vulnid_status
feed_lock_dir(const char *dir, int *dfd, GError **err)
{
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   dir, g_strerror(errno));
	*dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s",
				   dir, g_strerror(errno));
	while (flock(*dfd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(*dfd);
			*dfd = -1;
			return vulnid_fail(err, VULNID_ERR_IO, "cannot lock '%s': %s", dir, g_strerror(errno));
		}
	return VULNID_OK;
}

/* A string member of the JSON object in head, or NULL. */
static char *
head_member(GBytes *head, const char *name)
{
	g_autoptr(JsonParser) p = json_parser_new();
	const char *v = NULL;

	if (json_parser_load_from_data(p, g_bytes_get_data(head, NULL),
				       (gssize) g_bytes_get_size(head), NULL) &&
	    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		v = obj_str(json_node_get_object(json_parser_get_root(p)), name);
	return g_strdup(v);
}

/* Years the database has; a year file the database has no entry of means
 * the directory holds another instance's feed. */
static vulnid_status
feed_years(store *st, const char *dir, GPtrArray *years, GError **err)
{
	g_autoptr(GHashTable) by_year = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_autoptr(GArray) have = NULL;
	g_autoptr(GDir) d = NULL;
	const char *name;
	vulnid_status s = store_export_years(st, &have, err);

	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < have->len; i++) {
		feed_year *y = year_new(dir, g_array_index(have, int, i));

		g_ptr_array_add(years, y);
		g_hash_table_insert(by_year, GINT_TO_POINTER(y->year), y);
	}
	d = g_dir_open(dir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		int year;

		if (feed_year_file_name(name, &year) && !g_hash_table_contains(by_year, GINT_TO_POINTER(year)))
			return vulnid_fail(err, VULNID_ERR_INVALID,
					   "'%s/%s' is not this instance's feed: the database has no entry of %d",
					   dir, name, year);
	}
	return VULNID_OK;
}

/* The new lines of one year: every listed entry with a record at or after
 * the year's cursor. */
static vulnid_status
feed_year_generate(store *st, feed_year *y, GError **err)
{
	g_autoptr(GPtrArray) ids = NULL;
	vulnid_status s = year_read_tail(y, err);

	if (s == VULNID_OK)
		s = year_check_owner(st, y, err);
	if (s == VULNID_OK)
		s = store_export_year_entries(st, y->year, y->pos, &ids, err);
	for (guint k = 0; s == VULNID_OK && k < ids->len; k++) {
		g_autoptr(entry) e = NULL;
		g_autoptr(entry_view) v = NULL;

		s = entry_load(st, g_ptr_array_index(ids, k), &e, err);
		if (s != VULNID_OK)
			break;
		/* The feed is the public view, independent of the time of
		 * the export (sealing decides, not dates). */
		v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, NULL);
		s = gen_entry(e, v, y, err);
	}
	return s;
}

/* Everything read from the database, in one read transaction: the years,
 * the position, the new lines of each year (kept in memory). */
static vulnid_status
feed_read(store *st, const char *dir, GPtrArray *years, feed_export_result *res, GError **err)
{
	vulnid_status s = store_export_read_begin(st, err);

	if (s != VULNID_OK)
		return s;
	s = feed_years(st, dir, years, err);
	if (s == VULNID_OK)
		s = store_export_last_record(st, &res->pos, err);
	for (guint i = 0; s == VULNID_OK && i < years->len; i++)
		s = feed_year_generate(st, g_ptr_array_index(years, i), err);
	store_rollback(st);
	return s;
}

/* HEAD changes only when the feed does: an unchanged feed keeps its signed
 * HEAD, and a mirror makes no empty commit. */
static gboolean
feed_head_unchanged(const char *dir, GBytes *old_head, const char *fpr, gint64 pos,
		    GPtrArray *years, const feedlog_state *log)
{
	g_autofree char *sig_path = g_build_filename(dir, FEED_HEAD_SIG, NULL);
	g_autofree char *old_time = NULL;
	g_autofree char *same = NULL;

	if (old_head == NULL || !g_file_test(sig_path, G_FILE_TEST_IS_REGULAR))
		return FALSE;
	old_time = head_member(old_head, "time");
	if (old_time == NULL)
		return FALSE;
	same = head_text(old_time, fpr, pos, years, log);
	return strlen(same) == g_bytes_get_size(old_head) &&
	       memcmp(same, g_bytes_get_data(old_head, NULL), strlen(same)) == 0;
}

/* Sign and write HEAD (signature first, so that a HEAD is never newer
 * than its signature). */
static vulnid_status
feed_write_head(const char *dir, const char *fpr, const char *head, GError **err)
{
	g_autofree char *head_path = g_build_filename(dir, FEED_HEAD, NULL);
	g_autofree char *sig_path = g_build_filename(dir, FEED_HEAD_SIG, NULL);
	g_autoptr(GBytes) hb = g_bytes_new(head, strlen(head));
	g_autoptr(GBytes) sig = NULL;
	vulnid_status s = crypto_sign_detached(hb, fpr, &sig, err);

	if (s == VULNID_OK)
		s = export_write_file(sig_path, g_bytes_get_data(sig, NULL), g_bytes_get_size(sig), 0644, err);
	if (s == VULNID_OK)
		s = export_write_file(head_path, head, strlen(head), 0644, err);
	return s;
}

/* The public key beside the feed, for convenience: a verifier should get
 * it (or its fingerprint) from somewhere else too. */
static vulnid_status
feed_write_key(const char *dir, const char *fpr, GError **err)
{
	g_autofree char *key_path = g_build_filename(dir, FEED_KEY, NULL);
	g_autoptr(GBytes) pub = NULL;
	g_autoptr(GBytes) have = NULL;
	int e_no;

	if (crypto_export_public(fpr, &pub, NULL) != VULNID_OK)
		return VULNID_OK;
	have = feed_read_small(key_path, FEED_MAX_SIG, &e_no);
	if (have != NULL && g_bytes_equal(have, pub))
		return VULNID_OK;
	return export_write_file(key_path, g_bytes_get_data(pub, NULL), g_bytes_get_size(pub), 0644, err);
}

/* The year files, the log and the signed HEAD, from the lines read; then
 * the witnesses' cosignatures on the log's checkpoint. */
static vulnid_status
feed_publish(const char *dir, const feed_export_opts *o, const char *fpr, GBytes *old_head,
	     GPtrArray *years, feed_export_result *res, GError **err)
{
	feedlog_state log = { 0 };
	feedlog_cosign_result cr = { 0 };
	g_autofree char *now = store_now();
	g_autofree char *head = NULL;
	vulnid_status s = VULNID_OK;

	for (guint i = 0; s == VULNID_OK && i < years->len; i++)
		s = append_lines(g_ptr_array_index(years, i), &res->appended, err);
	if (s != VULNID_OK)
		return s;
	g_ptr_array_sort(years, year_cmp);
	for (guint i = 0; i < years->len; i++)
		res->years += ((feed_year *) g_ptr_array_index(years, i))->n > 0;
	s = log_update(dir, o->log_key, fpr, years, &log, err);
	if (s != VULNID_OK)
		goto out;
	res->log_size = log.size;
	res->log_appended = log.appended;
	res->checkpoint_written = log.checkpoint_written;
	if (!feed_head_unchanged(dir, old_head, fpr, res->pos, years, &log)) {
		head = head_text(now, fpr, res->pos, years, &log);
		s = feed_write_head(dir, fpr, head, err);
		if (s != VULNID_OK)
			goto out;
		res->head_written = TRUE;
	}
	s = feed_write_key(dir, fpr, err);
	/* Last: a witness that is slow or down delays nothing of the feed. */
	if (s == VULNID_OK && o->log_key != NULL && o->witnesses != NULL && o->witnesses->len > 0) {
		g_autofree char *logdir = g_build_filename(dir, FEEDLOG_DIR, NULL);

		s = feedlog_cosign(logdir, o->log_key, o->witnesses, log.old_size, o->post, o->post_data, &cr, err);
		res->witnesses = cr.witnesses;
		res->cosigned = cr.cosigned;
		res->cosignatures_added = cr.added;
		res->witness_problems = g_steal_pointer(&cr.problems);
	}
out:
	feedlog_cosign_result_clear(&cr);
	feedlog_state_clear(&log);
	return s;
}

void
feed_export_result_clear(feed_export_result *res)
{
	g_clear_pointer(&res->witness_problems, g_ptr_array_unref);
}

vulnid_status
feed_export(store *st, const char *dir, const feed_export_opts *o, feed_export_result *res, GError **err)
{
	g_autoptr(GPtrArray) years = g_ptr_array_new_with_free_func(feed_year_free);
	g_autofree char *fpr = NULL;
	g_autofree char *head_path = g_build_filename(dir, FEED_HEAD, NULL);
	g_autoptr(GBytes) old_head = NULL;
	vulnid_status s;
	int dfd = -1, e_no;

	memset(res, 0, sizeof *res);
	s = crypto_robot_fingerprint(&fpr, err);
	if (s != VULNID_OK)
		return s;
	s = feed_lock_dir(dir, &dfd, err);
	if (s != VULNID_OK)
		return s;
	old_head = feed_read_small(head_path, FEED_MAX_HEAD, &e_no);
	if (old_head != NULL) {
		g_autofree char *robot = head_member(old_head, "robot");

		if (robot == NULL || g_ascii_strcasecmp(robot, fpr) != 0) {
			s = vulnid_fail(err, VULNID_ERR_INVALID,
					"'%s' belongs to another robot's feed (fingerprint %s, not %s)",
					head_path, robot != NULL ? robot : "unreadable", fpr);
			goto out;
		}
	}
	/* every check of what is published before anything is written */
	if (o->log_key != NULL)
		s = feedlog_check_published(dir, o->log_key, err);
	if (s == VULNID_OK)
		s = feed_read(st, dir, years, res, err);
	if (s == VULNID_OK)
		s = feed_publish(dir, o, fpr, old_head, years, res, err);
out:
	close(dfd);
	return s;
}
