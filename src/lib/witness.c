/* witness.c - cosigning checkpoints after a consistency check (witness.h) */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "feedlog.h"
#include "witness.h"

void
witness_free(witness *w)
{
	if (w == NULL)
		return;
	g_free(w->dir);
	note_key_free(w->key);
	g_free(w);
}

vulnid_status
witness_open(const char *dir, const char *name, witness **out, gboolean *created, GError **err)
{
	g_autoptr(witness) w = g_new0(witness, 1);
	g_autofree char *logs = g_build_filename(dir, "logs", NULL);
	g_autofree char *key = g_build_filename(dir, WITNESS_KEY_FILE, NULL);
	vulnid_status s;

	if (g_mkdir_with_parents(logs, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s", logs,
				   g_strerror(errno));
	w->dir = g_strdup(dir);
	s = note_key_load_or_create(key, name, NOTE_COSIGNATURE, &w->key, created, err);
	if (s == VULNID_OK)
		*out = g_steal_pointer(&w);
	return s;
}

char *
witness_log_path(const witness *w, const char *origin)
{
	guint8 h[32];
	GString *s = g_string_new(NULL);
	g_autofree char *hex = NULL;

	tlog_sha256(origin, strlen(origin), h);
	for (int i = 0; i < 32; i++)
		g_string_append_printf(s, "%02x", h[i]);
	hex = g_string_free(s, FALSE);
	return g_build_filename(w->dir, "logs", hex, NULL);
}

/* The last complete line of the state file: "SIZE ROOT TIME". */
static vulnid_status
state_last(int fd, const char *path, guint64 *size, tlog_hash *root, GError **err)
{
	char buf[WITNESS_MAX_STATE_LINE + 1];
	struct stat sb;
	off_t from;
	ssize_t n;
	char *line, *end;
	g_auto(GStrv) f = NULL;

	*size = 0;
	tlog_empty_hash(root);
	if (fstat(fd, &sb) < 0)
		return vulnid_fail(err, VULNID_ERR_IO, "cannot stat '%s'", path);
	if (sb.st_size == 0)
		return VULNID_OK;
	from = sb.st_size > WITNESS_MAX_STATE_LINE ? sb.st_size - WITNESS_MAX_STATE_LINE : 0;
	n = pread(fd, buf, (size_t) (sb.st_size - from), from);
	if (n != sb.st_size - from || buf[n - 1] != '\n')
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is damaged", path);
	buf[n - 1] = '\0';
	line = strrchr(buf, '\n');
	line = line != NULL ? line + 1 : buf;
	if (line == buf && from > 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is too long", path);
	f = g_strsplit(line, " ", 0);
	if (g_strv_length(f) != 3 || !tlog_hash_from_b64(f[1], strlen(f[1]), root))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is not SIZE ROOT TIME", path);
	*size = g_ascii_strtoull(f[0], &end, 10);
	if (*end != '\0' || *f[0] == '\0')
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "'%s': the last line is not SIZE ROOT TIME", path);
	return VULNID_OK;
}

static int
state_open(const witness *w, const char *origin, char **path, GError **err)
{
	g_autofree char *base = witness_log_path(w, origin);
	int fd;

	*path = g_strconcat(base, ".log", NULL);
	fd = open(*path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		vulnid_fail(err, vulnid_status_from_errno(errno), "cannot open '%s': %s", *path, g_strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			vulnid_fail(err, VULNID_ERR_IO, "cannot lock '%s': %s", *path, g_strerror(errno));
			close(fd);
			return -1;
		}
	return fd;
}

vulnid_status
witness_last(const witness *w, const char *origin, guint64 *size, GError **err)
{
	g_autofree char *path = NULL;
	tlog_hash root;
	vulnid_status s;
	int fd = state_open(w, origin, &path, err);

	if (fd < 0)
		return VULNID_ERR_IO;
	s = state_last(fd, path, size, &root, err);
	close(fd);
	return s;
}

/* The checks of tlog-witness add-checkpoint, with the state locked. */
static vulnid_status
check_request(int fd, const char *path, guint64 old, const GArray *proof, const checkpoint *c,
	      guint64 *current, witness_answer *answer, GError **err)
{
	tlog_hash last_root, empty;
	guint64 last;
	vulnid_status s;

	*answer = WITNESS_BAD_REQUEST;
	if (old > c->size)
		return vulnid_fail(err, VULNID_ERR_INVALID, "the old size %" G_GUINT64_FORMAT " is greater than the"
				   " checkpoint's %" G_GUINT64_FORMAT, old, c->size);
	*answer = WITNESS_ERROR;
	s = state_last(fd, path, &last, &last_root, err);
	if (s != VULNID_OK)
		return s;
	*current = last;
	*answer = WITNESS_CONFLICT;
	if (old != last)
		return vulnid_fail(err, VULNID_ERR_EXISTS, "the last checkpoint cosigned for this log has %"
				   G_GUINT64_FORMAT " entries, not %" G_GUINT64_FORMAT, last, old);
	*answer = WITNESS_UNPROCESSABLE;
	tlog_empty_hash(&empty);
	if (c->size == 0 && memcmp(c->root.b, empty.b, TLOG_HASH_LEN) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "an empty tree with another root hash");
	if (!tlog_check_consistency(old, c->size, &last_root, &c->root, (const tlog_hash *) proof->data,
				    proof->len, NULL))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint of %" G_GUINT64_FORMAT " entries is not"
				   " consistent with the one of %" G_GUINT64_FORMAT " cosigned before: not cosigned",
				   c->size, old);
	return VULNID_OK;
}

static vulnid_status
state_append(int fd, const char *path, const checkpoint *c, guint64 now, GError **err)
{
	g_autofree char *root = tlog_hash_b64(&c->root);
	g_autofree char *line = g_strdup_printf("%" G_GUINT64_FORMAT " %s %" G_GUINT64_FORMAT "\n", c->size, root,
						now);
	gsize len = strlen(line);

	/* One write of a short line to an O_APPEND file: whole or not at
	 * all for the next reader, which also takes only whole lines. */
	if (write(fd, line, len) != (ssize_t) len || fdatasync(fd) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write '%s': %s", path,
				   g_strerror(errno));
	return VULNID_OK;
}

/* The cosignature already given to this very checkpoint, if any: asking
 * again for the same tree changes nothing (no new state line, no new
 * timestamp, so a mirror has nothing new to commit). */
static char *
cosigned_before(const witness *w, const note *n, const char *origin)
{
	g_autofree char *base = witness_log_path(w, origin);
	g_autofree char *path = g_strconcat(base, ".checkpoint", NULL);
	g_autofree char *data = NULL;
	g_autoptr(note) old = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &data, &len, NULL) || note_parse(data, len, &old, NULL) != VULNID_OK ||
	    strcmp(old->text, n->text) != 0 || note_verify_key(old, w->key, NULL) != NOTE_SIG_GOOD)
		return NULL;
	for (guint i = 0; i < old->sigs->len; i++) {
		const note_sig *sg = g_ptr_array_index(old->sigs, i);

		if (sg->id == w->key->id && strcmp(sg->name, w->key->name) == 0)
			return g_strdup(sg->line);
	}
	return NULL;
}

/* The key of the log a checkpoint is of: named as its origin, signing it. */
static vulnid_status
log_key_for(GPtrArray *keys, const note *n, const checkpoint *c, const note_key **out, witness_answer *answer,
	    GError **err)
{
	gboolean known = FALSE;

	for (guint i = 0; i < keys->len; i++) {
		const note_key *k = g_ptr_array_index(keys, i);

		if (strcmp(k->name, c->origin) != 0)
			continue;
		known = TRUE;
		if (note_verify_key(n, k, NULL) == NOTE_SIG_GOOD) {
			*out = k;
			return VULNID_OK;
		}
	}
	if (!known) {
		*answer = WITNESS_UNKNOWN_LOG;
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "unknown log '%s'", c->origin);
	}
	*answer = WITNESS_FORBIDDEN;
	return vulnid_fail(err, VULNID_ERR_CORRUPT, "the checkpoint is not signed by the log key %s", c->origin);
}

vulnid_status
witness_add_checkpoint(const witness *w, GPtrArray *log_keys, const char *body, gsize len, guint64 now,
		       char **cosig, guint64 *current, witness_answer *answer, GError **err)
{
	g_autoptr(GArray) proof = NULL;
	g_autoptr(note) n = NULL;
	g_autofree char *path = NULL;
	g_autofree char *line = NULL;
	const note_key *log_key = NULL;
	checkpoint c = { 0 };
	guint64 old = 0;
	vulnid_status s;
	int fd = -1;

	*current = 0;
	*answer = WITNESS_BAD_REQUEST;
	s = feedlog_parse_add_checkpoint(body, len, &old, &proof, &n, &c, err);
	if (s != VULNID_OK) {
		s = VULNID_ERR_INVALID;
		goto out;
	}
	s = log_key_for(log_keys, n, &c, &log_key, answer, err);
	if (s != VULNID_OK)
		goto out;
	fd = state_open(w, c.origin, &path, err);
	if (fd < 0) {
		*answer = WITNESS_ERROR;
		s = VULNID_ERR_IO;
		goto out;
	}
	s = check_request(fd, path, old, proof, &c, current, answer, err);
	if (s != VULNID_OK)
		goto out;
	*answer = WITNESS_COSIGNED;
	if (old == c.size && (*cosig = cosigned_before(w, n, c.origin)) != NULL)
		goto out;
	line = note_cosign(w->key, n->text, now);
	*answer = WITNESS_ERROR;
	if (line == NULL) {
		s = vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot cosign");
		goto out;
	}
	/* Persist before answering. */
	s = state_append(fd, path, &c, now, err);
	if (s == VULNID_OK) {
		g_autofree char *base = witness_log_path(w, c.origin);
		g_autofree char *cp = g_strconcat(base, ".checkpoint", NULL);
		g_autofree char *text = g_strconcat(n->text, "\n", NULL);
		GString *all = g_string_new(text);

		for (guint i = 0; i < n->sigs->len; i++) {
			const note_sig *sg = g_ptr_array_index(n->sigs, i);

			if (sg->id == log_key->id && strcmp(sg->name, log_key->name) == 0)
				g_string_append(all, sg->line);
		}
		g_string_append(all, line);
		s = export_write_file(cp, all->str, all->len, 0644, err);
		g_string_free(all, TRUE);
		*current = c.size;
		*cosig = g_steal_pointer(&line);
	}
	if (s == VULNID_OK)
		*answer = WITNESS_COSIGNED;
out:
	if (fd >= 0)
		close(fd);
	checkpoint_clear(&c);
	return s;
}

vulnid_status
witness_cosigned(const witness *w, const char *origin_hex, GBytes **out, GError **err)
{
	g_autofree char *name = g_strconcat(origin_hex, ".checkpoint", NULL);
	g_autofree char *path = g_build_filename(w->dir, "logs", name, NULL);
	g_autofree char *data = NULL;
	gsize len = 0;

	*out = NULL;
	if (strlen(origin_hex) != 64 || strspn(origin_hex, "0123456789abcdef") != 64 ||
	    !g_file_get_contents(path, &data, &len, NULL) || len > NOTE_MAX_SIZE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no checkpoint cosigned for that log");
	*out = g_bytes_new_take(g_steal_pointer(&data), len);
	return VULNID_OK;
}
