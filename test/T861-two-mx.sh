#!/bin/bash
# T861-two-mx: several MX hosts in front of one robot host.  Two Postfix
# instances on loopback ports, configured from filters/postfix-lmtp-frontend,
# deliver over LMTP on TCP to one vulnid-lmtpd, which owns the database;
# the TCP listener lets in only loopback or the clients of [lmtpd] allow.
# Needs root (Postfix's master), postfix and smtp-source.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)
Y=$(date -u +%Y)

make_instance robot
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 0
set_conf lifecycle rate_network_per_hour 0
set_conf lifecycle rate_domain_per_hour 0
set_conf policy loop_answers 100000
# one sender, hundreds of mails: no answer budget either
set_conf policy unverified_answer_bytes 0
LPORT=$(free_port)
set_conf lmtpd listen "127.0.0.1:$LPORT"

test_expect_success 'a listen address that is not loopback needs [lmtpd] allow: the server refuses to start' '
	set_conf lmtpd listen "0.0.0.0:$LPORT"
	rc=0
	"$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/start.err" || rc=$?
	expect_eq 75 "$rc"
	expect_match "not a loopback address; set \[lmtpd\] allow" "$TMP/start.err"
	set_conf lmtpd listen "127.0.0.1:$LPORT"
'

start_lmtpd || exit 1
LMTP_TCP="127.0.0.1:$LPORT"

test_expect_success 'LMTP on TCP: a loopback client is served' '
	request_mail "$TMP/t1.eml" t1 &&
	LMTP_ADDR=$LMTP_TCP lmtp "$TMP/t1.eml" --from t1@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-0001$" "$TMP/lmtp.out"
'

test_expect_success 'a client not in [lmtpd] allow gets 421 4.7.1 and nothing else; SIGHUP applies the list' '
	set_conf lmtpd allow "192.0.2.0/24, 127.0.0.3"
	kill -HUP "$LMTPD_PID"
	sleep 0.5
	printf "LHLO a\r\nQUIT\r\n" | $LMTPC "$LMTP_TCP" --raw >"$TMP/refused.out"
	expect_eq "421 4.7.1 this client may not use this LMTP server" "$(tr -d "\r" <"$TMP/refused.out")"
	set_conf lmtpd allow "127.0.0.0/8"
	kill -HUP "$LMTPD_PID"
	sleep 0.5
	printf "LHLO a\r\nQUIT\r\n" | $LMTPC "$LMTP_TCP" --raw >"$TMP/allowed.out"
	expect_match "^220 " "$TMP/allowed.out"
'

if [ "$(id -u)" != 0 ] || [ ! -x "$POSTFIX" ] || [ ! -x "$SMTP_SOURCE" ] || ! id postfix >/dev/null 2>&1; then
	test_skip "two front-end Postfix instances" "needs root and Postfix (Debian package postfix)"
	test_done
fi
trap 'pf_stop_all; lmtpd_cleanup; test_cleanup' EXIT
chmod 755 "$TMP"
sed -e "s|^#   \(request[^ ]*\)@vulnid.example.org *lmtp:inet:\[robot.example.org\]:2424|\1@example.org lmtp:inet:[127.0.0.1]:$LPORT|p" -n \
	"$VULNID_SRCDIR/filters/postfix-lmtp-frontend" >"$TMP/transport"
PA=$(free_port)
PB=$(free_port)
pf_start mxa "$PA" "$VULNID_SRCDIR/filters/postfix-lmtp-frontend" "$TMP/transport" >"$TMP/pf.err" 2>&1 &&
	pf_start mxb "$PB" "$VULNID_SRCDIR/filters/postfix-lmtp-frontend" "$TMP/transport" >>"$TMP/pf.err" 2>&1
pf_rc=$?

test_expect_success 'two front-end MX instances deliver 120 mails at once to the one robot: one entry each, dense and unique' '
	expect_eq 0 "$pf_rc" "pf_start: $(cat "$TMP/pf.err")"
	expect_eq 2 "$(wc -l <"$TMP/transport" | tr -d " ")" "transport lines from the snippet"
	"$SMTP_SOURCE" -s 4 -m 60 -l 1500 -f a@example.net -t request@example.org "127.0.0.1:$PA" &
	a=$!
	"$SMTP_SOURCE" -s 4 -m 60 -l 1500 -f b@example.net -t request@example.org "127.0.0.1:$PB" &
	b=$!
	wait "$a" && wait "$b"
	wait_until pf_queue_empty mxa && wait_until pf_queue_empty mxb ||
		fail "mail left in a queue: $(tail -n 5 "$TMP"/mx?/postfix.log)"
	expect_eq 60 "$(grep -c "relay=127.0.0.1\[127.0.0.1\]:$LPORT, .*status=sent (250 2.0.0 assigned" "$TMP/mxa/postfix.log")"
	expect_eq 60 "$(grep -c "relay=127.0.0.1\[127.0.0.1\]:$LPORT, .*status=sent (250 2.0.0 assigned" "$TMP/mxb/postfix.log")"
	expect_eq "121|121|1|121" "$(sql "SELECT count(*) || '\''|'\'' || count(DISTINCT number) || '\''|'\'' || min(number) || '\''|'\'' || max(number) FROM entries")"
	expect_eq "60|60" "$(sql "SELECT sum(envelope_from = '\''a@example.net'\'') || '\''|'\'' || sum(envelope_from = '\''b@example.net'\'') FROM messages")"
	wait_until sent_is 121 || fail "$(sent_count) acks"
'

test_done
