/* fuzz-securitytxt.c - RFC 9116 security.txt files as vendors publish
 * them (or as an attacker who controls a vendor's web server writes them):
 * securitytxt_parse() on hostile bytes.
 *
 * Properties: every address kept from a mailto: Contact is exactly one
 * plain mailbox for GMime's address parser (it becomes a recipient);
 * every string kept is one line of UTF-8; a parse error leaves nothing. */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "config.h"
#include "vendor.h"
#include "fuzz.h"

static GDateTime *now;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	now = g_date_time_new_from_iso8601(FUZZ_NOW, NULL);
	g_mime_init();	/* the address parser needs GMime's defaults */
	return 0;
}

static void
check_list(const char *what, GPtrArray *a)
{
	for (guint i = 0; a != NULL && i < a->len; i++) {
		const char *v = g_ptr_array_index(a, i);

		if (v == NULL || strpbrk(v, "\r\n") != NULL || !g_utf8_validate(v, -1, NULL))
			fuzz_fail("%s value %u is not one line of UTF-8", what, i);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(securitytxt) s = NULL;
	g_autoptr(GError) err = NULL;
	vulnid_status st;

	st = securitytxt_parse((const char *) data, size, now, &s, &err);
	if (st != VULNID_OK) {
		if (s != NULL)
			fuzz_fail("a failed parse returned a result");
		if (err == NULL)
			fuzz_fail("a failed parse without an error");
		return 0;
	}
	if (s == NULL)
		fuzz_fail("parse OK without a result");
	for (guint i = 0; i < s->contacts->len; i++) {
		const char *a = g_ptr_array_index(s->contacts, i);
		InternetAddressList *l = internet_address_list_parse(NULL, a);
		gboolean one = l != NULL && internet_address_list_length(l) == 1 &&
			       INTERNET_ADDRESS_IS_MAILBOX(internet_address_list_get_address(l, 0)) &&
			       g_strcmp0(internet_address_mailbox_get_addr(
						 INTERNET_ADDRESS_MAILBOX(internet_address_list_get_address(l, 0))), a) == 0;

		if (l != NULL)
			g_object_unref(l);
		/* It becomes a recipient: one mailbox, nothing around it, nothing
		 * that ends an SMTP path or a header line. */
		if (!one || strpbrk(a, " \t\r\n<>") != NULL)
			fuzz_fail("Contact address '%s' is not exactly one plain mailbox", a);
	}
	check_list("Contact", s->contacts);
	check_list("other Contact", s->other_contacts);
	check_list("Encryption", s->encryption);
	check_list("Preferred-Languages", s->languages);
	check_list("warning", s->warnings);
	if (s->expires != NULL && (strpbrk(s->expires, "\r\n") != NULL || !g_utf8_validate(s->expires, -1, NULL)))
		fuzz_fail("Expires is not one line of UTF-8");
	return 0;
}
