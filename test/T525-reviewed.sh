#!/bin/bash
# T525-reviewed: a moderator reviews a claim ("reviewed ID [PRODUCT
# VERSION]", signed, naming the entry): a mark on the entry, with what the
# review names, shown on every surface; nobody else can set it.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
MFPR=$(new_signing_key mod 'Mo Derator <mo@example.org>')
KFPR=$(new_signing_key kim 'Kim Keyholder <kim@example.com>')
vulnid keys import "$TMP/mod.asc" >/dev/null
vulnid keys import "$TMP/kim.asc" >/dev/null
set_conf lifecycle moderators "$MFPR"
Y=$(date -u +%Y)
E1="TEST-$Y-0001"
E2="TEST-$Y-0002"

test_expect_success 'setup: two entries' '
	plain alice@example.net request@example.org "Product: Example Server
Version: 2.4.1

A bug." &&
	plain alice@example.net request@example.org "Product: Bar" &&
	expect_eq "$E2" "$(newest_id)"
'

test_expect_success 'refused: unsigned, signed by another key, a moderator'\''s signature that does not name the entry' '
	T=$(token_of "$E1") &&
	plain alice@example.net "request+$E1@example.org" "Token: $T
reviewed" &&
	expect_match_text "refused: not authenticated: moderator commands must be signed" "$(sent_to alice@example.net)" &&
	signed kim "$KFPR" request@example.org "reviewed $E1" "From: kim@example.com" &&
	expect_match_text "refused: wrong role: only moderators may do this" "$(sent_to kim@example.com)" &&
	signed mod "$MFPR" "request+$E1@example.org" "reviewed" "From: mo@example.org" &&
	expect_match_text "refused: in a signed mail, name the entries" "$(sent_to mo@example.org)" &&
	expect_eq "[]" "$(headline "$E1" "j[\"marks\"]")"
'

test_expect_success 'a moderator reviews E1 for a product and version' '
	signed mod "$MFPR" request@example.org "reviewed $E1 Example Server 2.4.1" "From: mo@example.org" &&
	expect_match_text "done: $E1 is marked as reviewed: it concerns Example Server 2.4.1" "$(sent_to mo@example.org)" &&
	expect_eq "[[\"Reviewed\",\"yes\"],[\"Reviewed-Product\",\"Example Server\"],[\"Reviewed-Version\",\"2.4.1\"]]" \
		"$(last_record "$E1" fields)" &&
	expect_eq "moderator|key" "$(last_record "$E1" "role || '\''|'\'' || json_extract(auth, '\''$.how'\'')")" &&
	expect_eq "[\"reviewed\"]" "$(headline "$E1" "j[\"marks\"]")" &&
	expect_eq "Example Server 2.4.1 moderator" \
		"$(headline "$E1" "j[\"reviewed\"][\"product\"] + \" \" + j[\"reviewed\"][\"version\"] + \" \" + j[\"reviewed\"][\"by\"][\"role\"]")" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "^marks: +reviewed$" "$TMP/show" &&
	expect_match "^reviewed: +Example Server 2.4.1 \(record 2, moderator mo@example.org, verified by OpenPGP signature\)" "$TMP/show" &&
	plain zed@example.org request@example.org "lookup $E1" &&
	expect_match "reviewed: +Example Server 2.4.1" "$(sent_to zed@example.org)" &&
	vulnid export osv "$TMP/osv" >/dev/null &&
	expect_match "\"reviewed\" : \{" "$TMP/osv/x_$E1.json" &&
	vulnid export html "$TMP/html" >/dev/null &&
	grep -q "state-reviewed" "$TMP/html/entries/$E1.html" &&
	! grep -q "state-reviewed" "$TMP/html/entries/$E2.html"
'

test_expect_success 'reviewed without a product; a product without a version is not understood' '
	signed mod "$MFPR" request@example.org "reviewed $E2" "From: mo@example.org" &&
	expect_eq "[[\"Reviewed\",\"yes\"]]" "$(last_record "$E2" fields)" &&
	expect_eq "None" "$(headline "$E2" "j[\"reviewed\"][\"product\"]")" &&
	signed mod "$MFPR" "request+$E2@example.org" "reviewed $E2 Bar" "From: mo@example.org" &&
	expect_match "not understood: \"reviewed\" needs a product and a version" "$(sent_to mo@example.org)"
'

test_done
