/* entry.c - the entry model (entry.h): canonical record bytes, loading,
 * unsealing, and what the records say, derived in one place */
#include "autoconfig.h"

#include <string.h>
#include <json-glib/json-glib.h>

#include "canonjson.h"
#include "crypto.h"
#include "entry.h"
#include "ids.h"
#include "store-entry.h"

/* ---- canonical bytes ----------------------------------------------------- */

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

static void
attachment_object(GString *s, const char *sha256, gint64 size, const char *content_type, const char *filename)
{
	gboolean first = TRUE;

	g_string_append_c(s, '{');
	canonjson_member_str(s, &first, "sha256", sha256);
	canonjson_member_int(s, &first, "size", size);
	canonjson_member_str(s, &first, "content_type", content_type);
	canonjson_member_str(s, &first, "filename", filename);
	g_string_append_c(s, '}');
}

char *
entry_attachment_commitment(const entry_attachment *a)
{
	g_autoptr(GString) s = g_string_new("vulnid-attachment-commitment:");

	g_string_append_printf(s, "%s:", a->salt != NULL ? a->salt : "");
	attachment_object(s, a->sha256, a->size, a->content_type, a->filename);
	return g_compute_checksum_for_string(G_CHECKSUM_SHA256, s->str, (gssize) s->len);
}

void
entry_attachments_canonical(GString *s, const GPtrArray *attachments)
{
	g_string_append_c(s, '[');
	for (guint i = 0; attachments != NULL && i < attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(attachments, i);

		if (i > 0)
			g_string_append_c(s, ',');
		if (a->salt != NULL) {
			g_autofree char *c = entry_attachment_commitment(a);

			attachment_object(s, c, 0, a->content_type, ENTRY_ATTACHMENT_WITHHELD);
		} else
			attachment_object(s, a->sha256, a->size, a->content_type, a->filename);
	}
	g_string_append_c(s, ']');
}

vulnid_status
entry_attachment_store(store *st, gint64 row, int idx, const entry_attachment *a, GError **err)
{
	if (a->salt != NULL)
		return store_withheld_attachment_insert(st, row, idx, a->filename, a->content_type, a->size,
							a->sha256, a->salt, err);
	return store_attachment_insert(st, row, idx, a->filename, a->content_type, a->size, a->sha256, err);
}

char *
entry_fields_canonical(const GPtrArray *fields)
{
	GString *s = g_string_new("[");

	for (guint i = 0; fields != NULL && i < fields->len; i++) {
		const entry_kv *kv = g_ptr_array_index(fields, i);

		if (i > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '[');
		canonjson_string(s, kv->key);
		g_string_append_c(s, ',');
		canonjson_string(s, kv->value);
		g_string_append_c(s, ']');
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

/* ---- names --------------------------------------------------------------- */

static const char *const kind_names[] = {
	[ENTRY_KIND_REQUEST] = "request", [ENTRY_KIND_ADDITION] = "addition",
	[ENTRY_KIND_VENDOR_RESPONSE] = "vendor-response", [ENTRY_KIND_COMMAND] = "command",
	[ENTRY_KIND_RELEASE] = "release", [ENTRY_KIND_DELIVERY] = "delivery", [ENTRY_KIND_OTHER] = "other",
};

static const char *const role_names[] = {
	[ENTRY_ROLE_CREATOR] = "creator", [ENTRY_ROLE_VENDOR] = "vendor",
	[ENTRY_ROLE_MODERATOR] = "moderator", [ENTRY_ROLE_OPERATOR] = "operator",
	[ENTRY_ROLE_ROBOT] = "robot", [ENTRY_ROLE_THIRD_PARTY] = "third-party",
	[ENTRY_ROLE_CONTRIBUTOR] = "contributor",
};

static const char *const how_names[] = {
	[ENTRY_HOW_KEY] = "key", [ENTRY_HOW_TOKEN] = "token", [ENTRY_HOW_ROBOT] = "robot",
	[ENTRY_HOW_REQUEST] = "request", [ENTRY_HOW_DMARC] = "address-dmarc",
	[ENTRY_HOW_CONTACT] = "contact", [ENTRY_HOW_DOMAIN] = "domain",
	[ENTRY_HOW_ADDRESS] = "address", [ENTRY_HOW_NONE] = "none",
};

const char *
entry_kind_str(entry_kind k)
{
	return k < G_N_ELEMENTS(kind_names) ? kind_names[k] : "other";
}

const char *
entry_role_str(entry_role r)
{
	return r < G_N_ELEMENTS(role_names) ? role_names[r] : "third-party";
}

const char *
entry_how_str(entry_how h)
{
	return h < G_N_ELEMENTS(how_names) ? how_names[h] : "none";
}

static entry_kind
kind_from_str(const char *s)
{
	for (gsize i = 0; s != NULL && i < G_N_ELEMENTS(kind_names); i++)
		if (i != ENTRY_KIND_OTHER && strcmp(s, kind_names[i]) == 0)
			return (entry_kind) i;
	return ENTRY_KIND_OTHER;
}

entry_role
entry_role_from_str(const char *s)
{
	for (gsize i = 0; s != NULL && i < G_N_ELEMENTS(role_names); i++)
		if (strcmp(s, role_names[i]) == 0)
			return (entry_role) i;
	return ENTRY_ROLE_THIRD_PARTY;
}

entry_how
entry_how_from_str(const char *s)
{
	for (gsize i = 0; s != NULL && i < G_N_ELEMENTS(how_names); i++)
		if (strcmp(s, how_names[i]) == 0)
			return (entry_how) i;
	return ENTRY_HOW_NONE;
}

gboolean
entry_how_verified(entry_how h)
{
	return h == ENTRY_HOW_KEY || h == ENTRY_HOW_TOKEN || h == ENTRY_HOW_ROBOT;
}

const char *
entry_how_phrase(entry_how h)
{
	switch (h) {
	case ENTRY_HOW_KEY: return "verified by OpenPGP signature";
	case ENTRY_HOW_TOKEN: return "verified by token";
	case ENTRY_HOW_ROBOT: return "written by the robot";
	case ENTRY_HOW_REQUEST: return "the request that made the entry";
	case ENTRY_HOW_DMARC: return "address (DMARC pass): sent from the creator's address, which its domain authenticated";
	case ENTRY_HOW_CONTACT: return "unverified: sent from the vendor's notified address";
	case ENTRY_HOW_DOMAIN: return "unverified: sent from the vendor's domain";
	case ENTRY_HOW_ADDRESS: return "unverified: sent from the creator's address";
	case ENTRY_HOW_NONE: break;
	}
	return "not authenticated";
}

const char *
entry_state_str(entry_state s)
{
	switch (s) {
	case ENTRY_RESERVED: return "reserved";
	case ENTRY_EMBARGOED: return "embargoed";
	case ENTRY_PUBLIC: break;
	}
	return "public";
}

/* ---- memory -------------------------------------------------------------- */

void
entry_attachment_free(gpointer p)
{
	entry_attachment *a = p;

	g_free(a->sha256);
	g_free(a->filename);
	g_free(a->content_type);
	g_free(a->salt);
	g_free(a);
}

entry_attachment *
entry_attachment_copy(const entry_attachment *a)
{
	entry_attachment *c = g_new0(entry_attachment, 1);

	c->sha256 = g_strdup(a->sha256);
	c->filename = g_strdup(a->filename);
	c->content_type = g_strdup(a->content_type);
	c->size = a->size;
	c->salt = g_strdup(a->salt);
	c->key = a->key;
	return c;
}

void
entry_kv_free(gpointer p)
{
	entry_kv *kv = p;

	g_free(kv->key);
	g_free(kv->value);
	g_free(kv);
}

static void
record_free(gpointer p)
{
	entry_record *r = p;

	g_free(r->created);
	g_free(r->kind_name);
	g_free(r->role_name);
	g_free(r->author);
	g_free(r->author_name);
	g_free(r->auth);
	g_free(r->signer);
	g_free(r->auth_reason);
	g_free(r->auth_note);
	g_free(r->auth_ignored);
	g_free(r->endorsed_by);
	g_free(r->endorsement);
	g_free(r->endorsed_fields);
	g_free(r->subject);
	g_free(r->fields_json);
	g_ptr_array_unref(r->fields);
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

/* ---- parsing what is stored, once ---------------------------------------- */

/* [[k,v],...] into entry_kv*; anything else is no fields. */
static GPtrArray *
fields_parse(const char *json)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(entry_kv_free);
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *root;
	JsonArray *a;

	if (json == NULL || !json_parser_load_from_data(p, json, -1, NULL))
		return out;
	root = json_parser_get_root(p);
	if (root == NULL || !JSON_NODE_HOLDS_ARRAY(root))
		return out;
	a = json_node_get_array(root);
	for (guint i = 0; i < json_array_get_length(a); i++) {
		JsonNode *n = json_array_get_element(a, i);
		JsonArray *kv = n != NULL && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
		JsonNode *k, *v;
		entry_kv *f;

		if (kv == NULL || json_array_get_length(kv) != 2)
			continue;
		k = json_array_get_element(kv, 0);
		v = json_array_get_element(kv, 1);
		if (json_node_get_value_type(k) != G_TYPE_STRING || json_node_get_value_type(v) != G_TYPE_STRING)
			continue;
		f = g_new0(entry_kv, 1);
		f->key = g_strdup(json_node_get_string(k));
		f->value = g_strdup(json_node_get_string(v));
		g_ptr_array_add(out, f);
	}
	return out;
}

static char *
member_str(JsonObject *o, const char *name)
{
	JsonNode *n = json_object_get_member(o, name);

	if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
		return NULL;
	return g_strdup(json_node_get_string(n));
}

/* The auth object (vulnid-json(7)): how the mail was authenticated, and
 * the role its sender acted in and how that was established. */
static void
auth_parse(entry_record *r)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autofree char *method = NULL;
	g_autofree char *role = NULL;
	g_autofree char *how = NULL;
	JsonObject *o = NULL;
	JsonNode *enc;

	if (r->auth != NULL && json_parser_load_from_data(p, r->auth, -1, NULL) &&
	    JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		o = json_node_get_object(json_parser_get_root(p));
	if (o != NULL) {
		method = member_str(o, "method");
		role = member_str(o, "role");
		how = member_str(o, "how");
		r->auth_reason = member_str(o, "reason");
		r->auth_note = member_str(o, "note");
		r->auth_ignored = member_str(o, "ignored");
		r->endorsed_by = member_str(o, "endorsed_by");
		r->endorsement = member_str(o, "endorsement");
		r->endorsed_fields = member_str(o, "fields");
		enc = json_object_get_member(o, "encrypted");
		r->came_encrypted = enc != NULL && JSON_NODE_HOLDS_VALUE(enc) &&
				    json_node_get_value_type(enc) == G_TYPE_BOOLEAN && json_node_get_boolean(enc);
		if (g_strcmp0(method, "pgp") == 0) {
			r->signed_by_key = TRUE;
			r->signer = member_str(o, "fingerprint");
			/* An anonymous researcher's key is kept aside, not in the
			 * hashed record (vulnid-json(7), THE AUTH OBJECT). */
			if (r->signer == NULL || strcmp(r->signer, ENTRY_KEY_WITHHELD) == 0) {
				g_clear_pointer(&r->signer, g_free);
				r->signer_withheld = TRUE;
			}
		}
	}
	/* The role column is what intake decided; the auth object repeats
	 * it for the hash, with how it was established. */
	r->role = entry_role_from_str(r->role_name);
	if (how != NULL)
		r->how = entry_how_from_str(how);
	else if (r->kind == ENTRY_KIND_RELEASE || g_strcmp0(method, "robot") == 0)
		r->how = ENTRY_HOW_ROBOT;
	else if (r->kind == ENTRY_KIND_REQUEST)
		r->how = r->signed_by_key ? ENTRY_HOW_KEY : ENTRY_HOW_REQUEST;
	else
		r->how = ENTRY_HOW_NONE;
}

const char *
entry_record_get(const entry_record *r, const char *key)
{
	for (guint i = 0; r->fields != NULL && i < r->fields->len; i++) {
		const entry_kv *kv = g_ptr_array_index(r->fields, i);

		if (g_ascii_strcasecmp(kv->key, key) == 0)
			return kv->value;
	}
	return NULL;
}

JsonNode *
entry_record_auth_node(const entry_record *r, gboolean withhold_key)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *n;

	if (r->auth == NULL || !json_parser_load_from_data(p, r->auth, -1, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return json_node_init_object(json_node_alloc(), json_object_new());
	n = json_node_copy(json_parser_get_root(p));
	if (withhold_key && r->signed_by_key) {
		JsonObject *o = json_node_get_object(n);

		if (json_object_has_member(o, "fingerprint"))
			json_object_set_string_member(o, "fingerprint", ENTRY_KEY_WITHHELD);
		json_object_remove_member(o, "signature");
		json_object_remove_member(o, "note");
	}
	return n;
}

const entry_record *
entry_record_by_seq(const entry *e, gint64 seq)
{
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (r->seq == seq)
			return r;
	}
	return NULL;
}

gboolean
entry_record_sealed_at(const entry_record *r, gint64 pos)
{
	return r->sealed != NULL && !(r->disclosed && r->disclosed_at <= pos);
}

/* Replace a record's content (subject, fields, body, attachments). */
static void
record_set_content(entry_record *r, const char *subject, const char *fields_json, const char *body,
		   const GPtrArray *attachments)
{
	g_free(r->subject);
	r->subject = g_strdup(subject);
	g_free(r->fields_json);
	r->fields_json = g_strdup(fields_json != NULL ? fields_json : "[]");
	g_ptr_array_unref(r->fields);
	r->fields = fields_parse(r->fields_json);
	g_free(r->body);
	r->body = g_strdup(body != NULL ? body : "");
	g_ptr_array_set_size(r->attachments, 0);
	for (guint k = 0; attachments != NULL && k < attachments->len; k++)
		g_ptr_array_add(r->attachments, entry_attachment_copy(g_ptr_array_index(attachments, k)));
}

/* A release record discloses a sealed record: the sealed record carries
 * the disclosed content from then on (its hash is the commitment), so that
 * whoever reads records reads it there, and knows since when. */
static void
apply_releases(entry *e)
{
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *rel = g_ptr_array_index(e->records, i);
		entry_record *r;

		if (rel->kind != ENTRY_KIND_RELEASE || rel->opens <= 0)
			continue;
		r = (entry_record *) entry_record_by_seq(e, rel->opens);
		if (r == NULL || r->sealed == NULL || r->disclosed || r->seq >= rel->seq)
			continue;
		record_set_content(r, rel->subject, rel->fields_json, rel->body, rel->attachments);
		r->disclosed = TRUE;
		r->disclosed_at = rel->rowid;
	}
}

/* ---- loading --------------------------------------------------------------- */

static vulnid_status
load_entry_row(store *st, const char *id, entry *e, GError **err)
{
	store_entry_row row;
	gboolean found;
	vulnid_status s = store_entry_get(st, id, &row, &found, err);

	if (s != VULNID_OK)
		return s;
	if (!found)
		return vulnid_fail(err, VULNID_ERR_NOTFOUND, "no entry '%s'", id);
	e->id = g_steal_pointer(&row.id);
	e->year = row.year;
	e->number = row.number;
	e->digest = g_steal_pointer(&row.digest);
	e->created = g_steal_pointer(&row.created);
	e->embargo = g_steal_pointer(&row.embargo);
	store_entry_row_clear(&row);
	return VULNID_OK;
}

static void
add_record_row(const store_entry_record_row *row, gpointer data)
{
	entry *e = data;
	entry_record *r = g_new0(entry_record, 1);

	r->rowid = row->rowid;
	r->seq = row->seq;
	r->created = g_strdup(row->created);
	r->kind_name = g_strdup(row->kind);
	r->kind = kind_from_str(r->kind_name);
	r->author = g_strdup(row->author);
	r->author_name = g_strdup(row->author_name);
	r->role_name = g_strdup(row->role);
	r->auth = g_strdup(row->auth);
	r->subject = g_strdup(row->subject);
	r->fields_json = g_strdup(row->fields);
	r->fields = fields_parse(r->fields_json);
	r->body = g_strdup(row->body);
	r->sha256 = g_strdup(row->sha256);
	r->sealed = g_strdup(row->sealed);
	r->opens = row->opens;
	r->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	auth_parse(r);
	if (r->signer == NULL && r->signed_by_key)
		/* withheld from the auth object: the robot keeps it aside */
		r->signer = g_strdup(row->signer);
	g_ptr_array_add(e->records, r);
}

typedef struct {
	entry *e;
	guint at;
} attachment_walk;

static void
add_attachment_row(const store_entry_attachment_row *row, gpointer data)
{
	attachment_walk *w = data;
	entry *e = w->e;
	entry_attachment *a;
	entry_record *r = NULL;

	/* records and attachments come in the same (rowid) order */
	while (w->at < e->records->len && (r = g_ptr_array_index(e->records, w->at))->rowid < row->record)
		w->at++;
	if (w->at >= e->records->len || r->rowid != row->record)
		return;
	a = g_new0(entry_attachment, 1);
	a->sha256 = g_strdup(row->sha256);
	a->filename = g_strdup(row->filename);
	a->content_type = g_strdup(row->content_type);
	a->size = row->size;
	a->salt = g_strdup(row->salt);
	g_ptr_array_add(r->attachments, a);
}

static vulnid_status
load_records(store *st, entry *e, GError **err)
{
	return store_entry_records(st, e->id, add_record_row, e, err);
}

static vulnid_status
load_attachments(store *st, entry *e, GError **err)
{
	attachment_walk w = { e, 0 };

	return store_entry_attachments(st, e->id, add_attachment_row, &w, err);
}

entry *
entry_new_empty(const char *id, const char *created)
{
	entry *e = g_new0(entry, 1);
	int year = 0;

	e->id = g_strdup(id);
	e->created = g_strdup(created);
	e->digest = g_strdup("");
	if (ids_parse(id, NULL, &year, &e->number))
		e->year = year;
	e->records = g_ptr_array_new_with_free_func(record_free);
	return e;
}

vulnid_status
entry_load(store *st, const char *id, entry **out, GError **err)
{
	g_autoptr(entry) e = g_new0(entry, 1);
	vulnid_status s;

	e->records = g_ptr_array_new_with_free_func(record_free);
	s = load_entry_row(st, id, e, err);
	if (s == VULNID_OK)
		s = load_records(st, e, err);
	if (s == VULNID_OK)
		s = load_attachments(st, e, err);
	if (s != VULNID_OK)
		return s;
	apply_releases(e);
	*out = g_steal_pointer(&e);
	return VULNID_OK;
}

void
entry_add_record(entry *e, const store_record *rec, gint64 rowid, const char *subject,
		 const char *fields_json, const char *body, const GPtrArray *attachments,
		 const char *signer)
{
	entry_record *r = g_new0(entry_record, 1);

	r->rowid = rowid;
	r->seq = rec->seq;
	r->created = g_strdup(rec->created);
	r->kind_name = g_strdup(rec->kind);
	r->kind = kind_from_str(rec->kind);
	r->author = g_strdup(rec->author);
	r->author_name = g_strdup(rec->author_name);
	r->role_name = g_strdup(rec->role);
	r->auth = g_strdup(rec->auth);
	r->sha256 = g_strdup(rec->sha256);
	r->sealed = g_strdup(rec->sealed);
	r->unsealed = rec->sealed != NULL;
	r->opens = rec->opens;
	r->fields = g_ptr_array_new_with_free_func(entry_kv_free);
	r->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	auth_parse(r);
	if (r->signer == NULL && r->signed_by_key)
		r->signer = g_strdup(signer);
	record_set_content(r, subject, fields_json, body, attachments);
	g_ptr_array_add(e->records, r);
}

vulnid_status
entry_list_ids(store *st, int year, GPtrArray **ids, GError **err)
{
	return store_entry_ids(st, year, ids, err);
}

vulnid_status
entry_ids_by_alias(store *st, const char *alias, guint max, GPtrArray **ids, GError **err)
{
	return store_entry_ids_by_alias(st, alias, max, ids, err);
}

/* ---- unsealing ------------------------------------------------------------- */

/* A withheld attachment in canonical bytes (its commitment) becomes what
 * the robot keeps of it, when the record has it (loaded from
 * withheld_attachments): the commitment names it. */
static entry_attachment *
withheld_known(const entry_record *r, entry_attachment *placeholder)
{
	if (g_strcmp0(placeholder->filename, ENTRY_ATTACHMENT_WITHHELD) != 0 || placeholder->size != 0)
		return placeholder;
	for (guint i = 0; i < r->attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(r->attachments, i);
		g_autofree char *c = a->salt != NULL ? entry_attachment_commitment(a) : NULL;

		if (c != NULL && g_strcmp0(c, placeholder->sha256) == 0) {
			entry_attachment_free(placeholder);
			return entry_attachment_copy(a);
		}
	}
	return placeholder;
}

vulnid_status
entry_record_from_canonical(entry_record *r, const char *canonical, GError **err)
{
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(GPtrArray) atts = g_ptr_array_new_with_free_func(entry_attachment_free);
	g_autofree char *check = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canonical, -1);
	g_autofree char *fields = NULL;
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;
	JsonObject *o;
	JsonNode *fn;
	JsonArray *al;

	/* The sealed text must be what the commitment says. */
	if (r->sha256 == NULL || strcmp(check, r->sha256) != 0)
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "sealed content of record %" G_GINT64_FORMAT
				   " does not match its commitment", r->seq);
	if (!json_parser_load_from_data(p, canonical, -1, NULL) ||
	    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p)))
		return vulnid_fail(err, VULNID_ERR_CORRUPT, "sealed content is not a record");
	o = json_node_get_object(json_parser_get_root(p));
	subject = member_str(o, "subject");
	body = member_str(o, "body");
	fn = json_object_get_member(o, "fields");
	if (fn != NULL && JSON_NODE_HOLDS_ARRAY(fn)) {
		g_autoptr(JsonGenerator) gen = json_generator_new();
		g_autofree char *raw = NULL;
		g_autoptr(GPtrArray) kv = NULL;

		json_generator_set_root(gen, fn);
		raw = json_generator_to_data(gen, NULL);
		kv = fields_parse(raw);
		fields = entry_fields_canonical(kv);	/* back to the form the records table uses */
	}
	al = json_object_has_member(o, "attachments") ? json_object_get_array_member(o, "attachments") : NULL;
	for (guint i = 0; al != NULL && i < json_array_get_length(al); i++) {
		JsonObject *ao = json_array_get_object_element(al, i);
		entry_attachment *a;

		if (ao == NULL)
			continue;
		a = g_new0(entry_attachment, 1);
		a->sha256 = member_str(ao, "sha256");
		a->size = json_object_get_int_member_with_default(ao, "size", 0);
		a->content_type = member_str(ao, "content_type");
		a->filename = member_str(ao, "filename");
		g_ptr_array_add(atts, withheld_known(r, a));
	}
	record_set_content(r, subject, fields, body, atts);
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

		if (r->sealed == NULL || r->disclosed || r->unsealed)
			continue;
		sealed = g_bytes_new(r->sealed, strlen(r->sealed));
		s = crypto_unseal(sealed, &clear, err);
		if (s != VULNID_OK)
			return s;
		text = g_strndup(g_bytes_get_data(clear, NULL), g_bytes_get_size(clear));
		s = entry_record_from_canonical(r, text, err);
		if (s != VULNID_OK)
			return s;
		r->unsealed = TRUE;
	}
	return VULNID_OK;
}

gboolean
entry_has_sealed(const entry *e)
{
	for (guint i = 0; i < e->records->len; i++)
		if (entry_record_sealed_at(g_ptr_array_index(e->records, i), G_MAXINT64))
			return TRUE;
	return FALSE;
}

/* ---- facts ----------------------------------------------------------------- */

static entry_claim *
claim_new(const char *key, const char *value, const entry_record *r)
{
	entry_claim *c = g_new0(entry_claim, 1);

	c->key = g_strdup(key);
	c->value = g_strdup(value);
	c->record = r;
	return c;
}

static void
claim_free(gpointer p)
{
	entry_claim *c = p;

	if (c == NULL)
		return;
	g_free(c->key);
	g_free(c->value);
	g_free(c->sha256);
	g_free(c->fields);
	if (c->mirrors != NULL)
		g_ptr_array_unref(c->mirrors);
	g_free(c);
}

static void
access_free(gpointer p)
{
	entry_access *a = p;

	g_free(a->fpr);
	g_free(a);
}

static void
claim_set(entry_claim **slot, entry_claim *c)
{
	claim_free(*slot);
	*slot = c;
}

static void
cvss_free(gpointer p)
{
	entry_cvss *c = p;

	g_free(c->type);
	g_free(c->score);
	g_free(c);
}

void
entry_facts_free(entry_facts *f)
{
	if (f == NULL)
		return;
	g_free(f->embargo);
	claim_free(f->title);
	claim_free(f->vendor);
	claim_free(f->product);
	claim_free(f->type);
	claim_free(f->vendor_contact);
	g_ptr_array_unref(f->versions);
	g_ptr_array_unref(f->references);
	g_ptr_array_unref(f->related);
	g_ptr_array_unref(f->aliases);
	g_ptr_array_unref(f->links);
	g_ptr_array_unref(f->cvss);
	claim_free(f->severity);
	claim_free(f->fixed_in);
	claim_free(f->ecosystem);
	claim_free(f->package);
	g_free(f->purl);
	claim_free(f->withdrawn);
	claim_free(f->duplicate_of);
	claim_free(f->spam);
	claim_free(f->confirmed);
	claim_free(f->vendor_status);
	g_ptr_array_unref(f->statuses);
	g_ptr_array_unref(f->proposals);
	g_ptr_array_unref(f->endorsements);
	g_ptr_array_unref(f->access);
	claim_free(f->reviewed);
	g_free(f->reviewed_product);
	g_free(f->reviewed_version);
	g_free(f->published);
	g_free(f->modified);
	g_free(f);
}

/* The claim added, or NULL when the value was there already. */
static entry_claim *
add_distinct(GPtrArray *a, const char *key, const char *value, const entry_record *r)
{
	entry_claim *c;

	for (guint i = 0; i < a->len; i++)
		if (g_ascii_strcasecmp(((entry_claim *) g_ptr_array_index(a, i))->value, value) == 0)
			return NULL;
	c = claim_new(key, value, r);
	g_ptr_array_add(a, c);
	return c;
}

/* CVSS vectors: only the characters they are made of, so that a vector
 * given in a field never carries anything else into OSV. */
static const char *
cvss_type(const char *v)
{
	gsize n = strlen(v);

	if (n < 8 || n > 200)
		return NULL;
	for (const char *p = v; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != ':' && *p != '/' && *p != '.')
			return NULL;
	if (g_str_has_prefix(v, "CVSS:3.0/") || g_str_has_prefix(v, "CVSS:3.1/"))
		return "CVSS_V3";
	if (g_str_has_prefix(v, "CVSS:4.0/"))
		return "CVSS_V4";
	if (g_str_has_prefix(v, "AV:"))
		return "CVSS_V2";
	return NULL;
}

static void
add_cvss(GPtrArray *list, const char *value)
{
	const char *type = cvss_type(value);
	entry_cvss *c;

	if (type == NULL)
		return;
	/* one vector per version: a later one replaces an earlier one */
	for (guint i = 0; i < list->len; i++) {
		c = g_ptr_array_index(list, i);
		if (strcmp(c->type, type) == 0) {
			g_free(c->score);
			c->score = g_strdup(value);
			return;
		}
	}
	c = g_new0(entry_cvss, 1);
	c->type = g_strdup(type);
	c->score = g_strdup(value);
	g_ptr_array_add(list, c);
}

static const char *const severity_words[] = { "none", "low", "medium", "moderate", "high", "critical" };

static gboolean
key_is(const char *k, const char *name)
{
	return g_ascii_strcasecmp(k, name) == 0;
}

/* Whether what a record says moves the headline: the request that made
 * the entry, roles established by a key, a token or the robot, and a
 * contributor: a key that the creator or a moderator endorsed, signing
 * where its signature acts. */
static gboolean
record_has_authority(const entry_record *r)
{
	if (r->kind == ENTRY_KIND_REQUEST)
		return r->role == ENTRY_ROLE_CREATOR;
	if (r->role == ENTRY_ROLE_CONTRIBUTOR)
		return r->how == ENTRY_HOW_KEY && r->signed_by_key && r->signer != NULL &&
		       r->auth_ignored == NULL && r->endorsed_by != NULL;
	return entry_how_verified(r->how) && r->role != ENTRY_ROLE_THIRD_PARTY;
}

const char *
entry_headline_field(const char *name)
{
	static const struct { const char *name, *canonical; } fields[] = {
		{ "Title", "Title" }, { "Vendor", "Vendor" }, { "Product", "Product" }, { "Type", "Type" },
		{ "Vendor-Contact", "Vendor-Contact" }, { "Version", "Version" }, { "Reference", "Reference" },
		{ "Mirror", "Mirror" }, { "Related", "Related" }, { "Fixed-In", "Fixed-In" },
		{ "Fixed", "Fixed-In" }, { "Ecosystem", "Ecosystem" }, { "Package", "Package" },
		{ "CVSS", "CVSS" }, { "CVSS-Vector", "CVSS" }, { "Severity", "Severity" },
	};

	for (gsize i = 0; name != NULL && i < G_N_ELEMENTS(fields); i++)
		if (g_ascii_strcasecmp(name, fields[i].name) == 0)
			return fields[i].canonical;
	return NULL;
}

/* Whether record r may set headline field key: a contributor only the
 * fields its endorsement allows. */
static gboolean
record_may_set(const entry_record *r, const char *key)
{
	const char *f;
	g_auto(GStrv) allowed = NULL;

	if (r->role != ENTRY_ROLE_CONTRIBUTOR || r->endorsed_fields == NULL)
		return TRUE;
	f = entry_headline_field(key);
	allowed = g_strsplit(r->endorsed_fields, " ", -1);
	for (char **a = allowed; f != NULL && *a != NULL; a++)
		if (strcmp(*a, f) == 0)
			return TRUE;
	return FALSE;
}

gboolean
entry_fpr_equal(const char *a, const char *b)
{
	gsize i = 0, j = 0;

	if (a == NULL || b == NULL)
		return FALSE;
	for (;;) {
		while (a[i] == ' ')
			i++;
		while (b[j] == ' ')
			j++;
		if (a[i] == '\0' || b[j] == '\0')
			return a[i] == b[j] && i > 0;
		if (g_ascii_toupper(a[i]) != g_ascii_toupper(b[j]))
			return FALSE;
		i++, j++;
	}
}

gboolean
entry_reference_parse(const char *value, char **url, char **sha256, char **of)
{
	g_auto(GStrv) w = g_strsplit_set(value != NULL ? value : "", " \t", -1);
	GPtrArray *words = g_ptr_array_new();
	gboolean ok = TRUE;

	*url = *sha256 = *of = NULL;
	for (char **p = w; *p != NULL; p++)
		if (**p != '\0')
			g_ptr_array_add(words, *p);
	if (words->len == 0) {
		g_ptr_array_unref(words);
		return FALSE;
	}
	*url = g_strdup(g_ptr_array_index(words, 0));
	for (guint i = 1; ok && i < words->len; i++) {
		const char *x = g_ptr_array_index(words, i);

		if (g_ascii_strncasecmp(x, "sha256=", 7) == 0 && *sha256 == NULL && strlen(x + 7) == 64 &&
		    strspn(x + 7, "0123456789abcdefABCDEF") == 64)
			*sha256 = g_ascii_strdown(x + 7, -1);
		else if (g_ascii_strcasecmp(x, "of") == 0 && *of == NULL && i + 1 < words->len)
			*of = g_strdup(g_ptr_array_index(words, ++i));
		else
			ok = FALSE;
	}
	g_ptr_array_unref(words);
	return ok;
}

typedef struct {
	entry_facts *f;
	const entry *e;
	gint64 as_of;
	gboolean with_sealed;
	GHashTable *seen;	/* single-valued keys already set by the current record */
	GHashTable *rating_keys;
	GHashTable *rating_addrs;
	/* While the creator's approval takes a record's proposals into the
	 * headline: the approve command's record. */
	const entry_record *approver;
} derive_ctx;

/* A claim of record r, approved by the approval being applied, if any. */
static entry_claim *
claim_of(const derive_ctx *d, const char *key, const char *value, const entry_record *r)
{
	entry_claim *c = claim_new(key, value, r);

	c->approved = d->approver;
	return c;
}

/* Single-valued headline keys: the first value inside a record counts, a
 * later record's value replaces an earlier one's. */
static void
set_single(derive_ctx *d, entry_claim **slot, const entry_kv *kv, const entry_record *r)
{
	g_autofree char *low = g_ascii_strdown(kv->key, -1);

	if (g_hash_table_contains(d->seen, low))
		return;
	g_hash_table_add(d->seen, g_steal_pointer(&low));
	claim_set(slot, claim_of(d, kv->key, kv->value, r));
}

/* A reference (URL, and the checksum given for it) in the headline; a
 * checksum named later for a URL without one is taken. */
static void
add_reference(derive_ctx *d, const char *key, const char *value, const entry_record *r)
{
	g_autofree char *url = NULL;
	g_autofree char *sha = NULL;
	g_autofree char *of = NULL;
	GPtrArray *list = d->f->references;

	if (!entry_reference_parse(value, &url, &sha, &of) || of != NULL) {
		/* not of the form URL [sha256=HEX]: kept as written */
		add_distinct(list, key, value, r);
		return;
	}
	for (guint i = 0; i < list->len; i++) {
		entry_claim *c = g_ptr_array_index(list, i);

		if (g_ascii_strcasecmp(c->value, url) != 0)
			continue;
		if (c->sha256 == NULL && sha != NULL)
			c->sha256 = g_steal_pointer(&sha);
		return;
	}
	{
		entry_claim *c = claim_of(d, key, url, r);

		c->sha256 = g_steal_pointer(&sha);
		g_ptr_array_add(list, c);
	}
}

/* A mirror of a reference of the headline: found by the checksum or the
 * URL it names.  Anyone's mirror of a reference with a checksum is taken
 * (the checksum tells whether it is one); else only with authority. */
static gboolean
add_mirror(derive_ctx *d, const char *key, const char *value, const entry_record *r, gboolean auth)
{
	g_autofree char *url = NULL;
	g_autofree char *sha = NULL;
	g_autofree char *of = NULL;

	if (!entry_reference_parse(value, &url, &sha, &of) || (sha == NULL && of == NULL))
		return FALSE;
	for (guint i = 0; i < d->f->references->len; i++) {
		entry_claim *ref = g_ptr_array_index(d->f->references, i);

		if (sha != NULL ? g_strcmp0(ref->sha256, sha) != 0 : g_ascii_strcasecmp(ref->value, of) != 0)
			continue;
		if (!auth && ref->sha256 == NULL)
			return FALSE;
		if (ref->mirrors == NULL)
			ref->mirrors = g_ptr_array_new_with_free_func(claim_free);
		for (guint k = 0; k < ref->mirrors->len; k++)
			if (g_ascii_strcasecmp(((entry_claim *) g_ptr_array_index(ref->mirrors, k))->value, url) == 0)
				return TRUE;
		g_ptr_array_add(ref->mirrors, claim_of(d, key, url, r));
		return TRUE;
	}
	return FALSE;
}

/* A field of a request, an addition or a vendor response. */
static void
derive_said(derive_ctx *d, const entry_record *r, const entry_kv *kv)
{
	entry_facts *f = d->f;
	const char *k = kv->key, *v = kv->value;
	gboolean auth = d->approver != NULL || (record_has_authority(r) && record_may_set(r, k));
	entry_claim **single = NULL;
	GPtrArray *list = NULL;

	if (key_is(k, "Status")) {
		g_autofree char *low = g_ascii_strdown(v, -1);

		if (r->kind != ENTRY_KIND_VENDOR_RESPONSE || r->role != ENTRY_ROLE_VENDOR ||
		    (strcmp(low, "confirmed") != 0 && strcmp(low, "disputed") != 0 && strcmp(low, "fixed") != 0))
			return;
		g_ptr_array_add(f->statuses, claim_new("Status", low, r));
		if (auth)
			claim_set(&f->vendor_status, claim_new("Status", low, r));
		else
			g_ptr_array_add(f->proposals, claim_new("Status", low, r));
		return;
	}
	if (r->kind == ENTRY_KIND_REQUEST) {
		if (key_is(k, "Anonymous"))
			f->anonymous = g_ascii_strcasecmp(v, "yes") == 0;
		else if (key_is(k, "Embargo")) {
			g_free(f->embargo);
			f->embargo = g_strdup(v);
		} else if (key_is(k, "Alias"))
			add_distinct(f->aliases, k, v, r);
	}
	if (key_is(k, "Title")) single = &f->title;
	else if (key_is(k, "Vendor")) single = &f->vendor;
	else if (key_is(k, "Product")) single = &f->product;
	else if (key_is(k, "Type")) single = &f->type;
	else if (key_is(k, "Vendor-Contact")) single = &f->vendor_contact;
	else if (key_is(k, "Fixed") || key_is(k, "Fixed-In")) single = &f->fixed_in;
	else if (key_is(k, "Ecosystem")) single = &f->ecosystem;
	else if (key_is(k, "Package")) single = &f->package;
	else if (key_is(k, "Version")) list = f->versions;
	else if (key_is(k, "Reference")) list = f->references;
	else if (key_is(k, "Related")) list = f->related;
	else if (key_is(k, "Mirror")) {
		if (!add_mirror(d, k, v, r, auth))
			g_ptr_array_add(f->proposals, claim_new(k, v, r));	/* names no reference */
		return;
	} else if (!key_is(k, "CVSS") && !key_is(k, "CVSS-Vector") && !key_is(k, "Severity"))
		return;		/* kept in the record; the headline has no place for it */
	if (!auth) {
		g_ptr_array_add(f->proposals, claim_new(k, v, r));
		return;
	}
	if (single != NULL)
		set_single(d, single, kv, r);
	else if (list == f->references)
		add_reference(d, k, v, r);
	else if (list != NULL) {
		entry_claim *c = add_distinct(list, k, v, r);

		if (c != NULL)
			c->approved = d->approver;
	}
	else {
		g_autofree char *low = g_ascii_strdown(v, -1);

		add_cvss(f->cvss, v);
		for (gsize w = 0; w < G_N_ELEMENTS(severity_words); w++)
			if (strcmp(low, severity_words[w]) == 0) {
				entry_kv sev = { "Severity", low };

				set_single(d, &f->severity, &sev, r);
			}
	}
}

static void derive_said(derive_ctx *d, const entry_record *r, const entry_kv *kv);
static void derive_command(derive_ctx *d, const entry_record *r, const entry_kv *kv);

/* The creator approves record t: its proposals (unverified values not in
 * the headline) enter the headline now, each marked with the approval;
 * vendor positions stay the vendor's to state. */
static void
derive_approve(derive_ctx *d, const entry_record *approver, const entry_record *t)
{
	entry_facts *f = d->f;
	g_autoptr(GPtrArray) taken = g_ptr_array_new_with_free_func(claim_free);
	GHashTable *seen = d->seen;

	if (t == NULL || t->seq >= approver->seq || t->rowid > d->as_of ||
	    (entry_record_sealed_at(t, d->as_of) && !(d->with_sealed && t->unsealed)))
		return;
	for (guint i = 0; i < f->proposals->len;) {
		entry_claim *c = g_ptr_array_index(f->proposals, i);

		if (c->record == t && !key_is(c->key, "Status"))
			g_ptr_array_add(taken, g_ptr_array_steal_index(f->proposals, i));
		else
			i++;
	}
	d->approver = approver;
	d->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < taken->len; i++) {
		const entry_claim *c = g_ptr_array_index(taken, i);
		entry_kv kv = { c->key, c->value };

		if (t->kind == ENTRY_KIND_COMMAND)
			derive_command(d, t, &kv);
		else
			derive_said(d, t, &kv);
	}
	g_hash_table_unref(d->seen);
	d->seen = seen;
	d->approver = NULL;
}

static void
endorsement_remove(entry_facts *f, const char *fpr)
{
	for (guint i = 0; i < f->endorsements->len; i++)
		if (entry_fpr_equal(((entry_claim *) g_ptr_array_index(f->endorsements, i))->value, fpr)) {
			g_ptr_array_remove_index(f->endorsements, i);
			return;
		}
}

static entry_access *
access_get(entry_facts *f, const char *fpr, gboolean create)
{
	entry_access *a;

	for (guint i = 0; i < f->access->len; i++) {
		a = g_ptr_array_index(f->access, i);
		if (entry_fpr_equal(a->fpr, fpr))
			return a;
	}
	if (!create)
		return NULL;
	a = g_new0(entry_access, 1);
	a->fpr = g_ascii_strup(fpr, -1);
	g_ptr_array_add(f->access, a);
	return a;
}

const entry_access *
entry_facts_access(const entry_facts *f, const char *fpr)
{
	return access_get((entry_facts *) f, fpr, FALSE);
}

/* A delivery record: the robot sent sealed records to a key given access. */
static void
derive_delivery(derive_ctx *d, const entry_record *r, const entry_kv *kv)
{
	entry_access *a;

	if (r->role != ENTRY_ROLE_ROBOT || !key_is(kv->key, "Delivered-To-Key"))
		return;
	a = access_get(d->f, kv->value, FALSE);
	if (a != NULL && a->granted != NULL) {
		a->delivered = r;
		a->deliveries++;
	}
}

/* A field of a command record: what the command decided.  Intake allowed
 * the command; each mark is taken again only from the role that may set
 * it, established by key or token. */
static void
derive_command(derive_ctx *d, const entry_record *r, const entry_kv *kv)
{
	entry_facts *f = d->f;
	const char *k = kv->key, *v = kv->value;
	gboolean verified = entry_how_verified(r->how);
	gboolean creator = verified && r->role == ENTRY_ROLE_CREATOR;
	gboolean moderator = verified && (r->role == ENTRY_ROLE_MODERATOR || r->role == ENTRY_ROLE_OPERATOR);
	gboolean no = g_ascii_strcasecmp(v, "no") == 0 || *v == '\0';

	if (key_is(k, "Rating")) {
		gint64 n = g_ascii_strtoll(v, NULL, 10);

		if (n < 0 || n > 10)
			return;
		/* a key counts once, and only where its signature acts */
		if (r->signed_by_key && r->signer != NULL && r->auth_ignored == NULL)
			g_hash_table_insert(d->rating_keys, g_ascii_strup(r->signer, -1), GINT_TO_POINTER((int) n + 1));
		else if (r->author != NULL)
			g_hash_table_insert(d->rating_addrs, g_ascii_strdown(r->author, -1), GINT_TO_POINTER((int) n + 1));
		return;
	}
	if (key_is(k, "Embargo") && creator) {
		g_free(f->embargo);
		f->embargo = g_strdup(v);
		if (no)
			f->marks |= ENTRY_MARK_RELEASED;
	} else if (key_is(k, "Withdrawn") && creator) {
		claim_set(&f->withdrawn, no ? NULL : claim_new(k, v, r));
	} else if (key_is(k, "Confirmed") && creator) {
		claim_set(&f->confirmed, claim_new(k, v, r));
	} else if (key_is(k, "Alias")) {
		/* anyone may say it; it counts when a verified role (or an
		 * endorsed contributor) said it, or the creator approved it */
		if (d->approver != NULL || record_has_authority(r)) {
			entry_claim *c = add_distinct(f->aliases, k, v, r);

			if (c != NULL)
				c->approved = d->approver;
		} else
			g_ptr_array_add(f->proposals, claim_new(k, v, r));
	} else if (key_is(k, "Approve") && creator) {
		derive_approve(d, r, entry_record_by_seq(d->e, g_ascii_strtoll(v, NULL, 10)));
	} else if (key_is(k, "Approve-Key") && creator) {
		for (guint i = 0; i < d->e->records->len; i++) {
			const entry_record *t = g_ptr_array_index(d->e->records, i);

			if (t->signed_by_key && t->auth_ignored == NULL && entry_fpr_equal(t->signer, v))
				derive_approve(d, r, t);
		}
	} else if (key_is(k, "Endorse") && (creator || moderator)) {
		endorsement_remove(f, v);
		g_ptr_array_add(f->endorsements, claim_new(k, v, r));
	} else if (key_is(k, "Endorse-Fields") && (creator || moderator) && f->endorsements->len > 0) {
		entry_claim *c = g_ptr_array_index(f->endorsements, f->endorsements->len - 1);

		if (c->record == r && c->fields == NULL)
			c->fields = g_strdup(v);
	} else if (key_is(k, "Unendorse") && (creator || moderator)) {
		endorsement_remove(f, v);
	} else if (key_is(k, "Reviewed") && moderator) {
		claim_set(&f->reviewed, claim_new(k, v, r));
		g_clear_pointer(&f->reviewed_product, g_free);
		g_clear_pointer(&f->reviewed_version, g_free);
	} else if ((key_is(k, "Reviewed-Product") || key_is(k, "Reviewed-Version")) && moderator &&
		   f->reviewed != NULL && f->reviewed->record == r) {
		char **slot = key_is(k, "Reviewed-Product") ? &f->reviewed_product : &f->reviewed_version;

		g_free(*slot);
		*slot = g_strdup(v);
	} else if (key_is(k, "Access-Request")) {
		/* a key asks for itself, where its signature acts */
		if (r->signed_by_key && r->auth_ignored == NULL && entry_fpr_equal(r->signer, v)) {
			entry_access *a = access_get(f, v, TRUE);

			if (a->requested == NULL)
				a->requested = r;
		}
	} else if (key_is(k, "Access-Grant") && (creator || moderator)) {
		entry_access *a = access_get(f, v, FALSE);

		if (a != NULL && a->requested != NULL && a->granted == NULL)
			a->granted = r;
	} else if (key_is(k, "Duplicate-Of") && moderator) {
		claim_set(&f->duplicate_of, no ? NULL : claim_new(k, v, r));
	} else if (key_is(k, "Spam") && moderator) {
		claim_set(&f->spam, g_ascii_strcasecmp(v, "yes") == 0 ? claim_new(k, v, r) : NULL);
	} else if (key_is(k, "Link") && moderator) {
		add_distinct(f->links, k, v, r);
	}
}

static void
average(GHashTable *h, guint *n, double *avg)
{
	GHashTableIter it;
	gpointer k, v;
	double sum = 0;

	*n = g_hash_table_size(h);
	g_hash_table_iter_init(&it, h);
	while (g_hash_table_iter_next(&it, &k, &v))
		sum += GPOINTER_TO_INT(v) - 1;
	*avg = *n > 0 ? sum / *n : 0;
}

static gboolean
record_says_something(const entry_record *r)
{
	return (r->body != NULL && *r->body != '\0') || r->fields->len > 0 || r->attachments->len > 0;
}

/* The state and the dates, after the fields. */
static void
derive_state(entry_facts *f, const entry *e, gint64 as_of, gboolean said, GDateTime *now)
{
	gboolean sealed = FALSE;

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (r->rowid > as_of)
			break;
		sealed |= entry_record_sealed_at(r, as_of);
		if (r->kind == ENTRY_KIND_RELEASE) {
			f->marks |= ENTRY_MARK_RELEASED;
			/* a release of the first record is when it was published */
			if (r->opens == 1 && g_strcmp0(f->published, e->created) == 0) {
				g_free(f->published);
				f->published = g_strdup(r->created);
			}
		}
	}
	if (f->embargo == NULL && e->embargo != NULL)
		f->embargo = g_strdup(e->embargo);	/* sealed: the entries row has it */
	if (sealed)
		f->state = ENTRY_EMBARGOED;
	else if (now != NULL && f->embargo != NULL && !(f->marks & ENTRY_MARK_RELEASED) &&
		 g_ascii_strcasecmp(f->embargo, "no") != 0) {
		/* Nothing sealed (an entry from before sealing): the date still
		 * holds the details back. */
		g_autofree char *today = g_date_time_format(now, "%Y-%m-%d");

		f->state = g_ascii_strcasecmp(f->embargo, "yes") == 0 || strcmp(f->embargo, today) > 0
			   ? ENTRY_EMBARGOED : said ? ENTRY_PUBLIC : ENTRY_RESERVED;
	} else
		f->state = said ? ENTRY_PUBLIC : ENTRY_RESERVED;
	if (f->withdrawn != NULL)
		f->marks |= ENTRY_MARK_WITHDRAWN;
	if (f->duplicate_of != NULL)
		f->marks |= ENTRY_MARK_DUPLICATE;
	if (f->spam != NULL)
		f->marks |= ENTRY_MARK_SPAM;
	if (f->confirmed != NULL)
		f->marks |= ENTRY_MARK_CONFIRMED;
	if (f->reviewed != NULL)
		f->marks |= ENTRY_MARK_REVIEWED;
}

entry_facts *
entry_facts_derive(const entry *e, gint64 as_of, gboolean with_sealed, GDateTime *now)
{
	entry_facts *f = g_new0(entry_facts, 1);
	derive_ctx d = { f, e, as_of, with_sealed, NULL, NULL, NULL, NULL };
	gboolean said = FALSE;

	f->versions = g_ptr_array_new_with_free_func(claim_free);
	f->references = g_ptr_array_new_with_free_func(claim_free);
	f->related = g_ptr_array_new_with_free_func(claim_free);
	f->aliases = g_ptr_array_new_with_free_func(claim_free);
	f->links = g_ptr_array_new_with_free_func(claim_free);
	f->cvss = g_ptr_array_new_with_free_func(cvss_free);
	f->statuses = g_ptr_array_new_with_free_func(claim_free);
	f->proposals = g_ptr_array_new_with_free_func(claim_free);
	f->endorsements = g_ptr_array_new_with_free_func(claim_free);
	f->access = g_ptr_array_new_with_free_func(access_free);
	f->published = g_strdup(e->created);
	f->modified = g_strdup(e->created);
	d.rating_keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	d.rating_addrs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		gboolean hidden;

		if (r->rowid > as_of)
			break;
		if (g_strcmp0(r->created, f->modified) > 0) {
			g_free(f->modified);
			f->modified = g_strdup(r->created);
		}
		/* A release says nothing of its own: what it disclosed is read
		 * at the record it disclosed, in that record's place. */
		if (r->kind == ENTRY_KIND_RELEASE || r->kind == ENTRY_KIND_OTHER)
			continue;
		hidden = entry_record_sealed_at(r, as_of) && !(with_sealed && r->unsealed);
		if (r->seq == 1)
			f->content_known = !hidden;
		if (hidden) {
			said = TRUE;
			continue;
		}
		/* a delivery says who was sent what, nothing about the entry */
		said |= r->kind != ENTRY_KIND_DELIVERY && record_says_something(r);
		d.seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint j = 0; j < r->fields->len; j++) {
			const entry_kv *kv = g_ptr_array_index(r->fields, j);

			if (r->kind == ENTRY_KIND_COMMAND)
				derive_command(&d, r, kv);
			else if (r->kind == ENTRY_KIND_DELIVERY)
				derive_delivery(&d, r, kv);
			else
				derive_said(&d, r, kv);
		}
		g_clear_pointer(&d.seen, g_hash_table_unref);
	}
	average(d.rating_keys, &f->rating_keys, &f->rating_keys_avg);
	average(d.rating_addrs, &f->rating_unsigned, &f->rating_unsigned_avg);
	g_hash_table_unref(d.rating_keys);
	g_hash_table_unref(d.rating_addrs);
	derive_state(f, e, as_of, said, now);
	return f;
}

entry_facts *
entry_facts_now(const entry *e)
{
	g_autoptr(GDateTime) now = store_now_datetime();

	return entry_facts_derive(e, G_MAXINT64, TRUE, now);
}

gboolean
entry_embargoed(const entry *e)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);

	return f->state == ENTRY_EMBARGOED;
}
