/* osv.h - OSV records (the Open Source Vulnerability format) of the public
 * entries, rendered from their public views */
#ifndef VULNID_OSV_H
#define VULNID_OSV_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "export.h"

typedef struct {
	const char *id_prefix;	/* OSV id prefix: "x_" unless registered with OSV */
	const char *base_url;	/* where the web archive lives, for references, or NULL */
} osv_opts;

/* The OSV id of an entry. */
char *osv_id(const osv_opts *o, const char *id);
/* Whether an entry gets an OSV record: public with content (not reserved,
 * embargoed or spam). */
gboolean osv_wanted(const entry_view *v);
/* One OSV record for entry i of the set. */
JsonNode *osv_record(const export_set *set, guint i, const osv_opts *o);
/* Write DIR/<osv id>.json for every such entry; files of entries that are
 * no longer published (spam) are removed.  *count: records written. */
vulnid_status osv_export(store *st, const char *dir, const osv_opts *o, guint *count, GError **err);

/* Building blocks, public for the unit tests: a package URL's OSV
 * ecosystem and package name. */
gboolean osv_purl_map(const char *purl, char **ecosystem, char **name);
const char *osv_ecosystem(const char *name);

#endif
