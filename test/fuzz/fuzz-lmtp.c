/* fuzz-lmtp.c - an LMTP session (lmtp.c) fed hostile bytes, in pieces
 *
 * The first byte chooses how the input is cut into pieces (the session
 * must not depend on where reads end); the rest is what a client sends.
 * Properties: every reply line is CRLF-terminated, starts with a
 * three-digit code and is short; a mail reaches delivery only with at
 * least one recipient and not over the size limit, never more bytes
 * than were sent, all of them in the spool; one reply per accepted
 * recipient follows each delivery; nothing is read after the session
 * closed. */
#include "autoconfig.h"

#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "lmtp.h"

#define MAX_SIZE 4096

typedef struct {
	int fd;
	guint deliveries;
	gsize input;
} fuzz_state;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	return 0;
}

static const char *
check(void *data, const char *address)
{
	(void) data;
	if (strchr(address, '@') == NULL)
		fuzz_fail("an accepted recipient without @: %.100s", address);
	return g_str_has_prefix(address, "request") ? NULL : "550 5.1.1 no";
}

static int
spool(void *data)
{
	fuzz_state *f = data;

	lseek(f->fd, 0, SEEK_SET);
	return f->fd;
}

static void
deliver(void *data, const lmtp_envelope *env, int fd, GPtrArray *replies)
{
	fuzz_state *f = data;
	g_autofree char *buf = g_malloc(MAX_SIZE + 1);
	ssize_t n;

	if (env->recipients->len == 0)
		fuzz_fail("delivery without recipients");
	if (env->size > MAX_SIZE || (gsize) env->size > f->input)
		fuzz_fail("a mail of %" G_GINT64_FORMAT " bytes reached delivery", env->size);
	n = pread(fd, buf, (size_t) env->size, 0);
	if (n != env->size)
		fuzz_fail("the spool holds %zd bytes, not %" G_GINT64_FORMAT, n, env->size);
	f->deliveries++;
	for (guint i = 0; i < env->recipients->len; i++)
		g_ptr_array_add(replies, g_strdup("250 2.0.0 ok"));
}

static void
check_output(const GByteArray *out)
{
	const char *p = (const char *) out->data, *end = p + out->len;

	while (p < end) {
		const char *nl = g_strstr_len(p, end - p, "\r\n");

		if (nl == NULL)
			fuzz_fail("a reply without CRLF");
		if (nl - p < 4 || !g_ascii_isdigit(p[0]) || !g_ascii_isdigit(p[1]) || !g_ascii_isdigit(p[2]) ||
		    (p[3] != ' ' && p[3] != '-'))
			fuzz_fail("not a reply line: %.*s", (int) MIN(nl - p, 100), p);
		if (nl - p > 512)
			fuzz_fail("a reply line of %td bytes", nl - p);
		if (memchr(p, '\n', nl - p) != NULL || memchr(p, '\0', nl - p) != NULL)
			fuzz_fail("a reply line with a control character");
		p = nl + 2;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *path = NULL;
	fuzz_state f = { -1, 0, 0 };
	lmtp_server_config cfg = {
		.hostname = "robot.example.org", .max_size = MAX_SIZE, .max_recipients = 5,
		.max_mails = 20, .max_errors = 50, .xforward = TRUE, .data = &f,
		.check_recipient = check, .spool_open = spool, .deliver = deliver,
	};
	lmtp_session *s;
	gsize piece, off;

	if (size < 1)
		return 0;
	piece = 1 + data[0] % 64;
	data++;
	size--;
	f.input = size;
	f.fd = g_file_open_tmp("fuzz-lmtp.XXXXXX", &path, NULL);
	if (f.fd < 0)
		fuzz_fail("no temporary file");
	unlink(path);
	s = lmtp_session_new(&cfg);
	for (off = 0; off < size && !lmtp_session_closing(s); off += piece) {
		lmtp_session_input(s, (const char *) data + off, MIN(piece, size - off));
		check_output(lmtp_session_output(s));
		g_byte_array_set_size(lmtp_session_output(s), 0);
	}
	if (!lmtp_session_closing(s))
		lmtp_session_eof(s);
	if (f.deliveries > 20)
		fuzz_fail("%u deliveries in a session of at most 20 mails", f.deliveries);
	lmtp_session_free(s);
	close(f.fd);
	return 0;
}
