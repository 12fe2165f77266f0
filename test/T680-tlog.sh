#!/bin/bash
# T680-tlog: the feed as a transparency log (DIR/log): checkpoint, tiles,
# bundles of the lines' log entries, inclusion and consistency proofs,
# checked by vulnid and by Go's reference code (golang.org/x/mod/sumdb/note
# and sumdb/tlog), and every tampering refused by both
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
robot_key "$TMP/robot.asc"

# The independent verifier, built in GOPATH mode without network.
build_tlogcheck
# gocheck DIR [options]: the Go verifier must accept the feed.
gocheck() {
	local dir=$1
	shift
	"$GOCHECK" -feed "$dir" -vkey "$(cat "$dir/log/log.vkey")" "$@" >"$TMP/go.out" 2>&1 ||
		{ cat "$TMP/go.out"; return 1; }
}
# gocheck_fails DIR PATTERN [options]: it must refuse, saying PATTERN.
gocheck_fails() {
	local dir=$1 pattern=$2
	shift 2
	if "$GOCHECK" -feed "$dir" -vkey "$(cat "$good/log/log.vkey")" "$@" >"$TMP/go.out" 2>&1; then
		cat "$TMP/go.out"; fail "the Go verifier accepted it"
	fi
	expect_match "$pattern" "$TMP/go.out"
}

request "$TMP/r1.eml" alice@example.net "Heap overflow in parse()" <<'MAIL'
Vendor: Foo Corp
Product: Foo Server

A long Host header overflows a buffer.
MAIL
request "$TMP/r2.eml" bob@example.net "Second report" <<'MAIL'
Vendor: Bar Inc

Something about Bar.
MAIL
dbtool add "TEST-$Y-0001" vendor-response vendor security@foo.example '[["Status","confirmed"]]' \
	"We confirm the overflow." >/dev/null

test_expect_success 'export writes the checkpoint, tiles, bundles and the bound log key into DIR/log' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match "log of 3 entries, checkpoint signed" "$TMP/out" &&
	test -f "$TMP/feed/log/checkpoint" && test -f "$TMP/feed/log/tile/0/000.p/3" &&
	test -f "$TMP/feed/log/tile/entries/000.p/3" && test -f "$TMP/feed/log/log.vkey" &&
	test -f "$TMP/feed/log/log.vkey.asc" && test ! -e "$TMP/feed/checkpoint" && test ! -e "$TMP/feed/tile" &&
	expect_eq 96 "$(stat -c %s "$TMP/feed/log/tile/0/000.p/3")" &&
	expect_eq 600 "$(stat -c %a "$INST/log2.key")" &&
	origin=$(sed -n 1p "$TMP/feed/log/checkpoint") &&
	expect_match "^example.org/vulnid/TEST/[0-9a-f]{16}/log$" "$TMP/feed/log/checkpoint" &&
	expect_eq 3 "$(sed -n 2p "$TMP/feed/log/checkpoint")" &&
	expect_eq "$origin" "$(json_get "j[\"log\"][\"origin\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq 3 "$(json_get "j[\"log\"][\"size\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq "$(sed -n 3p "$TMP/feed/log/checkpoint")" "$(json_get "j[\"log\"][\"root\"]" <"$TMP/feed/HEAD.json")" &&
	expect_eq False "$(json_get "\"checkpoint\" in j" <"$TMP/feed/HEAD.json")" &&
	gpgv --keyring "$INST/gnupg/pubring.kbx" "$TMP/feed/log/log.vkey.asc" "$TMP/feed/log/log.vkey" 2>/dev/null
'

test_expect_success 'the entries name the lines: recomputed in Python from vulnid-feed(5), they match the tile and bundle' '
	"$PYTHON" - "$TMP/feed" "$Y" <<-"PY"
	import hashlib, json, sys, base64
	d, y = sys.argv[1], sys.argv[2]
	lines = open(d + "/" + y + ".jsonl", "rb").read().split(b"\n")[:-1]
	def entry(l):
	    o = json.loads(l)
	    return ("{\"log\":\"vulnid-log-2\",\"year\":%d,\"n\":%d,\"pos\":%d,\"type\":%s,\"entry\":%s,\"seq\":%d,\"sha256\":\"%s\"}" %
	            (o["year"], o["n"], o["pos"], json.dumps(o["type"]), json.dumps(o["entry"]), o["seq"],
	             hashlib.sha256(l).hexdigest())).encode()
	entries = [entry(l) for l in lines]
	assert all(len(e) < 300 for e in entries)
	leaves = [hashlib.sha256(b"\x00" + e).digest() for e in entries]
	assert open(d + "/log/tile/0/000.p/3", "rb").read() == b"".join(leaves)
	n = lambda a, b: hashlib.sha256(b"\x01" + a + b).digest()
	root = n(n(leaves[0], leaves[1]), leaves[2])
	assert open(d + "/log/checkpoint").read().split("\n")[2] == base64.b64encode(root).decode()
	bundle = b"".join(len(e).to_bytes(2, "big") + e for e in entries)
	assert open(d + "/log/tile/entries/000.p/3", "rb").read() == bundle
	PY
'

test_expect_success 'verify-feed checks the log with the key the robot bound' '
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/out" &&
	expect_match "feed verified: 3 lines" "$TMP/out" &&
	expect_match "log example.org/vulnid/TEST/.* of 3 entries" "$TMP/out"
'

test_expect_success 'Go: note signature, root of the entries and of the tiles, tiles byte for byte, inclusion' '
	gocheck "$TMP/feed" &&
	expect_match "ok checkpoint signature .* 3" "$TMP/go.out" &&
	expect_match "ok tiles 1 bundles 1" "$TMP/go.out" &&
	expect_match "ok root of the tiles" "$TMP/go.out" &&
	expect_match "ok inclusion 3 records" "$TMP/go.out" &&
	gocheck "$TMP/feed" -generic -records all &&
	expect_match "ok 3 entries read from the bundles" "$TMP/go.out" &&
	expect_match "ok every entry names its line" "$TMP/go.out"
'

test_expect_success 're-exporting with nothing new keeps the checkpoint byte for byte' '
	cp "$TMP/feed/log/checkpoint" "$TMP/cp.1" && cp -a "$TMP/feed" "$TMP/feed.1" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_no_match "checkpoint signed" "$TMP/out" &&
	cmp "$TMP/cp.1" "$TMP/feed/log/checkpoint"
'

request "$TMP/r3.eml" carol@example.net "Third report" <<'MAIL'
Vendor: Baz

Baz crashes.
MAIL
dbtool add "TEST-$Y-0002" addition creator bob@example.net '[["Reference","https://example.net/x"]]' \
	"More details." >/dev/null

test_expect_success 'an export appends to the log; the old checkpoint is consistent with the new' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" &&
	expect_match "log of 5 entries, checkpoint signed" "$TMP/out" &&
	test -f "$TMP/feed/log/tile/0/000.p/3" && test -f "$TMP/feed/log/tile/0/000.p/5" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" --previous-checkpoint "$TMP/cp.1" >"$TMP/out" &&
	expect_match "consistent with the previous checkpoint of 3 entries [(]proof of 4 hashes" "$TMP/out" &&
	"$VULNID" verify-feed "$TMP/feed" --log-key "$TMP/feed/log/log.vkey" --previous-checkpoint "$TMP/cp.1" >"$TMP/out" &&
	expect_match "consistent with the previous checkpoint of 3 entries" "$TMP/out"
'

test_expect_success 'vulnid prove --consistency: checked by verify-feed and by Go' '
	"$VULNID" prove "$TMP/feed" --consistency 3 >"$TMP/cons" &&
	expect_eq "old 3" "$(head -n 1 "$TMP/cons")" &&
	"$VULNID" verify-feed --consistency "$TMP/cons" --previous-checkpoint "$TMP/cp.1" \
		--log-key "$TMP/feed/log/log.vkey" >"$TMP/out" &&
	expect_match "consistent with the previous checkpoint of 3 entries" "$TMP/out" &&
	gocheck "$TMP/feed" -old "$TMP/cp.1" -consistency "$TMP/cons" &&
	expect_match "ok consistency 3 -> 5" "$TMP/go.out" &&
	expect_match "ok vulnid consistency proof 4 hashes" "$TMP/go.out"
'

test_expect_success 'vulnid prove ID: a tlog-proof per line, checked by verify-feed and by Go' '
	"$VULNID" prove "$TMP/feed" "TEST-$Y-0001" >"$TMP/proof" &&
	expect_eq 2 "$(grep -c "^c2sp.org/tlog-proof@v1$" "$TMP/proof")" &&
	"$VULNID" verify-feed --proof "$TMP/proof" --log-key "$TMP/feed/log/log.vkey" >"$TMP/out" 2>"$TMP/err" &&
	expect_eq 2 "$(grep -c "\"entry\":\"TEST-$Y-0001\"" "$TMP/out")" &&
	expect_eq "$(grep "\"entry\":\"TEST-$Y-0001\"" "$TMP/feed/$Y.jsonl")" "$(cat "$TMP/out")" &&
	expect_match "included in the log .* of 5 entries" "$TMP/err" &&
	gocheck "$TMP/feed" -proofs "$TMP/proof" &&
	expect_match "ok vulnid proofs 2" "$TMP/go.out"
'

test_expect_success 'the Python proof check of vulnid-feed(5) accepts a proof and refuses a changed one' '
	awk "/^An inclusion proof checked in Python/ { f = 1 } f && /^\\.EX/ { g = 1; next } g && /^\\.EE/ { exit } g { print }" \
		"$VULNID_SRCDIR/doc/vulnid-feed.5" | sed -e "s/\\\\(aq/'"'"'/g" -e "s/\\\\-/-/g" -e "s/\\\\e/\\\\/g" >"$TMP/docproof.py" &&
	test -s "$TMP/docproof.py" &&
	"$VULNID" prove "$TMP/feed" "TEST-$Y-0003" >"$TMP/proof3" &&
	$PYTHON "$TMP/docproof.py" "$TMP/proof3" >"$TMP/out" &&
	expect_match "\"entry\":\"TEST-$Y-0003\"" "$TMP/out" &&
	sed "/^index /s/\$/1/" "$TMP/proof3" >"$TMP/proof3b" && ! cmp -s "$TMP/proof3" "$TMP/proof3b" &&
	! $PYTHON "$TMP/docproof.py" "$TMP/proof3b" >/dev/null 2>&1
'

test_expect_success 'vulnid prove: an unknown entry, a bad identifier' '
	rc=0; "$VULNID" prove "$TMP/feed" "TEST-$Y-0099" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 66 "$rc" && expect_match "no line of TEST-$Y-0099" "$TMP/err" &&
	rc=0; "$VULNID" prove "$TMP/feed" "../../etc" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc"
'

good="$TMP/feed"
fresh() { rm -rf "$TMP/t" && cp -a "$good" "$TMP/t"; }

test_expect_success 'tamper: a byte of a tile: both refuse' '
	fresh && flip_byte "$TMP/t/log/tile/0/000.p/5" 40 &&
	verify_fails "$TMP/t" "tile/0/000.p/5.* differs from the tile the entries make" &&
	rc=0; "$VULNID" verify-feed "$TMP/t" --log-key "$TMP/t/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "the tiles make another root hash" "$TMP/err" &&
	gocheck_fails "$TMP/t" "differs from the tree"
'

test_expect_success 'tamper: an entry bundle: both refuse' '
	fresh && printf "X" | dd of="$TMP/t/log/tile/entries/000.p/5" bs=1 seek=10 conv=notrunc 2>/dev/null &&
	verify_fails "$TMP/t" "tile/entries/000.p/5.* differs" &&
	rc=0; "$VULNID" verify-feed "$TMP/t" --log-key "$TMP/t/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "entries/000.p/5.: entry 0 does not hash" "$TMP/err" &&
	gocheck_fails "$TMP/t" "entries/000.p/5 differs from the lines"
'

test_expect_success 'tamper: the checkpoint signature: both refuse' '
	fresh && sed -i "s/^\(— [^ ]* ....\)./\1A/" "$TMP/t/log/checkpoint" &&
	! cmp -s "$TMP/t/log/checkpoint" "$good/log/checkpoint" &&
	verify_fails "$TMP/t" "not signed by the log key" &&
	gocheck_fails "$TMP/t" "checkpoint: .*verif"
'

test_expect_success 'tamper: a checkpoint for another root, signed by another key: both refuse' '
	fresh && sed -i "3s/^./A/" "$TMP/t/log/checkpoint" &&
	verify_fails "$TMP/t" "not signed by the log key" &&
	gocheck_fails "$TMP/t" "checkpoint"
'

test_expect_success 'tamper: the log key swapped (its OpenPGP binding breaks)' '
	fresh && "$VULNID" witness --state "$TMP/other" init example.net/other >/dev/null &&
	sed -i "s/^[^+]*+/example.net\/x+/" "$TMP/t/log/log.vkey" &&
	verify_fails "$TMP/t" "the signature in log.vkey.asc is not the robot"
'

test_expect_success 'tamper: a line rewritten and re-chained, HEAD re-signed by the robot: the log refuses' '
	fresh && forge "$TMP/t" "$Y" 2 "o[\"body\"] = \"nothing\"" rehash "$INST/gnupg" &&
	verify_fails "$TMP/t" "differs from the tile the entries make" &&
	gocheck_fails "$TMP/t" "the lines make root"
'

test_expect_success 'tamper: a proof altered (hash, index, line): both refuse' '
	sed "0,/^index /s/^index 0$/index 1/" "$TMP/proof" >"$TMP/p1" && ! cmp -s "$TMP/p1" "$TMP/proof" &&
	rc=0; "$VULNID" verify-feed --proof "$TMP/p1" --log-key "$good/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "does not verify" "$TMP/err" &&
	gocheck_fails "$good" "vulnid.s proof for record" -proofs "$TMP/p1" &&
	"$PYTHON" - "$TMP/proof" "$TMP/p2" <<-"PY" &&
	import sys, base64
	t = open(sys.argv[1]).read().split("\n")
	i = next(k for k, l in enumerate(t) if l.startswith("extra "))
	line = base64.b64decode(t[i][6:]).replace(b"overflow", b"underflow", 1)
	t[i] = "extra " + base64.b64encode(line).decode()
	open(sys.argv[2], "w").write("\n".join(t))
	PY
	rc=0; "$VULNID" verify-feed --proof "$TMP/p2" --log-key "$good/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" &&
	gocheck_fails "$good" "vulnid.s proof for record" -proofs "$TMP/p2"
'

test_expect_success 'tamper: a forked log (history rewritten) is not consistent with the old checkpoint' '
	export_instance fork && ensure_robot_key &&
	cp "$TMP/inst/log2.key" "$TMP/fork/log2.key" && rm -rf "$TMP/fork/gnupg" && cp -a "$TMP/inst/gnupg" "$TMP/fork/gnupg" &&
	request "$TMP/f1.eml" mallory@example.net "Something else" </dev/null &&
	request "$TMP/f2.eml" mallory@example.net "And more" </dev/null &&
	request "$TMP/f3.eml" mallory@example.net "And more" </dev/null &&
	request "$TMP/f4.eml" mallory@example.net "And more" </dev/null &&
	request "$TMP/f5.eml" mallory@example.net "And more" </dev/null &&
	"$VULNID" -c "$CONF" export feed "$TMP/forked" >/dev/null &&
	"$VULNID" verify-feed "$TMP/forked" --key "$TMP/robot.asc" >/dev/null &&
	rc=0; "$VULNID" verify-feed "$TMP/forked" --key "$TMP/robot.asc" --previous-checkpoint "$TMP/cp.1" \
		>/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "not consistent with the previous one of 3" "$TMP/err" &&
	"$VULNID" prove "$TMP/forked" --consistency 3 >"$TMP/fcons" &&
	rc=0; "$VULNID" verify-feed --consistency "$TMP/fcons" --previous-checkpoint "$TMP/cp.1" \
		--log-key "$TMP/forked/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" &&
	gocheck_fails "$TMP/forked" "consistency from 3" -old "$TMP/cp.1"
'
INST="$TMP/inst"; CONF="$INST/vulnid.conf"

test_expect_success 'a log behind its year files (export killed before the checkpoint) catches up' '
	cp -a "$good" "$TMP/behind" && cp "$TMP/cp.1" "$TMP/behind/log/checkpoint" &&
	head -c 160 /dev/zero >"$TMP/behind/log/tile/0/000.p/5" && : >"$TMP/behind/log/tile/entries/000.p/5" &&
	"$VULNID" -c "$CONF" export feed "$TMP/behind" >"$TMP/out" &&
	expect_match "0 new lines.*log of 5 entries, checkpoint signed" "$TMP/out" &&
	cmp "$good/log/checkpoint" "$TMP/behind/log/checkpoint" &&
	cmp "$good/log/tile/0/000.p/5" "$TMP/behind/log/tile/0/000.p/5" &&
	cmp "$good/log/tile/entries/000.p/5" "$TMP/behind/log/tile/entries/000.p/5"
'

test_expect_success 'a feed exported before the log gets the whole log at the next export' '
	cp -a "$good" "$TMP/old" && rm -rf "$TMP/old/log" &&
	"$VULNID" -c "$CONF" export feed "$TMP/old" >"$TMP/out" &&
	expect_match "log of 5 entries, checkpoint signed" "$TMP/out" &&
	cmp "$good/log/checkpoint" "$TMP/old/log/checkpoint" && cmp "$good/log/tile/0/000.p/5" "$TMP/old/log/tile/0/000.p/5"
'

test_expect_success 'export refuses a log that does not match its checkpoint' '
	cp -a "$good" "$TMP/bad" && printf "\x00" | dd of="$TMP/bad/log/tile/0/000.p/5" bs=1 seek=0 conv=notrunc 2>/dev/null &&
	rc=0; "$VULNID" -c "$CONF" export feed "$TMP/bad" >/dev/null 2>"$TMP/err" || rc=$? &&
	test "$rc" -ne 0 && expect_match "differs from the tile|do not make the root hash" "$TMP/err"
'

# Many lines: full tiles, a level-1 tile, a long line whose entry fits its bundle.
make_instance big && ensure_robot_key
feed_records 600
dbtool add "TEST-$Y-0001" addition creator alice@example.net '[]' "$(head -c 70000 /dev/zero | tr '\0' x)" >/dev/null

test_expect_success '601 lines: full tiles, partial tiles of two levels, every bundle complete despite a line of 70 kB' '
	"$VULNID" -c "$CONF" export feed "$TMP/big" >"$TMP/out" &&
	expect_match "log of 601 entries" "$TMP/out" &&
	L=$TMP/big/log &&
	test -f "$L/tile/0/000" && test -f "$L/tile/0/001" && test -f "$L/tile/0/002.p/89" &&
	test -f "$L/tile/1/000.p/2" &&
	expect_eq 8192 "$(stat -c %s "$L/tile/0/001")" &&
	test -f "$L/tile/entries/000" && test -f "$L/tile/entries/001" && test -f "$L/tile/entries/002.p/89" &&
	gocheck "$TMP/big" -records 0,255,256,511,600 &&
	expect_match "ok tiles 4 bundles 3" "$TMP/go.out" &&
	gocheck "$TMP/big" -generic -records all &&
	expect_match "ok 601 entries read from the bundles" "$TMP/go.out" &&
	expect_match "ok every entry names its line" "$TMP/go.out" &&
	expect_match "ok inclusion 601 records" "$TMP/go.out" &&
	"$VULNID" verify-feed "$TMP/big" --log-key "$L/log.vkey" >"$TMP/out" &&
	expect_match "of 601 entries" "$TMP/out" &&
	expect_match "4 tiles and 3 entry bundles checked" "$TMP/out" &&
	robot_key "$TMP/big.asc" &&
	"$VULNID" verify-feed "$TMP/big" --key "$TMP/big.asc" >"$TMP/out" &&
	expect_match "feed verified: 601 lines" "$TMP/out" && expect_match "log .* of 601 entries" "$TMP/out"
'

test_expect_success 'proofs in a tree of 601: O(log n) hashes, checked by Go; the long line proven too' '
	"$VULNID" prove "$TMP/big" "TEST-$Y-0300" >"$TMP/bproof" &&
	expect_eq 10 "$(sed -n "/^index/,/^$/p" "$TMP/bproof" | grep -c "=$")" &&
	"$VULNID" verify-feed --proof "$TMP/bproof" --log-key "$TMP/big/log/log.vkey" >/dev/null 2>"$TMP/err" &&
	expect_match "10 hashes, 10 hash operations" "$TMP/err" &&
	gocheck "$TMP/big" -proofs "$TMP/bproof" &&
	"$VULNID" prove "$TMP/big" "TEST-$Y-0001" >"$TMP/lproof" &&
	"$VULNID" verify-feed --proof "$TMP/lproof" --log-key "$TMP/big/log/log.vkey" >"$TMP/out" 2>"$TMP/err" &&
	expect_eq 70000 "$(tail -n 1 "$TMP/out" | json_get "len(j[\"body\"])")" &&
	gocheck "$TMP/big" -proofs "$TMP/lproof"
'

test_expect_success 'a tampered full tile deep in the tree: verify-feed --log-key and Go refuse it, proofs through it fail' '
	rm -rf "$TMP/bt" && cp -a "$TMP/big" "$TMP/bt" &&
	printf "\x01" | dd of="$TMP/bt/log/tile/0/000" bs=1 seek=100 conv=notrunc 2>/dev/null &&
	good="$TMP/big" gocheck_fails "$TMP/bt" "tile/0/000 differs" &&
	rc=0; "$VULNID" verify-feed "$TMP/bt" --log-key "$TMP/bt/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "tile/0/000. does not hash to its hash in the tile above" "$TMP/err" &&
	"$VULNID" verify-feed "$TMP/bt" --log-key "$TMP/bt/log/log.vkey" --tiles needed >/dev/null &&
	"$VULNID" prove "$TMP/bt" "TEST-$Y-0005" >"$TMP/btproof" &&
	rc=0; "$VULNID" verify-feed --proof "$TMP/btproof" --log-key "$TMP/bt/log/log.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "does not verify" "$TMP/err"
'

test_done
