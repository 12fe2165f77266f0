#!/bin/bash
# T683-tlog-spam: marking an entry as spam, or withdrawing it, adds a line
# and never removes one: a feed exported afresh afterwards is byte for byte
# the one kept up to date, and its log a continuation of every earlier
# checkpoint (Go's CheckTree over the tiles); the public views still hide
# a spam entry.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
export_instance inst
robot_key "$TMP/robot.asc"

request "$TMP/r1.eml" alice@example.net "A real report" <<'MAIL'
Vendor: Foo

A real problem.
MAIL
request "$TMP/r2.eml" spammer@example.net "Cheap watches" <<'MAIL'
SPAMBODY: buy now.
MAIL
request "$TMP/r3.eml" carol@example.net "Reported twice" </dev/null
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
cp "$TMP/feed/log/checkpoint" "$TMP/cp.1"
VK=$(cat "$TMP/feed/log/log.vkey")

dbtool add "TEST-$Y-0002" command moderator "" '[["Spam","yes"]]' "" >/dev/null
dbtool add "TEST-$Y-0002" addition creator spammer@example.net '[]' "SPAMLATER: more." >/dev/null
dbtool add "TEST-$Y-0003" command creator carol@example.net '[["Withdrawn","a duplicate"]]' "" >/dev/null
# An embargoed entry marked as spam: its stub stays, nothing follows.
dbtool sealed "TEST-$Y-0100" "Sealed" '[]' "SEALEDBODY" yes >/dev/null
dbtool add "TEST-$Y-0100" command moderator "" '[["Spam","yes"]]' "" >/dev/null
dbtool release "TEST-$Y-0100" "Sealed" '[]' "SEALEDBODY" >/dev/null

test_expect_success 'the marks add lines: the spam mark, the withdrawal, the stub; nothing after the spam mark' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match " 3 new lines" "$TMP/out" &&
	tail -n 3 "$TMP/feed/$Y.jsonl" >"$TMP/last3" &&
	"$PYTHON" -c "import json, sys
for l in open(sys.argv[1]): o = json.loads(l); print(o[\"entry\"], o[\"type\"], o.get(\"fields\"))" \
		"$TMP/last3" >"$TMP/last" &&
	expect_match "TEST-$Y-0002.*record.*Spam.*yes" "$TMP/last" &&
	expect_match "TEST-$Y-0003.*record.*Withdrawn" "$TMP/last" &&
	expect_match "TEST-$Y-0100.*stub" "$TMP/last" &&
	expect_no_match "SPAMLATER|SEALEDBODY" "$TMP/feed/$Y.jsonl" &&
	expect_match "SPAMBODY" "$TMP/feed/$Y.jsonl" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" --previous-checkpoint "$TMP/cp.1" >"$TMP/out" &&
	expect_match "consistent with the previous checkpoint of 3 entries" "$TMP/out"
'

test_expect_success 'a feed exported afresh is the one kept up to date, byte for byte' '
	"$VULNID" -c "$CONF" export feed "$TMP/fresh" >/dev/null &&
	cmp "$TMP/feed/$Y.jsonl" "$TMP/fresh/$Y.jsonl" &&
	cmp "$TMP/feed/log/checkpoint" "$TMP/fresh/log/checkpoint" &&
	cmp "$TMP/feed/log/tile/0/000.p/6" "$TMP/fresh/log/tile/0/000.p/6" &&
	cmp "$TMP/feed/log/tile/entries/000.p/6" "$TMP/fresh/log/tile/entries/000.p/6" &&
	"$VULNID" verify-feed "$TMP/fresh" --key "$TMP/robot.asc" --previous-checkpoint "$TMP/cp.1" >/dev/null
'

test_expect_success 'Go: the fresh log is a continuation of the checkpoint before the marks (CheckTree)' '
	"$GOCHECK" -feed "$TMP/fresh" -vkey "$VK" -old "$TMP/cp.1" >"$TMP/go.out" 2>&1 &&
	expect_match "ok consistency 3 -> 6" "$TMP/go.out" &&
	"$VULNID" prove "$TMP/fresh" --consistency 3 >"$TMP/cons" &&
	"$GOCHECK" -feed "$TMP/fresh" -vkey "$VK" -old "$TMP/cp.1" -consistency "$TMP/cons" >"$TMP/go.out" 2>&1 &&
	expect_match "ok vulnid consistency proof" "$TMP/go.out"
'

test_expect_success 'the public views still hide the spam entry' '
	"$VULNID" -c "$CONF" export osv "$TMP/osv" >/dev/null &&
	test -f "$TMP/osv/x_TEST-$Y-0001.json" && test ! -e "$TMP/osv/x_TEST-$Y-0002.json" &&
	! grep -rq "SPAMBODY" "$TMP/osv"
'

test_expect_success 'later exports stay continuations: the spam entry gets no more lines' '
	dbtool add "TEST-$Y-0002" addition creator spammer@example.net "[]" "SPAMLATEST" >/dev/null &&
	request "$TMP/r4.eml" dave@example.net "Fourth" </dev/null &&
	cp "$TMP/feed/log/checkpoint" "$TMP/cp.2" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match " 1 new lines" "$TMP/out" && expect_no_match "SPAMLATEST" "$TMP/feed/$Y.jsonl" &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$VK" -old "$TMP/cp.2" >"$TMP/go.out" 2>&1 &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$VK" -old "$TMP/cp.1" >"$TMP/go.out" 2>&1
'

test_done
