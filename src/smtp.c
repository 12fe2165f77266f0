/* smtp.c - SMTP client on libESMTP */
#include "autoconfig.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* libesmtp.h needs size_t first, and auth-client.h before it. */
#include <auth-client.h>
#include <libesmtp.h>

#include "smtp.h"
#include "text.h"

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

gboolean
smtp_parse_url(const char *url, char **host, int *port, GError **err)
{
	const char *h, *colon;
	gint64 p = 25;

	if (!g_str_has_prefix(url, "smtp://")) {
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "'%s' is not smtp://HOST[:PORT]", url);
		return FALSE;
	}
	h = url + strlen("smtp://");
	colon = strrchr(h, ':');
	if (colon != NULL && !g_ascii_string_to_signed(colon + 1, 10, 1, 65535, &p, NULL)) {
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "bad port in '%s'", url);
		return FALSE;
	}
	*host = colon != NULL ? g_strndup(h, (gsize) (colon - h)) : g_strdup(h);
	if (**host == '\0' || strpbrk(*host, "/@ \t") != NULL) {
		g_clear_pointer(host, g_free);
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "bad host in '%s'", url);
		return FALSE;
	}
	*port = (int) p;
	return TRUE;
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

typedef struct {
	const smtp_settings *cfg;
	char *problem;		/* why the session stopped, if we know */
} session_state;

static void
event_cb(smtp_session_t session, int event, void *arg, ...)
{
	session_state *ss = arg;
	va_list ap;

	(void) session;
	va_start(ap, arg);
	switch (event) {
	case SMTP_EV_EXTNA_STARTTLS:
		if (ss->problem == NULL)
			ss->problem = g_strdup("the server does not offer STARTTLS, which is required");
		break;
	case SMTP_EV_INVALID_PEER_CERTIFICATE:
	case SMTP_EV_NO_PEER_CERTIFICATE:
	case SMTP_EV_WRONG_PEER_CERTIFICATE: {
		long vfy = va_arg(ap, long);
		int *ok = va_arg(ap, int *);

		if (!ss->cfg->tls_verify) {
			*ok = 1;
		} else if (ss->problem == NULL)
			ss->problem = g_strdup_printf("the server's TLS certificate does not verify (%ld)", vfy);
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

static void
alarm_noop(int sig)
{
	(void) sig;	/* only to make a blocking connect() return EINTR */
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

vulnid_status
smtp_send(const smtp_settings *cfg, GPtrArray *messages, guint deadline, GError **err)
{
	smtp_session_t s;
	auth_context_t auth = NULL;
	session_state ss = { cfg, NULL };
	g_autofree message_source *srcs = NULL;
	g_autofree char *server = NULL;
	g_autoptr(GPtrArray) handles = g_ptr_array_new();	/* smtp_message_t per message */
	g_autoptr(GPtrArray) rhandles = g_ptr_array_new();	/* smtp_recipient_t, flat */
	struct sigaction sa, old_sa;
	unsigned outer;
	time_t started;
	char ebuf[256];
	int ok, serr;

	if (messages->len == 0)
		return VULNID_OK;
	s = smtp_create_session();
	if (s == NULL)
		return vulnid_fail(err, VULNID_ERR_NOMEM, "cannot create an SMTP session");
	server = g_strdup_printf(strchr(cfg->host, ':') != NULL ? "[%s]:%d" : "%s:%d", cfg->host, cfg->port);
	smtp_set_server(s, server);
	smtp_set_hostname(s, cfg->helo);
	smtp_set_eventcb(s, event_cb, &ss);
	for (int t = Timeout_GREETING; t <= Timeout_DATA2; t++)
		smtp_set_timeout(s, t | Timeout_OVERRIDE_RFC2822_MINIMUM, (long) cfg->timeout * 1000);
	if (cfg->starttls != SMTP_STARTTLS_NO)
		smtp_starttls_enable(s, cfg->starttls == SMTP_STARTTLS_REQUIRED ? Starttls_REQUIRED
										  : Starttls_ENABLED);
	if (cfg->user != NULL) {
		auth_client_init();
		auth = auth_create_context();
		auth_set_mechanism_flags(auth, AUTH_PLUGIN_PLAIN, 0);
		auth_set_interact_cb(auth, auth_interact, (void *) cfg);
		smtp_auth_set_context(s, auth);
	}
	srcs = g_new0(message_source, messages->len);
	for (guint i = 0; i < messages->len; i++) {
		smtp_message *m = g_ptr_array_index(messages, i);
		smtp_message_t h = smtp_add_message(s);

		smtp_set_reverse_path(h, m->envelope_from);
		srcs[i].data = m->data;
		smtp_set_messagecb(h, message_cb, &srcs[i]);
		for (guint j = 0; j < m->rcpts->len; j++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

			g_ptr_array_add(rhandles, smtp_add_recipient(h, r->address));
		}
		g_ptr_array_add(handles, h);
	}

	/* libESMTP's connect() has no timeout of its own.  An alarm set by
	 * the caller (the filter's time limit) is kept, and still fires. */
	outer = alarm(0);
	started = time(NULL);
	if (outer > 0 && (deadline == 0 || outer < deadline))
		deadline = outer;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = alarm_noop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	if (deadline > 0)
		alarm(deadline);
	ok = smtp_start_session(s);
	serr = smtp_errno();
	alarm(0);
	sigaction(SIGALRM, &old_sa, NULL);
	if (outer > 0) {
		time_t spent = time(NULL) - started;

		alarm(spent >= (time_t) outer ? 1 : outer - (unsigned) spent);
	}

	{
		guint k = 0;

		for (guint i = 0; i < messages->len; i++) {
			smtp_message *m = g_ptr_array_index(messages, i);
			smtp_message_t h = g_ptr_array_index(handles, i);
			const smtp_status_t *ms = smtp_reverse_path_status(h);
			const smtp_status_t *ds = smtp_message_transfer_status(h);

			for (guint j = 0; j < m->rcpts->len; j++, k++) {
				smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);
				const smtp_status_t *rs = smtp_recipient_status(g_ptr_array_index(rhandles, k));
				g_autofree char *reply = NULL;

				r->result = smtp_classify(ms != NULL ? ms->code : 0, rs != NULL ? rs->code : 0,
							  ds != NULL ? ds->code : 0);
				if (ms != NULL && (ms->code < 200 || ms->code >= 300))
					reply = status_text(ms);
				else if (rs != NULL && (rs->code < 200 || rs->code >= 300))
					reply = status_text(rs);
				else
					reply = status_text(ds);
				if (reply == NULL || (r->result == SMTP_RESULT_TEMPORARY && ss.problem != NULL)) {
					g_free(reply);
					if (ss.problem != NULL)
						reply = g_strdup(ss.problem);
					else if (!ok || serr != 0)
						reply = g_strdup_printf("%s: %s", server,
									serr < 0 ? g_strerror(-serr)
										 : smtp_strerror(serr, ebuf, sizeof ebuf));
					else
						reply = g_strdup("no reply from the server");
				}
				g_free(r->reply);
				r->reply = text_clean_line(reply, 500);
			}
		}
	}
	smtp_destroy_session(s);
	if (auth != NULL) {
		auth_destroy_context(auth);
		auth_client_exit();
	}
	g_free(ss.problem);
	return VULNID_OK;
}
