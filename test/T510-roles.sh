#!/bin/bash
# T510-roles: who may do what to an entry, and how it is known: the
# creator by key or token, the vendor by key, token or (unverified)
# domain, third parties; release, embargo, withdraw; vendor responses
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
vulnid() { "$VULNID" -c "$CONF" "$@"; }

# G HOME ARGS: gpg in HOME, never asking anything
# new_key NAME "UID": a keyring $TMP/gnupg-NAME; prints the fingerprint
new_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	G "$h" --armor --export "$fpr" >"$TMP/$1.asc"
	echo "$fpr"
}
token_in() { mail_body "$1" | grep -Eo 'Token: vulnid_[a-z2-7]{32}' | head -n 1 | cut -d" " -f2; }
PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
# vendor_token MAIL: the token in a notification encrypted to Vera's key
vendor_token() {
	$PGPMAIL decrypt "$1" "$TMP/gnupg-vera" "$TMP/.dec" >/dev/null 2>&1 || return 1
	$PGPMAIL text "$TMP/.dec" | grep -Eo 'Token: vulnid_[a-z2-7]{32}' | head -n 1 | cut -d" " -f2
}
# the newest mail to ADDRESS whose Subject matches PATTERN
mail_to_subject() {
	local f
	for f in $(sent_files | tac); do
		mail_header "$f" To | grep -qi -- "$1" || continue
		mail_header "$f" Subject | grep -Eq -- "$2" && { echo "$f"; return 0; }
	done
	fail "no mail to $1 with subject $2"
}
reply_to() { mail_body "$(mail_to_subject "$1" "^Re: ")"; }
state() { vulnid show "$1" --json | json_get 'j["state"]'; }

AFPR=$(new_key alice 'Alice <alice@example.net>')
VFPR=$(new_key vera 'Vera <vera@widget.example>')
MFPR=$(new_key mallory 'Mallory <mallory@example.com>')

test_expect_success 'setup: keys, the vendor with its key and domain' '
	vulnid key export >"$TMP/robot.asc" &&
	G "$TMP/gnupg-vera" --import "$TMP/robot.asc" 2>/dev/null &&
	vulnid keys import "$TMP/alice.asc" >/dev/null &&
	vulnid keys import "$TMP/mallory.asc" >/dev/null &&
	vulnid vendor add "Widget Co" --contact psirt@widget.example >/dev/null &&
	vulnid vendor domain "Widget Co" widget.example >/dev/null &&
	vulnid vendor key "Widget Co" "$TMP/vera.asc" >/dev/null &&
	vulnid vendor show "Widget Co" | grep -q "$VFPR"
'

E1="TEST-$Y-0001"
test_expect_success 'setup: an unsigned embargoed request with a creator token' '
	write_mail "$TMP/r1.eml" "Message-ID: <r1@example.net>" "Subject: Overflow in Widget" <<-MAIL &&
	Vendor: Widget Co
	Product: Widget
	Embargo: 2099-01-31

	A heap overflow in the parser.
	MAIL
	deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org &&
	expect_eq embargoed "$(state "$E1")" &&
	token_in "$(mail_to_subject alice@example.net "^\[$E1\]")" >"$TMP/ctok" &&
	test -s "$TMP/ctok" &&
	n=$(sent_to psirt@widget.example) &&
	expect_match "multipart/encrypted" "$n" &&
	expect_no_match "heap overflow" "$n" &&
	vendor_token "$n" >"$TMP/vtok" &&
	test -s "$TMP/vtok"
'

test_expect_success 'release without a token or key is refused: not authenticated' '
	write_mail "$TMP/x1.eml" "Message-ID: <x1@example.net>" "From: Bob <bob@example.com>" <<<"release" &&
	deliver_ok "$TMP/x1.eml" -r "request+$E1@example.org" &&
	reply_to bob@example.com >"$TMP/b" &&
	expect_match "^> release$" "$TMP/b" &&
	expect_match "refused: not authenticated: only the creator may do this" "$TMP/b" &&
	expect_eq embargoed "$(state "$E1")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$E1'\''")" "no record for a refused command"
'

test_expect_success 'the same from the creator'\''s address, without the token: still refused' '
	write_mail "$TMP/x2.eml" "Message-ID: <x2@example.net>" <<<"release" &&
	deliver_ok "$TMP/x2.eml" -r "request+$E1@example.org" &&
	reply_to alice@example.net | grep -q "refused: not authenticated" &&
	expect_eq embargoed "$(state "$E1")"
'

test_expect_success 'release signed by another key is refused: wrong role' '
	clearsigned_mail "$TMP/x3.eml" mallory "$MFPR" "release $E1" "Message-ID: <x3@example.net>" "From: mallory@example.com" &&
	deliver_ok "$TMP/x3.eml" -r "request+$E1@example.org" &&
	reply_to mallory@example.com | grep -q "refused: wrong role: only the creator" &&
	expect_eq embargoed "$(state "$E1")"
'

test_expect_success 'the vendor token still is not the creator'\''s' '
	printf "Token: %s\nrelease\n" "$(cat "$TMP/vtok")" |
		write_mail "$TMP/x4.eml" "Message-ID: <x4@example.net>" "From: psirt@widget.example" &&
	deliver_ok "$TMP/x4.eml" -r "request+$E1@example.org" &&
	reply_to psirt@widget.example >"$TMP/v" &&
	expect_match "Token: accepted: you act as the vendor of $E1" "$TMP/v" &&
	expect_match "refused: not authenticated: only the creator" "$TMP/v" &&
	expect_eq embargoed "$(state "$E1")"
'

test_expect_success 'a vendor response by token is recorded beside the claim and told to the researcher' '
	n=$(sent_to psirt@widget.example) &&
	mid=$(mail_header "$n" Message-ID | tr -d "<>") &&
	printf "Token: %s\nStatus: confirmed\n\nWe confirm the overflow; a fix is on its way.\n" "$(cat "$TMP/vtok")" |
		write_mail "$TMP/v1.eml" "Message-ID: <v1@example.net>" "From: Widget PSIRT <psirt@widget.example>" \
			"In-Reply-To: <$mid>" "Subject: Re: embargoed report" &&
	deliver_ok "$TMP/v1.eml" -r request@example.org &&
	expect_eq "vendor-response|vendor|token" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || json_extract(auth, '\''$.how'\'') FROM records WHERE entry = '\''$E1'\'' AND seq = 2")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$E1'\'' AND seq = 2 AND sealed IS NOT NULL AND body = '\'''\''")" "sealed while embargoed" &&
	r=$(mail_to_subject alice@example.net "^\[$E1\] Response from the vendor \(verified\): confirmed$") &&
	mail_body "$r" >"$TMP/vr" &&
	expect_match "From: +psirt@widget.example" "$TMP/vr" &&
	expect_match "verified by token" "$TMP/vr" &&
	expect_match "We confirm the overflow" "$TMP/vr" &&
	expect_eq "request+$E1@example.org" "$(mail_header "$r" Reply-To)"
'

test_expect_success 'a third party cannot state the vendor'\''s position' '
	printf "Status: fixed\n\nI think it is fixed.\n" |
		write_mail "$TMP/x5.eml" "Message-ID: <x5@example.net>" "From: bob@example.com" &&
	deliver_ok "$TMP/x5.eml" -r "request+$E1@example.org" &&
	reply_to bob@example.com | grep -q "Status: not taken as a field (only the vendor states a position)"
'

test_expect_success 'embargo YYYY-MM-DD by the creator (token) moves the embargo' '
	printf "Token: %s\nembargo 2098-06-30\n" "$(cat "$TMP/ctok")" |
		write_mail "$TMP/c1.eml" "Message-ID: <c1@example.net>" &&
	deliver_ok "$TMP/c1.eml" -r "request+$E1@example.org" &&
	reply_to alice@example.net | grep -q "done: the embargo on $E1 now ends on 2098-06-30" &&
	expect_eq "command|creator|[[\"Embargo\",\"2098-06-30\"]]" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || fields FROM records WHERE entry = '\''$E1'\'' ORDER BY seq DESC LIMIT 1")" &&
	printf "embargo 2097-01-01\n" | write_mail "$TMP/x6.eml" "Message-ID: <x6@example.net>" "From: bob@example.com" &&
	deliver_ok "$TMP/x6.eml" -r "request+$E1@example.org" &&
	reply_to bob@example.com | grep -q "refused: not authenticated"
'

test_expect_success 'release by the creator'\''s token: the entry is public, the vendor position shown' '
	printf "Token: %s\nrelease\n" "$(cat "$TMP/ctok")" |
		write_mail "$TMP/c2.eml" "Message-ID: <c2@example.net>" &&
	deliver_ok "$TMP/c2.eml" -r "request+$E1@example.org" &&
	reply_to alice@example.net | grep -q "done: the embargo on $E1 was lifted" &&
	expect_eq public "$(state "$E1")" &&
	expect_eq 3 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$E1'\'' AND kind = '\''release'\''")" "every sealed record disclosed" &&
	clearsigned_mail "$TMP/l1.eml" mallory "$MFPR" "lookup $E1" "Message-ID: <l1@example.net>" "From: mallory@example.com" &&
	deliver_ok "$TMP/l1.eml" -r request@example.org &&
	reply_to mallory@example.com >"$TMP/l" &&
	expect_match_text "vendor says: +confirmed \(record 2, vendor psirt@widget.example, verified by token\)" "$TMP/l" &&
	expect_match "A heap overflow in the parser." "$TMP/l" &&
	expect_match "We confirm the overflow" "$TMP/l"
'

test_expect_success 'release of a public entry is refused' '
	printf "Token: %s\nrelease\n" "$(cat "$TMP/ctok")" |
		write_mail "$TMP/c3.eml" "Message-ID: <c3@example.net>" &&
	deliver_ok "$TMP/c3.eml" -r "request+$E1@example.org" &&
	reply_to alice@example.net | grep -q "refused: $E1 is not under embargo"
'

E2="TEST-$Y-0002"
test_expect_success 'a signed request: the creator releases it by a signed mail naming the entry' '
	clearsigned_mail "$TMP/s1.eml" alice "$AFPR" "Vendor: Widget Co
Embargo: 2099-12-31

Signed and embargoed." "Message-ID: <s1@example.net>" "Subject: signed one" &&
	deliver_ok "$TMP/s1.eml" -r request@example.org &&
	expect_eq embargoed "$(state "$E2")" &&
	clearsigned_mail "$TMP/s2.eml" alice "$AFPR" "release" "Message-ID: <s2@example.net>" &&
	deliver_ok "$TMP/s2.eml" -r "request+$E2@example.org" &&
	reply_to alice@example.net | grep -q "refused: in a signed mail, name the entry in the command" &&
	expect_eq embargoed "$(state "$E2")" &&
	clearsigned_mail "$TMP/s3.eml" alice "$AFPR" "release $E2" "Message-ID: <s3@example.net>" &&
	deliver_ok "$TMP/s3.eml" -r "request+$E2@example.org" &&
	reply_to alice@example.net | grep -q "done: the embargo on $E2 was lifted" &&
	expect_eq public "$(state "$E2")" &&
	expect_match "\"event\":\"released\",\"id\":\"$E2\".*\"why\":\"creator\"" "$INST/audit.log"
'

test_expect_success 'a replayed signed release does nothing' '
	before=$(sql "SELECT count(*) FROM records") &&
	sed "s/^Message-ID: .*/Message-ID: <s3-replay@example.net>/" "$TMP/s3.eml" >"$TMP/s3r.eml" &&
	deliver_ok "$TMP/s3r.eml" -r "request+$E2@example.org" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM records")" &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''s3-replay@example.net'\''")"
'

E3="TEST-$Y-0003"
test_expect_success 'a vendor response signed with the directory key: vendor by key, status shown' '
	printf "Vendor: Widget Co\nProduct: Widget\n\nA public bug.\n" |
		write_mail "$TMP/r3.eml" "Message-ID: <r3@example.net>" "Subject: public bug" &&
	deliver_ok "$TMP/r3.eml" -r request@example.org &&
	expect_eq public "$(state "$E3")" &&
	clearsigned_mail "$TMP/v3.eml" vera "$VFPR" "Status: fixed

Fixed in Widget 3.4 ($E3)." "Message-ID: <v3@example.net>" "From: vera@widget.example" "Subject: Re: [$E3] public bug" &&
	deliver_ok "$TMP/v3.eml" -r request@example.org &&
	expect_eq "vendor-response|vendor|key|$VFPR" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || json_extract(auth, '\''$.how'\'') || '\''|'\'' || json_extract(auth, '\''$.fingerprint'\'') FROM records WHERE entry = '\''$E3'\'' AND seq = 2")" &&
	mail_to_subject alice@example.net "^\[$E3\] Response from the vendor \(verified\): fixed$" >/dev/null &&
	printf "lookup %s\n" "$E3" | write_mail "$TMP/l3.eml" "Message-ID: <l3@example.net>" "From: zed@example.org" &&
	deliver_ok "$TMP/l3.eml" -r request@example.org &&
	reply_to zed@example.org | flat | grep -q "vendor says: *fixed (record 2, vendor vera@widget.example, verified by OpenPGP signature)"
'

test_expect_success 'mail from the vendor'\''s domain is a vendor response, shown as unverified' '
	printf "Status: disputed\n\nNot a bug.\n" |
		write_mail "$TMP/v4.eml" "Message-ID: <v4@example.net>" "From: intern@widget.example" "Subject: Re: [$E3] public bug" &&
	deliver_ok "$TMP/v4.eml" -r request@example.org &&
	expect_eq "vendor-response|vendor|domain" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || json_extract(auth, '\''$.how'\'') FROM records WHERE entry = '\''$E3'\'' AND seq = 3")" &&
	reply_to intern@widget.example | flat | grep -q "unverified: sent from the vendor.s domain" &&
	printf "lookup %s\n" "$E3" | write_mail "$TMP/l4.eml" "Message-ID: <l4@example.net>" "From: zed@example.org" &&
	deliver_ok "$TMP/l4.eml" -r request@example.org &&
	reply_to zed@example.org >"$TMP/l4.txt" &&
	flat "$TMP/l4.txt" | grep -q "vendor says: *fixed (record 2, vendor vera@widget.example, verified by OpenPGP signature; 2 statements in all)" &&
	flat "$TMP/l4.txt" | grep -q "proposed: *Status: disputed (record 3, vendor intern@widget.example, unverified: sent from the vendor.s domain)"
'

test_expect_success 'withdraw by the creator: the entry stays, marked withdrawn with the reason' '
	tok=$(token_in "$(mail_to_subject alice@example.net "^\[$E3\] public bug")") &&
	printf "Token: %s\nwithdraw duplicate of my earlier report\n" "$tok" |
		write_mail "$TMP/w1.eml" "Message-ID: <w1@example.net>" &&
	deliver_ok "$TMP/w1.eml" -r "request+$E3@example.org" &&
	reply_to alice@example.net | grep -q "done: $E3 is withdrawn" &&
	clearsigned_mail "$TMP/l5.eml" mallory "$MFPR" "lookup $E3" "Message-ID: <l5@example.net>" "From: mallory@example.com" &&
	deliver_ok "$TMP/l5.eml" -r request@example.org &&
	reply_to mallory@example.com >"$TMP/l5" &&
	expect_match_text "state: +WITHDRAWN \(rejected\): duplicate of my earlier report" "$TMP/l5" &&
	expect_match "A public bug." "$TMP/l5" &&
	printf "withdraw because\n" | write_mail "$TMP/w2.eml" "Message-ID: <w2@example.net>" "From: bob@example.com" &&
	deliver_ok "$TMP/w2.eml" -r "request+$E3@example.org" &&
	reply_to bob@example.com | grep -q "refused: not authenticated"
'

test_expect_success 'the audit chain verifies' '
	vulnid audit verify >/dev/null
'

test_done
