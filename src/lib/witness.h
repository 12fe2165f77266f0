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

/* The add-checkpoint operation of tlog-witness on a request body: the
 * checkpoint must be signed by log_key, old_size must be the size last
 * cosigned (else VULNID_ERR_EXISTS and *current), the proof must show it
 * consistent.  On success the cosignature line(s) in *cosig and the state
 * records the checkpoint. */
vulnid_status witness_add_checkpoint(const witness *w, const note_key *log_key, const char *body, gsize len,
				     guint64 now, char **cosig, guint64 *current, GError **err);

/* The path of a log's state files without extension (STATE/logs/HASH). */
char *witness_log_path(const witness *w, const char *origin);

#endif
