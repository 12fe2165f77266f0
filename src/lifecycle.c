/* lifecycle.c - mail about existing entries (see lifecycle.h) */
#include "autoconfig.h"

#include "lifecycle.h"

vulnid_status
lifecycle_route(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err)
{
	(void) c;
	(void) err;
	*kind = ROUTE_NEW;
	*entry_id = NULL;
	return VULNID_OK;
}

vulnid_status
lifecycle_handle(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id, GError **err)
{
	(void) c;
	(void) kind;
	(void) entry_id;
	return vulnid_fail(err, VULNID_ERR_INTERNAL, "entry mail is not handled yet");
}

vulnid_status
lifecycle_issue_token(store *st, const char *entry_id, const char *role, const char *address,
		      char **token, GError **err)
{
	(void) st;
	(void) entry_id;
	(void) role;
	(void) address;
	(void) err;
	*token = NULL;
	return VULNID_OK;
}
