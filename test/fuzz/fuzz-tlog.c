/* fuzz-tlog.c - what the transparency log reads from elsewhere: signed
 * notes and checkpoints, note keys, tlog-witness add-checkpoint bodies,
 * tlog-proofs, tiles read back from a directory, entry bundles checked
 * against their tile, the log entries of feed lines, and the HTTP
 * requests vulnid witness serve answers.
 *
 * The first byte picks the reader, the rest is its input.  Properties: a
 * note that parses has text ending in a newline and at most NOTE_MAX_SIGS
 * signatures; nothing signed by the fixed key verifies unless it is the
 * seed's own; below 256 leaves (one tile, nothing for tiles to disagree
 * on) proofs built from any tiles verify against the root the same tiles
 * give: the proof code and the checking code agree.  Above, tiles whose
 * levels disagree make proofs that fail, which is how tampering shows. */
#include "autoconfig.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "feed.h"
#include "feedlog.h"
#include "note.h"
#include "tlog.h"
#include "witness-serve.h"
#include "fuzz.h"

static note_key *log_key;
static char *scratch;
static witness *wit;
static GPtrArray *wit_logs;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* A fixed public key: no input can have a good signature by it. */
	static const char vk[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";

	(void) argc;
	(void) argv;
	if (note_key_parse(vk, strlen(vk), &log_key, NULL) != VULNID_OK)
		fuzz_fail("the fixed key does not parse");
	scratch = fuzz_scratch_dir("tlog");
	{
		g_autofree char *wdir = g_build_filename(scratch, "witness", NULL);

		if (witness_open(wdir, "example.net/fuzz", &wit, NULL, NULL) != VULNID_OK)
			fuzz_fail("cannot make the witness");
		wit_logs = g_ptr_array_new();
		g_ptr_array_add(wit_logs, log_key);
	}
	return 0;
}

static void
fuzz_note(const char *d, gsize len)
{
	g_autoptr(note) n = NULL;
	g_autoptr(GError) err = NULL;
	checkpoint c;

	if (note_parse(d, len, &n, &err) != VULNID_OK)
		return;
	if (!g_str_has_suffix(n->text, "\n") || n->sigs->len == 0 || n->sigs->len > NOTE_MAX_SIGS)
		fuzz_fail("a parsed note breaks its shape");
	note_verify_key(n, log_key, NULL);
	if (checkpoint_parse(n->text, &c, &err) == VULNID_OK) {
		if (c.origin == NULL || *c.origin == '\0' || c.size > G_MAXINT64)
			fuzz_fail("a parsed checkpoint breaks its shape");
		checkpoint_clear(&c);
	}
}

static void
fuzz_key(const char *d, gsize len)
{
	g_autoptr(note_key) k = NULL;

	if (note_key_parse(d, len, &k, NULL) == VULNID_OK &&
	    (!note_name_valid(k->name) || k->id != note_key_id(k->name, k->type, k->pub)))
		fuzz_fail("a parsed key breaks its shape");
}

static void
fuzz_add_checkpoint(const char *d, gsize len)
{
	g_autoptr(GArray) proof = NULL;
	g_autoptr(note) n = NULL;
	guint64 old = 0;
	checkpoint c;

	if (feedlog_parse_add_checkpoint(d, len, &old, &proof, &n, &c, NULL) != VULNID_OK)
		return;
	if (proof->len > 63 || old > G_MAXINT64)
		fuzz_fail("a parsed request breaks its limits");
	checkpoint_clear(&c);
}

static void
fuzz_proofs(const char *d, gsize len)
{
	feedlog_result r;

	if (feedlog_verify_proofs(d, len, log_key, NULL, NULL, NULL, &r, NULL) == VULNID_OK)
		fuzz_fail("a proof verified against a key nobody holds");
	feedlog_result_clear(&r);
}

/* The input becomes the tiles of a tree: 8 bytes of size, then the
 * bytes of tile files, each taking what its width asks. */
static void
fuzz_tiles(const guint8 *d, gsize len)
{
	g_autofree char *dir = g_build_filename(scratch, "t", NULL);
	g_autoptr(tlog_tiles) t = NULL;
	g_autoptr(tlog_builder) b = NULL;
	guint64 size = 0;
	gsize off = 8;
	tlog_hash root;

	if (len < 8)
		return;
	for (int i = 0; i < 8; i++)
		size = size << 8 | d[i];
	size &= 0xffffff;	/* at most three tile levels from one input */
	fuzz_rm_rf(dir);
	for (int l = 0; l < 3; l++) {
		guint w = (guint) ((size >> (8 * l)) & 0xff);
		guint64 full = size >> (8 * (l + 1));
		/* The partial tile, and the last full one before it. */
		for (int k = 0; k < 2; k++) {
			guint width = k == 0 ? w : TLOG_TILE_WIDTH;
			guint64 index = k == 0 ? full : full - 1;
			g_autofree char *rel = NULL;
			g_autofree char *path = NULL;
			g_autofree char *pdir = NULL;
			gsize n = (gsize) width * TLOG_HASH_LEN;

			if (width == 0 || (k == 1 && full == 0) || off + n > len)
				continue;
			rel = tlog_tile_path(l, index, width);
			path = g_build_filename(dir, rel, NULL);
			pdir = g_path_get_dirname(path);
			g_mkdir_with_parents(pdir, 0700);
			g_file_set_contents(path, (const char *) d + off, (gssize) n, NULL);
			off += n;
		}
	}
	t = tlog_tiles_open(dir, size);
	if (tlog_tiles_root(t, &root, NULL) == VULNID_OK && size > 0 && size < TLOG_TILE_WIDTH) {
		guint64 i = (size - 1) / 3, m = size / 2 + 1;
		g_autoptr(GArray) p = NULL;
		g_autoptr(GArray) q = NULL;
		tlog_hash leaf, mroot;

		if (tlog_prove_inclusion(t, i, size, &p, NULL) == VULNID_OK &&
		    tlog_tiles_range(t, i, i + 1, &leaf, NULL) == VULNID_OK &&
		    !tlog_check_inclusion(i, size, &leaf, (tlog_hash *) p->data, p->len, &root, NULL))
			fuzz_fail("an inclusion proof from the tiles does not verify against their root");
		if (m <= size && tlog_prove_consistency(t, m, size, &q, NULL) == VULNID_OK &&
		    tlog_tiles_range(t, 0, m, &mroot, NULL) == VULNID_OK &&
		    !tlog_check_consistency(m, size, &mroot, &root, (tlog_hash *) q->data, q->len, NULL))
			fuzz_fail("a consistency proof from the tiles does not verify");
	}
	if (tlog_builder_new(dir, TLOG_WRITE, size, &b, NULL) == VULNID_OK)
		tlog_builder_root(b, &root);
	fuzz_rm_rf(dir);
}

/* The input is an entry bundle of the level-0 tile of a tree of one tile
 * made from its own entries (when it parses): a bundle that parses
 * verifies; a byte changed in it no longer does. */
static void
fuzz_bundle(const guint8 *d, gsize len)
{
	g_autofree char *dir = g_build_filename(scratch, "b", NULL);
	g_autoptr(GPtrArray) entries = tlog_bundle_parse(d, len);
	g_autoptr(tlog_builder) b = NULL;
	tlog_tiles_stats st;
	tlog_hash root;
	gsize total = 0;

	if (entries == NULL || entries->len == 0)
		return;
	for (guint i = 0; i < entries->len; i++)
		total += 2 + g_bytes_get_size(g_ptr_array_index(entries, i));
	if (total != len || entries->len > TLOG_TILE_WIDTH)
		fuzz_fail("a bundle parsed into other bytes than it holds");
	fuzz_rm_rf(dir);
	if (tlog_builder_new(dir, TLOG_WRITE, 0, &b, NULL) != VULNID_OK)
		return;
	for (guint i = 0; i < entries->len; i++) {
		gsize n;
		const void *e = g_bytes_get_data(g_ptr_array_index(entries, i), &n);

		tlog_builder_add(b, e, n, NULL);
	}
	if (tlog_builder_finish(b, NULL) != VULNID_OK)
		return;
	tlog_builder_root(b, &root);
	if (tlog_verify_tiles(dir, entries->len, &root, 0, FALSE, &st, NULL) != VULNID_OK)
		fuzz_fail("the tiles and bundle a builder wrote do not verify");
	{
		g_autofree char *rel = tlog_tile_path(-1, 0, entries->len);
		g_autofree char *path = g_build_filename(dir, rel, NULL);
		g_autofree guint8 *copy = g_memdup2(d, len);

		copy[len - 1] ^= 1;
		g_file_set_contents(path, (const char *) copy, (gssize) len, NULL);
		if (tlog_verify_tiles(dir, entries->len, &root, 0, FALSE, &st, NULL) == VULNID_OK)
			fuzz_fail("a changed bundle verified");
	}
	fuzz_rm_rf(dir);
}

/* A feed line's log entry: none, or a short one of its form. */
static void
fuzz_log_entry(const char *d, gsize len)
{
	g_autofree char *e = feed_log_entry(d, len);

	if (e != NULL && (strlen(e) > FEED_MAX_LOG_ENTRY || !g_str_has_prefix(e, "{\"log\":\"" FEED_LOG_FORMAT "\",")))
		fuzz_fail("a log entry breaks its form");
}

/* The bytes a client sends on one connection to vulnid witness serve:
 * every answer is an HTTP/1.1 status line, at most as many as the limit. */
static void
fuzz_witness_http(const char *d, gsize len)
{
	g_autofree char *in = g_build_filename(scratch, "http.in", NULL);
	g_autofree char *out = g_build_filename(scratch, "http.out", NULL);
	g_autofree char *answer = NULL;
	guint served = 0;
	gsize n = 0;
	int ifd, ofd;

	if (!g_file_set_contents(in, d, (gssize) len, NULL))
		return;
	ifd = open(in, O_RDONLY | O_CLOEXEC);
	ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ifd >= 0 && ofd >= 0)
		witness_serve_connection(wit, wit_logs, ifd, ofd, &served, NULL);
	if (ifd >= 0)
		close(ifd);
	if (ofd >= 0)
		close(ofd);
	if (served > WITNESS_SERVE_MAX_REQUESTS || !g_file_get_contents(out, &answer, &n, NULL))
		fuzz_fail("too many answers on one connection");
	if (n > 0 && !g_str_has_prefix(answer, "HTTP/1.1 "))
		fuzz_fail("an answer that is not HTTP/1.1");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *) data + 1;
	gsize len = size > 0 ? size - 1 : 0;

	if (size == 0 || size > 4 * 1024 * 1024)
		return 0;
	switch (data[0] % 8) {
	case 0:
		fuzz_note(d, len);
		break;
	case 1:
		fuzz_key(d, len);
		break;
	case 2:
		fuzz_add_checkpoint(d, len);
		break;
	case 3:
		fuzz_proofs(d, len);
		break;
	case 5:
		fuzz_bundle(data + 1, len);
		break;
	case 6:
		fuzz_log_entry(d, len);
		break;
	case 7:
		fuzz_witness_http(d, len);
		break;
	default:
		fuzz_tiles(data + 1, len);
		break;
	}
	return 0;
}
