#!/bin/bash
# T900-malformed.sh - hostile and malformed mail end to end: every mail of
# test/corpora/malformed and a set of pathological mails generated here is
# archived, quarantined once, answered with an error reply naming the
# problem, and assigned no identifier; the filter exits 0 for all of them
# and 65 (nothing kept) only for a mail over the size limit.

. "$(dirname "$0")/test-lib.sh"

MALFORMED="$CORPORA/malformed"
SENDER=mallory@example.net
QMAP="$TMP/qmap"	# "quarantine-id<TAB>file" of every quarantined mail
: >"$QMAP"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }

# Note: test_expect_success runs its commands as the condition of an "if",
# where bash ignores "set -e" (also inside functions and subshells), so a
# failing assertion would not end a case.  Every assertion here therefore
# ends its case itself ("|| return 1"), and each case is one function call.

# new_sent BEFORE: the mails in $INST/sent/new that are not listed in BEFORE.
new_sent() {
	sent_files | sort >"$TMP/.sent.after"
	comm -13 "$1" "$TMP/.sent.after"
}

# expect_quarantined FILE REASON PATTERN [filter options]: FILE is accepted
# (exit 0), archived byte for byte, quarantined once with REASON (empty:
# any), no entry is made, and one error reply whose body matches PATTERN
# goes to $SENDER (PATTERN empty: no reply is possible, none may be sent).
expect_quarantined() {
	local file=$1 reason=$2 pattern=$3
	local q0 e0 m0 qid sha got new to
	shift 3
	q0=$(sql "SELECT count(*) FROM quarantine")
	e0=$(sql "SELECT count(*) FROM entries")
	m0=$(sql "SELECT count(*) FROM messages")
	sent_files | sort >"$TMP/.sent.before"

	deliver_ok "$file" "$@" || return 1
	[ ! -s "$TMP/.filter.err" ] || fail "unexpected stderr: $(head -c 500 "$TMP/.filter.err")" || return 1

	expect_eq "$e0" "$(sql "SELECT count(*) FROM entries")" "entries (no identifier assigned)" || return 1
	expect_eq $((m0 + 1)) "$(sql "SELECT count(*) FROM messages")" "messages rows" || return 1
	expect_eq $((q0 + 1)) "$(sql "SELECT count(*) FROM quarantine")" "quarantine rows" || return 1
	qid=$(sql "SELECT id FROM quarantine ORDER BY id DESC LIMIT 1")
	printf '%s\t%s\n' "$qid" "$file" >>"$QMAP"
	got=$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")
	[ -n "$got" ] || fail "empty quarantine reason" || return 1
	[ -z "$reason" ] || expect_eq "$reason" "$got" "quarantine reason" || return 1
	[ -n "$(sql "SELECT detail FROM quarantine WHERE id = $qid")" ] || fail "empty quarantine detail" || return 1

	# The raw message is archived, exactly as it came.
	sha=$(sha256sum <"$file" | cut -d' ' -f1)
	expect_eq "$sha" "$(sql "SELECT m.raw_sha256 FROM quarantine q JOIN messages m ON m.id = q.message WHERE q.id = $qid")" \
		"messages.raw_sha256" || return 1
	expect_eq 1 "$(sql "SELECT count(*) FROM blobs WHERE sha256 = '$sha' AND size = $(wc -c <"$file")")" \
		"archived blob" || return 1
	expect_eq 1 "$(sql "SELECT count(*) FROM quarantine q JOIN messages m ON m.id = q.message WHERE m.raw_sha256 = '$sha'")" \
		"quarantine rows for this mail" || return 1

	# The sender is told what to fix.
	new=$(new_sent "$TMP/.sent.before")
	if [ -z "$pattern" ]; then
		expect_eq "" "$new" "replies (there is no sender to answer)" || return 1
	else
		[ -n "$new" ] || fail "no error reply in $INST/sent/new" || return 1
		expect_eq 1 "$(printf '%s\n' "$new" | wc -l | tr -d ' ')" "replies" || return 1
		to=$(mail_header "$new" To)
		case "$to" in
		"$SENDER" | *"<$SENDER>") ;;
		*) fail "reply goes to '$to', not $SENDER"; return 1 ;;
		esac
		mail_header "$new" Subject >"$TMP/.subject"
		expect_match '\[not processed\]' "$TMP/.subject" || return 1
		mail_body "$new" >"$TMP/.body"
		expect_match_text 'could not be read as a request' "$TMP/.body" || return 1
		expect_match "$pattern" "$TMP/.body" || return 1
	fi

	# Last, as it is a bookkeeping slip rather than a safety problem.
	expect_eq quarantined "$(sql "SELECT m.disposition FROM quarantine q JOIN messages m ON m.id = q.message WHERE q.id = $qid")" \
		"messages.disposition" || return 1
}

# --- the corpus ---------------------------------------------------------

# file  expected reason  pattern the error reply must match
while read -r name reason pattern; do
	case "$name" in '' | '#'*) continue ;; esac
	echo "$name" >>"$TMP/checked"
	[ -f "$MALFORMED/$name" ] || { test_expect_success "corpus: $name" "fail 'missing $MALFORMED/$name'"; continue; }
	test_expect_success "corpus: $name is quarantined ($reason) and answered" \
		"expect_quarantined '$MALFORMED/$name' '$reason' '$pattern'"
done <<'EOF'
01-truncated-multipart.eml		truncated		truncated
02-multipart-no-boundary.eml		malformed-mime		without a boundary parameter
03-boundary-never-occurs.eml		truncated		truncated|boundary
04-base64-invalid-chars.eml		bad-base64		not base64
05-nul-in-body.eml			nul-bytes		NUL bytes
06-nul-in-header.eml			nul-bytes		header contains NUL bytes
07-invalid-header-name.eml		malformed-header	invalid header name.*Bad Header Name
08-part-without-headers-or-content.eml	malformed-header	without headers or content
09-octet-stream-only.eml		no-text			no text/plain or text/html part
10-conflicting-content-type.eml		malformed-header	conflicting Content-Type headers
11-multipart-encrypted.eml		decrypt-failed		could not be decrypted
12-conflicting-boundary-parameter.eml	malformed-mime		given twice.*boundary
13-inline-pgp-encrypted.eml		decrypt-failed		could not be decrypted
14-nul-in-base64-text.eml		nul-bytes		NUL bytes
EOF

check_corpus_covered() {
	local f
	[ -n "$(ls "$MALFORMED"/*.eml)" ] || fail "no mails in $MALFORMED" || return 1
	for f in "$MALFORMED"/*.eml; do
		grep -Fxq "$(basename "$f")" "$TMP/checked" || fail "$(basename "$f") has no test case" || return 1
	done
}
test_expect_success 'every corpus mail has a test case' check_corpus_covered

# --- generated at run time --------------------------------------------------

# gen KIND FILE: write a pathological mail.
gen() {
	$PYTHON - "$1" "$2" <<'PY'
import sys, random
kind, path = sys.argv[1:]
def head(extra=""):
    return ("From: Mallory <mallory@example.net>\nTo: request@example.org\n"
            f"Subject: generated {kind}\nDate: Mon, 01 Jan 2024 10:00:00 +0000\n"
            f"Message-ID: <generated-{kind}@example.net>\n{extra}")
req = "Title: Overflow in frobnicate()\nProduct: frob 1.2\n\nDetails follow.\n"
out = []
if kind == "headers":
    out.append(head())
    out.extend(f"X-Header-{i}: value {i}\n" for i in range(10000))
    out.append("\n" + req)
elif kind == "longheader":
    out.append(head())
    h = "X-Long: start"
    while len(h) < 70000:
        h += "\n " + "a" * 72
    out.append(h + "\n\n" + req)
elif kind == "nesting":
    out.append(head("MIME-Version: 1.0\n"))
    for i in range(40):
        out.append(f'Content-Type: multipart/mixed; boundary="n{i}"\n\n--n{i}\n')
    out.append("Content-Type: text/plain\n\n" + req)
    for i in reversed(range(40)):
        out.append(f"\n--n{i}--\n")
elif kind == "parts":
    out.append(head('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="p"\n\n'))
    out.append("--p\nContent-Type: text/plain\n\n" + req)
    for i in range(599):
        out.append(f'\n--p\nContent-Type: text/plain\nContent-Disposition: attachment; filename="p{i}.txt"\n\npart {i}\n')
    out.append("\n--p--\n")
elif kind == "longline":
    out.append(head() + "\n" + req + "x" * 200000 + "\n")
elif kind == "huge":
    out.append(head() + "\n" + req)
    line = "y" * 75 + "\n"
    out.append(line * (30 * 1024 * 1024 // len(line) + 1))
elif kind == "garbage":
    random.seed(900)
    open(path, "wb").write(random.randbytes(4096))
    sys.exit(0)
open(path, "w").write("".join(out))
PY
}

# kind  expected reason  pattern the error reply must match.  The envelope
# sender is given (-f), as an MTA does: mail refused before its header is
# parsed can only be answered through it.
while read -r kind reason pattern; do
	test_expect_success "generated: $kind is quarantined ($reason) and answered" \
		"gen $kind \"\$TMP/$kind.eml\" && expect_quarantined \"\$TMP/$kind.eml\" '$reason' '$pattern' -f $SENDER"
done <<'EOF'
headers		too-many-headers	10005 header fields \(the limit is 1000\)
longheader	header-too-long		a header field of [0-9]{5} bytes \(the limit is 65536\)
nesting		nesting			nested
parts		too-many-parts		more than 500 MIME parts
longline	line-too-long		a line of 200000 bytes \(the limit is 65536\)
EOF

check_longheader_shape() {
	[ "$(wc -c <"$TMP/longheader.eml")" -gt 70000 ] || fail "longheader.eml is too short" || return 1
	expect_eq 1 "$(grep -c "^X-Long:" "$TMP/longheader.eml")" "X-Long fields" || return 1
	expect_eq 0 "$(awk 'length($0) > 998' "$TMP/longheader.eml" | wc -l | tr -d ' ')" "over-long lines" || return 1
}
test_expect_success 'generated: the 70,000-byte header is one folded field' check_longheader_shape

check_huge() {
	local m0 q0 b0 a0 o0
	gen huge "$TMP/huge.eml" || return 1
	[ "$(wc -c <"$TMP/huge.eml")" -gt $((30 * 1024 * 1024)) ] || fail "huge.eml is too small" || return 1
	m0=$(sql "SELECT count(*) FROM messages")
	q0=$(sql "SELECT count(*) FROM quarantine")
	b0=$(sql "SELECT count(*) FROM blobs")
	a0=$(sql "SELECT count(*) FROM audit")
	o0=$(sql "SELECT count(*) FROM outbox")
	sent_files | sort >"$TMP/.sent.before"
	deliver "$TMP/huge.eml" -f $SENDER
	rm -f "$TMP/huge.eml"
	expect_eq 65 "$rc" "exit status" || return 1
	expect_eq 1 "$(wc -l <"$TMP/.filter.err" | tr -d ' ')" "stderr lines" || return 1
	expect_match "too large" "$TMP/.filter.err" || return 1
	expect_eq "$m0" "$(sql "SELECT count(*) FROM messages")" "messages rows" || return 1
	expect_eq "$q0" "$(sql "SELECT count(*) FROM quarantine")" "quarantine rows" || return 1
	expect_eq "$b0" "$(sql "SELECT count(*) FROM blobs")" "blobs" || return 1
	expect_eq "$a0" "$(sql "SELECT count(*) FROM audit")" "audit rows" || return 1
	expect_eq "$o0" "$(sql "SELECT count(*) FROM outbox")" "outbox rows" || return 1
	expect_eq "" "$(new_sent "$TMP/.sent.before")" "replies" || return 1
	expect_eq "" "$(ls -A "$INST/tmp")" "spool leftovers" || return 1
}
test_expect_success 'generated: a 30 MiB mail is refused with exit 65, nothing kept' check_huge

check_garbage() {
	gen garbage "$TMP/garbage.eml" || return 1
	expect_eq 4096 "$(wc -c <"$TMP/garbage.eml" | tr -d ' ')" "size" || return 1
	expect_quarantined "$TMP/garbage.eml" "" ""
}
test_expect_success 'generated: random bytes are quarantined, no reply, no crash' check_garbage

# --- the same mail twice ------------------------------------------------------

# expect_duplicate FILE: delivered again, FILE is recognised and not kept,
# quarantined or answered a second time.
expect_duplicate() {
	local f=$1 m0 q0 o0 d0 sha
	local dup="SELECT count(*) FROM audit WHERE line LIKE '%\"event\":\"duplicate\"%'"
	m0=$(sql "SELECT count(*) FROM messages")
	q0=$(sql "SELECT count(*) FROM quarantine")
	o0=$(sql "SELECT count(*) FROM outbox")
	d0=$(sql "$dup")
	sent_files | sort >"$TMP/.sent.before"
	deliver_ok "$f" || return 1
	expect_eq "$m0" "$(sql "SELECT count(*) FROM messages")" "messages rows" || return 1
	expect_eq "$q0" "$(sql "SELECT count(*) FROM quarantine")" "quarantine rows" || return 1
	expect_eq "$o0" "$(sql "SELECT count(*) FROM outbox")" "outbox rows" || return 1
	expect_eq $((d0 + 1)) "$(sql "$dup")" "duplicate events" || return 1
	expect_eq "" "$(new_sent "$TMP/.sent.before")" "replies" || return 1
	sha=$(sha256sum <"$f" | cut -d' ' -f1)
	expect_eq 1 "$(sql "SELECT count(*) FROM quarantine q JOIN messages m ON m.id = q.message WHERE m.raw_sha256 = '$sha'")" \
		"quarantine rows for $(basename "$f")" || return 1
}
test_expect_success 'a malformed mail delivered twice is quarantined once' \
	'expect_duplicate "$MALFORMED/01-truncated-multipart.eml"'
test_expect_success 'a mail refused before parsing, delivered twice, is quarantined once' \
	'expect_duplicate "$MALFORMED/06-nul-in-header.eml"'

# --- afterwards -------------------------------------------------------------

check_no_entries() {
	expect_eq 0 "$(sql "SELECT count(*) FROM entries")" "entries" || return 1
	expect_eq 0 "$(sql "SELECT count(*) FROM records")" "records" || return 1
}
test_expect_success 'no identifier was assigned at all' check_no_entries

test_expect_success 'audit verify' '"$VULNID" -c "$CONF" audit verify'

check_list() {
	local qid file
	"$VULNID" -c "$CONF" quarantine list >"$TMP/qlist" || fail "quarantine list failed" || return 1
	expect_eq "$(sql "SELECT count(*) FROM quarantine")" "$(wc -l <"$TMP/qlist" | tr -d ' ')" "lines" || return 1
	while IFS='	' read -r qid file; do
		grep -Eq "^$qid  " "$TMP/qlist" || fail "quarantine $qid ($(basename "$file")) not listed" || return 1
	done <"$QMAP"
}
test_expect_success 'quarantine list lists every quarantined mail' check_list

check_show() {
	local qid file n=0
	while IFS='	' read -r qid file; do
		n=$((n + 1))
		"$VULNID" -c "$CONF" quarantine show "$qid" >"$TMP/qshow" ||
			fail "quarantine show $qid failed" || return 1
		expect_match "^quarantine: +$qid\$" "$TMP/qshow" || return 1
		expect_match "^reason: +$(sql "SELECT reason FROM quarantine WHERE id = $qid")\$" "$TMP/qshow" || return 1
		expect_match "^sha256: +$(sha256sum <"$file" | cut -d' ' -f1)\$" "$TMP/qshow" || return 1
		"$VULNID" -c "$CONF" quarantine show "$qid" --raw >"$TMP/qraw" ||
			fail "quarantine show $qid --raw failed" || return 1
		cmp "$file" "$TMP/qraw" || fail "quarantine show $qid --raw differs from $(basename "$file")" || return 1
	done <"$QMAP"
	[ "$n" -gt 0 ] || fail "nothing was quarantined" || return 1
	echo "checked $n quarantined mails"
}
test_expect_success 'quarantine show N and show N --raw give back each mail' check_show

test_done
