#!/bin/bash
# T684-tlog-proofs: vulnid prove --out DIR writes one C2SP tlog-proof per
# file, which a generic tlog-proof parser (Python, from the C2SP text) and
# Go's signed-note parser read; printed together, proofs are an empty line
# apart; verify-feed --proof reads both, and the old form too.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
export_instance inst
robot_key "$TMP/robot.asc"

request "$TMP/r1.eml" alice@example.net "Heap overflow" <<'MAIL'
Vendor: Foo

Details.
MAIL
dbtool add "TEST-$Y-0001" vendor-response vendor security@foo.example '[["Status","confirmed"]]' "Yes." >/dev/null
request "$TMP/r2.eml" bob@example.net "Other" </dev/null
dbtool add "TEST-$Y-0001" addition creator alice@example.net '[]' "More." >/dev/null
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
VK="$TMP/feed/log/log.vkey"

# generic_proof FILE: a tlog-proof parser written from c2sp.org/tlog-proof
# and c2sp.org/signed-note alone: exactly one proof, a note whose every
# signature line is "— NAME BASE64".
generic_proof() {
	"$PYTHON" - "$1" <<-"PY"
	import base64, re, sys
	t = open(sys.argv[1], encoding="utf-8").read()
	assert t.endswith("\n"), "no final newline"
	lines = t[:-1].split("\n")
	assert lines.pop(0) == "c2sp.org/tlog-proof@v1", "header"
	if lines[0].startswith("extra "):
	    base64.b64decode(lines.pop(0)[6:], validate=True)
	assert re.fullmatch(r"index (0|[1-9][0-9]*)", lines.pop(0)), "index"
	while lines[0] != "":
	    assert len(base64.b64decode(lines.pop(0), validate=True)) == 32, "proof hash"
	lines.pop(0)
	text = []
	while lines[0] != "":
	    text.append(lines.pop(0))
	lines.pop(0)
	assert len(text) >= 3 and lines, "checkpoint"
	for l in lines:
	    assert re.fullmatch(r"\u2014 [^ +]+ [A-Za-z0-9+/]+=*", l), "not a signature line: " + l[:40]
	print("ok", text[0], text[1])
	PY
}

test_expect_success 'prove --out: one tlog-proof per file, each read by a generic parser and by Go' '
	"$VULNID" prove "$TMP/feed" "TEST-$Y-0001" --out "$TMP/proofs" >"$TMP/names" &&
	expect_eq 3 "$(wc -l <"$TMP/names")" &&
	expect_eq 3 "$(ls "$TMP/proofs" | grep -c "^TEST-$Y-0001\.[0-9]*\.tlog-proof$")" &&
	for f in $(cat "$TMP/names"); do
		test -f "$f" && generic_proof "$f" >"$TMP/g.out" && expect_match "^ok .*/log 4$" "$TMP/g.out" &&
		"$VULNID" verify-feed --proof "$f" --log-key "$VK" >/dev/null 2>&1 || exit 1
	done &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$VK")" -proofs "$TMP/proofs" >"$TMP/go.out" 2>&1 &&
	expect_match "ok vulnid proofs 3" "$TMP/go.out"
'

test_expect_success 'printed together, proofs are an empty line apart; verify-feed and Go read them' '
	"$VULNID" prove "$TMP/feed" "TEST-$Y-0001" >"$TMP/all" &&
	expect_eq 3 "$(grep -c "^c2sp.org/tlog-proof@v1$" "$TMP/all")" &&
	expect_eq 2 "$(grep -B1 "^c2sp.org/tlog-proof@v1$" "$TMP/all" | grep -c "^$")" &&
	cat $(cat "$TMP/names") | cmp - <(sed "/^\$/{N;/\nc2sp.org/s/^\n//;}" "$TMP/all") &&
	"$VULNID" verify-feed --proof "$TMP/all" --log-key "$VK" >"$TMP/out" 2>"$TMP/err" &&
	expect_eq 3 "$(grep -c "\"entry\":\"TEST-$Y-0001\"" "$TMP/out")" &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$VK")" -proofs "$TMP/all" >"$TMP/go.out" 2>&1 &&
	expect_match "ok vulnid proofs 3" "$TMP/go.out"
'

test_expect_success 'proofs one right after the other (the earlier form) are still read' '
	cat $(cat "$TMP/names") >"$TMP/joined" &&
	"$VULNID" verify-feed --proof "$TMP/joined" --log-key "$VK" >"$TMP/out" 2>/dev/null &&
	expect_eq 3 "$(grep -c "\"entry\":\"TEST-$Y-0001\"" "$TMP/out")" &&
	! generic_proof "$TMP/joined" >/dev/null 2>&1
'

test_expect_success 'a proof file with a changed line is refused by verify-feed and Go' '
	f=$(head -n 1 "$TMP/names") && mkdir -p "$TMP/bad" &&
	"$PYTHON" - "$f" "$TMP/bad/x.tlog-proof" <<-"PY" &&
	import base64, sys
	t = open(sys.argv[1]).read().split("\n")
	line = base64.b64decode(t[1][6:]).replace(b"Details", b"Detail!", 1)
	t[1] = "extra " + base64.b64encode(line).decode()
	open(sys.argv[2], "w").write("\n".join(t))
	PY
	rc=0; "$VULNID" verify-feed --proof "$TMP/bad/x.tlog-proof" --log-key "$VK" >/dev/null 2>&1 || rc=$? &&
	expect_eq 65 "$rc" &&
	! "$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$VK")" -proofs "$TMP/bad" >/dev/null 2>&1
'

test_expect_success 'the acknowledgement'\''s own instructions prove an entry and check the log key' '
	ack=$(sent_to alice@example.net) &&
	mail_body "$ack" >"$TMP/ack.txt" &&
	grep -E "^ +vulnid (prove|verify-feed) " "$TMP/ack.txt" >"$TMP/steps" &&
	expect_eq 2 "$(wc -l <"$TMP/steps")" &&
	(cd "$TMP" && sed -e "s|FEED-DIR|$TMP/feed|g" -e "s|ID|TEST-$Y-0001|g" -e "s|^ *vulnid |\"\$VULNID\" |" "$TMP/steps" |
		VULNID="$VULNID" bash -e) >"$TMP/steps.out" 2>&1 &&
	expect_match "TEST-$Y-0001" "$TMP/steps.out" &&
	for f in $(grep -Eo "FEED-DIR/[^ )]+" "$TMP/ack.txt" | sort -u); do
		test -f "$TMP/feed/${f#FEED-DIR/}" || fail "the ack names $f, which the feed does not have"
	done &&
	gpgv --keyring "$INST/gnupg/pubring.kbx" "$TMP/feed/log/log.vkey.asc" "$TMP/feed/log/log.vkey" 2>/dev/null
'

test_expect_success 'prove --out: usage' '
	rc=0; "$VULNID" prove "$TMP/feed" --consistency 3 --out "$TMP/x" 2>/dev/null || rc=$? &&
	expect_eq 64 "$rc"
'

test_done
