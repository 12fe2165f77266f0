#!/bin/bash
# T954-faults-smtp: an SMTP server that hangs (after the greeting, after the
# whole message was sent but before the reply to the final dot, after the
# first bytes of the message).  The filter gives up after [delivery] timeout,
# exits 0 with the reply still queued, the database stays consistent, and
# the next queue run against a working server delivers it exactly once.
# Also: the per-message time limit bounds a hanging delivery after the
# commit (exit 0 with the reply deferred, or 75 and the redelivery is a
# duplicate).
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

# The time limit while the server hangs after DATA: the filter must end
# within time_limit (2 s) plus a little, not after [delivery] timeout (8 s).
hang_late() {
	hang_server data &&
	set_conf delivery timeout 8 &&
	set_conf limits time_limit 2 &&
	request_mail "$TMP/late.eml" late &&
	start=$(date +%s) && deliver "$TMP/late.eml" && end=$(date +%s)
	stop_hang
	echo "exit $rc after $((end - start)) s: $(cat "$TMP/.filter.err")" >"$TMP/late.out"
	set_conf delivery timeout 2
	set_conf limits time_limit 120
	set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
}
hang_late
test_expect_todo 'the time limit bounds a delivery hanging after DATA' '
	cat "$TMP/late.out" &&
	test $((end - start)) -le 4 &&
	case $rc in
	0) ;;
	75) expect_match "time limit reached" "$TMP/.filter.err" ;;
	*) fail "exit $rc" ;;
	esac
' 'src/smtp.c:263-274: the SIGALRM during smtp_start_session() (filter_budget, or what is left of time_limit) only interrupts a blocking connect(); libESMTP goes on waiting after EINTR, so a server that stops answering mid-DATA holds the filter for [delivery] timeout, past time_limit and filter_budget'

test_expect_success 'after that delivery, whatever its exit: a redelivery is a duplicate, one reply' '
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''late@example.net'\''")" "recorded" &&
	deliver_ok "$TMP/late.eml" &&
	expect_match "\"event\":\"duplicate\"" "$INST/audit.log" &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 1 "$(grep -l "^In-Reply-To: <late@example.net>" "$SINK_DIR"/* | wc -l | tr -d " ")" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''late@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	"$VULNID" -c "$CONF" audit flush >/dev/null &&
	expect_consistent
'

test_done
