/* ratelimit.c - the intake rate limits (see ratelimit.h) */
#include "autoconfig.h"

#include <string.h>
#include <gio/gio.h>

#include "hashcash.h"
#include "ratelimit.h"
#include "store-policy.h"

char *
ratelimit_client_address(const char *s)
{
	g_autofree char *a = NULL;
	g_autoptr(GInetAddress) ia = NULL;
	gsize n;

	if (s == NULL)
		return NULL;
	a = g_strstrip(g_strdup(s));
	n = strlen(a);
	if (n >= 2 && a[0] == '[' && a[n - 1] == ']') {
		a[n - 1] = '\0';
		memmove(a, a + 1, n - 1);
	}
	if (g_ascii_strncasecmp(a, "IPv6:", 5) == 0)
		memmove(a, a + 5, strlen(a + 5) + 1);
	if (*a == '\0' || strlen(a) > 64 || strchr(a, '%') != NULL)
		return NULL;
	ia = g_inet_address_new_from_string(a);
	return ia != NULL ? g_inet_address_to_string(ia) : NULL;
}

char *
ratelimit_client_net(const char *address)
{
	g_autoptr(GInetAddress) ia = address != NULL ? g_inet_address_new_from_string(address) : NULL;
	const guint8 *b;

	if (ia == NULL)
		return NULL;
	b = g_inet_address_to_bytes(ia);
	if (g_inet_address_get_family(ia) == G_SOCKET_FAMILY_IPV4)
		return g_strdup_printf("%u.%u.%u.0/24", b[0], b[1], b[2]);
	{
		static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (memcmp(b, mapped, sizeof mapped) == 0)
			return g_strdup_printf("%u.%u.%u.0/24", b[12], b[13], b[14]);
	}
	return g_strdup_printf("%x:%x:%x:%x::/64", (b[0] << 8) | b[1], (b[2] << 8) | b[3],
			       (b[4] << 8) | b[5], (b[6] << 8) | b[7]);
}

char *
ratelimit_since(GDateTime *now, gint64 seconds)
{
	g_autoptr(GDateTime) t = g_date_time_add_seconds(now, (gdouble) -seconds);

	return g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
}

/* A fingerprint without spaces, upper case. */
static char *
fpr_norm(const char *f)
{
	GString *s = g_string_new(NULL);

	for (; f != NULL && *f; f++)
		if (!g_ascii_isspace(*f))
			g_string_append_c(s, g_ascii_toupper(*f));
	return g_string_free(s, FALSE);
}

/* Moderators' and vendors' keys are the robot's own correspondents. */
static vulnid_status
key_exempt(mail_ctx *c, gboolean *exempt, GError **err)
{
	g_autofree char *mods = config_key_string(c->cfg, "lifecycle", "moderators");
	g_auto(GStrv) parts = g_strsplit_set(mods, ",;", -1);
	g_autofree char *f = fpr_norm(c->signer);
	gint64 n = 0;
	vulnid_status s;

	for (char **p = parts; *p != NULL; p++) {
		g_autofree char *m = fpr_norm(*p);

		if (*m != '\0' && strcmp(m, f) == 0) {
			*exempt = TRUE;
			return VULNID_OK;
		}
	}
	s = store_policy_vendor_keys(c->st, f, &n, err);
	*exempt = n > 0;
	return s;
}

typedef struct {
	const char *what;	/* for the audit log */
	const char *limit_group, *limit_key;	/* NULL: the requests/additions limit */
	store_rate_key key;
	gboolean payable;	/* a Hashcash stamp lifts it (hashcash_limit()) */
} rate_key;

vulnid_status
ratelimit_check(mail_ctx *c, gboolean requests, gboolean *over, const char **which, GError **err)
{
	const char *who = c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
	const char *domain = c->envelope_sender != NULL ? strrchr(c->envelope_sender, '@') : NULL;
	static const rate_key keys[] = {
		{ "key", NULL, NULL, STORE_RATE_KEY, TRUE },
		{ "authenticated From", NULL, NULL, STORE_RATE_FROM_VERIFIED, TRUE },
		{ "From or envelope sender", NULL, NULL, STORE_RATE_SENDER, TRUE },
		{ "client network", "lifecycle", "rate_network_per_hour", STORE_RATE_NETWORK, TRUE },
		{ "envelope sender domain", "lifecycle", "rate_domain_per_hour", STORE_RATE_DOMAIN, FALSE },
		{ "everyone", "lifecycle", "rate_global_per_hour", STORE_RATE_EVERYONE, FALSE },
	};
	const char *values[G_N_ELEMENTS(keys)];
	g_autofree char *since = ratelimit_since(c->now_dt, 3600);
	gint64 per_sender = config_key_int(c->cfg, "lifecycle",
					   requests ? "rate_requests_per_hour" : "rate_additions_per_hour");
	vulnid_status s;

	*over = FALSE;
	*which = NULL;
	if (c->signer != NULL) {
		gboolean exempt = FALSE;

		s = key_exempt(c, &exempt, err);
		if (s != VULNID_OK || exempt)
			return s;
	}
	values[0] = c->signer;
	values[1] = c->from_verified != NULL ? c->m->from_addr : NULL;
	values[2] = c->from_verified == NULL && who != NULL && *who != '\0' ? who : NULL;
	values[3] = c->client_net;
	values[4] = domain != NULL ? domain + 1 : NULL;
	values[5] = "";
	for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
		gint64 base = keys[i].limit_key != NULL ? config_key_int(c->cfg, keys[i].limit_group,
									 keys[i].limit_key) : per_sender;
		gint64 limit = keys[i].payable ? hashcash_limit(c->cfg, c->paid, base) : base;
		gint64 n = 0;

		if (values[i] == NULL || limit == 0)
			continue;
		s = store_policy_rate_count(c->st, keys[i].key, requests, values[i], since, &n, err);
		if (s != VULNID_OK)
			return s;
		if (n >= limit) {
			*over = TRUE;
			*which = keys[i].what;
			return VULNID_OK;
		}
		c->lifted |= n >= base;	/* past the limit only by the stamp */
	}
	return VULNID_OK;
}

vulnid_status
ratelimit_purge(store *st, gint64 *removed, GError **err)
{
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *before = ratelimit_since(now, RATELIMIT_KEEP_SECONDS);
	vulnid_status s;

	*removed = 0;
	s = store_begin(st, err);
	if (s == VULNID_OK)
		s = store_policy_rate_purge(st, before, removed, err);
	if (s != VULNID_OK) {
		store_rollback(st);
		return s;
	}
	return store_commit(st, err);
}
