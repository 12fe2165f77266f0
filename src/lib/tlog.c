/* tlog.c - Merkle tree hashing, tiles and proofs (tlog.h)
 *
 * The tree is RFC 9162's: MTH of n > 1 leaves splits at the largest power
 * of two k < n.  Tiles (C2SP tlog-tiles) store, at level l, the hashes of
 * the perfect subtrees of 256^l leaves; any perfect subtree of 2^h leaves
 * is 2^(h mod 8) consecutive hashes of one tile at level h / 8, hashed
 * together.  So a proof costs O(log n) hashes of the proof and at most
 * 255 hash computations per proof hash, from at most two tiles a level. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "fileio.h"
#include "tlog.h"

/* ---- hashing ----------------------------------------------------------------------- */

static const EVP_MD *
sha256_md(void)
{
	static EVP_MD *md;

	if (md == NULL)
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
	g_assert(md != NULL);
	return md;
}

static void
sha256_parts(const void *a, gsize alen, const void *b, gsize blen, const void *c, gsize clen, guint8 out[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;

	g_assert(ctx != NULL);
	if (EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1 ||
	    (alen > 0 && EVP_DigestUpdate(ctx, a, alen) != 1) ||
	    (blen > 0 && EVP_DigestUpdate(ctx, b, blen) != 1) ||
	    (clen > 0 && EVP_DigestUpdate(ctx, c, clen) != 1) ||
	    EVP_DigestFinal_ex(ctx, out, &n) != 1 || n != 32)
		g_error("SHA-256 failed");
	EVP_MD_CTX_free(ctx);
}

void
tlog_sha256(const void *data, gsize len, guint8 out[32])
{
	sha256_parts(data, len, NULL, 0, NULL, 0, out);
}

void
tlog_leaf_hash(const void *data, gsize len, tlog_hash *out)
{
	static const guint8 zero = 0x00;

	sha256_parts(&zero, 1, data, len, NULL, 0, out->b);
}

void
tlog_node_hash(const tlog_hash *left, const tlog_hash *right, tlog_hash *out)
{
	static const guint8 one = 0x01;
	tlog_hash r;

	sha256_parts(&one, 1, left->b, TLOG_HASH_LEN, right->b, TLOG_HASH_LEN, r.b);
	*out = r;
}

void
tlog_empty_hash(tlog_hash *out)
{
	tlog_sha256("", 0, out->b);
}

char *
tlog_hash_b64(const tlog_hash *h)
{
	return g_base64_encode(h->b, TLOG_HASH_LEN);
}

gboolean
tlog_hash_from_b64(const char *s, gsize len, tlog_hash *out)
{
	g_autofree char *copy = NULL;
	g_autofree guchar *raw = NULL;
	g_autofree char *again = NULL;
	gsize n = 0;

	/* 32 bytes are 44 characters with one '='; the round trip rejects
	 * every other spelling (stray characters, missing padding). */
	if (len != 44)
		return FALSE;
	copy = g_strndup(s, len);
	raw = g_base64_decode(copy, &n);
	if (n != TLOG_HASH_LEN)
		return FALSE;
	again = g_base64_encode(raw, n);
	if (strcmp(again, copy) != 0)
		return FALSE;
	memcpy(out->b, raw, TLOG_HASH_LEN);
	return TRUE;
}

/* x >> s for any s (a shift by 64 or more is undefined in C). */
static guint64
shr(guint64 x, guint s)
{
	return s >= 64 ? 0 : x >> s;
}

char *
tlog_tile_path(int level, guint64 index, guint width)
{
	GString *p = g_string_new("tile/");
	char groups[8][4];
	int n = 0;

	if (level < 0)
		g_string_append(p, "entries/");
	else
		g_string_append_printf(p, "%d/", level);
	do {
		g_snprintf(groups[n++], sizeof groups[0], "%03u", (guint) (index % 1000));
		index /= 1000;
	} while (index > 0);
	while (n-- > 1)
		g_string_append_printf(p, "x%s/", groups[n]);
	g_string_append(p, groups[0]);
	if (width > 0 && width < TLOG_TILE_WIDTH)
		g_string_append_printf(p, ".p/%u", width);
	return g_string_free(p, FALSE);
}

/* MTH of 2^k consecutive hashes (a perfect subtree), in place. */
static void
perfect_root(tlog_hash *h, guint count, tlog_hash *out, guint64 *ops)
{
	for (guint w = count; w > 1; w /= 2) {
		for (guint i = 0; i < w / 2; i++)
			tlog_node_hash(&h[2 * i], &h[2 * i + 1], &h[i]);
		if (ops != NULL)
			*ops += w / 2;
	}
	*out = h[0];
}

/* Fold perfect subtree hashes, left to right, into the RFC 9162 root:
 * the tree of n leaves is the perfect subtrees of n's binary digits. */
static void
fold_right(const tlog_hash *subs, guint n, tlog_hash *out, guint64 *ops)
{
	tlog_hash r = subs[n - 1];

	for (guint i = n - 1; i-- > 0;) {
		tlog_node_hash(&subs[i], &r, &r);
		if (ops != NULL)
			(*ops)++;
	}
	*out = r;
}

/* ---- reading tiles ------------------------------------------------------------------ */

struct tlog_tiles {
	char *dir;
	guint64 size;
	GHashTable *cache;	/* path -> GBytes */
	guint reads;
	guint64 hashes;
};

tlog_tiles *
tlog_tiles_open(const char *dir, guint64 size)
{
	tlog_tiles *t = g_new0(tlog_tiles, 1);

	t->dir = g_strdup(dir);
	t->size = size;
	t->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
	return t;
}

void
tlog_tiles_free(tlog_tiles *t)
{
	if (t == NULL)
		return;
	g_free(t->dir);
	g_hash_table_unref(t->cache);
	g_free(t);
}

guint
tlog_tiles_reads(const tlog_tiles *t)
{
	return t->reads;
}

/* A regular file of exactly want bytes (no symlinks, no FIFOs). */
static GBytes *
read_exact(const char *path, gsize want, int *err_no)
{
	struct stat sb;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*err_no = 0;
	if (fd < 0) {
		*err_no = errno;
		return NULL;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (gsize) sb.st_size != want) {
		*err_no = EINVAL;
		close(fd);
		return NULL;
	}
	buf = g_malloc(want + 1);
	n = pread(fd, buf, want, 0);
	close(fd);
	if (n != (ssize_t) want) {
		*err_no = EIO;
		g_free(buf);
		return NULL;
	}
	return g_bytes_new_take(buf, want);
}

/* The stored hash j of level `level` (the subtree of 256^level leaves
 * from j * 256^level), from the full tile or the partial tile of size. */
static vulnid_status
tile_hash(tlog_tiles *t, guint level, guint64 j, tlog_hash *out, guint count, GError **err)
{
	guint64 index = j / TLOG_TILE_WIDTH;
	guint off = (guint) (j % TLOG_TILE_WIDTH);
	guint64 full = shr(t->size, 8 * (level + 1));
	guint width = index < full ? TLOG_TILE_WIDTH : (guint) (shr(t->size, 8 * level) & 0xff);
	g_autofree char *rel = NULL;
	GBytes *b;

	if (level >= TLOG_MAX_LEVEL || index > full || off + count > width)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no hash %" G_GUINT64_FORMAT " at level %u in a tree of %"
				   G_GUINT64_FORMAT, j, level, t->size);
	rel = tlog_tile_path((int) level, index, width);
	b = g_hash_table_lookup(t->cache, rel);
	if (b == NULL) {
		g_autofree char *path = g_build_filename(t->dir, rel, NULL);
		int e_no;

		b = read_exact(path, (gsize) width * TLOG_HASH_LEN, &e_no);
		if (b == NULL)
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "cannot read tile '%s': %s", path,
					   e_no == EINVAL ? "not a regular file of the right size" : g_strerror(e_no));
		t->reads++;
		g_hash_table_insert(t->cache, g_steal_pointer(&rel), b);
	}
	memcpy(out, (const guint8 *) g_bytes_get_data(b, NULL) + (gsize) off * TLOG_HASH_LEN,
	       (gsize) count * TLOG_HASH_LEN);
	return VULNID_OK;
}

/* The perfect subtree of 2^height leaves number i. */
static vulnid_status
node_hash(tlog_tiles *t, guint height, guint64 i, tlog_hash *out, GError **err)
{
	guint level = height / 8, r = height % 8;
	tlog_hash h[128];
	vulnid_status s;

	s = tile_hash(t, level, i << r, h, 1u << r, err);
	if (s == VULNID_OK)
		perfect_root(h, 1u << r, out, &t->hashes);
	return s;
}

static guint64
largest_pow2_below(guint64 n)
{
	guint64 k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

vulnid_status
tlog_tiles_range(tlog_tiles *t, guint64 lo, guint64 hi, tlog_hash *out, GError **err)
{
	guint64 n = hi - lo;
	tlog_hash l, r;
	vulnid_status s;
	guint64 k;

	if (lo >= hi || hi > t->size)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no range %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
				   " in a tree of %" G_GUINT64_FORMAT, lo, hi, t->size);
	if ((n & (n - 1)) == 0 && lo % n == 0)
		return node_hash(t, (guint) g_bit_nth_lsf(n, -1), lo / n, out, err);
	k = largest_pow2_below(n);
	if (lo % k != 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "range %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
				   " is not a subtree", lo, hi);
	s = tlog_tiles_range(t, lo, lo + k, &l, err);
	if (s == VULNID_OK)
		s = tlog_tiles_range(t, lo + k, hi, &r, err);
	if (s == VULNID_OK) {
		tlog_node_hash(&l, &r, out);
		t->hashes++;
	}
	return s;
}

vulnid_status
tlog_tiles_root(tlog_tiles *t, tlog_hash *out, GError **err)
{
	if (t->size == 0) {
		tlog_empty_hash(out);
		return VULNID_OK;
	}
	return tlog_tiles_range(t, 0, t->size, out, err);
}

static vulnid_status
path_rec(tlog_tiles *t, guint64 m, guint64 lo, guint64 hi, GArray *out, GError **err)
{
	guint64 k;
	tlog_hash h;
	vulnid_status s;

	if (hi - lo <= 1)
		return VULNID_OK;
	k = largest_pow2_below(hi - lo);
	if (m < lo + k) {
		s = path_rec(t, m, lo, lo + k, out, err);
		if (s == VULNID_OK)
			s = tlog_tiles_range(t, lo + k, hi, &h, err);
	} else {
		s = path_rec(t, m, lo + k, hi, out, err);
		if (s == VULNID_OK)
			s = tlog_tiles_range(t, lo, lo + k, &h, err);
	}
	if (s == VULNID_OK)
		g_array_append_val(out, h);
	return s;
}

vulnid_status
tlog_prove_inclusion(tlog_tiles *t, guint64 index, guint64 size, GArray **proof, GError **err)
{
	g_autoptr(GArray) p = g_array_new(FALSE, FALSE, sizeof(tlog_hash));
	vulnid_status s;

	if (index >= size || size > t->size)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no entry %" G_GUINT64_FORMAT " in a tree of %"
				   G_GUINT64_FORMAT, index, size);
	s = path_rec(t, index, 0, size, p, err);
	if (s == VULNID_OK)
		*proof = g_steal_pointer(&p);
	return s;
}

static vulnid_status
subproof_rec(tlog_tiles *t, guint64 m, guint64 lo, guint64 hi, gboolean b, GArray *out, GError **err)
{
	guint64 k;
	tlog_hash h;
	vulnid_status s;

	if (m == hi) {
		if (b)
			return VULNID_OK;
		s = tlog_tiles_range(t, lo, hi, &h, err);
		if (s == VULNID_OK)
			g_array_append_val(out, h);
		return s;
	}
	k = largest_pow2_below(hi - lo);
	if (m <= lo + k) {
		s = subproof_rec(t, m, lo, lo + k, b, out, err);
		if (s == VULNID_OK)
			s = tlog_tiles_range(t, lo + k, hi, &h, err);
	} else {
		s = subproof_rec(t, m, lo + k, hi, FALSE, out, err);
		if (s == VULNID_OK)
			s = tlog_tiles_range(t, lo, lo + k, &h, err);
	}
	if (s == VULNID_OK)
		g_array_append_val(out, h);
	return s;
}

vulnid_status
tlog_prove_consistency(tlog_tiles *t, guint64 m, guint64 n, GArray **proof, GError **err)
{
	g_autoptr(GArray) p = g_array_new(FALSE, FALSE, sizeof(tlog_hash));
	vulnid_status s = VULNID_OK;

	if (m > n || n > t->size)
		return vulnid_fail(err, VULNID_ERR_INVALID, "no consistency proof from %" G_GUINT64_FORMAT " to %"
				   G_GUINT64_FORMAT " in a tree of %" G_GUINT64_FORMAT, m, n, t->size);
	/* The empty tree and the tree itself need no proof. */
	if (m > 0 && m < n)
		s = subproof_rec(t, m, 0, n, TRUE, p, err);
	if (s == VULNID_OK)
		*proof = g_steal_pointer(&p);
	return s;
}

/* ---- checking proofs (RFC 9162 2.1.3.2, 2.1.4.2) ----------------------------------- */

gboolean
tlog_check_inclusion(guint64 index, guint64 size, const tlog_hash *leaf, const tlog_hash *proof, guint n,
		     const tlog_hash *root, guint *ops)
{
	guint64 fn = index, sn;
	tlog_hash r = *leaf;
	guint count = 0;

	if (index >= size || n > TLOG_MAX_PROOF)
		return FALSE;
	sn = size - 1;
	for (guint i = 0; i < n; i++) {
		if (sn == 0)
			return FALSE;
		if ((fn & 1) || fn == sn) {
			tlog_node_hash(&proof[i], &r, &r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			tlog_node_hash(&r, &proof[i], &r);
		}
		count++;
		fn >>= 1;
		sn >>= 1;
	}
	if (ops != NULL)
		*ops = count;
	return sn == 0 && memcmp(r.b, root->b, TLOG_HASH_LEN) == 0;
}

gboolean
tlog_check_consistency(guint64 m, guint64 n, const tlog_hash *old_root, const tlog_hash *new_root,
		       const tlog_hash *proof, guint len, guint *ops)
{
	tlog_hash path[TLOG_MAX_PROOF + 1];
	tlog_hash fr, sr;
	guint64 fn, sn;
	guint count = 0, k = 0;

	if (ops != NULL)
		*ops = 0;
	if (m > n || len > TLOG_MAX_PROOF)
		return FALSE;
	if (m == 0)
		return len == 0;
	if (m == n)
		return len == 0 && memcmp(old_root->b, new_root->b, TLOG_HASH_LEN) == 0;
	if (len == 0)
		return FALSE;
	if ((m & (m - 1)) == 0)
		path[k++] = *old_root;
	memcpy(&path[k], proof, (gsize) len * sizeof *proof);
	k += len;
	fn = m - 1;
	sn = n - 1;
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	fr = sr = path[0];
	for (guint i = 1; i < k; i++) {
		if (sn == 0)
			return FALSE;
		if ((fn & 1) || fn == sn) {
			tlog_node_hash(&path[i], &fr, &fr);
			tlog_node_hash(&path[i], &sr, &sr);
			count += 2;
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			tlog_node_hash(&sr, &path[i], &sr);
			count++;
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (ops != NULL)
		*ops = count;
	return sn == 0 && memcmp(fr.b, old_root->b, TLOG_HASH_LEN) == 0 &&
	       memcmp(sr.b, new_root->b, TLOG_HASH_LEN) == 0;
}

/* ---- building and checking tiles ----------------------------------------------------- */

struct tlog_builder {
	char *dir;
	tlog_builder_mode mode;
	guint64 start;			/* the size of the last checkpoint (TLOG_WRITE) */
	guint64 size;
	GArray *cur[TLOG_MAX_LEVEL];	/* hashes of the rightmost, unfinished tile per level */
	guint64 idx[TLOG_MAX_LEVEL];	/* its index */
	GPtrArray *entries;		/* GBytes of the level-0 tile's entries, for its bundle */
	gboolean bundle_ok;		/* every entry of it fits a bundle */
	tlog_builder_stats stats;
};

void
tlog_builder_free(tlog_builder *b)
{
	if (b == NULL)
		return;
	g_free(b->dir);
	for (guint l = 0; l < TLOG_MAX_LEVEL; l++)
		if (b->cur[l] != NULL)
			g_array_unref(b->cur[l]);
	g_ptr_array_unref(b->entries);
	g_free(b);
}

vulnid_status
tlog_builder_new(const char *dir, tlog_builder_mode mode, guint64 start_size, tlog_builder **out, GError **err)
{
	g_autoptr(tlog_builder) b = g_new0(tlog_builder, 1);

	b->dir = g_strdup(dir);
	b->mode = mode;
	b->entries = g_ptr_array_new_with_free_func((GDestroyNotify) g_bytes_unref);
	b->bundle_ok = TRUE;
	if (mode == TLOG_CHECK)
		start_size = 0;
	b->start = start_size;
	b->size = start_size - start_size % TLOG_TILE_WIDTH;
	for (guint l = 0; l < TLOG_MAX_LEVEL; l++) {
		guint w = l == 0 ? 0 : (guint) (shr(start_size, 8 * l) & 0xff);

		b->cur[l] = g_array_sized_new(FALSE, FALSE, sizeof(tlog_hash), TLOG_TILE_WIDTH);
		b->idx[l] = shr(start_size, 8 * (l + 1));
		if (w > 0) {
			g_autofree char *rel = tlog_tile_path((int) l, b->idx[l], w);
			g_autofree char *path = g_build_filename(dir, rel, NULL);
			g_autoptr(GBytes) data = NULL;
			int e_no;

			data = read_exact(path, (gsize) w * TLOG_HASH_LEN, &e_no);
			if (data == NULL)
				return vulnid_fail(err, VULNID_ERR_CORRUPT, "cannot read tile '%s': %s", path,
						   e_no == EINVAL ? "not a regular file of the right size" :
						   g_strerror(e_no));
			g_array_append_vals(b->cur[l], g_bytes_get_data(data, NULL), w);
		}
	}
	*out = g_steal_pointer(&b);
	return VULNID_OK;
}

guint64
tlog_builder_size(const tlog_builder *b)
{
	return b->size;
}

const tlog_builder_stats *
tlog_builder_stats_get(const tlog_builder *b)
{
	return &b->stats;
}

static vulnid_status
mkdirs_for(const char *path, GError **err)
{
	g_autofree char *d = g_path_get_dirname(path);

	if (g_mkdir_with_parents(d, 0755) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", d,
				   g_strerror(errno));
	return VULNID_OK;
}

/* Write a file whole under its name (a temporary file renamed); not
 * synced: tlog_builder_sync() syncs them all at once. */
static vulnid_status
write_unsynced(const char *path, const void *data, gsize len, GError **err)
{
	g_autofree char *tmp = g_strdup_printf("%s.tmp.XXXXXX", path);
	gboolean written;
	int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", tmp,
				   g_strerror(errno));
	written = fileio_write_all(fd, data, len);
	if (!written || fchmod(fd, 0644) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;

		if (!written)
			close(fd);
		unlink(tmp);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot write '%s': %s", path, g_strerror(e));
	}
	return VULNID_OK;
}

vulnid_status
tlog_builder_sync(const tlog_builder *b, GError **err)
{
	int fd;

	if (b->stats.tiles_written == 0)
		return VULNID_OK;
	fd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syncfs(fd) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot sync '%s': %s", b->dir, g_strerror(e));
	}
	close(fd);
	return VULNID_OK;
}

/* Write a tile or bundle, or compare it with what is there.  What a
 * checkpoint covers is immutable and must already say the same; what no
 * checkpoint covers yet (left by an export killed before its checkpoint)
 * is written again. */
static vulnid_status
emit(tlog_builder *b, const char *rel, const void *data, gsize len, gboolean covered, GError **err)
{
	g_autofree char *path = g_build_filename(b->dir, rel, NULL);
	g_autoptr(GBytes) have = NULL;
	int e_no;
	vulnid_status s;

	have = read_exact(path, len, &e_no);
	if (have != NULL && memcmp(g_bytes_get_data(have, NULL), data, len) == 0) {
		b->stats.tiles_checked++;
		return VULNID_OK;
	}
	if (b->mode == TLOG_CHECK || (covered && e_no != ENOENT))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' %s", path,
				   e_no == ENOENT ? "is missing" : "differs from the tile the entries make");
	s = mkdirs_for(path, err);
	if (s == VULNID_OK)
		s = write_unsynced(path, data, len, err);
	if (s == VULNID_OK)
		b->stats.tiles_written++;
	return s;
}

static vulnid_status
emit_bundle(tlog_builder *b, guint64 index, guint width, gboolean covered, GError **err)
{
	g_autofree char *rel = tlog_tile_path(-1, index, width);
	g_autoptr(GByteArray) out = NULL;

	if (!b->bundle_ok) {
		g_autofree char *path = g_build_filename(b->dir, rel, NULL);

		b->stats.bundles_skipped++;
		if (b->mode == TLOG_CHECK && g_file_test(path, G_FILE_TEST_EXISTS))
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' cannot exist: an entry of it is longer than"
					   " %d bytes", path, TLOG_MAX_BUNDLE_ENTRY);
		return VULNID_OK;
	}
	out = g_byte_array_new();
	for (guint i = 0; i < b->entries->len; i++) {
		gsize len;
		const guint8 *d = g_bytes_get_data(g_ptr_array_index(b->entries, i), &len);
		guint8 be[2] = { (guint8) (len >> 8), (guint8) len };

		g_byte_array_append(out, be, 2);
		g_byte_array_append(out, d, (guint) len);
	}
	return emit(b, rel, out->data, out->len, covered, err);
}

/* Level l's tile is full: store it, and its root one level up. */
static vulnid_status
complete(tlog_builder *b, guint l, GError **err)
{
	g_autofree char *rel = tlog_tile_path((int) l, b->idx[l], 0);
	tlog_hash h[TLOG_TILE_WIDTH], root;
	/* Its last leaf is at or below the last checkpoint's size. */
	gboolean covered = shr(b->start, 8 * (l + 1)) > b->idx[l];
	vulnid_status s;

	s = emit(b, rel, b->cur[l]->data, TLOG_TILE_WIDTH * TLOG_HASH_LEN, covered, err);
	if (s == VULNID_OK && l == 0)
		s = emit_bundle(b, b->idx[0], 0, covered, err);
	if (s != VULNID_OK)
		return s;
	if (l == 0) {
		g_ptr_array_set_size(b->entries, 0);
		b->bundle_ok = TRUE;
	}
	memcpy(h, b->cur[l]->data, sizeof h);
	perfect_root(h, TLOG_TILE_WIDTH, &root, &b->stats.hashes);
	g_array_set_size(b->cur[l], 0);
	b->idx[l]++;
	if (l + 1 >= TLOG_MAX_LEVEL)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "the log is full");
	g_array_append_val(b->cur[l + 1], root);
	if (b->cur[l + 1]->len == TLOG_TILE_WIDTH)
		return complete(b, l + 1, err);
	return VULNID_OK;
}

vulnid_status
tlog_builder_add(tlog_builder *b, const void *data, gsize len, GError **err)
{
	tlog_hash h;

	tlog_leaf_hash(data, len, &h);
	b->stats.hashes++;
	g_array_append_val(b->cur[0], h);
	if (len > TLOG_MAX_BUNDLE_ENTRY && b->bundle_ok) {
		b->bundle_ok = FALSE;
		g_ptr_array_set_size(b->entries, 0);
	}
	if (b->bundle_ok)
		g_ptr_array_add(b->entries, g_bytes_new(data, len));
	b->size++;
	if (b->cur[0]->len == TLOG_TILE_WIDTH)
		return complete(b, 0, err);
	return VULNID_OK;
}

void
tlog_builder_root(const tlog_builder *b, tlog_hash *out)
{
	tlog_hash subs[TLOG_MAX_LEVEL * 8];
	guint n = 0;

	if (b->size == 0) {
		tlog_empty_hash(out);
		return;
	}
	/* Left to right: the top level's hashes first; within a level, the
	 * perfect subtrees of the width's binary digits, largest first. */
	for (guint l = TLOG_MAX_LEVEL; l-- > 0;) {
		guint w = b->cur[l]->len, off = 0;

		for (guint k = 8; k-- > 0;) {
			tlog_hash tmp[TLOG_TILE_WIDTH];

			if (!(w & (1u << k)))
				continue;
			memcpy(tmp, &g_array_index(b->cur[l], tlog_hash, off), (gsize) (1u << k) * TLOG_HASH_LEN);
			perfect_root(tmp, 1u << k, &subs[n++], NULL);
			off += 1u << k;
		}
	}
	fold_right(subs, n, out, NULL);
}

vulnid_status
tlog_builder_finish(tlog_builder *b, GError **err)
{
	for (guint l = 0; l < TLOG_MAX_LEVEL; l++) {
		guint w = b->cur[l]->len;
		g_autofree char *rel = NULL;
		vulnid_status s;

		if (w == 0)
			continue;
		rel = tlog_tile_path((int) l, b->idx[l], w);
		s = emit(b, rel, b->cur[l]->data, (gsize) w * TLOG_HASH_LEN, b->size <= b->start, err);
		if (s == VULNID_OK && l == 0)
			s = emit_bundle(b, b->idx[0], w, b->size <= b->start, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* ---- verifying tiles and bundles as a mirror must ---------------------------------- */

/* A regular file of at most max bytes (no symlinks, no FIFOs). */
static GBytes *
read_bounded(const char *path, gsize max, int *err_no)
{
	struct stat sb;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*err_no = 0;
	if (fd < 0) {
		*err_no = errno;
		return NULL;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (gsize) sb.st_size > max) {
		*err_no = EINVAL;
		close(fd);
		return NULL;
	}
	buf = g_malloc((gsize) sb.st_size + 1);
	n = pread(fd, buf, (size_t) sb.st_size, 0);
	close(fd);
	if (n != sb.st_size) {
		*err_no = EIO;
		g_free(buf);
		return NULL;
	}
	return g_bytes_new_take(buf, (gsize) sb.st_size);
}

GPtrArray *
tlog_bundle_parse(const void *data, gsize len)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify) g_bytes_unref);
	const guint8 *p = data, *end = p + len;

	while (p < end) {
		gsize n;

		if (end - p < 2 || out->len >= TLOG_TILE_WIDTH)
			return NULL;
		n = (gsize) p[0] << 8 | p[1];
		p += 2;
		if ((gsize) (end - p) < n)
			return NULL;
		g_ptr_array_add(out, g_bytes_new(p, n));
		p += n;
	}
	return g_steal_pointer(&out);
}

typedef struct {
	const char *dir;
	guint64 size;
	gboolean bundles_optional;
	tlog_tiles_stats *st;
	GBytes *parent;		/* the tile one level up last read */
	guint parent_level;
	guint64 parent_index;
} tiles_check;

static vulnid_status
tile_read(tiles_check *c, guint level, guint64 index, guint width, GBytes **out, GError **err)
{
	g_autofree char *rel = tlog_tile_path((int) level, index, width);
	g_autofree char *path = g_build_filename(c->dir, rel, NULL);
	int e_no;

	*out = read_exact(path, (gsize) width * TLOG_HASH_LEN, &e_no);
	if (*out == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "cannot read tile '%s': %s", path,
				   e_no == EINVAL ? "not a regular file of the right size" : g_strerror(e_no));
	c->st->tiles++;
	return VULNID_OK;
}

/* Hash `index` of level `level`, from the full tile or the partial tile
 * of the tree's size, the last tile read kept. */
static vulnid_status
parent_hash(tiles_check *c, guint level, guint64 j, tlog_hash *out, GError **err)
{
	guint64 index = j / TLOG_TILE_WIDTH;
	guint64 full = shr(c->size, 8 * (level + 1));
	guint width = index < full ? TLOG_TILE_WIDTH : (guint) (shr(c->size, 8 * level) & 0xff);
	vulnid_status s;

	if (level >= TLOG_MAX_LEVEL || j % TLOG_TILE_WIDTH >= width)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "no hash %" G_GUINT64_FORMAT " at level %u in a tree of %"
				   G_GUINT64_FORMAT, j, level, c->size);
	if (c->parent == NULL || c->parent_level != level || c->parent_index != index) {
		g_clear_pointer(&c->parent, g_bytes_unref);
		s = tile_read(c, level, index, width, &c->parent, err);
		if (s != VULNID_OK)
			return s;
		c->parent_level = level;
		c->parent_index = index;
	}
	memcpy(out->b, (const guint8 *) g_bytes_get_data(c->parent, NULL) + (j % TLOG_TILE_WIDTH) * TLOG_HASH_LEN,
	       TLOG_HASH_LEN);
	return VULNID_OK;
}

/* The bundle of level-0 tile `index` must hold the entries of its leaf
 * hashes.  *bundle: its bytes, NULL when absent (and allowed to be). */
static vulnid_status
bundle_check(tiles_check *c, guint64 index, guint width, GBytes *tile, GBytes **bundle, GError **err)
{
	g_autofree char *rel = tlog_tile_path(-1, index, width);
	g_autofree char *path = g_build_filename(c->dir, rel, NULL);
	g_autoptr(GPtrArray) entries = NULL;
	const guint8 *hashes = g_bytes_get_data(tile, NULL);
	gsize len;
	const void *data;
	int e_no;

	*bundle = read_bounded(path, TLOG_MAX_BUNDLE, &e_no);
	if (*bundle == NULL && e_no == ENOENT && c->bundles_optional) {
		c->st->absent++;
		return VULNID_OK;
	}
	if (*bundle == NULL)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "cannot read the entry bundle '%s': %s", path,
				   e_no == EINVAL ? "not a regular file of at most the largest bundle's size" :
				   g_strerror(e_no));
	c->st->bundles++;
	data = g_bytes_get_data(*bundle, &len);
	entries = tlog_bundle_parse(data, len);
	if (entries == NULL || entries->len != width)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is not a bundle of %u entries", path, width);
	for (guint k = 0; k < width; k++) {
		gsize n;
		const void *e = g_bytes_get_data(g_ptr_array_index(entries, k), &n);
		tlog_hash h;

		tlog_leaf_hash(e, n, &h);
		c->st->hashes++;
		if (memcmp(h.b, hashes + (gsize) k * TLOG_HASH_LEN, TLOG_HASH_LEN) != 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': entry %u does not hash to the tile's leaf hash",
					   path, k);
	}
	return VULNID_OK;
}

/* Partial tiles (or bundles) of earlier sizes, DIR/REL.p/W: each must be
 * a prefix of what it grew into (have, of width).  Widths beyond it were
 * left by an export that never signed their checkpoint. */
static vulnid_status
earlier_check(tiles_check *c, int level, guint64 index, guint width, GBytes *have, GError **err)
{
	g_autofree char *rel = tlog_tile_path(level, index, 0);
	g_autofree char *pdir = g_strconcat(c->dir, "/", rel, ".p", NULL);
	g_autoptr(GDir) d = g_dir_open(pdir, 0, NULL);
	gsize have_len;
	const guint8 *hd = g_bytes_get_data(have, &have_len);
	const char *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree char *path = g_build_filename(pdir, name, NULL);
		g_autoptr(GBytes) b = NULL;
		guint64 w;
		gsize len;
		int e_no;

		if (!g_ascii_string_to_unsigned(name, 10, 1, TLOG_TILE_WIDTH - 1, &w, NULL) || name[0] == '0' ||
		    w >= width)
			continue;
		if (level >= 0) {
			b = read_exact(path, (gsize) w * TLOG_HASH_LEN, &e_no);
			len = (gsize) w * TLOG_HASH_LEN;
		} else {
			g_autoptr(GPtrArray) entries = NULL;

			b = read_bounded(path, have_len, &e_no);
			if (b != NULL)
				entries = tlog_bundle_parse(g_bytes_get_data(b, NULL), g_bytes_get_size(b));
			if (entries == NULL || entries->len != w)
				g_clear_pointer(&b, g_bytes_unref);
			len = b != NULL ? g_bytes_get_size(b) : 0;
		}
		if (b == NULL || len > have_len || memcmp(g_bytes_get_data(b, NULL), hd, len) != 0)
			return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is not a prefix of the %s it grew into", path,
					   level >= 0 ? "tile" : "bundle");
		c->st->earlier++;
	}
	return VULNID_OK;
}

static vulnid_status
check_tile(tiles_check *c, guint level, guint64 index, guint width, GError **err)
{
	g_autoptr(GBytes) tile = NULL;
	g_autoptr(GBytes) bundle = NULL;
	vulnid_status s = tile_read(c, level, index, width, &tile, err);

	c->st->checked++;
	if (s == VULNID_OK && width == TLOG_TILE_WIDTH) {
		tlog_hash h[TLOG_TILE_WIDTH], root, want;

		memcpy(h, g_bytes_get_data(tile, NULL), sizeof h);
		perfect_root(h, TLOG_TILE_WIDTH, &root, &c->st->hashes);
		s = parent_hash(c, level + 1, index, &want, err);
		if (s == VULNID_OK && memcmp(root.b, want.b, TLOG_HASH_LEN) != 0) {
			g_autofree char *rel = tlog_tile_path((int) level, index, 0);

			s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s/%s' does not hash to its hash in the tile above",
					c->dir, rel);
		}
	}
	if (s == VULNID_OK)
		s = earlier_check(c, (int) level, index, width, tile, err);
	if (s == VULNID_OK && level == 0)
		s = bundle_check(c, index, width, tile, &bundle, err);
	if (s == VULNID_OK && level == 0 && bundle != NULL)
		s = earlier_check(c, -1, index, width, bundle, err);
	return s;
}

vulnid_status
tlog_verify_tiles(const char *dir, guint64 size, const tlog_hash *root, guint64 from, gboolean bundles_optional,
		  tlog_tiles_stats *st, GError **err)
{
	tiles_check c = { dir, size, bundles_optional, st, NULL, 0, 0 };
	vulnid_status s = VULNID_OK;

	memset(st, 0, sizeof *st);
	if (from > size)
		return vulnid_fail(err, VULNID_ERR_INVALID, "a tree of %" G_GUINT64_FORMAT " entries cannot grow from %"
				   G_GUINT64_FORMAT, size, from);
	/* The partial tiles of the size make the root; the full tiles below
	 * are then checked upwards against hashes already trusted. */
	{
		g_autoptr(tlog_tiles) t = tlog_tiles_open(dir, size);
		tlog_hash r;

		s = tlog_tiles_root(t, &r, err);
		st->tiles += tlog_tiles_reads(t);
		st->hashes += t->hashes;
		if (s == VULNID_OK && memcmp(r.b, root->b, TLOG_HASH_LEN) != 0)
			s = vulnid_fail(err, VULNID_ERR_CORRUPT, "the tiles under '%s' make another root hash", dir);
	}
	for (guint l = 0; s == VULNID_OK && l < TLOG_MAX_LEVEL && shr(size, 8 * l) > 0; l++) {
		guint64 full = shr(size, 8 * (l + 1));
		guint width = (guint) (shr(size, 8 * l) & 0xff);

		for (guint64 i = shr(from, 8 * (l + 1)); s == VULNID_OK && i <= full; i++) {
			guint w = i < full ? TLOG_TILE_WIDTH : width;

			if (w > 0)
				s = check_tile(&c, l, i, w, err);
		}
	}
	g_clear_pointer(&c.parent, g_bytes_unref);
	return s;
}
