/* note.c - signed notes, checkpoints and cosignatures (note.h)
 *
 * Ed25519 is OpenSSL's (EVP, raw 32-byte keys); the encodings follow
 * C2SP signed-note, tlog-checkpoint and tlog-cosignature. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "fileio.h"
#include "note.h"

#define EM_DASH "\xe2\x80\x94"

void
note_key_free(note_key *k)
{
	if (k == NULL)
		return;
	g_free(k->name);
	OPENSSL_cleanse(k->seed, sizeof k->seed);
	g_free(k);
}

gboolean
note_name_valid(const char *name)
{
	gsize len = strlen(name);

	if (len == 0 || len > NOTE_MAX_NAME || !g_utf8_validate(name, (gssize) len, NULL))
		return FALSE;
	for (const char *p = name; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c == '+' || g_unichar_isspace(c) || g_unichar_iscntrl(c) || c == 0x85 || c == 0xa0 ||
		    g_unichar_type(c) == G_UNICODE_SPACE_SEPARATOR)
			return FALSE;
	}
	return TRUE;
}

guint32
note_key_id(const char *name, guint8 type, const guint8 pub[32])
{
	g_autoptr(GByteArray) b = g_byte_array_new();
	guint8 nl = '\n', h[32];

	g_byte_array_append(b, (const guint8 *) name, (guint) strlen(name));
	g_byte_array_append(b, &nl, 1);
	g_byte_array_append(b, &type, 1);
	g_byte_array_append(b, pub, 32);
	tlog_sha256(b->data, b->len, h);
	return (guint32) h[0] << 24 | (guint32) h[1] << 16 | (guint32) h[2] << 8 | h[3];
}

static gboolean
public_from_seed(const guint8 seed[32], guint8 pub[32])
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	size_t n = 32;
	gboolean ok;

	if (pk == NULL)
		return FALSE;
	ok = EVP_PKEY_get_raw_public_key(pk, pub, &n) == 1 && n == 32;
	EVP_PKEY_free(pk);
	return ok;
}

static gboolean
ed25519_sign(const guint8 seed[32], const void *msg, gsize len, guint8 sig[64])
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t n = 64;
	gboolean ok;

	ok = pk != NULL && ctx != NULL && EVP_DigestSignInit(ctx, NULL, NULL, NULL, pk) == 1 &&
	     EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == 64;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pk);
	return ok;
}

static gboolean
ed25519_verify(const guint8 pub[32], const void *msg, gsize len, const guint8 *sig, gsize siglen)
{
	EVP_PKEY *pk;
	EVP_MD_CTX *ctx;
	gboolean ok;

	if (siglen != 64)
		return FALSE;
	pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, 32);
	ctx = EVP_MD_CTX_new();
	ok = pk != NULL && ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) == 1 &&
	     EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pk);
	return ok;
}

vulnid_status
note_key_generate(const char *name, guint8 type, note_key **out, GError **err)
{
	g_autoptr(note_key) k = g_new0(note_key, 1);

	if (!note_name_valid(name))
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' cannot name a note key", name);
	k->name = g_strdup(name);
	k->type = type;
	k->has_private = TRUE;
	if (RAND_bytes(k->seed, 32) != 1 || !public_from_seed(k->seed, k->pub))
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot make an Ed25519 key");
	k->id = note_key_id(name, type, k->pub);
	*out = g_steal_pointer(&k);
	return VULNID_OK;
}

static char *
key_text(const note_key *k, const char *prefix, const guint8 material[32])
{
	guint8 raw[33];
	g_autofree char *b64 = NULL;

	raw[0] = k->type;
	memcpy(raw + 1, material, 32);
	b64 = g_base64_encode(raw, sizeof raw);
	OPENSSL_cleanse(raw, sizeof raw);
	return g_strdup_printf("%s%s+%08x+%s", prefix, k->name, k->id, b64);
}

char *
note_key_vkey(const note_key *k)
{
	return key_text(k, "", k->pub);
}

char *
note_key_private_text(const note_key *k)
{
	return key_text(k, "PRIVATE+KEY+", k->seed);
}

vulnid_status
note_key_parse(const char *text, gsize len, note_key **out, GError **err)
{
	g_autofree char *copy = NULL;
	g_auto(GStrv) parts = NULL;
	g_autofree guchar *raw = NULL;
	g_autoptr(note_key) k = g_new0(note_key, 1);
	gsize n = 0, i = 0;
	char *end = NULL;
	guint64 id;

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len == 0 || len > NOTE_MAX_KEY_TEXT || memchr(text, '\0', len) != NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a note key");
	copy = g_strndup(text, len);
	/* Names hold no '+', base64 may: the key is everything after the
	 * second '+'. */
	if (g_str_has_prefix(copy, "PRIVATE+KEY+")) {
		k->has_private = TRUE;
		parts = g_strsplit(copy + strlen("PRIVATE+KEY+"), "+", 3);
	} else {
		parts = g_strsplit(copy, "+", 3);
	}
	if (g_strv_length(parts) != 3 || !note_name_valid(parts[i]) || strlen(parts[i + 1]) != 8)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a note key (NAME+ID+KEY)");
	id = g_ascii_strtoull(parts[i + 1], &end, 16);
	if (*end != '\0' || !g_ascii_isxdigit(parts[i + 1][0]))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a note key: bad key id");
	raw = g_base64_decode(parts[i + 2], &n);
	if (n != 33 || (raw[0] != NOTE_ED25519 && raw[0] != NOTE_COSIGNATURE)) {
		if (raw != NULL)
			OPENSSL_cleanse(raw, n);
		return vulnid_fail(err, VULNID_ERR_INVALID, "not an Ed25519 note key");
	}
	k->name = g_strdup(parts[i]);
	k->type = raw[0];
	if (k->has_private) {
		memcpy(k->seed, raw + 1, 32);
		if (!public_from_seed(k->seed, k->pub))
			return vulnid_fail(err, VULNID_ERR_INVALID, "not an Ed25519 private key");
	} else {
		memcpy(k->pub, raw + 1, 32);
	}
	OPENSSL_cleanse(raw, n);
	k->id = note_key_id(k->name, k->type, k->pub);
	if (k->id != (guint32) id)
		return vulnid_fail(err, VULNID_ERR_INVALID, "note key '%s': the key id does not match the key",
				   k->name);
	*out = g_steal_pointer(&k);
	return VULNID_OK;
}

static vulnid_status
key_read(const char *path, note_key **out, GError **err)
{
	char buf[NOTE_MAX_KEY_TEXT + 2];
	struct stat sb;
	ssize_t n;
	vulnid_status s;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s", path,
				   g_strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (sb.st_mode & 077) != 0) {
		close(fd);
		return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' must be a regular file only its owner can read",
				   path);
	}
	n = read(fd, buf, sizeof buf);
	close(fd);
	if (n < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot read '%s': %s", path,
				   g_strerror(errno));
	s = note_key_parse(buf, (gsize) n, out, err);
	OPENSSL_cleanse(buf, sizeof buf);
	if (s == VULNID_OK && !(*out)->has_private) {
		g_clear_pointer(out, note_key_free);
		return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' holds no private key", path);
	}
	if (s != VULNID_OK)
		g_prefix_error(err, "'%s': ", path);
	return s;
}

vulnid_status
note_key_load_or_create(const char *path, const char *name, guint8 type, note_key **out, gboolean *created,
			GError **err)
{
	g_autoptr(note_key) k = NULL;
	g_autofree char *text = NULL;
	vulnid_status s;
	gsize len;
	gboolean written;
	int fd;

	if (created != NULL)
		*created = FALSE;
	if (name == NULL || g_file_test(path, G_FILE_TEST_EXISTS) || g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
		s = key_read(path, out, err);
		if (s == VULNID_OK && (*out)->type != type) {
			g_clear_pointer(out, note_key_free);
			return vulnid_fail(err, VULNID_ERR_CONFIG, "'%s' holds another kind of key", path);
		}
		return s;
	}
	s = note_key_generate(name, type, &k, err);
	if (s != VULNID_OK)
		return s;
	{
		g_autofree char *line = note_key_private_text(k);

		text = g_strconcat(line, "\n", NULL);
		OPENSSL_cleanse(line, strlen(line));
	}
	len = strlen(text);
	/* Exclusive: two exports starting at once make one key, and the
	 * loser reads the winner's. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return key_read(path, out, err);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", path,
				   g_strerror(errno));
	written = fileio_write_all(fd, text, len);
	OPENSSL_cleanse(text, len);
	if (!written || fsync(fd) < 0) {
		int e = errno;

		close(fd);
		unlink(path);
		return vulnid_fail(err, vulnid_status_from_errno(e), "cannot write '%s': %s", path, g_strerror(e));
	}
	close(fd);
	if (created != NULL)
		*created = TRUE;
	*out = g_steal_pointer(&k);
	return VULNID_OK;
}

void
note_witness_free(note_witness *w)
{
	if (w == NULL)
		return;
	note_key_free(w->key);
	g_free(w->url);
	g_free(w->path);
	g_free(w);
}

vulnid_status
note_witness_parse(const char *text, note_witness **out, GError **err)
{
	g_autoptr(note_witness) w = g_new0(note_witness, 1);
	g_auto(GStrv) f = g_strsplit_set(text, " \t", -1);
	const char *where = NULL, *vkey = NULL, *host;
	vulnid_status s;

	for (char **p = f; *p != NULL; p++) {
		if (**p == '\0')
			continue;
		if (vkey == NULL)
			vkey = *p;
		else if (where == NULL)
			where = *p;
		else
			return vulnid_fail(err, VULNID_ERR_INVALID, "a witness is 'VKEY URL' or 'VKEY PATH'");
	}
	if (vkey == NULL || where == NULL)
		return vulnid_fail(err, VULNID_ERR_INVALID, "a witness is 'VKEY URL' or 'VKEY PATH'");
	s = note_key_parse(vkey, strlen(vkey), &w->key, err);
	if (s != VULNID_OK)
		return s;
	if (w->key->type != NOTE_COSIGNATURE || w->key->has_private)
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a witness's verifier key (type 4)", vkey);
	if (g_str_has_prefix(where, "https://") || g_str_has_prefix(where, "http://")) {
		gsize n = strlen(where);

		/* The submission prefix, without its trailing slashes. */
		while (n > 0 && where[n - 1] == '/')
			n--;
		w->url = g_strndup(where, n);
		host = strstr(w->url, "://") + 3;
		if (*host == '\0' || *host == '/' || strpbrk(w->url, "\"<>\\^`{|}") != NULL)
			return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a URL", where);
	} else if (where[0] == '/') {
		w->path = g_strdup(where);
	} else {
		return vulnid_fail(err, VULNID_ERR_INVALID, "witness %s: '%s' is neither an http(s) URL nor an"
				   " absolute path", w->key->name, where);
	}
	*out = g_steal_pointer(&w);
	return VULNID_OK;
}

/* ---- notes -------------------------------------------------------------------------- */

static void
note_sig_free(gpointer p)
{
	note_sig *s = p;

	g_free(s->name);
	g_free(s->sig);
	g_free(s->line);
	g_free(s);
}

void
note_free(note *n)
{
	if (n == NULL)
		return;
	g_free(n->text);
	g_ptr_array_unref(n->sigs);
	g_free(n);
}

/* "— NAME BASE64" (without the newline). */
static note_sig *
sig_parse(const char *line, gsize len)
{
	g_autofree char *copy = NULL;
	g_autofree guchar *raw = NULL;
	g_autofree char *again = NULL;
	note_sig *s;
	char *sp, *name;
	gsize n = 0;

	if (len < 4 || memcmp(line, EM_DASH " ", 4) != 0)
		return NULL;
	copy = g_strndup(line + 4, len - 4);
	sp = strchr(copy, ' ');
	if (sp == NULL || strchr(sp + 1, ' ') != NULL)
		return NULL;
	*sp = '\0';
	name = copy;
	if (!note_name_valid(name))
		return NULL;
	raw = g_base64_decode(sp + 1, &n);
	again = n > 0 ? g_base64_encode(raw, n) : NULL;
	if (n < 5 || strcmp(again, sp + 1) != 0)
		return NULL;
	s = g_new0(note_sig, 1);
	s->name = g_strdup(name);
	s->id = (guint32) raw[0] << 24 | (guint32) raw[1] << 16 | (guint32) raw[2] << 8 | raw[3];
	s->len = n - 4;
	s->sig = g_memdup2(raw + 4, s->len);
	s->line = g_strndup(line, len + 1);
	return s;
}

vulnid_status
note_parse(const char *data, gsize len, note **out, GError **err)
{
	g_autoptr(note) n = NULL;
	const char *sep = NULL, *p;

	if (len > NOTE_MAX_SIZE)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "a note of more than %d bytes", NOTE_MAX_SIZE);
	if (len < 2 || data[len - 1] != '\n' || !g_utf8_validate(data, (gssize) len, NULL))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a signed note");
	for (gsize i = 0; i < len; i++)
		if ((guchar) data[i] < 0x20 && data[i] != '\n')
			return vulnid_fail(err, VULNID_ERR_INVALID, "a control character in a signed note");
	/* The text ends before the last blank line. */
	for (p = data; (p = memchr(p, '\n', (gsize) (data + len - p))) != NULL && p + 1 < data + len; p++)
		if (p[1] == '\n')
			sep = p + 1;
	if (sep == NULL || sep == data)
		return vulnid_fail(err, VULNID_ERR_INVALID, "a signed note without signatures");
	n = g_new0(note, 1);
	n->text = g_strndup(data, (gsize) (sep - data));
	n->sigs = g_ptr_array_new_with_free_func(note_sig_free);
	for (p = sep + 1; p < data + len;) {
		const char *nl = memchr(p, '\n', (gsize) (data + len - p));
		note_sig *s = sig_parse(p, (gsize) (nl - p));

		if (s == NULL)
			return vulnid_fail(err, VULNID_ERR_INVALID, "a malformed signature line in a signed note");
		if (n->sigs->len >= NOTE_MAX_SIGS) {
			note_sig_free(s);
			return vulnid_fail(err, VULNID_ERR_TOOBIG, "more than %d signatures on a note", NOTE_MAX_SIGS);
		}
		g_ptr_array_add(n->sigs, s);
		p = nl + 1;
	}
	if (n->sigs->len == 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "a signed note without signatures");
	*out = g_steal_pointer(&n);
	return VULNID_OK;
}

static char *
sig_line(const note_key *k, const guint8 *sig, gsize len)
{
	g_autofree guint8 *raw = g_malloc(4 + len);
	g_autofree char *b64 = NULL;

	raw[0] = (guint8) (k->id >> 24);
	raw[1] = (guint8) (k->id >> 16);
	raw[2] = (guint8) (k->id >> 8);
	raw[3] = (guint8) k->id;
	memcpy(raw + 4, sig, len);
	b64 = g_base64_encode(raw, 4 + len);
	return g_strdup_printf(EM_DASH " %s %s\n", k->name, b64);
}

char *
note_sign(const note_key *k, const char *text)
{
	guint8 sig[64];

	g_return_val_if_fail(k->has_private && k->type == NOTE_ED25519, NULL);
	if (!ed25519_sign(k->seed, text, strlen(text), sig))
		return NULL;
	return sig_line(k, sig, sizeof sig);
}

static char *
cosigned_message(const char *text, guint64 ts)
{
	return g_strdup_printf("cosignature/v1\ntime %" G_GUINT64_FORMAT "\n%s", ts, text);
}

char *
note_cosign(const note_key *k, const char *text, guint64 ts)
{
	g_autofree char *msg = cosigned_message(text, ts);
	guint8 sig[72];

	g_return_val_if_fail(k->has_private && k->type == NOTE_COSIGNATURE, NULL);
	for (int i = 0; i < 8; i++)
		sig[i] = (guint8) (ts >> (56 - 8 * i));
	if (ts > G_MAXINT64 || !ed25519_sign(k->seed, msg, strlen(msg), sig + 8))
		return NULL;
	return sig_line(k, sig, sizeof sig);
}

note_sig_result
note_verify_key(const note *n, const note_key *k, guint64 *ts)
{
	note_sig_result r = NOTE_SIG_ABSENT;

	for (guint i = 0; i < n->sigs->len; i++) {
		const note_sig *s = g_ptr_array_index(n->sigs, i);
		gboolean ok;

		if (s->id != k->id || strcmp(s->name, k->name) != 0)
			continue;
		if (k->type == NOTE_ED25519) {
			ok = ed25519_verify(k->pub, n->text, strlen(n->text), s->sig, s->len);
		} else {
			guint64 t = 0;
			g_autofree char *msg = NULL;

			for (int j = 0; s->len == 72 && j < 8; j++)
				t = t << 8 | s->sig[j];
			msg = cosigned_message(n->text, t);
			ok = s->len == 72 && t <= G_MAXINT64 &&
			     ed25519_verify(k->pub, msg, strlen(msg), s->sig + 8, 64);
			if (ok && ts != NULL)
				*ts = t;
		}
		/* One bad line of a known key spoils the note. */
		if (!ok)
			return NOTE_SIG_BAD;
		r = NOTE_SIG_GOOD;
	}
	return r;
}

/* ---- checkpoints -------------------------------------------------------------------- */

void
checkpoint_clear(checkpoint *c)
{
	g_clear_pointer(&c->origin, g_free);
}

char *
checkpoint_text(const char *origin, guint64 size, const tlog_hash *root)
{
	g_autofree char *b64 = tlog_hash_b64(root);

	return g_strdup_printf("%s\n%" G_GUINT64_FORMAT "\n%s\n", origin, size, b64);
}

vulnid_status
checkpoint_parse(const char *text, checkpoint *c, GError **err)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", 0);
	guint n = g_strv_length(lines);
	const char *sz;

	memset(c, 0, sizeof *c);
	/* Three lines at least, each ending in a newline (so the last split
	 * piece is empty), none of them empty. */
	if (n < 4 || *lines[n - 1] != '\0')
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a checkpoint");
	for (guint i = 0; i + 1 < n; i++)
		if (*lines[i] == '\0')
			return vulnid_fail(err, VULNID_ERR_INVALID, "not a checkpoint: an empty line");
	sz = lines[1];
	if (strlen(sz) > 19 || strspn(sz, "0123456789") != strlen(sz) || (sz[0] == '0' && sz[1] != '\0'))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a checkpoint: bad tree size");
	c->size = g_ascii_strtoull(sz, NULL, 10);
	if (c->size > G_MAXINT64)
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a checkpoint: bad tree size");
	if (!tlog_hash_from_b64(lines[2], strlen(lines[2]), &c->root))
		return vulnid_fail(err, VULNID_ERR_INVALID, "not a checkpoint: bad root hash");
	c->origin = g_strdup(lines[0]);
	return VULNID_OK;
}

vulnid_status
checkpoint_open(const char *path, const note_key *log_key, note **out, checkpoint *c, GError **err)
{
	g_autofree char *data = NULL;
	g_autoptr(note) n = NULL;
	g_autoptr(GError) e = NULL;
	struct stat sb;
	gsize len = 0;
	vulnid_status s;

	memset(c, 0, sizeof *c);
	if (lstat(path, &sb) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot read '%s': %s", path,
				   g_strerror(errno));
	if (!S_ISREG(sb.st_mode) || sb.st_size > NOTE_MAX_SIZE)
		return vulnid_fail(err, VULNID_ERR_INVALID, "'%s' is not a regular file of at most %d bytes", path,
				   NOTE_MAX_SIZE);
	if (!g_file_get_contents(path, &data, &len, &e))
		return vulnid_fail(err, VULNID_ERR_IO, "%s", e->message);
	s = note_parse(data, len, &n, err);
	if (s == VULNID_OK)
		s = checkpoint_parse(n->text, c, err);
	if (s != VULNID_OK) {
		g_prefix_error(err, "'%s': ", path);
		return s;
	}
	if (strcmp(c->origin, log_key->name) != 0) {
		s = vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is the checkpoint of another log (origin '%s',"
				" the key is for '%s')", path, c->origin, log_key->name);
		checkpoint_clear(c);
		return s;
	}
	if (note_verify_key(n, log_key, NULL) != NOTE_SIG_GOOD) {
		checkpoint_clear(c);
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s' is not signed by the log key %s", path,
				   log_key->name);
	}
	*out = g_steal_pointer(&n);
	return VULNID_OK;
}
