/* feedlog.h - the public feed as a transparency log (vulnid-feed(5), LOG)
 *
 * The entries of the log are the feed's lines (without their newline) in
 * publication order: by pos, lines of equal pos in the order of their
 * file.  Beside the year files the feed holds the tiles and entry bundles
 * (C2SP tlog-tiles, under tile/), the signed checkpoint (C2SP
 * tlog-checkpoint, file checkpoint), the log's note key (log.vkey) and
 * the robot's OpenPGP signature binding that key to the robot
 * (log.vkey.asc).  feed.c calls feedlog_update() at every export;
 * the rest serves vulnid prove, verify-feed and witness. */
#ifndef VULNID_FEEDLOG_H
#define VULNID_FEEDLOG_H

#include <glib.h>

#include "note.h"
#include "status.h"
#include "tlog.h"

#define FEEDLOG_CHECKPOINT "checkpoint"
#define FEEDLOG_VKEY "log.vkey"
#define FEEDLOG_VKEY_SIG "log.vkey.asc"
#define FEEDLOG_KEY_FILE "log.key"		/* in the instance directory */
#define FEEDLOG_MAX_PROOF_FILE (256 * 1024 * 1024)
#define FEEDLOG_MAX_PROOFS 100000

/* The instance's log key (DIR/log.key, mode 0600), made on first use;
 * origin names a new key (NULL: "DOMAIN/vulnid/PREFIX/FPR16"). */
vulnid_status feedlog_key_open(const char *instance_dir, const char *origin, const char *domain,
			       const char *prefix, const char *fpr, note_key **key, gboolean *created,
			       GError **err);

/* Before an export writes anything into the published feed in dir: its
 * log.vkey, if any, is key's, and its checkpoint, if any, verifies with
 * it (an instance restored without its log.key would otherwise replace
 * log.vkey and break the published log). */
vulnid_status feedlog_check_published(const char *dir, const note_key *key, GError **err);

typedef struct {
	const char *path;	/* a year file */
	guint64 lines;		/* its lines, all complete */
} feedlog_file;

typedef struct {
	char *origin;
	guint64 size;
	char *root;		/* base64 */
	guint64 appended;	/* entries added by this export */
	gboolean checkpoint_written;
	tlog_builder_stats stats;
} feedlog_state;

void feedlog_state_clear(feedlog_state *st);

/* Bring the log in DIR up to the year files (all lines written and
 * synced): add the lines it does not have yet, write the tiles, and sign
 * a new checkpoint when it grew.  Also publishes the note key and its
 * binding signature by the robot's OpenPGP key fpr. */
vulnid_status feedlog_update(const char *dir, const note_key *key, const char *fpr, const feedlog_file *files,
			     guint nfiles, feedlog_state *out, GError **err);

/* The log key of a feed, bound to the robot: DIR/log.vkey with a good
 * signature DIR/log.vkey.asc by the OpenPGP key (crypto_set_home() set)
 * whose fingerprint is fpr. */
vulnid_status feedlog_bound_key(const char *dir, GBytes *robot_key, const char *fpr, note_key **key,
				GError **err);

/* Checking a whole feed: hand every line to feedlog_check_line() in log
 * order, then feedlog_check_end() compares the tiles, bundles and root
 * with the checkpoint in DIR. */
typedef struct feedlog_checker feedlog_checker;
vulnid_status feedlog_checker_new(const char *dir, const note_key *key, feedlog_checker **c, GError **err);
void feedlog_check_line(feedlog_checker *c, const char *line, gsize len);
vulnid_status feedlog_check_end(feedlog_checker *c, feedlog_state *out, GError **err);
void feedlog_checker_free(feedlog_checker *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(feedlog_checker, feedlog_checker_free)

typedef struct {
	GPtrArray *witnesses;		/* note_key* of type NOTE_COSIGNATURE */
	guint min_cosignatures;
	GPtrArray *cosigned;		/* char*: more copies of the checkpoint (files, or witness dirs) */
	const char *previous;		/* a checkpoint verified before */
} feedlog_policy;

typedef struct {
	char *origin;
	guint64 size;
	char *root;
	guint cosignatures;		/* distinct witnesses with a good cosignature */
	gboolean consistent;		/* previous given and proven */
	guint64 old_size;
	guint proof_hashes, hash_ops, tiles_read;
} feedlog_result;

void feedlog_result_clear(feedlog_result *r);

/* The checkpoint of DIR: signed by key, its root that of the tiles,
 * cosigned as the policy asks, consistent with the previous one (a
 * consistency proof from the tiles: O(log n) hashes). */
vulnid_status feedlog_verify_checkpoint(const char *dir, const note_key *key, const feedlog_policy *p,
					feedlog_result *res, GError **err);

/* Cosignatures: count the witnesses of p with a good cosignature on
 * checkpoint text (in n or in the files of p->cosigned). */
vulnid_status feedlog_count_cosignatures(const note *n, const char *origin, const feedlog_policy *p,
					 guint *count, GError **err);

/* vulnid prove: a C2SP tlog-proof for each line of entry id in the feed
 * in DIR against its checkpoint, the line itself as the extra data. */
vulnid_status feedlog_prove_entry(const char *dir, const char *id, GString *out, guint *proofs, GError **err);
/* A consistency proof from old_size to the checkpoint, as the body of a
 * tlog-witness add-checkpoint request. */
vulnid_status feedlog_prove_consistency(const char *dir, guint64 old_size, GString *out, GError **err);

/* Verify tlog-proofs (as feedlog_prove_entry writes them) against the log
 * key and the policy; fn gets each proven line. */
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

#endif
