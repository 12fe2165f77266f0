#!/bin/bash
# T820-anonymous-keys: an anonymous researcher's key stays private whatever
# way it travels.  A signed request must bring the key the first time, and
# Thunderbird attaches it to every signed mail as OpenPGP_0xKEYID.asc, the
# bytes of "gpg --armor --export" (anyone who guesses the researcher can
# compute their SHA-256): the record only commits to it, salted, and every
# public surface says "a key (withheld)"; the feed still verifies, also
# after an embargo's release.  Her key pasted into her text, her key ID and
# fingerprint in it, and file names carrying her name are replaced too; the
# vendor's own key is not withheld.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
export_instance inst
set_conf crypto sign none
V() { "$VULNID" -c "$CONF" "$@"; }
newest_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }

ADDR=ursula.private@researcher.example
NAME="Ursula Quintessa"
FPR=$(new_signing_key ursula "$NAME <$ADDR>")
KEYID=${FPR: -16}
KEYSHA=$(sha256sum <"$TMP/ursula.asc" | cut -d" " -f1)
KEYFILE="$TMP/OpenPGP_0x$KEYID.asc"
cp "$TMP/ursula.asc" "$KEYFILE"
printf 'exploit by ursula.private\n' >"$TMP/exploit-ursula.private.c"
SECRETS="$ADDR $NAME $FPR $KEYID $KEYSHA OpenPGP_0x ursula.private BEGIN.PGP.PUBLIC"
V vendor add "Widget Co" --domain widget.example --contact psirt@widget.example >/dev/null

# signed MAIL TEXTFILE ATTACHMENTS... -- HEADERS...: PGP/MIME, as Thunderbird
signed() {
	local out=$1 text=$2
	shift 2
	$PGPMAIL with-keys "$TMP/gnupg-ursula" "$FPR" "$text" "$out" "$@"
}

# Every text of a mail, decoded: headers (RFC 2047), and each part.
dump_mail() {
	$PYTHON - "$1" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
for k, v in m.items():
    print("%s: %s" % (k, v))
for p in m.walk():
    if not p.is_multipart():
        print((p.get_payload(decode=True) or b"").decode("utf-8", "replace"))
PY
}

# absent FILE: none of her secrets in FILE (the words of her name one by one)
absent() {
	local s
	for s in $SECRETS; do
		! grep -qiE -- "$s" "$1" || fail "$1 shows '$s'"
	done
}

public_surfaces() {
	local id=$1 out=$2
	{
		V show "$id" && V show "$id" --json &&
		V export feed "$TMP/feed" >/dev/null && cat "$TMP/feed"/*.jsonl &&
		V export osv "$TMP/osv" >/dev/null && find "$TMP/osv" -type f -exec cat {} + &&
		V export mbox "$TMP/m.mbox" >/dev/null && cat "$TMP/m.mbox" &&
		V export html "$TMP/html" >/dev/null && find "$TMP/html" -type f -exec cat {} +
	} >"$out" 2>&1
}

test_expect_success 'setup: an anonymous embargoed request, signed, its key attached as Thunderbird does' '
	printf "Vendor: Widget Co\nProduct: Widget\nAnonymous: yes\nEmbargo: 2099-01-01\n\nHeap overflow.\n" >"$TMP/r.txt" &&
	signed "$TMP/r.eml" "$TMP/r.txt" "application/pgp-keys=$KEYFILE" \
		"text/x-csrc=$TMP/exploit-ursula.private.c" -- \
		"From: $NAME <$ADDR>" "To: request@example.org" "Subject: overflow" \
		"Message-ID: <u1@researcher.example>" "Date: $(date -R)" &&
	deliver_ok "$TMP/r.eml" -f "$ADDR" -r request@example.org &&
	E=$(newest_id) && echo "$E" >"$TMP/E" &&
	expect_eq embargoed "$(V show "$E" --json | json_get "j[\"state\"]")" &&
	expect_eq "$FPR" "$(sql "SELECT fingerprint FROM record_signers")" &&
	expect_eq "OpenPGP_0x$KEYID.asc|application/pgp-keys|$KEYSHA" \
		"$(sql "SELECT filename || '\''|'\'' || content_type || '\''|'\'' || sha256 FROM withheld_attachments")"
'
E=$(cat "$TMP/E" 2>/dev/null)

test_expect_success 'while sealed: nothing of her key in public, and the feed is a stub' '
	public_surfaces "$E" "$TMP/pub1" && absent "$TMP/pub1"
'

test_expect_success 'her signed addition brings the key again, and her key pasted in the text' '
	{ printf "%s: the same overflow in the parser, 0x%s.\n\n" "$E" "$KEYID"; cat "$TMP/ursula.asc"; } >"$TMP/a.txt" &&
	signed "$TMP/a.eml" "$TMP/a.txt" "application/octet-stream=$KEYFILE" -- \
		"From: $NAME <$ADDR>" "To: request+$E@example.org" "Subject: Re: [$E] more" \
		"Message-ID: <u2@researcher.example>" "Date: $(date -R)" &&
	deliver_ok "$TMP/a.eml" -f "$ADDR" -r "request+$E@example.org" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM withheld_attachments")"
'

test_expect_success 'released by the researcher: the content is public, her key is not' '
	clearsigned_mail "$TMP/rel.eml" ursula "$FPR" "release $E" "From: $ADDR" "Subject: release" &&
	deliver_ok "$TMP/rel.eml" -f "$ADDR" -r "request+$E@example.org" &&
	expect_eq public "$(V show "$E" --json | json_get "j[\"state\"]")" &&
	public_surfaces "$E" "$TMP/pub2" && absent "$TMP/pub2" &&
	expect_match "Heap overflow" "$TMP/pub2" &&
	expect_match "the same overflow in the parser, 0x\[the researcher\]" "$TMP/pub2" &&
	expect_match "\[a key \(withheld\)\]" "$TMP/pub2" &&
	expect_match "attachment: a key \(withheld\)" "$TMP/pub2" &&
	expect_match "exploit-\[the researcher\]\.c" "$TMP/pub2" &&
	V show "$E" --json | json_get "[a for r in j[\"records\"] for a in r[\"attachments\"] if a.get(\"withheld\")][0][\"commitment\"]" >"$TMP/c" &&
	grep -q "$(cat "$TMP/c")" "$TMP/feed"/*.jsonl &&
	robot_key "$TMP/robot.asc" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/robot.asc" >"$TMP/vf" &&
	expect_match "1 released and matching" "$TMP/vf"
'

test_expect_success 'the commitment binds the key: SHA-256 of the salt and the attachment as it was' '
	salt=$(sql "SELECT salt FROM withheld_attachments ORDER BY record LIMIT 1") &&
	size=$(stat -c %s "$KEYFILE") &&
	want=$(printf "vulnid-attachment-commitment:%s:{\"sha256\":\"%s\",\"size\":%s,\"content_type\":\"application/pgp-keys\",\"filename\":\"OpenPGP_0x%s.asc\"}" \
		"$salt" "$KEYSHA" "$size" "$KEYID" | sha256sum | cut -d" " -f1) &&
	grep -q "\"sha256\":\"$want\",\"size\":0,\"content_type\":\"application/pgp-keys\",\"filename\":\"withheld\"" "$TMP/feed"/*.jsonl
'

test_expect_success 'the operator and the researcher see it' '
	V show "$E" --private >"$TMP/priv" &&
	expect_match "OpenPGP_0x$KEYID.asc \(withheld from the public\)" "$TMP/priv" &&
	expect_match "$KEYSHA" "$TMP/priv"
'

test_expect_success 'the vendor was told without her key or name, and its own key stays public' '
	n=0 &&
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi psirt@widget.example || continue
		n=$((n + 1)) && dump_mail "$f" >"$TMP/vendor.mail" && absent "$TMP/vendor.mail" || return 1
		cat "$TMP/vendor.mail" >>"$TMP/vendor.all"
	done &&
	test "$n" -ge 2 &&
	expect_no_match "exploit-\[the researcher\]\.c, text/x-csrc, [0-9]+ bytes, attached" "$TMP/vendor.all" &&
	vfpr=$(new_signing_key vendor "Widget PSIRT <psirt@widget.example>") &&
	V vendor key "Widget Co" "$TMP/vendor.asc" >/dev/null &&
	printf "Status: confirmed\n\n%s confirmed, our key is attached.\n" "$E" >"$TMP/v.txt" &&
	$PGPMAIL with-keys "$TMP/gnupg-vendor" "$vfpr" "$TMP/v.txt" "$TMP/v.eml" "application/pgp-keys=$TMP/vendor.asc" -- \
		"From: psirt@widget.example" "To: request+$E@example.org" "Subject: Re: [$E]" \
		"Message-ID: <v1@widget.example>" "Date: $(date -R)" &&
	deliver_ok "$TMP/v.eml" -f psirt@widget.example -r "request+$E@example.org" &&
	V show "$E" >"$TMP/pub3" &&
	expect_match "vendor-response by vendor, signed by $vfpr" "$TMP/pub3" &&
	expect_match "attachment: application/pgp-keys [0-9]+ bytes sha256:$(sha256sum <"$TMP/vendor.asc" | cut -d" " -f1) vendor.asc" "$TMP/pub3"
'

test_done
