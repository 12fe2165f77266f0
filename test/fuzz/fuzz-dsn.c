/* fuzz-dsn.c - delivery status notifications: dsn_parse() on a hostile
 * mail parsed by GMime, and dsn_parse_status_text() on the raw bytes.
 *
 * Properties: at most 100 recipients; every value that reaches the
 * database and the audit log (recipient, action, status, diagnostic,
 * reporting MTA, original Message-ID) is one line of valid UTF-8; the
 * original Message-ID passes text_msgid_valid(). */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "dsn.h"
#include "message.h"
#include "text.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	g_mime_init();
	fuzz_no_gpg();
	return 0;
}

static void
one_line(const char *what, const char *v)
{
	if (v == NULL)
		return;
	if (strpbrk(v, "\r\n") != NULL || !g_utf8_validate(v, -1, NULL))
		fuzz_fail("%s is not one line of UTF-8: %.200s", what, v);
}

static void
check_report(const dsn_report *r)
{
	if (r->recipients->len > 100)
		fuzz_fail("%u recipients read", r->recipients->len);
	one_line("Reporting-MTA", r->reporting_mta);
	one_line("original Message-ID", r->original_message_id);
	if (r->original_message_id != NULL && !text_msgid_valid(r->original_message_id))
		fuzz_fail("original Message-ID '%s' is not valid", r->original_message_id);
	for (guint i = 0; i < r->recipients->len; i++) {
		const dsn_recipient *d = g_ptr_array_index(r->recipients, i);

		if (d->recipient == NULL && d->action == NULL)
			fuzz_fail("a recipient block with neither recipient nor action kept");
		one_line("Final-Recipient", d->recipient);
		one_line("Original-Recipient", d->original);
		if (!fuzz_known_open("property-dsn-action-not-utf8"))
			one_line("Action", d->action);
		one_line("Status", d->status);
		one_line("Diagnostic-Code", d->diagnostic);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024 * 1024)
		return 0;
	{
		g_autoptr(dsn_report) r = dsn_report_new();

		/* The status text as a part decodes it: any bytes. */
		dsn_parse_status_text(r, (const char *) data, size);
		check_report(r);
	}
	{
		g_autoptr(GMimeStream) mem = g_mime_stream_mem_new_with_buffer((const char *) data, size);
		g_autoptr(GMimeParser) parser = g_mime_parser_new_with_stream(mem);
		g_autoptr(GMimeMessage) msg = NULL;
		g_autoptr(dsn_report) r = NULL;

		g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
		msg = g_mime_parser_construct_message(parser, NULL);
		if (fuzz_known_open("crash-dsn-empty-delivery-status") && fuzz_has_empty_dsn_part(data, size))
			return 0;
		r = dsn_parse(msg);
		check_report(r);
	}
	return 0;
}
