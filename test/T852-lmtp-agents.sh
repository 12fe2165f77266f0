#!/bin/bash
# T852-lmtp-agents: several delivery agents ([lmtpd] delivery_agents), as
# where the relay accepts parallel sessions.  The engine hands them the
# mails it made durable; each agent claims what it sends.  300 mails over 8
# sessions: every reply reaches the relay exactly once (counted at the
# sink, by Message-ID), each item is audited delivered once, and more than
# one agent sent.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)

[ -x "$SMTP_SINK" ] && [ -x "$SMTP_SOURCE" ] ||
	{ test_skip "delivery agents" "smtp-sink or smtp-source not installed"; test_done; }

N=300
make_instance inst
start_sink sink
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 0
set_conf policy loop_answers 100000
# many unsigned mails from one sender: the answer budget of unverified mail
# is not what is tested here
set_conf policy unverified_answer_bytes 0
set_conf lmtpd delivery_agents 4

test_expect_success 'four agents run beside the server' '
	start_lmtpd &&
	wait_until sh -c "test \$(pgrep -P $LMTPD_PID -f -- --delivery-agent | wc -l) -eq 4"
'

test_expect_success "$N mails over 8 sessions: every reply sent once" '
	"$SMTP_SOURCE" -L -s 8 -m $N -l 1024 -f bench@example.net -t request@example.org "unix:$INST/lmtp.sock" &&
	expect_eq $N "$(sql "SELECT count(*) FROM outbox")" &&
	wait_until sh -c "test \$(sqlite3 \"$INST/vulnid.db\" \"SELECT count(*) FROM outbox WHERE status = '\''delivered'\''\") -eq $N" &&
	stop_lmtpd &&
	expect_eq $N "$(sink_count)" &&
	for f in $(sink_files); do sed -n "s/^Message-I[Dd]: *//p" "$f" | head -n 1; done | sort >"$TMP/ids" &&
	expect_eq $N "$(sort -u "$TMP/ids" | wc -l | tr -d " ")" "distinct Message-IDs at the sink" &&
	expect_eq $N "$(grep -c "\"event\":\"delivered\"" "$INST/audit.log")" &&
	expect_eq $N "$(grep "\"event\":\"delivered\"" "$INST/audit.log" | sed "s/.*\"outbox\":\([0-9]*\).*/\1/" | sort -u | wc -l | tr -d " ")" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_expect_success 'the items were sent by more than one agent' '
	test "$(sql "SELECT count(DISTINCT substr(claim, 1, instr(claim, '\''.'\'') - 1)) FROM outbox")" -ge 2
'

test_done
