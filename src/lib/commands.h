/* commands.h - the text of a mail about an entry: command lines, Token
 * lines and fields at the top, then the text
 *
 * Quotes of other mail (text_strip_quotes()) are removed first; then the
 * top of the body is read line by line.  A line whose first word is
 * a command word (help, lookup, key, release, embargo, withdraw, alias,
 * rate, duplicate-of, spam, link, subscribe, unsubscribe, endorse,
 * unendorse, approve, access, grant, reviewed) is a command:
 * command words are reserved there.  "Token: T" lines carry capability
 * tokens.  Other "Key: value" lines (with continuation lines) are fields,
 * as in a request; they end at the first blank line after them.  Blank
 * lines between commands are allowed.  The first other line starts the
 * text.  A line that starts with a command word but does not parse is
 * "not understood": it is reported and kept as the first line of the text,
 * so that nothing written is lost.  Pure functions: no database, no I/O. */
#ifndef VULNID_COMMANDS_H
#define VULNID_COMMANDS_H

#include <glib.h>

/* Bounds on what one mail may ask for. */
#define COMMANDS_MAX 20		/* command lines handled per mail */
#define COMMANDS_MAX_TOKENS 5	/* Token lines read per mail */
#define COMMANDS_MAX_TOP_LINES 300	/* lines of the top examined */
#define COMMANDS_MAX_REASON 500	/* characters of a withdraw or rate reason */
#define COMMANDS_MAX_ALIAS 64	/* characters of an alias */
#define COMMANDS_MAX_LINE 200	/* characters of a command line echoed back */
#define COMMANDS_MAX_PRODUCT 200	/* characters of a reviewed product and version */

typedef enum {
	CMD_UNKNOWN,		/* not understood */
	CMD_HELP,
	CMD_LOOKUP,
	CMD_KEY,
	CMD_RELEASE,
	CMD_EMBARGO,
	CMD_WITHDRAW,
	CMD_ALIAS,
	CMD_RATE,
	CMD_DUPLICATE_OF,
	CMD_SPAM,
	CMD_LINK,
	CMD_SUBSCRIBE,
	CMD_UNSUBSCRIBE,
	CMD_ENDORSE,
	CMD_UNENDORSE,
	CMD_APPROVE,
	CMD_ACCESS,
	CMD_GRANT,
	CMD_REVIEWED,
} command_kind;

typedef struct {
	command_kind kind;
	char *word;		/* the command word, lower case */
	char *line;		/* the line as written, cleaned and cut, for replies */
	char *target;		/* the entry the command names (this instance's
				 * prefix), or NULL: the entry the mail is about */
	char *arg;		/* lookup: ID or alias; embargo: date; withdraw and
				 * rate: reason (may be NULL for rate); alias: the
				 * alias; duplicate-of: the canonical ID; link: the
				 * other ID; endorse, unendorse and grant: a key's
				 * fingerprint (upper case); approve: a fingerprint,
				 * or NULL for a record number; reviewed: the product,
				 * or NULL */
	char *arg2;		/* endorse: the fields allowed, canonical names
				 * separated by spaces, or NULL (all); reviewed:
				 * the version */
	gint64 seq;		/* approve: the record's number, when no key */
	int rating;		/* rate: 0..10 */
	char *error;		/* CMD_UNKNOWN: why, for the reply */
} command;

typedef struct {
	GPtrArray *commands;	/* command*, in order; at most COMMANDS_MAX that parse */
	guint dropped;		/* command lines over COMMANDS_MAX, not handled */
	GPtrArray *tokens;	/* char*: Token values, lower case, at most COMMANDS_MAX_TOKENS */
	guint bad_tokens;	/* Token lines that are no token at all, or over the limit */
	GPtrArray *fields;	/* char*: one field each, "Key: value" with its continuation lines */
	char *text;		/* the rest: signature and quotes of other mail
				 * (text_strip_quotes()) removed, trailing white
				 * space trimmed */
	gboolean quotes_left_out;	/* quotes of other mail were removed */
	gboolean quote_only;	/* ... and nothing else was left as text */
} mail_text;

/* Split the text of a mail (UTF-8, \n line ends) for an instance whose
 * identifiers start with prefix.  max_fields bounds the fields kept (the
 * rest stay in the text). */
mail_text *commands_split(const char *text, const char *prefix, guint max_fields);
void mail_text_free(mail_text *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(mail_text, mail_text_free)

/* Whether the mail consists of commands and tokens only (nothing not
 * understood, no fields, no text) and is not just "help" or "key" (which
 * the request parser answers): a mail to the request address that is not
 * a request. */
gboolean commands_only(const mail_text *t);

/* Whether text is nothing but a quote of another mail (text_strip_quotes()
 * leaves nothing): a reply that only quotes says nothing new. */
gboolean commands_quote_only(const char *text);

/* Whether word (any case) is this instance's identifier; *id is then its
 * canonical (upper-case) spelling. */
gboolean commands_is_entry_id(const char *word, const char *prefix, char **id);

/* Whether s is an identifier of another scheme that may be recorded as an
 * alias (CVE-2026-1234, GHSA-xxxx-xxxx-xxxx, PYSEC-2021-1, ...); *norm is
 * its spelling to record (CVE upper case). */
gboolean commands_alias_valid(const char *s, const char *prefix, char **norm);

/* YYYY-MM-DD and a real date. */
gboolean commands_date_valid(const char *s);

/* An OpenPGP fingerprint: 40 or 64 hexadecimal digits (one word); *norm
 * is it in upper case. */
gboolean commands_fingerprint_valid(const char *s, char **norm);


const char *command_kind_str(command_kind k);

#endif
