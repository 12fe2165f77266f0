/* outbox.c - compose, queue and deliver the robot's mail */
#include "autoconfig.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gmime/gmime.h>

#include "audit.h"
#include "message.h"
#include "canonjson.h"
#include "crypto.h"
#include "outbox.h"
#include "random.h"
#include "store-outbox.h"
#include "smtp.h"
#include "transport.h"
#include "text.h"

/* Retry schedule for a failed delivery: 1 min doubling, capped at 4 h. */
#define OUTBOX_BACKOFF_FIRST 60
#define OUTBOX_RECORD_BATCH 100	/* outcomes per transaction */
#define OUTBOX_BACKOFF_MAX (4 * 3600)

static char *
outbox_new_message_id(const vulnid_config *cfg, const char *kind)
{
	g_autofree char *uuid = g_uuid_string_random();

	return g_strdup_printf("vulnid.%s.%s@%s", kind, uuid, cfg->domain);
}

/* A VERP token: random, so that bounces cannot be forged for items an
 * outsider did not receive. */
static vulnid_status
outbox_new_token(char **out, GError **err)
{
	*out = random_hex(12, err);
	return *out != NULL ? VULNID_OK : VULNID_ERR_TEMP;
}

/* ---- claims ---------------------------------------------------------------
 *
 * A run delivers only items it has claimed: claim = its token, claim_until
 * = when the claim lapses, set in the transaction that selects them (or,
 * in the filter, in the one that queues them: those carry the process's
 * token, which every run of the process takes for its own).  Tokens are
 * "PID.START.RANDOM", a new RANDOM for each run: a run never claims an
 * item twice, a later run of a long-lived process may again. */
#define OUTBOX_CLAIM_MARGIN 60	/* s after the delivery deadline to record it */
#define OUTBOX_CLAIM_BATCH 100	/* items claimed (and sent in one session) at a time */
#define OUTBOX_RUN_MAX 1000	/* items one run delivers at most */
#define OUTBOX_DEFAULT_DEADLINE 3600

static char *claim_token;	/* the process's, for what it queues */
static char *run_token;		/* the current outbox_run()'s */
static guint claim_queued_seconds;

/* State and start time (clock ticks after boot) of process pid, from
 * /proc/PID/stat; FALSE if there is no such process.  *start is NULL
 * when /proc cannot tell. */
static gboolean
proc_state(pid_t pid, char *state, char **start)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
	g_autofree char *text = NULL;
	g_auto(GStrv) f = NULL;
	const char *paren;

	*start = NULL;
	*state = '?';
	/* kill(0) sees processes that /proc hides (hidepid, ProtectProc) */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return FALSE;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return TRUE;
	/* "PID (COMM) STATE PPID ...": COMM may hold anything, even ")" */
	paren = strrchr(text, ')');
	if (paren == NULL)
		return TRUE;
	f = g_strsplit(paren + 1, " ", 0);
	if (g_strv_length(f) > 20) {
		*state = f[1][0];
		*start = g_strdup(f[20]);
	}
	return TRUE;
}

/* A new token of this process: "PID.START.RANDOM", START being its start
 * time, so that a dead claimer is recognised even when its PID is reused. */
static vulnid_status
new_claim_token(char **out, GError **err)
{
	g_autofree char *r = NULL;
	g_autofree char *start = NULL;
	vulnid_status s = outbox_new_token(&r, err);
	char state;

	if (s != VULNID_OK)
		return s;
	proc_state(getpid(), &state, &start);
	*out = g_strdup_printf("%d.%s.%s", (int) getpid(), start != NULL ? start : "0", r);
	return VULNID_OK;
}

/* The process's token, made once: before outbox_claim_token() is used. */
static vulnid_status
claim_token_ready(GError **err)
{
	return claim_token != NULL ? VULNID_OK : new_claim_token(&claim_token, err);
}

static const char *
outbox_claim_token(void)
{
	g_assert(claim_token != NULL);
	return claim_token;
}

/* Whether the process that made token still runs.  All claimers share one
 * host (SQLite's WAL requires it), so its process table tells. */
static gboolean
claimer_alive(const char *token)
{
	g_auto(GStrv) f = g_strsplit(token, ".", 3);
	g_autofree char *start = NULL;
	gint64 pid;
	char state;

	if (g_strv_length(f) != 3 || !g_ascii_string_to_signed(f[0], 10, 1, G_MAXINT, &pid, NULL))
		return TRUE;	/* not ours to judge: wait for it to lapse */
	if (!proc_state((pid_t) pid, &state, &start))
		return FALSE;
	if (state == 'Z' || state == 'X')
		return FALSE;
	return start == NULL || strcmp(f[1], "0") == 0 || strcmp(start, f[1]) == 0;
}

guint
outbox_claim_seconds(const vulnid_config *cfg, guint deadline)
{
	return (deadline > 0 ? deadline : OUTBOX_DEFAULT_DEADLINE) +
	       (guint) (cfg->busy_timeout / 1000) + OUTBOX_CLAIM_MARGIN;
}

void
outbox_claim_queued(guint seconds)
{
	claim_queued_seconds = seconds;
}

static char *
time_after(guint seconds)
{
	g_autoptr(GDateTime) t = store_now_datetime();
	g_autoptr(GDateTime) u = g_date_time_add_seconds(t, (gdouble) seconds);

	return g_date_time_format(u, "%Y-%m-%dT%H:%M:%SZ");
}

/* A header value that came from a mail (a Subject, a Title, a name): its
 * encoded words decoded (a few rounds: an encoded word may hold another),
 * cleaned of controls, line ends and bidi controls, and cut (with "..."
 * at the end, so that the cut shows).  *literal is set when what is left
 * still looks like an encoded word: GMime would pass it through as one,
 * and the recipient would decode it. */
static char *
header_text(const char *s, gsize max, gboolean *literal)
{
	g_autofree char *v = g_strdup(s != NULL ? s : "");
	g_autofree char *whole = NULL;

	for (int round = 0; round < 4 && strstr(v, "=?") != NULL; round++) {
		char *d = text_decode_header(v);

		if (strcmp(d, v) == 0) {
			g_free(d);
			break;
		}
		g_free(v);
		v = d;
	}
	*literal = strstr(v, "=?") != NULL;
	whole = text_clean_line(v, 0);
	if ((gsize) g_utf8_strlen(whole, -1) <= max)
		return g_steal_pointer(&whole);
	{
		g_autofree char *cut = text_clean_line(whole, max - 3);

		return g_strconcat(cut, "...", NULL);
	}
}

void
outbox_attachment_free(gpointer p)
{
	outbox_attachment *a = p;

	if (a->data != NULL)
		g_bytes_unref(a->data);
	g_free(a->type);
	g_free(a->name);
	g_free(a);
}

/* One more part: bytes with a type and a file name. */
static GMimeObject *
attachment_part(GBytes *data, const char *type, const char *name)
{
	GMimePart *att = g_mime_part_new_with_type("application", "octet-stream");
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GMimeDataWrapper *w;
	GMimeContentType *ct;

	g_mime_stream_write(mem, g_bytes_get_data(data, NULL), g_bytes_get_size(data));
	g_mime_stream_reset(mem);
	w = g_mime_data_wrapper_new_with_stream(mem, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(att, w);
	g_object_unref(w);
	ct = g_mime_content_type_parse(NULL, type != NULL ? type : "application/octet-stream");
	g_mime_object_set_content_type(GMIME_OBJECT(att), ct);
	g_object_unref(ct);
	if (name != NULL)
		g_mime_part_set_filename(att, name);
	g_mime_part_set_content_encoding(att,
		g_mime_part_get_best_content_encoding(att, GMIME_ENCODING_CONSTRAINT_7BIT));
	return GMIME_OBJECT(att);
}

/* The text, in 7 bits where it can, with the attachments if there are
 * any (multipart/mixed). */
static GMimeObject *
outbox_body(const outbox_mail *mail)
{
	GMimeTextPart *part;
	GMimeObject *body;

	part = g_mime_text_part_new_with_subtype("plain");
	g_mime_text_part_set_text(part, mail->body);	/* sets charset=utf-8 */
	g_mime_part_set_content_encoding(GMIME_PART(part),
		g_mime_part_get_best_content_encoding(GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	body = GMIME_OBJECT(part);
	if (mail->attachment != NULL || (mail->attachments != NULL && mail->attachments->len > 0)) {
		GMimeMultipart *mixed = g_mime_multipart_new_with_subtype("mixed");

		g_mime_multipart_add(mixed, body);
		g_object_unref(body);
		if (mail->attachment != NULL) {
			GMimeObject *att = attachment_part(mail->attachment, mail->attachment_type,
							   mail->attachment_name);

			g_mime_multipart_add(mixed, att);
			g_object_unref(att);
		}
		for (guint i = 0; mail->attachments != NULL && i < mail->attachments->len; i++) {
			const outbox_attachment *x = g_ptr_array_index(mail->attachments, i);
			GMimeObject *att = attachment_part(x->data, x->type, x->name);

			g_mime_multipart_add(mixed, att);
			g_object_unref(att);
		}
		body = GMIME_OBJECT(mixed);
	}
	return body;
}

static GMimeMessage *
outbox_build(const vulnid_config *cfg, const outbox_mail *mail, const char *msgid)
{
	GMimeMessage *msg = g_mime_message_new(TRUE);
	GMimeObject *o = GMIME_OBJECT(msg);
	g_autoptr(GDateTime) now = store_now_datetime();
	gboolean subject_literal = FALSE, name_literal = FALSE;
	g_autofree char *subject = header_text(mail->subject, 900, &subject_literal);
	g_autoptr(GString) refs = g_string_new(NULL);
	GMimeObject *body;

	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_FROM, "vulnid", cfg->request_address);
	if (mail->to_list != NULL) {
		for (const char *const *t = mail->to_list; *t; t++) {
			g_autofree char *a = text_clean_line(*t, 320);

			g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, NULL, a);
		}
	} else {
		g_autofree char *to_name = mail->to_name != NULL ? header_text(mail->to_name, 200, &name_literal) : NULL;
		g_autofree char *to_addr = text_clean_line(mail->to_addr, 320);

		/* a name that would decode again at the recipient is left out */
		g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, name_literal ? NULL : to_name, to_addr);
	}
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_REPLY_TO, NULL,
				   mail->reply_to != NULL ? mail->reply_to : cfg->request_address);
	g_mime_message_set_subject(msg, subject, "utf-8");
	if (subject_literal) {
		/* Encoded once, by us: the recipient decodes it once and sees
		 * "=?...?=" as text, never what it would decode to. */
		g_autofree char *words = text_encoded_words_b(subject);
		g_auto(GStrv) w = g_strsplit(words, " ", -1);
		g_autofree char *folded = g_strjoinv("\n ", w);
		g_autofree char *raw = g_strdup_printf(" %s\n", folded);
		GMimeHeader *h = g_mime_header_list_get_header(g_mime_object_get_header_list(o), "Subject");

		if (h != NULL)
			g_mime_header_set_raw_value(h, raw);
	}
	g_mime_message_set_date(msg, now);
	g_mime_message_set_message_id(msg, msgid);
	if (mail->in_reply_to != NULL && text_msgid_valid(mail->in_reply_to)) {
		g_autofree char *irt = g_strdup_printf("<%s>", mail->in_reply_to);

		g_mime_object_set_header(o, "In-Reply-To", irt, NULL);
	}
	/* References: the request's References, then the request itself. */
	for (guint i = 0; mail->references != NULL && i < mail->references->len && i < 20; i++) {
		const char *r = g_ptr_array_index(mail->references, i);

		if (text_msgid_valid(r))
			g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", r);
	}
	if (mail->in_reply_to != NULL && text_msgid_valid(mail->in_reply_to))
		g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", mail->in_reply_to);
	if (refs->len > 0)
		g_mime_object_set_header(o, "References", refs->str, NULL);
	g_mime_object_set_header(o, "Auto-Submitted",
				 mail->auto_submitted != NULL ? mail->auto_submitted : "auto-replied", NULL);
	g_mime_object_set_header(o, "X-Loop", cfg->request_address, NULL);
	if (mail->bulk)
		g_mime_object_set_header(o, "Precedence", "bulk", NULL);

	body = outbox_body(mail);
	g_mime_message_set_mime_part(msg, body);
	g_object_unref(body);
	return msg;
}

/* Embargoed content is never stored or sent in clear: encrypt (and sign)
 * to the recipients' keys before the mail enters the outbox. */
static vulnid_status
outbox_encrypt(GMimeMessage *msg, const char *const *fprs, GError **err)
{
	g_autoptr(GPtrArray) rcpts = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *robot = NULL;
	GMimeObject *enc;
	vulnid_status s;

	s = crypto_robot_fingerprint(&robot, err);
	if (s != VULNID_OK)
		return s;
	for (const char *const *f = fprs; *f; f++)
		g_ptr_array_add(rcpts, g_strdup(*f));
	enc = crypto_encrypt_mime(g_mime_message_get_mime_part(msg), robot, rcpts, err);
	if (enc == NULL)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot encrypt the mail");
	g_mime_message_set_mime_part(msg, enc);
	g_object_unref(enc);
	return VULNID_OK;
}

static GByteArray *
outbox_serialize(GMimeMessage *msg)
{
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	GByteArray *out = g_byte_array_new();
	GByteArray *b;

	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(GMIME_OBJECT(msg), fo, mem);
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	g_byte_array_append(out, b->data, b->len);
	return out;
}

/* The recipients, each cleaned to one line, and as a JSON array. */
static GPtrArray *
outbox_recipients(const outbox_mail *mail, GString *json)
{
	GPtrArray *to = g_ptr_array_new_with_free_func(g_free);

	if (mail->to_list != NULL)
		for (const char *const *t = mail->to_list; *t; t++)
			g_ptr_array_add(to, text_clean_line(*t, 320));
	else
		g_ptr_array_add(to, text_clean_line(mail->to_addr, 320));
	g_string_append_c(json, '[');
	for (guint i = 0; i < to->len; i++) {
		if (i > 0)
			g_string_append_c(json, ',');
		canonjson_string(json, g_ptr_array_index(to, i));
	}
	g_string_append_c(json, ']');
	return to;
}

static vulnid_status
audit_queued(store *st, const outbox_mail *mail, const char *msgid, gint64 id, GPtrArray *to,
	     const char *envelope, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("queued", mail->entry, msgid);
	g_autoptr(GString) joined = g_string_new(NULL);

	for (guint i = 0; i < to->len; i++)
		g_string_append_printf(joined, "%s%s", i > 0 ? ", " : "",
				       (const char *) g_ptr_array_index(to, i));
	audit_event_int(ev, "outbox", id);
	audit_event_str(ev, "kind", mail->kind);
	audit_event_str(ev, "to", joined->str);
	audit_event_str(ev, "envelope_from", envelope);
	return audit_append(st, ev, err);
}

vulnid_status
outbox_queue(store *st, const vulnid_config *cfg, gint64 cause, const outbox_mail *mail,
	     gint64 *id_out, GError **err)
{
	g_autofree char *msgid = mail->message_id != NULL ? g_strdup(mail->message_id)
							   : outbox_new_message_id(cfg, mail->kind);
	g_autofree char *now = store_now();
	g_autofree char *token = NULL;
	g_autofree char *envelope = NULL;
	g_autofree char *until = claim_queued_seconds > 0 ? time_after(claim_queued_seconds) : NULL;
	g_autoptr(GMimeMessage) msg = outbox_build(cfg, mail, msgid);
	g_autoptr(GByteArray) data = NULL;
	g_autoptr(GString) rcpts = g_string_new(NULL);
	g_autoptr(GPtrArray) to = outbox_recipients(mail, rcpts);
	vulnid_status s;
	gint64 id;

	s = outbox_new_token(&token, err);
	if (s == VULNID_OK && until != NULL)
		s = claim_token_ready(err);
	if (s != VULNID_OK)
		return s;
	envelope = g_strdup_printf("%s+%s@%s", cfg->bounce_local, token, cfg->domain);
	if (mail->encrypt_to != NULL && mail->encrypt_to[0] != NULL) {
		s = outbox_encrypt(msg, mail->encrypt_to, err);
		if (s != VULNID_OK)
			return s;
	}
	data = outbox_serialize(msg);
	{
		store_outbox_new n = {
			now, mail->kind, mail->entry, cause > 0 ? cause : 0, msgid, envelope,
			rcpts->str, data->data, data->len,
			until != NULL ? outbox_claim_token() : NULL, until,
		};

		s = store_outbox_insert(st, &n, &id, err);
	}
	for (guint i = 0; s == VULNID_OK && i < to->len; i++)
		s = store_outbox_add_recipient(st, id, g_ptr_array_index(to, i), now, err);
	if (s == VULNID_OK)
		s = audit_queued(st, mail, msgid, id, to, envelope, err);
	if (s == VULNID_OK && id_out != NULL)
		*id_out = id;
	return s;
}

static vulnid_status
mkdir_maildir(const char *root, GError **err)
{
	const char *subs[] = { "tmp", "new", "cur" };

	if (g_mkdir_with_parents(root, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno),
				   "cannot create '%s': %s", root, g_strerror(errno));
	for (gsize i = 0; i < G_N_ELEMENTS(subs); i++) {
		g_autofree char *d = g_build_filename(root, subs[i], NULL);

		if (mkdir(d, 0700) < 0 && errno != EEXIST)
			return vulnid_fail(err, vulnid_status_from_errno(errno),
					   "cannot create '%s': %s", d, g_strerror(errno));
	}
	return VULNID_OK;
}

/* A GLib file error as the status its errno would have given. */
static vulnid_status
status_from_file_error(const GError *e)
{
	switch (e->domain == G_FILE_ERROR ? e->code : G_FILE_ERROR_FAILED) {
	case G_FILE_ERROR_NOSPC:
		return VULNID_ERR_NOSPACE;
	case G_FILE_ERROR_ROFS:
	case G_FILE_ERROR_ACCES:
	case G_FILE_ERROR_PERM:
		return VULNID_ERR_READONLY;
	case G_FILE_ERROR_NOMEM:
		return VULNID_ERR_NOMEM;
	case G_FILE_ERROR_NOENT:
		return VULNID_ERR_NOTFOUND;
	case G_FILE_ERROR_EXIST:
		return VULNID_ERR_EXISTS;
	default:
		return VULNID_ERR_IO;
	}
}

/* Deliver into a Maildir under a name fixed by the outbox item, so that a
 * second attempt after a crash finds the first one instead of delivering
 * twice.  The file is written durably in tmp/ (GLib writes it beside and
 * renames it, so a link planted there is replaced, never followed), then
 * linked into new/. */
static vulnid_status
maildir_deliver(const char *root, const char *name, const guint8 *data, gsize len, GError **err)
{
	g_autofree char *tmp = NULL;
	g_autofree char *dst = NULL;
	g_autoptr(GString) lf = g_string_sized_new(len);
	g_autoptr(GError) fe = NULL;
	vulnid_status s;

	s = mkdir_maildir(root, err);
	if (s != VULNID_OK)
		return s;
	dst = g_strdup_printf("%s/new/%s", root, name);
	if (g_file_test(dst, G_FILE_TEST_EXISTS))
		return VULNID_OK;
	/* Maildir files use the local line end. */
	for (gsize i = 0; i < len; i++)
		if (!(data[i] == '\r' && i + 1 < len && data[i + 1] == '\n'))
			g_string_append_c(lf, (char) data[i]);
	tmp = g_strdup_printf("%s/tmp/%s.%d", root, name, (int) getpid());
	if (!g_file_set_contents_full(tmp, lf->str, (gssize) lf->len,
				      G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
				      0600, &fe)) {
		unlink(tmp);
		return vulnid_fail(err, status_from_file_error(fe), "cannot write '%s': %s", tmp,
				   fe->message);
	}
	if (link(tmp, dst) < 0 && errno != EEXIST) {
		s = vulnid_fail(err, vulnid_status_from_errno(errno),
				"cannot deliver to '%s': %s", dst, g_strerror(errno));
		unlink(tmp);
		return s;
	}
	unlink(tmp);
	return VULNID_OK;
}

static char *
maildir_name(gint64 id, const char *created, const char *msgid)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_iso8601(created, NULL);
	g_autofree char *h = g_compute_checksum_for_string(G_CHECKSUM_SHA256, msgid, -1);
	g_autofree char *host = g_strdup(g_get_host_name());

	g_strdelimit(host, "/:", '_');
	return g_strdup_printf("%" G_GINT64_FORMAT ".M%" G_GINT64_FORMAT "Q%.12s.%s",
			       t != NULL ? g_date_time_to_unix(t) : (gint64) 0, id, h, host);
}

typedef struct {
	gint64 id;
	char *created;
	char *msgid;
	char *entry;
	char *kind;
	char *envelope_from;
	gint64 attempts;
	gint64 cause;
	gint64 claim_until;	/* unix time our claim on it lapses */
	GPtrArray *pending;	/* char*: recipients still to deliver */
	GPtrArray *results;	/* smtp_rcpt-like: filled by the transport */
	GBytes *signed_now;	/* signed in this run: kept if it must go out again */
} outbox_item;

typedef struct {
	char *address;
	smtp_result result;
	char *reply;
} rcpt_result;

static void
rcpt_result_free(gpointer p)
{
	rcpt_result *r = p;

	g_free(r->address);
	g_free(r->reply);
	g_free(r);
}

static void
outbox_item_free(gpointer p)
{
	outbox_item *it = p;

	g_free(it->created);
	g_free(it->msgid);
	g_free(it->entry);
	g_free(it->kind);
	g_free(it->envelope_from);
	g_ptr_array_unref(it->pending);
	g_ptr_array_unref(it->results);
	if (it->signed_now != NULL)
		g_bytes_unref(it->signed_now);
	g_free(it);
}

static void
item_result(outbox_item *it, const char *address, smtp_result result, const char *reply)
{
	rcpt_result *r = g_new0(rcpt_result, 1);

	r->address = g_strdup(address);
	r->result = result;
	r->reply = g_strdup(reply);
	g_ptr_array_add(it->results, r);
}

static vulnid_status outbox_keep_signed(store *st, const vulnid_config *cfg, outbox_item *it,
				       const char *now, GError **err);

/* The state a verdict moves a pending recipient to. */
static const char *
verdict_state(smtp_result result, gboolean expired)
{
	return result == SMTP_RESULT_DELIVERED ? "delivered"
	     : result == SMTP_RESULT_PERMANENT || expired ? "failed" : "deferred";
}

/* What recording one item's verdicts found. */
typedef struct {
	gboolean expired;	/* past the lifetime: a temporary failure is final */
	const char *reply;	/* the first reply that was not a delivery */
	GPtrArray *failed_now;	/* const char*: recipients that failed now */
	GPtrArray *failed_why;	/* char*: why, one for each */
	GString *late;		/* recipients settled before (a fast bounce) */
} item_verdicts;

/* Apply the transport's verdict for each recipient still pending. */
static vulnid_status
record_verdicts(store *st, const vulnid_config *cfg, outbox_item *it, const char *now,
		item_verdicts *v, GError **err)
{
	for (guint i = 0; i < it->results->len; i++) {
		rcpt_result *r = g_ptr_array_index(it->results, i);
		const char *rs = verdict_state(r->result, v->expired);
		gboolean changed;
		vulnid_status s;

		if (r->result != SMTP_RESULT_DELIVERED && v->reply == NULL)
			v->reply = r->reply;
		s = store_outbox_recipient_verdict(st, it->id, r->address, rs, r->reply, now, &changed, err);
		if (s != VULNID_OK)
			return s;
		if (!changed) {
			/* settled meanwhile (a bounce came first) */
			g_string_append_printf(v->late, "%s%s", v->late->len ? ", " : "", r->address);
		} else if (strcmp(rs, "failed") == 0) {
			g_ptr_array_add(v->failed_now, r->address);
			g_ptr_array_add(v->failed_why, r->result == SMTP_RESULT_PERMANENT ? g_strdup(r->reply)
				: g_strdup_printf("gave up after %" G_GINT64_FORMAT " s: %s", cfg->lifetime, r->reply));
		}
	}
	return VULNID_OK;
}

/* When a deferred item is due again: 1 min doubling per attempt, capped. */
static char *
next_attempt_after(GDateTime *t, gint64 attempts)
{
	gint64 delay = OUTBOX_BACKOFF_FIRST;
	g_autoptr(GDateTime) next = NULL;

	for (gint64 i = 0; i < attempts && delay < OUTBOX_BACKOFF_MAX; i++)
		delay *= 2;
	delay = MIN(delay, OUTBOX_BACKOFF_MAX);
	next = g_date_time_add_seconds(t, (gdouble) delay);
	return g_date_time_format(next, "%Y-%m-%dT%H:%M:%SZ");
}

/* The audit event of the outcome: "failed" with the lifetime as its
 * reason when the item gave up now, else named after the state. */
static audit_event *
outcome_event(const vulnid_config *cfg, outbox_item *it, const char *state, item_verdicts *v,
	      const char *next_s)
{
	g_autoptr(GString) to = g_string_new(NULL);
	audit_event *ev;

	if (strcmp(state, "failed") == 0 && v->expired && v->reply != NULL && v->failed_now->len > 0) {
		g_autofree char *why = g_strdup_printf("gave up after %" G_GINT64_FORMAT " s: %s",
						       cfg->lifetime, v->reply);

		ev = audit_event_new("failed", it->entry, it->msgid);
		audit_event_str(ev, "reason", why);
	} else {
		ev = audit_event_new(state, it->entry, it->msgid);
		if (v->reply != NULL && strcmp(state, "delivered") != 0)
			audit_event_str(ev, "reason", v->reply);
	}
	audit_event_int(ev, "outbox", it->id);
	audit_event_str(ev, "kind", it->kind);
	for (guint i = 0; i < it->results->len; i++) {
		rcpt_result *r = g_ptr_array_index(it->results, i);

		g_string_append_printf(to, "%s%s", to->len ? ", " : "", r->address);
	}
	audit_event_str(ev, "to", to->str);
	if (v->late->len > 0)
		audit_event_str(ev, "settled_before", v->late->str);
	if (next_s != NULL)
		audit_event_str(ev, "next_attempt", next_s);
	return ev;
}

/* Store the transport's verdicts for one item and its new overall state,
 * with one audit event, inside the caller's transaction.  A verdict only
 * applies to a recipient still pending: one that a bounce failed while the
 * mail was on its way (a fast bounce) stays failed, whatever the server
 * said first.  Recipients that fail now are passed to on_failure. */
static vulnid_status
outbox_record(store *st, const vulnid_config *cfg, const outbox_run_opts *o, outbox_item *it,
	      outbox_run_result *res, GError **err)
{
	g_autofree char *now = store_now();
	g_autoptr(GDateTime) t = store_now_datetime();
	g_autoptr(GDateTime) created = g_date_time_new_from_iso8601(it->created, NULL);
	g_autoptr(audit_event) ev = NULL;
	g_autoptr(GPtrArray) failed_now = g_ptr_array_new();
	g_autoptr(GPtrArray) failed_why = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) late = g_string_new(NULL);
	g_autofree char *next_s = NULL;
	item_verdicts v = { FALSE, NULL, failed_now, failed_why, late };
	store_outbox_outcome out = { it->id, NULL, now, NULL, NULL, run_token, outbox_claim_token() };
	vulnid_status s;
	int pending, failed, delivered;

	v.expired = created != NULL &&
		    g_date_time_difference(t, created) / G_TIME_SPAN_SECOND > cfg->lifetime;
	s = record_verdicts(st, cfg, it, now, &v, err);
	if (s == VULNID_OK)
		s = store_outbox_tally(st, it->id, &pending, &failed, &delivered, err);
	if (s != VULNID_OK)
		return s;
	if (pending > 0) {
		if (it->signed_now != NULL) {
			s = outbox_keep_signed(st, cfg, it, now, err);
			if (s != VULNID_OK)
				return s;
		}
		next_s = next_attempt_after(t, it->attempts);
		out.state = "deferred";
		res->deferred++;
	} else if (failed > 0) {
		out.state = "failed";
		res->failed++;
	} else {
		out.state = "delivered";
		res->delivered++;
	}
	ev = outcome_event(cfg, it, out.state, &v, next_s);
	/* The claim ends with the outcome (its token stays: this run does not
	 * claim the item again).  If it lapsed and another run holds the item
	 * now, only the state derived from the recipients changes.  An item
	 * that gave up now names the lifetime as its last error. */
	if (strcmp(out.state, "failed") == 0 && v.expired && v.reply != NULL && failed_now->len > 0)
		out.error = "lifetime exceeded";
	else if (v.reply != NULL && strcmp(out.state, "delivered") != 0)
		out.error = v.reply;
	out.next_attempt = next_s;
	s = store_outbox_set_outcome(st, &out, err);
	if (s == VULNID_OK)
		s = audit_append(st, ev, err);
	if (s == VULNID_OK && failed_now->len > 0 && o->on_failure != NULL) {
		outbox_failure f = { it->id, it->kind, it->entry, it->cause, failed_now, failed_why };

		s = o->on_failure(st, cfg, &f, err);
	}
	return s;
}

vulnid_status
outbox_get_data(store *st, gint64 id, GBytes **out, GError **err)
{
	return store_outbox_data(st, id, out, err);
}

/* Claims of runs that died (killed, crashed) before recording what they
 * sent: released at once instead of when they lapse.  This is the crash
 * window of vulnid-filter(8): what such a run sent and did not record is
 * sent again. */
static vulnid_status
dead_claims(store *st, const char *now, GPtrArray *dead, GError **err)
{
	g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s = store_outbox_live_claims(st, outbox_claim_token(), run_token, now, live, err);

	for (guint i = 0; s == VULNID_OK && i < live->len; i++)
		if (!claimer_alive(g_ptr_array_index(live, i)))
			g_ptr_array_add(dead, g_strdup(g_ptr_array_index(live, i)));
	return s;
}

static vulnid_status
release_dead(store *st, GPtrArray *dead, GError **err)
{
	for (guint i = 0; i < dead->len; i++) {
		g_autoptr(audit_event) ev = NULL;
		gint64 n = 0;
		vulnid_status s = store_outbox_release_claim(st, g_ptr_array_index(dead, i), &n, err);

		if (s != VULNID_OK)
			return s;
		if (n == 0)
			continue;
		ev = audit_event_new("claim-released", NULL, NULL);
		audit_event_str(ev, "claim", g_ptr_array_index(dead, i));
		audit_event_int(ev, "items", n);
		audit_event_str(ev, "why", "the process that claimed them has ended");
		s = audit_append(st, ev, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* Claim the items of the causes from *next on, up to a batch, in the
 * caller's transaction; *next moves past the causes done. */
static vulnid_status
claim_causes(store *st, const outbox_run_opts *o, store_outbox_due *due, const char *until,
	     guint *next, GError **err)
{
	gint64 claimed = 0;

	for (; *next < o->n_causes && claimed < OUTBOX_CLAIM_BATCH; (*next)++) {
		gint64 k = 0;
		vulnid_status s;

		due->cause = o->causes[*next];
		s = store_outbox_claim_due(st, due, until, OUTBOX_CLAIM_BATCH - (int) claimed, &k, err);
		if (s != VULNID_OK)
			return s;
		claimed += k;
	}
	return VULNID_OK;
}

/* Claim the due items nobody holds, in one transaction; nothing to do (no
 * transaction, no sync) when there are none.  With a list of causes, the
 * next ones of them (*next). */
static vulnid_status
outbox_claim(store *st, const outbox_run_opts *o, const char *now, const char *until, guint *next,
	     GError **err)
{
	g_autoptr(GPtrArray) dead = g_ptr_array_new_with_free_func(g_free);
	store_outbox_due due = { o->cause, o->force, now, run_token };
	vulnid_status s;
	gboolean any = *next < o->n_causes;
	gint64 claimed = 0;

	s = dead_claims(st, now, dead, err);
	if (s == VULNID_OK && o->n_causes == 0)
		s = store_outbox_any_due(st, &due, &any, err);
	if (s != VULNID_OK)
		return s;
	if (!any && dead->len == 0)
		return VULNID_OK;
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = release_dead(st, dead, err);
	if (s == VULNID_OK && o->n_causes > 0)
		s = claim_causes(st, o, &due, until, next, err);
	else if (s == VULNID_OK)
		s = store_outbox_claim_due(st, &due, until, OUTBOX_CLAIM_BATCH, &claimed, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}

/* Claim what is due, then load every pending item this process holds a
 * live claim on (also those the filter claimed when it queued them). */
static vulnid_status
outbox_load_claimed(store *st, const outbox_run_opts *o, guint claim_seconds, guint *next,
		    GPtrArray *items, GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *until = time_after(claim_seconds);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) store_outbox_item_free);
	vulnid_status s;

	s = outbox_claim(st, o, now, until, next, err);
	if (s == VULNID_OK)
		s = store_outbox_claimed(st, outbox_claim_token(), run_token, now, rows, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < rows->len; i++) {
		store_outbox_item *row = g_ptr_array_index(rows, i);
		outbox_item *it = g_new0(outbox_item, 1);

		it->id = row->id;
		it->created = g_steal_pointer(&row->created);
		it->msgid = g_steal_pointer(&row->message_id);
		it->entry = g_steal_pointer(&row->entry);
		it->kind = g_steal_pointer(&row->kind);
		it->envelope_from = g_steal_pointer(&row->envelope_from);
		it->attempts = row->attempts;
		it->cause = row->cause;
		it->claim_until = row->claim_until;
		it->pending = g_ptr_array_new_with_free_func(g_free);
		it->results = g_ptr_array_new_with_free_func(rcpt_result_free);
		g_ptr_array_add(items, it);
		s = store_outbox_pending_recipients(st, it->id, it->pending, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* The SMTP AUTH password: first line of a file only its owner can read. */
static gboolean
read_password(const vulnid_config *cfg, char **out, char **why)
{
	g_autofree char *path = config_resolve_path(cfg, cfg->smtp_password_file);
	g_autoptr(GError) e = NULL;
	struct stat sb;
	char *text, *nl;

	if (stat(path, &sb) < 0) {
		*why = g_strdup_printf("cannot read smtp_password_file '%s': %s", path, g_strerror(errno));
		return FALSE;
	}
	if ((sb.st_mode & 077) != 0 || sb.st_uid != geteuid()) {
		*why = g_strdup_printf("smtp_password_file '%s' must be mode 0600 and owned by uid %d",
				       path, (int) geteuid());
		return FALSE;
	}
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		*why = g_strdup_printf("cannot read smtp_password_file: %s", e->message);
		return FALSE;
	}
	nl = strpbrk(text, "\r\n");
	if (nl != NULL)
		*nl = '\0';
	*out = text;
	return TRUE;
}

/* Everything the robot sends is signed with its key, when it goes out
 * (not when queued: signing waits for gpg-agent, or for a gpg run with a
 * key of another kind, which must not happen while the database is
 * locked). */
static vulnid_status
outbox_sign(const vulnid_config *cfg, GBytes *data, GBytes **out, GError **err)
{
	g_autoptr(GMimeStream) in = NULL;
	g_autoptr(GMimeParser) parser = NULL;
	g_autoptr(GMimeMessage) msg = NULL;
	g_autoptr(GByteArray) bytes = NULL;
	g_autofree char *robot = NULL;
	GMimeObject *part, *signed_part = NULL;
	vulnid_status s;

	if (strcmp(cfg->sign, "none") == 0 || crypto_home() == NULL) {
		*out = g_bytes_ref(data);
		return VULNID_OK;
	}
	s = crypto_robot_fingerprint(&robot, err);
	if (s == VULNID_ERR_CONFIG) {
		/* an instance without a key of its own sends unsigned mail */
		g_clear_error(err);
		*out = g_bytes_ref(data);
		return VULNID_OK;
	}
	if (s != VULNID_OK)
		return s;	/* the key is there but cannot be used now: wait */
	in = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(data, NULL), g_bytes_get_size(data));
	parser = g_mime_parser_new_with_stream(in);
	msg = g_mime_parser_construct_message(parser, NULL);
	if (msg == NULL)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "an outbox item does not parse");
	part = g_mime_message_get_mime_part(msg);
	if (GMIME_IS_MULTIPART_ENCRYPTED(part) || GMIME_IS_MULTIPART_SIGNED(part)) {
		*out = g_bytes_ref(data);	/* signed inside the encryption already */
		return VULNID_OK;
	}
	if (strcmp(cfg->sign, "inline") == 0 && GMIME_IS_TEXT_PART(part)) {
		g_autofree char *text = g_mime_text_part_get_text(GMIME_TEXT_PART(part));
		g_autofree char *signed_text = NULL;
		GMimeTextPart *tp;

		s = crypto_clearsign(text != NULL ? text : "", robot, &signed_text, err);
		if (s != VULNID_OK)
			return s;
		tp = g_mime_text_part_new_with_subtype("plain");
		g_mime_text_part_set_text(tp, signed_text);
		g_mime_part_set_content_encoding(GMIME_PART(tp),
			g_mime_part_get_best_content_encoding(GMIME_PART(tp), GMIME_ENCODING_CONSTRAINT_7BIT));
		signed_part = GMIME_OBJECT(tp);
	} else {
		g_autoptr(GError) e = NULL;

		signed_part = crypto_sign_mime(part, robot, &e);
		if (signed_part == NULL)
			return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign: %s",
					   e != NULL ? e->message : "unknown error");
	}
	g_mime_message_set_mime_part(msg, signed_part);
	g_object_unref(signed_part);
	bytes = outbox_serialize(msg);
	*out = g_bytes_new(bytes->data, bytes->len);
	return VULNID_OK;
}

/* The item as it goes out: signed once, then the same bytes for every
 * retry (outbox_signed), as long as [crypto] sign is what it was. */
static vulnid_status
outbox_get_signed(store *st, const vulnid_config *cfg, outbox_item *it, GBytes **out, GError **err)
{
	g_autoptr(GBytes) data = NULL;
	vulnid_status s;

	s = store_outbox_signed_get(st, it->id, cfg->sign, out, err);
	if (s != VULNID_OK || *out != NULL)
		return s;
	s = outbox_get_data(st, it->id, &data, err);
	if (s == VULNID_OK)
		s = outbox_sign(cfg, data, out, err);
	if (s == VULNID_OK && *out != data && !g_bytes_equal(*out, data)) {
		if (it->signed_now != NULL)
			g_bytes_unref(it->signed_now);
		it->signed_now = g_bytes_ref(*out);
	}
	return s;
}

/* Keep what was signed in this run for the next attempt. */
static vulnid_status
outbox_keep_signed(store *st, const vulnid_config *cfg, outbox_item *it, const char *now, GError **err)
{
	return store_outbox_signed_keep(st, it->id, cfg->sign, now, it->signed_now, err);
}

/* Seconds the session may take: the run's deadline, and never past the
 * time needed to record the outcome before the first claim lapses. */
static gint64
session_seconds(const vulnid_config *cfg, const outbox_run_opts *o, GPtrArray *items)
{
	g_autoptr(GDateTime) t = store_now_datetime();
	gint64 now = g_date_time_to_unix(t);
	gint64 left = o->deadline > 0 ? o->deadline : OUTBOX_DEFAULT_DEADLINE;

	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);

		left = MIN(left, it->claim_until - now - cfg->busy_timeout / 1000 - OUTBOX_CLAIM_MARGIN);
	}
	return left;
}

/* Whether a session that offered messages reached no server at all (no
 * connection, greeting, EHLO, STARTTLS, AUTH): then *why is the reply the
 * first recipient got. */
static gboolean
relay_unreached(GPtrArray *send, char **why)
{
	if (send->len == 0)
		return FALSE;
	for (guint i = 0; i < send->len; i++)
		if (((smtp_message *) g_ptr_array_index(send, i))->offered)
			return FALSE;
	{
		smtp_message *m = g_ptr_array_index(send, 0);
		smtp_rcpt *r = m->rcpts->len > 0 ? g_ptr_array_index(m->rcpts, 0) : NULL;

		*why = g_strdup(r != NULL && r->reply != NULL ? r->reply : "the relay was not reached");
	}
	return TRUE;
}

/* Deliver the items over one session; *unreached: why the relay was not
 * reached at all, or NULL. */
static void
deliver_smtp(store *st, const vulnid_config *cfg, GPtrArray *items, const outbox_run_opts *o,
	     char **unreached)
{
	g_autoptr(GPtrArray) msgs = g_ptr_array_new_with_free_func((GDestroyNotify) smtp_message_free);
	g_autofree char *password = NULL;
	g_autofree char *why = NULL;
	smtp_settings ss = { 0 };

	ss.host = cfg->smtp_host;
	ss.port = cfg->smtp_port;
	ss.starttls = strcmp(cfg->starttls, "required") == 0 ? SMTP_STARTTLS_REQUIRED
		    : strcmp(cfg->starttls, "no") == 0 ? SMTP_STARTTLS_NO : SMTP_STARTTLS_IF_AVAILABLE;
	/* remote (the default): a relay on this machine is trusted as the
	 * machine is; Debian's MTA comes with a self-signed certificate */
	ss.tls = cfg->tls_fingerprints != NULL ? SMTP_TLS_PIN
	       : strcmp(cfg->tls_verify, "no") == 0 ? SMTP_TLS_ENCRYPT
	       : strcmp(cfg->tls_verify, "remote") == 0 && transport_host_is_loopback(cfg->smtp_host) ? SMTP_TLS_ENCRYPT
	       : SMTP_TLS_VERIFY;
	ss.ca_file = cfg->tls_ca_file;
	ss.fingerprints = cfg->tls_fingerprints;
	ss.client_dir = cfg->dir;
	ss.timeout = (int) cfg->smtp_timeout;
	ss.helo = cfg->helo;
	if (*cfg->smtp_user != '\0') {
		ss.user = cfg->smtp_user;
		if (*cfg->smtp_password_file == '\0')
			why = g_strdup("smtp_user is set but smtp_password_file is not");
		else if (read_password(cfg, &password, &why))
			ss.password = password;
	}
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		g_autoptr(GBytes) data = NULL;
		g_autoptr(GError) e = NULL;
		smtp_message *m;

		if (why != NULL || outbox_get_signed(st, cfg, it, &data, &e) != VULNID_OK) {
			for (guint j = 0; j < it->pending->len; j++)
				item_result(it, g_ptr_array_index(it->pending, j), SMTP_RESULT_TEMPORARY,
					    why != NULL ? why : e->message);
			g_ptr_array_add(msgs, NULL);
			continue;
		}
		m = smtp_message_new(it->envelope_from, data);
		for (guint j = 0; j < it->pending->len; j++)
			smtp_message_add_rcpt(m, g_ptr_array_index(it->pending, j));
		g_ptr_array_add(msgs, m);
	}
	{
		g_autoptr(GPtrArray) send = g_ptr_array_new();

		for (guint i = 0; i < msgs->len; i++)
			if (g_ptr_array_index(msgs, i) != NULL)
				g_ptr_array_add(send, g_ptr_array_index(msgs, i));
		/* reckoned now, after the signing: the session must end in
		 * time to record its outcome before the claims lapse */
		gint64 left = session_seconds(cfg, o, items);

		if (left > 0) {
			smtp_send(&ss, send, (guint) left, NULL);
			relay_unreached(send, unreached);
		} else
			for (guint i = 0; i < send->len; i++) {
				smtp_message *m = g_ptr_array_index(send, i);

				for (guint j = 0; j < m->rcpts->len; j++) {
					smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

					g_free(r->reply);
					r->reply = g_strdup("not sent: its delivery claim ran out before the session could start");
				}
			}
	}
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		smtp_message *m = g_ptr_array_index(msgs, i);

		for (guint j = 0; m != NULL && j < m->rcpts->len; j++) {
			smtp_rcpt *r = g_ptr_array_index(m->rcpts, j);

			item_result(it, r->address, r->result, r->reply);
		}
	}
}

static void
deliver_maildir(store *st, const vulnid_config *cfg, GPtrArray *items)
{
	for (guint i = 0; i < items->len; i++) {
		outbox_item *it = g_ptr_array_index(items, i);
		g_autoptr(GBytes) data = NULL;
		g_autoptr(GError) e = NULL;
		g_autofree char *name = maildir_name(it->id, it->created, it->msgid);
		vulnid_status ds = outbox_get_signed(st, cfg, it, &data, &e);

		if (ds == VULNID_OK)
			ds = maildir_deliver(cfg->maildir, name, g_bytes_get_data(data, NULL),
					     g_bytes_get_size(data), &e);
		for (guint j = 0; j < it->pending->len; j++)
			item_result(it, g_ptr_array_index(it->pending, j),
				    ds == VULNID_OK ? SMTP_RESULT_DELIVERED : SMTP_RESULT_TEMPORARY,
				    ds == VULNID_OK ? "delivered to the maildir" : e->message);
	}
}

/* Record the outcomes, up to 100 items per transaction: a commit is a
 * sync of the database, which costs more than sending the mail.  A busy
 * database is waited for again, as long as the claims last; what cannot
 * be recorded stays claimed until the claim lapses (or this process ends),
 * and is not sent again by this run. */
static vulnid_status
outbox_record_all(store *st, const vulnid_config *cfg, const outbox_run_opts *o, GPtrArray *items,
		  outbox_run_result *res, GError **err)
{
	vulnid_status s = VULNID_OK;
	guint i = 0, busy = 0;

	while (i < items->len) {
		guint end = MIN(items->len, i + OUTBOX_RECORD_BATCH);
		outbox_run_result r = *res;
		guint j;

		s = store_begin(st, err);
		for (j = i; s == VULNID_OK && j < end; j++)
			s = outbox_record(st, cfg, o, g_ptr_array_index(items, j), &r, err);
		if (s == VULNID_OK)
			s = store_commit(st, err);
		else
			store_rollback(st);
		if (s == VULNID_ERR_BUSY && ++busy < 10 &&
		    session_seconds(cfg, o, items) + OUTBOX_CLAIM_MARGIN > 5) {
			g_clear_error(err);
			continue;
		}
		if (s != VULNID_OK)
			break;
		*res = r;
		i = end;
	}
	return s;
}

/* The relay could not be reached: every other item due now goes with the
 * ones this round tried, deferred until its own next attempt, instead of
 * a session for each hundred (an outage of an hour would otherwise make
 * each run connect for every item it holds).  One transaction and one
 * audit event (relay-down) for all of them; items past their lifetime are
 * left to be tried, and given up, one by one. */
static vulnid_status
outbox_defer_unreached(store *st, const vulnid_config *cfg, const char *why, outbox_run_result *res,
		       GError **err)
{
	g_autoptr(GDateTime) t = store_now_datetime();
	g_autoptr(GDateTime) oldest = g_date_time_add_seconds(t, (gdouble) -cfg->lifetime);
	g_autofree char *now = g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
	g_autofree char *after = g_date_time_format(oldest, "%Y-%m-%dT%H:%M:%SZ");
	g_autofree char *relay = g_strdup_printf(strchr(cfg->smtp_host, ':') != NULL ? "[%s]:%d" : "%s:%d",
						 cfg->smtp_host, cfg->smtp_port);
	g_autoptr(audit_event) ev = NULL;
	gint64 items = 0;
	vulnid_status s = store_begin(st, err);

	if (s == VULNID_OK)
		s = store_outbox_defer_unreached(st, why, now, after, &items, err);
	if (s == VULNID_OK && items > 0) {
		ev = audit_event_new("relay-down", NULL, NULL);
		audit_event_str(ev, "relay", relay);
		audit_event_str(ev, "reason", why);
		audit_event_int(ev, "items", items);
		s = audit_append(st, ev, err);
	}
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	s = store_commit(st, err);
	if (s == VULNID_OK)
		res->deferred += (guint) items;
	return s;
}

/* One round: claim (up to OUTBOX_CLAIM_BATCH), deliver in one session,
 * record.  *n is how many items it tried; *relay_down is set when the
 * relay was not reached (the run ends: the rest was deferred with it). */
static vulnid_status
outbox_round(store *st, const vulnid_config *cfg, const outbox_run_opts *o, outbox_run_result *res,
	     guint *n, guint *next, gboolean *relay_down, GError **err)
{
	g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(outbox_item_free);
	g_autofree char *unreached = NULL;
	vulnid_status s;

	*n = 0;
	s = outbox_load_claimed(st, o, outbox_claim_seconds(cfg, o->deadline), next, items, err);
	if (s != VULNID_OK || items->len == 0)
		return s;
	*n = items->len;
	if (cfg->maildir != NULL)
		deliver_maildir(st, cfg, items);
	else
		deliver_smtp(st, cfg, items, o, &unreached);
	s = outbox_record_all(st, cfg, o, items, res, err);
	if (s == VULNID_OK && unreached != NULL) {
		s = outbox_defer_unreached(st, cfg, unreached, res, err);
		*relay_down = TRUE;
	}
	return s;
}

vulnid_status
outbox_run(store *st, const vulnid_config *cfg, const outbox_run_opts *opts, outbox_run_result *res,
	   GError **err)
{
	gint64 start = g_get_monotonic_time();
	guint budget = opts->deadline > 0 ? opts->deadline : OUTBOX_DEFAULT_DEADLINE;
	guint total = 0, n, next = 0;	/* next: the first cause not claimed yet */
	gboolean relay_down = FALSE;
	vulnid_status s;

	memset(res, 0, sizeof *res);
	g_clear_pointer(&run_token, g_free);
	s = claim_token_ready(err);
	if (s == VULNID_OK)
		s = new_claim_token(&run_token, err);
	if (s != VULNID_OK)
		return s;
	/* Round after round, so that concurrent runs share the work; what
	 * on_failure queues (the researcher's notice) is due at once and goes
	 * out in the next round. */
	do {
		outbox_run_opts o = *opts;
		gint64 spent = (g_get_monotonic_time() - start) / G_USEC_PER_SEC;

		if (spent >= budget)
			break;
		o.deadline = budget - (guint) spent;
		s = outbox_round(st, cfg, &o, res, &n, &next, &relay_down, err);
		if (s != VULNID_OK)
			return s;
		total += n;
	} while ((n > 0 || next < opts->n_causes) && total < OUTBOX_RUN_MAX && !relay_down);
	return VULNID_OK;
}

vulnid_status
outbox_retry(store *st, gint64 id, GError **err)
{
	g_autofree char *now = store_now();
	g_autoptr(audit_event) ev = NULL;
	gboolean found;
	vulnid_status s;

	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = store_outbox_requeue(st, id, now, &found, err);
	if (s == VULNID_OK && !found)
		s = vulnid_fail(err, VULNID_ERR_NOTFOUND,
				"no undelivered outbox item %" G_GINT64_FORMAT, id);
	if (s == VULNID_OK) {
		ev = audit_event_new("retry", NULL, NULL);
		audit_event_int(ev, "outbox", id);
		s = audit_append(st, ev, err);
	}
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}

void
outbox_ref_free(outbox_ref *r)
{
	if (r == NULL)
		return;
	g_free(r->kind);
	g_free(r->entry);
	g_free(r->message_id);
	g_free(r);
}

vulnid_status
outbox_find_by_envelope(store *st, const char *address, outbox_ref **out, GError **err)
{
	return store_outbox_find_by_envelope(st, address, out, err);
}

vulnid_status
outbox_find_by_message_id(store *st, const char *msgid, outbox_ref **out, GError **err)
{
	return store_outbox_find_by_message_id(st, msgid, out, err);
}

/* The item's own address for what a DSN names: its Original-Recipient,
 * else its Final-Recipient, else (one-recipient items) the only one. */
static vulnid_status
bounced_address(store *st, gint64 id, const char *original, const char *final, char **out,
		GError **err)
{
	const char *cands[] = { original, final };
	vulnid_status s = VULNID_OK;

	for (gsize i = 0; i <= G_N_ELEMENTS(cands) && *out == NULL && s == VULNID_OK; i++) {
		if (i < G_N_ELEMENTS(cands) && (cands[i] == NULL || *cands[i] == '\0'))
			continue;
		s = store_outbox_recipient_match(st, id, i < G_N_ELEMENTS(cands) ? cands[i] : NULL,
						 out, err);
	}
	return s;
}

vulnid_status
outbox_mark_bounced(store *st, gint64 id, const char *original, const char *final, const char *reason,
		    char **failed, GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *address = NULL;
	gboolean changed;
	vulnid_status s;
	int pending, nfailed, delivered;

	*failed = NULL;
	s = bounced_address(st, id, original, final, &address, err);
	if (s != VULNID_OK || address == NULL)
		return s;
	/* Forward only: a recipient already failed stays as it was (a second
	 * DSN for it is recorded, but fails nothing and tells nobody again). */
	s = store_outbox_recipient_bounce(st, id, address, reason, now, &changed, err);
	if (s != VULNID_OK || !changed)
		return s;
	*failed = g_steal_pointer(&address);
	s = store_outbox_tally(st, id, &pending, &nfailed, &delivered, err);
	if (s != VULNID_OK || pending > 0)
		return s;
	return store_outbox_fail(st, id, reason, now, err);
}
