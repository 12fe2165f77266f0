/* lifecycle.c - mail about existing entries (see lifecycle.h): routing,
 * roles, tokens, additions and vendor responses, commands, relaying for
 * anonymous researchers, subscriptions, rate limits
 *
 * Everything here runs inside the intake transaction of one mail and only
 * appends: records, tokens rows, outbox items and audit events. */
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
#include "store-policy.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"
#include "lifecycle-internal.h"

/* ---- configuration ([lifecycle], checked when config.c loads it) ---------- */

gboolean
lifecycle_confirm_unsigned(const vulnid_config *cfg)
{
	return config_key_bool(cfg, "lifecycle", "confirm_unsigned");
}

/* A fingerprint without spaces, upper case, for comparing. */
static char *
fpr_norm(const char *f)
{
	GString *s = g_string_new(NULL);

	for (; f != NULL && *f; f++)
		if (!g_ascii_isspace(*f))
			g_string_append_c(s, g_ascii_toupper(*f));
	return g_string_free(s, FALSE);
}

gboolean
lc_fpr_equal(const char *a, const char *b)
{
	g_autofree char *x = fpr_norm(a);
	g_autofree char *y = fpr_norm(b);

	return *x != '\0' && strcmp(x, y) == 0;
}

gboolean
lc_is_moderator(const vulnid_config *cfg, const char *fpr)
{
	g_autofree char *list = config_key_string(cfg, "lifecycle", "moderators");
	g_auto(GStrv) parts = g_strsplit_set(list, ",;", -1);

	if (fpr == NULL)
		return FALSE;
	for (char **p = parts; *p != NULL; p++)
		if (lc_fpr_equal(*p, fpr))
			return TRUE;
	return FALSE;
}

/* ---- the entry points --------------------------------------------------------------- */

static vulnid_status
handle_limited(mail_ctx *c, const char *entry_id, GError **err)
{
	const char *to = lc_reply_address_of(c);
	g_autofree char *since = ratelimit_since(c->now_dt, 3600);
	g_autoptr(GHashTable) vars = NULL;
	gint64 n = 0;
	vulnid_status s;

	s = mail_quarantine(c, "rate-limit",
			    entry_id != NULL ? "more mail about entries in an hour than the limit allows"
					     : "more mail in an hour than the limit allows", err);
	if (s != VULNID_OK || to == NULL || !config_address_valid(to))
		return s;
	/* One notice an hour at most: a flood must not become one back. */
	s = store_policy_rate_notices(c->st, to, since, &n, err);
	if (s != VULNID_OK || n > 0)
		return s;
	vars = mail_template_vars(c);
	g_hash_table_insert(vars, "what", g_strdup("more mail came from your address (or key) in the last hour\n"
						   "than this robot accepts"));
	return mail_reply(c, "rate-limited", "rate-limited.txt", vars, NULL, NULL, err);
}

static vulnid_status
handle_unknown(mail_ctx *c, const char *entry_id, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);
	g_autoptr(audit_event) ev = audit_event_new("rejected", NULL, c->m->message_id);
	g_autofree char *clean = text_clean_line(entry_id != NULL ? entry_id : "", 64);
	vulnid_status s;

	audit_event_str(ev, "reason", "unknown entry");
	audit_event_str(ev, "entry", clean);
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	c->res->outcome = INTAKE_REJECTED;
	c->res->reason = g_strdup_printf("unknown entry %s", clean);
	g_hash_table_insert(vars, "what", g_strdup("it is about an entry that does not exist"));
	g_hash_table_insert(vars, "errors", g_strdup_printf(
		"  - there is no entry %s here: check the identifier in the address,\n"
		"    the Subject or the mail you replied to (\"lookup ID\" finds an entry)\n", clean));
	return mail_reply(c, "error", "error.txt", vars, NULL, NULL, err);
}

/* Tokens first: they decide roles.  A token is never echoed. */
static vulnid_status
read_tokens(lc_mail *l, GError **err)
{
	const mail_ctx *c = l->c;

	for (guint i = 0; c->tokens != NULL && i < c->tokens->len; i++) {
		token_row *t = NULL;
		vulnid_status s = tokens_find(l->c->st, g_ptr_array_index(c->tokens, i), &t, err);

		if (s != VULNID_OK)
			return s;
		if (t == NULL) {
			g_string_append(l->out, "Token: not recognised (it was not recorded).\n\n");
			continue;
		}
		if (strcmp(t->role, "creator") == 0 || strcmp(t->role, "vendor") == 0)
			g_string_append_printf(l->out, "Token: accepted: you act as the %s of %s.\n\n", t->role,
					       t->entry);
		g_ptr_array_add(l->tokens, t);
	}
	if (c->bad_tokens > 0)
		g_string_append_printf(l->out, "%u Token line%s not understood (a token is the string starting\n"
				       "with \"" TOKENS_PREFIX "\" in the robot's mail); %s not recorded.\n\n", c->bad_tokens,
				       c->bad_tokens == 1 ? " was" : "s were", c->bad_tokens == 1 ? "it was" : "they were");
	return VULNID_OK;
}

/* What the tokens themselves confirm: a subscription, an unsigned
 * request's working mailbox (confirm_unsigned). */
static vulnid_status
act_on_tokens(lc_mail *l, GError **err)
{
	for (guint i = 0; i < l->tokens->len; i++) {
		const token_row *t = g_ptr_array_index(l->tokens, i);
		vulnid_status s = VULNID_OK;

		if (strcmp(t->role, "subscribe") == 0 || strcmp(t->role, "unsubscribe") == 0)
			s = lc_confirm_subscription(l, t, err);
		else if (strcmp(t->role, "creator") == 0) {
			g_autoptr(entry) e = NULL;
			role_info ri;

			s = lc_load_entry(l->c->st, t->entry, TRUE, &e, err);
			if (s == VULNID_OK)
				s = lc_role_for(l, e, &ri, err);
			if (s == VULNID_OK)
				s = lc_confirm_if_pending(l, t->entry, &ri, err);
		}
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* A good signature that grants nothing on the entry: said, not silent. */
static void
key_without_role(lc_mail *l, const entry *e, const role_info *ri)
{
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;

	if (l->c->signer == NULL || l->c->unbound != NULL || strcmp(ri->how, "key") == 0)
		return;
	g_string_append_printf(l->out, "Your mail is signed by the OpenPGP key %s, but that key has no\n"
			       "role on %s: %s. The mail counts as\n"
			       "written by the %s (%s).\n\n", l->c->signer, e->id,
			       first != NULL && first->signer == NULL
			       ? "the entry was requested without a signature, so no key is its\n"
				 "creator's (the token from the acknowledgement is)"
			       : "it is not the creator's, the vendor's or a moderator's key",
			       strcmp(ri->role, "third-party") == 0 ? "third party" : ri->role,
			       entry_how_phrase(entry_how_from_str(ri->how)));
}

vulnid_status
lifecycle_handle(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id, GError **err)
{
	g_autoptr(mail_text) mt = NULL;
	g_autoptr(GPtrArray) tokens = g_ptr_array_new_with_free_func(token_row_free);
	g_autoptr(GString) out = g_string_new(NULL);
	lc_mail l = { 0 };
	vulnid_status s = VULNID_OK;

	switch (kind) {
	case ROUTE_LIMITED:
		return handle_limited(c, entry_id, err);
	case ROUTE_UNKNOWN_ENTRY:
		return handle_unknown(c, entry_id, err);
	case ROUTE_ENTRY:
	case ROUTE_COMMANDS:
		break;
	case ROUTE_NEW:
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "a new request is not entry mail");
	}
	mt = commands_split(c->m->text, c->cfg->prefix, (guint) c->cfg->max_fields);
	l.c = c;
	l.mt = mt;
	l.tokens = tokens;
	l.out = out;
	l.routed = kind == ROUTE_ENTRY ? entry_id : NULL;
	l.subject = g_strdup(c->m->subject != NULL ? c->m->subject : "");
	s = read_tokens(&l, err);
	if (s != VULNID_OK)
		goto out;
	if (c->unbound != NULL && c->signer != NULL)
		g_string_append_printf(out, "Your mail is signed by the OpenPGP key %s, but the signed text does not\n"
				       "name %s, the entry it was sent to: the signature grants no role for\n"
				       "any entry, and the mail is recorded as if it were not signed (write the\n"
				       "identifier in the signed text for the signature to count).\n\n",
				       c->signer, c->unbound);
	if (l.routed != NULL) {
		g_autoptr(entry) e = NULL;
		role_info ri;

		s = lc_load_entry(c->st, l.routed, TRUE, &e, err);
		if (s == VULNID_OK)
			s = lc_endorse_by_certification(&l, e, err);
		if (s == VULNID_OK)
			s = lc_role_for(&l, e, &ri, err);
		if (s == VULNID_OK)
			key_without_role(&l, e, &ri);
		if (s == VULNID_OK)
			s = lc_handle_addition(&l, e, &ri, err);
		if (s != VULNID_OK)
			goto out;
	}
	s = act_on_tokens(&l, err);
	if (s != VULNID_OK)
		goto out;
	for (guint i = 0; i < mt->commands->len; i++) {
		s = lc_run_command(&l, g_ptr_array_index(mt->commands, i), err);
		if (s != VULNID_OK)
			goto out;
	}
	if (mt->dropped > 0)
		g_string_append_printf(out, "%u more command line%s not handled: at most %d are handled per mail.\n\n",
				       mt->dropped, mt->dropped == 1 ? " was" : "s were", COMMANDS_MAX);
	/* A reply that asks for a confirmation belongs to its entry: the
	 * answer, quoting it or not, goes there (lifecycle-route.c). */
	s = lc_send_reply(&l, l.routed != NULL ? l.routed : l.pending_many ? NULL : l.pending, err);
out:
	g_free(l.subject);
	g_free(l.pending);
	if (l.attachments != NULL)
		g_ptr_array_unref(l.attachments);
	if (l.key != NULL)
		g_bytes_unref(l.key);
	return s;
}

vulnid_status
lifecycle_defer_notify(mail_ctx *c, const char *entry_id, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("unconfirmed", entry_id, c->m->message_id);
	vulnid_status s = tokens_mark(c->st, entry_id, "unconfirmed", lc_reply_address_of(c), err);

	if (s != VULNID_OK)
		return s;
	return audit_append(c->st, ev, err);
}
