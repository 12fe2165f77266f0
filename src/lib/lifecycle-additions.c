/* lifecycle-additions.c - an addition or vendor response to an entry: the
 * fields each role may set, the record, who is told
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

/* ---- the addition --------------------------------------------------------------- */

static gboolean
key_in(const char *key, const char *const *list)
{
	for (; *list != NULL; list++)
		if (g_ascii_strcasecmp(key, *list) == 0)
			return TRUE;
	return FALSE;
}

/* Why a field of an addition is not taken (NULL: it is).  Fields feed the
 * entry's view, so those that steer the robot belong to their roles. */
static const char *
field_refusal(const char *key, char **value, const role_info *ri)
{
	static const char *const reserved[] = {
		"Withdrawn", "Duplicate-Of", "Spam", "Link", "Alias", "Rating", "Rating-Reason",
		"Confirmed", "Command", "Subscribe", "Unsubscribe", "Endorse", "Endorse-Fields",
		"Unendorse", "Approve", "Approve-Key", "Reviewed", "Reviewed-Product", "Reviewed-Version",
		"Access-Request", "Access-Grant", "Delivered-To-Key", NULL,
	};
	static const char *const owned[] = { "Title", "Vendor", "Product", "Type", "Vendor-Contact", NULL };

	if (g_ascii_strcasecmp(key, "Anonymous") == 0)
		return "anonymity is chosen in the request and cannot change";
	if (g_ascii_strcasecmp(key, "Embargo") == 0)
		return "the creator moves an embargo with the command \"embargo YYYY-MM-DD\"";
	if (g_ascii_strcasecmp(key, "Status") == 0) {
		g_autofree char *v = g_ascii_strdown(*value, -1);

		if (strcmp(ri->role, "vendor") != 0)
			return "only the vendor states a position";
		if (strcmp(v, "disputed") != 0 && strcmp(v, "confirmed") != 0 && strcmp(v, "fixed") != 0)
			return "the position is disputed, confirmed or fixed";
		g_free(*value);
		*value = g_steal_pointer(&v);
		return NULL;
	}
	if (key_in(key, reserved))
		return "it is set by a command only (send \"help\" for the commands)";
	if (key_in(key, owned) && strcmp(ri->role, "third-party") == 0)
		return "only the creator, the vendor or a moderator may change it";
	return NULL;
}

/* Why a Mirror field is not taken: it names no reference of the entry
 * (its checksum or its URL, among the headline's references and the
 * proposed ones), or NULL. */
static const char *
mirror_refusal(const entry_facts *f, const char *value)
{
	g_autofree char *url = NULL;
	g_autofree char *sha = NULL;
	g_autofree char *of = NULL;

	if (!entry_reference_parse(value, &url, &sha, &of) || (sha == NULL && of == NULL))
		return "write Mirror: URL sha256=HEX, or Mirror: URL of REFERENCE-URL";
	for (int k = 0; k < 2; k++) {
		GPtrArray *list = k == 0 ? f->references : f->proposals;

		for (guint i = 0; i < list->len; i++) {
			const entry_claim *c = g_ptr_array_index(list, i);
			g_autofree char *u = NULL;
			g_autofree char *h = NULL;
			g_autofree char *o = NULL;

			if (g_ascii_strcasecmp(c->key, "Reference") != 0)
				continue;
			entry_reference_parse(c->value, &u, &h, &o);
			if (k == 0 && c->sha256 != NULL)
				h = g_strdup(c->sha256);
			if (sha != NULL ? g_strcmp0(h, sha) == 0 : u != NULL && g_ascii_strcasecmp(u, of) == 0)
				return NULL;
		}
	}
	return "it names no reference of the entry (by its checksum or its URL)";
}

/* Fields and text of the mail as a record of kind addition or
 * vendor-response; post-actions: the researcher or the vendor told. */
/* What the fields of an addition become: the canonical fields, the text
 * kept (lines not taken as fields), the notes for the reply. */
typedef struct {
	GString *fields;
	GString *kept;
	GString *notes;
	guint nfields;
	gboolean vendor_fields;	/* Vendor or Vendor-Contact among them */
} addition_parts;

/* Each "Key: value" chunk of the mail: a field the sender's role may set,
 * redacted for an anonymous researcher (tokens were taken out of the mail
 * on the way in); else kept in the text with a note why. */
static void
addition_fields(lc_mail *l, const role_info *ri, const entry_facts *facts, const researcher_identity *hide,
		addition_parts *af)
{
	mail_ctx *c = l->c;
	request_limits lim = { 1, 1, c->cfg->max_field_length };

	for (guint i = 0; i < l->mt->fields->len; i++) {
		const char *chunk = g_ptr_array_index(l->mt->fields, i);
		g_autoptr(request) r = request_parse(chunk, NULL, &lim, c->now_dt);
		const request_block *b = r->blocks->len == 1 ? g_ptr_array_index(r->blocks, 0) : NULL;
		request_field *f = b != NULL && b->fields->len == 1 ? g_ptr_array_index(b->fields, 0) : NULL;
		const char *why;
		g_autofree char *value = NULL;
		g_autofree char *clean_key = NULL;

		if (f == NULL) {
			g_string_append_printf(af->kept, "%s\n", chunk);
			continue;
		}
		clean_key = text_clean_line(f->key, 64);
		value = g_strdup(f->value);
		if (r->errors->len > 0)
			why = g_ptr_array_index(r->errors, 0);
		else
			why = field_refusal(f->key, &value, ri);
		if (why == NULL && g_ascii_strcasecmp(f->key, "Mirror") == 0)
			why = mirror_refusal(facts, value);
		if (why != NULL) {
			g_string_append_printf(af->kept, "%s\n", chunk);
			g_string_append_printf(af->notes, "  %s: not taken as a field (%s); kept in the text.\n",
					       clean_key, why);
			continue;
		}
		for (guint w = 0; w < r->warnings->len; w++)
			g_string_append_printf(af->notes, "  %s\n", (const char *) g_ptr_array_index(r->warnings, w));
		if (hide != NULL) {
			char *x = lc_redact(value, hide);

			g_free(value);
			value = x;
		}
		if (af->nfields++ > 0)
			g_string_append_c(af->fields, ',');
		g_string_append_c(af->fields, '[');
		canonjson_string(af->fields, f->key);
		g_string_append_c(af->fields, ',');
		canonjson_string(af->fields, value);
		g_string_append_c(af->fields, ']');
		af->vendor_fields |= g_ascii_strcasecmp(f->key, "Vendor") == 0 ||
				 g_ascii_strcasecmp(f->key, "Vendor-Contact") == 0;
	}
}

vulnid_status
lc_handle_addition(lc_mail *l, entry *e, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GString) fields = g_string_new("[");
	g_autoptr(GString) kept = g_string_new(NULL);
	g_autoptr(GString) notes = g_string_new(NULL);
	addition_parts af = { fields, kept, notes, 0, FALSE };
	g_autoptr(researcher_identity) hide = NULL;
	g_autoptr(entry_facts) facts = NULL;
	g_autofree char *body = NULL;
	const char *kind = strcmp(ri->role, "vendor") == 0 ? "vendor-response" : "addition";
	gboolean anonymous = lc_entry_is_anonymous(e), sealed;
	gint64 seq;
	vulnid_status s;

	hide = anonymous ? lc_researcher_of(l, e, ri) : NULL;
	facts = entry_facts_now(e);
	addition_fields(l, ri, facts, hide, &af);
	g_string_append_c(fields, ']');
	/* A reply that only quotes (a subscription confirmed by replying,
	 * commands above the quoted mail) adds no text. */
	if (!l->mt->quote_only) {
		g_autofree char *own = text_unautolink(l->mt->text);

		if (kept->len > 0 && *own != '\0')
			g_string_append_c(kept, '\n');
		g_string_append(kept, own);
	}
	while (kept->len > 0 && g_ascii_isspace(kept->str[kept->len - 1]))
		g_string_truncate(kept, kept->len - 1);
	body = hide != NULL ? lc_redact(kept->str, hide) : g_strdup(kept->str);
	if (af.nfields == 0 && *body == '\0' && c->m->attachments->len == 0) {
		if (l->mt->commands->len == 0 && l->mt->tokens->len == 0 && l->c->tokens->len == 0)
			g_string_append(l->out, "Nothing was recorded: the mail had no text, fields or attachments.\n\n");
		return VULNID_OK;
	}
	sealed = entry_embargoed(e);
	s = lc_store_attachments(l, !sealed, err);
	if (s != VULNID_OK)
		return s;
	s = lc_append_record(l, e, kind, ri, fields->str, body, l->attachments, sealed, &seq, err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(l->out, "Your mail was recorded as record %" G_GINT64_FORMAT " of %s: %s by the %s\n"
			       "(%s)%s.\n", seq, e->id, strcmp(kind, "vendor-response") == 0 ? "a vendor response"
			       : "an addition", strcmp(ri->role, "third-party") == 0 ? "third party" : ri->role,
			       entry_how_phrase(entry_how_from_str(ri->how)),
			       sealed ? ", sealed until the embargo ends" : "");
	if (l->mt->quotes_left_out)
		g_string_append(notes, "  The mail your text quotes was left out of the record (your mail is\n"
				       "  archived as it came).\n");
	if (af.nfields > 0 && strcmp(ri->role, "contributor") == 0 && ri->endorsed_fields[0] != '\0')
		g_string_append_printf(notes, "  Your key is endorsed for these fields: %s; the others are kept\n"
				       "  as proposals.\n", ri->endorsed_fields);
	else if (af.nfields > 0 && (!entry_how_verified(entry_how_from_str(ri->how)) ||
				    strcmp(ri->role, "third-party") == 0))
		g_string_append(notes, "  The fields are kept as proposals: the entry's title, vendor, product,\n"
				       "  type, versions and references change only by the creator's or the\n"
				       "  vendor's key or token, or an endorsed contributor's key (the creator\n"
				       "  may approve them: \"approve ID SEQ\").\n");
	if (notes->len > 0)
		g_string_append_printf(l->out, "Please note:\n%s", notes->str);
	g_string_append_c(l->out, '\n');
	if (strcmp(kind, "vendor-response") == 0)
		s = lc_tell_researcher(l, e, seq, ri, err);
	else if (strcmp(ri->role, "creator") == 0 && anonymous)
		s = lc_relay_to_vendor(l, e, seq, ri, err);
	if (s == VULNID_OK && af.vendor_fields && lc_creator_verified(ri))
		s = lc_renotify_vendor(l, e->id, err);
	return s;
}
