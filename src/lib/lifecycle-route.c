/* lifecycle-route.c - where a mail about entries goes: plus address,
 * In-Reply-To/References, [ID] tag, commands only; the rate limits on it;
 * which entries a text names; whether the mail is archived sealed
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

/* ---- routing ------------------------------------------------------------------- */

/* The detail of request+DETAIL@domain, or NULL. */
static char *
plus_detail(const vulnid_config *cfg, const char *rcpt)
{
	g_autofree char *a = NULL;
	const char *at, *plus;
	gsize nl = strlen(cfg->request_local);

	if (rcpt == NULL)
		return NULL;
	a = g_strstrip(g_strdup(rcpt));
	if (*a == '<' && a[strlen(a) - 1] == '>') {
		a[strlen(a) - 1] = '\0';
		memmove(a, a + 1, strlen(a));
	}
	at = strrchr(a, '@');
	if (at == NULL || g_ascii_strcasecmp(at + 1, cfg->domain) != 0)
		return NULL;
	plus = strchr(a, '+');
	if (plus == NULL || plus > at || (gsize) (plus - a) != nl ||
	    g_ascii_strncasecmp(a, cfg->request_local, nl) != 0 || plus + 1 == at)
		return NULL;
	return g_strndup(plus + 1, (gsize) (at - plus - 1));
}

/* The entry of an outbox item with this Message-ID, if it is ours;
 * *commands is set when it is the robot's answer to commands that names
 * no one entry (confirmations of several). */
static vulnid_status
route_by_msgid(mail_ctx *c, const char *msgid, char **entry_id, gboolean *commands, GError **err)
{
	g_autoptr(outbox_ref) ref = NULL;
	g_autoptr(GError) e = NULL;
	const char *at;
	vulnid_status s;

	if (msgid == NULL)
		return VULNID_OK;
	at = strrchr(msgid, '@');
	if (at == NULL || g_ascii_strcasecmp(at + 1, c->cfg->domain) != 0)
		return VULNID_OK;
	s = outbox_find_by_message_id(c->st, msgid, &ref, &e);
	if (s == VULNID_ERR_NOTFOUND)
		return VULNID_OK;
	if (s != VULNID_OK) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s;
	}
	if (ref->entry == NULL && ref->kind != NULL && strcmp(ref->kind, "entry-reply") == 0)
		*commands = TRUE;
	if (ref->entry != NULL) {
		gboolean found = FALSE;

		s = store_lifecycle_entry_exists(c->st, ref->entry, &found, err);
		if (s != VULNID_OK)
			return s;
		if (found)
			*entry_id = g_strdup(ref->entry);
	}
	return VULNID_OK;
}

/* The first [ID] tag of the subject with this instance's prefix. */
static char *
subject_tag(const vulnid_config *cfg, const char *subject)
{
	const char *p = subject;

	for (int n = 0; p != NULL && n < 10; n++) {
		const char *open = strchr(p, '[');
		const char *close = open != NULL ? strchr(open, ']') : NULL;
		g_autofree char *inner = NULL;
		char *id = NULL;

		if (close == NULL)
			return NULL;
		inner = g_strstrip(g_strndup(open + 1, (gsize) (close - open - 1)));
		if (commands_is_entry_id(inner, cfg->prefix, &id))
			return id;
		p = close + 1;
	}
	return NULL;
}

vulnid_status
lifecycle_route_target(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err)
{
	g_autofree char *detail = plus_detail(c->cfg, c->recipient);
	g_autofree char *id = NULL;
	gboolean found = FALSE, to_commands = FALSE;
	vulnid_status s;

	*kind = ROUTE_NEW;
	*entry_id = NULL;
	if (detail != NULL) {
		/* Some MTAs fold the address to lower case. */
		if (!commands_is_entry_id(detail, c->cfg->prefix, &id)) {
			*kind = ROUTE_UNKNOWN_ENTRY;
			*entry_id = text_clean_line(detail, 64);
			return VULNID_OK;
		}
	}
	if (id == NULL) {
		s = route_by_msgid(c, c->m->in_reply_to, &id, &to_commands, err);
		for (guint i = c->m->references->len; s == VULNID_OK && id == NULL && i > 0; i--)
			s = route_by_msgid(c, g_ptr_array_index(c->m->references, i - 1), &id, &to_commands, err);
		if (s != VULNID_OK)
			return s;
	}
	if (id == NULL)
		id = subject_tag(c->cfg, c->m->subject);
	if (id != NULL) {
		s = store_lifecycle_entry_exists(c->st, id, &found, err);
		if (s != VULNID_OK)
			return s;
		*kind = found ? ROUTE_ENTRY : ROUTE_UNKNOWN_ENTRY;
		*entry_id = g_steal_pointer(&id);
	} else if (c->m->text != NULL) {
		g_autoptr(mail_text) mt = commands_split(c->m->text, c->cfg->prefix, (guint) c->cfg->max_fields);

		/* An answer to the robot's answer with a token in it confirms
		 * what that asked for; it never starts an entry. */
		if (commands_only(mt) || (to_commands && mt->tokens->len > 0))
			*kind = ROUTE_COMMANDS;
	}
	return VULNID_OK;
}

vulnid_status
lifecycle_route_limit(mail_ctx *c, lifecycle_route_kind *kind, GError **err)
{
	gboolean over = FALSE;
	const char *why = NULL;
	vulnid_status s = ratelimit_check(c, *kind == ROUTE_NEW, &over, &why, err);

	if (s == VULNID_OK && over)
		*kind = ROUTE_LIMITED;
	return s;
}

vulnid_status
lifecycle_route(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err)
{
	vulnid_status s = lifecycle_route_target(c, kind, entry_id, err);

	return s == VULNID_OK ? lifecycle_route_limit(c, kind, err) : s;
}

/* Whether text names entry id: the identifier, in any case, not inside a
 * longer word or identifier.  What a signature's authority over an entry
 * requires. */
gboolean
lifecycle_text_names_entry(const char *text, const char *id)
{
	gsize n = id != NULL ? strlen(id) : 0;

	if (text == NULL || n == 0)
		return FALSE;
	for (const char *p = text; *p != '\0'; p++) {
		if (g_ascii_strncasecmp(p, id, n) != 0)
			continue;
		if ((p > text && (g_ascii_isalnum(p[-1]) || p[-1] == '-')) || g_ascii_isalnum(p[n]))
			continue;
		return TRUE;
	}
	return FALSE;
}

/* The identifiers of this robot that text names, the first
 * MAX_NAMED_ENTRIES of them, each once. */
static GPtrArray *
named_entries(const vulnid_config *cfg, const char *text)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	gsize pn = strlen(cfg->prefix);

	for (const char *p = text; p != NULL && *p != '\0' && out->len < MAX_NAMED_ENTRIES; p++) {
		const char *q = p;
		g_autofree char *word = NULL;
		char *id = NULL;
		gboolean dup = FALSE;

		if (g_ascii_strncasecmp(p, cfg->prefix, pn) != 0 || p[pn] != '-' ||
		    (p > text && (g_ascii_isalnum(p[-1]) || p[-1] == '-')))
			continue;
		while (g_ascii_isalnum(*q) || *q == '-')
			q++;
		word = g_strndup(p, (gsize) (q - p));
		p = q - 1;
		if (!commands_is_entry_id(word, cfg->prefix, &id))
			continue;
		for (guint i = 0; i < out->len; i++)
			dup |= strcmp(g_ptr_array_index(out, i), id) == 0;
		if (dup)
			g_free(id);
		else
			g_ptr_array_add(out, id);
	}
	return out;
}

vulnid_status
lifecycle_text_other_entry(mail_ctx *c, const char *except, char **other, GError **err)
{
	g_autoptr(GPtrArray) ids = named_entries(c->cfg, c->m->text);

	*other = NULL;
	for (guint i = 0; i < ids->len; i++) {
		const char *id = g_ptr_array_index(ids, i);
		gboolean found = FALSE;
		vulnid_status s;

		if (except != NULL && g_ascii_strcasecmp(id, except) == 0)
			continue;
		s = store_lifecycle_entry_exists(c->st, id, &found, err);
		if (s != VULNID_OK)
			return s;
		if (found) {
			*other = g_strdup(id);
			return VULNID_OK;
		}
	}
	return VULNID_OK;
}

vulnid_status
lifecycle_route_sealed(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id, gboolean *sealed,
		       GError **err)
{
	g_autoptr(entry) e = NULL;
	vulnid_status s;

	*sealed = FALSE;
	if (kind != ROUTE_ENTRY || entry_id == NULL)
		return VULNID_OK;
	s = entry_load(c->st, entry_id, &e, err);
	if (s == VULNID_OK)
		*sealed = entry_embargoed(e);
	return s;
}
