/* message-private.h - what the parts of message.c share beyond message.h */
#ifndef VULNID_MESSAGE_PRIVATE_H
#define VULNID_MESSAGE_PRIVATE_H

#include <gmime/gmime.h>

#include "message.h"

/* Record a problem found in the mail (code: a short word, see message.h). */
void message_add_problem(message *m, const char *code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
gboolean message_content_is(GMimeObject *o, const char *type, const char *subtype);
gboolean message_is_attachment_disposition(GMimeObject *o);
/* GMime's parser warnings as problems of m (the callback's data is m). */
void message_parser_warning(gint64 offset, GMimeParserWarning code, const gchar *item, gpointer data);
/* The limits measured while a mail (or what it decrypted to) was spooled:
 * problems for what is over them; where says which ("" for the mail). */
void message_check_spool_limits(message *m, const message_spool *sp, const message_limits *lim,
				const char *where);
/* Decrypt and verify what is at the top of the mail: one multipart/
 * encrypted or signed body, or one inline OpenPGP block.  The entity to
 * read the text from. */
GMimeObject *message_open_top(message *m, GMimeObject *top);

#endif
