/* tlog.h - a Merkle tree log (RFC 6962 / RFC 9162 hashing) stored as
 * static tiles (C2SP tlog-tiles): hashes, tile paths, building and
 * checking tiles, proofs and their verification.
 *
 * Nothing here knows what the entries mean: an entry is a byte string.
 * Leaf hash SHA-256(0x00 || entry), node hash SHA-256(0x01 || left ||
 * right), tiles of height 8 (256 hashes, 8192 bytes when full). */
#ifndef VULNID_TLOG_H
#define VULNID_TLOG_H

#include <glib.h>

#include "status.h"

#define TLOG_HASH_LEN 32
#define TLOG_TILE_WIDTH 256
#define TLOG_MAX_LEVEL 8		/* tile levels: 256^8 = 2^64 leaves */
#define TLOG_MAX_PROOF 64		/* hashes in any proof */
#define TLOG_MAX_BUNDLE_ENTRY 65535	/* entry bundles prefix a uint16 length */
#define TLOG_MAX_BUNDLE (TLOG_TILE_WIDTH * (2 + TLOG_MAX_BUNDLE_ENTRY))

typedef struct {
	guint8 b[TLOG_HASH_LEN];
} tlog_hash;

void tlog_leaf_hash(const void *data, gsize len, tlog_hash *out);
void tlog_node_hash(const tlog_hash *left, const tlog_hash *right, tlog_hash *out);
/* MTH of the empty tree: SHA-256 of nothing. */
void tlog_empty_hash(tlog_hash *out);
/* SHA-256 of data (the one digest the log code uses). */
void tlog_sha256(const void *data, gsize len, guint8 out[32]);

/* "tile/L/x001/234/067[.p/W]"; level -1 is the entry bundle path
 * "tile/entries/...".  width 0 or 256: a full tile. */
char *tlog_tile_path(int level, guint64 index, guint width);

/* Hashes of the tree of a given size, read from the tiles under a
 * directory (full tiles, and the partial tiles of that size). */
typedef struct tlog_tiles tlog_tiles;
tlog_tiles *tlog_tiles_open(const char *dir, guint64 size);
void tlog_tiles_free(tlog_tiles *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(tlog_tiles, tlog_tiles_free)
/* Tiles read so far (for measurements). */
guint tlog_tiles_reads(const tlog_tiles *t);

/* MTH(D[lo:hi]), 0 <= lo < hi <= size; hi - lo a power of two with lo a
 * multiple of it, or hi == size. */
vulnid_status tlog_tiles_range(tlog_tiles *t, guint64 lo, guint64 hi, tlog_hash *out, GError **err);
vulnid_status tlog_tiles_root(tlog_tiles *t, tlog_hash *out, GError **err);
/* RFC 9162 2.1.3.1 PATH(index, D[0:size]) and 2.1.4.1 PROOF(m, D[0:n]),
 * from the tiles (size and n at most the tiles' size).  GArray of
 * tlog_hash. */
vulnid_status tlog_prove_inclusion(tlog_tiles *t, guint64 index, guint64 size, GArray **proof, GError **err);
vulnid_status tlog_prove_consistency(tlog_tiles *t, guint64 m, guint64 n, GArray **proof, GError **err);

/* RFC 9162 2.1.3.2 and 2.1.4.2.  Counts the hash operations in *ops if
 * not NULL. */
gboolean tlog_check_inclusion(guint64 index, guint64 size, const tlog_hash *leaf,
			      const tlog_hash *proof, guint n, const tlog_hash *root, guint *ops);
gboolean tlog_check_consistency(guint64 m, guint64 n, const tlog_hash *old_root, const tlog_hash *new_root,
				const tlog_hash *proof, guint len, guint *ops);

/* Builds the tiles of a growing tree from its entries, or checks the
 * tiles under a directory against them.
 *
 * TLOG_WRITE continues a tree of start_size leaves: the caller hands it
 * first the entries already in the log from the start of the last
 * partial level-0 tile (start_size % 256 of them), then the new ones;
 * the upper levels are read from the partial tiles of start_size.  Full
 * tiles are written as they complete (one a checkpoint covers must be
 * there and equal), partial tiles and the partial entry bundle at
 * tlog_builder_finish(), all without syncing (tlog_builder_sync()).
 * TLOG_CHECK starts from 0 and compares every tile and bundle it would
 * write with the file there.  An entry bundle that would hold an entry
 * longer than 65535 bytes cannot be encoded: it is not written (and must
 * be absent in TLOG_CHECK). */
typedef enum { TLOG_WRITE, TLOG_CHECK } tlog_builder_mode;
typedef struct tlog_builder tlog_builder;
vulnid_status tlog_builder_new(const char *dir, tlog_builder_mode mode, guint64 start_size,
			       tlog_builder **b, GError **err);
void tlog_builder_free(tlog_builder *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(tlog_builder, tlog_builder_free)
vulnid_status tlog_builder_add(tlog_builder *b, const void *data, gsize len, GError **err);
guint64 tlog_builder_size(const tlog_builder *b);
/* The root hash of the leaves added so far (and those loaded). */
void tlog_builder_root(const tlog_builder *b, tlog_hash *out);
vulnid_status tlog_builder_finish(tlog_builder *b, GError **err);
/* Make every tile written durable (one syncfs() of the directory's file
 * system): before a checkpoint may name them. */
vulnid_status tlog_builder_sync(const tlog_builder *b, GError **err);
typedef struct {
	guint tiles_written, tiles_checked;
	guint bundles_skipped;	/* bundles with an entry over 65535 bytes */
	guint64 hashes;		/* SHA-256 computations */
} tlog_builder_stats;
const tlog_builder_stats *tlog_builder_stats_get(const tlog_builder *b);

/* Check the tiles and entry bundles under dir of a tree of `size` leaves
 * with the given root, as a mirror must before it serves them: the
 * partial tiles of size make the root; every full tile at every level
 * hashes to its hash one level up; every entry bundle (full, and the
 * partial one of size) holds exactly the entries whose leaf hashes its
 * level-0 tile holds; every partial tile or bundle of an earlier size
 * found beside them (N.p/W) is a prefix of the tile or bundle it grew
 * into.  Only tiles and bundles holding entries at or after `from` are
 * read (0: all; the size of a tree checked before: the new part and one
 * tile per level, O(new/256 + log n) reads).  A missing bundle fails
 * unless bundles_optional (logs that left out bundles with long
 * entries).  Memory: one tile and one bundle at a time. */
typedef struct {
	guint64 checked;	/* tiles checked (each once) */
	guint64 tiles;		/* full and partial tiles read */
	guint64 bundles;	/* bundles read */
	guint64 earlier;	/* partial tiles and bundles of earlier sizes checked */
	guint64 absent;		/* bundles left out (bundles_optional) */
	guint64 hashes;		/* SHA-256 computations */
} tlog_tiles_stats;
vulnid_status tlog_verify_tiles(const char *dir, guint64 size, const tlog_hash *root, guint64 from,
				gboolean bundles_optional, tlog_tiles_stats *st, GError **err);

/* The entries of an entry bundle (GBytes each, borrowing nothing), or
 * NULL when data is not exactly a sequence of uint16-length-prefixed
 * entries. */
GPtrArray *tlog_bundle_parse(const void *data, gsize len);

/* Base64 of a hash and back (exactly 32 bytes). */
char *tlog_hash_b64(const tlog_hash *h);
gboolean tlog_hash_from_b64(const char *s, gsize len, tlog_hash *out);

#endif
