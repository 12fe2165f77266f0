/* feedlog.h - the public feed as a transparency log (vulnid-feed(5), LOG)
 *
 * The log of a feed is in DIR/log/, a C2SP tlog-tiles log of its own: its
 * entries are short records of the feed's lines (feed_log_entry(): the
 * line's position, entry, seq and the SHA-256 of the whole line, which
 * stays in the year files), in publication order: by pos, lines of equal
 * pos in the order of their file.  So every entry fits an entry bundle,
 * whatever the length of its line.  Beside the tiles and bundles (under
 * DIR/log/tile/) are the signed checkpoint (C2SP tlog-checkpoint, with the
 * cosignatures of the witnesses merged in), the log's note key
 * (log.vkey) and the robot's OpenPGP signature binding that key to the
 * robot (log.vkey.asc).
 *
 * Feeds from before this log have a log of version 1 in DIR itself, whose
 * entries are the lines themselves (without bundles for lines over 65535
 * bytes).  It no longer grows, and stays verifiable.
 *
 * feed-export.c calls feedlog_update() and feedlog_cosign() at every
 * export; the rest serves vulnid prove, verify-feed and witness. */
#ifndef VULNID_FEEDLOG_H
#define VULNID_FEEDLOG_H

#include <glib.h>

#include "note.h"
#include "status.h"
#include "tlog.h"

#define FEEDLOG_DIR "log"			/* the log, in the feed's directory */
#define FEEDLOG_CHECKPOINT "checkpoint"
#define FEEDLOG_VKEY "log.vkey"
#define FEEDLOG_VKEY_SIG "log.vkey.asc"
#define FEEDLOG_KEY_FILE "log2.key"		/* in the instance directory */
#define FEEDLOG_KEY_FILE_V1 "log.key"		/* the version-1 log's, of older instances */
#define FEEDLOG_PROOF_SUFFIX ".tlog-proof"
#define FEEDLOG_MAX_PROOF_FILE (256 * 1024 * 1024)
#define FEEDLOG_MAX_PROOFS 100000

/* The instance's log key (DIR/log2.key, mode 0600), made on first use;
 * origin names a new key (NULL: "DOMAIN/vulnid/PREFIX/FPR16/log").  The
 * name of a version-1 key of the instance (DIR/log.key) is refused: two
 * logs never share an origin. */
vulnid_status feedlog_key_open(const char *instance_dir, const char *origin, const char *domain,
			       const char *prefix, const char *fpr, note_key **key, gboolean *created,
			       GError **err);

/* Before an export writes anything into the published feed in dir: the
 * log.vkey of its log (DIR/log), if any, is key's, and its checkpoint, if
 * any, verifies with it (an instance restored without its log key would
 * otherwise replace log.vkey and break the published log). */
vulnid_status feedlog_check_published(const char *dir, const note_key *key, GError **err);
/* Where a log of a feed is: its directory (with checkpoint and tile/) and
 * its version (1: the entries are the lines; 2: feed_log_entry()). */
typedef struct {
	char *dir;
	int version;
} feedlog_loc;

void feedlog_loc_clear(feedlog_loc *l);
/* The log of the feed (or log) directory dir whose origin is origin (NULL:
 * the current one): DIR/log, else DIR itself (version 1 when DIR holds a
 * feed's HEAD.json, else a copy of a log alone, version 2). */
vulnid_status feedlog_locate(const char *dir, const char *origin, feedlog_loc *loc, GError **err);

typedef struct {
	const char *path;	/* a year file */
	guint64 lines;		/* its lines, all complete */
} feedlog_file;

typedef struct {
	char *origin;		/* the log (DIR/log) */
	guint64 size;
	char *root;		/* base64 */
	guint64 old_size;	/* its size before this export */
	guint64 appended;	/* entries added by this export */
	gboolean checkpoint_written;
	tlog_builder_stats stats;
	char *v1_origin;	/* the version-1 log of the feed, or NULL */
	guint64 v1_size;
	char *v1_root;
} feedlog_state;

void feedlog_state_clear(feedlog_state *st);

/* Bring the log in DIR/log up to the year files (all lines written and
 * synced): add the entries of the lines it does not have yet, write the
 * tiles and bundles, and sign a new checkpoint when it grew.  Also
 * publishes the note key and its binding signature by the robot's
 * OpenPGP key fpr.  A version-1 log in DIR is left as it is, and named in
 * *out. */
vulnid_status feedlog_update(const char *dir, const note_key *key, const char *fpr, const feedlog_file *files,
			     guint nfiles, feedlog_state *out, GError **err);

/* The log key of a log, bound to the robot: LOGDIR/log.vkey with a good
 * signature LOGDIR/log.vkey.asc by the OpenPGP key (crypto_set_home()
 * set) whose fingerprint is fpr. */
vulnid_status feedlog_bound_key(const char *logdir, GBytes *robot_key, const char *fpr, note_key **key,
				GError **err);

/* Checking a whole feed: hand every line to feedlog_check_line() in log
 * order, then feedlog_check_end() compares the tiles, bundles and roots
 * with the checkpoints of both logs (those the feed has), signed by keys
 * the robot bound. */
typedef struct feedlog_checker feedlog_checker;
vulnid_status feedlog_checker_new(const char *dir, GBytes *robot_key, const char *fpr, feedlog_checker **c,
				  GError **err);
void feedlog_check_line(feedlog_checker *c, const char *line, gsize len);
vulnid_status feedlog_check_end(feedlog_checker *c, feedlog_state *out, GError **err);
/* The bound key of the log of this version (NULL: the feed has none). */
const note_key *feedlog_checker_key(const feedlog_checker *c, int version);
void feedlog_checker_free(feedlog_checker *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(feedlog_checker, feedlog_checker_free)

typedef enum {
	FEEDLOG_TILES_ALL,	/* every tile and bundle: O(n), for a mirror's first copy */
	FEEDLOG_TILES_NEW,	/* those past the previous checkpoint: O(new + log n) */
	FEEDLOG_TILES_NEEDED,	/* the root's only: O(log n) */
} feedlog_tiles;

typedef struct {
	GPtrArray *witnesses;		/* note_key* of type NOTE_COSIGNATURE */
	guint min_cosignatures;
	GPtrArray *cosigned;		/* char*: more copies of the checkpoint (files, or witness dirs) */
	const char *previous;		/* a checkpoint verified before */
	feedlog_tiles tiles;
} feedlog_policy;

typedef struct {
	char *origin;
	guint64 size;
	char *root;
	int version;			/* of the log checked */
	guint cosignatures;		/* distinct witnesses with a good cosignature */
	gboolean consistent;		/* previous given and proven */
	guint64 old_size;
	guint proof_hashes, hash_ops, tiles_read;
	tlog_tiles_stats tiles;		/* what tlog_verify_tiles() read */
} feedlog_result;

void feedlog_result_clear(feedlog_result *r);

/* The checkpoint of the log at loc: signed by key, its root that of the
 * tiles (and the tiles and bundles checked as p->tiles says), cosigned as
 * the policy asks, consistent with the previous one (a consistency proof
 * from the tiles: O(log n) hashes). */
vulnid_status feedlog_verify_checkpoint(const feedlog_loc *loc, const note_key *key, const feedlog_policy *p,
					feedlog_result *res, GError **err);

/* The origin of a checkpoint file, not verified (to pick a log). */
char *feedlog_checkpoint_origin(const char *path);

/* Cosignatures: count the witnesses of p with a good cosignature on
 * checkpoint text (in n or in the files of p->cosigned). */
vulnid_status feedlog_count_cosignatures(const note *n, const char *origin, const feedlog_policy *p,
					 guint *count, GError **err);

/* vulnid prove: a C2SP tlog-proof for each line of entry id in the feed
 * in DIR against its log's checkpoint, the line itself as the extra data.
 * With out_dir, each proof is written to OUT_DIR/ID.INDEX.tlog-proof and
 * their names are appended to out; else the proofs are appended to out,
 * an empty line between two. */
vulnid_status feedlog_prove_entry(const char *dir, const char *id, const char *out_dir, GString *out,
				  guint *proofs, GError **err);
/* A consistency proof from old_size to the checkpoint of the log of DIR
 * (a feed or a log directory) whose origin is origin (NULL: the current
 * log), as the body of a tlog-witness add-checkpoint request. */
vulnid_status feedlog_prove_consistency(const char *dir, const char *origin, guint64 old_size, GString *out,
					GError **err);

/* Verify tlog-proofs (as feedlog_prove_entry writes them: one, or several
 * one after the other) against the log key and the policy; fn gets each
 * proven line.  The leaf is the line's log entry (version 2), or the line
 * itself (version 1). */
typedef void (*feedlog_line_fn)(const char *line, gsize len, guint64 index, gpointer data);
vulnid_status feedlog_verify_proofs(const char *data, gsize len, const note_key *key, const feedlog_policy *p,
				    feedlog_line_fn fn, gpointer fdata, feedlog_result *res, GError **err);

/* Verify a consistency proof in add-checkpoint form against a previous
 * checkpoint (p->previous). */
vulnid_status feedlog_verify_consistency(const char *data, gsize len, const note_key *key,
					 const feedlog_policy *p, feedlog_result *res, GError **err);

/* Parse a tlog-witness add-checkpoint body: old size, proof, checkpoint
 * note (from "old" up to the end). */
vulnid_status feedlog_parse_add_checkpoint(const char *data, gsize len, guint64 *old_size, GArray **proof,
					   note **n, checkpoint *c, GError **err);

/* ---- the witnesses of the log (vulnid.conf [export] witnesses) ----------------------- */

/* POST body to url (Content-Type text/plain); the status code and the
 * response body (at most max bytes) back.  Supplied by the program, so
 * that only it links an HTTP client. */
typedef vulnid_status (*feedlog_post_fn)(const char *url, const char *body, gsize len, gsize max,
					 guint *status, GString *response, gpointer data, GError **err);

typedef struct {
	guint witnesses;	/* configured */
	guint cosigned;		/* of them, with a good cosignature on the checkpoint now */
	guint added;		/* cosignatures added by this call */
	GPtrArray *problems;	/* char*: why a witness did not cosign, one line each */
} feedlog_cosign_result;

void feedlog_cosign_result_clear(feedlog_cosign_result *r);

/* Bring cosignatures of the witnesses (note_witness*) into the checkpoint
 * of the log in logdir: from a witness's directory of cosigned
 * checkpoints (DIR/SHA256HEX(ORIGIN)/checkpoint, or a file), or by the
 * tlog-witness add-checkpoint request to its URL with a consistency proof
 * from the tiles (from old_size first; after a 409, from the size the
 * witness answered).  Only cosignatures that verify on this very
 * checkpoint are merged, one per witness; the file is rewritten only
 * when one was added.  A witness that does not cosign is a problem, not
 * an error. */
vulnid_status feedlog_cosign(const char *logdir, const note_key *key, GPtrArray *witnesses, guint64 old_size,
			     feedlog_post_fn post, gpointer post_data, feedlog_cosign_result *res, GError **err);

#endif
