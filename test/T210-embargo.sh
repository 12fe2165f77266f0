#!/bin/bash
# T210-embargo: embargoed requests are sealed to the robot key, told only
# encrypted (or as a stub), and released by vulnid tick with content that
# re-hashes to the commitment given at intake
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
MUTT_SEND="$VULNID_SRCDIR/test/mutt-send.sh"


# new_key NAME "UID" [cert]: ed25519 signing (or, with "cert", a
# certify-only primary and a signing subkey) and cv25519 encryption keys
new_key() {
	local h="$TMP/gnupg-$1" fpr usage=sign
	[ "${3:-}" != cert ] || usage=cert
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 "$usage" never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	[ "$usage" = sign ] || G "$h" --quick-add-key "$fpr" ed25519 sign never 2>/dev/null || return 1
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	echo "$fpr"
}

vulnid() { "$VULNID" -c "$CONF" "$@"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
n_entries() { sql "SELECT count(*) FROM entries"; }
show() { vulnid show "$1" --json; }	# the public view: a stub while embargoed
# stored ID COLUMN: a column of the entry's first record as stored
stored() { sql "SELECT $2 FROM records WHERE entry = '$1' AND seq = 1"; }
rec() { show "$1" | json_get "$2"; }

text_of() { $PGPMAIL text "$1"; }

verify_robot() {
	$PGPMAIL split-signed "$1" "$TMP/v.data" "$TMP/v.sig" || fail "$1 is not PGP/MIME signed"
	gpg --homedir "$GV" --batch --no-tty --status-fd 1 --verify "$TMP/v.sig" "$TMP/v.data" \
		>"$TMP/v.status" 2>/dev/null || fail "gpg --verify failed: $(cat "$TMP/v.status")"
	expect_match "^\[GNUPG:\] VALIDSIG $ROBOT " "$TMP/v.status"
}

# decrypt_mail MAIL HOME OUT: MAIL is multipart/encrypted to HOME's key
# and signed inside by the robot; OUT is the clear MIME entity
decrypt_mail() {
	expect_eq "multipart/encrypted" "$(mail_header "$1" Content-Type | cut -d";" -f1)" "type of $1"
	$PGPMAIL decrypt "$1" "$2" "$3" || fail "cannot decrypt $1"
	expect_match "^\[GNUPG:\] DECRYPTION_OKAY" "$3.status"
	expect_match "^\[GNUPG:\] VALIDSIG $ROBOT " "$3.status"
}

# nowhere STRING: not in any database row (text, or blob as hex), in no
# mail the robot sent, not in the audit log
nowhere() {
	local hex
	hex=$(printf '%s' "$1" | xxd -p | tr -d '\n')	# .dump writes blobs as X'hex', lower case
	sqlite3 "$INST/vulnid.db" .dump >"$TMP/dump.sql"
	expect_no_match "$1" "$TMP/dump.sql"
	grep -q -- "$hex" "$TMP/dump.sql" && fail "'$1' is in the database (in a blob: $(grep -o "INSERT INTO [a-z_]*" "$TMP/dump.sql" | sort | uniq -c | tr '\n' ' ')"
	grep -rq -- "$1" "$INST/sent" && fail "'$1' found in $(grep -rl -- "$1" "$INST/sent")"
	expect_no_match "$1" "$INST/audit.log"
}

# commitment_ok ID: the release record's content, put in record 1's frame
# (entry, seq, created, kind, auth), hashes to the entry's digest; the
# release record hashes to its own sha256.  The canonical bytes are those
# of doc/vulnid-json.7 (CANONICAL RECORDS).
commitment_ok() {
	show "$1" >"$TMP/c.json"
	$PYTHON - "$TMP/c.json" <<'PY'
import hashlib, json, sys
e = json.load(open(sys.argv[1]))
def s(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
def canon(entry, frame, content):
    att = ",".join('{"sha256":' + s(a["sha256"]) + ',"size":' + str(a["size"]) +
                   ',"content_type":' + s(a["content_type"]) + ',"filename":' + s(a["filename"]) + "}"
                   for a in content["attachments"])
    return ('{"v":"vulnid-record-1","entry":' + s(entry) + ',"seq":' + str(frame["seq"]) +
            ',"created":' + s(frame["created"]) + ',"kind":' + s(frame["kind"]) +
            ',"auth":' + s(frame["auth"]) + ',"subject":' + s(content["subject"]) +
            ',"fields":' + s(content["fields"]) + ',"body":' + s(content["body"]) +
            ',"attachments":[' + att + "]}")
first = e["records"][0]
rel = [r for r in e["records"] if r["kind"] == "release"]
assert len(rel) == 1, "release records: %d" % len(rel)
rel = rel[0]
assert rel.get("opens") == 1, "the release opens %r" % rel.get("opens")
assert rel["auth"] == {"method": "robot"}, rel["auth"]
h = hashlib.sha256(canon(e["id"], first, rel).encode()).hexdigest()
assert h == e["digest"], "commitment %s, the disclosed content hashes to %s" % (e["digest"], h)
assert first["sha256"] == e["digest"]
h2 = hashlib.sha256(canon(e["id"], rel, rel).encode()).hexdigest()
assert h2 == rel["sha256"], "release record sha256 %s, recomputed %s" % (rel["sha256"], h2)
PY
}

make_instance inst
set_conf announce to announce@lists.example.org
ROBOT=$(vulnid key export --fingerprint)
vulnid key export >"$TMP/robot.asc"
GV="$TMP/gnupg-verify"
mkdir -m 700 "$GV"
G "$GV" --import "$TMP/robot.asc" 2>/dev/null

AFPR=$(new_key alice 'Alice <alice@example.net>')
GA="$TMP/gnupg-alice"
G "$GA" --import "$TMP/robot.asc" 2>/dev/null
printf '5\ny\n' | gpg --homedir "$GA" --batch --no-tty --command-fd 0 --edit-key "$ROBOT" trust quit >/dev/null 2>&1
G "$GA" --armor --export "$AFPR" >"$TMP/alice.asc" 2>/dev/null
VFPR=$(new_key vendor 'Vee PSIRT <psirt@v.example>')
GVd="$TMP/gnupg-vendor"
G "$GVd" --armor --export "$VFPR" >"$TMP/vendor.asc" 2>/dev/null
G "$GVd" --import "$TMP/robot.asc" 2>/dev/null

EMB=$(date -u -d '+30 days' +%F)
BEFORE=$(date -u -d '+29 days' +%FT%H:%M:%SZ)
AFTER=$(date -u -d '+31 days' +%FT%H:%M:%SZ)

printf 'SECRET-POC-E1\000\001\002\377 exploit bytes\n' >"$TMP/poc.bin"
write_mail "$TMP/e1.eml" "Subject: SECRET-TITLE-E1 router takeover" "Message-ID: <e1@example.net>" \
	"MIME-Version: 1.0" "Content-Type: multipart/mixed; boundary=\"XX\"" <<MAIL
--XX
Content-Type: text/plain; charset=utf-8

Vendor: Vee <v.example>
Product: SECRET-PROD-E1 Router
Version: 3.1
Embargo: $EMB

SECRET-DESC-E1: the admin page runs commands from the Host header.
--XX
Content-Type: application/octet-stream; name="poc.bin"
Content-Disposition: attachment; filename="poc.bin"
Content-Transfer-Encoding: base64

$(base64 -w 76 "$TMP/poc.bin")
--XX--
MAIL

test_expect_success 'setup: the vendor is in the directory, Alice'\''s key in the robot' '
	vulnid keys import "$TMP/alice.asc" >/dev/null &&
	vulnid vendor add Vee --domain v.example --contact psirt@v.example >/dev/null &&
	vulnid vendor show Vee >"$TMP/v.txt" && expect_match "psirt@v.example" "$TMP/v.txt"
'

test_expect_success 'an embargoed request in clear gets a sealed, embargoed entry' '
	snap && deliver_ok "$TMP/e1.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e1.id" &&
	show "$id" >"$TMP/s.json" &&
	expect_eq embargoed "$(json_get "j[\"state\"]" <"$TMP/s.json")" &&
	expect_eq "$EMB" "$(json_get "j[\"embargo\"]" <"$TMP/s.json")" &&
	expect_eq "$(sql "SELECT digest FROM entries WHERE id = '\''$id'\''")" "$(json_get "j[\"commitment\"]" <"$TMP/s.json")" &&
	expect_eq "[]" "$(json_get "[k for k in (\"title\", \"records\", \"vendor\", \"product\") if k in j]" <"$TMP/s.json")" &&
	expect_eq "[]||1|{\"method\":\"none\"}" "$(stored "$id" "fields || '\''|'\'' || body || '\''|'\'' || (subject IS NULL) || '\''|'\'' || auth")" &&
	vulnid show "$id" --json --private >"$TMP/p.json" &&
	expect_eq True "$(json_get "j[\"records\"][0][\"sealed\"]" <"$TMP/p.json")" &&
	expect_eq "SECRET-PROD-E1 Router" "$(json_get "j[\"product\"]" <"$TMP/p.json")" &&
	expect_eq "$EMB" "$(sql "SELECT embargo FROM entries WHERE id = '\''$id'\''")" &&
	sql "SELECT sealed FROM records WHERE entry = '\''$id'\''" | head -n 1 | grep -q "^-----BEGIN PGP MESSAGE-----" &&
	expect_eq "1" "$(sql "SELECT b.sealed FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256 WHERE m.message_id = '\''e1@example.net'\''")" &&
	expect_eq "" "$(sql "SELECT subject FROM messages WHERE message_id = '\''e1@example.net'\''")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM attachments")" &&
	expect_match "\"event\":\"assigned\",\"id\":\"$id\",.*\"embargo\":\"$EMB\"" "$INST/audit.log"
'

test_expect_success 'nothing of the embargoed request is in clear in the database, the mails or the audit log' '
	for s in SECRET-TITLE-E1 SECRET-DESC-E1 SECRET-PROD-E1 SECRET-POC-E1; do
		nowhere "$s" || exit 1
	done
'

test_expect_success 'the ack warns that it travelled unencrypted and gives no details' '
	id=$(cat "$TMP/e1.id") &&
	ack=$(new_mail_to alice@example.net) && cp "$ack" "$TMP/e1-ack.eml" &&
	verify_robot "$ack" &&
	expect_eq "[$id] embargoed request" "$(mail_header "$ack" Subject)" &&
	text_of "$ack" >"$TMP/ack.txt" &&
	expect_match "travelled unencrypted" "$TMP/ack.txt" &&
	expect_match "commitment: +$(sql "SELECT digest FROM entries WHERE id = '\''$id'\''")" "$TMP/ack.txt" &&
	expect_match "embargo: +$EMB" "$TMP/ack.txt" &&
	expect_no_match "SECRET" "$TMP/ack.txt" &&
	expect_no_match "Router|3\.1|Host header" "$TMP/ack.txt"
'

test_expect_success 'the ack in clear does not name the vendor told (sealed content)' '
	text_of "$TMP/e1-ack.eml" >"$TMP/ack.txt" &&
	expect_no_match "v\.example|Vee" "$TMP/ack.txt"
'

test_expect_success 'the vendor (no key in the directory) gets a stub without details' '
	id=$(cat "$TMP/e1.id") &&
	n=$(new_mail_to psirt@v.example) &&
	verify_robot "$n" &&
	expect_eq "[$id] Embargoed vulnerability report" "$(mail_header "$n" Subject)" &&
	text_of "$n" >"$TMP/n.txt" &&
	expect_match "Identifier: +$id" "$TMP/n.txt" &&
	expect_match "Embargo: +until $EMB" "$TMP/n.txt" &&
	expect_match "under embargo until $EMB$" "$TMP/n.txt" &&
	expect_match "^  Token: vulnid_[a-z2-7]{32}$" "$TMP/n.txt" &&
	expect_no_match "SECRET|Router|Host header|until yes" "$TMP/n.txt" &&
	test -z "$(new_mails | while read -r f; do mail_header "$f" To; done | grep -i announce)"
'

# --- a clearsigned embargoed request ------------------------------------

printf 'Vendor: Vee <v.example>\nProduct: SECRET-PROD-E2 Switch\nEmbargo: %s\n\nSECRET-DESC-E2: a hard-coded password in the switch.\n' "$EMB" |
	G "$GA" --local-user "$AFPR" --clearsign >"$TMP/e2.cs" 2>/dev/null
write_mail "$TMP/e2.eml" "Subject: Switch password" "Message-ID: <e2@example.net>" <"$TMP/e2.cs"

test_expect_success 'a clearsigned embargoed request: authenticated, sealed, ack encrypted to Alice with the details' '
	snap && deliver_ok "$TMP/e2.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e2.id" &&
	expect_eq embargoed "$(rec "$id" "j[\"state\"]")" &&
	stored "$id" auth >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\",\"signature\":\"[0-9a-f]{64}\"\}$" "$TMP/a" &&
	expect_eq "1" "$(sql "SELECT b.sealed FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256 WHERE m.message_id = '\''e2@example.net'\''")" &&
	ack=$(new_mail_to alice@example.net) &&
	decrypt_mail "$ack" "$GA" "$TMP/e2-ack" &&
	text_of "$TMP/e2-ack" >"$TMP/ack.txt" &&
	expect_match "^  $id$" "$TMP/ack.txt" &&
	expect_match "product: +SECRET-PROD-E2 Switch" "$TMP/ack.txt" &&
	expect_match "travelled unencrypted" "$TMP/ack.txt"
'

test_expect_success 'nothing of the clearsigned embargoed request is in clear (the signature is kept too)' '
	sql "SELECT hex(b.data) FROM records r JOIN blobs b ON b.sha256 = json_extract(r.auth, '\''$.signature'\'')
	     JOIN messages m ON m.id = r.message WHERE m.message_id = '\''e2@example.net'\''" | xxd -r -p >"$TMP/e2.sig" &&
	test -s "$TMP/e2.sig" &&
	expect_no_match "SECRET" "$TMP/e2.sig" &&
	for s in SECRET-PROD-E2 SECRET-DESC-E2; do
		nowhere "$s" || exit 1
	done
'

# --- signed and encrypted with mutt, the vendor has a key -----------------

printf 'From: Alice <alice@example.net>\nTo: request@example.org\nSubject: SECRET-TITLE-E3 camera stream\n\nVendor: Vee <v.example>\nProduct: SECRET-PROD-E3 Camera\nEmbargo: %s\n\nSECRET-DESC-E3: the camera streams to anyone who asks.\n' "$EMB" >"$TMP/e3.draft"

test_expect_success 'with a vendor key in the directory' '
	vulnid vendor key Vee "$TMP/vendor.asc" >/dev/null &&
	vulnid vendor show Vee --json >"$TMP/v.json" &&
	expect_eq "$VFPR" "$(json_get "j[\"key_fpr\"]" <"$TMP/v.json")"
'

test_expect_success 'an embargoed request signed and encrypted with mutt: sealed, authenticated, encrypted' '
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/e3.draft" "$TMP/e3.eml" encrypt &&
	expect_no_match "SECRET-DESC-E3" "$TMP/e3.eml" &&
	snap && deliver_ok "$TMP/e3.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e3.id" &&
	expect_eq embargoed "$(rec "$id" "j[\"state\"]")" &&
	stored "$id" sealed | head -n 1 | grep -q "^-----BEGIN PGP MESSAGE-----" &&
	stored "$id" auth >"$TMP/a" &&
	expect_match "^\{\"method\":\"pgp\",\"fingerprint\":\"$AFPR\",\"signature\":\"[0-9a-f]{64}\",\"encrypted\":true\}$" "$TMP/a" &&
	expect_eq "1" "$(sql "SELECT b.sealed FROM blobs b JOIN entries e ON e.id = '\''$id'\'' JOIN messages m ON m.id = e.message WHERE b.sha256 = m.raw_sha256")" "the raw message is sealed too (its header holds the Subject)" &&
	for s in SECRET-PROD-E3 SECRET-DESC-E3; do nowhere "$s" || exit 1; done
'

test_expect_success 'the ack to it is encrypted to Alice and has the details' '
	id=$(cat "$TMP/e3.id") &&
	ack=$(new_mail_to alice@example.net) &&
	expect_eq "[$id] embargoed request" "$(mail_header "$ack" Subject)" &&
	decrypt_mail "$ack" "$GA" "$TMP/e3-ack" &&
	text_of "$TMP/e3-ack" >"$TMP/ack.txt" &&
	expect_match "^  $id$" "$TMP/ack.txt" &&
	expect_match "product: +SECRET-PROD-E3 Camera" "$TMP/ack.txt" &&
	expect_match "embargo: +$EMB" "$TMP/ack.txt" &&
	expect_no_match "travelled unencrypted" "$TMP/ack.txt"
'

test_expect_success 'the vendor notification is encrypted to the vendor key, with the details' '
	id=$(cat "$TMP/e3.id") &&
	n=$(new_mail_to psirt@v.example) &&
	mail_header "$n" Subject >"$TMP/subj" &&
	expect_no_match "SECRET|camera|Camera" "$TMP/subj" &&
	expect_match "^\[$id\]" "$TMP/subj" &&
	decrypt_mail "$n" "$GVd" "$TMP/e3-vendor" &&
	text_of "$TMP/e3-vendor" >"$TMP/n.txt" &&
	expect_match "SECRET-DESC-E3: the camera streams" "$TMP/n.txt" &&
	expect_match "Product: +SECRET-PROD-E3 Camera" "$TMP/n.txt" &&
	expect_match "Title: +SECRET-TITLE-E3 camera stream" "$TMP/n.txt" &&
	! $PGPMAIL decrypt "$n" "$GA" "$TMP/nope" 2>/dev/null
'

test_expect_success 'the Subject of an encrypted embargoed request is not kept in clear either' '
	expect_eq "" "$(sql "SELECT subject FROM messages WHERE message_id = (SELECT m.message_id FROM entries e JOIN messages m ON m.id = e.message WHERE e.id = '\''$(cat "$TMP/e3.id")'\'')")"
'

# --- signed and encrypted with an attachment -------------------------------

printf 'SECRET-POC-E4\000\377\376 more exploit bytes\n' >"$TMP/poc2.bin"
printf 'Product: SECRET-PROD-E4 Printer\nEmbargo: %s\n\nSECRET-DESC-E4: the printer prints arbitrary files.\n' "$EMB" >"$TMP/e4.txt"

test_expect_success 'an encrypted embargoed request with an attachment: sealed, the attachment nowhere' '
	$PGPMAIL with-keys "$GA" "$AFPR" "$TMP/e4.txt" "$TMP/e4.eml" --encrypt "$ROBOT" \
		"application/octet-stream=$TMP/poc2.bin" -- "Message-ID: <e4@example.net>" "Subject: printer" &&
	deliver_ok "$TMP/e4.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e4.id" &&
	expect_eq embargoed "$(rec "$id" "j[\"state\"]")" &&
	stored "$id" auth | grep -q "\"fingerprint\":\"$AFPR\"" &&
	nowhere SECRET-POC-E4 && nowhere SECRET-DESC-E4
'

# A researcher whose key signs with a subkey (smartcard, offline primary)
SFPR=$(new_key sam 'Sam <sam@example.net>' cert)
GS="$TMP/gnupg-sam"
G "$GS" --armor --export "$SFPR" >"$TMP/sam.asc" 2>/dev/null
G "$GS" --import "$TMP/robot.asc" 2>/dev/null

test_expect_success 'the ack to a researcher whose key signs with a subkey is encrypted to that key' '
	vulnid keys import "$TMP/sam.asc" >/dev/null &&
	printf "Product: SECRET-PROD-E6 Modem\nEmbargo: %s\n\nSECRET-DESC-E6\n" "$EMB" |
		G "$GS" --local-user "$SFPR" --clearsign >"$TMP/e6.cs" 2>/dev/null &&
	write_mail "$TMP/e6.eml" "From: Sam <sam@example.net>" "Subject: modem" "Message-ID: <e6@example.net>" <"$TMP/e6.cs" &&
	snap && deliver_ok "$TMP/e6.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e6.id" &&
	ack=$(new_mail_to sam@example.net) &&
	decrypt_mail "$ack" "$GS" "$TMP/e6-ack" &&
	text_of "$TMP/e6-ack" >"$TMP/ack.txt" &&
	expect_match "SECRET-PROD-E6 Modem" "$TMP/ack.txt"
'

# --- Embargo: yes ----------------------------------------------------------

write_mail "$TMP/e5.eml" "Subject: until further notice" "Message-ID: <e5@example.net>" <<MAIL
Product: SECRET-PROD-E5 Toaster
Embargo: yes

SECRET-DESC-E5: the toaster is on the internet.
MAIL

test_expect_success 'Embargo: yes is sealed too' '
	deliver_ok "$TMP/e5.eml" &&
	id=$(last_id) && echo "$id" >"$TMP/e5.id" &&
	expect_eq embargoed "$(rec "$id" "j[\"state\"]")" &&
	expect_eq yes "$(sql "SELECT embargo FROM entries WHERE id = '\''$id'\''")" &&
	nowhere SECRET-DESC-E5
'

# --- release ---------------------------------------------------------------

test_expect_success 'vulnid tick before the embargo date releases nothing' '
	snap &&
	records=$(sql "SELECT count(*) FROM records") &&
	vulnid tick >"$TMP/tick.out" &&
	VULNID_TEST_NOW=$BEFORE vulnid tick >>"$TMP/tick.out" &&
	expect_eq 2 "$(grep -c "^released 0 embargoed entries$" "$TMP/tick.out")" &&
	expect_no_match "^released [1-9]" "$TMP/tick.out" &&
	expect_eq "$records" "$(sql "SELECT count(*) FROM records")" &&
	expect_eq "" "$(new_mails)" &&
	for f in e1 e2 e3 e4 e5; do
		expect_eq embargoed "$(rec "$(cat "$TMP/$f.id")" "j[\"state\"]")" "$f" || exit 1
	done &&
	expect_no_match "\"event\":\"released\"" "$INST/audit.log"
'

test_expect_success 'vulnid tick after the date releases every dated embargo, and only those' '
	snap &&
	VULNID_TEST_NOW=$AFTER vulnid tick >"$TMP/tick.out" &&
	n=$(ls "$TMP"/e?.id | wc -l) &&
	expect_match "^released $((n - 1)) embargoed entries$" "$TMP/tick.out" &&
	for f in e1 e2 e3 e4 e6; do
		[ -f "$TMP/$f.id" ] || continue
		id=$(cat "$TMP/$f.id")
		expect_eq public "$(rec "$id" "j[\"state\"]")" "$f" || exit 1
		expect_eq "release 1" "$(rec "$id" "j[\"records\"][1][\"kind\"] + \" \" + str(j[\"records\"][1][\"opens\"])")" "$f" || exit 1
		expect_match "\"event\":\"released\",\"id\":\"$id\",.*\"why\":\"date\",\"commitment\":\"$(sql "SELECT digest FROM entries WHERE id = '\''$id'\''")\"" "$INST/audit.log" || exit 1
	done &&
	expect_eq embargoed "$(rec "$(cat "$TMP/e5.id")" "j[\"state\"]")"
'

test_expect_success 'the released content re-hashes to the commitment given at intake' '
	for f in e1 e2 e3 e4 e6; do
		[ -f "$TMP/$f.id" ] || continue
		commitment_ok "$(cat "$TMP/$f.id")" || fail "$f"
	done &&
	ack_digest=$(text_of "$TMP/e1-ack.eml" | sed -n "s/^ *commitment: *//p") &&
	expect_eq "$ack_digest" "$(sql "SELECT digest FROM entries WHERE id = '\''$(cat "$TMP/e1.id")'\''")"
'

test_expect_success 'the release discloses what was sent: title, fields, description' '
	id=$(cat "$TMP/e1.id") && show "$id" >"$TMP/s.json" &&
	expect_eq "SECRET-TITLE-E1 router takeover" "$(json_get "j[\"title\"]" <"$TMP/s.json")" &&
	expect_eq "SECRET-PROD-E1 Router" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	expect_eq "$EMB" "$(json_get "j[\"embargo\"]" <"$TMP/s.json")" &&
	expect_eq "SECRET-DESC-E1: the admin page runs commands from the Host header." "$(json_get "j[\"records\"][1][\"body\"]" <"$TMP/s.json")" &&
	id=$(cat "$TMP/e3.id") &&
	expect_eq "SECRET-TITLE-E3 camera stream" "$(rec "$id" "j[\"title\"]")"
'

test_expect_success 'attachments of embargoed requests appear after release, with their bytes' '
	for x in "e1 poc.bin" "e4 poc2.bin"; do
		set -- $x
		id=$(cat "$TMP/$1.id")
		sha=$(sha256sum <"$TMP/$2" | cut -d" " -f1)
		show "$id" >"$TMP/s.json"
		expect_eq "$sha $2 $(stat -c %s "$TMP/$2")" "$(json_get "j[\"records\"][1][\"attachments\"][0][\"sha256\"] + \" \" + j[\"records\"][1][\"attachments\"][0][\"filename\"] + \" \" + str(j[\"records\"][1][\"attachments\"][0][\"size\"])" <"$TMP/s.json")" "attachment of $1"
		sql "SELECT hex(data) FROM blobs WHERE sha256 = '\''$sha'\''" | xxd -r -p | cmp - "$TMP/$2" || fail "the bytes of $2"
	done
'

test_expect_success 'the announcement goes out at release' '
	id=$(cat "$TMP/e1.id") &&
	for f in $(new_mails); do
		mail_header "$f" To | grep -q announce@lists.example.org &&
			mail_header "$f" Subject | grep -q "^\[$id\]" && echo "$f" || true
	done >"$TMP/ann" &&
	expect_eq 1 "$(wc -l <"$TMP/ann")" &&
	verify_robot "$(cat "$TMP/ann")" &&
	mail_header "$(cat "$TMP/ann")" Subject | grep -q "SECRET-TITLE-E1 router takeover" &&
	text_of "$(cat "$TMP/ann")" | grep -q "SECRET-DESC-E1"
'

test_expect_success 'the vendor gets the full notification at release' '
	id=$(cat "$TMP/e1.id") &&
	for f in $(new_mails); do
		mail_header "$f" To | grep -q psirt@v.example &&
			mail_header "$f" Subject | grep -q "^\[$id\]" && echo "$f" || true
	done >"$TMP/vn" &&
	expect_eq 1 "$(wc -l <"$TMP/vn")" &&
	text_of "$(cat "$TMP/vn")" >"$TMP/n.txt" &&
	expect_match "SECRET-DESC-E1: the admin page" "$TMP/n.txt" &&
	expect_match "Product: +SECRET-PROD-E1 Router" "$TMP/n.txt" &&
	mail_header "$(cat "$TMP/vn")" Subject | grep -q "Vee SECRET-PROD-E1 Router: SECRET-TITLE-E1"
'

test_expect_success 'Embargo: yes is not released by tick, even years later' '
	snap &&
	VULNID_TEST_NOW=2099-01-01T00:00:00Z vulnid tick >"$TMP/tick.out" &&
	expect_match "^released 0 embargoed entries$" "$TMP/tick.out" &&
	expect_eq embargoed "$(rec "$(cat "$TMP/e5.id")" "j[\"state\"]")" &&
	nowhere SECRET-DESC-E5
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify
'

test_done
