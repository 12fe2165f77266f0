/* loop.c - robot answers recognised without their headers (see loop.h) */
#include "autoconfig.h"

#include <string.h>

#include "loop.h"
#include "store-policy.h"

static gboolean
robot_msgid(const vulnid_config *cfg, const char *id)
{
	const char *at = id != NULL ? strrchr(id, '@') : NULL;

	return at != NULL && g_str_has_prefix(id, "vulnid.") && g_ascii_strcasecmp(at + 1, cfg->domain) == 0;
}

static gboolean
local_char(char c)
{
	return g_ascii_isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+';
}

/* One of the robot's Message-IDs or VERP addresses in text: each
 * "@DOMAIN" is looked at once, with the local part before it. */
static gboolean
quotes_robot_address(const vulnid_config *cfg, const char *text)
{
	g_autofree char *needle = g_strconcat("@", cfg->domain, NULL);
	gsize nb = strlen(cfg->bounce_local);

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) {
		const char *l = p;

		while (l > text && local_char(l[-1]) && p - l < 200)
			l--;
		if (p - l > 7 && strncmp(l, "vulnid.", 7) == 0)
			return TRUE;
		if ((gsize) (p - l) > nb + 1 && g_ascii_strncasecmp(l, cfg->bounce_local, nb) == 0 && l[nb] == '+')
			return TRUE;
	}
	return FALSE;
}

/* The same sender sent the same body before, in the period. */
static vulnid_status
repeats(mail_ctx *c, gint64 hours, gboolean *found, GError **err)
{
	const char *who = c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
	g_autoptr(GDateTime) t = g_date_time_add_hours(c->now_dt, (gint) -hours);
	g_autofree char *since = g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");

	*found = FALSE;
	if (who == NULL || c->m->spool == NULL)
		return VULNID_OK;
	return store_policy_body_repeated(c->st, who, since, c->m->spool->body_sha256, c->msg_row,
					  found, err);
}

vulnid_status
loop_suspect(mail_ctx *c, gint64 hours, const char **why, GError **err)
{
	const vulnid_config *cfg = c->cfg;
	const char *text = c->m->text != NULL ? c->m->text : "";
	g_autofree char *tag = g_strdup_printf("[%s-", cfg->prefix);
	g_autofree char *footer = g_strdup_printf("vulnid at %s", cfg->domain);
	gboolean found = FALSE;
	vulnid_status s;

	*why = NULL;
	if (robot_msgid(cfg, c->m->in_reply_to)) {
		*why = "it answers a mail of the robot (In-Reply-To)";
		return VULNID_OK;
	}
	for (guint i = 0; i < c->m->references->len; i++)
		if (robot_msgid(cfg, g_ptr_array_index(c->m->references, i))) {
			*why = "it answers a mail of the robot (References)";
			return VULNID_OK;
		}
	if (c->m->subject != NULL && strstr(c->m->subject, tag) != NULL) {
		*why = "its Subject carries an [ID] tag of the robot";
		return VULNID_OK;
	}
	if (strstr(text, footer) != NULL) {
		*why = "it quotes the robot's signature line";
		return VULNID_OK;
	}
	if (quotes_robot_address(cfg, text)) {
		*why = "it quotes a Message-ID or envelope address of the robot";
		return VULNID_OK;
	}
	/* counted when the tokens were taken out of the mail (mail_redact()) */
	if (c->quoted_tokens > 0) {
		*why = "it quotes a token the robot issued";
		return VULNID_OK;
	}
	s = repeats(c, hours, &found, err);
	if (s == VULNID_OK && found)
		*why = "the same sender sent the same text before";
	return s;
}
