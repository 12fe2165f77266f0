#!/bin/bash
# T560-robot-loop: two real robots answer each other through their
# Maildirs, with every header that marks automatic mail stripped on the way
# (Auto-Submitted, X-Loop, Precedence, In-Reply-To, References, List-*) and
# the envelope sender rewritten to the From address (as a forwarder would):
# each recognises its own mail quoted back (its [ID] tags, Message-IDs,
# signature line) and answers the other at most [policy] loop_answers
# times, so the exchange stops by itself after a few mails (it ran to the
# hourly rate limit, 600 mails, and started again the next hour).
. "$(dirname "$0")/test-lib.sh"

A="$TMP/alpha"
B="$TMP/beta"
"$VULNID" init --prefix ALPHA --domain alpha.example "$A" >/dev/null 2>&1 &&
	"$VULNID" init --prefix BETA --domain beta.example "$B" >/dev/null 2>&1 ||
	{ echo "Bail out! cannot create the instances"; exit 1; }
for i in "$A" "$B"; do
	CONF="$i/vulnid.conf" set_conf crypto sign none
	CONF="$i/vulnid.conf" set_conf policy loop_answers 3
done
mkdir -p "$TMP/seen"

# pass FROM TO: every mail FROM's robot wrote to TO's request addresses and
# that was not passed on yet goes to TO's filter, stripped; prints how many
pass() {
	local from=$1 to=$2 f n=0 rcpt dom
	dom=$(sed -n 's/^domain = //p' "$to/vulnid.conf")
	for f in "$from"/sent/new/*; do
		[ -e "$f" ] || continue
		[ -e "$TMP/seen/$(basename "$f")" ] && continue
		touch "$TMP/seen/$(basename "$f")"
		rcpt=$(mail_header "$f" To | grep -Eio "request(\+[^@>]*)?@$dom" | head -n 1)
		[ -n "$rcpt" ] || continue
		$PYTHON - "$f" "$TMP/hop.eml" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.compat32)
for h in ("Auto-Submitted", "X-Loop", "Precedence", "In-Reply-To", "References", "List-Id",
          "List-Unsubscribe", "Return-Path"):
    del m[h]
open(sys.argv[2], "wb").write(m.as_bytes())
PY
		"$FILTER" -c "$to/vulnid.conf" -f "$(sed -n 's/^domain = //p' "$from/vulnid.conf" | sed 's/^/request@/')" \
			-r "$rcpt" <"$TMP/hop.eml" 2>>"$TMP/filter.err" || { echo "filter failed" >&2; return 1; }
		n=$((n + 1))
	done
	echo "$n"
}

test_expect_success 'a mail to alpha from beta'\''s address starts the exchange' '
	write_mail "$TMP/seed.eml" "From: <request@beta.example>" "To: request@alpha.example" \
		"Subject: Overflow in the loop" <<<"Product: Loop" &&
	"$FILTER" -c "$A/vulnid.conf" -f request@beta.example <"$TMP/seed.eml" &&
	expect_eq 1 "$(sqlite3 "$A/vulnid.db" "SELECT count(*) FROM entries")"
'

test_expect_success 'the robots stop answering each other within the bound' '
	total=0 rounds=0
	while [ $rounds -lt 30 ]; do
		ab=$(pass "$A" "$B") && ba=$(pass "$B" "$A") || fail "a filter failed: $(cat "$TMP/filter.err")"
		total=$((total + ab + ba)); rounds=$((rounds + 1))
		[ $((ab + ba)) -eq 0 ] && break
	done
	echo "# $total mails in $rounds rounds" >&2
	[ $((ab + ba)) -eq 0 ] || fail "still exchanging after $rounds rounds ($total mails)"
	[ "$total" -le 10 ] || fail "$total mails exchanged (bound: 2 x (loop_answers + 2))"
'

test_expect_success 'the first robot to reach loop_answers braked, and said why' '
	cat "$A/audit.log" "$B/audit.log" | grep "\"event\":\"loop-brake\"" >"$TMP/brakes" &&
	test -s "$TMP/brakes" &&
	expect_match "\"reason\":\"(its Subject carries an \[ID\] tag of the robot|it quotes [^\"]*)\"" "$TMP/brakes" &&
	for i in "$A" "$B"; do
		n=$(sqlite3 "$i/vulnid.db" "SELECT count(*) FROM mail_ledger WHERE class = '\''answer'\'' AND suspect = 1")
		[ "$n" -le 3 ] || fail "$i answered $n suspect mails (loop_answers 3)"
	done
'

test_expect_success 'what came after the brake is recorded all the same' '
	test "$(sqlite3 "$A/vulnid.db" "SELECT count(*) FROM messages")" -gt \
		"$(sqlite3 "$A/vulnid.db" "SELECT count(*) FROM mail_ledger WHERE kind IN ('\''ack'\'', '\''entry-reply'\'')")"
'

test_expect_success 'a person writing to the robot is still answered' '
	write_mail "$TMP/human.eml" "From: <human@r.net>" "To: request@alpha.example" <<<"Product: Human" &&
	n0=$(ls "$A/sent/new" | wc -l) &&
	"$FILTER" -c "$A/vulnid.conf" -f human@r.net <"$TMP/human.eml" &&
	expect_eq $((n0 + 1)) "$(ls "$A/sent/new" | wc -l)"
'

test_done
