/* intake.c - one mail: spool, parse, record, assign, reply; all of its
 * effects in one transaction */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "entry.h"
#include "ids.h"
#include "intake.h"
#include "lifecycle.h"
#include "mailctx.h"
#include "dsn.h"
#include "message.h"
#include "notify.h"
#include "outbox.h"
#include "smtp.h"
#include "request.h"
#include "store.h"
#include "template.h"
#include "text.h"

typedef mail_ctx intake_ctx;

const char *
intake_outcome_str(intake_outcome o)
{
	switch (o) {
	case INTAKE_ASSIGNED: return "assigned";
	case INTAKE_DUPLICATE: return "duplicate";
	case INTAKE_REJECTED: return "rejected";
	case INTAKE_HELP: return "help";
	case INTAKE_KEY: return "key";
	case INTAKE_QUARANTINED: return "quarantined";
	case INTAKE_BOUNCE: return "bounce";
	case INTAKE_ENTRY: return "entry";
	case INTAKE_COMMANDS: return "commands";
	}
	return "unknown";
}

void
intake_result_free(intake_result *r)
{
	if (r == NULL)
		return;
	g_ptr_array_unref(r->ids);
	g_free(r->reason);
	g_free(r->warning);
	g_free(r);
}

static char *auth_sentence(const message *m);

GHashTable *
mail_template_vars(const mail_ctx *c)
{
	GHashTable *v = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);

	g_hash_table_insert(v, "request_address", g_strdup(c->cfg->request_address));
	g_hash_table_insert(v, "domain", g_strdup(c->cfg->domain));
	g_hash_table_insert(v, "prefix", g_strdup(c->cfg->prefix));
	g_hash_table_insert(v, "date", g_strdup(c->now));
	g_hash_table_insert(v, "subject", g_strdup(c->m->subject != NULL ? c->m->subject : ""));
	g_hash_table_insert(v, "message_id", g_strdup(c->m->message_id != NULL ? c->m->message_id : "(none)"));
	g_hash_table_insert(v, "auth", auth_sentence(c->m));
	g_hash_table_insert(v, "robot_fpr", crypto_robot_label());
	return v;
}

/* Render a template and queue it to the sender of the mail. */
vulnid_status
mail_reply(mail_ctx *c, const char *kind, const char *tmpl, GHashTable *vars,
	     const char *entry_id, const char *reply_to, GError **err)
{
	return mail_reply_encrypted(c, kind, tmpl, vars, entry_id, reply_to, NULL, err);
}

vulnid_status
mail_reply_encrypted(mail_ctx *c, const char *kind, const char *tmpl, GHashTable *vars,
		     const char *entry_id, const char *reply_to, const char *const *encrypt_to,
		     GError **err)
{
	outbox_mail mail = { 0 };

	mail.kind = kind;
	mail.entry = entry_id;
	mail.reply_to = reply_to;
	mail.encrypt_to = encrypt_to;
	return mail_queue_reply(c, tmpl, vars, &mail, err);
}

const char *
mail_reply_address(const mail_ctx *c)
{
	const char *to = c->m->reply_addr != NULL ? c->m->reply_addr : c->envelope_sender;

	return to != NULL && *to != '\0' && config_address_valid(to) ? to : NULL;
}

vulnid_status
mail_queue_reply(mail_ctx *c, const char *tmpl, GHashTable *vars, outbox_mail *mail, GError **err)
{
	const char *to = mail_reply_address(c);
	vulnid_status s;
	gint64 id;

	if (to == NULL)
		return VULNID_OK;	/* nobody to answer */
	mail->to_addr = to;
	mail->to_name = c->m->reply_addr != NULL && c->m->from_addr != NULL &&
			strcmp(c->m->reply_addr, c->m->from_addr) == 0 ? c->m->from_name : NULL;
	mail->in_reply_to = c->m->message_id;
	mail->references = c->m->references;
	mail->bulk = TRUE;
	s = notify_queue_template(c->st, c->cfg, c->msg_row, tmpl, vars, mail, &id, err);
	if (s != VULNID_OK)
		return s;
	{
		g_autoptr(audit_event) ev = audit_event_new("replied", mail->entry, c->m->message_id);

		audit_event_str(ev, "kind", mail->kind);
		audit_event_str(ev, "to", to);
		audit_event_int(ev, "outbox", id);
		return audit_append(c->st, ev, err);
	}
}

vulnid_status
mail_quarantine(mail_ctx *c, const char *reason, const char *detail, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("quarantined", NULL, c->m->message_id);
	vulnid_status s;
	gint64 qid;

	s = store_quarantine_insert(c->st, c->msg_row, c->now, reason, detail, &qid, err);
	if (s != VULNID_OK)
		return s;
	audit_event_int(ev, "quarantine", qid);
	audit_event_str(ev, "reason", reason);
	audit_event_str(ev, "detail", detail);
	c->res->outcome = INTAKE_QUARANTINED;
	c->res->reason = g_strdup(reason);
	return audit_append(c->st, ev, err);
}

static char *
join_lines(GPtrArray *a, const char *bullet)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; a != NULL && i < a->len; i++)
		g_string_append_printf(s, "%s%s\n", bullet, (const char *) g_ptr_array_index(a, i));
	return g_string_free(s, FALSE);
}

/* Malformed mail: archived, quarantined, and the sender told what to fix. */
static vulnid_status
intake_malformed(intake_ctx *c, GError **err)
{
	g_autofree char *detail = join_lines(c->m->problems, "");
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

/* Archive the attachments once; each entry's first record lists them. */
static vulnid_status
intake_store_attachments(intake_ctx *c, GPtrArray *out, gboolean store_blobs, GError **err)
{
	for (guint i = 0; i < c->m->attachments->len; i++) {
		const message_attachment *a = g_ptr_array_index(c->m->attachments, i);
		entry_attachment *ea = g_new0(entry_attachment, 1);
		char sha[65];
		vulnid_status s;
		int fd = -1;

		g_ptr_array_add(out, ea);
		s = message_attachment_spool(a, c->cfg->spool_dir, &fd, &ea->size, sha, err);
		if (s != VULNID_OK)
			return s;
		/* Sealed mail: the bytes stay inside the sealed message until
		 * release; only what the commitment covers is computed. */
		if (store_blobs)
			s = store_blob_put_fd(c->st, fd, ea->size, sha, err);
		close(fd);
		if (s != VULNID_OK)
			return s;
		ea->sha256 = g_strdup(sha);
		ea->filename = g_strdup(a->filename);
		ea->content_type = g_strdup(a->content_type);
	}
	return VULNID_OK;
}

static void
describe_block(GString *out, const vulnid_config *cfg, const char *id, const char *digest,
	       const request_block *b, const char *subject, guint nattach, const char *token)
{
	const char *title = request_block_title(b, subject);

	g_string_append_printf(out, "  %s\n", id);
	g_string_append_printf(out, "    digest:      %s\n", digest);
	g_string_append_printf(out, "    title:       %s\n", *title ? title : "(none)");
	for (guint i = 0; i < b->fields->len; i++) {
		const request_field *f = g_ptr_array_index(b->fields, i);
		g_autofree char *label = g_strdup_printf("%s:", f->key);
		g_autofree char *lower = g_ascii_strdown(label, -1);

		if (g_ascii_strcasecmp(f->key, "Title") == 0)
			continue;
		g_string_append_printf(out, "    %-12s %s\n", lower, f->value);
	}
	if (*b->description != '\0') {
		guint lines = 1;

		for (const char *p = b->description; *p; p++)
			lines += *p == '\n';
		g_string_append_printf(out, "    description: %u line%s\n", lines, lines == 1 ? "" : "s");
	} else if (b->fields->len == 0)
		g_string_append(out, "    (reserved: nothing said yet; add details at any time)\n");
	if (nattach > 0)
		g_string_append_printf(out, "    attachments: %u (archived, listed on the entry)\n", nattach);
	g_string_append_printf(out, "    address:     %s+%s@%s\n", cfg->request_local, id, cfg->domain);
	if (token != NULL)
		g_string_append_printf(out, "    token:       %s\n"
				       "                 (keep it secret: a line \"Token: %s\" in a mail\n"
				       "                 to the entry proves that you created it)\n", token, token);
	g_string_append_c(out, '\n');
}

static void
describe_sealed(GString *out, const vulnid_config *cfg, const char *id, const char *digest,
		const char *embargo, const char *token)
{
	g_string_append_printf(out, "  %s\n", id);
	g_string_append_printf(out, "    commitment:  %s\n", digest);
	g_string_append_printf(out, "    embargo:     %s\n", g_ascii_strcasecmp(embargo, "yes") == 0
			       ? "until you release it" : embargo);
	g_string_append_printf(out, "    address:     %s+%s@%s\n", cfg->request_local, id, cfg->domain);
	if (token != NULL)
		g_string_append_printf(out, "    token:       %s\n"
				       "                 (keep it secret: a line \"Token: %s\" in a mail\n"
				       "                 to the entry proves that you created it)\n", token, token);
	g_string_append_c(out, '\n');
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

static vulnid_status
intake_assign(intake_ctx *c, const request *r, GError **err)
{
	g_autoptr(GPtrArray) attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	g_autoptr(GString) entries = g_string_new(NULL);
	g_autoptr(GString) idlist = g_string_new(NULL);
	g_autoptr(GString) notes = g_string_new(NULL);
	g_autoptr(GArray) blocks = NULL;
	g_autofree char *blocks_spec = NULL;
	g_autofree char *robot = NULL;
	g_autoptr(GHashTable) vars = NULL;
	const char *auth = c->auth_json;
	g_autofree char *reply_to = NULL;
	gboolean sealed_mail = intake_request_embargoed(r);
	gboolean confirm = FALSE;
	const char *encrypt_key = sealed_mail ? ack_encryption_key(c) : NULL;
	int year = g_date_time_get_year(c->now_dt);
	vulnid_status s;

	blocks_spec = config_blocks_for_year(c->cfg, year);
	if (!ids_blocks_parse(blocks_spec, &blocks, NULL))
		return vulnid_fail(err, VULNID_ERR_CONFIG, "[ids] blocks_%d is invalid", year);
	if (sealed_mail) {
		/* Embargoed content is stored only encrypted to the robot. */
		s = crypto_robot_fingerprint(&robot, err);
		if (s != VULNID_OK)
			return s;
	}
	s = intake_store_attachments(c, attachments, !sealed_mail, err);
	if (s != VULNID_OK)
		return s;

	for (guint bi = 0; bi < r->blocks->len; bi++) {
		const request_block *b = g_ptr_array_index(r->blocks, bi);
		gboolean embargoed = block_embargoed(b);
		g_autofree char *fields = request_block_fields_json(b);
		g_autofree char *id = NULL;
		g_autofree char *canon = NULL;
		g_autofree char *digest = NULL;
		g_autofree char *sealed = NULL;
		g_autoptr(audit_event) ev = NULL;
		store_record rec = { 0 };
		gint64 number, rec_row;

		s = store_next_number(c->st, year, blocks, &number, err);
		if (s != VULNID_OK)
			return s;
		id = ids_format(c->cfg->prefix, year, number);
		canon = entry_record_canonical(id, 1, c->now, "request", auth, c->m->subject,
					       fields, b->description,
					       embargoed || !sealed_mail ? attachments : NULL);
		/* For an embargoed entry the digest is the commitment: the hash
		 * of the content that stays sealed until release. */
		digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
		if (embargoed) {
			g_autoptr(GBytes) clear = g_bytes_new(canon, strlen(canon));
			g_autoptr(GBytes) ct = NULL;

			s = crypto_seal(clear, robot, &ct, err);
			if (s != VULNID_OK)
				return s;
			sealed = g_strndup(g_bytes_get_data(ct, NULL), g_bytes_get_size(ct));
		}
		s = store_entry_insert(c->st, id, year, number, digest, c->now,
				       embargoed ? request_block_get(b, "Embargo") : NULL, c->msg_row, err);
		if (s != VULNID_OK)
			return s;
		rec.entry = id;
		rec.seq = 1;
		rec.created = c->now;
		rec.kind = "request";
		rec.message = c->msg_row;
		rec.author = c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
		rec.author_name = c->m->from_name;
		rec.role = "creator";
		rec.auth = auth;
		rec.subject = embargoed ? NULL : c->m->subject;
		rec.fields = embargoed ? "[]" : fields;
		rec.body = embargoed ? "" : b->description;
		rec.sha256 = digest;
		rec.sealed = sealed;
		s = store_record_insert(c->st, &rec, &rec_row, err);
		if (s != VULNID_OK)
			return s;
		for (guint i = 0; !sealed_mail && i < attachments->len; i++) {
			const entry_attachment *a = g_ptr_array_index(attachments, i);

			s = store_attachment_insert(c->st, rec_row, (int) i, a->filename, a->content_type,
						    a->size, a->sha256, err);
			if (s != VULNID_OK)
				return s;
		}
		ev = audit_event_new("assigned", id, c->m->message_id);
		audit_event_str(ev, "digest", digest);
		audit_event_int(ev, "block", bi + 1);
		if (embargoed)
			audit_event_str(ev, "embargo", request_block_get(b, "Embargo"));
		else
			audit_event_str(ev, "title", request_block_title(b, c->m->subject));
		s = audit_append(c->st, ev, err);
		if (s != VULNID_OK)
			return s;
		{
			/* Who was told is part of the sealed content, too. */
			g_autoptr(GString) hidden = g_string_new(NULL);

			if (lifecycle_confirm_unsigned(c->cfg) && c->signer == NULL) {
				/* Told only once the sender proves a working mailbox. */
				s = lifecycle_defer_notify(c, id, err);
				confirm = TRUE;
			} else {
				s = notify_vendor(c->st, c->cfg, c->msg_row, id,
						  embargoed && encrypt_key == NULL ? hidden : notes, err);
				if (s == VULNID_OK)
					s = notify_announce(c->st, c->cfg, c->msg_row, id, err);
			}
		}
		if (s != VULNID_OK)
			return s;
		{
			g_autofree char *token = NULL;
			const char *to = c->m->reply_addr != NULL ? c->m->reply_addr : c->envelope_sender;

			if (c->signer == NULL && to != NULL && config_address_valid(to)) {
				s = lifecycle_issue_token(c->st, id, "creator", to, &token, err);
				if (s != VULNID_OK)
					return s;
			}
			if (embargoed && encrypt_key == NULL)
				describe_sealed(entries, c->cfg, id, digest, request_block_get(b, "Embargo"), token);
			else
				describe_block(entries, c->cfg, id, digest, b, c->m->subject, attachments->len, token);
		}
		g_string_append_printf(idlist, "%s%s", idlist->len ? ", " : "", id);
		g_ptr_array_add(c->res->ids, g_steal_pointer(&id));
	}
	c->res->outcome = INTAKE_ASSIGNED;

	vars = mail_template_vars(c);
	{
		/* "[A] [B] title": a reply to a multi-ID ack still routes by its
		 * first tag instead of becoming a new request. */
		g_autoptr(GString) tags = g_string_new(NULL);

		for (guint i = 0; i < c->res->ids->len; i++)
			g_string_append_printf(tags, "%s%s", i ? "] [" : "",
					       (const char *) g_ptr_array_index(c->res->ids, i));
		g_hash_table_insert(vars, "ids", g_string_free(g_steal_pointer(&tags), FALSE));
	}
	g_hash_table_insert(vars, "entries", g_strdup(entries->str));
	g_hash_table_insert(vars, "count", g_strdup_printf("%u", c->res->ids->len));
	/* A Subject travels in clear even in an encrypted mail. */
	g_hash_table_insert(vars, "title",
			    g_strdup(sealed_mail ? "embargoed request"
					       : request_block_title(g_ptr_array_index(r->blocks, 0), c->m->subject)));
	g_hash_table_insert(vars, "identifiers",
			    g_strdup(c->res->ids->len == 1 ? "identifier was" : "identifiers were"));
	if (confirm)
		g_string_append(notes, "The vendor will be told and the entry announced once you confirm that\n"
				"this mailbox works: send a mail with the line \"Token: ...\" (the token\n"
				"above) to the entry's address.\n");
	if (notes->len > 0)
		g_hash_table_insert(vars, "notification", g_strdup_printf("%s\n", notes->str));
	{
		g_autoptr(GString) w = g_string_new(NULL);

		if (r->warnings->len > 0) {
			g_autofree char *list = join_lines(r->warnings, "  - ");

			g_string_append_printf(w, "Please note:\n%s\n", list);
		}
		if (sealed_mail && !c->m->decrypted)
			g_string_append(w, "Warning: your request asked for an embargo but travelled unencrypted,\n"
				       "so anyone on its way could read it. The robot keeps it encrypted from\n"
				       "now on. Next time, encrypt to the robot's key (mail \"key\" to get it).\n\n");
		if (sealed_mail && encrypt_key == NULL)
			g_string_append(w, "The details of embargoed entries are not repeated here: this mail is\n"
				       "not encrypted (sign your request with a key that can encrypt to get\n"
				       "an encrypted acknowledgement).\n\n");
		if (w->len > 0)
			g_hash_table_insert(vars, "warnings", g_strdup(w->str));
	}
	if (c->res->ids->len == 1)
		reply_to = g_strdup_printf("%s+%s@%s", c->cfg->request_local,
					   (const char *) g_ptr_array_index(c->res->ids, 0), c->cfg->domain);
	{
		const char *enc[] = { encrypt_key, NULL };

		return mail_reply_encrypted(c, "ack", "ack.txt", vars,
					    c->res->ids->len == 1 ? g_ptr_array_index(c->res->ids, 0) : NULL,
					    reply_to, encrypt_key != NULL ? enc : NULL, err);
	}
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
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(c->st,
		"INSERT INTO bounces (message, outbox, recipient, action, status, diagnostic, created)"
		" VALUES (?, ?, ?, ?, ?, ?, ?)", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_int64(stmt, 1, c->msg_row);
	sqlite3_bind_int64(stmt, 2, outbox);
	sqlite3_bind_text(stmt, 3, d->recipient, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 4, d->action, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 5, d->status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 6, d->diagnostic, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 7, c->now, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	return rc == SQLITE_DONE ? VULNID_OK : store_fail(c->st, rc, "bounces", err);
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
auth_json(const message *m, const char **signer)
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
		else if (m->encrypted)
			canonjson_member_str(s, &first, "reason",
					     "an encrypted part inside the mail was not decrypted");
	}
	if (m->decrypted) {
		canonjson_key(s, &first, "encrypted");
		g_string_append(s, "true");
	}
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

/* The sentence about authentication in replies. */
static char *
auth_sentence(const message *m)
{
	if (m->sig->valid)
		return g_strdup_printf("Your mail was signed by the OpenPGP key %s%s; it is recorded\n"
				       "as written by that key.\n\n", m->sig->fpr,
				       m->decrypted ? " and arrived encrypted" : "");
	if (m->sig->present)
		return g_strdup_printf("Your mail carried an OpenPGP signature that was not accepted:\n"
				       "%s.\nIt is recorded as unauthenticated.\n\n",
				       m->sig->reason != NULL ? m->sig->reason : "unknown reason");
	if (m->partial_signature)
		return g_strdup("A signature in your mail covers only part of it (a signed part inside\n"
				"another part, or a forwarded message), so it is recorded as\n"
				"unauthenticated. Sign the whole mail.\n\n");
	return g_strdup("");
}

/* Trust on first use: a signed mail that brings the key that made its
 * signature, as an application/pgp-keys attachment, gets that key
 * imported; the fingerprint is the identity. */
static void
intake_tofu(mail_ctx *c, char **imported)
{
	message *m = c->m;
	g_autoptr(GError) e = NULL;

	*imported = NULL;
	if (!m->sig->present || m->sig->valid || !m->sig->key_missing || m->sig->fpr == NULL ||
	    m->pgp_keys == NULL || crypto_home() == NULL || !message_can_reverify(m))
		return;
	if (crypto_import_if_contains(m->pgp_keys, m->sig->fpr, &e) != VULNID_OK)
		return;
	message_reverify(m);
	if (m->sig->valid)
		*imported = g_strdup(m->sig->fpr);
}

/* Other keys in the keyring with an address the new key also claims. */
static vulnid_status
audit_key_import(mail_ctx *c, const char *fpr, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("key-imported", NULL, c->m->message_id);
	g_autoptr(crypto_key) key = NULL;
	g_autoptr(GPtrArray) all = NULL;
	vulnid_status s;

	audit_event_str(ev, "fingerprint", fpr);
	audit_event_str(ev, "source", "signed request (trust on first use)");
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK || crypto_get_key(fpr, &key, NULL) != VULNID_OK ||
	    crypto_list_keys(&all, NULL) != VULNID_OK)
		return s;
	for (guint i = 0; i < all->len; i++) {
		crypto_key *k = g_ptr_array_index(all, i);

		if (g_ascii_strcasecmp(k->fpr, fpr) == 0)
			continue;
		for (guint j = 0; j < key->emails->len; j++)
			for (guint l = 0; l < k->emails->len; l++)
				if (strcmp(g_ptr_array_index(key->emails, j), g_ptr_array_index(k->emails, l)) == 0) {
					g_autoptr(audit_event) w = audit_event_new("key-uid-conflict", NULL,
										  c->m->message_id);

					audit_event_str(w, "fingerprint", fpr);
					audit_event_str(w, "other", k->fpr);
					audit_event_str(w, "address", g_ptr_array_index(key->emails, j));
					s = audit_append(c->st, w, err);
					if (s != VULNID_OK)
						return s;
				}
	}
	return VULNID_OK;
}

/* What identifies a signature for replay protection: the signing key, the
 * signature's creation time and the signed text.  Not the armored bytes,
 * which anyone can vary (an armor Comment line) without breaking the
 * signature.  Only valid signatures carry authority, so only they count. */
static char *
replay_key(const message *m)
{
	g_autofree char *text_sha = NULL;
	g_autofree char *key = NULL;

	if (!m->sig->valid || m->sig->fpr == NULL)
		return NULL;
	text_sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, m->text != NULL ? m->text : "", -1);
	key = g_strdup_printf("%s:%" G_GINT64_FORMAT ":%s", m->sig->fpr, m->sig->created, text_sha);
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
}

/* Everything that happens in the transaction. */
static vulnid_status
intake_record(intake_ctx *c, message_spool *sp, gboolean *duplicate, GError **err)
{
	g_autofree char *key = message_dedup_key(c->m);
	g_autoptr(audit_event) ev = NULL;
	store_message sm = { 0 };
	const char *why = NULL, *rcpt;
	g_autoptr(request) r = NULL;
	g_autofree char *entry_id = NULL;
	g_autofree char *replay = NULL;
	gboolean sealed = FALSE;
	lifecycle_route_kind route = ROUTE_NEW;
	gboolean automatic, bounce;
	vulnid_status s;
	gint64 seen;

	s = store_message_find(c->st, key, &seen, err);
	if (s != VULNID_OK)
		return s;
	if (seen > 0) {
		ev = audit_event_new("duplicate", NULL, c->m->message_id);
		audit_event_int(ev, "message", seen);
		audit_event_str(ev, "sha256", sp->raw_sha256);
		*duplicate = TRUE;
		c->msg_row = seen;
		c->res->outcome = INTAKE_DUPLICATE;
		return audit_append(c->st, ev, err);
	}

	replay = replay_key(c->m);
	if (replay != NULL) {
		sqlite3_stmt *q = store_prepare(c->st, "SELECT 1 FROM signatures WHERE sha256 = ?", &s, err);
		int rc;

		if (q == NULL)
			return s;
		sqlite3_bind_text(q, 1, replay, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return store_fail(c->st, rc, "signatures", err);
		c->replay = rc == SQLITE_ROW;
	}
	rcpt = c->env->recipient != NULL ? c->env->recipient : c->m->delivered_to;
	c->recipient = rcpt;
	bounce = is_bounce_address(c->cfg, rcpt);
	automatic = message_is_automatic(c->m, c->envelope_sender, c->cfg->request_address, &why);
	if (c->m->encrypted && c->m->problem == NULL) {
		c->m->problem = g_strdup("encrypted");
		g_ptr_array_add(c->m->problems, g_strdup("the mail holds encrypted content that is not one "
							 "OpenPGP block at the top addressed to this robot, so it "
							 "cannot be read: encrypt the whole mail to the robot's key"));
	}
	/* Classify before anything is written: the disposition is part of
	 * the append-only message row. */
	if (!bounce && !automatic && c->m->problem == NULL && !c->replay) {
		s = lifecycle_route(c, &route, &entry_id, err);
		if (s != VULNID_OK)
			return s;
	}
	if (bounce)
		sm.disposition = "bounce";
	else if (automatic || c->m->problem != NULL || c->replay || route == ROUTE_LIMITED)
		sm.disposition = "quarantined";
	else if (route == ROUTE_ENTRY)
		sm.disposition = "entry";
	else if (route == ROUTE_UNKNOWN_ENTRY)
		sm.disposition = "rejected";
	else if (route == ROUTE_COMMANDS)
		sm.disposition = "commands";
	else {
		request_limits lim = { c->cfg->max_ids, c->cfg->max_fields, c->cfg->max_field_length };

		r = request_parse(c->m->text, c->m->subject, &lim, c->now_dt);
		if (c->m->text_cut_from > 0)
			request_note_text_cut(r, c->m->text_kept, c->m->text_cut_from, c->m->text_kept_as);
		sm.disposition = r->is_help ? "help" : r->is_key ? "key" : r->errors->len > 0 ? "rejected" : "request";
	}
	if (route == ROUTE_ENTRY || route == ROUTE_COMMANDS) {
		/* mail to an embargoed entry is sealed like the entry */
		s = lifecycle_route_sealed(c, route, entry_id, &sealed, err);
		if (s != VULNID_OK)
			return s;
	} else if (route == ROUTE_LIMITED && c->m->text != NULL) {
		request_limits lim = { c->cfg->max_ids, c->cfg->max_fields, c->cfg->max_field_length };
		g_autoptr(request) lr = request_parse(c->m->text, c->m->subject, &lim, c->now_dt);

		sealed = intake_request_embargoed(lr);
	}
	if ((r != NULL && route == ROUTE_NEW && intake_request_embargoed(r)) || sealed) {
		/* An embargoed request is kept only encrypted to the robot: its
		 * text if it came in clear, its header (the Subject) anyway. */
		g_autofree char *robot = NULL;

		s = crypto_robot_fingerprint(&robot, err);
		if (s == VULNID_OK)
			s = store_blob_put_sealed(c->st, sp->fd, sp->size, sp->raw_sha256, robot, err);
		sm.subject = NULL;
	} else {
		s = store_blob_put_fd(c->st, sp->fd, sp->size, sp->raw_sha256, err);
		sm.subject = c->m->subject;
	}
	if (s != VULNID_OK)
		return s;
	sm.received = c->now;
	sm.raw_sha256 = sp->raw_sha256;
	sm.dedup_key = key;
	sm.message_id = c->m->message_id;
	sm.envelope_from = c->envelope_sender;
	sm.envelope_to = rcpt;
	sm.from_addr = c->m->from_addr;
	s = store_message_insert(c->st, &sm, &c->msg_row, err);
	if (s != VULNID_OK)
		return s;

	ev = audit_event_new("received", NULL, c->m->message_id);
	audit_event_int(ev, "message", c->msg_row);
	audit_event_str(ev, "from", c->m->from_addr);
	audit_event_str(ev, "sender", c->envelope_sender);
	audit_event_str(ev, "recipient", sm.envelope_to);
	audit_event_int(ev, "size", sp->size);
	audit_event_str(ev, "sha256", sp->raw_sha256);
	audit_event_str(ev, "disposition", sm.disposition);
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;

	if (c->m->sig->present && c->m->sig->raw != NULL && !c->replay) {
		/* The raw signature is kept; for an embargoed request it may
		 * be the whole clearsigned text, so it is sealed like it. */
		if ((r != NULL && intake_request_embargoed(r)) || sealed) {
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
	if (replay != NULL && !c->replay) {
		sqlite3_stmt *ins;

		ins = store_prepare(c->st, "INSERT INTO signatures (sha256, fingerprint, message, created)"
				    " VALUES (?, ?, ?, ?)", &s, err);
		if (ins == NULL)
			return s;
		sqlite3_bind_text(ins, 1, replay, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, c->m->sig->fpr, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 3, c->msg_row);
		sqlite3_bind_text(ins, 4, c->now, -1, SQLITE_TRANSIENT);
		s = store_step_done(c->st, ins, "signatures", err);
		if (s != VULNID_OK)
			return s;
	}
	if (c->imported_key == NULL && c->m->sig->valid && c->m->pgp_keys != NULL && c->m->sig->fpr != NULL) {
		/* A retry after 75 finds the key imported on the first try: the
		 * event is still owed if it was never committed. */
		sqlite3_stmt *q = store_prepare(c->st, "SELECT 1 FROM audit WHERE line LIKE ?1"
						" AND line LIKE '%\"event\":\"key-imported\"%'", &s, err);
		g_autofree char *like = g_strdup_printf("%%\"fingerprint\":\"%s\"%%", c->m->sig->fpr);
		int rc;

		if (q == NULL)
			return s;
		sqlite3_bind_text(q, 1, like, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc == SQLITE_DONE)
			s = audit_key_import(c, c->m->sig->fpr, err);
		else if (rc != SQLITE_ROW)
			s = store_fail(c->st, rc, "audit", err);
		if (s != VULNID_OK)
			return s;
	}
	if (c->imported_key != NULL) {
		s = audit_key_import(c, c->imported_key, err);
		if (s != VULNID_OK)
			return s;
	}
	if (bounce)
		return intake_bounce(c, rcpt, err);
	if (c->replay)
		return mail_quarantine(c, "replay", "its signature was processed before; "
				       "a replayed signed mail has no effect", err);
	if (automatic)
		return mail_quarantine(c, "automatic", why, err);
	if (c->m->problem != NULL)
		return intake_malformed(c, err);
	if (route != ROUTE_NEW) {
		c->res->outcome = route == ROUTE_COMMANDS ? INTAKE_COMMANDS
				: route == ROUTE_LIMITED ? INTAKE_QUARANTINED : INTAKE_ENTRY;
		return lifecycle_handle(c, route, entry_id, err);
	}
	if (r->is_help)
		return intake_help(c, err);
	if (r->is_key)
		return intake_key(c, err);
	if (r->errors->len > 0)
		return intake_rejected(c, r, err);
	return intake_assign(c, r, err);
}

static void
intake_after_commit(intake_ctx *c)
{
	g_autoptr(GError) e = NULL;
	outbox_run_result rr;

	/* The job is done once the transaction commits; these steps only
	 * make its results visible sooner, and are repeated by the next
	 * process or `vulnid queue run` when they fail here. */
	outbox_run_opts ro = { c->msg_row, FALSE, (guint) c->cfg->filter_budget, notify_delivery_failed };

	if (c->cfg->filter_budget > 0 &&
	    (outbox_run(c->st, c->cfg, &ro, &rr, &e) != VULNID_OK || rr.deferred > 0)) {
		g_autofree char *m = text_mask_controls(e != NULL ? e->message : "");

		if (e != NULL)
			c->res->warning = g_strdup(e->message);
		syslog(LOG_MAIL | LOG_WARNING, "delivery deferred%s%s (%u item%s; see vulnid queue list)",
		       e != NULL ? ": " : "", m, rr.deferred, rr.deferred == 1 ? "" : "s");
		g_clear_error(&e);
	}
	if (audit_flush(c->st, c->cfg->audit_path, &e) != VULNID_OK) {
		syslog(LOG_MAIL | LOG_WARNING, "audit log: %s", e->message);
		if (c->res->warning == NULL)
			c->res->warning = g_strdup(e->message);
	}
}

vulnid_status
intake_message(const vulnid_config *cfg, int in_fd, const intake_envelope *env,
	       intake_result **result, GError **err)
{
	g_autoptr(message_spool) sp = NULL;
	g_autoptr(message) m = NULL;
	g_autoptr(store) st = NULL;
	g_autoptr(intake_result) res = g_new0(intake_result, 1);
	g_autoptr(GDateTime) now_dt = store_now_datetime();
	g_autofree char *now = g_date_time_format(now_dt, "%Y-%m-%dT%H:%M:%SZ");
	message_limits lim = {
		cfg->max_message_size, cfg->max_header_size, cfg->max_headers,
		cfg->max_line_length, cfg->max_parts, cfg->max_depth, cfg->max_request_text,
	};
	intake_ctx c = { 0 };
	g_autofree char *imported = NULL;
	g_autofree char *auth = NULL;
	gboolean duplicate = FALSE;
	vulnid_status s;

	res->ids = g_ptr_array_new_with_free_func(g_free);
	if (g_mkdir_with_parents(cfg->spool_dir, 0700) < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   cfg->spool_dir, g_strerror(errno));
	s = message_spool_input(in_fd, cfg->spool_dir, cfg->max_message_size, &sp, err);
	if (s != VULNID_OK)
		return s;
	s = message_parse(sp, &lim, &m, err);
	if (s != VULNID_OK)
		return s;
	if (m->crypto_unavailable)
		return vulnid_fail(err, VULNID_ERR_TEMP, "the mail is encrypted to the robot, whose key "
				   "cannot be used now (is gpg-agent running?)");
	s = store_open(cfg->db_path, cfg->busy_timeout, STORE_OPEN_EXISTING, &st, err);
	if (s != VULNID_OK)
		return s;

	c.cfg = cfg;
	c.env = env;
	c.st = st;
	c.m = m;
	c.now = now;
	c.now_dt = now_dt;
	c.res = res;
	c.envelope_sender = env->sender != NULL ? env->sender : sp->mbox_sender;
	intake_tofu(&c, &imported);
	c.imported_key = imported;
	auth = auth_json(m, &c.signer);
	c.auth_json = auth;

	/* The mail this one causes is delivered right after the commit, by
	 * this process: it is claimed as it is queued (no transaction of its
	 * own), for as long as that delivery may take. */
	if (cfg->filter_budget > 0)
		outbox_claim_queued(outbox_claim_seconds(cfg, (guint) cfg->filter_budget));
	s = store_begin(st, err);
	if (s != VULNID_OK)
		return s;
	s = intake_record(&c, sp, &duplicate, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		if (s == VULNID_ERR_EXHAUSTED) {
			/* Nothing of the mail is kept; the MTA retries until the
			 * operator adds blocks.  The event itself is recorded. */
			g_autoptr(audit_event) ev = audit_event_new("blocks-exhausted", NULL, m->message_id);
			g_autoptr(GError) e2 = NULL;

			audit_event_int(ev, "year", g_date_time_get_year(now_dt));
			if (audit_append_now(st, ev, &e2) == VULNID_OK)
				audit_flush(st, cfg->audit_path, NULL);
		}
		return s;
	}
	s = store_commit(st, err);
	if (s != VULNID_OK)
		return s;
	time_limit_mark_committed();
	intake_after_commit(&c);
	*result = g_steal_pointer(&res);
	return VULNID_OK;
}
