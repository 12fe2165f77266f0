#!/bin/bash
# T682-tlog-upgrade: a feed whose log is of version 1 (its entries the lines
# themselves, in DIR: written here by Go's reference code, as feeds of
# earlier versions have it, without the bundle of a line over 65535 bytes)
# gets the log of DIR/log at its next export; the old log stays as it was
# and verifiable, HEAD.json names both, and a generic C2SP client reads
# every entry of the new one, the long line's too.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
export_instance inst
robot_key "$TMP/robot.asc"
FPR=$(gpg --homedir "$INST/gnupg" --batch --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')

request "$TMP/r1.eml" alice@example.net "First report" <<'MAIL'
Vendor: Foo

Something.
MAIL
dbtool add "TEST-$Y-0001" addition creator alice@example.net '[]' "$(head -c 70000 /dev/zero | tr '\0' y)" >/dev/null
request "$TMP/r2.eml" bob@example.net "Second report" </dev/null

# The feed as an earlier version left it: lines, HEAD.json naming the
# checkpoint of a log of version 1 in DIR, its key bound by the robot.
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
rm -rf "$TMP/feed/log" "$INST/log2.key"
"$GOCHECK" -genkey "example.org/vulnid/TEST/$(echo "$FPR" | cut -c1-16 | tr A-F a-f)" >"$TMP/v1.keys" ||
	fail "cannot make a key"
head -n 1 "$TMP/v1.keys" >"$INST/log.key" && chmod 600 "$INST/log.key"
sed -n 2p "$TMP/v1.keys" >"$TMP/feed/log.vkey"
gpg --homedir "$INST/gnupg" --batch --yes --armor --detach-sign -o "$TMP/feed/log.vkey.asc" "$TMP/feed/log.vkey" 2>/dev/null
"$GOCHECK" -feed "$TMP/feed" -write-v1 -skey "$(head -n 1 "$TMP/v1.keys")" >/dev/null || fail "cannot write the old log"
"$PYTHON" - "$TMP/feed" <<'PY'
import json, sys
d = sys.argv[1]
h = json.load(open(d + "/HEAD.json"))
cp = open(d + "/checkpoint").read().split("\n")
h.pop("log")
h["checkpoint"] = {"origin": cp[0], "size": int(cp[1]), "root": cp[2]}
open(d + "/HEAD.json", "w").write(json.dumps(h, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
gpg --homedir "$INST/gnupg" --batch --yes --armor --detach-sign -o "$TMP/feed/HEAD.json.asc" "$TMP/feed/HEAD.json" 2>/dev/null
cp -a "$TMP/feed" "$TMP/feed.v1"
cp "$TMP/feed/checkpoint" "$TMP/v1.cp"
V1=$(sed -n 2p "$TMP/v1.keys")

test_expect_success 'the feed of version 1 verifies; its long line has no bundle' '
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/out" &&
	expect_match "log [(]version 1[)] example.org/vulnid/TEST/[0-9a-f]{16} of 3 entries" "$TMP/out" &&
	test ! -e "$TMP/feed/tile/entries/000.p/3" &&
	"$VULNID" verify-feed "$TMP/feed" --log-key "$V1" >"$TMP/out" &&
	expect_match "0 entry bundles checked" "$TMP/out" &&
	! "$GOCHECK" -feed "$TMP/feed" -vkey "$V1" -log "$TMP/feed" -generic >"$TMP/go.out" 2>&1 &&
	expect_match "entry bundle: open .*entries/000.p/3: no such file" "$TMP/go.out"
'

test_expect_success 'the next export adds DIR/log with every line; the old log is left as it was' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match "0 new lines.*log of 3 entries, checkpoint signed" "$TMP/out" &&
	test -f "$INST/log2.key" && test -f "$TMP/feed/log/tile/entries/000.p/3" &&
	for f in checkpoint log.vkey log.vkey.asc tile/0/000.p/3; do
		cmp "$TMP/feed.v1/$f" "$TMP/feed/$f" || exit 1
	done &&
	expect_eq "$(sed -n 1p "$TMP/v1.cp")" "$(json_get "j[\"checkpoint\"][\"origin\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq "$(sed -n 1p "$TMP/feed/log/checkpoint")" "$(json_get "j[\"log\"][\"origin\"]" <"$TMP/feed/HEAD.json")" &&
	expect_match "/log$" "$TMP/feed/log/checkpoint"
'

request "$TMP/r3.eml" carol@example.net "Third report" </dev/null

test_expect_success 'both logs verify; the old one stays at its size and its checkpoints stay consistent' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match "1 new lines.*log of 4 entries, checkpoint signed" "$TMP/out" &&
	cmp "$TMP/v1.cp" "$TMP/feed/checkpoint" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/out" &&
	expect_match "feed verified: 4 lines" "$TMP/out" &&
	expect_match "log example.org/vulnid/TEST/[0-9a-f]{16}/log of 4 entries" "$TMP/out" &&
	expect_match "log [(]version 1[)] .* of 3 entries" "$TMP/out" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" --previous-checkpoint "$TMP/v1.cp" >"$TMP/out" &&
	expect_match "version 1.*consistent with the previous checkpoint of 3 entries" "$TMP/out" &&
	"$VULNID" verify-feed "$TMP/feed" --log-key "$V1" --previous-checkpoint "$TMP/v1.cp" >"$TMP/out" &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$V1" -v1 >"$TMP/go.out" 2>&1 &&
	expect_match "ok root of the entries" "$TMP/go.out"
'

test_expect_success 'a generic C2SP client reads every entry of DIR/log, the long line too, and checks every proof' '
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$TMP/feed/log/log.vkey")" -generic -records all >"$TMP/go.out" 2>&1 &&
	expect_match "ok 4 entries read from the bundles" "$TMP/go.out" &&
	expect_match "ok every entry names its line" "$TMP/go.out" &&
	expect_match "ok inclusion 4 records" "$TMP/go.out" &&
	"$VULNID" prove "$TMP/feed" "TEST-$Y-0001" --out "$TMP/proofs" >"$TMP/names" &&
	expect_eq 2 "$(wc -l <"$TMP/names")" &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$TMP/feed/log/log.vkey")" -proofs "$TMP/proofs" >"$TMP/go.out" 2>&1 &&
	expect_match "ok vulnid proofs 2" "$TMP/go.out"
'

test_expect_success 'a proof of the old log still verifies, with its key' '
	mkdir -p "$TMP/p1" && rm -rf "$TMP/feed.p" && cp -a "$TMP/feed.v1" "$TMP/feed.p" &&
	"$VULNID" prove "$TMP/feed.p" "TEST-$Y-0002" >"$TMP/p1/old.tlog-proof" &&
	"$VULNID" verify-feed --proof "$TMP/p1/old.tlog-proof" --log-key "$V1" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "\"entry\":\"TEST-$Y-0002\"" "$TMP/out" &&
	"$GOCHECK" -feed "$TMP/feed.p" -vkey "$V1" -v1 -proofs "$TMP/p1/old.tlog-proof" >"$TMP/go.out" 2>&1
'

test_expect_success 'an origin for the log that names the old one is refused' '
	mv "$INST/log2.key" "$INST/log2.key.kept" &&
	set_conf export log_origin "$(sed -n 1p "$TMP/v1.cp")" &&
	rc=0; "$VULNID" -c "$CONF" export feed "$TMP/feed.new" >/dev/null 2>"$TMP/err" || rc=$? &&
	test "$rc" -ne 0 && expect_match "needs another origin" "$TMP/err" && test ! -e "$INST/log2.key" && test ! -e "$TMP/feed.new/log" &&
	mv "$INST/log2.key.kept" "$INST/log2.key" && set_conf export log_origin ""
'

test_done
