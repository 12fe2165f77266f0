/* feed-verify.c - the offline verifier of a feed (`vulnid verify-feed`):
 * every line, chain and commitment against a signed HEAD */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "crypto.h"
#include "entry.h"
#include "export.h"
#include "feed.h"
#include "feed-verify.h"
#include "feed-private.h"
#include "feedlog.h"
#include "ids.h"
#include "store-export.h"

/* ---- verification ------------------------------------------------------------------- */

typedef struct {
	char *created, *kind, *auth, *sha256;
} rec_meta;

static void
rec_meta_free(gpointer p)
{
	rec_meta *m = p;

	g_free(m->created);
	g_free(m->kind);
	g_free(m->auth);
	g_free(m->sha256);
	g_free(m);
}

typedef struct {
	gint64 last_record;	/* highest record seq so far */
	char *digest;		/* record 1's hash, from it or from a stub */
	GHashTable *pending;	/* seq -> commitment (char*): stubs not yet disclosed */
	gint64 stub_max;	/* the highest seq a stub was published for */
	GHashTable *recs;	/* seq -> rec_meta* */
} ent_state;

static void
ent_state_free(gpointer p)
{
	ent_state *s = p;

	g_free(s->digest);
	g_hash_table_unref(s->pending);
	g_hash_table_unref(s->recs);
	g_free(s);
}

typedef struct {
	guint file;
	off_t off;
	gsize len;
	gint64 pos, seq;
	char sha[65];		/* of the whole line */
} out_ref;

typedef struct {
	int year;
	char *path;
	gint64 lines;
	char *hash;
} head_year;

static void
head_year_free(gpointer p)
{
	head_year *h = p;

	g_free(h->path);
	g_free(h->hash);
	g_free(h);
}

typedef struct {
	char *time, *robot;
	gint64 pos;
	GPtrArray *years;	/* head_year* */
	char *log_origin, *log_root;	/* the log's checkpoint it names ("log"), or NULL */
	gint64 log_size;
	char *v1_origin, *v1_root;	/* the version-1 log's ("checkpoint"), or NULL */
	gint64 v1_size;
} head_info;

static void
head_info_free(head_info *h)
{
	if (h == NULL)
		return;
	g_free(h->time);
	g_free(h->robot);
	g_free(h->log_origin);
	g_free(h->log_root);
	g_free(h->v1_origin);
	g_free(h->v1_root);
	g_ptr_array_unref(h->years);
	g_free(h);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(head_info, head_info_free)

typedef struct {
	const char *dir;
	const feed_verify_opts *o;
	gsize max_line;
	feed_verify_result *res;
	GHashTable *entries;	/* id -> ent_state* */
	GArray *out;		/* out_ref */
	const head_info *head;
} vctx;

static vulnid_status
vfail(vctx *c, const char *path, guint64 line, GError **err, const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static vulnid_status
vfail(vctx *c, const char *path, guint64 line, GError **err, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_free(c->res->bad_file);
	c->res->bad_file = g_strdup(path);
	c->res->bad_line = line;
	if (line > 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "%s: line %" G_GUINT64_FORMAT ": %s", path, line, msg);
	return vulnid_fail(err, VULNID_ERR_CORRUPT, "%s: %s", path, msg);
}

static gboolean
members_are(JsonObject *o, const char *const *want)
{
	g_autoptr(GList) names = json_object_get_members(o);
	GList *l = names;

	for (; *want != NULL; want++, l = l->next)
		if (l == NULL || strcmp(l->data, *want) != 0)
			return FALSE;
	return l == NULL;
}

static const char *const record_members_list[] = {
	"feed", "year", "n", "pos", "type", "entry", "seq", "created", "kind", "role", "author",
	"opens", "auth", "subject", "fields", "body", "attachments", "sha256", "prev", "hash", NULL
};
static const char *const stub_members_list[] = {
	"feed", "year", "n", "pos", "type", "entry", "seq", "digest", "created", "state", "embargo",
	"commitment", "prev", "hash", NULL
};
/* Without a log (feeds from before it), with the version-1 log alone, with
 * both (the version-1 log frozen), with the log alone. */
static const char *const head_members_list[] = { "feed", "time", "robot", "pos", "years", NULL };
static const char *const head_members_v1[] = { "feed", "time", "robot", "pos", "years", "checkpoint", NULL };
static const char *const head_members_both[] = { "feed", "time", "robot", "pos", "years", "checkpoint", "log",
						 NULL };
static const char *const head_members_log[] = { "feed", "time", "robot", "pos", "years", "log", NULL };
static const char *const head_checkpoint_members[] = { "origin", "size", "root", NULL };
static const char *const head_year_members[] = { "year", "lines", "hash", NULL };

static gboolean
node_is(JsonNode *n, GType t)
{
	return n != NULL && JSON_NODE_TYPE(n) == JSON_NODE_VALUE && json_node_get_value_type(n) == t;
}

static gboolean
str_or_null(JsonObject *o, const char *name, const char **v)
{
	JsonNode *n = json_object_get_member(o, name);

	if (n != NULL && JSON_NODE_TYPE(n) == JSON_NODE_NULL) {
		*v = NULL;
		return TRUE;
	}
	*v = obj_str(o, name);
	return *v != NULL;
}

static gboolean
hex_member(JsonObject *o, const char *name, const char **v)
{
	*v = obj_str(o, name);
	return *v != NULL && feed_is_hex64(*v, strlen(*v));
}

/* Attachments of a line as entry_attachment*, or NULL if malformed. */
static GPtrArray *
line_attachments(JsonArray *a)
{
	static const char *const names[] = { "sha256", "size", "content_type", "filename", NULL };
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(entry_attachment_free);

	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonNode *n = json_array_get_element(a, i);
		JsonObject *o;
		entry_attachment *att;
		const char *sha, *ct, *fn;
		gint64 size;

		if (!JSON_NODE_HOLDS_OBJECT(n))
			return NULL;
		o = json_node_get_object(n);
		if (!members_are(o, names) || !hex_member(o, "sha256", &sha) || !obj_int(o, "size", &size) ||
		    size < 0 || (ct = obj_str(o, "content_type")) == NULL || !str_or_null(o, "filename", &fn))
			return NULL;
		att = g_new0(entry_attachment, 1);
		att->sha256 = g_strdup(sha);
		att->size = size;
		att->content_type = g_strdup(ct);
		att->filename = g_strdup(fn);
		g_ptr_array_add(out, att);
	}
	return g_steal_pointer(&out);
}

static gboolean
fields_ok(JsonArray *a)
{
	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonNode *n = json_array_get_element(a, i);
		JsonArray *kv;

		if (!JSON_NODE_HOLDS_ARRAY(n))
			return FALSE;
		kv = json_node_get_array(n);
		if (json_array_get_length(kv) != 2 || !node_is(json_array_get_element(kv, 0), G_TYPE_STRING) ||
		    !node_is(json_array_get_element(kv, 1), G_TYPE_STRING))
			return FALSE;
	}
	return TRUE;
}

static ent_state *
ent_get(vctx *c, const char *id, gboolean *is_new)
{
	ent_state *s = g_hash_table_lookup(c->entries, id);

	*is_new = s == NULL;
	if (s == NULL) {
		s = g_new0(ent_state, 1);
		s->recs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, rec_meta_free);
		s->pending = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
		g_hash_table_insert(c->entries, g_strdup(id), s);
	}
	return s;
}

static vulnid_status
check_record(vctx *c, const char *path, guint64 n, JsonObject *o, const char *id, gint64 seq,
	     GError **err)
{
	const char *created, *kind, *role, *author, *subject, *body, *sha;
	JsonNode *auth_n = json_object_get_member(o, "auth");
	JsonNode *fields_n = json_object_get_member(o, "fields");
	JsonNode *att_n = json_object_get_member(o, "attachments");
	JsonNode *opens_n = json_object_get_member(o, "opens");
	g_autofree char *auth = NULL;
	g_autofree char *fields = NULL;
	g_autofree char *canon = NULL;
	g_autofree char *mine = NULL;
	g_autoptr(GPtrArray) atts = NULL;
	gint64 opens = 0;
	gboolean is_new;
	ent_state *es;
	rec_meta *m;

	if ((created = obj_str(o, "created")) == NULL || (kind = obj_str(o, "kind")) == NULL ||
	    (role = obj_str(o, "role")) == NULL || !str_or_null(o, "author", &author) ||
	    !str_or_null(o, "subject", &subject) || (body = obj_str(o, "body")) == NULL ||
	    !hex_member(o, "sha256", &sha) || !JSON_NODE_HOLDS_OBJECT(auth_n) ||
	    !JSON_NODE_HOLDS_ARRAY(fields_n) || !fields_ok(json_node_get_array(fields_n)) ||
	    !JSON_NODE_HOLDS_ARRAY(att_n) ||
	    (atts = line_attachments(json_node_get_array(att_n))) == NULL ||
	    !(JSON_NODE_TYPE(opens_n) == JSON_NODE_NULL || (obj_int(o, "opens", &opens) && opens >= 1)))
		return vfail(c, path, n, err, "record %s/%" G_GINT64_FORMAT ": a member has the wrong type", id, seq);
	auth = feed_json_canonical(auth_n);
	fields = feed_json_canonical(fields_n);
	canon = entry_record_canonical(id, seq, created, kind, auth, subject, fields, body, atts);
	mine = feed_sha256_hex(canon, strlen(canon));
	if (strcmp(mine, sha) != 0)
		return vfail(c, path, n, err, "record %s/%" G_GINT64_FORMAT
			     ": sha256 does not match the record's canonical bytes", id, seq);

	es = ent_get(c, id, &is_new);
	if (is_new && seq != 1)
		return vfail(c, path, n, err, "entry %s starts with record %" G_GINT64_FORMAT ", not 1", id, seq);
	if (seq <= es->last_record)
		return vfail(c, path, n, err, "record %s/%" G_GINT64_FORMAT " repeated or out of order", id, seq);
	if (g_hash_table_size(es->pending) > 0) {
		/* A sealed record, disclosed, must be what its stub committed
		 * to; nothing newer than the sealed records is published
		 * while one of them is still sealed. */
		const char *commitment = g_hash_table_lookup(es->pending, &seq);

		if (commitment == NULL && seq > es->stub_max)
			return vfail(c, path, n, err, "record %s/%" G_GINT64_FORMAT
				     " published while the entry is under embargo", id, seq);
		if (commitment != NULL && strcmp(sha, commitment) != 0)
			return vfail(c, path, n, err, "record %s/%" G_GINT64_FORMAT
				     " does not match the commitment published for it", id, seq);
		if (commitment != NULL) {
			g_hash_table_remove(es->pending, &seq);
			if (g_hash_table_size(es->pending) == 0)
				c->res->released++;
		}
	}
	if (seq == 1) {
		if (es->digest != NULL && strcmp(es->digest, sha) != 0)
			return vfail(c, path, n, err, "record %s/1 does not match the entry's digest", id);
		g_free(es->digest);
		es->digest = g_strdup(sha);
	}
	if (opens > 0) {
		const rec_meta *om = g_hash_table_lookup(es->recs, &opens);
		g_autofree char *c2 = NULL;
		g_autofree char *h2 = NULL;

		if (opens >= seq || om == NULL)
			return vfail(c, path, n, err, "release %s/%" G_GINT64_FORMAT " opens record %" G_GINT64_FORMAT
				     ", which the feed does not hold before it", id, seq, opens);
		/* The disclosed content, in the sealed record's place, must
		 * hash to the sealed record's commitment. */
		c2 = entry_record_canonical(id, opens, om->created, om->kind, om->auth, subject, fields, body, atts);
		h2 = feed_sha256_hex(c2, strlen(c2));
		if (strcmp(h2, om->sha256) != 0)
			return vfail(c, path, n, err, "release %s/%" G_GINT64_FORMAT
				     ": the disclosed content does not match the commitment of record %"
				     G_GINT64_FORMAT, id, seq, opens);
	}
	es->last_record = seq;
	m = g_new0(rec_meta, 1);
	m->created = g_strdup(created);
	m->kind = g_strdup(kind);
	m->auth = g_steal_pointer(&auth);
	m->sha256 = g_strdup(sha);
	{
		gint64 *k = g_new(gint64, 1);

		*k = seq;
		g_hash_table_insert(es->recs, k, m);
	}
	return VULNID_OK;
}

static vulnid_status
check_stub(vctx *c, const char *path, guint64 n, JsonObject *o, const char *id, gint64 seq, GError **err)
{
	const char *digest, *commitment, *created, *embargo;
	gboolean is_new;
	ent_state *es;

	if (!hex_member(o, "digest", &digest) || !hex_member(o, "commitment", &commitment) ||
	    (created = obj_str(o, "created")) == NULL || (embargo = obj_str(o, "embargo")) == NULL ||
	    g_strcmp0(obj_str(o, "state"), "embargoed") != 0)
		return vfail(c, path, n, err, "stub %s/%" G_GINT64_FORMAT ": a member has the wrong value", id, seq);
	es = ent_get(c, id, &is_new);
	if (is_new && seq != 1)
		return vfail(c, path, n, err, "entry %s starts with a stub for record %" G_GINT64_FORMAT
			     ", not 1", id, seq);
	if (seq <= es->stub_max)
		return vfail(c, path, n, err, "stub %s/%" G_GINT64_FORMAT " repeated or out of order", id, seq);
	if (seq <= es->last_record)
		return vfail(c, path, n, err, "stub %s/%" G_GINT64_FORMAT " for a record already published", id, seq);
	if (seq == 1 && strcmp(digest, commitment) != 0)
		return vfail(c, path, n, err, "stub %s/1: the commitment is not the entry's digest", id);
	if (es->digest != NULL && strcmp(es->digest, digest) != 0)
		return vfail(c, path, n, err, "stub %s: the digest differs from the entry's", id);
	if (es->digest == NULL)
		es->digest = g_strdup(digest);
	{
		gint64 *k = g_new(gint64, 1);

		*k = seq;
		g_hash_table_insert(es->pending, k, g_strdup(commitment));
	}
	es->stub_max = seq;
	return VULNID_OK;
}

typedef struct {
	guint64 n;
	gint64 pos, seq;
	char *entry;
	char prev[65];
} file_state;

static vulnid_status
check_line(vctx *c, const char *path, int year, file_state *fs, const char *line, gsize len,
	   char hash_out[65], GError **err)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(GError) pe = NULL;
	g_autofree char *h = feed_line_hash(line, len);
	g_autofree char *canon = NULL;
	JsonNode *root;
	JsonObject *o;
	const char *type, *id, *prev;
	gint64 ly, ln, pos, seq;
	int ey = 0;
	guint64 n = fs->n;

	if (h == NULL)
		return vfail(c, path, n, err, "has no hash at its end");
	if (memcmp(h, line + len - HASH_TAIL + HASH_KEY_LEN, 64) != 0)
		return vfail(c, path, n, err, "hash does not match its content");
	if (!feed_json_depth_ok(line, len, FEED_MAX_DEPTH))
		return vfail(c, path, n, err, "nests deeper than %d levels", FEED_MAX_DEPTH);
	if (!json_parser_load_from_data(p, line, (gssize) len, &pe))
		return vfail(c, path, n, err, "is not JSON: %s", pe->message);
	root = json_parser_get_root(p);
	if (!JSON_NODE_HOLDS_OBJECT(root))
		return vfail(c, path, n, err, "is not a JSON object");
	/* Exactly one text per content: no other spacing, escaping, member
	 * order or duplicate member can hide in a line that hashes right. */
	canon = feed_json_canonical(root);
	if (canon == NULL || strlen(canon) != len || memcmp(canon, line, len) != 0)
		return vfail(c, path, n, err, "is not in canonical form");
	o = json_node_get_object(root);
	type = obj_str(o, "type");
	if (type == NULL || !(strcmp(type, "record") == 0 ? members_are(o, record_members_list)
			      : strcmp(type, "stub") == 0 && members_are(o, stub_members_list)))
		return vfail(c, path, n, err, "is not a record or stub line of %s", FEED_FORMAT);
	prev = obj_str(o, "prev");
	if ((prev == NULL || strcmp(prev, fs->prev) != 0) && n > 1)
		return vfail(c, path, n, err, "does not follow line %" G_GUINT64_FORMAT " (prev hash differs)",
			     n - 1);
	if (prev == NULL || strcmp(prev, fs->prev) != 0)
		return vfail(c, path, n, err, "does not start the chain (prev is not the genesis)");
	if (g_strcmp0(obj_str(o, "feed"), FEED_FORMAT) != 0 || !obj_int(o, "year", &ly) || ly != year)
		return vfail(c, path, n, err, "belongs to another feed or year");
	if (!obj_int(o, "n", &ln) || ln != (gint64) n)
		return vfail(c, path, n, err, "is numbered %" G_GINT64_FORMAT, ln);
	if (!obj_int(o, "pos", &pos) || !obj_int(o, "seq", &seq) || pos < 1 || seq < 1 ||
	    (id = obj_str(o, "entry")) == NULL)
		return vfail(c, path, n, err, "has no valid pos, seq or entry");
	if (!ids_parse(id, NULL, &ey, NULL) || ey != year)
		return vfail(c, path, n, err, "names '%s', not an identifier of %d", id, year);
	if (pos > c->head->pos)
		return vfail(c, path, n, err, "pos %" G_GINT64_FORMAT " is beyond HEAD.json's %" G_GINT64_FORMAT,
			     pos, c->head->pos);
	if (pos < fs->pos || (pos == fs->pos && (seq <= fs->seq || g_strcmp0(id, fs->entry) != 0)))
		return vfail(c, path, n, err, "is out of order (pos %" G_GINT64_FORMAT ", seq %" G_GINT64_FORMAT
			     " after pos %" G_GINT64_FORMAT ", seq %" G_GINT64_FORMAT ")", pos, seq, fs->pos, fs->seq);
	if (strcmp(type, "record") == 0) {
		vulnid_status s = check_record(c, path, n, o, id, seq, err);

		if (s != VULNID_OK)
			return s;
	} else {
		vulnid_status s = check_stub(c, path, n, o, id, seq, err);

		if (s != VULNID_OK)
			return s;
	}
	fs->pos = pos;
	fs->seq = seq;
	g_free(fs->entry);
	fs->entry = g_strdup(id);
	memcpy(hash_out, h, 65);
	return VULNID_OK;
}

typedef struct {
	int fd;
	char buf[65536];
	gsize start, end;
	off_t off;
	gboolean eof;
} lreader;

/* 1: a line (without '\n') in line, *had_nl; 0: end; -1: read error;
 * -2: longer than max. */
static int
lreader_next(lreader *r, GString *line, gsize max, gboolean *had_nl, off_t *line_off)
{
	g_string_truncate(line, 0);
	*line_off = r->off;
	*had_nl = FALSE;
	for (;;) {
		char *nl;
		gsize take;

		if (r->start == r->end) {
			ssize_t n;

			if (r->eof)
				return line->len > 0 ? 1 : 0;
			n = read(r->fd, r->buf, sizeof r->buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -1;
			if (n == 0) {
				r->eof = TRUE;
				continue;
			}
			r->start = 0;
			r->end = (gsize) n;
		}
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		take = nl != NULL ? (gsize) (nl - (r->buf + r->start)) : r->end - r->start;
		if (line->len + take > max)
			return -2;
		g_string_append_len(line, r->buf + r->start, (gssize) take);
		r->start += take;
		r->off += (off_t) take;
		if (nl != NULL) {
			r->start++;
			r->off++;
			*had_nl = TRUE;
			return 1;
		}
	}
}

static int
open_regular(const char *path, int *err_no)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		*err_no = errno;
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		*err_no = EINVAL;
		return -1;
	}
	return fd;
}

static vulnid_status
verify_year(vctx *c, guint file_idx, const head_year *hy, const head_year *prev_y, GError **err)
{
	g_autoptr(GString) line = g_string_new(NULL);
	g_autofree lreader *r = g_new0(lreader, 1);
	file_state fs = { 0, 0, 0, NULL, GENESIS };
	g_autofree char *prev_hash_at = NULL;
	vulnid_status s = VULNID_OK;
	int e_no = 0, rc;
	gboolean had_nl;
	off_t off;

	r->fd = open_regular(hy->path, &e_no);
	if (r->fd < 0)
		return vfail(c, hy->path, 0, err, "cannot read: %s", g_strerror(e_no));
	while ((rc = lreader_next(r, line, c->max_line, &had_nl, &off)) == 1) {
		char h[65];

		fs.n++;
		if (!had_nl) {
			s = vfail(c, hy->path, fs.n, err, "truncated (no newline at the end)");
			break;
		}
		s = check_line(c, hy->path, hy->year, &fs, line->str, line->len, h, err);
		if (s != VULNID_OK)
			break;
		memcpy(fs.prev, h, 65);
		if (prev_y != NULL && (gint64) fs.n == prev_y->lines)
			prev_hash_at = g_strdup(h);
		if (c->o->since >= 0 && fs.pos > c->o->since) {
			out_ref ref = { file_idx, off, line->len, fs.pos, fs.seq, { 0 } };
			g_autofree char *full = feed_sha256_hex(line->str, line->len);

			memcpy(ref.sha, full, 65);
			g_array_append_val(c->out, ref);
		}
	}
	close(r->fd);
	g_free(fs.entry);
	if (s != VULNID_OK)
		return s;
	if (rc == -2)
		return vfail(c, hy->path, fs.n + 1, err, "longer than %" G_GSIZE_FORMAT " bytes", c->max_line);
	if (rc < 0)
		return vfail(c, hy->path, 0, err, "cannot read: %s", g_strerror(errno));
	if ((gint64) fs.n < hy->lines)
		return vfail(c, hy->path, fs.n + 1, err, "missing: the file ends after line %" G_GUINT64_FORMAT
			     ", HEAD.json says %" G_GINT64_FORMAT " lines", fs.n, hy->lines);
	if ((gint64) fs.n > hy->lines)
		return vfail(c, hy->path, (guint64) hy->lines + 1, err,
			     "not covered by HEAD.json (it says %" G_GINT64_FORMAT " lines)", hy->lines);
	if (strcmp(fs.prev, hy->hash) != 0)
		return vfail(c, hy->path, fs.n, err, "the chain ends in another hash than HEAD.json names");
	if (prev_y != NULL && (prev_hash_at == NULL || strcmp(prev_hash_at, prev_y->hash) != 0))
		return vfail(c, hy->path, (guint64) prev_y->lines, err,
			     "differs from the previously verified feed (history rewritten)");
	c->res->lines += fs.n;
	return VULNID_OK;
}

/* A checkpoint HEAD.json names (vulnid-feed(5), LOG), if any. */
static gboolean
head_checkpoint(JsonObject *o, const char *name, char **origin, gint64 *size, char **root)
{
	JsonNode *cn = json_object_get_member(o, name);
	JsonObject *co;

	if (cn == NULL)
		return TRUE;
	if (!JSON_NODE_HOLDS_OBJECT(cn))
		return FALSE;
	co = json_node_get_object(cn);
	if (!members_are(co, head_checkpoint_members) || obj_str(co, "origin") == NULL ||
	    !obj_int(co, "size", size) || *size < 0 || obj_str(co, "root") == NULL)
		return FALSE;
	*origin = g_strdup(obj_str(co, "origin"));
	*root = g_strdup(obj_str(co, "root"));
	return TRUE;
}

/* HEAD.json as written by feed_export (canonical, one line). */
static head_info *
head_parse(const char *dir, GBytes *b, gboolean strict, const char **why)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(head_info) h = g_new0(head_info, 1);
	g_autofree char *canon = NULL;
	gsize len;
	const char *text = g_bytes_get_data(b, &len);
	JsonNode *root, *yn;
	JsonObject *o;
	JsonArray *ya;
	int last = 0;

	h->years = g_ptr_array_new_with_free_func(head_year_free);
	*why = "is not a feed HEAD";
	if (len == 0 || text[len - 1] != '\n' || !feed_json_depth_ok(text, len, FEED_MAX_DEPTH) ||
	    !json_parser_load_from_data(p, text, (gssize) len - 1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	if (!JSON_NODE_HOLDS_OBJECT(root))
		return NULL;
	canon = feed_json_canonical(root);
	if (strict && (canon == NULL || strlen(canon) != len - 1 || memcmp(canon, text, len - 1) != 0)) {
		*why = "is not in canonical form";
		return NULL;
	}
	o = json_node_get_object(root);
	yn = json_object_get_member(o, "years");
	if (!head_checkpoint(o, "checkpoint", &h->v1_origin, &h->v1_size, &h->v1_root) ||
	    !head_checkpoint(o, "log", &h->log_origin, &h->log_size, &h->log_root) ||
	    !(members_are(o, head_members_list) || members_are(o, head_members_v1) ||
	      members_are(o, head_members_both) || members_are(o, head_members_log)) ||
	    g_strcmp0(obj_str(o, "feed"), FEED_FORMAT) != 0 ||
	    obj_str(o, "time") == NULL || obj_str(o, "robot") == NULL || !obj_int(o, "pos", &h->pos) ||
	    h->pos < 0 || !JSON_NODE_HOLDS_ARRAY(yn))
		return NULL;
	h->time = g_strdup(obj_str(o, "time"));
	h->robot = g_strdup(obj_str(o, "robot"));
	ya = json_node_get_array(yn);
	if (json_array_get_length(ya) > FEED_MAX_YEARS) {
		*why = "names too many years";
		return NULL;
	}
	for (guint i = 0; i < json_array_get_length(ya); i++) {
		JsonNode *en = json_array_get_element(ya, i);
		JsonObject *eo;
		head_year *hy;
		const char *hash;
		gint64 year, lines;

		if (!JSON_NODE_HOLDS_OBJECT(en))
			return NULL;
		eo = json_node_get_object(en);
		if (!members_are(eo, head_year_members) || !obj_int(eo, "year", &year) || year <= last ||
		    year > 9999 || !obj_int(eo, "lines", &lines) || lines < 1 || !hex_member(eo, "hash", &hash))
			return NULL;
		last = (int) year;
		hy = g_new0(head_year, 1);
		hy->year = (int) year;
		hy->lines = lines;
		hy->hash = g_strdup(hash);
		hy->path = g_strdup_printf("%s/%04d.jsonl", dir, hy->year);
		g_ptr_array_add(h->years, hy);
	}
	return g_steal_pointer(&h);
}

static const head_year *
head_find(const head_info *h, int year)
{
	for (guint i = 0; h != NULL && i < h->years->len; i++) {
		const head_year *y = g_ptr_array_index(h->years, i);

		if (y->year == year)
			return y;
	}
	return NULL;
}

void
feed_verify_result_clear(feed_verify_result *r)
{
	g_clear_pointer(&r->bad_file, g_free);
	g_clear_pointer(&r->robot, g_free);
	g_clear_pointer(&r->time, g_free);
	g_clear_pointer(&r->log_origin, g_free);
	g_clear_pointer(&r->log_root, g_free);
	g_clear_pointer(&r->v1_origin, g_free);
	g_clear_pointer(&r->v1_root, g_free);
}

static gint
out_cmp(gconstpointer a, gconstpointer b)
{
	const out_ref *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand the lines after the cursor over, re-read and compared with what
 * was verified, so that nothing changed in between gets out. */
static vulnid_status
emit_lines(vctx *c, feed_line_fn fn, gpointer data, GError **err)
{
	g_autofree char *buf = NULL;
	gsize cap = 0;
	guint cur_file = G_MAXUINT;
	int fd = -1, e_no = 0;
	vulnid_status s = VULNID_OK;

	g_array_sort(c->out, out_cmp);
	for (guint i = 0; i < c->out->len; i++) {
		const out_ref *r = &g_array_index(c->out, out_ref, i);
		const head_year *hy = g_ptr_array_index(c->head->years, r->file);
		g_autofree char *h = NULL;

		if (r->file != cur_file) {
			if (fd >= 0)
				close(fd);
			fd = open_regular(hy->path, &e_no);
			cur_file = r->file;
			if (fd < 0) {
				s = vfail(c, hy->path, 0, err, "cannot read: %s", g_strerror(e_no));
				break;
			}
		}
		if (r->len + 1 > cap) {
			cap = r->len + 1;
			g_free(buf);
			buf = g_malloc(cap);
		}
		if (pread(fd, buf, r->len, r->off) != (ssize_t) r->len ||
		    strcmp((h = feed_sha256_hex(buf, r->len)), r->sha) != 0) {
			s = vfail(c, hy->path, 0, err, "changed while it was being verified");
			break;
		}
		buf[r->len] = '\0';
		fn(buf, r->len, data);
	}
	if (fd >= 0)
		close(fd);
	return s;
}

/* HEAD.json and its signature, read bounded; nothing in HEAD counts
 * before the signature verified with the given key. */
static vulnid_status
head_read_signed(vctx *c, GBytes *key, head_info **out, GError **err)
{
	g_autofree char *head_path = g_build_filename(c->dir, FEED_HEAD, NULL);
	g_autofree char *sig_path = g_build_filename(c->dir, FEED_HEAD_SIG, NULL);
	g_autoptr(GBytes) head_b = NULL;
	g_autoptr(GBytes) sig_b = NULL;
	g_autoptr(GError) ve = NULL;
	g_autofree char *signer = NULL;
	head_info *head;
	const char *why = NULL;
	vulnid_status s;
	int e_no = 0;

	head_b = feed_read_small(head_path, FEED_MAX_HEAD, &e_no);
	if (head_b == NULL)
		return vfail(c, head_path, 0, err, "cannot read: %s",
			     e_no == EFBIG ? "too large" : g_strerror(e_no));
	sig_b = feed_read_small(sig_path, FEED_MAX_SIG, &e_no);
	if (sig_b == NULL)
		return vfail(c, sig_path, 0, err, "cannot read: %s",
			     e_no == EFBIG ? "too large" : g_strerror(e_no));
	s = crypto_verify_with_key(key, head_b, sig_b, &signer, &ve);
	if (s != VULNID_OK)
		return vfail(c, head_path, 0, err, "the signature in %s does not verify with the given key (%s)",
			     FEED_HEAD_SIG, ve != NULL ? ve->message : vulnid_status_str(s));
	head = head_parse(c->dir, head_b, TRUE, &why);
	if (head == NULL)
		return vfail(c, head_path, 0, err, "%s", why);
	if (g_ascii_strcasecmp(head->robot, signer) != 0) {
		s = vfail(c, head_path, 0, err, "names robot %s but was signed by %s", head->robot, signer);
		head_info_free(head);
		return s;
	}
	*out = head;
	return VULNID_OK;
}

/* The feed must extend an earlier, verified HEAD.json. */
static vulnid_status
head_check_previous(vctx *c, const head_info *head, head_info **out, GError **err)
{
	g_autofree char *head_path = g_build_filename(c->dir, FEED_HEAD, NULL);
	g_autoptr(GBytes) pb = NULL;
	g_autoptr(head_info) prev = NULL;
	const char *why = NULL;
	int e_no = 0;

	pb = feed_read_small(c->o->previous, FEED_MAX_HEAD, &e_no);
	if (pb == NULL)
		return vfail(c, c->o->previous, 0, err, "cannot read: %s", g_strerror(e_no));
	prev = head_parse(c->dir, pb, FALSE, &why);
	if (prev == NULL)
		return vfail(c, c->o->previous, 0, err, "%s", why);
	if (g_ascii_strcasecmp(prev->robot, head->robot) != 0)
		return vfail(c, head_path, 0, err, "is by another robot than the previous HEAD");
	if (prev->pos > head->pos || g_strcmp0(prev->time, head->time) > 0)
		return vfail(c, head_path, 0, err, "is older than the previous HEAD (pos %" G_GINT64_FORMAT
			     ", %s)", prev->pos, prev->time);
	for (guint i = 0; i < prev->years->len; i++) {
		const head_year *py = g_ptr_array_index(prev->years, i);
		const head_year *ny = head_find(head, py->year);

		if (ny == NULL || ny->lines < py->lines)
			return vfail(c, py->path, 0, err, "has fewer lines than the previous HEAD said (%"
				     G_GINT64_FORMAT ")", py->lines);
	}
	*out = g_steal_pointer(&prev);
	return VULNID_OK;
}

/* Every year file must be signed for in HEAD, and the other way round. */
static vulnid_status
year_files_match(vctx *c, const head_info *head, GError **err)
{
	g_autoptr(GHashTable) files = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_autoptr(GDir) d = NULL;
	g_autoptr(GError) de = NULL;
	const char *name;
	guint seen = 0;

	d = g_dir_open(c->dir, 0, &de);
	if (d == NULL)
		return vfail(c, c->dir, 0, err, "cannot list: %s", de->message);
	while ((name = g_dir_read_name(d)) != NULL) {
		int year;

		if (++seen > FEED_MAX_DIR_ENTRIES)
			return vfail(c, c->dir, 0, err, "has more than %d names", FEED_MAX_DIR_ENTRIES);
		if (!feed_year_file_name(name, &year))
			continue;
		if (g_hash_table_size(files) >= FEED_MAX_YEARS)
			return vfail(c, c->dir, 0, err, "has more than %d year files", FEED_MAX_YEARS);
		g_hash_table_add(files, GINT_TO_POINTER(year));
		if (head_find(head, year) == NULL) {
			g_autofree char *p = g_strdup_printf("%s/%s", c->dir, name);

			return vfail(c, p, 1, err, "not covered by HEAD.json (it names no such year)");
		}
	}
	for (guint i = 0; i < head->years->len; i++) {
		const head_year *hy = g_ptr_array_index(head->years, i);

		if (!g_hash_table_contains(files, GINT_TO_POINTER(hy->year)))
			return vfail(c, hy->path, 1, err, "missing: HEAD.json says it has %" G_GINT64_FORMAT " lines",
				     hy->lines);
	}
	return VULNID_OK;
}

vulnid_status
feed_verify(const char *dir, GBytes *key, const feed_verify_opts *o, feed_line_fn fn, gpointer data,
	    feed_verify_result *res, GError **err)
{
	g_autoptr(head_info) head = NULL;
	g_autoptr(head_info) prev = NULL;
	g_autoptr(GHashTable) entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, ent_state_free);
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(out_ref));
	vctx c = { dir, o, o->max_line > 0 ? o->max_line : FEED_MAX_LINE_DEFAULT, res, entries, out, NULL };
	GHashTableIter it;
	gpointer v;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	s = head_read_signed(&c, key, &head, err);
	if (s != VULNID_OK)
		return s;
	c.head = head;
	res->robot = g_strdup(head->robot);
	res->time = g_strdup(head->time);
	res->pos = head->pos;
	res->log_origin = g_strdup(head->log_origin);
	res->log_size = head->log_size;
	res->log_root = g_strdup(head->log_root);
	res->v1_origin = g_strdup(head->v1_origin);
	res->v1_size = head->v1_size;
	res->v1_root = g_strdup(head->v1_root);
	if (o->previous != NULL) {
		s = head_check_previous(&c, head, &prev, err);
		if (s != VULNID_OK)
			return s;
	}
	s = year_files_match(&c, head, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < head->years->len; i++) {
		const head_year *hy = g_ptr_array_index(head->years, i);

		s = verify_year(&c, i, hy, head_find(prev, hy->year), err);
		if (s != VULNID_OK)
			return s;
	}
	res->years = head->years->len;
	res->entries = g_hash_table_size(entries);
	g_hash_table_iter_init(&it, entries);
	while (g_hash_table_iter_next(&it, NULL, &v))
		res->embargoed += g_hash_table_size(((ent_state *) v)->pending) != 0;
	if (fn != NULL && o->since >= 0)
		return emit_lines(&c, fn, data, err);
	return VULNID_OK;
}
