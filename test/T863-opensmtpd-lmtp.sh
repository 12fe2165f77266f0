#!/bin/bash
# T863-opensmtpd-lmtp: a real OpenSMTPD (the Debian package, unpacked: it
# cannot be installed next to Postfix; mta-lib.sh runs it in a user
# namespace of its own on a port of 127.0.0.1), configured with
# filters/opensmtpd-lmtp, delivers to vulnid-lmtpd over its unix socket;
# without XFORWARD the rate limits see the client of smtpd's Received
# field; while the server is down smtpd keeps the mail and delivers it,
# once, when it is back.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
. "$(dirname "$0")/mta-lib.sh"

SWAKS=$(command -v swaks 2>/dev/null || true)
if [ -z "$SWAKS" ]; then
	test_skip "OpenSMTPD lmtp action" "swaks is not installed (Debian package swaks)"
	test_done
fi
if ! mta_have opensmtpd usr/sbin/smtpd; then
	test_skip "OpenSMTPD lmtp action" "$MTA_WHY"
	test_done
fi
trap 'smtpd_stop; lmtpd_cleanup; test_cleanup' EXIT

chmod 755 "$TMP"
PORT=$(free_port)
make_instance inst
set_conf crypto sign none
# smtpd's LMTP client runs as the namespace's nobody, a uid of no group
# here: the socket is open to all, the instance directory only traversable
set_conf lmtpd socket_mode 0666
chmod 711 "$INST"
start_lmtpd || exit 1
SMTPD_RULES=$(mta_snippet "$FILTERS_DIR/opensmtpd-lmtp" | grep -v '^#')
mkdir -p "$TMP/smtpd"
smtpd_setup "$TMP/smtpd" "$PORT"
smtpd_ns -n -f "$SMTPD_CONF" >"$TMP/n.out" 2>&1 && smtpd_start

test_expect_success 'smtpd -n accepts filters/opensmtpd-lmtp, and the daemon runs' '
	expect_match "configuration OK" "$TMP/n.out" &&
	grep -q "^action \"vulnid\" lmtp \"$INST/lmtp.sock\" rcpt-to " "$SMTPD_CONF" &&
	mta_wait_port "$PORT"
'

send() {
	"$SWAKS" --server 127.0.0.1 --port "$PORT" --helo client.example.net \
		--from "$1" --to "$2" --data "@$3" --timeout 20 >"$TMP/swaks.out" 2>&1 ||
		fail "swaks: $(cat "$TMP/swaks.out")"
}
recorded() { [ "$(sql "SELECT count(*) FROM messages WHERE message_id = '$1'")" = 1 ]; }

test_expect_success 'a request through smtpd is recorded once, with smtpd'\''s client' '
	request_mail "$TMP/o1.eml" o1 &&
	send o1@example.net request@example.org "$TMP/o1.eml" &&
	wait_until recorded o1@example.net || fail "not recorded: $(tail -n 5 "$SMTPD_LOG")"
	expect_eq "o1@example.net|request@example.org|request|127.0.0.1" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to || '\''|'\'' || disposition || '\''|'\'' || client_address FROM messages WHERE message_id = '\''o1@example.net'\''")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'rcpt-to: the address as the sender wrote it, +ID and all, reaches the robot' '
	id=$(sql "SELECT id FROM entries") &&
	printf "Title: SQL injection in the search box\n" |
		write_mail "$TMP/o3.eml" "Message-ID: <o3@example.net>" "From: o1@example.net" "Subject: Re: [$id] request o1" &&
	send o1@example.net "request+$id@example.org" "$TMP/o3.eml" &&
	wait_until recorded o3@example.net || fail "not recorded: $(tail -n 5 "$SMTPD_LOG")"
	expect_eq "request+$id@example.org|entry" \
		"$(sql "SELECT envelope_to || '\''|'\'' || disposition FROM messages WHERE message_id = '\''o3@example.net'\''")"
'

test_expect_success 'while vulnid-lmtpd is down smtpd keeps the mail, and delivers it once when it is back' '
	stop_lmtpd &&
	request_mail "$TMP/o2.eml" o2 &&
	send o2@example.net request@example.org "$TMP/o2.eml" &&
	sleep 2 &&
	! recorded o2@example.net &&
	smtpctl_ns show queue >"$TMP/queue" 2>&1 &&
	expect_match "o2@example.net|request@example.org" "$TMP/queue" &&
	start_lmtpd &&
	smtpctl_ns schedule all >/dev/null 2>&1 &&
	wait_until recorded o2@example.net || fail "not delivered: $(tail -n 5 "$SMTPD_LOG")"
	expect_eq 2 "$(sql "SELECT count(*) FROM entries")" &&
	wait_until eval "[ -z \"\$(smtpctl_ns show queue 2>/dev/null)\" ]" || fail "still queued"
'

test_done
