#!/usr/bin/python3
"""chainlint.py - find test bodies in which a failing command can be lost.

A test body runs in a subshell with `set -e` (test/test-lib.sh), but bash
ignores `set -e` for every command of an && or || list except the last, and
inside everything such a list runs: a loop, an `if`, a function.  So in

	cmd1 &&
	cmd2
	cmd3 &&

a failing cmd1 is silently lost, and in a loop only the last iteration's
status counts.  The rule, as git's t/ has it: the commands of a block are
chained with &&, and the body of a loop ends its chain with `|| return 1`
(or `|| exit 1` inside a subshell).  This script reads each test script as
the shell would (quotes over many lines, here-documents, $(...), `...`,
${...}, comments, line continuations, [[ ]], (( ))), takes the body of every
test_expect_success (the single-quoted last argument, '\\'' spliced quotes
included) and every function the bodies call (directly or through other
functions; those of the scripts' *-lib.sh libraries given too), parses
them, and reports each place where a failure can be lost:

  AMP   a command in a block is followed by a newline or `;` instead of &&
  LOOP  the last command of a loop body does not stop the loop on failure

A command needs no && when it cannot lose a failure: it ends with
`|| return N`, `|| exit N` or `|| fail ...` (or a { } group ending so), it
keeps the status (`cmd || rc=$?`), it is a plain assignment or declaration
without command substitution, a function definition, or it runs in the
background (`&`).  A loop body may also end with a helper that ends the case
by itself (fail, expect_eq, expect_match, expect_no_match, deliver_ok).

Usage:
  chainlint.py SCRIPT...            report problems; exit 1 if any
  chainlint.py --known LIST SCRIPT...
                                    problems listed in LIST (lines as
                                    printed, without the line number) are
                                    "known", the others "new"; exit 1 only
                                    for new ones; LIST entries no longer
                                    found are printed as "fixed"
  chainlint.py --marks FILE...      self-check: the problems found must be
                                    exactly the lines marked ?!KIND?! in FILE
                                    (in a comment; test/chainlint/*.sh)
Exit status 2: a script could not be parsed.
"""

import re
import sys


class ParseError(Exception):
    def __init__(self, line, msg):
        super().__init__(f"{line}: {msg}")
        self.line = line
        self.msg = msg


# --- lexer -----------------------------------------------------------------

OPERATORS = [";;&", "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", "&>",
             ">>", ">|", ">&", "<<", "<&", "<>", ";", "&", "|", "<", ">",
             "(", ")"]
REDIRECTS = {"<", ">", ">>", ">|", ">&", "<&", "<>", "&>", "&>>", "<<<",
             "<<", "<<-"}
METACHARS = set(" \t\n;&|<>()")
# after these a word is in command position ("((" starts arithmetic there)
COMMAND_START_OPS = {";", ";;", ";&", ";;&", "&", "&&", "||", "|", "|&", "("}
COMMAND_START_WORDS = {"then", "do", "else", "elif", "if", "while", "until",
                       "{", "!", "time"}


class Tok:
    __slots__ = ("kind", "text", "line", "end")

    def __init__(self, kind, text, line, end):
        self.kind = kind      # "w" word, "op" operator, "nl" newline, "eof"
        self.text = text
        self.line = line      # first line
        self.end = end        # last line

    def __repr__(self):
        return f"Tok({self.kind},{self.text!r},{self.line})"


class Lexer:
    """Splits shell text into words and operators, as bash does for
    parsing.  With closer=")" it stops after the ")" that closes a $( and
    leaves self.i after it."""

    def __init__(self, s, pos=0, line=1, closer=None):
        self.s = s
        self.i = pos
        self.line = line
        self.closer = closer
        self.toks = []
        self.heredocs = []    # (delimiter, strip tabs) waiting for a newline
        self.depth = 0        # ( ) nesting, for closer
        self.cases = 0        # case ... esac nesting, for closer
        self.dbracket = False  # inside [[ ]]

    def peekc(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def error(self, msg):
        raise ParseError(self.line, msg)

    def command_position(self):
        if not self.toks:
            return True
        t = self.toks[-1]
        if t.kind == "nl":
            return True
        if t.kind == "op":
            return t.text in COMMAND_START_OPS
        return t.text in COMMAND_START_WORDS

    def emit(self, kind, text, line):
        self.toks.append(Tok(kind, text, line, self.line))

    def lex(self):
        while True:
            c = self.peekc()
            if c == "":
                if self.closer:
                    self.error("unterminated $(")
                if self.heredocs:
                    self.error(f"here-document '{self.heredocs[0][0]}' not ended")
                self.emit("eof", "", self.line)
                return self.toks
            if c in " \t":
                self.i += 1
            elif c == "\\" and self.peekc(1) == "\n":
                self.i += 2
                self.line += 1
            elif c == "#":
                while self.peekc() not in ("", "\n"):
                    self.i += 1
            elif c == "\n":
                self.emit("nl", "\n", self.line)
                self.i += 1
                self.line += 1
                self.read_heredocs()
            elif self.dbracket and c in METACHARS:
                # inside [[ ]] operators are words of the test
                start, line = self.i, self.line
                while self.peekc() in METACHARS and self.peekc() not in " \t\n":
                    self.i += 1
                self.emit("w", self.s[start:self.i], line)
            elif c == "(" and self.peekc(1) == "(" and self.command_position():
                line = self.line
                start = self.i
                self.i += 2
                self.skip_arith(2)
                self.emit("w", self.s[start:self.i], line)
            elif c in "<>" and self.peekc(1) == "(":
                self.read_word()
            elif c in METACHARS:
                if self.read_operator():
                    return self.toks
            else:
                self.read_word()

    def read_operator(self):
        """One operator; True when it is the closer of a $( )."""
        line = self.line
        for op in OPERATORS:
            if self.s.startswith(op, self.i):
                break
        self.i += len(op)
        if op == "(":
            self.depth += 1
        elif op == ")":
            if self.closer and self.depth == 0:
                if self.cases == 0:
                    return True
                # a case pattern inside $( )
            else:
                self.depth = max(0, self.depth - 1)
        self.emit("op", op, line)
        if op in ("<<", "<<-"):
            while self.peekc() in (" ", "\t"):
                self.i += 1
            start = self.i
            self.read_word()
            raw = self.s[start:self.i]
            self.heredocs.append((unquote(raw), op == "<<-"))
        return False

    def read_heredocs(self):
        for delim, strip in self.heredocs:
            while True:
                if self.i >= len(self.s):
                    self.error(f"here-document '{delim}' not ended")
                j = self.s.find("\n", self.i)
                if j < 0:
                    j = len(self.s)
                text = self.s[self.i:j]
                self.i = j + 1
                self.line += 1
                if (text.lstrip("\t") if strip else text) == delim:
                    break
            if self.i > len(self.s):
                self.i = len(self.s)
        self.heredocs = []

    def read_word(self):
        start, line = self.i, self.line
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in "<>" and self.peekc(1) == "(" and (self.i == start or True):
                if self.i != start and s[self.i - 1] not in "=":
                    break
                self.i += 2
                self.skip_command_subst()
            elif c == "(" and self.i > start and s[self.i - 1] in "=@?*+!":
                # a=(...) and extended globs
                self.i += 1
                self.skip_parens()
            elif c in METACHARS:
                break
            elif c == "\\":
                if self.peekc(1) == "\n":
                    self.line += 1
                self.i += 2
            elif c == "'":
                self.skip_single()
            elif c == '"':
                self.skip_double()
            elif c == "`":
                self.skip_backtick()
            elif c == "$":
                self.skip_dollar()
            else:
                self.i += 1
        text = s[start:self.i]
        self.emit("w", text, line)
        if text == "[[" and self.command_position_before_last():
            self.dbracket = True
        elif text == "]]" and self.dbracket:
            self.dbracket = False
        elif text == "case":
            self.cases += 1
        elif text == "esac" and self.cases:
            self.cases -= 1

    def command_position_before_last(self):
        last = self.toks.pop()
        try:
            return self.command_position()
        finally:
            self.toks.append(last)

    def count_lines(self, a, b):
        self.line += self.s.count("\n", a, b)

    def skip_single(self):
        j = self.s.find("'", self.i + 1)
        if j < 0:
            self.error("unterminated '")
        self.count_lines(self.i, j)
        self.i = j + 1

    def skip_double(self):
        self.i += 1
        while True:
            c = self.peekc()
            if c == "":
                self.error('unterminated "')
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                if self.peekc(1) == "\n":
                    self.line += 1
                self.i += 2
            elif c == "`":
                self.skip_backtick()
            elif c == "$":
                self.skip_dollar()
            else:
                if c == "\n":
                    self.line += 1
                self.i += 1

    def skip_backtick(self):
        self.i += 1
        while True:
            c = self.peekc()
            if c == "":
                self.error("unterminated `")
            if c == "`":
                self.i += 1
                return
            if c == "\\":
                if self.peekc(1) == "\n":
                    self.line += 1
                self.i += 2
            else:
                if c == "\n":
                    self.line += 1
                self.i += 1

    def skip_dollar(self):
        nxt = self.peekc(1)
        if nxt == "'":
            self.i += 2
            while True:
                c = self.peekc()
                if c == "":
                    self.error("unterminated $'")
                if c == "'":
                    self.i += 1
                    return
                if c == "\\":
                    self.i += 1
                if self.peekc() == "\n":
                    self.line += 1
                self.i += 1
        elif nxt == "(" and self.peekc(2) == "(":
            self.i += 3
            self.skip_arith(2)
        elif nxt == "(":
            self.i += 2
            self.skip_command_subst()
        elif nxt == "{":
            self.i += 2
            self.skip_braces()
        else:
            self.i += 1

    def skip_command_subst(self):
        sub = Lexer(self.s, self.i, self.line, closer=")")
        sub.lex()
        self.i = sub.i
        self.line = sub.line

    def skip_arith(self, depth):
        while depth:
            c = self.peekc()
            if c == "":
                self.error("unterminated ((")
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "\n":
                self.line += 1
            elif c == "$" and self.peekc(1) == "(" and self.peekc(2) != "(":
                self.i += 2
                self.skip_command_subst()
                continue
            self.i += 1

    def skip_parens(self):
        depth = 1
        while depth:
            c = self.peekc()
            if c == "":
                self.error("unterminated (")
            if c == "(":
                depth += 1
                self.i += 1
            elif c == ")":
                depth -= 1
                self.i += 1
            elif c == "'":
                self.skip_single()
            elif c == '"':
                self.skip_double()
            elif c == "$":
                self.skip_dollar()
            elif c == "\\":
                self.i += 2
            else:
                if c == "\n":
                    self.line += 1
                self.i += 1

    def skip_braces(self):
        depth = 1
        while depth:
            c = self.peekc()
            if c == "":
                self.error("unterminated ${")
            if c == "{":
                depth += 1
                self.i += 1
            elif c == "}":
                depth -= 1
                self.i += 1
            elif c == "'":
                self.skip_single()
            elif c == '"':
                self.skip_double()
            elif c == "`":
                self.skip_backtick()
            elif c == "$":
                self.skip_dollar()
            elif c == "\\":
                self.i += 2
            else:
                if c == "\n":
                    self.line += 1
                self.i += 1


def unquote(raw):
    """The value of a word without its quotes (expansions left as text)."""
    out = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1:j])
            i = j + 1
        elif c == '"':
            i += 1
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
                    if raw[i + 1] != "\n":
                        out.append(raw[i + 1])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            i += 1
        elif c == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def lex(text, line=1):
    return Lexer(text, 0, line).lex()


# --- parser ----------------------------------------------------------------

class Item:
    """One and-or list of a block and what ends it: ";", "&", "\\n" or None
    (the end of the block)."""

    def __init__(self, andor, sep):
        self.andor = andor
        self.sep = sep


class AndOr:
    def __init__(self, pipelines, ops):
        self.pipelines = pipelines    # [Pipeline]
        self.ops = ops                # ["&&" | "||"], one fewer
        self.end = pipelines[-1].end


class Pipeline:
    def __init__(self, commands, negated):
        self.commands = commands
        self.negated = negated
        self.end = commands[-1].end


class Command:
    """kind: simple, subshell, group, if, for, while, case, arith, test,
    func.  blocks: the lists inside; loop_body: the body of a loop."""

    def __init__(self, kind, line, end, words=(), blocks=(), loop_body=None,
                 branches=None, name=None, redirects=0):
        self.kind = kind
        self.line = line
        self.end = end
        self.words = list(words)
        self.blocks = list(blocks)
        self.loop_body = loop_body
        self.branches = branches      # if/case: the blocks that finish it
        self.name = name
        self.redirects = redirects


class Parser:
    def __init__(self, toks):
        self.t = toks
        self.k = 0

    def peek(self, k=0):
        return self.t[min(self.k + k, len(self.t) - 1)]

    def take(self):
        tok = self.t[self.k]
        if tok.kind != "eof":
            self.k += 1
        return tok

    def error(self, tok, msg):
        raise ParseError(tok.line, msg)

    def is_op(self, text, k=0):
        tok = self.peek(k)
        return tok.kind == "op" and tok.text == text

    def is_word(self, text, k=0):
        tok = self.peek(k)
        return tok.kind == "w" and tok.text == text

    def expect_word(self, text):
        if not self.is_word(text):
            self.error(self.peek(), f"expected '{text}', found '{self.peek().text.strip()}'")
        return self.take()

    def expect_op(self, text):
        if not self.is_op(text):
            self.error(self.peek(), f"expected '{text}', found '{self.peek().text.strip()}'")
        return self.take()

    def skip_nl(self):
        while self.peek().kind == "nl":
            self.take()

    def at_stop(self, stops):
        tok = self.peek()
        if tok.kind == "eof":
            return True
        return (tok.kind == "w" or tok.kind == "op") and tok.text in stops

    def parse_script(self):
        block = self.parse_list(set())
        if self.peek().kind != "eof":
            self.error(self.peek(), f"unexpected '{self.peek().text}'")
        return block

    def parse_list(self, stops):
        items = []
        self.skip_nl()
        while not self.at_stop(stops):
            andor = self.parse_andor()
            tok = self.peek()
            sep = None
            if tok.kind == "op" and tok.text in (";", "&"):
                sep = self.take().text
            elif tok.kind == "nl":
                sep = "\n"
                self.take()
            items.append(Item(andor, sep))
            self.skip_nl()
            if sep is None:
                break
        return items

    def parse_andor(self):
        pipelines = [self.parse_pipeline()]
        ops = []
        while self.is_op("&&") or self.is_op("||"):
            ops.append(self.take().text)
            self.skip_nl()
            pipelines.append(self.parse_pipeline())
        return AndOr(pipelines, ops)

    def parse_pipeline(self):
        negated = False
        while self.is_word("!") or self.is_word("time"):
            negated = negated or self.take().text == "!"
        commands = [self.parse_command()]
        while self.is_op("|") or self.is_op("|&"):
            self.take()
            self.skip_nl()
            commands.append(self.parse_command())
        return Pipeline(commands, negated)

    def parse_command(self):
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(":
            self.take()
            body = self.parse_list({")"})
            end = self.expect_op(")")
            cmd = Command("subshell", tok.line, end.end, blocks=[body])
        elif tok.kind == "w" and tok.text == "{":
            self.take()
            body = self.parse_list({"}"})
            end = self.expect_word("}")
            cmd = Command("group", tok.line, end.end, blocks=[body], branches=[body])
        elif tok.kind == "w" and tok.text == "if":
            cmd = self.parse_if()
        elif tok.kind == "w" and tok.text in ("for", "select"):
            cmd = self.parse_for()
        elif tok.kind == "w" and tok.text in ("while", "until"):
            self.take()
            cond = self.parse_list({"do"})
            self.expect_word("do")
            body = self.parse_list({"done"})
            end = self.expect_word("done")
            cmd = Command("while", tok.line, end.end, blocks=[cond, body], loop_body=body)
        elif tok.kind == "w" and tok.text == "case":
            cmd = self.parse_case()
        elif tok.kind == "w" and tok.text == "function":
            self.take()
            name = self.take()
            if self.is_op("("):
                self.take()
                self.expect_op(")")
            self.skip_nl()
            body = self.parse_command()
            return Command("func", tok.line, body.end, blocks=body.blocks, name=name.text)
        elif tok.kind == "w" and tok.text.startswith("(("):
            self.take()
            cmd = Command("arith", tok.line, tok.end, words=[tok.text])
        elif tok.kind == "w" and tok.text == "[[":
            words = []
            while not self.is_word("]]"):
                if self.peek().kind in ("eof", "nl"):
                    self.error(tok, "unterminated [[")
                words.append(self.take().text)
            end = self.take()
            cmd = Command("test", tok.line, end.end, words=["[["] + words + ["]]"])
        else:
            return self.parse_simple()
        return self.parse_redirects(cmd)

    def parse_redirects(self, cmd):
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.text in REDIRECTS:
                self.take()
                target = self.take()
                if target.kind != "w":
                    self.error(tok, f"no target after '{tok.text}'")
                cmd.end = target.end
                cmd.redirects += 1
            elif tok.kind == "w" and re.fullmatch(r"\d+|\{\w+\}", tok.text) and \
                    self.peek(1).kind == "op" and self.peek(1).text in REDIRECTS:
                self.take()
            else:
                return cmd

    def parse_simple(self):
        first = self.peek()
        words = []
        redirects = 0
        end = first.end
        while True:
            tok = self.peek()
            if tok.kind == "w":
                if re.fullmatch(r"\d+|\{\w+\}", tok.text) and self.peek(1).kind == "op" \
                        and self.peek(1).text in REDIRECTS:
                    self.take()
                    continue
                words.append(self.take().text)
                end = tok.end
                if len(words) == 1 and self.is_op("(") and self.is_op(")", 1):
                    self.take()
                    self.take()
                    self.skip_nl()
                    body = self.parse_command()
                    return Command("func", first.line, body.end, blocks=body.blocks,
                                   name=words[0])
            elif tok.kind == "op" and tok.text in REDIRECTS:
                self.take()
                target = self.take()
                if target.kind != "w":
                    self.error(tok, f"no target after '{tok.text}'")
                redirects += 1
                end = target.end
            else:
                break
        if not words and not redirects:
            self.error(first, f"unexpected '{first.text.strip() or 'end of text'}'")
        return Command("simple", first.line, end, words=words, redirects=redirects)

    def parse_if(self):
        tok = self.take()
        blocks, branches = [], []
        blocks.append(self.parse_list({"then"}))
        self.expect_word("then")
        body = self.parse_list({"elif", "else", "fi"})
        blocks.append(body)
        branches.append(body)
        while self.is_word("elif"):
            self.take()
            blocks.append(self.parse_list({"then"}))
            self.expect_word("then")
            body = self.parse_list({"elif", "else", "fi"})
            blocks.append(body)
            branches.append(body)
        if self.is_word("else"):
            self.take()
            body = self.parse_list({"fi"})
            blocks.append(body)
            branches.append(body)
        end = self.expect_word("fi")
        return Command("if", tok.line, end.end, blocks=blocks, branches=branches)

    def parse_for(self):
        tok = self.take()
        if self.peek().kind == "w" and self.peek().text.startswith("(("):
            self.take()
        else:
            self.take()                         # the name
            self.skip_nl()
            if self.is_word("in"):
                self.take()
                while self.peek().kind == "w":
                    self.take()
        if self.is_op(";"):
            self.take()
        self.skip_nl()
        self.expect_word("do")
        body = self.parse_list({"done"})
        end = self.expect_word("done")
        return Command("for", tok.line, end.end, blocks=[body], loop_body=body)

    def parse_case(self):
        tok = self.take()
        self.take()                             # the word
        self.skip_nl()
        self.expect_word("in")
        self.skip_nl()
        blocks = []
        while not self.is_word("esac"):
            if self.peek().kind == "eof":
                self.error(tok, "unterminated case")
            if self.is_op("("):
                self.take()
            while not self.is_op(")"):
                if self.peek().kind in ("eof", "nl"):
                    self.error(self.peek(), "bad case pattern")
                self.take()
            self.take()
            body = self.parse_list({";;", ";&", ";;&", "esac"})
            blocks.append(body)
            if self.peek().kind == "op" and self.peek().text in (";;", ";&", ";;&"):
                self.take()
            self.skip_nl()
        end = self.take()
        return Command("case", tok.line, end.end, blocks=blocks, branches=blocks)


def parse(text, line=1):
    return Parser(lex(text, line)).parse_script()


# --- the rules -------------------------------------------------------------
#
# errexit: whether `set -e` acts on a command where it stands.  A test body
# starts with it on; it is off left of && and ||, after !, in the condition
# of if/while/until, in all but the last command of a pipeline, and in a
# function called from any of those places.  A { } group, if, case or loop
# whose status comes from a failure set -e ignored does not stop the body
# either (bash keeps ignoring it), while a ( ) subshell or a function call
# does: their status is a new one.
#
# final: whether the status of a block's last command is looked at: True
# for a body, a function, a ( ) subshell and the operands of && and ||;
# "loop" for a loop body (only the last round counts); "amp" for a block
# in a command that is followed by more commands without &&.

# helpers of test-lib.sh that end the case themselves when they fail, and
# one that never fails (it keeps the filter's status in $rc)
SELF_FAILING = {"fail", "expect_eq", "expect_match", "expect_no_match", "deliver_ok"}
NEVER_FAILS = {"deliver"}
TERMINATORS = {"return", "exit", "fail", "BUG"}
DECLARATIONS = {"local", "declare", "typeset", "readonly", "export"}
HARMLESS = {"true", ":", "break", "continue", "sleep", "set", "shift", "unset"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


def single(andor):
    """The one command of an and-or list of one command, else None."""
    if len(andor.pipelines) == 1:
        return only(andor.pipelines[0])
    return None


def only(pipeline):
    """The command of a pipeline of one command, else None."""
    if len(pipeline.commands) == 1 and not pipeline.negated:
        return pipeline.commands[0]
    return None


def has_substitution(word):
    """A command runs in it ($((...)) is arithmetic, no command)."""
    return re.search(r"\$\((?!\()|`|[<>]\(", word) is not None


def settles(cmd):
    """Never returns a failure: a helper that ends the case itself, one that
    never fails, or an if/case/{ } each of whose blocks ends so."""
    if cmd is None:
        return False
    if cmd.kind == "simple":
        return bool(cmd.words) and cmd.words[0] in SELF_FAILING | NEVER_FAILS
    if cmd.kind in ("if", "case", "group"):
        return all(not b or can_only_settle(b[-1].andor) for b in cmd.branches)
    return False


def can_only_settle(andor):
    cmd = single(andor)
    if cmd is not None and (cannot_fail(cmd) or settles(cmd)):
        return True
    return ends_with_terminator(andor) or always_fails(andor) is False and \
        bool(andor.ops) and andor.ops[-1] == "||" and harmless_tail(andor)


def cannot_fail(cmd):
    """Nothing in it can fail: an assignment or declaration without command
    substitution, true, :, break, continue, sleep, set, shift, unset, echo
    or printf onto the output as it is, or a group that only starts commands
    in the background."""
    if cmd is None:
        return False
    if cmd.kind in ("group", "subshell"):
        return all(item.sep == "&" for item in cmd.blocks[0])
    if cmd.kind != "simple" or cmd.redirects or not cmd.words:
        return False
    words = cmd.words
    if words[0] in ("echo", "printf"):
        # onto the output the caller redirects: what it writes is checked
        # there, not the write
        return True
    if words[0] in DECLARATIONS or words[0] in HARMLESS:
        words = words[1:]
    elif not all(ASSIGNMENT.match(w) for w in words):
        return False
    return not any(has_substitution(w) for w in words)


def always_fails(andor):
    """false, exit 1, return 1, fail ...: the block fails whatever came
    before it."""
    cmd = single(andor)
    if cmd is None or cmd.kind != "simple" or not cmd.words:
        return False
    w = cmd.words
    return w[0] in ("false", "fail", "BUG") or \
        (w[0] in ("exit", "return") and len(w) == 2 and w[1] not in ("0", "$?"))


def is_terminator(pipeline):
    """return/exit/fail, or a { } group that ends with one."""
    cmd = only(pipeline)
    if cmd is None:
        return False
    if cmd.kind == "simple":
        return bool(cmd.words) and cmd.words[0] in TERMINATORS
    if cmd.kind == "group" and cmd.blocks[0]:
        last = cmd.blocks[0][-1].andor
        return always_fails(last) or ends_with_terminator(last) or is_control(last)
    return False


def is_control(andor):
    """break, continue, return, exit: leaves the loop or the function."""
    cmd = single(andor)
    return cmd is not None and cmd.kind == "simple" and bool(cmd.words) and \
        cmd.words[0] in ("break", "continue", "return", "exit")


def ends_with_terminator(andor):
    return bool(andor.ops) and andor.ops[-1] == "||" and is_terminator(andor.pipelines[-1])


def is_condition(pipeline):
    """A test, whose failure means "no": [ ], test, [[ ]], (( )), grep -q."""
    cmd = pipeline.commands[-1]
    if cmd.kind in ("test", "arith"):
        return True
    if cmd.kind != "simple" or not cmd.words:
        return False
    if cmd.words[0] in ("[", "test"):
        return True
    return cmd.words[0] == "grep" and \
        any(re.fullmatch(r"-[A-Za-z]*q[A-Za-z]*", w) for w in cmd.words[1:])


def harmless_tail(andor):
    """What runs last cannot fail, ends the case, or keeps the status
    (cmd || echo "$?" >>errors)."""
    last = andor.pipelines[-1]
    return is_terminator(last) or cannot_fail(only(last)) or \
        any("$?" in w for c in last.commands if c.kind == "simple" for w in c.words)


def short_if(andor):
    """An `if` written short: test && harmless, or cmd && break (a loop
    that polls: cmd is the condition of leaving)."""
    if not andor.ops or andor.ops[-1] != "&&":
        return False
    if is_control(AndOr([andor.pipelines[-1]], [])) or is_terminator(andor.pipelines[-1]):
        return "||" not in andor.ops
    return len(andor.ops) == 1 and is_condition(andor.pipelines[0]) and harmless_tail(andor)


def may_fail(pipeline):
    cmd = only(pipeline)
    return not (cannot_fail(cmd) or settles(cmd))


def loses_with_errexit(andor):
    """With set -e on, a failure in the run of && that ends the list is
    ignored (one before an || is handled there)."""
    if not andor.ops or andor.ops[-1] != "&&" or short_if(andor):
        return False
    k = len(andor.ops) - 1
    while k >= 0 and andor.ops[k] == "&&":
        if may_fail(andor.pipelines[k]):
            return True
        k -= 1
    return False


def loses_without_errexit(andor):
    """With set -e off, any failure not handled by || is lost."""
    cmd = single(andor)
    if cmd is not None and (cmd.kind == "func" or cannot_fail(cmd) or settles(cmd)):
        return False
    if not andor.ops:
        return True
    if andor.ops[-1] == "||":
        # the failures before || are handled; what handles them must not fail
        return not harmless_tail(andor)
    return not short_if(andor)


def stops_loop(andor):
    """The last command of a loop body with set -e off: a failure must
    leave the loop.  An if, case, { } or loop there passes the question on
    to the last commands of its own blocks."""
    if not loses_without_errexit(andor):
        return True
    cmd = single(andor)
    if cmd is None:
        return False
    if cmd.kind == "simple":
        return bool(cmd.words) and cmd.words[0] in SELF_FAILING | TERMINATORS
    return cmd.kind in ("if", "case", "group", "for", "while")


def keeps_status(item):
    """cmd; rc=$?: the next command keeps the status."""
    cmd = item.andor.pipelines[0].commands[0]
    return cmd.kind == "simple" and any("$?" in w for w in cmd.words)


class Checker:
    """Walks parsed commands, reporting lost failures through report(line,
    kind, message) and each call of a known function through call(name,
    errexit)."""

    def __init__(self, report, call=None, functions=()):
        self.report = report
        self.call = call or (lambda name, errexit: None)
        self.functions = functions

    def quiet(self):
        """The same walk reporting nothing: for what runs where no status
        is looked at whatever the chain (before | of a pipeline)."""
        return Checker(lambda *a: None, self.call, self.functions)

    def block(self, items, errexit, final):
        doomed = bool(items) and always_fails(items[-1].andor)
        for n, item in enumerate(items):
            last = n == len(items) - 1
            self.andor(item.andor, errexit, final if last else "amp")
            if last:
                if final is True:
                    continue
                kind = "LOOP" if final == "loop" else "AMP"
                if errexit:
                    lost = loses_with_errexit(item.andor)
                else:
                    # with set -e off an "amp" block is reported where the
                    # command holding it is not chained
                    lost = final == "loop" and not stops_loop(item.andor)
                if lost:
                    self.report(item.andor.end, kind,
                                "a failure here does not stop the loop: end with || return 1"
                                if kind == "LOOP" else "a failure here is ignored")
            elif item.sep in (";", "\n") and not doomed and not keeps_status(items[n + 1]):
                if (loses_with_errexit if errexit else loses_without_errexit)(item.andor):
                    self.report(item.andor.end, "AMP", "missing && after this command")

    def andor(self, andor, errexit, final):
        n = len(andor.pipelines)
        for k, pipeline in enumerate(andor.pipelines):
            last = k == n - 1
            e = errexit and last and not pipeline.negated
            f = final if last and not pipeline.negated else True
            m = len(pipeline.commands)
            for j, cmd in enumerate(pipeline.commands):
                if m == 1:
                    self.command(cmd, e, f)
                elif j == m - 1:
                    # each command of a pipeline is a subshell of its own
                    self.command(cmd, e, True)
                else:
                    self.quiet().command(cmd, False, True)

    def command(self, cmd, errexit, final):
        if cmd.kind == "simple":
            if cmd.words and cmd.words[0] in self.functions:
                self.call(cmd.words[0], errexit)
            for w in cmd.words[1:]:
                if w in self.functions:
                    # wait_until NAME, with_fault ... -- NAME: a condition
                    self.call(w, False)
        elif cmd.kind == "func":
            # a function defined here: it may be called from anywhere
            for b in cmd.blocks:
                self.block(b, False, True)
        elif cmd.kind == "subshell":
            self.block(cmd.blocks[0], errexit, True)
        elif cmd.kind == "group":
            self.block(cmd.blocks[0], errexit, final)
        elif cmd.kind == "if":
            for b in cmd.blocks:
                if any(b is br for br in cmd.branches):
                    self.block(b, errexit, final)
                else:
                    self.block(b, False, True)
        elif cmd.kind == "case":
            for b in cmd.blocks:
                self.block(b, errexit, final)
        elif cmd.kind in ("for", "while"):
            for b in cmd.blocks:
                if b is cmd.loop_body:
                    self.block(b, errexit, "loop")
                else:
                    self.block(b, False, True)


# --- the scripts -------------------------------------------------------------

BODY_COMMANDS = {"test_expect_success", "test_expect_failure"}
LIBRARY = re.compile(r"-lib\.sh$")


def walk_commands(items, in_func=False):
    """Every command of a parsed script, and whether it is inside a function."""
    for item in items:
        for pipeline in item.andor.pipelines:
            for cmd in pipeline.commands:
                yield cmd, in_func
                for b in cmd.blocks:
                    yield from walk_commands(b, in_func or cmd.kind == "func")


class Script:
    def __init__(self, path):
        self.path = path
        self.label = path.rsplit("/", 1)[-1]
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            self.text = f.read()
        self.lines = self.text.split("\n")
        self.problems = []        # (line, kind, title, message)
        self.items = []           # the script, parsed
        self.bodies = []          # (title, items)
        self.helpers = {}         # name -> Command
        self.libraries = []       # the Scripts whose helpers this one uses
        try:
            self.parse()
        except ParseError as e:
            self.problems.append((e.line, "PARSE", "(script)", e.msg))

    def source_line(self, n):
        return self.lines[n - 1].strip() if 0 < n <= len(self.lines) else ""

    def parse(self):
        toks = lex(self.text)
        self.items = Parser(toks).parse_script()
        for cmd, in_func in walk_commands(self.items):
            if cmd.kind == "func" and not in_func:
                self.helpers[cmd.name] = cmd
            elif cmd.kind == "simple" and cmd.words and cmd.words[0] in BODY_COMMANDS:
                if len(cmd.words) < 3:
                    self.problems.append((cmd.line, "PARSE", "?", "a test without a body"))
                    continue
                title = unquote(cmd.words[1])
                raw = cmd.words[-1]
                line = cmd.line
                for t in toks:
                    if t.kind == "w" and t.text == raw and cmd.line <= t.line <= cmd.end:
                        line = t.line
                        break
                try:
                    self.bodies.append((title, parse(unquote(raw), line)))
                except ParseError as e:
                    self.problems.append((e.line, "PARSE", title, e.msg))

    def key(self, problem):
        line, kind, title, _ = problem
        return f"{self.label}: {kind}: '{title}': {self.source_line(line)}"

    def formatted(self, problem):
        line, kind, title, message = problem
        return f"{self.label}:{line}: {kind}: '{title}': {self.source_line(line)}"


def lint(scripts):
    """Check every body, then every helper with set -e as its callers have
    it (off if any caller has it off, or calls it outside a body)."""
    for s in scripts:
        s.libraries = [lib for lib in scripts
                       if lib is not s and LIBRARY.search(lib.label) and lib.label in s.text]

    def resolve(script, name):
        if name in script.helpers:
            return script
        for lib in script.libraries:
            if name in lib.helpers:
                return lib
        return None

    def names(script):
        found = set(script.helpers)
        for lib in script.libraries:
            found |= set(lib.helpers)
        return found

    sites = {}                # (script label, name) -> [errexit...]

    def recorder(script, table):
        def call(name, errexit):
            owner = resolve(script, name)
            if owner is not None:
                table.setdefault((owner.label, name), []).append(errexit)
        return call

    def reporter(script, title):
        def report(line, kind, message):
            script.problems.append((line, kind, title, message))
        return report

    for s in scripts:
        known = names(s)
        for title, items in s.bodies:
            Checker(reporter(s, title), recorder(s, sites), known).block(items, True, True)
        # the script's own top level runs without set -e; bodies are
        # checked above, helpers below
        top = [item for item in s.items
               if not any(c.kind == "func" or (c.kind == "simple" and c.words and
                                               c.words[0] in BODY_COMMANDS)
                          for p in item.andor.pipelines for c in p.commands)]
        # (calls from there are not recorded: a helper only the top level
        # or a trap uses is set-up or clean-up, outside the rule)
        Checker(lambda *a: None, None, known).block(top, False, True)

    def reached(script, name, table):
        return (script.label, name) in sites or (script.label, name) in table

    def errexit_of(script, name, table):
        calls = sites.get((script.label, name), []) + table.get((script.label, name), [])
        return bool(calls) and all(calls)

    # set -e only goes from on to off as more callers are seen
    inner = {}
    for _ in range(len(scripts) * 50 + 1):
        found = {}
        for s in scripts:
            known = names(s)
            for name, cmd in s.helpers.items():
                if not reached(s, name, inner):
                    continue
                e = errexit_of(s, name, inner)
                checker = Checker(lambda *a: None, recorder(s, found), known)
                for b in cmd.blocks:
                    checker.block(b, e, True)
        if found == inner:
            break
        inner = found
    for s in scripts:
        known = names(s)
        for name, cmd in s.helpers.items():
            if not reached(s, name, inner):
                continue
            e = errexit_of(s, name, inner)
            checker = Checker(reporter(s, f"function {name}"), None, known)
            for b in cmd.blocks:
                checker.block(b, e, True)
    for s in scripts:
        s.problems = sorted(set(s.problems))


def read_known(path):
    known = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                known.append(line)
    return known


def main(argv):
    mode, known_path, files = "report", None, []
    args = iter(argv)
    for a in args:
        if a == "--known":
            mode, known_path = "known", next(args, None)
        elif a == "--marks":
            mode = "marks"
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(a)
    if not files or (mode == "known" and not known_path):
        print("usage: chainlint.py [--known LIST | --marks] SCRIPT...", file=sys.stderr)
        return 2
    scripts = [Script(f) for f in files]
    lint(scripts)
    parse_failed = any(p[1] == "PARSE" for s in scripts for p in s.problems)

    if mode == "marks":
        bad = 0
        for s in scripts:
            found = {(p[0], p[1]) for p in s.problems}
            marked = set()
            for n, text in enumerate(s.lines, 1):
                for kind in re.findall(r"\?!([A-Z]+)\?!", text):
                    marked.add((n, kind))
            for line, kind in sorted(found - marked):
                print(f"{s.label}:{line}: {kind} reported, not marked: {s.source_line(line)}")
                bad += 1
            for line, kind in sorted(marked - found):
                print(f"{s.label}:{line}: {kind} marked, not reported: {s.source_line(line)}")
                bad += 1
            print(f"# {s.label}: {len(marked)} marked, {len(found)} reported, "
                  f"{len(s.bodies)} bodies, {len(s.helpers)} functions")
        return 1 if bad else 0

    if mode == "known":
        remaining = read_known(known_path)
        new = 0
        for s in scripts:
            for p in s.problems:
                key = s.key(p)
                if key in remaining and p[1] != "PARSE":
                    remaining.remove(key)
                    print(f"known: {s.formatted(p)}")
                else:
                    print(f"new: {s.formatted(p)}")
                    new += 1
        for key in remaining:
            print(f"fixed: {key}")
        return 2 if parse_failed else (1 if new else 0)

    count = 0
    for s in scripts:
        for p in s.problems:
            print(s.formatted(p))
            count += 1
    return 2 if parse_failed else (1 if count else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
