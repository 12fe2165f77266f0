/* entry.c - canonical record bytes and the view derived from records */
#include "autoconfig.h"

#include <string.h>

#include "canonjson.h"
#include "crypto.h"
#include "entry.h"
#include "ids.h"

/* Keys whose values accumulate over records instead of replacing. */
static const char *const list_keys[] = { "Version", "Reference" };

char *
entry_record_canonical(const char *entry_id, gint64 seq, const char *created,
		       const char *kind, const char *auth_json, const char *subject,
		       const char *fields_json, const char *body, const GPtrArray *attachments)
{
	GString *s = g_string_new("{");
	gboolean first = TRUE;

	canonjson_member_str(s, &first, "v", "vulnid-record-1");
	canonjson_member_str(s, &first, "entry", entry_id);
	canonjson_member_int(s, &first, "seq", seq);
	canonjson_member_str(s, &first, "created", created);
	canonjson_member_str(s, &first, "kind", kind);
	canonjson_key(s, &first, "auth");
	g_string_append(s, auth_json);	/* already canonical */
	canonjson_member_str(s, &first, "subject", subject);
	canonjson_key(s, &first, "fields");
	g_string_append(s, fields_json);	/* already canonical */
	canonjson_member_str(s, &first, "body", body);
	canonjson_key(s, &first, "attachments");
	entry_attachments_canonical(s, attachments);
	g_string_append_c(s, '}');
	return g_string_free(s, FALSE);
}

void
entry_attachments_canonical(GString *s, const GPtrArray *attachments)
{
	g_string_append_c(s, '[');
	for (guint i = 0; attachments != NULL && i < attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(attachments, i);
		gboolean first = TRUE;

		if (i > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '{');
		canonjson_member_str(s, &first, "sha256", a->sha256);
		canonjson_member_int(s, &first, "size", a->size);
		canonjson_member_str(s, &first, "content_type", a->content_type);
		canonjson_member_str(s, &first, "filename", a->filename);
		g_string_append_c(s, '}');
	}
	g_string_append_c(s, ']');
}

void
entry_attachment_free(gpointer p)
{
	entry_attachment *a = p;

	g_free(a->sha256);
	g_free(a->filename);
	g_free(a->content_type);
	g_free(a);
}

static void
entry_record_free(gpointer p)
{
	entry_record *r = p;

	g_free(r->created);
	g_free(r->kind);
	g_free(r->author);
	g_free(r->author_name);
	g_free(r->role);
	g_free(r->auth);
	g_free(r->subject);
	g_free(r->fields);
	g_free(r->body);
	g_free(r->sha256);
	g_free(r->sealed);
	g_ptr_array_unref(r->attachments);
	g_free(r);
}

void
entry_free(entry *e)
{
	if (e == NULL)
		return;
	g_free(e->id);
	g_free(e->digest);
	g_free(e->created);
	g_free(e->embargo);
	g_ptr_array_unref(e->records);
	g_free(e);
}

/* A release record discloses a sealed record: the view shows the sealed
 * record with the disclosed content (whose hash is the sealed record's
 * commitment), so that everything derived from records reads it. */
static void
entry_apply_releases(entry *e)
{
	for (guint i = 0; i < e->records->len; i++) {
		entry_record *rel = g_ptr_array_index(e->records, i);

		if (rel->opens <= 0)
			continue;
		for (guint j = 0; j < i; j++) {
			entry_record *r = g_ptr_array_index(e->records, j);

			if (r->seq != rel->opens || r->sealed == NULL || r->disclosed)
				continue;
			g_free(r->subject);
			r->subject = g_strdup(rel->subject);
			g_free(r->fields);
			r->fields = g_strdup(rel->fields);
			g_free(r->body);
			r->body = g_strdup(rel->body);
			g_ptr_array_set_size(r->attachments, 0);
			for (guint k = 0; k < rel->attachments->len; k++) {
				entry_attachment *a = g_ptr_array_index(rel->attachments, k);
				entry_attachment *c = g_new0(entry_attachment, 1);

				c->sha256 = g_strdup(a->sha256);
				c->filename = g_strdup(a->filename);
				c->content_type = g_strdup(a->content_type);
				c->size = a->size;
				g_ptr_array_add(r->attachments, c);
			}
			r->disclosed = TRUE;
		}
	}
}

vulnid_status
entry_load(store *st, const char *id, entry **out, GError **err)
{
	g_autoptr(entry) e = g_new0(entry, 1);
	sqlite3_stmt *stmt;
	vulnid_status s;
	int rc;

	e->records = g_ptr_array_new_with_free_func(entry_record_free);
	stmt = store_prepare(st, "SELECT id, year, number, digest, created, embargo FROM entries WHERE id = ?",
			     &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		e->id = store_col_text(stmt, 0);
		e->year = sqlite3_column_int(stmt, 1);
		e->number = sqlite3_column_int64(stmt, 2);
		e->digest = store_col_text(stmt, 3);
		e->created = store_col_text(stmt, 4);
		e->embargo = store_col_text(stmt, 5);
	}
	sqlite3_finalize(stmt);
	if (rc == SQLITE_DONE)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no entry '%s'", id);
	if (rc != SQLITE_ROW)
		return store_fail(st, rc, "entries", err);

	stmt = store_prepare(st,
		"SELECT id, seq, created, kind, author, author_name, role, auth, subject, fields,"
		" body, sha256, sealed, coalesce(opens, 0) FROM records WHERE entry = ? ORDER BY seq", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		entry_record *r = g_new0(entry_record, 1);

		r->rowid = sqlite3_column_int64(stmt, 0);
		r->seq = sqlite3_column_int64(stmt, 1);
		r->created = store_col_text(stmt, 2);
		r->kind = store_col_text(stmt, 3);
		r->author = store_col_text(stmt, 4);
		r->author_name = store_col_text(stmt, 5);
		r->role = store_col_text(stmt, 6);
		r->auth = store_col_text(stmt, 7);
		r->subject = store_col_text(stmt, 8);
		r->fields = store_col_text(stmt, 9);
		r->body = store_col_text(stmt, 10);
		r->sha256 = store_col_text(stmt, 11);
		r->sealed = store_col_text(stmt, 12);
		r->opens = sqlite3_column_int64(stmt, 13);
		r->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
		g_ptr_array_add(e->records, r);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "records", err);

	stmt = store_prepare(st, "SELECT sha256, filename, content_type, size FROM attachments"
			     " WHERE record = ? ORDER BY idx", &s, err);
	if (stmt == NULL)
		return s;
	for (guint i = 0; i < e->records->len; i++) {
		entry_record *r = g_ptr_array_index(e->records, i);

		sqlite3_reset(stmt);
		sqlite3_bind_int64(stmt, 1, r->rowid);
		while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
			entry_attachment *a = g_new0(entry_attachment, 1);

			a->sha256 = store_col_text(stmt, 0);
			a->filename = store_col_text(stmt, 1);
			a->content_type = store_col_text(stmt, 2);
			a->size = sqlite3_column_int64(stmt, 3);
			g_ptr_array_add(r->attachments, a);
		}
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(stmt);
			return store_fail(st, rc, "attachments", err);
		}
	}
	sqlite3_finalize(stmt);
	entry_apply_releases(e);
	*out = g_steal_pointer(&e);
	return VULNID_OK;
}

/* Fields of a record as a JSON array node ([[k,v],...]); NULL if bad. */
static JsonArray *
record_fields(const entry_record *r)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *root;

	if (r->fields == NULL || !json_parser_load_from_data(p, r->fields, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	if (root == NULL || !JSON_NODE_HOLDS_ARRAY(root))
		return NULL;
	return json_array_ref(json_node_get_array(root));
}

typedef struct {
	const char *key;
	char *value;
	GPtrArray *all;
	guint record;		/* index of the record being read */
	gint value_record;	/* record the value came from, -1: none */
} field_lookup;

typedef void (*field_fn)(const char *key, const char *value, gpointer data);

static void
foreach_field(const entry *e, field_fn fn, gpointer data)
{
	for (guint i = 0; i < e->records->len; i++) {
		((field_lookup *) data)->record = i;
		g_autoptr(JsonArray) a = record_fields(g_ptr_array_index(e->records, i));

		for (guint j = 0; a != NULL && j < json_array_get_length(a); j++) {
			JsonArray *kv = json_array_get_array_element(a, j);

			if (kv == NULL || json_array_get_length(kv) != 2)
				continue;
			fn(json_array_get_string_element(kv, 0), json_array_get_string_element(kv, 1), data);
		}
	}
}


static void
lookup_cb(const char *k, const char *v, gpointer data)
{
	field_lookup *fl = data;

	if (k == NULL || v == NULL || g_ascii_strcasecmp(k, fl->key) != 0)
		return;
	if (fl->all != NULL) {
		for (guint i = 0; i < fl->all->len; i++)
			if (strcmp(g_ptr_array_index(fl->all, i), v) == 0)
				return;
		g_ptr_array_add(fl->all, g_strdup(v));
	} else if (fl->value_record != (gint) fl->record) {
		/* The first value inside a record counts (as the ack said);
		 * a later record's value replaces an earlier record's. */
		g_free(fl->value);
		fl->value = g_strdup(v);
		fl->value_record = (gint) fl->record;
	}
}

char *
entry_field(const entry *e, const char *key)
{
	field_lookup fl = { key, NULL, NULL, 0, -1 };

	foreach_field(e, lookup_cb, &fl);
	return fl.value;
}

static GPtrArray *
entry_field_all(const entry *e, const char *key)
{
	field_lookup fl = { key, NULL, g_ptr_array_new_with_free_func(g_free), 0, -1 };

	foreach_field(e, lookup_cb, &fl);
	return fl.all;
}

char *
entry_title(const entry *e)
{
	char *t = entry_field(e, "Title");

	if (t != NULL && *t != '\0')
		return t;
	g_free(t);
	if (e->records->len > 0) {
		const entry_record *r = g_ptr_array_index(e->records, 0);

		return g_strdup(r->subject != NULL ? r->subject : "");
	}
	return g_strdup("");
}

const char *
entry_state(const entry *e)
{
	gboolean said = FALSE;

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (r->sealed != NULL && !r->disclosed)
			return "embargoed";
		if ((r->body != NULL && *r->body != '\0') ||
		    (r->fields != NULL && strcmp(r->fields, "[]") != 0) ||
		    r->attachments->len > 0)
			said = TRUE;
	}
	return said ? "public" : "reserved";
}

gboolean
entry_is_anonymous(const entry *e)
{
	g_autofree char *a = entry_field(e, "Anonymous");

	return a != NULL && g_ascii_strcasecmp(a, "yes") == 0;
}

/* How a record was authenticated, in a few words: "signed by FPR",
 * "token", "unverified: domain", "unauthenticated". */
static char *
auth_summary(const char *auth_json)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonObject *o;
	const char *method, *how;

	if (auth_json == NULL || !json_parser_load_from_data(p, auth_json, -1, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return g_strdup("unauthenticated");
	o = json_node_get_object(json_parser_get_root(p));
	method = json_object_get_string_member_with_default(o, "method", "none");
	how = json_object_get_string_member_with_default(o, "how", NULL);
	if (strcmp(method, "pgp") == 0)
		return g_strdup_printf("signed by %s",
				       json_object_get_string_member_with_default(o, "fingerprint", "?"));
	if (strcmp(method, "robot") == 0)
		return g_strdup("the robot");
	if (how != NULL && strcmp(how, "token") == 0)
		return g_strdup("token");
	if (how != NULL && strcmp(how, "address-dmarc") == 0)
		return g_strdup("address (DMARC pass)");
	if (how != NULL && strcmp(how, "none") != 0)
		return g_strdup_printf("unverified: %s", how);
	return g_strdup("unauthenticated");
}

/* Text for a terminal: keep \n and \t, show other controls as \xNN. */
static void
append_safe(GString *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *) (s != NULL ? s : ""); *p; p++) {
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			g_string_append_printf(out, "\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) {	/* C1 controls */
			g_string_append_printf(out, "\\u%04x", p[1]);
			p++;
		} else
			g_string_append_c(out, (char) *p);
	}
}

static void
append_line(GString *out, const char *label, const char *value)
{
	g_string_append_printf(out, "%-10s ", label);
	append_safe(out, value);
	g_string_append_c(out, '\n');
}

char *
entry_to_text(const entry *e)
{
	return entry_to_text_view(e, FALSE);
}

char *
entry_to_text_view(const entry *e, gboolean public)
{
	GString *out = g_string_new(NULL);
	gboolean anonymous = entry_is_anonymous(e);
	g_autofree char *title = entry_title(e);
	static const char *const single[] = { "Vendor", "Product", "Type", "Vendor-Contact",
					      "Embargo", "Anonymous" };

	append_line(out, "id:", e->id);
	append_line(out, "digest:", e->digest);
	append_line(out, "created:", e->created);
	append_line(out, "state:", entry_state(e));
	if (public && strcmp(entry_state(e), "embargoed") == 0) {
		g_autofree char *until = entry_embargo(e);

		append_line(out, "embargo:", until != NULL ? until : "yes");
		append_line(out, "commitment:", e->digest);
		return g_string_free(out, FALSE);
	}
	append_line(out, "title:", title);
	for (gsize i = 0; i < G_N_ELEMENTS(single); i++) {
		g_autofree char *v = entry_field(e, single[i]);
		g_autofree char *label = g_strdup_printf("%s:", single[i]);
		g_autofree char *lower = g_ascii_strdown(label, -1);

		if (v != NULL)
			append_line(out, lower, v);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(list_keys); i++) {
		g_autoptr(GPtrArray) all = entry_field_all(e, list_keys[i]);
		g_autofree char *label = g_strdup_printf("%s:", list_keys[i]);
		g_autofree char *lower = g_ascii_strdown(label, -1);

		for (guint j = 0; j < all->len; j++)
			append_line(out, lower, g_ptr_array_index(all, j));
	}
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(JsonArray) f = record_fields(r);

		g_autofree char *how = auth_summary(r->auth);

		g_string_append_printf(out, "\nrecord %" G_GINT64_FORMAT ": %s by %s (%s), %s\n",
				       r->seq, r->kind, r->role, how, r->created);
		append_line(out, "  from:", public && anonymous && strcmp(r->role, "creator") == 0
			    ? "(anonymous)" : r->author != NULL ? r->author : "(unknown)");
		append_line(out, "  subject:", r->subject);
		append_line(out, "  sha256:", r->sha256);
		for (guint j = 0; f != NULL && j < json_array_get_length(f); j++) {
			JsonArray *kv = json_array_get_array_element(f, j);

			if (kv == NULL || json_array_get_length(kv) != 2)
				continue;
			g_string_append(out, "  ");
			append_safe(out, json_array_get_string_element(kv, 0));
			g_string_append(out, ": ");
			append_safe(out, json_array_get_string_element(kv, 1));
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
		for (guint j = 0; j < r->attachments->len; j++) {
			const entry_attachment *a = g_ptr_array_index(r->attachments, j);

			g_string_append_printf(out, "  attachment: %s %" G_GINT64_FORMAT " bytes sha256:%s ",
					       a->content_type, a->size, a->sha256);
			append_safe(out, a->filename != NULL ? a->filename : "(no name)");
			g_string_append_c(out, '\n');
		}
	}
	return g_string_free(out, FALSE);
}

static JsonNode *
entry_json(const entry *e, gboolean public)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	gboolean anonymous = entry_is_anonymous(e);
	g_autofree char *title = entry_title(e);
	static const char *const single[][2] = {
		{ "Vendor", "vendor" }, { "Product", "product" }, { "Type", "type" },
		{ "Vendor-Contact", "vendor_contact" }, { "Embargo", "embargo" },
		{ "Anonymous", "anonymous" },
	};

	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_string_value(b, e->id);
	json_builder_set_member_name(b, "digest");
	json_builder_add_string_value(b, e->digest);
	json_builder_set_member_name(b, "created");
	json_builder_add_string_value(b, e->created);
	json_builder_set_member_name(b, "state");
	json_builder_add_string_value(b, entry_state(e));
	if (public && strcmp(entry_state(e), "embargoed") == 0) {
		/* The stub: what may be known before the embargo ends.  The
		 * commitment is the digest: SHA-256 of the sealed record. */
		g_autofree char *until = entry_embargo(e);

		json_builder_set_member_name(b, "embargo");
		json_builder_add_string_value(b, until != NULL ? until : "yes");
		json_builder_set_member_name(b, "commitment");
		json_builder_add_string_value(b, e->digest);
		json_builder_end_object(b);
		return json_builder_get_root(b);
	}
	json_builder_set_member_name(b, "title");
	json_builder_add_string_value(b, title);
	for (gsize i = 0; i < G_N_ELEMENTS(single); i++) {
		g_autofree char *v = entry_field(e, single[i][0]);

		json_builder_set_member_name(b, single[i][1]);
		if (v != NULL)
			json_builder_add_string_value(b, v);
		else
			json_builder_add_null_value(b);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(list_keys); i++) {
		g_autoptr(GPtrArray) all = entry_field_all(e, list_keys[i]);

		json_builder_set_member_name(b, i == 0 ? "versions" : "references");
		json_builder_begin_array(b);
		for (guint j = 0; j < all->len; j++)
			json_builder_add_string_value(b, g_ptr_array_index(all, j));
		json_builder_end_array(b);
	}
	json_builder_set_member_name(b, "records");
	json_builder_begin_array(b);
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(JsonParser) ap = json_parser_new();
		g_autoptr(JsonArray) f = record_fields(r);

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "seq");
		json_builder_add_int_value(b, r->seq);
		json_builder_set_member_name(b, "created");
		json_builder_add_string_value(b, r->created);
		json_builder_set_member_name(b, "kind");
		json_builder_add_string_value(b, r->kind);
		json_builder_set_member_name(b, "role");
		json_builder_add_string_value(b, r->role);
		json_builder_set_member_name(b, "author");
		if (r->author != NULL && !(public && anonymous && strcmp(r->role, "creator") == 0))
			json_builder_add_string_value(b, r->author);
		else
			json_builder_add_null_value(b);
		if (r->opens > 0) {
			json_builder_set_member_name(b, "opens");
			json_builder_add_int_value(b, r->opens);
		}
		if (r->sealed != NULL) {
			json_builder_set_member_name(b, "sealed");
			json_builder_add_boolean_value(b, TRUE);
		}
		json_builder_set_member_name(b, "auth");
		if (json_parser_load_from_data(ap, r->auth, -1, NULL))
			json_builder_add_value(b, json_node_copy(json_parser_get_root(ap)));
		else
			json_builder_add_null_value(b);
		json_builder_set_member_name(b, "subject");
		json_builder_add_string_value(b, r->subject != NULL ? r->subject : "");
		json_builder_set_member_name(b, "fields");
		json_builder_begin_array(b);
		for (guint j = 0; f != NULL && j < json_array_get_length(f); j++)
			json_builder_add_value(b, json_node_copy(json_array_get_element(f, j)));
		json_builder_end_array(b);
		json_builder_set_member_name(b, "body");
		json_builder_add_string_value(b, r->body != NULL ? r->body : "");
		json_builder_set_member_name(b, "sha256");
		json_builder_add_string_value(b, r->sha256);
		json_builder_set_member_name(b, "attachments");
		json_builder_begin_array(b);
		for (guint j = 0; j < r->attachments->len; j++) {
			const entry_attachment *a = g_ptr_array_index(r->attachments, j);

			json_builder_begin_object(b);
			json_builder_set_member_name(b, "filename");
			if (a->filename != NULL)
				json_builder_add_string_value(b, a->filename);
			else
				json_builder_add_null_value(b);
			json_builder_set_member_name(b, "content_type");
			json_builder_add_string_value(b, a->content_type);
			json_builder_set_member_name(b, "size");
			json_builder_add_int_value(b, a->size);
			json_builder_set_member_name(b, "sha256");
			json_builder_add_string_value(b, a->sha256);
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
	return json_builder_get_root(b);
}

vulnid_status
entry_list_ids(store *st, int year, GPtrArray **ids, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT id FROM entries WHERE ?1 = 0 OR year = ?1 ORDER BY year, number", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	*ids = g_ptr_array_new_with_free_func(g_free);
	sqlite3_bind_int(stmt, 1, year);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		g_ptr_array_add(*ids, store_col_text(stmt, 0));
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
		g_clear_pointer(ids, g_ptr_array_unref);
		return store_fail(st, rc, "entries", err);
	}
	return VULNID_OK;
}

JsonNode *
entry_to_json(const entry *e)
{
	return entry_json(e, FALSE);
}

JsonNode *
entry_to_public_json(const entry *e)
{
	return entry_json(e, TRUE);
}

char *
entry_embargo(const entry *e)
{
	char *v = entry_field(e, "Embargo");

	if (v != NULL)
		return v;
	return g_strdup(e->embargo);
}

vulnid_status
entry_record_from_canonical(entry_record *r, const char *canonical, GError **err)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(JsonGenerator) gen = json_generator_new();
	JsonObject *o;
	JsonNode *fields;
	JsonArray *atts;
	g_autofree char *check = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canonical, -1);

	/* The sealed text must be what the commitment says. */
	if (r->sha256 == NULL || strcmp(check, r->sha256) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "sealed content of record %" G_GINT64_FORMAT
				   " does not match its commitment", r->seq);
	if (!json_parser_load_from_data(p, canonical, -1, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "sealed content is not a record");
	o = json_node_get_object(json_parser_get_root(p));
	fields = json_object_get_member(o, "fields");
	g_free(r->subject);
	r->subject = json_object_has_member(o, "subject") && !json_object_get_null_member(o, "subject")
		     ? g_strdup(json_object_get_string_member(o, "subject")) : NULL;
	g_free(r->body);
	r->body = g_strdup(json_object_get_string_member(o, "body"));
	g_free(r->fields);
	if (fields != NULL && JSON_NODE_HOLDS_ARRAY(fields)) {
		/* back to the canonical form the records table uses */
		GString *f = g_string_new("[");
		JsonArray *a = json_node_get_array(fields);

		for (guint i = 0; i < json_array_get_length(a); i++) {
			JsonArray *kv = json_array_get_array_element(a, i);

			if (i > 0)
				g_string_append_c(f, ',');
			g_string_append_c(f, '[');
			canonjson_string(f, json_array_get_string_element(kv, 0));
			g_string_append_c(f, ',');
			canonjson_string(f, json_array_get_string_element(kv, 1));
			g_string_append_c(f, ']');
		}
		g_string_append_c(f, ']');
		r->fields = g_string_free(f, FALSE);
	} else
		r->fields = g_strdup("[]");
	g_ptr_array_set_size(r->attachments, 0);
	atts = json_object_get_array_member(o, "attachments");
	for (guint i = 0; atts != NULL && i < json_array_get_length(atts); i++) {
		JsonObject *ao = json_array_get_object_element(atts, i);
		entry_attachment *a = g_new0(entry_attachment, 1);

		a->sha256 = g_strdup(json_object_get_string_member(ao, "sha256"));
		a->size = json_object_get_int_member(ao, "size");
		a->content_type = g_strdup(json_object_get_string_member(ao, "content_type"));
		a->filename = json_object_get_null_member(ao, "filename") ? NULL
			      : g_strdup(json_object_get_string_member(ao, "filename"));
		g_ptr_array_add(r->attachments, a);
	}
	return VULNID_OK;
}

vulnid_status
entry_unseal(entry *e, GError **err)
{
	for (guint i = 0; i < e->records->len; i++) {
		entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(GBytes) sealed = NULL;
		g_autoptr(GBytes) clear = NULL;
		g_autofree char *text = NULL;
		vulnid_status s;

		if (r->sealed == NULL || r->disclosed)
			continue;
		sealed = g_bytes_new(r->sealed, strlen(r->sealed));
		s = crypto_unseal(sealed, &clear, err);
		if (s != VULNID_OK)
			return s;
		text = g_strndup(g_bytes_get_data(clear, NULL), g_bytes_get_size(clear));
		s = entry_record_from_canonical(r, text, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}
