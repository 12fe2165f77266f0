/* pubmail.c - the public mail archive (pubmail.h): each public record as a
 * mail, made with GMime from the entry's public view */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "message.h"
#include "pubmail.h"
#include "render.h"

/* Where a record became public: its own place, or its release's. */
static gint64
published_at(const pubmail *m)
{
	return m->vr->r->disclosed ? m->vr->r->disclosed_at : m->vr->r->rowid;
}

static gint
pubmail_cmp(gconstpointer a, gconstpointer b)
{
	const pubmail *x = *(pubmail *const *) a;
	const pubmail *y = *(pubmail *const *) b;
	gint64 px = published_at(x), py = published_at(y);

	if (px != py)
		return px < py ? -1 : 1;
	return x->vr->r->seq < y->vr->r->seq ? -1 : x->vr->r->seq > y->vr->r->seq;
}

GPtrArray *
pubmail_list(const export_set *set)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < set->views->len; i++) {
		const entry_view *v = g_ptr_array_index(set->views, i);

		if (!export_open(v))
			continue;
		for (guint k = 0; k < v->records->len; k++) {
			const view_record *vr = g_ptr_array_index(v->records, k);
			pubmail *m;

			/* a release's content is the mail of the record it opened */
			if (!vr->content || vr->r->kind == ENTRY_KIND_RELEASE)
				continue;
			m = g_new0(pubmail, 1);
			m->v = v;
			m->vr = vr;
			g_ptr_array_add(out, m);
		}
	}
	g_ptr_array_sort(out, pubmail_cmp);
	return out;
}

char *
pubmail_name(const pubmail *m)
{
	/* made of an identifier and a number: safe as a file name */
	return g_strdup_printf("%s-%" G_GINT64_FORMAT ".eml", m->v->e->id, m->vr->r->seq);
}

static char *
message_id(const char *entry_id, gint64 seq, const char *domain)
{
	return g_strdup_printf("%s.%" G_GINT64_FORMAT "@%s", entry_id, seq,
			       domain != NULL && *domain != '\0' ? domain : "invalid");
}

/* The text of the mail: the record's fields, its text, its attachments. */
static char *
pubmail_text(const view_record *vr)
{
	const entry_record *r = vr->r;

	GString *t = g_string_new(NULL);

	for (guint j = 0; j < r->fields->len; j++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, j);

		g_string_append_printf(t, "%s: %s\n", kv->key, kv->value);
	}
	if (r->fields->len > 0 && r->body != NULL && *r->body != '\0')
		g_string_append_c(t, '\n');
	if (r->body != NULL && *r->body != '\0')
		g_string_append_printf(t, "%s\n", r->body);
	if (vr->attachments->len > 0)
		g_string_append(t, "\nAttachments (archived, not part of this mail):\n");
	for (guint j = 0; j < vr->attachments->len; j++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, j);
		const entry_attachment *a = va->a;

		if (va->withheld) {
			g_string_append_printf(t, "  %s\n", entry_view_attachment_label(va));
			continue;
		}
		g_string_append_printf(t, "  %s (%s, %" G_GINT64_FORMAT " bytes), SHA-256 %s\n",
				       a->filename != NULL ? a->filename : "(no name)", a->content_type,
				       a->size, a->sha256);
	}
	return g_string_free(t, FALSE);
}

static void
set_from(GMimeMessage *msg, const view_record *vr)
{
	InternetAddressList *from = g_mime_message_get_from(msg);

	if (vr->author_withheld)
		internet_address_list_add(from, internet_address_mailbox_new("an anonymous researcher",
									     "anonymous@invalid"));
	else if (vr->author != NULL)
		internet_address_list_add(from, internet_address_mailbox_new(vr->author_name, vr->author));
	else
		internet_address_list_add(from, internet_address_mailbox_new(NULL, "unknown@invalid"));
}

GBytes *
pubmail_render(const pubmail *m, const char *robot_domain)
{
	const entry_record *r = m->vr->r;
	g_autoptr(GMimeMessage) msg = g_mime_message_new(TRUE);
	g_autoptr(GDateTime) date = g_date_time_new_from_iso8601(r->created, NULL);
	g_autofree char *mid = message_id(m->v->e->id, r->seq, robot_domain);
	g_autofree char *subject = NULL;
	g_autofree char *text = pubmail_text(m->vr);
	g_autofree char *how = entry_view_record_how(m->vr);
	g_autofree char *rec = g_strdup_printf("%" G_GINT64_FORMAT " %s", r->seq, r->kind_name);
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	GMimeTextPart *part = g_mime_text_part_new_with_subtype("plain");
	char *out;

	set_from(msg, m->vr);
	subject = r->subject != NULL && *r->subject != '\0'
		  ? g_strdup_printf("[%s] %s", m->v->e->id, r->subject)
		  : g_strdup_printf("[%s] record %" G_GINT64_FORMAT, m->v->e->id, r->seq);
	g_mime_message_set_subject(msg, subject, "utf-8");
	if (date != NULL)
		g_mime_message_set_date(msg, date);
	g_mime_message_set_message_id(msg, mid);
	if (r->seq > 1) {
		g_autofree char *first = message_id(m->v->e->id, 1, robot_domain);
		g_autofree char *ref = g_strdup_printf("<%s>", first);

		g_mime_object_set_header(GMIME_OBJECT(msg), "In-Reply-To", ref, NULL);
		g_mime_object_set_header(GMIME_OBJECT(msg), "References", ref, NULL);
	}
	g_mime_object_set_header(GMIME_OBJECT(msg), "X-Vulnid-Entry", m->v->e->id, NULL);
	g_mime_object_set_header(GMIME_OBJECT(msg), "X-Vulnid-Record", rec, NULL);
	g_mime_object_set_header(GMIME_OBJECT(msg), "X-Vulnid-Author", how, "utf-8");
	g_mime_object_set_header(GMIME_OBJECT(msg), "X-Vulnid-SHA256", r->sha256, NULL);
	g_mime_text_part_set_text(part, text);
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	g_object_unref(part);
	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_UNIX);
	out = g_mime_object_to_string(GMIME_OBJECT(msg), fo);
	return g_bytes_new_take(out, strlen(out));
}

/* asctime() form for the From_ line, in C locale names. */
static char *
mbox_date(const char *rfc3339)
{
	static const char *const days[] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	g_autoptr(GDateTime) t = rfc3339 != NULL ? g_date_time_new_from_iso8601(rfc3339, NULL) : NULL;

	if (t == NULL)
		t = g_date_time_new_from_unix_utc(0);
	return g_strdup_printf("%s %s %2d %02d:%02d:%02d %d",
			       days[g_date_time_get_day_of_week(t) - 1],
			       months[g_date_time_get_month(t) - 1], g_date_time_get_day_of_month(t),
			       g_date_time_get_hour(t), g_date_time_get_minute(t),
			       g_date_time_get_second(t), g_date_time_get_year(t));
}

/* One sender word for the From_ line: the public author, no spaces, no
 * controls (never an envelope sender, which may carry a VERP token). */
static const char *
mbox_sender(const pubmail *m)
{
	const char *a = m->vr->author;

	if (m->vr->author_withheld)
		return "anonymous@invalid";
	if (a == NULL || *a == '\0' || strlen(a) > 320)
		return "MAILER-DAEMON";
	for (const unsigned char *p = (const unsigned char *) a; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f)
			return "MAILER-DAEMON";
	return a;
}

static void
mbox_append(GString *out, const pubmail *m, GBytes *mail)
{
	gsize n;
	const char *d = g_bytes_get_data(mail, &n);
	g_autofree char *date = mbox_date(m->vr->r->created);
	gsize i = 0;

	g_string_append_printf(out, "From %s %s\n", mbox_sender(m), date);
	/* mboxrd: every line that is ">*From " gets one more '>', so that
	 * readers can undo it exactly */
	while (i < n) {
		const char *nl = memchr(d + i, '\n', n - i);
		gsize len = nl != NULL ? (gsize) (nl - (d + i)) + 1 : n - i;
		gsize j = i;

		while (j < i + len && d[j] == '>')
			j++;
		if (i + len - j >= 5 && memcmp(d + j, "From ", 5) == 0)
			g_string_append_c(out, '>');
		g_string_append_len(out, d + i, (gssize) len);
		i += len;
	}
	if (n == 0 || d[n - 1] != '\n')
		g_string_append_c(out, '\n');
	g_string_append_c(out, '\n');
}

vulnid_status
pubmail_mbox(store *st, const char *path, const char *robot_domain, guint *count, GError **err)
{
	g_autoptr(export_set) set = NULL;
	g_autoptr(GPtrArray) mails = NULL;
	g_autoptr(GString) out = g_string_new(NULL);
	vulnid_status s;

	*count = 0;
	s = export_set_load(st, &set, err);
	if (s != VULNID_OK)
		return s;
	mails = pubmail_list(set);
	for (guint i = 0; i < mails->len; i++) {
		const pubmail *m = g_ptr_array_index(mails, i);
		g_autoptr(GBytes) b = pubmail_render(m, robot_domain);

		mbox_append(out, m, b);
		(*count)++;
	}
	return export_write_file(path, out->str, out->len, 0644, err);
}
