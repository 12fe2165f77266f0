/* header.h - the top-level header of an incoming mail, read once while it
 * is spooled: the bounded copy that GMime parses, the trace block at its
 * top, and what is wrong with it
 *
 * GMime is handed a copy of the header that holds only the fields the
 * robot reads or MIME needs, each cut to HEADER_FIELD_KEEP bytes: no field
 * however long and no address list however many parser warnings it holds
 * costs more than that bound (Cc: and Bcc: never reach GMime at all).
 * What GMime would have said about the fields left out (an invalid field
 * name, a single field given twice with different values) is found here,
 * in one linear pass. */
#ifndef VULNID_HEADER_H
#define VULNID_HEADER_H

#include <glib.h>

/* Bytes of one field that GMime is given at most. */
#define HEADER_FIELD_KEEP (16 * 1024)
/* Bytes of a trace field (Received, Authentication-Results) kept. */
#define HEADER_TRACE_KEEP 4096
/* Trace fields kept from the top of the header. */
#define HEADER_TRACE_MAX 64

typedef struct {
	char *name;		/* lower case */
	char *value;		/* unfolded, cut to HEADER_TRACE_KEEP */
	gint64 offset;		/* of the field in the message */
} header_trace_field;

typedef struct header_scan header_scan;

header_scan *header_scan_new(void);
void header_scan_free(header_scan *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(header_scan, header_scan_free)

/* One piece of the header as read: a whole line with its line end, or a
 * part of a long line (line_start says whether it begins a line); offset
 * is where it starts in the message. */
void header_scan_feed(header_scan *h, const char *piece, gsize len, gboolean line_start, gint64 offset);
/* The header is complete (the blank line, or the end of the input). */
void header_scan_end(header_scan *h);

/* One piece of the body (after header_scan_end()).  Only what decides
 * the cost of parsing it is looked at: lines "--boundary" for boundaries
 * declared in a Content-Type, and the part headers that follow them. */
void header_scan_body_feed(header_scan *h, const char *piece, gsize len, gboolean line_start);
/* What the parser would build: MIME delimiters seen (an upper bound of
 * the parts opened), the most fields in one part header, the longest
 * field of a part header in bytes. */
void header_scan_body_stats(header_scan *h, guint64 *parts, guint64 *most_part_fields,
			    gint64 *longest_part_field);

/* The header for the parser: the kept fields, then the blank line. */
GBytes *header_scan_parser_header(const header_scan *h);
/* Sentences for what is wrong ("an invalid header name near byte 12
 * ('...')", "conflicting subject headers near byte 80"); never NULL. */
GPtrArray *header_scan_problems(const header_scan *h);
/* The fields of the trace block at the top of the header, in order:
 * Received and Authentication-Results (header_trace_field*).  The block
 * ends at the first field that no MTA or filter on the way adds. */
GPtrArray *header_scan_trace(const header_scan *h);

#endif
