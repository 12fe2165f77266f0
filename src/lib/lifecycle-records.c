/* lifecycle-records.c - what one mail appends: command results for the
 * reply, audit events of commands, records (sealed when the entry is
 * embargoed), the attachments they carry
 *
 * Part of the lifecycle (lifecycle.h); the files share
 * lifecycle-internal.h and run inside the intake transaction. */

#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "commands.h"
#include "crypto.h"
#include "disclosure.h"
#include "embargo.h"
#include "entry.h"
#include "ids.h"
#include "lifecycle.h"
#include "notify.h"
#include "outbox.h"
#include "random.h"
#include "render.h"
#include "policy.h"
#include "ratelimit.h"
#include "request.h"
#include "template.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"
#include "lifecycle-internal.h"

/* ---- one mail: results, audit, records ---------------------------------------- */


void
lc_out_result(lc_mail *l, const char *line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

void
lc_out_result(lc_mail *l, const char *line, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (line != NULL)
		g_string_append_printf(l->out, "> %s\n", line);
	{
		/* the robot's sentences wrapped at 78; what is indented more
		 * (an entry looked up) is as its maker wrote it */
		g_autofree char *all = g_strdup_printf("  %s", msg);
		g_auto(GStrv) lines = g_strsplit(all, "\n", -1);

		for (char **p = lines; *p != NULL; p++) {
			g_autofree char *w = strspn(*p, " ") >= 4 ? g_strdup(*p) : text_wrap(*p, 78);

			g_string_append_printf(l->out, "%s\n", w);
		}
		g_string_append_c(l->out, '\n');
	}
}

vulnid_status
lc_audit_command(lc_mail *l, const char *entry_id, const char *word, const char *result,
	      const char *detail, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("command", entry_id, l->c->m->message_id);

	audit_event_str(ev, "command", word);
	audit_event_str(ev, "result", result);
	audit_event_str(ev, "detail", detail);
	return audit_append(l->c->st, ev, err);
}


char *
lc_redact(const char *s, const researcher_identity *id)
{
	return researcher_identity_redact(id, s);
}

/* Archive the attachments once.  For a sealed record only what the
 * commitment covers is computed: the bytes stay in the archived mail
 * until the release stores them. */
vulnid_status
lc_store_attachments(lc_mail *l, gboolean store_blobs, GError **err)
{
	mail_ctx *c = l->c;

	if (l->attachments != NULL)
		return VULNID_OK;
	l->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	return mail_store_attachments(c, store_blobs, l->attachments, err);
}


/* The auth object of a record of this mail in role ri: the mail's, with
 * the role, how it was established and, for an endorsed contributor, who
 * endorsed the key, how and for which fields; the robot's own records
 * (deliveries) name no mail's signer. */
static char *
record_auth(lc_mail *l, gboolean withhold, const role_info *ri)
{
	g_autofree char *a = NULL;
	GString *s;
	gboolean first = FALSE;

	if (strcmp(ri->role, "robot") == 0)
		return g_strdup("{\"method\":\"robot\",\"role\":\"robot\",\"how\":\"robot\"}");
	a = mail_record_auth(l->c, withhold, ri->role, ri->how);
	if (!ri->contributor || strcmp(ri->role, "contributor") != 0)
		return g_steal_pointer(&a);
	s = g_string_new_len(a, (gssize) strlen(a) - 1);
	canonjson_member_str(s, &first, "endorsed_by", ri->endorsed_by);
	canonjson_member_str(s, &first, "endorsement", ri->endorsement);
	if (ri->endorsed_fields[0] != '\0')
		canonjson_member_str(s, &first, "fields", ri->endorsed_fields);
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

/* Append a record to an entry; audited; subscribers are told.  A sealed
 * record (text added to an embargoed entry) keeps its content only
 * encrypted to the robot, like the entry's first record, until the
 * release discloses it; its hash is the commitment to the content.  It
 * is sent on to the keys given access (lifecycle-access.c). */
vulnid_status
lc_append_record(lc_mail *l, entry *e, const char *kind, const role_info *ri,
	      const char *fields, const char *body, const GPtrArray *attachments,
	      gboolean seal, gint64 *seq_out, GError **err)
{
	mail_ctx *c = l->c;
	const char *entry_id = e->id;
	gboolean anonymous = lc_entry_is_anonymous(e);
	gboolean by_robot = strcmp(ri->role, "robot") == 0;
	/* Hers: the creator's, or signed by her key although it grants no
	 * role here (another From, a text that does not name the entry). */
	gboolean hers = anonymous && (strcmp(ri->role, "creator") == 0 || lc_signed_by_researcher(ri));
	g_autofree char *auth = record_auth(l, hers, ri);
	g_autoptr(researcher_identity) hide = anonymous ? lc_researcher_of(l, e, ri) : NULL;
	g_autofree char *robot_addr = by_robot ? g_strdup(c->cfg->request_address) : NULL;
	g_autofree char *subject = by_robot ? g_strdup("") : hide != NULL ? lc_redact(l->subject, hide)
									   : g_strdup(l->subject);
	g_autoptr(GPtrArray) atts = NULL;
	g_autofree char *canon = NULL;
	g_autofree char *sha = NULL;
	g_autofree char *sealed = NULL;
	g_autoptr(audit_event) ev = NULL;
	store_record rec = { 0 };
	vulnid_status s;
	gint64 seq, row;

	if (attachments != NULL) {
		atts = mail_record_attachments(attachments, hide, hers, err);
		if (atts == NULL)
			return VULNID_ERR_TEMP;
	}
	s = store_lifecycle_next_seq(c->st, entry_id, &seq, err);
	if (s != VULNID_OK)
		return s;
	canon = entry_record_canonical(entry_id, seq, c->now, kind, auth, subject, fields, body, atts);
	sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
	if (seal) {
		g_autofree char *robot = NULL;
		g_autoptr(GBytes) clear = g_bytes_new(canon, strlen(canon));
		g_autoptr(GBytes) ct = NULL;

		s = crypto_robot_fingerprint(&robot, err);
		if (s == VULNID_OK)
			s = crypto_seal(clear, robot, &ct, err);
		if (s != VULNID_OK)
			return s;
		sealed = g_strndup(g_bytes_get_data(ct, NULL), g_bytes_get_size(ct));
	}
	rec.entry = entry_id;
	rec.seq = seq;
	rec.created = c->now;
	rec.kind = kind;
	rec.message = c->msg_row;
	rec.author = by_robot ? robot_addr : lc_sender_of(c);
	rec.author_name = by_robot ? NULL : c->m->from_name;
	rec.role = ri->role;
	rec.auth = auth;
	rec.subject = seal ? NULL : subject;
	rec.fields = seal ? "[]" : fields;
	rec.body = seal ? "" : body;
	rec.sha256 = sha;
	rec.sealed = sealed;
	s = store_record_insert(c->st, &rec, &row, err);
	if (s == VULNID_OK)
		s = mail_record_signer(c, row, auth, err);
	if (s != VULNID_OK)
		return s;
	/* the loaded entry gets it too, in clear, for the mail it causes */
	entry_add_record(e, &rec, row, subject, fields, body, atts, c->signer);
	for (guint i = 0; atts != NULL && i < atts->len; i++) {
		const entry_attachment *a = g_ptr_array_index(atts, i);

		/* A sealed record's attachments are stored at its release; what
		 * it withholds is kept aside now, as its key is. */
		if (!seal || a->salt != NULL)
			s = entry_attachment_store(c->st, row, (int) i, a, err);
		if (s != VULNID_OK)
			return s;
	}
	ev = audit_event_new("recorded", entry_id, c->m->message_id);
	audit_event_int(ev, "seq", seq);
	audit_event_str(ev, "kind", kind);
	audit_event_str(ev, "role", ri->role);
	audit_event_str(ev, "how", ri->how);
	audit_event_str(ev, "sha256", sha);
	if (seal)
		audit_event_str(ev, "sealed", "yes");
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	if (seq_out != NULL)
		*seq_out = seq;
	s = lc_after_record(l, entry_id, seq, err);
	if (s == VULNID_OK && seal)
		s = lc_deliver_sealed(l, e, seq, err);
	return s;
}

vulnid_status
lc_append_command_record(lc_mail *l, entry *e, const role_info *ri, const char *const *kv,
		      gint64 *seq, GError **err)
{
	g_autofree char *f = lc_fields_json(kv);
	/* On an embargoed entry what a command says (reasons, aliases) is
	 * sealed too; only a moved embargo date is public, like the first,
	 * and who asked for access and was given it (the public view shows
	 * that a key was given access, and when). */
	gboolean pub = kv != NULL && kv[0] != NULL &&
		       (g_ascii_strcasecmp(kv[0], "Embargo") == 0 || g_ascii_strcasecmp(kv[0], "Access-Request") == 0 ||
			g_ascii_strcasecmp(kv[0], "Access-Grant") == 0);
	gboolean seal = entry_embargoed(e) && !pub;

	return lc_append_record(l, e, "command", ri, f, "", NULL, seal, seq, err);
}
