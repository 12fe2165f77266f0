/* status.c - status codes and error helpers */
#include "autoconfig.h"

#include <errno.h>
#include <stdarg.h>

#include "status.h"

G_DEFINE_QUARK(vulnid-error-quark, vulnid_error)

const char *
vulnid_status_str(vulnid_status st)
{
	switch (st) {
	case VULNID_OK: return "ok";
	case VULNID_ERR_TEMP: return "temporary failure";
	case VULNID_ERR_BUSY: return "database busy";
	case VULNID_ERR_IO: return "i/o error";
	case VULNID_ERR_NOSPACE: return "no space left";
	case VULNID_ERR_READONLY: return "instance not writable";
	case VULNID_ERR_NOMEM: return "out of memory";
	case VULNID_ERR_CONFIG: return "configuration error";
	case VULNID_ERR_TOOBIG: return "message too large";
	case VULNID_ERR_EXHAUSTED: return "identifier blocks exhausted";
	case VULNID_ERR_NOTFOUND: return "not found";
	case VULNID_ERR_EXISTS: return "already exists";
	case VULNID_ERR_INVALID: return "invalid data";
	case VULNID_ERR_CORRUPT: return "verification failed";
	case VULNID_ERR_TIMEOUT: return "timed out";
	case VULNID_ERR_INTERNAL: return "internal error";
	}
	return "unknown status";
}

vulnid_status
vulnid_fail(GError **err, vulnid_status st, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && *err == NULL) {
		va_start(ap, fmt);
		*err = g_error_new_valist(VULNID_ERROR, (gint) st, fmt, ap);
		va_end(ap);
	}
	return st;
}

vulnid_status
vulnid_status_from_errno(int errnum)
{
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
		return VULNID_ERR_NOSPACE;
	case EROFS:
	case EACCES:
	case EPERM:
		return VULNID_ERR_READONLY;
	case ENOMEM:
		return VULNID_ERR_NOMEM;
	case ENOENT:
		return VULNID_ERR_NOTFOUND;
	case EEXIST:
		return VULNID_ERR_EXISTS;
	default:
		return VULNID_ERR_IO;
	}
}
