#!/bin/bash
# T242-tofu-conflict: trust on first use only for a key whose addresses
# no other key in the robot's keyring claims.  A key that copies Alice's
# address (or the robot's, or a vendor's) and comes attached to a mail it
# signed is not imported: the mail is unauthenticated, the reply and the
# audit log say why, and the operator decides with vulnid keys import.
# A key nobody else claims, or a new version of a key already known (a
# new signing subkey), is still taken on first use; two filters racing to
# bring two keys for one new address import one of them.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

# new_key NAME "UID" ["UID"...]: signing and encryption keys, exported to
# $TMP/NAME.asc; prints the fingerprint
new_key() {
	local name=$1 h="$TMP/gnupg-$1" fpr
	shift
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$1" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	shift
	for uid in "$@"; do
		G "$h" --quick-add-uid "$fpr" "$uid" 2>/dev/null || return 1
	done
	G "$h" --armor --export "$fpr" >"$TMP/$name.asc" 2>/dev/null
	echo "$fpr"
}

vulnid() { "$VULNID" -c "$CONF" "$@"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
auth_of() { vulnid show "$1" --json | json_get "j[\"records\"][0][\"auth\"]"; }
keys_list() { vulnid keys list >"$TMP/keys"; }

# tofu_mail NAME FPR MID [From]: a request signed by key NAME with the
# key attached (trust on first use), as $TMP/NAME-MID.eml
tofu_mail() {
	printf "Product: %s\n\nSigned by %s, with the key attached.\n" "$1" "$1" >"$TMP/$1.txt"
	$PGPMAIL with-keys "$TMP/gnupg-$1" "$2" "$TMP/$1.txt" "$TMP/$1-$3.eml" "$TMP/$1.asc" -- \
		"From: ${4:-Someone <someone@example.com>}" "Message-ID: <$3@example.com>"
}

# refused NAME FPR MID ADDRESS OTHER: the mail of key NAME was recorded
# unauthenticated, the key is not in the keyring, the reply and the audit
# log say why
refused() {
	local name=$1 fpr=$2 mid=$3 addr=$4 other=$5 reply
	auth_of "$(last_id)" >"$TMP/a"
	expect_match "\"method\": \"none\"" "$TMP/a"
	expect_match "another key in the robot.s keyring already claims its address $addr" "$TMP/a"
	keys_list
	expect_no_match "^$fpr " "$TMP/keys"
	expect_match "\"event\":\"key-refused\",\"id\":null,\"message_id\":\"$mid@example.com\",\"fingerprint\":\"$fpr\",\"source\":\"signed mail \(trust on first use\)\",\"other\":\"$other\",\"address\":\"$addr\"" "$INST/audit.log"
	expect_no_match "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"$mid@example.com\"" "$INST/audit.log"
	reply=$(new_mail_to someone@example.com)
	$PGPMAIL text "$reply" | tr '\n' ' ' >"$TMP/reply.txt"
	expect_match "signature that was not accepted: the signing key is not known to this robot, and the key sent with the mail was not imported: another key in the robot.s keyring already claims its address $addr \(the operator decides whether to import it\)" "$TMP/reply.txt"
	expect_match "recorded as unauthenticated" "$TMP/reply.txt"
}

make_instance inst
ROBOT=$(vulnid key export --fingerprint)
AFPR=$(new_key alice 'Alice <alice@example.net>')
ZFPR=$(new_key zed 'Alice <alice@example.net>')
Z2FPR=$(new_key zed2 'Zed <zed@example.org>' 'Alice Again <ALICE@Example.NET>')
RFPR=$(new_key robotlike 'vulnid <request@example.org>')
VFPR=$(new_key vera 'Vera <vera@widget.example>')
WFPR=$(new_key wanda 'Wanda <vera@widget.example>')
FFPR=$(new_key fresh 'Fresh <fresh@example.com>')

test_expect_success 'setup: Alice'\''s key imported by the operator, a vendor key in the directory' '
	vulnid keys import "$TMP/alice.asc" >/dev/null &&
	vulnid vendor add "Widget Co" --contact psirt@widget.example >/dev/null &&
	vulnid vendor key "Widget Co" "$TMP/vera.asc" >/dev/null &&
	keys_list && expect_match "^$AFPR " "$TMP/keys" && expect_match "^$VFPR " "$TMP/keys"
'

test_expect_success 'attack: a key that copies Alice'\''s address is not trusted on first use' '
	tofu_mail zed "$ZFPR" t1 "Alice <alice@example.net>" &&
	sed -i "s/^From: .*/From: Someone <someone@example.com>/" "$TMP/zed-t1.eml" &&
	snap && deliver_ok "$TMP/zed-t1.eml" &&
	refused zed "$ZFPR" t1 alice@example.net "$AFPR"
'

test_expect_success 'attack: one user ID among several, in another case, is enough to refuse' '
	tofu_mail zed2 "$Z2FPR" t2 &&
	snap && deliver_ok "$TMP/zed2-t2.eml" &&
	refused zed2 "$Z2FPR" t2 alice@example.net "$AFPR"
'

test_expect_success 'attack: a key claiming the robot'\''s own address is refused' '
	tofu_mail robotlike "$RFPR" t3 &&
	snap && deliver_ok "$TMP/robotlike-t3.eml" &&
	refused robotlike "$RFPR" t3 request@example.org "$ROBOT"
'

test_expect_success 'attack: a key claiming the address of a vendor'\''s key is refused' '
	tofu_mail wanda "$WFPR" t4 &&
	snap && deliver_ok "$TMP/wanda-t4.eml" &&
	refused wanda "$WFPR" t4 vera@widget.example "$VFPR"
'

test_expect_success 'a key for an address nobody claims is trusted on first use, as before' '
	tofu_mail fresh "$FFPR" t5 &&
	deliver_ok "$TMP/fresh-t5.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "\"method\": \"pgp\", \"fingerprint\": \"$FFPR\"" "$TMP/a" &&
	keys_list && expect_match "^$FFPR " "$TMP/keys" &&
	expect_match "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"t5@example.com\",\"fingerprint\":\"$FFPR\"" "$INST/audit.log"
'

test_expect_success 'a new signing subkey of a known key is taken on first use (same key, no conflict)' '
	G "$TMP/gnupg-alice" --quick-add-key "$AFPR" ed25519 sign never 2>/dev/null &&
	sub=$(gpg --homedir "$TMP/gnupg-alice" --with-colons --list-keys "$AFPR" 2>/dev/null |
		awk -F: "/^sub/ { s = \$12 } /^fpr/ && s ~ /s/ { f = \$10 } END { print f }") &&
	test -n "$sub" && test "$sub" != "$AFPR" &&
	G "$TMP/gnupg-alice" --armor --export "$AFPR" >"$TMP/alice.asc" &&
	printf "Product: Subkey\n\nSigned with my new subkey.\n" >"$TMP/sub.txt" &&
	$PGPMAIL with-keys "$TMP/gnupg-alice" "$sub!" "$TMP/sub.txt" "$TMP/sub.eml" "$TMP/alice.asc" -- \
		"From: Alice <alice@example.net>" "Message-ID: <t6@example.com>" &&
	deliver_ok "$TMP/sub.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "\"method\": \"pgp\", \"fingerprint\": \"$AFPR\"" "$TMP/a"
'

test_expect_success 'the operator decides: after vulnid keys import, the key is the author' '
	vulnid keys import "$TMP/zed.asc" >"$TMP/imp" &&
	expect_match "imported $ZFPR" "$TMP/imp" &&
	clearsigned_mail "$TMP/zed-ok.eml" zed "$ZFPR" "$(printf "Product: Zed\n\nNow known.")" \
		"From: Zed <zed@example.org>" "Message-ID: <t7@example.com>" &&
	deliver_ok "$TMP/zed-ok.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "\"method\": \"pgp\", \"fingerprint\": \"$ZFPR\"" "$TMP/a"
'

R1FPR=$(new_key racer1 'Racer <race@example.com>')
R2FPR=$(new_key racer2 'Racer Two <race@example.com>')

test_expect_success 'two filters at once, two keys for one new address: one is imported, one refused' '
	tofu_mail racer1 "$R1FPR" t8 && tofu_mail racer2 "$R2FPR" t9 || exit 1
	"$FILTER" -c "$CONF" <"$TMP/racer1-t8.eml" 2>/dev/null &
	p1=$!
	"$FILTER" -c "$CONF" <"$TMP/racer2-t9.eml" 2>/dev/null &
	p2=$!
	wait $p1 && wait $p2 &&
	keys_list &&
	expect_eq 1 "$(grep -Ec "^($R1FPR|$R2FPR) " "$TMP/keys")" &&
	expect_eq 1 "$(grep -Ec "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"t[89]@example.com\"" "$INST/audit.log")" &&
	expect_eq 1 "$(grep -Ec "\"event\":\"key-refused\",\"id\":null,\"message_id\":\"t[89]@example.com\".*\"address\":\"race@example.com\"" "$INST/audit.log")"
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify >/dev/null
'

test_done
