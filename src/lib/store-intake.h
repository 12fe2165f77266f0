/* store-intake.h - the database accessors of intake (intake.c): bounces,
 * the replay memory of signatures and of what was decrypted, the key
 * imports already audited.  Each runs in the caller's transaction;
 * statements are prepared once per connection. */
#ifndef VULNID_STORE_INTAKE_H
#define VULNID_STORE_INTAKE_H

#include <glib.h>

#include "status.h"
#include "store.h"

vulnid_status store_intake_bounce_insert(store *st, gint64 message, gint64 outbox, const char *recipient,
					 const char *action, const char *status, const char *diagnostic,
					 const char *created, GError **err);


/* The message whose signature had replay key sha256 (-1: a message since
 * gone), or 0. */
vulnid_status store_intake_signature_seen(store *st, const char *sha256, gint64 *message, GError **err);
vulnid_status store_intake_signature_insert(store *st, const char *sha256, const char *fingerprint,
					    gint64 message, const char *created, GError **err);

/* A mail decrypted before: where it came and went. */
typedef struct {
	gint64 message;
	char *entry;
	char *sender;
	char *fingerprint;
	gboolean same_cipher;	/* the same session key, not only the same plaintext */
} store_decrypted_row;

/* The mails that decrypted the same session key or the same plaintext, in
 * order, at most 100; an array of store_decrypted_row*. */
vulnid_status store_intake_decrypted_find(store *st, const char *cipher_sha256, const char *plain_sha256,
					  GPtrArray **out, GError **err);
vulnid_status store_intake_decrypted_insert(store *st, gint64 message, const char *created,
					    const char *cipher_sha256, const char *plain_sha256,
					    const char *entry_id, const char *sender, const char *fingerprint,
					    GError **err);

/* Whether message msg was archived sealed. */
vulnid_status store_intake_message_sealed(store *st, gint64 msg, gboolean *sealed, GError **err);

#endif
