/* smtp.c - SMTP client on libESMTP */
#include "autoconfig.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
/* for smtp_starttls_set_ctx(), libesmtp.h wants OpenSSL first */
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
/* libesmtp.h needs size_t first, and auth-client.h before it. */
#include <auth-client.h>
#include <libesmtp.h>

#include "smtp.h"
#include "text.h"
#include "timelimit.h"
#include "transport.h"

/* libESMTP is loaded when mail is first sent over SMTP, not at start-up:
 * with the OpenSSL libraries it brings, it took as long in the dynamic
 * linker as everything else the filter links, for every mail, and most
 * filter runs never speak SMTP (Maildir transport, duplicates, mail that
 * gets no reply).  The functions are libESMTP's, through these pointers. */
#define ESMTP_FUNCTIONS(X) \
	X(auth_client_exit) \
	X(auth_client_init) \
	X(auth_create_context) \
	X(auth_destroy_context) \
	X(auth_set_interact_cb) \
	X(auth_set_mechanism_flags) \
	X(smtp_add_message) \
	X(smtp_add_recipient) \
	X(smtp_auth_set_context) \
	X(smtp_create_session) \
	X(smtp_destroy_session) \
	X(smtp_errno) \
	X(smtp_message_transfer_status) \
	X(smtp_recipient_status) \
	X(smtp_reverse_path_status) \
	X(smtp_set_eventcb) \
	X(smtp_set_hostname) \
	X(smtp_set_messagecb) \
	X(smtp_set_reverse_path) \
	X(smtp_set_server) \
	X(smtp_set_timeout) \
	X(smtp_start_session) \
	X(smtp_starttls_enable) \
	X(smtp_starttls_set_ctx) \
	X(smtp_strerror) \
	/* OpenSSL, which libESMTP brings: the STARTTLS context is ours */ \
	X(TLS_client_method) \
	X(SSL_CTX_new) \
	X(SSL_CTX_free) \
	X(SSL_CTX_ctrl) \
	X(SSL_CTX_set_verify) \
	X(SSL_CTX_load_verify_locations) \
	X(SSL_CTX_set_default_verify_paths) \
	X(SSL_CTX_get0_param) \
	X(SSL_get_verify_result) \
	X(X509_VERIFY_PARAM_set1_host) \
	X(X509_VERIFY_PARAM_set1_ip_asc) \
	X(X509_STORE_CTX_get_current_cert) \
	X(X509_STORE_CTX_get_error_depth) \
	X(X509_STORE_CTX_get_error) \
	X(X509_verify_cert_error_string) \
	X(X509_digest) \
	X(EVP_sha256)

static struct {
#define ESMTP_POINTER(f) __typeof__(f) *f;
	ESMTP_FUNCTIONS(ESMTP_POINTER)
#undef ESMTP_POINTER
} esmtp;
static void *esmtp_handle;

static gboolean
esmtp_load(char **why)
{
	void *h;

	if (esmtp_handle != NULL)
		return TRUE;
	h = dlopen(ESMTP_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();

		*why = g_strdup_printf("cannot load libESMTP: %s", e != NULL ? e : ESMTP_SONAME);
		return FALSE;
	}
#define ESMTP_SYMBOL(f) \
	if ((*(void **) &esmtp.f = dlsym(h, #f)) == NULL) { \
		*why = g_strdup_printf("cannot load libESMTP: %s has no %s", ESMTP_SONAME, #f); \
		dlclose(h); \
		return FALSE; \
	}
	ESMTP_FUNCTIONS(ESMTP_SYMBOL)
#undef ESMTP_SYMBOL
	esmtp_handle = h;
	return TRUE;
}

smtp_message *
smtp_message_new(const char *envelope_from, GBytes *data)
{
	smtp_message *m = g_new0(smtp_message, 1);

	m->envelope_from = g_strdup(envelope_from);
	m->data = g_bytes_ref(data);
	m->rcpts = g_ptr_array_new();
	return m;
}

void
smtp_message_add_rcpt(smtp_message *m, const char *address)
{
	smtp_rcpt *r = g_new0(smtp_rcpt, 1);

	r->address = g_strdup(address);
	r->result = SMTP_RESULT_TEMPORARY;
	r->reply = g_strdup("not attempted");
	g_ptr_array_add(m->rcpts, r);
}

void
smtp_message_free(smtp_message *m)
{
	if (m == NULL)
		return;
	for (guint i = 0; i < m->rcpts->len; i++) {
		smtp_rcpt *r = g_ptr_array_index(m->rcpts, i);

		g_free(r->address);
		g_free(r->reply);
		g_free(r);
	}
	g_ptr_array_unref(m->rcpts);
	g_bytes_unref(m->data);
	g_free(m->envelope_from);
	g_free(m);
}

static gboolean
is_auth_trouble(int code)
{
	return code == 530 || code == 535 || code == 534 || code == 538;
}

smtp_result
smtp_classify(int mail_code, int rcpt_code, int data_code)
{
	if (mail_code >= 500 && !is_auth_trouble(mail_code))
		return SMTP_RESULT_PERMANENT;
	if (mail_code < 200 || mail_code >= 300)
		return SMTP_RESULT_TEMPORARY;
	if (rcpt_code >= 200 && rcpt_code < 300) {
		if (data_code >= 200 && data_code < 300)
			return SMTP_RESULT_DELIVERED;
		if (data_code >= 500 && !is_auth_trouble(data_code))
			return SMTP_RESULT_PERMANENT;
		return SMTP_RESULT_TEMPORARY;
	}
	if (rcpt_code >= 500 && !is_auth_trouble(rcpt_code))
		return SMTP_RESULT_PERMANENT;
	return SMTP_RESULT_TEMPORARY;
}

typedef struct {
	GBytes *data;
	gboolean sent;
} message_source;

/* libESMTP frees *ctx itself, so all state lives in arg. */
static const char *
message_cb(void **ctx, int *len, void *arg)
{
	message_source *src = arg;
	gsize n;
	const char *p;

	(void) ctx;
	if (len == NULL) {
		src->sent = FALSE;	/* rewind */
		return NULL;
	}
	if (src->sent) {
		*len = 0;
		return NULL;
	}
	src->sent = TRUE;
	p = g_bytes_get_data(src->data, &n);
	*len = (int) n;
	return p;
}

/* ---- the session deadline ------------------------------------------------
 *
 * libESMTP has no overall deadline: each step has its own timeout, and its
 * poll() starts that timeout over after EINTR, so a signal alone does not
 * end a wait for a server that went silent.  A POSIX timer (its own signal,
 * so that the caller's alarm() keeps running untouched) therefore shuts the
 * session's socket down when the deadline passes: every poll() and read()
 * of libESMTP then returns at once, writes fail with EPIPE (SIGPIPE is
 * ignored during the session), and smtp_start_session() returns; whatever
 * the server has not confirmed by then is a temporary failure (a message
 * it took without confirming is sent again later: at least once).  The
 * socket is told apart by the SMTP_EV_CONNECT event.  Until it is connected
 * the signal itself interrupts connect(), and it repeats every
 * SESSION_REPEAT_MS so that a further address tried is interrupted too.
 * Only name resolution (getaddrinfo() retries after EINTR) can outlast the
 * deadline, bounded by the resolver's own timeouts and the filter's
 * time_limit.  One session at a time per process (static state). */

#define SESSION_REPEAT_MS 100
#define SESSION_SIGNAL (SIGRTMIN)
/* How much of what is left of the caller's alarm (the filter's time
 * limit) is kept back for recording the outcome and flushing the audit
 * log: half of it, at most this many ms. */
#define SESSION_RESERVE_MS 1000

static volatile sig_atomic_t session_fd = -1;
static volatile sig_atomic_t session_expired;

static void
session_deadline(int sig)
{
	int saved = errno;

	(void) sig;
	session_expired = 1;
	if (session_fd >= 0)
		shutdown(session_fd, SHUT_RDWR);
	errno = saved;
}

/* A connected TCP socket whose peer has this port. */
static gboolean
is_session_socket(int fd, int port)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	int type;
	socklen_t tlen = sizeof type;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 || type != SOCK_STREAM)
		return FALSE;
	if (getpeername(fd, (struct sockaddr *) &sa, &len) < 0)
		return FALSE;
	if (sa.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *) &sa)->sin_port) == port;
	if (sa.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *) &sa)->sin6_port) == port;
	return FALSE;
}

/* The open descriptors that are connected TCP sockets to port: from
 * /proc/self/fd, else the first 1024. */
static GArray *
session_sockets(int port)
{
	GArray *fds = g_array_new(FALSE, FALSE, sizeof(int));
	DIR *d = opendir("/proc/self/fd");

	if (d != NULL) {
		struct dirent *e;

		while ((e = readdir(d)) != NULL) {
			char *end;
			long fd = strtol(e->d_name, &end, 10);

			if (*e->d_name != '\0' && *end == '\0' && fd != dirfd(d) && fd >= 0 &&
			    fd <= G_MAXINT && is_session_socket((int) fd, port)) {
				int v = (int) fd;

				g_array_append_val(fds, v);
			}
		}
		closedir(d);
	} else {
		for (int fd = 0; fd < 1024; fd++)
			if (is_session_socket(fd, port))
				g_array_append_val(fds, fd);
	}
	return fds;
}

static gboolean
array_has(const GArray *a, int v)
{
	for (guint i = 0; i < a->len; i++)
		if (g_array_index(a, int, i) == v)
			return TRUE;
	return FALSE;
}

typedef struct {
	const smtp_settings *cfg;
	char *problem;		/* why the session stopped, if we know */
	GArray *old_sockets;	/* connected to the port before the session */
} session_state;

/* ---- STARTTLS ----------------------------------------------------------------
 *
 * The TLS context is ours, not libESMTP's: libESMTP's own takes its CAs
 * from files under $HOME (unusable when HOME is another user's), checks
 * the host name only against DNS names (127.0.0.1 never matched), and is
 * cached across sessions after it was freed.  Ours verifies with
 * OpenSSL, the host name or IP address included, against the system's CAs
 * or [delivery] tls_ca_file; or accepts only pinned certificates; or any
 * (tls_verify = no, and a relay on this machine by default).  Its verify
 * callback decides, and a refused certificate ends the handshake, and so
 * the session, before anything is sent.  libESMTP's checks after the
 * handshake then only repeat what the callback decided (see event_cb). */

static session_state *tls_session;	/* one session at a time */

static gboolean
fingerprint_pinned(X509 *cert, char **seen)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	GString *hex = g_string_new(NULL);
	gboolean ok = FALSE;

	if (cert == NULL || !esmtp.X509_digest(cert, esmtp.EVP_sha256(), md, &len)) {
		g_string_free(hex, TRUE);
		*seen = NULL;
		return FALSE;
	}
	for (unsigned int i = 0; i < len; i++)
		g_string_append_printf(hex, "%02x", md[i]);
	for (char **f = tls_session->cfg->fingerprints; f != NULL && *f != NULL; f++)
		ok = ok || strcmp(*f, hex->str) == 0;
	*seen = g_string_free(hex, FALSE);
	return ok;
}

static int
verify_cb(int preverify_ok, X509_STORE_CTX *x)
{
	session_state *ss = tls_session;
	int depth = esmtp.X509_STORE_CTX_get_error_depth(x);
	g_autofree char *seen = NULL;

	if (ss == NULL)
		return 0;
	switch (ss->cfg->tls) {
	case SMTP_TLS_ENCRYPT:
		return 1;
	case SMTP_TLS_PIN:
		if (depth > 0)
			return 1;	/* only the server's own certificate counts */
		if (fingerprint_pinned(esmtp.X509_STORE_CTX_get_current_cert(x), &seen))
			return 1;
		if (ss->problem == NULL)
			ss->problem = g_strdup_printf("the relay's TLS certificate (SHA-256 %s) is not one of"
						      " [delivery] tls_fingerprint", seen != NULL ? seen : "?");
		return 0;
	case SMTP_TLS_VERIFY:
	default:
		if (!preverify_ok && ss->problem == NULL) {
			int e = esmtp.X509_STORE_CTX_get_error(x);

			ss->problem = g_strdup_printf(
				"the relay's TLS certificate does not verify: %s (depth %d); %s",
				esmtp.X509_verify_cert_error_string(e), depth,
				transport_host_is_loopback(ss->cfg->host)
				? "for a relay on this machine set [delivery] tls_verify = remote,"
				  " or trust it with tls_ca_file or tls_fingerprint"
				: "trust its CA with [delivery] tls_ca_file, or pin it with tls_fingerprint");
		}
		return preverify_ok;
	}
}

/* The session's TLS context, or NULL with ss->problem set. */
static SSL_CTX *
tls_context(session_state *ss)
{
	const smtp_settings *cfg = ss->cfg;
	SSL_CTX *ctx = esmtp.SSL_CTX_new(esmtp.TLS_client_method());

	if (ctx == NULL) {
		ss->problem = g_strdup("cannot set up TLS (out of memory?)");
		return NULL;
	}
	/* TLS 1.2, and only 1.2: libESMTP 1.1 cannot do 1.3.  A 1.3 server
	 * sends its session tickets after the handshake; when they arrive
	 * before libESMTP has sent its second EHLO, its poll() reports the
	 * socket readable and writable at once, it reads first, finds only
	 * the tickets, and waits for the answer to an EHLO it never flushed
	 * until the session times out (siobuf.c, protocol.c).  1.2 has no
	 * messages after the handshake. */
	esmtp.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
	esmtp.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_2_VERSION, NULL);
	if (cfg->tls == SMTP_TLS_VERIFY) {
		X509_VERIFY_PARAM *param = esmtp.SSL_CTX_get0_param(ctx);
		g_autofree char *host = g_strdup(cfg->host);
		struct in6_addr a;
		int ok;

		if (cfg->ca_file != NULL && *cfg->ca_file != '\0')
			ok = esmtp.SSL_CTX_load_verify_locations(ctx, cfg->ca_file, NULL);
		else
			ok = esmtp.SSL_CTX_set_default_verify_paths(ctx);
		if (!ok) {
			ss->problem = g_strdup_printf("cannot read the trusted CAs%s%s", cfg->ca_file != NULL ? " in " : "",
						      cfg->ca_file != NULL ? cfg->ca_file : "");
			esmtp.SSL_CTX_free(ctx);
			return NULL;
		}
		g_strdelimit(host, "[]", ' ');
		g_strstrip(host);
		if (inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1)
			ok = esmtp.X509_VERIFY_PARAM_set1_ip_asc(param, host);
		else
			ok = esmtp.X509_VERIFY_PARAM_set1_host(param, host, 0);
		if (!ok) {
			ss->problem = g_strdup_printf("cannot verify TLS certificates for '%s'", host);
			esmtp.SSL_CTX_free(ctx);
			return NULL;
		}
	}
	esmtp.SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_cb);
	return ctx;
}

static void
event_cb(smtp_session_t session, int event, void *arg, ...)
{
	session_state *ss = arg;
	va_list ap;

	(void) session;
	va_start(ap, arg);
	switch (event) {
	case SMTP_EV_CONNECT: {
		/* libESMTP does not say which descriptor it connected: the
		 * new socket to the server's port is it. */
		g_autoptr(GArray) now = session_sockets(ss->cfg->port);

		for (guint i = 0; i < now->len; i++)
			if (!array_has(ss->old_sockets, g_array_index(now, int, i)))
				session_fd = g_array_index(now, int, i);
		if (session_fd >= 0) {
			/* libESMTP writes a command or the end of a message as
			 * a small segment after another one not yet acknowledged:
			 * with Nagle's algorithm each waited for the server's
			 * delayed ACK, 40 ms per message on Linux. */
			int on = 1;

			setsockopt(session_fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
		}
		if (session_expired && session_fd >= 0)
			shutdown(session_fd, SHUT_RDWR);
		break;
	}
	case SMTP_EV_DISCONNECT:
		session_fd = -1;	/* closed already */
		break;
	case SMTP_EV_EXTNA_STARTTLS:
		if (ss->problem == NULL)
			ss->problem = g_strdup("the server does not offer STARTTLS, which is required");
		break;
	/* After the handshake libESMTP checks the certificate again, and
	 * refuses it unless told otherwise: it then sends QUIT instead of the
	 * second EHLO.  Our verify callback has decided already (a certificate
	 * it refused ended the handshake), so these only say yes; but their
	 * arguments differ per event (libESMTP 1.1, smtp-tls.c), and reading
	 * them all as (long, int *) left "ok" unset for a wrong name, which
	 * every relay reached by address (127.0.0.1) has. */
	case SMTP_EV_INVALID_PEER_CERTIFICATE: {
		long vfy = va_arg(ap, long);	/* (long result, int *ok, SSL *) */
		int *ok = va_arg(ap, int *);

		*ok = ss->cfg->tls != SMTP_TLS_VERIFY || vfy == X509_V_OK;
		if (!*ok && ss->problem == NULL)
			ss->problem = g_strdup_printf("the relay's TLS certificate does not verify (%ld)", vfy);
		break;
	}
	case SMTP_EV_WRONG_PEER_CERTIFICATE: {
		int *ok = va_arg(ap, int *);	/* (int *ok, char *name, SSL *) */

		/* OpenSSL matched the host (name or address) already */
		*ok = 1;
		break;
	}
	case SMTP_EV_NO_PEER_CERTIFICATE: {
		int *ok = va_arg(ap, int *);	/* (int *ok) */

		*ok = ss->cfg->tls == SMTP_TLS_ENCRYPT;
		if (!*ok && ss->problem == NULL)
			ss->problem = g_strdup("the relay sent no TLS certificate");
		break;
	}
	case SMTP_EV_UNUSABLE_CA_LIST:
		if (ss->problem == NULL)
			ss->problem = g_strdup("the TLS CA list is unusable");
		break;
	default:
		break;
	}
	va_end(ap);
}

static int
auth_interact(auth_client_request_t request, char **result, int fields, void *arg)
{
	const smtp_settings *cfg = arg;

	for (int i = 0; i < fields; i++) {
		if (request[i].flags & AUTH_USER)
			result[i] = cfg->user;
		else if (request[i].flags & AUTH_PASS)
			result[i] = cfg->password;
		else
			return 0;
	}
	return 1;
}


static char *
status_text(const smtp_status_t *st)
{
	g_autofree char *text = NULL;

	if (st == NULL || st->code == 0)
		return NULL;
	text = g_strstrip(g_strdup(st->text != NULL ? st->text : ""));
	return g_strdup_printf("%d %s", st->code, text);
}

/* Every recipient temporary, for why. */
static void
smtp_fail_all(GPtrArray *messages, const char *why)
{
	for (guint i = 0; i < messages->len; i++) {
		smtp_message *m = g_ptr_array_index(messages, i);

		for (guint j = 0; j < m->rcpts->len; j++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

			r->result = SMTP_RESULT_TEMPORARY;
			g_free(r->reply);
			r->reply = text_clean_line(why, 500);
		}
	}
}

/* Server, EHLO name, timeouts, STARTTLS with our context, AUTH.  FALSE
 * (ss->problem set) when the TLS context cannot be made: the session
 * never falls back to plain text, nor to libESMTP's checks. */
static gboolean
session_setup(smtp_session_t s, const smtp_settings *cfg, session_state *ss, const char *server,
	      SSL_CTX **tls_ctx, auth_context_t *auth)
{
	esmtp.smtp_set_server(s, server);
	esmtp.smtp_set_hostname(s, cfg->helo);
	esmtp.smtp_set_eventcb(s, event_cb, ss);
	for (int t = Timeout_GREETING; t <= Timeout_DATA2; t++)
		esmtp.smtp_set_timeout(s, t | Timeout_OVERRIDE_RFC2822_MINIMUM, (long) cfg->timeout * 1000);
	if (cfg->starttls != SMTP_STARTTLS_NO) {
		*tls_ctx = tls_context(ss);
		if (*tls_ctx == NULL)
			return FALSE;
		esmtp.smtp_starttls_set_ctx(s, *tls_ctx);
		esmtp.smtp_starttls_enable(s, cfg->starttls == SMTP_STARTTLS_REQUIRED ? Starttls_REQUIRED
										  : Starttls_ENABLED);
		/* libESMTP still looks for a client certificate, under
		 * $XDG_CONFIG_DIR/libesmtp/private/HOST.pem, else under $HOME:
		 * never another user's HOME (unreadable, it ends the session). */
		if (cfg->client_dir != NULL)
			g_setenv("XDG_CONFIG_DIR", cfg->client_dir, TRUE);
	}
	if (cfg->user != NULL) {
		esmtp.auth_client_init();
		*auth = esmtp.auth_create_context();
		esmtp.auth_set_mechanism_flags(*auth, AUTH_PLUGIN_PLAIN, 0);
		esmtp.auth_set_interact_cb(*auth, auth_interact, (void *) cfg);
		esmtp.smtp_auth_set_context(s, *auth);
	}
	return TRUE;
}

/* Every message and recipient into the session: a handle per message
 * (handles) and per recipient (rhandles, flat, in order). */
static message_source *
session_add_messages(smtp_session_t s, GPtrArray *messages, GPtrArray *handles, GPtrArray *rhandles)
{
	message_source *srcs = g_new0(message_source, messages->len);

	for (guint i = 0; i < messages->len; i++) {
		smtp_message *m = g_ptr_array_index(messages, i);
		smtp_message_t h = esmtp.smtp_add_message(s);

		esmtp.smtp_set_reverse_path(h, m->envelope_from);
		srcs[i].data = m->data;
		esmtp.smtp_set_messagecb(h, message_cb, &srcs[i]);
		for (guint j = 0; j < m->rcpts->len; j++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

			g_ptr_array_add(rhandles, esmtp.smtp_add_recipient(h, r->address));
		}
		g_ptr_array_add(handles, h);
	}
	return srcs;
}

/* The session ends by the deadline (see session_deadline above), and
 * early enough to leave time for recording its outcome when the caller's
 * alarm (the filter's time limit) comes first; that alarm keeps running
 * and still ends the process if it fires.  0: no limit. */
static guint64
session_budget_ms(guint deadline)
{
	guint64 budget_ms = (guint64) deadline * 1000;
	guint64 outer_ms = time_limit_left_ms();

	if (outer_ms > 0) {
		guint64 cap = outer_ms - MIN(outer_ms / 2, SESSION_RESERVE_MS);

		if (budget_ms == 0 || cap < budget_ms)
			budget_ms = cap;
	}
	return budget_ms;
}

/* The signals a session changes, and its deadline timer. */
typedef struct {
	struct sigaction old_sa, old_pipe_sa;
	gboolean have_timer;
	timer_t timer;
} session_signals;

/* SIGPIPE ignored (a server that hangs up is a reply, not the end of the
 * process); SESSION_SIGNAL after budget_ms, then every SESSION_REPEAT_MS. */
static void
session_signals_start(session_signals *sg, guint64 budget_ms)
{
	struct sigaction pipe_sa;

	session_fd = -1;
	session_expired = 0;
	memset(&pipe_sa, 0, sizeof pipe_sa);
	pipe_sa.sa_handler = SIG_IGN;
	sigemptyset(&pipe_sa.sa_mask);
	sigaction(SIGPIPE, &pipe_sa, &sg->old_pipe_sa);
	sg->have_timer = FALSE;
	if (budget_ms > 0) {
		struct sigaction sa;
		struct sigevent sev;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = session_deadline;	/* no SA_RESTART: connect() returns EINTR */
		sigemptyset(&sa.sa_mask);
		sigaction(SESSION_SIGNAL, &sa, &sg->old_sa);
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SESSION_SIGNAL;
		if (timer_create(CLOCK_MONOTONIC, &sev, &sg->timer) == 0) {
			struct itimerspec its = {
				.it_value = { (time_t) (budget_ms / 1000), (long) (budget_ms % 1000) * 1000000 },
				.it_interval = { 0, SESSION_REPEAT_MS * 1000000L },
			};

			sg->have_timer = timer_settime(sg->timer, 0, &its, NULL) == 0;
			if (!sg->have_timer)
				timer_delete(sg->timer);
		}
		if (!sg->have_timer)
			sigaction(SESSION_SIGNAL, &sg->old_sa, NULL);
	}
}

/* Back as before the session; TRUE if its deadline passed. */
static gboolean
session_signals_stop(session_signals *sg)
{
	gboolean expired;

	if (sg->have_timer) {
		struct sigaction ign;

		timer_delete(sg->timer);
		/* Ignoring the signal drops one that is still pending. */
		memset(&ign, 0, sizeof ign);
		ign.sa_handler = SIG_IGN;
		sigemptyset(&ign.sa_mask);
		sigaction(SESSION_SIGNAL, &ign, NULL);
		sigaction(SESSION_SIGNAL, &sg->old_sa, NULL);
	}
	sigaction(SIGPIPE, &sg->old_pipe_sa, NULL);
	expired = session_expired != 0;
	session_fd = -1;
	session_expired = 0;
	return expired;
}

/* How a session ended, for the recipients without a reply of their own. */
typedef struct {
	const session_state *ss;
	const char *server;
	const char *expired_text;	/* the deadline ran out, or NULL */
	int ok, serr;			/* smtp_start_session(), smtp_errno() */
} session_end;

/* The reply recorded for a recipient: the first that was not a success
 * (MAIL, RCPT, end of DATA), else why the session had none. */
static char *
rcpt_reply(const session_end *e, smtp_result result, const smtp_status_t *ms, const smtp_status_t *rs,
	   const smtp_status_t *ds)
{
	char ebuf[256];
	char *reply;

	if (ms != NULL && (ms->code < 200 || ms->code >= 300))
		reply = status_text(ms);
	else if (rs != NULL && (rs->code < 200 || rs->code >= 300))
		reply = status_text(rs);
	else
		reply = status_text(ds);
	if (reply != NULL && !(result == SMTP_RESULT_TEMPORARY && e->ss->problem != NULL))
		return reply;
	g_free(reply);
	if (e->ss->problem != NULL)
		return g_strdup(e->ss->problem);
	if (e->expired_text != NULL)
		return g_strdup(e->expired_text);
	if (!e->ok || e->serr != 0)
		return g_strdup_printf("%s: %s", e->server, e->serr < 0 ? g_strerror(-e->serr)
				       : esmtp.smtp_strerror(e->serr, ebuf, sizeof ebuf));
	return g_strdup("no reply from the server");
}

/* Every recipient's result and reply from the session's statuses. */
static void
session_results(const session_end *e, GPtrArray *messages, GPtrArray *handles, GPtrArray *rhandles)
{
	guint k = 0;

	for (guint i = 0; i < messages->len; i++) {
		smtp_message *m = g_ptr_array_index(messages, i);
		smtp_message_t h = g_ptr_array_index(handles, i);
		const smtp_status_t *ms = esmtp.smtp_reverse_path_status(h);
		const smtp_status_t *ds = esmtp.smtp_message_transfer_status(h);

		m->offered = ms != NULL && ms->code != 0;

		for (guint j = 0; j < m->rcpts->len; j++, k++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);
			const smtp_status_t *rs = esmtp.smtp_recipient_status(g_ptr_array_index(rhandles, k));
			g_autofree char *reply = NULL;

			r->result = smtp_classify(ms != NULL ? ms->code : 0, rs != NULL ? rs->code : 0,
						  ds != NULL ? ds->code : 0);
			reply = rcpt_reply(e, r->result, ms, rs, ds);
			g_free(r->reply);
			r->reply = text_clean_line(reply, 500);
		}
	}
}

vulnid_status
smtp_send(const smtp_settings *cfg, GPtrArray *messages, guint deadline, GError **err)
{
	SSL_CTX *tls_ctx = NULL;
	smtp_session_t s;
	auth_context_t auth = NULL;
	session_state ss = { cfg, NULL };
	session_signals sg;
	g_autofree message_source *srcs = NULL;
	g_autofree char *server = NULL;
	g_autoptr(GPtrArray) handles = g_ptr_array_new();	/* smtp_message_t per message */
	g_autoptr(GPtrArray) rhandles = g_ptr_array_new();	/* smtp_recipient_t, flat */
	g_autofree char *expired_text = NULL;
	g_autofree char *why = NULL;
	guint64 budget_ms;
	session_end end;

	if (messages->len == 0)
		return VULNID_OK;
	if (!esmtp_load(&why)) {
		/* as if the server could not be reached: the mail waits */
		smtp_fail_all(messages, why);
		return VULNID_OK;
	}
	s = esmtp.smtp_create_session();
	if (s == NULL)
		return vulnid_fail(err, VULNID_ERR_NOMEM, "cannot create an SMTP session");
	server = g_strdup_printf(strchr(cfg->host, ':') != NULL ? "[%s]:%d" : "%s:%d", cfg->host, cfg->port);
	if (!session_setup(s, cfg, &ss, server, &tls_ctx, &auth)) {
		esmtp.smtp_destroy_session(s);
		smtp_fail_all(messages, ss.problem);
		g_free(ss.problem);
		return VULNID_OK;
	}
	srcs = session_add_messages(s, messages, handles, rhandles);
	budget_ms = session_budget_ms(deadline);
	ss.old_sockets = session_sockets(cfg->port);
	session_signals_start(&sg, budget_ms);
	tls_session = &ss;
	end.ok = esmtp.smtp_start_session(s);
	end.serr = esmtp.smtp_errno();
	tls_session = NULL;
	if (session_signals_stop(&sg) && ss.problem == NULL)
		expired_text = g_strdup_printf("%s: no answer in time (the delivery deadline of %" G_GUINT64_FORMAT
					       ".%" G_GUINT64_FORMAT " s ran out)", server,
					       budget_ms / 1000, budget_ms % 1000 / 100);
	g_array_unref(ss.old_sockets);
	ss.old_sockets = NULL;
	end.ss = &ss;
	end.server = server;
	end.expired_text = expired_text;
	session_results(&end, messages, handles, rhandles);
	esmtp.smtp_destroy_session(s);
	if (tls_ctx != NULL)
		esmtp.SSL_CTX_free(tls_ctx);	/* the session held a reference of its own */
	if (auth != NULL) {
		esmtp.auth_destroy_context(auth);
		esmtp.auth_client_exit();
	}
	g_free(ss.problem);
	return VULNID_OK;
}
