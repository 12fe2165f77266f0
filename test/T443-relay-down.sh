#!/bin/bash
# T443-relay-down: a relay that cannot be reached is found once per run.
# When a session reaches no server (421 at the greeting, connection
# refused), every item due then is deferred with the ones the session held,
# in one transaction and one relay-down event, each until its own next
# attempt (attempts and backoff as if tried); the run ends there instead
# of opening a session for every hundred items.  Items past their lifetime
# are tried and given up one by one.  When the relay is back, everything
# goes out exactly once.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)

[ -x "$SMTP_SINK" ] && [ -x "$SMTP_SOURCE" ] ||
	{ test_skip "relay down" "smtp-sink or smtp-source not installed"; test_done; }

N=350		# more than three sessions' worth (100 items a claim)

make_instance inst
# a relay that answers every connection with 421 and hangs up
start_sink down -Q CONNECT
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf delivery filter_budget 0
set_conf crypto sign none
vulnid() { "$VULNID" -c "$CONF" "$@"; }
minutes_from_now() { date -u -d "+$1 minutes" +%Y-%m-%dT%H:%M:%SZ; }

# The backlog comes over LMTP (one process, quick); with filter_budget 0
# the server's delivery agent leaves it queued.
set_conf lifecycle rate_requests_per_hour 0
set_conf policy loop_answers 100000
# many unsigned mails from one sender: the answer budget of unverified mail
# is not what is tested here
set_conf policy unverified_answer_bytes 0
test_expect_success "setup: $N acks queued, none tried" '
	start_lmtpd &&
	"$SMTP_SOURCE" -L -s 4 -m $N -l 1024 -f bench@example.net -t request@example.org "unix:$INST/lmtp.sock" &&
	stop_lmtpd &&
	expect_eq $N "$(sql "SELECT count(*) FROM outbox WHERE status = '\''queued'\'' AND attempts = 0")"
'

test_expect_success 'one queue run: one session, then every due item deferred at once' '
	rc=0
	vulnid queue run >"$TMP/run.out" 2>"$TMP/run.err" || rc=$?
	expect_eq 75 "$rc" "a queue that holds deferred mail: exit status" &&
	expect_eq 1 "$(sink_sessions)" "sessions with the relay" &&
	expect_eq "delivered 0, deferred $N, failed 0" "$(cat "$TMP/run.out")" &&
	expect_eq "$N" "$(sql "SELECT count(*) FROM outbox WHERE status = '\''deferred'\'' AND attempts = 1")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox_recipients WHERE status <> '\''deferred'\''")" &&
	expect_eq "1 $N" "$(sql "SELECT count(DISTINCT last_error), count(*) FROM outbox WHERE last_error LIKE '\''127.0.0.1:$SINK_PORT: %'\''" | tr "|" " ")" \
		"one reason for all: $(sql "SELECT DISTINCT last_error FROM outbox")" &&
	expect_eq 60 "$(sql "SELECT DISTINCT strftime('\''%s'\'', next_attempt) - strftime('\''%s'\'', updated) FROM outbox")" &&
	grep "\"event\":\"relay-down\"" "$INST/audit.log" >"$TMP/down.events" &&
	expect_eq 1 "$(wc -l <"$TMP/down.events" | tr -d " ")" &&
	expect_match "\"relay\":\"127.0.0.1:$SINK_PORT\"" "$TMP/down.events" &&
	expect_match "\"items\":$((N - 100))[,}]" "$TMP/down.events" &&
	expect_eq 100 "$(grep -c "\"event\":\"deferred\"" "$INST/audit.log")" "the items of the session audited one by one" &&
	vulnid audit verify >/dev/null
'

test_expect_success 'before their next attempt nothing is due: no session' '
	rc=0
	vulnid queue run >"$TMP/run.out" 2>/dev/null || rc=$?
	expect_eq "delivered 0, deferred 0, failed 0" "$(cat "$TMP/run.out")" &&
	expect_eq 1 "$(sink_sessions)"
'

test_expect_success 'at the next attempt: again one session for all, backoff doubled' '
	rc=0
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >"$TMP/run.out" 2>/dev/null || rc=$?
	expect_eq 2 "$(sink_sessions)" &&
	expect_eq "delivered 0, deferred $N, failed 0" "$(cat "$TMP/run.out")" &&
	expect_eq "$N" "$(sql "SELECT count(*) FROM outbox WHERE attempts = 2")" &&
	expect_eq 120 "$(sql "SELECT DISTINCT strftime('\''%s'\'', next_attempt) - strftime('\''%s'\'', updated) FROM outbox")"
'

test_expect_success 'a filter that meets the relay down defers what is due with its own reply' '
	set_conf delivery filter_budget 10 &&
	printf "Product: Fresh\n" | write_mail "$TMP/f.eml" "Message-ID: <fresh@example.net>" "From: fresh@example.net" &&
	VULNID_TEST_NOW=$(minutes_from_now 10) deliver_ok "$TMP/f.eml" -f fresh@example.net &&
	expect_eq 3 "$(sink_sessions)" &&
	expect_eq "$N" "$(sql "SELECT count(*) FROM outbox WHERE attempts = 3")" "due items deferred with it" &&
	expect_eq 1 "$(sql "SELECT attempts FROM outbox WHERE id = (SELECT max(id) FROM outbox)")" &&
	set_conf delivery filter_budget 0
'

test_expect_success 'past the lifetime: tried and given up one by one, never deferred with the rest' '
	set_conf delivery lifetime 3600 &&
	rc=0
	VULNID_TEST_NOW=$(minutes_from_now 400) "$VULNID" -c "$CONF" queue run >"$TMP/run.out" 2>/dev/null || rc=$?
	expect_eq "delivered 0, deferred 0, failed 100" "$(cat "$TMP/run.out")" &&
	expect_eq 100 "$(sql "SELECT count(*) FROM outbox WHERE status = '\''failed'\'' AND last_error = '\''lifetime exceeded'\''")" &&
	expect_eq "$((N + 1 - 100))" "$(sql "SELECT count(*) FROM outbox WHERE status = '\''deferred'\'' AND attempts = 3")" &&
	set_conf delivery lifetime 432000
'

stop_sink
start_sink up
test_expect_success 'the relay back: everything due goes out, each recipient once' '
	rc=0
	VULNID_TEST_NOW=$(minutes_from_now 400) "$VULNID" -c "$CONF" queue run >"$TMP/run.out" 2>/dev/null || rc=$?
	expect_eq "delivered $((N + 1 - 100)), deferred 0, failed 0" "$(cat "$TMP/run.out")" &&
	expect_eq "$((N + 1 - 100))" "$(sink_count)" &&
	VULNID_TEST_NOW=$(minutes_from_now 600) "$VULNID" -c "$CONF" queue run --force >/dev/null &&
	expect_eq "$((N + 1 - 100))" "$(sink_count)" "exactly once" &&
	vulnid audit verify >/dev/null
'

test_done
