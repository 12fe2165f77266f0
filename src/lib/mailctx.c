/* mailctx.c - what every step of handling one incoming mail shares: the
 * template values of a reply, queueing a reply to the sender, the auth
 * object of a record, setting a mail aside.  Both intake.c and lifecycle.c
 * use it; it calls only modules below them (notify, outbox, audit, store). */
#include "autoconfig.h"

#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "commands.h"
#include "crypto.h"
#include "entry.h"
#include "mailctx.h"
#include "notify.h"
#include "random.h"
#include "text.h"
#include "tokens.h"

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
	if (m->unopened_clearsigned)
		return g_strdup("Your text is clearsigned (gpg --clearsign, sq sign --cleartext-signature),\n"
				"but it is one part of the mail beside attachments: only a signature of\n"
				"the whole mail is checked, so the signature was not checked and the mail\n"
				"is recorded as unauthenticated. Its fields were read from the signed\n"
				"text. To sign a mail with attachments, sign the whole mail (PGP/MIME:\n"
				"your mail program's OpenPGP signing); a clearsigned text counts when it\n"
				"is all the mail holds.\n\n");
	if (m->pgp_keys != NULL)
		return g_strdup("Your mail carries an OpenPGP key but is not signed, so the key was\n"
				"ignored: the robot takes a key only from a mail signed with it. Sign\n"
				"the mail with that key (PGP/MIME) and attach the key again.\n\n");
	return g_strdup("");
}

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

GHashTable *
mail_template_vars(const mail_ctx *c)
{
	GHashTable *v = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);

	g_hash_table_insert(v, "request_address", g_strdup(c->cfg->request_address));
	g_hash_table_insert(v, "domain", g_strdup(c->cfg->domain));
	g_hash_table_insert(v, "prefix", g_strdup(c->cfg->prefix));
	g_hash_table_insert(v, "date", g_strdup(c->now));
	/* The Subject of sealed mail is sealed with it: not repeated in a
	 * reply, which is kept in the outbox and travels in clear. */
	g_hash_table_insert(v, "subject", g_strdup(c->sealed ? "your embargoed mail"
						   : c->m->subject != NULL ? c->m->subject : ""));
	g_hash_table_insert(v, "message_id", g_strdup(c->m->message_id != NULL ? c->m->message_id : "(none)"));
	g_hash_table_insert(v, "auth", auth_sentence(c->m));
	g_hash_table_insert(v, "robot_fpr", crypto_robot_label());
	if (c->cfg->export_base_url != NULL && *c->cfg->export_base_url != '\0') {
		/* where the feed is, when the operator says where the archive is */
		const char *b = c->cfg->export_base_url;
		const char *sep = g_str_has_suffix(b, "/") ? "" : "/";
		g_autofree char *feed = g_strdup_printf("%s%sfeed/", b, sep);
		g_autofree char *where = g_strdup_printf(
			"The feed is published at %s (FEED-DIR is a copy of it, for example "
			"made with wget --mirror --no-parent %s); %s%sverify.html says how to "
			"check it and this robot's key.", feed, feed, b, sep);
		g_autofree char *w = text_wrap(where, 78);

		g_hash_table_insert(v, "feed_url", g_strdup(feed));
		g_hash_table_insert(v, "feed_where", g_strdup_printf("%s\n\n", w));
	}
	g_hash_table_insert(v, "hashcash",
			    c->cfg->hashcash_bits > 0
			    ? g_strdup_printf("A sender over the robot's hourly limits may pay with proof of work: a\n"
					      "Hashcash stamp of %" G_GINT64_FORMAT " bits minted for %s, as the\n"
					      "field X-Hashcash (\"hashcash -m -b %" G_GINT64_FORMAT " -X %s\").\n",
					      c->cfg->hashcash_bits, c->cfg->request_address, c->cfg->hashcash_bits,
					      c->cfg->request_address)
			    : g_strdup(""));
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
	if (s != VULNID_OK || id == 0)
		return s;	/* 0: held back by the policy (audited there) */
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

char *
mail_record_auth(const mail_ctx *c, gboolean withhold_key, const char *role, const char *how)
{
	const char *a = withhold_key && c->auth_json_withheld != NULL ? c->auth_json_withheld : c->auth_json;
	gsize n = a != NULL ? strlen(a) : 0;
	gboolean first;
	GString *s;

	if (n < 2 || a[0] != '{' || a[n - 1] != '}') {
		a = "{\"method\":\"none\"}";
		n = strlen(a);
	}
	if (role == NULL)
		return g_strdup(a);
	/* why a signature grants nothing here, then the role and how it was
	 * established, are hashed with the rest */
	s = g_string_new_len(a, (gssize) n - 1);
	first = n == 2;
	if (c->unbound != NULL && c->signer != NULL) {
		g_autofree char *ignored = g_strdup_printf("the signed text does not name %s, so the signature "
							   "grants no role for it", c->unbound);

		canonjson_member_str(s, &first, "ignored", ignored);
	}
	canonjson_member_str(s, &first, "role", role);
	canonjson_member_str(s, &first, "how", how);
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

vulnid_status
mail_record_signer(mail_ctx *c, gint64 row, const char *auth, GError **err)
{
	if (c->auth_json_withheld == NULL || c->signer == NULL ||
	    strncmp(auth, c->auth_json_withheld, strlen(c->auth_json_withheld) - 1) != 0)
		return VULNID_OK;
	return store_record_signer_insert(c->st, row, c->signer, c->key_salt, err);
}

/* Whether the attachment in fd is an OpenPGP key: its type says so, or
 * its first bytes are an armored key or a public-key packet (RFC 9580
 * 4.2: tag 6 in the old or the new format). */
static gboolean
attachment_is_key(const char *content_type, int fd)
{
	static const char armor[] = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
	char head[64] = { 0 };
	ssize_t n;
	gsize skip = 0;

	if (g_strcmp0(content_type, "application/pgp-keys") == 0 ||
	    g_strcmp0(content_type, "application/x-pgp-keys") == 0)
		return TRUE;
	n = pread(fd, head, sizeof head - 1, 0);
	if (n <= 0)
		return FALSE;
	while (skip < (gsize) n && g_ascii_isspace(head[skip]))
		skip++;
	if (strncmp(head + skip, armor, sizeof armor - 1) == 0)
		return TRUE;
	return ((guint8) head[0] & 0xfc) == 0x98 || (guint8) head[0] == 0xc6;
}

GPtrArray *
mail_record_attachments(const GPtrArray *atts, const researcher_identity *hide,
			gboolean withhold_keys, GError **err)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(entry_attachment_free);

	for (guint i = 0; atts != NULL && i < atts->len; i++) {
		entry_attachment *a = entry_attachment_copy(g_ptr_array_index(atts, i));

		g_ptr_array_add(out, a);
		if (withhold_keys && a->key && a->salt == NULL) {
			/* all of it private, its name too, as it came */
			a->salt = random_hex(16, err);
			if (a->salt == NULL)
				return NULL;
		} else if (hide != NULL && a->filename != NULL) {
			char *x = researcher_identity_redact(hide, a->filename);

			g_free(a->filename);
			a->filename = x;
		}
	}
	return g_steal_pointer(&out);
}

vulnid_status
mail_store_attachments(mail_ctx *c, gboolean store_blobs, GPtrArray *out, GError **err)
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
		ea->key = attachment_is_key(a->content_type, fd);
		close(fd);
		if (s != VULNID_OK)
			return s;
		ea->sha256 = g_strdup(sha);
		ea->filename = g_strdup(a->filename);
		ea->content_type = g_strdup(ea->key ? "application/pgp-keys" : a->content_type);
	}
	return VULNID_OK;
}

/* Whether address is one of list (comma-separated: a vendor token went
 * to all of the vendor's contacts). */
static gboolean
address_in(const char *list, const char *address)
{
	g_auto(GStrv) parts = g_strsplit(list != NULL ? list : "", ",", -1);

	for (char **p = parts; *p != NULL; p++)
		if (g_ascii_strcasecmp(g_strstrip(*p), address) == 0)
			return TRUE;
	return FALSE;
}

vulnid_status
mail_check_verified(mail_ctx *c, GError **err)
{
	const char *to = mail_reply_address(c);

	c->verified = c->signer != NULL ||
		      (c->from_verified != NULL && to != NULL && c->m->from_addr != NULL &&
		       g_ascii_strcasecmp(to, c->m->from_addr) == 0);
	for (guint i = 0; !c->verified && to != NULL && c->tokens != NULL && i < c->tokens->len; i++) {
		g_autoptr(token_row) t = NULL;
		vulnid_status s = tokens_find(c->st, g_ptr_array_index(c->tokens, i), &t, err);

		if (s != VULNID_OK)
			return s;
		c->verified = t != NULL && address_in(t->address, to);
	}
	return VULNID_OK;
}

vulnid_status
mail_redact_string(mail_ctx *c, char **s, GError **err)
{
	return tokens_redact(c->st, s, &c->quoted_tokens, err);
}

vulnid_status
mail_redact(mail_ctx *c, GError **err)
{
	message *m = c->m;
	vulnid_status s = VULNID_OK;

	if (c->tokens == NULL) {
		g_autoptr(mail_text) mt = commands_split(m->text, c->cfg->prefix, (guint) c->cfg->max_fields);

		c->tokens = g_ptr_array_ref(mt->tokens);
		c->bad_tokens = mt->bad_tokens;
	}
	s = mail_redact_string(c, &m->subject, err);
	if (s == VULNID_OK)
		s = mail_redact_string(c, &m->text, err);
	if (s == VULNID_OK)
		s = mail_redact_string(c, &m->message_id, err);
	if (s == VULNID_OK)
		s = mail_redact_string(c, &m->in_reply_to, err);
	for (guint i = 0; s == VULNID_OK && i < m->references->len; i++)
		s = mail_redact_string(c, (char **) &m->references->pdata[i], err);
	if (s == VULNID_OK)
		s = mail_redact_string(c, &m->from_name, err);
	if (s == VULNID_OK)
		s = mail_redact_string(c, &m->text_kept_as, err);
	for (guint i = 0; s == VULNID_OK && i < m->attachments->len; i++) {
		message_attachment *a = g_ptr_array_index(m->attachments, i);

		s = mail_redact_string(c, &a->filename, err);
	}
	for (guint i = 0; s == VULNID_OK && i < m->problems->len; i++)
		s = mail_redact_string(c, (char **) &m->problems->pdata[i], err);
	return s;
}
