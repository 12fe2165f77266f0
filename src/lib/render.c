/* render.c - an entry view as text and JSON (render.h) */
#include "autoconfig.h"

#include <string.h>

#include "crypto.h"
#include "jsonb.h"
#include "render.h"
#include "text.h"
#include "vendor.h"

/* The value of a claim, for jsonb_str_array_of(). */
static const char *
claim_str(gconstpointer c)
{
	return ((const entry_claim *) c)->value;
}

/* Bounds on the text of a mail about an entry. */
#define MAIL_MAX_RECORDS 50
#define MAIL_MAX_BODY_LINES 60
#define MAIL_MAX_BODY_BYTES 8000
#define MAIL_MAX_LIST 100

static void
append_safe(GString *out, const char *s)
{
	g_autofree char *m = text_mask_controls(s != NULL ? s : "");

	g_string_append(out, m);
}

static const char *
claim_value(const entry_claim *c)
{
	return c != NULL ? c->value : NULL;
}

/* "record 3, vendor intern@example.com, unverified: sent from the
 * vendor's domain" */
static char *
claim_source(const entry_view *v, const entry_claim *c)
{
	const view_record *vr = render_find_record(v, c->record->seq);
	const entry_record *r = c->record;
	GString *s = g_string_new(NULL);

	g_string_append_printf(s, "record %" G_GINT64_FORMAT ", %s", r->seq,
			       r->role == ENTRY_ROLE_THIRD_PARTY ? "third party" : entry_role_str(r->role));
	if (vr != NULL && vr->author != NULL)
		g_string_append_printf(s, " %s", vr->author);
	if (r->role == ENTRY_ROLE_CONTRIBUTOR && vr != NULL) {
		/* "contributor, endorsed by the creator, signed by KEY" */
		g_autofree char *how = entry_view_record_how(vr);
		const char *comma = strchr(how, ',');

		g_string_append(s, comma != NULL ? comma : "");
	} else
		g_string_append_printf(s, ", %s", entry_how_phrase(r->how));
	if (c->approved != NULL)
		g_string_append_printf(s, "; approved by the creator in record %" G_GINT64_FORMAT, c->approved->seq);
	return g_string_free(s, FALSE);
}

/* A reference as the headline shows it: the URL, and its checksum. */
static char *
reference_text(const entry_claim *c)
{
	return c->sha256 != NULL ? g_strdup_printf("%s sha256=%s", c->value, c->sha256) : g_strdup(c->value);
}

/* A headline value, with its source when the creator approved it (it came
 * from an unverified sender). */
static char *
approved_text(const entry_view *v, const entry_claim *c)
{
	g_autofree char *t = reference_text(c);
	g_autofree char *src = NULL;

	if (c->approved == NULL)
		return g_steal_pointer(&t);
	src = claim_source(v, c);
	return g_strdup_printf("%s (%s)", t, src);
}

/* "FPR given access 2026-05-01T10:00:00Z (record 4), sent sealed records 2 times, ..." */
static char *
access_text(const entry_access *a)
{
	GString *s = g_string_new(a->fpr);

	if (a->granted != NULL)
		g_string_append_printf(s, " given access %s (record %" G_GINT64_FORMAT ")", a->granted->created,
				       a->granted->seq);
	else
		g_string_append_printf(s, " asked for access %s (record %" G_GINT64_FORMAT ")", a->requested->created,
				       a->requested->seq);
	if (a->deliveries > 0)
		g_string_append_printf(s, ", sent sealed records %u time%s, last %s", a->deliveries,
				       a->deliveries == 1 ? "" : "s", a->delivered->created);
	return g_string_free(s, FALSE);
}

/* What a moderator's review says: "yes" or the product and version. */
static char *
reviewed_text(const entry_facts *f)
{
	if (f->reviewed_product != NULL)
		return g_strdup_printf("%s %s", f->reviewed_product, f->reviewed_version != NULL ? f->reviewed_version : "");
	return g_strdup("yes");
}

const view_record *
render_find_record(const entry_view *v, gint64 seq)
{
	for (guint i = 0; i < v->records->len; i++) {
		const view_record *vr = g_ptr_array_index(v->records, i);

		if (vr->r->seq == seq)
			return vr;
	}
	return NULL;
}

static const char *
marks_text(guint marks, GString *s)
{
	static const struct { entry_mark m; const char *name; } names[] = {
		{ ENTRY_MARK_RELEASED, "released" }, { ENTRY_MARK_WITHDRAWN, "withdrawn" },
		{ ENTRY_MARK_DUPLICATE, "duplicate" }, { ENTRY_MARK_SPAM, "spam" },
		{ ENTRY_MARK_CONFIRMED, "confirmed" }, { ENTRY_MARK_REVIEWED, "reviewed" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(names); i++)
		if (marks & names[i].m)
			g_string_append_printf(s, "%s%s", s->len > 0 ? " " : "", names[i].name);
	return s->str;
}

/* ---- the terminal ---------------------------------------------------------- */

static void
text_line(GString *out, const char *label, const char *value)
{
	g_string_append_printf(out, "%-10s ", label);
	append_safe(out, value);
	g_string_append_c(out, '\n');
}

static void
text_commitments(GString *out, const entry_view *v)
{
	for (guint i = 0; i < v->commitments->len; i++) {
		const entry_record *r = g_ptr_array_index(v->commitments, i);
		g_autofree char *l = g_strdup_printf("record %" G_GINT64_FORMAT " %s", r->seq, r->sha256);

		text_line(out, "sealed:", l);
	}
}

/* The keys given access to the sealed records, and when (also in a stub). */
static void
text_access(GString *out, const entry_view *v)
{
	for (guint i = 0; i < v->facts->access->len; i++) {
		const entry_access *a = g_ptr_array_index(v->facts->access, i);
		g_autofree char *l = NULL;

		if (a->granted == NULL && v->stub)
			continue;
		l = access_text(a);
		text_line(out, "access:", l);
	}
}

static void
text_record(GString *out, const entry_view *v, const view_record *vr)
{
	const entry_record *r = vr->r;
	g_autofree char *how = entry_view_record_how(vr);

	g_string_append_printf(out, "\nrecord %" G_GINT64_FORMAT ": %s by ", r->seq, r->kind_name);
	append_safe(out, how);
	g_string_append_printf(out, ", %s\n", r->created);
	text_line(out, "  from:", vr->author_withheld ? "(anonymous)" : vr->author != NULL ? vr->author : "(unknown)");
	if (r->opens > 0)
		g_string_append_printf(out, "  opens:     record %" G_GINT64_FORMAT "\n", r->opens);
	if (vr->sealed) {
		text_line(out, "  sha256:", r->sha256);
		g_string_append(out, "  (sealed until the embargo ends; the sha256 is the commitment)\n");
		return;
	}
	text_line(out, "  subject:", r->subject);
	text_line(out, "  sha256:", r->sha256);
	for (guint j = 0; j < r->fields->len; j++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, j);

		g_string_append(out, "  ");
		append_safe(out, kv->key);
		g_string_append(out, ": ");
		append_safe(out, kv->value);
		g_string_append_c(out, '\n');
	}
	if (r->body != NULL && *r->body != '\0') {
		g_auto(GStrv) lines = g_strsplit(r->body, "\n", -1);

		g_string_append_c(out, '\n');
		for (char **l = lines; *l; l++) {
			g_string_append(out, "    ");
			append_safe(out, *l);
			g_string_append_c(out, '\n');
		}
	}
	for (guint j = 0; j < vr->attachments->len; j++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, j);
		const entry_attachment *a = va->a;

		if (va->withheld) {
			g_string_append_printf(out, "  attachment: %s\n", entry_view_attachment_label(va));
			continue;
		}
		g_string_append_printf(out, "  attachment: %s %" G_GINT64_FORMAT " bytes sha256:%s ",
				       a->content_type, a->size, a->sha256);
		append_safe(out, a->filename != NULL ? a->filename : "(no name)");
		g_string_append(out, va->private_only ? " (withheld from the public)\n" : "\n");
	}
}

static void
text_headline(GString *out, const entry_view *v)
{
	const entry_facts *f = v->facts;
	const struct { const char *label; entry_claim *c; } single[] = {
		{ "vendor:", f->vendor }, { "product:", f->product }, { "type:", f->type },
		{ "vendor-contact:", f->vendor_contact }, { "fixed-in:", f->fixed_in },
	};
	GPtrArray *lists[] = { f->versions, f->aliases };
	const char *list_labels[] = { "version:", "alias:" };

	text_line(out, "title:", entry_view_title(v));
	for (gsize i = 0; i < G_N_ELEMENTS(single); i++)
		if (single[i].c != NULL) {
			g_autofree char *t = approved_text(v, single[i].c);

			text_line(out, single[i].label, t);
		}
	if (f->embargo != NULL)
		text_line(out, "embargo:", f->embargo);
	if (f->anonymous)
		text_line(out, "anonymous:", "yes");
	for (gsize k = 0; k < G_N_ELEMENTS(lists); k++)
		for (guint i = 0; i < lists[k]->len; i++) {
			g_autofree char *t = approved_text(v, g_ptr_array_index(lists[k], i));

			text_line(out, list_labels[k], t);
		}
	for (guint i = 0; i < f->references->len; i++) {
		const entry_claim *c = g_ptr_array_index(f->references, i);
		g_autofree char *t = approved_text(v, c);

		text_line(out, "reference:", t);
		for (guint k = 0; c->mirrors != NULL && k < c->mirrors->len; k++) {
			const entry_claim *m = g_ptr_array_index(c->mirrors, k);
			g_autofree char *src = claim_source(v, m);
			g_autofree char *l = g_strdup_printf("%s (%s)", m->value, src);

			text_line(out, "  mirror:", l);
		}
	}
	if (f->reviewed != NULL) {
		g_autofree char *what = reviewed_text(f);
		g_autofree char *src = claim_source(v, f->reviewed);
		g_autofree char *l = g_strdup_printf("%s (%s)", what, src);

		text_line(out, "reviewed:", l);
	}
	for (guint i = 0; i < f->endorsements->len; i++) {
		const entry_claim *c = g_ptr_array_index(f->endorsements, i);
		g_autofree char *src = claim_source(v, c);
		g_autofree char *l = g_strdup_printf("%s for %s (%s)", c->value, c->fields != NULL ? c->fields : "all fields",
						     src);

		text_line(out, "endorsed:", l);
	}
	text_access(out, v);
	if (f->vendor_status != NULL) {
		g_autofree char *src = claim_source(v, f->vendor_status);
		g_autofree char *l = g_strdup_printf("%s (%s)", f->vendor_status->value, src);

		text_line(out, "vendor says:", l);
	}
	for (guint i = 0; i < f->proposals->len; i++) {
		const entry_claim *c = g_ptr_array_index(f->proposals, i);
		g_autofree char *src = claim_source(v, c);
		g_autofree char *l = g_strdup_printf("%s: %s (%s)", c->key, c->value, src);

		text_line(out, "proposed:", l);
	}
}

char *
render_text(const entry_view *v)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GString) marks = g_string_new(NULL);

	text_line(out, "id:", v->e->id);
	text_line(out, "digest:", v->e->digest);
	text_line(out, "created:", v->e->created);
	text_line(out, "state:", entry_state_str(v->facts->state));
	if (v->facts->marks != 0)
		text_line(out, "marks:", marks_text(v->facts->marks, marks));
	if (v->withheld) {
		text_line(out, "withheld:", "a moderator marked it as spam");
		return g_string_free(out, FALSE);
	}
	if (v->stub) {
		text_line(out, "embargo:", v->facts->embargo != NULL ? v->facts->embargo : "yes");
		text_line(out, "commitment:", v->e->digest);
		text_commitments(out, v);
		text_access(out, v);
		return g_string_free(out, FALSE);
	}
	text_headline(out, v);
	for (guint i = 0; i < v->records->len; i++)
		text_record(out, v, g_ptr_array_index(v->records, i));
	return g_string_free(out, FALSE);
}

/* ---- JSON ------------------------------------------------------------------ */

static void
json_claim_object(JsonBuilder *b, const entry_view *v, const entry_claim *c)
{
	const view_record *vr = render_find_record(v, c->record->seq);

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "key");
	json_builder_add_string_value(b, c->key);
	json_builder_set_member_name(b, "value");
	json_builder_add_string_value(b, c->value);
	json_builder_set_member_name(b, "seq");
	json_builder_add_int_value(b, c->record->seq);
	json_builder_set_member_name(b, "role");
	json_builder_add_string_value(b, entry_role_str(c->record->role));
	json_builder_set_member_name(b, "how");
	json_builder_add_string_value(b, entry_how_str(c->record->how));
	json_builder_set_member_name(b, "author");
	if (vr != NULL && vr->author != NULL)
		json_builder_add_string_value(b, vr->author);
	else
		json_builder_add_null_value(b);
	json_builder_set_member_name(b, "approved");
	if (c->approved != NULL)
		json_builder_add_int_value(b, c->approved->seq);
	else
		json_builder_add_null_value(b);
	json_builder_end_object(b);
}

static void
json_record_ref(JsonBuilder *b, const char *name, const entry_record *r)
{
	json_builder_set_member_name(b, name);
	if (r == NULL) {
		json_builder_add_null_value(b);
		return;
	}
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "seq");
	json_builder_add_int_value(b, r->seq);
	json_builder_set_member_name(b, "created");
	json_builder_add_string_value(b, r->created);
	json_builder_end_object(b);
}

/* The keys that asked for access to the sealed records, were given it,
 * and were sent them (in a stub only those given access). */
static void
json_access(JsonBuilder *b, const entry_view *v)
{
	json_builder_set_member_name(b, "access");
	json_builder_begin_array(b);
	for (guint i = 0; i < v->facts->access->len; i++) {
		const entry_access *a = g_ptr_array_index(v->facts->access, i);

		if (a->granted == NULL && v->stub)
			continue;
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "fingerprint");
		json_builder_add_string_value(b, a->fpr);
		json_record_ref(b, "requested", a->requested);
		json_record_ref(b, "granted", a->granted);
		json_builder_set_member_name(b, "deliveries");
		json_builder_add_int_value(b, a->deliveries);
		json_record_ref(b, "delivered", a->delivered);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

/* References with the checksum given for them and their mirrors. */
static void
json_reference_details(JsonBuilder *b, const entry_view *v)
{
	json_builder_set_member_name(b, "reference_details");
	json_builder_begin_array(b);
	for (guint i = 0; i < v->facts->references->len; i++) {
		const entry_claim *c = g_ptr_array_index(v->facts->references, i);

		json_builder_begin_object(b);
		jsonb_str_or_null(b, "url", c->value);
		jsonb_str_or_null(b, "sha256", c->sha256);
		json_builder_set_member_name(b, "mirrors");
		json_builder_begin_array(b);
		for (guint k = 0; c->mirrors != NULL && k < c->mirrors->len; k++)
			json_claim_object(b, v, g_ptr_array_index(c->mirrors, k));
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void
json_approved_of(JsonBuilder *b, const entry_view *v, const entry_claim *c)
{
	if (c != NULL && c->approved != NULL)
		json_claim_object(b, v, c);
}

/* The headline values that came from unverified senders and that the
 * creator approved, with the record of each and of its approval. */
static void
json_approved(JsonBuilder *b, const entry_view *v)
{
	const entry_facts *f = v->facts;
	const entry_claim *single[] = { f->title, f->vendor, f->product, f->type, f->vendor_contact, f->severity,
					f->fixed_in, f->ecosystem, f->package };
	GPtrArray *lists[] = { f->versions, f->references, f->related, f->aliases };

	json_builder_set_member_name(b, "approved");
	json_builder_begin_array(b);
	for (gsize i = 0; i < G_N_ELEMENTS(single); i++)
		json_approved_of(b, v, single[i]);
	for (gsize k = 0; k < G_N_ELEMENTS(lists); k++)
		for (guint i = 0; i < lists[k]->len; i++)
			json_approved_of(b, v, g_ptr_array_index(lists[k], i));
	json_builder_end_array(b);
}

static void
json_trust(JsonBuilder *b, const entry_view *v)
{
	const entry_facts *f = v->facts;

	json_approved(b, v);
	json_builder_set_member_name(b, "reviewed");
	if (f->reviewed != NULL) {
		json_builder_begin_object(b);
		jsonb_str_or_null(b, "product", f->reviewed_product);
		jsonb_str_or_null(b, "version", f->reviewed_version);
		json_builder_set_member_name(b, "by");
		json_claim_object(b, v, f->reviewed);
		json_builder_end_object(b);
	} else
		json_builder_add_null_value(b);
	json_builder_set_member_name(b, "endorsements");
	json_builder_begin_array(b);
	for (guint i = 0; i < f->endorsements->len; i++) {
		const entry_claim *c = g_ptr_array_index(f->endorsements, i);

		json_builder_begin_object(b);
		jsonb_str_or_null(b, "fingerprint", c->value);
		jsonb_str_or_null(b, "fields", c->fields);
		json_builder_set_member_name(b, "by");
		json_claim_object(b, v, c);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

JsonNode *
render_auth_json(const view_record *vr)
{
	/* as stored, so that the record's hash recomputes from this output;
	 * a key the view withholds is never shown */
	return entry_record_auth_node(vr->r, vr->signer == NULL);
}

static void
json_record(JsonBuilder *b, const view_record *vr)
{
	const entry_record *r = vr->r;

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "seq");
	json_builder_add_int_value(b, r->seq);
	json_builder_set_member_name(b, "created");
	json_builder_add_string_value(b, r->created);
	json_builder_set_member_name(b, "kind");
	json_builder_add_string_value(b, r->kind_name);
	json_builder_set_member_name(b, "role");
	json_builder_add_string_value(b, r->role_name != NULL ? r->role_name : entry_role_str(r->role));
	jsonb_str_or_null(b, "author", vr->author);
	json_builder_set_member_name(b, "how");
	json_builder_add_string_value(b, entry_how_str(r->how));
	json_builder_set_member_name(b, "verified");
	json_builder_add_boolean_value(b, entry_how_verified(r->how) || r->how == ENTRY_HOW_REQUEST);
	if (r->opens > 0) {
		json_builder_set_member_name(b, "opens");
		json_builder_add_int_value(b, r->opens);
	}
	if (r->sealed != NULL) {
		json_builder_set_member_name(b, "sealed");
		json_builder_add_boolean_value(b, TRUE);
	}
	json_builder_set_member_name(b, "auth");
	json_builder_add_value(b, render_auth_json(vr));
	json_builder_set_member_name(b, "subject");
	json_builder_add_string_value(b, vr->content && r->subject != NULL ? r->subject : "");
	json_builder_set_member_name(b, "fields");
	json_builder_begin_array(b);
	for (guint j = 0; vr->content && j < r->fields->len; j++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, j);

		json_builder_begin_array(b);
		json_builder_add_string_value(b, kv->key);
		json_builder_add_string_value(b, kv->value);
		json_builder_end_array(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "body");
	json_builder_add_string_value(b, vr->content && r->body != NULL ? r->body : "");
	json_builder_set_member_name(b, "sha256");
	json_builder_add_string_value(b, r->sha256);
	json_builder_set_member_name(b, "attachments");
	json_builder_begin_array(b);
	for (guint j = 0; j < vr->attachments->len; j++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, j);
		const entry_attachment *a = va->a;

		json_builder_begin_object(b);
		jsonb_str_or_null(b, "filename", va->withheld ? NULL : a->filename);
		json_builder_set_member_name(b, "content_type");
		json_builder_add_string_value(b, a->content_type);
		json_builder_set_member_name(b, "size");
		json_builder_add_int_value(b, va->withheld ? 0 : a->size);
		json_builder_set_member_name(b, "sha256");
		json_builder_add_string_value(b, va->withheld ? va->commitment : a->sha256);
		if (a->salt != NULL) {
			/* withheld from the public; the record commits to it */
			json_builder_set_member_name(b, "withheld");
			json_builder_add_boolean_value(b, TRUE);
			json_builder_set_member_name(b, "commitment");
			json_builder_add_string_value(b, va->commitment);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
}

static void
json_commitments(JsonBuilder *b, const entry_view *v)
{
	json_builder_set_member_name(b, "commitments");
	json_builder_begin_array(b);
	for (guint i = 0; i < v->commitments->len; i++) {
		const entry_record *r = g_ptr_array_index(v->commitments, i);

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "seq");
		json_builder_add_int_value(b, r->seq);
		json_builder_set_member_name(b, "created");
		json_builder_add_string_value(b, r->created);
		json_builder_set_member_name(b, "commitment");
		json_builder_add_string_value(b, r->sha256);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

static void
json_marks(JsonBuilder *b, guint marks)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_auto(GStrv) names = g_strsplit(marks_text(marks, s), " ", -1);

	json_builder_set_member_name(b, "marks");
	json_builder_begin_array(b);
	for (char **n = names; *n != NULL; n++)
		if (**n != '\0')
			json_builder_add_string_value(b, *n);
	json_builder_end_array(b);
}

JsonNode *
render_json(const entry_view *v)
{
	const entry_facts *f = v->facts;
	g_autoptr(JsonBuilder) b = json_builder_new();

	json_builder_begin_object(b);
	jsonb_str_or_null(b, "id", v->e->id);
	jsonb_str_or_null(b, "digest", v->e->digest);
	jsonb_str_or_null(b, "created", v->e->created);
	jsonb_str_or_null(b, "state", entry_state_str(f->state));
	json_marks(b, f->marks);
	if (v->stub || v->withheld) {
		/* what may be known before the embargo ends (or of spam) */
		if (v->stub) {
			jsonb_str_or_null(b, "embargo", f->embargo != NULL ? f->embargo : "yes");
			jsonb_str_or_null(b, "commitment", v->e->digest);
			json_commitments(b, v);
			json_access(b, v);
		}
		json_builder_end_object(b);
		return json_builder_get_root(b);
	}
	jsonb_str_or_null(b, "title", entry_view_title(v));
	jsonb_str_or_null(b, "vendor", claim_value(f->vendor));
	jsonb_str_or_null(b, "product", claim_value(f->product));
	jsonb_str_or_null(b, "type", claim_value(f->type));
	jsonb_str_or_null(b, "vendor_contact", claim_value(f->vendor_contact));
	jsonb_str_or_null(b, "embargo", f->embargo);
	jsonb_str_or_null(b, "anonymous", f->anonymous ? "yes" : NULL);
	jsonb_str_array_of(b, "versions", f->versions, claim_str);
	jsonb_str_array_of(b, "references", f->references, claim_str);
	json_reference_details(b, v);
	jsonb_str_array_of(b, "aliases", f->aliases, claim_str);
	json_builder_set_member_name(b, "vendor_status");
	if (f->vendor_status != NULL)
		json_claim_object(b, v, f->vendor_status);
	else
		json_builder_add_null_value(b);
	json_builder_set_member_name(b, "proposals");
	json_builder_begin_array(b);
	for (guint i = 0; i < f->proposals->len; i++)
		json_claim_object(b, v, g_ptr_array_index(f->proposals, i));
	json_builder_end_array(b);
	json_trust(b, v);
	json_access(b, v);
	json_commitments(b, v);
	json_builder_set_member_name(b, "records");
	json_builder_begin_array(b);
	for (guint i = 0; i < v->records->len; i++)
		json_record(b, g_ptr_array_index(v->records, i));
	json_builder_end_array(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

JsonObject *
render_list_json(const entry_view *v)
{
	JsonObject *o = json_object_new();
	gboolean open = !v->stub && !v->withheld;

	json_object_set_string_member(o, "id", v->e->id);
	json_object_set_string_member(o, "digest", v->e->digest);
	json_object_set_string_member(o, "created", v->e->created);
	json_object_set_string_member(o, "state", entry_state_str(v->facts->state));
	json_object_set_string_member(o, "title", entry_view_title(v));
	if (open && v->facts->vendor != NULL)
		json_object_set_string_member(o, "vendor", v->facts->vendor->value);
	else
		json_object_set_null_member(o, "vendor");
	if (open && v->facts->product != NULL)
		json_object_set_string_member(o, "product", v->facts->product->value);
	else
		json_object_set_null_member(o, "product");
	json_object_set_int_member(o, "records", v->e->records->len);
	return o;
}

/* ---- mail ------------------------------------------------------------------ */

/* Lines of an entry looked up by mail: indented 4 in the answer, so at
 * most 74 characters here (a digest after its label may be longer). */
#define MAIL_WIDTH 74

static void
mail_line(GString *out, const char *label, const char *value)
{
	g_autofree char *safe = text_mask_controls(value != NULL ? value : "");
	g_autofree char *l = g_strdup_printf("  %-13s %s", label, safe);
	g_autofree char *w = text_wrap(l, MAIL_WIDTH);

	g_string_append_printf(out, "%s\n", w);
}

static void
mail_body(GString *out, const char *body, const char *indent, gboolean whole)
{
	g_auto(GStrv) lines = g_strsplit(body != NULL ? body : "", "\n", -1);
	gsize bytes = 0;
	guint n = 0;

	for (char **l = lines; *l != NULL; l++, n++) {
		if (!whole && (n >= MAIL_MAX_BODY_LINES || bytes > MAIL_MAX_BODY_BYTES)) {
			g_string_append_printf(out, "%s[... %u more lines; the whole text is on the entry]\n",
					       indent, g_strv_length(lines) - n);
			break;
		}
		g_string_append(out, indent);
		append_safe(out, *l);
		g_string_append_c(out, '\n');
		bytes += strlen(*l);
	}
}

/* A line of the robot's own, wrapped at width, the lines after a break
 * indented by hang. */
static void
wrapped(GString *out, const char *line, gsize width, gsize hang)
{
	g_autofree char *w = text_wrap_hanging(line, width, hang);

	g_string_append_printf(out, "%s\n", w);
}

static char *
record_text(const view_record *vr, gboolean with_body, gboolean whole, gsize width);

char *
render_record_text(const entry_view *v, const view_record *vr, gboolean with_body)
{
	(void) v;
	return record_text(vr, with_body, FALSE, 78);
}

char *
render_record_text_whole(const entry_view *v, const view_record *vr)
{
	(void) v;
	return record_text(vr, TRUE, TRUE, 78);
}

/* One record as text, its own lines at most width characters (the body
 * as written; cut after MAIL_MAX_BODY_LINES unless whole). */
static char *
record_text(const view_record *vr, gboolean with_body, gboolean whole, gsize width)
{
	const entry_record *r = vr->r;
	GString *out = g_string_new(NULL);
	g_autoptr(GString) head = g_string_new(NULL);

	g_string_append_printf(head, "record %" G_GINT64_FORMAT ", %s: %s by the %s", r->seq, r->created,
			       r->kind_name, r->role == ENTRY_ROLE_THIRD_PARTY ? "third party" : entry_role_str(r->role));
	if (r->how != ENTRY_HOW_REQUEST)
		g_string_append_printf(head, " (%s)", entry_how_phrase(r->how));
	if (vr->author_withheld)
		g_string_append(head, ", anonymous");
	else if (vr->author != NULL) {
		g_string_append(head, ", ");
		append_safe(head, vr->author);
	}
	wrapped(out, head->str, width, 2);
	if (vr->sealed) {
		g_autofree char *l = g_strdup_printf("  (sealed until the embargo ends; commitment %s)", r->sha256);

		wrapped(out, l, width, 3);
		return g_string_free(out, FALSE);
	}
	for (guint j = 0; j < r->fields->len; j++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, j);
		g_autoptr(GString) l = g_string_new("  ");

		append_safe(l, kv->key);
		g_string_append(l, ": ");
		append_safe(l, kv->value);
		wrapped(out, l->str, width, 4);
	}
	if (with_body && r->body != NULL && *r->body != '\0') {
		g_string_append_c(out, '\n');
		mail_body(out, r->body, "    ", whole);
	}
	for (guint j = 0; j < vr->attachments->len; j++) {
		const view_attachment *va = g_ptr_array_index(vr->attachments, j);
		const entry_attachment *at = va->a;
		g_autoptr(GString) l = g_string_new("  attachment: ");

		if (va->withheld) {
			g_string_append(l, entry_view_attachment_label(va));
			wrapped(out, l->str, width, 4);
			continue;
		}
		append_safe(l, at->filename != NULL ? at->filename : "(no name)");
		g_string_append_printf(l, ", %s, %" G_GINT64_FORMAT " bytes", at->content_type, at->size);
		if (va->private_only)
			g_string_append(l, " (withheld from the public)");
		wrapped(out, l->str, width, 4);
		g_string_append_printf(out, "    sha256 %s\n", at->sha256);
	}
	return g_string_free(out, FALSE);
}


static void
mail_claim_line(GString *out, const entry_view *v, const char *label, const entry_claim *c, const char *extra)
{
	g_autofree char *src = claim_source(v, c);
	g_autofree char *l = g_strdup_printf("%s (%s%s)", c->value, src, extra != NULL ? extra : "");

	mail_line(out, label, l);
}

static void
mail_headline(GString *out, const entry_view *v)
{
	const entry_facts *f = v->facts;
	const struct { const char *label; entry_claim *c; } single[] = {
		{ "vendor:", f->vendor }, { "product:", f->product }, { "type:", f->type },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(single); i++)
		if (single[i].c != NULL) {
			g_autofree char *t = approved_text(v, single[i].c);

			mail_line(out, single[i].label, t);
		}
	for (guint i = 0; i < f->versions->len && i < MAIL_MAX_LIST; i++) {
		g_autofree char *t = approved_text(v, g_ptr_array_index(f->versions, i));

		mail_line(out, "version:", t);
	}
	for (guint i = 0; i < f->references->len && i < MAIL_MAX_LIST; i++) {
		const entry_claim *c = g_ptr_array_index(f->references, i);
		g_autofree char *t = approved_text(v, c);

		mail_line(out, "reference:", t);
		for (guint k = 0; c->mirrors != NULL && k < c->mirrors->len && k < MAIL_MAX_LIST; k++)
			mail_claim_line(out, v, "  mirror:", g_ptr_array_index(c->mirrors, k), NULL);
	}
	for (guint i = 0; i < f->aliases->len && i < MAIL_MAX_LIST; i++)
		mail_claim_line(out, v, "alias:", g_ptr_array_index(f->aliases, i), NULL);
	if (f->vendor_status != NULL) {
		g_autofree char *hist = f->statuses->len > 1
			? g_strdup_printf("; %u statements in all", f->statuses->len) : NULL;

		mail_claim_line(out, v, "vendor says:", f->vendor_status, hist);
	}
	if (f->reviewed != NULL) {
		g_autofree char *what = reviewed_text(f);
		g_autofree char *src = claim_source(v, f->reviewed);
		g_autofree char *l = g_strdup_printf("%s (%s)", what, src);

		mail_line(out, "reviewed:", l);
	}
	for (guint i = 0; i < f->endorsements->len && i < MAIL_MAX_LIST; i++) {
		const entry_claim *c = g_ptr_array_index(f->endorsements, i);
		g_autofree char *extra = g_strdup_printf("; for %s", c->fields != NULL ? c->fields : "all fields");

		mail_claim_line(out, v, "endorsed:", c, extra);
	}
	for (guint i = 0; i < f->access->len && i < MAIL_MAX_LIST; i++) {
		g_autofree char *l = access_text(g_ptr_array_index(f->access, i));

		mail_line(out, "access:", l);
	}
	if (f->duplicate_of != NULL)
		mail_claim_line(out, v, "duplicate of:", f->duplicate_of, NULL);
	for (guint i = 0; i < f->links->len && i < MAIL_MAX_LIST; i++)
		mail_claim_line(out, v, "linked to:", g_ptr_array_index(f->links, i), NULL);
	if (f->rating_keys > 0 || f->rating_unsigned > 0) {
		g_autoptr(GString) s = g_string_new(NULL);

		if (f->rating_keys > 0)
			g_string_append_printf(s, "%.1f from %u signed key%s", f->rating_keys_avg, f->rating_keys,
					       f->rating_keys == 1 ? "" : "s");
		else
			g_string_append(s, "no signed ratings");
		if (f->rating_unsigned > 0)
			g_string_append_printf(s, "; unverified: %.1f from %u address%s", f->rating_unsigned_avg,
					       f->rating_unsigned, f->rating_unsigned == 1 ? "" : "es");
		mail_line(out, "rating:", s->str);
	}
	for (guint i = 0; i < f->proposals->len && i < MAIL_MAX_LIST; i++) {
		const entry_claim *c = g_ptr_array_index(f->proposals, i);
		g_autofree char *l = g_strdup_printf("%s: %s", c->key, c->value);
		g_autofree char *src = claim_source(v, c);
		g_autofree char *all = g_strdup_printf("%s (%s)", l, src);

		mail_line(out, "proposed:", all);
	}
}

/* What render_mail_text() shows before the records: FALSE when nothing
 * more may be shown (spam, a stub). */
static gboolean
mail_top(GString *out, const entry_view *v)
{
	const entry_facts *f = v->facts;

	g_string_append(out, v->e->id);
	if (v->withheld) {
		g_string_append(out, "\n");
		mail_line(out, "state:", "withheld: a moderator marked it as spam");
		mail_line(out, "created:", v->e->created);
		mail_line(out, "digest:", v->e->digest);
		return FALSE;
	}
	if (v->stub) {
		g_autofree char *state = g_strdup_printf("embargoed until %s", entry_view_embargo_text(v));

		g_string_append(out, "\n");
		mail_line(out, "state:", state);
		mail_line(out, "created:", v->e->created);
		mail_line(out, "commitment:", v->e->digest);
		for (guint i = 0; i < v->commitments->len && i < MAIL_MAX_RECORDS; i++) {
			const entry_record *r = g_ptr_array_index(v->commitments, i);
			g_autofree char *l = g_strdup_printf("record %" G_GINT64_FORMAT ": %s", r->seq, r->sha256);

			mail_line(out, "sealed:", l);
		}
		for (guint i = 0; i < v->facts->access->len && i < MAIL_MAX_LIST; i++) {
			const entry_access *a = g_ptr_array_index(v->facts->access, i);
			g_autofree char *l = NULL;

			if (a->granted == NULL)
				continue;
			l = access_text(a);
			mail_line(out, "access:", l);
		}
		g_string_append(out, "\n  The details are withheld until the embargo ends; each commitment is\n"
				     "  the SHA-256 of a sealed record, checkable once it is released.\n");
		return FALSE;
	}
	{
		g_autoptr(GString) head = g_string_new(NULL);

		g_string_append(head, out->str);
		g_string_append(head, ": ");
		append_safe(head, entry_view_title(v));
		g_string_truncate(out, 0);
		wrapped(out, head->str, MAIL_WIDTH, 2);
	}
	if (f->withdrawn != NULL) {
		g_autofree char *w = g_strdup_printf("WITHDRAWN (rejected): %s", f->withdrawn->value);

		mail_line(out, "state:", w);
	} else
		mail_line(out, "state:", entry_state_str(f->state));
	mail_line(out, "created:", v->e->created);
	mail_line(out, "digest:", v->e->digest);
	mail_headline(out, v);
	return TRUE;
}

char *
render_mail_headline(const vulnid_config *cfg, const entry_view *v)
{
	GString *out = g_string_new(NULL);
	g_autofree char *addr = g_strdup_printf("%s+%s@%s", cfg->request_local, v->e->id, cfg->domain);

	if (mail_top(out, v)) {
		g_autofree char *n = g_strdup_printf("%u", v->records->len);

		mail_line(out, "records:", n);
	}
	mail_line(out, "address:", addr);
	if (cfg->export_base_url != NULL && *cfg->export_base_url != '\0') {
		g_autofree char *page = g_strdup_printf("%s%sentries/%s.html", cfg->export_base_url,
							g_str_has_suffix(cfg->export_base_url, "/") ? "" : "/",
							v->e->id);

		mail_line(out, "page:", page);
	}
	return g_string_free(out, FALSE);
}

char *
render_mail_text(const entry_view *v)
{
	GString *out = g_string_new(NULL);

	if (!mail_top(out, v))
		return g_string_free(out, FALSE);
	g_string_append_printf(out, "\n  %u record%s:\n\n", v->records->len, v->records->len == 1 ? "" : "s");
	for (guint i = 0; i < v->records->len; i++) {
		g_autofree char *t = NULL;
		g_auto(GStrv) lines = NULL;

		if (i >= MAIL_MAX_RECORDS) {
			g_string_append_printf(out, "  [... %u more records]\n", v->records->len - i);
			break;
		}
		t = record_text(g_ptr_array_index(v->records, i), TRUE, FALSE, MAIL_WIDTH - 2);
		if (i > 0)
			g_string_append_c(out, '\n');
		lines = g_strsplit(t, "\n", -1);
		for (char **l = lines; *l != NULL && (**l != '\0' || l[1] != NULL); l++)
			g_string_append_printf(out, "%s%s\n", **l ? "  " : "", *l);
	}
	return g_string_free(out, FALSE);
}

/* ---- the acknowledgement ---------------------------------------------------- */

/* "    label:    value", the value at column 14 (a digest ends at 78) */
static void
ack_line(GString *out, const char *label, const char *value)
{
	g_autofree char *l = g_strdup_printf("    %-9s %s", label, value);
	g_autofree char *w = NULL;

	if (strchr(value, '\n') != NULL || !g_utf8_validate(l, -1, NULL)) {
		g_string_append_printf(out, "%s\n", l);
		return;
	}
	w = text_wrap(l, 78);
	g_string_append_printf(out, "%s\n", w);
}

static void
ack_tail(GString *out, const vulnid_config *cfg, const entry_view *v, const char *token)
{
	g_autofree char *addr = g_strdup_printf("%s+%s@%s", cfg->request_local, v->e->id, cfg->domain);

	ack_line(out, "address:", addr);
	/* the token on lines of its own: the one to copy is a whole line */
	if (token != NULL)
		g_string_append_printf(out, "    token:    %s\n"
				       "              Keep it secret. A mail to the entry with this\n"
				       "              line at its top proves that you created it:\n\n"
				       "              Token: %s\n", token, token);
	g_string_append_c(out, '\n');
}

void
render_ack_entry(GString *out, const vulnid_config *cfg, const entry_view *v, gboolean stub, const char *token)
{
	const view_record *first = v->records->len > 0 ? g_ptr_array_index(v->records, 0) : NULL;
	const entry_record *r = first != NULL ? first->r : NULL;
	const char *title = entry_view_title(v);

	g_string_append_printf(out, "  %s\n", v->e->id);
	if (stub || v->stub || r == NULL || !first->content) {
		ack_line(out, "commitment:", v->e->digest);
		ack_line(out, "embargo:", v->facts->embargo == NULL || g_ascii_strcasecmp(v->facts->embargo, "yes") == 0
			 ? "until you release it" : v->facts->embargo);
		ack_tail(out, cfg, v, token);
		return;
	}
	ack_line(out, "digest:", v->e->digest);
	{
		g_autofree char *t = text_mask_controls(*title != '\0' ? title : "(none)");

		ack_line(out, "title:", t);
	}
	for (guint i = 0; i < r->fields->len; i++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, i);
		g_autofree char *label = g_strdup_printf("%s:", kv->key);
		g_autofree char *lower = g_ascii_strdown(label, -1);
		g_autofree char *val = text_mask_controls(kv->value);

		if (g_ascii_strcasecmp(kv->key, "Title") == 0)
			continue;
		ack_line(out, lower, val);
	}
	if (r->body != NULL && *r->body != '\0') {
		guint lines = 1;
		g_autofree char *l = NULL;

		for (const char *p = r->body; *p; p++)
			lines += *p == '\n';
		l = g_strdup_printf("%u line%s", lines, lines == 1 ? "" : "s");
		ack_line(out, "description:", l);
	} else if (r->fields->len == 0)
		g_string_append(out, "    (reserved: nothing said yet; add details at any time)\n");
	if (r->attachments->len > 0) {
		g_autofree char *l = g_strdup_printf("%u (archived, listed on the entry)", r->attachments->len);

		ack_line(out, "attachments:", l);
	}
	ack_tail(out, cfg, v, token);
}

/* ---- template values ---------------------------------------------------------- */

static void
put(GHashTable *h, const char *key, char *value)
{
	g_hash_table_insert(h, (gpointer) key, value != NULL ? value : g_strdup(""));
}

static char *
join_claims(GPtrArray *claims, const char *sep, const char *prefix)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < claims->len && i < MAIL_MAX_LIST; i++) {
		g_autofree char *t = reference_text(g_ptr_array_index(claims, i));

		g_string_append_printf(s, "%s%s%s", s->len ? sep : "", prefix, t);
	}
	return g_string_free(s, FALSE);
}

static char *
headline(const entry_view *v)
{
	const entry_facts *f = v->facts;
	GString *s = g_string_new(NULL);

	if (v->stub)
		return g_string_free(s, FALSE);
	if (f->vendor != NULL) {
		g_autofree char *vname = NULL;
		g_autofree char *vdom = NULL;

		vendor_field_split(f->vendor->value, &vname, &vdom);
		g_string_append(s, *vname != '\0' ? vname : vdom != NULL ? vdom : "");
	}
	if (f->product != NULL)
		g_string_append_printf(s, "%s%s", s->len ? " " : "", f->product->value);
	if (s->len > 0)
		g_string_append(s, ": ");
	g_string_append(s, entry_view_title(v));
	return g_string_free(s, FALSE);
}

GHashTable *
render_template_vars(const vulnid_config *cfg, const entry_view *v)
{
	GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	const entry_facts *f = v->facts;
	const view_record *first = v->records->len > 0 ? g_ptr_array_index(v->records, 0) : NULL;
	gboolean open = !v->stub && !v->withheld;

	put(h, "request_address", g_strdup(cfg->request_address));
	put(h, "domain", g_strdup(cfg->domain));
	put(h, "prefix", g_strdup(cfg->prefix));
	put(h, "id", g_strdup(v->e->id));
	put(h, "digest", g_strdup(v->e->digest));
	put(h, "created", g_strdup(v->e->created));
	put(h, "state", g_strdup(entry_state_str(f->state)));
	put(h, "entry_address", g_strdup_printf("%s+%s@%s", cfg->request_local, v->e->id, cfg->domain));
	put(h, "robot_fpr", crypto_robot_label());
	put(h, "embargo", g_strdup(entry_view_embargo_text(v)));
	put(h, "title", g_strdup(open ? entry_view_title(v) : "(under embargo)"));
	put(h, "vendor", g_strdup(open && f->vendor != NULL ? f->vendor->value : "(not named)"));
	put(h, "product", g_strdup(open && f->product != NULL ? f->product->value : "(not named)"));
	put(h, "type", g_strdup(open && f->type != NULL ? f->type->value : ""));
	put(h, "versions", open ? join_claims(f->versions, ", ", "") : NULL);
	put(h, "references", open ? join_claims(f->references, "\n", "  ") : NULL);
	put(h, "description", g_strdup(open && first != NULL && first->content && first->r->body != NULL
				       ? first->r->body : ""));
	/* The researcher is never named where the view withholds them. */
	if (first != NULL && first->author_withheld)
		put(h, "researcher", g_strdup("an anonymous researcher (reply to this mail to reach them)"));
	else
		put(h, "researcher", g_strdup(first != NULL && first->author != NULL ? first->author : "unknown"));
	put(h, "headline", open ? headline(v) : g_strdup("embargoed report"));
	return h;
}
