/* feedlog.c - the feed's transparency log: update at export, checks,
 * proofs, cosignatures (feedlog.h, vulnid-feed(5) LOG) */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "crypto.h"
#include "export.h"
#include "feed.h"
#include "feedlog.h"

#define PROOF_HEADER "c2sp.org/tlog-proof@v1"
#define MAX_VKEY_FILE 4096
#define MAX_WITNESS_RESPONSE (64 * 1024)
#define WITNESS_ATTEMPTS 3

vulnid_status
feedlog_key_open(const char *instance_dir, const char *origin, const char *domain, const char *prefix,
		 const char *fpr, note_key **key, gboolean *created, GError **err)
{
	g_autofree char *path = g_build_filename(instance_dir, FEEDLOG_KEY_FILE, NULL);
	g_autofree char *v1_path = g_build_filename(instance_dir, FEEDLOG_KEY_FILE_V1, NULL);
	g_autofree char *low = g_ascii_strdown(fpr, -1);
	g_autofree char *def = g_strdup_printf("%s/vulnid/%s/%.16s/%s", domain, prefix, low, FEEDLOG_DIR);
	const char *name = origin != NULL ? origin : def;
	g_autoptr(note_key) v1 = NULL;
	vulnid_status s;

	/* The version-1 log went on under its own name; a second log under
	 * it would be a fork of it to every witness. */
	if (g_file_test(v1_path, G_FILE_TEST_EXISTS) &&
	    note_key_load_or_create(v1_path, NULL, NOTE_ED25519, &v1, NULL, NULL) != VULNID_OK)
		g_clear_pointer(&v1, note_key_free);
	if (v1 != NULL && !g_file_test(path, G_FILE_TEST_EXISTS) && strcmp(v1->name, name) == 0)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' would name the log '%s' of '%s' (version 1): the log"
				   " needs another origin ([export] log_origin)", path, name, v1_path);
	s = note_key_load_or_create(path, name, NOTE_ED25519, key, created, err);
	if (s == VULNID_OK && v1 != NULL && strcmp(v1->name, (*key)->name) == 0) {
		g_clear_pointer(key, note_key_free);
		return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' names the log '%s' of '%s' (version 1): the log"
				   " needs another origin ([export] log_origin)", path, v1->name, v1_path);
	}
	return s;
}

void
feedlog_state_clear(feedlog_state *st)
{
	g_clear_pointer(&st->origin, g_free);
	g_clear_pointer(&st->root, g_free);
	g_clear_pointer(&st->v1_origin, g_free);
	g_clear_pointer(&st->v1_root, g_free);
}

void
feedlog_result_clear(feedlog_result *r)
{
	g_clear_pointer(&r->origin, g_free);
	g_clear_pointer(&r->root, g_free);
}

void
feedlog_loc_clear(feedlog_loc *l)
{
	g_clear_pointer(&l->dir, g_free);
}

static GBytes *
read_limited(const char *path, gsize max, GError **err)
{
	struct stat sb;
	g_autofree char *data = NULL;
	gsize len = 0;

	if (lstat(path, &sb) < 0) {
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot read '%s': %s", path, g_strerror(errno));
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) || (gsize) sb.st_size > max) {
		vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a regular file of at most %" G_GSIZE_FORMAT " bytes",
			    path, max);
		return NULL;
	}
	if (!g_file_get_contents(path, &data, &len, NULL) || len > max) {
		vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", path);
		return NULL;
	}
	return g_bytes_new_take(g_steal_pointer(&data), len);
}

static gboolean
exists(const char *path)
{
	return g_file_test(path, G_FILE_TEST_EXISTS) || g_file_test(path, G_FILE_TEST_IS_SYMLINK);
}

/* A checkpoint note, parsed but not verified. */
static vulnid_status
read_checkpoint_unverified(const char *dir, GBytes **raw, note **n, checkpoint *c, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	vulnid_status s;
	gsize len;
	const char *d;

	memset(c, 0, sizeof *c);
	*raw = read_limited(path, NOTE_MAX_SIZE, err);
	if (*raw == NULL)
		return VULNID_ERR_NOTFOUND;
	d = g_bytes_get_data(*raw, &len);
	s = note_parse(d, len, n, err);
	if (s == VULNID_OK)
		s = checkpoint_parse((*n)->text, c, err);
	if (s != VULNID_OK)
		g_prefix_error(err, "'%s': ", path);
	return s;
}

char *
feedlog_checkpoint_origin(const char *path)
{
	g_autoptr(GBytes) raw = read_limited(path, NOTE_MAX_SIZE, NULL);
	g_autoptr(note) n = NULL;
	checkpoint c = { 0 };
	char *origin;

	if (raw == NULL || note_parse(g_bytes_get_data(raw, NULL), g_bytes_get_size(raw), &n, NULL) != VULNID_OK ||
	    checkpoint_parse(n->text, &c, NULL) != VULNID_OK)
		return NULL;
	origin = g_steal_pointer(&c.origin);
	checkpoint_clear(&c);
	return origin;
}

vulnid_status
feedlog_locate(const char *dir, const char *origin, feedlog_loc *loc, GError **err)
{
	g_autofree char *sub = g_build_filename(dir, FEEDLOG_DIR, NULL);
	g_autofree char *sub_cp = g_build_filename(sub, FEEDLOG_CHECKPOINT, NULL);
	g_autofree char *top_cp = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autofree char *head = g_build_filename(dir, FEED_HEAD, NULL);
	g_autofree char *sub_origin = exists(sub_cp) ? feedlog_checkpoint_origin(sub_cp) : NULL;

	memset(loc, 0, sizeof *loc);
	if (exists(sub_cp) && (origin == NULL || g_strcmp0(sub_origin, origin) == 0)) {
		loc->dir = g_steal_pointer(&sub);
		loc->version = 2;
		return VULNID_OK;
	}
	if (exists(top_cp)) {
		loc->dir = g_strdup(dir);
		/* A feed's own checkpoint is the version-1 log's; a copy of a
		 * log alone has its checkpoint on top. */
		loc->version = exists(head) ? 1 : 2;
		return VULNID_OK;
	}
	return vulnid_fail(err, VULNID_ERR_NOTFOUND, "'%s' has no transparency log (no checkpoint)", dir);
}

/* ---- publishing the key ------------------------------------------------------------- */

static vulnid_status
publish_key(const char *dir, const note_key *key, const char *fpr, GError **err)
{
	g_autofree char *vk_path = g_build_filename(dir, FEEDLOG_VKEY, NULL);
	g_autofree char *sig_path = g_build_filename(dir, FEEDLOG_VKEY_SIG, NULL);
	g_autofree char *vk_line = note_key_vkey(key);
	g_autofree char *vk = g_strconcat(vk_line, "\n", NULL);
	g_autoptr(GBytes) have = read_limited(vk_path, MAX_VKEY_FILE, NULL);
	g_autoptr(GBytes) want = g_bytes_new(vk, strlen(vk));
	g_autoptr(GBytes) sig = NULL;
	vulnid_status s;

	if (have != NULL && g_bytes_equal(have, want) && g_file_test(sig_path, G_FILE_TEST_IS_REGULAR))
		return VULNID_OK;
	if (g_mkdir_with_parents(dir, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", dir,
				   g_strerror(errno));
	/* The signature first: a crash in between leaves an old key file,
	 * which the next export sees and writes again with its signature. */
	s = crypto_sign_detached(want, fpr, &sig, err);
	if (s == VULNID_OK)
		s = export_write_file(sig_path, g_bytes_get_data(sig, NULL), g_bytes_get_size(sig), 0644, err);
	if (s == VULNID_OK)
		s = export_write_file(vk_path, vk, strlen(vk), 0644, err);
	return s;
}

vulnid_status
feedlog_bound_key(const char *dir, GBytes *robot_key, const char *fpr, note_key **key, GError **err)
{
	g_autofree char *vk_path = g_build_filename(dir, FEEDLOG_VKEY, NULL);
	g_autofree char *sig_path = g_build_filename(dir, FEEDLOG_VKEY_SIG, NULL);
	g_autoptr(GBytes) vk = read_limited(vk_path, MAX_VKEY_FILE, err);
	g_autoptr(GBytes) sig = NULL;
	g_autofree char *signer = NULL;
	g_autoptr(GError) ve = NULL;
	vulnid_status s;
	gsize len;
	const char *text;

	if (vk == NULL)
		return VULNID_ERR_CORRUPT;
	sig = read_limited(sig_path, FEED_MAX_SIG, err);
	if (sig == NULL)
		return VULNID_ERR_CORRUPT;
	s = crypto_verify_with_key(robot_key, vk, sig, &signer, &ve);
	if (s != VULNID_OK || g_ascii_strcasecmp(signer, fpr) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the signature in %s is not the robot's (%s)", vk_path,
				   FEEDLOG_VKEY_SIG, ve != NULL ? ve->message : signer != NULL ? signer : "bad");
	text = g_bytes_get_data(vk, &len);
	s = note_key_parse(text, len, key, err);
	if (s == VULNID_OK && ((*key)->type != NOTE_ED25519 || (*key)->has_private)) {
		g_clear_pointer(key, note_key_free);
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is not an Ed25519 verifier key", vk_path);
	}
	if (s != VULNID_OK)
		g_prefix_error(err, "'%s': ", vk_path);
	return s;
}

/* ---- the lines the log does not have yet ------------------------------------------- */

typedef struct {
	guint file;
	off_t off;
	gsize len;
	gint64 pos;
	int year;
	guint64 n;
} line_ref;

typedef struct {
	int fd;
	off_t end;		/* where the unread part ends (after a newline) */
	guint64 left;		/* complete lines not yet taken */
	gboolean have;		/* ref holds the last unread line */
	line_ref ref;
} tail;

/* The line ending at t->end, read backwards in chunks that grow from
 * 4 KiB: most lines are short, and each is found without reading much
 * more than itself. */
static vulnid_status
tail_peek(tail *t, guint file, const char *path, GError **err)
{
	g_autofree char *buf = NULL;
	char head[128];
	off_t end = t->end - 1, start = 0;
	gsize chunk = 4096;
	ssize_t got;

	t->have = FALSE;
	if (t->left == 0)
		return VULNID_OK;
	buf = g_malloc(65536);
	while (end > 0) {
		off_t from = end > (off_t) chunk ? end - (off_t) chunk : 0;
		ssize_t n = pread(t->fd, buf, (size_t) (end - from), from);
		char *p;

		if (n != end - from)
			return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", path);
		p = memrchr(buf, '\n', (size_t) n);
		if (p != NULL) {
			start = from + (p - buf) + 1;
			break;
		}
		end = from;
		chunk = MIN(chunk * 2, 65536);
	}
	t->ref.file = file;
	t->ref.off = start;
	t->ref.len = (gsize) (t->end - 1 - start);
	got = pread(t->fd, head, MIN(sizeof head, t->ref.len), start);
	if (got < 0 || !feed_line_frame(head, (gsize) got, &t->ref.year, &t->ref.n, &t->ref.pos))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the line at byte %jd is not a feed line", path,
				   (intmax_t) start);
	t->have = TRUE;
	return VULNID_OK;
}

/* The last `count` lines of the feed in log order: the greatest (pos,
 * year) first, taken from the ends of the files. */
static vulnid_status
take_tail(const feedlog_file *files, guint nfiles, guint64 count, GArray *refs, GError **err)
{
	g_autofree tail *t = g_new0(tail, MAX(nfiles, 1));
	vulnid_status s = VULNID_OK;

	for (guint i = 0; i < nfiles; i++)
		t[i].fd = -1;
	for (guint i = 0; i < nfiles && s == VULNID_OK; i++) {
		struct stat sb;

		t[i].fd = open(files[i].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (t[i].fd < 0 || fstat(t[i].fd, &sb) < 0) {
			s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s", files[i].path,
					g_strerror(errno));
			break;
		}
		t[i].end = sb.st_size;
		t[i].left = files[i].lines;
		s = tail_peek(&t[i], i, files[i].path, err);
	}
	for (guint64 k = 0; k < count && s == VULNID_OK; k++) {
		guint best = G_MAXUINT;

		for (guint i = 0; i < nfiles; i++)
			if (t[i].have && (best == G_MAXUINT || t[i].ref.pos > t[best].ref.pos ||
					  (t[i].ref.pos == t[best].ref.pos && t[i].ref.year > t[best].ref.year)))
				best = i;
		if (best == G_MAXUINT) {
			s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the feed has fewer lines than its log");
			break;
		}
		g_array_append_val(refs, t[best].ref);
		t[best].end = t[best].ref.off;
		t[best].left--;
		s = tail_peek(&t[best], best, files[best].path, err);
	}
	for (guint i = 0; i < nfiles; i++)
		if (t[i].fd >= 0)
			close(t[i].fd);
	if (s == VULNID_OK)
		for (guint i = 0; i < refs->len / 2; i++) {
			line_ref x = g_array_index(refs, line_ref, i);

			g_array_index(refs, line_ref, i) = g_array_index(refs, line_ref, refs->len - 1 - i);
			g_array_index(refs, line_ref, refs->len - 1 - i) = x;
		}
	return s;
}

static vulnid_status
read_ref(const feedlog_file *files, const line_ref *r, int *fds, char **buf, gsize *cap, GError **err)
{
	if (fds[r->file] < 0) {
		fds[r->file] = open(files[r->file].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fds[r->file] < 0)
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s",
					   files[r->file].path, g_strerror(errno));
	}
	if (r->len + 1 > *cap) {
		*cap = r->len + 1;
		*buf = g_realloc(*buf, *cap);
	}
	if (pread(fds[r->file], *buf, r->len, r->off) != (ssize_t) r->len)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", files[r->file].path);
	return VULNID_OK;
}

/* ---- update at export ---------------------------------------------------------------- */

static vulnid_status
write_checkpoint(const char *dir, const note_key *key, guint64 size, const tlog_hash *root, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autofree char *text = checkpoint_text(key->name, size, root);
	g_autofree char *sig = note_sign(key, text);
	g_autofree char *all = NULL;

	if (sig == NULL)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot sign the checkpoint");
	all = g_strconcat(text, "\n", sig, NULL);
	return export_write_file(path, all, strlen(all), 0644, err);
}

/* The log as it stands: its checkpoint, or the empty tree. */
static vulnid_status
current_checkpoint(const char *dir, const note_key *key, checkpoint *c, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(note) n = NULL;

	if (!exists(path)) {
		memset(c, 0, sizeof *c);
		c->origin = g_strdup(key->name);
		tlog_empty_hash(&c->root);
		return VULNID_OK;
	}
	return checkpoint_open(path, key, &n, c, err);
}

/* The version-1 log of a feed from before DIR/log: it stays as it is, and
 * HEAD.json keeps naming its checkpoint. */
static vulnid_status
legacy_log(const char *dir, feedlog_state *out, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	checkpoint c = { 0 };
	vulnid_status s;

	if (!exists(path))
		return VULNID_OK;
	s = read_checkpoint_unverified(dir, &raw, &n, &c, err);
	if (s != VULNID_OK)
		return s;
	out->v1_origin = g_steal_pointer(&c.origin);
	out->v1_size = c.size;
	out->v1_root = tlog_hash_b64(&c.root);
	return VULNID_OK;
}

/* Add the entries of the lines refs[] to the builder, checking on the way
 * that what the log had makes its checkpoint's root. */
static vulnid_status
add_entries(tlog_builder *b, const feedlog_file *files, guint nfiles, GArray *refs, const checkpoint *cp,
	    const char *dir, GError **err)
{
	g_autofree int *fds = g_new(int, MAX(nfiles, 1));
	g_autofree char *buf = NULL;
	vulnid_status s = VULNID_OK;
	gsize cap = 0;
	tlog_hash root;

	for (guint i = 0; i < nfiles; i++)
		fds[i] = -1;
	for (guint i = 0; s == VULNID_OK && i <= refs->len; i++) {
		const line_ref *r = i < refs->len ? &g_array_index(refs, line_ref, i) : NULL;
		g_autofree char *le = NULL;

		if (tlog_builder_size(b) == cp->size) {
			tlog_builder_root(b, &root);
			if (memcmp(root.b, cp->root.b, TLOG_HASH_LEN) != 0) {
				s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the tiles and the feed's lines do not make"
						" the root hash of its checkpoint", dir);
				break;
			}
		}
		if (r == NULL)
			break;
		s = read_ref(files, r, fds, &buf, &cap, err);
		if (s != VULNID_OK)
			break;
		le = feed_log_entry(buf, r->len);
		if (le == NULL)
			s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the line at byte %jd is not a feed line",
					files[r->file].path, (intmax_t) r->off);
		else
			s = tlog_builder_add(b, le, strlen(le), err);
	}
	for (guint i = 0; i < nfiles; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return s;
}

vulnid_status
feedlog_check_published(const char *dir, const note_key *key, GError **err)
{
	g_autofree char *logdir = g_build_filename(dir, FEEDLOG_DIR, NULL);
	g_autofree char *vk_path = g_build_filename(logdir, FEEDLOG_VKEY, NULL);
	g_autofree char *vk_line = note_key_vkey(key);
	g_autofree char *vk = g_strconcat(vk_line, "\n", NULL);
	g_autoptr(GBytes) have = read_limited(vk_path, MAX_VKEY_FILE, NULL);
	g_autoptr(GBytes) want = g_bytes_new(vk, strlen(vk));
	checkpoint cp = { 0 };
	vulnid_status s;

	if (have != NULL && !g_bytes_equal(have, want))
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is the key of another log than this instance's"
				   " " FEEDLOG_KEY_FILE " (%s): restore the " FEEDLOG_KEY_FILE " that made this feed"
				   " (vulnid backup --all carries it); nothing was written", vk_path, key->name);
	s = current_checkpoint(logdir, key, &cp, err);
	checkpoint_clear(&cp);
	if (s != VULNID_OK)
		g_prefix_error(err, "nothing was written: ");
	return s;
}

vulnid_status
feedlog_update(const char *dir, const note_key *key, const char *fpr, const feedlog_file *files, guint nfiles,
	       feedlog_state *out, GError **err)
{
	g_autofree char *logdir = g_build_filename(dir, FEEDLOG_DIR, NULL);
	g_autofree char *cp_path = g_build_filename(logdir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(GArray) refs = g_array_new(FALSE, FALSE, sizeof(line_ref));
	g_autoptr(tlog_builder) b = NULL;
	checkpoint cp = { 0 };
	guint64 total = 0, start;
	tlog_hash root;
	vulnid_status s;

	memset(out, 0, sizeof *out);
	for (guint i = 0; i < nfiles; i++)
		total += files[i].lines;
	/* the published checkpoint first: nothing is replaced unless it is
	 * this key's */
	s = legacy_log(dir, out, err);
	if (s == VULNID_OK)
		s = current_checkpoint(logdir, key, &cp, err);
	if (s == VULNID_OK)
		s = publish_key(logdir, key, fpr, err);
	if (s != VULNID_OK)
		goto out;
	if (cp.size > total) {
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' has a log of %" G_GUINT64_FORMAT " entries, but only %"
				G_GUINT64_FORMAT " lines", dir, cp.size, total);
		goto out;
	}
	/* From the start of the last partial tile: its entries make the
	 * level-0 hashes again and the partial entry bundle. */
	start = cp.size - cp.size % TLOG_TILE_WIDTH;
	s = take_tail(files, nfiles, total - start, refs, err);
	if (s == VULNID_OK)
		s = tlog_builder_new(logdir, TLOG_WRITE, cp.size, &b, err);
	if (s == VULNID_OK)
		s = add_entries(b, files, nfiles, refs, &cp, logdir, err);
	if (s == VULNID_OK)
		s = tlog_builder_finish(b, err);
	if (s == VULNID_OK)
		s = tlog_builder_sync(b, err);
	if (s != VULNID_OK)
		goto out;
	tlog_builder_root(b, &root);
	/* A checkpoint per export that grew the log; an unchanged one keeps
	 * its checkpoint, cosignatures and all. */
	if (total > cp.size || !exists(cp_path)) {
		s = write_checkpoint(logdir, key, total, &root, err);
		if (s != VULNID_OK)
			goto out;
		out->checkpoint_written = TRUE;
	}
	out->origin = g_strdup(key->name);
	out->size = total;
	out->root = tlog_hash_b64(&root);
	out->old_size = cp.size;
	out->appended = total - cp.size;
	out->stats = *tlog_builder_stats_get(b);
out:
	checkpoint_clear(&cp);
	return s;
}

/* ---- checking a whole feed ------------------------------------------------------------ */

/* One log checked against the lines: the version-1 log against the first
 * of them, as raw lines; the log against all of them, as entries. */
typedef struct {
	char *dir;
	int version;
	note_key *key;
	tlog_builder *b;
	note *n;
	checkpoint cp;
} log_check;

struct feedlog_checker {
	char *dir;
	log_check logs[2];	/* [0]: version 1, [1]: the log; dir NULL if absent */
	guint64 lines;
	GError *err;		/* the first failure of a line */
};

static void
log_check_clear(log_check *l)
{
	g_clear_pointer(&l->dir, g_free);
	g_clear_pointer(&l->key, note_key_free);
	g_clear_pointer(&l->b, tlog_builder_free);
	g_clear_pointer(&l->n, note_free);
	checkpoint_clear(&l->cp);
}

void
feedlog_checker_free(feedlog_checker *c)
{
	if (c == NULL)
		return;
	g_free(c->dir);
	log_check_clear(&c->logs[0]);
	log_check_clear(&c->logs[1]);
	g_clear_error(&c->err);
	g_free(c);
}

static vulnid_status
log_check_open(log_check *l, const char *dir, int version, GBytes *robot_key, const char *fpr, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	vulnid_status s;

	l->dir = g_strdup(dir);
	l->version = version;
	s = feedlog_bound_key(dir, robot_key, fpr, &l->key, err);
	if (s == VULNID_OK)
		s = checkpoint_open(path, l->key, &l->n, &l->cp, err);
	if (s == VULNID_OK)
		s = tlog_builder_new(dir, TLOG_CHECK, 0, &l->b, err);
	return s;
}

vulnid_status
feedlog_checker_new(const char *dir, GBytes *robot_key, const char *fpr, feedlog_checker **out, GError **err)
{
	g_autoptr(feedlog_checker) c = g_new0(feedlog_checker, 1);
	g_autofree char *logdir = g_build_filename(dir, FEEDLOG_DIR, NULL);
	g_autofree char *v1_cp = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autofree char *cp = g_build_filename(logdir, FEEDLOG_CHECKPOINT, NULL);
	vulnid_status s = VULNID_OK;

	c->dir = g_strdup(dir);
	if (exists(v1_cp))
		s = log_check_open(&c->logs[0], dir, 1, robot_key, fpr, err);
	if (s == VULNID_OK && exists(cp))
		s = log_check_open(&c->logs[1], logdir, 2, robot_key, fpr, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&c);
	return s;
}

const note_key *
feedlog_checker_key(const feedlog_checker *c, int version)
{
	const log_check *l = &c->logs[version == 1 ? 0 : 1];

	return l->dir != NULL ? l->key : NULL;
}

void
feedlog_check_line(feedlog_checker *c, const char *line, gsize len)
{
	log_check *v1 = &c->logs[0], *v2 = &c->logs[1];

	c->lines++;
	if (c->err != NULL)
		return;
	/* The version-1 log stopped growing at its checkpoint. */
	if (v1->dir != NULL && tlog_builder_size(v1->b) < v1->cp.size)
		tlog_builder_add(v1->b, line, len, &c->err);
	if (v2->dir != NULL && c->err == NULL) {
		g_autofree char *le = feed_log_entry(line, len);

		if (tlog_builder_size(v2->b) >= v2->cp.size)
			vulnid_fail(&c->err, VULNID_ERR_CORRUPT, "'%s/%s' covers %" G_GUINT64_FORMAT " lines, the feed has"
				    " more", v2->dir, FEEDLOG_CHECKPOINT, v2->cp.size);
		else if (le == NULL)
			vulnid_fail(&c->err, VULNID_ERR_CORRUPT, "a line that is not a feed line");
		else
			tlog_builder_add(v2->b, le, strlen(le), &c->err);
	}
}

static vulnid_status
log_check_end(log_check *l, char **origin, guint64 *size, char **root_b64, GError **err)
{
	tlog_hash root;
	vulnid_status s;

	if (tlog_builder_size(l->b) != l->cp.size)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s' covers %" G_GUINT64_FORMAT " lines, the feed has %"
				   G_GUINT64_FORMAT, l->dir, FEEDLOG_CHECKPOINT, l->cp.size, tlog_builder_size(l->b));
	s = tlog_builder_finish(l->b, err);
	if (s != VULNID_OK)
		return s;
	tlog_builder_root(l->b, &root);
	if (memcmp(root.b, l->cp.root.b, TLOG_HASH_LEN) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s': the feed's lines make another root hash", l->dir,
				   FEEDLOG_CHECKPOINT);
	*origin = g_strdup(l->cp.origin);
	*size = l->cp.size;
	*root_b64 = tlog_hash_b64(&root);
	return VULNID_OK;
}

vulnid_status
feedlog_check_end(feedlog_checker *c, feedlog_state *out, GError **err)
{
	vulnid_status s = VULNID_OK;

	memset(out, 0, sizeof *out);
	if (c->err != NULL) {
		s = (vulnid_status) c->err->code;
		g_propagate_error(err, g_steal_pointer(&c->err));
		return s;
	}
	/* Alone, the version-1 log covers every line (it stops growing only
	 * where the log of DIR/log begins). */
	if (c->logs[0].dir != NULL && c->logs[1].dir == NULL && c->lines > c->logs[0].cp.size)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s' covers %" G_GUINT64_FORMAT " lines, the feed has"
				   " more", c->dir, FEEDLOG_CHECKPOINT, c->logs[0].cp.size);
	if (c->logs[0].dir != NULL)
		s = log_check_end(&c->logs[0], &out->v1_origin, &out->v1_size, &out->v1_root, err);
	if (s == VULNID_OK && c->logs[1].dir != NULL) {
		s = log_check_end(&c->logs[1], &out->origin, &out->size, &out->root, err);
		out->stats = *tlog_builder_stats_get(c->logs[1].b);
	}
	return s;
}

/* ---- checkpoints, witnesses, consistency ----------------------------------------------- */

static char *
origin_hash(const char *origin)
{
	guint8 h[32];
	GString *s = g_string_new(NULL);

	tlog_sha256(origin, strlen(origin), h);
	for (int i = 0; i < 32; i++)
		g_string_append_printf(s, "%02x", h[i]);
	return g_string_free(s, FALSE);
}

/* A witness's copy of the checkpoint of origin: PATH/SHA256HEX/checkpoint
 * of a witness's directory, or PATH itself. */
static char *
witness_copy_path(const char *path, const char *origin)
{
	g_autofree char *h = origin_hash(origin);

	if (g_file_test(path, G_FILE_TEST_IS_DIR))
		return g_build_filename(path, h, FEEDLOG_CHECKPOINT, NULL);
	return g_strdup(path);
}

vulnid_status
feedlog_count_cosignatures(const note *n, const char *origin, const feedlog_policy *p, guint *count,
			   GError **err)
{
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func((GDestroyNotify) note_free);

	*count = 0;
	if (p == NULL || p->witnesses == NULL)
		return VULNID_OK;
	for (guint i = 0; p->cosigned != NULL && i < p->cosigned->len; i++) {
		g_autofree char *file = witness_copy_path(g_ptr_array_index(p->cosigned, i), origin);
		g_autoptr(GBytes) b = read_limited(file, NOTE_MAX_SIZE, err);
		note *other = NULL;
		gsize len;
		const char *d;

		if (b == NULL)
			return VULNID_ERR_NOTFOUND;
		d = g_bytes_get_data(b, &len);
		if (note_parse(d, len, &other, err) != VULNID_OK) {
			g_prefix_error(err, "'%s': ", file);
			return VULNID_ERR_INVALID;
		}
		/* Cosignatures count only on this very checkpoint. */
		if (strcmp(other->text, n->text) == 0)
			g_ptr_array_add(notes, other);
		else
			note_free(other);
	}
	for (guint w = 0; w < p->witnesses->len; w++) {
		const note_key *k = g_ptr_array_index(p->witnesses, w);
		gboolean good = FALSE;

		for (guint i = 0; i <= notes->len; i++) {
			const note *x = i == 0 ? n : g_ptr_array_index(notes, i - 1);
			note_sig_result r = note_verify_key(x, k, NULL);

			if (r == NOTE_SIG_BAD)
				return vulnid_fail(err, VULNID_ERR_CORRUPT, "a bad cosignature by witness %s", k->name);
			good |= r == NOTE_SIG_GOOD;
		}
		*count += good;
	}
	if (*count < p->min_cosignatures)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint has %u good cosignatures of the witnesses"
				   " given, %u are required", *count, p->min_cosignatures);
	return VULNID_OK;
}

static vulnid_status
check_previous(const char *path, const note_key *key, const checkpoint *now, tlog_tiles *t,
	       const GArray *given, feedlog_result *res, GError **err)
{
	g_autoptr(note) pn = NULL;
	g_autoptr(GArray) proof = NULL;
	checkpoint old = { 0 };
	vulnid_status s;
	guint ops = 0;

	s = checkpoint_open(path, key, &pn, &old, err);
	if (s != VULNID_OK)
		return s;
	res->old_size = old.size;
	if (old.size > now->size) {
		checkpoint_clear(&old);
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint (%" G_GUINT64_FORMAT " entries) is older than"
				   " the previous one (%" G_GUINT64_FORMAT ")", now->size, res->old_size);
	}
	if (given != NULL)
		proof = g_array_ref((GArray *) given);
	else
		s = tlog_prove_consistency(t, old.size, now->size, &proof, err);
	if (s == VULNID_OK && !tlog_check_consistency(old.size, now->size, &old.root, &now->root,
						      (const tlog_hash *) proof->data, proof->len, &ops))
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint of %" G_GUINT64_FORMAT " entries is not"
				" consistent with the previous one of %" G_GUINT64_FORMAT " (history rewritten)",
				now->size, old.size);
	if (s == VULNID_OK) {
		res->consistent = TRUE;
		res->proof_hashes = proof->len;
		res->hash_ops = ops;
	}
	checkpoint_clear(&old);
	return s;
}

vulnid_status
feedlog_verify_checkpoint(const feedlog_loc *loc, const note_key *key, const feedlog_policy *p,
			  feedlog_result *res, GError **err)
{
	g_autofree char *path = g_build_filename(loc->dir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	feedlog_tiles mode = p != NULL ? p->tiles : FEEDLOG_TILES_NEEDED;
	checkpoint cp = { 0 };
	tlog_hash root;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	res->version = loc->version;
	s = checkpoint_open(path, key, &n, &cp, err);
	if (s != VULNID_OK)
		return s;
	t = tlog_tiles_open(loc->dir, cp.size);
	s = tlog_tiles_root(t, &root, err);
	if (s == VULNID_OK && memcmp(root.b, cp.root.b, TLOG_HASH_LEN) != 0)
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the tiles make another root hash", path);
	if (s == VULNID_OK)
		s = feedlog_count_cosignatures(n, cp.origin, p, &res->cosignatures, err);
	if (s == VULNID_OK && p != NULL && p->previous != NULL)
		s = check_previous(p->previous, key, &cp, t, NULL, res, err);
	/* Every tile and bundle (or those past the checkpoint verified
	 * before): what a mirror serves must be what the root commits to. */
	if (s == VULNID_OK && mode != FEEDLOG_TILES_NEEDED)
		s = tlog_verify_tiles(loc->dir, cp.size, &cp.root, mode == FEEDLOG_TILES_NEW ? res->old_size : 0,
				      loc->version == 1, &res->tiles, err);
	res->origin = g_strdup(cp.origin);
	res->size = cp.size;
	res->root = tlog_hash_b64(&cp.root);
	res->tiles_read = tlog_tiles_reads(t) + (guint) res->tiles.tiles;
	checkpoint_clear(&cp);
	return s;
}

/* ---- proofs ------------------------------------------------------------------------- */

typedef struct {
	gint64 pos;
	int year;
	guint64 n;
	guint file;
	off_t off;
	gsize len;
	gboolean wanted;
} frame_ref;

static gint
frame_cmp(gconstpointer a, gconstpointer b)
{
	const frame_ref *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->year != y->year)
		return x->year < y->year ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

static gboolean
line_is_entry(const char *line, gsize len, const char *id)
{
	g_autofree char *needle = g_strdup_printf("\"entry\":\"%s\"", id);
	g_autoptr(JsonParser) p = NULL;
	JsonNode *root, *e;

	if (g_strstr_len(line, (gssize) len, needle) == NULL)
		return FALSE;
	p = json_parser_new();
	if (!feed_json_depth_ok(line, len, FEED_MAX_DEPTH) || !json_parser_load_from_data(p, line, (gssize) len, NULL))
		return FALSE;
	root = json_parser_get_root(p);
	if (!JSON_NODE_HOLDS_OBJECT(root))
		return FALSE;
	e = json_object_get_member(json_node_get_object(root), "entry");
	return e != NULL && JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING &&
	       strcmp(json_node_get_string(e), id) == 0;
}

/* Every line's frame, in log order; the lines of entry id marked. */
static vulnid_status
scan_feed(const char *dir, const char *id, GPtrArray *paths, GArray *frames, GError **err)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;
	int id_year = 0;

	if (id != NULL) {
		const char *dash = strchr(id, '-');

		id_year = dash != NULL ? atoi(dash + 1) : 0;
	}
	if (d == NULL)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "cannot list '%s'", dir);
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree char *path = NULL;
		g_autoptr(GString) line = g_string_new(NULL);
		FILE *f;
		int year, c;
		off_t off = 0;

		if (strlen(name) != 10 || strcmp(name + 4, ".jsonl") != 0 || strspn(name, "0123456789") != 4)
			continue;
		year = atoi(name);
		path = g_build_filename(dir, name, NULL);
		f = fopen(path, "re");
		if (f == NULL)
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s", path,
					   g_strerror(errno));
		g_ptr_array_add(paths, g_strdup(path));
		for (;;) {
			frame_ref r = { 0 };

			g_string_truncate(line, 0);
			while ((c = getc(f)) != EOF && c != '\n')
				if (line->len <= FEED_MAX_LINE_DEFAULT)
					g_string_append_c(line, (char) c);
			if (c == EOF)
				break;
			r.file = paths->len - 1;
			r.off = off;
			r.len = line->len;
			off += (off_t) line->len + 1;
			if (line->len > FEED_MAX_LINE_DEFAULT ||
			    !feed_line_frame(line->str, line->len, &r.year, &r.n, &r.pos) || r.year != year) {
				fclose(f);
				return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': line at byte %jd is not a feed line",
						   path, (intmax_t) r.off);
			}
			r.wanted = id != NULL && year == id_year && line_is_entry(line->str, line->len, id);
			g_array_append_val(frames, r);
		}
		fclose(f);
	}
	g_array_sort(frames, frame_cmp);
	return VULNID_OK;
}

static void
append_proof(GString *out, const GArray *proof)
{
	for (guint i = 0; i < proof->len; i++) {
		g_autofree char *b = tlog_hash_b64(&g_array_index(proof, tlog_hash, i));

		g_string_append_printf(out, "%s\n", b);
	}
}

/* The leaf a line is in a log of this version. */
static gboolean
line_leaf(int version, const char *line, gsize len, tlog_hash *leaf)
{
	g_autofree char *le = NULL;

	if (version == 1) {
		tlog_leaf_hash(line, len, leaf);
		return TRUE;
	}
	le = feed_log_entry(line, len);
	if (le == NULL)
		return FALSE;
	tlog_leaf_hash(le, strlen(le), leaf);
	return TRUE;
}

/* One proof, to out or to a file of its own in out_dir. */
static vulnid_status
emit_proof(const char *out_dir, const char *id, guint64 index, const char *line, gsize len, const GArray *proof,
	   GBytes *raw, GString *out, GError **err)
{
	g_autofree char *extra = g_base64_encode((const guchar *) line, len);
	g_autoptr(GString) p = g_string_new(NULL);
	g_autofree char *name = NULL;
	g_autofree char *path = NULL;

	g_string_append_printf(p, PROOF_HEADER "\nextra %s\nindex %" G_GUINT64_FORMAT "\n", extra, index);
	append_proof(p, proof);
	g_string_append_c(p, '\n');
	g_string_append_len(p, g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));
	if (out_dir == NULL) {
		/* Proofs one after the other, an empty line between two: the
		 * checkpoint's own empty line is followed by a signature. */
		if (out->len > 0)
			g_string_append_c(out, '\n');
		g_string_append_len(out, p->str, (gssize) p->len);
		return VULNID_OK;
	}
	name = g_strdup_printf("%s.%" G_GUINT64_FORMAT FEEDLOG_PROOF_SUFFIX, id, index);
	path = g_build_filename(out_dir, name, NULL);
	g_string_append_printf(out, "%s\n", path);
	return export_write_file(path, p->str, p->len, 0644, err);
}

vulnid_status
feedlog_prove_entry(const char *dir, const char *id, const char *out_dir, GString *out, guint *proofs,
		    GError **err)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) frames = g_array_new(FALSE, FALSE, sizeof(frame_ref));
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	g_autofree char *buf = NULL;
	feedlog_loc loc = { 0 };
	checkpoint cp = { 0 };
	vulnid_status s;
	int fd = -1;
	guint fd_file = G_MAXUINT;

	*proofs = 0;
	s = feedlog_locate(dir, NULL, &loc, err);
	if (s == VULNID_OK)
		s = read_checkpoint_unverified(loc.dir, &raw, &n, &cp, err);
	if (s == VULNID_OK)
		s = scan_feed(dir, id, paths, frames, err);
	if (s == VULNID_OK && out_dir != NULL && g_mkdir_with_parents(out_dir, 0755) < 0)
		s = vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", out_dir,
				g_strerror(errno));
	if (s != VULNID_OK)
		goto out;
	t = tlog_tiles_open(loc.dir, cp.size);
	for (guint64 i = 0; i < frames->len && i < cp.size && s == VULNID_OK; i++) {
		const frame_ref *r = &g_array_index(frames, frame_ref, i);
		g_autoptr(GArray) proof = NULL;

		if (!r->wanted)
			continue;
		if (r->file != fd_file) {
			if (fd >= 0)
				close(fd);
			fd = open(g_ptr_array_index(paths, r->file), O_RDONLY | O_CLOEXEC);
			fd_file = r->file;
		}
		buf = g_realloc(buf, r->len + 1);
		if (fd < 0 || pread(fd, buf, r->len, r->off) != (ssize_t) r->len) {
			s = vulnid_fail(err, VULNID_ERR_IO, "cannot read '%s'", (char *) g_ptr_array_index(paths, r->file));
			break;
		}
		s = tlog_prove_inclusion(t, i, cp.size, &proof, err);
		if (s == VULNID_OK)
			s = emit_proof(out_dir, id, i, buf, r->len, proof, raw, out, err);
		if (s == VULNID_OK)
			(*proofs)++;
	}
	if (fd >= 0)
		close(fd);
	if (s == VULNID_OK && *proofs == 0)
		s = vulnid_fail(err, VULNID_ERR_NOTFOUND, "'%s' has no line of %s up to its checkpoint", dir, id);
out:
	checkpoint_clear(&cp);
	feedlog_loc_clear(&loc);
	return s;
}

vulnid_status
feedlog_prove_consistency(const char *dir, const char *origin, guint64 old_size, GString *out, GError **err)
{
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	g_autoptr(GArray) proof = NULL;
	feedlog_loc loc = { 0 };
	checkpoint cp = { 0 };
	vulnid_status s;

	s = feedlog_locate(dir, origin, &loc, err);
	if (s == VULNID_OK)
		s = read_checkpoint_unverified(loc.dir, &raw, &n, &cp, err);
	if (s == VULNID_OK) {
		t = tlog_tiles_open(loc.dir, cp.size);
		s = tlog_prove_consistency(t, old_size, cp.size, &proof, err);
	}
	if (s == VULNID_OK) {
		g_string_append_printf(out, "old %" G_GUINT64_FORMAT "\n", old_size);
		append_proof(out, proof);
		g_string_append_c(out, '\n');
		g_string_append_len(out, g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));
	}
	checkpoint_clear(&cp);
	feedlog_loc_clear(&loc);
	return s;
}

/* ---- reading proofs -------------------------------------------------------------------- */

/* A decimal without leading zeros, below 2^63. */
static gboolean
parse_u63(const char *s, gsize len, guint64 *v)
{
	if (len == 0 || len > 19 || (s[0] == '0' && len > 1))
		return FALSE;
	*v = 0;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isdigit(s[i]))
			return FALSE;
		*v = *v * 10 + (guint64) (s[i] - '0');
	}
	return *v <= G_MAXINT64;
}

/* Next line [*p, nl) of data; FALSE at the end or without a newline. */
static gboolean
next_line(const char *data, gsize len, gsize *p, const char **line, gsize *llen)
{
	const char *nl;

	if (*p >= len)
		return FALSE;
	nl = memchr(data + *p, '\n', len - *p);
	if (nl == NULL)
		return FALSE;
	*line = data + *p;
	*llen = (gsize) (nl - *line);
	*p = (gsize) (nl - data) + 1;
	return TRUE;
}

/* Hash lines up to an empty line (consumed). */
static vulnid_status
parse_hashes(const char *data, gsize len, gsize *p, guint max, GArray *out, GError **err)
{
	const char *line;
	gsize ll;

	while (next_line(data, len, p, &line, &ll)) {
		tlog_hash h;

		if (ll == 0)
			return VULNID_OK;
		if (out->len >= max || !tlog_hash_from_b64(line, ll, &h))
			return vulnid_fail(err, VULNID_ERR_INVALID, "a bad proof line");
		g_array_append_val(out, h);
	}
	return vulnid_fail(err, VULNID_ERR_INVALID, "a proof without its checkpoint");
}

vulnid_status
feedlog_parse_add_checkpoint(const char *data, gsize len, guint64 *old_size, GArray **proof, note **n,
			     checkpoint *c, GError **err)
{
	g_autoptr(GArray) pr = g_array_new(FALSE, FALSE, sizeof(tlog_hash));
	const char *line;
	gsize p = 0, ll;
	vulnid_status s;

	memset(c, 0, sizeof *c);
	if (len > NOTE_MAX_SIZE + 64 * 64)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "a request of more than %d bytes", NOTE_MAX_SIZE + 64 * 64);
	if (!next_line(data, len, &p, &line, &ll) || ll < 5 || memcmp(line, "old ", 4) != 0 ||
	    !parse_u63(line + 4, ll - 4, old_size))
		return vulnid_fail(err, VULNID_ERR_INVALID, "the request does not begin with 'old SIZE'");
	s = parse_hashes(data, len, &p, 63, pr, err);
	if (s == VULNID_OK)
		s = note_parse(data + p, len - p, n, err);
	if (s == VULNID_OK)
		s = checkpoint_parse((*n)->text, c, err);
	if (s == VULNID_OK)
		*proof = g_steal_pointer(&pr);
	return s;
}

vulnid_status
feedlog_verify_consistency(const char *data, gsize len, const note_key *key, const feedlog_policy *p,
			   feedlog_result *res, GError **err)
{
	g_autoptr(GArray) proof = NULL;
	g_autoptr(note) n = NULL;
	checkpoint cp = { 0 };
	guint64 old;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	s = feedlog_parse_add_checkpoint(data, len, &old, &proof, &n, &cp, err);
	if (s != VULNID_OK)
		goto out;
	if (strcmp(cp.origin, key->name) != 0 || note_verify_key(n, key, NULL) != NOTE_SIG_GOOD) {
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint is not signed by the log key %s", key->name);
		goto out;
	}
	s = feedlog_count_cosignatures(n, cp.origin, p, &res->cosignatures, err);
	if (s == VULNID_OK && (p == NULL || p->previous == NULL))
		s = vulnid_fail(err, VULNID_ERR_INVALID, "a consistency proof needs the previous checkpoint");
	if (s == VULNID_OK)
		s = check_previous(p->previous, key, &cp, NULL, proof, res, err);
	if (s == VULNID_OK && res->old_size != old)
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the proof is from size %" G_GUINT64_FORMAT ", the previous"
				" checkpoint has %" G_GUINT64_FORMAT, old, res->old_size);
	res->origin = g_strdup(cp.origin);
	res->size = cp.size;
	res->root = tlog_hash_b64(&cp.root);
out:
	checkpoint_clear(&cp);
	return s;
}

/* One tlog-proof from *p: up to the next header line (after an empty
 * line, or right after the checkpoint) or the end. */
static vulnid_status
verify_one_proof(const char *data, gsize len, gsize *p, const note_key *key, const feedlog_policy *pol,
		 feedlog_line_fn fn, gpointer fdata, feedlog_result *res, GError **err)
{
	g_autoptr(GArray) proof = g_array_new(FALSE, FALSE, sizeof(tlog_hash));
	g_autoptr(note) n = NULL;
	g_autofree guchar *leaf_data = NULL;
	g_autofree char *extra = NULL;
	checkpoint cp = { 0 };
	const char *line, *next;
	gsize ll, elen = 0, end, note_end;
	guint64 index;
	tlog_hash leaf;
	vulnid_status s;
	guint ops = 0;
	int version = 0;

	if (!next_line(data, len, p, &line, &ll) || ll != strlen(PROOF_HEADER) || memcmp(line, PROOF_HEADER, ll) != 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a tlog-proof (%s)", PROOF_HEADER);
	if (!next_line(data, len, p, &line, &ll) || ll < 7 || memcmp(line, "extra ", 6) != 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "a tlog-proof without the line as its extra data");
	extra = g_strndup(line + 6, ll - 6);
	leaf_data = g_base64_decode(extra, &elen);
	if (!next_line(data, len, p, &line, &ll) || ll < 7 || memcmp(line, "index ", 6) != 0 ||
	    !parse_u63(line + 6, ll - 6, &index))
		return vulnid_fail(err, VULNID_ERR_INVALID, "a tlog-proof without its index");
	s = parse_hashes(data, len, p, TLOG_MAX_PROOF, proof, err);
	if (s != VULNID_OK)
		return s;
	next = g_strstr_len(data + *p, (gssize) (len - *p), "\n" PROOF_HEADER "\n");
	end = next != NULL ? (gsize) (next - data) + 1 : len;
	note_end = end;
	if (next != NULL && note_end - *p >= 2 && data[note_end - 2] == '\n')
		note_end--;
	s = note_parse(data + *p, note_end - *p, &n, err);
	*p = end;
	if (s == VULNID_OK)
		s = checkpoint_parse(n->text, &cp, err);
	if (s != VULNID_OK)
		return s;
	if (strcmp(cp.origin, key->name) != 0 || note_verify_key(n, key, NULL) != NOTE_SIG_GOOD)
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint of the proof for entry %" G_GUINT64_FORMAT
				" is not signed by the log key %s", index, key->name);
	if (s == VULNID_OK)
		s = feedlog_count_cosignatures(n, cp.origin, pol, &res->cosignatures, err);
	/* The line's log entry is the leaf (version 2), else the line itself
	 * (version 1): a feed line never has the form of an entry, nor the
	 * other way round, so a leaf proves one line only. */
	for (int v = 2; s == VULNID_OK && v >= 1 && version == 0; v--)
		if (line_leaf(v, (const char *) leaf_data, elen, &leaf) &&
		    tlog_check_inclusion(index, cp.size, &leaf, (const tlog_hash *) proof->data, proof->len, &cp.root,
					 &ops))
			version = v;
	if (s == VULNID_OK && version == 0)
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the inclusion proof for entry %" G_GUINT64_FORMAT
				" does not verify", index);
	if (s == VULNID_OK) {
		res->size = cp.size;
		res->version = version;
		g_free(res->root);
		res->root = tlog_hash_b64(&cp.root);
		g_free(res->origin);
		res->origin = g_strdup(cp.origin);
		res->proof_hashes = proof->len;
		res->hash_ops = ops;
		if (fn != NULL)
			fn((const char *) leaf_data, elen, index, fdata);
	}
	checkpoint_clear(&cp);
	return s;
}

vulnid_status
feedlog_verify_proofs(const char *data, gsize len, const note_key *key, const feedlog_policy *p,
		      feedlog_line_fn fn, gpointer fdata, feedlog_result *res, GError **err)
{
	gsize pos = 0;
	guint count = 0;
	vulnid_status s = VULNID_OK;

	memset(res, 0, sizeof *res);
	if (len == 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no proof");
	while (pos < len && s == VULNID_OK) {
		if (++count > FEEDLOG_MAX_PROOFS)
			return vulnid_fail(err, VULNID_ERR_TOOBIG, "more than %d proofs", FEEDLOG_MAX_PROOFS);
		s = verify_one_proof(data, len, &pos, key, p, fn, fdata, res, err);
	}
	return s;
}

/* ---- the witnesses' cosignatures ------------------------------------------------------- */

void
feedlog_cosign_result_clear(feedlog_cosign_result *r)
{
	g_clear_pointer(&r->problems, g_ptr_array_unref);
}

static void problem(feedlog_cosign_result *r, const note_witness *w, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
problem(feedlog_cosign_result *r, const note_witness *w, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_ptr_array_add(r->problems, g_strdup_printf("witness %s (%s): %s", w->key->name,
						     w->url != NULL ? w->url : w->path, msg));
}

/* The line of w's signature in signature lines sigs (after the text of n),
 * if it is a good cosignature of n's text. */
static char *
good_cosignature(const note_witness *w, const note *n, const char *sigs, gsize len)
{
	g_autofree char *all = g_strdup_printf("%s\n%.*s", n->text, (int) len, sigs);
	g_autoptr(note) x = NULL;

	if (len == 0 || note_parse(all, strlen(all), &x, NULL) != VULNID_OK || strcmp(x->text, n->text) != 0 ||
	    note_verify_key(x, w->key, NULL) != NOTE_SIG_GOOD)
		return NULL;
	for (guint i = 0; i < x->sigs->len; i++) {
		const note_sig *sg = g_ptr_array_index(x->sigs, i);

		if (sg->id == w->key->id && strcmp(sg->name, w->key->name) == 0)
			return g_strdup(sg->line);
	}
	return NULL;
}

/* From a witness's published copy of the checkpoint. */
static char *
cosignature_from_copy(const note_witness *w, const note *n, const checkpoint *cp, feedlog_cosign_result *r)
{
	g_autofree char *file = witness_copy_path(w->path, cp->origin);
	g_autoptr(GError) e = NULL;
	g_autoptr(GBytes) b = read_limited(file, NOTE_MAX_SIZE, &e);
	g_autoptr(note) copy = NULL;
	const char *d;
	gsize len;

	if (b == NULL) {
		problem(r, w, "%s", e->message);
		return NULL;
	}
	d = g_bytes_get_data(b, &len);
	if (note_parse(d, len, &copy, NULL) != VULNID_OK || strcmp(copy->text, n->text) != 0) {
		problem(r, w, "'%s' is not a copy of the checkpoint of %" G_GUINT64_FORMAT " entries (not cosigned yet)",
			file, cp->size);
		return NULL;
	}
	for (guint i = 0; i < copy->sigs->len; i++) {
		const note_sig *sg = g_ptr_array_index(copy->sigs, i);

		if (sg->id == w->key->id && strcmp(sg->name, w->key->name) == 0) {
			char *line = good_cosignature(w, n, sg->line, strlen(sg->line));

			if (line == NULL)
				problem(r, w, "'%s': its cosignature does not verify", file);
			return line;
		}
	}
	problem(r, w, "'%s' holds no cosignature of this witness", file);
	return NULL;
}

/* The first line of a response, for a message. */
static char *
first_line(const GString *resp)
{
	gsize n = strcspn(resp->str, "\r\n");

	return g_utf8_make_valid(resp->str, (gssize) MIN(n, 200));
}

/* tlog-witness add-checkpoint: the checkpoint with a consistency proof
 * from what the witness has (old_size first, then what a 409 says). */
static char *
cosignature_from_url(const note_witness *w, const char *logdir, GBytes *raw, const note *n, const checkpoint *cp,
		     guint64 old_size, feedlog_post_fn post, gpointer data, feedlog_cosign_result *r)
{
	g_autofree char *url = g_strconcat(w->url, "/add-checkpoint", NULL);
	g_autoptr(tlog_tiles) t = tlog_tiles_open(logdir, cp->size);
	guint64 old = old_size <= cp->size ? old_size : 0;

	for (int attempt = 0; attempt < WITNESS_ATTEMPTS; attempt++) {
		g_autoptr(GString) body = g_string_new(NULL);
		g_autoptr(GString) resp = g_string_new(NULL);
		g_autoptr(GArray) proof = NULL;
		g_autoptr(GError) e = NULL;
		g_autofree char *why = NULL;
		guint status = 0;
		guint64 theirs = 0;
		char *line;

		if (tlog_prove_consistency(t, old, cp->size, &proof, &e) != VULNID_OK) {
			problem(r, w, "%s", e->message);
			return NULL;
		}
		g_string_append_printf(body, "old %" G_GUINT64_FORMAT "\n", old);
		append_proof(body, proof);
		g_string_append_c(body, '\n');
		g_string_append_len(body, g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));
		if (post(url, body->str, body->len, MAX_WITNESS_RESPONSE, &status, resp, data, &e) != VULNID_OK) {
			problem(r, w, "%s", e != NULL ? e->message : "the request failed");
			return NULL;
		}
		why = first_line(resp);
		if (status == 200) {
			line = good_cosignature(w, n, resp->str, resp->len);
			if (line == NULL)
				problem(r, w, "the answer holds no good cosignature of the checkpoint");
			return line;
		}
		/* 409: the witness has another size; prove from there. */
		if (status == 409 && g_ascii_string_to_unsigned(why, 10, 0, G_MAXINT64, &theirs, NULL)) {
			if (theirs <= cp->size && theirs != old) {
				old = theirs;
				continue;
			}
			if (theirs > cp->size)
				problem(r, w, "it cosigned a tree of %" G_GUINT64_FORMAT " entries, more than this log's %"
					G_GUINT64_FORMAT " (a fork, or a log rolled back)", theirs, cp->size);
			else
				problem(r, w, "it refused the proof from its own size %" G_GUINT64_FORMAT, theirs);
		} else if (status == 409) {
			problem(r, w, "a 409 answer without a tree size");
		} else {
			problem(r, w, "HTTP status %u: %s", status, why);
		}
		return NULL;
	}
	problem(r, w, "no cosignature after %d attempts", WITNESS_ATTEMPTS);
	return NULL;
}

vulnid_status
feedlog_cosign(const char *logdir, const note_key *key, GPtrArray *witnesses, guint64 old_size,
	       feedlog_post_fn post, gpointer post_data, feedlog_cosign_result *res, GError **err)
{
	g_autofree char *path = g_build_filename(logdir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(GString) added = g_string_new(NULL);
	checkpoint cp = { 0 };
	vulnid_status s;

	memset(res, 0, sizeof *res);
	res->problems = g_ptr_array_new_with_free_func(g_free);
	res->witnesses = witnesses != NULL ? witnesses->len : 0;
	if (res->witnesses == 0)
		return VULNID_OK;
	s = checkpoint_open(path, key, &n, &cp, err);
	if (s == VULNID_OK)
		raw = read_limited(path, NOTE_MAX_SIZE, err);
	if (raw == NULL) {
		checkpoint_clear(&cp);
		return s != VULNID_OK ? s : VULNID_ERR_IO;
	}
	for (guint i = 0; i < witnesses->len; i++) {
		const note_witness *w = g_ptr_array_index(witnesses, i);
		g_autofree char *line = NULL;

		if (note_verify_key(n, w->key, NULL) == NOTE_SIG_GOOD) {
			res->cosigned++;
			continue;
		}
		if (w->path != NULL)
			line = cosignature_from_copy(w, n, &cp, res);
		else if (post == NULL)
			problem(res, w, "not asked: no HTTP client");
		else
			line = cosignature_from_url(w, logdir, raw, n, &cp, old_size, post, post_data, res);
		if (line != NULL) {
			g_string_append(added, line);
			res->cosigned++;
			res->added++;
		}
	}
	/* The log's checkpoint as it was, the new cosignatures after it. */
	if (added->len > 0) {
		g_autoptr(GString) all = g_string_new_len(g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));

		g_string_append_len(all, added->str, (gssize) added->len);
		s = export_write_file(path, all->str, all->len, 0644, err);
	}
	checkpoint_clear(&cp);
	return s;
}
