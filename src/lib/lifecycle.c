/* lifecycle.c - mail about existing entries (see lifecycle.h): routing,
 * roles, tokens, additions and vendor responses, commands, relaying for
 * anonymous researchers, subscriptions, rate limits
 *
 * Everything here runs inside the intake transaction of one mail and only
 * appends: records, tokens rows, outbox items and audit events. */
#include "autoconfig.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "canonjson.h"
#include "commands.h"
#include "crypto.h"
#include "disclosure.h"
#include "embargo.h"
#include "entry.h"
#include "ids.h"
#include "lifecycle.h"
#include "notify.h"
#include "outbox.h"
#include "random.h"
#include "render.h"
#include "policy.h"
#include "ratelimit.h"
#include "request.h"
#include "template.h"
#include "text.h"
#include "tokens.h"
#include "vendor.h"

#define MAX_SCRUB 200		/* token lookups per mail */
#define MAX_SUBSCRIBERS 200	/* mails queued per record */
#define MAX_SUBSCRIPTION_ROWS 5000
#define MAX_VENDOR_ADDRESSES 10
#define MAX_LOOKUP_TEXT (64 * 1024)
#define MAX_LOOKUPS 5
#define MAX_DUPLICATE_CHAIN 10
#define MAX_ALIAS_MATCHES 5
#define MAX_NAMED_ENTRIES 20	/* identifiers read from a text for lifecycle_text_other_entry() */

/* ---- configuration ([lifecycle]; read from the key file with defaults
 * until config.c knows the keys) ------------------------------------------ */

static char *
conf_string(const vulnid_config *cfg, const char *key, const char *def)
{
	char *v = cfg->keyfile != NULL ? g_key_file_get_string(cfg->keyfile, "lifecycle", key, NULL) : NULL;

	return v != NULL ? g_strstrip(v) : g_strdup(def);
}

gboolean
lifecycle_confirm_unsigned(const vulnid_config *cfg)
{
	g_autofree char *v = conf_string(cfg, "confirm_unsigned", "no");

	return g_ascii_strcasecmp(v, "yes") == 0 || g_ascii_strcasecmp(v, "true") == 0;
}

/* A fingerprint without spaces, upper case, for comparing. */
static char *
fpr_norm(const char *f)
{
	GString *s = g_string_new(NULL);

	for (; f != NULL && *f; f++)
		if (!g_ascii_isspace(*f))
			g_string_append_c(s, g_ascii_toupper(*f));
	return g_string_free(s, FALSE);
}

static gboolean
fpr_equal(const char *a, const char *b)
{
	g_autofree char *x = fpr_norm(a);
	g_autofree char *y = fpr_norm(b);

	return *x != '\0' && strcmp(x, y) == 0;
}

static gboolean
is_moderator(const vulnid_config *cfg, const char *fpr)
{
	g_autofree char *list = conf_string(cfg, "moderators", "");
	g_auto(GStrv) parts = g_strsplit_set(list, ",;", -1);

	if (fpr == NULL)
		return FALSE;
	for (char **p = parts; *p != NULL; p++)
		if (fpr_equal(*p, fpr))
			return TRUE;
	return FALSE;
}

/* ---- small helpers --------------------------------------------------------- */

static char *
entry_address(const vulnid_config *cfg, const char *id)
{
	return g_strdup_printf("%s+%s@%s", cfg->request_local, id, cfg->domain);
}

static const char *
sender_of(const mail_ctx *c)
{
	return c->m->from_addr != NULL ? c->m->from_addr : c->envelope_sender;
}

/* Where replies to the sender go (as mail_reply decides). */
static const char *
reply_address_of(const mail_ctx *c)
{
	return c->m->reply_addr != NULL ? c->m->reply_addr : c->envelope_sender;
}

static gboolean
addr_equal(const char *a, const char *b)
{
	return a != NULL && b != NULL && g_ascii_strcasecmp(a, b) == 0;
}

static const char *
addr_domain(const char *a)
{
	const char *at = a != NULL ? strrchr(a, '@') : NULL;

	return at != NULL ? at + 1 : NULL;
}

/* d is domain or a subdomain of it. */
static gboolean
domain_within(const char *d, const char *domain)
{
	gsize n, m;

	if (d == NULL || domain == NULL || *domain == '\0')
		return FALSE;
	n = strlen(d);
	m = strlen(domain);
	if (n == m)
		return g_ascii_strcasecmp(d, domain) == 0;
	return n > m && d[n - m - 1] == '.' && g_ascii_strcasecmp(d + n - m, domain) == 0;
}

static vulnid_status
exists_row(store *st, const char *sql, const char *a, const char *b, gboolean *found, GError **err)
{
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st, sql, &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, a, -1, SQLITE_TRANSIENT);
	if (b != NULL)
		sqlite3_bind_text(stmt, 2, b, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(st, rc, "database", err);
	*found = rc == SQLITE_ROW;
	return VULNID_OK;
}

static vulnid_status
entry_exists(store *st, const char *id, gboolean *found, GError **err)
{
	return exists_row(st, "SELECT 1 FROM entries WHERE id = ?", id, NULL, found, err);
}

/* Fields as canonical JSON from key, value pairs (NULL-terminated). */
static char *
fields_json(const char *const *kv)
{
	GString *s = g_string_new("[");

	for (gsize i = 0; kv[i] != NULL && kv[i + 1] != NULL; i += 2) {
		if (i > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '[');
		canonjson_string(s, kv[i]);
		g_string_append_c(s, ',');
		canonjson_string(s, kv[i + 1]);
		g_string_append_c(s, ']');
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

/* ---- routing ------------------------------------------------------------------- */

/* The detail of request+DETAIL@domain, or NULL. */
static char *
plus_detail(const vulnid_config *cfg, const char *rcpt)
{
	g_autofree char *a = NULL;
	const char *at, *plus;
	gsize nl = strlen(cfg->request_local);

	if (rcpt == NULL)
		return NULL;
	a = g_strstrip(g_strdup(rcpt));
	if (*a == '<' && a[strlen(a) - 1] == '>') {
		a[strlen(a) - 1] = '\0';
		memmove(a, a + 1, strlen(a));
	}
	at = strrchr(a, '@');
	if (at == NULL || g_ascii_strcasecmp(at + 1, cfg->domain) != 0)
		return NULL;
	plus = strchr(a, '+');
	if (plus == NULL || plus > at || (gsize) (plus - a) != nl ||
	    g_ascii_strncasecmp(a, cfg->request_local, nl) != 0 || plus + 1 == at)
		return NULL;
	return g_strndup(plus + 1, (gsize) (at - plus - 1));
}

/* The entry of an outbox item with this Message-ID, if it is ours. */
static vulnid_status
route_by_msgid(mail_ctx *c, const char *msgid, char **entry_id, GError **err)
{
	g_autoptr(outbox_ref) ref = NULL;
	g_autoptr(GError) e = NULL;
	const char *at;
	vulnid_status s;

	if (msgid == NULL)
		return VULNID_OK;
	at = strrchr(msgid, '@');
	if (at == NULL || g_ascii_strcasecmp(at + 1, c->cfg->domain) != 0)
		return VULNID_OK;
	s = outbox_find_by_message_id(c->st, msgid, &ref, &e);
	if (s == VULNID_ERR_NOTFOUND)
		return VULNID_OK;
	if (s != VULNID_OK) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s;
	}
	if (ref->entry != NULL) {
		gboolean found = FALSE;

		s = entry_exists(c->st, ref->entry, &found, err);
		if (s != VULNID_OK)
			return s;
		if (found)
			*entry_id = g_strdup(ref->entry);
	}
	return VULNID_OK;
}

/* The first [ID] tag of the subject with this instance's prefix. */
static char *
subject_tag(const vulnid_config *cfg, const char *subject)
{
	const char *p = subject;

	for (int n = 0; p != NULL && n < 10; n++) {
		const char *open = strchr(p, '[');
		const char *close = open != NULL ? strchr(open, ']') : NULL;
		g_autofree char *inner = NULL;
		char *id = NULL;

		if (close == NULL)
			return NULL;
		inner = g_strstrip(g_strndup(open + 1, (gsize) (close - open - 1)));
		if (commands_is_entry_id(inner, cfg->prefix, &id))
			return id;
		p = close + 1;
	}
	return NULL;
}

vulnid_status
lifecycle_route_target(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err)
{
	g_autofree char *detail = plus_detail(c->cfg, c->recipient);
	g_autofree char *id = NULL;
	gboolean found = FALSE;
	vulnid_status s;

	*kind = ROUTE_NEW;
	*entry_id = NULL;
	if (detail != NULL) {
		/* Some MTAs fold the address to lower case. */
		if (!commands_is_entry_id(detail, c->cfg->prefix, &id)) {
			*kind = ROUTE_UNKNOWN_ENTRY;
			*entry_id = text_clean_line(detail, 64);
			return VULNID_OK;
		}
	}
	if (id == NULL) {
		s = route_by_msgid(c, c->m->in_reply_to, &id, err);
		for (guint i = c->m->references->len; s == VULNID_OK && id == NULL && i > 0; i--)
			s = route_by_msgid(c, g_ptr_array_index(c->m->references, i - 1), &id, err);
		if (s != VULNID_OK)
			return s;
	}
	if (id == NULL)
		id = subject_tag(c->cfg, c->m->subject);
	if (id != NULL) {
		s = entry_exists(c->st, id, &found, err);
		if (s != VULNID_OK)
			return s;
		*kind = found ? ROUTE_ENTRY : ROUTE_UNKNOWN_ENTRY;
		*entry_id = g_steal_pointer(&id);
	} else if (c->m->text != NULL) {
		g_autoptr(mail_text) mt = commands_split(c->m->text, c->cfg->prefix, (guint) c->cfg->max_fields);

		if (commands_only(mt))
			*kind = ROUTE_COMMANDS;
	}
	return VULNID_OK;
}

vulnid_status
lifecycle_route_limit(mail_ctx *c, lifecycle_route_kind *kind, GError **err)
{
	gboolean over = FALSE;
	const char *why = NULL;
	vulnid_status s = ratelimit_check(c, *kind == ROUTE_NEW, &over, &why, err);

	if (s == VULNID_OK && over)
		*kind = ROUTE_LIMITED;
	return s;
}

vulnid_status
lifecycle_route(mail_ctx *c, lifecycle_route_kind *kind, char **entry_id, GError **err)
{
	vulnid_status s = lifecycle_route_target(c, kind, entry_id, err);

	return s == VULNID_OK ? lifecycle_route_limit(c, kind, err) : s;
}

/* Whether text names entry id: the identifier, in any case, not inside a
 * longer word or identifier.  What a signature's authority over an entry
 * requires. */
gboolean
lifecycle_text_names_entry(const char *text, const char *id)
{
	gsize n = id != NULL ? strlen(id) : 0;

	if (text == NULL || n == 0)
		return FALSE;
	for (const char *p = text; *p != '\0'; p++) {
		if (g_ascii_strncasecmp(p, id, n) != 0)
			continue;
		if ((p > text && (g_ascii_isalnum(p[-1]) || p[-1] == '-')) || g_ascii_isalnum(p[n]))
			continue;
		return TRUE;
	}
	return FALSE;
}

/* The identifiers of this robot that text names, the first
 * MAX_NAMED_ENTRIES of them, each once. */
static GPtrArray *
named_entries(const vulnid_config *cfg, const char *text)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	gsize pn = strlen(cfg->prefix);

	for (const char *p = text; p != NULL && *p != '\0' && out->len < MAX_NAMED_ENTRIES; p++) {
		const char *q = p;
		g_autofree char *word = NULL;
		char *id = NULL;
		gboolean dup = FALSE;

		if (g_ascii_strncasecmp(p, cfg->prefix, pn) != 0 || p[pn] != '-' ||
		    (p > text && (g_ascii_isalnum(p[-1]) || p[-1] == '-')))
			continue;
		while (g_ascii_isalnum(*q) || *q == '-')
			q++;
		word = g_strndup(p, (gsize) (q - p));
		p = q - 1;
		if (!commands_is_entry_id(word, cfg->prefix, &id))
			continue;
		for (guint i = 0; i < out->len; i++)
			dup |= strcmp(g_ptr_array_index(out, i), id) == 0;
		if (dup)
			g_free(id);
		else
			g_ptr_array_add(out, id);
	}
	return out;
}

vulnid_status
lifecycle_text_other_entry(mail_ctx *c, const char *except, char **other, GError **err)
{
	g_autoptr(GPtrArray) ids = named_entries(c->cfg, c->m->text);

	*other = NULL;
	for (guint i = 0; i < ids->len; i++) {
		const char *id = g_ptr_array_index(ids, i);
		gboolean found = FALSE;
		vulnid_status s;

		if (except != NULL && g_ascii_strcasecmp(id, except) == 0)
			continue;
		s = entry_exists(c->st, id, &found, err);
		if (s != VULNID_OK)
			return s;
		if (found) {
			*other = g_strdup(id);
			return VULNID_OK;
		}
	}
	return VULNID_OK;
}

vulnid_status
lifecycle_route_sealed(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id, gboolean *sealed,
		       GError **err)
{
	g_autoptr(entry) e = NULL;
	vulnid_status s;

	*sealed = FALSE;
	if (kind != ROUTE_ENTRY || entry_id == NULL)
		return VULNID_OK;
	s = entry_load(c->st, entry_id, &e, err);
	if (s == VULNID_OK)
		*sealed = entry_embargoed(e);
	return s;
}

/* ---- one mail ------------------------------------------------------------------ */

typedef struct {
	gboolean creator_key, creator_token, creator_address;
	gboolean vendor_key, vendor_token, vendor_domain, vendor_contact;
	gboolean moderator;
	/* The key is the creator's, or a moderator's, but the signed text
	 * does not name the entry the mail went to (mail_ctx.unbound): it
	 * grants nothing, which the refusals of commands say. */
	gboolean creator_key_unbound, moderator_unbound;
	const char *role;	/* creator, vendor, moderator, third-party */
	const char *how;	/* key, token, domain, contact, address, none */
} role_info;

typedef struct {
	mail_ctx *c;
	mail_text *mt;
	GPtrArray *tokens;	/* token_row* of the valid tokens */
	GString *out;		/* the results, for the reply */
	GBytes *key;		/* the robot's key, when asked for */
	gboolean help;
	const char *routed;	/* the entry the mail is about, or NULL */
	char *subject;		/* tokens scrubbed */
	guint scrub_budget;
	GPtrArray *attachments;	/* entry_attachment*, stored once, or NULL */
	guint lookups;
} lc_mail;

static void
out_result(lc_mail *l, const char *line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
out_result(lc_mail *l, const char *line, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (line != NULL)
		g_string_append_printf(l->out, "> %s\n", line);
	g_string_append_printf(l->out, "  %s\n\n", msg);
}

static vulnid_status
audit_command(lc_mail *l, const char *entry_id, const char *word, const char *result,
	      const char *detail, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("command", entry_id, l->c->m->message_id);

	audit_event_str(ev, "command", word);
	audit_event_str(ev, "result", result);
	audit_event_str(ev, "detail", detail);
	return audit_append(l->c->st, ev, err);
}

/* A value of the entry's headline (what the request and verified roles
 * said; never an unverified proposal), or NULL. */
static char *
headline_value(const entry *e, const char *key)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const entry_claim *c = g_ascii_strcasecmp(key, "Vendor") == 0 ? f->vendor
			     : g_ascii_strcasecmp(key, "Vendor-Contact") == 0 ? f->vendor_contact : NULL;

	return c != NULL ? g_strdup(c->value) : NULL;
}

static gboolean
entry_is_anonymous(const entry *e)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);

	return f->anonymous;
}

/* The vendor's key and domains as far as the directory and the entry say. */
static vulnid_status
entry_vendor(store *st, const entry *e, char **key_fpr, GPtrArray **domains, GError **err)
{
	g_autofree char *vfield = headline_value(e, "Vendor");
	g_autofree char *name = NULL;
	g_autofree char *dom = NULL;
	GPtrArray *d = g_ptr_array_new_with_free_func(g_free);

	*key_fpr = NULL;
	*domains = d;
	if (vfield == NULL)
		return VULNID_OK;
	vendor_field_split(vfield, &name, &dom);
	if (dom != NULL)
		g_ptr_array_add(d, g_strdup(dom));
	for (int pass = 0; pass < 2; pass++) {
		g_autoptr(vendor) v = NULL;
		g_autoptr(GError) e2 = NULL;
		vulnid_status s;

		if (pass == 0 && *name != '\0')
			s = vendor_find(st, name, &v, &e2);
		else if (pass == 1 && dom != NULL)
			s = vendor_find_by_domain(st, dom, &v, &e2);
		else
			continue;
		if (s == VULNID_ERR_NOTFOUND)
			continue;
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e2));
			return s;
		}
		if (v->key_fpr != NULL && *v->key_fpr != '\0')
			*key_fpr = g_strdup(v->key_fpr);
		for (guint i = 0; i < v->domains->len; i++)
			g_ptr_array_add(d, g_strdup(g_ptr_array_index(v->domains, i)));
		break;
	}
	return VULNID_OK;
}

/* Addresses the vendor was notified at (the vendor tokens' rows) and those
 * of verified vendor responses: where the researcher's answers go. */
static vulnid_status
vendor_addresses(store *st, const entry *e, GPtrArray **out, GError **err)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt;
	int rc;

	*out = a;
	stmt = store_prepare(st, "SELECT address FROM tokens WHERE entry = ? AND role = 'vendor'"
			     " AND address IS NOT NULL ORDER BY rowid LIMIT 50", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, e->id, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		g_auto(GStrv) parts = g_strsplit((const char *) sqlite3_column_text(stmt, 0), ",", -1);

		for (char **p = parts; *p != NULL; p++) {
			char *x = g_strstrip(g_strdup(*p));
			gboolean dup = FALSE;

			for (guint i = 0; i < a->len; i++)
				dup |= addr_equal(g_ptr_array_index(a, i), x);
			if (!dup && a->len < MAX_VENDOR_ADDRESSES && config_address_valid(x))
				g_ptr_array_add(a, x);
			else
				g_free(x);
		}
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		gboolean dup = FALSE;

		if (r->kind != ENTRY_KIND_VENDOR_RESPONSE || !entry_how_verified(r->how) || r->author == NULL)
			continue;
		for (guint j = 0; j < a->len; j++)
			dup |= addr_equal(g_ptr_array_index(a, j), r->author);
		if (!dup && a->len < MAX_VENDOR_ADDRESSES && config_address_valid(r->author))
			g_ptr_array_add(a, g_strdup(r->author));
	}
	return VULNID_OK;
}

/* An entry, its sealed records decrypted in memory when unseal is set:
 * who the vendor is, whether the researcher is anonymous and what the
 * records say are part of the sealed content.  It stays "embargoed". */
static vulnid_status
load_entry(store *st, const char *id, gboolean unseal, entry **out, GError **err)
{
	g_autoptr(entry) e = NULL;
	vulnid_status s = entry_load(st, id, &e, err);

	if (s != VULNID_OK)
		return s;
	if (unseal && entry_has_sealed(e)) {
		s = entry_unseal(e, err);
		if (s != VULNID_OK)
			return s;
	}
	*out = g_steal_pointer(&e);
	return VULNID_OK;
}

/* Who the sender is for entry e, and how that is known.  Authority comes
 * from a key or a token; an address only makes an unverified role, which
 * is recorded as such and allows nothing more than a third party. */
static vulnid_status
role_for(lc_mail *l, const entry *e, role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;
	const char *from = sender_of(c);
	g_autofree char *vkey = NULL;
	g_autoptr(GPtrArray) vdomains = NULL;
	vulnid_status s;

	memset(ri, 0, sizeof *ri);
	s = entry_vendor(c->st, e, &vkey, &vdomains, err);
	if (s != VULNID_OK)
		return s;
	if (c->signer != NULL) {
		const char *cfpr = first != NULL ? first->signer : NULL;
		gboolean moderator = is_moderator(c->cfg, c->signer);
		gboolean creator_key = cfpr != NULL && fpr_equal(cfpr, c->signer);
		gboolean vendor_key = vkey != NULL && fpr_equal(vkey, c->signer);

		/* A signature counts only for the entry its signed text names:
		 * a captured signed mail sent to another entry must not act as
		 * its author there. */
		ri->creator_key_unbound = c->unbound != NULL && creator_key;
		ri->moderator_unbound = c->unbound != NULL && moderator;
		if (c->unbound == NULL) {
			ri->moderator = moderator;
			ri->creator_key = creator_key;
			ri->vendor_key = vendor_key;
		}
	}
	for (guint i = 0; i < l->tokens->len; i++) {
		const token_row *t = g_ptr_array_index(l->tokens, i);

		if (strcmp(t->entry, e->id) != 0)
			continue;
		if (strcmp(t->role, "creator") == 0)
			ri->creator_token = TRUE;
		else if (strcmp(t->role, "vendor") == 0)
			ri->vendor_token = TRUE;
	}
	if (first != NULL && addr_equal(from, first->author))
		ri->creator_address = TRUE;
	if (!ri->vendor_key && !ri->vendor_token && from != NULL) {
		g_autoptr(GPtrArray) notified = NULL;

		for (guint i = 0; i < vdomains->len; i++)
			ri->vendor_domain |= domain_within(addr_domain(from), g_ptr_array_index(vdomains, i));
		s = vendor_addresses(c->st, e, &notified, err);
		if (s != VULNID_OK)
			return s;
		for (guint i = 0; i < notified->len; i++)
			ri->vendor_contact |= addr_equal(from, g_ptr_array_index(notified, i));
	}
	/* Verified roles first, then unverified ones. */
	if (ri->creator_key || ri->creator_token) {
		ri->role = "creator";
		ri->how = ri->creator_key ? "key" : "token";
	} else if (ri->vendor_key || ri->vendor_token) {
		ri->role = "vendor";
		ri->how = ri->vendor_key ? "key" : "token";
	} else if (ri->moderator) {
		ri->role = "moderator";
		ri->how = "key";
	} else if (ri->creator_address) {
		ri->role = "creator";
		ri->how = "address";
	} else if (ri->vendor_contact || ri->vendor_domain) {
		ri->role = "vendor";
		ri->how = ri->vendor_contact ? "contact" : "domain";
	} else {
		ri->role = "third-party";
		ri->how = "none";
	}
	if (c->from_verified != NULL && strcmp(ri->how, "address") == 0)
		ri->how = "address-dmarc";	/* authres.h: stronger, still no key or token */
	return VULNID_OK;
}

static gboolean
creator_verified(const role_info *ri)
{
	return ri->creator_key || ri->creator_token;
}

/* Who an anonymous researcher must never be seen as: the request's sender
 * and, when she writes now, this mail's addresses and name. */
static researcher_identity *
researcher_of(const lc_mail *l, const entry *e, const role_info *ri)
{
	researcher_identity *id = researcher_identity_new();
	const entry_record *first = e->records->len > 0 ? g_ptr_array_index(e->records, 0) : NULL;

	if (first != NULL) {
		researcher_identity_add_address(id, first->author);
		researcher_identity_add_name(id, first->author_name);
	}
	if (ri != NULL && strcmp(ri->role, "creator") == 0) {
		researcher_identity_add_address(id, l->c->m->from_addr);
		researcher_identity_add_address(id, l->c->m->reply_addr);
		researcher_identity_add_address(id, l->c->envelope_sender);
		researcher_identity_add_name(id, l->c->m->from_name);
	}
	return id;
}

static char *
redact(const char *s, const researcher_identity *id)
{
	return researcher_identity_redact(id, s);
}

/* Archive the attachments once.  For a sealed record only what the
 * commitment covers is computed: the bytes stay in the archived mail
 * until the release stores them. */
static vulnid_status
store_attachments(lc_mail *l, gboolean store_blobs, GError **err)
{
	mail_ctx *c = l->c;

	if (l->attachments != NULL)
		return VULNID_OK;
	l->attachments = g_ptr_array_new_with_free_func(entry_attachment_free);
	for (guint i = 0; i < c->m->attachments->len; i++) {
		const message_attachment *a = g_ptr_array_index(c->m->attachments, i);
		entry_attachment *ea = g_new0(entry_attachment, 1);
		char sha[65];
		vulnid_status s;
		int fd = -1;

		g_ptr_array_add(l->attachments, ea);
		s = message_attachment_spool(a, c->cfg->spool_dir, &fd, &ea->size, sha, err);
		if (s != VULNID_OK)
			return s;
		if (store_blobs)
			s = store_blob_put_fd(c->st, fd, ea->size, sha, err);
		close(fd);
		if (s != VULNID_OK)
			return s;
		ea->sha256 = g_strdup(sha);
		ea->filename = g_strdup(a->filename);
		ea->content_type = g_strdup(a->content_type);
	}
	return VULNID_OK;
}

static vulnid_status after_record(lc_mail *l, const char *entry_id, gint64 seq, GError **err);

/* Append a record to an entry; audited; subscribers are told.  A sealed
 * record (text added to an embargoed entry) keeps its content only
 * encrypted to the robot, like the entry's first record, until the
 * release discloses it; its hash is the commitment to the content. */
static vulnid_status
append_record(lc_mail *l, entry *e, const char *kind, const role_info *ri,
	      const char *fields, const char *body, const GPtrArray *attachments,
	      gboolean seal, gint64 *seq_out, GError **err)
{
	mail_ctx *c = l->c;
	const char *entry_id = e->id;
	gboolean anonymous = entry_is_anonymous(e);
	g_autofree char *auth = mail_record_auth(c, anonymous && strcmp(ri->role, "creator") == 0,
						 ri->role, ri->how);
	g_autoptr(researcher_identity) hide = anonymous ? researcher_of(l, e, ri) : NULL;
	g_autofree char *subject = hide != NULL ? redact(l->subject, hide) : g_strdup(l->subject);
	g_autofree char *canon = NULL;
	g_autofree char *sha = NULL;
	g_autofree char *sealed = NULL;
	g_autoptr(audit_event) ev = NULL;
	store_record rec = { 0 };
	sqlite3_stmt *stmt;
	vulnid_status s;
	gint64 seq, row;
	int rc;

	stmt = store_prepare(c->st, "SELECT coalesce(max(seq), 0) + 1 FROM records WHERE entry = ?", &s, err);
	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, entry_id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	seq = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW)
		return store_fail(c->st, rc, "records", err);
	canon = entry_record_canonical(entry_id, seq, c->now, kind, auth, subject, fields, body, attachments);
	sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
	if (seal) {
		g_autofree char *robot = NULL;
		g_autoptr(GBytes) clear = g_bytes_new(canon, strlen(canon));
		g_autoptr(GBytes) ct = NULL;

		s = crypto_robot_fingerprint(&robot, err);
		if (s == VULNID_OK)
			s = crypto_seal(clear, robot, &ct, err);
		if (s != VULNID_OK)
			return s;
		sealed = g_strndup(g_bytes_get_data(ct, NULL), g_bytes_get_size(ct));
	}
	rec.entry = entry_id;
	rec.seq = seq;
	rec.created = c->now;
	rec.kind = kind;
	rec.message = c->msg_row;
	rec.author = sender_of(c);
	rec.author_name = c->m->from_name;
	rec.role = ri->role;
	rec.auth = auth;
	rec.subject = seal ? NULL : subject;
	rec.fields = seal ? "[]" : fields;
	rec.body = seal ? "" : body;
	rec.sha256 = sha;
	rec.sealed = sealed;
	s = store_record_insert(c->st, &rec, &row, err);
	if (s == VULNID_OK)
		s = mail_record_signer(c, row, auth, err);
	if (s != VULNID_OK)
		return s;
	/* the loaded entry gets it too, in clear, for the mail it causes */
	entry_add_record(e, &rec, row, subject, fields, body, attachments, c->signer);
	for (guint i = 0; !seal && attachments != NULL && i < attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(attachments, i);

		s = store_attachment_insert(c->st, row, (int) i, a->filename, a->content_type, a->size,
					    a->sha256, err);
		if (s != VULNID_OK)
			return s;
	}
	ev = audit_event_new("recorded", entry_id, c->m->message_id);
	audit_event_int(ev, "seq", seq);
	audit_event_str(ev, "kind", kind);
	audit_event_str(ev, "role", ri->role);
	audit_event_str(ev, "how", ri->how);
	audit_event_str(ev, "sha256", sha);
	if (seal)
		audit_event_str(ev, "sealed", "yes");
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	if (seq_out != NULL)
		*seq_out = seq;
	return after_record(l, entry_id, seq, err);
}

static vulnid_status
append_command_record(lc_mail *l, entry *e, const role_info *ri, const char *const *kv,
		      gint64 *seq, GError **err)
{
	g_autofree char *f = fields_json(kv);
	/* On an embargoed entry what a command says (reasons, aliases) is
	 * sealed too; only a moved embargo date is public, like the first. */
	gboolean seal = entry_embargoed(e) &&
			!(kv != NULL && kv[0] != NULL && g_ascii_strcasecmp(kv[0], "Embargo") == 0);

	return append_record(l, e, "command", ri, f, "", NULL, seal, seq, err);
}

/* ---- mails to others ------------------------------------------------------------ */

static vulnid_status
audit_relayed(lc_mail *l, const char *entry_id, const char *direction, const char *to, gint64 outbox,
	      GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("relayed", entry_id, l->c->m->message_id);

	audit_event_str(ev, "direction", direction);
	audit_event_str(ev, "to", to);
	audit_event_int(ev, "outbox", outbox);
	return audit_append(l->c->st, ev, err);
}

/* Subscribers of an entry: the latest subscribe or unsubscribe of each
 * address counts. */
static vulnid_status
subscribers(store *st, const char *entry_id, GPtrArray **out, GError **err)
{
	g_autoptr(GHashTable) state = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s;
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT address, role FROM tokens WHERE entry = ? AND role IN ('subscriber', 'unsubscribed')"
		" AND address IS NOT NULL ORDER BY rowid LIMIT ?", &s, err);
	int rc;

	if (stmt == NULL)
		return s;
	sqlite3_bind_text(stmt, 1, entry_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(stmt, 2, MAX_SUBSCRIPTION_ROWS);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		char *a = g_ascii_strdown((const char *) sqlite3_column_text(stmt, 0), -1);

		if (!g_hash_table_contains(state, a))
			g_ptr_array_add(order, g_strdup(a));
		g_hash_table_insert(state, a, g_strdup((const char *) sqlite3_column_text(stmt, 1)));
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_fail(st, rc, "tokens", err);
	*out = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < order->len && (*out)->len < MAX_SUBSCRIBERS; i++) {
		const char *a = g_ptr_array_index(order, i);

		if (strcmp(g_hash_table_lookup(state, a), "subscriber") == 0)
			g_ptr_array_add(*out, g_strdup(a));
	}
	return VULNID_OK;
}

static vulnid_status
is_subscribed(store *st, const char *entry_id, const char *address, gboolean *yes, GError **err)
{
	g_autoptr(GPtrArray) subs = NULL;
	vulnid_status s = subscribers(st, entry_id, &subs, err);

	*yes = FALSE;
	for (guint i = 0; s == VULNID_OK && i < subs->len; i++)
		*yes |= addr_equal(g_ptr_array_index(subs, i), address);
	return s;
}

/* After a record: subscribers get it, if the entry is public. */
static vulnid_status
after_record(lc_mail *l, const char *entry_id, gint64 seq, GError **err)
{
	return lifecycle_tell_subscribers(l->c->st, l->c->cfg, l->c->now_dt, l->c->msg_row, entry_id, seq, err);
}

vulnid_status
lifecycle_tell_subscribers(store *st, const vulnid_config *cfg, GDateTime *now, gint64 cause,
			   const char *entry_id, gint64 seq, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_view) v = NULL;
	g_autoptr(GPtrArray) subs = NULL;
	g_autofree char *addr = entry_address(cfg, entry_id);
	const view_record *vr;
	vulnid_status s;

	s = subscribers(st, entry_id, &subs, err);
	if (s != VULNID_OK || subs->len == 0)
		return s;
	s = entry_load(st, entry_id, &e, err);
	if (s != VULNID_OK)
		return s;
	/* subscribers get what the public may see, and only that */
	v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, now);
	vr = render_find_record(v, seq);
	if (v->stub || v->withheld || vr == NULL || !vr->content)
		return VULNID_OK;
	for (guint i = 0; i < subs->len; i++) {
		const char *to = g_ptr_array_index(subs, i);
		g_autoptr(GHashTable) vars = NULL;
		outbox_mail mail = { 0 };

		if (addr_equal(to, vr->r->author) || !config_address_valid(to))
			continue;	/* they know what they wrote */
		vars = render_template_vars(cfg, v);
		g_hash_table_insert(vars, "seq", g_strdup_printf("%" G_GINT64_FORMAT, seq));
		g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
		mail.kind = "subscription";
		mail.entry = entry_id;
		mail.to_addr = to;
		mail.reply_to = addr;
		mail.bulk = TRUE;
		mail.auto_submitted = "auto-generated";
		s = notify_queue_template(st, cfg, cause, "subscription.txt", vars, &mail, NULL, err);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

/* A key of the keyring that can take encrypted mail, or NULL. */
static char *
usable_key(const char *fpr)
{
	g_autoptr(crypto_key) k = NULL;

	if (fpr == NULL || crypto_home() == NULL || crypto_get_key(fpr, &k, NULL) != VULNID_OK)
		return NULL;
	if (!k->can_encrypt || k->revoked || k->expired)
		return NULL;
	return g_strdup(k->fpr);
}

/* Whether content may be passed on to the holder of key fpr, and *enc the
 * key to encrypt to.  Content of an embargoed entry goes out encrypted
 * when a key is known; in clear only when it came in clear (it travelled
 * so already); mail that came encrypted never leaves in clear. */
static gboolean
may_pass_on(const lc_mail *l, gboolean embargoed, const char *fpr, char **enc)
{
	*enc = NULL;
	if (!embargoed)
		return TRUE;
	*enc = usable_key(fpr);
	return *enc != NULL || !l->c->m->decrypted;
}

/* A vendor response reaches the researcher: for an anonymous entry this is
 * the relay (the vendor's address is kept, the researcher's never shown).
 * e is the entry unsealed in memory, with the new record seq. */
static vulnid_status
tell_researcher(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_CREATOR, G_MAXINT64, c->now_dt);
	const view_record *vr = render_find_record(v, seq);
	g_autofree char *addr = entry_address(c->cfg, e->id);
	g_autofree char *enc = NULL;
	const entry_record *first = g_ptr_array_index(e->records, 0);
	const char *encrypt_to[2] = { NULL, NULL };
	const char *status;
	outbox_mail mail = { 0 };
	vulnid_status s;
	gint64 id;

	if (vr == NULL || first->author == NULL || !config_address_valid(first->author) ||
	    addr_equal(first->author, sender_of(c)))
		return VULNID_OK;
	if (!may_pass_on(l, v->facts->state == ENTRY_EMBARGOED, first->signer, &enc)) {
		g_string_append(l->out, "The researcher was not sent your response: the entry is under embargo,\n"
				     "your mail came encrypted, and the researcher has no key to encrypt to.\n"
				     "It is recorded, sealed, on the entry.\n\n");
		return VULNID_OK;
	}
	if (enc != NULL) {
		encrypt_to[0] = enc;
		mail.encrypt_to = encrypt_to;
	}
	status = entry_record_get(vr->r, "Status");
	vars = render_template_vars(c->cfg, v);
	g_hash_table_insert(vars, "vendor_address", text_clean_line(sender_of(c), 320));
	g_hash_table_insert(vars, "vendor_how", g_strdup(entry_how_phrase(entry_how_from_str(ri->how))));
	g_hash_table_insert(vars, "status", g_strdup(status != NULL ? status : "(none stated)"));
	g_hash_table_insert(vars, "status_subject", status != NULL ? g_strdup_printf(": %s", status) : g_strdup(""));
	g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
	g_hash_table_insert(vars, "answer_note", g_strdup(v->facts->anonymous
		? "your answer is recorded on the entry and relayed to the vendor, without\nyour address."
		: "your answer is recorded on the entry."));
	mail.kind = "vendor-response";
	mail.entry = e->id;
	mail.to_addr = first->author;
	mail.reply_to = addr;
	mail.auto_submitted = "auto-generated";
	s = notify_queue_template(c->st, c->cfg, c->msg_row, "vendor-response.txt", vars, &mail, &id, err);
	if (s != VULNID_OK)
		return s;
	g_string_append(l->out, v->facts->anonymous
			? "The researcher, who asked to stay anonymous, was sent your response through\nthe robot.\n\n"
			: "The researcher was sent your response.\n\n");
	return audit_relayed(l, e->id, "vendor-to-researcher", first->author, id, err);
}

/* The anonymous researcher's answer reaches the vendor from the robot.
 * e is the entry unsealed in memory, with the new record seq. */
static vulnid_status
relay_to_vendor(lc_mail *l, const entry *e, gint64 seq, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) to = NULL;
	g_autoptr(GHashTable) vars = NULL;
	g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_VENDOR, G_MAXINT64, c->now_dt);
	const view_record *vr = render_find_record(v, seq);
	g_autofree char *addr = entry_address(c->cfg, e->id);
	g_autofree char *vkey = NULL;
	g_autofree char *enc = NULL;
	g_autofree char *list = NULL;
	g_autoptr(GPtrArray) vdomains = NULL;
	const char *encrypt_to[2] = { NULL, NULL };
	outbox_mail mail = { 0 };
	vulnid_status s;
	guint count;
	gint64 id;

	if (vr == NULL)
		return VULNID_OK;
	s = vendor_addresses(c->st, e, &to, err);
	if (s == VULNID_OK)
		s = entry_vendor(c->st, e, &vkey, &vdomains, err);
	if (s != VULNID_OK)
		return s;
	if (to->len == 0) {
		g_string_append(l->out, "No vendor contact is known for this entry yet, so your message was\n"
				     "recorded but not relayed.\n\n");
		return VULNID_OK;
	}
	if (!may_pass_on(l, v->facts->state == ENTRY_EMBARGOED, vkey, &enc)) {
		g_string_append(l->out, "Your message was not relayed: the entry is under embargo, your mail came\n"
				     "encrypted, and the vendor has no key to encrypt to. It is recorded,\n"
				     "sealed, on the entry.\n\n");
		return VULNID_OK;
	}
	if (enc != NULL) {
		encrypt_to[0] = enc;
		mail.encrypt_to = encrypt_to;
	}
	vars = render_template_vars(c->cfg, v);
	g_hash_table_insert(vars, "record", render_record_text(v, vr, TRUE));
	g_hash_table_insert(vars, "verified", g_strdup(creator_verified(ri) ? ""
		: "(The robot could not verify that this message comes from the researcher:\n"
		  "it was sent from their address, without their token or key.)\n\n"));
	count = to->len;
	g_ptr_array_add(to, NULL);
	list = g_strjoinv(", ", (char **) to->pdata);
	mail.kind = "relay-to-vendor";
	mail.entry = e->id;
	mail.to_list = (const char *const *) to->pdata;
	mail.reply_to = addr;
	mail.auto_submitted = "auto-generated";
	s = notify_queue_template(c->st, c->cfg, c->msg_row, "relay-to-vendor.txt", vars, &mail, &id, err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(l->out, "Your message was relayed to the vendor (%u address%s)%s, without your\n"
			       "address.\n\n", count, count == 1 ? "" : "es", enc != NULL ? ", encrypted" : "");
	return audit_relayed(l, e->id, "researcher-to-vendor", list, id, err);
}

/* A verified creator named a vendor or a contact that was not notified
 * yet: notify it now (notify-failed.txt and the ack ask for this). */
static vulnid_status
renotify_vendor(lc_mail *l, const char *entry_id, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry) e = NULL;
	g_autoptr(GPtrArray) want = NULL;
	g_autoptr(GPtrArray) have = NULL;
	g_autofree char *vfield = NULL;
	g_autofree char *contact = NULL;
	g_autoptr(GString) note = g_string_new(NULL);
	const char *how = "none";
	gboolean missing = FALSE;
	vulnid_status s;

	if (!c->cfg->notify_vendors)
		return VULNID_OK;
	s = load_entry(c->st, entry_id, TRUE, &e, err);
	if (s != VULNID_OK)
		return s;
	vfield = headline_value(e, "Vendor");
	contact = headline_value(e, "Vendor-Contact");
	s = vendor_contacts_for(c->st, vfield, contact, &want, &how, err);
	if (s == VULNID_OK)
		s = vendor_addresses(c->st, e, &have, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < want->len; i++) {
		gboolean known = FALSE;

		for (guint j = 0; j < have->len; j++)
			known |= addr_equal(g_ptr_array_index(want, i), g_ptr_array_index(have, j));
		missing |= !known;
	}
	if (!missing)
		return VULNID_OK;
	s = notify_vendor(c->st, c->cfg, c->msg_row, entry_id, note, err);
	if (s == VULNID_OK && note->len > 0)
		g_string_append_printf(l->out, "%s\n", note->str);
	return s;
}

/* The creator's token answers a confirmation: confirm_unsigned, or vendor
 * contacts the outgoing-mail policy held (policy.h) until the creator
 * proves a working mailbox. */
static vulnid_status
confirm_if_pending(lc_mail *l, const char *entry_id, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(entry) e = NULL;
	g_autoptr(entry_facts) f = NULL;
	g_autoptr(GString) note = g_string_new(NULL);
	gboolean pending = FALSE, held = FALSE;
	const char *kv[] = { "Confirmed", "yes", NULL };
	vulnid_status s;

	if (!ri->creator_token)
		return VULNID_OK;
	s = exists_row(c->st, "SELECT 1 FROM tokens WHERE entry = ? AND role = 'unconfirmed'", entry_id, NULL,
		       &pending, err);
	if (s == VULNID_OK)
		s = policy_entry_held(c->st, entry_id, &held, err);
	if (s != VULNID_OK || (!pending && !held))
		return s;
	s = load_entry(c->st, entry_id, TRUE, &e, err);
	if (s != VULNID_OK)
		return s;
	f = entry_facts_now(e);
	if (f->confirmed != NULL && !held)
		return VULNID_OK;
	if (f->confirmed == NULL)
		s = append_command_record(l, e, ri, kv, NULL, err);
	if (s == VULNID_OK)
		s = notify_vendor(c->st, c->cfg, c->msg_row, entry_id, note, err);
	if (s == VULNID_OK && pending && f->confirmed == NULL)
		s = notify_announce(c->st, c->cfg, c->msg_row, entry_id, err);
	if (s != VULNID_OK)
		return s;
	if (pending && f->confirmed == NULL)
		g_string_append_printf(l->out, "Token: accepted: %s is confirmed; it is now notified and announced\n"
				       "as usual.\n%s\n", entry_id, note->str);
	else if (note->len > 0)
		g_string_append_printf(l->out, "Token: accepted: %s is confirmed.\n%s\n", entry_id, note->str);
	return audit_command(l, entry_id, "confirm", "done", NULL, err);
}

/* ---- the addition --------------------------------------------------------------- */

static gboolean
key_in(const char *key, const char *const *list)
{
	for (; *list != NULL; list++)
		if (g_ascii_strcasecmp(key, *list) == 0)
			return TRUE;
	return FALSE;
}

/* Why a field of an addition is not taken (NULL: it is).  Fields feed the
 * entry's view, so those that steer the robot belong to their roles. */
static const char *
field_refusal(const char *key, char **value, const role_info *ri)
{
	static const char *const reserved[] = {
		"Withdrawn", "Duplicate-Of", "Spam", "Link", "Alias", "Rating", "Rating-Reason",
		"Confirmed", "Command", "Subscribe", "Unsubscribe", NULL,
	};
	static const char *const owned[] = { "Title", "Vendor", "Product", "Type", "Vendor-Contact", NULL };

	if (g_ascii_strcasecmp(key, "Anonymous") == 0)
		return "anonymity is chosen in the request and cannot change";
	if (g_ascii_strcasecmp(key, "Embargo") == 0)
		return "the creator moves an embargo with the command \"embargo YYYY-MM-DD\"";
	if (g_ascii_strcasecmp(key, "Status") == 0) {
		g_autofree char *v = g_ascii_strdown(*value, -1);

		if (strcmp(ri->role, "vendor") != 0)
			return "only the vendor states a position";
		if (strcmp(v, "disputed") != 0 && strcmp(v, "confirmed") != 0 && strcmp(v, "fixed") != 0)
			return "the position is disputed, confirmed or fixed";
		g_free(*value);
		*value = g_steal_pointer(&v);
		return NULL;
	}
	if (key_in(key, reserved))
		return "it is set by a command only (send \"help\" for the commands)";
	if (key_in(key, owned) && strcmp(ri->role, "third-party") == 0)
		return "only the creator, the vendor or a moderator may change it";
	return NULL;
}

/* Fields and text of the mail as a record of kind addition or
 * vendor-response; post-actions: the researcher or the vendor told. */
static vulnid_status
handle_addition(lc_mail *l, entry *e, const role_info *ri, GError **err)
{
	mail_ctx *c = l->c;
	request_limits lim = { 1, 1, c->cfg->max_field_length };
	g_autoptr(GString) fields = g_string_new("[");
	g_autoptr(GString) kept = g_string_new(NULL);
	g_autoptr(GString) notes = g_string_new(NULL);
	g_autoptr(researcher_identity) hide = NULL;
	g_autofree char *body = NULL;
	const char *kind = strcmp(ri->role, "vendor") == 0 ? "vendor-response" : "addition";
	gboolean anonymous = entry_is_anonymous(e), vendor_fields = FALSE, sealed;
	guint nfields = 0;
	gint64 seq;
	vulnid_status s;

	hide = anonymous ? researcher_of(l, e, ri) : NULL;
	for (guint i = 0; i < l->mt->fields->len; i++) {
		const char *chunk = g_ptr_array_index(l->mt->fields, i);
		g_autoptr(request) r = request_parse(chunk, NULL, &lim, c->now_dt);
		const request_block *b = r->blocks->len == 1 ? g_ptr_array_index(r->blocks, 0) : NULL;
		request_field *f = b != NULL && b->fields->len == 1 ? g_ptr_array_index(b->fields, 0) : NULL;
		const char *why;
		g_autofree char *value = NULL;
		g_autofree char *clean_key = NULL;

		if (f == NULL) {
			g_string_append_printf(kept, "%s\n", chunk);
			continue;
		}
		clean_key = text_clean_line(f->key, 64);
		value = g_strdup(f->value);
		if (r->errors->len > 0)
			why = g_ptr_array_index(r->errors, 0);
		else
			why = field_refusal(f->key, &value, ri);
		if (why != NULL) {
			g_string_append_printf(kept, "%s\n", chunk);
			g_string_append_printf(notes, "  %s: not taken as a field (%s); kept in the text.\n",
					       clean_key, why);
			continue;
		}
		for (guint w = 0; w < r->warnings->len; w++)
			g_string_append_printf(notes, "  %s\n", (const char *) g_ptr_array_index(r->warnings, w));
		if (hide != NULL) {
			char *x = redact(value, hide);

			g_free(value);
			value = x;
		}
		s = tokens_scrub(c->st, &value, &l->scrub_budget, err);
		if (s != VULNID_OK)
			return s;
		if (nfields++ > 0)
			g_string_append_c(fields, ',');
		g_string_append_c(fields, '[');
		canonjson_string(fields, f->key);
		g_string_append_c(fields, ',');
		canonjson_string(fields, value);
		g_string_append_c(fields, ']');
		vendor_fields |= g_ascii_strcasecmp(f->key, "Vendor") == 0 ||
				 g_ascii_strcasecmp(f->key, "Vendor-Contact") == 0;
	}
	g_string_append_c(fields, ']');
	/* A reply that only quotes (a subscription confirmed by replying,
	 * commands above the quoted mail) adds no text. */
	if (!l->mt->quote_only) {
		if (kept->len > 0 && *l->mt->text != '\0')
			g_string_append_c(kept, '\n');
		g_string_append(kept, l->mt->text);
	}
	while (kept->len > 0 && g_ascii_isspace(kept->str[kept->len - 1]))
		g_string_truncate(kept, kept->len - 1);
	body = hide != NULL ? redact(kept->str, hide) : g_strdup(kept->str);
	s = tokens_scrub(c->st, &body, &l->scrub_budget, err);
	if (s != VULNID_OK)
		return s;
	if (nfields == 0 && *body == '\0' && c->m->attachments->len == 0) {
		if (l->mt->commands->len == 0 && l->mt->tokens->len == 0)
			g_string_append(l->out, "Nothing was recorded: the mail had no text, fields or attachments.\n\n");
		return VULNID_OK;
	}
	sealed = entry_embargoed(e);
	s = store_attachments(l, !sealed, err);
	if (s != VULNID_OK)
		return s;
	s = append_record(l, e, kind, ri, fields->str, body, l->attachments, sealed, &seq, err);
	if (s != VULNID_OK)
		return s;
	g_string_append_printf(l->out, "Your mail was recorded as record %" G_GINT64_FORMAT " of %s: %s by the %s\n"
			       "(%s)%s.\n", seq, e->id, strcmp(kind, "vendor-response") == 0 ? "a vendor response"
			       : "an addition", strcmp(ri->role, "third-party") == 0 ? "third party" : ri->role,
			       entry_how_phrase(entry_how_from_str(ri->how)),
			       sealed ? ", sealed until the embargo ends" : "");
	if (nfields > 0 && !entry_how_verified(entry_how_from_str(ri->how)))
		g_string_append(notes, "  The fields are kept as proposals: the entry's title, vendor, product,\n"
				       "  type, versions and references change only by the creator's or the\n"
				       "  vendor's key or token.\n");
	if (notes->len > 0)
		g_string_append_printf(l->out, "Please note:\n%s", notes->str);
	g_string_append_c(l->out, '\n');
	if (strcmp(kind, "vendor-response") == 0)
		s = tell_researcher(l, e, seq, ri, err);
	else if (strcmp(ri->role, "creator") == 0 && anonymous)
		s = relay_to_vendor(l, e, seq, ri, err);
	if (s == VULNID_OK && vendor_fields && creator_verified(ri))
		s = renotify_vendor(l, e->id, err);
	return s;
}

/* ---- commands ------------------------------------------------------------------- */

#define UNBOUND_REFUSAL "refused: the signed text does not name the entry this mail was sent to,\n" \
			"  so its signature grants nothing (write the identifier in the signed text)"

/* NULL when the sender may act as the creator of id, else why not. */
static const char *
need_creator(const lc_mail *l, const role_info *ri, gboolean named)
{
	if (ri->creator_token)
		return NULL;
	if (ri->creator_key || ri->creator_key_unbound) {
		if (!named)
			return "refused: in a signed mail, name the entry in the command (for example\n"
			       "  \"release ID\"), so that the signature covers it";
		return ri->creator_key ? NULL : UNBOUND_REFUSAL;
	}
	if (l->c->signer != NULL)
		return "refused: wrong role: only the creator of the entry may do this";
	return "refused: not authenticated: only the creator may do this; add the line\n"
	       "  \"Token: ...\" from the acknowledgement, or sign the mail with the request's key";
}

static const char *
need_moderator(const lc_mail *l, const role_info *ri, gboolean named)
{
	if (ri->moderator || ri->moderator_unbound) {
		if (!named)
			return "refused: in a signed mail, name the entries in the command (for example\n"
			       "  \"duplicate-of ID ID\"), so that the signature covers them";
		return ri->moderator ? NULL : UNBOUND_REFUSAL;
	}
	if (l->c->signer == NULL)
		return "refused: not authenticated: moderator commands must be signed by a moderator's key";
	return "refused: wrong role: only moderators may do this";
}

/* Load an entry named by a command; *e NULL and a result written when it
 * does not exist. */
static vulnid_status
command_entry(lc_mail *l, const command *cmd, const char *id, entry **e, GError **err)
{
	g_autoptr(GError) e2 = NULL;
	vulnid_status s;

	*e = NULL;
	if (id == NULL) {
		out_result(l, cmd->line, "refused: name the entry (%s ID): this mail is not about one entry",
			   cmd->word);
		return audit_command(l, NULL, cmd->word, "refused", "no entry", err);
	}
	s = load_entry(l->c->st, id, TRUE, e, &e2);
	if (s == VULNID_ERR_NOTFOUND) {
		out_result(l, cmd->line, "refused: unknown ID %s", id);
		return audit_command(l, id, cmd->word, "refused", "unknown ID", err);
	}
	if (s != VULNID_OK)
		g_propagate_error(err, g_steal_pointer(&e2));
	return s;
}

static vulnid_status
refuse(lc_mail *l, const command *cmd, const char *id, const char *why, GError **err)
{
	out_result(l, cmd->line, "%s", why);
	return audit_command(l, id, cmd->word, "refused", why, err);
}

static vulnid_status
done(lc_mail *l, const command *cmd, const char *id, const char *what, GError **err)
{
	out_result(l, cmd->line, "done: %s", what);
	return audit_command(l, id, cmd->word, "done", NULL, err);
}

static vulnid_status
cmd_lookup(lc_mail *l, const command *cmd, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) text = g_string_new(NULL);
	vulnid_status s;

	if (++l->lookups > MAX_LOOKUPS)
		return refuse(l, cmd, NULL, "refused: at most 5 lookups per mail", err);
	if (cmd->arg != NULL) {
		/* an alias: the entries that recorded it */
		g_clear_pointer(&ids, g_ptr_array_unref);
		s = entry_ids_by_alias(c->st, cmd->arg, MAX_ALIAS_MATCHES, &ids, err);
		if (s != VULNID_OK)
			return s;
		if (ids->len == 0) {
			g_autofree char *why = g_strdup_printf("refused: no entry has the alias %s", cmd->arg);

			return refuse(l, cmd, NULL, why, err);
		}
	} else if (cmd->target != NULL || l->routed != NULL)
		g_ptr_array_add(ids, g_strdup(cmd->target != NULL ? cmd->target : l->routed));
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autofree char *t = NULL;

		s = command_entry(l, cmd, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK || e == NULL)
			return s;
		{
			g_autoptr(entry_view) v = entry_view_new(e, AUDIENCE_PUBLIC, G_MAXINT64, c->now_dt);

			t = render_mail_text(v);
		}
		g_string_append_printf(text, "%s%s", text->len > 0 ? "\n" : "", t);
	}
	if (ids->len == 0) {
		g_autoptr(entry) none = NULL;

		return command_entry(l, cmd, NULL, &none, err);
	}
	if (text->len > MAX_LOOKUP_TEXT) {
		g_string_truncate(text, MAX_LOOKUP_TEXT);
		g_string_append(text, "\n[... cut: the entry is longer than a mail should be]\n");
	}
	g_string_append_printf(l->out, "> %s\n  done:\n\n", cmd->line);
	{
		g_auto(GStrv) lines = g_strsplit(text->str, "\n", -1);

		for (char **p = lines; *p != NULL; p++)
			g_string_append_printf(l->out, "%s%s\n", **p ? "    " : "", *p);
	}
	return audit_command(l, g_ptr_array_index(ids, 0), cmd->word, "done", NULL, err);
}

static vulnid_status
cmd_key(lc_mail *l, const command *cmd, GError **err)
{
	g_autofree char *fpr = NULL;
	g_autoptr(GError) e2 = NULL;
	g_autoptr(GBytes) pub = NULL;

	if (crypto_home() == NULL || crypto_robot_fingerprint(&fpr, &e2) != VULNID_OK ||
	    crypto_export_public(fpr, &pub, &e2) != VULNID_OK)
		return refuse(l, cmd, NULL, "refused: this robot has no OpenPGP key", err);
	if (l->key == NULL)
		l->key = g_steal_pointer(&pub);
	{
		g_autofree char *what = g_strdup_printf("the robot's public key is attached; its fingerprint is\n  %s", fpr);

		return done(l, cmd, NULL, what, err);
	}
}

static vulnid_status
cmd_release(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_derive(e, G_MAXINT64, TRUE, l->c->now_dt);
	const char *why = need_creator(l, ri, cmd->target != NULL);
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->state != ENTRY_EMBARGOED) {
		g_autofree char *w = g_strdup_printf("refused: %s is not under embargo", e->id);

		return refuse(l, cmd, e->id, w, err);
	}
	if (entry_has_sealed(e)) {
		/* Every sealed record is disclosed by a release record; the
		 * vendor is told and the entry announced.  Subscribers get the
		 * disclosed records. */
		gint64 before = ((entry_record *) g_ptr_array_index(e->records, e->records->len - 1))->seq;
		g_autoptr(entry) after = NULL;

		s = embargo_release(l->c->st, l->c->cfg, e->id, l->c->msg_row, "creator", err);
		if (s == VULNID_OK)
			s = entry_load(l->c->st, e->id, &after, err);
		for (guint i = 0; s == VULNID_OK && i < after->records->len; i++) {
			const entry_record *r = g_ptr_array_index(after->records, i);

			if (r->seq > before)
				s = after_record(l, e->id, r->seq, err);
		}
	} else {
		/* Nothing sealed (an entry from before sealing): the creator's
		 * decision is the record. */
		const char *kv[] = { "Embargo", "no", NULL };

		s = append_command_record(l, e, ri, kv, NULL, err);
	}
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("the embargo on %s was lifted; the entry is public", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_embargo(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_derive(e, G_MAXINT64, TRUE, l->c->now_dt);
	g_autofree char *today = g_date_time_format(l->c->now_dt, "%Y-%m-%d");
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Embargo", cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if ((f->marks & ENTRY_MARK_RELEASED) || f->state != ENTRY_EMBARGOED) {
		g_autofree char *w = g_strdup_printf("refused: %s is %s; a public entry cannot be embargoed again",
						     e->id, (f->marks & ENTRY_MARK_RELEASED) ? "released"
											: "not under embargo");

		return refuse(l, cmd, e->id, w, err);
	}
	if (strcmp(cmd->arg, today) <= 0)
		return refuse(l, cmd, e->id, "refused: the date is not in the future", err);
	s = append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("the embargo on %s now ends on %s", e->id, cmd->arg);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_withdraw(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_creator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Withdrawn", cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->withdrawn != NULL) {
		g_autofree char *w = g_strdup_printf("refused: %s was already withdrawn (record %" G_GINT64_FORMAT ")",
						     e->id, f->withdrawn->record->seq);

		return refuse(l, cmd, e->id, w, err);
	}
	s = append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is withdrawn; it stays, marked as withdrawn with your reason", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_alias(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *kv[] = { "Alias", cmd->arg, NULL };
	g_autofree char *what = NULL;
	gint64 seq;
	vulnid_status s;

	for (guint k = 0; k < 2; k++) {
		GPtrArray *list = k == 0 ? f->aliases : f->proposals;

		for (guint i = 0; i < list->len; i++) {
			const entry_claim *m = g_ptr_array_index(list, i);

			if (g_ascii_strcasecmp(m->key, "Alias") != 0 || g_ascii_strcasecmp(m->value, cmd->arg) != 0)
				continue;
			what = g_strdup_printf("%s was already recorded as an alias of %s (record %" G_GINT64_FORMAT
					       "%s)", cmd->arg, e->id, m->record->seq, k == 0 ? "" : ", unverified");
			return done(l, cmd, e->id, what, err);
		}
	}
	s = append_command_record(l, e, ri, kv, &seq, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is recorded as an alias of %s (record %" G_GINT64_FORMAT "), with you as its author%s",
			       cmd->arg, e->id, seq, entry_how_verified(entry_how_from_str(ri->how))
			       && strcmp(ri->role, "third-party") != 0 ? ""
			       : ";\n  unverified: it is shown as a proposal until the creator, the vendor or a\n"
				 "  moderator records it");
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_rate(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autofree char *n = g_strdup_printf("%d", cmd->rating);
	const char *kv[] = { "Rating", n, cmd->arg != NULL ? "Rating-Reason" : NULL, cmd->arg, NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	s = append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	if (l->c->signer != NULL && l->c->unbound == NULL)
		what = g_strdup_printf("your rating %d of %s is recorded; it counts once for your key\n"
				       "  (a later rating replaces it)", cmd->rating, e->id);
	else
		what = g_strdup_printf("your rating %d of %s is recorded as unverified: only ratings\n"
				       "  signed with a key count, once per key", cmd->rating, e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_duplicate_of(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	g_autofree char *cur = g_strdup(cmd->arg);
	g_autofree char *what = NULL;
	const char *kv[] = { "Duplicate-Of", cmd->arg, NULL };
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (strcmp(cmd->arg, e->id) == 0)
		return refuse(l, cmd, e->id, "refused: an entry cannot be a duplicate of itself", err);
	/* The canonical entry must exist and must not lead back here. */
	for (int hop = 0; cur != NULL; hop++) {
		g_autoptr(entry) ce = NULL;
		g_autoptr(entry_facts) cf = NULL;
		g_autoptr(GError) e2 = NULL;

		s = entry_load(l->c->st, cur, &ce, &e2);
		if (s == VULNID_ERR_NOTFOUND) {
			g_autofree char *w = g_strdup_printf("refused: unknown ID %s", cur);

			return refuse(l, cmd, e->id, w, err);
		}
		if (s != VULNID_OK) {
			g_propagate_error(err, g_steal_pointer(&e2));
			return s;
		}
		if (hop >= MAX_DUPLICATE_CHAIN || strcmp(cur, e->id) == 0)
			return refuse(l, cmd, e->id, "refused: that would make a circle of duplicates", err);
		cf = entry_facts_now(ce);
		g_free(cur);
		cur = cf->duplicate_of != NULL ? g_strdup(cf->duplicate_of->value) : NULL;
	}
	s = append_command_record(l, e, ri, kv, NULL, err);
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s is recorded as a duplicate of %s", e->id, cmd->arg);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_spam(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	const char *kv[] = { "Spam", "yes", NULL };
	g_autofree char *what = NULL;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (f->spam == NULL) {
		s = append_command_record(l, e, ri, kv, NULL, err);
		if (s != VULNID_OK)
			return s;
	}
	what = g_strdup_printf("%s is marked as spam: kept, but withheld from announcements and exports", e->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_link(lc_mail *l, const command *cmd, entry *e, const role_info *ri, GError **err)
{
	g_autoptr(entry_facts) f = entry_facts_now(e);
	const char *why = need_moderator(l, ri, cmd->target != NULL);
	g_autoptr(entry) other = NULL;
	g_autofree char *what = NULL;
	role_info ri2;
	vulnid_status s;

	if (why != NULL)
		return refuse(l, cmd, e->id, why, err);
	if (strcmp(cmd->arg, e->id) == 0)
		return refuse(l, cmd, e->id, "refused: an entry cannot be linked to itself", err);
	s = command_entry(l, cmd, cmd->arg, &other, err);
	if (s != VULNID_OK || other == NULL)
		return s;
	for (guint i = 0; i < f->links->len; i++)
		if (strcmp(((entry_claim *) g_ptr_array_index(f->links, i))->value, cmd->arg) == 0) {
			what = g_strdup_printf("%s and %s were already linked", e->id, cmd->arg);
			return done(l, cmd, e->id, what, err);
		}
	s = role_for(l, other, &ri2, err);
	if (s != VULNID_OK)
		return s;
	{
		const char *kv1[] = { "Link", other->id, NULL };
		const char *kv2[] = { "Link", e->id, NULL };

		s = append_command_record(l, e, ri, kv1, NULL, err);
		if (s == VULNID_OK)
			s = append_command_record(l, other, &ri2, kv2, NULL, err);
	}
	if (s != VULNID_OK)
		return s;
	what = g_strdup_printf("%s and %s are linked", e->id, other->id);
	return done(l, cmd, e->id, what, err);
}

static vulnid_status
cmd_subscribe(lc_mail *l, const command *cmd, entry *e, GError **err)
{
	mail_ctx *c = l->c;
	gboolean sub = cmd->kind == CMD_SUBSCRIBE, already = FALSE;
	const char *to = reply_address_of(c);
	g_autofree char *token = NULL;
	g_autofree char *addr = entry_address(c->cfg, e->id);
	vulnid_status s;

	if (to == NULL || !config_address_valid(to))
		return refuse(l, cmd, e->id, "refused: the mail has no address to confirm with", err);
	s = is_subscribed(c->st, e->id, to, &already, err);
	if (s != VULNID_OK)
		return s;
	if (already == sub) {
		g_autofree char *w = g_strdup_printf("%s was %s subscribed to %s; nothing changes", to,
						     sub ? "already" : "not", e->id);

		return done(l, cmd, e->id, w, err);
	}
	/* The token goes only to the address that is to be (un)subscribed:
	 * nobody can subscribe someone else. */
	s = tokens_issue(c->st, e->id, sub ? "subscribe" : "unsubscribe", to, &token, err);
	if (s != VULNID_OK)
		return s;
	out_result(l, cmd->line,
		   "to confirm, reply to this mail (or write to %s) with\n"
		   "  this line at the top:\n\n"
		   "  Token: %s\n\n"
		   "  Nothing changes until then. %s",
		   addr, token, sub ? "You will then get every later public record of the entry." :
				      "You will then get no more records of the entry.");
	return audit_command(l, e->id, cmd->word, "pending", to, err);
}

/* A subscription token came back: the address proved it reads its mail. */
static vulnid_status
confirm_subscription(lc_mail *l, const token_row *t, GError **err)
{
	gboolean sub = strcmp(t->role, "subscribe") == 0, already = FALSE;
	g_autoptr(audit_event) ev = NULL;
	vulnid_status s;

	if (t->address == NULL)
		return VULNID_OK;
	s = is_subscribed(l->c->st, t->entry, t->address, &already, err);
	if (s != VULNID_OK)
		return s;
	if (already != sub) {
		s = tokens_mark(l->c->st, t->entry, sub ? "subscriber" : "unsubscribed", t->address, err);
		if (s != VULNID_OK)
			return s;
	}
	g_string_append_printf(l->out, "Token: accepted: %s is %s %s.\n\n", t->address,
			       sub ? "subscribed to" : "unsubscribed from", t->entry);
	ev = audit_event_new(sub ? "subscribed" : "unsubscribed", t->entry, l->c->m->message_id);
	audit_event_str(ev, "address", t->address);
	return audit_append(l->c->st, ev, err);
}

static vulnid_status
run_command(lc_mail *l, const command *cmd, GError **err)
{
	g_autoptr(entry) e = NULL;
	const char *id;
	role_info ri;
	vulnid_status s;

	switch (cmd->kind) {
	case CMD_UNKNOWN:
		out_result(l, cmd->line, "not understood: \"%s\" %s (the line is kept as text)", cmd->word,
			   cmd->error);
		return audit_command(l, l->routed, cmd->word, "not-understood", cmd->error, err);
	case CMD_HELP:
		l->help = TRUE;
		out_result(l, cmd->line, "done: the help text follows");
		return audit_command(l, NULL, cmd->word, "done", NULL, err);
	case CMD_KEY:
		return cmd_key(l, cmd, err);
	case CMD_LOOKUP:
		return cmd_lookup(l, cmd, err);
	default:
		break;
	}
	id = cmd->target != NULL ? cmd->target : l->routed;
	s = command_entry(l, cmd, id, &e, err);
	if (s != VULNID_OK || e == NULL)
		return s;
	s = role_for(l, e, &ri, err);
	if (s != VULNID_OK)
		return s;
	switch (cmd->kind) {
	case CMD_RELEASE:
		return cmd_release(l, cmd, e, &ri, err);
	case CMD_EMBARGO:
		return cmd_embargo(l, cmd, e, &ri, err);
	case CMD_WITHDRAW:
		return cmd_withdraw(l, cmd, e, &ri, err);
	case CMD_ALIAS:
		return cmd_alias(l, cmd, e, &ri, err);
	case CMD_RATE:
		return cmd_rate(l, cmd, e, &ri, err);
	case CMD_DUPLICATE_OF:
		return cmd_duplicate_of(l, cmd, e, &ri, err);
	case CMD_SPAM:
		return cmd_spam(l, cmd, e, &ri, err);
	case CMD_LINK:
		return cmd_link(l, cmd, e, &ri, err);
	case CMD_SUBSCRIBE:
	case CMD_UNSUBSCRIBE:
		return cmd_subscribe(l, cmd, e, err);
	default:
		return VULNID_OK;
	}
}

/* ---- replies ---------------------------------------------------------------------- */

static char *
help_text(const vulnid_config *cfg, GHashTable *vars)
{
	g_autofree char *t = NULL;
	g_autofree char *rendered = NULL;
	g_autofree char *subject = NULL;
	char *body = NULL;
	char *sig;

	if (template_load(cfg, "help.txt", &t, NULL) != VULNID_OK)
		return g_strdup("");
	rendered = template_render(t, vars);
	template_split(rendered, &subject, &body);
	if ((sig = strstr(body, "\n-- \n")) != NULL)
		sig[1] = '\0';
	return body;
}

static vulnid_status
send_reply(lc_mail *l, const char *entry_id, GError **err)
{
	mail_ctx *c = l->c;
	g_autoptr(GHashTable) vars = NULL;
	g_autofree char *reply_to = entry_id != NULL ? entry_address(c->cfg, entry_id) : NULL;
	g_autoptr(GString) subj = g_string_new(NULL);
	outbox_mail mail = { 0 };

	if (mail_reply_address(c) == NULL)
		return VULNID_OK;
	vars = mail_template_vars(c);
	{
		/* "Re: [ID] subject": the tag routes the answer to the entry. */
		const char *rest = l->subject;

		while (g_ascii_strncasecmp(rest, "Re:", 3) == 0)
			for (rest += 3; *rest == ' ' || *rest == '\t'; rest++)
				;
		g_string_append(subj, "Re: ");
		if (entry_id != NULL && strstr(rest, entry_id) == NULL)
			g_string_append_printf(subj, "[%s] ", entry_id);
		g_string_append(subj, *rest != '\0' ? rest : "your mail");
	}
	g_hash_table_insert(vars, "reply_subject", g_strdup(subj->str));
	g_hash_table_insert(vars, "to_address", entry_id != NULL ? entry_address(c->cfg, entry_id)
								 : g_strdup(c->cfg->request_address));
	g_hash_table_insert(vars, "results", g_strdup(l->out->str));
	if (l->help)
		g_hash_table_insert(vars, "help", help_text(c->cfg, vars));
	mail.kind = "entry-reply";
	mail.entry = entry_id;
	mail.reply_to = reply_to;
	if (l->key != NULL) {
		mail.attachment = l->key;
		mail.attachment_type = "application/pgp-keys";
		mail.attachment_name = "vulnid-key.asc";
	}
	return mail_queue_reply(c, "entry-reply.txt", vars, &mail, err);
}

/* ---- the entry points --------------------------------------------------------------- */

static vulnid_status
handle_limited(mail_ctx *c, const char *entry_id, GError **err)
{
	const char *to = reply_address_of(c);
	g_autofree char *since = ratelimit_since(c->now_dt, 3600);
	g_autoptr(GHashTable) vars = NULL;
	gint64 n = 0;
	vulnid_status s;

	s = mail_quarantine(c, "rate-limit",
			    entry_id != NULL ? "more mail about entries in an hour than the limit allows"
					     : "more mail in an hour than the limit allows", err);
	if (s != VULNID_OK || to == NULL || !config_address_valid(to))
		return s;
	/* One notice an hour at most: a flood must not become one back. */
	s = ratelimit_count(c->st, "SELECT count(*) FROM outbox o JOIN outbox_recipients r ON r.outbox = o.id"
			" WHERE o.kind = 'rate-limited' AND r.address = ?1 COLLATE NOCASE AND o.created >= ?2",
			to, since, &n, err);
	if (s != VULNID_OK || n > 0)
		return s;
	vars = mail_template_vars(c);
	g_hash_table_insert(vars, "what", g_strdup("more mail came from your address (or key) in the last hour\n"
						   "than this robot accepts"));
	return mail_reply(c, "rate-limited", "rate-limited.txt", vars, NULL, NULL, err);
}

static vulnid_status
handle_unknown(mail_ctx *c, const char *entry_id, GError **err)
{
	g_autoptr(GHashTable) vars = mail_template_vars(c);
	g_autoptr(audit_event) ev = audit_event_new("rejected", NULL, c->m->message_id);
	g_autofree char *clean = text_clean_line(entry_id != NULL ? entry_id : "", 64);
	vulnid_status s;

	audit_event_str(ev, "reason", "unknown entry");
	audit_event_str(ev, "entry", clean);
	s = audit_append(c->st, ev, err);
	if (s != VULNID_OK)
		return s;
	c->res->outcome = INTAKE_REJECTED;
	c->res->reason = g_strdup_printf("unknown entry %s", clean);
	g_hash_table_insert(vars, "what", g_strdup("it is about an entry that does not exist"));
	g_hash_table_insert(vars, "errors", g_strdup_printf(
		"  - there is no entry %s here: check the identifier in the address,\n"
		"    the Subject or the mail you replied to (\"lookup ID\" finds an entry)\n", clean));
	return mail_reply(c, "error", "error.txt", vars, NULL, NULL, err);
}

vulnid_status
lifecycle_handle(mail_ctx *c, lifecycle_route_kind kind, const char *entry_id, GError **err)
{
	g_autoptr(mail_text) mt = NULL;
	g_autoptr(GPtrArray) tokens = g_ptr_array_new_with_free_func(token_row_free);
	g_autoptr(GString) out = g_string_new(NULL);
	lc_mail l = { 0 };
	vulnid_status s = VULNID_OK;

	switch (kind) {
	case ROUTE_LIMITED:
		return handle_limited(c, entry_id, err);
	case ROUTE_UNKNOWN_ENTRY:
		return handle_unknown(c, entry_id, err);
	case ROUTE_ENTRY:
	case ROUTE_COMMANDS:
		break;
	case ROUTE_NEW:
		return vulnid_fail(err, VULNID_ERR_INTERNAL, "a new request is not entry mail");
	}
	mt = commands_split(c->m->text, c->cfg->prefix, (guint) c->cfg->max_fields);
	l.c = c;
	l.mt = mt;
	l.tokens = tokens;
	l.out = out;
	l.routed = kind == ROUTE_ENTRY ? entry_id : NULL;
	l.scrub_budget = MAX_SCRUB;
	l.subject = g_strdup(c->m->subject != NULL ? c->m->subject : "");
	s = tokens_scrub(c->st, &l.subject, &l.scrub_budget, err);
	if (s != VULNID_OK)
		goto out;

	/* Tokens first: they decide roles.  A token is never echoed. */
	for (guint i = 0; i < mt->tokens->len; i++) {
		token_row *t = NULL;

		s = tokens_find(c->st, g_ptr_array_index(mt->tokens, i), &t, err);
		if (s != VULNID_OK)
			goto out;
		if (t == NULL) {
			g_string_append(out, "Token: not recognised (it was not recorded).\n\n");
			continue;
		}
		if (strcmp(t->role, "creator") == 0 || strcmp(t->role, "vendor") == 0)
			g_string_append_printf(out, "Token: accepted: you act as the %s of %s.\n\n", t->role, t->entry);
		g_ptr_array_add(tokens, t);
	}
	if (mt->bad_tokens > 0)
		g_string_append_printf(out, "%u Token line%s not understood (a token is the hex string from\n"
				       "the robot's mail); %s not recorded.\n\n", mt->bad_tokens,
				       mt->bad_tokens == 1 ? " was" : "s were", mt->bad_tokens == 1 ? "it was" : "they were");

	if (c->unbound != NULL && c->signer != NULL)
		g_string_append_printf(out, "Your mail is signed by the OpenPGP key %s, but the signed text does not\n"
				       "name %s, the entry it was sent to: the signature grants no role for\n"
				       "any entry, and the mail is recorded as if it were not signed (write the\n"
				       "identifier in the signed text for the signature to count).\n\n",
				       c->signer, c->unbound);
	if (l.routed != NULL) {
		g_autoptr(entry) e = NULL;
		role_info ri;

		s = load_entry(c->st, l.routed, TRUE, &e, err);
		if (s == VULNID_OK)
			s = role_for(&l, e, &ri, err);
		if (s == VULNID_OK)
			s = handle_addition(&l, e, &ri, err);
		if (s != VULNID_OK)
			goto out;
	}
	for (guint i = 0; i < tokens->len; i++) {
		const token_row *t = g_ptr_array_index(tokens, i);

		if (strcmp(t->role, "subscribe") == 0 || strcmp(t->role, "unsubscribe") == 0)
			s = confirm_subscription(&l, t, err);
		else if (strcmp(t->role, "creator") == 0) {
			g_autoptr(entry) e = NULL;
			role_info ri;

			s = load_entry(c->st, t->entry, TRUE, &e, err);
			if (s == VULNID_OK)
				s = role_for(&l, e, &ri, err);
			if (s == VULNID_OK)
				s = confirm_if_pending(&l, t->entry, &ri, err);
		}
		if (s != VULNID_OK)
			goto out;
	}
	for (guint i = 0; i < mt->commands->len; i++) {
		s = run_command(&l, g_ptr_array_index(mt->commands, i), err);
		if (s != VULNID_OK)
			goto out;
	}
	if (mt->dropped > 0)
		g_string_append_printf(out, "%u more command line%s not handled: at most %d are handled per mail.\n\n",
				       mt->dropped, mt->dropped == 1 ? " was" : "s were", COMMANDS_MAX);
	s = send_reply(&l, l.routed, err);
out:
	g_free(l.subject);
	if (l.attachments != NULL)
		g_ptr_array_unref(l.attachments);
	if (l.key != NULL)
		g_bytes_unref(l.key);
	return s;
}

vulnid_status
lifecycle_defer_notify(mail_ctx *c, const char *entry_id, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new("unconfirmed", entry_id, c->m->message_id);
	vulnid_status s = tokens_mark(c->st, entry_id, "unconfirmed", reply_address_of(c), err);

	if (s != VULNID_OK)
		return s;
	return audit_append(c->st, ev, err);
}
