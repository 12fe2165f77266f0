/* policy.c - the outgoing-mail policy (see policy.h) */
#include "autoconfig.h"

#include <string.h>
#include <gio/gio.h>

#include "audit.h"
#include "policy.h"
#include "store-answers.h"
#include "store-policy.h"
#include "template.h"
#include "text.h"
#include "tokens.h"

/* Top-level and special-use names that never take mail from this robot
 * (RFC 2606, 6761, 6762, 8375 and common private ones). */
static const char *const reserved_tlds[] = {
	"localhost", "local", "localdomain", "invalid", "test", "example", "internal", "lan",
	"home", "corp", "intranet", "private", "onion", "arpa", "alt",
};

/* ---- addresses ---------------------------------------------------------------- */

static char *
domain_of(const char *address)
{
	const char *at = address != NULL ? strrchr(address, '@') : NULL;

	return g_ascii_strdown(at != NULL ? at + 1 : "", -1);
}

/* d is domain or below it. */
static gboolean
within(const char *d, const char *domain)
{
	gsize n = strlen(d), m = strlen(domain);

	if (m == 0 || n < m || g_ascii_strcasecmp(d + n - m, domain) != 0)
		return FALSE;
	return n == m || d[n - m - 1] == '.';
}

static gboolean
allowed_reserved(const vulnid_config *cfg, const char *domain)
{
	g_autofree char *list = config_key_string(cfg, "policy", "allow_reserved_domains");
	g_auto(GStrv) parts = g_strsplit(list, ",", -1);

	for (char **p = parts; *p != NULL; p++) {
		char *a = g_strstrip(*p);

		while (*a == '.')
			a++;
		if (*a != '\0' && within(domain, a))
			return TRUE;
	}
	return FALSE;
}

const char *
policy_address_refusal(const vulnid_config *cfg, const char *address)
{
	const char *at;
	g_autofree char *domain = NULL;
	g_autofree char *local = NULL;
	g_autoptr(GInetAddress) ip = NULL;
	const char *tld, *first_dot;

	if (address == NULL || (at = strrchr(address, '@')) == NULL || at == address)
		return "not one mail address";
	local = g_strndup(address, (gsize) (at - address));
	domain = g_ascii_strdown(at + 1, -1);
	if (strchr(local, '"') != NULL || strchr(local, '\\') != NULL)
		return "a quoted local part";
	if (strpbrk(local, "%!@:,;<>()[] ") != NULL)
		return "a source route or relay syntax in the local part";
	if (*domain == '[' || strchr(domain, ':') != NULL)
		return "an address literal";
	ip = g_inet_address_new_from_string(domain);
	if (ip != NULL || strspn(domain, "0123456789.") == strlen(domain))
		return "an address literal";
	if (within(domain, cfg->domain))
		return "the robot's own domain";
	if (allowed_reserved(cfg, domain))
		return NULL;
	first_dot = strchr(domain, '.');
	if (first_dot == NULL)
		return "a single-label (local) name";
	if (g_str_has_prefix(domain, "localhost."))
		return "a local name";
	tld = strrchr(domain, '.') + 1;
	for (gsize i = 0; i < G_N_ELEMENTS(reserved_tlds); i++)
		if (strcmp(tld, reserved_tlds[i]) == 0)
			return "a local or reserved name";
	if (within(domain, "home.arpa"))
		return "a local or reserved name";
	return NULL;
}

/* ---- the mail being handled --------------------------------------------------- */

static GHashTable *mails;	/* cause -> policy_mail* (copies) */

static void
policy_mail_free(gpointer p)
{
	policy_mail *pm = p;

	g_free((char *) pm->from);
	g_free((char *) pm->envelope_sender);
	g_free((char *) pm->suspect_why);
	g_free(pm);
}

void
policy_mail_begin(const policy_mail *pm)
{
	policy_mail *c = g_new0(policy_mail, 1);

	if (mails == NULL)
		mails = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, policy_mail_free);
	*c = *pm;
	c->from = g_strdup(pm->from);
	c->envelope_sender = g_strdup(pm->envelope_sender);
	c->suspect_why = g_strdup(pm->suspect_why);
	g_hash_table_replace(mails, &c->cause, c);
}

void
policy_mail_end(gint64 cause)
{
	if (mails != NULL)
		g_hash_table_remove(mails, &cause);
}

static const policy_mail *
mail_of(gint64 cause)
{
	return mails != NULL && cause > 0 ? g_hash_table_lookup(mails, &cause) : NULL;
}

/* ---- classes --------------------------------------------------------------------- */

typedef enum { CLASS_ANSWER, CLASS_UNSOLICITED, CLASS_ASKED, CLASS_OPERATOR } mail_class;

static mail_class
class_of(const char *kind)
{
	static const char *const answers[] = {
		"ack", "error", "help", "key", "entry-reply", "rate-limited", "answers-paused",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(answers); i++)
		if (strcmp(kind, answers[i]) == 0)
			return CLASS_ANSWER;
	/* asked for: by confirmed subscribers, and by a key that asked for
	 * the sealed records in a signed mail and was granted them */
	if (strcmp(kind, "subscription") == 0 || strcmp(kind, "access-delivery") == 0)
		return CLASS_ASKED;
	if (strcmp(kind, "announce") == 0 || strcmp(kind, "announce-digest") == 0)
		return CLASS_OPERATOR;
	return CLASS_UNSOLICITED;
}

static const char *
class_name(mail_class c)
{
	return c == CLASS_ANSWER ? "answer" : c == CLASS_UNSOLICITED ? "unsolicited"
	       : c == CLASS_ASKED ? "asked" : "operator";
}

/* An address that did not write the mail: not its From, not its envelope
 * sender, nor in the domain of either. */
static gboolean
third_party(const policy_mail *pm, const char *to)
{
	g_autofree char *d = domain_of(to);
	g_autofree char *fd = pm != NULL ? domain_of(pm->from) : NULL;
	g_autofree char *ed = pm != NULL ? domain_of(pm->envelope_sender) : NULL;

	if (pm == NULL)
		return TRUE;
	return !(*d != '\0' && ((fd != NULL && g_ascii_strcasecmp(d, fd) == 0) ||
				(ed != NULL && g_ascii_strcasecmp(d, ed) == 0)));
}

/* ---- the ledger ------------------------------------------------------------------- */

static char *
since(gint64 hours)
{
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autoptr(GDateTime) t = g_date_time_add_hours(now, (gint) -hours);

	return g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ");
}

static vulnid_status
ledger_add(store *st, gint64 cause, gint64 outbox, const char *kind, mail_class cls, gboolean third,
	   gboolean suspect, const char *address, gint64 bytes, GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *domain = domain_of(address);
	store_ledger_row r = { now, cause, outbox, kind, class_name(cls), third, suspect,
			       address, domain, bytes };

	return store_policy_ledger_add(st, &r, err);
}

static vulnid_status
audit_policy(store *st, const char *event, const char *entry_id, const char *kind, const char *to,
	     const char *why, GError **err)
{
	g_autoptr(audit_event) ev = audit_event_new(event, entry_id, NULL);

	audit_event_str(ev, "kind", kind);
	audit_event_str(ev, "to", to);
	audit_event_str(ev, "reason", why);
	return audit_append(st, ev, err);
}

/* Addresses let through so far in one batch (one mail to several), not
 * in the ledger yet: they count against the caps as well. */
typedef struct {
	GPtrArray *addresses;
} batch;

static gint64
batch_in_domain(const batch *b, const char *domain)
{
	gint64 n = 0;

	for (guint i = 0; b != NULL && i < b->addresses->len; i++) {
		g_autofree char *d = domain_of(g_ptr_array_index(b->addresses, i));

		n += g_ascii_strcasecmp(d, domain) == 0;
	}
	return n;
}

/* Why one more third-party mail to address may not go now, or NULL:
 * the caps per address and domain and day, and the mail's own bound of
 * third-party addresses (not for mail signed by a known key). */
static vulnid_status
third_party_refusal(store *st, const vulnid_config *cfg, const policy_mail *pm, const char *address,
		    const batch *b, const char **why, GError **err)
{
	g_autofree char *day = since(24);
	g_autofree char *domain = domain_of(address);
	gint64 cap_a = config_key_int(cfg, "policy", "per_address_per_day");
	gint64 cap_d = config_key_int(cfg, "policy", "per_domain_per_day");
	gint64 per_mail = config_key_int(cfg, "policy", "third_party_per_mail");
	gint64 n = 0;
	vulnid_status s;

	*why = NULL;
	s = store_policy_unasked_to_address(st, address, day, &n, err);
	if (s != VULNID_OK)
		return s;
	if (n >= cap_a) {
		*why = "the address has had [policy] per_address_per_day mails nobody asked for today";
		return VULNID_OK;
	}
	s = store_policy_unasked_to_domain(st, domain, day, &n, err);
	if (s != VULNID_OK)
		return s;
	if (n + batch_in_domain(b, domain) >= cap_d) {
		*why = "the domain has had [policy] per_domain_per_day mails nobody asked for today";
		return VULNID_OK;
	}
	if (pm == NULL || pm->signed_mail)
		return VULNID_OK;
	s = store_policy_third_parties_of(st, pm->cause, address, &n, err);
	if (s == VULNID_OK && n + (b != NULL ? b->addresses->len : 0) >= per_mail)
		*why = "one mail not signed by a known key makes the robot write to at most "
		       "[policy] third_party_per_mail addresses that did not write to it";
	return s;
}

/* Bytes to third parties this mail may still cause. */
static vulnid_status
budget_left(store *st, const vulnid_config *cfg, const policy_mail *pm, gint64 *left, GError **err)
{
	gint64 factor = config_key_int(cfg, "policy", "amplification");
	gint64 floor = config_key_int(cfg, "policy", "amplification_floor");
	gint64 used = 0;
	vulnid_status s;

	*left = G_MAXINT64;
	if (pm == NULL || pm->signed_mail)
		return VULNID_OK;
	s = store_policy_third_party_bytes(st, pm->cause, &used, err);
	*left = factor * MAX(pm->size, floor) - used;
	return s;
}

/* ---- the gate ------------------------------------------------------------------------ */

/* *braked when the address had loop_answers answers to suspect mail in
 * loop_hours; *last when this answer is the last one before that. */
static vulnid_status
loop_brake(store *st, const vulnid_config *cfg, const policy_mail *pm, const char *to,
	   gboolean *braked, gboolean *last, GError **err)
{
	g_autofree char *period = since(config_key_int(cfg, "policy", "loop_hours"));
	gint64 limit = config_key_int(cfg, "policy", "loop_answers");
	gint64 n = 0;
	vulnid_status s;

	*braked = *last = FALSE;
	if (pm == NULL || !pm->suspect || pm->signed_mail)
		return VULNID_OK;
	s = store_policy_suspect_answers(st, to, period, limit, &n, err);
	*braked = s == VULNID_OK && n >= limit;
	*last = s == VULNID_OK && n + 1 == limit;
	return s;
}

/* The last answer before the loop brake says so, above its signature:
 * the silence that follows is announced, not a mystery. */
static char *
last_answer_body(const vulnid_config *cfg, const char *body)
{
	const char *sig = strstr(body, "\n-- \n");
	gsize at = sig != NULL ? (gsize) (sig - body) + 1 : strlen(body);
	gint64 hours = config_key_int(cfg, "policy", "loop_hours");
	g_autofree char *note = g_strdup_printf(
		"This is the last answer to your address for %" G_GINT64_FORMAT " hour%s: your mail looks "
		"automatic or repeats itself (it answers or quotes the robot's own mail, or was sent "
		"before). Until then such mail from you is recorded but not answered; write a new mail "
		"(not a reply) if you need an answer.", hours, hours == 1 ? "" : "s");
	g_autofree char *wrapped = text_wrap(note, 78);

	return g_strdup_printf("%.*s%s%s\n\n%s", (int) at, body,
			       at > 0 && body[at - 1] != '\n' ? "\n" : "", wrapped, body + at);
}

/* Queue, measure, and take back what is over the mail's byte budget
 * (*over) or over answer_left, what the address may still be answered
 * (*over_answers). */
static vulnid_status
queue_measured(store *st, const vulnid_config *cfg, gint64 cause, const policy_mail *pm, outbox_mail *mail,
	       mail_class cls, GPtrArray *to, gboolean third, gint64 answer_left, gint64 *id, gint64 *bytes_out,
	       gboolean *over, gboolean *over_answers, GError **err)
{
	gint64 left = G_MAXINT64, bytes = 0;
	vulnid_status s;

	*over = FALSE;
	if (over_answers != NULL)
		*over_answers = FALSE;
	if (third) {
		s = budget_left(st, cfg, pm, &left, err);
		if (s != VULNID_OK)
			return s;
	}
	s = store_savepoint(st, "policy", err);
	if (s == VULNID_OK)
		s = outbox_queue(st, cfg, cause, mail, id, err);
	if (s == VULNID_OK)
		s = store_policy_outbox_size(st, *id, &bytes, err);
	if (s != VULNID_OK)
		return s;
	if (strcmp(cfg->sign, "none") != 0)
		bytes += 1024;	/* the signature added at delivery */
	if ((third && bytes * (gint64) to->len > left) || bytes > answer_left) {
		*over = bytes <= answer_left;
		if (over_answers != NULL)
			*over_answers = !*over;
		*id = 0;
		return store_rollback_to(st, "policy", err);
	}
	if (bytes_out != NULL)
		*bytes_out = bytes;
	s = store_release(st, "policy", err);
	for (guint i = 0; s == VULNID_OK && i < to->len; i++) {
		const char *a = g_ptr_array_index(to, i);

		s = ledger_add(st, cause, *id, mail->kind, cls, cls == CLASS_ANSWER ? third : third_party(pm, a),
			       pm != NULL && pm->suspect, a, bytes, err);
	}
	return s;
}

/* ---- the answer budget of unverified mail ----------------------------------------- */

static gint64
hour_now(void)
{
	g_autoptr(GDateTime) now = store_now_datetime();

	return g_date_time_to_unix(now) / 3600;
}

/* Whether answers to address count against its budget, and what is left
 * of it (*left) and whether it was told that answers stopped. */
static vulnid_status
answer_budget(store *st, const vulnid_config *cfg, const policy_mail *pm, const char *address,
	      gboolean *counted, gint64 *left, gboolean *noticed, GError **err)
{
	g_autofree char *a = g_ascii_strdown(address, -1);
	gint64 bytes = 0, notices = 0;
	vulnid_status s;

	*counted = pm != NULL && !pm->verified && cfg->unverified_answer_bytes > 0;
	*left = G_MAXINT64;
	*noticed = FALSE;
	if (!*counted)
		return VULNID_OK;
	s = store_answers_used(st, a, hour_now() - cfg->unverified_answer_hours + 1, &bytes, &notices, err);
	*noticed = notices > 0;
	/* Once told that answers stopped, the address gets nothing more in
	 * the period, not even an answer small enough for what is left:
	 * the notice said so. */
	*left = *noticed ? 0 : MAX(cfg->unverified_answer_bytes - bytes, 0);
	return s;
}

static vulnid_status
answer_count(store *st, const char *address, gint64 bytes, gint64 notices, GError **err)
{
	g_autofree char *a = g_ascii_strdown(address, -1);

	return store_answers_add(st, a, hour_now(), bytes, notices, err);
}

/* The one notice that answers to address stop for the period, in the
 * thread of the mail that asked; it counts as what it is. */
static vulnid_status
answers_paused(store *st, const vulnid_config *cfg, gint64 cause, const policy_mail *pm,
	       const outbox_mail *answer, GError **err)
{
	g_autoptr(GHashTable) vars = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	g_autofree char *text = NULL;
	g_autofree char *rendered = NULL;
	g_autofree char *subject = NULL;
	g_autofree char *body = NULL;
	outbox_mail mail = { 0 };
	gint64 id = 0, bytes = 0;
	vulnid_status s;

	g_hash_table_insert(vars, "address", text_clean_line(answer->to_addr, 320));
	g_hash_table_insert(vars, "hours", g_strdup_printf("%" G_GINT64_FORMAT, cfg->unverified_answer_hours));
	g_hash_table_insert(vars, "domain", g_strdup(cfg->domain));
	g_hash_table_insert(vars, "request_address", g_strdup(cfg->request_address));
	g_hash_table_insert(vars, "page", cfg->export_base_url != NULL && *cfg->export_base_url != '\0'
			    ? g_strdup_printf("on %s", cfg->export_base_url)
			    : g_strdup_printf("in a signed mail (\"lookup ID\") to %s", cfg->request_address));
	s = template_load(cfg, "answers-paused.txt", &text, err);
	if (s != VULNID_OK)
		return s;
	rendered = template_render(text, vars);
	template_split(rendered, &subject, &body);
	mail.kind = "answers-paused";
	mail.to_addr = answer->to_addr;
	mail.subject = subject != NULL ? subject : "vulnid";
	mail.body = body;
	mail.in_reply_to = answer->in_reply_to;
	mail.references = answer->references;
	mail.bulk = TRUE;
	s = outbox_queue(st, cfg, cause, &mail, &id, err);
	if (s == VULNID_OK)
		s = store_policy_outbox_size(st, id, &bytes, err);
	if (s == VULNID_OK)
		s = ledger_add(st, cause, id, mail.kind, CLASS_ANSWER, FALSE, pm->suspect, answer->to_addr, bytes, err);
	if (s == VULNID_OK)
		s = answer_count(st, answer->to_addr, bytes, 1, err);
	if (s == VULNID_OK) {
		g_autoptr(audit_event) ev = audit_event_new("answers-paused", NULL, NULL);

		audit_event_str(ev, "to", answer->to_addr);
		audit_event_int(ev, "outbox", id);
		s = audit_append(st, ev, err);
	}
	return s;
}

/* Queue an answer to the one address in to within what its budget leaves
 * (no budget: verified mail); past it, the notice once, then nothing. */
static vulnid_status
queue_answer_budgeted(store *st, const vulnid_config *cfg, gint64 cause, const policy_mail *pm,
		      outbox_mail *mail, GPtrArray *to, gboolean third, gint64 *id, gboolean *over, GError **err)
{
	gboolean counted, noticed, over_answers = FALSE;
	gint64 left, bytes = 0;
	vulnid_status s;

	s = answer_budget(st, cfg, pm, g_ptr_array_index(to, 0), &counted, &left, &noticed, err);
	if (s == VULNID_OK)
		s = queue_measured(st, cfg, cause, pm, mail, CLASS_ANSWER, to, third, left, id, &bytes, over,
				   &over_answers, err);
	if (s != VULNID_OK || *over)
		return s;
	if (over_answers) {
		s = audit_policy(st, "policy-held", mail->entry, mail->kind, mail->to_addr,
				 "answers to mail that does not prove its address: [policy] "
				 "unverified_answer_bytes in unverified_answer_hours reached", err);
		if (s == VULNID_OK && !noticed)
			s = answers_paused(st, cfg, cause, pm, mail, err);
		return s;
	}
	return counted ? answer_count(st, g_ptr_array_index(to, 0), bytes, 0, err) : VULNID_OK;
}

static vulnid_status
queue_answer(store *st, const vulnid_config *cfg, gint64 cause, const policy_mail *pm, outbox_mail *mail,
	     gint64 *id, GError **err)
{
	g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func(g_free);
	const char *why = NULL;
	gboolean braked = FALSE, last = FALSE, third, over = FALSE;
	g_autofree char *body = NULL;
	vulnid_status s;

	s = loop_brake(st, cfg, pm, mail->to_addr, &braked, &last, err);
	if (s != VULNID_OK)
		return s;
	if (braked) {
		*id = 0;
		return audit_policy(st, "loop-brake", mail->entry, mail->kind, mail->to_addr,
				    pm->suspect_why, err);
	}
	if (last && mail->body != NULL) {
		body = last_answer_body(cfg, mail->body);
		mail->body = body;
	}
	third = pm != NULL && third_party(pm, mail->to_addr);
	if (third)
		s = third_party_refusal(st, cfg, pm, mail->to_addr, NULL, &why, err);
	if (s != VULNID_OK)
		return s;
	g_ptr_array_add(to, g_strdup(mail->to_addr));
	if (why == NULL) {
		s = queue_answer_budgeted(st, cfg, cause, pm, mail, to, third, id, &over, err);
		if (s != VULNID_OK || !over)
			return s;
		why = "the answer is larger than the robot sends to a third party for this mail";
	}
	/* A Reply-To in another domain gets no more than the budget: the
	 * answer goes to the sender, From, instead. */
	if (pm->from == NULL || !config_address_valid(pm->from) || third_party(pm, pm->from)) {
		*id = 0;
		return audit_policy(st, "policy-held", mail->entry, mail->kind, mail->to_addr, why, err);
	}
	s = audit_policy(st, "policy-redirected", mail->entry, mail->kind, mail->to_addr, why, err);
	if (s != VULNID_OK)
		return s;
	mail->to_addr = pm->from;
	mail->to_name = NULL;
	g_ptr_array_set_size(to, 0);
	g_ptr_array_add(to, g_strdup(pm->from));
	return queue_answer_budgeted(st, cfg, cause, pm, mail, to, FALSE, id, &over, err);
}

vulnid_status
policy_queue(store *st, const vulnid_config *cfg, gint64 cause, outbox_mail *mail, gint64 *id_out,
	     GError **err)
{
	const policy_mail *pm = mail_of(cause);
	mail_class cls = class_of(mail->kind);
	g_autoptr(GPtrArray) to = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) list = g_ptr_array_new();
	const char *const *saved = mail->to_list;
	gboolean over = FALSE;
	gint64 id = 0;
	vulnid_status s = VULNID_OK;

	if (id_out != NULL)
		*id_out = 0;
	if (cls == CLASS_ANSWER && mail->to_list == NULL) {
		s = queue_answer(st, cfg, cause, pm, mail, &id, err);
		goto out;
	}
	if (mail->to_list != NULL)
		for (const char *const *t = mail->to_list; *t; t++)
			g_ptr_array_add(to, g_strdup(*t));
	else
		g_ptr_array_add(to, g_strdup(mail->to_addr));
	if (cls == CLASS_UNSOLICITED)
		for (guint i = 0; i < to->len;) {
			const char *why = NULL;
			batch b = { list };

			s = third_party(pm, g_ptr_array_index(to, i))
			    ? third_party_refusal(st, cfg, pm, g_ptr_array_index(to, i), &b, &why, err) : VULNID_OK;
			if (s == VULNID_OK && why != NULL)
				s = audit_policy(st, "policy-held", mail->entry, mail->kind,
						 g_ptr_array_index(to, i), why, err);
			if (s != VULNID_OK)
				return s;
			if (why != NULL)
				g_ptr_array_remove_index(to, i);
			else
				g_ptr_array_add(list, g_ptr_array_index(to, i++));
		}
	else
		for (guint i = 0; i < to->len; i++)
			g_ptr_array_add(list, g_ptr_array_index(to, i));
	if (to->len == 0)
		return VULNID_OK;
	g_ptr_array_add(list, NULL);
	if (mail->to_list != NULL)
		mail->to_list = (const char *const *) list->pdata;
	s = queue_measured(st, cfg, cause, pm, mail, cls, to, cls == CLASS_UNSOLICITED, G_MAXINT64, &id, NULL, &over,
			   NULL, err);
	mail->to_list = saved;
	if (s == VULNID_OK && over) {
		g_autofree char *all = NULL;

		g_ptr_array_set_size(list, list->len - 1);
		g_ptr_array_add(list, NULL);
		all = g_strjoinv(", ", (char **) list->pdata);
		s = audit_policy(st, "policy-held", mail->entry, mail->kind, all,
				 "more bytes to third parties than [policy] amplification allows for this mail", err);
	}
out:
	if (id_out != NULL)
		*id_out = id;
	return s;
}

/* ---- vendor contacts ----------------------------------------------------------------- */

/* A creator who proved it: the request was signed by a known key, or a
 * later record of the creator came with its key or token. */
static gboolean
creator_verified(const entry *e)
{
	for (guint i = 0; i < e->records->len; i++) {
		const entry_record *r = g_ptr_array_index(e->records, i);

		if (i == 0 && r->signed_by_key)
			return TRUE;
		if (r->role == ENTRY_ROLE_CREATOR && (r->how == ENTRY_HOW_KEY || r->how == ENTRY_HOW_TOKEN))
			return TRUE;
	}
	return FALSE;
}

/* Addresses the entry's vendor was told at (the vendor tokens' rows),
 * since its embargo ended if it had one: the release tells them again, in
 * full. */
static vulnid_status
already_told(store *st, const char *entry_id, GPtrArray *out, GError **err)
{
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_free);
	vulnid_status s = store_policy_vendor_told(st, entry_id, rows, err);

	for (guint i = 0; s == VULNID_OK && i < rows->len; i++) {
		g_auto(GStrv) parts = g_strsplit(g_ptr_array_index(rows, i), ",", -1);

		for (char **p = parts; *p != NULL; p++)
			g_ptr_array_add(out, g_strstrip(g_strdup(*p)));
	}
	return s;
}

/* The token is the SHA-256 of a secret nobody keeps: held addresses are
 * never reachable by a token. */
vulnid_status
policy_hold_contacts(store *st, const char *entry_id, const char *addresses, GError **err)
{
	g_autofree char *now = store_now();
	g_autofree char *key = tokens_mark_key(err);

	if (key == NULL)
		return VULNID_ERR_TEMP;
	return store_policy_hold(st, key, entry_id, addresses, now, err);
}

vulnid_status
policy_entry_held(store *st, const char *entry_id, gboolean *held, GError **err)
{
	gint64 n = 0;
	vulnid_status s = store_policy_held_count(st, entry_id, &n, err);

	*held = n > 0;
	return s;
}

vulnid_status
policy_vendor_contacts(store *st, const vulnid_config *cfg, gint64 cause, const entry *e, const char *how,
		       GPtrArray *to, GString *note, GError **err)
{
	const policy_mail *pm = mail_of(cause);
	g_autoptr(GPtrArray) told = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) passed = g_ptr_array_new();
	g_autoptr(GString) held = g_string_new(NULL);
	batch b = { passed };
	gboolean directory = strcmp(how, "directory") == 0;
	gboolean verified = creator_verified(e);
	vulnid_status s;

	s = already_told(st, e->id, told, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < to->len;) {
		const char *a = g_ptr_array_index(to, i);
		const char *why = NULL, *event = "policy-refused";
		gboolean seen = FALSE;

		for (guint j = 0; j < told->len; j++)
			seen |= g_ascii_strcasecmp(a, g_ptr_array_index(told, j)) == 0;
		if (seen) {
			g_ptr_array_remove_index(to, i);
			continue;
		}
		if (!directory)
			why = policy_address_refusal(cfg, a);
		if (why != NULL) {
			g_autofree char *shown = text_clean_line(a, 100);

			g_string_append_printf(note, "%s: the vendor contact %s is refused: %s.\n", e->id, shown, why);
		} else if (strcmp(how, "vendor-contact") == 0 && !verified) {
			why = "a Vendor-Contact of a request that is not signed waits for the creator's token";
			event = "policy-held";
		} else if (third_party(pm, a)) {
			s = third_party_refusal(st, cfg, pm, a, &b, &why, err);
			if (s != VULNID_OK)
				return s;
			event = "policy-held";
		}
		if (why == NULL) {
			g_ptr_array_add(passed, g_ptr_array_index(to, i++));
			continue;
		}
		if (strcmp(event, "policy-held") == 0)
			g_string_append_printf(held, "%s%s", held->len ? ", " : "", a);
		s = audit_policy(st, event, e->id, "vendor-notify", a, why, err);
		if (s != VULNID_OK)
			return s;
		g_ptr_array_remove_index(to, i);
	}
	if (held->len == 0)
		return VULNID_OK;
	g_string_append_printf(note, "%s: the vendor contact %s is held: it is told once you confirm\n"
			       "  the request: send a mail with the line \"Token: ...\" (the entry's token) to\n"
			       "  the entry's address.\n", e->id, held->str);
	return policy_hold_contacts(st, e->id, held->str, err);
}
