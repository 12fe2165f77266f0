#!/bin/bash
# T200-openpgp: OpenPGP end to end, with real keys and a real mail client
#
# Alice (a researcher) signs and encrypts with mutt (PGP/MIME, driven in
# tmux by mutt-send.sh) and with gpg (inline); Mallory attacks with what
# she can capture or craft.  A signature counts only when it covers the
# whole mail at the top and its key is known, valid and alone; the robot
# decrypts only what sits at the top, and only with integrity protection.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
MUTT_SEND="$VULNID_SRCDIR/test/mutt-send.sh"

# new_key NAME "UID" EXPIRE [gpg options]: a keyring $TMP/gnupg-NAME with
# an ed25519 signing key and a cv25519 encryption subkey; prints the
# fingerprint.
new_key() {
	local uid=$2 expire=$3 h="$TMP/gnupg-$1" fpr
	shift 3
	mkdir -m 700 "$h"
	G "$h" "$@" --quick-gen-key "$uid" ed25519 sign "$expire" 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" "$@" --quick-add-key "$fpr" cv25519 encr "$expire" 2>/dev/null || return 1
	echo "$fpr"
}

vulnid() { "$VULNID" -c "$CONF" "$@"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
n_entries() { sql "SELECT count(*) FROM entries"; }

# auth_of ID: records[0].auth of the entry, as compact JSON
auth_of() {
	vulnid show "$1" --json |
		$PYTHON -c 'import json,sys; j=json.load(sys.stdin); print(json.dumps(j["records"][0]["auth"], separators=(",",":")))'
}

# text_of MAIL: all its text/plain parts, decoded
text_of() { $PGPMAIL text "$1"; }

# verify_robot MAIL: MAIL is PGP/MIME signed, good, by the robot's key
verify_robot() {
	$PGPMAIL split-signed "$1" "$TMP/v.data" "$TMP/v.sig" || fail "$1 is not PGP/MIME signed"
	gpg --homedir "$GV" --batch --no-tty --status-fd 1 --verify "$TMP/v.sig" "$TMP/v.data" \
		>"$TMP/v.status" 2>/dev/null || fail "gpg --verify failed: $(cat "$TMP/v.status")"
	expect_match "^\[GNUPG:\] GOODSIG " "$TMP/v.status"
	expect_match "^\[GNUPG:\] VALIDSIG $ROBOT " "$TMP/v.status"
}

# nowhere SECRET: the string is in no database row (text or blob), no
# mail the robot sent and not in the audit log
nowhere() {
	local hex
	hex=$(printf '%s' "$1" | xxd -p | tr -d '\n')	# .dump writes blobs as X'hex', lower case
	sqlite3 "$INST/vulnid.db" .dump >"$TMP/dump.sql"
	expect_no_match "$1" "$TMP/dump.sql"
	expect_no_match "$hex" "$TMP/dump.sql"
	! grep -rq -- "$1" "$INST/sent" || fail "'$1' found in $(grep -rl -- "$1" "$INST/sent")"
	expect_no_match "$1" "$INST/audit.log"
}

# raw_blob MESSAGE-ID: the archived raw message
raw_blob() {
	sql "SELECT hex(b.data) FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256
	     WHERE m.message_id = '$1'" | xxd -r -p
}

# last_quarantine: reason of the newest quarantined message
last_quarantine() { sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1"; }

make_instance inst
# many unsigned mails from one sender: their answers are not what is tested here
set_conf policy unverified_answer_bytes 0
ROBOT=$(vulnid key export --fingerprint)
vulnid key export >"$TMP/robot.asc"

# gpg keyring that only knows the robot, to check what it signs
GV="$TMP/gnupg-verify"
mkdir -m 700 "$GV"
G "$GV" --import "$TMP/robot.asc" 2>/dev/null

AFPR=$(new_key alice 'Alice <alice@example.net>' never)
GA="$TMP/gnupg-alice"
G "$GA" --import "$TMP/robot.asc" 2>/dev/null
printf '5\ny\n' | gpg --homedir "$GA" --batch --no-tty --command-fd 0 --edit-key "$ROBOT" trust quit >/dev/null 2>&1
G "$GA" --armor --export "$AFPR" >"$TMP/alice.asc" 2>/dev/null

MFPR=$(new_key mallory 'Mallory <mallory@example.com>' never)
GM="$TMP/gnupg-mallory"
G "$GM" --import "$TMP/robot.asc" 2>/dev/null

REQ='Product: Foo Server
Version: 2.1
Type: CWE-122'

# draft NAME SUBJECT BODY: a draft for mutt from Alice
draft() {
	printf 'From: Alice <alice@example.net>\nTo: request@example.org\nSubject: %s\n\n%s\n' "$2" "$3" >"$TMP/$1.draft"
}

# clearsigned FILE HOME FPR TEXT [headers]: an inline clearsigned request
clearsigned() {
	local file=$1 home=$2 fpr=$3 text=$4
	shift 4
	printf '%s\n' "$text" | G "$home" --local-user "$fpr" --clearsign >"$TMP/.cs" 2>/dev/null || return 1
	write_mail "$file" "$@" <"$TMP/.cs"
}

test_expect_success 'setup: keys in the robot and in the keyrings' '
	echo "$ROBOT" | grep -Eq "^[0-9A-F]{40}$" &&
	echo "$AFPR" | grep -Eq "^[0-9A-F]{40}$" &&
	vulnid keys import "$TMP/alice.asc" >"$TMP/imp" &&
	expect_match "imported $AFPR" "$TMP/imp" &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$AFPR .*Alice <alice@example.net>" "$TMP/keys" &&
	expect_match "^$ROBOT .*vulnid <request@example.org>" "$TMP/keys" &&
	expect_no_match "$MFPR" "$TMP/keys" &&
	expect_match "\"event\":\"key-imported\".*\"fingerprint\":\"$AFPR\".*\"source\":\"operator\"" "$INST/audit.log"
'

# --- baselines ---------------------------------------------------------

draft m-signed "Heap overflow in the Foo parser" "$REQ

The request parser overflows a heap buffer (mutt, signed)."
draft m-enc "Use after free in Foo" "$REQ

SECRET-MUTT-ENC-7f3a: a use after free in the session cache."

test_expect_success 'mutt signs a request as PGP/MIME' '
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/m-signed.draft" "$TMP/m-signed.eml" sign &&
	expect_match "^Content-Type: multipart/signed; micalg=pgp-sha256;" "$TMP/m-signed.eml" &&
	expect_match "protocol=\"application/pgp-signature\"" "$TMP/m-signed.eml" &&
	expect_match "^User-Agent: Mutt/" "$TMP/m-signed.eml"
'

test_expect_success 'mutt signs and encrypts a request to the robot as PGP/MIME' '
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/m-enc.draft" "$TMP/m-enc.eml" encrypt &&
	expect_match "^Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\";" "$TMP/m-enc.eml" &&
	expect_no_match "SECRET-MUTT-ENC" "$TMP/m-enc.eml"
'

# baseline_auth FILE ENCRYPTED(true|false): FILE makes one entry, authenticated
# exactly as Alice's (with "encrypted":true when ENCRYPTED); the ack is
# remembered in $TMP/ack.path
baseline_auth() {
	local file=$1 enc=$2 before mid sha id want
	before=$(n_entries)
	snap
	deliver_ok "$file"
	expect_eq $((before + 1)) "$(n_entries)" "entries"
	id=$(last_id)
	sha=$($PGPMAIL sig-sha256 "$file")
	want="{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\",\"signature\":\"$sha\"}"
	[ "$enc" = false ] || want="{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\",\"signature\":\"$sha\",\"encrypted\":true}"
	expect_eq "$want" "$(auth_of "$id")" "auth of $id"
	mid=$(mail_header "$file" Message-ID | tr -d "<>")
	expect_eq "$AFPR" "$(sql "SELECT fingerprint FROM signatures WHERE message = (SELECT id FROM messages WHERE message_id = '$mid')")" "signatures row"
	expect_eq 1 "$(sql "SELECT count(*) FROM blobs WHERE sha256 = '$sha'")" "the raw signature is kept"
	expect_eq request "$(sql "SELECT disposition FROM messages WHERE message_id = '$mid'")" "disposition"
	expect_match "\"event\":\"assigned\",\"id\":\"$id\"" "$INST/audit.log"
	new_mail_to alice@example.net >"$TMP/ack.path"
}

# the ack is signed by the robot and names the robot's key
ack_signed() {
	local ack
	ack=$(cat "$TMP/ack.path")
	expect_eq "multipart/signed" "$(mail_header "$ack" Content-Type | cut -d";" -f1)" "ack type"
	verify_robot "$ack"
	text_of "$ack" >"$TMP/ack.txt"
	expect_match "OpenPGP key $ROBOT" "$TMP/ack.txt"
	expect_match "^  $1$" "$TMP/ack.txt"
}

ack_says_signed() {
	text_of "$(cat "$TMP/ack.path")" >"$TMP/ack.txt"
	expect_match "signed by the OpenPGP key $AFPR" "$TMP/ack.txt"
}

test_expect_success 'baseline: a mutt PGP/MIME signed request is authenticated as Alice' '
	baseline_auth "$TMP/m-signed.eml" false &&
	cp "$TMP/ack.path" "$TMP/ack-m-signed.path" &&
	expect_eq "Heap overflow in the Foo parser" "$(vulnid show "$(last_id)" --json | json_get "j[\"title\"]")"
'
test_expect_success 'baseline: the ack to it is PGP/MIME signed by the robot and names its key' '
	cp "$TMP/ack-m-signed.path" "$TMP/ack.path" && ack_signed "$(sql "SELECT id FROM entries WHERE number = 1")"
'
test_expect_success 'baseline: the ack to it says the request was signed, and by which key' '
	cp "$TMP/ack-m-signed.path" "$TMP/ack.path" && ack_says_signed
'

test_expect_success 'baseline: a mutt PGP/MIME signed+encrypted request is authenticated and encrypted' '
	baseline_auth "$TMP/m-enc.eml" true &&
	cp "$TMP/ack.path" "$TMP/ack-m-enc.path" &&
	id=$(last_id) &&
	vulnid show "$id" --json | json_get "j[\"records\"][0][\"body\"]" >"$TMP/body" &&
	expect_match "^SECRET-MUTT-ENC-7f3a: a use after free" "$TMP/body" &&
	mid=$(mail_header "$TMP/m-enc.eml" Message-ID | tr -d "<>") &&
	raw_blob "$mid" >"$TMP/raw" &&
	cmp "$TMP/raw" "$TMP/m-enc.eml" &&
	expect_no_match "SECRET-MUTT-ENC" "$TMP/raw" &&
	expect_eq 0 "$(sql "SELECT sealed FROM blobs WHERE sha256 = (SELECT raw_sha256 FROM messages WHERE message_id = '\''$mid'\'')")"
'
test_expect_success 'baseline: the ack to it is signed by the robot and names its key' '
	cp "$TMP/ack-m-enc.path" "$TMP/ack.path" && ack_signed "$(last_id)"
'
test_expect_success 'baseline: the ack to it says the request was signed and encrypted' '
	cp "$TMP/ack-m-enc.path" "$TMP/ack.path" && ack_says_signed &&
	expect_match "arrived encrypted" "$TMP/ack.txt"
'

clearsigned "$TMP/g-clear.eml" "$GA" "$AFPR" "$REQ

An integer overflow in the chunk decoder (gpg clearsigned)." "Subject: Integer overflow in Foo chunks"

test_expect_success 'baseline: a gpg inline clearsigned request is authenticated as Alice' '
	expect_match "^-----BEGIN PGP SIGNED MESSAGE-----" "$TMP/g-clear.eml" &&
	baseline_auth "$TMP/g-clear.eml" false &&
	cp "$TMP/ack.path" "$TMP/ack-g-clear.path" &&
	vulnid show "$(last_id)" --json >"$TMP/s.json" &&
	expect_eq "[[\"Product\", \"Foo Server\"], [\"Version\", \"2.1\"], [\"Type\", \"CWE-122\"]]" "$(json_get "j[\"records\"][0][\"fields\"]" <"$TMP/s.json")" &&
	expect_eq "An integer overflow in the chunk decoder (gpg clearsigned)." "$(json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json")"
'
test_expect_success 'baseline: the ack to it is signed by the robot and names its key' '
	cp "$TMP/ack-g-clear.path" "$TMP/ack.path" && ack_signed "$(last_id)"
'
test_expect_success 'baseline: the ack to it says the request was signed' '
	cp "$TMP/ack-g-clear.path" "$TMP/ack.path" && ack_says_signed
'

printf '%s\n\nSECRET-INLINE-ENC-91c2: a double free in the TLS layer (gpg -sea).\n' "$REQ" |
	G "$GA" --local-user "$AFPR" --trust-model always -sea -r "$ROBOT" >"$TMP/.enc" 2>/dev/null
write_mail "$TMP/g-enc.eml" "Subject: Double free in Foo TLS" <"$TMP/.enc"

test_expect_success 'baseline: a gpg inline signed+encrypted request is authenticated and encrypted' '
	expect_match "^-----BEGIN PGP MESSAGE-----" "$TMP/g-enc.eml" &&
	baseline_auth "$TMP/g-enc.eml" true &&
	cp "$TMP/ack.path" "$TMP/ack-g-enc.path" &&
	vulnid show "$(last_id)" --json | json_get "j[\"records\"][0][\"body\"]" >"$TMP/body" &&
	expect_match "^SECRET-INLINE-ENC-91c2: a double free" "$TMP/body" &&
	mid=$(mail_header "$TMP/g-enc.eml" Message-ID | tr -d "<>") &&
	raw_blob "$mid" >"$TMP/raw" &&
	cmp "$TMP/raw" "$TMP/g-enc.eml" &&
	expect_no_match "SECRET-INLINE-ENC" "$TMP/raw"
'
test_expect_success 'baseline: the ack to it is signed by the robot and names its key' '
	cp "$TMP/ack-g-enc.path" "$TMP/ack.path" && ack_signed "$(last_id)"
'
test_expect_success 'baseline: the ack to it says the request was signed and encrypted' '
	cp "$TMP/ack-g-enc.path" "$TMP/ack.path" && ack_says_signed &&
	expect_match "arrived encrypted" "$TMP/ack.txt"
'

test_expect_success 'with [crypto] sign = inline the ack is clearsigned by the robot' '
	set_conf crypto sign inline &&
	write_mail "$TMP/plain-inline.eml" "Subject: plain for inline" <<<"Product: Bar" &&
	snap && deliver_ok "$TMP/plain-inline.eml" &&
	ack=$(new_mail_to alice@example.net) &&
	set_conf crypto sign pgpmime &&
	expect_eq "text/plain" "$(mail_header "$ack" Content-Type | cut -d";" -f1)" &&
	mail_body "$ack" >"$TMP/inl.txt" &&
	expect_match "^-----BEGIN PGP SIGNED MESSAGE-----" "$TMP/inl.txt" &&
	gpg --homedir "$GV" --batch --no-tty --status-fd 1 --verify "$TMP/inl.txt" >"$TMP/v.status" 2>/dev/null &&
	expect_match "^\[GNUPG:\] VALIDSIG $ROBOT " "$TMP/v.status"
'

# --- attacks: a signature that does not cover the whole mail -------------

printf 'Product: Evil Corp Backdoor\n\nMallory says Alice found a backdoor (text before the signed part).\n' >"$TMP/evil.txt"

test_expect_success 'attack: Alice'\''s signed part inside multipart/mixed after Mallory'\''s text is not Alice'\''s' '
	$PGPMAIL wrap-mixed "$TMP/m-signed.eml" "$TMP/wrapped.eml" "$TMP/evil.txt" \
		"Message-ID: <wrapped-1@example.com>" "Subject: Backdoor in Evil" &&
	before=$(n_entries) && snap &&
	deliver_ok "$TMP/wrapped.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	id=$(last_id) &&
	vulnid show "$id" --json >"$TMP/s.json" &&
	expect_eq "Evil Corp Backdoor" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	expect_eq "{\"method\":\"none\",\"reason\":\"a signature covers only part of the mail\"}" "$(auth_of "$id")" &&
	expect_no_match "$AFPR" "$TMP/s.json" &&
	ack=$(new_mail_to alice@example.net) && text_of "$ack" >"$TMP/ack.txt" &&
	expect_no_match "signed by the OpenPGP key" "$TMP/ack.txt"
'

test_expect_success 'attack: the ack to the wrapped mail says the signature covered only part of it' '
	text_of "$(new_mail_to alice@example.net)" >"$TMP/ack.txt" &&
	expect_match "covers only part of it" "$TMP/ack.txt"
'

test_expect_success 'attack: a forwarded message/rfc822 with Alice'\''s signed mail is not Alice'\''s' '
	$PGPMAIL forward "$TMP/m-signed.eml" "$TMP/fwd.eml" "$TMP/evil.txt" \
		"From: Alice <alice@example.net>" "Message-ID: <fwd-1@example.com>" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/fwd.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	id=$(last_id) &&
	expect_eq "{\"method\":\"none\",\"reason\":\"a signature covers only part of the mail\"}" "$(auth_of "$id")" &&
	vulnid show "$id" --json >"$TMP/s.json" &&
	expect_eq "message/rfc822" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"content_type\"]" <"$TMP/s.json")" &&
	expect_no_match "$AFPR" "$TMP/s.json"
'

test_expect_success 'attack: Mallory'\''s text before Alice'\''s inline signed block is not Alice'\''s' '
	{ sed -n "1,/^$/p" "$TMP/g-clear.eml" | sed "s/^Message-ID:.*/Message-ID: <before-1@example.com>/"
	  printf "Product: Evil Corp Backdoor\n\n"
	  sed "1,/^$/d" "$TMP/g-clear.eml"; } >"$TMP/before.eml" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/before.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	id=$(last_id) &&
	expect_eq "{\"method\":\"none\",\"reason\":\"there is text before or after the signed block, which the signature does not cover\"}" "$(auth_of "$id")"
'

test_expect_success 'attack: Mallory'\''s text after Alice'\''s inline signed block is not Alice'\''s' '
	{ sed "s/^Message-ID:.*/Message-ID: <after-1@example.com>/" "$TMP/g-clear.eml"
	  printf "\nProduct: Evil Corp Backdoor\nReference: https://evil.example/\n"; } >"$TMP/after.eml" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/after.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	id=$(last_id) &&
	expect_eq "{\"method\":\"none\",\"reason\":\"there is text before or after the signed block, which the signature does not cover\"}" "$(auth_of "$id")"
'

test_expect_success 'attack: Mallory'\''s signed block after Alice'\''s (two inline blocks, two keys) is not Alice'\''s' '
	printf "Product: Evil Corp Backdoor\n" | G "$GM" --local-user "$MFPR" --clearsign >"$TMP/m.cs" 2>/dev/null &&
	{ sed "s/^Message-ID:.*/Message-ID: <twoblocks-1@example.com>/" "$TMP/g-clear.eml"; cat "$TMP/m.cs"; } >"$TMP/two.eml" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/two.eml" &&
	id=$(last_id) &&
	if [ "$(n_entries)" -gt "$before" ]; then
		auth_of "$id" >"$TMP/a" && expect_match "\"method\":\"none\"" "$TMP/a"
	else
		expect_eq 0 "$(sql "SELECT count(*) FROM signatures WHERE fingerprint = '\''$MFPR'\''")"
	fi
'

# --- attacks: a multipart/signed that is not what it says ---------------

printf 'Content-Type: text/plain; charset=us-ascii\n\n%s\n\nA stack overflow in the config loader (%s).\n' "$REQ" "crafted" >"$TMP/entity.txt"

test_expect_success 'control: a crafted multipart/signed with one good signature is Alice'\''s' '
	$PGPMAIL sign-mime "$GA" "$AFPR" "$TMP/entity.txt" "$TMP/crafted.eml" "Message-ID: <crafted-ok@example.net>" &&
	deliver_ok "$TMP/crafted.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\"" "$TMP/a"
'

for c in "protocol application/pgp-sig" "protocol application/pkcs7-signature" "micalg sha256" "micalg x-pgp-sha256"; do
	PNAME=${c% *} PVAL=${c#* }
	test_expect_success "attack: a multipart/signed with $PNAME=$PVAL is not authenticated" '
		sed "s|(crafted)|($PNAME $PVAL)|" "$TMP/entity.txt" >"$TMP/e2.txt" &&
		$PGPMAIL sign-mime "$GA" "$AFPR" "$TMP/e2.txt" "$TMP/param.eml" "--$PNAME" "$PVAL" \
			"Message-ID: <param-$PNAME-${PVAL//\//-}@example.net>" &&
		before=$(n_entries) &&
		deliver_ok "$TMP/param.eml" &&
		expect_eq $((before + 1)) "$(n_entries)" &&
		auth_of "$(last_id)" >"$TMP/a" &&
		expect_match "^\{\"method\":\"none\",\"reason\":\"the multipart/signed parameters are wrong" "$TMP/a"
	'
done

test_expect_success 'attack: a signature part with a good and a bad signature is not authenticated' '
	sed "s/(crafted)/(good+bad)/" "$TMP/entity.txt" >"$TMP/e2.txt" &&
	$PGPMAIL sign-mime "$GA" "$AFPR" "$TMP/e2.txt" "$TMP/gb.eml" --bad "$GA:$AFPR" \
		"Message-ID: <goodbad@example.net>" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/gb.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	expect_eq "{\"method\":\"none\",\"reason\":\"the signature is bad: the signed text was changed after signing\"}" "$(auth_of "$(last_id)")"
'

test_expect_success 'attack: a bad signature before a good one is not authenticated either' '
	sed "s/(crafted)/(bad+good)/" "$TMP/entity.txt" >"$TMP/e2.txt" &&
	$PGPMAIL sign-mime "$GM" "$MFPR" "$TMP/e2.txt" "$TMP/bg.eml" --also "$GA:$AFPR" \
		"Message-ID: <badgood@example.net>" &&
	deliver_ok "$TMP/bg.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"none\"" "$TMP/a" &&
	expect_no_match "$AFPR" "$TMP/a"
'

test_expect_success 'attack: Alice'\''s good signature plus Mallory'\''s (unknown) is not authenticated' '
	sed "s/(crafted)/(alice+mallory)/" "$TMP/entity.txt" >"$TMP/e2.txt" &&
	$PGPMAIL sign-mime "$GA" "$AFPR" "$TMP/e2.txt" "$TMP/am.eml" --also "$GM:$MFPR" \
		"Message-ID: <alicemallory@example.net>" &&
	deliver_ok "$TMP/am.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"none\",\"reason\":\"the signing key is not known" "$TMP/a"
'

# --- who signed ----------------------------------------------------------

test_expect_success 'Alice signing a mail From bob@ is authenticated as Alice, with a note' '
	clearsigned "$TMP/bob.eml" "$GA" "$AFPR" "Product: Baz

Signed by Alice, sent From Bob." "From: Bob <bob@example.net>" "Subject: From Bob" &&
	snap && deliver_ok "$TMP/bob.eml" &&
	id=$(last_id) &&
	sha=$($PGPMAIL sig-sha256 "$TMP/bob.eml") &&
	expect_eq "{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\",\"signature\":\"$sha\",\"note\":\"From is not one of the signing key'\''s user IDs\"}" "$(auth_of "$id")" &&
	expect_eq "bob@example.net" "$(vulnid show "$id" --json | json_get "j[\"records\"][0][\"author\"]")" &&
	new_mail_to bob@example.net >/dev/null
'

clearsigned "$TMP/unknown.eml" "$GM" "$MFPR" "Product: Quux

Mallory signs with a key the robot does not know." "From: Mallory <mallory@example.com>" "Subject: Unknown key"

test_expect_success 'a request signed by an unknown key is recorded unauthenticated, with the reason' '
	before=$(n_entries) && snap &&
	deliver_ok "$TMP/unknown.eml" &&
	expect_eq $((before + 1)) "$(n_entries)" &&
	id=$(last_id) &&
	expect_eq "{\"method\":\"none\",\"reason\":\"the signing key is not known to this robot (send it as an application/pgp-keys attachment of a request signed with it)\"}" "$(auth_of "$id")" &&
	vulnid keys list >"$TMP/keys" && expect_no_match "$MFPR" "$TMP/keys" &&
	new_mail_to mallory@example.com >"$TMP/ack.path"
'
test_expect_success 'the ack for the unknown key says why the signature was not accepted' '
	text_of "$(cat "$TMP/ack.path")" >"$TMP/ack.txt" &&
	expect_match "not known" "$TMP/ack.txt"
'

# An expired key: made in 2020, valid for a year, used in 2020.
EFPR=$(new_key erin 'Erin <erin@example.net>' 1y --faked-system-time 20200101T000000)
GE="$TMP/gnupg-erin"

test_expect_success 'a request signed by an expired key is recorded unauthenticated' '
	test -n "$EFPR" &&
	G "$GE" --armor --export "$EFPR" >"$TMP/erin.asc" &&
	vulnid keys import "$TMP/erin.asc" >/dev/null &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$EFPR \[expired\]" "$TMP/keys" &&
	printf "Product: Old\n\nSigned in 2020 by a key that expired in 2021.\n" |
		G "$GE" --faked-system-time 20200601T000000 --local-user "$EFPR" --clearsign >"$TMP/e.cs" 2>/dev/null &&
	write_mail "$TMP/expired.eml" "From: Erin <erin@example.net>" "Subject: expired key" <"$TMP/e.cs" &&
	deliver_ok "$TMP/expired.eml" &&
	expect_eq "{\"method\":\"none\",\"reason\":\"the signing key has expired\"}" "$(auth_of "$(last_id)")"
'

RFPR=$(new_key rita 'Rita <rita@example.net>' never)
GR="$TMP/gnupg-rita"

test_expect_success 'a request signed by a key revoked since is recorded unauthenticated' '
	G "$GR" --armor --export "$RFPR" >"$TMP/rita.asc" &&
	vulnid keys import "$TMP/rita.asc" >/dev/null &&
	printf "Product: Rev\n\nSigned before the key was revoked.\n" |
		G "$GR" --local-user "$RFPR" --clearsign >"$TMP/r.cs" 2>/dev/null &&
	write_mail "$TMP/revoked.eml" "From: Rita <rita@example.net>" "Subject: revoked key" <"$TMP/r.cs" &&
	sed "s/^:-----BEGIN/-----BEGIN/" "$GR/openpgp-revocs.d/$RFPR.rev" >"$TMP/rita.rev" &&
	G "$GR" --import "$TMP/rita.rev" 2>/dev/null &&
	G "$GR" --armor --export "$RFPR" >"$TMP/rita-revoked.asc" &&
	vulnid keys import "$TMP/rita-revoked.asc" >/dev/null &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$RFPR \[revoked\]" "$TMP/keys" &&
	deliver_ok "$TMP/revoked.eml" &&
	expect_eq "{\"method\":\"none\",\"reason\":\"the signing key is revoked\"}" "$(auth_of "$(last_id)")"
'

# --- encryption gone wrong -----------------------------------------------

# refused FILE REASON [SECRET]: quarantined for REASON, an error reply, no entry
refused() {
	local before mid
	before=$(n_entries)
	snap
	deliver_ok "$1"
	expect_eq "$before" "$(n_entries)" "entries"
	expect_eq "$2" "$(last_quarantine)" "quarantine reason"
	mid=$(mail_header "$1" Message-ID | tr -d "<>")
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '$mid'")" "disposition"
	expect_match "\"event\":\"quarantined\",\"id\":null,\"message_id\":\"$mid\".*\"reason\":\"$2\"" "$INST/audit.log"
	[ -z "${3:-}" ] || nowhere "$3"
}

test_expect_success 'tampered inline ciphertext: decryption fails, quarantined, error reply, nothing assigned' '
	printf "%s\n\nSECRET-TAMPER-INLINE-3311\n" "$REQ" |
		G "$GA" --local-user "$AFPR" --trust-model always -sea -r "$ROBOT" >"$TMP/t.asc" 2>/dev/null &&
	write_mail "$TMP/t0.eml" "Subject: tampered" <"$TMP/t.asc" &&
	$PGPMAIL tamper "$TMP/t0.eml" "$TMP/tampered.eml" &&
	! cmp -s "$TMP/t0.eml" "$TMP/tampered.eml" &&
	refused "$TMP/tampered.eml" decrypt-failed SECRET-TAMPER-INLINE &&
	ack=$(new_mail_to alice@example.net) &&
	mail_header "$ack" Subject | grep -q "not processed" &&
	text_of "$ack" >"$TMP/err.txt" &&
	expect_match "could not be decrypted" "$TMP/err.txt"
'

draft m-tamper "Tamper me" "$REQ

SECRET-TAMPER-MIME-5521"
test_expect_success 'tampered PGP/MIME ciphertext from mutt: decryption fails, quarantined, nothing assigned' '
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/m-tamper.draft" "$TMP/m-tamper0.eml" encrypt &&
	$PGPMAIL tamper "$TMP/m-tamper0.eml" "$TMP/m-tamper.eml" &&
	refused "$TMP/m-tamper.eml" decrypt-failed SECRET-TAMPER-MIME &&
	text_of "$(new_mail_to alice@example.net)" >"$TMP/err.txt" &&
	expect_match "could not be decrypted" "$TMP/err.txt"
'

test_expect_success 'ciphertext without integrity protection (no MDC) is refused and never read' '
	printf "%s\n\nSECRET-NOMDC-8080\n" "$REQ" |
		G "$GA" --trust-model always --rfc2440 -ea -r "$ROBOT" >"$TMP/nomdc.asc" 2>/dev/null &&
	G "$GA" --list-packets "$TMP/nomdc.asc" 2>/dev/null | grep -q "tag=9 " &&
	write_mail "$TMP/nomdc.eml" "Subject: no MDC" <"$TMP/nomdc.asc" &&
	refused "$TMP/nomdc.eml" decrypt-failed SECRET-NOMDC
'

draft m-wrapenc "Wrapped ciphertext" "$REQ

SECRET-WRAPPED-ENC-4242: only the robot may read this, and only from Alice."
printf 'Product: Evil\n\nMallory wraps a captured encrypted mail: will the robot decrypt it for her?\n' >"$TMP/wrap.txt"

test_expect_success 'an encrypted part wrapped by Mallory in multipart/mixed is never decrypted' '
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/m-wrapenc.draft" "$TMP/wrapenc0.eml" encrypt &&
	$PGPMAIL wrap-mixed "$TMP/wrapenc0.eml" "$TMP/wrapenc.eml" "$TMP/wrap.txt" \
		"From: Mallory <mallory@example.com>" "Message-ID: <wrapenc@example.com>" &&
	snap && deliver_ok "$TMP/wrapenc.eml" &&
	auth_of "$(last_id)" >"$TMP/a" && expect_match "\"method\":\"none\"" "$TMP/a" &&
	expect_no_match "encrypted" "$TMP/a" &&
	nowhere SECRET-WRAPPED-ENC
'

test_expect_success 'an encrypted mail forwarded by Mallory as message/rfc822 is never decrypted' '
	$PGPMAIL forward "$TMP/wrapenc0.eml" "$TMP/fwdenc.eml" "$TMP/wrap.txt" "Message-ID: <fwdenc@example.com>" &&
	deliver_ok "$TMP/fwdenc.eml" &&
	nowhere SECRET-WRAPPED-ENC
'

# --- replay --------------------------------------------------------------

# replayed FILE: no entry, quarantined "replay", no reply at all
replayed() {
	local before
	before=$(n_entries)
	snap
	deliver_ok "$1"
	expect_eq "$before" "$(n_entries)" "entries after the replay"
	expect_eq replay "$(last_quarantine)" "quarantine reason"
	expect_eq "" "$(new_mails)" "mails sent"
}

test_expect_success 'replay: Alice'\''s PGP/MIME signed mail with a new Message-ID, Date and Subject' '
	$PGPMAIL reheader "$TMP/m-signed.eml" "$TMP/replay1.eml" "Message-ID: <replay-1@example.com>" \
		"Date: Fri, 04 Dec 2026 10:00:00 +0000" "Subject: Please assign another one" &&
	replayed "$TMP/replay1.eml" &&
	expect_match "\"event\":\"quarantined\",\"id\":null,\"message_id\":\"replay-1@example.com\".*\"reason\":\"replay\"" "$INST/audit.log"
'

test_expect_success 'replay: Alice'\''s inline clearsigned mail with new headers' '
	$PGPMAIL reheader "$TMP/g-clear.eml" "$TMP/replay2.eml" "Message-ID: <replay-2@example.com>" "Subject: again" &&
	replayed "$TMP/replay2.eml"
'

test_expect_success 'replay: Alice'\''s encrypted mail with new headers' '
	$PGPMAIL reheader "$TMP/m-enc.eml" "$TMP/replay3.eml" "Message-ID: <replay-3@example.com>" "Subject: again" &&
	replayed "$TMP/replay3.eml"
'

test_expect_success 'replay: the same PGP/MIME signature with an armor header added is still a replay' '
	$PGPMAIL reheader "$TMP/m-signed.eml" "$TMP/r4.eml" "Message-ID: <replay-4@example.com>" &&
	$PGPMAIL rearmor "$TMP/r4.eml" "$TMP/replay4.eml" SIGNATURE &&
	replayed "$TMP/replay4.eml"
'

test_expect_success 'replay: the same inline signed block with an armor header added is still a replay' '
	$PGPMAIL reheader "$TMP/g-clear.eml" "$TMP/r5.eml" "Message-ID: <replay-5@example.com>" &&
	$PGPMAIL rearmor "$TMP/r5.eml" "$TMP/replay5.eml" SIGNATURE &&
	replayed "$TMP/replay5.eml"
'

test_expect_success 'replay: the same ciphertext with an armor header added is still a replay' '
	$PGPMAIL reheader "$TMP/g-enc.eml" "$TMP/r6.eml" "Message-ID: <replay-6@example.com>" &&
	$PGPMAIL rearmor "$TMP/r6.eml" "$TMP/replay6.eml" MESSAGE &&
	replayed "$TMP/replay6.eml"
'

test_expect_success 'replay: Alice'\''s inline signed block twice in one mail is not a new signed request' '
	$PGPMAIL reheader "$TMP/g-clear.eml" "$TMP/r7.eml" "Message-ID: <replay-7@example.com>" &&
	$PGPMAIL double-clearsign "$TMP/r7.eml" "$TMP/replay7.eml" &&
	before=$(n_entries) &&
	deliver_ok "$TMP/replay7.eml" &&
	if [ "$(n_entries)" -gt "$before" ]; then
		auth_of "$(last_id)" >"$TMP/a" &&
		expect_match "\"method\":\"none\"" "$TMP/a"
	fi
'

# --- keys ----------------------------------------------------------------

test_expect_success 'a mail saying "key" gets the robot key as application/pgp-keys' '
	write_mail "$TMP/key.eml" "Subject: key" "From: Bob <bob@example.net>" <<<"key" &&
	before=$(n_entries) && snap &&
	deliver_ok "$TMP/key.eml" &&
	expect_eq "$before" "$(n_entries)" &&
	reply=$(new_mail_to bob@example.net) &&
	verify_robot "$reply" &&
	$PGPMAIL keys "$reply" "$TMP/got.asc" &&
	mkdir -m 700 "$TMP/gnupg-bob" &&
	G "$TMP/gnupg-bob" --import "$TMP/got.asc" 2>/dev/null &&
	got=$(gpg --homedir "$TMP/gnupg-bob" --with-colons --list-keys | awk -F: "/^fpr/ { print \$10; exit }") &&
	expect_eq "$ROBOT" "$got" &&
	text_of "$reply" >"$TMP/key.txt" &&
	expect_match "^  $ROBOT$" "$TMP/key.txt" &&
	expect_eq key "$(sql "SELECT disposition FROM messages WHERE message_id = (SELECT message_id FROM messages ORDER BY id DESC LIMIT 1)")"
'

M2FPR=$(new_key mallory2 'Mallory Two <m2@example.com>' never)
GM2="$TMP/gnupg-mallory2"
G "$GM2" --armor --export "$M2FPR" >"$TMP/m2.asc" 2>/dev/null
M3FPR=$(new_key mallory3 'Mallory Three <m3@example.com>' never)
GM3="$TMP/gnupg-mallory3"
G "$GM3" --armor --export "$M3FPR" >"$TMP/m3.asc" 2>/dev/null
YFPR=$(new_key yves 'Alice <alice@example.net>' never)
G "$TMP/gnupg-yves" --armor --export "$YFPR" >"$TMP/yves.asc" 2>/dev/null
ZFPR=$(new_key zed 'Alice <alice@example.net>' never)
G "$TMP/gnupg-zed" --armor --export "$ZFPR" >"$TMP/zed.asc" 2>/dev/null
M4FPR=$(new_key mallory4 'Mallory Four <m4@example.com>' never)
GM4="$TMP/gnupg-mallory4"
G "$GM4" --armor --export "$M4FPR" >"$TMP/m4.asc" 2>/dev/null

test_expect_success 'trust on first use: a signed request bringing its own key imports it and is authenticated' '
	printf "Product: TOFU\n\nMallory Two signs and attaches her key.\n" >"$TMP/tofu.txt" &&
	$PGPMAIL with-keys "$GM2" "$M2FPR" "$TMP/tofu.txt" "$TMP/tofu.eml" "$TMP/m2.asc" -- \
		"From: Mallory Two <m2@example.com>" "Message-ID: <tofu-1@example.com>" &&
	deliver_ok "$TMP/tofu.eml" &&
	id=$(last_id) &&
	auth_of "$id" >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$M2FPR\",\"signature\":\"[0-9a-f]{64}\"\}$" "$TMP/a" &&
	vulnid keys list >"$TMP/keys" && expect_match "^$M2FPR .*Mallory Two" "$TMP/keys" &&
	expect_match "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"tofu-1@example.com\",\"fingerprint\":\"$M2FPR\"" "$INST/audit.log" &&
	vulnid show "$id" --json >"$TMP/s.json" &&
	expect_eq "application/pgp-keys" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"content_type\"]" <"$TMP/s.json")"
'

test_expect_success 'a request signed by key X bringing another key Y imports nothing and is unauthenticated' '
	printf "Product: TOFU2\n\nSigned by Mallory Three, attaching Mallory Four.\n" >"$TMP/tofu2.txt" &&
	$PGPMAIL with-keys "$GM3" "$M3FPR" "$TMP/tofu2.txt" "$TMP/tofu2.eml" "$TMP/m4.asc" -- \
		"From: Mallory Three <m3@example.com>" "Message-ID: <tofu-2@example.com>" &&
	deliver_ok "$TMP/tofu2.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"none\",\"reason\":\"the signing key is not known" "$TMP/a" &&
	vulnid keys list >"$TMP/keys" &&
	expect_no_match "$M4FPR" "$TMP/keys" && expect_no_match "$M3FPR" "$TMP/keys" &&
	expect_no_match "\"message_id\":\"tofu-2@example.com\",\"fingerprint\"" "$INST/audit.log"
'

test_expect_success 'trust on first use imports only the signing key, not others sent along with it' '
	printf "Product: TOFU3\n\nSigned by Mallory Three, attaching her key and one for alice@.\n" >"$TMP/tofu3.txt" &&
	cat "$TMP/m3.asc" "$TMP/yves.asc" >"$TMP/m3y.asc" &&
	$PGPMAIL with-keys "$GM3" "$M3FPR" "$TMP/tofu3.txt" "$TMP/tofu3.eml" "$TMP/m3y.asc" -- \
		"From: Mallory Three <m3@example.com>" "Message-ID: <tofu-3@example.com>" &&
	deliver_ok "$TMP/tofu3.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$M3FPR\"" "$TMP/a" &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$M3FPR " "$TMP/keys" &&
	expect_no_match "^$YFPR " "$TMP/keys"
'

test_expect_success 'a key claiming Alice'\''s address is not trusted on first use: unauthenticated, audited' '
	printf "Product: TOFU4\n\nZed claims to be Alice.\n" >"$TMP/tofu4.txt" &&
	$PGPMAIL with-keys "$TMP/gnupg-zed" "$ZFPR" "$TMP/tofu4.txt" "$TMP/tofu4.eml" "$TMP/zed.asc" -- \
		"Message-ID: <tofu-4@example.com>" &&
	deliver_ok "$TMP/tofu4.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"none\",\"reason\":\"the signing key is not known to this robot, and the key sent with the mail was not imported: another key in the robot.s keyring already claims its address alice@example.net" "$TMP/a" &&
	vulnid keys list >"$TMP/keys" && expect_no_match "^$ZFPR " "$TMP/keys" &&
	expect_no_match "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"tofu-4@example.com\"" "$INST/audit.log" &&
	expect_match "\"event\":\"key-refused\",\"id\":null,\"message_id\":\"tofu-4@example.com\",\"fingerprint\":\"$ZFPR\",\"source\":\"signed mail \(trust on first use\)\",\"other\":\"$AFPR\",\"address\":\"alice@example.net\"" "$INST/audit.log"
'

M5FPR=$(new_key mallory5 'Mallory Five <m5@example.com>' never)
G "$TMP/gnupg-mallory5" --armor --export "$M5FPR" >"$TMP/m5.asc" 2>/dev/null
G "$TMP/gnupg-mallory5" --import "$TMP/robot.asc" 2>/dev/null

test_expect_success 'trust on first use works for a request signed and encrypted in one go' '
	printf "Product: TOFU5\n\nSigned and encrypted to the robot, with the key attached.\n" >"$TMP/tofu5.txt" &&
	$PGPMAIL with-keys "$TMP/gnupg-mallory5" "$M5FPR" "$TMP/tofu5.txt" "$TMP/tofu5.eml" --encrypt "$ROBOT" "$TMP/m5.asc" -- \
		"From: Mallory Five <m5@example.com>" "Message-ID: <tofu-5@example.com>" &&
	expect_match "^Content-Type: multipart/encrypted" "$TMP/tofu5.eml" &&
	deliver_ok "$TMP/tofu5.eml" &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$M5FPR " "$TMP/keys" &&
	expect_match "\"event\":\"key-imported\",\"id\":null,\"message_id\":\"tofu-5@example.com\",\"fingerprint\":\"$M5FPR\"" "$INST/audit.log" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$M5FPR\",\"signature\":\"[0-9a-f]{64}\",\"encrypted\":true\}$" "$TMP/a"
'

# A key whose primary key only certifies and which signs with a subkey,
# as with smartcards and offline primary keys: the key (its primary
# fingerprint) is the identity, as in vulnid keys list.
# new_subkey_key NAME "UID": prints the primary fingerprint
new_subkey_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 cert never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" ed25519 sign never 2>/dev/null &&
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null &&
	echo "$fpr"
}
SFPR=$(new_subkey_key sam 'Sam <sam@example.net>')
GS="$TMP/gnupg-sam"
G "$GS" --armor --export "$SFPR" >"$TMP/sam.asc" 2>/dev/null
SSUB=$(gpg --homedir "$GS" --with-colons --list-keys "$SFPR" 2>/dev/null | awk -F: '/^sub/ { s = $12 } /^fpr/ && s ~ /s/ { print $10; exit }')

test_expect_success 'a request signed with a signing subkey is recorded under the key'\''s (primary) fingerprint' '
	test -n "$SSUB" && test "$SSUB" != "$SFPR" &&
	vulnid keys import "$TMP/sam.asc" >"$TMP/imp" &&
	expect_match "imported $SFPR" "$TMP/imp" &&
	clearsigned "$TMP/sub.eml" "$GS" "$SFPR" "Product: Sub

Signed with a signing subkey." "From: Sam <sam@example.net>" "Subject: subkey" &&
	deliver_ok "$TMP/sub.eml" &&
	sha=$($PGPMAIL sig-sha256 "$TMP/sub.eml") &&
	expect_eq "{\"method\":\"pgp\",\"fingerprint\":\"$SFPR\",\"signature\":\"$sha\"}" "$(auth_of "$(last_id)")"
'

test_expect_success 'a subkey signature on a mail From another address gets the note' '
	clearsigned "$TMP/sub2.eml" "$GS" "$SFPR" "Product: Sub2

Signed with a signing subkey, From Bob." "From: Bob <bob@example.net>" "Subject: subkey from bob" &&
	deliver_ok "$TMP/sub2.eml" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "\"note\":\"From is not one of the signing key'\''s user IDs\"" "$TMP/a"
'

TFPR=$(new_subkey_key tess 'Tess <tess@example.net>')
G "$TMP/gnupg-tess" --armor --export "$TFPR" >"$TMP/tess.asc" 2>/dev/null

test_expect_success 'trust on first use works for a key that signs with a subkey' '
	printf "Product: TOFU6\n\nTess signs with her subkey and attaches her key.\n" >"$TMP/tofu6.txt" &&
	$PGPMAIL with-keys "$TMP/gnupg-tess" "$TFPR" "$TMP/tofu6.txt" "$TMP/tofu6.eml" "$TMP/tess.asc" -- \
		"From: Tess <tess@example.net>" "Message-ID: <tofu-6@example.com>" &&
	deliver_ok "$TMP/tofu6.eml" &&
	vulnid keys list >"$TMP/keys" &&
	expect_match "^$TFPR " "$TMP/keys" &&
	auth_of "$(last_id)" >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$TFPR\"" "$TMP/a"
'

test_expect_success 'vulnid keys list shows the imported keys, --json too' '
	vulnid keys list >"$TMP/keys" &&
	for f in "$ROBOT" "$AFPR" "$EFPR" "$RFPR" "$M2FPR"; do
		expect_match "^$f" "$TMP/keys" || exit 1
	done &&
	vulnid keys list --json >"$TMP/keys.json" &&
	expect_eq True "$(json_get "any(k[\"fingerprint\"] == \"$RFPR\" and k[\"revoked\"] for k in j)" <"$TMP/keys.json")" &&
	expect_eq True "$(json_get "any(k[\"fingerprint\"] == \"$EFPR\" and k[\"expired\"] for k in j)" <"$TMP/keys.json")" &&
	expect_eq True "$(json_get "any(k[\"uids\"] == [\"Alice <alice@example.net>\"] and k[\"fingerprint\"] == \"$AFPR\" for k in j)" <"$TMP/keys.json")"
'

test_expect_success 'the audit chain is intact after all this' '
	vulnid audit verify
'

test_done
