#!/bin/bash
# T240-decrypt-replay: the robot is no decryption oracle for mail it has
# decrypted once.  Alice's encrypted addition to an embargoed entry,
# captured by Mallory and sent again (byte for byte with new headers, as
# a new request, to another entry by any routing, wrapped inline, armored
# anew, or the same plaintext encrypted anew) is set aside as a replay:
# never published, never answered with its content.  The same mail from
# Alice to the same entry is not a replay; a redelivery stays a
# duplicate; a signed and encrypted addition sent to another entry before
# the original arrived is set aside as misdirected and does not burn the
# original.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
MUTT_SEND="$VULNID_SRCDIR/test/mutt-send.sh"

# new_key NAME "UID": ed25519 signing and cv25519 encryption keys
new_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	echo "$fpr"
}

vulnid() { "$VULNID" -c "$CONF" "$@"; }
n_entries() { sql "SELECT count(*) FROM entries"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
last_quarantine() { sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1"; }
n_records() { sql "SELECT count(*) FROM records WHERE entry = '$1'"; }
mid_of() { mail_header "$1" Message-ID | tr -d "<>"; }

# secret_nowhere S: S is in no database row in clear (text, or blob as
# hex), in no mail the robot sent, not in the audit log, not in any
# public view (vulnid show of every entry) and not in quarantine list
secret_nowhere() {
	local hex id
	hex=$(printf '%s' "$1" | xxd -p | tr -d '\n')
	sqlite3 "$INST/vulnid.db" .dump >"$TMP/dump.sql"
	expect_no_match "$1" "$TMP/dump.sql"
	! grep -q -- "$hex" "$TMP/dump.sql" || fail "'$1' is in a blob in clear"
	! grep -rq -- "$1" "$INST/sent" || fail "'$1' found in $(grep -rl -- "$1" "$INST/sent")"
	expect_no_match "$1" "$INST/audit.log"
	for id in $(sql "SELECT id FROM entries"); do
		vulnid show "$id" --json >"$TMP/pub.json"
		expect_no_match "$1" "$TMP/pub.json"
	done
	vulnid quarantine list --json >"$TMP/ql.json"
	expect_no_match "$1" "$TMP/ql.json"
}

# replayed FILE [filter options]: no entry, no record, quarantined as
# REASON (default replay), stored sealed, no mail at all
replayed() {
	local file=$1 before records reason=${REASON:-replay}
	shift
	before=$(n_entries)
	records=$(sql "SELECT count(*) FROM records")
	snap
	deliver_ok "$file" "$@"
	expect_eq "$before" "$(n_entries)" "entries after the replay"
	expect_eq "$records" "$(sql "SELECT count(*) FROM records")" "records after the replay"
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '$(mid_of "$file")'")" "disposition"
	expect_eq "$reason" "$(last_quarantine)" "quarantine reason"
	expect_eq "" "$(new_mails)" "mails sent"
	expect_eq 0 "$(sql "SELECT count(*) FROM decrypted WHERE message = (SELECT id FROM messages WHERE message_id = '$(mid_of "$file")')")" "remembered"
}

make_instance inst
ROBOT=$(vulnid key export --fingerprint)
vulnid key export >"$TMP/robot.asc"
AFPR=$(new_key alice 'Alice <alice@example.net>')
GA="$TMP/gnupg-alice"
G "$GA" --import "$TMP/robot.asc" 2>/dev/null
printf '5\ny\n' | gpg --homedir "$GA" --batch --no-tty --command-fd 0 --edit-key "$ROBOT" trust quit >/dev/null 2>&1
G "$GA" --armor --export "$AFPR" >"$TMP/alice.asc" 2>/dev/null
EMB=$(date -u -d '+30 days' +%F)

MALLORY=("From: Mallory <mallory@example.com>" "To: request@example.org")

test_expect_success 'setup: an embargoed entry of Alice (signed), a public one of Bob, one of Mallory' '
	vulnid keys import "$TMP/alice.asc" >/dev/null &&
	clearsigned_mail "$TMP/x.eml" alice "$AFPR" "$(printf "Product: Router\nEmbargo: %s\n\nThe router is broken." "$EMB")" \
		"Message-ID: <x@example.net>" "Subject: embargoed" &&
	deliver_ok "$TMP/x.eml" -r request@example.org &&
	X=$(last_id) && echo "$X" >"$TMP/X" &&
	expect_eq embargoed "$(vulnid show "$X" --json | json_get "j[\"state\"]")" &&
	printf "Product: Bobware\n\nPublic.\n" |
		write_mail "$TMP/y.eml" "Message-ID: <y@example.net>" "From: Bob <bob@example.net>" "Subject: public" &&
	deliver_ok "$TMP/y.eml" -r request@example.org &&
	last_id >"$TMP/Y" &&
	printf "Product: Mallware\n\nMine.\n" |
		write_mail "$TMP/m.eml" "Message-ID: <m@example.com>" "${MALLORY[@]}" "Subject: mine" &&
	snap && deliver_ok "$TMP/m.eml" -r request@example.org &&
	last_id >"$TMP/M" &&
	new_mail_to mallory@example.com >"$TMP/m-ack.path"
'

X=$(cat "$TMP/X" 2>/dev/null) Y=$(cat "$TMP/Y" 2>/dev/null) M=$(cat "$TMP/M" 2>/dev/null)

printf 'Content-Type: text/plain; charset=utf-8\n\nVersion: 3.2\n\nSECRET-ADD-T240: the second overflow is in the TLS code.\n' >"$TMP/add.inner"

test_expect_success 'Alice'\''s unsigned PGP/MIME encrypted addition is sealed on her embargoed entry' '
	$PGPMAIL encrypt-mime "$GA" "$ROBOT" "$TMP/add.inner" "$TMP/add.eml" \
		"To: request+$X@example.org" "Subject: more" "Message-ID: <add@example.net>" &&
	expect_no_match "SECRET-ADD" "$TMP/add.eml" &&
	deliver_ok "$TMP/add.eml" -r "request+$X@example.org" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''add@example.net'\''")" &&
	expect_eq 2 "$(n_records "$X")" &&
	expect_eq "1|addition" "$(sql "SELECT sealed IS NOT NULL, kind FROM records WHERE entry = '\''$X'\'' AND seq = 2" | tr -d " ")" &&
	expect_eq "$X|alice@example.net|" "$(sql "SELECT entry, sender, coalesce(fingerprint, '\'''\'') FROM decrypted")" &&
	sql "SELECT cipher_sha256 || plain_sha256 FROM decrypted" | grep -Eq "^[0-9a-f]{128}$" &&
	secret_nowhere SECRET-ADD-T240
'

test_expect_success 'attack: the same mail from Mallory with new headers and no [ID] is a replay, not a new entry' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r1.eml" "${MALLORY[@]}" "Message-ID: <r1@example.com>" \
		"Subject: Please assign an identifier" "Date: $(date -R)" &&
	replayed "$TMP/r1.eml" -r request@example.org -f mallory@example.com &&
	expect_match "decrypted before .*for $X.*as a new request" <(sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1") &&
	expect_eq "1|" "$(sql "SELECT b.sealed, coalesce(m.subject, '\'''\'') FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256 WHERE m.message_id = '\''r1@example.com'\''")" &&
	expect_match "\"event\":\"quarantined\",\"id\":null,\"message_id\":\"r1@example.com\".*\"reason\":\"replay\"" "$INST/audit.log"
'

test_expect_success 'attack: Mallory'\''s lookups of every entry get no plaintext back' '
	n=$(sql "SELECT max(number) FROM entries") &&
	{ for id in $(sql "SELECT id FROM entries"); do echo "lookup $id"; done
	  echo "lookup TEST-$(date -u +%Y)-$(printf %04d $((n + 1)))"; } |
		write_mail "$TMP/lookup.eml" "${MALLORY[@]}" "Message-ID: <lookup@example.com>" "Subject: lookups" &&
	snap && deliver_ok "$TMP/lookup.eml" -r request@example.org -f mallory@example.com &&
	r=$(new_mail_to mallory@example.com) &&
	mail_body "$r" >"$TMP/lookup.txt" &&
	expect_match "lookup $X" "$TMP/lookup.txt" &&
	expect_no_match "SECRET-ADD" "$TMP/lookup.txt" &&
	secret_nowhere SECRET-ADD-T240
'

test_expect_success 'variant: the same ciphertext wrapped inline (text/plain) is a replay' '
	$PGPMAIL to-inline "$TMP/add.eml" "$TMP/r2.eml" "${MALLORY[@]}" "Message-ID: <r2@example.com>" "Subject: inline" &&
	expect_eq "text/plain" "$(mail_header "$TMP/r2.eml" Content-Type | cut -d";" -f1)" &&
	replayed "$TMP/r2.eml" -r request@example.org
'

test_expect_success 'variant: the same ciphertext armored anew (an armor header) is a replay' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r3a.eml" "${MALLORY[@]}" "Message-ID: <r3@example.com>" &&
	$PGPMAIL rearmor "$TMP/r3a.eml" "$TMP/r3.eml" MESSAGE &&
	replayed "$TMP/r3.eml" -r request@example.org
'

test_expect_success 'variant: the same plaintext encrypted anew (another session key) is a replay' '
	$PGPMAIL encrypt-mime "$GA" "$ROBOT" "$TMP/add.inner" "$TMP/r4.eml" "${MALLORY[@]}" \
		"Message-ID: <r4@example.com>" "Subject: fresh ciphertext" &&
	! cmp -s <(sed -n "/BEGIN PGP MESSAGE/,/END PGP/p" "$TMP/add.eml") <(sed -n "/BEGIN PGP MESSAGE/,/END PGP/p" "$TMP/r4.eml") &&
	replayed "$TMP/r4.eml" -r request@example.org
'

test_expect_success 'variant: sent to a public entry by plus address is a replay' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r5.eml" "${MALLORY[@]}" "To: request+$Y@example.org" \
		"Message-ID: <r5@example.com>" &&
	replayed "$TMP/r5.eml" -r "request+$Y@example.org" &&
	expect_match "to another entry" <(sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1")
'

test_expect_success 'variant: sent to Mallory'\''s entry by In-Reply-To (her ack) is a replay' '
	ackid=$(mid_of "$(cat "$TMP/m-ack.path")") &&
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r6.eml" "${MALLORY[@]}" "Message-ID: <r6@example.com>" \
		"In-Reply-To: <$ackid>" "Subject: Re: mine" &&
	replayed "$TMP/r6.eml" -r request@example.org &&
	expect_match "for $X.*to another entry" <(sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1")
'

test_expect_success 'variant: sent to Mallory'\''s entry by a Subject tag is a replay' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r7.eml" "${MALLORY[@]}" "Message-ID: <r7@example.com>" \
		"Subject: [$M] more" &&
	replayed "$TMP/r7.eml" -r request@example.org
'

test_expect_success 'variant: sent to the right entry by another sender (From and Reply-To) is a replay' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/r8.eml" "From: Alice <alice@example.net>" \
		"Reply-To: mallory@example.com" "Message-ID: <r8@example.com>" &&
	replayed "$TMP/r8.eml" -r "request+$X@example.org" &&
	expect_match "by another sender" <(sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1")
'

test_expect_success 'the redelivery of Alice'\''s very mail is a duplicate, as before' '
	messages=$(sql "SELECT count(*) FROM messages") &&
	deliver_ok "$TMP/add.eml" -r "request+$X@example.org" &&
	expect_eq "$messages" "$(sql "SELECT count(*) FROM messages")" &&
	expect_match "\"event\":\"duplicate\",\"id\":null,\"message_id\":\"add@example.net\"" "$INST/audit.log"
'

# A ciphertext acts once: the same encrypted mail with a new Message-ID,
# even from Alice's address to her entry, is what anyone who captured it
# can send (From is forged at will); it is a replay.
test_expect_success 'the same encrypted mail again to the same entry from the same address is a replay' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/again.eml" "Message-ID: <again@example.net>" &&
	deliver_ok "$TMP/again.eml" -r "request+$X@example.org" &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''again@example.net'\''")" &&
	sql "SELECT q.detail FROM quarantine q JOIN messages m ON m.id = q.message WHERE m.message_id = '\''again@example.net'\''" >"$TMP/why" &&
	expect_match "decrypted before.*again, from the same address to the same entry" "$TMP/why" &&
	expect_eq 2 "$(n_records "$X")" &&
	secret_nowhere SECRET-ADD-T240
'

# draft_se NAME SUBJECT TEXT: a draft for mutt (To: the request address,
# where mutt finds the robot's key; the envelope recipient routes it)
draft_se() {
	printf 'From: Alice <alice@example.net>\nTo: request@example.org\nSubject: %s\n\n%s\n' "$2" "$3" >"$TMP/$1.draft"
}

test_expect_success 'signed and encrypted (mutt): Alice'\''s addition naming the entry counts for her key' '
	draft_se se "more, signed" "About $X: SECRET-SE-T240, the fix is incomplete." &&
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/se.draft" "$TMP/se.eml" encrypt &&
	expect_match "^Content-Type: multipart/encrypted" "$TMP/se.eml" &&
	deliver_ok "$TMP/se.eml" -r "request+$X@example.org" &&
	expect_eq "creator" "$(sql "SELECT role FROM records WHERE entry = '\''$X'\'' ORDER BY seq DESC LIMIT 1")" &&
	vulnid show "$X" --private --json | json_get "j[\"records\"][-1][\"auth\"]" >"$TMP/auth" &&
	expect_match "\"fingerprint\": \"$AFPR\"" "$TMP/auth" &&
	expect_match "\"how\": \"key\"" "$TMP/auth" &&
	expect_eq "$X|$AFPR" "$(sql "SELECT entry || '\''|'\'' || fingerprint FROM decrypted ORDER BY id DESC LIMIT 1")" &&
	secret_nowhere SECRET-SE-T240
'

test_expect_success 'signed and encrypted, sent again by Mallory as a request or to another entry: replays' '
	$PGPMAIL reheader "$TMP/se.eml" "$TMP/r9.eml" "${MALLORY[@]}" "Message-ID: <r9@example.com>" &&
	replayed "$TMP/r9.eml" -r request@example.org &&
	$PGPMAIL reheader "$TMP/se.eml" "$TMP/r10.eml" "${MALLORY[@]}" "Message-ID: <r10@example.com>" \
		"To: request+$Y@example.org" &&
	replayed "$TMP/r10.eml" -r "request+$Y@example.org" &&
	secret_nowhere SECRET-SE-T240
'

test_expect_success 'misdirected first: a signed+encrypted copy at another entry does not burn the original' '
	draft_se se2 "more again" "About $X: SECRET-SE2-T240, a third bug." &&
	bash "$MUTT_SEND" "$GA" "$AFPR" "$TMP/se2.draft" "$TMP/se2.eml" encrypt &&
	$PGPMAIL reheader "$TMP/se2.eml" "$TMP/copy.eml" "${MALLORY[@]}" "To: request+$Y@example.org" \
		"Message-ID: <copy@example.com>" &&
	REASON=misdirected replayed "$TMP/copy.eml" -r "request+$Y@example.org" &&
	expect_match "names $X and not $Y" <(sql "SELECT detail FROM quarantine ORDER BY id DESC LIMIT 1") &&
	expect_eq 1 "$(sql "SELECT b.sealed FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256 WHERE m.message_id = '\''copy@example.com'\''")" &&
	before=$(n_records "$X") &&
	deliver_ok "$TMP/se2.eml" -r "request+$X@example.org" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''$(mid_of "$TMP/se2.eml")'\''")" &&
	expect_eq $((before + 1)) "$(n_records "$X")" &&
	expect_eq "creator|key" "$(vulnid show "$X" --private --json | json_get "j[\"records\"][-1][\"role\"] + \"|\" + j[\"records\"][-1][\"auth\"][\"how\"]")" &&
	secret_nowhere SECRET-SE2-T240
'

printf 'Content-Type: text/plain; charset=utf-8\n\nFor %s: SECRET-U3-T240, unsigned.\n' "$X" >"$TMP/u3.inner"

test_expect_success 'misdirected first: an unsigned encrypted copy naming the entry, at another entry' '
	$PGPMAIL encrypt-mime "$GA" "$ROBOT" "$TMP/u3.inner" "$TMP/u3.eml" \
		"To: request+$X@example.org" "Message-ID: <u3@example.net>" &&
	$PGPMAIL reheader "$TMP/u3.eml" "$TMP/u3copy.eml" "${MALLORY[@]}" "Message-ID: <u3copy@example.com>" \
		"Subject: [$Y] see this" &&
	REASON=misdirected replayed "$TMP/u3copy.eml" -r request@example.org &&
	deliver_ok "$TMP/u3.eml" -r "request+$X@example.org" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''u3@example.net'\''")" &&
	secret_nowhere SECRET-U3-T240
'

test_expect_success 'decrypted is append-only, also for a plain sqlite3 shell' '
	! sqlite3 "$INST/vulnid.db" "UPDATE decrypted SET entry = NULL" 2>/dev/null &&
	! sqlite3 "$INST/vulnid.db" "DELETE FROM decrypted" 2>/dev/null &&
	! sqlite3 "$INST/vulnid.db" "INSERT OR REPLACE INTO decrypted SELECT * FROM decrypted LIMIT 1" 2>/dev/null &&
	expect_eq 4 "$(sql "SELECT count(*) FROM decrypted")"
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify >/dev/null
'

test_done
