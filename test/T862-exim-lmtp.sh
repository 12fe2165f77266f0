#!/bin/bash
# T862-exim-lmtp: Exim 4's lmtp transport (filters/README) delivers to
# vulnid-lmtpd over its unix socket.  Exim cannot be installed beside
# Postfix as a Debian package: mta-lib.sh runs exim4-daemon-light from the
# unpacked package, in a user namespace of its own, on a loopback port.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
. "$(dirname "$0")/mta-lib.sh"
SWAKS=$(command -v swaks 2>/dev/null || true)

if [ -z "$SWAKS" ]; then
	test_skip "Exim lmtp transport" "swaks is not installed (Debian package swaks)"
	test_done
fi
if ! mta_have exim4-daemon-light usr/sbin/exim4; then
	test_skip "Exim lmtp transport" "$MTA_WHY"
	test_done
fi
trap 'exim_stop; lmtpd_cleanup; test_cleanup' EXIT
chmod 755 "$TMP"

make_instance inst
set_conf crypto sign none
# Exim's transport runs as the namespace's nobody, a uid of no group here
set_conf lmtpd socket_mode 0666
chmod 711 "$INST"
start_lmtpd || exit 1
EPORT=$(free_port)
# The router and transport as filters/README gives them.
EXIM_ROUTERS="vulnid:
  driver = accept
  domains = example.org
  local_parts = request : request-bounces
  local_part_suffix = +*
  local_part_suffix_optional
  transport = vulnid_lmtp"
EXIM_TRANSPORTS="vulnid_lmtp:
  driver = lmtp
  socket = $INST/lmtp.sock
  batch_max = 50"
mkdir -p "$TMP/exim"
exim_setup "$TMP/exim" "$EPORT"
exim_start || exit 1

exim_delivered() { grep -q "$1.*=> request.*T=vulnid_lmtp" "$EXIM_LOG" 2>/dev/null; }

test_expect_success 'Exim delivers to vulnid-lmtpd with its lmtp transport; two recipients of one mail are answered each' '
	request_mail "$TMP/e1.eml" e1
	"$SWAKS" --server 127.0.0.1 --port "$EPORT" --from e1@example.net --to request@example.org,request+x@example.org \
		--data "@$TMP/e1.eml" >"$TMP/swaks.out" 2>&1 || fail "swaks: $(cat "$TMP/swaks.out")"
	id=$(sed -n "s/.*250 OK id=\([^ ]*\).*/\1/p" "$TMP/swaks.out")
	wait_until exim_delivered "$id" || fail "not delivered: $(tail -n 5 "$EXIM_LOG")"
	expect_eq "e1@example.net|request@example.org|request" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to || '\''|'\'' || disposition FROM messages WHERE message_id = '\''e1@example.net'\''")"
	expect_eq 2 "$(grep -cE "$id [-=]> request.*T=vulnid_lmtp" "$EXIM_LOG")"
	expect_eq 1 "$(sql "SELECT count(*) FROM audit WHERE line LIKE '\''%\"event\":\"duplicate\"%'\''")"
'

test_expect_success 'while vulnid-lmtpd is down Exim defers, and delivers once it is back' '
	stop_lmtpd
	request_mail "$TMP/e2.eml" e2
	"$SWAKS" --server 127.0.0.1 --port "$EPORT" --from e2@example.net --to request@example.org \
		--data "@$TMP/e2.eml" >"$TMP/swaks.out" 2>&1 || fail "swaks: $(cat "$TMP/swaks.out")"
	id=$(sed -n "s/.*250 OK id=\([^ ]*\).*/\1/p" "$TMP/swaks.out")
	wait_until grep -q "$id == request@example.org .*defer" "$EXIM_LOG" ||
		fail "no deferral: $(tail -n 5 "$EXIM_LOG")"
	start_lmtpd || fail "vulnid-lmtpd did not start again"
	# (the retry rule waits a minute; -M is what an operator would run)
	exim_ns -M "$id" >/dev/null 2>&1 || :
	wait_until exim_delivered "$id" || fail "not delivered: $(tail -n 5 "$EXIM_LOG")"
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''e2@example.net'\''")"
'

test_done
