/* lmtp.c - LMTP (RFC 2033) commands, DATA decoding and the session state
 * machine, without I/O (see lmtp.h) */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "lmtp.h"

void
lmtp_command_free(lmtp_command *c)
{
	if (c == NULL)
		return;
	g_free(c->arg);
	g_free(c->address);
	if (c->xforward != NULL)
		g_ptr_array_unref(c->xforward);
	g_free(c->error);
	g_free(c);
}

char *
lmtp_xtext_decode(const char *s)
{
	GString *out = g_string_new(NULL);

	for (const char *p = s; *p; p++) {
		if ((unsigned char) *p < 0x21 || (unsigned char) *p > 0x7e || *p == '=')
			goto bad;
		if (*p != '+') {
			g_string_append_c(out, *p);
			continue;
		}
		if (!g_ascii_isxdigit(p[1]) || !g_ascii_isxdigit(p[2]))
			goto bad;
		g_string_append_c(out, (char) (g_ascii_xdigit_value(p[1]) * 16 + g_ascii_xdigit_value(p[2])));
		p += 2;
	}
	return g_string_free(out, FALSE);
bad:
	g_string_free(out, TRUE);
	return NULL;
}

static lmtp_command *
cmd_error(lmtp_command *c, const char *reply)
{
	g_free(c->error);
	c->error = g_strdup(reply);
	return c;
}

/* The <path> of MAIL FROM: or RCPT TO: at *p; *p is left after the '>'. */
static char *
parse_path(const char **p, const char **why)
{
	const char *s = *p, *start, *at = NULL;
	gboolean quoted = FALSE;
	GString *a;

	while (*s == ' ')
		s++;
	if (*s != '<') {
		*why = "501 5.5.4 the address must be in angle brackets";
		return NULL;
	}
	s++;
	if (*s == '@') {
		/* a source route (@a,@b:user@domain) is ignored (RFC 5321 4.1.2) */
		const char *colon = strchr(s, ':');

		if (colon == NULL) {
			*why = "501 5.1.3 bad address syntax";
			return NULL;
		}
		s = colon + 1;
	}
	start = s;
	for (; *s; s++) {
		if (quoted && *s == '\\' && s[1] != '\0') {
			s++;
			continue;
		}
		if (*s == '"')
			quoted = !quoted;
		else if (!quoted && *s == '@')
			at = s;
		else if (!quoted && *s == '>')
			break;
		else if ((unsigned char) *s < 0x20 || *s == 0x7f || (!quoted && (*s == ' ' || *s == '<'))) {
			*why = "501 5.1.3 bad address syntax";
			return NULL;
		}
	}
	if (*s != '>') {
		*why = "501 5.1.3 bad address syntax";
		return NULL;
	}
	if (s - start > LMTP_MAX_ADDRESS) {
		*why = "501 5.1.3 address too long";
		return NULL;
	}
	/* Only the null path <> goes without a domain: the robot knows no
	 * local-only names (RFC 5321's bare <postmaster> is for a host's
	 * own users, and LMTP clients always qualify it). */
	if (s != start && (at == NULL || at == start || at + 1 == s)) {
		*why = "501 5.1.3 the address needs a local part and a domain";
		return NULL;
	}
	a = g_string_new_len(start, s - start);
	if (!g_utf8_validate(a->str, (gssize) a->len, NULL)) {
		g_string_free(a, TRUE);
		*why = "501 5.6.7 the address is not UTF-8";
		return NULL;
	}
	*p = s + 1;
	return g_string_free(a, FALSE);
}

/* ESMTP parameters after MAIL FROM:<...> (RCPT takes none). */
static gboolean
parse_mail_params(lmtp_command *c, const char *p)
{
	g_auto(GStrv) params = g_strsplit(p, " ", -1);

	for (char **q = params; *q; q++) {
		char *eq = strchr(*q, '=');
		g_autofree char *name = g_ascii_strup(*q, eq != NULL ? eq - *q : -1);
		const char *value = eq != NULL ? eq + 1 : NULL;

		if (**q == '\0')
			continue;
		if (strcmp(name, "SIZE") == 0 && value != NULL && *value != '\0' && strlen(value) <= 18 &&
		    strspn(value, "0123456789") == strlen(value))
			c->size = g_ascii_strtoll(value, NULL, 10);
		else if (strcmp(name, "BODY") == 0 && value != NULL &&
			 (g_ascii_strcasecmp(value, "7BIT") == 0 || g_ascii_strcasecmp(value, "8BITMIME") == 0))
			;
		else if (strcmp(name, "SMTPUTF8") == 0 && value == NULL)
			c->smtputf8 = TRUE;
		else
			return FALSE;
	}
	return TRUE;
}

static lmtp_command *
parse_xforward(lmtp_command *c, const char *p)
{
	static const char *const names[] = { "NAME", "ADDR", "PORT", "PROTO", "HELO", "IDENT", "SOURCE" };
	g_auto(GStrv) attrs = g_strsplit(p, " ", -1);

	c->xforward = g_ptr_array_new_with_free_func(g_free);
	for (char **q = attrs; *q; q++) {
		char *eq = strchr(*q, '=');
		g_autofree char *name = NULL;
		char *value;
		gboolean known = FALSE;

		if (**q == '\0')
			continue;
		if (eq == NULL || eq == *q)
			return cmd_error(c, "501 5.5.4 bad XFORWARD attribute");
		name = g_ascii_strup(*q, eq - *q);
		for (gsize i = 0; i < G_N_ELEMENTS(names); i++)
			known |= strcmp(name, names[i]) == 0;
		if (!known)
			return cmd_error(c, "501 5.5.4 bad XFORWARD attribute name");
		value = lmtp_xtext_decode(eq + 1);
		if (value == NULL || !g_utf8_validate(value, -1, NULL) || strlen(value) > 255) {
			g_free(value);
			return cmd_error(c, "501 5.5.4 bad XFORWARD attribute value");
		}
		g_ptr_array_add(c->xforward, g_steal_pointer(&name));
		g_ptr_array_add(c->xforward, value);
	}
	if (c->xforward->len == 0)
		return cmd_error(c, "501 5.5.4 XFORWARD needs attributes");
	return c;
}

lmtp_command *
lmtp_command_parse(const char *line, gsize len)
{
	static const struct { const char *name; lmtp_verb verb; } verbs[] = {
		{ "LHLO", LMTP_CMD_LHLO }, { "HELO", LMTP_CMD_HELO }, { "EHLO", LMTP_CMD_HELO },
		{ "MAIL", LMTP_CMD_MAIL }, { "RCPT", LMTP_CMD_RCPT }, { "DATA", LMTP_CMD_DATA },
		{ "RSET", LMTP_CMD_RSET }, { "NOOP", LMTP_CMD_NOOP }, { "QUIT", LMTP_CMD_QUIT },
		{ "VRFY", LMTP_CMD_VRFY }, { "XFORWARD", LMTP_CMD_XFORWARD },
	};
	lmtp_command *c = g_new0(lmtp_command, 1);
	g_autofree char *text = NULL;
	const char *sp, *arg, *why = NULL;
	gsize vlen;

	c->size = -1;
	if (memchr(line, '\0', len) != NULL)
		return cmd_error(c, "500 5.5.2 NUL byte in command");
	text = g_strndup(line, len);
	sp = strchr(text, ' ');
	vlen = sp != NULL ? (gsize) (sp - text) : len;
	arg = sp != NULL ? sp + 1 : "";
	for (gsize i = 0; i < G_N_ELEMENTS(verbs); i++)
		if (vlen == strlen(verbs[i].name) && g_ascii_strncasecmp(text, verbs[i].name, vlen) == 0)
			c->verb = verbs[i].verb;
	switch (c->verb) {
	case LMTP_CMD_UNKNOWN:
		return cmd_error(c, "500 5.5.2 command not recognized");
	case LMTP_CMD_LHLO:
		c->arg = g_strstrip(g_strdup(arg));
		if (*c->arg == '\0')
			return cmd_error(c, "501 5.5.4 LHLO needs a host name");
		return c;
	case LMTP_CMD_MAIL:
	case LMTP_CMD_RCPT: {
		const char *kw = c->verb == LMTP_CMD_MAIL ? "FROM:" : "TO:";

		if (g_ascii_strncasecmp(arg, kw, strlen(kw)) != 0)
			return cmd_error(c, c->verb == LMTP_CMD_MAIL ? "501 5.5.4 syntax: MAIL FROM:<address>"
					 : "501 5.5.4 syntax: RCPT TO:<address>");
		arg += strlen(kw);
		c->address = parse_path(&arg, &why);
		if (c->address == NULL)
			return cmd_error(c, why);
		if (c->verb == LMTP_CMD_RCPT && *c->address == '\0')
			return cmd_error(c, "501 5.1.3 the null address is no recipient");
		if (*arg != '\0' && *arg != ' ')
			return cmd_error(c, "501 5.5.4 bad address syntax");
		if (c->verb == LMTP_CMD_MAIL ? !parse_mail_params(c, arg)
		    : strspn(arg, " ") != strlen(arg))
			return cmd_error(c, "555 5.5.4 unsupported parameter");
		return c;
	}
	case LMTP_CMD_XFORWARD:
		return parse_xforward(c, arg);
	case LMTP_CMD_DATA:
	case LMTP_CMD_RSET:
	case LMTP_CMD_QUIT:
		if (strspn(arg, " ") != strlen(arg))
			return cmd_error(c, "501 5.5.4 no arguments allowed");
		return c;
	default:
		c->arg = g_strdup(arg);
		return c;
	}
}

/* Decoder states. */
enum { D_BOL, D_TEXT, D_CR, D_DOT, D_DOT_CR };

gsize
lmtp_data_feed(lmtp_data *d, const char *in, gsize len, GByteArray *out, gboolean *done)
{
	gsize i;

	*done = FALSE;
	for (i = 0; i < len; i++) {
		guint8 ch = (guint8) in[i];

		switch (d->state) {
		case D_DOT:
			if (ch == '\r') {
				d->state = D_DOT_CR;
				continue;
			}
			d->state = D_TEXT;	/* the stuffed dot is dropped */
			break;
		case D_DOT_CR:
			if (ch == '\n') {
				*done = TRUE;
				d->state = D_BOL;
				return i + 1;
			}
			/* ".<CR>x": a bare CR */
			d->bare_newline = TRUE;
			g_byte_array_append(out, (const guint8 *) "\r", 1);
			d->state = D_TEXT;
			break;
		case D_BOL:
			if (ch == '.') {
				d->state = D_DOT;
				continue;
			}
			d->state = D_TEXT;
			break;
		case D_CR:
			if (ch == '\n') {
				g_byte_array_append(out, &ch, 1);	/* CRLF -> LF */
				d->state = D_BOL;
				continue;
			}
			d->bare_newline = TRUE;
			g_byte_array_append(out, (const guint8 *) "\r", 1);
			d->state = D_TEXT;
			break;
		default:
			break;
		}
		/* in the text: CR may start a line end; LF alone is none */
		if (ch == '\r') {
			d->state = D_CR;
			continue;
		}
		if (ch == '\n')
			d->bare_newline = TRUE;
		g_byte_array_append(out, &ch, 1);
		d->state = D_TEXT;
	}
	return i;
}

typedef enum { S_START, S_READY, S_MAIL, S_DATA } session_state;

struct lmtp_session {
	lmtp_server_config cfg;
	GByteArray *out;
	GString *line;
	gboolean line_too_long;
	session_state state;
	lmtp_envelope env;
	lmtp_data data;
	GByteArray *dbuf;
	int fd;
	gboolean too_big, spool_failed;
	int spool_errno;	/* why the spool failed, for the reply */
	guint mails, errors;
	gboolean closing;
};

static void
reply(lmtp_session *s, const char *line)
{
	g_byte_array_append(s->out, (const guint8 *) line, (guint) strlen(line));
	g_byte_array_append(s->out, (const guint8 *) "\r\n", 2);
}

static void
envelope_clear(lmtp_envelope *e, gboolean keep_session)
{
	g_clear_pointer(&e->sender, g_free);
	if (e->recipients != NULL)
		g_ptr_array_set_size(e->recipients, 0);
	e->size = 0;
	/* XFORWARD attributes hold for one mail transaction */
	g_clear_pointer(&e->client_address, g_free);
	g_clear_pointer(&e->client_name, g_free);
	g_clear_pointer(&e->client_helo, g_free);
	g_clear_pointer(&e->client_proto, g_free);
	if (!keep_session) {
		g_clear_pointer(&e->lhlo, g_free);
		g_clear_pointer(&e->recipients, g_ptr_array_unref);
	}
}

static void
transaction_end(lmtp_session *s)
{
	envelope_clear(&s->env, TRUE);
	s->fd = -1;	/* the caller's (spool_open) */
	s->too_big = s->spool_failed = FALSE;
	s->spool_errno = 0;
	s->state = s->state == S_START ? S_START : S_READY;
}

lmtp_session *
lmtp_session_new(const lmtp_server_config *cfg)
{
	lmtp_session *s = g_new0(lmtp_session, 1);
	g_autofree char *greet = g_strdup_printf("220 %s LMTP vulnid ready", cfg->hostname);

	s->cfg = *cfg;
	s->out = g_byte_array_new();
	s->line = g_string_new(NULL);
	s->dbuf = g_byte_array_new();
	s->env.recipients = g_ptr_array_new_with_free_func(g_free);
	s->fd = -1;
	reply(s, greet);
	return s;
}

void
lmtp_session_free(lmtp_session *s)
{
	if (s == NULL)
		return;
	transaction_end(s);
	envelope_clear(&s->env, FALSE);
	g_byte_array_unref(s->out);
	g_byte_array_unref(s->dbuf);
	g_string_free(s->line, TRUE);
	g_free(s);
}

GByteArray *
lmtp_session_output(lmtp_session *s)
{
	return s->out;
}

gboolean
lmtp_session_closing(const lmtp_session *s)
{
	return s->closing;
}

gboolean
lmtp_session_in_data(const lmtp_session *s)
{
	return s->state == S_DATA;
}

gboolean
lmtp_session_in_transaction(const lmtp_session *s)
{
	return s->state == S_MAIL || s->state == S_DATA;
}

guint
lmtp_session_mails(const lmtp_session *s)
{
	return s->mails;
}

void
lmtp_session_abort(lmtp_session *s, const char *line)
{
	if (s->closing)
		return;
	transaction_end(s);
	reply(s, line);
	s->closing = TRUE;
}

void
lmtp_session_eof(lmtp_session *s)
{
	transaction_end(s);
	s->closing = TRUE;
}

static void
bad_command(lmtp_session *s, const char *line)
{
	reply(s, line);
	if (++s->errors > s->cfg.max_errors)
		lmtp_session_abort(s, "421 4.7.0 too many errors, closing the session");
}

static void
lhlo_reply(lmtp_session *s, const char *name)
{
	g_autofree char *first = g_strdup_printf("250-%s", s->cfg.hostname);
	g_autofree char *size = g_strdup_printf("250-SIZE %" G_GINT64_FORMAT, s->cfg.max_size);

	g_free(s->env.lhlo);
	s->env.lhlo = g_strdup(name);
	reply(s, first);
	reply(s, "250-PIPELINING");
	reply(s, size);
	reply(s, "250-ENHANCEDSTATUSCODES");
	reply(s, "250-8BITMIME");
	if (s->cfg.xforward) {
		reply(s, "250-SMTPUTF8");
		reply(s, "250 XFORWARD NAME ADDR PROTO HELO");
	} else
		reply(s, "250 SMTPUTF8");
}

static void
xforward(lmtp_session *s, const lmtp_command *c)
{
	for (guint i = 0; i + 1 < c->xforward->len; i += 2) {
		const char *name = g_ptr_array_index(c->xforward, i);
		const char *value = g_ptr_array_index(c->xforward, i + 1);
		char **slot = strcmp(name, "ADDR") == 0 ? &s->env.client_address
			    : strcmp(name, "NAME") == 0 ? &s->env.client_name
			    : strcmp(name, "HELO") == 0 ? &s->env.client_helo
			    : strcmp(name, "PROTO") == 0 ? &s->env.client_proto : NULL;

		if (slot == NULL)
			continue;
		g_free(*slot);
		*slot = NULL;
		if (strcmp(value, "[UNAVAILABLE]") == 0 || strcmp(value, "[TEMPUNAVAIL]") == 0)
			continue;
		if (slot == &s->env.client_address && g_ascii_strncasecmp(value, "IPv6:", 5) == 0)
			value += 5;
		*slot = g_strdup(value);
	}
	reply(s, "250 2.0.0 Ok");
}

static void
cmd_mail(lmtp_session *s, const lmtp_command *c)
{
	if (s->state == S_START)
		return bad_command(s, "503 5.5.1 send LHLO first");
	if (s->state != S_READY)
		return bad_command(s, "503 5.5.1 nested MAIL command");
	if (s->cfg.max_mails > 0 && s->mails >= s->cfg.max_mails)
		return lmtp_session_abort(s, "421 4.7.0 too many mails in one session, closing it");
	if (c->size > s->cfg.max_size) {
		reply(s, "552 5.3.4 message too big for the robot");
		return;
	}
	s->env.sender = g_strdup(c->address);
	s->state = S_MAIL;
	reply(s, "250 2.1.0 Ok");
}

static void
cmd_rcpt(lmtp_session *s, const lmtp_command *c)
{
	const char *no;

	if (s->state != S_MAIL)
		return bad_command(s, "503 5.5.1 send MAIL first");
	if (s->env.recipients->len >= s->cfg.max_recipients) {
		reply(s, "452 4.5.3 too many recipients");
		return;
	}
	no = s->cfg.check_recipient != NULL ? s->cfg.check_recipient(s->cfg.data, c->address) : NULL;
	if (no != NULL) {
		reply(s, no);
		return;
	}
	g_ptr_array_add(s->env.recipients, g_strdup(c->address));
	reply(s, "250 2.1.5 Ok");
}

static void
cmd_data(lmtp_session *s)
{
	if (s->state != S_MAIL)
		return bad_command(s, "503 5.5.1 send MAIL first");
	if (s->env.recipients->len == 0)
		return bad_command(s, "503 5.5.1 no valid recipients");
	s->fd = s->cfg.spool_open(s->cfg.data);
	/* Without a spool the data is still read (and then refused), so that
	 * the session stays in step with the client. */
	s->spool_failed = s->fd < 0;
	s->spool_errno = s->fd < 0 ? errno : 0;
	memset(&s->data, 0, sizeof s->data);
	s->env.size = 0;
	s->state = S_DATA;
	reply(s, "354 2.0.0 send the mail, end with <CR><LF>.<CR><LF>");
}

static void
command(lmtp_session *s, const char *line, gsize len)
{
	g_autoptr(lmtp_command) c = lmtp_command_parse(line, len);

	if (c->error != NULL)
		return bad_command(s, c->error);
	switch (c->verb) {
	case LMTP_CMD_LHLO:
		transaction_end(s);
		s->state = S_READY;
		return lhlo_reply(s, c->arg);
	case LMTP_CMD_HELO:
		return bad_command(s, "500 5.5.1 this is LMTP: use LHLO");
	case LMTP_CMD_MAIL:
		return cmd_mail(s, c);
	case LMTP_CMD_RCPT:
		return cmd_rcpt(s, c);
	case LMTP_CMD_DATA:
		return cmd_data(s);
	case LMTP_CMD_RSET:
		transaction_end(s);
		return reply(s, "250 2.0.0 Ok");
	case LMTP_CMD_NOOP:
		return reply(s, "250 2.0.0 Ok");
	case LMTP_CMD_QUIT:
		return lmtp_session_abort(s, "221 2.0.0 Bye");
	case LMTP_CMD_VRFY:
		return reply(s, "252 2.5.0 cannot VRFY, but send the mail");
	case LMTP_CMD_XFORWARD:
		if (!s->cfg.xforward)
			return bad_command(s, "500 5.5.2 command not recognized");
		if (s->state == S_START)
			return bad_command(s, "503 5.5.1 send LHLO first");
		if (s->state != S_READY)
			return bad_command(s, "503 5.5.1 XFORWARD is not allowed in a mail transaction");
		return xforward(s, c);
	default:
		return bad_command(s, "500 5.5.2 command not recognized");
	}
}

static void
data_end(lmtp_session *s)
{
	g_autoptr(GPtrArray) replies = g_ptr_array_new_with_free_func(g_free);
	guint n = s->env.recipients->len;

	if (s->too_big) {
		for (guint i = 0; i < n; i++)
			g_ptr_array_add(replies, g_strdup("552 5.3.4 message too big for the robot"));
	} else if (s->data.bare_newline) {
		/* As Postfix's smtpd_forbid_bare_newline: whatever the client
		 * meant, the robot does not guess where its mail ends. */
		for (guint i = 0; i < n; i++)
			g_ptr_array_add(replies, g_strdup("550 5.5.2 bare <LF> or <CR> in the mail: every line must "
							  "end with <CR><LF>"));
	} else if (s->spool_failed || lseek(s->fd, 0, SEEK_SET) < 0) {
		/* the cause, for the MTA's log and the operator reading it */
		int e = s->spool_failed ? s->spool_errno : errno;
		g_autofree char *why = e == ENOSPC || e == EDQUOT
			? g_strdup("452 4.3.1 disk full: cannot spool the mail, try again later")
			: g_strdup_printf("451 4.3.0 cannot spool the mail (%s), try again later",
					  e != 0 ? g_strerror(e) : "no spool file");

		for (guint i = 0; i < n; i++)
			g_ptr_array_add(replies, g_strdup(why));
	} else
		s->cfg.deliver(s->cfg.data, &s->env, s->fd, replies);
	/* one reply per recipient, whatever the callback did */
	for (guint i = 0; i < n; i++)
		reply(s, i < replies->len ? (const char *) g_ptr_array_index(replies, i)
		      : "451 4.3.0 internal error, try again later");
	s->mails++;
	transaction_end(s);
}

static gsize
data_input(lmtp_session *s, const char *buf, gsize len)
{
	gboolean done;
	gsize used = lmtp_data_feed(&s->data, buf, len, s->dbuf, &done);

	s->env.size += s->dbuf->len;
	if (s->env.size > s->cfg.max_size)
		s->too_big = TRUE;	/* the rest is read and dropped */
	if (!s->too_big && !s->spool_failed && s->dbuf->len > 0 &&
	    !fileio_write_all(s->fd, s->dbuf->data, s->dbuf->len)) {
		s->spool_failed = TRUE;
		s->spool_errno = errno;
	}
	g_byte_array_set_size(s->dbuf, 0);
	if (done)
		data_end(s);
	return used;
}

void
lmtp_session_input(lmtp_session *s, const char *buf, gsize len)
{
	while (len > 0 && !s->closing) {
		const char *nl;
		gsize n;

		if (s->state == S_DATA) {
			n = data_input(s, buf, len);
			buf += n;
			len -= n;
			continue;
		}
		nl = memchr(buf, '\n', len);
		n = nl != NULL ? (gsize) (nl - buf) : len;
		if (s->line->len + n > LMTP_MAX_LINE + 1)
			s->line_too_long = TRUE;
		else
			g_string_append_len(s->line, buf, (gssize) n);
		if (nl == NULL)
			return;
		buf += n + 1;
		len -= n + 1;
		if (s->line_too_long)
			bad_command(s, "500 5.5.2 line too long");
		else {
			gsize l = s->line->len;

			if (l > 0 && s->line->str[l - 1] == '\r')
				l--;
			command(s, s->line->str, l);
		}
		g_string_truncate(s->line, 0);
		s->line_too_long = FALSE;
	}
}
