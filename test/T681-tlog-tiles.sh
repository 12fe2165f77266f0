#!/bin/bash
# T681-tlog-tiles: a mirror checking a log with its key alone (verify-feed
# DIR --log-key) checks every tile and entry bundle it would serve: a
# corrupted full tile or bundle that the root does not need is found, as
# Go's reference code finds it; --tiles new checks what a new checkpoint
# added, --tiles needed only what the root needs.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
make_instance big && ensure_robot_key
# 288 lines: one full tile at level 0 (0-255), a partial one of 32, the
# partial tile of level 1: the root reads only the two partial tiles.
feed_records 288
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
L="$TMP/feed/log"
VK="$L/log.vkey"
cp "$L/checkpoint" "$TMP/cp.288"

gocheck() { "$GOCHECK" -feed "$1" -vkey "$(cat "$VK")" -generic >"$TMP/go.out" 2>&1; }
fresh() { rm -rf "$TMP/t" && cp -a "$TMP/feed" "$TMP/t"; }
log_only() { "$VULNID" verify-feed "$TMP/t" --log-key "$VK" "$@" >"$TMP/out" 2>"$TMP/err"; }

test_expect_success 'the good log: every tile and bundle checked' '
	fresh && log_only &&
	expect_match "log example.org/vulnid/TEST/.*/log of 288 entries" "$TMP/out" &&
	expect_match "3 tiles and 2 entry bundles checked" "$TMP/out" &&
	gocheck "$TMP/t" && expect_match "ok 288 entries read from the bundles" "$TMP/go.out" &&
	log_only --tiles needed && expect_match ": 2 tiles read$" "$TMP/out"
'

test_expect_success 'a corrupted full tile the root does not read: --log-key refuses it, as Go does' '
	fresh && flip_byte "$TMP/t/log/tile/0/000" 4000 &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "tile/0/000. does not hash to its hash in the tile above" "$TMP/err" &&
	! gocheck "$TMP/t" && expect_match "tile/0/000 differs from the tree" "$TMP/go.out" &&
	log_only --tiles needed
'

test_expect_success 'a corrupted full entry bundle: refused, as Go does' '
	fresh && flip_byte "$TMP/t/log/tile/entries/000" 300 &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "entries/000.: entry 1 does not hash to the tile.s leaf hash" "$TMP/err" &&
	! gocheck "$TMP/t" && expect_match "entry 1 is not the entry of line 2|differs" "$TMP/go.out"
'

test_expect_success 'a missing or truncated bundle, a bundle with an entry too many: refused' '
	fresh && rm "$TMP/t/log/tile/entries/000" &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "cannot read the entry bundle .*entries/000" "$TMP/err" &&
	fresh && truncate -s -1 "$TMP/t/log/tile/entries/001.p/32" &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "entries/001.p/32. is not a bundle of 32 entries" "$TMP/err" &&
	fresh && printf "\000\001x" >>"$TMP/t/log/tile/entries/001.p/32" &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "is not a bundle of 32 entries" "$TMP/err"
'

request "$TMP/r1.eml" alice@example.net "One more" </dev/null
request "$TMP/r2.eml" bob@example.net "And one more" </dev/null

test_expect_success 'the log grows: --tiles new checks the part past the previous checkpoint' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null &&
	fresh && log_only --previous-checkpoint "$TMP/cp.288" --tiles new &&
	expect_match "consistent with the previous checkpoint of 288 entries" "$TMP/out" &&
	expect_match "2 tiles and 1 entry bundles checked .the new part." "$TMP/out" &&
	flip_byte "$TMP/t/log/tile/0/000" 4000 &&
	log_only --previous-checkpoint "$TMP/cp.288" --tiles new &&
	rc=0; log_only --previous-checkpoint "$TMP/cp.288" || rc=$? && expect_eq 65 "$rc" &&
	fresh && flip_byte "$TMP/t/log/tile/entries/001.p/34" 70 &&
	rc=0; log_only --previous-checkpoint "$TMP/cp.288" --tiles new || rc=$? &&
	expect_eq 65 "$rc" && expect_match "entries/001.p/34" "$TMP/err"
'

test_expect_success 'the partial tile and bundle of the earlier checkpoint stay, and must be prefixes' '
	fresh && test -f "$TMP/t/log/tile/0/001.p/32" && test -f "$TMP/t/log/tile/entries/001.p/32" &&
	log_only && expect_match "checked" "$TMP/out" &&
	flip_byte "$TMP/t/log/tile/0/001.p/32" 100 &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "tile/0/001.p/32. is not a prefix of the tile it grew into" "$TMP/err" &&
	fresh && flip_byte "$TMP/t/log/tile/entries/001.p/32" 100 &&
	rc=0; log_only || rc=$? &&
	expect_eq 65 "$rc" && expect_match "entries/001.p/32. is not a prefix of the bundle it grew into" "$TMP/err"
'

test_expect_success 'usage: --tiles new needs the previous checkpoint; an unknown mode' '
	rc=0; "$VULNID" verify-feed "$TMP/feed" --log-key "$VK" --tiles new 2>/dev/null || rc=$? &&
	expect_eq 64 "$rc" &&
	rc=0; "$VULNID" verify-feed "$TMP/feed" --log-key "$VK" --tiles some 2>/dev/null || rc=$? &&
	expect_eq 64 "$rc"
'

test_done
