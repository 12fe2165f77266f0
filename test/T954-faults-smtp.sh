#!/bin/bash
# T954-faults-smtp: an SMTP server that hangs (after the greeting, after the
# whole message was sent but before the reply to the final dot, after the
# first bytes of the message).  The filter gives up after [delivery] timeout,
# exits 0 with the reply still queued, the database stays consistent, and
# the next queue run against a working server delivers it exactly once.
# Also: the per-message time limit bounds a hanging delivery after the
# commit (exit 0 in time, the reply deferred, delivered once later), and
# any other wait after the commit (a locked audit.log).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

[ -x "$SMTP_SINK" ] || { test_skip "SMTP faults" "smtp-sink not installed"; test_done; }

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf delivery starttls no
set_conf delivery timeout 2
set_conf crypto sign none

# hang_server MODE: a hanging server for at most 60 s, on $HANG_PORT.
hang_server() {
	rm -f "$TMP/hang.port" "$TMP/hang.port.log"
	$PYTHON "$VULNID_SRCDIR/test/faults/smtp-hang.py" "$TMP/hang.port" "$1" 60 &
	HANG_PID=$!
	bg_track $HANG_PID
	for _ in $(seq 100); do [ -s "$TMP/hang.port" ] && break; sleep 0.05; done
	HANG_PORT=$(cat "$TMP/hang.port")
	set_conf delivery transport "smtp://127.0.0.1:$HANG_PORT"
}
stop_hang() { kill "$HANG_PID" 2>/dev/null; wait "$HANG_PID" 2>/dev/null || true; }

# hang_case MODE ID: the filter against a server hanging at MODE.
hang_case() {
	local mode=$1 id=$2 start end msg
	hang_server "$mode"
	[ -f "$TMP/$id.eml" ] || request_mail "$TMP/$id.eml" "$id"
	start=$(date +%s)
	deliver "$TMP/$id.eml"
	end=$(date +%s)
	stop_hang
	expect_eq 0 "$rc" "exit status (the mail is recorded; its reply waits)" || return 1
	[ $((end - start)) -le 10 ] || fail "the filter took $((end - start)) s with timeout 2" || return 1
	msg=$(sql "SELECT id FROM messages WHERE message_id = '$id@example.net'")
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "entries" || return 1
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" "outbox status" || return 1
	expect_match "\"event\":\"deferred\"" "$INST/audit.log" || return 1
	expect_consistent || return 1
	expect_match "connect" "$TMP/hang.port.log"
}

test_expect_success 'server hangs after the whole message (no reply to the dot): deferred in time' \
	'hang_case data hang-data && expect_match "message received, not answering" "$TMP/hang.port.log"'
test_expect_success 'server never greets: deferred in time' 'hang_case greeting hang-greeting'
test_expect_success 'server stops reading after the first bytes of the message: deferred in time' '
	hang_case midbody hang-body && expect_match "stopped reading" "$TMP/hang.port.log"
'

start_sink sink
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"

test_expect_success 'a working server again: queue run delivers each reply exactly once' '
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >"$TMP/run.out" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" &&
	for id in hang-data hang-greeting hang-body; do
		expect_eq 1 "$(grep -l "^In-Reply-To: <$id@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" "$id at the sink"
	done &&
	VULNID_TEST_NOW=$(minutes_from_now 30) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 3 "$(sink_count)" "exactly once" &&
	expect_consistent
'

ms_now() { date +%s%3N; }
# restore what the time limit cases change
limits_back() {
	set_conf delivery timeout 2
	set_conf limits time_limit 120
	set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
}

# The time limit while the server hangs after DATA: the filter must end
# within time_limit (2 s), not after [delivery] timeout (8 s).  smtp_send()
# shuts the session down while part of the time limit is left, the reply
# is recorded as deferred, and the mail, committed before, exits 0.
hang_server data
set_conf delivery timeout 8
set_conf limits time_limit 2
request_mail "$TMP/late.eml" late
start=$(ms_now)
deliver "$TMP/late.eml"
end=$(ms_now)
stop_hang
limits_back
echo "exit $rc after $((end - start)) ms: $(cat "$TMP/.filter.err")" >"$TMP/late.out"
echo "# hanging after DATA, time_limit 2: $(cat "$TMP/late.out")"

test_expect_success 'the time limit bounds a delivery hanging after DATA: 0 in time, the reply deferred' '
	cat "$TMP/late.out" &&
	expect_match "message received, not answering" "$TMP/hang.port.log" &&
	expect_eq 0 "$rc" "exit status (the mail is recorded; its reply waits)" &&
	{ [ $((end - start)) -le 3000 ] || fail "the filter took $((end - start)) ms with time_limit 2"; } &&
	expect_eq "" "$(cat "$TMP/.filter.err")" "standard error" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''late@example.net'\''")" "recorded" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''late@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "entries" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" "outbox status" &&
	sql "SELECT last_error FROM outbox WHERE cause = $msg" >"$TMP/late.err" &&
	expect_match "delivery deadline" "$TMP/late.err" &&
	expect_consistent
'

test_expect_success 'a queue run to a working server then delivers that reply exactly once' '
	before=$(sink_count) &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 1 "$(grep -l "^In-Reply-To: <late@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" "at the sink" &&
	VULNID_TEST_NOW=$(minutes_from_now 30) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq $((before + 1)) "$(sink_count)" "exactly once" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" "undelivered" &&
	expect_consistent
'

test_expect_success 'a redelivery of that mail is a duplicate: exit 0, no second entry or reply' '
	before=$(sink_count) &&
	deliver_ok "$TMP/late.eml" &&
	expect_match "\"event\":\"duplicate\"" "$INST/audit.log" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''late@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq "$before" "$(sink_count)" "replies" &&
	expect_consistent
'

# The other hangs under the same time limit.
for mode in greeting midbody; do
	hang_server $mode
	set_conf delivery timeout 8
	set_conf limits time_limit 2
	request_mail "$TMP/late-$mode.eml" "late-$mode"
	start=$(ms_now)
	deliver "$TMP/late-$mode.eml"
	end=$(ms_now)
	stop_hang
	limits_back
	echo "$rc $((end - start))" >"$TMP/late-$mode.out"
	echo "# hanging at $mode, time_limit 2: exit $rc after $((end - start)) ms: $(cat "$TMP/.filter.err")"
done

test_expect_success 'the time limit bounds the other hangs too (no greeting, server stops reading)' '
	for mode in greeting midbody; do
		read -r rc ms <"$TMP/late-$mode.out" &&
		expect_eq 0 "$rc" "$mode: exit status" &&
		{ [ "$ms" -le 3000 ] || fail "$mode: the filter took $ms ms with time_limit 2"; } &&
		msg=$(sql "SELECT id FROM messages WHERE message_id = '\''late-$mode@example.net'\''") &&
		expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "$mode: entries" &&
		expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" "$mode: outbox status" ||
		exit 1
	done &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	for mode in greeting midbody; do
		expect_eq 1 "$(grep -l "^In-Reply-To: <late-$mode@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" "$mode at the sink"
	done &&
	expect_consistent
'

# The time limit after the commit, outside SMTP: another process holds
# audit.log's lock, so the filter's audit flush (the last step) waits
# until the time limit ends it.
rm -f "$TMP/audit.locked"
$PYTHON -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close(); time.sleep(float(sys.argv[3]))' "$INST/audit.log" "$TMP/audit.locked" 6 &
LOCKER=$!
bg_track $LOCKER
for _ in $(seq 100); do [ -e "$TMP/audit.locked" ] && break; sleep 0.05; done
set_conf limits time_limit 2
request_mail "$TMP/flush.eml" flush
start=$(ms_now)
deliver "$TMP/flush.eml"
end=$(ms_now)
lines_locked=$(wc -l <"$INST/audit.log")
wait $LOCKER
limits_back
echo "exit $rc after $((end - start)) ms: $(cat "$TMP/.filter.err")" >"$TMP/flush.out"
echo "# audit.log locked, time_limit 2: $(cat "$TMP/flush.out")"

test_expect_success 'the time limit after the commit (audit.log locked): in time, recorded once, nothing torn' '
	cat "$TMP/flush.out" &&
	{ [ $((end - start)) -le 3000 ] || fail "the filter took $((end - start)) ms with time_limit 2"; } &&
	case $rc in
	0) expect_eq "" "$(cat "$TMP/.filter.err")" "standard error" ;;
	75) expect_match "time limit reached" "$TMP/.filter.err" ;;
	*) fail "exit $rc" ;;
	esac &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''flush@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "entries" &&
	expect_eq 1 "$(grep -l "^In-Reply-To: <flush@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" "at the sink" &&
	expect_eq "$lines_locked" "$(wc -l <"$INST/audit.log")" "audit.log untouched while locked" &&
	expect_eq 1 "$(tail -c 1 "$INST/audit.log" | wc -l | tr -d " ")" "audit.log ends in a whole line" &&
	expect_eq ok "$(sql "PRAGMA integrity_check")" &&
	"$VULNID" -c "$CONF" audit flush >/dev/null &&
	expect_match "\"message_id\":\"flush@example.net\"" "$INST/audit.log" &&
	expect_consistent
'

test_expect_success 'the time limit after the commit exits 0' '
	expect_eq 0 "$rc" "exit status"
'

test_expect_success 'a redelivery of that mail is a duplicate: exit 0, no second reply' '
	before=$(sink_count) &&
	deliver_ok "$TMP/flush.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''flush@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq "$before" "$(sink_count)" "replies" &&
	expect_consistent
'

# libESMTP cannot be loaded (it is loaded only to speak SMTP): like an
# unreachable server, the mail is recorded and its reply waits.
request_mail "$TMP/nolib.eml" nolib
test_expect_success 'libESMTP cannot be loaded: 0, recorded once, the reply deferred with the reason' '
	before=$(sink_count) &&
	deliver_fault "$TMP/nolib.eml" FAULT_OPS=dlopen "FAULT_PATH=libesmtp*" &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	test "$injected" -ge 1 &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''nolib@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" &&
	sql "SELECT last_error FROM outbox WHERE cause = $msg" | grep -q "cannot load libESMTP" &&
	expect_eq "$before" "$(sink_count)" "at the sink" &&
	expect_consistent
'
test_expect_success 'libESMTP back: that reply is delivered once' '
	VULNID_TEST_NOW=$(minutes_from_now 10) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 1 "$(grep -l "^In-Reply-To: <nolib@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" "at the sink"
'

test_done
