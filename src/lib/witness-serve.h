/* witness-serve.h - the HTTP interface of a witness (C2SP tlog-witness),
 * for vulnid witness serve: add-checkpoint (POST PREFIX/add-checkpoint)
 * and the retrieval of cosigned checkpoints (GET PREFIX/HASH/checkpoint),
 * over one connection handed over by inetd or systemd (Accept=yes), or as
 * a CGI program under a web server.
 *
 * Every request is bounded: a head of at most WITNESS_SERVE_MAX_HEAD
 * bytes, a body of at most WITNESS_SERVE_MAX_BODY (a checkpoint and 63
 * proof lines), WITNESS_SERVE_TIMEOUT_MS without progress, and at most
 * WITNESS_SERVE_MAX_REQUESTS on one connection. */
#ifndef VULNID_WITNESS_SERVE_H
#define VULNID_WITNESS_SERVE_H

#include <glib.h>

#include "status.h"
#include "witness.h"

#define WITNESS_SERVE_MAX_HEAD 8192
#define WITNESS_SERVE_MAX_BODY (NOTE_MAX_SIZE + 64 * 64)
#define WITNESS_SERVE_MAX_REQUESTS 100
#define WITNESS_SERVE_TIMEOUT_MS 30000

typedef struct {
	const char *method;
	const char *path;	/* the request's path, without a query */
	const char *body;
	gsize len;
} witness_request;

typedef struct {
	guint status;
	const char *content_type;
	GString *body;
} witness_response;

/* The answer to one request, from the witness's state; logs are the
 * note_key* of the logs it cosigns.  now: seconds since the epoch. */
void witness_serve_one(const witness *w, GPtrArray *logs, const witness_request *rq, guint64 now,
		       witness_response *rs);

/* HTTP/1.1 on a connection (in_fd, out_fd): requests one after another
 * until the client closes it, asks to, or a limit is reached; *served
 * counts the answers sent.  A malformed request gets its 4xx answer and
 * ends the connection. */
vulnid_status witness_serve_connection(const witness *w, GPtrArray *logs, int in_fd, int out_fd, guint *served,
				       GError **err);

/* One request as a CGI program (RFC 3875): method, path_info and
 * content_length from the environment, the body on in_fd, the answer
 * with a Status header on out_fd. */
vulnid_status witness_serve_cgi(const witness *w, GPtrArray *logs, const char *method, const char *path_info,
				const char *content_length, int in_fd, int out_fd, GError **err);

#endif
