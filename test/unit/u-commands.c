/* u-commands.c - unit tests for src/lib/commands.c: the top of an entry mail */
#include "autoconfig.h"

#include <string.h>

#include "commands.h"

#define P "TEST"

static mail_text *
split(const char *text)
{
	mail_text *t = commands_split(text, P, 100);

	g_assert_nonnull(t);
	return t;
}

static const command *
cmd(const mail_text *t, guint i)
{
	g_assert_cmpuint(i, <, t->commands->len);
	return g_ptr_array_index(t->commands, i);
}

static void
test_plain_text(void)
{
	g_autoptr(mail_text) t = split("Just some text.\nSecond line.\n");

	g_assert_cmpuint(t->commands->len, ==, 0);
	g_assert_cmpuint(t->fields->len, ==, 0);
	g_assert_cmpstr(t->text, ==, "Just some text.\nSecond line.");
	g_assert_false(commands_only(t));
}

static void
test_commands_fields_text(void)
{
	g_autoptr(mail_text) t = split("\n\nlookup test-2026-0001\r\nVersion: 1.2\n  and 1.3\n"
				       "alias CVE-2026-1234\n\nrelease\n\nThe text.\n-- \nsig\n");

	g_assert_cmpuint(t->commands->len, ==, 3);
	g_assert_cmpint(cmd(t, 0)->kind, ==, CMD_LOOKUP);
	g_assert_cmpstr(cmd(t, 0)->target, ==, "TEST-2026-0001");
	g_assert_cmpint(cmd(t, 1)->kind, ==, CMD_ALIAS);
	g_assert_null(cmd(t, 1)->target);
	g_assert_cmpstr(cmd(t, 1)->arg, ==, "CVE-2026-1234");
	g_assert_cmpint(cmd(t, 2)->kind, ==, CMD_RELEASE);
	g_assert_cmpuint(t->fields->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(t->fields, 0), ==, "Version: 1.2\n  and 1.3");
	g_assert_cmpstr(t->text, ==, "The text.");
	g_assert_false(commands_only(t));
}

static void
test_fields_close_at_blank_line(void)
{
	g_autoptr(mail_text) t = split("Version: 1\n\nNote: this is text\n");

	g_assert_cmpuint(t->fields->len, ==, 1);
	g_assert_cmpstr(t->text, ==, "Note: this is text");
}

static void
test_tokens(void)
{
	g_autoptr(mail_text) t = split("Token: 0123456789ABCDEF0123456789abcdef\nToken: nothex\nlookup\n");

	g_assert_cmpuint(t->tokens->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(t->tokens, 0), ==, "0123456789abcdef0123456789abcdef");
	g_assert_cmpuint(t->bad_tokens, ==, 1);
	g_assert_cmpuint(t->fields->len, ==, 0);	/* a token is never a field */
	g_assert_cmpuint(t->commands->len, ==, 1);
	g_assert_cmpstr(t->text, ==, "");
}

static void
test_token_limit(void)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (int i = 0; i < COMMANDS_MAX_TOKENS + 3; i++)
		g_string_append_printf(s, "Token: %032x\n", i);
	{
		g_autoptr(mail_text) t = split(s->str);

		g_assert_cmpuint(t->tokens->len, ==, COMMANDS_MAX_TOKENS);
		g_assert_cmpuint(t->bad_tokens, ==, 3);
	}
}

static void
test_not_understood_kept_as_text(void)
{
	g_autoptr(mail_text) t = split("Rate limiting is missing in the login.\nMore text.\n");

	g_assert_cmpuint(t->commands->len, ==, 1);
	g_assert_cmpint(cmd(t, 0)->kind, ==, CMD_UNKNOWN);
	g_assert_cmpstr(cmd(t, 0)->word, ==, "rate");
	g_assert_nonnull(cmd(t, 0)->error);
	g_assert_cmpstr(t->text, ==, "Rate limiting is missing in the login.\nMore text.");
	g_assert_false(commands_only(t));
}

static void
test_word_then_colon_is_field(void)
{
	g_autoptr(mail_text) t = split("Release: 2.0\n");

	g_assert_cmpuint(t->commands->len, ==, 0);
	g_assert_cmpuint(t->fields->len, ==, 1);
}

static void
test_arguments(void)
{
	static const struct {
		const char *line;
		command_kind kind;
		const char *target;
		const char *arg;
		int rating;
	} cases[] = {
		{ "help", CMD_HELP, NULL, NULL, 0 },
		{ "HELP", CMD_HELP, NULL, NULL, 0 },
		{ "help me", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "key", CMD_KEY, NULL, NULL, 0 },
		{ "lookup", CMD_LOOKUP, NULL, NULL, 0 },
		{ "lookup CVE-2026-99999", CMD_LOOKUP, NULL, "CVE-2026-99999", 0 },
		{ "lookup a b", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "release TEST-2026-0007", CMD_RELEASE, "TEST-2026-0007", NULL, 0 },
		{ "release OTHER-2026-0007", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "embargo 2027-02-28", CMD_EMBARGO, NULL, "2027-02-28", 0 },
		{ "embargo TEST-2026-0001 2027-02-28", CMD_EMBARGO, "TEST-2026-0001", "2027-02-28", 0 },
		{ "embargo 2027-02-30", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "embargo tomorrow", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "withdraw", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "withdraw  not a bug after all ", CMD_WITHDRAW, NULL, "not a bug after all", 0 },
		{ "withdraw TEST-2026-0001 dup", CMD_WITHDRAW, "TEST-2026-0001", "dup", 0 },
		{ "alias cve-2026-0042", CMD_ALIAS, NULL, "CVE-2026-0042", 0 },
		{ "alias GHSA-abcd-efgh-ijkl", CMD_ALIAS, NULL, "GHSA-abcd-efgh-ijkl", 0 },
		{ "alias CVE-2026-42", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "alias TEST-2026-0002", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "alias <script>", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "rate 0", CMD_RATE, NULL, NULL, 0 },
		{ "rate 10 critical, remote", CMD_RATE, NULL, "critical, remote", 10 },
		{ "rate TEST-2026-0003 7", CMD_RATE, "TEST-2026-0003", NULL, 7 },
		{ "rate 11", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "rate -1", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "rate 007", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "duplicate-of TEST-2026-0001", CMD_DUPLICATE_OF, NULL, "TEST-2026-0001", 0 },
		{ "duplicate-of TEST-2026-0002 TEST-2026-0001", CMD_DUPLICATE_OF, "TEST-2026-0002", "TEST-2026-0001", 0 },
		{ "duplicate-of CVE-2026-1234", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "duplicate-of A B C", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "spam", CMD_SPAM, NULL, NULL, 0 },
		{ "link TEST-2026-0001 TEST-2026-0002", CMD_LINK, "TEST-2026-0001", "TEST-2026-0002", 0 },
		{ "link", CMD_UNKNOWN, NULL, NULL, 0 },
		{ "subscribe", CMD_SUBSCRIBE, NULL, NULL, 0 },
		{ "unsubscribe TEST-2026-0001", CMD_UNSUBSCRIBE, "TEST-2026-0001", NULL, 0 },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(mail_text) t = split(cases[i].line);
		const command *c;

		g_test_message("%s", cases[i].line);
		g_assert_cmpuint(t->commands->len, ==, 1);
		c = cmd(t, 0);
		g_assert_cmpint(c->kind, ==, cases[i].kind);
		if (c->kind == CMD_UNKNOWN) {
			g_assert_nonnull(c->error);
			continue;
		}
		g_assert_cmpstr(c->target, ==, cases[i].target);
		g_assert_cmpstr(c->arg, ==, cases[i].arg);
		g_assert_cmpint(c->rating, ==, cases[i].rating);
	}
}

#define FPR "0123456789ABCDEF0123456789ABCDEF01234567"

static void
test_proposal_arguments(void)
{
	static const struct {
		const char *line;
		command_kind kind;
		const char *target, *arg, *arg2;
		gint64 seq;
	} cases[] = {
		{ "endorse " FPR, CMD_ENDORSE, NULL, FPR, NULL, 0 },
		{ "endorse test-2026-0001 0123456789abcdef0123456789abcdef01234567", CMD_ENDORSE, "TEST-2026-0001", FPR, NULL, 0 },
		{ "endorse " FPR " version REFERENCE fixed Version", CMD_ENDORSE, NULL, FPR, "Version Reference Fixed-In", 0 },
		{ "endorse " FPR " Status", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "endorse 0123456789ABCDEF", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "endorse", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "unendorse " FPR, CMD_UNENDORSE, NULL, FPR, NULL, 0 },
		{ "unendorse " FPR " Version", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "approve 3", CMD_APPROVE, NULL, NULL, NULL, 3 },
		{ "approve TEST-2026-0001 12", CMD_APPROVE, "TEST-2026-0001", NULL, NULL, 12 },
		{ "approve TEST-2026-0001 " FPR, CMD_APPROVE, "TEST-2026-0001", FPR, NULL, 0 },
		{ "approve 0", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "approve 03", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "approve 1234567890", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "approve all of it", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "access", CMD_ACCESS, NULL, NULL, NULL, 0 },
		{ "access TEST-2026-0004", CMD_ACCESS, "TEST-2026-0004", NULL, NULL, 0 },
		{ "Access control is missing in the admin panel.", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "grant TEST-2026-0004 " FPR, CMD_GRANT, "TEST-2026-0004", FPR, NULL, 0 },
		{ "grant everyone", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
		{ "reviewed", CMD_REVIEWED, NULL, NULL, NULL, 0 },
		{ "reviewed TEST-2026-0001", CMD_REVIEWED, "TEST-2026-0001", NULL, NULL, 0 },
		{ "reviewed TEST-2026-0001 Example Server  2.4.1 ", CMD_REVIEWED, "TEST-2026-0001", "Example Server", "2.4.1", 0 },
		{ "reviewed Foo", CMD_UNKNOWN, NULL, NULL, NULL, 0 },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(mail_text) t = split(cases[i].line);
		const command *c;

		g_test_message("%s", cases[i].line);
		g_assert_cmpuint(t->commands->len, ==, 1);
		c = cmd(t, 0);
		g_assert_cmpint(c->kind, ==, cases[i].kind);
		if (c->kind == CMD_UNKNOWN) {
			g_assert_nonnull(c->error);
			g_assert_null(c->arg);
			continue;
		}
		g_assert_cmpstr(c->target, ==, cases[i].target);
		g_assert_cmpstr(c->arg, ==, cases[i].arg);
		g_assert_cmpstr(c->arg2, ==, cases[i].arg2);
		g_assert_cmpint(c->seq, ==, cases[i].seq);
	}
	g_assert_true(commands_fingerprint_valid(FPR "012345678901234567890123", NULL));
	g_assert_false(commands_fingerprint_valid(FPR "0", NULL));
	g_assert_false(commands_fingerprint_valid("G123456789ABCDEF0123456789ABCDEF01234567", NULL));
	g_assert_cmpstr(command_kind_str(CMD_REVIEWED), ==, "reviewed");
}

static void
test_command_limit(void)
{
	g_autoptr(GString) s = g_string_new(NULL);

	for (int i = 0; i < COMMANDS_MAX + 5; i++)
		g_string_append(s, "help\n");
	g_string_append(s, "\ntext\n");
	{
		g_autoptr(mail_text) t = split(s->str);

		g_assert_cmpuint(t->commands->len, ==, COMMANDS_MAX);
		g_assert_cmpuint(t->dropped, ==, 5);
		g_assert_cmpstr(t->text, ==, "text");
	}
}

static void
test_commands_only(void)
{
	{
		g_autoptr(mail_text) t = split("help\n");

		g_assert_false(commands_only(t));	/* the request parser answers help */
	}
	{
		g_autoptr(mail_text) t = split("key\n");

		g_assert_false(commands_only(t));	/* and key */
	}
	{
		g_autoptr(mail_text) t = split("help\nkey\n");

		g_assert_true(commands_only(t));
	}
	{
		g_autoptr(mail_text) t = split("lookup TEST-2026-0001\n\n-- \nAlice\n");

		g_assert_true(commands_only(t));
	}
	{
		g_autoptr(mail_text) t = split("Token: 0123456789abcdef0123456789abcdef\n");

		g_assert_true(commands_only(t));
	}
	{
		g_autoptr(mail_text) t = split("lookup TEST-2026-0001\nProduct: Foo\n");

		g_assert_false(commands_only(t));
	}
	{
		g_autoptr(mail_text) t = split("");

		g_assert_false(commands_only(t));
	}
}

static void
test_quote_only(void)
{
	g_assert_true(commands_quote_only("On Thu, 3 Dec 2026, vulnid wrote:\n> Hello,\n>\n> to confirm\n"));
	g_assert_true(commands_quote_only("> a\n\n> b"));
	g_assert_false(commands_quote_only("Thanks!\n> a"));
	g_assert_false(commands_quote_only("Note:\nnot a quote"));
	g_assert_false(commands_quote_only(""));
	{
		g_autoptr(mail_text) t = split("Token: 0123456789abcdef0123456789abcdef\n\n"
					       "vulnid <request@example.org> wrote:\n> to confirm\n");

		g_assert_true(t->quote_only);
		g_assert_true(commands_only(t));
	}
}

static void
test_helpers(void)
{
	g_autofree char *id = NULL;

	g_assert_true(commands_is_entry_id("test-2026-0001", P, &id));
	g_assert_cmpstr(id, ==, "TEST-2026-0001");
	g_assert_false(commands_is_entry_id("TEST-2026-001", P, NULL));
	g_assert_false(commands_is_entry_id("OTHER-2026-0001", P, NULL));
	g_assert_true(commands_date_valid("2028-02-29"));
	g_assert_false(commands_date_valid("2027-02-29"));
	g_assert_false(commands_date_valid("2027-2-28"));
	g_assert_cmpstr(command_kind_str(CMD_DUPLICATE_OF), ==, "duplicate-of");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/commands/plain-text", test_plain_text);
	g_test_add_func("/commands/commands-fields-text", test_commands_fields_text);
	g_test_add_func("/commands/fields-close", test_fields_close_at_blank_line);
	g_test_add_func("/commands/tokens", test_tokens);
	g_test_add_func("/commands/tokens/limit", test_token_limit);
	g_test_add_func("/commands/not-understood", test_not_understood_kept_as_text);
	g_test_add_func("/commands/field-not-command", test_word_then_colon_is_field);
	g_test_add_func("/commands/arguments", test_arguments);
	g_test_add_func("/commands/arguments/proposals", test_proposal_arguments);
	g_test_add_func("/commands/limit", test_command_limit);
	g_test_add_func("/commands/only", test_commands_only);
	g_test_add_func("/commands/quote-only", test_quote_only);
	g_test_add_func("/commands/helpers", test_helpers);
	return g_test_run();
}
