#!/bin/bash
# T241-signed-rebound: a signature grants a role for an entry only when
# the signed text names that entry.  Alice's signed addition to her entry
# X, captured and sent by Mallory to Alice's other entry Y (by plus
# address, In-Reply-To or Subject tag) is recorded there with the
# signature, but as Alice's address would be (unverified), says why the
# signature grants nothing, notifies no vendor contact, and is not
# remembered: the real mail to X still counts afterwards.  The same for a
# vendor's signed response.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
MUTT_SEND="$VULNID_SRCDIR/test/mutt-send.sh"
Y=$(date -u +%Y)

new_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	G "$h" --armor --export "$fpr" >"$TMP/$1.asc" 2>/dev/null
	echo "$fpr"
}

vulnid() { "$VULNID" -c "$CONF" "$@"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
mid_of() { mail_header "$1" Message-ID | tr -d "<>"; }
n_records() { sql "SELECT count(*) FROM records WHERE entry = '$1'"; }
# last_rec ID EXPR: EXPR on the newest record r of entry ID (private view)
last_rec() { vulnid show "$1" --private --json | json_get "(lambda r: $2)(j[\"records\"][-1])"; }
# the newest record of entry ID: "role|how", "kind|role|how", auth.ignored
role_how() { last_rec "$1" 'r["role"] + "|" + r["auth"]["how"]'; }
kind_role_how() { last_rec "$1" 'r["kind"] + "|" + r["role"] + "|" + r["auth"]["how"]'; }
ignored_of() { last_rec "$1" 'r["auth"].get("ignored", "")'; }
# sent_to_since ADDRESS: how many mails went to ADDRESS since snap
sent_to_since() {
	local f n=0
	for f in $(new_mails); do
		mail_header "$f" To | grep -qi -- "$1" && n=$((n + 1))
	done
	echo "$n"
}

make_instance inst
vulnid key export >"$TMP/robot.asc"
AFPR=$(new_key alice 'Alice <alice@example.net>')
VFPR=$(new_key vera 'Vera <vera@widget.example>')
MALLORY=("From: Alice <alice@example.net>" "Reply-To: mallory@example.com")

test_expect_success 'setup: Alice'\''s key and the vendor (key, domain) are known; Alice signs X and Y' '
	vulnid keys import "$TMP/alice.asc" >/dev/null &&
	vulnid vendor add "Widget Co" --contact psirt@widget.example >/dev/null &&
	vulnid vendor domain "Widget Co" widget.example >/dev/null &&
	vulnid vendor key "Widget Co" "$TMP/vera.asc" >/dev/null &&
	clearsigned_mail "$TMP/x.eml" alice "$AFPR" "$(printf "Vendor: Acme <acme.example>\nProduct: Widget\n\nFirst bug.")" \
		"Message-ID: <x@example.net>" "Subject: X title" &&
	snap && deliver_ok "$TMP/x.eml" -r request@example.org && last_id >"$TMP/X" &&
	new_mail_to alice@example.net >"$TMP/x-ack.path" &&
	clearsigned_mail "$TMP/y.eml" alice "$AFPR" "$(printf "Vendor: Acme <acme.example>\nProduct: Gadget\n\nSecond bug.")" \
		"Message-ID: <y@example.net>" "Subject: Y title" &&
	snap && deliver_ok "$TMP/y.eml" -r request@example.org && last_id >"$TMP/Y" &&
	new_mail_to alice@example.net >"$TMP/y-ack.path" &&
	new_mail_to security@acme.example >/dev/null &&
	for n in 3 4; do
		clearsigned_mail "$TMP/w$n.eml" alice "$AFPR" "$(printf "Vendor: Widget Co\nProduct: Widget $n\n\nBug $n.")" \
			"Message-ID: <w$n@example.net>" "Subject: W$n" &&
		deliver_ok "$TMP/w$n.eml" -r request@example.org && last_id >"$TMP/W$n" || exit 1
	done &&
	expect_eq "key" "$(vulnid show "$(cat "$TMP/Y")" --private --json | json_get "j[\"records\"][0][\"auth\"].get(\"how\", \"key\")")"
'
X=$(cat "$TMP/X" 2>/dev/null) E2=$(cat "$TMP/Y" 2>/dev/null)
W3=$(cat "$TMP/W3" 2>/dev/null) W4=$(cat "$TMP/W4" 2>/dev/null)

# Alice's real addition to X: it names X, changes the title, names a new
# contact at the vendor
clearsigned_mail "$TMP/add.eml" alice "$AFPR" "$(printf "Title: Better X title\nVendor-Contact: ciso@acme.example\n\nMore about %s: the parser is affected too." "$X")" \
	"Message-ID: <add@example.net>" "To: request+$X@example.org" "Subject: more"

# check_rebound FILE RCPT: FILE, Alice's addition to X, arrived for E2
check_rebound() {
	local before
	before=$(n_records "$E2")
	snap
	deliver_ok "$1" -r "$2"
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '$(mid_of "$1")'")" "disposition"
	expect_eq $((before + 1)) "$(n_records "$E2")" "records of $E2"
	expect_eq "creator|address" "$(last_rec "$E2" 'r["role"] + "|" + r["auth"]["how"]')" "role"
	expect_eq "pgp|$AFPR" "$(last_rec "$E2" 'r["auth"]["method"] + "|" + r["auth"]["fingerprint"]')" "the signature is kept"
	expect_eq "the signed text does not name $E2, so the signature grants no role for it" \
		"$(last_rec "$E2" 'r["auth"]["ignored"]')" "why it grants nothing"
	expect_eq 0 "$(sql "SELECT count(*) FROM signatures WHERE message = (SELECT id FROM messages WHERE message_id = '$(mid_of "$1")')")" "remembered"
	expect_eq 0 "$(sent_to_since ciso@acme.example)" "vendor contact notified"
	expect_match "\"event\":\"recorded\",\"id\":\"$E2\",\"message_id\":\"$(mid_of "$1")\",.*\"role\":\"creator\",\"how\":\"address\"" "$INST/audit.log"
	mail_body "$(new_mail_to mallory@example.com)" >"$TMP/reply.txt"
	expect_match "the signed text does not$" "$TMP/reply.txt"
	expect_match "^name $E2, the entry it was sent to" "$TMP/reply.txt"
	expect_match "an addition by the creator" "$TMP/reply.txt"
	expect_match "unverified" "$TMP/reply.txt"
}

test_expect_success 'attack: Alice'\''s signed addition to X, sent to request+Y, grants nothing on Y' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/c1.eml" "${MALLORY[@]}" "To: request+$E2@example.org" \
		"Message-ID: <c1@example.com>" &&
	check_rebound "$TMP/c1.eml" "request+$E2@example.org"
'

test_expect_success 'attack: the same by In-Reply-To to the robot'\''s mail about Y' '
	ackid=$(mid_of "$(cat "$TMP/y-ack.path")") &&
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/c2.eml" "${MALLORY[@]}" "To: request@example.org" \
		"Message-ID: <c2@example.com>" "In-Reply-To: <$ackid>" &&
	check_rebound "$TMP/c2.eml" request@example.org
'

test_expect_success 'attack: the same by a Subject tag' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/c3.eml" "${MALLORY[@]}" "To: request@example.org" \
		"Message-ID: <c3@example.com>" "Subject: [$E2] more" &&
	check_rebound "$TMP/c3.eml" request@example.org
'

test_expect_success 'the real mail to X afterwards is no replay: it counts for Alice'\''s key' '
	before=$(n_records "$X") && snap &&
	deliver_ok "$TMP/add.eml" -r "request+$X@example.org" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''add@example.net'\''")" &&
	expect_eq $((before + 1)) "$(n_records "$X")" &&
	expect_eq "creator|key" "$(role_how "$X")" && expect_eq "" "$(ignored_of "$X")" &&
	expect_eq "$AFPR" "$(sql "SELECT fingerprint FROM signatures WHERE message = (SELECT id FROM messages WHERE message_id = '\''add@example.net'\'')")" &&
	expect_eq "Better X title" "$(vulnid show "$X" --json | json_get "j[\"title\"]")" &&
	expect_eq 1 "$(sent_to_since ciso@acme.example)" &&
	mail_body "$(new_mail_to alice@example.net)" >"$TMP/reply.txt" &&
	expect_match "an addition by the creator" "$TMP/reply.txt" &&
	expect_no_match "grants no role" "$TMP/reply.txt"
'

test_expect_success 'a copy sent to Y after the real mail acted is a replay, as before' '
	$PGPMAIL reheader "$TMP/add.eml" "$TMP/c4.eml" "${MALLORY[@]}" "To: request+$E2@example.org" \
		"Message-ID: <c4@example.com>" &&
	before=$(n_records "$E2") && snap &&
	deliver_ok "$TMP/c4.eml" -r "request+$E2@example.org" &&
	expect_eq "$before" "$(n_records "$E2")" &&
	expect_eq replay "$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")" &&
	expect_eq "" "$(new_mails)"
'

test_expect_success 'a signed command in a mail to an entry its text does not name is refused' '
	clearsigned_mail "$TMP/cmd.eml" alice "$AFPR" "$(printf "withdraw %s reported twice" "$X")" \
		"Message-ID: <cmd@example.net>" "To: request+$E2@example.org" "Subject: withdraw" &&
	snap && deliver_ok "$TMP/cmd.eml" -r "request+$E2@example.org" &&
	mail_body "$(new_mail_to alice@example.net)" >"$TMP/reply.txt" &&
	expect_match "refused: the signed text does not name the entry this mail was sent to" "$TMP/reply.txt" &&
	test "$(vulnid show "$X" --json | json_get "j[\"state\"]")" != withdrawn
'

test_expect_success 'a signed addition that does not name its entry is unverified (by address) and not remembered' '
	clearsigned_mail "$TMP/plain.eml" alice "$AFPR" "$(printf "Version: 2.0\n\nAlso 2.0.")" \
		"Message-ID: <plain@example.net>" "To: request+$X@example.org" "Subject: more" &&
	snap && deliver_ok "$TMP/plain.eml" -r "request+$X@example.org" &&
	expect_eq "creator|address" "$(role_how "$X")" &&
	expect_match "does not name $X" <(ignored_of "$X") &&
	expect_eq 0 "$(sql "SELECT count(*) FROM signatures WHERE message = (SELECT id FROM messages WHERE message_id = '\''plain@example.net'\'')")" &&
	mail_body "$(new_mail_to alice@example.net)" >"$TMP/reply.txt" &&
	expect_match "write the$" "$TMP/reply.txt"
'

test_expect_success 'the vendor'\''s signed response to W3, sent to W4, is no verified vendor response on W4' '
	printf "Status: disputed\n\nNot a bug in %s.\n" "$W3" |
		G "$TMP/gnupg-vera" --local-user "$VFPR" --clearsign >"$TMP/v.cs" 2>/dev/null &&
	write_mail "$TMP/v.eml" "From: Vera <vera@widget.example>" "To: request+$W3@example.org" \
		"Message-ID: <v@widget.example>" "Subject: response" <"$TMP/v.cs" &&
	$PGPMAIL reheader "$TMP/v.eml" "$TMP/vc.eml" "To: request+$W4@example.org" "Message-ID: <vc@example.com>" &&
	deliver_ok "$TMP/vc.eml" -r "request+$W4@example.org" &&
	expect_eq "vendor-response|vendor|domain" "$(kind_role_how "$W4")" &&
	expect_match "does not name $W4" <(ignored_of "$W4") &&
	deliver_ok "$TMP/v.eml" -r "request+$W3@example.org" &&
	expect_eq "vendor-response|vendor|key" "$(kind_role_how "$W3")"
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify >/dev/null
'

test_done
