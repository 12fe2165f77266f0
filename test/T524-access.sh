#!/bin/bash
# T524-access: signed access requests to an embargoed entry.  A key that
# can encrypt asks ("access ID", signed); the creator is asked; the
# verified creator grants ("grant ID KEY"): the robot sends the sealed
# records encrypted to that key, at the address of the signed request, now
# and for every sealed record added later, until the release.  Requests,
# grants and deliveries are records, never sealed: the public stub shows
# that a key was given access and when, not what it read.  The robot never
# mails sealed content to anyone the verified creator did not grant: not on
# an unsigned request, a key that cannot encrypt, a grant by someone else
# or to a key that did not ask, a replayed grant; and never in clear.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
CFPR=$(new_key creator 'Carol Creator <carol@example.net>')
RFPR=$(new_key reader 'Rita Reader <rita@cert.example>')
SFPR=$(new_signing_key signonly 'Sam Signonly <sam@example.com>')
MFPR=$(new_key mallory 'Mallory <mallory@example.com>')
for k in creator reader signonly mallory; do vulnid keys import "$TMP/$k.asc" >/dev/null; done
Y=$(date -u +%Y)
E1="TEST-$Y-0001"

# secret_anywhere: the sealed text in clear in any mail the robot wrote
secret_anywhere() { grep -rlE "EMBSECRET|EMBMORE" "$INST/sent/new" 2>/dev/null; }

test_expect_success 'setup: an embargoed entry of a signed creator' '
	signed creator "$CFPR" request@example.org "Product: Secret router
Embargo: 2099-01-01

EMBSECRET details of the bug." "From: carol@example.net" &&
	expect_eq "$E1" "$(newest_id)" &&
	expect_eq embargoed "$(headline "$E1" "j[\"state\"]")"
'

test_expect_success 'refused: an unsigned request, a key that cannot encrypt, a signature that does not name the entry' '
	plain mallory@example.com request@example.org "access $E1" &&
	expect_match_text "refused: not signed" "$(sent_to mallory@example.com)" &&
	signed signonly "$SFPR" request@example.org "access $E1" "From: sam@example.com" &&
	expect_match_text "refused: your key cannot take encrypted mail" "$(sent_to sam@example.com)" &&
	signed mallory "$MFPR" "request+$E1@example.org" "access" "From: mallory@example.com" &&
	expect_match_text "refused: in a signed mail, name the entry in the command" "$(sent_to mallory@example.com)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM records WHERE fields LIKE '\''%Access-Request%'\''")" &&
	expect_eq "" "$(secret_anywhere)"
'

test_expect_success 'a signed request by a key that can encrypt: a public record, and the creator is asked' '
	signed reader "$RFPR" request@example.org "access $E1" "From: Rita Reader <rita@cert.example>" &&
	reply_to rita@cert.example >"$TMP/r" &&
	expect_match "your request for access to $E1 is recorded \(record 2\)" "$TMP/r" &&
	expect_match "The creator is asked" "$TMP/r" &&
	expect_eq "command|[[\"Access-Request\",\"$RFPR\"]]|0" \
		"$(sql "SELECT kind || '\''|'\'' || fields || '\''|'\'' || (sealed IS NOT NULL) FROM records WHERE entry = '\''$E1'\'' AND seq = 2")" &&
	ask=$(sent_to carol@example.net) &&
	expect_eq "[$E1] A key asks for access to the sealed records" "$(mail_header "$ask" Subject)" &&
	mail_body "$ask" >"$TMP/ask" &&
	expect_match "grant $E1 $RFPR" "$TMP/ask" &&
	expect_match "sent from rita@cert.example" "$TMP/ask" &&
	expect_match "Rita Reader <rita@cert.example>" "$TMP/ask" &&
	expect_eq "" "$(secret_anywhere)"
'

# The same text signed by the same key in the same second is the same
# signature to the robot: a replay, which never acts twice.  A reader asking
# again does so later.
test_expect_success 'asking again asks nobody again' '
	sleep 1 &&
	signed reader "$RFPR" request@example.org "access $E1" "From: Rita Reader <rita@cert.example>" &&
	expect_match_text "it waits for the creator.s answer" "$(sent_to rita@cert.example)" &&
	expect_eq 1 "$(mails_to carol@example.net | while read -r f; do mail_header "$f" Subject; done | grep -c "asks for access")"
'

test_expect_success 'refused: a grant by anyone but the creator, or to a key that did not ask' '
	plain bob@example.com "request+$E1@example.org" "grant $E1 $RFPR" &&
	expect_match_text "refused: not authenticated" "$(sent_to bob@example.com)" &&
	signed reader "$RFPR" request@example.org "grant $E1 $RFPR" "From: rita@cert.example" &&
	expect_match_text "refused: wrong role" "$(sent_to rita@cert.example)" &&
	signed creator "$CFPR" request@example.org "grant $E1 $MFPR" "From: carol@example.net" &&
	expect_match_text "refused: the key $MFPR has not asked for access to $E1" "$(sent_to carol@example.net)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM records WHERE kind = '\''delivery'\''")" &&
	expect_eq "" "$(secret_anywhere)"
'

test_expect_success 'the creator grants: the sealed records go to the reader, encrypted to its key' '
	signed creator "$CFPR" request@example.org "grant $E1 $RFPR" "From: carol@example.net" &&
	echo "$SIGNED_MAIL" >"$TMP/grant-mail" &&
	expect_match_text "done: the key $RFPR is given access to $E1" "$(sent_to carol@example.net)" &&
	d=$(sent_to rita@cert.example) &&
	expect_eq "[$E1] Sealed records, for the key given access" "$(mail_header "$d" Subject)" &&
	expect_match "multipart/encrypted" "$d" &&
	expect_no_match "EMBSECRET" "$d" &&
	decrypted_text "$d" reader >"$TMP/clear" &&
	expect_match "EMBSECRET details of the bug" "$TMP/clear" &&
	expect_match "holds the records 1;" "$TMP/clear" &&
	expect_eq "delivery|robot|robot|[[\"Delivered-To-Key\",\"$RFPR\"],[\"Records\",\"1\"]]" \
		"$(last_record "$E1" "kind || '\''|'\'' || role || '\''|'\'' || json_extract(auth, '\''$.how'\'') || '\''|'\'' || fields")" &&
	expect_match "\"event\":\"access-delivered\",\"id\":\"$E1\".*\"fingerprint\":\"$RFPR\",\"records\":\"1\"" "$INST/audit.log" &&
	expect_eq "" "$(secret_anywhere)"
'

test_expect_success 'the public view shows that the key was given access, and when; not what it read' '
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "^access: +$RFPR given access [0-9T:Z-]+ \(record [0-9]+\), sent sealed records 1 time" "$TMP/show" &&
	expect_no_match "EMBSECRET|Secret router" "$TMP/show" &&
	expect_eq "$RFPR 1" "$(headline "$E1" "j[\"access\"][0][\"fingerprint\"] + \" \" + str(j[\"access\"][0][\"deliveries\"])")" &&
	plain zed@example.org request@example.org "lookup $E1" &&
	reply_to zed@example.org >"$TMP/l" &&
	expect_match "access: +$RFPR given access" "$TMP/l" &&
	expect_no_match "EMBSECRET" "$TMP/l" &&
	vulnid export html "$TMP/html" >/dev/null &&
	grep -rq "$RFPR" "$TMP/html" &&
	! grep -rq "EMBSECRET" "$TMP/html"
'

test_expect_success 'a sealed record added later reaches the reader too, encrypted' '
	signed creator "$CFPR" "request+$E1@example.org" "About $E1: EMBMORE, the second bug." "From: carol@example.net" &&
	expect_eq 1 "$(last_record "$E1" "sealed IS NULL")" &&
	expect_eq delivery "$(last_record "$E1" kind)" &&
	d=$(sent_to rita@cert.example) &&
	decrypted_text "$d" reader >"$TMP/clear2" &&
	expect_match "EMBMORE, the second bug" "$TMP/clear2" &&
	expect_no_match "EMBSECRET details" "$TMP/clear2" &&
	expect_eq 2 "$(headline "$E1" "j[\"access\"][0][\"deliveries\"]")" &&
	expect_eq "" "$(secret_anywhere)"
'

test_expect_success 'a replayed grant is set aside and sends nothing again' '
	before=$(mails_to rita@cert.example | wc -l) &&
	$PGPMAIL reheader "$(cat "$TMP/grant-mail")" "$TMP/replay.eml" "Message-ID: <replay@example.net>" &&
	deliver_ok "$TMP/replay.eml" -r request@example.org &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''replay@example.net'\''")" &&
	expect_eq "$before" "$(mails_to rita@cert.example | wc -l)"
'

test_expect_success 'a grant by the creator'\''s token sends a long report too: the reader asked for it' '
	{ printf "Product: Big\nEmbargo: 2099-01-01\n\nEMBSECRET long report:\n"; head -c 24000 /dev/urandom | base64 -w 70; } >"$TMP/big" &&
	plain alice@example.net request@example.org "$(cat "$TMP/big")" &&
	E2=$(newest_id) && T=$(token_of "$E2") && test -n "$T" &&
	signed reader "$RFPR" request@example.org "access $E2" "From: Rita Reader <rita@cert.example>" &&
	plain alice@example.net "request+$E2@example.org" "Token: $T
grant $RFPR" &&
	expect_match_text "done: the key $RFPR is given access to $E2" "$(sent_to alice@example.net)" &&
	expect_eq 1 "$(headline "$E2" "j[\"access\"][0][\"deliveries\"]")" &&
	decrypted_text "$(sent_to rita@cert.example)" reader >"$TMP/clear3" &&
	test "$(wc -c <"$TMP/clear3")" -gt 30000 &&
	expect_eq "" "$(secret_anywhere)"
'

test_expect_success 'the release ends it: nothing more is sent; requests, grants and deliveries stay public' '
	signed creator "$CFPR" request@example.org "release $E1" "From: carol@example.net" &&
	expect_eq public "$(headline "$E1" "j[\"state\"]")" &&
	before=$(mails_to rita@cert.example | wc -l) &&
	signed creator "$CFPR" "request+$E1@example.org" "About $E1: after the release." "From: carol@example.net" &&
	expect_eq "$before" "$(mails_to rita@cert.example | wc -l)" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "Access-Request: $RFPR" "$TMP/show" &&
	expect_match "Access-Grant: $RFPR" "$TMP/show" &&
	expect_match "record [0-9]+: delivery by robot, written by the robot" "$TMP/show" &&
	vulnid export feed "$TMP/feed" >/dev/null &&
	grep -h "Access-Grant" "$TMP"/feed/*.jsonl | grep -q "\"role\":\"creator\"" &&
	grep -h "\"kind\":\"delivery\"" "$TMP"/feed/*.jsonl | grep -q "Delivered-To-Key" &&
	vulnid key export >"$TMP/robot.asc" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/vf" 2>&1 || fail "verify-feed: $(cat "$TMP/vf")"
'

test_done
