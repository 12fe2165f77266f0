#!/bin/bash
# T851-lmtp-groups: concurrent sessions commit in groups (fewer syncs than
# mails, identifiers dense and unique), a mail that fails inside a group
# is rolled back alone, and a mail's deadline answers 451 without
# stopping the server.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
Y=$(date -u +%Y)
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)

make_instance inst
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 0
set_conf lifecycle rate_network_per_hour 0
set_conf lifecycle rate_domain_per_hour 0
set_conf policy loop_answers 100000
# one sender, hundreds of mails: no answer budget either
set_conf policy unverified_answer_bytes 0
start_lmtpd || exit 1

# hold_lock SECONDS: another process holds the database's write lock.
hold_lock() {
	{ echo "BEGIN IMMEDIATE;"; sleep "$1"; echo "COMMIT;"; } | sqlite3 "$INST/vulnid.db" &
	LOCK_PID=$!
	sleep 0.3
}

if [ -x "$SMTP_SOURCE" ]; then
test_expect_success '8 sessions at once with smtp-source -L: one entry per mail, numbers dense and unique, fewer syncs than mails' '
	"$SMTP_SOURCE" -L -d -s 8 -m 200 -l 2048 -f r@example.net -t request@example.org "unix:$INST/lmtp.sock" \
		>"$TMP/source.out" 2>&1 || fail "smtp-source: $(cat "$TMP/source.out")"
	expect_eq "200|200|1|200|200" "$(sql "SELECT count(*) || '\''|'\'' || count(DISTINCT id) || '\''|'\'' || min(number) || '\''|'\'' || max(number) || '\''|'\'' || count(DISTINCT message) FROM entries")"
	wait_until sent_is 200 || fail "$(sent_count) acks in sent/"
	stop_lmtpd
	expect_match "stopped: 200 mails in [0-9]+ commits, [0-9]+ syncs" "$TMP/lmtpd.err"
	syncs=$(sed -n "s/.*stopped: 200 mails in [0-9]* commits, \([0-9]*\) syncs/\1/p" "$TMP/lmtpd.err")
	echo "# $(grep stopped "$TMP/lmtpd.err")" >&2
	test "$syncs" -lt 200 || fail "$syncs syncs for 200 mails"
'
else
	test_skip "8 sessions at once with smtp-source" "smtp-source is not installed (Debian package postfix)"
fi

test_expect_success 'blocks run out inside a group: those mails get 451 alone, the others commit; new blocks serve the retries' '
	make_instance small
	set_conf crypto sign none
	set_conf ids blocks 1-5
	set_conf database busy_timeout 20000
	start_lmtpd
	hold_lock 2
	for i in 1 2 3 4 5 6 7 8; do
		request_mail "$TMP/g$i.eml" "g$i"
		$LMTPC "$INST/lmtp.sock" --from "g$i@example.net" --to request@example.org <"$TMP/g$i.eml" >"$TMP/g$i.out" &
	done
	wait $LOCK_PID
	for i in 1 2 3 4 5 6 7 8; do
		wait_until grep -q "^END " "$TMP/g$i.out" || fail "no reply for g$i"
	done
	expect_eq 5 "$(cat "$TMP"/g?.out | grep -c "^END request@example.org 250 2.0.0 assigned TEST-$Y-000[1-5]$")"
	expect_eq 3 "$(cat "$TMP"/g?.out | grep -c "^END request@example.org 451 4.3.0 ")"
	expect_eq "5|1|5" "$(sql "SELECT count(*) || '\''|'\'' || min(number) || '\''|'\'' || max(number) FROM entries")"
	expect_eq 3 "$(sql "SELECT count(*) FROM audit WHERE line LIKE '\''%\"event\":\"blocks-exhausted\"%'\''")"
	expect_eq 5 "$(sql "SELECT count(*) FROM messages")"
	set_conf ids blocks 1-
	kill -HUP "$LMTPD_PID"
	sleep 0.5
	for i in 1 2 3 4 5 6 7 8; do
		grep -q "451 4.3.0" "$TMP/g$i.out" || continue
		$LMTPC "$INST/lmtp.sock" --from "g$i@example.net" --to request@example.org <"$TMP/g$i.eml" >"$TMP/g$i.out"
		expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-000[6-8]$" "$TMP/g$i.out"
	done
	expect_eq "8|8|8" "$(sql "SELECT count(*) || '\''|'\'' || count(DISTINCT number) || '\''|'\'' || max(number) FROM entries")"
	stop_lmtpd
	expect_eq 0 "$lmtpd_rc"
'

test_expect_success 'a mail whose deadline passes before its commit gets 451 4.4.7; the server goes on, nothing was kept' '
	make_instance slow
	set_conf crypto sign none
	set_conf limits time_limit 2
	set_conf database busy_timeout 30000
	start_lmtpd
	hold_lock 5
	request_mail "$TMP/s1.eml" s1
	start=$(date +%s)
	lmtp "$TMP/s1.eml" --from s1@example.net --to request@example.org
	took=$(( $(date +%s) - start ))
	expect_match "^END request@example.org 451 4.4.7 " "$TMP/lmtp.out"
	test "$took" -lt 5 || fail "the reply took $took s"
	kill -0 "$LMTPD_PID"
	wait $LOCK_PID
	sleep 0.5
	expect_eq 0 "$(sql "SELECT count(*) FROM messages")"
	lmtp "$TMP/s1.eml" --from s1@example.net --to request@example.org
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-0001$" "$TMP/lmtp.out"
	stop_lmtpd
	expect_eq 0 "$lmtpd_rc"
'

test_done
