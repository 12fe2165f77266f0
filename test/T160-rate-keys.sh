#!/bin/bash
# T160-rate-keys: the intake rate limits count what a sender cannot choose
# freely: the SMTP client's network (vulnid-filter -a; a /24 for IPv4, a
# /64 for IPv6), the envelope sender's domain, and everyone together; a
# flood from many From addresses is limited all the same.  The address
# is stored with the message (messages.client_address, client_net).
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
n=0
# req FROM CLIENT [ENVELOPE]: one new request; prints its disposition
req() {
	local n
	n=$(date +%s%N)
	write_mail "$TMP/r$n.eml" "From: <$1>" "Message-ID: <t160-$n@example.net>" <<<"Product: P$n" &&
	deliver_ok "$TMP/r$n.eml" -f "${3:-$1}" -a "$2" &&
	sql "SELECT disposition FROM messages WHERE message_id = 't160-$n@example.net'"
}

test_expect_success 'client addresses are stored canonical, with their /24 or /64' '
	req a1@one.example 192.0.2.7 >/dev/null &&
	req a2@one.example "IPv6:2001:DB8:0:1::5" >/dev/null &&
	req a3@one.example "[::ffff:198.51.100.9]" >/dev/null &&
	req a4@one.example "[UNAVAILABLE]" >/dev/null &&
	expect_eq "192.0.2.7|192.0.2.0/24 2001:db8:0:1::5|2001:db8:0:1::/64 ::ffff:198.51.100.9|198.51.100.0/24 |" \
		"$(sql "SELECT group_concat(coalesce(client_address, '\'''\'') || '\''|'\'' || coalesce(client_net, '\'''\''), '\'' '\'') FROM messages ORDER BY id")"
'

test_expect_success 'a /24 over rate_network_per_hour is limited, whatever the From; another network is not' '
	set_conf lifecycle rate_network_per_hour 3 &&
	expect_eq request "$(req b1@two.example 203.0.113.1)" &&
	expect_eq request "$(req b2@three.example 203.0.113.2)" &&
	expect_eq request "$(req b3@four.example 203.0.113.3)" &&
	expect_eq quarantined "$(req b3@four.example 203.0.113.250)" &&
	expect_eq rate-limit "$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")" &&
	expect_eq request "$(req b4@five.example 203.0.114.1)"
'

test_expect_success 'IPv6: one /64 is one network' '
	expect_eq request "$(req c1@six.example 2001:db8:5:5::1)" &&
	expect_eq request "$(req c2@seven.example 2001:db8:5:5:ffff::2)" &&
	expect_eq request "$(req c3@eight.example 2001:db8:5:5::3)" &&
	expect_eq quarantined "$(req c4@nine.example 2001:db8:5:5:1:2:3:4)" &&
	expect_eq request "$(req c5@ten.example 2001:db8:5:6::1)"
'

test_expect_success 'the envelope sender domain has a limit of its own' '
	set_conf lifecycle rate_network_per_hour 0 &&
	set_conf lifecycle rate_domain_per_hour 2 &&
	expect_eq request "$(req d1@x.example 192.0.2.101 bounce1@shared.example)" &&
	expect_eq request "$(req d2@y.example 192.0.2.102 bounce2@shared.example)" &&
	expect_eq quarantined "$(req d3@z.example 198.18.0.1 bounce3@SHARED.example)"
'

test_expect_success 'a global ceiling counts everyone' '
	set_conf lifecycle rate_domain_per_hour 0 &&
	total=$(sql "SELECT count(*) FROM messages WHERE disposition = '\''request'\''") &&
	set_conf lifecycle rate_global_per_hour $((total + 1)) &&
	expect_eq request "$(req e1@a.example 10.1.0.1)" &&
	expect_eq quarantined "$(req e2@b.example 10.2.0.1)" &&
	set_conf lifecycle rate_global_per_hour 0 &&
	expect_eq request "$(req e3@c.example 10.3.0.1)"
'

test_expect_success '-a received takes the address from the topmost Received field' '
	n=received &&
	{ printf "Received: from mx.example (mx.example [192.0.2.200])\n\tby robot.example.org (OpenSMTPD) with ESMTP id 1\n";
	  printf "Received: from evil (evil [10.9.9.9]) by somewhere\n"; } >"$TMP/r$n.eml" &&
	write_mail "$TMP/body$n" "From: <f1@a.example>" "Message-ID: <t160-$n@example.net>" <<<"Product: R" &&
	cat "$TMP/body$n" >>"$TMP/r$n.eml" &&
	deliver_ok "$TMP/r$n.eml" -f f1@a.example -a received &&
	expect_eq 192.0.2.200 "$(sql "SELECT client_address FROM messages WHERE message_id = '\''t160-$n@example.net'\''")"
'

test_expect_success '-a received: a HELO that is itself an address literal is not taken for the client' '
	n=helo &&
	{ printf "Received: from [198.51.100.66] (unknown [192.0.2.201])\n\tby robot.example.org (Postfix) with ESMTP id 2\n";
	  printf "Received: from x.example ([198.51.100.67]) [192.0.2.202] by mx (Exim)\n"; } >"$TMP/r$n.eml" &&
	write_mail "$TMP/body$n" "From: <f2@a.example>" "Message-ID: <t160-$n@example.net>" <<<"Product: H" &&
	cat "$TMP/body$n" >>"$TMP/r$n.eml" &&
	deliver_ok "$TMP/r$n.eml" -f f2@a.example -a received &&
	expect_eq 192.0.2.201 "$(sql "SELECT client_address FROM messages WHERE message_id = '\''t160-$n@example.net'\''")"
'

test_expect_success 'a value that is no IP address is not stored; the audit log has the client' '
	expect_eq request "$(req g1@a.example "1.2.3.4; rm -rf /")" &&
	expect_eq "" "$(sql "SELECT coalesce(client_address, '\'''\'') FROM messages ORDER BY id DESC LIMIT 1")" &&
	grep -q "\"client\":\"192.0.2.7\"" "$INST/audit.log"
'

test_done
