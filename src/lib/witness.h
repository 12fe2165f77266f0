/* witness.h - cosigning other logs' checkpoints (C2SP tlog-witness and
 * tlog-cosignature), as a robot or anyone with vulnid does for the
 * federation story of vulnid-feed(5)
 *
 * The state is a directory: witness.key (the Ed25519 cosigner key, mode
 * 0600) and per log, named by the SHA-256 of its origin, an append-only
 * file of what was cosigned ("SIZE ROOT TIME" lines, the last one in
 * force) and the last cosigned checkpoint.  Checking against the last
 * line and appending the new one happen under one lock, so concurrent
 * runs never roll a log back. */
#ifndef VULNID_WITNESS_H
#define VULNID_WITNESS_H

#include <glib.h>

#include "note.h"
#include "status.h"

#define WITNESS_KEY_FILE "witness.key"
#define WITNESS_MAX_STATE_LINE 256

typedef struct {
	char *dir;
	note_key *key;
} witness;

void witness_free(witness *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(witness, witness_free)

/* Open the state in dir (created, mode 0700); name makes the key when
 * there is none yet (NULL: it must exist). */
vulnid_status witness_open(const char *dir, const char *name, witness **w, gboolean *created, GError **err);

/* What the witness last cosigned for origin: size 0 if nothing. */
vulnid_status witness_last(const witness *w, const char *origin, guint64 *size, GError **err);

/* How tlog-witness answers add-checkpoint over HTTP. */
typedef enum {
	WITNESS_COSIGNED = 200,
	WITNESS_BAD_REQUEST = 400,	/* malformed, or an old size beyond the checkpoint's */
	WITNESS_FORBIDDEN = 403,	/* not signed by a key of the log */
	WITNESS_UNKNOWN_LOG = 404,
	WITNESS_CONFLICT = 409,		/* another old size: *current is the witness's */
	WITNESS_UNPROCESSABLE = 422,	/* not consistent (the proof, or an empty tree's root) */
	WITNESS_ERROR = 500,		/* the witness's own state cannot be read or written */
} witness_answer;

/* The add-checkpoint operation of tlog-witness on a request body: the
 * checkpoint's origin must be the name of one of log_keys (note_key*),
 * and signed by it; old_size must be the size last cosigned (else
 * WITNESS_CONFLICT with *current), the proof must show it consistent.  On
 * success the cosignature line(s) in *cosig and the state records the
 * checkpoint.  Refusals are VULNID_ERR_INVALID (400), VULNID_ERR_CORRUPT
 * (403, 422), VULNID_ERR_NOTFOUND (404) and VULNID_ERR_EXISTS (409); any
 * other failure is the witness's (500).  *answer is the HTTP status. */
vulnid_status witness_add_checkpoint(const witness *w, GPtrArray *log_keys, const char *body, gsize len,
				     guint64 now, char **cosig, guint64 *current, witness_answer *answer,
				     GError **err);

/* The checkpoint last cosigned for the log whose origin hashes to
 * origin_hex (64 lower-case hex digits: SHA-256 of the origin), with the
 * log's signature and the witness's cosignature, as tlog-witness serves
 * it; NULL (VULNID_ERR_NOTFOUND) when there is none. */
vulnid_status witness_cosigned(const witness *w, const char *origin_hex, GBytes **out, GError **err);

/* The path of a log's state files without extension (STATE/logs/HASH). */
char *witness_log_path(const witness *w, const char *origin);

#endif
