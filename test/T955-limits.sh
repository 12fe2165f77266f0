#!/bin/bash
# T955-limits: every limit of [limits] in vulnid.conf takes effect when it is
# changed: lowered, it refuses what the default lets through (with the
# configured number in the answer); raised, it lets through what the
# default refuses.  A value outside its range is a configuration error
# (75).  The defaults themselves are tested in T900 (size, header, headers,
# line, parts, depth) and T110 (fields); time_limit in T140.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
SENDER=mallory@example.net

gen() {
	$PYTHON - "$@" <<'PY'
import sys
kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = ("From: Mallory <mallory@example.net>\nTo: request@example.org\n"
        f"Subject: limit {kind} {n}\nMessage-ID: <limit-{kind}-{n}@example.net>\nMIME-Version: 1.0\n")
req = "Product: Limits\n\nDetails.\n"
if kind == "size":
    out = head + "\n" + req + ("z" * 70 + "\n") * (n // 71)
elif kind == "header":
    # one field of n bytes, folded into lines of 74
    field = "X-Long: start"
    while len(field) < n:
        field += "\n " + "h" * 72
    out = head + field + "\n\n" + req
elif kind == "headers":
    out = head + "".join(f"X-H{i}: v\n" for i in range(n)) + "\n" + req
elif kind == "line":
    out = head + "\n" + req + "l" * n + "\n"
elif kind == "parts":
    out = head + 'Content-Type: multipart/mixed; boundary="p"\n\n--p\nContent-Type: text/plain\n\n' + req
    out += "".join(f'--p\nContent-Type: text/plain\nContent-Disposition: attachment; filename="a{i}.txt"\n\n{i}\n'
                   for i in range(n - 2)) + "--p--\n"
elif kind == "depth":
    out = head
    for i in range(n):
        out += f'Content-Type: multipart/mixed; boundary="d{i}"\n\n--d{i}\n'
    out += "Content-Type: text/plain\n\n" + req
    for i in reversed(range(n)):
        out += f"--d{i}--\n"
elif kind == "ids":
    out = head + "\n" + "\n---\n".join(f"Product: P{i}" for i in range(n)) + "\n"
elif kind == "fields":
    out = head + "\n" + "".join(f"Field{i}: v{i}\n" for i in range(n)) + "\nText.\n"
elif kind == "fieldlen":
    out = head + "\nProduct: " + "f" * n + "\n"
open(path, "w").write(out)
PY
}

# outcome FILE: "assigned N", "quarantined REASON", "rejected", "exit N"
outcome() {
	local m0 e0 q0
	m0=$(sql "SELECT count(*) FROM messages")
	e0=$(sql "SELECT count(*) FROM entries")
	q0=$(sql "SELECT count(*) FROM quarantine")
	deliver "$1" -f "$SENDER"
	if [ "$rc" != 0 ]; then echo "exit $rc"; return; fi
	if [ "$(sql "SELECT count(*) FROM quarantine")" != "$q0" ]; then
		echo "quarantined $(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")"
	elif [ "$(sql "SELECT count(*) FROM entries")" != "$e0" ]; then
		echo "assigned $(( $(sql "SELECT count(*) FROM entries") - e0 ))"
	else
		echo "$(sql "SELECT disposition FROM messages ORDER BY id DESC LIMIT 1")"
	fi
}

# limit KEY VALUE KIND SIZE EXPECTED [PATTERN]: with [limits] KEY = VALUE,
# a generated KIND mail of SIZE gets EXPECTED; PATTERN must be in what the
# robot recorded (quarantine detail or rejection reason).
limit() {
	local key=$1 value=$2 kind=$3 n=$4 want=$5 pattern=${6:-} got
	set_conf limits "$key" "$value" || return 1
	gen "$kind" "$TMP/$kind-$n.eml" "$n" || return 1
	got=$(outcome "$TMP/$kind-$n.eml")
	set_conf limits "$key" "$DEFAULT" || return 1
	expect_eq "$want" "$got" "$key = $value, $kind $n" || return 1
	if [ -n "$pattern" ]; then
		sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1; SELECT line FROM audit ORDER BY seq DESC LIMIT 5" >"$TMP/said"
		cat "$TMP/.filter.err" >>"$TMP/said"
		expect_match "$pattern" "$TMP/said" || return 1
	fi
}

default_of() { sed -n "s/^$1 = //p" "$CONF"; }

test_expect_success 'max_message_size lowered to 2048: a 3000-byte mail gets 65' '
	DEFAULT=$(default_of max_message_size) &&
	limit max_message_size 2048 size 3000 "exit 65" "the limit is 2048 bytes" &&
	limit max_message_size 2048 size 1500 "assigned 1"
'
test_expect_success 'max_header_size lowered to 1024: a 1500-byte field is refused' '
	DEFAULT=$(default_of max_header_size) &&
	limit max_header_size 1024 header 1500 "quarantined header-too-long" "the limit is 1024" &&
	limit max_header_size 1024 header 900 "assigned 1"
'
test_expect_success 'max_header_size raised to 200000: a 100000-byte field passes' '
	DEFAULT=$(default_of max_header_size) &&
	limit max_header_size 200000 header 100000 "assigned 1"
'
test_expect_success 'max_headers lowered to 20: 30 fields are refused' '
	DEFAULT=$(default_of max_headers) &&
	limit max_headers 20 headers 30 "quarantined too-many-headers" "the limit is 20" &&
	limit max_headers 20 headers 10 "assigned 1"
'
test_expect_success 'max_headers raised to 3000: 1500 fields pass (the default refuses them)' '
	DEFAULT=$(default_of max_headers) &&
	limit max_headers 3000 headers 1500 "assigned 1" &&
	limit max_headers "$DEFAULT" headers 1501 "quarantined too-many-headers"
'
test_expect_success 'max_line_length lowered to 1000: a 1500-byte line is refused' '
	DEFAULT=$(default_of max_line_length) &&
	limit max_line_length 1000 line 1500 "quarantined line-too-long" "the limit is 1000" &&
	limit max_line_length 1000 line 900 "assigned 1"
'
test_expect_success 'max_line_length raised to 300000: a 200000-byte line passes' '
	DEFAULT=$(default_of max_line_length) &&
	limit max_line_length 300000 line 200000 "assigned 1"
'
test_expect_success 'max_parts lowered to 3: 5 parts are refused' '
	DEFAULT=$(default_of max_parts) &&
	limit max_parts 3 parts 5 "quarantined too-many-parts" "more than 3 MIME parts" &&
	limit max_parts 3 parts 3 "assigned 1"
'
test_expect_success 'max_depth lowered to 2: nesting 4 deep is refused' '
	DEFAULT=$(default_of max_depth) &&
	limit max_depth 2 depth 4 "quarantined nesting" "more than 2 levels" &&
	limit max_depth 2 depth 2 "assigned 1"
'
test_expect_success 'max_depth raised to 40: nesting 30 deep passes (the default refuses it)' '
	DEFAULT=$(default_of max_depth) &&
	limit max_depth 40 depth 30 "assigned 1" &&
	limit max_depth "$DEFAULT" depth 31 "quarantined nesting"
'
test_expect_success 'max_ids lowered to 2: three blocks are rejected' '
	DEFAULT=$(default_of max_ids) &&
	limit max_ids 2 ids 3 rejected "3 identifiers requested in one mail; at most 2" &&
	limit max_ids 2 ids 2 "assigned 2"
'
test_expect_success 'max_ids raised to 30: 25 blocks get 25 identifiers (the default refuses)' '
	DEFAULT=$(default_of max_ids) &&
	limit max_ids 30 ids 25 "assigned 25" &&
	limit max_ids "$DEFAULT" ids 26 rejected
'
test_expect_success 'max_fields lowered to 2: three fields are rejected' '
	DEFAULT=$(default_of max_fields) &&
	limit max_fields 2 fields 3 rejected "more than 2 fields" &&
	limit max_fields 2 fields 2 "assigned 1"
'
test_expect_success 'max_field_length lowered to 16: a 20-character value is rejected' '
	DEFAULT=$(default_of max_field_length) &&
	limit max_field_length 16 fieldlen 20 rejected "longer than 16 characters" &&
	limit max_field_length 16 fieldlen 16 "assigned 1"
'
test_expect_success 'max_field_length raised to 5000: a 3000-character value passes' '
	DEFAULT=$(default_of max_field_length) &&
	limit max_field_length 5000 fieldlen 3000 "assigned 1" &&
	limit max_field_length "$DEFAULT" fieldlen 3001 rejected
'

check_range() {
	local key=$1 bad=$2 def
	def=$(default_of "$key")
	set_conf limits "$key" "$bad"
	request_mail_range "$TMP/range-$key.eml" "$key"
	deliver "$TMP/range-$key.eml"
	set_conf limits "$key" "$def"
	expect_eq 75 "$rc" "$key = $bad" || return 1
	expect_match "$key" "$TMP/.filter.err" || return 1
}
request_mail_range() { printf 'Product: R\n' | write_mail "$1" "Message-ID: <range-$2@example.net>"; }

test_expect_success 'a limit outside its range is a configuration error (75, naming the key)' '
	check_range max_message_size 10 &&
	check_range max_header_size 100 &&
	check_range max_headers 5 &&
	check_range max_line_length 10 &&
	check_range max_parts 0 &&
	check_range max_depth 0 &&
	check_range max_ids 0 &&
	check_range max_fields 0 &&
	check_range max_field_length 3 &&
	check_range time_limit 0 &&
	check_range max_parts many
'

test_expect_success 'every limit is documented in vulnid.conf(5) and commented in vulnid.conf' '
	for key in max_message_size max_header_size max_headers max_line_length max_parts \
		max_depth max_ids max_fields max_field_length time_limit; do
		grep -q "$key" "$VULNID_SRCDIR/doc/vulnid.conf.5" || fail "$key not in vulnid.conf(5)"
		grep -B3 "^$key = " "$CONF" | grep -q "^#" || fail "$key has no comment in vulnid.conf"
	done
'

test_expect_success 'audit verify' '"$VULNID" -c "$CONF" audit verify'

test_done
