/* fuzz-feed-stubs.c - weak stand-ins for what feed.c's exporter needs from
 * export.c, for as long as the library is built without them.  The
 * verifier never calls them; the real ones win wherever they are linked.
 * No prototypes on purpose: only the names must match. */
#include <stdlib.h>

void export_facts_derive(void) __attribute__((weak));
void export_facts_free(void) __attribute__((weak));
void export_record_fields(void) __attribute__((weak));
void export_write_file(void) __attribute__((weak));

void export_facts_derive(void) { abort(); }
void export_facts_free(void) { abort(); }
void export_record_fields(void) { abort(); }
void export_write_file(void) { abort(); }
