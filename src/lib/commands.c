/* commands.c - split the text of an entry mail into commands, tokens,
 * fields and text (see commands.h) */
#include "autoconfig.h"

#include <string.h>

#include "commands.h"
#include "entry.h"
#include "ids.h"
#include "request.h"
#include "text.h"
#include "tokens.h"

typedef struct {
	const char *word;
	command_kind kind;
} command_word;

static const command_word command_words[] = {
	{ "help", CMD_HELP },
	{ "lookup", CMD_LOOKUP },
	{ "key", CMD_KEY },
	{ "release", CMD_RELEASE },
	{ "embargo", CMD_EMBARGO },
	{ "withdraw", CMD_WITHDRAW },
	{ "alias", CMD_ALIAS },
	{ "rate", CMD_RATE },
	{ "duplicate-of", CMD_DUPLICATE_OF },
	{ "spam", CMD_SPAM },
	{ "link", CMD_LINK },
	{ "subscribe", CMD_SUBSCRIBE },
	{ "unsubscribe", CMD_UNSUBSCRIBE },
	{ "endorse", CMD_ENDORSE },
	{ "unendorse", CMD_UNENDORSE },
	{ "approve", CMD_APPROVE },
	{ "access", CMD_ACCESS },
	{ "grant", CMD_GRANT },
	{ "reviewed", CMD_REVIEWED },
};

const char *
command_kind_str(command_kind k)
{
	for (gsize i = 0; i < G_N_ELEMENTS(command_words); i++)
		if (command_words[i].kind == k)
			return command_words[i].word;
	return "unknown";
}

static void
command_free(gpointer p)
{
	command *c = p;

	g_free(c->word);
	g_free(c->line);
	g_free(c->target);
	g_free(c->arg);
	g_free(c->arg2);
	g_free(c->error);
	g_free(c);
}

void
mail_text_free(mail_text *t)
{
	if (t == NULL)
		return;
	g_ptr_array_unref(t->commands);
	g_ptr_array_unref(t->tokens);
	g_ptr_array_unref(t->fields);
	g_free(t->text);
	g_free(t);
}

static gboolean
is_blank(const char *line)
{
	for (; *line; line++)
		if (!g_ascii_isspace(*line))
			return FALSE;
	return TRUE;
}

/* Next white-space separated word of *p (NULL at the end); *p moves on. */
static char *
next_word(const char **p)
{
	const char *s = *p, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0') {
		*p = s;
		return NULL;
	}
	for (e = s; *e != '\0' && *e != ' ' && *e != '\t'; e++)
		;
	*p = e;
	return g_strndup(s, (gsize) (e - s));
}

static const char *
skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

gboolean
commands_is_entry_id(const char *word, const char *prefix, char **id)
{
	g_autofree char *up = NULL;
	g_autofree char *p = NULL;

	if (word == NULL || strlen(word) > 64)
		return FALSE;
	up = g_ascii_strup(word, -1);
	if (!ids_parse(up, &p, NULL, NULL) || prefix == NULL || strcmp(p, prefix) != 0)
		return FALSE;
	if (id != NULL)
		*id = g_steal_pointer(&up);
	return TRUE;
}

gboolean
commands_date_valid(const char *v)
{
	int y, mo, d;

	if (v == NULL || strlen(v) != 10 || v[4] != '-' || v[7] != '-')
		return FALSE;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !g_ascii_isdigit(v[i]))
			return FALSE;
	y = (int) g_ascii_strtoll(v, NULL, 10);
	mo = (int) g_ascii_strtoll(v + 5, NULL, 10);
	d = (int) g_ascii_strtoll(v + 8, NULL, 10);
	return y >= 1 && g_date_valid_dmy((GDateDay) d, (GDateMonth) mo, (GDateYear) y);
}

gboolean
commands_alias_valid(const char *s, const char *prefix, char **norm)
{
	gsize n, scheme = 0;

	if (s == NULL)
		return FALSE;
	n = strlen(s);
	if (n < 3 || n > COMMANDS_MAX_ALIAS || !g_ascii_isalpha(s[0]))
		return FALSE;
	while (g_ascii_isalnum(s[scheme]))
		scheme++;
	if (scheme > 16 || (s[scheme] != '-' && s[scheme] != ':') || s[scheme + 1] == '\0')
		return FALSE;
	for (gsize i = scheme + 1; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_' && s[i] != ':')
			return FALSE;
	/* This instance's own identifiers are linked, not aliased. */
	if (commands_is_entry_id(s, prefix, NULL))
		return FALSE;
	if (scheme == 3 && g_ascii_strncasecmp(s, "CVE", 3) == 0) {
		/* CVE-YYYY-NNNN with four or more digits, nothing else. */
		gsize digits = 0;

		if (n < 13 || s[3] != '-' || s[8] != '-')
			return FALSE;
		for (gsize i = 4; i < 8; i++)
			if (!g_ascii_isdigit(s[i]))
				return FALSE;
		for (gsize i = 9; i < n; i++, digits++)
			if (!g_ascii_isdigit(s[i]))
				return FALSE;
		if (digits < 4)
			return FALSE;
		if (norm != NULL)
			*norm = g_ascii_strup(s, -1);
		return TRUE;
	}
	if (norm != NULL)
		*norm = g_strdup(s);
	return TRUE;
}

gboolean
commands_fingerprint_valid(const char *s, char **norm)
{
	gsize n = s != NULL ? strlen(s) : 0;

	if (n != 40 && n != 64)
		return FALSE;
	for (gsize i = 0; i < n; i++)
		if (!g_ascii_isxdigit(s[i]))
			return FALSE;
	if (norm != NULL)
		*norm = g_ascii_strup(s, -1);
	return TRUE;
}

static const command_word *
find_word(const char *line)
{
	const char *p = line;
	g_autofree char *w = next_word(&p);

	if (w == NULL)
		return NULL;
	for (gsize i = 0; i < G_N_ELEMENTS(command_words); i++)
		if (g_ascii_strcasecmp(command_words[i].word, w) == 0)
			return &command_words[i];
	return NULL;
}

/* An optional leading identifier of this instance: the command's target. */
static void
take_target(command *c, const char **p, const char *prefix)
{
	const char *save = *p;
	g_autofree char *w = next_word(p);
	char *id = NULL;

	if (w != NULL && commands_is_entry_id(w, prefix, &id))
		c->target = id;
	else
		*p = save;
}

static void
not_understood(command *c, const char *why)
{
	c->kind = CMD_UNKNOWN;
	c->error = g_strdup(why);
	g_clear_pointer(&c->arg, g_free);
	g_clear_pointer(&c->arg2, g_free);
}

/* Whether word is one of the words of list (separated by spaces). */
static gboolean
strstr_word(const char *list, const char *word)
{
	g_auto(GStrv) words = g_strsplit(list, " ", -1);

	for (char **w = words; *w != NULL; w++)
		if (strcmp(*w, word) == 0)
			return TRUE;
	return FALSE;
}

/* endorse [ID] KEY [FIELD...], unendorse [ID] KEY, grant [ID] KEY */
static void
parse_key_args(command *c, const char *p, const char *prefix)
{
	g_autofree char *w = NULL;
	g_autoptr(GString) fields = g_string_new(NULL);

	take_target(c, &p, prefix);
	w = next_word(&p);
	if (w == NULL || !commands_fingerprint_valid(w, &c->arg)) {
		not_understood(c, c->kind == CMD_ENDORSE ? "needs a key's fingerprint, then the fields it may set, "
				  "if not all (endorse [ID] KEY [FIELD...])"
				  : "needs a key's fingerprint (40 or 64 hexadecimal digits)");
		return;
	}
	while (c->kind == CMD_ENDORSE && (g_free(w), w = next_word(&p)) != NULL) {
		const char *f = entry_headline_field(w);

		if (f == NULL) {
			not_understood(c, "names a field that is not part of an entry's headline (Title, Vendor, "
				       "Product, Type, Vendor-Contact, Version, Reference, Mirror, Related, "
				       "Fixed-In, Ecosystem, Package, CVSS, Severity)");
			return;
		}
		if (!strstr_word(fields->str, f))
			g_string_append_printf(fields, "%s%s", fields->len > 0 ? " " : "", f);
	}
	if (c->kind != CMD_ENDORSE && *skip_space(p) != '\0') {
		not_understood(c, "takes an identifier and a key's fingerprint, nothing more");
		return;
	}
	if (fields->len > 0)
		c->arg2 = g_strdup(fields->str);
}

/* reviewed [ID] [PRODUCT VERSION]: the version is the last word, the
 * product everything before it. */
static void
parse_reviewed(command *c, const char *p, const char *prefix)
{
	g_autofree char *rest = NULL;
	char *sp;

	take_target(c, &p, prefix);
	rest = text_clean_line(skip_space(p), COMMANDS_MAX_PRODUCT);
	g_strstrip(rest);
	if (*rest == '\0')
		return;
	sp = strrchr(rest, ' ');
	if (sp == NULL) {
		not_understood(c, "needs a product and a version, or nothing (reviewed [ID] [PRODUCT VERSION])");
		return;
	}
	c->arg2 = g_strdup(sp + 1);
	*sp = '\0';
	c->arg = g_strdup(g_strstrip(rest));
}

/* Parse the arguments of a command line whose word is known. */
static void
parse_args(command *c, const char *rest, const char *prefix)
{
	const char *p = rest;
	g_autofree char *w1 = NULL;
	g_autofree char *w2 = NULL;
	g_autofree char *w3 = NULL;
	char *id1 = NULL, *id2 = NULL;

	switch (c->kind) {
	case CMD_HELP:
	case CMD_KEY:
		if (*skip_space(p) != '\0')
			not_understood(c, "takes no arguments");
		return;
	case CMD_RELEASE:
	case CMD_SPAM:
	case CMD_SUBSCRIBE:
	case CMD_UNSUBSCRIBE:
		take_target(c, &p, prefix);
		if (*skip_space(p) != '\0')
			not_understood(c, "takes at most an identifier");
		return;
	case CMD_LOOKUP:
		w1 = next_word(&p);
		if (*skip_space(p) != '\0') {
			not_understood(c, "takes one identifier or alias");
			return;
		}
		if (w1 == NULL)
			return;		/* the entry the mail is about */
		if (commands_is_entry_id(w1, prefix, &id1)) {
			c->target = id1;
			return;
		}
		if (commands_alias_valid(w1, prefix, &c->arg))
			return;
		not_understood(c, "is not an identifier or an alias");
		return;
	case CMD_EMBARGO:
		take_target(c, &p, prefix);
		w1 = next_word(&p);
		if (w1 == NULL || *skip_space(p) != '\0' || !commands_date_valid(w1)) {
			not_understood(c, "needs a date YYYY-MM-DD");
			return;
		}
		c->arg = g_steal_pointer(&w1);
		return;
	case CMD_WITHDRAW:
		take_target(c, &p, prefix);
		c->arg = text_clean_line(skip_space(p), COMMANDS_MAX_REASON);
		if (*c->arg == '\0')
			not_understood(c, "needs a reason (withdraw REASON)");
		return;
	case CMD_ALIAS:
		take_target(c, &p, prefix);
		w1 = next_word(&p);
		if (w1 == NULL || *skip_space(p) != '\0' || !commands_alias_valid(w1, prefix, &c->arg))
			not_understood(c, "needs one identifier of another scheme, such as CVE-2026-1234");
		return;
	case CMD_RATE:
		take_target(c, &p, prefix);
		w1 = next_word(&p);
		if (w1 == NULL || strlen(w1) > 2 || !g_ascii_isdigit(w1[0]) ||
		    (w1[1] != '\0' && !g_ascii_isdigit(w1[1])) ||
		    g_ascii_strtoll(w1, NULL, 10) > 10) {
			not_understood(c, "needs a number from 0 to 10 (rate N [reason])");
			return;
		}
		c->rating = (int) g_ascii_strtoll(w1, NULL, 10);
		c->arg = text_clean_line(skip_space(p), COMMANDS_MAX_REASON);
		if (*c->arg == '\0')
			g_clear_pointer(&c->arg, g_free);
		return;
	case CMD_DUPLICATE_OF:
	case CMD_LINK:
		w1 = next_word(&p);
		w2 = next_word(&p);
		w3 = next_word(&p);
		if (w1 == NULL || w3 != NULL || !commands_is_entry_id(w1, prefix, &id1) ||
		    (w2 != NULL && !commands_is_entry_id(w2, prefix, &id2))) {
			g_free(id1);
			not_understood(c, c->kind == CMD_LINK ? "needs one or two identifiers (link ID ID)"
							      : "needs one or two identifiers (duplicate-of [ID] ID)");
			return;
		}
		if (id2 != NULL) {
			c->target = id1;
			c->arg = id2;
		} else
			c->arg = id1;
		return;
	case CMD_ENDORSE:
	case CMD_UNENDORSE:
	case CMD_GRANT:
		parse_key_args(c, p, prefix);
		return;
	case CMD_APPROVE:
		take_target(c, &p, prefix);
		w1 = next_word(&p);
		if (w1 != NULL && *skip_space(p) == '\0' && commands_fingerprint_valid(w1, &c->arg))
			return;
		if (w1 != NULL && *skip_space(p) == '\0' && strlen(w1) <= 9 && w1[0] != '0' &&
		    strspn(w1, "0123456789") == strlen(w1)) {
			c->seq = g_ascii_strtoll(w1, NULL, 10);
			return;
		}
		not_understood(c, "needs a record number or a key's fingerprint (approve [ID] SEQ|KEY)");
		return;
	case CMD_ACCESS:
		take_target(c, &p, prefix);
		if (*skip_space(p) != '\0')
			not_understood(c, "takes at most an identifier");
		return;
	case CMD_REVIEWED:
		parse_reviewed(c, p, prefix);
		return;
	case CMD_UNKNOWN:
		return;
	}
}

static command *
parse_command(const char *line, const command_word *cw, const char *prefix)
{
	command *c = g_new0(command, 1);
	const char *p = skip_space(line);

	g_free(next_word(&p));	/* the command word: cw already says which */
	c->kind = cw->kind;
	c->word = g_strdup(cw->word);
	c->line = text_clean_line(line, COMMANDS_MAX_LINE);
	parse_args(c, p, prefix);
	return c;
}

/* The token of a Token line, or NULL.  A token the intake took out of
 * the text (tokens.h) left its mark: the line is a token line all the
 * same, and the mark stands for its token. */
static char *
token_value(const char *line, gsize keylen)
{
	g_autofree char *v = g_strstrip(g_strdup(line + keylen + 1));

	if (strcmp(v, TOKENS_REMOVED) == 0)
		return g_steal_pointer(&v);
	return tokens_line_value(v);
}

/* Strip CR line ends; the number of lines before the signature (after
 * "-- ", RFC 3676), which is not text. */
static guint
lines_before_signature(char **lines)
{
	guint n = g_strv_length(lines);

	for (guint i = 0; i < n; i++) {
		gsize len = strlen(lines[i]);

		if (len > 0 && lines[i][len - 1] == '\r')
			lines[i][len - 1] = '\0';
		if (strcmp(lines[i], "-- ") == 0)
			return i;
	}
	return n;
}

/* A "Token:" line: kept once (the same token twice acts once), up to
 * COMMANDS_MAX_TOKENS; a malformed or surplus one is counted. */
static void
add_token(mail_text *t, const char *line, gsize klen)
{
	char *v = token_value(line, klen);
	gboolean again = FALSE;

	for (guint k = 0; v != NULL && k < t->tokens->len; k++)
		again |= strcmp(g_ptr_array_index(t->tokens, k), v) == 0;
	if (again)
		g_free(v);
	else if (v != NULL && t->tokens->len < COMMANDS_MAX_TOKENS)
		g_ptr_array_add(t->tokens, v);
	else {
		g_free(v);
		t->bad_tokens++;
	}
}

/* The n lines left as text: without trailing white space, nor leading
 * blank lines (but with the indentation of its first line). */
static char *
rest_text(char **lines, guint n)
{
	g_autoptr(GString) rest = g_string_new(NULL);
	gsize lead = 0;

	for (guint i = 0; i < n; i++) {
		g_string_append(rest, lines[i]);
		g_string_append_c(rest, '\n');
	}
	while (rest->len > 0 && g_ascii_isspace(rest->str[rest->len - 1]))
		g_string_truncate(rest, rest->len - 1);
	for (gsize k = 0; k < rest->len; k++) {
		if (rest->str[k] == '\n')
			lead = k + 1;
		else if (!g_ascii_isspace(rest->str[k]))
			break;
	}
	g_string_erase(rest, 0, (gssize) lead);
	return g_strdup(rest->str);
}

mail_text *
commands_split(const char *text, const char *prefix, guint max_fields)
{
	mail_text *t = g_new0(mail_text, 1);
	gboolean quoted = FALSE;
	/* Quotes of other mail first: commands under a quote (bottom-posted)
	 * are at the top then, and no quoted line is read as one. */
	g_autofree char *own = text_strip_quotes(text, &quoted);
	g_auto(GStrv) lines = g_strsplit(own, "\n", -1);
	GString *field = NULL;	/* the field being read, for continuation lines */
	gboolean fields_closed = FALSE;
	guint n, i, seen = 0;

	t->commands = g_ptr_array_new_with_free_func(command_free);
	t->tokens = g_ptr_array_new_with_free_func(g_free);
	t->fields = g_ptr_array_new_with_free_func(g_free);

	n = lines_before_signature(lines);

	for (i = 0; i < n && seen < COMMANDS_MAX_TOP_LINES; i++, seen++) {
		const char *line = lines[i];
		const command_word *cw;
		gsize klen;

		if (is_blank(line)) {
			if (field != NULL || t->fields->len > 0)
				fields_closed = TRUE;
			field = NULL;
			continue;
		}
		if ((*line == ' ' || *line == '\t') && field != NULL) {
			g_string_append_c(field, '\n');
			g_string_append(field, line);
			continue;
		}
		field = NULL;
		klen = request_field_name_len(line);
		if (klen == 5 && g_ascii_strncasecmp(line, "Token", 5) == 0) {
			add_token(t, line, klen);
			continue;
		}
		if (klen > 0) {
			g_autofree char *name = g_strndup(line, klen);

			/* "Note: ..." after a blank line is text; a known field
			 * is not (Outlook double-spaces them) */
			if (fields_closed && !request_field_known(name) && g_ascii_strcasecmp(name, "Status") != 0)
				break;
			if (t->fields->len >= max_fields)
				break;
			g_ptr_array_add(t->fields, g_string_new(line));
			field = g_ptr_array_index(t->fields, t->fields->len - 1);
			continue;
		}
		cw = find_word(line);
		if (cw == NULL)
			break;
		if (t->commands->len >= COMMANDS_MAX) {
			t->dropped++;
			continue;
		}
		{
			command *c = parse_command(line, cw, prefix);

			g_ptr_array_add(t->commands, c);
			if (c->kind == CMD_UNKNOWN)
				break;	/* kept as the first line of the text */
		}
	}
	/* The fields were collected as GStrings; keep plain strings. */
	for (guint k = 0; k < t->fields->len; k++) {
		GString *g = g_ptr_array_index(t->fields, k);

		t->fields->pdata[k] = g_string_free(g, FALSE);
	}
	t->text = rest_text(lines + i, n - i);
	t->quotes_left_out = quoted;
	t->quote_only = quoted && *t->text == '\0';
	return t;
}

gboolean
commands_quote_only(const char *text)
{
	gboolean quoted = FALSE;
	g_autofree char *own = text_strip_quotes(text, &quoted);

	g_strstrip(own);
	return quoted && *own == '\0';
}

gboolean
commands_only(const mail_text *t)
{
	if (t->fields->len > 0 || *t->text != '\0' || t->bad_tokens > 0)
		return FALSE;
	if (t->commands->len == 0)
		return t->tokens->len > 0;
	for (guint i = 0; i < t->commands->len; i++)
		if (((const command *) g_ptr_array_index(t->commands, i))->kind == CMD_UNKNOWN)
			return FALSE;
	/* "help" or "key" alone is the request parser's, as it always was. */
	if (t->commands->len == 1 && t->tokens->len == 0) {
		command_kind k = ((const command *) g_ptr_array_index(t->commands, 0))->kind;

		return k != CMD_HELP && k != CMD_KEY;
	}
	return TRUE;
}
