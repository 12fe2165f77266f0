#!/bin/bash
# T521-endorse: permitted contributors by command.  The verified creator
# endorses a newcomer's key for the entry (endorse ID KEY [FIELD...]), a
# moderator for every entry (endorse KEY, signed, to the request address);
# the endorsed key's signed additions then move the headline as a
# "contributor, endorsed by ..." within the fields allowed; unendorse ends
# it.  Authority only from a signature over the text that acts: a third
# party, an unsigned mail, a signed endorse sent to another entry, a
# replayed one, a forged From all leave the newcomer a third party.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
CFPR=$(new_signing_key creator 'Carol Creator <carol@example.net>')
NFPR=$(new_signing_key newbie 'Nick Newbie <nick@example.com>')
MFPR=$(new_signing_key mod 'Mo Derator <mo@example.org>')
vulnid keys import "$TMP/creator.asc" >/dev/null
vulnid keys import "$TMP/newbie.asc" >/dev/null
vulnid keys import "$TMP/mod.asc" >/dev/null
set_conf lifecycle moderators "$MFPR"
Y=$(date -u +%Y)
E1="TEST-$Y-0001"
E2="TEST-$Y-0002"

test_expect_success 'setup: two entries signed by the creator' '
	signed creator "$CFPR" request@example.org "Title: Overflow in Foo
Product: Foo
Version: 1.0

Details." "From: carol@example.net" &&
	signed creator "$CFPR" request@example.org "Product: Bar

Another bug." "From: carol@example.net" &&
	expect_eq "$E2" "$(newest_id)"
'

test_expect_success 'before: the newcomer'\''s signed addition is a third party'\''s proposal' '
	signed newbie "$NFPR" "request+$E1@example.org" "Version: 0.9

For $E1." "From: nick@example.com" &&
	expect_eq "third-party" "$(last_record "$E1" role)" &&
	expect_eq "[\"1.0\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	expect_eq "Version=0.9" "$(headline "$E1" "\",\".join(p[\"key\"]+\"=\"+p[\"value\"] for p in j[\"proposals\"])")"
'

test_expect_success 'a third party, an unsigned mail and the newcomer itself cannot endorse' '
	before=$(records_of "$E1") &&
	plain bob@example.com "request+$E1@example.org" "endorse $E1 $NFPR" &&
	expect_match_text "refused: not authenticated: only the creator may do this" "$(sent_to bob@example.com)" &&
	signed newbie "$NFPR" request@example.org "endorse $E1 $NFPR" "From: nick@example.com" &&
	reply_to nick@example.com >"$TMP/r" &&
	expect_match_text "refused: wrong role: only the creator of the entry may do this" "$TMP/r" &&
	plain carol@example.net "request+$E1@example.org" "endorse $E1 $NFPR" &&
	reply_to carol@example.net >"$TMP/r" &&
	expect_match_text "refused: not authenticated" "$TMP/r" &&
	expect_eq "$before" "$(records_of "$E1")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM endorsements")"
'

test_expect_success 'the creator endorses the key for E1, for Version and Reference' '
	signed creator "$CFPR" request@example.org "endorse $E1 $NFPR version reference" "From: carol@example.net" &&
	echo "$SIGNED_MAIL" >"$TMP/endorse-mail" &&
	reply_to carol@example.net >"$TMP/r" &&
	expect_match_text "done: the key $NFPR is endorsed for $E1" "$TMP/r" &&
	expect_match "\(Version Reference\)" "$TMP/r" &&
	expect_eq "[[\"Endorse\",\"$NFPR\"],[\"Endorse-Fields\",\"Version Reference\"]]" "$(last_record "$E1" fields)" &&
	expect_eq "creator|key" "$(last_record "$E1" "role || '\''|'\'' || json_extract(auth, '\''$.how'\'')")" &&
	expect_match "\"event\":\"endorsed\",\"id\":\"$E1\".*\"fingerprint\":\"$NFPR\",\"by\":\"creator\",\"how\":\"command\",\"scope\":\"entry\"" "$INST/audit.log"
'

test_expect_success 'the endorsed key moves the headline, within the fields allowed' '
	signed newbie "$NFPR" "request+$E1@example.org" "Version: 2.0
Reference: https://example.com/advisory
Title: Pwned

For $E1." "From: nick@example.com" &&
	expect_eq "contributor" "$(last_record "$E1" role)" &&
	expect_eq "creator command Version Reference" \
		"$(last_record "$E1" "json_extract(auth, '\''$.endorsed_by'\'') || '\'' '\'' || json_extract(auth, '\''$.endorsement'\'') || '\'' '\'' || json_extract(auth, '\''$.fields'\'')")" &&
	expect_eq "[\"1.0\", \"2.0\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	expect_eq "[\"https://example.com/advisory\"]" "$(headline "$E1" "j[\"references\"]")" &&
	expect_eq "Overflow in Foo" "$(headline "$E1" "j[\"title\"]")" &&
	headline "$E1" "[p[\"key\"]+\"=\"+p[\"value\"] for p in j[\"proposals\"]]" >"$TMP/p" &&
	expect_match "Title=Pwned" "$TMP/p" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "contributor, endorsed by the creator for Version Reference, signed by $NFPR" "$TMP/show" &&
	expect_match "^endorsed: +$NFPR for Version Reference \(record [0-9]+, creator" "$TMP/show" &&
	reply_to nick@example.com >"$TMP/r" &&
	expect_match "Your key is endorsed for these fields: Version Reference" "$TMP/r"
'

test_expect_success 'not on the other entry: there it stays a third party' '
	signed newbie "$NFPR" "request+$E2@example.org" "Version: 7.7

For $E2." "From: nick@example.com" &&
	expect_eq "third-party" "$(last_record "$E2" role)" &&
	expect_eq "[]" "$(headline "$E2" "j[\"versions\"]")"
'

test_expect_success 'a signed endorse sent to another entry, and a replay of it, grant nothing' '
	clearsigned_mail "$TMP/cap.eml" creator "$CFPR" "endorse $E1 $NFPR" "Message-ID: <cap@example.net>" \
		"From: carol@example.net" &&
	# the same signed text, routed to E2 by its address: it names E1 only
	"$PYTHON" "$CORPORA/openpgp/pgpmail.py" reheader "$TMP/cap.eml" "$TMP/cap2.eml" "Message-ID: <cap2@example.net>" \
		"To: request+$E2@example.org" &&
	deliver_ok "$TMP/cap2.eml" -r "request+$E2@example.org" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM endorsements WHERE entry = '\''$E2'\''")" &&
	# the first signed endorse of E1, sent again with new headers: a replay
	"$PYTHON" "$CORPORA/openpgp/pgpmail.py" reheader "$(cat "$TMP/endorse-mail")" "$TMP/again.eml" \
		"Message-ID: <again@example.net>" &&
	deliver_ok "$TMP/again.eml" -r request@example.org &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''again@example.net'\''")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM endorsements")"
'

test_expect_success 'a forged From of the newcomer, unsigned, is a third party' '
	plain nick@example.com "request+$E1@example.org" "Version: 6.6" &&
	expect_eq "third-party" "$(last_record "$E1" role)" &&
	headline "$E1" "j[\"versions\"]" >"$TMP/v" && expect_no_match "6.6" "$TMP/v"
'

test_expect_success 'a moderator endorses the key for every entry, by a signed mail to the request address' '
	plain bob@example.com request@example.org "endorse $NFPR" &&
	expect_match_text "refused: name the entry" "$(sent_to bob@example.com)" &&
	signed mod "$MFPR" request@example.org "endorse $NFPR" "From: mo@example.org" &&
	reply_to mo@example.org >"$TMP/r" &&
	expect_match_text "done: the key $NFPR is endorsed for every entry" "$TMP/r" &&
	expect_eq "||$MFPR|endorse" "$(sql "SELECT coalesce(entry, '\'''\'') || '\''|'\'' || coalesce(fields, '\'''\'') || '\''|'\'' || endorser || '\''|'\'' || action FROM endorsements ORDER BY id DESC LIMIT 1")" &&
	signed newbie "$NFPR" "request+$E2@example.org" "Version: 8.8
Title: Bar is broken

For $E2." "From: nick@example.com" &&
	expect_eq "contributor" "$(last_record "$E2" role)" &&
	expect_eq "$MFPR" "$(last_record "$E2" "json_extract(auth, '\''$.endorsed_by'\'')")" &&
	expect_eq "[\"8.8\"]" "$(headline "$E2" "j[\"versions\"]")" &&
	expect_eq "Bar is broken" "$(headline "$E2" "j[\"title\"]")" &&
	vulnid show "$E2" >"$TMP/show" &&
	expect_match "contributor, endorsed by the moderator $MFPR, signed by $NFPR" "$TMP/show"
'

test_expect_success 'the entry'\''s own word stands: the creator unendorses the key for E1' '
	signed creator "$CFPR" "request+$E1@example.org" "unendorse $E1 $NFPR" "From: carol@example.net" &&
	expect_match_text "done: the key $NFPR is no longer endorsed for $E1" "$(sent_to carol@example.net)" &&
	expect_eq "[[\"Unendorse\",\"$NFPR\"]]" "$(last_record "$E1" fields)" &&
	signed newbie "$NFPR" "request+$E1@example.org" "Version: 3.0

For $E1." "From: nick@example.com" &&
	expect_eq "third-party" "$(last_record "$E1" role)" &&
	expect_eq "[\"1.0\", \"2.0\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	vulnid show "$E1" >"$TMP/show" && expect_no_match "^endorsed:" "$TMP/show" &&
	signed mod "$MFPR" request@example.org "unendorse $NFPR" "From: mo@example.org" &&
	expect_match_text "no longer endorsed for every entry" "$(sent_to mo@example.org)" &&
	signed newbie "$NFPR" "request+$E2@example.org" "Version: 9.9

For $E2." "From: nick@example.com" &&
	expect_eq "third-party" "$(last_record "$E2" role)"
'

test_expect_success 'the endorsement rows are append-only' '
	! sql "UPDATE endorsements SET action = '\''endorse'\''" 2>/dev/null &&
	! sql "DELETE FROM endorsements" 2>/dev/null &&
	expect_eq 4 "$(sql "SELECT count(*) FROM endorsements")"
'

test_done
