/* feedlog.c - the feed's transparency log: update at export, checks,
 * proofs (feedlog.h, vulnid-feed(5) LOG) */
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

vulnid_status
feedlog_key_open(const char *instance_dir, const char *origin, const char *domain, const char *prefix,
		 const char *fpr, note_key **key, gboolean *created, GError **err)
{
	g_autofree char *path = g_build_filename(instance_dir, FEEDLOG_KEY_FILE, NULL);
	g_autofree char *low = g_ascii_strdown(fpr, -1);
	g_autofree char *def = g_strdup_printf("%s/vulnid/%s/%.16s", domain, prefix, low);

	return note_key_load_or_create(path, origin != NULL ? origin : def, NOTE_ED25519, key, created, err);
}

void
feedlog_state_clear(feedlog_state *st)
{
	g_clear_pointer(&st->origin, g_free);
	g_clear_pointer(&st->root, g_free);
}

void
feedlog_result_clear(feedlog_result *r)
{
	g_clear_pointer(&r->origin, g_free);
	g_clear_pointer(&r->root, g_free);
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

	if (!g_file_test(path, G_FILE_TEST_EXISTS) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
		memset(c, 0, sizeof *c);
		c->origin = g_strdup(key->name);
		tlog_empty_hash(&c->root);
		return VULNID_OK;
	}
	return checkpoint_open(path, key, &n, c, err);
}

vulnid_status
feedlog_check_published(const char *dir, const note_key *key, GError **err)
{
	g_autofree char *vk_path = g_build_filename(dir, FEEDLOG_VKEY, NULL);
	g_autofree char *vk_line = note_key_vkey(key);
	g_autofree char *vk = g_strconcat(vk_line, "\n", NULL);
	g_autoptr(GBytes) have = read_limited(vk_path, MAX_VKEY_FILE, NULL);
	g_autoptr(GBytes) want = g_bytes_new(vk, strlen(vk));
	checkpoint cp = { 0 };
	vulnid_status s;

	if (have != NULL && !g_bytes_equal(have, want))
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is the key of another log than this instance's"
				   " log.key (%s): restore the log.key that made this feed (vulnid backup --all"
				   " carries it); nothing was written", vk_path, key->name);
	s = current_checkpoint(dir, key, &cp, err);
	checkpoint_clear(&cp);
	if (s != VULNID_OK)
		g_prefix_error(err, "nothing was written: ");
	return s;
}

vulnid_status
feedlog_update(const char *dir, const note_key *key, const char *fpr, const feedlog_file *files, guint nfiles,
	       feedlog_state *out, GError **err)
{
	g_autoptr(GArray) refs = g_array_new(FALSE, FALSE, sizeof(line_ref));
	g_autoptr(tlog_builder) b = NULL;
	g_autofree int *fds = g_new(int, MAX(nfiles, 1));
	g_autofree char *buf = NULL;
	checkpoint cp = { 0 };
	guint64 total = 0, start;
	gsize cap = 0;
	tlog_hash root;
	vulnid_status s;

	memset(out, 0, sizeof *out);
	for (guint i = 0; i < nfiles; i++) {
		total += files[i].lines;
		fds[i] = -1;
	}
	/* the published checkpoint first: nothing is replaced unless it is
	 * this key's */
	s = current_checkpoint(dir, key, &cp, err);
	if (s == VULNID_OK)
		s = publish_key(dir, key, fpr, err);
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
		s = tlog_builder_new(dir, TLOG_WRITE, cp.size, &b, err);
	for (guint i = 0; s == VULNID_OK && i <= refs->len; i++) {
		const line_ref *r = i < refs->len ? &g_array_index(refs, line_ref, i) : NULL;

		/* What the log had must still make its checkpoint's root. */
		if (tlog_builder_size(b) == cp.size) {
			tlog_builder_root(b, &root);
			if (memcmp(root.b, cp.root.b, TLOG_HASH_LEN) != 0) {
				s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the tiles and the feed's lines do not make"
						" the root hash of its checkpoint", dir);
				break;
			}
		}
		if (r == NULL)
			break;
		s = read_ref(files, r, fds, &buf, &cap, err);
		if (s == VULNID_OK)
			s = tlog_builder_add(b, buf, r->len, err);
	}
	for (guint i = 0; i < nfiles; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (s == VULNID_OK)
		s = tlog_builder_finish(b, err);
	if (s == VULNID_OK)
		s = tlog_builder_sync(b, err);
	if (s != VULNID_OK)
		goto out;
	tlog_builder_root(b, &root);
	{
		g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);

		/* A checkpoint per export that grew the log; an unchanged one
		 * keeps its checkpoint, cosignatures and all. */
		if (total > cp.size || !g_file_test(path, G_FILE_TEST_EXISTS)) {
			s = write_checkpoint(dir, key, total, &root, err);
			if (s != VULNID_OK)
				goto out;
			out->checkpoint_written = TRUE;
		}
	}
	out->origin = g_strdup(key->name);
	out->size = total;
	out->root = tlog_hash_b64(&root);
	out->appended = total - cp.size;
	out->stats = *tlog_builder_stats_get(b);
out:
	checkpoint_clear(&cp);
	return s;
}

/* ---- checking a whole feed ------------------------------------------------------------ */

struct feedlog_checker {
	char *dir;
	tlog_builder *b;
	note *n;
	checkpoint cp;
	GError *err;		/* the first failure of a line */
};

void
feedlog_checker_free(feedlog_checker *c)
{
	if (c == NULL)
		return;
	g_free(c->dir);
	tlog_builder_free(c->b);
	note_free(c->n);
	checkpoint_clear(&c->cp);
	g_clear_error(&c->err);
	g_free(c);
}

vulnid_status
feedlog_checker_new(const char *dir, const note_key *key, feedlog_checker **out, GError **err)
{
	g_autoptr(feedlog_checker) c = g_new0(feedlog_checker, 1);
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	vulnid_status s;

	c->dir = g_strdup(dir);
	s = checkpoint_open(path, key, &c->n, &c->cp, err);
	if (s == VULNID_OK)
		s = tlog_builder_new(dir, TLOG_CHECK, 0, &c->b, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&c);
	return s;
}

void
feedlog_check_line(feedlog_checker *c, const char *line, gsize len)
{
	if (c->err != NULL)
		return;
	if (tlog_builder_size(c->b) >= c->cp.size) {
		vulnid_fail(&c->err, VULNID_ERR_CORRUPT, "'%s/%s' covers %" G_GUINT64_FORMAT " lines, the feed has more",
			    c->dir, FEEDLOG_CHECKPOINT, c->cp.size);
		return;
	}
	tlog_builder_add(c->b, line, len, &c->err);
}

vulnid_status
feedlog_check_end(feedlog_checker *c, feedlog_state *out, GError **err)
{
	tlog_hash root;
	vulnid_status s;

	memset(out, 0, sizeof *out);
	if (c->err != NULL) {
		s = (vulnid_status) c->err->code;
		g_propagate_error(err, g_steal_pointer(&c->err));
		return s;
	}
	if (tlog_builder_size(c->b) != c->cp.size)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s' covers %" G_GUINT64_FORMAT " lines, the feed has %"
				   G_GUINT64_FORMAT, c->dir, FEEDLOG_CHECKPOINT, c->cp.size, tlog_builder_size(c->b));
	s = tlog_builder_finish(c->b, err);
	if (s != VULNID_OK)
		return s;
	tlog_builder_root(c->b, &root);
	if (memcmp(root.b, c->cp.root.b, TLOG_HASH_LEN) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s': the feed's lines make another root hash",
				   c->dir, FEEDLOG_CHECKPOINT);
	out->origin = g_strdup(c->cp.origin);
	out->size = c->cp.size;
	out->root = tlog_hash_b64(&root);
	out->stats = *tlog_builder_stats_get(c->b);
	return VULNID_OK;
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

vulnid_status
feedlog_count_cosignatures(const note *n, const char *origin, const feedlog_policy *p, guint *count,
			   GError **err)
{
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func((GDestroyNotify) note_free);

	*count = 0;
	if (p == NULL || p->witnesses == NULL)
		return VULNID_OK;
	for (guint i = 0; p->cosigned != NULL && i < p->cosigned->len; i++) {
		const char *path = g_ptr_array_index(p->cosigned, i);
		g_autofree char *h = origin_hash(origin);
		g_autofree char *file = g_file_test(path, G_FILE_TEST_IS_DIR) ?
					g_build_filename(path, h, FEEDLOG_CHECKPOINT, NULL) : g_strdup(path);
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
feedlog_verify_checkpoint(const char *dir, const note_key *key, const feedlog_policy *p, feedlog_result *res,
			  GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	checkpoint cp = { 0 };
	tlog_hash root;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	s = checkpoint_open(path, key, &n, &cp, err);
	if (s != VULNID_OK)
		return s;
	t = tlog_tiles_open(dir, cp.size);
	s = tlog_tiles_root(t, &root, err);
	if (s == VULNID_OK && memcmp(root.b, cp.root.b, TLOG_HASH_LEN) != 0)
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the tiles make another root hash", path);
	if (s == VULNID_OK)
		s = feedlog_count_cosignatures(n, cp.origin, p, &res->cosignatures, err);
	if (s == VULNID_OK && p != NULL && p->previous != NULL)
		s = check_previous(p->previous, key, &cp, t, NULL, res, err);
	res->origin = g_strdup(cp.origin);
	res->size = cp.size;
	res->root = tlog_hash_b64(&cp.root);
	res->tiles_read = tlog_tiles_reads(t);
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

static vulnid_status
read_checkpoint_unverified(const char *dir, GBytes **raw, note **n, checkpoint *c, GError **err)
{
	g_autofree char *path = g_build_filename(dir, FEEDLOG_CHECKPOINT, NULL);
	vulnid_status s;
	gsize len;
	const char *d;

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

static void
append_proof(GString *out, const GArray *proof)
{
	for (guint i = 0; i < proof->len; i++) {
		g_autofree char *b = tlog_hash_b64(&g_array_index(proof, tlog_hash, i));

		g_string_append_printf(out, "%s\n", b);
	}
}

vulnid_status
feedlog_prove_entry(const char *dir, const char *id, GString *out, guint *proofs, GError **err)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) frames = g_array_new(FALSE, FALSE, sizeof(frame_ref));
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	g_autofree char *buf = NULL;
	checkpoint cp = { 0 };
	vulnid_status s;
	int fd = -1;
	guint fd_file = G_MAXUINT;

	*proofs = 0;
	s = read_checkpoint_unverified(dir, &raw, &n, &cp, err);
	if (s == VULNID_OK)
		s = scan_feed(dir, id, paths, frames, err);
	if (s != VULNID_OK)
		goto out;
	t = tlog_tiles_open(dir, cp.size);
	for (guint64 i = 0; i < frames->len && i < cp.size && s == VULNID_OK; i++) {
		const frame_ref *r = &g_array_index(frames, frame_ref, i);
		g_autoptr(GArray) proof = NULL;
		g_autofree char *extra = NULL;

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
		if (s != VULNID_OK)
			break;
		extra = g_base64_encode((const guchar *) buf, r->len);
		g_string_append_printf(out, PROOF_HEADER "\nextra %s\nindex %" G_GUINT64_FORMAT "\n", extra, i);
		append_proof(out, proof);
		g_string_append_c(out, '\n');
		g_string_append_len(out, g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));
		(*proofs)++;
	}
	if (fd >= 0)
		close(fd);
	if (s == VULNID_OK && *proofs == 0)
		s = vulnid_fail(err, VULNID_ERR_NOTFOUND, "'%s' has no line of %s up to its checkpoint", dir, id);
out:
	checkpoint_clear(&cp);
	return s;
}

vulnid_status
feedlog_prove_consistency(const char *dir, guint64 old_size, GString *out, GError **err)
{
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(tlog_tiles) t = NULL;
	g_autoptr(GArray) proof = NULL;
	checkpoint cp = { 0 };
	vulnid_status s;

	s = read_checkpoint_unverified(dir, &raw, &n, &cp, err);
	if (s != VULNID_OK)
		return s;
	t = tlog_tiles_open(dir, cp.size);
	s = tlog_prove_consistency(t, old_size, cp.size, &proof, err);
	if (s == VULNID_OK) {
		g_string_append_printf(out, "old %" G_GUINT64_FORMAT "\n", old_size);
		append_proof(out, proof);
		g_string_append_c(out, '\n');
		g_string_append_len(out, g_bytes_get_data(raw, NULL), (gssize) g_bytes_get_size(raw));
	}
	checkpoint_clear(&cp);
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

/* One tlog-proof from *p: up to the next header line or the end. */
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
	gsize ll, elen = 0, end;
	guint64 index;
	tlog_hash leaf;
	vulnid_status s;
	guint ops = 0;

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
	s = note_parse(data + *p, end - *p, &n, err);
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
	tlog_leaf_hash(leaf_data, elen, &leaf);
	if (s == VULNID_OK && !tlog_check_inclusion(index, cp.size, &leaf, (const tlog_hash *) proof->data,
						    proof->len, &cp.root, &ops))
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the inclusion proof for entry %" G_GUINT64_FORMAT
				" does not verify", index);
	if (s == VULNID_OK) {
		res->size = cp.size;
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
