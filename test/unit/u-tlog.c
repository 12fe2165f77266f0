/* u-tlog.c - unit tests for src/lib/tlog.c and src/lib/note.c against the
 * published RFC 6962 test vectors (the Certificate Transparency reference
 * leaves, roots and proofs) and the C2SP signed-note example */
#include "autoconfig.h"

#include <string.h>
#include <glib/gstdio.h>

#include "feed.h"
#include "note.h"
#include "tlog.h"

/* RFC 6962 reference data (as in transparency-dev/merkle's testonly). */
static const char *const leaves_hex[] = {
	"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
	"606162636465666768696a6b6c6d6e6f",
};
static const char *const roots_hex[] = {
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

typedef struct {
	guint64 a, b;		/* index and size, or first and second */
	const char *hashes[4];
} vector;

static const vector inclusion[] = {
	{ 0, 8, { "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		  "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		  "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4", NULL } },
	{ 5, 8, { "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		  "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", NULL } },
};

static const vector consistency[] = {
	{ 2, 8, { "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		  "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4", NULL } },
	{ 6, 8, { "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
		  "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7", NULL } },
	{ 2, 5, { "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		  "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b", NULL } },
};

static GByteArray *
unhex(const char *s)
{
	GByteArray *b = g_byte_array_new();

	for (gsize i = 0; s[i] != '\0'; i += 2) {
		guint8 v = (guint8) (g_ascii_xdigit_value(s[i]) << 4 | g_ascii_xdigit_value(s[i + 1]));

		g_byte_array_append(b, &v, 1);
	}
	return b;
}

static tlog_hash
hash_of(const char *hex)
{
	g_autoptr(GByteArray) b = unhex(hex);
	tlog_hash h;

	g_assert_cmpuint(b->len, ==, 32);
	memcpy(h.b, b->data, 32);
	return h;
}

static char *
tmpdir(void)
{
	g_autoptr(GError) err = NULL;
	char *d = g_dir_make_tmp("u-tlog-XXXXXX", &err);

	g_assert_no_error(err);
	return d;
}

static void
rm_rf(const char *path)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", path);

	g_assert_cmpint(system(cmd), ==, 0);
}

/* A log of the given entries under dir, with the tiles of every size. */
static void
build(const char *dir, GPtrArray *entries)
{
	for (guint i = 0; i < entries->len; i++) {
		g_autoptr(tlog_builder) b = NULL;
		g_autoptr(GError) err = NULL;

		g_assert_cmpint(tlog_builder_new(dir, TLOG_WRITE, i, &b, &err), ==, VULNID_OK);
		for (guint k = i - i % TLOG_TILE_WIDTH; k <= i; k++) {
			GByteArray *x = g_ptr_array_index(entries, k);

			g_assert_cmpint(tlog_builder_add(b, x->data, x->len, &err), ==, VULNID_OK);
		}
		g_assert_cmpint(tlog_builder_finish(b, &err), ==, VULNID_OK);
	}
}

static GPtrArray *
reference_entries(void)
{
	GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify) g_byte_array_unref);

	for (gsize i = 0; i < G_N_ELEMENTS(leaves_hex); i++)
		g_ptr_array_add(a, unhex(leaves_hex[i]));
	return a;
}

static void
test_roots(void)
{
	g_autofree char *dir = tmpdir();
	g_autoptr(GPtrArray) e = reference_entries();
	g_autoptr(tlog_builder) b = NULL;
	g_autoptr(GError) err = NULL;
	tlog_hash root, want;

	g_assert_cmpint(tlog_builder_new(dir, TLOG_WRITE, 0, &b, &err), ==, VULNID_OK);
	tlog_builder_root(b, &root);
	want = hash_of(roots_hex[0]);
	g_assert_cmpmem(root.b, 32, want.b, 32);
	for (guint i = 0; i < e->len; i++) {
		GByteArray *x = g_ptr_array_index(e, i);

		g_assert_cmpint(tlog_builder_add(b, x->data, x->len, &err), ==, VULNID_OK);
		tlog_builder_root(b, &root);
		want = hash_of(roots_hex[i + 1]);
		g_assert_cmpmem(root.b, 32, want.b, 32);
	}
	rm_rf(dir);
}

static void
test_reference_proofs(void)
{
	g_autofree char *dir = tmpdir();
	g_autoptr(GPtrArray) e = reference_entries();
	g_autoptr(tlog_tiles) t = NULL;
	g_autoptr(GError) err = NULL;

	build(dir, e);
	t = tlog_tiles_open(dir, 8);
	for (gsize v = 0; v < G_N_ELEMENTS(inclusion); v++) {
		g_autoptr(GArray) p = NULL;
		GByteArray *x = g_ptr_array_index(e, (guint) inclusion[v].a);
		tlog_hash leaf, root = hash_of(roots_hex[inclusion[v].b]);
		guint n = 0, ops = 0;

		g_assert_cmpint(tlog_prove_inclusion(t, inclusion[v].a, inclusion[v].b, &p, &err), ==, VULNID_OK);
		while (inclusion[v].hashes[n] != NULL) {
			tlog_hash h = hash_of(inclusion[v].hashes[n]);

			g_assert_cmpmem(g_array_index(p, tlog_hash, n).b, 32, h.b, 32);
			n++;
		}
		g_assert_cmpuint(p->len, ==, n);
		tlog_leaf_hash(x->data, x->len, &leaf);
		g_assert_true(tlog_check_inclusion(inclusion[v].a, inclusion[v].b, &leaf, (tlog_hash *) p->data,
						   p->len, &root, &ops));
		g_assert_cmpuint(ops, ==, n);
		g_assert_false(tlog_check_inclusion(inclusion[v].a ^ 1, inclusion[v].b, &leaf, (tlog_hash *) p->data,
						    p->len, &root, NULL));
		g_assert_false(tlog_check_inclusion(inclusion[v].a, 2 * inclusion[v].b, &leaf, (tlog_hash *) p->data,
						    p->len, &root, NULL));
		g_assert_false(tlog_check_inclusion(inclusion[v].a, inclusion[v].b, &leaf, (tlog_hash *) p->data,
						    p->len - 1, &root, NULL));
	}
	for (gsize v = 0; v < G_N_ELEMENTS(consistency); v++) {
		g_autoptr(GArray) p = NULL;
		tlog_hash r1 = hash_of(roots_hex[consistency[v].a]), r2 = hash_of(roots_hex[consistency[v].b]);
		guint n = 0;

		g_assert_cmpint(tlog_prove_consistency(t, consistency[v].a, consistency[v].b, &p, &err), ==, VULNID_OK);
		while (consistency[v].hashes[n] != NULL) {
			tlog_hash h = hash_of(consistency[v].hashes[n]);

			g_assert_cmpmem(g_array_index(p, tlog_hash, n).b, 32, h.b, 32);
			n++;
		}
		g_assert_cmpuint(p->len, ==, n);
		g_assert_true(tlog_check_consistency(consistency[v].a, consistency[v].b, &r1, &r2,
						     (tlog_hash *) p->data, p->len, NULL));
		g_assert_false(tlog_check_consistency(consistency[v].a, consistency[v].b, &r2, &r1,
						      (tlog_hash *) p->data, p->len, NULL));
		g_assert_false(tlog_check_consistency(consistency[v].a + 1, consistency[v].b, &r1, &r2,
						      (tlog_hash *) p->data, p->len, NULL));
	}
	rm_rf(dir);
}

/* Every proof in every tree up to 70 leaves and around tile edges, built
 * from the tiles and checked; roots from tiles equal the builder's. */
static void
test_exhaustive(void)
{
	static const guint sizes[] = { 255, 256, 257, 511, 513, 600 };
	g_autofree char *dir = tmpdir();
	g_autoptr(GPtrArray) e = g_ptr_array_new_with_free_func((GDestroyNotify) g_byte_array_unref);
	g_autoptr(GArray) roots = g_array_new(FALSE, FALSE, sizeof(tlog_hash));
	g_autoptr(GError) err = NULL;
	g_autoptr(tlog_builder) b = NULL;

	g_assert_cmpint(tlog_builder_new(dir, TLOG_WRITE, 0, &b, &err), ==, VULNID_OK);
	for (guint i = 0; i <= 600; i++) {
		tlog_hash r;
		GByteArray *x = g_byte_array_new();
		guint8 v[3] = { (guint8) i, (guint8) (i >> 8), 0x5a };

		tlog_builder_root(b, &r);
		g_array_append_val(roots, r);
		g_byte_array_append(x, v, sizeof v);
		g_ptr_array_add(e, x);
		g_assert_cmpint(tlog_builder_add(b, x->data, x->len, &err), ==, VULNID_OK);
	}
	{
		tlog_hash r;

		tlog_builder_root(b, &r);
		g_array_append_val(roots, r);
	}
	g_assert_cmpint(tlog_builder_finish(b, &err), ==, VULNID_OK);
	/* The tiles of 601 serve every smaller tree's full tiles; proofs of
	 * smaller trees use only the hashes of 601's. */
	{
		g_autoptr(tlog_tiles) t = tlog_tiles_open(dir, 601);

		for (guint n = 1; n <= 601; n++) {
			gboolean small = n <= 70;
			gboolean edge = FALSE;
			tlog_hash rn = g_array_index(roots, tlog_hash, n);

			for (gsize k = 0; k < G_N_ELEMENTS(sizes); k++)
				edge |= sizes[k] == n;
			if (!small && !edge && n != 601)
				continue;
			for (guint i = 0; i < n; i += small ? 1 : 37) {
				g_autoptr(GArray) p = NULL;
				GByteArray *x = g_ptr_array_index(e, i);
				tlog_hash leaf;
				tlog_hash rm = g_array_index(roots, tlog_hash, i + 1);

				g_assert_cmpint(tlog_prove_inclusion(t, i, n, &p, &err), ==, VULNID_OK);
				g_assert_cmpuint(p->len, <=, 10);
				tlog_leaf_hash(x->data, x->len, &leaf);
				g_assert_true(tlog_check_inclusion(i, n, &leaf, (tlog_hash *) p->data, p->len, &rn, NULL));
				g_clear_pointer(&p, g_array_unref);
				g_assert_cmpint(tlog_prove_consistency(t, i + 1, n, &p, &err), ==, VULNID_OK);
				g_assert_cmpuint(p->len, <=, 2 * 10);
				g_assert_true(tlog_check_consistency(i + 1, n, &rm, &rn, (tlog_hash *) p->data, p->len, NULL));
			}
		}
	}
	{
		g_autoptr(tlog_tiles) t = tlog_tiles_open(dir, 601);
		tlog_hash r;

		g_assert_cmpint(tlog_tiles_root(t, &r, &err), ==, VULNID_OK);
		g_assert_cmpmem(r.b, 32, g_array_index(roots, tlog_hash, 601).b, 32);
		/* 601 = 2 * 256 + 89: the level-1 partial tile and level 0's. */
		g_assert_cmpuint(tlog_tiles_reads(t), ==, 2);
	}
	/* Checking mode accepts what was written and finds a changed tile. */
	{
		g_autoptr(tlog_builder) c = NULL;
		g_autofree char *p = g_build_filename(dir, "tile/0/001", NULL);
		g_autofree char *data = NULL;
		gsize len;

		g_assert_cmpint(tlog_builder_new(dir, TLOG_CHECK, 0, &c, &err), ==, VULNID_OK);
		for (guint i = 0; i < 601; i++) {
			GByteArray *x = g_ptr_array_index(e, i);

			g_assert_cmpint(tlog_builder_add(c, x->data, x->len, &err), ==, VULNID_OK);
		}
		g_assert_cmpint(tlog_builder_finish(c, &err), ==, VULNID_OK);
		g_clear_pointer(&c, tlog_builder_free);
		g_assert_true(g_file_get_contents(p, &data, &len, NULL));
		data[7] ^= 1;
		g_assert_true(g_file_set_contents(p, data, (gssize) len, NULL));
		g_assert_cmpint(tlog_builder_new(dir, TLOG_CHECK, 0, &c, &err), ==, VULNID_OK);
		for (guint i = 0; i < 601 && err == NULL; i++) {
			GByteArray *x = g_ptr_array_index(e, i);

			tlog_builder_add(c, x->data, x->len, &err);
		}
		g_assert_error(err, VULNID_ERROR, VULNID_ERR_CORRUPT);
	}
	rm_rf(dir);
}

static void
test_tile_paths(void)
{
	static const struct {
		int level;
		guint64 n;
		guint w;
		const char *path;
	} cases[] = {
		{ 0, 0, 0, "tile/0/000" },
		{ 0, 5, 17, "tile/0/005.p/17" },
		{ 1, 1234067, 0, "tile/1/x001/x234/067" },
		{ 2, 1000, 256, "tile/2/x001/000" },
		{ -1, 999, 3, "tile/entries/999.p/3" },
		{ 63, G_GUINT64_CONSTANT(18446744073709551615), 1,
		  "tile/63/x018/x446/x744/x073/x709/x551/615.p/1" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *p = tlog_tile_path(cases[i].level, cases[i].n, cases[i].w);

		g_assert_cmpstr(p, ==, cases[i].path);
	}
}

/* The example of C2SP signed-note. */
static void
test_note_example(void)
{
	static const char vkey[] = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
	static const char text[] = "This is an example message.\n\n\xe2\x80\x94 example.com/foo "
		"Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
	g_autoptr(note_key) k = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *bad = g_strdup(text);

	g_assert_cmpint(note_key_parse(vkey, strlen(vkey), &k, &err), ==, VULNID_OK);
	g_assert_cmphex(k->id, ==, 0x530d903a);
	g_assert_cmphex(note_key_id(k->name, NOTE_ED25519, k->pub), ==, 0x530d903a);
	g_assert_cmpint(note_parse(text, strlen(text), &n, &err), ==, VULNID_OK);
	g_assert_cmpstr(n->text, ==, "This is an example message.\n");
	g_assert_cmpint(note_verify_key(n, k, NULL), ==, NOTE_SIG_GOOD);
	g_clear_pointer(&n, note_free);
	bad[0] = 't';
	g_assert_cmpint(note_parse(bad, strlen(bad), &n, &err), ==, VULNID_OK);
	g_assert_cmpint(note_verify_key(n, k, NULL), ==, NOTE_SIG_BAD);
}

static void
test_note_sign_cosign(void)
{
	g_autoptr(note_key) log = NULL;
	g_autoptr(note_key) wit = NULL;
	g_autoptr(note_key) pub = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *vk = NULL;
	g_autofree char *sk = NULL;
	g_autofree char *sig = NULL;
	g_autofree char *cosig = NULL;
	g_autofree char *all = NULL;
	tlog_hash root;
	checkpoint c;
	guint64 ts = 0;

	g_assert_cmpint(note_key_generate("example.org/log", NOTE_ED25519, &log, &err), ==, VULNID_OK);
	g_assert_cmpint(note_key_generate("example.org/w", NOTE_COSIGNATURE, &wit, &err), ==, VULNID_OK);
	sk = note_key_private_text(log);
	g_assert_true(g_str_has_prefix(sk, "PRIVATE+KEY+example.org/log+"));
	vk = note_key_vkey(log);
	g_assert_cmpint(note_key_parse(vk, strlen(vk), &pub, &err), ==, VULNID_OK);
	g_assert_false(pub->has_private);
	tlog_empty_hash(&root);
	{
		g_autofree char *text = checkpoint_text("example.org/log", 0, &root);

		sig = note_sign(log, text);
		cosig = note_cosign(wit, text, 1679315147);
		all = g_strconcat(text, "\n", sig, cosig, NULL);
	}
	g_assert_cmpint(note_parse(all, strlen(all), &n, &err), ==, VULNID_OK);
	g_assert_cmpint(note_verify_key(n, pub, NULL), ==, NOTE_SIG_GOOD);
	g_assert_cmpint(note_verify_key(n, wit, &ts), ==, NOTE_SIG_GOOD);
	g_assert_cmpuint(ts, ==, 1679315147);
	g_assert_cmpint(checkpoint_parse(n->text, &c, &err), ==, VULNID_OK);
	g_assert_cmpstr(c.origin, ==, "example.org/log");
	g_assert_cmpuint(c.size, ==, 0);
	checkpoint_clear(&c);
}

static void
test_parsers_refuse(void)
{
	static const char *const cps[] = {
		"o\n01\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",	/* leading zero */
		"o\n1\nAAAA\n",						/* short hash */
		"o\n1\n",							/* two lines */
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",	/* no newline */
		"o\n-1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"o\n99999999999999999999\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\nx\n",	/* empty extension */
	};
	static const char *const notes[] = {
		"text\n",						/* no signature */
		"text\n\n",
		"text\n\n\xe2\x80\x94 name AAAA\n",			/* signature too short */
		"text\n\n\xe2\x80\x94 na+me AAAAAAAA\n",			/* '+' in the name */
		"text\n\n- name AAAAAAAA\n",				/* not an em dash */
		"te\x01xt\n\n\xe2\x80\x94 name AAAAAAAA\n",		/* a control character */
		"text\n\n\xe2\x80\x94 name AAAAAAAA",			/* no final newline */
	};
	static const char *const keys[] = {
		"name+530d903a", "name+zzzzzzzz+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
		"example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",	/* wrong id */
		"example.com/foo+530d903a+AgkyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",	/* type 2 */
		"a b+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cps); i++) {
		g_autoptr(GError) err = NULL;
		checkpoint c;

		g_assert_cmpint(checkpoint_parse(cps[i], &c, &err), !=, VULNID_OK);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(notes); i++) {
		g_autoptr(GError) err = NULL;
		g_autoptr(note) n = NULL;

		g_assert_cmpint(note_parse(notes[i], strlen(notes[i]), &n, &err), !=, VULNID_OK);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
		g_autoptr(GError) err = NULL;
		g_autoptr(note_key) k = NULL;

		g_assert_cmpint(note_key_parse(keys[i], strlen(keys[i]), &k, &err), !=, VULNID_OK);
	}
}

/* A log of n entries (entry i: 3 bytes, or a long one at long_at) written
 * once, with the partial tiles of the sizes in earlier[]. */
static void
write_log(const char *dir, guint n, guint long_at, const guint *earlier, gsize nearlier, tlog_hash *root)
{
	guint start = 0;

	for (gsize k = 0; k <= nearlier; k++) {
		guint end = k < nearlier ? earlier[k] : n;
		g_autoptr(tlog_builder) b = NULL;
		g_autoptr(GError) err = NULL;

		g_assert_cmpint(tlog_builder_new(dir, TLOG_WRITE, start, &b, &err), ==, VULNID_OK);
		for (guint i = start - start % TLOG_TILE_WIDTH; i < end; i++) {
			guint8 v[3] = { (guint8) i, (guint8) (i >> 8), 0x5a };
			g_autofree char *big = i == long_at ? g_strnfill(70000, 'x') : NULL;

			g_assert_cmpint(tlog_builder_add(b, big != NULL ? (void *) big : v, big != NULL ? 70000 : 3, &err),
					==, VULNID_OK);
		}
		g_assert_cmpint(tlog_builder_finish(b, &err), ==, VULNID_OK);
		tlog_builder_root(b, root);
		start = end;
	}
}

static void
flip(const char *dir, const char *rel, gsize off)
{
	g_autofree char *p = g_build_filename(dir, rel, NULL);
	g_autofree char *data = NULL;
	gsize len;

	g_assert_true(g_file_get_contents(p, &data, &len, NULL));
	g_assert_cmpuint(off, <, len);
	data[off] ^= 0xff;
	g_assert_true(g_file_set_contents(p, data, (gssize) len, NULL));
}

static void
test_verify_tiles(void)
{
	static const guint earlier[] = { 100, 300 };
	g_autofree char *dir = tmpdir();
	g_autofree char *copy = g_strconcat(dir, ".copy", NULL);
	g_autofree char *cmd = g_strdup_printf("cp -a '%s' '%s'", dir, copy);
	tlog_tiles_stats st;
	tlog_hash root, other;
	g_autoptr(GError) err = NULL;

	/* 601 = 2 * 256 + 89: full tiles 0 and 1, partials of 100 and 300
	 * beside them. */
	write_log(dir, 601, G_MAXUINT, earlier, G_N_ELEMENTS(earlier), &root);
	g_assert_cmpint(system(cmd), ==, 0);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_OK);
	g_assert_cmpuint(st.checked, ==, 4);
	g_assert_cmpuint(st.bundles, ==, 3);
	/* 0/000.p/100 and 0/001.p/44, their bundles, and 1/000.p/1 of 300 */
	g_assert_cmpuint(st.earlier, ==, 5);
	/* Only what is past 512: the partial tiles of both levels. */
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 512, FALSE, &st, &err), ==, VULNID_OK);
	g_assert_cmpuint(st.checked, ==, 2);
	g_assert_cmpuint(st.bundles, ==, 1);
	other = root;
	other.b[0] ^= 1;
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &other, 0, FALSE, &st, &err), ==, VULNID_ERR_CORRUPT);
	g_clear_error(&err);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 602, FALSE, &st, &err), ==, VULNID_ERR_INVALID);
	g_clear_error(&err);

	/* A full tile the root does not read. */
	flip(dir, "tile/0/000", 33);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_ERR_CORRUPT);
	g_assert_nonnull(strstr(err->message, "does not hash to its hash in the tile above"));
	g_clear_error(&err);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 512, FALSE, &st, &err), ==, VULNID_OK);
	flip(dir, "tile/0/000", 33);

	/* A bundle: changed, missing (refused unless optional). */
	flip(dir, "tile/entries/001", 7);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_ERR_CORRUPT);
	g_clear_error(&err);
	flip(dir, "tile/entries/001", 7);
	{
		g_autofree char *p = g_build_filename(dir, "tile/entries/001", NULL);
		g_autofree char *q = g_build_filename(dir, "tile/entries/001.kept", NULL);

		g_assert_cmpint(rename(p, q), ==, 0);
		g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_ERR_CORRUPT);
		g_clear_error(&err);
		g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, TRUE, &st, &err), ==, VULNID_OK);
		g_assert_cmpuint(st.absent, ==, 1);
		g_assert_cmpint(rename(q, p), ==, 0);
	}
	/* An earlier partial tile that is not a prefix. */
	flip(dir, "tile/0/001.p/44", 40);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_ERR_CORRUPT);
	g_assert_nonnull(strstr(err->message, "is not a prefix"));
	g_clear_error(&err);
	flip(dir, "tile/0/001.p/44", 40);
	g_assert_cmpint(tlog_verify_tiles(dir, 601, &root, 0, FALSE, &st, &err), ==, VULNID_OK);
	rm_rf(dir);
	rm_rf(copy);
}

static void
test_bundle_parse(void)
{
	static const guint8 two[] = { 0, 1, 'a', 0, 2, 'b', 'c' };
	static const guint8 cut[] = { 0, 3, 'a', 'b' };
	g_autoptr(GPtrArray) e = tlog_bundle_parse(two, sizeof two);
	g_autoptr(GPtrArray) none = tlog_bundle_parse("", 0);

	g_assert_nonnull(e);
	g_assert_cmpuint(e->len, ==, 2);
	g_assert_cmpuint(g_bytes_get_size(g_ptr_array_index(e, 1)), ==, 2);
	g_assert_nonnull(none);
	g_assert_cmpuint(none->len, ==, 0);
	g_assert_null(tlog_bundle_parse(cut, sizeof cut));
	g_assert_null(tlog_bundle_parse(two, 1));
}

/* The log entry of a feed line, and lines that have none. */
static void
test_log_entry(void)
{
	static const char line[] = "{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":1,\"pos\":7,\"type\":\"stub\","
		"\"entry\":\"TEST-2026-0001\",\"seq\":2,\"digest\":\"x\",\"prev\":\"p\",\"hash\":\"h\"}";
	static const char *const bad[] = {
		"{\"feed\":\"vulnid-feed-2\",\"year\":2026,\"n\":1,\"pos\":7,\"type\":\"stub\",\"entry\":\"T-1\",\"seq\":2,",
		"{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":1,\"pos\":7,\"type\":\"Stub\",\"entry\":\"T-1\",\"seq\":2,",
		"{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":1,\"pos\":7,\"type\":\"stub\",\"entry\":\"t\\\"\",\"seq\":2,",
		"{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":01,\"pos\":7,\"type\":\"stub\",\"entry\":\"T-1\",\"seq\":2,",
		"{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":1,\"pos\":7,\"entry\":\"T-1\",\"type\":\"stub\",\"seq\":2,",
		"{\"feed\":\"vulnid-feed-1\",\"year\":2026,\"n\":1,\"pos\":7,\"type\":\"stub\",\"entry\":\"T-1\",\"seq\":2}",
	};
	g_autofree char *e = feed_log_entry(line, strlen(line));
	g_autofree char *sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, line, -1);
	g_autofree char *want = g_strdup_printf("{\"log\":\"vulnid-log-2\",\"year\":2026,\"n\":1,\"pos\":7,"
						"\"type\":\"stub\",\"entry\":\"TEST-2026-0001\",\"seq\":2,"
						"\"sha256\":\"%s\"}", sha);

	g_assert_cmpstr(e, ==, want);
	g_assert_cmpuint(strlen(e), <=, FEED_MAX_LOG_ENTRY);
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++)
		g_assert_null(feed_log_entry(bad[i], strlen(bad[i])));
}

static void
test_witness_parse(void)
{
	g_autoptr(note_key) w = NULL;
	g_autoptr(note_key) log = NULL;
	g_autoptr(GError) err = NULL;
	g_autofree char *wk = NULL;
	g_autofree char *lk = NULL;
	g_autofree char *ok1 = NULL;
	g_autofree char *ok2 = NULL;
	g_autoptr(note_witness) x = NULL;

	g_assert_cmpint(note_key_generate("example.net/w", NOTE_COSIGNATURE, &w, &err), ==, VULNID_OK);
	g_assert_cmpint(note_key_generate("example.net/l", NOTE_ED25519, &log, &err), ==, VULNID_OK);
	wk = note_key_vkey(w);
	lk = note_key_vkey(log);
	ok1 = g_strdup_printf("%s https://w.example.net/tlog//", wk);
	g_assert_cmpint(note_witness_parse(ok1, &x, &err), ==, VULNID_OK);
	g_assert_cmpstr(x->url, ==, "https://w.example.net/tlog");
	g_assert_null(x->path);
	g_assert_cmphex(x->key->id, ==, w->id);
	g_clear_pointer(&x, note_witness_free);
	ok2 = g_strdup_printf("  %s	/srv/repo/b/witness ", wk);
	g_assert_cmpint(note_witness_parse(ok2, &x, &err), ==, VULNID_OK);
	g_assert_cmpstr(x->path, ==, "/srv/repo/b/witness");
	g_clear_pointer(&x, note_witness_free);
	{
		g_autofree char *a = g_strdup_printf("%s", wk);
		g_autofree char *b = g_strdup_printf("%s relative/dir", wk);
		g_autofree char *c = g_strdup_printf("%s ftp://x/", wk);
		g_autofree char *d = g_strdup_printf("%s https:///x", wk);
		g_autofree char *e = g_strdup_printf("%s https://x/ /y", wk);
		g_autofree char *f = g_strdup_printf("%s https://x/", lk);	/* a log's key */
		const char *bad[] = { a, b, c, d, e, f, "", "name+00000000+AAAA https://x/" };

		for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
			g_clear_error(&err);
			g_assert_cmpint(note_witness_parse(bad[i], &x, &err), !=, VULNID_OK);
			g_assert_null(x);
		}
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/tlog/roots", test_roots);
	g_test_add_func("/tlog/reference-proofs", test_reference_proofs);
	g_test_add_func("/tlog/exhaustive", test_exhaustive);
	g_test_add_func("/tlog/tile-paths", test_tile_paths);
	g_test_add_func("/note/example", test_note_example);
	g_test_add_func("/note/sign-cosign", test_note_sign_cosign);
	g_test_add_func("/note/parsers-refuse", test_parsers_refuse);
	g_test_add_func("/tlog/verify-tiles", test_verify_tiles);
	g_test_add_func("/tlog/bundle-parse", test_bundle_parse);
	g_test_add_func("/tlog/log-entry", test_log_entry);
	g_test_add_func("/note/witness-parse", test_witness_parse);
	return g_test_run();
}
