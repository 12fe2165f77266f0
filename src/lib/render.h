/* render.h - an entry view as text and JSON: the terminal (vulnid show and
 * list), the robot's mail (lookups, subscriptions, relays, notifications)
 *
 * Everything here reads an entry_view (disclosure.h) and nothing else. */
#ifndef VULNID_RENDER_H
#define VULNID_RENDER_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "config.h"
#include "disclosure.h"

/* For a terminal (vulnid show): control characters masked. */
char *render_text(const entry_view *v);
/* The documented JSON (doc/vulnid-json.7). */
JsonNode *render_json(const entry_view *v);
/* One object of vulnid list --json. */
JsonObject *render_list_json(const entry_view *v);
/* The auth object of a record as the view may show it. */
JsonNode *render_auth_json(const view_record *vr);

/* The entry as text for a mail (lookup replies): bounded in size. */
char *render_mail_text(const entry_view *v);
/* Only its headline, the number of records, its address and its page
 * ([export] base_url): the lookup answer to mail the robot cannot verify
 * came from its reply address, a few hundred bytes whatever the entry. */
char *render_mail_headline(const vulnid_config *cfg, const entry_view *v);
/* One record as text for a mail (subscribers, relays). */
char *render_record_text(const entry_view *v, const view_record *vr, gboolean with_body);
/* The same with the whole text, however long: for a mail that is the only
 * way its reader can read it (sealed records sent to a key given access). */
char *render_record_text_whole(const entry_view *v, const view_record *vr);
/* The view record of seq, or NULL. */
const view_record *render_find_record(const entry_view *v, gint64 seq);

/* The entry as the acknowledgement describes it to its creator (v is the
 * creator's view of the new entry): the headline and the request's
 * fields, or only the commitment and the embargo when stub (embargoed
 * content in a mail that travels in clear); the entry's address, and the
 * creator token when there is one (the only mail a token is written
 * into). */
void render_ack_entry(GString *out, const vulnid_config *cfg, const entry_view *v, gboolean stub,
		      const char *token);

/* Template values describing the entry (id, digest, title, vendor, product,
 * versions, type, references, description, embargo, entry_address,
 * researcher, headline, state, ...), as the view may show them. */
GHashTable *render_template_vars(const vulnid_config *cfg, const entry_view *v);

#endif
