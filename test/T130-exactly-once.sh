#!/bin/bash
# T130-exactly-once: redelivery, concurrency and kill -9 never give a second ID
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)

write_mail "$TMP/req.eml" "Message-ID: <same@example.net>" "Subject: once" <<'MAIL'
Product: Once
MAIL

test_expect_success 'the same message twice: one ID, one reply, audited duplicate' '
	deliver_ok "$TMP/req.eml" &&
	deliver_ok "$TMP/req.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox")" &&
	expect_eq 1 "$(sent_count)" &&
	expect_match "\"event\":\"duplicate\",\"id\":null,\"message_id\":\"same@example.net\"" "$INST/audit.log"
'

test_expect_success 'a redelivery with new trace headers is still a duplicate' '
	{ printf "Received: from relay.example by mx.example.org; %s\nDelivered-To: request@example.org\n" "$(date -R)"; cat "$TMP/req.eml"; } >"$TMP/again.eml" &&
	deliver_ok "$TMP/again.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'the same Message-ID with another body is a new request' '
	sed "s/Product: Once/Product: Twice/" "$TMP/req.eml" >"$TMP/other.eml" &&
	deliver_ok "$TMP/other.eml" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'without a Message-ID, identical header and body are one message' '
	printf "From: a@example.net\nTo: request@example.org\nSubject: no id\nDate: Thu, 03 Dec 2026 06:00:00 +0000\n\nProduct: NoID\n" >"$TMP/noid.eml" &&
	deliver_ok "$TMP/noid.eml" && deliver_ok "$TMP/noid.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM records WHERE fields LIKE '\''%NoID%'\''")"
'

test_expect_success '16 filters at once get 16 distinct IDs without gaps' '
	make_instance par &&
	set_conf policy unverified_answer_bytes 0 &&	# one sender, an ack each
	for i in $(seq 1 16); do
		printf "Product: P%s\n" "$i" | write_mail "$TMP/par$i.eml" "Message-ID: <par$i@example.net>"
	done &&
	pids="" &&
	for i in $(seq 1 16); do
		"$FILTER" -c "$CONF" <"$TMP/par$i.eml" >/dev/null 2>"$TMP/par$i.err" & pids="$pids $!"
	done &&
	for p in $pids; do wait "$p" || fail "a filter failed: $(cat "$TMP"/par*.err)"; done &&
	expect_eq 16 "$(sql "SELECT count(DISTINCT id) FROM entries")" &&
	expect_eq "1 16" "$(sql "SELECT min(number) || \" \" || max(number) FROM entries")" &&
	expect_eq 16 "$(sql "SELECT count(DISTINCT message) FROM entries")" &&
	expect_eq 16 "$(sent_count)" &&
	"$VULNID" -c "$CONF" audit verify
'

test_expect_success 'kill -9 at random points of 200 deliveries: each assigned exactly once' '
	make_instance crash &&
	set_conf policy unverified_answer_bytes 0 &&	# one sender, an ack each
	n=200 &&
	for i in $(seq 1 $n); do
		printf "Product: C%s\n" "$i" | write_mail "$TMP/c$i.eml" "Message-ID: <crash$i@example.net>"
	done &&
	RANDOM=42 &&
	killed=0 &&
	for i in $(seq 1 $n); do
		"$FILTER" -c "$CONF" <"$TMP/c$i.eml" >/dev/null 2>&1 & pid=$!
		sleep "0.0$(printf %02d $((RANDOM % 25)))"
		kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
		wait "$pid" 2>/dev/null
		tries=0
		until "$FILTER" -c "$CONF" <"$TMP/c$i.eml" >/dev/null 2>"$TMP/c.err"; do
			tries=$((tries + 1))
			[ $tries -lt 10 ] || fail "message $i never succeeded: $(cat "$TMP/c.err")"
		done
	done &&
	echo "killed $killed of $n" &&
	test "$killed" -gt 20 &&
	expect_eq $n "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq $n "$(sql "SELECT count(DISTINCT message) FROM entries")" &&
	expect_eq $n "$(sql "SELECT count(*) FROM messages")" &&
	expect_eq "1 $n" "$(sql "SELECT min(number) || \" \" || max(number) FROM entries")" &&
	expect_eq $n "$(sql "SELECT count(*) FROM outbox")" &&
	"$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq $n "$(sent_count)" "acks delivered exactly once" &&
	expect_eq ok "$(sql "PRAGMA integrity_check")" &&
	"$VULNID" -c "$CONF" audit verify
'

test_done
