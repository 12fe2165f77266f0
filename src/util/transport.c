/* transport.c - the transport URL, loopback hosts, certificate pins
 * (transport.h) */
#include "autoconfig.h"

#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "transport.h"

gboolean
transport_parse_url(const char *url, char **host, int *port, GError **err)
{
	const char *h, *colon;
	gint64 p = 25;

	if (!g_str_has_prefix(url, "smtp://")) {
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "'%s' is not smtp://HOST[:PORT]", url);
		return FALSE;
	}
	h = url + strlen("smtp://");
	colon = strrchr(h, ':');
	if (colon != NULL && !g_ascii_string_to_signed(colon + 1, 10, 1, 65535, &p, NULL)) {
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "bad port in '%s'", url);
		return FALSE;
	}
	*host = colon != NULL ? g_strndup(h, (gsize) (colon - h)) : g_strdup(h);
	if (**host == '\0' || strpbrk(*host, "/@ \t") != NULL) {
		g_clear_pointer(host, g_free);
		g_set_error(err, VULNID_ERROR, VULNID_ERR_CONFIG, "bad host in '%s'", url);
		return FALSE;
	}
	*port = (int) p;
	return TRUE;
}

gboolean
transport_host_is_loopback(const char *host)
{
	g_autofree char *h = g_strdup(host);
	gsize n = strlen(h);
	struct in_addr a4;
	struct in6_addr a6;

	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		memmove(h, h + 1, n - 2);
		h[n - 2] = '\0';
	}
	if (g_ascii_strcasecmp(h, "localhost") == 0 || g_ascii_strcasecmp(h, "localhost.") == 0)
		return TRUE;
	if (inet_pton(AF_INET, h, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, h, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return FALSE;
}

char *
transport_fingerprint_normalize(const char *text)
{
	g_autofree char *t = g_strstrip(g_strdup(text));
	GString *out = g_string_new(NULL);
	const char *p = t;

	if (g_ascii_strncasecmp(p, "sha256:", 7) == 0)
		p += 7;
	for (; *p; p++) {
		if (*p == ':')
			continue;
		if (!g_ascii_isxdigit(*p) || out->len >= 64) {
			g_string_free(out, TRUE);
			return NULL;
		}
		g_string_append_c(out, g_ascii_tolower(*p));
	}
	if (out->len != 64) {
		g_string_free(out, TRUE);
		return NULL;
	}
	return g_string_free(out, FALSE);
}
