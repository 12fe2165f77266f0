#!/bin/bash
# T471-no-relay: the attacks of the outgoing-mail policy, as they were
# found: one anonymous 2 KiB mail of 20 blocks, each with a Vendor-Contact
# of the attacker's choice, made the robot send 21 signed mails to 21
# addresses; a 239-byte mail with five lookups and a Reply-To made it send
# 25.7 KB to a third party.  Now one anonymous mail makes the robot write to
# at most [policy] third_party_per_mail addresses that did not write to it,
# never with more than amplification x max(size, amplification_floor)
# bytes, and a domain gets at most per_domain_per_day such mails a day.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf policy allow_reserved_domains ""
# bytes the robot queued for third parties because of message MID
third_bytes() {
	sql "SELECT coalesce(sum(length(o.data)), 0) FROM outbox o JOIN messages m ON m.id = o.cause
		JOIN outbox_recipients r ON r.outbox = o.id
		WHERE m.message_id = '$1' AND r.address NOT LIKE '%@attacker.net'"
}

test_expect_success '20 blocks with 20 Vendor-Contacts, not signed: nobody is written to until the token' '
	for i in $(seq 20); do printf "Title: bug %s\nVendor-Contact: victim%s@target%s.net\n---\n" $i $i $i; done |
		write_mail "$TMP/many.eml" "From: <m@attacker.net>" "Message-ID: <many@attacker.net>" &&
	test "$(stat -c %s "$TMP/many.eml")" -lt 2500 &&
	deliver_ok "$TMP/many.eml" -f m@attacker.net &&
	expect_eq 20 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox_recipients WHERE address LIKE '\''victim%'\''")" &&
	expect_eq 20 "$(grep -c "\"event\":\"policy-held\".*victim" "$INST/audit.log")" &&
	expect_eq 1 "$(sent_count)"
'

test_expect_success 'the tokens of five entries in one mail release at most third_party_per_mail of them' '
	f=$(sent_to m@attacker.net) &&
	mail_body "$f" | sed -n "s/^ *token: *\(vulnid_[a-z2-7]*\)$/Token: \1/p" | head -n 5 >"$TMP/tokens" &&
	expect_eq 5 "$(wc -l <"$TMP/tokens")" &&
	write_mail "$TMP/conf.eml" "From: <m@attacker.net>" "Message-ID: <conf@attacker.net>" <"$TMP/tokens" &&
	deliver_ok "$TMP/conf.eml" -f m@attacker.net &&
	expect_eq 3 "$(sql "SELECT count(DISTINCT address) FROM outbox_recipients WHERE address LIKE '\''victim%'\''")"
'

test_expect_success 'a 239-byte mail with five lookups and a foreign Reply-To: no more than the bound to the third party' '
	for i in $(seq 5); do
		{ printf "Product: long %s\n\n" $i; head -c 4000 /dev/zero | tr "\0" y | fold -w 70; } |
			write_mail "$TMP/long$i.eml" "From: <r@r.net>" &&
		deliver_ok "$TMP/long$i.eml" -f r@r.net || return 1
	done &&
	ids=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 5") &&
	{ printf "From: <m@attacker.net>\nReply-To: <v@third.net>\nMessage-ID: <lk@attacker.net>\n\n";
	  for id in $ids; do printf "lookup %s\n" "$id"; done; } >"$TMP/lookup.eml" &&
	size=$(stat -c %s "$TMP/lookup.eml") && test "$size" -lt 300 &&
	deliver_ok "$TMP/lookup.eml" -f m@attacker.net &&
	bound=$((3 * 4096)) &&
	got=$(sql "SELECT coalesce(sum(length(o.data)), 0) FROM outbox o JOIN outbox_recipients r ON r.outbox = o.id
		WHERE r.address = '\''v@third.net'\''") &&
	[ "$got" -le "$bound" ] || fail "$got bytes to v@third.net (bound $bound)"
	grep -q "\"event\":\"policy-redirected\".*v@third.net" "$INST/audit.log" ||
	# the lookups of an unverified mail are headlines: small enough for the third party
	test "$(sql "SELECT length(o.data) FROM outbox o JOIN outbox_recipients r ON r.outbox = o.id
		WHERE r.address = '\''v@third.net'\'' ORDER BY o.id DESC LIMIT 1")" -lt 4096
'

test_expect_success 'Vendor-Contacts that are literals, local names, quoted or the robot'\''s own are refused' '
	for a in "c@[127.0.0.1]" "root@localhost.localdomain" "\"c,d\"@target.net" "x@example.org" \
		"x@host.test" "x@host.invalid" "x@printer.local" "a%b@relay.net"; do
		printf "Vendor-Contact: %s\n" "$a" | write_mail "$TMP/c.eml" "From: <s@signedless.net>" &&
		deliver_ok "$TMP/c.eml" -f s@signedless.net &&
		expect_eq 0 "$(sql "SELECT count(*) FROM outbox_recipients WHERE address = '\''${a//\"/\"\"}'\''")" "$a" || return 1
	done
'

test_expect_success 'one domain gets at most per_domain_per_day mails nobody asked for' '
	set_conf policy per_domain_per_day 2 &&
	"$VULNID" -c "$CONF" vendor add "Cap Dom" --domain capdom.net --contact p1@capdom.net >/dev/null &&
	"$VULNID" -c "$CONF" vendor contact "Cap Dom" p2@capdom.net >/dev/null &&
	"$VULNID" -c "$CONF" vendor contact "Cap Dom" p3@capdom.net >/dev/null &&
	printf "Vendor: Cap Dom\n" | write_mail "$TMP/cd.eml" "From: <x@x.net>" &&
	deliver_ok "$TMP/cd.eml" -f x@x.net &&
	expect_eq 2 "$(sql "SELECT count(*) FROM outbox_recipients WHERE address LIKE '\''%@capdom.net'\''")" &&
	grep -q "\"event\":\"policy-held\".*capdom.net" "$INST/audit.log"
'

test_expect_success 'a mail signed by a known key is bound by the daily caps only' '
	set_conf policy per_domain_per_day 100 &&
	fpr=$(new_signing_key s "Signer <s@signed.net>") &&
	"$VULNID" -c "$CONF" keys import "$TMP/s.asc" >/dev/null &&
	text=$(for i in $(seq 5); do printf "Vendor-Contact: psirt@signed%s.net\n---\n" $i; done) &&
	clearsigned_mail "$TMP/sig.eml" s "$fpr" "$text" "From: <s@signed.net>" &&
	deliver_ok "$TMP/sig.eml" -f s@signed.net &&
	expect_eq 5 "$(sql "SELECT count(*) FROM outbox_recipients WHERE address LIKE '\''psirt@signed%'\''")"
'

test_done
