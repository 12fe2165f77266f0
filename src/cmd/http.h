/* http.h - the HTTP client of the vulnid command (libcurl): it posts
 * checkpoints to witnesses (vulnid-feed(5), WITNESSES).  Only `vulnid`
 * links it; the filter and the LMTP server never make connections. */
#ifndef VULNID_HTTP_H
#define VULNID_HTTP_H

#include <glib.h>

#include "status.h"

typedef struct http_client http_client;

/* A client that keeps its connections open between requests (to the
 * same witness) until freed.  timeout_s bounds each request. */
http_client *http_client_new(guint timeout_s);
void http_client_free(http_client *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(http_client, http_client_free)

/* POST body (Content-Type text/plain) to an http:// or https:// URL,
 * without following redirections; the status code and the response body
 * (at most max bytes, else an error) back.  data is the http_client
 * (the signature of feedlog_post_fn). */
vulnid_status http_post(const char *url, const char *body, gsize len, gsize max, guint *status, GString *response,
			gpointer data, GError **err);

#endif
