/* message-auto.c - is a mail automatic (a bounce, a list, a robot)?
 * RFC 3834 and the usual headers */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header.h"
#include "message.h"
#include "message-private.h"
#include "text.h"

static gboolean
address_is_robotic(const char *addr)
{
	g_autofree char *local = NULL;
	g_autofree char *lower = NULL;
	const char *at;

	if (addr == NULL)
		return FALSE;
	at = strchr(addr, '@');
	local = at != NULL ? g_strndup(addr, (gsize) (at - addr)) : g_strdup(addr);
	lower = g_ascii_strdown(local, -1);
	return g_ascii_strcasecmp(local, "mailer-daemon") == 0 ||
	       g_ascii_strcasecmp(local, "postmaster") == 0 ||
	       g_ascii_strncasecmp(local, "owner-", 6) == 0 ||
	       g_str_has_suffix(lower, "-request") || g_str_has_suffix(lower, "-bounces") ||
	       g_ascii_strcasecmp(local, "listserv") == 0 ||
	       g_ascii_strcasecmp(local, "majordomo") == 0;
}

gboolean
message_is_automatic(const message *m, const char *envelope_sender,
		     const char *loop_address, const char **why)
{
	if (envelope_sender != NULL && (*envelope_sender == '\0' || strcmp(envelope_sender, "<>") == 0)) {
		*why = "empty envelope sender (a bounce or notification)";
		return TRUE;
	}
	if (address_is_robotic(envelope_sender) || address_is_robotic(m->from_addr)) {
		*why = "sent by a mailer daemon, postmaster or list robot";
		return TRUE;
	}
	if (m->auto_submitted != NULL && g_ascii_strcasecmp(m->auto_submitted, "no") != 0) {
		*why = "Auto-Submitted header (RFC 3834)";
		return TRUE;
	}
	if (m->precedence != NULL &&
	    (g_ascii_strcasecmp(m->precedence, "bulk") == 0 ||
	     g_ascii_strcasecmp(m->precedence, "junk") == 0 ||
	     g_ascii_strcasecmp(m->precedence, "list") == 0)) {
		*why = "Precedence bulk, junk or list";
		return TRUE;
	}
	if (m->list_id != NULL) {
		*why = "mailing-list traffic (List-Id)";
		return TRUE;
	}
	for (guint i = 0; i < m->x_loop->len; i++)
		if (g_ascii_strcasecmp(g_ptr_array_index(m->x_loop, i), loop_address) == 0) {
			*why = "X-Loop: this robot's own mail came back";
			return TRUE;
		}
	return FALSE;
}
