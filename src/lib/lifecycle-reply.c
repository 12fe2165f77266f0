/* lifecycle-reply.c - the reply to the sender of a mail about entries:
 * the results of its commands, the help text, the robot's key
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

/* ---- replies ---------------------------------------------------------------------- */

static char *
help_text(const vulnid_config *cfg, GHashTable *vars)
{
	g_autofree char *t = NULL;
	g_autofree char *rendered = NULL;
	g_autofree char *subject = NULL;
	char *body = NULL;
	char *sig;

	if (template_load(cfg, "help.txt", &t, NULL) != VULNID_OK)
		return g_strdup("");
	rendered = template_render(t, vars);
	template_split(rendered, &subject, &body);
	if ((sig = strstr(body, "\n-- \n")) != NULL)
		sig[1] = '\0';
	return body;
}

/* Whether the Subject of the mail must stay out of the reply: the mail
 * was archived sealed, or the entry it is about is under embargo (one
 * that cannot be read counts as one; one that does not exist does not). */
static gboolean
reply_subject_secret(mail_ctx *c, const char *entry_id)
{
	g_autoptr(entry) e = NULL;
	vulnid_status s;

	if (c->sealed)
		return TRUE;
	if (entry_id == NULL)
		return FALSE;
	s = entry_load(c->st, entry_id, &e, NULL);
	if (s == VULNID_ERR_NOTFOUND)
		return FALSE;
	return s != VULNID_OK || entry_embargoed(e);
}

vulnid_status
lc_send_reply(lc_mail *l, const char *entry_id, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GHashTable) vars = NULL;
	g_autofree char *reply_to = entry_id != NULL ? lc_entry_address(c->cfg, entry_id) : NULL;
	g_autoptr(GString) subj = g_string_new(NULL);
	outbox_mail mail = { 0 };

	if (mail_reply_address(c) == NULL)
		return VULNID_OK;
	vars = mail_template_vars(c);
	{
		/* "Re: [ID] subject": the tag routes the answer to the entry.
		 * The reply goes out in clear: about an embargoed entry (or
		 * a mail archived sealed) it repeats no word of the Subject,
		 * which may have come encrypted (protected headers). */
		const char *rest = reply_subject_secret(c, entry_id) ? "your embargoed mail" : l->subject;

		while (g_ascii_strncasecmp(rest, "Re:", 3) == 0)
			for (rest += 3; *rest == ' ' || *rest == '\t'; rest++)
				;
		g_string_append(subj, "Re: ");
		if (entry_id != NULL && strstr(rest, entry_id) == NULL)
			g_string_append_printf(subj, "[%s] ", entry_id);
		g_string_append(subj, *rest != '\0' ? rest : "your mail");
	}
	g_hash_table_insert(vars, "reply_subject", g_strdup(subj->str));
	g_hash_table_insert(vars, "to_address", entry_id != NULL ? lc_entry_address(c->cfg, entry_id)
								 : g_strdup(c->cfg->request_address));
	g_hash_table_insert(vars, "results", g_strdup(l->out->str));
	/* what a signature did is in the results (roles); the reply says
	 * only why one did not count, or a key that was ignored */
	if (c->m->sig->valid)
		g_hash_table_insert(vars, "auth", g_strdup(""));
	if (l->help)
		g_hash_table_insert(vars, "help", help_text(c->cfg, vars));
	mail.kind = "entry-reply";
	mail.entry = entry_id;
	mail.reply_to = reply_to;
	if (l->key != NULL) {
		mail.attachment = l->key;
		mail.attachment_type = "application/pgp-keys";
		mail.attachment_name = "vulnid-key.asc";
	}
	return mail_queue_reply(c, "entry-reply.txt", vars, &mail, err);
}
