/* http.c - the HTTP client of the vulnid command, on libcurl (http.h)
 *
 * libcurl is loaded with dlopen() when the first request is made, as
 * smtp.c loads libESMTP: linked, it and the two dozen libraries it brings
 * would slow down every vulnid command, most of which never make a
 * request. */
#include "autoconfig.h"

#include <dlfcn.h>
/* The calls go through pointers: no type-checking macros in their way. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "http.h"

#define CURL_FUNCTIONS(X) \
	X(curl_global_init) \
	X(curl_easy_init) \
	X(curl_easy_reset) \
	X(curl_easy_setopt) \
	X(curl_easy_perform) \
	X(curl_easy_getinfo) \
	X(curl_easy_cleanup) \
	X(curl_easy_strerror) \
	X(curl_slist_append) \
	X(curl_slist_free_all)

static struct {
#define CURL_POINTER(f) __typeof__(f) *f;
	CURL_FUNCTIONS(CURL_POINTER)
#undef CURL_POINTER
} lc;
static void *curl_handle;

static vulnid_status
curl_load(GError **err)
{
	void *h;

	if (curl_handle != NULL)
		return VULNID_OK;
	h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();

		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot load libcurl: %s", e != NULL ? e : CURL_SONAME);
	}
#define CURL_SYMBOL(f) \
	if ((*(void **) &lc.f = dlsym(h, #f)) == NULL) { \
		dlclose(h); \
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot load libcurl: %s has no %s", CURL_SONAME, #f); \
	}
	CURL_FUNCTIONS(CURL_SYMBOL)
#undef CURL_SYMBOL
	if (lc.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		dlclose(h);
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot start libcurl");
	}
	curl_handle = h;
	return VULNID_OK;
}

struct http_client {
	CURL *curl;
	guint timeout_s;
};

typedef struct {
	GString *out;
	gsize max;
	gboolean too_big;
} sink;

static size_t
collect(char *p, size_t size, size_t n, void *data)
{
	sink *s = data;
	gsize len = size * n;

	if (s->out->len + len > s->max) {
		s->too_big = TRUE;
		return 0;	/* libcurl stops the transfer */
	}
	g_string_append_len(s->out, p, (gssize) len);
	return len;
}

http_client *
http_client_new(guint timeout_s)
{
	http_client *c = g_new0(http_client, 1);

	c->timeout_s = timeout_s;
	return c;
}

void
http_client_free(http_client *c)
{
	if (c == NULL)
		return;
	if (c->curl != NULL)
		lc.curl_easy_cleanup(c->curl);
	g_free(c);
}

vulnid_status
http_post(const char *url, const char *body, gsize len, gsize max, guint *status, GString *response, gpointer data,
	  GError **err)
{
	http_client *c = data;
	struct curl_slist *h = NULL;
	sink s = { response, max, FALSE };
	char errbuf[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;
	vulnid_status st;

	*status = 0;
	g_string_truncate(response, 0);
	st = curl_load(err);
	if (st != VULNID_OK)
		return st;
	if (c->curl == NULL)
		c->curl = lc.curl_easy_init();
	if (c->curl == NULL)
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "cannot start an HTTP client");
	/* The handle keeps its connections: a witness asked twice (after a
	 * 409) is asked on the same one. */
	lc.curl_easy_reset(c->curl);
	h = lc.curl_slist_append(h, "Content-Type: text/plain; charset=utf-8");
	/* The body is small: no round trip for "100 Continue". */
	h = lc.curl_slist_append(h, "Expect:");
	lc.curl_easy_setopt(c->curl, CURLOPT_URL, url);
	lc.curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	lc.curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	lc.curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	lc.curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, (long) MIN(c->timeout_s, 10));
	lc.curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, (long) c->timeout_s);
	lc.curl_easy_setopt(c->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
	lc.curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
	lc.curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	lc.curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	lc.curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) len);
	lc.curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
	lc.curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &s);
	lc.curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	rc = lc.curl_easy_perform(c->curl);
	lc.curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
	/* Nothing of this call may stay in the handle. */
	lc.curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	lc.curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
	lc.curl_slist_free_all(h);
	if (s.too_big)
		return vulnid_fail(err, VULNID_ERR_TOOBIG, "'%s': an answer of more than %" G_GSIZE_FORMAT " bytes",
				   url, max);
	if (rc != CURLE_OK)
		return vulnid_fail(err, rc == CURLE_OPERATION_TIMEDOUT ? VULNID_ERR_TIMEOUT : VULNID_ERR_TEMP,
				   "'%s': %s", url, *errbuf != '\0' ? errbuf : lc.curl_easy_strerror(rc));
	*status = (guint) code;
	return VULNID_OK;
}
