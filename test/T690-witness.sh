#!/bin/bash
# T690-witness: two robots witnessing each other's logs (vulnid-feed(5),
# FEDERATION): cosignatures after a consistency check, an append-only
# state safe against concurrent runs, forks and rollbacks refused, and
# verify-feed requiring N cosignatures (checked by Go's code too)
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck

# Robot A (prefix TEST) and robot B (prefix OTHR) publish into one
# repository, each into its own directory.
export_instance a
A=$INST; ACONF=$CONF
robot_key "$TMP/a.asc"
export_instance b --prefix OTHR
B=$INST; BCONF=$CONF
REPO="$TMP/repo"

INST=$A CONF=$ACONF
request "$TMP/r1.eml" alice@example.net "First" <<'MAIL'
Vendor: Foo

Text.
MAIL
request "$TMP/r2.eml" bob@example.net "Second" </dev/null

state_lines() { wc -l <"$B/witness/logs/$1.log"; }

test_expect_success 'robot B makes its witness key in its instance' '
	"$VULNID" -c "$BCONF" witness init example.org/witness-b >"$TMP/b.vkey" &&
	expect_match "^example.org/witness-b[+][0-9a-f]{8}[+]" "$TMP/b.vkey" &&
	expect_eq 600 "$(stat -c %a "$B/witness/witness.key")" &&
	"$VULNID" -c "$BCONF" witness key >"$TMP/b2.vkey" && cmp "$TMP/b.vkey" "$TMP/b2.vkey"
'

test_expect_success 'B cosigns A after checking the checkpoint; the cosigned checkpoint is published in B'"'"'s directory' '
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >/dev/null &&
	"$VULNID" -c "$BCONF" export feed "$REPO/b" >/dev/null &&
	"$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$REPO/a" --out "$REPO/b/witness" >"$TMP/cosig" &&
	expect_match "^— example.org/witness-b " "$TMP/cosig" &&
	OH=$(printf %s "$(sed -n 1p "$REPO/a/log/checkpoint")" | sha256sum | cut -c1-64) &&
	test -f "$REPO/b/witness/$OH/checkpoint" &&
	expect_eq 1 "$(state_lines "$OH")" &&
	expect_eq 2 "$(grep -c "^— " "$REPO/b/witness/$OH/checkpoint")" &&
	cp "$REPO/a/log/checkpoint" "$TMP/a.cp.1"
'
OH=$(printf %s "$(sed -n 1p "$REPO/a/log/checkpoint")" | sha256sum | cut -c1-64)

test_expect_success 'verify-feed requires the cosignature; it counts only with the witness'"'"'s copy' '
	"$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" \
		--cosigned "$REPO/b/witness" >"$TMP/out" &&
	expect_match "1 cosignatures" "$TMP/out" &&
	rc=0; "$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" \
		>/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "0 good cosignatures .* 1 are required" "$TMP/err" &&
	"$VULNID" verify-feed "$REPO/a" --log-key "$REPO/a/log/log.vkey" --witness-key "$TMP/b.vkey" \
		--cosigned "$REPO/b/witness/$OH/checkpoint" --cosignatures 1 >/dev/null
'

test_expect_success 'Go checks the cosignature (tlog-cosignature/v1 with crypto/ed25519)' '
	"$GOCHECK" -feed "$REPO/a" -vkey "$(cat "$REPO/a/log/log.vkey")" -witness "$(cat "$TMP/b.vkey")" \
		-cosigned "$REPO/b/witness/$OH/checkpoint" >"$TMP/go.out" 2>&1 &&
	expect_match "ok cosignatures 1" "$TMP/go.out"
'

test_expect_success 'a proof from vulnid prove carries the cosigned checkpoint when asked for' '
	"$VULNID" prove "$REPO/a" "TEST-$Y-0001" >"$TMP/proof" &&
	rc=0; "$VULNID" verify-feed --proof "$TMP/proof" --log-key "$REPO/a/log/log.vkey" --witness-key "$TMP/b.vkey" \
		>/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" &&
	"$VULNID" verify-feed --proof "$TMP/proof" --log-key "$REPO/a/log/log.vkey" --witness-key "$TMP/b.vkey" \
		--cosigned "$REPO/b/witness" >/dev/null 2>"$TMP/err" &&
	expect_match "cosigned" "$TMP/err"
'

test_expect_success 'tamper: a cosignature altered is refused by both' '
	cp "$REPO/b/witness/$OH/checkpoint" "$TMP/bad.cp" &&
	sed -i "\$s/^\(— [^ ]* .\{20\}\)./\1A/" "$TMP/bad.cp" && ! cmp -s "$TMP/bad.cp" "$REPO/b/witness/$OH/checkpoint" &&
	rc=0; "$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" \
		--cosigned "$TMP/bad.cp" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "bad cosignature by witness example.org/witness-b|0 good cosignatures" "$TMP/err" &&
	! "$GOCHECK" -feed "$REPO/a" -vkey "$(cat "$REPO/a/log/log.vkey")" -witness "$(cat "$TMP/b.vkey")" \
		-cosigned "$TMP/bad.cp" >/dev/null 2>&1
'

request "$TMP/r3.eml" carol@example.net "Third" </dev/null

test_expect_success 'A grows; B cosigns again after proving the new checkpoint consistent' '
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >/dev/null &&
	rc=0; "$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" \
		--cosigned "$REPO/b/witness" >/dev/null 2>&1 || rc=$? &&
	expect_eq 65 "$rc" &&
	"$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$REPO/a" --out "$REPO/b/witness" >/dev/null &&
	expect_eq 2 "$(state_lines "$OH")" &&
	expect_eq "2 3" "$(cut -d" " -f1 "$B/witness/logs/$OH.log" | tr "\n" " " | sed "s/ \$//")" &&
	"$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/b.vkey" \
		--cosigned "$REPO/b/witness" >/dev/null
'

test_expect_success 'a rolled-back checkpoint is refused with the size last cosigned (tlog-witness 409)' '
	mkdir -p "$TMP/old" && cp -a "$REPO/a/." "$TMP/old/" && cp "$TMP/a.cp.1" "$TMP/old/log/checkpoint" &&
	"$VULNID" prove "$TMP/old" --consistency 0 >"$TMP/req" &&
	rc=0; "$VULNID" -c "$BCONF" witness add-checkpoint --log-key "$REPO/a/log/log.vkey" "$TMP/req" \
		>"$TMP/out" 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_eq 3 "$(cat "$TMP/out")" &&
	expect_match "has 3 entries, not 0" "$TMP/err" &&
	expect_eq 2 "$(state_lines "$OH")"
'

test_expect_success 'a forked log is not cosigned, and the state is unchanged' '
	export_instance fork && cp "$A/log2.key" "$INST/log2.key" && rm -rf "$INST/gnupg" && cp -a "$A/gnupg" "$INST/gnupg" &&
	for i in 1 2 3 4; do request "$TMP/f$i.eml" mallory@example.net "Fork $i" </dev/null || exit 1; done &&
	"$VULNID" -c "$CONF" export feed "$TMP/forked" >/dev/null &&
	rc=0; "$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$TMP/forked" \
		>/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "not consistent with the one of 3 cosigned before" "$TMP/err" &&
	expect_eq 2 "$(state_lines "$OH")"
'
INST=$A CONF=$ACONF

test_expect_success 'a checkpoint of an unknown log or key is refused' '
	"$VULNID" prove "$REPO/b" --consistency 0 >"$TMP/req.b" &&
	rc=0; "$VULNID" -c "$BCONF" witness add-checkpoint --log-key "$REPO/a/log/log.vkey" "$TMP/req.b" \
		>/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 66 "$rc" && expect_match "unknown log" "$TMP/err"
'

request "$TMP/r4.eml" dave@example.net "Fourth" </dev/null
request "$TMP/r5.eml" erin@example.net "Fifth" </dev/null

test_expect_success 'concurrent cosigning runs never roll the state back; the same tree is cosigned once' '
	"$VULNID" -c "$ACONF" export feed "$REPO/a" >/dev/null &&
	pids="" &&
	for i in 1 2 3 4 5 6; do
		"$VULNID" -c "$BCONF" witness cosign-feed --log-key "$REPO/a/log/log.vkey" "$REPO/a" \
			>"$TMP/c$i.out" 2>"$TMP/c$i.err" & pids="$pids $!"
	done &&
	for p in $pids; do wait "$p" || { cat "$TMP"/c*.err; exit 1; }; done &&
	expect_eq 3 "$(state_lines "$OH")" &&
	sort -u "$TMP"/c?.out >"$TMP/sigs" && expect_eq 1 "$(wc -l <"$TMP/sigs")" &&
	"$PYTHON" - "$B/witness/logs/$OH.log" <<-"PY"
	import sys
	sizes = [int(l.split()[0]) for l in open(sys.argv[1])]
	assert sizes == sorted(sizes) and sizes[-1] == 5, sizes
	PY
'

test_expect_success 'anyone with vulnid witnesses without an instance (--state), as tlog-witness add-checkpoint' '
	"$VULNID" witness --state "$TMP/w" init example.net/w >"$TMP/w.vkey" &&
	"$VULNID" prove "$REPO/a" --consistency 0 >"$TMP/req0" &&
	"$VULNID" witness --state "$TMP/w" add-checkpoint --log-key "$REPO/a/log/log.vkey" <"$TMP/req0" >"$TMP/wsig" &&
	cat "$REPO/a/log/checkpoint" "$TMP/wsig" >"$TMP/a2.cp" &&
	"$VULNID" verify-feed "$REPO/a" --key "$TMP/a.asc" --witness-key "$TMP/w.vkey" --witness-key "$TMP/b.vkey" \
		--cosigned "$TMP/a2.cp" --cosigned "$REPO/b/witness" >"$TMP/out" &&
	expect_match "2 cosignatures" "$TMP/out" &&
	rc=0; "$VULNID" witness add-checkpoint --log-key x >/dev/null 2>&1 </dev/null || rc=$? &&
	expect_eq 64 "$rc"
'

test_done
