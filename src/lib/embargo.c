/* embargo.c - release of embargoed entries */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "crypto.h"
#include "embargo.h"
#include "entry.h"
#include "message.h"
#include "notify.h"
#include "store-embargo.h"

/* The raw message of a record, unsealed if it was stored sealed, in an
 * unlinked file: attachments are read from it again at release. */
static vulnid_status
raw_message_fd(store *st, const vulnid_config *cfg, gint64 record_row, int *fd_out, GError **err)
{
	g_autoptr(GBytes) data = NULL;
	g_autoptr(GBytes) clear = NULL;
	g_autofree char *tmpl = g_build_filename(cfg->spool_dir, "release.XXXXXX", NULL);
	vulnid_status s;
	gboolean sealed = FALSE;
	const guint8 *p;
	gsize n;
	int fd;

	s = store_embargo_raw_message(st, record_row, &data, &sealed, err);
	if (s != VULNID_OK)
		return s;
	if (sealed) {
		s = crypto_unseal(data, &clear, err);
		if (s != VULNID_OK)
			return s;
	} else
		clear = g_bytes_ref(data);
	g_mkdir_with_parents(cfg->spool_dir, 0700);
	fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot create '%s': %s",
				   tmpl, g_strerror(errno));
	unlink(tmpl);
	p = g_bytes_get_data(clear, &n);
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			close(fd);
			return vulnid_fail(err, vulnid_status_from_errno(errno), "cannot write: %s",
					   g_strerror(errno));
		}
		p += w;
		n -= (gsize) w;
	}
	lseek(fd, 0, SEEK_SET);
	*fd_out = fd;
	return VULNID_OK;
}

/* Store, in clear, the attachments the disclosed record lists. */
static vulnid_status
store_disclosed_attachments(store *st, const vulnid_config *cfg, gint64 record_row,
			    GPtrArray *wanted, GError **err)
{
	message_limits lim = {
		cfg->max_message_size, cfg->max_header_size, cfg->max_headers,
		cfg->max_line_length, cfg->max_parts, cfg->max_depth, cfg->max_request_text,
		cfg->openpgp_time_limit, cfg->max_decrypted_ratio, cfg->spool_dir,
	};
	g_autoptr(message_spool) sp = NULL;
	g_autoptr(message) m = NULL;
	vulnid_status s;
	int fd = -1;

	if (wanted->len == 0)
		return VULNID_OK;
	s = raw_message_fd(st, cfg, record_row, &fd, err);
	if (s != VULNID_OK)
		return s;
	s = message_spool_input(fd, cfg->spool_dir, cfg->max_message_size, &sp, err);
	close(fd);
	if (s == VULNID_OK)
		s = message_parse(sp, &lim, &m, err);
	if (s != VULNID_OK)
		return s;
	/* a text cut at arrival is an attachment, also if [limits]
	 * max_request_text was raised since */
	message_text_as_attachment(m);
	for (guint i = 0; i < m->attachments->len; i++) {
		char sha[65];
		gint64 size;
		int afd;

		s = message_attachment_spool(g_ptr_array_index(m->attachments, i), cfg->spool_dir,
					     &afd, &size, sha, err);
		if (s != VULNID_OK)
			return s;
		for (guint j = 0; j < wanted->len; j++) {
			entry_attachment *a = g_ptr_array_index(wanted, j);

			if (strcmp(a->sha256, sha) == 0) {
				s = store_blob_put_fd(st, afd, size, sha, err);
				break;
			}
		}
		close(afd);
		if (s != VULNID_OK)
			return s;
	}
	return VULNID_OK;
}

vulnid_status
embargo_release(store *st, const vulnid_config *cfg, const char *entry_id, gint64 cause,
		const char *why, GError **err)
{
	g_autoptr(entry) e = NULL;
	g_autoptr(entry) clear = NULL;
	g_autofree char *now = store_now();
	g_autoptr(GString) note = g_string_new(NULL);
	const char *auth = "{\"method\":\"robot\"}";
	gint64 next_seq;
	vulnid_status s;

	s = entry_load(st, entry_id, &e, err);
	if (s == VULNID_OK)
		s = entry_load(st, entry_id, &clear, err);
	if (s != VULNID_OK)
		return s;
	if (!entry_has_sealed(e))
		return vulnid_fail(err, VULNID_ERR_INVALID, "%s is not embargoed", entry_id);
	s = entry_unseal(clear, err);
	if (s != VULNID_OK)
		return s;
	next_seq = ((entry_record *) g_ptr_array_index(e->records, e->records->len - 1))->seq + 1;
	for (guint i = 0; i < clear->records->len; i++) {
		entry_record *r = g_ptr_array_index(clear->records, i);
		g_autofree char *canon = NULL;
		g_autofree char *sha = NULL;
		g_autofree char *robot = g_strdup_printf("%s@%s", cfg->request_local, cfg->domain);
		store_record rec = { 0 };
		gint64 row;

		if (r->sealed == NULL || r->disclosed)
			continue;
		canon = entry_record_canonical(entry_id, next_seq, now, "release", auth, r->subject,
					       r->fields_json, r->body, r->attachments);
		sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, canon, -1);
		s = store_disclosed_attachments(st, cfg, r->rowid, r->attachments, err);
		if (s != VULNID_OK)
			return s;
		rec.entry = entry_id;
		rec.seq = next_seq;
		rec.created = now;
		rec.kind = "release";
		rec.message = cause;
		rec.author = robot;
		rec.role = "robot";
		rec.auth = auth;
		rec.subject = r->subject;
		rec.fields = r->fields_json;
		rec.body = r->body;
		rec.sha256 = sha;
		rec.opens = r->seq;
		s = store_record_insert(st, &rec, &row, err);
		for (guint k = 0; s == VULNID_OK && k < r->attachments->len; k++)
			s = entry_attachment_store(st, row, (int) k, g_ptr_array_index(r->attachments, k), err);
		if (s == VULNID_OK) {
			/* a release is a record like any other: audited */
			g_autoptr(audit_event) ev = audit_event_new("recorded", entry_id, NULL);

			audit_event_int(ev, "seq", next_seq);
			audit_event_str(ev, "kind", "release");
			audit_event_str(ev, "role", "robot");
			audit_event_int(ev, "opens", r->seq);
			audit_event_str(ev, "sha256", sha);
			s = audit_append(st, ev, err);
		}
		if (s != VULNID_OK)
			return s;
		next_seq++;
	}
	{
		g_autoptr(audit_event) ev = audit_event_new("released", entry_id, NULL);

		audit_event_str(ev, "why", why);
		audit_event_str(ev, "commitment", e->digest);
		s = audit_append(st, ev, err);
		if (s != VULNID_OK)
			return s;
	}
	s = notify_vendor(st, cfg, cause, entry_id, note, err);
	if (s == VULNID_OK)
		s = notify_announce(st, cfg, cause, entry_id, err);
	return s;
}

vulnid_status
embargo_release_due(store *st, const vulnid_config *cfg, guint *released, GError **err)
{
	g_autoptr(GDateTime) now = store_now_datetime();
	g_autofree char *today = g_date_time_format(now, "%Y-%m-%d");
	g_autoptr(GPtrArray) ids = NULL;
	vulnid_status s;

	*released = 0;
	s = store_embargo_entries(st, &ids, err);
	if (s != VULNID_OK)
		return s;
	for (guint i = 0; i < ids->len; i++) {
		g_autoptr(entry) e = NULL;
		g_autoptr(entry_facts) f = NULL;
		const char *until;

		s = entry_load(st, g_ptr_array_index(ids, i), &e, err);
		if (s != VULNID_OK)
			return s;
		/* the date in force: the request's, or the creator's later one */
		f = entry_facts_derive(e, G_MAXINT64, FALSE, NULL);
		until = f->embargo;
		/* "yes" lasts until the creator releases it. */
		if (!entry_has_sealed(e) || until == NULL || strlen(until) != 10 || strcmp(until, today) > 0)
			continue;
		s = store_begin(st, err);
		if (s != VULNID_OK)
			return s;
		s = embargo_release(st, cfg, e->id, 0, "date", err);
		if (s == VULNID_OK) {
			/* what was sealed now reaches the entry's subscribers */
			g_autoptr(entry) after = NULL;

			s = entry_load(st, e->id, &after, err);
			for (guint k = 0; s == VULNID_OK && k < after->records->len; k++) {
				entry_record *r = g_ptr_array_index(after->records, k);

				if (r->opens > 0 && r->seq > ((entry_record *) g_ptr_array_index(e->records,
									e->records->len - 1))->seq)
					s = notify_tell_subscribers(st, cfg, now, 0, e->id, r->seq, err);
			}
		}
		if (s != VULNID_OK) {
			store_rollback(st);
			return s;
		}
		s = store_commit(st, err);
		if (s != VULNID_OK)
			return s;
		(*released)++;
	}
	return VULNID_OK;
}
