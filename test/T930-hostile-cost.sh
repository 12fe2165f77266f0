#!/bin/bash
# T930-hostile-cost: mail built to make the parser slow or big costs
# seconds and a few MiB, and ends with 0 (handled) or 65 (too big), never
# 75 (which makes the MTA retry it for days):
#   - 25 MB of Cc: fields, each under [limits] max_header_size, full of
#     addresses without separators (one parser warning per address, each
#     with the rest of the field: it was quadratic, 120 s and 1.46 GB);
#   - one 25 MB header line (it reached GMime whole: 1.5 GB);
#   - a 25 MB Subject folded into 3-byte lines (a write per line: 100 s);
#   - 1,000,000 parser warnings (a part header of a million 8-bit fields);
#   - a million empty MIME parts; a To: of a million addresses.
# The bounds here are generous (a loaded machine, a sanitizer build); the
# real figures are in `make bench` and doc/PERFORMANCE.md.  Each mail is
# archived whole all the same.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf limits max_message_size 30000000
set_conf crypto sign none
GEN="$VULNID_SRCDIR/test/hostile/gen-hostile.py"
SECS=${VULNID_TEST_HOSTILE_SECS:-30}
RSS_KIB=${VULNID_TEST_HOSTILE_RSS_KIB:-262144}
SAN=0
grep -aq -e __asan_init -e __tsan_init -e __msan_init "$FILTER" && SAN=1

# hostile KIND WANT: the filter on a generated mail exits 0 or 65 within
# the bounds, and the outcome is WANT ("request" or a quarantine reason).
hostile() {
	local kind=$1 want=$2 t0 t1 secs rss got size
	$PYTHON "$GEN" "$kind" "$TMP/$kind.eml" || fail "cannot generate $kind"
	rc=0
	t0=$(date +%s.%N)
	/usr/bin/time -o "$TMP/.time" -f %M "$FILTER" -c "$CONF" -f mallory@example.net \
		-r request@example.org <"$TMP/$kind.eml" 2>"$TMP/.filter.err" || rc=$?
	t1=$(date +%s.%N)
	secs=$($PYTHON -c "print(round($t1 - $t0, 2))")
	rss=$(tail -n 1 "$TMP/.time")
	echo "$kind: exit $rc, $secs s, $rss KiB" >&2
	[ "$rc" = 0 ] || [ "$rc" = 65 ] || fail "$kind: exit $rc: $(cat "$TMP/.filter.err")"
	$PYTHON -c "import sys; sys.exit(0 if $secs < $SECS else 1)" || fail "$kind took $secs s (bound $SECS s)"
	[ "$SAN" = 1 ] || [ "$rss" -lt "$RSS_KIB" ] || fail "$kind: peak RSS $rss KiB (bound $RSS_KIB KiB)"
	got=$(sql "SELECT coalesce((SELECT reason FROM quarantine q WHERE q.message = m.id), m.disposition)
		FROM messages m WHERE m.message_id = 'hostile-$kind@example.net'")
	expect_eq "$want" "$got" "$kind outcome"
	size=$(sql "SELECT b.size FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256
		WHERE m.message_id = 'hostile-$kind@example.net'")
	expect_eq "$(stat -c %s "$TMP/$kind.eml")" "$size" "$kind archived size"
	rm -f "$TMP/$kind.eml"
}

test_expect_success '25 MB of Cc: fields under the limits: seconds, not minutes; answered' '
	hostile cc request
'
test_expect_success 'a 25 MB header line never reaches the parser whole' '
	hostile line header-too-long
'
test_expect_success 'a 25 MB Subject in 3-byte lines' '
	hostile subject header-too-long
'
test_expect_success '1,000,000 parser warnings (a part header of a million fields)' '
	hostile warnings too-many-headers
'
test_expect_success 'a million MIME parts are refused before the parser builds them' '
	hostile parts too-many-parts
'
test_expect_success 'a To: of a million addresses' '
	hostile to header-too-long
'
test_expect_success 'a field over the limit is cut in what the parser sees, the rest is answered' '
	f=$TMP/long-subject.eml &&
	{ printf "From: Mallory <mallory@example.net>\nTo: request@example.org\nMessage-ID: <long-subject@example.net>\n";
	  printf "Subject: %s\n\nProduct: x\n" "$(head -c 70000 /dev/zero | tr "\0" s)"; } >"$f" &&
	snap && deliver_ok "$f" -f mallory@example.net &&
	r=$(new_mail_to mallory@example.net) &&
	s=$(mail_header "$r" Subject) &&
	[ "${#s}" -lt 1000 ] || fail "subject of the reply: ${#s} characters" &&
	expect_match "header field of 700[0-9][0-9] bytes" "$r"
'

test_done
