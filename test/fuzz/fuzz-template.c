/* fuzz-template.c - mail texts rendered with hostile values, and the reply
 * built from them the way outbox.c builds it.
 *
 * Input: segments separated by NUL bytes.  First byte even: the template
 * is one of the installed ones (the .txt files of templates/, picked by the second
 * byte); odd: the first segment is the template text itself.  The other
 * segments are the values of the template's placeholders in order of
 * appearance; the last three also serve as the recipient's display name,
 * In-Reply-To and a References id.  Values pass through what the message
 * layer guarantees (UTF-8, \n, no NUL).
 *
 * Properties: rendering and splitting never fail; the Subject that goes
 * into the header is one clean line of at most 900 characters; the mail,
 * serialised with CRLF and parsed again, has exactly the header fields
 * the robot set (none injected), one To with the intended address, the
 * same Subject (when ASCII; see below) and the same body text. */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "config.h"
#include "template.h"
#include "text.h"
#include "message.h"
#include "fuzz.h"

static GPtrArray *templates;	/* char*: texts of the installed templates */
static GPtrArray *template_names;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	g_autoptr(GDir) d = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *n;

	(void) argc;
	(void) argv;
	g_setenv("VULNID_TEST_NOW", FUZZ_NOW, TRUE);
	g_mime_init();
	templates = g_ptr_array_new_with_free_func(g_free);
	template_names = g_ptr_array_new_with_free_func(g_free);
	d = g_dir_open(fuzz_template_dir(), 0, NULL);
	while (d != NULL && (n = g_dir_read_name(d)) != NULL)
		if (g_str_has_suffix(n, ".txt"))
			g_ptr_array_add(names, g_strdup(n));
	g_ptr_array_sort(names, (GCompareFunc) g_strcmp0);
	for (guint i = 0; i < names->len; i++) {
		char *text = NULL;
		g_autoptr(GError) e = NULL;

		if (template_load(NULL, g_ptr_array_index(names, i), &text, &e) != VULNID_OK)
			fuzz_fail("template_load: %s", e->message);
		g_ptr_array_add(templates, text);
		g_ptr_array_add(template_names, g_strdup(g_ptr_array_index(names, i)));
	}
	if (templates->len == 0)
		fuzz_fail("no templates in '%s' (set VULNID_TEMPLATE_DIR)", fuzz_template_dir());
	return 0;
}

/* {{name}} placeholders of text, in order, each once. */
static GPtrArray *
placeholders(const char *text)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	const char *p = text;

	while ((p = strstr(p, "{{")) != NULL) {
		const char *close = strstr(p + 2, "}}");
		g_autofree char *name = NULL;
		gboolean seen = FALSE;

		if (close == NULL)
			break;
		if (close - p > 66) {
			p += 2;
			continue;
		}
		name = g_strstrip(g_strndup(p + 2, (gsize) (close - p - 2)));
		for (guint i = 0; i < out->len; i++)
			seen |= strcmp(g_ptr_array_index(out, i), name) == 0;
		if (!seen)
			g_ptr_array_add(out, g_steal_pointer(&name));
		p = close + 2;
	}
	return out;
}

static char *
lf(const char *s)
{
	GString *o = g_string_new(NULL);

	for (; *s; s++)
		if (!(s[0] == '\r' && s[1] == '\n'))
			g_string_append_c(o, *s);
	while (o->len > 0 && o->str[o->len - 1] == '\n')
		g_string_truncate(o, o->len - 1);
	return g_string_free(o, FALSE);
}

static const char *const allowed_headers[] = {
	"From", "To", "Reply-To", "Subject", "Date", "Message-Id", "In-Reply-To", "References",
	"Auto-Submitted", "X-Loop", "Precedence", "MIME-Version", "Content-Type",
	"Content-Transfer-Encoding", NULL
};

static void
build_and_check(const char *subject, const char *body, const char *to_name, const char *in_reply_to,
		const char *reference)
{
	g_autoptr(GMimeMessage) msg = g_mime_message_new(TRUE);
	GMimeObject *o = GMIME_OBJECT(msg);
	g_autoptr(GDateTime) now = g_date_time_new_from_iso8601(FUZZ_NOW, NULL);
	g_autofree char *clean_subject = text_clean_line(subject != NULL ? subject : "", 900);
	g_autofree char *clean_name = to_name != NULL ? text_clean_line(to_name, 200) : NULL;
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	g_autoptr(GMimeParser) parser = NULL;
	g_autoptr(GMimeMessage) back = NULL;
	g_autoptr(GString) refs = g_string_new(NULL);
	GMimeTextPart *part;
	GMimeHeaderList *hl;
	InternetAddressList *to;
	const char *addr = "alice@example.net";

	if (strpbrk(clean_subject, "\r\n\t") != NULL || g_utf8_strlen(clean_subject, -1) > 900)
		fuzz_fail("cleaned Subject is not one line of at most 900 characters: %.200s", clean_subject);
	for (const char *p = clean_subject; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029 ||
		    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
			fuzz_fail("cleaned Subject holds control character U+%04X", c);
	}
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_FROM, "vulnid", "request@example.org");
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_TO, clean_name, addr);
	g_mime_message_add_mailbox(msg, GMIME_ADDRESS_TYPE_REPLY_TO, NULL, "request+FUZZ-2026-0001@example.org");
	g_mime_message_set_subject(msg, clean_subject, "utf-8");
	g_mime_message_set_date(msg, now);
	g_mime_message_set_message_id(msg, "ack.0123456789abcdef@example.org");
	if (in_reply_to != NULL && text_msgid_valid(in_reply_to)) {
		g_autofree char *irt = g_strdup_printf("<%s>", in_reply_to);

		g_mime_object_set_header(o, "In-Reply-To", irt, NULL);
	}
	if (reference != NULL && text_msgid_valid(reference))
		g_string_append_printf(refs, "<%s>", reference);
	if (in_reply_to != NULL && text_msgid_valid(in_reply_to))
		g_string_append_printf(refs, "%s<%s>", refs->len ? " " : "", in_reply_to);
	if (refs->len > 0)
		g_mime_object_set_header(o, "References", refs->str, NULL);
	g_mime_object_set_header(o, "Auto-Submitted", "auto-replied", NULL);
	g_mime_object_set_header(o, "X-Loop", "request@example.org", NULL);
	g_mime_object_set_header(o, "Precedence", "bulk", NULL);
	part = g_mime_text_part_new_with_subtype("plain");
	g_mime_text_part_set_text(part, body);
	g_mime_part_set_content_encoding(GMIME_PART(part),
		g_mime_part_get_best_content_encoding(GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	g_object_unref(part);

	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(o, fo, mem);
	g_mime_stream_reset(mem);
	parser = g_mime_parser_new_with_stream(mem);
	back = g_mime_parser_construct_message(parser, NULL);
	if (back == NULL)
		fuzz_fail("the reply does not parse again");

	hl = g_mime_object_get_header_list(GMIME_OBJECT(back));
	for (int i = 0; i < g_mime_header_list_get_count(hl); i++) {
		const char *name = g_mime_header_get_name(g_mime_header_list_get_header_at(hl, i));
		gboolean ok = FALSE;

		for (const char *const *a = allowed_headers; *a; a++)
			ok |= g_ascii_strcasecmp(*a, name) == 0;
		if (!ok)
			fuzz_fail("header '%s' in the reply that the robot never set", name);
		for (int j = 0; j < i; j++)
			if (g_ascii_strcasecmp(name, g_mime_header_get_name(g_mime_header_list_get_header_at(hl, j))) == 0)
				fuzz_fail("header '%s' twice in the reply", name);
	}
	to = g_mime_message_get_to(back);
	if (to == NULL || internet_address_list_length(to) != 1 ||
	    !INTERNET_ADDRESS_IS_MAILBOX(internet_address_list_get_address(to, 0)) ||
	    g_strcmp0(internet_address_mailbox_get_addr(
			      INTERNET_ADDRESS_MAILBOX(internet_address_list_get_address(to, 0))), addr) != 0) {
		g_autofree char *s = to != NULL ? internet_address_list_to_string(to, NULL, FALSE) : NULL;

		fuzz_fail("the display name '%s' changed the recipients: To: %s", clean_name, s);
	}
	{
		const char *got = g_mime_message_get_subject(back) != NULL ? g_mime_message_get_subject(back) : "";
		gboolean ascii = TRUE;

		for (const char *p = clean_subject; *p; p++)
			ascii &= (unsigned char) *p < 0x80;
		/* GMime 3.2.13 loses the text after a padded base64 word that
		 * is followed by another word in the same charset, and writes
		 * such words itself; and it writes ASCII text that looks like
		 * an encoded word as it is, to be decoded by the reader.  So
		 * only ASCII Subjects without "=?" must come back exactly
		 * (test/fuzz/README, "Known"). */
		ascii &= strstr(clean_subject, "=?") == NULL;
		if (ascii ? strcmp(got, clean_subject) != 0
			  : strpbrk(got, "\r\n") != NULL || !g_utf8_validate(got, -1, NULL))
			fuzz_fail("Subject '%s' came back as '%s'", clean_subject, got);
	}
	{
		GMimeObject *bp = g_mime_message_get_mime_part(back);
		g_autofree char *text = GMIME_IS_TEXT_PART(bp) ? g_mime_text_part_get_text(GMIME_TEXT_PART(bp)) : NULL;
		g_autofree char *a = lf(body);
		g_autofree char *b = text != NULL ? lf(text) : NULL;

		if (b == NULL || strcmp(a, b) != 0)
			fuzz_fail("the body changed on the way (%zu bytes sent, %zu came back)", strlen(a),
				  b != NULL ? strlen(b) : 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GPtrArray) segs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) vars = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GPtrArray) names = NULL;
	g_autofree char *tmpl = NULL;
	g_autofree char *rendered = NULL;
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;
	gboolean own;
	gsize start, first;

	if (size < 2 || size > 256 * 1024)
		return 0;
	own = data[0] & 1;
	first = own ? 1 : 2;
	for (gsize i = first, s = first; i <= size; i++)
		if (i == size || data[i] == '\0') {
			char *t = fuzz_text(data + s, i - s);

			g_ptr_array_add(segs, t != NULL ? t : g_strdup(""));
			s = i + 1;
		}
	if (own) {
		tmpl = g_strdup(g_ptr_array_index(segs, 0));
		start = 1;
	} else {
		tmpl = g_strdup(g_ptr_array_index(templates, data[1] % templates->len));
		start = 0;
	}
	names = placeholders(tmpl);
	for (guint i = 0; i < names->len && start + i < segs->len; i++)
		g_hash_table_insert(vars, g_strdup(g_ptr_array_index(names, i)),
				    g_strdup(g_ptr_array_index(segs, start + i)));
	rendered = template_render(tmpl, vars);
	if (rendered == NULL || !g_utf8_validate(rendered, -1, NULL))
		fuzz_fail("rendering gave no UTF-8 text");
	template_split(rendered, &subject, &body);
	if (body == NULL)
		fuzz_fail("no body after template_split");
	if (subject != NULL && strchr(subject, '\n') != NULL)
		fuzz_fail("Subject from template_split spans lines");
	build_and_check(subject, body,
			segs->len >= 3 ? g_ptr_array_index(segs, segs->len - 3) : NULL,
			segs->len >= 2 ? g_ptr_array_index(segs, segs->len - 2) : NULL,
			segs->len >= 1 ? g_ptr_array_index(segs, segs->len - 1) : NULL);
	return 0;
}
