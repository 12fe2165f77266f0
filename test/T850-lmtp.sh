#!/bin/bash
# T850-lmtp: vulnid-lmtpd on its unix socket, spoken to by a small LMTP
# client: the same intake as vulnid-filter, one reply per recipient after
# the commit, the size limit, duplicates across both programs, the
# archive byte for byte, and the outgoing mail and audit.log left to the
# delivery agent.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
Y=$(date -u +%Y)

make_instance inst
set_conf crypto sign none
start_lmtpd || exit 1

test_expect_success 'LHLO offers PIPELINING, SIZE, ENHANCEDSTATUSCODES, 8BITMIME, SMTPUTF8, XFORWARD' '
	request_mail "$TMP/m1.eml" m1 &&
	lmtp "$TMP/m1.eml" --from m1@example.net --to request@example.org &&
	expect_match "^GREETING 220 example.org LMTP" "$TMP/lmtp.out" &&
	for ext in PIPELINING "SIZE 26214400" ENHANCEDSTATUSCODES 8BITMIME SMTPUTF8 "XFORWARD NAME ADDR PROTO HELO"; do
		expect_match "^LHLO 250[- ]$ext\$" "$TMP/lmtp.out"
	done
'

test_expect_success 'a request gets its identifier in the reply, after the commit; the ack and audit.log follow' '
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-0001$" "$TMP/lmtp.out" &&
	expect_eq "TEST-$Y-0001|m1@example.net|request@example.org" \
		"$(sql "SELECT e.id || '\''|'\'' || m.envelope_from || '\''|'\'' || m.envelope_to FROM entries e JOIN messages m ON e.message = m.id")" &&
	wait_until sent_is 1 &&
	f=$(sent_files) &&
	expect_eq "[TEST-$Y-0001] request m1" "$(mail_header "$f" Subject)" &&
	expect_eq "<m1@example.net>" "$(mail_header "$f" In-Reply-To)" &&
	wait_until grep -q "\"event\":\"delivered\"" "$INST/audit.log" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_expect_success 'the archive holds the mail as the filter would store it: LF line ends, dots unstuffed' '
	printf "From: Dot <dot@example.net>\r\nSubject: dots\r\nMessage-ID: <dots@example.net>\r\n\r\nProduct: Dots\r\n.leading dot\r\n..\r\n" >"$TMP/dots.eml" &&
	lmtp "$TMP/dots.eml" --from dot@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 assigned" "$TMP/lmtp.out" &&
	tr -d "\r" <"$TMP/dots.eml" >"$TMP/dots.lf" &&
	expect_eq "$(sha256sum <"$TMP/dots.lf" | cut -d" " -f1)" \
		"$(sql "SELECT raw_sha256 FROM messages WHERE message_id = '\''dots@example.net'\''")" &&
	sql "SELECT hex(data) FROM blobs JOIN messages ON raw_sha256 = sha256 WHERE message_id = '\''dots@example.net'\''" >"$TMP/dots.hex" &&
	expect_eq "$(od -An -tx1 -v "$TMP/dots.lf" | tr -d " \n" | tr a-f A-F)" "$(tr -d "\n" <"$TMP/dots.hex")"
'

test_expect_success 'a mail seen before is a duplicate, over LMTP and through vulnid-filter alike' '
	lmtp "$TMP/m1.eml" --from m1@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 duplicate$" "$TMP/lmtp.out" &&
	deliver "$TMP/m1.eml" -f m1@example.net -r request@example.org &&
	expect_eq 0 "$rc" &&
	request_mail "$TMP/m2.eml" m2 &&
	deliver "$TMP/m2.eml" -f m2@example.net -r request@example.org &&
	lmtp "$TMP/m2.eml" --from m2@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 duplicate$" "$TMP/lmtp.out" &&
	expect_eq 3 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 3 "$(sql "SELECT count(*) FROM audit WHERE line LIKE '\''%\"event\":\"duplicate\"%'\''")"
'

test_expect_success 'one reply per accepted recipient, in order; addresses not of the robot get 550 at RCPT' '
	request_mail "$TMP/m3.eml" m3 &&
	lmtp "$TMP/m3.eml" --from m3@example.net --to request@example.org --to nobody@example.org \
		--to request@example.com --to "request+TEST-$Y-0001@example.org" --to Request-Bounces+x@EXAMPLE.org &&
	expect_match "^RCPT nobody@example.org 550 5.1.1 " "$TMP/lmtp.out" &&
	expect_match "^RCPT request@example.com 550 5.1.2 " "$TMP/lmtp.out" &&
	expect_eq 3 "$(grep -c "^END " "$TMP/lmtp.out")" &&
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-0004$" "$TMP/lmtp.out" &&
	expect_match "^END request\+TEST-$Y-0001@example.org 250 2.0.0 duplicate$" "$TMP/lmtp.out" &&
	expect_match "^END Request-Bounces\+x@EXAMPLE.org 250 2.0.0 duplicate$" "$TMP/lmtp.out"
'

test_expect_success 'too large: 552 5.3.4 at MAIL for SIZE=, at the end of DATA otherwise; nothing kept' '
	set_conf limits max_message_size 2048 &&
	kill -HUP "$LMTPD_PID" && sleep 0.5 &&
	request_mail "$TMP/big.eml" big 6000 &&
	lmtp "$TMP/big.eml" --from big@example.net --to request@example.org --size 6000 &&
	expect_match "^MAIL 552 5.3.4 " "$TMP/lmtp.out" &&
	lmtp "$TMP/big.eml" --from big@example.net --to request@example.org --to request+x@example.org &&
	expect_match "^LHLO 250-SIZE 2048$" "$TMP/lmtp.out" &&
	expect_eq 2 "$(grep -c "^END .* 552 5.3.4 " "$TMP/lmtp.out")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''big@example.net'\''")" &&
	set_conf limits max_message_size 26214400 &&
	kill -HUP "$LMTPD_PID" && sleep 0.5
'

test_expect_success 'XFORWARD from the MTA is accepted between mails, refused inside one; bad attributes get 501' '
	request_mail "$TMP/m5.eml" m5 &&
	lmtp "$TMP/m5.eml" --from m5@example.net --to request@example.org \
		--xforward NAME=client.example.net --xforward ADDR=IPv6:2001:db8::5 --xforward PROTO=ESMTP &&
	expect_match "^XFORWARD 250 2.0.0 Ok$" "$TMP/lmtp.out" &&
	expect_match "^END request@example.org 250 2.0.0 assigned" "$TMP/lmtp.out" &&
	printf "LHLO a\r\nXFORWARD ADDR=192.0.2.1+\r\nXFORWARD SECRET=1\r\nMAIL FROM:<a@example.net>\r\nXFORWARD ADDR=192.0.2.1\r\nQUIT\r\n" |
		$LMTPC "$INST/lmtp.sock" --raw >"$TMP/raw.out" &&
	expect_match "^501 5.5.4 bad XFORWARD attribute value" "$TMP/raw.out" &&
	expect_match "^501 5.5.4 bad XFORWARD attribute name" "$TMP/raw.out" &&
	expect_match "^503 5.5.1 XFORWARD is not allowed in a mail transaction" "$TMP/raw.out" &&
	expect_match "^221 2.0.0 Bye" "$TMP/raw.out"
'

test_expect_success 'pipelined commands and a mail of only a dot line; HELO and EHLO are not LMTP' '
	printf "LHLO a\r\nEHLO b\r\nMAIL FROM:<p@example.net>\r\nRCPT TO:<request@example.org>\r\nDATA\r\nFrom: p@example.net\r\nMessage-ID: <pipe@example.net>\r\nSubject: pipelined\r\n\r\nProduct: Pipe\r\n.\r\nRSET\r\nNOOP\r\nVRFY request\r\nQUIT\r\n" |
		$LMTPC "$INST/lmtp.sock" --raw >"$TMP/raw.out" &&
	expect_match "^500 5.5.1 this is LMTP: use LHLO" "$TMP/raw.out" &&
	expect_match "^250 2.0.0 assigned TEST-$Y-0006" "$TMP/raw.out" &&
	expect_match "^252 " "$TMP/raw.out" &&
	expect_match "^221 2.0.0 Bye" "$TMP/raw.out"
'

test_expect_success 'the server does not start twice on one socket, and says why' '
	rc=0 &&
	"$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/second.err" || rc=$? &&
	expect_eq 75 "$rc" &&
	expect_match "another server is listening" "$TMP/second.err" &&
	kill -0 "$LMTPD_PID"
'

if command -v systemd-socket-activate >/dev/null 2>&1; then
test_expect_success 'socket activation: the listening socket comes from the service manager (LISTEN_FDS)' '
	make_instance act
	set_conf crypto sign none
	set_conf lmtpd socket ""
	systemd-socket-activate -E VULNID_TEMPLATE_DIR -l "$TMP/act.sock" "$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/act.err" &
	act=$!
	lmtpd_track "$act"
	wait_until test -S "$TMP/act.sock"
	request_mail "$TMP/a1.eml" a1
	LMTP_ADDR=$TMP/act.sock lmtp "$TMP/a1.eml" --from a1@example.net --to request@example.org
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-0001$" "$TMP/lmtp.out"
	kill "$act"
	wait "$act"
	expect_match "stopped: 1 mails in 1 commits" "$TMP/act.err"
'
else
	test_skip "socket activation" "systemd-socket-activate is not installed (Debian package systemd)"
fi

test_expect_success 'SIGTERM: an idle session gets 421, the server exits 0 and removes its socket' '
	stop_lmtpd
	start_lmtpd
	{ sleep 1; printf "NOOP\r\n"; sleep 1; } | $LMTPC "$INST/lmtp.sock" --raw >"$TMP/idle.out" &
	idle=$!
	sleep 0.5 &&
	stop_lmtpd &&
	wait "$idle" &&
	expect_eq 0 "$lmtpd_rc" &&
	expect_match "^421 4.3.2 " "$TMP/idle.out" &&
	test ! -e "$INST/lmtp.sock"
'

test_done
