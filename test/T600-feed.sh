#!/bin/bash
# T600-feed: the public feed: export, incremental export, verification, and
# every kind of tampering named by verify-feed
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
robot_key "$TMP/robot.asc"

request "$TMP/r1.eml" alice@example.net "Heap overflow in parse()" <<'MAIL'
Vendor: Foo Corp
Product: Foo Server
Version: 2.4.1

A long Host header overflows a buffer.
MAIL
request "$TMP/r2.eml" anon@example.net "Anonymous report" <<'MAIL'
Vendor: Bar Inc
Anonymous: yes

Something about Bar, with "quotes", a tab	and a back\slash.
MAIL
request "$TMP/r3.eml" carol@example.net "Reserved, nothing said" </dev/null
dbtool add "TEST-$Y-0001" vendor-response vendor security@foo.example '[["Status","confirmed"]]' \
	"We confirm the overflow." >/dev/null
dbtool add "TEST-$Y-0001" addition creator alice@example.net '[["Reference","https://example.net/adv"]]' \
	"More details." >/dev/null

test_expect_success 'export writes one line per record, HEAD.json, its signature and the key' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match "5 new lines, 1 years" "$TMP/out" &&
	test -f "$TMP/feed/$Y.jsonl" && test -f "$TMP/feed/HEAD.json" &&
	test -f "$TMP/feed/HEAD.json.asc" && test -f "$TMP/feed/robot.asc" &&
	expect_eq 5 "$(wc -l <"$TMP/feed/$Y.jsonl")" &&
	expect_eq "$(sql "SELECT count(*) FROM records")" "$(wc -l <"$TMP/feed/$Y.jsonl")"
'

test_expect_success 'the feed verifies with the robot key, without an instance' '
	(cd / && env -u VULNID_CONF "$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc") >"$TMP/out" &&
	expect_match "feed verified: 5 lines in 1 years, 3 entries" "$TMP/out"
'

test_expect_success 'lines carry what the canonical record needs; anonymous authors are null' '
	head -n 1 "$TMP/feed/$Y.jsonl" | json_get "j[\"entry\"], j[\"seq\"], j[\"n\"], j[\"prev\"]" >"$TMP/out" &&
	expect_match "TEST-$Y-0001.*1.*1.*0000000000" "$TMP/out" &&
	expect_eq "$(sql "SELECT sha256 FROM records WHERE entry = '\''TEST-$Y-0001'\'' AND seq = 1")" \
		"$(head -n 1 "$TMP/feed/$Y.jsonl" | json_get "j[\"sha256\"]")" &&
	expect_eq None "$(sed -n 2p "$TMP/feed/$Y.jsonl" | json_get "j[\"author\"]")" &&
	expect_no_match "anon@example.net" "$TMP/feed/$Y.jsonl" &&
	expect_eq alice@example.net "$(sed -n 1p "$TMP/feed/$Y.jsonl" | json_get "j[\"author\"]")" &&
	expect_eq vendor "$(sed -n 4p "$TMP/feed/$Y.jsonl" | json_get "j[\"role\"]")"
'

test_expect_success 'HEAD.json names the last hash, the robot and the cursor' '
	fpr=$(gpg --homedir "$INST/gnupg" --batch --with-colons --list-secret-keys | awk -F: "/^fpr/ { print \$10; exit }") &&
	expect_eq "$fpr" "$(json_get "j[\"robot\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq "$(tail -n 1 "$TMP/feed/$Y.jsonl" | json_get "j[\"hash\"]")" \
		"$(json_get "j[\"years\"][0][\"hash\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq "$(sql "SELECT max(id) FROM records")" "$(json_get "j[\"pos\"]" <"$TMP/feed/HEAD.json")"
'

test_expect_success 'gpgv alone checks the signature (the man page recipe)' '
	gpg --dearmor <"$TMP/robot.asc" >"$TMP/robot.gpg" &&
	gpgv --keyring "$TMP/robot.gpg" "$TMP/feed/HEAD.json.asc" "$TMP/feed/HEAD.json" 2>"$TMP/out"
'

test_expect_success 'the Python verifier of vulnid-feed(5) accepts the feed' '
	doc_verifier "$TMP/docverify.py" &&
	$PYTHON "$TMP/docverify.py" "$TMP/feed" >"$TMP/out" && expect_match "verified: 5 lines" "$TMP/out"
'

cp -r "$TMP/feed" "$TMP/feed.1"
cp -r "$TMP/feed" "$TMP/inc"

test_expect_success 're-running the export with nothing new changes nothing' '
	"$VULNID" -c "$CONF" export feed "$TMP/inc" >"$TMP/out" &&
	expect_match " 0 new lines" "$TMP/out" &&
	diff -r "$TMP/feed.1" "$TMP/inc"
'

request "$TMP/r4.eml" dave@example.net "Another one" <<'MAIL'
Vendor: Foo Corp

Second bug.
MAIL
dbtool add "TEST-$Y-0002" addition creator anon@example.net '[["Version","1.0"]]' "Later words." >/dev/null

test_expect_success 'an incremental export appends, and equals a full export' '
	"$VULNID" -c "$CONF" export feed "$TMP/inc" >"$TMP/out" &&
	expect_match " 2 new lines" "$TMP/out" &&
	cmp "$TMP/feed.1/$Y.jsonl" <(head -n 5 "$TMP/inc/$Y.jsonl") &&
	"$VULNID" -c "$CONF" export feed "$TMP/full" >/dev/null &&
	cmp "$TMP/inc/$Y.jsonl" "$TMP/full/$Y.jsonl" &&
	expect_eq "$(json_get "j[\"years\"], j[\"pos\"]" <"$TMP/inc/HEAD.json")" \
		"$(json_get "j[\"years\"], j[\"pos\"]" <"$TMP/full/HEAD.json")" &&
	"$VULNID" verify-feed "$TMP/inc" --key "$TMP/robot.asc" >/dev/null &&
	"$VULNID" verify-feed "$TMP/full" --key "$TMP/robot.asc" >/dev/null
'

test_expect_success '--previous accepts a feed that extends the one verified before' '
	"$VULNID" verify-feed "$TMP/inc" --key "$TMP/robot.asc" --previous "$TMP/feed.1/HEAD.json" >/dev/null
'

test_expect_success '--since prints only the verified lines after the cursor' '
	pos=$(json_get "j[\"pos\"]" <"$TMP/feed.1/HEAD.json") &&
	"$VULNID" verify-feed "$TMP/inc" --key "$TMP/robot.asc" --since "$pos" >"$TMP/new" 2>"$TMP/err" &&
	cmp "$TMP/new" <(tail -n 2 "$TMP/inc/$Y.jsonl") &&
	expect_match "feed verified" "$TMP/err" &&
	"$VULNID" verify-feed "$TMP/inc" --key "$TMP/robot.asc" --since 0 >"$TMP/all" 2>/dev/null &&
	cmp "$TMP/all" "$TMP/inc/$Y.jsonl"
'

test_expect_success 'a torn last line of a killed export is cut and written again' '
	cp -r "$TMP/inc" "$TMP/torn" &&
	head -c -40 "$TMP/inc/$Y.jsonl" >"$TMP/torn/$Y.jsonl" &&
	"$VULNID" -c "$CONF" export feed "$TMP/torn" >/dev/null &&
	cmp "$TMP/inc/$Y.jsonl" "$TMP/torn/$Y.jsonl"
'

test_expect_success 'export refuses a directory holding another feed' '
	cp -r "$TMP/inc" "$TMP/other" &&
	forge "$TMP/other" "$Y" 7 "o[\"body\"] = \"x\"" rehash &&
	rc=0; "$VULNID" -c "$CONF" export feed "$TMP/other" 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "not this instance.s feed" "$TMP/err"
'

# --- tampering: each on a fresh copy of the good feed -----------------------
good="$TMP/inc"
n=$(wc -l <"$good/$Y.jsonl")
fresh() { rm -rf "$TMP/t" && cp -r "$good" "$TMP/t"; }

test_expect_success 'tamper: one byte altered' '
	fresh && sed -i "2s/Bar Inc/Bar Ind/" "$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 2: hash does not match its content" &&
	! $PYTHON "$TMP/docverify.py" "$TMP/t" 2>/dev/null
'

test_expect_success 'tamper: a line dropped' '
	fresh && sed -i "2d" "$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 2: does not follow line 1" &&
	! $PYTHON "$TMP/docverify.py" "$TMP/t" 2>/dev/null
'

test_expect_success 'tamper: two lines swapped' '
	fresh && { sed -n 1p "$good/$Y.jsonl"; sed -n 3p "$good/$Y.jsonl"; sed -n 2p "$good/$Y.jsonl";
		   sed -n "4,\$p" "$good/$Y.jsonl"; } >"$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 2: does not follow line 1"
'

test_expect_success 'tamper: the year truncated' '
	fresh && head -n $((n - 2)) "$good/$Y.jsonl" >"$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line $((n - 1)): missing: the file ends after line $((n - 2))" &&
	! $PYTHON "$TMP/docverify.py" "$TMP/t" 2>/dev/null
'

test_expect_success 'tamper: the last line cut in the middle' '
	fresh && head -c -30 "$good/$Y.jsonl" >"$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line $n: truncated"
'

test_expect_success 'tamper: a year file removed' '
	fresh && rm "$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 1: missing"
'

test_expect_success 'tamper: HEAD.json forged' '
	fresh && sed -i "s/\"pos\":[0-9]*/\"pos\":99/" "$TMP/t/HEAD.json" &&
	verify_fails "$TMP/t" "HEAD.json: the signature in HEAD.json.asc does not verify"
'

test_expect_success 'tamper: the signature swapped for an older one' '
	fresh && cp "$TMP/feed.1/HEAD.json.asc" "$TMP/t/HEAD.json.asc" &&
	verify_fails "$TMP/t" "HEAD.json: the signature in HEAD.json.asc does not verify"
'

test_expect_success 'tamper: an old HEAD with its own signature (rollback) is caught by --previous' '
	fresh && cp "$TMP/feed.1/HEAD.json" "$TMP/feed.1/HEAD.json.asc" "$TMP/t/" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 6: pos 6 is beyond HEAD.json" &&
	rm -rf "$TMP/t" && cp -r "$TMP/feed.1" "$TMP/t" &&
	verify_fails "$TMP/t" "is older than the previous HEAD" --previous "$good/HEAD.json"
'

test_expect_success 'tamper: content altered, hashes and chain recomputed, HEAD unsigned' '
	fresh && forge "$TMP/t" "$Y" 1 "o[\"body\"] = \"nothing to see\"" rehash &&
	verify_fails "$TMP/t" "HEAD.json: the signature in HEAD.json.asc does not verify"
'

test_expect_success 'tamper: record content altered behind a kept sha256, re-signed' '
	fresh && forge "$TMP/t" "$Y" 2 "o[\"body\"] = \"different\"" keep "$INST/gnupg" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 2: record TEST-$Y-0002/1: sha256 does not match" &&
	! $PYTHON "$TMP/docverify.py" "$TMP/t" 2>/dev/null
'

test_expect_success 'tamper: history rewritten and re-signed by the robot: --previous notices' '
	fresh && forge "$TMP/t" "$Y" 4 "o[\"body\"] = \"we never confirmed\"" rehash "$INST/gnupg" &&
	verify_fails "$TMP/t" "tile/0/000.p/7.* differs from the tile the entries make" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 5: differs from the previously verified feed" \
		--previous "$TMP/feed.1/HEAD.json"
'

GNUPG_HOMES="$GNUPG_HOMES $TMP/other-gpg"
test_expect_success 'tamper: signed by another key' '
	fresh && mkdir -m 700 "$TMP/other-gpg" &&
	gpg --homedir "$TMP/other-gpg" --batch --passphrase "" --quick-gen-key "evil <e@example.net>" ed25519 sign never 2>/dev/null &&
	gpg --homedir "$TMP/other-gpg" --batch --yes --armor --detach-sign -o "$TMP/t/HEAD.json.asc" "$TMP/t/HEAD.json" 2>/dev/null &&
	verify_fails "$TMP/t" "does not verify with the given key"
'

test_expect_success 'tamper: an extra year file not covered by HEAD' '
	fresh && cp "$good/$Y.jsonl" "$TMP/t/1999.jsonl" &&
	verify_fails "$TMP/t" "1999.jsonl: line 1: not covered by HEAD.json"
'

test_expect_success 'tamper: a line reformatted (same JSON, other bytes) is not canonical' '
	fresh && $PYTHON - "$TMP/t/$Y.jsonl" <<-"PY" &&
	import sys
	p = sys.argv[1]
	lines = open(p, "rb").read().split(b"\n")
	lines[0] = lines[0].replace(b"\"seq\":1,", b"\"seq\": 1,", 1)
	open(p, "wb").write(b"\n".join(lines))
	PY
	verify_fails "$TMP/t" "$Y.jsonl: line 1: hash does not match"
'

test_expect_success 'hostile: an overlong line and deep nesting are refused by limits' '
	fresh && verify_fails "$TMP/t" "line 1: longer than 100 bytes" --max-line-length 100 &&
	fresh && { printf "%s" "{\"feed\":\"vulnid-feed-1\",\"x\":"; head -c 100000 /dev/zero | tr "\\0" "["; echo; } >"$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "line 1: has no hash at its end" &&
	fresh && body=$(printf "%0.s[" $(seq 40)) &&
	line="{\"a\":$body,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"" &&
	h=$(printf "%s" "$line" | sha256sum | cut -d" " -f1) &&
	printf "%s,\"hash\":\"%s\"}\n" "$line" "$h" >"$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "line 1: nests deeper than 16 levels"
'

test_expect_success 'hostile: a symlink instead of a year file is refused' '
	fresh && rm "$TMP/t/$Y.jsonl" && ln -s /dev/zero "$TMP/t/$Y.jsonl" &&
	verify_fails "$TMP/t" "$Y.jsonl: cannot read"
'

test_expect_success 'verify-feed: usage errors and an unreadable key' '
	rc=0; "$VULNID" verify-feed "$good" 2>/dev/null || rc=$?
	expect_eq 64 "$rc" &&
	rc=0; "$VULNID" verify-feed "$good" --key "$TMP/nonexistent" 2>/dev/null || rc=$?
	expect_eq 66 "$rc"
'

dbtool add "TEST-$Y-0002" command moderator "" '[["Spam","yes"]]' "" >/dev/null
dbtool add "TEST-$Y-0002" addition creator dave@example.net '[]' "After the spam mark." >/dev/null

test_expect_success 'an entry marked as spam gets the line of that mark, then nothing more' '
	"$VULNID" -c "$CONF" export feed "$TMP/inc" >"$TMP/out" &&
	expect_match " 1 new lines" "$TMP/out" &&
	expect_eq "[[\"Spam\", \"yes\"]]" "$(tail -n 1 "$TMP/inc/$Y.jsonl" | json_get "j[\"fields\"]")" &&
	expect_no_match "After the spam mark" "$TMP/inc/$Y.jsonl" &&
	"$VULNID" verify-feed "$TMP/inc" --key "$TMP/robot.asc" --previous "$good/HEAD.json" >/dev/null
'

test_done
