/* lifecycle-view.c - what an entry's later records say (withdrawn,
 * duplicate, spam, aliases, links, the vendor's position, ratings, the
 * embargo in force), derived from the records each time, and the public
 * text of an entry for mails */
#include "autoconfig.h"

#include <string.h>
#include <json-glib/json-glib.h>

#include "lifecycle.h"
#include "store.h"
#include "text.h"

/* Bounds on the text of a lookup reply. */
#define VIEW_MAX_RECORDS 50
#define VIEW_MAX_BODY_LINES 60
#define VIEW_MAX_BODY_BYTES 8000

static void
mark_free(gpointer p)
{
	lifecycle_mark *m = p;

	if (m == NULL)
		return;
	g_free(m->value);
	g_free(m->created);
	g_free(m->role);
	g_free(m->how);
	g_free(m->author);
	g_free(m);
}

void
lifecycle_view_free(lifecycle_view *v)
{
	if (v == NULL)
		return;
	g_free(v->embargo);
	mark_free(v->withdrawn);
	mark_free(v->duplicate_of);
	mark_free(v->spam);
	mark_free(v->confirmed);
	mark_free(v->vendor_status);
	g_ptr_array_unref(v->status_history);
	g_ptr_array_unref(v->aliases);
	g_ptr_array_unref(v->links);
	g_free(v);
}

char *
lifecycle_auth_member(const char *auth_json, const char *member)
{
	g_autoptr(JsonParser) p = json_parser_new();
	JsonNode *root;
	JsonObject *o;
	JsonNode *n;

	if (auth_json == NULL || !json_parser_load_from_data(p, auth_json, -1, NULL))
		return NULL;
	root = json_parser_get_root(p);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
		return NULL;
	o = json_node_get_object(root);
	n = json_object_get_member(o, member);
	if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
		return NULL;
	return g_strdup(json_node_get_string(n));
}

const char *
lifecycle_how_phrase(const char *how)
{
	if (how == NULL)
		return "not authenticated";
	if (strcmp(how, "key") == 0)
		return "verified by OpenPGP signature";
	if (strcmp(how, "token") == 0)
		return "verified by token";
	if (strcmp(how, "domain") == 0)
		return "unverified: sent from the vendor's domain";
	if (strcmp(how, "contact") == 0)
		return "unverified: sent from the vendor's notified address";
	if (strcmp(how, "address") == 0)
		return "unverified: sent from the creator's address";
	if (strcmp(how, "address-dmarc") == 0)
		return "address (DMARC pass): sent from the creator's address, which its domain authenticated";
	return "not authenticated";
}

static gboolean
role_is(const entry_record *r, const char *role)
{
	return r->role != NULL && strcmp(r->role, role) == 0;
}

static gboolean
kind_is(const entry_record *r, const char *kind)
{
	return r->kind != NULL && strcmp(r->kind, kind) == 0;
}

/* Whether a record's role was established by a key or a token. */
static gboolean
record_verified(const entry_record *r)
{
	g_autofree char *how = lifecycle_auth_member(r->auth, "how");

	return how != NULL && (strcmp(how, "key") == 0 || strcmp(how, "token") == 0);
}

static lifecycle_mark *
mark_new(const entry_record *r, const char *value, gboolean anonymous)
{
	lifecycle_mark *m = g_new0(lifecycle_mark, 1);

	m->value = g_strdup(value);
	m->seq = r->seq;
	m->created = g_strdup(r->created);
	m->role = g_strdup(r->role);
	m->how = lifecycle_auth_member(r->auth, "how");
	if (r->author != NULL && !(anonymous && role_is(r, "creator")))
		m->author = g_strdup(r->author);
	return m;
}

static void
set_mark(lifecycle_mark **slot, lifecycle_mark *m)
{
	mark_free(*slot);
	*slot = m;
}

static void
add_rating(GHashTable *h, const char *key, int value)
{
	g_hash_table_insert(h, g_ascii_strdown(key, -1), GINT_TO_POINTER(value + 1));
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

lifecycle_view *
lifecycle_view_new(const entry *e, GDateTime *now)
{
	lifecycle_view *v = g_new0(lifecycle_view, 1);
	g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) by_addr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *today = g_date_time_format(now, "%Y-%m-%d");

	v->status_history = g_ptr_array_new_with_free_func(mark_free);
	v->aliases = g_ptr_array_new_with_free_func(mark_free);
	v->links = g_ptr_array_new_with_free_func(mark_free);
	v->anonymous = entry_is_anonymous(e);

	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autoptr(JsonParser) p = json_parser_new();
		JsonArray *a = NULL;
		const char *rating_value = NULL;

		if (r->opens > 0)
			v->released = TRUE;
		if (r->fields != NULL && json_parser_load_from_data(p, r->fields, -1, NULL) &&
		    JSON_NODE_HOLDS_ARRAY(json_parser_get_root(p)))
			a = json_node_get_array(json_parser_get_root(p));
		for (guint j = 0; a != NULL && j < json_array_get_length(a); j++) {
			JsonArray *kv = json_array_get_array_element(a, j);
			const char *k, *val;

			if (kv == NULL || json_array_get_length(kv) != 2)
				continue;
			k = json_array_get_string_element(kv, 0);
			val = json_array_get_string_element(kv, 1);
			if (k == NULL || val == NULL)
				continue;
			/* Each mark counts only from the record kind and role
			 * that may set it: a third party writing "Withdrawn:"
			 * in an addition withdraws nothing. */
			if (g_ascii_strcasecmp(k, "Embargo") == 0 &&
			    (i == 0 || (kind_is(r, "command") && role_is(r, "creator")))) {
				g_free(v->embargo);
				v->embargo = g_strdup(val);
				if (i > 0 && g_ascii_strcasecmp(val, "no") == 0)
					v->released = TRUE;
			} else if (!kind_is(r, "command") || i == 0) {
				if (g_ascii_strcasecmp(k, "Status") == 0 && kind_is(r, "vendor-response") &&
				    role_is(r, "vendor")) {
					set_mark(&v->vendor_status, mark_new(r, val, v->anonymous));
					g_ptr_array_add(v->status_history, mark_new(r, val, v->anonymous));
				}
			} else if (g_ascii_strcasecmp(k, "Withdrawn") == 0 && role_is(r, "creator") &&
				   record_verified(r)) {
				set_mark(&v->withdrawn, mark_new(r, val, v->anonymous));
			} else if (g_ascii_strcasecmp(k, "Confirmed") == 0 && role_is(r, "creator")) {
				set_mark(&v->confirmed, mark_new(r, val, v->anonymous));
			} else if (g_ascii_strcasecmp(k, "Duplicate-Of") == 0 && role_is(r, "moderator")) {
				set_mark(&v->duplicate_of, mark_new(r, val, v->anonymous));
			} else if (g_ascii_strcasecmp(k, "Spam") == 0 && role_is(r, "moderator")) {
				if (g_ascii_strcasecmp(val, "yes") == 0)
					set_mark(&v->spam, mark_new(r, val, v->anonymous));
				else
					g_clear_pointer(&v->spam, mark_free);
			} else if (g_ascii_strcasecmp(k, "Link") == 0 && role_is(r, "moderator")) {
				gboolean dup = FALSE;

				for (guint m = 0; m < v->links->len; m++)
					dup |= g_ascii_strcasecmp(((lifecycle_mark *) g_ptr_array_index(v->links, m))->value,
								  val) == 0;
				if (!dup)
					g_ptr_array_add(v->links, mark_new(r, val, v->anonymous));
			} else if (g_ascii_strcasecmp(k, "Alias") == 0) {
				gboolean dup = FALSE;

				for (guint m = 0; m < v->aliases->len; m++)
					dup |= g_ascii_strcasecmp(((lifecycle_mark *) g_ptr_array_index(v->aliases, m))->value,
								  val) == 0;
				if (!dup)
					g_ptr_array_add(v->aliases, mark_new(r, val, v->anonymous));
			} else if (g_ascii_strcasecmp(k, "Rating") == 0) {
				rating_value = val;
			}
		}
		if (rating_value != NULL) {
			/* Counted once per key: a later rating by the same key
			 * replaces the earlier one.  Unsigned ratings are kept
			 * apart, once per address, as unverified. */
			g_autofree char *fpr = lifecycle_auth_member(r->auth, "fingerprint");
			int n = (int) g_ascii_strtoll(rating_value, NULL, 10);

			if (n < 0 || n > 10)
				continue;
			if (fpr != NULL)
				add_rating(by_key, fpr, n);
			else if (r->author != NULL)
				add_rating(by_addr, r->author, n);
		}
	}
	if (v->embargo == NULL && e->embargo != NULL)
		v->embargo = g_strdup(e->embargo);	/* sealed: the entries row has it */
	average(by_key, &v->rating_keys, &v->rating_keys_avg);
	average(by_addr, &v->rating_unsigned, &v->rating_unsigned_avg);

	if (strcmp(entry_state(e), "embargoed") == 0)
		v->embargoed = TRUE;
	else if (v->embargo != NULL && !v->released &&
		 g_ascii_strcasecmp(v->embargo, "no") != 0 &&
		 (g_ascii_strcasecmp(v->embargo, "yes") == 0 || strcmp(v->embargo, today) > 0))
		/* Not sealed (an entry from before sealing, or one whose
		 * sealing is pending): the date still holds the details back
		 * from everything this module sends. */
		v->embargoed = TRUE;
	return v;
}

gboolean
lifecycle_entry_withheld(const entry *e)
{
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autoptr(lifecycle_view) v = lifecycle_view_new(e, now);

	return v->spam != NULL;
}

/* Append s to out with controls masked (as entry_to_text does). */
static void
append_safe(GString *out, const char *s)
{
	g_autofree char *m = text_mask_controls(s != NULL ? s : "");

	g_string_append(out, m);
}

static void
line(GString *out, const char *label, const char *value)
{
	g_string_append_printf(out, "  %-15s ", label);
	append_safe(out, value);
	g_string_append_c(out, '\n');
}

static const char *
role_name(const char *role)
{
	if (role == NULL)
		return "unknown";
	if (strcmp(role, "third-party") == 0)
		return "third party";
	return role;
}

static void
append_body(GString *out, const char *body, const char *indent)
{
	g_auto(GStrv) lines = g_strsplit(body != NULL ? body : "", "\n", -1);
	gsize bytes = 0;
	guint n = 0;

	for (char **l = lines; *l != NULL; l++, n++) {
		if (n >= VIEW_MAX_BODY_LINES || bytes > VIEW_MAX_BODY_BYTES) {
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

char *
lifecycle_record_text(const entry *e, const entry_record *r, gboolean with_body)
{
	GString *out = g_string_new(NULL);
	gboolean anonymous = entry_is_anonymous(e);
	g_autofree char *how = lifecycle_auth_member(r->auth, "how");
	g_autoptr(JsonParser) p = json_parser_new();
	JsonArray *a = NULL;

	g_string_append_printf(out, "record %" G_GINT64_FORMAT ", %s: %s by the %s", r->seq,
			       r->created, r->kind, role_name(r->role));
	if (r->seq > 1 || how != NULL)
		g_string_append_printf(out, " (%s)", lifecycle_how_phrase(how));
	if (r->author != NULL && !(anonymous && role_is(r, "creator"))) {
		g_string_append(out, ", ");
		append_safe(out, r->author);
	} else if (anonymous && role_is(r, "creator"))
		g_string_append(out, ", anonymous");
	g_string_append_c(out, '\n');
	if (r->sealed != NULL && !r->disclosed) {
		g_string_append(out, "  (sealed until the embargo ends)\n");
		return g_string_free(out, FALSE);
	}
	if (r->fields != NULL && json_parser_load_from_data(p, r->fields, -1, NULL) &&
	    JSON_NODE_HOLDS_ARRAY(json_parser_get_root(p)))
		a = json_node_get_array(json_parser_get_root(p));
	for (guint j = 0; a != NULL && j < json_array_get_length(a); j++) {
		JsonArray *kv = json_array_get_array_element(a, j);

		if (kv == NULL || json_array_get_length(kv) != 2)
			continue;
		g_string_append(out, "  ");
		append_safe(out, json_array_get_string_element(kv, 0));
		g_string_append(out, ": ");
		append_safe(out, json_array_get_string_element(kv, 1));
		g_string_append_c(out, '\n');
	}
	if (with_body && r->body != NULL && *r->body != '\0') {
		g_string_append_c(out, '\n');
		append_body(out, r->body, "    ");
	}
	for (guint j = 0; j < r->attachments->len; j++) {
		const entry_attachment *at = g_ptr_array_index(r->attachments, j);

		g_string_append_printf(out, "  attachment: %s, %" G_GINT64_FORMAT " bytes, sha256 %s, ",
				       at->content_type, at->size, at->sha256);
		append_safe(out, at->filename != NULL ? at->filename : "(no name)");
		g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}

static void
mark_line(GString *out, const char *label, const lifecycle_mark *m, const char *extra)
{
	g_autoptr(GString) s = g_string_new(m->value);

	g_string_append_printf(s, " (record %" G_GINT64_FORMAT ", %s", m->seq, role_name(m->role));
	if (m->author != NULL)
		g_string_append_printf(s, " %s", m->author);
	if (m->how != NULL)
		g_string_append_printf(s, ", %s", lifecycle_how_phrase(m->how));
	g_string_append_printf(s, "%s)", extra != NULL ? extra : "");
	line(out, label, s->str);
}

char *
lifecycle_public_text(const entry *e, GDateTime *now)
{
	GString *out = g_string_new(NULL);
	g_autoptr(lifecycle_view) v = lifecycle_view_new(e, now);
	g_autofree char *title = entry_title(e);
	static const char *const single[] = { "Vendor", "Product", "Type" };

	g_string_append(out, e->id);
	if (v->spam != NULL) {
		g_string_append(out, "\n");
		line(out, "state:", "withheld: a moderator marked it as spam");
		line(out, "created:", e->created);
		line(out, "digest:", e->digest);
		return g_string_free(out, FALSE);
	}
	if (v->embargoed) {
		/* The stub: what may be known before the embargo ends. */
		g_autofree char *state = g_strdup_printf("embargoed until %s",
							 v->embargo != NULL && g_ascii_strcasecmp(v->embargo, "yes") != 0
							 ? v->embargo : "released by the researcher");

		g_string_append(out, "\n");
		line(out, "state:", state);
		line(out, "created:", e->created);
		line(out, "commitment:", e->digest);
		g_string_append(out, "\n  The details are withheld until the embargo ends; the commitment is\n"
				     "  the SHA-256 of the sealed first record.\n");
		return g_string_free(out, FALSE);
	}
	g_string_append(out, ": ");
	append_safe(out, title);
	g_string_append_c(out, '\n');
	if (v->withdrawn != NULL) {
		g_autofree char *w = g_strdup_printf("WITHDRAWN (rejected): %s", v->withdrawn->value);

		line(out, "state:", w);
	} else
		line(out, "state:", entry_state(e));
	line(out, "created:", e->created);
	line(out, "digest:", e->digest);
	for (gsize i = 0; i < G_N_ELEMENTS(single); i++) {
		g_autofree char *val = entry_field(e, single[i]);
		g_autofree char *label = g_strdup_printf("%s:", single[i]);
		g_autofree char *lower = g_ascii_strdown(label, -1);

		if (val != NULL)
			line(out, lower, val);
	}
	{
		static const char *const lists[][2] = { { "Version", "version:" }, { "Reference", "reference:" } };

		for (gsize k = 0; k < G_N_ELEMENTS(lists); k++) {
			g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);

			for (guint i = 0; i < e->records->len; i++) {
				const entry_record *r = g_ptr_array_index(e->records, i);
				g_autoptr(JsonParser) p = json_parser_new();
				JsonArray *a;

				if (r->fields == NULL || !json_parser_load_from_data(p, r->fields, -1, NULL) ||
				    !JSON_NODE_HOLDS_ARRAY(json_parser_get_root(p)))
					continue;
				a = json_node_get_array(json_parser_get_root(p));
				for (guint j = 0; j < json_array_get_length(a) && seen->len < 100; j++) {
					JsonArray *kv = json_array_get_array_element(a, j);
					const char *key, *val;
					gboolean dup = FALSE;

					if (kv == NULL || json_array_get_length(kv) != 2)
						continue;
					key = json_array_get_string_element(kv, 0);
					val = json_array_get_string_element(kv, 1);
					if (key == NULL || val == NULL || g_ascii_strcasecmp(key, lists[k][0]) != 0)
						continue;
					for (guint m = 0; m < seen->len; m++)
						dup |= strcmp(g_ptr_array_index(seen, m), val) == 0;
					if (dup)
						continue;
					g_ptr_array_add(seen, g_strdup(val));
					line(out, lists[k][1], val);
				}
			}
		}
	}
	for (guint i = 0; i < v->aliases->len; i++)
		mark_line(out, "alias:", g_ptr_array_index(v->aliases, i), NULL);
	if (v->vendor_status != NULL) {
		g_autofree char *hist = v->status_history->len > 1
			? g_strdup_printf("; %u statements in all", v->status_history->len) : NULL;

		mark_line(out, "vendor says:", v->vendor_status, hist);
	}
	if (v->duplicate_of != NULL)
		mark_line(out, "duplicate of:", v->duplicate_of, NULL);
	for (guint i = 0; i < v->links->len; i++)
		mark_line(out, "linked to:", g_ptr_array_index(v->links, i), NULL);
	if (v->rating_keys > 0 || v->rating_unsigned > 0) {
		g_autoptr(GString) s = g_string_new(NULL);

		if (v->rating_keys > 0)
			g_string_append_printf(s, "%.1f from %u signed key%s", v->rating_keys_avg, v->rating_keys,
					       v->rating_keys == 1 ? "" : "s");
		else
			g_string_append(s, "no signed ratings");
		if (v->rating_unsigned > 0)
			g_string_append_printf(s, "; unverified: %.1f from %u address%s", v->rating_unsigned_avg,
					       v->rating_unsigned, v->rating_unsigned == 1 ? "" : "es");
		line(out, "rating:", s->str);
	}
	g_string_append_printf(out, "\n  %u record%s:\n\n", e->records->len, e->records->len == 1 ? "" : "s");
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		g_autofree char *t = NULL;
		g_auto(GStrv) lines = NULL;

		if (i >= VIEW_MAX_RECORDS) {
			g_string_append_printf(out, "  [... %u more records]\n", e->records->len - i);
			break;
		}
		t = lifecycle_record_text(e, r, TRUE);
		if (i > 0)
			g_string_append_c(out, '\n');
		lines = g_strsplit(t, "\n", -1);
		for (char **l = lines; *l != NULL && (**l != '\0' || l[1] != NULL); l++)
			g_string_append_printf(out, "%s%s\n", **l ? "  " : "", *l);
	}
	return g_string_free(out, FALSE);
}
