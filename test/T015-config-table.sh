#!/bin/bash
# T015-config-table: vulnid.conf(5), vulnid(8) and the bash completion say
# what the program's own tables say: every key with its default and range,
# every command, and nothing else.
. "$(dirname "$0")/test-lib.sh"

MAN5="$VULNID_SRCDIR/doc/vulnid.conf.5"
MAN8="$VULNID_SRCDIR/doc/vulnid.8"
COMPLETION="$VULNID_SRCDIR/contrib/bash-completion/vulnid"

# man_keys: "group key default range" for every key of GROUPS AND KEYS,
# read from the roff source (default "-" for none, "" for empty; range
# "lo hi" or "-").
man_keys() {
	"$PYTHON" - "$MAN5" <<-'PY'
	import re, shlex, sys
	text = open(sys.argv[1]).read()
	sec = text.split("\n.SH GROUPS AND KEYS\n", 1)[1].split("\n.SH ", 1)[0]

	def plain(lines):
	    out = []
	    for l in lines:
	        if l.startswith(".\\\""):
	            continue
	        if l.startswith("."):
	            m = l.split(None, 1)
	            args = shlex.split(m[1].replace("\\", "\\\\")) if len(m) > 1 else []
	            args = [a.replace("\\\\", "\\") for a in args]
	            l = (" " if m[0] in (".B", ".I") else "").join(args)
	        out.append(l)
	    t = " ".join(out)
	    t = re.sub(r"\\f[BIRP]", "", t).replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
	    return re.sub(r"\s+", " ", t)

	group, key, body = None, None, []
	items = []
	lines = sec.split("\n")
	i = 0
	while i < len(lines):
	    l = lines[i]
	    m = re.match(r"\.SS \[(\w+)\]", l)
	    if m or l.startswith(".SS"):
	        if key: items.append((group, key, body))
	        group = m.group(1) if m else None
	        key, body = None, []
	    elif l == ".TP" and group and i + 1 < len(lines) and re.match(r"\.B [a-z_]+$", lines[i + 1]):
	        if key: items.append((group, key, body))
	        key, body = lines[i + 1][3:], []
	        i += 1
	    elif l == ".TP":
	        if key: items.append((group, key, body))
	        key, body = None, []
	    elif key:
	        body.append(l)
	    i += 1
	if key: items.append((group, key, body))

	for group, key, body in items:
	    t = plain(body)
	    rng = re.search(r"\bRange (\d+) to (\d+)\b", t)
	    d = None
	    if re.search(r"\bNo default\b", t):
	        d = "-"
	    else:
	        m = (re.search(r"\bRange \S+ to \S+(?: \([^)]*\))?; default (\S+)", t) or re.search(r"\bDefault:? (\S+)", t)
	             or re.search(r"(\S+) \(the default\)", t))
	        if m:
	            d = m.group(1).rstrip(".,;:")
	            if d.lower() == "empty":
	                d = '""'
	    print(group, key, d if d is not None else "?", rng.group(1) + " " + rng.group(2) if rng else "-")
	PY
}

table_keys() {
	"$VULNID" config keys | awk -F'\t' '{
		r = ($3 == "int") ? $4 " " $5 : "-"
		print $1, $2, $6, r }'
}

test_expect_success 'vulnid config keys lists the table without an instance' '
	env -u VULNID_CONF "$VULNID" config keys >"$TMP/keys" &&
	expect_match "^limits	max_message_size	int	1024	943718400	26214400$" "$TMP/keys" &&
	expect_match "^instance	prefix	string	-	-	-$" "$TMP/keys" &&
	expect_match "^lmtpd	socket_mode	octal	00	0777	0660$" "$TMP/keys" &&
	test "$(wc -l <"$TMP/keys")" -gt 60 &&
	rc=0 && "$VULNID" config nonsense 2>/dev/null || rc=$? &&
	expect_eq 64 "$rc" "exit of a wrong subcommand"
'

test_expect_success 'vulnid.conf(5) documents every key of the table, and no other' '
	man_keys >"$TMP/man" && table_keys >"$TMP/table" &&
	cut -d" " -f1,2 "$TMP/man" | sort >"$TMP/man.k" &&
	cut -d" " -f1,2 "$TMP/table" | sort >"$TMP/table.k" &&
	test "$(wc -l <"$TMP/table.k")" -gt 60 &&
	if ! diff -u "$TMP/table.k" "$TMP/man.k" >"$TMP/diff"; then
		fail "keys differ (- only in the table, + only in vulnid.conf(5)): $(cat "$TMP/diff")"
	fi
'

test_expect_success 'vulnid.conf(5) states the default of every key as the table has it' '
	sort "$TMP/table" | cut -d" " -f1-3 >"$TMP/table.d" &&
	sort "$TMP/man" | cut -d" " -f1-3 >"$TMP/man.d" &&
	if ! diff -u "$TMP/table.d" "$TMP/man.d" >"$TMP/diff"; then
		fail "defaults differ (- the table, + vulnid.conf(5)): $(cat "$TMP/diff")"
	fi
'

test_expect_success 'vulnid.conf(5) states the range of every whole-number key as the table has it' '
	sort "$TMP/table" | awk "{ print \$1, \$2, \$4, \$5 }" >"$TMP/table.r" &&
	sort "$TMP/man" | awk "{ print \$1, \$2, \$4, \$5 }" >"$TMP/man.r" &&
	if ! diff -u "$TMP/table.r" "$TMP/man.r" >"$TMP/diff"; then
		fail "ranges differ (- the table, + vulnid.conf(5)): $(cat "$TMP/diff")"
	fi
'

test_expect_success 'the file vulnid init writes has every key of the table, with its default' '
	"$VULNID" init --prefix TEST --domain example.org "$TMP/fresh" >/dev/null &&
	awk -F"\t" "\$1 != \"instance\" || (\$2 != \"prefix\" && \$2 != \"domain\")" "$TMP/keys" |
	while IFS="	" read -r group key type lo hi def; do
		[ "$def" = "\"\"" ] && def=
		v=$(awk -v g="[$group]" -v k="$key" "
			/^\[/ { ing = (\$0 == g) }
			ing && \$1 == k && \$2 == \"=\" { sub(/^[^=]*= ?/, \"\"); print; exit }" "$TMP/fresh/vulnid.conf")
		[ "$v" = "$def" ] || { echo "[$group] $key: \"$v\", table \"$def\""; exit 1; }
	done
'

test_expect_success 'a value out of the table range is refused by name' '
	make_instance conf &&
	cp "$CONF" "$TMP/conf.orig" &&
	set_conf lmtpd max_recipients 0 &&
	rc=0 && "$VULNID" -c "$CONF" list >/dev/null 2>"$TMP/err" || rc=$? &&
	cp "$TMP/conf.orig" "$CONF" &&
	expect_eq 78 "$rc" "exit" &&
	expect_match "\[lmtpd\] max_recipients must be a whole number from 1 to 10000, not .0." "$TMP/err"
'

# ---- commands ---------------------------------------------------------------------

help_commands() {
	"$VULNID" --help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }' | sort
}

test_expect_success 'vulnid(8) documents every command of the table, and no other' '
	help_commands >"$TMP/cmds" && test "$(wc -l <"$TMP/cmds")" -gt 10 &&
	awk "/^\.SH COMMANDS/ { c = 1; next } /^\.SH/ { c = 0 } c && /^\.SS/" "$MAN8" |
		sed "s/^\.SS \"\{0,1\}//; s/\\\\-/-/g; s/\"\$//" | awk "{ print \$1 }" | sort -u >"$TMP/man8" &&
	if ! diff -u "$TMP/cmds" "$TMP/man8" >"$TMP/diff"; then
		fail "commands differ (- the table, + vulnid(8)): $(cat "$TMP/diff")"
	fi
'

test_expect_success 'the bash completion offers every command of the table, and no other' '
	bash -c "source \"$COMPLETION\"; words=(\"$VULNID\"); _vulnid_commands" | grep -vx help | sort >"$TMP/comp" &&
	if ! diff -u "$TMP/cmds" "$TMP/comp" >"$TMP/diff"; then
		fail "commands differ (- the table, + the completion): $(cat "$TMP/diff")"
	fi &&
	fallback=$(sed -n "s/.*list:-\(.*\)}\" help.*/\1/p" "$COMPLETION" | tr " " "\n" | sort) &&
	expect_eq "$(cat "$TMP/cmds")" "$fallback" "the completion list used when vulnid cannot be run"
'

test_expect_success 'only commands flagged for JSON take --json' '
	for c in $(cat "$TMP/cmds"); do
		sub=; [ "$c" = vendor ] && sub=list
		"$VULNID" "$c" $sub --help >"$TMP/h" 2>&1
		case $c in
		show | list | queue | quarantine | vendor | keys) expect_match "^  --json" "$TMP/h" ;;
		*) expect_no_match "^  --json" "$TMP/h" ;;
		esac || fail "$c --help: $(cat "$TMP/h")"
	done
'

test_done
