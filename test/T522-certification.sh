#!/bin/bash
# T522-certification: permitted contributors by certification.  A
# newcomer's key that the creator's key certified (gpg --quick-sign-key),
# sent along with a mail the newcomer signed, makes the newcomer an
# endorsed contributor of that entry; a moderator's certification, of
# every entry.  gpg checks the certification, by the certifier's
# fingerprint, never by a user ID: a certification on someone else's key
# attached to one's own mail, a key that copies the creator's user ID, a
# certification the creator revoked, all count for nothing.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
CFPR=$(new_signing_key creator 'Carol Creator <carol@example.net>')
MFPR=$(new_signing_key mod 'Mo Derator <mo@example.org>')
NFPR=$(new_signing_key newbie 'Nick Newbie <nick@example.com>')
XFPR=$(new_signing_key mallory 'Mallory <mallory@example.com>')
FFPR=$(new_signing_key fake 'Carol Creator <carol@example.net>')
RFPR=$(new_signing_key revoked 'Rita Revoked <rita@example.com>')
OFPR=$(new_signing_key other 'Otto Other <otto@example.com>')
vulnid keys import "$TMP/creator.asc" >/dev/null
vulnid keys import "$TMP/mod.asc" >/dev/null
set_conf lifecycle moderators "$MFPR"
Y=$(date -u +%Y)
E1="TEST-$Y-0001"
E2="TEST-$Y-0002"

# certify BY NAME FPR: the key of NAME, certified by key BY in BY's keyring,
# exported into NAME's own keyring and to $TMP/NAME-cert.asc
certify() {
	G "$TMP/gnupg-$1" --import "$TMP/$2.asc" 2>/dev/null &&
	G "$TMP/gnupg-$1" --quick-sign-key "$3" 2>/dev/null &&
	G "$TMP/gnupg-$1" --armor --export "$3" >"$TMP/$2-cert.asc" 2>/dev/null &&
	G "$TMP/gnupg-$2" --import "$TMP/$2-cert.asc" 2>/dev/null
}

# keyed NAME FPR TO TEXT KEYFILE [HEADER...]: TEXT signed by NAME (PGP/MIME)
# with KEYFILE attached as application/pgp-keys, to TO
keyed() {
	local name=$1 fpr=$2 to=$3 text=$4 keyfile=$5 n
	shift 5
	n=$(date +%s%N).$RANDOM
	printf '%s\n' "$text" >"$TMP/k$n.txt"
	$PGPMAIL with-keys "$TMP/gnupg-$name" "$fpr" "$TMP/k$n.txt" "$TMP/k$n.eml" "$keyfile" -- \
		"Message-ID: <k$n@example.net>" "To: $to" "$@" &&
	deliver_ok "$TMP/k$n.eml" -r "$to"
}

test_expect_success 'setup: two entries signed by the creator; the certifications' '
	signed creator "$CFPR" request@example.org "Product: Foo
Version: 1.0

Details." "From: carol@example.net" &&
	signed creator "$CFPR" request@example.org "Product: Bar

Another." "From: carol@example.net" &&
	expect_eq "$E2" "$(newest_id)" &&
	certify creator newbie "$NFPR" &&
	certify fake mallory "$XFPR" &&
	certify creator revoked "$RFPR" &&
	G "$TMP/gnupg-creator" --quick-revoke-sig "$RFPR" "$CFPR" 2>/dev/null &&
	G "$TMP/gnupg-creator" --armor --export "$RFPR" >"$TMP/revoked-cert.asc" 2>/dev/null &&
	certify mod other "$OFPR" &&
	gpg --homedir "$TMP/gnupg-creator" --with-colons --check-sigs "$NFPR" 2>/dev/null | grep -q "^sig:!::[0-9]*:${CFPR: -16}:"
'

test_expect_success 'the newcomer, certified by the creator, with its key attached: an endorsed contributor' '
	keyed newbie "$NFPR" "request+$E1@example.org" "Version: 2.0

For $E1." "$TMP/newbie-cert.asc" "From: nick@example.com" &&
	expect_eq "contributor" "$(last_record "$E1" role)" &&
	expect_eq "creator certification" \
		"$(last_record "$E1" "json_extract(auth, '\''$.endorsed_by'\'') || '\'' '\'' || json_extract(auth, '\''$.endorsement'\'')")" &&
	expect_eq "[\"1.0\", \"2.0\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	reply_to nick@example.com >"$TMP/r" &&
	expect_match "carries a certification by the key of the entry.s creator" "$TMP/r" &&
	expect_eq "$E1|creator|certification|endorse" \
		"$(sql "SELECT entry || '\''|'\'' || endorser || '\''|'\'' || how || '\''|'\'' || action FROM endorsements WHERE fingerprint = '\''$NFPR'\''")" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "contributor, endorsed by the creator \(certification\), signed by $NFPR" "$TMP/show"
'

test_expect_success 'remembered: a later mail without the key counts too; not on the other entry' '
	signed newbie "$NFPR" "request+$E1@example.org" "Version: 2.1

For $E1." "From: nick@example.com" &&
	expect_eq "contributor" "$(last_record "$E1" role)" &&
	signed newbie "$NFPR" "request+$E2@example.org" "Version: 5.0

For $E2." "From: nick@example.com" &&
	expect_eq "third-party" "$(last_record "$E2" role)"
'

test_expect_success 'a certified key attached to a mail signed by another key endorses nobody' '
	vulnid keys import "$TMP/mallory.asc" >/dev/null &&
	keyed mallory "$XFPR" "request+$E2@example.org" "Version: 6.6

For $E2." "$TMP/newbie-cert.asc" "From: mallory@example.com" &&
	expect_eq "third-party" "$(last_record "$E2" role)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM endorsements WHERE fingerprint = '\''$XFPR'\''")"
'

test_expect_success 'a certification by a key that copies the creator'\''s user ID counts for nothing' '
	vulnid keys import "$TMP/fake.asc" >/dev/null 2>&1 &&
	vulnid keys list | grep -q "$FFPR" &&
	keyed mallory "$XFPR" "request+$E1@example.org" "Version: 6.7

For $E1." "$TMP/mallory-cert.asc" "From: mallory@example.com" &&
	expect_eq "third-party" "$(last_record "$E1" role)" &&
	headline "$E1" "j[\"versions\"]" >"$TMP/v" && expect_no_match "6.7" "$TMP/v"
'

test_expect_success 'a certification the creator revoked counts for nothing' '
	gpg --homedir "$TMP/gnupg-creator" --with-colons --check-sigs "$RFPR" | grep -q "^rev:!" &&
	keyed revoked "$RFPR" "request+$E1@example.org" "Version: 6.8

For $E1." "$TMP/revoked-cert.asc" "From: rita@example.com" &&
	expect_eq "third-party" "$(last_record "$E1" role)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM endorsements WHERE fingerprint = '\''$RFPR'\''")"
'

test_expect_success 'a certification by a moderator'\''s key endorses the key for every entry' '
	keyed other "$OFPR" "request+$E2@example.org" "Version: 7.0

For $E2." "$TMP/other-cert.asc" "From: otto@example.com" &&
	expect_eq "contributor" "$(last_record "$E2" role)" &&
	expect_eq "$MFPR" "$(last_record "$E2" "json_extract(auth, '\''$.endorsed_by'\'')")" &&
	expect_eq "|$MFPR|certification" \
		"$(sql "SELECT coalesce(entry, '\'''\'') || '\''|'\'' || endorser || '\''|'\'' || how FROM endorsements WHERE fingerprint = '\''$OFPR'\''")" &&
	signed other "$OFPR" "request+$E1@example.org" "Version: 7.1

For $E1." "From: otto@example.com" &&
	expect_eq "contributor" "$(last_record "$E1" role)" &&
	headline "$E1" "j[\"versions\"]" >"$TMP/v" && expect_match "7.1" "$TMP/v"
'

test_expect_success 'a certification found once is one endorsement row, not one per mail' '
	keyed newbie "$NFPR" "request+$E1@example.org" "Version: 2.2

For $E1." "$TMP/newbie-cert.asc" "From: nick@example.com" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM endorsements WHERE fingerprint = '\''$NFPR'\''")"
'

test_done
