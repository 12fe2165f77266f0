#!/bin/bash
# T610-feed-embargo: an embargoed entry is a stub with its commitment; after
# the release its records follow and verify against the commitment, even
# against a robot that re-signs a changed feed
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
robot_key "$TMP/robot.asc"
E="TEST-$Y-0100"
FIELDS='[["Vendor","Secret Corp"],["Product","Vault"],["Embargo","2099-01-31"]]'
BODY='The vault opens with the wrong key.'

request "$TMP/r1.eml" alice@example.net "A public one" <<'MAIL'
Vendor: Open Corp

Public from the start.
MAIL
digest=$(dbtool sealed "$E" "Vault bypass" "$FIELDS" "$BODY" 2099-01-31)

test_expect_success 'an embargoed entry is exported as a stub with its commitment' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null &&
	expect_eq 2 "$(wc -l <"$TMP/feed/$Y.jsonl")" &&
	tail -n 1 "$TMP/feed/$Y.jsonl" >"$TMP/stub" &&
	expect_eq stub "$(json_get "j[\"type\"]" <"$TMP/stub")" &&
	expect_eq "$digest" "$(json_get "j[\"commitment\"]" <"$TMP/stub")" &&
	expect_eq "$digest" "$(json_get "j[\"digest\"]" <"$TMP/stub")" &&
	expect_eq 2099-01-31 "$(json_get "j[\"embargo\"]" <"$TMP/stub")" &&
	expect_no_match "Secret Corp|Vault|wrong key|BEGIN PGP" "$TMP/feed/$Y.jsonl" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/out" &&
	expect_match "2 entries \\(1 under embargo, 0 released" "$TMP/out"
'

dbtool add "$E" addition creator sealed@example.net '[["Version","3.1"]]' "Also 3.1, still secret." >/dev/null
cp -r "$TMP/feed" "$TMP/before-addition"

test_expect_success 'records written during the embargo stay out of the feed' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match " 0 new lines" "$TMP/out" &&
	expect_no_match "still secret" "$TMP/feed/$Y.jsonl"
'

cp -r "$TMP/feed" "$TMP/before-release"
dbtool release "$E" "Vault bypass" "$FIELDS" "$BODY" >/dev/null

test_expect_success 'after the release the sealed record, the addition and the release follow' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match " 3 new lines" "$TMP/out" &&
	tail -n 3 "$TMP/feed/$Y.jsonl" >"$TMP/rel" &&
	expect_eq "1 record $digest" "$(sed -n 1p "$TMP/rel" | json_get "\"%d %s %s\" % (j[\"seq\"], j[\"type\"], j[\"sha256\"])")" &&
	expect_eq "$BODY" "$(sed -n 1p "$TMP/rel" | json_get "j[\"body\"]")" &&
	expect_eq "2 addition" "$(sed -n 2p "$TMP/rel" | json_get "\"%d %s\" % (j[\"seq\"], j[\"kind\"])")" &&
	expect_eq "3 release 1" "$(sed -n 3p "$TMP/rel" | json_get "\"%d %s %s\" % (j[\"seq\"], j[\"kind\"], j[\"opens\"])")" &&
	expect_eq 1 "$(sort -u <(json_get "j[\"pos\"]" <<<"$(sed -n 1p "$TMP/rel")") \
		<(json_get "j[\"pos\"]" <<<"$(sed -n 3p "$TMP/rel")") | wc -l)"
'

test_expect_success 'the released feed verifies, and the records match the commitment' '
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" --previous "$TMP/before-release/HEAD.json" >"$TMP/out" &&
	expect_match "0 under embargo, 1 released and matching their commitments" "$TMP/out" &&
	doc_verifier "$TMP/docverify.py" && $PYTHON "$TMP/docverify.py" "$TMP/feed" >/dev/null
'

test_expect_success 'exported step by step or at once, the feed is the same' '
	"$VULNID" -c "$CONF" export feed "$TMP/full" >/dev/null &&
	cmp "$TMP/feed/$Y.jsonl" "$TMP/full/$Y.jsonl" &&
	"$VULNID" -c "$CONF" export feed "$TMP/before-addition" >/dev/null &&
	cmp "$TMP/feed/$Y.jsonl" "$TMP/before-addition/$Y.jsonl"
'

fresh() { rm -rf "$TMP/t" && cp -r "$TMP/feed" "$TMP/t"; }
rel=$(grep -n '"kind":"release"' "$TMP/feed/$Y.jsonl" | cut -d: -f1)
sealed=$((rel - 2))

test_expect_success 'a robot that discloses other content than it committed to is caught' '
	fresh && forge "$TMP/t" "$Y" "$sealed" "o[\"body\"] = \"Nothing serious.\"" rehash "$INST/gnupg" &&
	verify_fails "$TMP/t" "$Y.jsonl: line $sealed: record $E/1 does not match the commitment published for it" &&
	! $PYTHON "$TMP/docverify.py" "$TMP/t" 2>/dev/null
'

test_expect_success 'a release whose content differs from the commitment is caught' '
	fresh && forge "$TMP/t" "$Y" "$rel" "o[\"fields\"] = [[\"Vendor\",\"Someone Else\"]]" rehash "$INST/gnupg" &&
	verify_fails "$TMP/t" "$Y.jsonl: line $rel: release $E/3: the disclosed content does not match the commitment of record 1"
'

test_expect_success 'a stub whose commitment is not the digest, or a repeated stub, is caught' '
	fresh && forge "$TMP/t" "$Y" 2 "o[\"commitment\"] = \"0\" * 64" keep "$INST/gnupg" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 2: stub $E/1: the commitment is not the entry.s digest" &&
	rm -rf "$TMP/t" && cp -r "$TMP/before-release" "$TMP/t" &&
	$PYTHON - "$TMP/t/$Y.jsonl" <<-"PY" &&
	import json, sys
	p = sys.argv[1]
	lines = open(p).read().splitlines(True)
	o = json.loads(lines[1])
	lines.append(json.dumps(o, separators=(",", ":")) + "\n")
	open(p, "w").writelines(lines)
	PY
	forge "$TMP/t" "$Y" 1 "pass" keep "$INST/gnupg" &&
	verify_fails "$TMP/t" "$Y.jsonl: line 3: is out of order"
'

test_expect_success 'records published while the entry is still under embargo are caught' '
	fresh && $PYTHON - "$TMP/t/$Y.jsonl" "$sealed" <<-"PY" &&
	import sys
	p, k = sys.argv[1], int(sys.argv[2])
	lines = open(p).read().splitlines(True)
	del lines[k - 1]	# the disclosed record goes, the addition stays
	open(p, "w").writelines(lines)
	PY
	forge "$TMP/t" "$Y" 1 "pass" keep "$INST/gnupg" &&
	verify_fails "$TMP/t" "record $E/2 published while the entry is under embargo"
'

test_expect_success 'an embargo made by mail, with a sealed addition, released by vulnid tick' '
	export_instance real && robot_key "$TMP/real.asc" &&
	request "$TMP/e1.eml" alice@example.net "Secret bug" <<-EOF &&
	Vendor: Foo
	Embargo: 2099-01-01

	secret details
	EOF
	id=$(sql "SELECT id FROM entries") &&
	write_mail "$TMP/e2.eml" "From: alice@example.net" "To: request+$id@example.org" "Subject: more" <<-EOF &&
	Version: 1.2

	more secret details
	EOF
	deliver_ok "$TMP/e2.eml" -f alice@example.net -r "request+$id@example.org" &&
	"$VULNID" -c "$CONF" export feed "$TMP/real-feed" >/dev/null &&
	expect_eq 2 "$(wc -l <"$TMP/real-feed/$Y.jsonl")" &&
	expect_no_match "secret details" "$TMP/real-feed/$Y.jsonl" &&
	# every sealed record has its public commitment while it is sealed
	expect_eq "stub 1 $(sql "SELECT sha256 FROM records WHERE entry = '\''$id'\'' AND seq = 1")
stub 2 $(sql "SELECT sha256 FROM records WHERE entry = '\''$id'\'' AND seq = 2")" \
		"$($PYTHON -c "import json,sys
for l in open(sys.argv[1]): o = json.loads(l); print(o[\"type\"], o[\"seq\"], o[\"commitment\"])" "$TMP/real-feed/$Y.jsonl")" &&
	$PYTHON "$TMP/docverify.py" "$TMP/real-feed" >/dev/null &&
	VULNID_TEST_NOW=2099-01-02T00:00:00Z "$VULNID" -c "$CONF" tick >/dev/null &&
	"$VULNID" -c "$CONF" export feed "$TMP/real-feed" >/dev/null &&
	"$VULNID" verify-feed "$TMP/real-feed" --key "$TMP/real.asc" >"$TMP/out" &&
	expect_match "0 under embargo, 1 released and matching" "$TMP/out" &&
	expect_match "more secret details" "$TMP/real-feed/$Y.jsonl" &&
	$PYTHON "$TMP/docverify.py" "$TMP/real-feed" >/dev/null
'

test_expect_success 'the robot never publishes a release that does not match its commitment' '
	export_instance bad && robot_key "$TMP/bad.asc" &&
	dbtool sealed "TEST-$Y-0200" "Vault bypass" "$FIELDS" "$BODY" 2099-01-31 >/dev/null &&
	"$VULNID" -c "$CONF" export feed "$TMP/bad-feed" >/dev/null &&
	cp "$TMP/bad-feed/$Y.jsonl" "$TMP/bad-before" &&
	dbtool release "TEST-$Y-0200" "Vault bypass" "$FIELDS" "Something else entirely." >/dev/null &&
	rc=0; "$VULNID" -c "$CONF" export feed "$TMP/bad-feed" 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "TEST-$Y-0200/1: its stored sha256 does not match" "$TMP/err" &&
	cmp "$TMP/bad-before" "$TMP/bad-feed/$Y.jsonl"
'

test_done
