#!/bin/bash
# T541-hashcash: proof of work against garbage.  A new sender without a
# key who is over the hourly limits may pay with a Hashcash stamp
# (X-Hashcash, version 1, minted by Debian's hashcash) for the robot's
# address, of [hashcash] bits or more: the mail passes the per-sender and
# per-network limits up to ceiling_per_hour.  A stamp is spent once
# (a ledger keeps its hash until its validity ends; vulnid tick forgets
# it then); a stamp for another resource, of too few bits, expired, dated
# ahead, or reused pays for nothing; the domain and global limits hold.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

command -v hashcash >/dev/null 2>&1 || { test_skip "Hashcash" "hashcash is not installed (Debian package hashcash)"; test_done; }

make_instance inst
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 2
set_conf lifecycle rate_additions_per_hour 2
set_conf hashcash bits 12
set_conf hashcash ceiling_per_hour 4

# mint [hashcash options] RESOURCE: a stamp
mint() { hashcash -m -q -b 12 "$@"; }
# req FROM CLIENT [HEADER...]: a new request; prints its disposition
req() {
	local from=$1 client=$2 n
	shift 2
	n=$(date +%s%N).$RANDOM
	printf 'Product: P%s\n' "$n" | write_mail "$TMP/r$n.eml" "From: <$from>" "Message-ID: <t541-$n@example.net>" "$@" &&
	deliver_ok "$TMP/r$n.eml" -f "$from" -a "$client" -r request@example.org &&
	sql "SELECT disposition FROM messages WHERE message_id = 't541-$n@example.net'"
}
received_hashcash() { grep "\"event\":\"received\"" "$INST/audit.log" | tail -n 1 | json_get "j.get(\"hashcash\")"; }

test_expect_success 'over the per-sender limit, a mail without a stamp is set aside' '
	expect_eq request "$(req new@example.com 192.0.2.1)" &&
	expect_eq request "$(req new@example.com 192.0.2.1)" &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1)" &&
	expect_eq rate-limit "$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")"
'

test_expect_success 'a stamp minted for the robot'\''s address pays: the mail passes; the ledger keeps its hash' '
	S=$(mint request@example.org) && echo "$S" >"$TMP/stamp" &&
	expect_eq request "$(req new@example.com 192.0.2.1 "X-Hashcash: $S")" &&
	expect_eq "lifted a rate limit" "$(received_hashcash)" &&
	expect_eq "$(printf %s "$S" | sha256sum | cut -d" " -f1)" "$(sql "SELECT stamp FROM hashcash_spent")" &&
	expect_eq "$(date -u -d "+2 days" +%Y-%m-%dT00:00:00Z)" "$(sql "SELECT expires FROM hashcash_spent")"
'

test_expect_success 'the same stamp again is spent: set aside' '
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(cat "$TMP/stamp")")" &&
	expect_eq "spent before" "$(received_hashcash)" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM hashcash_spent")"
'

test_expect_success 'no pay: another resource, too few bits, expired, dated ahead, not a stamp' '
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(mint other@example.org)")" &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(hashcash -m -q -b 8 request@example.org)")" &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(mint -t 200101 request@example.org)")" &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(mint -t 391231 request@example.org)")" &&
	S=$(mint request@example.org) &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: 1:30:${S#1:12:}")" &&
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: 1:40:$(date -u +%y%m%d):request@example.org::x:0")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM hashcash_spent")"
'

test_expect_success 'a folded field, as hashcash -X writes it, pays; for the entry address too' '
	hashcash -m -q -b 12 -X request@example.org >"$TMP/hdr" &&
	expect_eq 2 "$(wc -l <"$TMP/hdr")" &&
	n=$(date +%s%N) &&
	{ cat "$TMP/hdr"; printf "From: <new@example.com>\nMessage-ID: <fold-%s@example.net>\n\nProduct: folded\n" "$n"; } >"$TMP/fold.eml" &&
	deliver_ok "$TMP/fold.eml" -f new@example.com -a 192.0.2.1 -r request@example.org &&
	expect_eq request "$(sql "SELECT disposition FROM messages WHERE message_id = '\''fold-$n@example.net'\''")" &&
	E=$(newest_id) &&
	plain talker@example.com "request+$E@example.org" "Detail 1." &&
	plain talker@example.com "request+$E@example.org" "Detail 2." &&
	n=$(date +%s%N) &&
	printf "Detail 3.\n" | write_mail "$TMP/a3.eml" "From: talker@example.com" "Message-ID: <a3-$n@example.net>" \
		"X-Hashcash: $(mint "request+$E@example.org")" &&
	deliver_ok "$TMP/a3.eml" -r "request+$E@example.org" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''a3-$n@example.net'\''")"
'

test_expect_success 'up to the ceiling: past ceiling_per_hour even a stamp does not pass' '
	expect_eq quarantined "$(req new@example.com 192.0.2.1 "X-Hashcash: $(mint request@example.org)")" &&
	expect_eq 4 "$(sql "SELECT count(*) FROM messages WHERE from_addr = '\''new@example.com'\'' AND disposition = '\''request'\''")"
'

test_expect_success 'the network limit: a stamp lifts it too; the domain limit it does not' '
	set_conf lifecycle rate_network_per_hour 1 &&
	expect_eq request "$(req n1@net1.example 198.51.100.1)" &&
	expect_eq quarantined "$(req n2@net2.example 198.51.100.2)" &&
	expect_eq request "$(req n2@net2.example 198.51.100.2 "X-Hashcash: $(mint request@example.org)")" &&
	set_conf lifecycle rate_network_per_hour 0 &&
	set_conf lifecycle rate_domain_per_hour 1 &&
	expect_eq request "$(req d1@dom.example 203.0.113.1)" &&
	expect_eq quarantined "$(req d2@dom.example 203.0.113.2 "X-Hashcash: $(mint request@example.org)")" &&
	set_conf lifecycle rate_domain_per_hour 0
'

test_expect_success 'bits = 0: stamps are not looked at' '
	set_conf hashcash bits 0 &&
	before=$(sql "SELECT count(*) FROM hashcash_spent") &&
	expect_eq request "$(req new2@example.com 192.0.2.9)" &&
	expect_eq request "$(req new2@example.com 192.0.2.9)" &&
	expect_eq quarantined "$(req new2@example.com 192.0.2.9 "X-Hashcash: $(mint request@example.org)")" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM hashcash_spent")" &&
	set_conf hashcash bits 12
'

test_expect_success 'vulnid tick forgets the spent stamps once their validity has ended, and only then' '
	n=$(sql "SELECT count(*) FROM hashcash_spent") && test "$n" -ge 3 &&
	VULNID_TEST_NOW=$(date -u -d "+1 day" +%Y-%m-%dT%H:%M:%SZ) vulnid tick >/dev/null &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM hashcash_spent")" &&
	VULNID_TEST_NOW=$(date -u -d "+3 days" +%Y-%m-%dT%H:%M:%SZ) vulnid tick >"$TMP/tick" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM hashcash_spent")" &&
	expect_eq "released 0 embargoed entries
queued 0 announcement digests
delivered 0, deferred 0, failed 0" "$(cat "$TMP/tick")"
'

test_done
