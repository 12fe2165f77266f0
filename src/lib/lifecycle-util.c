/* lifecycle-util.c - small helpers of the lifecycle: addresses, fingerprints,
 * domains, entry existence, fields as JSON
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

/* ---- small helpers --------------------------------------------------------- */

char *
lc_entry_address(const vulnid_config *cfg, const char *id)
{
	return g_strdup_printf("%s+%s@%s", cfg->request_local, id, cfg->domain);
}

const char *
lc_sender_of(const mail_ctx *c)
{
	return c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
}

/* Where replies to the sender go (as mail_reply decides). */
const char *
lc_reply_address_of(const mail_ctx *c)
{
	return c->m->reply_addr != NULL ? c->m->reply_addr : c->envelope_sender;
}

gboolean
lc_addr_equal(const char *a, const char *b)
{
	return a != NULL && b != NULL && g_ascii_strcasecmp(a, b) == 0;
}

const char *
lc_addr_domain(const char *a)
{
	const char *at = a != NULL ? strrchr(a, '@') : NULL;

	return at != NULL ? at + 1 : NULL;
}

/* d is domain or a subdomain of it. */
gboolean
lc_domain_within(const char *d, const char *domain)
{
	gsize n, m;

	if (d == NULL || domain == NULL || *domain == '\0')
		return FALSE;
	n = strlen(d);
	m = strlen(domain);
	if (n == m)
		return g_ascii_strcasecmp(d, domain) == 0;
	return n > m && d[n - m - 1] == '.' && g_ascii_strcasecmp(d + n - m, domain) == 0;
}

/* Fields as canonical JSON from key, value pairs (NULL-terminated). */
char *
lc_fields_json(const char *const *kv)
{
	GString *s = g_string_new("[");

	for (gsize i = 0; kv[i] != NULL && kv[i + 1] != NULL; i += 2) {
		if (i > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '[');
		canonjson_string(s, kv[i]);
		g_string_append_c(s, ',');
		canonjson_string(s, kv[i + 1]);
		g_string_append_c(s, ']');
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}
