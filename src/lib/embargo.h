/* embargo.h - sealed entries and their release */
#ifndef VULNID_EMBARGO_H
#define VULNID_EMBARGO_H

#include <glib.h>

#include "config.h"
#include "status.h"
#include "store.h"

/* Release an embargoed entry, inside the caller's transaction: each sealed
 * record is disclosed by a new record of kind "release" whose content
 * hashes to the sealed record's commitment; then the entry is announced
 * and the vendor told in full.  why is "date" or "creator" (audited). */
vulnid_status embargo_release(store *st, const vulnid_config *cfg, const char *entry_id,
			      gint64 cause, const char *why, GError **err);

/* vulnid tick: release every entry whose embargo date has come, each in
 * its own transaction. */
vulnid_status embargo_release_due(store *st, const vulnid_config *cfg, guint *released, GError **err);

#endif
