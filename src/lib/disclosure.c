/* disclosure.c - what an audience may see of an entry (disclosure.h) */
#include "autoconfig.h"

#include <string.h>

#include "disclosure.h"

const char *
audience_str(audience a)
{
	switch (a) {
	case AUDIENCE_PUBLIC: return "public";
	case AUDIENCE_MODERATOR: return "moderator";
	case AUDIENCE_VENDOR: return "vendor";
	case AUDIENCE_READER: return "reader";
	case AUDIENCE_CREATOR: return "creator";
	case AUDIENCE_OPERATOR: return "operator";
	}
	return "public";
}

/* Who may read sealed content, when the robot has unsealed it for them. */
static gboolean
may_see_sealed(audience a)
{
	return a == AUDIENCE_CREATOR || a == AUDIENCE_VENDOR || a == AUDIENCE_READER || a == AUDIENCE_OPERATOR;
}

/* Who may know an anonymous researcher. */
static gboolean
may_see_researcher(audience a)
{
	return a == AUDIENCE_CREATOR || a == AUDIENCE_OPERATOR;
}

static void
view_attachment_free(gpointer p)
{
	view_attachment *va = p;

	g_free(va->commitment);
	g_free(va);
}

static void
view_record_free(gpointer p)
{
	view_record *vr = p;

	g_ptr_array_unref(vr->attachments);
	g_free(vr);
}

/* The attachments of a record whose content the audience may see; what
 * the record withholds (an anonymous researcher's key) only as that. */
static void
view_attachments_fill(view_record *vr, const entry_view *v)
{
	for (guint i = 0; vr->content && i < vr->r->attachments->len; i++) {
		const entry_attachment *a = g_ptr_array_index(vr->r->attachments, i);
		view_attachment *va = g_new0(view_attachment, 1);

		va->a = a;
		if (a->salt != NULL) {
			va->withheld = !may_see_researcher(v->aud);
			va->private_only = !va->withheld;
			va->commitment = entry_attachment_commitment(a);
		}
		g_ptr_array_add(vr->attachments, va);
	}
}

static void
view_record_fill(view_record *vr, const entry_view *v, const entry_record *r, gboolean anonymous)
{
	/* Her records: the creator's, and those her withheld key signed (a
	 * signed mail of hers that grants no role, from another address). */
	gboolean hers = r->role == ENTRY_ROLE_CREATOR || (r->signed_by_key && r->signer_withheld);
	gboolean hide_id = anonymous && hers && !may_see_researcher(v->aud);

	vr->r = r;
	vr->sealed = entry_record_sealed_at(r, v->as_of) && !(may_see_sealed(v->aud) && r->unsealed);
	vr->content = !vr->sealed && !v->stub && !v->withheld;
	vr->author_withheld = hide_id;
	vr->author = hide_id ? NULL : r->author;
	vr->author_name = hide_id ? NULL : r->author_name;
	if (r->signed_by_key) {
		/* The key identifies its holder as well as an address does. */
		vr->signer_withheld = hide_id || r->signer == NULL ||
				      (r->signer_withheld && !may_see_researcher(v->aud));
		vr->signer = vr->signer_withheld ? NULL : r->signer;
	}
	vr->attachments = g_ptr_array_new_with_free_func(view_attachment_free);
	view_attachments_fill(vr, v);
}

entry_view *
entry_view_new(const entry *e, audience a, gint64 as_of, GDateTime *now)
{
	entry_view *v = g_new0(entry_view, 1);
	gboolean sealed_known;

	v->e = e;
	v->aud = a;
	v->as_of = as_of;
	v->records = g_ptr_array_new_with_free_func(view_record_free);
	v->commitments = g_ptr_array_new();
	v->facts = entry_facts_derive(e, as_of, may_see_sealed(a), now);
	/* Embargoed content is only ever shown unsealed; an audience that
	 * may read it but got an entry still sealed sees the stub too. */
	sealed_known = may_see_sealed(a) && v->facts->content_known;
	v->stub = v->facts->state == ENTRY_EMBARGOED && !sealed_known;
	v->withheld = (v->facts->marks & ENTRY_MARK_SPAM) && a == AUDIENCE_PUBLIC;
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);
		view_record *vr;

		if (r->rowid > as_of)
			break;
		if (entry_record_sealed_at(r, as_of))
			g_ptr_array_add(v->commitments, (gpointer) r);
		vr = g_new0(view_record, 1);
		view_record_fill(vr, v, r, v->facts->anonymous);
		g_ptr_array_add(v->records, vr);
	}
	return v;
}

void
entry_view_free(entry_view *v)
{
	if (v == NULL)
		return;
	entry_facts_free(v->facts);
	g_ptr_array_unref(v->records);
	g_ptr_array_unref(v->commitments);
	g_free(v);
}

const char *
entry_view_title(const entry_view *v)
{
	const view_record *first;

	if (v->stub || v->withheld)
		return "";
	if (v->facts->title != NULL && *v->facts->title->value != '\0')
		return v->facts->title->value;
	first = v->records->len > 0 ? g_ptr_array_index(v->records, 0) : NULL;
	if (first != NULL && first->content && first->r->subject != NULL)
		return first->r->subject;
	return "";
}

const char *
entry_view_embargo_text(const entry_view *v)
{
	const char *e = v->facts->embargo;

	if (e == NULL || g_ascii_strcasecmp(e, "yes") == 0)
		return "the researcher releases it";
	return e;
}

char *
entry_view_record_endorsement(const view_record *vr)
{
	const entry_record *r = vr->r;
	GString *s;

	if (r->role != ENTRY_ROLE_CONTRIBUTOR || r->endorsed_by == NULL)
		return NULL;
	/* the creator is never named by key here: an anonymous researcher's
	 * key is withheld */
	s = g_string_new("endorsed by the ");
	if (strcmp(r->endorsed_by, "creator") == 0)
		g_string_append(s, "creator");
	else
		g_string_append_printf(s, "moderator %s", r->endorsed_by);
	if (g_strcmp0(r->endorsement, "certification") == 0)
		g_string_append(s, " (certification)");
	if (r->endorsed_fields != NULL)
		g_string_append_printf(s, " for %s", r->endorsed_fields);
	return g_string_free(s, FALSE);
}

char *
entry_view_record_how(const view_record *vr)
{
	const entry_record *r = vr->r;
	GString *s = g_string_new(entry_role_str(r->role));

	if (r->role == ENTRY_ROLE_THIRD_PARTY)
		g_string_assign(s, "third party");
	{
		g_autofree char *endorsed = entry_view_record_endorsement(vr);

		if (endorsed != NULL)
			g_string_append_printf(s, ", %s", endorsed);
	}
	if (r->signed_by_key && r->how == ENTRY_HOW_KEY) {
		if (vr->signer != NULL)
			g_string_append_printf(s, ", signed by %s", vr->signer);
		else if (vr->author_withheld)
			g_string_append(s, ", signed by the researcher's key (withheld)");
		else
			g_string_append(s, ", signed by a key (withheld)");
	} else {
		g_string_append_printf(s, ", %s", entry_how_phrase(r->how));
		if (r->signed_by_key)
			g_string_append(s, vr->signer != NULL ? " (signed, but the key grants no role here)"
								: " (signed by a key that is withheld)");
	}
	return g_string_free(s, FALSE);
}

const char *
entry_view_attachment_label(const view_attachment *va)
{
	return g_strcmp0(va->a->content_type, "application/pgp-keys") == 0 ? "a key (withheld)"
									 : "an attachment (withheld)";
}

/* ---- the researcher's identity ------------------------------------------- */

researcher_identity *
researcher_identity_new(void)
{
	researcher_identity *id = g_new0(researcher_identity, 1);

	id->needles = g_ptr_array_new_with_free_func(g_free);
	return id;
}

void
researcher_identity_free(researcher_identity *id)
{
	if (id == NULL)
		return;
	g_ptr_array_unref(id->needles);
	g_free(id);
}

static gint
longest_first(gconstpointer a, gconstpointer b)
{
	gsize x = strlen(*(char *const *) a), y = strlen(*(char *const *) b);

	return x > y ? -1 : x < y;
}

static void
add_needle(researcher_identity *id, const char *s)
{
	g_autofree char *t = g_strstrip(g_strdup(s != NULL ? s : ""));

	/* very short strings would be cut out of every word */
	if (g_utf8_strlen(t, -1) < 4)
		return;
	for (guint i = 0; i < id->needles->len; i++)
		if (g_ascii_strcasecmp(g_ptr_array_index(id->needles, i), t) == 0)
			return;
	g_ptr_array_add(id->needles, g_steal_pointer(&t));
	g_ptr_array_sort(id->needles, longest_first);
}

void
researcher_identity_add_address(researcher_identity *id, const char *address)
{
	const char *at;

	if (address == NULL || (at = strrchr(address, '@')) == NULL)
		return;
	add_needle(id, address);
	/* "alice.smith" names her without the domain; "info" or "sec" do not */
	if (at - address >= 6) {
		g_autofree char *local = g_strndup(address, (gsize) (at - address));

		add_needle(id, local);
	}
}

void
researcher_identity_add_name(researcher_identity *id, const char *name)
{
	add_needle(id, name);
}

void
researcher_identity_add_key(researcher_identity *id, const char *fingerprint)
{
	g_autofree char *f = NULL;
	g_autoptr(GString) spaced = g_string_new(NULL);
	gsize n;

	if (fingerprint == NULL)
		return;
	f = g_ascii_strup(fingerprint, -1);
	n = strlen(f);
	if (n < 16)
		return;
	add_needle(id, f);
	add_needle(id, f + n - 16);	/* the long key ID */
	/* "ABCD EF01 ... 89AB  CDEF ...": gpg's way, with two spaces in the middle */
	for (gsize i = 0; n == 40 && i < n; i += 4) {
		if (i > 0)
			g_string_append(spaced, i == 20 ? "  " : " ");
		g_string_append_len(spaced, f + i, 4);
	}
	if (spaced->len > 0)
		add_needle(id, spaced->str);
}

/* Every armored public key block of text replaced: a key identifies its
 * holder as well as her name does. */
static char *
redact_key_blocks(const char *text)
{
	static const char begin[] = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
	static const char end[] = "-----END PGP PUBLIC KEY BLOCK-----";
	GString *out = g_string_new(NULL);
	const char *p = text, *b;

	while ((b = strstr(p, begin)) != NULL) {
		const char *e = strstr(b, end);

		g_string_append_len(out, p, b - p);
		g_string_append(out, "[a key (withheld)]");
		p = e != NULL ? e + sizeof end - 1 : b + strlen(b);
	}
	g_string_append(out, p);
	return g_string_free(out, FALSE);
}

char *
researcher_identity_redact(const researcher_identity *id, const char *text)
{
	char *r = id != NULL ? redact_key_blocks(text != NULL ? text : "") : g_strdup(text != NULL ? text : "");

	for (guint i = 0; id != NULL && i < id->needles->len; i++) {
		const char *needle = g_ptr_array_index(id->needles, i);
		gsize nl = strlen(needle);
		GString *out = g_string_sized_new(strlen(r));
		const char *p = r;

		while (*p != '\0') {
			if (g_ascii_strncasecmp(p, needle, nl) == 0) {
				g_string_append(out, "[the researcher]");
				p += nl;
			} else
				g_string_append_c(out, *p++);
		}
		g_free(r);
		r = g_string_free(out, FALSE);
	}
	return r;
}
