/* status.h - status codes shared by every module of the internal library */
#ifndef VULNID_STATUS_H
#define VULNID_STATUS_H

#include <glib.h>

/* Library functions return one of these and, where the caller may want to
 * tell a human, fill a GError in VULNID_ERROR with the same code.  Only the
 * programs' main() map a status to an exit code. */
typedef enum {
	VULNID_OK = 0,
	VULNID_ERR_TEMP,	/* may work later; nothing more specific known */
	VULNID_ERR_BUSY,	/* database locked past busy_timeout */
	VULNID_ERR_IO,		/* read or write failed */
	VULNID_ERR_NOSPACE,	/* disk full */
	VULNID_ERR_READONLY,	/* cannot write the instance */
	VULNID_ERR_NOMEM,
	VULNID_ERR_CONFIG,	/* unreadable or invalid configuration */
	VULNID_ERR_TOOBIG,	/* message over the size limit */
	VULNID_ERR_EXHAUSTED,	/* no identifiers left in the configured blocks */
	VULNID_ERR_NOTFOUND,
	VULNID_ERR_EXISTS,
	VULNID_ERR_INVALID,	/* bad argument or bad data */
	VULNID_ERR_CORRUPT,	/* database or log does not verify */
	VULNID_ERR_TIMEOUT,
	VULNID_ERR_INTERNAL,	/* a bug or an unexpected library failure */
} vulnid_status;

#define VULNID_ERROR (vulnid_error_quark())
GQuark vulnid_error_quark(void);

const char *vulnid_status_str(vulnid_status st);

/* Set *err (if err is not NULL) and return st, so that error paths read
 * `return vulnid_fail(err, VULNID_ERR_IO, "cannot open '%s': %s", ...)`. */
vulnid_status vulnid_fail(GError **err, vulnid_status st, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);

/* Map an errno value from a failed system call to a status. */
vulnid_status vulnid_status_from_errno(int errnum);

#endif
