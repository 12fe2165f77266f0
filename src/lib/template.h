/* template.h - mail texts with {{placeholders}}
 *
 * A template is UTF-8 text.  Lines before the first blank line that look
 * like "Subject: ..." are header lines (only Subject is recognised); the
 * rest is the body.  {{name}} is replaced by the value of name; an unknown
 * name renders as nothing.  Values are inserted as they are: the caller
 * cleans what goes into a header. */
#ifndef VULNID_TEMPLATE_H
#define VULNID_TEMPLATE_H

#include <glib.h>

#include "config.h"
#include "status.h"

/* Read NAME (e.g. "ack.txt") from the instance's template directory, else
 * from the built-in set. */
vulnid_status template_load(const vulnid_config *cfg, const char *name,
			    char **text, GError **err);

/* Substitute {{name}} from vars (string -> string). */
char *template_render(const char *text, GHashTable *vars);

/* Split a rendered template into its Subject (or NULL) and body. */
void template_split(const char *rendered, char **subject, char **body);

#endif
