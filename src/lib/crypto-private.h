/* crypto-private.h - what the parts of the crypto module share (crypto.c,
 * crypto-import.c, crypto-verify.c, crypto-sign.c, crypto-certify.c); not for
 * other modules */
#ifndef VULNID_CRYPTO_PRIVATE_H
#define VULNID_CRYPTO_PRIVATE_H

#include <glib.h>
#include <gpgme.h>

#include "crypto.h"

/* GNUPGHOME of the instance (crypto_set_home()). */
extern char *crypto_homedir;

typedef struct {
	char *fpr;
	char *keygrip;		/* of the primary key; NULL when not known */
	char *algo;		/* "ed25519", "rsa<bits>", or "other" (signed by gpg) */
	gint64 expires;		/* Unix time, 0 for never */
	char *socket;		/* gpg-agent's socket, NULL until asked */
	uid_t socket_uid;	/* whose (it may lie under /run/user/UID) */
	char *stamp;		/* of the keyring when the key was listed */
} robot_key;

/* The robot's key as this process knows it, under cr_robot_lock (a
 * resident server signs from several threads); crypto.c. */
extern robot_key *cr_robot;
extern GMutex cr_robot_lock;

vulnid_status cr_gpg_fail(GError **err, gpgme_error_t e, const char *what);
GBytes * cr_data_to_bytes(gpgme_data_t d);
vulnid_status cr_ctx(const char *home, gpgme_ctx_t *out, GError **err);
/* Forget the keys listed so far (after an import). */
void cr_key_cache_clear(void);
/* What identifies the keyring's files now (identity, size, time): a
 * change means keys may have changed. */
char *cr_keyring_stamp(const char *home);
/* After this process imported another key into the keyring: the robot's
 * key, remembered as of the stamp before, still holds (no listing of the
 * secret keys for the next mail). */
void cr_robot_restamp(const char *before);
/* A field of gpg's colon listing with its \xNN escapes undone, as UTF-8. */
char *cr_colon_unescape(const char *field);
void cr_robot_remember_socket(const char *home, robot_key *r, const char *socket);
vulnid_status cr_robot_fingerprint(gboolean remembered, char **fpr, GError **err);
char * cr_scratch_home(GError **err);
vulnid_status cr_import_into(const char *home, GBytes *data, GPtrArray *fprs, GError **err);
void cr_scratch_remove(const char *home);
gboolean cr_is_fingerprint(const char *f);
vulnid_status cr_agent_socket_ask(const char *home, char **path, GError **err);

#endif
