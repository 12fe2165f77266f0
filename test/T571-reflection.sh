#!/bin/bash
# T571-reflection: anyone can put another's address into From.  A 219-byte
# mail with a forged From and five lookup lines made the robot mail 41,000
# bytes to that address, "help" 39 times its size, and forty such mails
# forty times that.  Now mail that does not prove its address (no known
# key, no token sent to that address, no DMARC pass of From at the
# operator's MTA) gets short lookups (the headline and the entry's address,
# not its records) and at most [policy] unverified_answer_bytes of answers
# per address and unverified_answer_hours, then one notice and silence;
# verified mail is answered in full and not counted.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf auth authserv_id mx.example.org
set_conf export base_url https://ids.example.org/
VICTIM=victim@target.net
mid=0
# forged KIND: a small unsigned mail with From the victim's address; no
# two alike (the command words' case varies), so that the loop brake's
# check for repeated mail does not stop them first
forged() {
	local j=0 w
	mid=$((mid + 1))
	{ printf "From: <%s>\nTo: request@example.org\nSubject: q\nMessage-ID: <f%s@attacker.net>\n\n" "$VICTIM" "$mid"
	  if [ "$1" = help ]; then
		case $((mid % 4)) in 0) echo help ;; 1) echo HELP ;; 2) echo Help ;; 3) echo hElP ;; esac
	  else
		for id in $IDS; do
			w=lookup && [ $(((mid >> j) & 1)) = 1 ] && w=LOOKUP
			echo "$w $id" && j=$((j + 1))
		done
	  fi
	} >"$TMP/f.eml" &&
	test "$(stat -c %s "$TMP/f.eml")" -lt 300 &&
	deliver_ok "$TMP/f.eml" -f "$VICTIM" -a 198.51.100.7
}
# bytes ADDRESS: what was mailed to ADDRESS (the Maildir files, signed)
bytes_to() {
	local f n=0
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi -- "$1" && n=$((n + $(stat -c %s "$f")))
	done
	echo "$n"
}
mails_to() {
	local f n=0
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi -- "$1" && n=$((n + 1))
	done
	echo "$n"
}

IDS=""
for i in 1 2 3 4 5; do
	{ printf "Vendor: Big %s\nProduct: Big %s\n\n" "$i" "$i"; head -c 6000 /dev/zero | tr "\0" x | fold -w 70; } |
		write_mail "$TMP/big.eml" "From: <big@r.net>" "Subject: big $i" &&
		deliver_ok "$TMP/big.eml" -f big@r.net || { echo "Bail out! no entries"; exit 1; }
done
IDS=$(sql "SELECT id FROM entries ORDER BY number")

test_expect_success 'an unverified lookup gets the headline, the address and the page, not the records' '
	forged lookups &&
	f=$(sent_to "$VICTIM") && mail_body "$f" >"$TMP/l1" &&
	expect_match "Big 1" "$TMP/l1" &&
	expect_match "address: +request\+$(echo $IDS | cut -d" " -f1)@example.org" "$TMP/l1" &&
	expect_match "page: +https://ids.example.org/entries/$(echo $IDS | cut -d" " -f1).html" "$TMP/l1" &&
	expect_no_match "xxxxxxxxxx" "$TMP/l1" &&
	test "$(stat -c %s "$f")" -lt 8192
'

test_expect_success '40 small mails with a forged From: at most 64 KiB to that address, one notice, all recorded' '
	mid=100 &&	# (the first case ran in a subshell of its own)
	for i in $(seq 39); do
		if [ $((i % 3)) = 0 ]; then forged help; else forged lookups; fi || return 1
	done &&
	total=$(bytes_to "$VICTIM") &&
	[ "$total" -le 65536 ] || fail "$total bytes mailed to $VICTIM" &&
	expect_eq 1 "$(grep -c "\"event\":\"answers-paused\"" "$INST/audit.log")" &&
	expect_eq 1 "$(for f in $(sent_files); do mail_header "$f" Subject; done | grep -c "answers to $VICTIM paused")" &&
	expect_eq 40 "$(sql "SELECT count(*) FROM messages WHERE message_id LIKE '\''f%@attacker.net'\''")" &&
	test "$(grep -c "\"event\":\"policy-held\".*unverified_answer_bytes" "$INST/audit.log")" -ge 25 &&
	test "$(sql "SELECT count(*) FROM answer_bytes WHERE address = '\''$VICTIM'\''")" -le 2
'

test_expect_success 'once told, the address gets nothing more in the period, even what would fit' '
	before=$(mails_to "$VICTIM") &&
	set_conf policy unverified_answer_bytes $(($(bytes_to "$VICTIM") + 20000)) &&
	printf "From: <%s>\nTo: request@example.org\nSubject: q\nMessage-ID: <small@attacker.net>\n\nlookup %s\n" \
		"$VICTIM" "$(echo $IDS | cut -d" " -f1)" >"$TMP/small.eml" &&
	deliver_ok "$TMP/small.eml" -f "$VICTIM" &&
	set_conf policy unverified_answer_bytes 49152 &&
	expect_eq "$before" "$(mails_to "$VICTIM")" &&
	expect_eq 1 "$(grep -c "\"event\":\"answers-paused\"" "$INST/audit.log")"
'

echo "# $(bytes_to "$VICTIM") bytes in $(mails_to "$VICTIM") mails to the forged From"

test_expect_success 'the same address, verified, is answered in full: a known key, its token, DMARC' '
	before=$(mails_to "$VICTIM") &&
	fpr=$(new_signing_key victim "Victim <$VICTIM>") &&
	"$VULNID" -c "$CONF" keys import "$TMP/victim.asc" >/dev/null &&
	clearsigned_mail "$TMP/s.eml" victim "$fpr" "lookup $(echo $IDS | cut -d" " -f2)" "From: <$VICTIM>" &&
	deliver_ok "$TMP/s.eml" -f "$VICTIM" &&
	expect_eq $((before + 1)) "$(mails_to "$VICTIM")" &&
	mail_body "$(sent_to "$VICTIM")" | grep -q xxxxxxxxxx &&
	printf "Authentication-Results: mx.example.org; dmarc=pass header.from=target.net\nFrom: <%s>\nSubject: d\n\nlookup %s\n" \
		"$VICTIM" "$(echo $IDS | cut -d" " -f3)" >"$TMP/d.eml" &&
	deliver_ok "$TMP/d.eml" -f "$VICTIM" &&
	expect_eq $((before + 2)) "$(mails_to "$VICTIM")" &&
	mail_body "$(sent_to "$VICTIM")" | grep -q xxxxxxxxxx &&
	# a subscription token sent to the address proves it
	clearsigned_mail "$TMP/sub.eml" victim "$fpr" "subscribe $(echo $IDS | cut -d" " -f4)" "From: <$VICTIM>" &&
	deliver_ok "$TMP/sub.eml" -f "$VICTIM" &&
	tok=$(mail_body "$(sent_to "$VICTIM")" | grep -Eo "Token: vulnid_[a-z2-7]{32}" | cut -d" " -f2) &&
	test -n "$tok" &&
	printf "Token: %s\nlookup %s\n" "$tok" "$(echo $IDS | cut -d" " -f5)" | write_mail "$TMP/t.eml" "From: <$VICTIM>" &&
	deliver_ok "$TMP/t.eml" -f "$VICTIM" &&
	expect_eq $((before + 4)) "$(mails_to "$VICTIM")" &&
	mail_body "$(sent_to "$VICTIM")" | grep -q xxxxxxxxxx &&
	# a token sent to another address proves nothing of this one
	ctok=$(mail_body "$(sent_to big@r.net)" | sed -n "s/^ *token: *\(vulnid_[a-z2-7]*\)$/\1/p" | head -n 1) &&
	test -n "$ctok" &&
	printf "Token: %s\nlookup %s\n" "$ctok" "$(echo $IDS | cut -d" " -f5)" | write_mail "$TMP/t2.eml" "From: <$VICTIM>" &&
	deliver_ok "$TMP/t2.eml" -f "$VICTIM" &&
	expect_eq $((before + 4)) "$(mails_to "$VICTIM")"
'

test_expect_success 'after the period the address is answered again' '
	before=$(mails_to "$VICTIM") &&
	later=$(date -u -d "+25 hours" +%Y-%m-%dT%H:%M:%SZ) &&
	printf "From: <%s>\nTo: request@example.org\nSubject: q\nMessage-ID: <later@attacker.net>\n\nhelp\n" "$VICTIM" >"$TMP/later.eml" &&
	VULNID_TEST_NOW=$later "$FILTER" -c "$CONF" -f "$VICTIM" <"$TMP/later.eml" &&
	expect_eq $((before + 1)) "$(mails_to "$VICTIM")"
'

test_expect_success 'other addresses were never limited' '
	printf "From: <other@else.net>\nSubject: h\n\nhelp\n" >"$TMP/o.eml" &&
	deliver_ok "$TMP/o.eml" -f other@else.net &&
	expect_eq 1 "$(mails_to other@else.net)"
'

test_done
