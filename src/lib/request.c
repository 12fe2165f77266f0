/* request.c - parse the text of a request into blocks of fields */
#include "autoconfig.h"

#include <string.h>
#include <gmime/gmime.h>

#include "canonjson.h"
#include "entry.h"
#include "request.h"
#include "text.h"

typedef struct {
	const char *name;
	gboolean repeatable;
} known_key;

static const known_key known_keys[] = {
	{ "Vendor", FALSE }, { "Product", FALSE }, { "Version", TRUE },
	{ "Title", FALSE }, { "Type", FALSE }, { "Reference", TRUE },
	{ "Vendor-Contact", FALSE }, { "Embargo", FALSE }, { "Anonymous", FALSE }, { "Mirror", TRUE },
};

static void
field_free(gpointer p)
{
	request_field *f = p;

	g_free(f->key);
	g_free(f->value);
	g_free(f);
}

static void
block_free(gpointer p)
{
	request_block *b = p;

	g_ptr_array_unref(b->fields);
	g_free(b->description);
	g_free(b);
}

void
request_free(request *r)
{
	if (r == NULL)
		return;
	g_ptr_array_unref(r->blocks);
	g_ptr_array_unref(r->errors);
	g_ptr_array_unref(r->warnings);
	g_free(r);
}

const char *
request_block_get(const request_block *b, const char *key)
{
	for (guint i = 0; i < b->fields->len; i++) {
		request_field *f = g_ptr_array_index(b->fields, i);

		if (g_ascii_strcasecmp(f->key, key) == 0)
			return f->value;
	}
	return NULL;
}

const char *
request_block_title(const request_block *b, const char *subject)
{
	const char *t = request_block_get(b, "Title");

	if (t != NULL && *t != '\0')
		return t;
	return subject != NULL ? subject : "";
}

char *
request_block_fields_json(const request_block *b)
{
	GString *s = g_string_new("[");

	for (guint i = 0; i < b->fields->len; i++) {
		request_field *f = g_ptr_array_index(b->fields, i);

		if (i > 0)
			g_string_append_c(s, ',');
		g_string_append_c(s, '[');
		canonjson_string(s, f->key);
		g_string_append_c(s, ',');
		canonjson_string(s, f->value);
		g_string_append_c(s, ']');
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

gsize
request_field_name_len(const char *line)
{
	gsize n = 0;

	if (!g_ascii_isalpha(line[0]))
		return 0;
	while (g_ascii_isalnum(line[n]) || line[n] == '-')
		if (++n > 64)
			return 0;
	if (line[n] != ':')
		return 0;
	if (line[n + 1] != '\0' && line[n + 1] != ' ' && line[n + 1] != '\t')
		return 0;
	return n;
}

static const known_key *
find_known(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(known_keys); i++)
		if (g_ascii_strcasecmp(known_keys[i].name, name) == 0)
			return &known_keys[i];
	return NULL;
}

gboolean
request_field_known(const char *name)
{
	return find_known(name) != NULL;
}

/* A line that starts a field of a known name (Vendor:, Version:, ...). */
static gboolean
known_field_line(const char *line)
{
	gsize n = request_field_name_len(line);
	g_autofree char *name = n > 0 ? g_strndup(line, n) : NULL;

	return name != NULL && find_known(name) != NULL;
}

static gboolean
is_blank(const char *line)
{
	for (; *line; line++)
		if (!g_ascii_isspace(*line))
			return FALSE;
	return TRUE;
}

static void
add_msg(GPtrArray *to, guint block, guint nblocks, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static void
add_msg(GPtrArray *to, guint block, guint nblocks, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *msg = NULL;

	if (to->len >= 50)
		return;
	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (nblocks > 1)
		g_ptr_array_add(to, g_strdup_printf("block %u: %s", block + 1, msg));
	else
		g_ptr_array_add(to, g_steal_pointer(&msg));
}

/* Exactly YYYY-MM-DD: digits and dashes, nothing else. */
static gboolean
is_iso_date(const char *v, int *y, int *mo, int *d)
{
	if (strlen(v) != 10 || v[4] != '-' || v[7] != '-')
		return FALSE;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !g_ascii_isdigit(v[i]))
			return FALSE;
	*y = (int) g_ascii_strtoll(v, NULL, 10);
	*mo = (int) g_ascii_strtoll(v + 5, NULL, 10);
	*d = (int) g_ascii_strtoll(v + 8, NULL, 10);
	return TRUE;
}

/* Whether a word after the first of value starts with sha256= (a checksum
 * meant, whether or not well written). */
static gboolean
checksum_word(const char *value)
{
	g_auto(GStrv) w = g_strsplit_set(value, " \t", -1);
	gboolean first = TRUE;

	for (char **p = w; *p != NULL; p++) {
		if (**p == '\0')
			continue;
		if (!first && g_ascii_strncasecmp(*p, "sha256=", 7) == 0)
			return TRUE;
		first = FALSE;
	}
	return FALSE;
}

static void
validate_field(request *r, const request_field *f, guint bi, guint nb, GDateTime *now)
{
	if (g_ascii_strcasecmp(f->key, "Embargo") == 0) {
		int y, mo, d;

		if (g_ascii_strcasecmp(f->value, "yes") == 0 || g_ascii_strcasecmp(f->value, "no") == 0)
			return;
		if (!is_iso_date(f->value, &y, &mo, &d) ||
		    !g_date_valid_dmy((GDateDay) d, (GDateMonth) mo, (GDateYear) y)) {
			add_msg(r->errors, bi, nb,
				"Embargo: '%s' is not a date YYYY-MM-DD (or yes, until released)", f->value);
			return;
		}
		{
			g_autofree char *today = g_date_time_format(now, "%Y-%m-%d");

			if (strcmp(f->value, today) < 0)
				add_msg(r->errors, bi, nb, "Embargo: %s is in the past", f->value);
		}
	} else if (g_ascii_strcasecmp(f->key, "Anonymous") == 0) {
		if (g_ascii_strcasecmp(f->value, "yes") != 0 && g_ascii_strcasecmp(f->value, "no") != 0)
			add_msg(r->errors, bi, nb, "Anonymous: '%s' must be yes or no", f->value);
	} else if (g_ascii_strcasecmp(f->key, "Vendor-Contact") == 0) {
		InternetAddressList *l = internet_address_list_parse(NULL, f->value);
		gboolean ok = FALSE;

		if (l != NULL && internet_address_list_length(l) == 1) {
			InternetAddress *a = internet_address_list_get_address(l, 0);

			if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
				const char *addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
				const char *at = addr != NULL ? strchr(addr, '@') : NULL;

				ok = at != NULL && at != addr && at[1] != '\0' && strchr(at + 1, '.') != NULL;
			}
		}
		if (l != NULL)
			g_object_unref(l);
		if (!ok)
			add_msg(r->errors, bi, nb,
				"Vendor-Contact: '%s' is not one mail address", f->value);
	} else if (g_ascii_strcasecmp(f->key, "Reference") == 0 || g_ascii_strcasecmp(f->key, "Mirror") == 0) {
		g_autofree char *url = NULL;
		g_autofree char *sha = NULL;
		g_autofree char *of = NULL;
		gboolean mirror = g_ascii_strcasecmp(f->key, "Mirror") == 0;
		gboolean parsed = entry_reference_parse(f->value, &url, &sha, &of);

		if (mirror && (!parsed || (sha == NULL && of == NULL)))
			add_msg(r->errors, bi, nb, "Mirror: '%s' names no reference: write Mirror: URL sha256=HEX "
				"(the checksum of the reference) or Mirror: URL of REFERENCE-URL", f->value);
		else if (!mirror && !parsed && checksum_word(f->value))
			add_msg(r->errors, bi, nb, "Reference: '%s': a checksum is written sha256= and 64 "
				"hexadecimal digits after the URL", f->value);
		else if (url != NULL && !g_str_has_prefix(url, "https://") && !g_str_has_prefix(url, "http://") &&
			 !g_str_has_prefix(url, "ftp://"))
			add_msg(r->warnings, bi, nb,
				"%s: '%s' is not an http, https or ftp URL (kept as given)", f->key, f->value);
	}
}

/* Whether the blank lines at l are followed by a field of a known name:
 * the fields go on ("Note: ..." after a blank line is description); *last
 * is then the last blank line, so that each is looked at once. */
static gboolean
double_spaced(char **l, char ***last)
{
	char **p = l;

	while (*p != NULL && is_blank(*p))
		p++;
	if (*p == NULL || !known_field_line(*p))
		return FALSE;
	*last = p - 1;
	return TRUE;
}

/* Gmail's and Outlook's links in plain text taken out of a value. */
static void
field_unautolink(request_field *f)
{
	char *v = text_unautolink(f->value);

	g_free(f->value);
	f->value = v;
}

/* A known field deep in the description was not read: say so (a blank
 * line or a text line above it ended the fields). */
static void
note_late_fields(request *r, char **l, guint bi, guint nb)
{
	for (guint i = 0; l[i] != NULL; i++)
		if (known_field_line(l[i])) {
			g_autofree char *name = g_strndup(l[i], request_field_name_len(l[i]));

			add_msg(r->warnings, bi, nb, "the line \"%s: ...\" in the description was not read as a\n"
				"    field: fields come first, before any other text", name);
			return;
		}
}

static request_block *
parse_block(request *r, char **lines, guint bi, guint nb, const request_limits *lim, GDateTime *now)
{
	request_block *b = g_new0(request_block, 1);
	request_field *last = NULL;
	char **l = lines;
	gboolean too_many = FALSE;

	b->fields = g_ptr_array_new_with_free_func(field_free);
	while (*l != NULL && is_blank(*l))
		l++;
	for (; *l != NULL; l++) {
		gsize n = request_field_name_len(*l);

		if (n > 0) {
			request_field *f;
			g_autofree char *name = g_strndup(*l, n);
			const known_key *k = find_known(name);

			if (b->fields->len >= (guint) lim->max_fields) {
				if (!too_many)
					add_msg(r->errors, bi, nb, "more than %" G_GINT64_FORMAT " fields",
						lim->max_fields);
				too_many = TRUE;
				last = NULL;
				continue;
			}
			f = g_new0(request_field, 1);
			f->key = g_strdup(k != NULL ? k->name : name);
			f->value = text_clean_line(*l + n + 1, 0);
			field_unautolink(f);
			if (k != NULL && !k->repeatable && request_block_get(b, k->name) != NULL)
				add_msg(r->warnings, bi, nb, "%s given more than once; the first one counts",
					k->name);
			g_ptr_array_add(b->fields, f);
			last = f;
		} else if (last != NULL && (**l == ' ' || **l == '\t') && !is_blank(*l)) {
			g_autofree char *more = text_clean_line(*l, 0);
			char *joined = g_strconcat(last->value, " ", more, NULL);

			g_free(last->value);
			last->value = joined;
			field_unautolink(last);
		} else if (is_blank(*l) && b->fields->len > 0 && double_spaced(l, &l)) {
			/* Outlook's paragraphs: blank lines between known fields
			 * (l is now the last of them) */
			last = NULL;
		} else
			break;
	}
	for (guint i = 0; i < b->fields->len; i++) {
		request_field *f = g_ptr_array_index(b->fields, i);

		if (g_utf8_strlen(f->value, -1) > lim->max_field_length) {
			add_msg(r->errors, bi, nb, "%s: the value is longer than %" G_GINT64_FORMAT
				" characters", f->key, lim->max_field_length);
			continue;
		}
		validate_field(r, f, bi, nb, now);
	}
	while (*l != NULL && is_blank(*l))
		l++;
	note_late_fields(r, l, bi, nb);
	{
		/* one exact copy: the description may be most of a long text */
		gsize size = 0, len = 0;
		char *desc;

		for (char **p = l; *p != NULL; p++)
			size += strlen(*p) + 1;
		desc = g_malloc(size + 1);
		for (; *l != NULL; l++) {
			gsize n = strlen(*l);

			memcpy(desc + len, *l, n);
			len += n;
			desc[len++] = '\n';
		}
		/* trailing white space, including blank lines */
		while (len > 0 && g_ascii_isspace(desc[len - 1]))
			len--;
		desc[len] = '\0';
		/* Gmail's links, where the text is the link */
		b->description = strchr(desc, '<') != NULL ? text_unautolink(desc) : desc;
		if (b->description != desc)
			g_free(desc);
	}
	return b;
}

static gboolean
is_separator(const char *line)
{
	gsize n = strlen(line);

	/* Any white space after it: a "---" followed by a CR, a form feed or
	 * a vertical tab looks like a separator to the researcher, and
	 * contrib/vulnid-request refuses all of them in a description. */
	while (n > 0 && strchr(" \t\r\v\f", line[n - 1]) != NULL)
		n--;
	return n == 3 && strncmp(line, "---", 3) == 0;
}

/* "50.0 MiB": ASCII, whatever the locale (g_format_size() puts a
 * no-break space before the unit). */
static char *
size_text(gint64 n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB" };
	char num[G_ASCII_DTOSTR_BUF_SIZE];
	double v = (double) n;
	int u = -1;

	while (v >= 1024.0 && u < 2) {
		v /= 1024.0;
		u++;
	}
	if (u < 0)
		return g_strdup_printf("%" G_GINT64_FORMAT " bytes", n);
	return g_strdup_printf("%s %s", g_ascii_formatd(num, sizeof num, "%.1f", v), units[u]);
}

void
request_note_text_cut(request *r, gint64 kept, gint64 total, const char *kept_as)
{
	g_autofree char *t = size_text(total);
	g_autofree char *k = size_text(kept);

	g_ptr_array_add(r->warnings,
			g_strdup_printf("the text of your mail is %s (%" G_GINT64_FORMAT " bytes); only\n"
					"    its first %s were read as the request (fields and\n"
					"    description). All of it is kept with the entry, as the\n"
					"    attachment %s.", t, total, k, kept_as));
}

void
request_note_subject_cut(request *r, glong chars)
{
	if (r->warnings->len < 50)
		g_ptr_array_add(r->warnings,
				g_strdup_printf("the Subject is %ld characters long; only its first 998 were\n"
						"    kept as the title (the whole mail is archived as it came).", chars));
}

request *
request_parse(const char *text, const char *subject, const request_limits *lim, GDateTime *now)
{
	request *r = g_new0(request, 1);
	gboolean quoted = FALSE;
	g_autofree char *own = text_strip_quotes(text, &quoted);
	g_auto(GStrv) lines = g_strsplit(own, "\n", -1);
	g_autoptr(GPtrArray) starts = g_ptr_array_new();
	g_autofree char *trimmed = NULL;
	g_autofree char *subj = NULL;
	guint nlines, nb;

	r->blocks = g_ptr_array_new_with_free_func(block_free);
	r->errors = g_ptr_array_new_with_free_func(g_free);
	r->warnings = g_ptr_array_new_with_free_func(g_free);

	/* The signature (after "-- ", RFC 3676) is not part of the request,
	 * nor the mail it quotes (a reply to the robot's help). */
	nlines = g_strv_length(lines);
	for (guint i = 0; i < nlines; i++)
		if (strcmp(lines[i], "-- ") == 0) {
			for (guint j = i; j < nlines; j++)
				g_clear_pointer(&lines[j], g_free);
			nlines = i;
			break;
		}
	for (guint i = 0; i < nlines; i++) {
		gsize n = strlen(lines[i]);

		if (n > 0 && lines[i][n - 1] == '\r')
			lines[i][n - 1] = '\0';
	}

	{
		g_autofree char *joined = g_strjoinv("\n", lines);

		trimmed = g_strstrip(g_steal_pointer(&joined));
	}
	subj = g_strstrip(g_strdup(subject != NULL ? subject : ""));
	if (quoted)
		g_ptr_array_add(r->warnings, g_strdup("the mail your text quotes was left out of the request (the mail\n"
						     "    is archived as it came)."));
	if (g_ascii_strcasecmp(trimmed, "help") == 0 ||
	    (*trimmed == '\0' && g_ascii_strcasecmp(subj, "help") == 0)) {
		r->is_help = TRUE;
		return r;
	}
	if (g_ascii_strcasecmp(trimmed, "key") == 0 ||
	    (*trimmed == '\0' && g_ascii_strcasecmp(subj, "key") == 0)) {
		r->is_key = TRUE;
		return r;
	}

	/* Block boundaries; an empty block after the last separator is the
	 * usual end of a list, not a request for one more ID. */
	g_ptr_array_add(starts, GUINT_TO_POINTER(0));
	for (guint i = 0; i < nlines; i++)
		if (is_separator(lines[i]))
			g_ptr_array_add(starts, GUINT_TO_POINTER(i + 1));
	nb = starts->len;
	if (nb > 1) {
		guint s = GPOINTER_TO_UINT(g_ptr_array_index(starts, nb - 1));
		gboolean empty = TRUE;

		for (guint i = s; i < nlines; i++)
			if (!is_blank(lines[i]))
				empty = FALSE;
		if (empty)
			nb--;
	}
	if (nb > (guint) lim->max_ids) {
		add_msg(r->errors, 0, 1, "%u identifiers requested in one mail; at most %" G_GINT64_FORMAT
			" are allowed", nb, lim->max_ids);
		return r;
	}
	for (guint bi = 0; bi < nb; bi++) {
		guint s = GPOINTER_TO_UINT(g_ptr_array_index(starts, bi));
		guint e = bi + 1 < starts->len ? GPOINTER_TO_UINT(g_ptr_array_index(starts, bi + 1)) - 1 : nlines;
		g_autofree char **sub = g_new0(char *, e - s + 1);

		for (guint i = s; i < e; i++)
			sub[i - s] = lines[i];
		g_ptr_array_add(r->blocks, parse_block(r, sub, bi, nb, lim, now));
	}
	return r;
}
