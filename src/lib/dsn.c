/* dsn.c - read RFC 3464 delivery status notifications */
#include "autoconfig.h"

#include <string.h>

#include "dsn.h"
#include "message.h"
#include "text.h"

#define DSN_MAX_TEXT (64 * 1024)
#define DSN_MAX_RECIPIENTS 100

dsn_report *
dsn_report_new(void)
{
	dsn_report *r = g_new0(dsn_report, 1);

	r->recipients = g_ptr_array_new();
	return r;
}

void
dsn_report_free(dsn_report *r)
{
	if (r == NULL)
		return;
	for (guint i = 0; i < r->recipients->len; i++) {
		dsn_recipient *d = g_ptr_array_index(r->recipients, i);

		g_free(d->recipient);
		g_free(d->original);
		g_free(d->action);
		g_free(d->status);
		g_free(d->diagnostic);
		g_free(d);
	}
	g_ptr_array_unref(r->recipients);
	g_free(r->reporting_mta);
	g_free(r->original_message_id);
	g_free(r);
}

/* "rfc822; user@example.com" -> "user@example.com" */
static char *
address_value(const char *v)
{
	const char *semi = strchr(v, ';');
	g_autofree char *a = g_strstrip(g_strdup(semi != NULL ? semi + 1 : v));
	gsize n = strlen(a);

	if (n >= 2 && a[0] == '<' && a[n - 1] == '>') {
		char *inner = g_strndup(a + 1, n - 2);

		g_free(a);
		a = inner;
	}
	return text_clean_line(a, 320);
}

/* One field block: "Name: value" lines with continuations. */
static void
parse_block(dsn_report *r, char **lines, gsize from, gsize to, gboolean per_message)
{
	dsn_recipient *d = per_message ? NULL : g_new0(dsn_recipient, 1);
	GString *cur = g_string_new(NULL);

	for (gsize i = from; i <= to; i++) {
		const char *l = i < to ? lines[i] : NULL;

		if (l != NULL && (l[0] == ' ' || l[0] == '\t') && cur->len > 0) {
			g_autofree char *more = g_strstrip(g_strdup(l));

			g_string_append_c(cur, ' ');
			g_string_append(cur, more);
			continue;
		}
		if (cur->len > 0) {
			char *colon = strchr(cur->str, ':');

			if (colon != NULL) {
				g_autofree char *name = g_strstrip(g_strndup(cur->str, (gsize) (colon - cur->str)));
				const char *value = colon + 1;

				if (per_message) {
					if (g_ascii_strcasecmp(name, "Reporting-MTA") == 0 && r->reporting_mta == NULL)
						r->reporting_mta = address_value(value);
				} else if (g_ascii_strcasecmp(name, "Final-Recipient") == 0) {
					g_free(d->recipient);
					d->recipient = address_value(value);
				} else if (g_ascii_strcasecmp(name, "Original-Recipient") == 0 && d->original == NULL) {
					d->original = address_value(value);
				} else if (g_ascii_strcasecmp(name, "Action") == 0 && d->action == NULL) {
					g_autofree char *v = text_clean_line(value, 40);

					d->action = g_ascii_strdown(v, -1);
				} else if (g_ascii_strcasecmp(name, "Status") == 0 && d->status == NULL) {
					d->status = text_clean_line(value, 20);
				} else if (g_ascii_strcasecmp(name, "Diagnostic-Code") == 0 && d->diagnostic == NULL) {
					d->diagnostic = address_value(value);
				}
			}
			g_string_truncate(cur, 0);
		}
		if (l != NULL)
			g_string_append(cur, l);
	}
	g_string_free(cur, TRUE);
	if (d == NULL)
		return;
	if (d->recipient == NULL && d->original != NULL)
		d->recipient = g_strdup(d->original);
	if ((d->recipient != NULL || d->action != NULL) && r->recipients->len < DSN_MAX_RECIPIENTS)
		g_ptr_array_add(r->recipients, d);
	else {
		g_free(d->recipient);
		g_free(d->original);
		g_free(d->action);
		g_free(d->status);
		g_free(d->diagnostic);
		g_free(d);
	}
}

void
dsn_parse_status_text(dsn_report *r, const char *text, gsize len)
{
	g_autofree char *copy = g_strndup(text, MIN(len, DSN_MAX_TEXT));
	g_autofree char *norm = text_normalize_newlines(copy);
	g_auto(GStrv) lines = g_strsplit(norm, "\n", -1);
	gsize n = g_strv_length(lines), start = 0;
	gboolean first = TRUE;

	for (gsize i = 0; i <= n; i++) {
		if (i == n || *lines[i] == '\0') {
			if (i > start) {
				parse_block(r, lines, start, i, first);
				first = FALSE;
			}
			start = i + 1;
		}
	}
}

static void
find_status(dsn_report *r, GMimeObject *o, int depth)
{
	GMimeContentType *ct;

	if (o == NULL || depth > 8)
		return;
	if (GMIME_IS_MULTIPART(o)) {
		GMimeMultipart *mp = GMIME_MULTIPART(o);

		for (int i = 0; i < g_mime_multipart_get_count(mp) && i < 20; i++)
			find_status(r, g_mime_multipart_get_part(mp, i), depth + 1);
		return;
	}
	ct = g_mime_object_get_content_type(o);
	if (GMIME_IS_MESSAGE_PART(o)) {
		GMimeMessage *inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

		if (inner != NULL && r->original_message_id == NULL) {
			const char *id = g_mime_message_get_message_id(inner);

			if (text_msgid_valid(id))
				r->original_message_id = g_strdup(id);
		}
		return;
	}
	if (GMIME_IS_PART(o) && ct != NULL &&
	    (g_mime_content_type_is_type(ct, "message", "delivery-status") ||
	     g_mime_content_type_is_type(ct, "message", "global-delivery-status"))) {
		GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o));
		g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
		GByteArray *b;

		if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
			return;
		b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
		r->is_report = TRUE;
		if (b->len > 0)
			dsn_parse_status_text(r, (const char *) b->data, b->len);
	}
	if (GMIME_IS_PART(o) && ct != NULL && g_mime_content_type_is_type(ct, "text", "rfc822-headers") &&
	    r->original_message_id == NULL) {
		/* Headers of the returned message: look for its Message-ID. */
		GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o));
		g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
		GByteArray *b;

		if (w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0)
			return;
		b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
		if (b->len == 0)
			return;
		{
			g_autofree char *t = g_strndup((const char *) b->data, MIN(b->len, DSN_MAX_TEXT));
			g_autofree char *n = text_normalize_newlines(t);
			g_auto(GStrv) lines = g_strsplit(n, "\n", -1);

			for (char **l = lines; *l; l++)
				if (g_ascii_strncasecmp(*l, "Message-ID:", 11) == 0) {
					g_autofree char *id = g_mime_utils_decode_message_id(*l + 11);

					if (text_msgid_valid(id))
						r->original_message_id = g_steal_pointer(&id);
					break;
				}
		}
	}
}

dsn_report *
dsn_parse(GMimeMessage *msg)
{
	dsn_report *r = dsn_report_new();

	if (msg != NULL)
		find_status(r, g_mime_message_get_mime_part(msg), 0);
	return r;
}
