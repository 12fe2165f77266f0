#!/bin/bash
# T691-witness-merge: cosignatures reach readers: [export] witnesses names
# a witness's directory of cosigned checkpoints, the export merges its
# cosignature into the published checkpoint, verify-feed requires it
# without a copy of the witness's, and proofs carry it (checked by Go).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
export_instance a
A=$INST ACONF=$CONF
robot_key "$TMP/a.asc"
export_instance b --prefix OTHR
B=$INST BCONF=$CONF
REPO="$TMP/repo"
INST=$A CONF=$ACONF

request "$TMP/r1.eml" alice@example.net "First" <<'MAIL'
Vendor: Foo

Text.
MAIL
request "$TMP/r2.eml" bob@example.net "Second" </dev/null
"$VULNID" -c "$BCONF" witness init example.org/witness-b >"$TMP/b.vkey" || fail "no witness key"
set_conf export witnesses "$(cat "$TMP/b.vkey") $REPO/b/witness"
CP="$REPO/a/log/checkpoint"

gocheck() { "$GOCHECK" -feed "$REPO/a" -vkey "$(cat "$REPO/a/log/log.vkey")" "$@" >"$TMP/go.out" 2>&1; }

test_expect_success 'before the witness cosigned: the export says so, and the checkpoint has the log signature only' '
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "log of 2 entries, checkpoint signed, cosigned by 0 of 1 witnesses [(]0 new[)]" "$TMP/out" &&
	expect_match "witness example.org/witness-b .*cannot read" "$TMP/err" &&
	expect_eq 1 "$(grep -c "^— " "$CP")"
'

test_expect_success 'the witness cosigns; the next export merges the cosignature into the published checkpoint' '
	"$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$REPO/a" --out "$REPO/b/witness" >/dev/null &&
	cp "$CP" "$TMP/cp.before" &&
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "0 new lines.*cosigned by 1 of 1 witnesses [(]1 new[)]" "$TMP/out" &&
	test ! -s "$TMP/err" &&
	expect_eq 2 "$(grep -c "^— " "$CP")" && expect_match "^— example.org/witness-b " "$CP" &&
	cmp <(head -c "$(stat -c %s "$TMP/cp.before")" "$CP") "$TMP/cp.before"
'

test_expect_success 'readers require it without the witness'"'"'s copy: verify-feed and Go' '
	"$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" >"$TMP/out" &&
	expect_match "1 cosignatures" "$TMP/out" &&
	"$VULNID" verify-feed "$REPO/a" --log-key "$REPO/a/log/log.vkey" --witness-key "$TMP/b.vkey" >/dev/null &&
	gocheck -witness "$(cat "$TMP/b.vkey")" && expect_match "ok cosignatures 1" "$TMP/go.out"
'

test_expect_success 'proofs carry the cosignature: verify-feed --proof --witness-key, and Go' '
	"$VULNID" prove "$REPO/a" "TEST-$Y-0001" --out "$TMP/proofs" >/dev/null &&
	"$VULNID" verify-feed --proof "$TMP/proofs"/*.tlog-proof --log-key "$REPO/a/log/log.vkey" \
		--witness-key "$TMP/b.vkey" >/dev/null 2>"$TMP/err" &&
	expect_match "cosigned" "$TMP/err" &&
	gocheck -proofs "$TMP/proofs" -witness "$(cat "$TMP/b.vkey")" &&
	expect_match "ok cosignatures 1" "$TMP/go.out" && expect_match "ok vulnid proofs 1" "$TMP/go.out"
'

test_expect_success 'with everything cosigned an export changes nothing' '
	cp "$CP" "$TMP/cp.2" &&
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" &&
	expect_match "cosigned by 1 of 1 witnesses [(]0 new[)]" "$TMP/out" && cmp "$TMP/cp.2" "$CP"
'

request "$TMP/r3.eml" carol@example.net "Third" </dev/null

test_expect_success 'a new checkpoint waits for the witness; a bad cosignature in its copy is not merged' '
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "log of 3 entries, checkpoint signed, cosigned by 0 of 1" "$TMP/out" &&
	expect_match "not a copy of the checkpoint of 3 entries" "$TMP/err" &&
	"$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$REPO/a" --out "$REPO/b/witness" >/dev/null &&
	OH=$(printf %s "$(sed -n 1p "$CP")" | sha256sum | cut -c1-64) &&
	cp "$REPO/b/witness/$OH/checkpoint" "$TMP/good.cp" &&
	c=$(sed -n "\$s/^— [^ ]* .\{20\}\(.\).*/\1/p" "$REPO/b/witness/$OH/checkpoint") &&
	r=A && if [ "$c" = A ]; then r=B; fi &&
	sed -i "\$s/^\(— [^ ]* .\{20\}\)./\1$r/" "$REPO/b/witness/$OH/checkpoint" &&
	! cmp -s "$TMP/good.cp" "$REPO/b/witness/$OH/checkpoint" &&
	cp "$CP" "$TMP/cp.3" &&
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "cosigned by 0 of 1" "$TMP/out" && expect_match "does not verify" "$TMP/err" &&
	cmp "$TMP/cp.3" "$CP" &&
	cp "$TMP/good.cp" "$REPO/b/witness/$OH/checkpoint" &&
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >"$TMP/out" &&
	expect_match "cosigned by 1 of 1 witnesses [(]1 new[)]" "$TMP/out" &&
	"$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" >/dev/null
'

test_expect_success '[export] witnesses: a bad key or place is a configuration error' '
	set_conf export witnesses "example.org/x+00000000+AAAA $REPO/b/witness" &&
	rc=0; "$VULNID" -c "$ACONF" export feed "$REPO/a" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 78 "$rc" && expect_match "witnesses" "$TMP/err" &&
	set_conf export witnesses "$(cat "$TMP/b.vkey") relative/dir" &&
	rc=0; "$VULNID" -c "$ACONF" export feed "$REPO/a" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 78 "$rc" &&
	set_conf export witnesses "$(cat "$TMP/b.vkey") $REPO/b/witness"
'

test_done
