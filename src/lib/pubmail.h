/* pubmail.h - the public mail archive: each public record as a mail,
 * rendered from the entry's public view (never the archived mail itself),
 * for the mbox export and the web archive
 *
 * A record's mail carries what the public view shows of it: the author
 * (an anonymous researcher as "an anonymous researcher"
 * <anonymous@invalid>), the subject, fields, text, the list of
 * attachments, and in X-Vulnid-* header fields the entry, the record, its
 * hash and how its author's role was established.  Tokens are never part
 * of a record, and the archived mail (with its headers, Reply-To, quoted
 * text and signatures) is never copied. */
#ifndef VULNID_PUBMAIL_H
#define VULNID_PUBMAIL_H

#include <glib.h>

#include "export.h"

typedef struct {
	const entry_view *v;	/* borrowed from the set */
	const view_record *vr;
} pubmail;

/* The public records of the open entries, in the order they became public
 * (a sealed record where its release put it). */
GPtrArray *pubmail_list(const export_set *set);
/* The file name of a record's mail in the web archive: ID-SEQ.eml. */
char *pubmail_name(const pubmail *m);
/* The mail, LF line ends; robot_domain names its Message-ID. */
GBytes *pubmail_render(const pubmail *m, const char *robot_domain);
/* Every public record as an mbox (mboxrd quoting).  *count: mails. */
vulnid_status pubmail_mbox(store *st, const char *path, const char *robot_domain,
			   guint *count, GError **err);

#endif
