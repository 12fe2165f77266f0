/* intake.c - one mail: spool, parse, record, assign, reply; all of its
 * effects in one transaction */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "authres.h"
#include "canonjson.h"
#include "entry.h"
#include "header.h"
#include "ids.h"
#include "intake.h"
#include "lifecycle.h"
#include "mailctx.h"
#include "disclosure.h"
#include "dsn.h"
#include "message.h"
#include "notify.h"
#include "loop.h"
#include "outbox.h"
#include "random.h"
#include "render.h"
#include "policy.h"
#include "hashcash.h"
#include "ratelimit.h"
#include "timelimit.h"
#include "request.h"
#include "store.h"
#include "store-audit.h"
#include "store-intake.h"
#include "template.h"
#include "text.h"
#include "tokens.h"

typedef mail_ctx intake_ctx;


static char *
join_lines(GPtrArray *a, const char *bullet)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; a != NULL && i < a->len; i++)
		g_string_append_printf(s, "%s%s\n", bullet, (const char *) g_ptr_array_index(a, i));
	return g_string_free(s, FALSE);
}

/* The code of the first problem alone (a problem's sentence may quote the
 * mail). */
static char *
problem_codes(const message *m)
{
	return g_strdup_printf("%s (the details are sealed with the mail)", m->problem);
}

/* Malformed mail: archived, quarantined, and the sender told what to fix.
 * Sealed mail (it asked for an embargo) keeps its problems out of the
 * quarantine row and the audit log: they may quote it. */
static vulnid_status
intake_malformed(intake_ctx *c, gboolean sealed, GError **err)
{
	g_autofree char *detail = sealed ? problem_codes(c->m) : join_lines(c->m->problems, "");
	g_autofree char *list = join_lines(c->m->problems, "  - ");
	g_autoptr(GHashTable) vars = NULL;
	vulnid_status s;

	g_strchomp(detail);
	s = mail_quarantine(c, c->m->problem, detail, err);
	if (s != VULNID_OK)
		return s;
	vars = mail_template_vars(c);
	g_hash_table_insert(vars, "errors", g_steal_pointer(&list));
	g_hash_table_insert(vars, "what", g_strdup("your mail could not be read as a request"));
	return mail_reply(c, "error", "error.txt", vars, NULL, NULL, err);
}

static vulnid_status
intake_rejected(intake_ctx *c, const request *r, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);
	g_autofree char *detail = join_lines(r->errors, "");
	g_autoptr(audit_event) ev = audit_event_new("rejected", NULL, c->m->message_id);
	vulnid_status s;

	g_strchomp(detail);
	audit_event_str(ev, "reason", detail);
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	c->res->outcome = INTAKE_REJECTED;
	c->res->reason = g_strdup(detail);
	g_hash_table_insert(vars, "errors", join_lines(r->errors, "  - "));
	g_hash_table_insert(vars, "what", g_strdup("no identifier was assigned"));
	return mail_reply(c, "error", "error.txt", vars, NULL, NULL, err);
}

static vulnid_status
intake_help(intake_ctx *c, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);

	c->res->outcome = INTAKE_HELP;
	return mail_reply(c, "help", "help.txt", vars, NULL, NULL, err);
}

/* The robot's public key, as an application/pgp-keys attachment. */
static vulnid_status
intake_key(intake_ctx *c, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);
	g_autoptr(GBytes) key = NULL;
	g_autofree char *fpr = NULL;
	outbox_mail mail = { 0 };
	vulnid_status s;

	c->res->outcome = INTAKE_KEY;
	if (mail_reply_address(c) == NULL)
		return VULNID_OK;
	s = crypto_robot_fingerprint(&fpr, err);
	if (s == VULNID_OK)
		s = crypto_export_public(fpr, &key, err);
	if (s != VULNID_OK)
		return s;
	g_hash_table_insert(vars, "fingerprint", g_strdup(fpr));
	mail.kind = "key";
	mail.attachment = key;
	mail.attachment_type = "application/pgp-keys";
	mail.attachment_name = "vulnid.asc";
	return mail_queue_reply(c, "key.txt", vars, &mail, err);
}

static gboolean
block_embargoed(const request_block *b)
{
	const char *emb = request_block_get(b, "Embargo");

	return emb != NULL && g_ascii_strcasecmp(emb, "no") != 0;
}

gboolean
intake_request_embargoed(const request *r)
{
	for (guint i = 0; r != NULL && i < r->blocks->len; i++)
		if (block_embargoed(g_ptr_array_index(r->blocks, i)))
			return TRUE;
	return FALSE;
}

/* The researcher's key, when the ack may quote embargoed content to it. */
static const char *
ack_encryption_key(const intake_ctx *c)
{
	g_autoptr(crypto_key) key = NULL;

	if (c->signer == NULL || crypto_get_key(c->signer, &key, NULL) != VULNID_OK ||
	    !key->can_encrypt || key->revoked || key->expired)
		return NULL;
	return c->signer;
}

/* What a request's first record says: the block as written (tokens were
 * taken out of the whole mail on the way in, mail_redact()), and for an
 * anonymous request the researcher's addresses and name replaced, so that
 * no view of the record can show them (the ack, to the researcher, quotes
 * the request as written). */
static void
request_content(intake_ctx *c, const request_block *b, const researcher_identity *id, char **subject,
		char **fields, char **body)
{
	g_autoptr(GPtrArray) kv = g_ptr_array_new_with_free_func(entry_kv_free);

	*subject = researcher_identity_redact(id, c->m->subject);
	*body = researcher_identity_redact(id, b->description);
	for (guint i = 0; i < b->fields->len; i++) {
		const request_field *f = g_ptr_array_index(b->fields, i);
		entry_kv *x = g_new0(entry_kv, 1);

		x->key = g_strdup(f->key);
		x->value = researcher_identity_redact(id, f->value);
		g_ptr_array_add(kv, x);
	}
	*fields = entry_fields_canonical(kv);
}

/* Who the sender of an anonymous request must not be seen as: her
 * addresses, her name, the key that signed; NULL when not anonymous. */
static researcher_identity *
request_researcher(const intake_ctx *c, gboolean anonymous)
{
	researcher_identity *id;

	if (!anonymous)
		return NULL;
	id = researcher_identity_new();
	researcher_identity_add_address(id, c->m->from_addr);
	researcher_identity_add_address(id, c->m->reply_addr);
	researcher_identity_add_address(id, c->envelope_sender);
	researcher_identity_add_name(id, c->m->from_name);
	researcher_identity_add_key(id, c->signer);
	return id;
}

/* What the identifiers of one request share while they are assigned. */
typedef struct {
	const request *r;
	GPtrArray *attachments;	/* entry_attachment*, stored once */
	GString *entries;	/* the ack's text about each entry */
	GString *notes;		/* what the ack says about notifications */
	GArray *blocks;		/* the identifier blocks of this year */
	char *robot;		/* the robot's fingerprint, for sealing */
	gboolean sealed_mail;	/* the request asks for an embargo */
	gboolean confirm;	/* confirm_unsigned deferred a notification */
	const char *encrypt_key;	/* the ack is encrypted to it, or NULL */
	int year;
} assign_state;

static void
assign_state_clear(assign_state *a)
{
	g_clear_pointer(&a->attachments, g_ptr_array_unref);
	if (a->entries != NULL)
		g_string_free(a->entries, TRUE);
	if (a->notes != NULL)
		g_string_free(a->notes, TRUE);
	g_clear_pointer(&a->blocks, g_array_unref);
	g_clear_pointer(&a->robot, g_free);
}

/* One block's entry and its first record, stored (sealed when embargoed). */
typedef struct {
	const request_block *b;
	gboolean embargoed;
	gboolean anonymous;
	char *id;
	char *auth;
	char *subject;
	char *fields;
	char *body;
	char *digest;
	char *sealed;		/* the record sealed to the robot, or NULL */
	researcher_identity *hide;	/* an anonymous request's sender, or NULL */
	GPtrArray *attachments;	/* entry_attachment*, as this record carries them, or NULL */
	store_record rec;
	gint64 rec_row;
} assign_block;

static void
assign_block_clear(assign_block *k)
{
	g_free(k->id);
	g_free(k->auth);
	g_free(k->subject);
	g_free(k->fields);
	g_free(k->body);
	g_free(k->digest);
	g_free(k->sealed);
	g_clear_pointer(&k->hide, researcher_identity_free);
	g_clear_pointer(&k->attachments, g_ptr_array_unref);
}

/* Number, canonical record, entry row, record row and its attachments. */
static vulnid_status
assign_store(intake_ctx *c, assign_state *a, assign_block *k, GError **err)
{
	g_autofree char *canon = NULL;
	vulnid_status s;
	gint64 number;

	s = store_next_number(c->st, a->year, a->blocks, &number, err);
	if (s != VULNID_OK)
		return s;
	k->id = ids_format(c->cfg->prefix, a->year, number);
	request_content(c, k->b, k->hide, &k->subject, &k->fields, &k->body);
	canon = entry_record_canonical(k->id, 1, c->now, "request", k->auth, k->subject, k->fields, k->body,
				       k->attachments);
	/* For an embargoed entry the digest is the commitment: the hash
	 * of the content that stays sealed until release. */
	k->digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
	if (k->embargoed) {
		g_autoptr(GBytes) clear = g_bytes_new(canon, strlen(canon));
		g_autoptr(GBytes) ct = NULL;

		s = crypto_seal(clear, a->robot, &ct, err);
		if (s != VULNID_OK)
			return s;
		k->sealed = g_strndup(g_bytes_get_data(ct, NULL), g_bytes_get_size(ct));
	}
	s = store_entry_insert(c->st, k->id, a->year, number, k->digest, c->now,
			       k->embargoed ? request_block_get(k->b, "Embargo") : NULL, c->msg_row, err);
	if (s != VULNID_OK)
		return s;
	k->rec.entry = k->id;
	k->rec.seq = 1;
	k->rec.created = c->now;
	k->rec.kind = "request";
	k->rec.message = c->msg_row;
	k->rec.author = c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
	k->rec.author_name = c->m->from_name;
	k->rec.role = "creator";
	k->rec.auth = k->auth;
	k->rec.subject = k->embargoed ? NULL : k->subject;
	k->rec.fields = k->embargoed ? "[]" : k->fields;
	k->rec.body = k->embargoed ? "" : k->body;
	k->rec.sha256 = k->digest;
	k->rec.sealed = k->sealed;
	s = store_record_insert(c->st, &k->rec, &k->rec_row, err);
	if (s == VULNID_OK)
		s = mail_record_signer(c, k->rec_row, k->auth, err);
	for (guint i = 0; s == VULNID_OK && k->attachments != NULL && i < k->attachments->len; i++) {
		const entry_attachment *x = g_ptr_array_index(k->attachments, i);

		/* sealed: stored at the release, but what is withheld now */
		if (!a->sealed_mail || x->salt != NULL)
			s = entry_attachment_store(c->st, k->rec_row, (int) i, x, err);
	}
	return s;
}

/* The "assigned" event, then who is told: the vendor and the lists, or
 * (confirm_unsigned) nobody until the sender confirms. */
static vulnid_status
assign_tell(intake_ctx *c, assign_state *a, const assign_block *k, guint bi, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("assigned", k->id, c->m->message_id);
	/* Who was told is part of the sealed content, too. */
	g_autoptr(GString) hidden = g_string_new(NULL);
	vulnid_status s;

	audit_event_str(ev, "digest", k->digest);
	audit_event_int(ev, "block", bi + 1);
	if (k->embargoed)
		audit_event_str(ev, "embargo", request_block_get(k->b, "Embargo"));
	else
		audit_event_str(ev, "title", request_block_title(k->b, c->m->subject));
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	if (lifecycle_confirm_unsigned(c->cfg) && c->signer == NULL) {
		/* Told only once the sender proves a working mailbox. */
		a->confirm = TRUE;
		return lifecycle_defer_notify(c, k->id, err);
	}
	s = notify_vendor(c->st, c->cfg, c->msg_row, k->id,
			  k->embargoed && a->encrypt_key == NULL ? hidden : a->notes, err);
	if (s == VULNID_OK)
		s = notify_announce(c->st, c->cfg, c->msg_row, k->id, err);
	return s;
}

/* The creator's token (unsigned mail), and the ack's text about the entry:
 * what it now is, from the creator's view of it, as recorded. */
static vulnid_status
assign_ack_entry(intake_ctx *c, assign_state *a, const assign_block *k, GError **err)
{
	g_autofree char *token = NULL;
	const char *to = c->m->reply_addr != NULL ? c->m->reply_addr : c->envelope_sender;
	g_autoptr(entry) made = NULL;
	g_autoptr(entry_view) view = NULL;

	if (c->signer == NULL && to != NULL && config_address_valid(to)) {
		vulnid_status s = tokens_issue(c->st, k->id, "creator", to, &token, err);

		if (s != VULNID_OK)
			return s;
	}
	made = entry_new_empty(k->id, c->now);
	g_free(made->digest);
	made->digest = g_strdup(k->digest);
	made->embargo = g_strdup(k->embargoed ? request_block_get(k->b, "Embargo") : NULL);
	entry_add_record(made, &k->rec, k->rec_row, k->subject, k->fields, k->body,
			 k->attachments, c->signer);
	view = entry_view_new(made, AUDIENCE_CREATOR, G_MAXINT64, c->now_dt);
	render_ack_entry(a->entries, c->cfg, view, k->embargoed && a->encrypt_key == NULL, token);
	return VULNID_OK;
}

static vulnid_status
assign_one(intake_ctx *c, assign_state *a, guint bi, GError **err)
{
	assign_block k = { 0 };
	const char *anon;
	vulnid_status s;

	k.b = g_ptr_array_index(a->r->blocks, bi);
	k.embargoed = block_embargoed(k.b);
	anon = request_block_get(k.b, "Anonymous");
	k.anonymous = anon != NULL && g_ascii_strcasecmp(anon, "yes") == 0;
	k.auth = mail_record_auth(c, k.anonymous, NULL, NULL);
	k.hide = request_researcher(c, k.anonymous);
	/* An embargoed mail's attachments belong to its embargoed blocks. */
	if (k.embargoed || !a->sealed_mail) {
		k.attachments = mail_record_attachments(a->attachments, k.hide, k.anonymous, err);
		if (k.attachments == NULL) {
			assign_block_clear(&k);
			return VULNID_ERR_TEMP;
		}
	}
	s = assign_store(c, a, &k, err);
	if (s == VULNID_OK)
		s = assign_tell(c, a, &k, bi, err);
	if (s == VULNID_OK)
		s = assign_ack_entry(c, a, &k, err);
	if (s == VULNID_OK)
		g_ptr_array_add(c->res->ids, g_steal_pointer(&k.id));
	assign_block_clear(&k);
	return s;
}

/* The warnings of the ack: the request's own, an embargo asked for in
 * clear, details left out of an unencrypted ack. */
static char *
assign_warnings(const intake_ctx *c, const assign_state *a)
{
	g_autoptr(GString) w = g_string_new(NULL);

	if (a->r->warnings->len > 0) {
		g_autofree char *list = join_lines(a->r->warnings, "  - ");

		g_string_append_printf(w, "Please note:\n%s\n", list);
	}
	if (a->sealed_mail && !c->m->decrypted)
		g_string_append(w, "Warning: your request asked for an embargo but travelled unencrypted,\n"
			       "so anyone on its way could read it. The robot keeps it encrypted from\n"
			       "now on. Next time, encrypt to the robot's key (mail \"key\" to get it).\n\n");
	if (a->sealed_mail && a->encrypt_key == NULL)
		g_string_append(w, "The details of embargoed entries are not repeated here: this mail is\n"
			       "not encrypted (sign your request with a key that can encrypt to get\n"
			       "an encrypted acknowledgement).\n\n");
	if (!a->sealed_mail && c->m->decrypted)
		g_string_append(w, "Your request came encrypted but has no \"Embargo:\" line, so its entry\n"
			       "is public at once: it is announced, exported and sent to the vendor in\n"
			       "clear like any other, and this mail is not encrypted either. To keep a\n"
			       "request sealed, add a line \"Embargo: YYYY-MM-DD\" (or \"Embargo: yes\",\n"
			       "until you release it).\n\n");
	if (w->len == 0)
		return NULL;
	return text_wrap(w->str, 78);
}

/* The ack: every identifier, encrypted when the request was embargoed and
 * the sender's key can take it. */
static vulnid_status
assign_ack(intake_ctx *c, assign_state *a, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);
	g_autoptr(GString) tags = g_string_new(NULL);
	g_autofree char *reply_to = NULL;
	g_autofree char *warnings = assign_warnings(c, a);
	const char *enc[] = { a->encrypt_key, NULL };

	/* "[A] [B] title": a reply to a multi-ID ack still routes by its
	 * first tag instead of becoming a new request. */
	for (guint i = 0; i < c->res->ids->len; i++)
		g_string_append_printf(tags, "%s%s", i ? "] [" : "", (const char *) g_ptr_array_index(c->res->ids, i));
	g_hash_table_insert(vars, "ids", g_string_free(g_steal_pointer(&tags), FALSE));
	g_hash_table_insert(vars, "entries", g_strdup(a->entries->str));
	g_hash_table_insert(vars, "count", g_strdup_printf("%u", c->res->ids->len));
	/* A Subject travels in clear even in an encrypted mail. */
	g_hash_table_insert(vars, "title",
			    g_strdup(a->sealed_mail ? "embargoed request"
						  : request_block_title(g_ptr_array_index(a->r->blocks, 0), c->m->subject)));
	g_hash_table_insert(vars, "identifiers",
			    g_strdup(c->res->ids->len == 1 ? "identifier was" : "identifiers were"));
	if (a->confirm)
		g_string_append(a->notes, "The vendor will be told and the entry announced once you confirm that\n"
				"this mailbox works: send a mail with the line \"Token: ...\" (the token\n"
				"above) to the entry's address.\n");
	if (a->notes->len > 0) {
		g_autofree char *notes = text_wrap(a->notes->str, 78);

		g_hash_table_insert(vars, "notification", g_strdup_printf("%s\n", notes));
	}
	if (warnings != NULL)
		g_hash_table_insert(vars, "warnings", g_steal_pointer(&warnings));
	if (c->res->ids->len == 1)
		reply_to = g_strdup_printf("%s+%s@%s", c->cfg->request_local,
					   (const char *) g_ptr_array_index(c->res->ids, 0), c->cfg->domain);
	return mail_reply_encrypted(c, "ack", "ack.txt", vars,
				    c->res->ids->len == 1 ? g_ptr_array_index(c->res->ids, 0) : NULL,
				    reply_to, a->encrypt_key != NULL ? enc : NULL, err);
}

/* A new request: an identifier for each block, in the mail's transaction,
 * then the ack. */
static vulnid_status
intake_assign(intake_ctx *c, const request *r, GError **err)
{
	assign_state a = { 0 };
	g_autofree char *blocks_spec = NULL;
	vulnid_status s = VULNID_OK;

	a.r = r;
	a.attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	a.entries = g_string_new(NULL);
	a.notes = g_string_new(NULL);
	a.sealed_mail = intake_request_embargoed(r);
	a.encrypt_key = a.sealed_mail ? ack_encryption_key(c) : NULL;
	a.year = g_date_time_get_year(c->now_dt);
	blocks_spec = config_blocks_for_year(c->cfg, a.year);
	if (!ids_blocks_parse(blocks_spec, &a.blocks, NULL))
		s = vulnid_fail(err, VULNID_ERR_CONFIG, "[ids] blocks_%d is invalid", a.year);
	/* Embargoed content is stored only encrypted to the robot. */
	if (s == VULNID_OK && a.sealed_mail)
		s = crypto_robot_fingerprint(&a.robot, err);
	if (s == VULNID_OK)
		s = mail_store_attachments(c, !a.sealed_mail, a.attachments, err);
	for (guint bi = 0; s == VULNID_OK && bi < r->blocks->len; bi++)
		s = assign_one(c, &a, bi, err);
	if (s == VULNID_OK) {
		c->res->outcome = INTAKE_ASSIGNED;
		s = assign_ack(c, &a, err);
	}
	assign_state_clear(&a);
	return s;
}

/* Whether address is our envelope sender, plain or with a VERP token. */
static gboolean
is_bounce_address(const vulnid_config *cfg, const char *address)
{
	gsize n = strlen(cfg->bounce_local);

	if (address == NULL || g_ascii_strncasecmp(address, cfg->bounce_local, n) != 0)
		return FALSE;
	if (address[n] != '@' && address[n] != '+')
		return FALSE;
	{
		const char *at = strrchr(address, '@');

		return at != NULL && g_ascii_strcasecmp(at + 1, cfg->domain) == 0;
	}
}

static vulnid_status
bounce_insert(intake_ctx *c, gint64 outbox, const dsn_recipient *d, GError **err)
{
	return store_intake_bounce_insert(c->st, c->msg_row, outbox, d->recipient, d->action, d->status,
					  d->diagnostic, c->now, err);
}

/* text with every occurrence of address rewritten (any case) put back as
 * the address sent to. */
static char *
unrewritten(const char *text, const char *rewritten, const char *sent)
{
	g_autofree char *lower = NULL;
	g_autofree char *needle = NULL;
	GString *out;
	const char *p, *hit;

	if (rewritten == NULL || *rewritten == '\0' || g_ascii_strcasecmp(rewritten, sent) == 0)
		return g_strdup(text);
	lower = g_ascii_strdown(text, -1);
	needle = g_ascii_strdown(rewritten, -1);
	out = g_string_new(NULL);
	for (p = lower; (hit = strstr(p, needle)) != NULL; p = hit + strlen(needle)) {
		g_string_append_len(out, text + (p - lower), hit - p);
		g_string_append(out, sent);
	}
	g_string_append(out, text + (p - lower));
	return g_string_free(out, FALSE);
}

/* A mail to our envelope sender: a bounce.  It is matched to the outbox
 * item by its VERP address, recorded, and never answered. */
static vulnid_status
intake_bounce(intake_ctx *c, const char *rcpt, GError **err)
{
	g_autoptr(outbox_ref) ref = NULL;
	g_autoptr(dsn_report) dsn = NULL;
	g_autoptr(GError) e = NULL;
	g_autoptr(GPtrArray) failed_addrs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) failed_why = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;

	s = outbox_find_by_envelope(c->st, rcpt, &ref, &e);
	if (s == VULNID_ERR_NOTFOUND)
		return mail_quarantine(c, "unmatched-bounce",
					 "a bounce for nothing this robot sent (no such VERP address)", err);
	if (s != VULNID_OK) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s;
	}
	dsn = c->m->mime != NULL ? dsn_parse(c->m->mime) : dsn_report_new();
	/* What the remote server says may quote the mail it bounces (one
	 * with a token); it is recorded and told to the researcher. */
	for (guint i = 0; i < dsn->recipients->len; i++) {
		dsn_recipient *d = g_ptr_array_index(dsn->recipients, i);

		s = mail_redact_string(c, &d->diagnostic, err);
		if (s != VULNID_OK)
			return s;
	}
	if (dsn->recipients->len == 0) {
		/* Not RFC 3464, but only a bounce is sent to a VERP address. */
		dsn_recipient *d = g_new0(dsn_recipient, 1);

		d->action = g_strdup("failed");
		d->diagnostic = g_strdup(c->m->subject != NULL && *c->m->subject ? c->m->subject
									     : "a non-standard bounce");
		g_ptr_array_add(dsn->recipients, d);
	}
	for (guint i = 0; i < dsn->recipients->len; i++) {
		const dsn_recipient *d = g_ptr_array_index(dsn->recipients, i);
		gboolean failed = d->action == NULL || strcmp(d->action, "failed") == 0;
		g_autofree char *reason = g_strdup_printf("%s%s%s", d->status != NULL ? d->status : "",
							  d->status != NULL && d->diagnostic != NULL ? " " : "",
							  d->diagnostic != NULL ? d->diagnostic : "");
		g_autoptr(audit_event) ev = audit_event_new(failed ? "bounced" : "dsn", ref->entry, ref->message_id);
		g_autofree char *address = NULL;

		s = bounce_insert(c, ref->id, d, err);
		if (s == VULNID_OK && failed)
			s = outbox_mark_bounced(c->st, ref->id, d->original, d->recipient, reason, &address, err);
		if (s != VULNID_OK)
			return s;
		audit_event_int(ev, "outbox", ref->id);
		audit_event_str(ev, "kind", ref->kind);
		audit_event_str(ev, "recipient", d->recipient);
		if (d->original != NULL && g_strcmp0(d->original, d->recipient) != 0)
			audit_event_str(ev, "original_recipient", d->original);
		if (address != NULL && (d->recipient == NULL || g_ascii_strcasecmp(address, d->recipient) != 0))
			audit_event_str(ev, "sent_to", address);
		audit_event_str(ev, "action", d->action);
		audit_event_str(ev, "status", d->status);
		audit_event_str(ev, "diagnostic", d->diagnostic);
		s = audit_append(c->st, ev, err);
		if (s != VULNID_OK)
			return s;
		if (address != NULL) {
			/* The failure is told under the address the robot used:
			 * a relay's rewritten one (the vendor's internal
			 * forwarding) is the operator's to see, not the
			 * researcher's. */
			g_ptr_array_add(failed_why, unrewritten(reason, d->recipient, address));
			g_ptr_array_add(failed_addrs, g_steal_pointer(&address));
		}
	}
	if (failed_addrs->len > 0) {
		outbox_failure f = { ref->id, ref->kind, ref->entry, c->msg_row, failed_addrs, failed_why };

		s = notify_delivery_failed(c->st, c->cfg, &f, err);
		if (s != VULNID_OK)
			return s;
	}
	c->res->outcome = INTAKE_BOUNCE;
	return VULNID_OK;
}

/* How the mail is authenticated, as recorded on every record it makes:
 * {"method":"pgp","fingerprint":F,"signature":SHA-256 of the raw
 * signature,...} or {"method":"none",...}.  A note says when From is not
 * one of the key's addresses: the key, not From, is the author. */
static char *
auth_json(const message *m, const char *from_verified, const char **signer)
{
	GString *s = g_string_new("{");
	gboolean first = TRUE;

	*signer = NULL;
	if (m->sig->valid) {
		g_autoptr(crypto_key) key = NULL;

		canonjson_member_str(s, &first, "method", "pgp");
		canonjson_member_str(s, &first, "fingerprint", m->sig->fpr);
		if (m->sig->raw_sha256 != NULL)
			canonjson_member_str(s, &first, "signature", m->sig->raw_sha256);
		*signer = m->sig->fpr;
		if (m->from_addr != NULL && crypto_get_key(m->sig->fpr, &key, NULL) == VULNID_OK) {
			gboolean match = FALSE;

			for (guint i = 0; i < key->emails->len; i++)
				match |= g_ascii_strcasecmp(g_ptr_array_index(key->emails, i), m->from_addr) == 0;
			if (!match)
				canonjson_member_str(s, &first, "note",
						     "From is not one of the signing key's user IDs");
		}
	} else {
		canonjson_member_str(s, &first, "method", "none");
		if (m->sig->present && m->sig->reason != NULL)
			canonjson_member_str(s, &first, "reason", m->sig->reason);
		else if (m->partial_signature)
			canonjson_member_str(s, &first, "reason", "a signature covers only part of the mail");
		else if (m->unopened_clearsigned)
			canonjson_member_str(s, &first, "reason",
					     "clearsigned text in one part of the mail; only a signature of the "
					     "whole mail is checked");
		else if (m->encrypted)
			canonjson_member_str(s, &first, "reason",
					     "an encrypted part inside the mail was not decrypted");
	}
	if (m->decrypted) {
		canonjson_key(s, &first, "encrypted");
		g_string_append(s, "true");
	}
	if (from_verified != NULL)
		canonjson_member_str(s, &first, "from_verified", from_verified);
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

/* The auth object of a signed mail by an anonymous researcher: the key is
 * not named, so the record's hash does not publish it; a commitment to it,
 * salted with a secret the robot keeps with the record, binds the record to
 * the key all the same (vulnid-json(7)). */
static char *
auth_json_withheld(const message *m, const char *salt)
{
	GString *s = g_string_new("{");
	g_autofree char *pre = g_strdup_printf("vulnid-key-commitment:%s:%s", salt, m->sig->fpr);
	g_autofree char *commitment = g_compute_checksum_for_string(G_CHECKSUM_SHA256, pre, -1);
	gboolean first = TRUE;

	canonjson_member_str(s, &first, "method", "pgp");
	canonjson_member_str(s, &first, "fingerprint", ENTRY_KEY_WITHHELD);
	canonjson_member_str(s, &first, "key_commitment", commitment);
	if (m->decrypted) {
		canonjson_key(s, &first, "encrypted");
		g_string_append(s, "true");
	}
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

/* Trust on first use: a signed mail that brings the key that made its
 * signature, as an application/pgp-keys attachment, gets that key
 * imported, unless another key in the keyring already claims one of its
 * addresses: then the mail stays unauthenticated, says why, and the
 * operator decides (vulnid keys import).  The fingerprint is the
 * identity. */
static void
intake_tofu(mail_ctx *c, char **imported)
{
	message *m = c->m;
	g_autoptr(GError) e = NULL;
	crypto_conflict *conflict = NULL;
	vulnid_status s;

	*imported = NULL;
	if (!m->sig->present || m->sig->valid || !m->sig->key_missing || m->sig->fpr == NULL ||
	    m->pgp_keys == NULL || crypto_home() == NULL || !message_can_reverify(m))
		return;
	s = crypto_import_if_contains(m->pgp_keys, m->sig->fpr, c->cfg->openpgp_time_limit * 1000, &conflict, &e);
	if (s == VULNID_ERR_EXISTS && conflict != NULL) {
		g_free(m->sig->reason);
		m->sig->reason = g_strdup_printf("the signing key is not known to this robot, and the key sent "
						 "with the mail was not imported: another key in the robot's "
						 "keyring already claims its address %s (the operator decides "
						 "whether to import it)", conflict->address);
		c->key_conflict = conflict;
		return;
	}
	crypto_conflict_free(conflict);
	if (s == VULNID_ERR_TEMP || s == VULNID_ERR_IO || s == VULNID_ERR_NOSPACE) {
		/* not the key's fault: the mail waits for gpg */
		m->crypto_unavailable = TRUE;
		g_free(m->crypto_why);
		m->crypto_why = g_strdup(e != NULL ? e->message : vulnid_status_str(s));
		return;
	}
	if (s == VULNID_ERR_TIMEOUT && m->problem == NULL) {
		m->problem = g_strdup("openpgp-timeout");
		g_ptr_array_add(m->problems, g_strdup_printf("importing the key sent with the mail took "
							     "longer than %" G_GINT64_FORMAT " seconds and "
							     "was stopped", c->cfg->openpgp_time_limit));
		return;
	}
	if (s != VULNID_OK) {
		if (e != NULL && s == VULNID_ERR_INVALID) {
			g_free(m->sig->reason);
			m->sig->reason = g_strdup_printf("the signing key is not known to this robot, and the "
							 "key sent with the mail was not imported: %s",
							 e->message);
		}
		return;
	}
	message_reverify(m);
	if (m->sig->valid)
		*imported = g_strdup(m->sig->fpr);
}

static vulnid_status
audit_key_import(mail_ctx *c, const char *fpr, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("key-imported", NULL, c->m->message_id);

	audit_event_str(ev, "fingerprint", fpr);
	audit_event_str(ev, "source", "signed request (trust on first use)");
	return audit_append(c->st, ev, err);
}

/* The audit events owed for trust on first use: the key imported (also
 * on a retry after 75, which finds it imported by the first try), or
 * the key refused. */
static vulnid_status
audit_tofu(mail_ctx *c, GError **err)
{
	vulnid_status s = VULNID_OK;

	if (c->key_conflict != NULL) {
		g_autoptr(audit_event) ev = audit_event_new("key-refused", NULL, c->m->message_id);

		audit_event_str(ev, "fingerprint", c->key_conflict->fpr);
		audit_event_str(ev, "source", "signed mail (trust on first use)");
		audit_event_str(ev, "other", c->key_conflict->other);
		audit_event_str(ev, "address", c->key_conflict->address);
		return audit_append(c->st, ev, err);
	}
	if (c->imported_key == NULL && c->m->sig->valid && c->m->pgp_keys != NULL && c->m->sig->fpr != NULL) {
		gboolean audited = FALSE;

		s = store_audit_has_fingerprint_event(c->st, "key-imported", c->m->sig->fpr, &audited, err);
		if (s != VULNID_OK)
			return s;
		if (!audited)
			return audit_key_import(c, c->m->sig->fpr, err);
	}
	if (c->imported_key != NULL)
		s = audit_key_import(c, c->imported_key, err);
	return s;
}

/* What identifies a signature for replay protection: the signing key, the
 * signature's creation time and the signed text.  Not the armored bytes,
 * which anyone can vary (an armor Comment line) without breaking the
 * signature.  Only valid signatures carry authority, so only they count. */
static char *
replay_key(const intake_ctx *c)
{
	const message *m = c->m;
	g_autofree char *key = NULL;

	if (!m->sig->valid || m->sig->fpr == NULL)
		return NULL;
	key = g_strdup_printf("%s:%" G_GINT64_FORMAT ":%s", m->sig->fpr, m->sig->created, c->text_sha256);
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
}

/* The message whose signature had this replay key, or 0. */
static vulnid_status
signature_seen(intake_ctx *c, const char *replay, gint64 *msg, GError **err)
{
	return store_intake_signature_seen(c->st, replay, msg, err);
}

/* Who a decrypted mail came from, for the decrypted table: the address
 * replies go to, in lower case (or NULL). */
static char *
decrypted_sender(const intake_ctx *c)
{
	const char *to = mail_reply_address(c);

	return to != NULL ? g_ascii_strdown(to, -1) : NULL;
}

/* The decryption oracle: what was decrypted once must not act again.
 * The same encrypted data (the same session key, however it is wrapped)
 * acts once: sent again, by anyone, with any headers, it is a replay
 * (the legitimate redelivery, the same Message-ID and body, was found a
 * duplicate before this).  The same plaintext under another session key
 * was encrypted again by someone who knows it: sent as a new request, to
 * another entry (by any routing), or by another sender (another reply
 * address or signer), it is a replay too.  *orig is the mail it first
 * came in.  An encrypted mail sent to an entry that its text does not
 * name, while it names another entry of this robot, is misdirected
 * (*misdirected: that entry): a captured mail sent elsewhere before the
 * original arrived. */
static vulnid_status
decrypted_check(intake_ctx *c, lifecycle_route_kind target, const char *entry_id, const char **reason,
		char **detail, gint64 *orig, char **misdirected, GError **err)
{
	g_autofree char *sender = decrypted_sender(c);
	const char *about = target == ROUTE_ENTRY ? entry_id : NULL;
	g_autofree char *went = NULL;
	const char *how = NULL;
	g_autoptr(GPtrArray) rows = NULL;
	vulnid_status s;

	*orig = 0;
	s = store_intake_decrypted_find(c->st, c->m->cipher_sha256 != NULL ? c->m->cipher_sha256 : "",
					c->m->plain_sha256 != NULL ? c->m->plain_sha256 : "", &rows, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < rows->len; i++) {
		const store_decrypted_row *r = g_ptr_array_index(rows, i);
		const char *e = r->entry;
		const char *from = r->sender;
		const char *fpr = r->fingerprint;

		if (target == ROUTE_NEW)
			how = "as a new request";
		else if (g_strcmp0(e, about) != 0)
			how = about != NULL ? "to another entry" : "not to its entry";
		else if (g_strcmp0(from, sender) != 0 || g_strcmp0(fpr, c->signer) != 0)
			how = "by another sender";
		else if (r->same_cipher)
			how = "again, from the same address to the same entry (an address anyone can write)";
		else
			continue;
		*orig = r->message;
		went = g_strdup(e);
		break;
	}
	if (*orig > 0) {
		*reason = "replay";
		*detail = g_strdup_printf("what it holds encrypted was decrypted before (message %" G_GINT64_FORMAT
					  "%s%s); sent again %s, it has no effect", *orig,
					  went != NULL ? ", for " : "", went != NULL ? went : "", how);
		return VULNID_OK;
	}
	if (target != ROUTE_ENTRY || lifecycle_text_names_entry(c->m->text, entry_id))
		return VULNID_OK;
	s = lifecycle_text_other_entry(c, entry_id, misdirected, err);
	if (s == VULNID_OK && *misdirected != NULL) {
		*reason = "misdirected";
		*detail = g_strdup_printf("it came encrypted to %s, but its text names %s and not %s; "
					  "what it holds is not recorded where it was not meant to go",
					  entry_id, *misdirected, entry_id);
	}
	return s;
}

/* Remember what this mail decrypted, and where it went: the entry it was
 * about (or the first one it created), in the mail's transaction. */
static vulnid_status
decrypted_remember(intake_ctx *c, const char *entry_id, GError **err)
{
	g_autofree char *sender = decrypted_sender(c);

	if (c->m->cipher_sha256 == NULL || c->m->plain_sha256 == NULL)
		return VULNID_OK;
	return store_intake_decrypted_insert(c->st, c->msg_row, c->now, c->m->cipher_sha256, c->m->plain_sha256,
					     entry_id, sender, c->signer, err);
}

/* Whether message msg was archived sealed. */
static vulnid_status
message_was_sealed(intake_ctx *c, gint64 msg, gboolean *sealed, GError **err)
{
	return store_intake_message_sealed(c->st, msg, sealed, err);
}

/* One line of a raw body (its first bytes): an Embargo field that asks
 * for an embargo? */
static gboolean
line_asks_embargo(const GString *line)
{
	const char *p = line->str;
	g_autofree char *value = NULL;

	if (g_ascii_strncasecmp(p, "embargo", 7) != 0)
		return FALSE;
	for (p += 7; *p == ' ' || *p == '\t'; p++)
		;
	if (*p != ':')
		return FALSE;
	value = g_strstrip(g_strdup(p + 1));
	return *value != '\0' && g_ascii_strcasecmp(value, "no") != 0;
}

/* Whether the raw body of a mail whose parts were never read has a line
 * "Embargo: ..." that asks for an embargo.  One pass over the spool, a
 * line's first 80 bytes kept at a time. */
static gboolean
raw_asks_embargo(const message_spool *sp)
{
	g_autoptr(GString) line = g_string_sized_new(96);
	gboolean body = FALSE;
	char buf[8192];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(sp->fd, buf, sizeof buf, off)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (line->len < 80 && buf[i] != '\r')
					g_string_append_c(line, buf[i]);
				continue;
			}
			if (!body)
				body = line->len == 0;
			else if (line_asks_embargo(line))
				return TRUE;
			g_string_truncate(line, 0);
		}
		off += n;
	}
	return body && line_asks_embargo(line);
}

/* Whether mail that is not acted on (set aside, or refused) asked for an
 * embargo: a request with an Embargo field other than "no", read from
 * its text however malformed the mail is, or from its raw body when the
 * robot never read its parts. */
static gboolean
asks_embargo(const intake_ctx *c, const message_spool *sp)
{
	request_limits lim = { c->cfg->max_ids, c->cfg->max_fields, c->cfg->max_field_length };
	g_autoptr(request) r = NULL;

	if (c->m->text == NULL)
		return raw_asks_embargo(sp);
	r = request_parse(c->m->text, c->m->subject, &lim, c->now_dt);
	return intake_request_embargoed(r);
}

/* How the mail goes, decided before anything is written (the disposition
 * is part of the append-only message row). */
typedef struct {
	gboolean bounce, automatic;
	const char *automatic_why;
	lifecycle_route_kind target;	/* what it is about (no rate limits) */
	lifecycle_route_kind route;	/* how it is handled, when it is */
	char *entry_id;			/* the entry for ROUTE_ENTRY, the name for ROUTE_UNKNOWN_ENTRY */
	const char *aside;		/* replay or misdirected: set aside, no reply */
	char *aside_detail;
	gint64 replay_of;		/* the mail it replays, or 0 */
	char *misdirected;		/* the entry a misdirected mail names */
	request *r;			/* a new request, parsed */
	gboolean sealed;		/* archived sealed (intake_sealed()) */
} intake_plan;

static void
intake_plan_clear(intake_plan *p)
{
	g_free(p->entry_id);
	g_free(p->aside_detail);
	g_free(p->misdirected);
	if (p->r != NULL)
		request_free(p->r);
}

/* Whether the mail is archived sealed (encrypted to the robot, no Subject
 * in its messages row): it is about an entry under embargo, a new request
 * with an embargoed block, mail set aside or refused that asked for an
 * embargo, a misdirected mail that names an embargoed entry, or a replay
 * of mail that was archived sealed.  Bounces are never sealed: they are
 * about what the robot sent. */
static vulnid_status
intake_sealed(intake_ctx *c, const message_spool *sp, const intake_plan *p, const char *disposition,
	      gboolean *sealed, GError **err)
{
	vulnid_status s = VULNID_OK;

	*sealed = FALSE;
	if (p->bounce)
		return VULNID_OK;
	if (p->target == ROUTE_ENTRY)
		s = lifecycle_route_sealed(c, ROUTE_ENTRY, p->entry_id, sealed, err);
	if (s == VULNID_OK && !*sealed && p->misdirected != NULL)
		s = lifecycle_route_sealed(c, ROUTE_ENTRY, p->misdirected, sealed, err);
	if (s == VULNID_OK && !*sealed && p->replay_of > 0)
		s = message_was_sealed(c, p->replay_of, sealed, err);
	if (s != VULNID_OK || *sealed)
		return s;
	if (p->r != NULL)
		*sealed = intake_request_embargoed(p->r);
	else if (strcmp(disposition, "quarantined") == 0 || strcmp(disposition, "rejected") == 0)
		*sealed = asks_embargo(c, sp);
	return VULNID_OK;
}

/* Classify the mail: duplicate aside, everything that decides its
 * disposition. */
static vulnid_status
intake_classify(intake_ctx *c, intake_plan *p, const char **disposition, GError **err)
{
	const char *rcpt = c->env->recipient != NULL ? c->env->recipient : c->m->delivered_to;
	g_autofree char *replay = replay_key(c);
	vulnid_status s;

	if (replay != NULL) {
		s = signature_seen(c, replay, &p->replay_of, err);
		if (s != VULNID_OK)
			return s;
		if (p->replay_of != 0) {
			p->aside = "replay";
			p->aside_detail = g_strdup("its signature was processed before; a replayed signed mail "
						   "has no effect");
		}
	}
	c->recipient = rcpt;
	p->bounce = is_bounce_address(c->cfg, rcpt);
	p->automatic = message_is_automatic(c->m, c->envelope_sender, c->cfg->request_address,
					    &p->automatic_why);
	if (c->m->encrypted && c->m->problem == NULL) {
		c->m->problem = g_strdup("encrypted");
		g_ptr_array_add(c->m->problems, g_strdup("the mail holds encrypted content that is not one "
							 "OpenPGP block at the top addressed to this robot, so it "
							 "cannot be read: encrypt the whole mail to the robot's key"));
	}
	if (!p->bounce) {
		/* What the mail is about, also when it is then set aside: it
		 * decides sealing, replays and whether a signature counts. */
		s = lifecycle_route_target(c, &p->target, &p->entry_id, err);
		if (s != VULNID_OK)
			return s;
		if (c->signer != NULL && p->target == ROUTE_ENTRY &&
		    !lifecycle_text_names_entry(c->m->text, p->entry_id))
			c->unbound = p->entry_id;
		if (p->aside == NULL && c->m->decrypted) {
			s = decrypted_check(c, p->target, p->entry_id, &p->aside, &p->aside_detail, &p->replay_of,
					    &p->misdirected, err);
			if (s != VULNID_OK)
				return s;
		}
	}
	c->replay = p->aside != NULL;
	p->route = p->target;
	if (!p->bounce && !p->automatic && c->m->problem == NULL && !c->replay) {
		/* a stamp pays once, in this transaction (hashcash.h) */
		if (c->stamp != NULL) {
			s = hashcash_spend(c->st, c->stamp, &c->paid, err);
			if (s != VULNID_OK)
				return s;
		}
		s = lifecycle_route_limit(c, &p->route, err);
		if (s != VULNID_OK)
			return s;
	} else
		p->route = ROUTE_NEW;
	if (p->bounce)
		*disposition = "bounce";
	else if (p->automatic || c->m->problem != NULL || c->replay || p->route == ROUTE_LIMITED)
		*disposition = "quarantined";
	else if (p->route == ROUTE_ENTRY)
		*disposition = "entry";
	else if (p->route == ROUTE_UNKNOWN_ENTRY)
		*disposition = "rejected";
	else if (p->route == ROUTE_COMMANDS)
		*disposition = "commands";
	else {
		request_limits lim = { c->cfg->max_ids, c->cfg->max_fields, c->cfg->max_field_length };

		p->r = request_parse(c->m->text, c->m->subject, &lim, c->now_dt);
		if (c->m->text_cut_from > 0)
			request_note_text_cut(p->r, c->m->text_kept, c->m->text_cut_from, c->m->text_kept_as);
		if (c->m->subject_chars > 998)
			request_note_subject_cut(p->r, c->m->subject_chars);
		*disposition = p->r->is_help ? "help" : p->r->is_key ? "key"
			     : p->r->errors->len > 0 ? "rejected" : "request";
	}
	return VULNID_OK;
}

/* Act on the classified, archived mail. */
static vulnid_status
intake_act(intake_ctx *c, const intake_plan *p, GError **err)
{
	if (p->bounce)
		return intake_bounce(c, c->recipient, err);
	if (c->replay)
		return mail_quarantine(c, p->aside, p->aside_detail, err);
	if (p->automatic)
		return mail_quarantine(c, "automatic", p->automatic_why, err);
	if (c->m->problem != NULL)
		return intake_malformed(c, p->sealed, err);
	if (p->route != ROUTE_NEW) {
		c->res->outcome = p->route == ROUTE_COMMANDS ? INTAKE_COMMANDS
				: p->route == ROUTE_LIMITED ? INTAKE_QUARANTINED : INTAKE_ENTRY;
		return lifecycle_handle(c, p->route, p->entry_id, err);
	}
	if (p->r->is_help)
		return intake_help(c, err);
	if (p->r->is_key)
		return intake_key(c, err);
	if (p->r->errors->len > 0)
		return intake_rejected(c, p->r, err);
	return intake_assign(c, p->r, err);
}

/* Seen before (its deduplication key): nothing new, the event only. */
static vulnid_status
record_duplicate(intake_ctx *c, const message_spool *sp, gint64 seen, gboolean *duplicate, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("duplicate", NULL, c->m->message_id);

	audit_event_int(ev, "message", seen);
	audit_event_str(ev, "sha256", sp->raw_sha256);
	*duplicate = TRUE;
	c->msg_row = seen;
	c->res->outcome = INTAKE_DUPLICATE;
	return audit_append(c->st, ev, err);
}

/* The raw bytes (sealed when the plan says so) and the messages row. */
static vulnid_status
record_archive(intake_ctx *c, message_spool *sp, const intake_plan *p, store_message *sm, GError **err)
{
	g_autofree char *sender_domain = NULL;
	vulnid_status s;

	if (c->envelope_sender != NULL && strrchr(c->envelope_sender, '@') != NULL)
		sender_domain = g_ascii_strdown(strrchr(c->envelope_sender, '@') + 1, -1);
	if (p->sealed) {
		/* Embargoed content is kept only encrypted to the robot: the
		 * text if it came in clear, its header (the Subject) anyway. */
		g_autofree char *robot = NULL;

		s = crypto_robot_fingerprint(&robot, err);
		if (s == VULNID_OK)
			s = store_blob_put_sealed(c->st, sp->fd, sp->size, sp->raw_sha256, robot, err);
		sm->subject = NULL;
	} else {
		s = store_blob_put_fd(c->st, sp->fd, sp->size, sp->raw_sha256, err);
		sm->subject = c->m->subject;
	}
	if (s != VULNID_OK)
		return s;
	sm->received = c->now;
	sm->raw_sha256 = sp->raw_sha256;
	sm->message_id = c->m->message_id;
	sm->envelope_from = c->envelope_sender;
	sm->envelope_to = c->recipient;
	sm->from_addr = c->m->from_addr;
	sm->client_address = c->client_address;
	sm->client_net = c->client_net;
	sm->sender_domain = sender_domain;
	sm->from_verified = c->from_verified;
	s = store_message_insert(c->st, sm, &c->msg_row, err);
	sm->sender_domain = NULL;	/* freed here */
	return s;
}

/* What the outgoing-mail policy needs to know of this mail. */
static vulnid_status
record_policy(intake_ctx *c, const message_spool *sp, GError **err)
{
	policy_mail pm = { 0 };
	const char *loop_why = NULL;
	vulnid_status s = loop_suspect(c, config_key_int(c->cfg, "policy", "loop_hours"), &loop_why, err);

	if (s == VULNID_OK)
		s = mail_check_verified(c, err);
	if (s != VULNID_OK)
		return s;
	pm.cause = c->msg_row;
	pm.size = sp->size;
	pm.signed_mail = c->signer != NULL;
	pm.from = c->m->from_addr;
	pm.envelope_sender = c->envelope_sender;
	pm.suspect = loop_why != NULL;
	pm.suspect_why = loop_why;
	pm.verified = c->verified;
	policy_mail_begin(&pm);
	return VULNID_OK;
}

static vulnid_status
record_received_event(intake_ctx *c, const message_spool *sp, const store_message *sm, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("received", NULL, c->m->message_id);

	audit_event_int(ev, "message", c->msg_row);
	audit_event_str(ev, "from", c->m->from_addr);
	audit_event_str(ev, "sender", c->envelope_sender);
	audit_event_str(ev, "client", c->client_address);
	audit_event_str(ev, "recipient", sm->envelope_to);
	audit_event_int(ev, "size", sp->size);
	audit_event_str(ev, "sha256", sp->raw_sha256);
	audit_event_str(ev, "disposition", sm->disposition);
	if (c->stamp != NULL)
		audit_event_str(ev, "hashcash", !c->paid ? "spent before" : c->lifted ? "lifted a rate limit" : "spent");
	return audit_append(c->st, ev, err);
}

/* The raw signature, and its replay key where it acts. */
static vulnid_status
record_signature(intake_ctx *c, const intake_plan *p, GError **err)
{
	g_autofree char *replay = NULL;
	vulnid_status s = VULNID_OK;

	if (c->m->sig->present && c->m->sig->raw != NULL && !c->replay) {
		/* The raw signature is kept; for an embargoed request it may
		 * be the whole clearsigned text, so it is sealed like it. */
		if (p->sealed) {
			g_autofree char *robot = NULL;

			s = crypto_robot_fingerprint(&robot, err);
			if (s == VULNID_OK)
				s = store_blob_put_sealed_bytes(c->st, c->m->sig->raw, c->m->sig->raw_sha256,
								robot, err);
		} else {
			char sha[65];

			s = store_blob_put_mem(c->st, g_bytes_get_data(c->m->sig->raw, NULL),
					       g_bytes_get_size(c->m->sig->raw), sha, err);
		}
		if (s != VULNID_OK)
			return s;
	}
	replay = replay_key(c);
	if (replay != NULL && !c->replay && c->unbound == NULL)
		/* Remembered only where it acts: a copy sent to an entry its
		 * text does not name acts nowhere, and must not make the
		 * original a replay. */
		s = store_intake_signature_insert(c->st, replay, c->m->sig->fpr, c->msg_row, c->now, err);
	return s;
}

/* Everything that happens in the transaction. */
static vulnid_status
intake_record(intake_ctx *c, message_spool *sp, gboolean *duplicate, GError **err)
{
	g_autofree char *key = message_dedup_key(c->m);
	intake_plan p = { 0 };
	store_message sm = { 0 };
	vulnid_status s;
	gint64 seen;

	s = store_message_find(c->st, key, &seen, err);
	if (s != VULNID_OK)
		return s;
	if (seen > 0)
		return record_duplicate(c, sp, seen, duplicate, err);
	s = mail_redact(c, err);
	if (s == VULNID_OK)
		s = intake_classify(c, &p, &sm.disposition, err);
	if (s == VULNID_OK)
		s = intake_sealed(c, sp, &p, sm.disposition, &p.sealed, err);
	if (s != VULNID_OK)
		goto out;
	c->sealed = p.sealed;
	sm.dedup_key = key;
	s = record_archive(c, sp, &p, &sm, err);
	if (s == VULNID_OK)
		s = record_policy(c, sp, err);
	if (s == VULNID_OK)
		s = record_received_event(c, sp, &sm, err);
	if (s == VULNID_OK)
		s = record_signature(c, &p, err);
	if (s == VULNID_OK)
		s = audit_tofu(c, err);
	if (s == VULNID_OK)
		s = intake_act(c, &p, err);
	if (s == VULNID_OK && c->m->decrypted && !c->replay && !p.bounce)
		s = decrypted_remember(c, p.target == ROUTE_ENTRY ? p.entry_id
				       : c->res->ids->len > 0 ? g_ptr_array_index(c->res->ids, 0) : NULL, err);
out:
	c->unbound = NULL;	/* it pointed into the plan */
	intake_plan_clear(&p);
	return s;
}

/* One mail between its phases: what the parse found, the context the
 * apply phase works in, the result. */
static char *intake_client_address(const intake_envelope *env, const message_spool *sp);

struct intake_mail {
	const vulnid_config *cfg;
	char *sender, *recipient, *client_address;
	intake_envelope env;	/* points to the copies above */
	message_spool *sp;
	message *m;
	GDateTime *now_dt;
	char *now;
	char *imported;
	char *auth;
	char *auth_withheld;
	char *key_salt;
	char *client;		/* the client address in use (from -a or Received) */
	char *client_net;
	hashcash_stamp *stamp;
	char *text_sha256;	/* of the text as it came */
	intake_result *res;
	intake_ctx c;
	gboolean duplicate;
};

void
intake_mail_free(intake_mail *im)
{
	if (im == NULL)
		return;
	message_free(im->m);
	message_spool_free(im->sp);
	g_clear_pointer(&im->now_dt, g_date_time_unref);
	g_free(im->now);
	g_free(im->imported);
	g_free(im->auth);
	g_free(im->auth_withheld);
	g_free(im->key_salt);
	g_free(im->client);
	g_free(im->client_net);
	hashcash_stamp_free(im->stamp);
	g_free(im->text_sha256);
	g_clear_pointer(&im->c.tokens, g_ptr_array_unref);
	g_clear_pointer(&im->c.key_conflict, crypto_conflict_free);
	intake_result_free(im->res);
	g_free(im->sender);
	g_free(im->recipient);
	g_free(im->client_address);
	g_free(im);
}

intake_result *
intake_mail_steal_result(intake_mail *im)
{
	return g_steal_pointer(&im->res);
}

gint64
intake_mail_row(const intake_mail *im)
{
	return im->c.msg_row;
}

vulnid_status
intake_parse(const vulnid_config *cfg, int in_fd, gboolean spooled, const intake_envelope *env,
	     intake_mail **out, GError **err)
{
	g_autoptr(intake_mail) im = g_new0(intake_mail, 1);
	message_limits lim = {
		cfg->max_message_size, cfg->max_header_size, cfg->max_headers,
		cfg->max_line_length, cfg->max_parts, cfg->max_depth, cfg->max_request_text,
		cfg->openpgp_time_limit, cfg->max_decrypted_ratio, cfg->spool_dir,
	};
	intake_ctx *c = &im->c;
	vulnid_status s;

	im->cfg = cfg;
	im->sender = g_strdup(env->sender);
	im->recipient = g_strdup(env->recipient);
	im->client_address = g_strdup(env->client_address);
	im->env.sender = im->sender;
	im->env.recipient = im->recipient;
	im->env.client_address = im->client_address;
	im->now_dt = store_now_datetime();
	im->now = g_date_time_format(im->now_dt, "%Y-%m-%dT%H:%M:%SZ");
	im->res = g_new0(intake_result, 1);
	im->res->ids = g_ptr_array_new_with_free_func(g_free);
	if (g_mkdir_with_parents(cfg->spool_dir, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   cfg->spool_dir, g_strerror(errno));
	s = spooled ? message_spool_file(in_fd, cfg->spool_dir, cfg->max_message_size, &im->sp, err)
		    : message_spool_input(in_fd, cfg->spool_dir, cfg->max_message_size, &im->sp, err);
	if (s != VULNID_OK)
		return s;
	s = message_parse(im->sp, &lim, &im->m, err);
	if (s != VULNID_OK)
		return s;
	if (im->m->crypto_unavailable)
		return vulnid_fail(err, VULNID_ERR_TEMP, "OpenPGP cannot be used now: %s",
				   im->m->crypto_why != NULL ? im->m->crypto_why
				   : "the robot's key cannot be used (is gpg-agent running?)");
	c->cfg = cfg;
	c->env = &im->env;
	c->m = im->m;
	c->now = im->now;
	c->now_dt = im->now_dt;
	c->res = im->res;
	/* what a signature covered, before anything is taken out of it */
	im->text_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, im->m->text != NULL ? im->m->text : "", -1);
	c->text_sha256 = im->text_sha256;
	c->envelope_sender = im->env.sender != NULL ? im->env.sender : im->sp->mbox_sender;
	im->client = intake_client_address(&im->env, im->sp);
	im->client_net = ratelimit_client_net(im->client);
	c->client_address = im->client;
	c->client_net = im->client_net;
	c->from_verified = authres_from_verified(cfg, header_scan_trace(im->sp->scan), im->m->from_addr);
	im->stamp = hashcash_find(cfg, im->m->hashcash, env->recipient != NULL ? env->recipient : im->m->delivered_to,
				  im->now_dt);
	c->stamp = im->stamp;
	intake_tofu(c, &im->imported);
	c->imported_key = im->imported;
	if (im->m->crypto_unavailable)
		return vulnid_fail(err, VULNID_ERR_TEMP, "OpenPGP cannot be used now: %s",
				   im->m->crypto_why != NULL ? im->m->crypto_why : "gpg failed");
	im->auth = auth_json(im->m, c->from_verified, &c->signer);
	c->auth_json = im->auth;
	if (c->signer != NULL) {
		/* an anonymous researcher's records withhold the key */
		im->key_salt = random_hex(16, err);
		if (im->key_salt == NULL)
			return VULNID_ERR_TEMP;
		im->auth_withheld = auth_json_withheld(im->m, im->key_salt);
		c->key_salt = im->key_salt;
		c->auth_json_withheld = im->auth_withheld;
	}
	*out = g_steal_pointer(&im);
	return VULNID_OK;
}

vulnid_status
intake_apply(intake_mail *im, store *st, GError **err)
{
	vulnid_status s;

	im->c.st = st;
	s = intake_record(&im->c, im->sp, &im->duplicate, err);
	/* the policy's count of this mail ends with it, committed or not */
	policy_mail_end(im->c.msg_row);
	return s;
}

vulnid_status
intake_apply_failed(intake_mail *im, store *st, vulnid_status failure, GError **err)
{
	g_autoptr(audit_event) ev = NULL;

	if (failure != VULNID_ERR_EXHAUSTED)
		return VULNID_OK;
	/* Nothing of the mail is kept; the MTA retries until the operator
	 * adds blocks.  The event itself is recorded. */
	ev = audit_event_new("blocks-exhausted", NULL, im->m->message_id);
	audit_event_int(ev, "year", g_date_time_get_year(im->now_dt));
	return audit_append(st, ev, err);
}

void
intake_after_commit(intake_mail *im, store *st, guint budget)
{
	intake_ctx *c = &im->c;
	g_autoptr(GError) e = NULL;
	outbox_run_result rr;

	/* The job is done once the transaction commits; these steps only
	 * make its results visible sooner, and are repeated by the next
	 * process or `vulnid queue run` when they fail here. */
	outbox_run_opts ro = { c->msg_row, FALSE, budget, notify_delivery_failed };

	c->st = st;
	if (budget > 0 &&
	    (outbox_run(st, c->cfg, &ro, &rr, &e) != VULNID_OK || rr.deferred > 0)) {
		g_autofree char *m = text_mask_controls(e != NULL ? e->message : "");

		if (e != NULL)
			c->res->warning = g_strdup(e->message);
		syslog(LOG_MAIL | LOG_WARNING, "delivery deferred%s%s (%u item%s; see vulnid queue list)",
		       e != NULL ? ": " : "", m, rr.deferred, rr.deferred == 1 ? "" : "s");
		g_clear_error(&e);
	}
	if (audit_flush(st, c->cfg->audit_path, &e) != VULNID_OK) {
		syslog(LOG_MAIL | LOG_WARNING, "audit log: %s", e->message);
		if (c->res->warning == NULL)
			c->res->warning = g_strdup(e->message);
	}
}

/* The SMTP client address the MTA passed (or, for "received", the one in
 * brackets in the topmost Received field, which that MTA added), or NULL. */
static char *
intake_client_address(const intake_envelope *env, const message_spool *sp)
{
	GPtrArray *trace;

	if (env->client_address == NULL || g_ascii_strcasecmp(env->client_address, "received") != 0)
		return ratelimit_client_address(env->client_address);
	trace = header_scan_trace(sp->scan);
	for (guint i = 0; i < trace->len; i++) {
		const header_trace_field *f = g_ptr_array_index(trace, i);
		const char *open, *close;

		if (strcmp(f->name, "received") != 0)
			continue;
		/* "from HELO (NAME [ADDRESS])" (Postfix, OpenSMTPD) or "from
		 * NAME ([HELO]) [ADDRESS]" (Exim): the client chooses HELO,
		 * which may itself be a literal, so the address is the last
		 * bracket of the from clause, before " by ". */
		{
			const char *by = strstr(f->value, " by ");
			const char *tab = strstr(f->value, "\tby ");
			const char *end = by == NULL ? tab : tab == NULL ? by : MIN(by, tab);
			gsize n = end != NULL ? (gsize) (end - f->value) : strlen(f->value);

			open = g_strrstr_len(f->value, (gssize) n, "[");
		}
		close = open != NULL ? strchr(open, ']') : NULL;
		if (close == NULL)
			return NULL;
		{
			g_autofree char *a = g_strndup(open + 1, (gsize) (close - open - 1));

			return ratelimit_client_address(a);
		}
	}
	return NULL;
}

vulnid_status
intake_message(const vulnid_config *cfg, int in_fd, const intake_envelope *env,
	       intake_result **result, GError **err)
{
	g_autoptr(intake_mail) im = NULL;
	g_autoptr(store) st = NULL;
	vulnid_status s;

	s = intake_parse(cfg, in_fd, FALSE, env, &im, err);
	if (s != VULNID_OK)
		return s;
	s = store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_EXISTING, &st, err);
	if (s != VULNID_OK)
		return s;
	/* The mail this one causes is delivered right after the commit, by
	 * this process: it is claimed as it is queued (no transaction of its
	 * own), for as long as that delivery may take. */
	if (cfg->filter_budget > 0)
		outbox_claim_queued(outbox_claim_seconds(cfg, (guint) cfg->filter_budget));
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = intake_apply(im, st, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		if (s == VULNID_ERR_EXHAUSTED && store_begin(st, NULL) == VULNID_OK) {
			if (intake_apply_failed(im, st, s, NULL) == VULNID_OK &&
			    store_commit(st, NULL) == VULNID_OK)
				audit_flush(st, cfg->audit_path, NULL);
			store_rollback(st);
		}
		return s;
	}
	s = store_commit(st, err);
	if (s != VULNID_OK)
		return s;
	time_limit_mark_committed();
	intake_after_commit(im, st, (guint) cfg->filter_budget);
	*result = intake_mail_steal_result(im);
	return VULNID_OK;
}
