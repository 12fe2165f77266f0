/* template.h - mail texts with {{placeholders}}
 *
 * A template is UTF-8 text.  Lines before the first blank line that look
 * like "Subject: ..." are header lines (only Subject is recognised); the
 * rest is the body.  {{name}} is replaced by the value of name; an unknown
 * name renders as nothing.  Values are inserted as they are: the caller
 * cleans what goes into a header.  So that the mail reads well:
 *   - a line whose placeholders all render empty, with nothing else on it
 *     but white space or a label ("  Type:    {{type}}"), is left out;
 *   - a heading (a line ending in ':' without placeholders) whose section
 *     (the lines up to the next blank one, after at most one blank line)
 *     is all left out is left out with it;
 *   - blank lines that then follow each other become one;
 *   - a paragraph of text (lines that start at the left margin) in which
 *     a value made a line longer than TEMPLATE_WIDTH characters is
 *     reflowed, and any other such line wrapped at spaces (text_wrap());
 *     a value with line ends, or alone on its line, is inserted as it is
 *     (its maker wraps it: a description stays as the researcher wrote
 *     it). */
#ifndef VULNID_TEMPLATE_H
#define VULNID_TEMPLATE_H

#include <glib.h>

#include "config.h"
#include "status.h"

#define TEMPLATE_WIDTH 78	/* characters of a line of the robot's mail */

/* Read NAME (e.g. "ack.txt") from the instance's template directory, else
 * from the built-in set. */
vulnid_status template_load(const vulnid_config *cfg, const char *name,
			    char **text, GError **err);

/* Substitute {{name}} from vars (string -> string). */
char *template_render(const char *text, GHashTable *vars);

/* Split a rendered template into its Subject (or NULL) and body. */
void template_split(const char *rendered, char **subject, char **body);

#endif
