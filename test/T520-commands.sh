#!/bin/bash
# T520-commands: command lines at the top of a mail: help, lookup, key,
# alias, rate, duplicate-of, spam, link, subscribe, unsubscribe; every
# command gets a result
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
vulnid() { "$VULNID" -c "$CONF" "$@"; }

# cmd FROM TO TEXT: deliver a mail with TEXT from FROM to TO; the reply's
# body lands in $TMP/reply
n=0
cmd() {
	n=$((n + 1))
	printf '%s\n' "$3" | write_mail "$TMP/cmd$n.eml" "Message-ID: <cmd$n.$RANDOM@example.net>" "From: $1" &&
	deliver_ok "$TMP/cmd$n.eml" -r "$2" &&
	mail_body "$(sent_to "$1")" >"$TMP/reply"
}
records() { sql "SELECT count(*) FROM records WHERE entry = '$1'"; }
E1="TEST-$Y-0001"
E2="TEST-$Y-0002"
E3="TEST-$Y-0003"
E4="TEST-$Y-0004"

MODFPR=$(new_signing_key mod 'Moderator <mod@example.org>')

test_expect_success 'setup: a public, an embargoed and a duplicate entry; a moderator key' '
	vulnid keys import "$TMP/mod.asc" >/dev/null &&
	set_conf lifecycle moderators "$MODFPR" &&
	printf "Product: Foo\nVersion: 1.0\n\nPublic details of the Foo bug.\n" |
		write_mail "$TMP/r1.eml" "Message-ID: <r1@example.net>" "Subject: Foo bug" &&
	deliver_ok "$TMP/r1.eml" &&
	printf "Product: Bar\nEmbargo: 2099-01-31\n\nSecret details of the Bar bug.\n" |
		write_mail "$TMP/r2.eml" "Message-ID: <r2@example.net>" "Subject: Bar bug" &&
	deliver_ok "$TMP/r2.eml" &&
	printf "Product: Foo\n\nThe same Foo bug again.\n" |
		write_mail "$TMP/r3.eml" "Message-ID: <r3@example.net>" "Subject: Foo bug again" &&
	deliver_ok "$TMP/r3.eml" &&
	printf "Product: Spam\n\nBuy things.\n" |
		write_mail "$TMP/r4.eml" "Message-ID: <r4@example.net>" "Subject: cheap things" &&
	deliver_ok "$TMP/r4.eml" &&
	expect_eq 4 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'commands alone to the request address get no ID, and a result each' '
	printf "lookup %s\nfrobnicate\n" "$E1" | write_mail "$TMP/new.eml" "Message-ID: <new@example.net>" &&
	deliver_ok "$TMP/new.eml" -r request@example.org &&
	expect_eq 5 "$(sql "SELECT count(*) FROM entries")" "with text it is a request" &&
	E5="TEST-$Y-0005" &&
	expect_eq "lookup $E1
frobnicate" "$(sql "SELECT body FROM records WHERE entry = '\''$E5'\''")" &&
	cmd zed@example.org request@example.org "lookup $E1
help
lookup TEST-$Y-0999" &&
	expect_eq 5 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 3 "$(grep -c "^> " "$TMP/reply")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id LIKE '\''cmd$n.%'\'' AND disposition <> '\''commands'\''")"
'

test_expect_success 'lookup of a public entry: its headline to an unverified sender, its public view to a signed mail' '
	cmd zed@example.org request@example.org "lookup $E1
subscribe $E1" &&
	expect_match "^> lookup $E1$" "$TMP/reply" &&
	expect_match "$E1: Foo bug" "$TMP/reply" &&
	expect_match "^    +product: +Foo$" "$TMP/reply" &&
	expect_match "^    +address: +request\+$E1@example.org$" "$TMP/reply" &&
	expect_no_match "Public details of the Foo bug." "$TMP/reply" &&
	clearsigned_mail "$TMP/ls.eml" mod "$MODFPR" "lookup $E1" "From: mod@example.org" "Message-ID: <ls@example.net>" &&
	deliver_ok "$TMP/ls.eml" -r request@example.org &&
	mail_body "$(sent_to mod@example.org)" >"$TMP/ls" &&
	expect_match "$E1: Foo bug" "$TMP/ls" &&
	expect_match "Public details of the Foo bug." "$TMP/ls" &&
	expect_match "^    +product: +Foo$" "$TMP/ls"
'

test_expect_success 'lookup of an embargoed entry shows only the stub' '
	cmd zed@example.org request@example.org "lookup $E2
subscribe $E2" &&
	expect_match "state: +embargoed until 2099-01-31" "$TMP/reply" &&
	expect_match "commitment: +[0-9a-f]{64}" "$TMP/reply" &&
	expect_no_match "Secret details" "$TMP/reply" &&
	expect_no_match "Bar" "$TMP/reply"
'

test_expect_success 'unknown IDs and unknown commands: refused and not understood' '
	cmd zed@example.org request@example.org "lookup TEST-$Y-0999
spam TEST-$Y-0998" &&
	expect_match "refused: unknown ID TEST-$Y-0999" "$TMP/reply" &&
	expect_match "refused: unknown ID TEST-$Y-0998" "$TMP/reply" &&
	cmd zed@example.org "request+$E1@example.org" "rate eleven
This line is text." &&
	expect_match "not understood: \"rate\" needs a number from 0 to 10" "$TMP/reply" &&
	expect_eq "rate eleven
This line is text." "$(sql "SELECT body FROM records WHERE entry = '\''$E1'\'' ORDER BY seq DESC LIMIT 1")"
'

test_expect_success 'help lists the commands' '
	cmd zed@example.org "request+$E1@example.org" "help" &&
	expect_match "^> help$" "$TMP/reply" &&
	expect_match "duplicate-of ID ID" "$TMP/reply" &&
	expect_match "subscribe \[ID\]" "$TMP/reply"
'

test_expect_success 'key returns the robot'\''s public key as an attachment' '
	cmd zed@example.org request@example.org "key
lookup $E1" &&
	f=$(sent_to zed@example.org) &&
	expect_match "application/pgp-keys" "$f" &&
	expect_match "BEGIN PGP PUBLIC KEY BLOCK" "$f" &&
	expect_match "done: the robot.s public key is attached; its fingerprint is" "$TMP/reply"
'

test_expect_success 'alias: recorded with its author, once' '
	before=$(records "$E1") &&
	cmd bob@example.com "request+$E1@example.org" "alias cve-$Y-12345" &&
	expect_match "done: CVE-$Y-12345 is recorded as an alias of $E1" "$TMP/reply" &&
	expect_eq $((before + 1)) "$(records "$E1")" &&
	expect_eq "command|third-party|bob@example.com|[[\"Alias\",\"CVE-$Y-12345\"]]" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || author || '\''|'\'' || fields FROM records WHERE entry = '\''$E1'\'' ORDER BY seq DESC LIMIT 1")" &&
	cmd carol@example.com "request+$E1@example.org" "alias CVE-$Y-12345" &&
	expect_match "already recorded as an alias" "$TMP/reply" &&
	expect_eq $((before + 1)) "$(records "$E1")" &&
	cmd carol@example.com request@example.org "alias $E1 GHSA-abcd-efgh-ijkl
lookup CVE-$Y-12345" &&
	expect_match "GHSA-abcd-efgh-ijkl is recorded as an alias of $E1" "$TMP/reply" &&
	expect_match "unverified: it is shown as a proposal" "$TMP/reply" &&
	expect_match_text "proposed: +Alias: CVE-$Y-12345 \(record [0-9]+, third party bob@example.com" "$TMP/reply"
'

test_expect_success 'rate: recorded; unsigned ratings are unverified, signed count once per key' '
	cmd bob@example.com "request+$E1@example.org" "rate 7 serious but needs login" &&
	expect_match_text "your rating 7 of $E1 is recorded as unverified" "$TMP/reply" &&
	expect_eq "[[\"Rating\",\"7\"],[\"Rating-Reason\",\"serious but needs login\"]]" \
		"$(sql "SELECT fields FROM records WHERE entry = '\''$E1'\'' ORDER BY seq DESC LIMIT 1")" &&
	clearsigned_mail "$TMP/rate1.eml" mod "$MODFPR" "rate $E1 4" "Message-ID: <rate1@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/rate1.eml" -r request@example.org &&
	clearsigned_mail "$TMP/rate2.eml" mod "$MODFPR" "rate $E1 6" "Message-ID: <rate2@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/rate2.eml" -r request@example.org &&
	mail_body "$(sent_to mod@example.org)" | flat | grep -q "counts once for your key" &&
	cmd zed@example.org request@example.org "lookup $E1" &&
	expect_match_text "rating: +6.0 from 1 signed key; unverified: 7.0 from 1 address" "$TMP/reply"
'

test_expect_success 'duplicate-of by others is refused' '
	before=$(records "$E3") &&
	cmd bob@example.com "request+$E3@example.org" "duplicate-of $E1" &&
	expect_match "refused: not authenticated: moderator commands must be signed" "$TMP/reply" &&
	clearsigned_mail "$TMP/d0.eml" mod "$MODFPR" "duplicate-of $E1" "Message-ID: <d0@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/d0.eml" -r "request+$E3@example.org" &&
	mail_body "$(sent_to mod@example.org)" | grep -q "refused: in a signed mail, name the entries" &&
	expect_eq "$before" "$(records "$E3")"
'

test_expect_success 'duplicate-of by a moderator (signed, naming both)' '
	clearsigned_mail "$TMP/d1.eml" mod "$MODFPR" "duplicate-of $E3 $E1" "Message-ID: <d1@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/d1.eml" -r request@example.org &&
	mail_body "$(sent_to mod@example.org)" | grep -q "done: $E3 is recorded as a duplicate of $E1" &&
	expect_eq "moderator|key|[[\"Duplicate-Of\",\"$E1\"]]" \
		"$(sql "SELECT role || '\''|'\'' || json_extract(auth, '\''$.how'\'') || '\''|'\'' || fields FROM records WHERE entry = '\''$E3'\'' ORDER BY seq DESC LIMIT 1")" &&
	clearsigned_mail "$TMP/d2.eml" mod "$MODFPR" "duplicate-of $E1 $E3" "Message-ID: <d2@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/d2.eml" -r request@example.org &&
	mail_body "$(sent_to mod@example.org)" | grep -q "refused: that would make a circle" &&
	cmd zed@example.org request@example.org "lookup $E3" &&
	expect_match_text "duplicate of: +$E1 \(record [0-9]+, moderator" "$TMP/reply"
'

test_expect_success 'link and spam by a moderator; refused for others' '
	cmd bob@example.com request@example.org "link $E1 $E2
spam $E4" &&
	expect_match "refused: not authenticated: moderator commands" "$TMP/reply" &&
	clearsigned_mail "$TMP/m1.eml" mod "$MODFPR" "link $E1 $E2
spam $E4" "Message-ID: <m1@example.net>" "From: mod@example.org" &&
	deliver_ok "$TMP/m1.eml" -r request@example.org &&
	mail_body "$(sent_to mod@example.org)" >"$TMP/m" &&
	expect_match "done: $E1 and $E2 are linked" "$TMP/m" &&
	expect_match "done: $E4 is marked as spam" "$TMP/m" &&
	expect_eq "[[\"Link\",\"$E2\"]]" "$(sql "SELECT fields FROM records WHERE entry = '\''$E1'\'' ORDER BY seq DESC LIMIT 1")" &&
	expect_eq "[] 1" "$(sql "SELECT fields || '\'' '\'' || (sealed IS NOT NULL) FROM records WHERE entry = '\''$E2'\'' ORDER BY seq DESC LIMIT 1")" "the command on the embargoed entry is sealed" &&
	cmd zed@example.org request@example.org "lookup $E4" &&
	expect_match "withheld: a moderator marked it as spam" "$TMP/reply" &&
	expect_no_match "Buy things" "$TMP/reply"
'

test_expect_success 'subscribe needs confirmation: nothing before, every later public record after' '
	cmd sub@example.net "request+$E1@example.org" "subscribe" &&
	expect_match "to confirm, reply to this mail" "$TMP/reply" &&
	tok=$(grep -Eo "Token: vulnid_[a-z2-7]{32}" "$TMP/reply" | cut -d" " -f2) &&
	test -n "$tok" &&
	before=$(sent_count) &&
	cmd bob@example.com "request+$E1@example.org" "Reference: https://example.org/before" &&
	expect_eq $((before + 1)) "$(sent_count)" "only the reply to bob: not subscribed yet" &&
	cmd sub@example.net "request+$E1@example.org" "Token: $tok" &&
	expect_match "Token: accepted: sub@example.net is subscribed to $E1" "$TMP/reply" &&
	expect_no_match "$tok" "$TMP/reply" &&
	cmd bob@example.com "request+$E1@example.org" "Reference: https://example.org/after" &&
	s=$(sent_to sub@example.net) &&
	mail_header "$s" Subject | grep -Eq "^\[$E1\] New record [0-9]+: Foo bug$" &&
	mail_body "$s" | grep -q "Reference: https://example.org/after" &&
	expect_eq "request+$E1@example.org" "$(mail_header "$s" Reply-To)"
'

test_expect_success 'a confirmation may come as a reply that quotes the request for it' '
	cmd sub3@example.net request@example.org "subscribe $E1" &&
	tok=$(grep -Eo "Token: vulnid_[a-z2-7]{32}" "$TMP/reply" | cut -d" " -f2) &&
	r=$(sent_to sub3@example.net) &&
	mid=$(mail_header "$r" Message-ID | tr -d "<>") &&
	before=$(records "$E1") &&
	{ printf "Token: %s\n\nOn Thu, vulnid <request@example.org> wrote:\n" "$tok"; sed "s/^/> /" "$TMP/reply"; } |
		write_mail "$TMP/q.eml" "Message-ID: <q@example.net>" "From: sub3@example.net" "In-Reply-To: <$mid>" &&
	deliver_ok "$TMP/q.eml" -r request@example.org &&
	mail_body "$(sent_to sub3@example.net)" | grep -q "sub3@example.net is subscribed to $E1" &&
	expect_eq "$before" "$(records "$E1")" "the quote is no addition" &&
	# the answer that asked for the confirmation is tied to the entry
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''q@example.net'\''")"
'

test_expect_success 'nobody can subscribe someone else: the token goes to the address subscribed' '
	write_mail "$TMP/forge.eml" "Message-ID: <forge@example.net>" "From: victim@example.org" <<<"subscribe $E1" &&
	deliver_ok "$TMP/forge.eml" -f attacker@example.com -r request@example.org &&
	! sent_to attacker@example.com >/dev/null &&
	sent_to victim@example.org >/dev/null &&
	expect_eq 0 "$(sql "SELECT count(*) FROM tokens WHERE role = '\''subscriber'\'' AND address = '\''victim@example.org'\''")"
'

test_expect_success 'a subscriber of an embargoed entry gets nothing while it is embargoed' '
	cmd sub2@example.net request@example.org "subscribe $E2" &&
	tok=$(grep -Eo "Token: vulnid_[a-z2-7]{32}" "$TMP/reply" | cut -d" " -f2) &&
	cmd sub2@example.net request@example.org "Token: $tok" &&
	expect_match "subscribed to $E2" "$TMP/reply" &&
	before=$(sent_count) &&
	cmd bob@example.com "request+$E2@example.org" "More secret details." &&
	expect_eq $((before + 1)) "$(sent_count)" "nothing to the subscriber"
'

test_expect_success 'unsubscribe, confirmed, stops the mails' '
	cmd sub@example.net request@example.org "unsubscribe $E1" &&
	tok=$(grep -Eo "Token: vulnid_[a-z2-7]{32}" "$TMP/reply" | cut -d" " -f2) &&
	cmd sub@example.net "request+$E1@example.org" "Token: $tok" &&
	expect_match "unsubscribed from $E1" "$TMP/reply" &&
	last=$(sent_to sub@example.net) &&
	cmd bob@example.com "request+$E1@example.org" "Reference: https://example.org/later" &&
	expect_eq "$last" "$(sent_to sub@example.net)" "no more mail to sub@" &&
	mail_header "$(sent_to sub3@example.net)" Subject | grep -q "New record"
'

test_expect_success 'at most 20 commands a mail' '
	text=$(for i in $(seq 1 25); do echo "lookup $E1"; done) &&
	cmd zed@example.org request@example.org "$text" &&
	expect_match "5 more command lines were not handled: at most 20" "$TMP/reply" &&
	expect_match "refused: at most 5 lookups per mail" "$TMP/reply"
'

test_expect_success 'vulnid tick releases the embargoed entry on its date: its subscriber gets what was sealed' '
	before=$(sent_count) &&
	VULNID_TEST_NOW=2099-02-01T00:00:00Z vulnid tick >/dev/null &&
	expect_match "\"event\":\"released\",\"id\":\"$E2\"" "$INST/audit.log" &&
	test "$(sent_count)" -gt "$before" &&
	grep -l "Secret details of the Bar bug" $(sent_files | tail -n +$((before + 1))) >"$TMP/got" &&
	for f in $(cat "$TMP/got"); do mail_header "$f" To; done | grep -qx "sub2@example.net"
'

test_expect_success 'the audit chain verifies' '
	vulnid audit verify >/dev/null
'

test_done
