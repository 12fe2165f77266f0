/* message-private.h - what the parts of message.c share beyond message.h */
#ifndef VULNID_MESSAGE_PRIVATE_H
#define VULNID_MESSAGE_PRIVATE_H

#include <gmime/gmime.h>

#include "message.h"

/* Record a problem found in the mail (code: a short word, see message.h). */
void message_add_problem(message *m, const char *code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
gboolean message_content_is(GMimeObject *o, const char *type, const char *subtype);
gboolean message_is_attachment_disposition(GMimeObject *o);
/* Decrypt and verify what is at the top of the mail: one multipart/
 * encrypted or signed body, or one inline OpenPGP block.  The entity to
 * read the text from. */
GMimeObject *message_open_top(message *m, GMimeObject *top);

#endif
