/* request.h - the request format: pseudo-header fields and blocks
 *
 * A request text is one or more blocks separated by a line "---".  Each
 * block starts with optional "Key: value" lines (continued by lines that
 * start with white space; blank lines between them only before a field of
 * a known name); the first other line ends them, and the rest, after one
 * blank line, is the description.  Quotes of other mail are left out, and
 * in field values the links mail programs add ("example.com
 * <http://example.com>"). */
#ifndef VULNID_REQUEST_H
#define VULNID_REQUEST_H

#include <glib.h>

#include "status.h"

typedef struct {
	char *key;		/* canonical spelling for known keys */
	char *value;		/* one line, cleaned */
} request_field;

typedef struct {
	GPtrArray *fields;	/* request_field*, in the order given */
	char *description;	/* may be empty */
} request_block;

typedef struct request {
	GPtrArray *blocks;	/* request_block* */
	GPtrArray *errors;	/* char*: what the sender must fix */
	GPtrArray *warnings;	/* char*: accepted, but worth saying */
	gboolean is_help;	/* the text only asks for help */
	gboolean is_key;	/* the text only asks for the robot's key */
} request;

typedef struct {
	gint64 max_ids;
	gint64 max_fields;
	gint64 max_field_length;
} request_limits;

/* Length of a field name at the start of line, or 0 when the line is not
 * a field.  A name is a letter, then letters, digits or '-' (at most 64),
 * then ':' and white space or the end of the line ("http://x" is not a
 * field).  Commands in mail about an entry follow the same rule. */
gsize request_field_name_len(const char *line);

/* Whether name (any case) is a field the request format defines (Vendor,
 * Product, Version, ...): such a field also goes on after blank lines
 * (mail programs that write paragraphs double-space them). */
gboolean request_field_known(const char *name);

/* Parse text (UTF-8, \n line ends).  Problems with the content go to
 * ->errors (nothing may be assigned) or ->warnings; the status is only
 * for resource failures. */
request *request_parse(const char *text, const char *subject, const request_limits *lim,
		       GDateTime *now);
/* Tell the sender that only the first `kept` of `total` bytes of the text
 * were read, and that all of it is the attachment `kept_as` (a warning). */
void request_note_text_cut(request *r, gint64 kept, gint64 total, const char *kept_as);
/* Tell the sender that the Subject, chars characters long, was cut to
 * its first 998 (a warning): a title is never cut silently. */
void request_note_subject_cut(request *r, glong chars);
void request_free(request *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(request, request_free)

/* First value of key in a block, or NULL. */
const char *request_block_get(const request_block *b, const char *key);

/* Title of a block: its Title field, else the subject, else "". */
const char *request_block_title(const request_block *b, const char *subject);

/* Fields as JSON text: [["Key","value"],...] (canonical form). */
char *request_block_fields_json(const request_block *b);

#endif
