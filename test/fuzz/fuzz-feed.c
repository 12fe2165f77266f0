/* fuzz-feed.c - the feed verifier (feed_verify, doc/vulnid-feed.5) on
 * hostile feeds: a feed may come from anywhere, and verifying it must
 * neither crash nor accept what does not chain.
 *
 * The OpenPGP signature over HEAD.json is gpg's business; here
 * crypto_verify_with_key() is replaced (ld --wrap) by a check that
 * HEAD.json.asc is the harness's own token for exactly those bytes, so
 * that every input gets past the signature and into the verifier.
 *
 * Input: the first byte picks a mode, the rest is a feed:
 *   mode 0  year lines; the harness renumbers them, recomputes each
 *           record's sha256 from its members and re-chains prev/hash, so
 *           that the fuzzer reaches the semantic checks (order, stubs,
 *           commitments, releases); HEAD.json is written to match
 *   mode 1  the same, but sha256 members are left as given
 *   mode 2  year lines taken as they are; HEAD.json names their count
 *           and the hash of the last line
 *   mode 3  everything as given: HEAD.json, then sections
 *           "\n==== NAME\n" with the files of the feed directory
 * Bit 4 of the first byte also asks for the lines after pos 0 (--since).
 * Properties: a feed that verifies hands over only lines whose hash
 * verifies, in pos order, as many as it counted. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#if defined(__has_include)
#if __has_include("../../src/lib/feed-verify.c")
#define FUZZ_HAVE_FEED 1
#endif
#endif

#ifdef FUZZ_HAVE_FEED
/* The verifier compiled in here, for its static helpers; this copy takes
 * the place of the library's. */
#include "../../src/lib/feed-verify.c"

#define FPR "0123456789ABCDEF0123456789ABCDEF01234567"

static char *dir;

static char *
sig_for(GBytes *data)
{
	g_autofree char *h = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, data);

	return g_strdup_printf("FUZZ-SIGNATURE %s\n", h);
}

vulnid_status __wrap_crypto_verify_with_key(GBytes *key, GBytes *data, GBytes *signature,
					    char **fpr, GError **err);

vulnid_status
__wrap_crypto_verify_with_key(GBytes *key, GBytes *data, GBytes *signature, char **fpr, GError **err)
{
	g_autofree char *want = sig_for(data);
	gsize n;
	const char *p = g_bytes_get_data(signature, &n);

	(void) key;
	if (n != strlen(want) || memcmp(p, want, n) != 0)
		return vulnid_fail(err, VULNID_ERR_INVALID, "bad signature");
	*fpr = g_strdup(FPR);
	return VULNID_OK;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	dir = fuzz_scratch_dir("feed");
	return 0;
}

/* Write a file of the feed; a name from the input that the file system
 * refuses (too long, ...) is left out, anything else is the harness's
 * fault. */
static void
put(const char *name, const char *data, gsize len)
{
	g_autofree char *p = g_build_filename(dir, name, NULL);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 && (errno == ENAMETOOLONG || errno == EISDIR || errno == EILSEQ || errno == EINVAL))
		return;
	if (fd < 0 || (len > 0 && write(fd, data, len) != (ssize_t) len))
		fuzz_fail("cannot write '%s': %s", p, g_strerror(errno));
	close(fd);
}

static void
clear_dir(void)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *n;

	while (d != NULL && (n = g_dir_read_name(d)) != NULL) {
		g_autofree char *p = g_build_filename(dir, n, NULL);

		fuzz_rm_rf(p);
	}
}

static void
sign_head(const char *head, gsize len)
{
	g_autoptr(GBytes) b = g_bytes_new(head, len);
	g_autofree char *sig = sig_for(b);

	put(FEED_HEAD, head, len);
	put(FEED_HEAD_SIG, sig, strlen(sig));
}

typedef struct {
	int year;
	GString *text;
	guint64 n;
	char last[65];
} yfile;

/* Recompute a record line's sha256 from its members, as check_record
 * does; FALSE when the members do not have the types it needs. */
static gboolean
fix_record_sha(JsonObject *o)
{
	const char *id, *created, *kind, *subject, *body;
	JsonNode *auth_n = json_object_get_member(o, "auth");
	JsonNode *fields_n = json_object_get_member(o, "fields");
	JsonNode *att_n = json_object_get_member(o, "attachments");
	g_autoptr(GPtrArray) atts = NULL;
	g_autofree char *auth = NULL;
	g_autofree char *fields = NULL;
	g_autofree char *canon = NULL;
	g_autofree char *sha = NULL;
	gint64 seq;

	if ((id = obj_str(o, "entry")) == NULL || !obj_int(o, "seq", &seq) ||
	    (created = obj_str(o, "created")) == NULL || (kind = obj_str(o, "kind")) == NULL ||
	    !str_or_null(o, "subject", &subject) || (body = obj_str(o, "body")) == NULL ||
	    !JSON_NODE_HOLDS_OBJECT(auth_n) || !JSON_NODE_HOLDS_ARRAY(fields_n) ||
	    !JSON_NODE_HOLDS_ARRAY(att_n) || (atts = line_attachments(json_node_get_array(att_n))) == NULL ||
	    !json_object_has_member(o, "sha256"))
		return FALSE;
	auth = feed_json_canonical(auth_n);
	fields = feed_json_canonical(fields_n);
	if (auth == NULL || fields == NULL)
		return FALSE;
	canon = entry_record_canonical(id, seq, created, kind, auth, subject, fields, body, atts);
	sha = feed_sha256_hex(canon, strlen(canon));
	json_object_set_string_member(o, "sha256", sha);
	return TRUE;
}

static yfile *
yfile_get(GPtrArray *files, int year)
{
	yfile *y;

	for (guint i = 0; i < files->len; i++)
		if (((yfile *) g_ptr_array_index(files, i))->year == year)
			return g_ptr_array_index(files, i);
	y = g_new0(yfile, 1);
	y->year = year;
	y->text = g_string_new(NULL);
	memcpy(y->last, GENESIS, 65);
	g_ptr_array_add(files, y);
	return y;
}

static void
yfile_free(gpointer p)
{
	yfile *y = p;

	g_string_free(y->text, TRUE);
	g_free(y);
}

static gint
yfile_cmp(gconstpointer a, gconstpointer b)
{
	return (*(yfile *const *) a)->year - (*(yfile *const *) b)->year;
}

/* Modes 0-2: build the year files and a HEAD.json that names them. */
static void
build_feed(const char *data, gsize size, int mode, gint64 *max_pos)
{
	g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(yfile_free);
	g_autofree char *text = g_strndup(data, size);
	g_auto(GStrv) lines = g_strsplit(text, "\n", 2000);
	g_autoptr(GString) head = g_string_new("{");
	int cur = 2026;
	gboolean first = TRUE;

	*max_pos = 0;
	for (char **l = lines; *l != NULL; l++) {
		gsize len = strlen(*l);
		g_autoptr(JsonParser) p = json_parser_new();
		JsonObject *o = NULL;
		yfile *y;
		gint64 v;

		if (len == 0 && l[1] == NULL)
			break;	/* the newline at the end */
		if (len > 0 && feed_json_depth_ok(*l, len, FEED_MAX_DEPTH) &&
		    json_parser_load_from_data(p, *l, (gssize) len, NULL) &&
		    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
			o = json_node_get_object(json_parser_get_root(p));
		if (o != NULL && obj_int(o, "year", &v) && v >= 1 && v <= 9999)
			cur = (int) v;
		if (o != NULL && obj_int(o, "pos", &v) && v > *max_pos)
			*max_pos = v;
		y = yfile_get(files, cur);
		y->n++;
		if (mode < 2 && o != NULL && json_object_has_member(o, "hash")) {
			g_autofree char *canon = NULL;
			g_autofree char *h = NULL;

			if (json_object_has_member(o, "n"))
				json_object_set_int_member(o, "n", (gint64) y->n);
			if (mode == 0 && g_strcmp0(obj_str(o, "type"), "record") == 0)
				fix_record_sha(o);
			if (json_object_has_member(o, "prev"))
				json_object_set_string_member(o, "prev", y->last);
			json_object_remove_member(o, "hash");
			canon = feed_json_canonical(json_parser_get_root(p));
			if (canon != NULL && g_str_has_suffix(canon, "}") && strlen(canon) > 2) {
				canon[strlen(canon) - 1] = '\0';
				h = feed_sha256_hex(canon, strlen(canon));
				g_string_append_printf(y->text, "%s,\"hash\":\"%s\"}\n", canon, h);
				memcpy(y->last, h, 65);
				continue;
			}
		}
		g_string_append_len(y->text, *l, (gssize) len);
		g_string_append_c(y->text, '\n');
		{
			g_autofree char *h = feed_line_hash(*l, len);

			if (h != NULL)
				memcpy(y->last, h, 65);
		}
	}
	g_ptr_array_sort(files, yfile_cmp);
	canonjson_member_str(head, &first, "feed", FEED_FORMAT);
	canonjson_member_str(head, &first, "time", FUZZ_NOW);
	canonjson_member_str(head, &first, "robot", FPR);
	canonjson_member_int(head, &first, "pos", *max_pos);
	canonjson_key(head, &first, "years");
	g_string_append_c(head, '[');
	for (guint i = 0; i < files->len; i++) {
		yfile *y = g_ptr_array_index(files, i);
		g_autofree char *name = g_strdup_printf("%04d.jsonl", y->year);
		gboolean f = TRUE;

		put(name, y->text->str, y->text->len);
		if (i > 0)
			g_string_append_c(head, ',');
		g_string_append_c(head, '{');
		canonjson_member_int(head, &f, "year", y->year);
		canonjson_member_int(head, &f, "lines", (gint64) y->n);
		canonjson_member_str(head, &f, "hash", y->last);
		g_string_append_c(head, '}');
	}
	g_string_append(head, "]}\n");
	sign_head(head->str, head->len);
}

/* Mode 3: HEAD.json, then "\n==== NAME\n" sections. */
static void
build_raw(const char *data, gsize size)
{
	static const char sep[] = "\n==== ";
	const char *end = data + size;
	const char *s = g_strstr_len(data, (gssize) size, sep);

	sign_head(data, s != NULL ? (gsize) (s - data) + 1 : size);
	for (guint files = 0; s != NULL && files < 64; files++) {
		const char *name = s + strlen(sep);
		const char *nl = memchr(name, '\n', (size_t) (end - name));
		const char *body, *next;
		g_autofree char *fn = NULL;

		if (nl == NULL)
			break;
		fn = g_strndup(name, (gsize) (nl - name));
		body = nl + 1;
		next = g_strstr_len(body, end - body, sep);
		if (*fn != '\0' && strchr(fn, '/') == NULL && strcmp(fn, ".") != 0 && strcmp(fn, "..") != 0 &&
		    strcmp(fn, FEED_HEAD) != 0 && strcmp(fn, FEED_HEAD_SIG) != 0)
			put(fn, body, (gsize) ((next != NULL ? next + 1 : end) - body));
		s = next;
	}
}

typedef struct {
	guint64 count;
	gint64 last_pos;
	gboolean bad;
} emitted;

static void
on_line(const char *line, gsize len, gpointer data)
{
	emitted *e = data;
	g_autofree char *h = feed_line_hash(line, len);
	g_autoptr(JsonParser) p = json_parser_new();
	gint64 pos = 0;

	e->count++;
	if (h == NULL || memcmp(h, line + len - HASH_TAIL + HASH_KEY_LEN, 64) != 0)
		e->bad = TRUE;
	if (json_parser_load_from_data(p, line, (gssize) len, NULL) &&
	    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		obj_int(json_node_get_object(json_parser_get_root(p)), "pos", &pos);
	if (pos < e->last_pos)
		e->bad = TRUE;
	e->last_pos = pos;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GBytes) key = g_bytes_new_static("key", 3);
	g_autoptr(GError) err = NULL;
	feed_verify_opts o = { 0 };
	feed_verify_result res = { 0 };
	emitted em = { 0, 0, FALSE };
	gint64 max_pos = 0;
	int mode;
	vulnid_status s;

	if (size < 1 || size > 512 * 1024)
		return 0;
	mode = data[0] & 3;
	o.since = (data[0] & 4) ? 0 : -1;
	o.max_line = (data[0] & 8) ? 4096 : 0;
	clear_dir();
	if (mode == 3)
		build_raw((const char *) data + 1, size - 1);
	else
		build_feed((const char *) data + 1, size - 1, mode, &max_pos);
	(void) feed_json_depth_ok((const char *) data, size, FEED_MAX_DEPTH);
	s = feed_verify(dir, key, &o, on_line, &em, &res, &err);
	if (s == VULNID_OK) {
		if (em.bad)
			fuzz_fail("a verified feed handed over a line that does not verify, or out of order");
		if (o.since >= 0 && em.count > res.lines)
			fuzz_fail("%" G_GUINT64_FORMAT " lines handed over, %" G_GUINT64_FORMAT " verified",
				  em.count, res.lines);
		if (res.robot == NULL || g_ascii_strcasecmp(res.robot, FPR) != 0)
			fuzz_fail("verified, but the robot is '%s'", res.robot != NULL ? res.robot : "(null)");
	} else if (err == NULL)
		fuzz_fail("verification failed without an error");
	feed_verify_result_clear(&res);
	return 0;
}

#else	/* no src/lib/feed.c in this tree */

#include <stdio.h>

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "fuzz-feed: this tree has no src/lib/feed.c; nothing to fuzz\n");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void) data;
	(void) size;
	return 0;
}

#endif
