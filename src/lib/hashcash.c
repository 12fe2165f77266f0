/* hashcash.c - Hashcash stamps: checked, spent once, and what they lift
 * (see hashcash.h) */
#include "autoconfig.h"

#include <string.h>

#include "hashcash.h"
#include "store-hashcash.h"

void
hashcash_stamp_free(hashcash_stamp *h)
{
	if (h == NULL)
		return;
	g_free(h->sha256);
	g_free(h->expires);
	g_free(h);
}

/* Leading zero bits of a digest. */
static guint
zero_bits(const guint8 *d, gsize n)
{
	guint bits = 0;

	for (gsize i = 0; i < n; i++) {
		if (d[i] == 0) {
			bits += 8;
			continue;
		}
		for (guint8 m = 0x80; m != 0 && !(d[i] & m); m >>= 1)
			bits++;
		break;
	}
	return bits;
}

/* YYMMDD, YYMMDDhhmm or YYMMDDhhmmss (UTC), as the stamp's date. */
static GDateTime *
stamp_date(const char *s)
{
	gsize n = strlen(s);
	int v[6] = { 0, 0, 0, 0, 0, 0 };

	if ((n != 6 && n != 10 && n != 12) || strspn(s, "0123456789") != n)
		return NULL;
	for (gsize i = 0; i < n / 2; i++)
		v[i] = (s[2 * i] - '0') * 10 + (s[2 * i + 1] - '0');
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 59 ||
	    !g_date_valid_dmy((GDateDay) v[2], (GDateMonth) v[1], (GDateYear) (2000 + v[0])))
		return NULL;
	return g_date_time_new_utc(2000 + v[0], v[1], v[2], v[3], v[4], v[5]);
}

hashcash_stamp *
hashcash_stamp_check(const char *stamp, guint bits, const char *const *resources, GDateTime *now,
		     gint64 validity_days, const char **why)
{
	g_auto(GStrv) f = NULL;
	g_autoptr(GChecksum) sha1 = NULL;
	g_autoptr(GDateTime) date = NULL;
	g_autoptr(GDateTime) ends = NULL;
	g_autoptr(GDateTime) ahead = NULL;
	guint8 digest[20];
	gsize dlen = sizeof digest;
	gboolean ours = FALSE;
	gint64 claimed;
	hashcash_stamp *h;

	if (stamp == NULL || *stamp == '\0' || strlen(stamp) > HASHCASH_MAX_STAMP ||
	    strspn(stamp, " \t\r\n") > 0 || strpbrk(stamp, " \t\r\n") != NULL) {
		*why = "not one stamp";
		return NULL;
	}
	f = g_strsplit(stamp, ":", 8);
	if (g_strv_length(f) != 7 || strcmp(f[0], "1") != 0) {
		*why = "not a version 1 stamp";
		return NULL;
	}
	claimed = strspn(f[1], "0123456789") == strlen(f[1]) && strlen(f[1]) <= 3 ? g_ascii_strtoll(f[1], NULL, 10) : -1;
	if (claimed < (gint64) bits) {
		*why = "worth fewer bits than the robot asks";
		return NULL;
	}
	for (const char *const *r = resources; r != NULL && *r != NULL; r++)
		ours |= g_ascii_strcasecmp(f[3], *r) == 0;
	if (!ours) {
		*why = "minted for another resource";
		return NULL;
	}
	date = stamp_date(f[2]);
	if (date == NULL) {
		*why = "no valid date";
		return NULL;
	}
	ends = g_date_time_add_days(date, (gint) validity_days);
	ahead = g_date_time_add_days(now, 1);
	if (g_date_time_compare(ends, now) < 0) {
		*why = "expired";
		return NULL;
	}
	if (g_date_time_compare(date, ahead) > 0) {
		*why = "dated in the future";
		return NULL;
	}
	sha1 = g_checksum_new(G_CHECKSUM_SHA1);
	g_checksum_update(sha1, (const guchar *) stamp, -1);
	g_checksum_get_digest(sha1, digest, &dlen);
	if (zero_bits(digest, dlen) < (guint) claimed) {
		*why = "its hash has fewer zero bits than it claims";
		return NULL;
	}
	h = g_new0(hashcash_stamp, 1);
	h->sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, stamp, -1);
	h->expires = g_date_time_format(ends, "%Y-%m-%dT%H:%M:%SZ");
	h->bits = zero_bits(digest, dlen);
	*why = NULL;
	return h;
}

/* Whether address is one of the robot's own: the request address, or an
 * entry's (request_local+ID@domain). */
static gboolean
robot_address(const vulnid_config *cfg, const char *address)
{
	gsize nl = strlen(cfg->request_local);
	const char *at = address != NULL ? strrchr(address, '@') : NULL;

	if (at == NULL || g_ascii_strcasecmp(at + 1, cfg->domain) != 0 ||
	    g_ascii_strncasecmp(address, cfg->request_local, nl) != 0)
		return FALSE;
	return address + nl == at || address[nl] == '+';
}

hashcash_stamp *
hashcash_find(const vulnid_config *cfg, const GPtrArray *values, const char *recipient, GDateTime *now)
{
	g_autofree char *rcpt = NULL;
	const char *resources[3] = { cfg->request_address, NULL, NULL };

	if (cfg->hashcash_bits <= 0 || values == NULL)
		return NULL;
	if (recipient != NULL) {
		rcpt = g_strstrip(g_strdup(recipient));
		if (*rcpt == '<' && rcpt[strlen(rcpt) - 1] == '>') {
			rcpt[strlen(rcpt) - 1] = '\0';
			memmove(rcpt, rcpt + 1, strlen(rcpt));
		}
		if (robot_address(cfg, rcpt))
			resources[1] = rcpt;
	}
	for (guint i = 0; i < values->len && i < HASHCASH_MAX_FIELDS; i++) {
		const char *why = NULL;
		hashcash_stamp *h = hashcash_stamp_check(g_ptr_array_index(values, i), (guint) cfg->hashcash_bits,
							 resources, now, cfg->hashcash_validity_days, &why);

		if (h != NULL)
			return h;
	}
	return NULL;
}

vulnid_status
hashcash_spend(store *st, const hashcash_stamp *h, gboolean *fresh, GError **err)
{
	return store_hashcash_spend(st, h->sha256, h->expires, fresh, err);
}

gint64
hashcash_limit(const vulnid_config *cfg, gboolean paid, gint64 limit)
{
	if (!paid || cfg->hashcash_bits <= 0 || limit == 0)
		return limit;
	return MAX(limit, cfg->hashcash_ceiling_per_hour);
}

vulnid_status
hashcash_purge(store *st, GDateTime *now, gint64 *purged, GError **err)
{
	g_autofree char *t = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");

	return store_hashcash_purge(st, t, purged, err);
}
