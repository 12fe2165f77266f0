#!/bin/bash
# T180-query-plans: what a mail costs must not grow with what the robot has
# seen.  Every statement that the filter, vulnid-lmtpd (and its delivery
# agent) and a queue run compile on a mail's path is looked at through
# SQLite's EXPLAIN QUERY PLAN (VULNID_TEST_QUERY_PLANS, written by the
# database layer): none reads a table of history whole (SCAN), the hour of
# messages (the index on received alone: the rate limits count per minute),
# or the backlog of the outbox (the index on status alone: the due query
# reads its own partial index up to its LIMIT).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"

[ -x "$SMTP_SINK" ] || { test_skip "query plans" "smtp-sink not installed"; test_done; }

make_instance inst
start_sink sink
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 2
export VULNID_TEST_QUERY_PLANS="$TMP/plans"

# req N [FROM]: a new request
req() {
	printf "Product: P%s\n" "$1" | write_mail "$TMP/q$1.eml" "Message-ID: <q$1@example.net>" "From: ${2:-user$1@example.net}"
}

test_expect_success 'the filter: requests, a duplicate, a limited sender, an addition' '
	for i in 1 2 3; do req $i && deliver_ok "$TMP/q$i.eml" -a 192.0.2.7 || return 1; done &&
	deliver_ok "$TMP/q1.eml" &&
	for i in 4 5 6; do req $i flood@example.net && deliver_ok "$TMP/q$i.eml" || return 1; done &&
	expect_eq rate-limit "$(sql "SELECT reason FROM quarantine")" &&
	id=$(sql "SELECT id FROM entries ORDER BY number LIMIT 1") &&
	printf "Version: 2\n" | write_mail "$TMP/add.eml" "Message-ID: <add@example.net>" "From: user1@example.net" &&
	deliver_ok "$TMP/add.eml" -r "request+$id@example.org" &&
	test -s "$TMP/plans"
'

test_expect_success 'vulnid-lmtpd and its delivery agent' '
	before=$(sink_count) &&
	for i in 7 8 9; do req $i || return 1; done &&
	start_lmtpd &&
	for i in 7 8 9; do lmtp "$TMP/q$i.eml" --from "user$i@example.net" --to request@example.org || return 1; done &&
	wait_until sh -c "test \$(ls \"$SINK_DIR\" | wc -l) -ge $((before + 3))" &&
	stop_lmtpd
'

# The plans of statements other than INSERT (whose plans list the checks of
# a REPLACE, which these never make), the steps that read history.
bad_plans() {
	grep -P "^PLAN\t" "$TMP/plans" | grep -vP "^PLAN\t[^\t]*\tINSERT " |
		grep -E "^PLAN	(SCAN (messages|outbox|outbox_recipients|mail_ledger|rate_counts|signatures|tokens|records|entries|decrypted|quarantine|bounces|blobs|audit)( |	)|SEARCH messages USING (COVERING )?INDEX messages_received |SEARCH outbox USING (COVERING )?INDEX outbox_due \(status=\?\)	)" |
		sort -u
}

test_expect_success 'no statement of a mail path reads history without a key' '
	grep -q "INDEXED BY outbox_pending" "$TMP/plans" &&
	grep -q "FROM rate_counts" "$TMP/plans" &&
	bad_plans >"$TMP/bad" &&
	{ test ! -s "$TMP/bad" || fail "$(cat "$TMP/bad")"; }
'

test_done
