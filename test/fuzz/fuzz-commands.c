/* fuzz-commands.c - the commands at the top of a mail about an entry:
 * commands_split() and the word checks it uses, on hostile text.
 *
 * Properties: at most COMMANDS_MAX commands and COMMANDS_MAX_TOKENS
 * tokens are kept and the fields bound is respected; every token is
 * lower-case hex of 24..128 digits; a parsed command's target is this
 * instance's identifier; a command line echoed back is one line of at
 * most COMMANDS_MAX_LINE characters; rate is 0..10; an alias and a date
 * pass their own validators; a key is an upper-case fingerprint; approve
 * names one key or one record; a reviewed product and version are one
 * short line; the text holds no signature line. */
#include "autoconfig.h"

#include <string.h>

#include "commands.h"
#include "fuzz.h"

#define PREFIX "FUZZ"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	return 0;
}

static void
check_command(const command *c)
{
	if (c->word == NULL || c->line == NULL)
		fuzz_fail("a command without word or line");
	if (strpbrk(c->line, "\r\n") != NULL || g_utf8_strlen(c->line, -1) > COMMANDS_MAX_LINE)
		fuzz_fail("command line echoed back is not one short line: %.300s", c->line);
	if (c->kind == CMD_UNKNOWN) {
		if (c->error == NULL)
			fuzz_fail("a command not understood without a reason");
		return;
	}
	if (c->target != NULL) {
		g_autofree char *id = NULL;

		if (!commands_is_entry_id(c->target, PREFIX, &id) || strcmp(id, c->target) != 0)
			fuzz_fail("command target '%s' is not a canonical identifier", c->target);
	}
	switch (c->kind) {
	case CMD_RATE:
		if (c->rating < 0 || c->rating > 10)
			fuzz_fail("rating %d", c->rating);
		break;
	case CMD_EMBARGO:
		if (c->arg == NULL || !commands_date_valid(c->arg))
			fuzz_fail("embargo accepted without a valid date");
		break;
	case CMD_ALIAS:
		if (c->arg == NULL || g_utf8_strlen(c->arg, -1) > COMMANDS_MAX_ALIAS)
			fuzz_fail("alias '%s' over %d characters", c->arg != NULL ? c->arg : "(null)",
				  COMMANDS_MAX_ALIAS);
		break;
	case CMD_WITHDRAW:
		if (c->arg != NULL && g_utf8_strlen(c->arg, -1) > COMMANDS_MAX_REASON)
			fuzz_fail("withdraw reason over %d characters", COMMANDS_MAX_REASON);
		break;
	case CMD_DUPLICATE_OF:
	case CMD_LINK:
		if (c->arg != NULL && strpbrk(c->arg, "\r\n") != NULL)
			fuzz_fail("argument is not one line");
		break;
	case CMD_ENDORSE:
	case CMD_UNENDORSE:
	case CMD_GRANT:
		if (c->arg == NULL || !commands_fingerprint_valid(c->arg, NULL) || strspn(c->arg, "0123456789ABCDEF") != strlen(c->arg))
			fuzz_fail("%s accepted without an upper-case fingerprint", c->word);
		if (c->arg2 != NULL && (c->kind != CMD_ENDORSE || strpbrk(c->arg2, "\r\n\t") != NULL))
			fuzz_fail("fields '%s' of %s", c->arg2, c->word);
		break;
	case CMD_APPROVE:
		if (c->arg != NULL ? !commands_fingerprint_valid(c->arg, NULL) || c->seq != 0 : c->seq < 1)
			fuzz_fail("approve of neither one key nor one record");
		break;
	case CMD_REVIEWED:
		if ((c->arg == NULL) != (c->arg2 == NULL))
			fuzz_fail("reviewed with a product but no version, or the other way");
		if (c->arg != NULL && (strpbrk(c->arg, "\r\n") != NULL || strpbrk(c->arg2, " \t\r\n") != NULL ||
				       g_utf8_strlen(c->arg, -1) + g_utf8_strlen(c->arg2, -1) > COMMANDS_MAX_PRODUCT))
			fuzz_fail("reviewed '%s' '%s' is not one short line", c->arg, c->arg2);
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *text = fuzz_text(data, size);
	g_autoptr(mail_text) t = NULL;
	guint max_fields = size > 0 ? 1 + data[0] % 8 : 1;

	if (text == NULL)
		return 0;
	t = commands_split(text, PREFIX, max_fields);
	if (t->commands->len > COMMANDS_MAX)
		fuzz_fail("%u commands kept", t->commands->len);
	if (t->tokens->len > COMMANDS_MAX_TOKENS)
		fuzz_fail("%u tokens kept", t->tokens->len);
	if (t->fields->len > max_fields)
		fuzz_fail("%u fields kept, the bound is %u", t->fields->len, max_fields);
	for (guint i = 0; i < t->tokens->len; i++) {
		const char *tok = g_ptr_array_index(t->tokens, i);
		gsize n = strlen(tok);

		if (n < 24 || n > 128 || strspn(tok, "0123456789abcdef") != n)
			fuzz_fail("token '%s' is not 24..128 lower-case hex digits", tok);
	}
	for (guint i = 0; i < t->commands->len; i++)
		check_command(g_ptr_array_index(t->commands, i));
	if (t->text == NULL)
		fuzz_fail("no text");
	if (strcmp(t->text, "-- ") == 0 || g_str_has_prefix(t->text, "-- \n") || strstr(t->text, "\n-- \n") != NULL)
		fuzz_fail("the signature is still in the text");
	(void) commands_only(t);

	/* The validators alone, on each line of the input. */
	{
		g_auto(GStrv) lines = g_strsplit(text, "\n", 64);

		for (char **l = lines; *l != NULL; l++) {
			g_autofree char *id = NULL;
			g_autofree char *norm = NULL;

			if (commands_is_entry_id(*l, PREFIX, &id) && (id == NULL || g_ascii_strcasecmp(id, *l) != 0))
				fuzz_fail("identifier '%s' came back as '%s'", *l, id != NULL ? id : "(null)");
			if (commands_alias_valid(*l, PREFIX, &norm) &&
			    (norm == NULL || strpbrk(norm, " \t\r\n") != NULL))
				fuzz_fail("alias '%s' normalised to '%s'", *l, norm != NULL ? norm : "(null)");
			(void) commands_date_valid(*l);
		}
	}
	return 0;
}
