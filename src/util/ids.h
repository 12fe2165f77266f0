/* ids.h - identifiers PREFIX-YYYY-NNNN and the number blocks they come from */
#ifndef VULNID_IDS_H
#define VULNID_IDS_H

#include <glib.h>

#define IDS_PREFIX_MIN 2
#define IDS_PREFIX_MAX 16
/* Numbers stay far below what fits in 64 bits and print in 15 digits. */
#define IDS_NUMBER_MAX G_GINT64_CONSTANT(999999999999999)

typedef struct {
	gint64 first;
	gint64 last;		/* inclusive; IDS_NUMBER_MAX when open-ended */
} ids_block;

gboolean ids_prefix_valid(const char *prefix);

/* PREFIX-YYYY-NNNN, the number zero-padded to at least four digits. */
char *ids_format(const char *prefix, int year, gint64 number);

/* Split an identifier; any of the out parameters may be NULL.  Accepts any
 * prefix that ids_prefix_valid() accepts, upper case only. */
gboolean ids_parse(const char *id, char **prefix, int *year, gint64 *number);

/* "1-", "1-9999,20000-29999": sorted, non-overlapping ranges. */
gboolean ids_blocks_parse(const char *spec, GArray **out, GError **err);

/* The smallest number in blocks greater than last (0: none assigned yet). */
gboolean ids_blocks_next(const GArray *blocks, gint64 last, gint64 *next);

#endif
