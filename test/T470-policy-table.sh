#!/bin/bash
# T470-policy-table: the table of OUTGOING MAIL POLICY in vulnid-filter(8)
# is what the robot does.  The test reads the table from the man page and
# feeds one mail (or the few mails the row speaks of) per row; the outcome
# it sees (sent, held, refused, redirected, braked) must be the one in the
# table.  A row without a case here, or a case the table lost, fails.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
MAN="$VULNID_SRCDIR/doc/vulnid-filter.8"
Y=$(date -u +%Y)

# request FROM FILE-OF-TEXT [HEADERS...]: a new request; prints its first ID
request() {
	local from=$1 text=$2 mid
	shift 2
	mid="t470-$(date +%s%N)@example.net"
	write_mail "$TMP/req.eml" "From: <$from>" "Message-ID: <$mid>" "$@" <"$text" &&
	deliver_ok "$TMP/req.eml" -f "$from" -a 192.0.2.$((RANDOM % 200 + 1)) &&
	sql "SELECT e.id FROM entries e JOIN messages m ON m.id = e.message WHERE m.message_id = '$mid' ORDER BY e.rowid LIMIT 1"
}
mails_to() { sql "SELECT count(*) FROM outbox_recipients WHERE address = '$1' COLLATE NOCASE"; }
audited() { grep "\"event\":\"$1\"" "$INST/audit.log" | grep -qF -- "$2"; }
# sent_or ADDRESS EVENT OUTCOME: "sent" when mail went to ADDRESS, else
# OUTCOME when EVENT was audited for it
sent_or() {
	if [ "$(mails_to "$1")" -gt 0 ]; then echo sent
	elif audited "$2" "\"to\":\"$1\""; then echo "$3"
	else echo "nothing"; fi
}

case_reply() {
	printf "Product: P\n" >"$TMP/t" && request a@r1.net "$TMP/t" >/dev/null && sent_or a@r1.net x x
}
case_reply-to-same-domain() {
	printf "Product: P\n" >"$TMP/t" && request a@r2.net "$TMP/t" "Reply-To: b@r2.net" >/dev/null &&
	sent_or b@r2.net x x
}
case_reply-to-other-domain() {
	local ids="" i id
	for i in 1 2 3 4 5; do
		{ printf "Product: Big %s\n\n" $i; head -c 5000 /dev/zero | tr "\0" "x" | fold -w 70; } >"$TMP/t"
		id=$(request big@r3.net "$TMP/t") || return 1
		ids="$ids $id"
	done
	for id in $ids; do printf "lookup %s\n" "$id"; done >"$TMP/t"
	# lookups of unverified mail are headlines now: a smaller floor
	set_conf policy amplification_floor 1024 &&
	write_mail "$TMP/l.eml" "From: <m@r3b.net>" "Reply-To: <victim@other3.net>" <"$TMP/t" &&
	deliver_ok "$TMP/l.eml" -f m@r3b.net &&
	set_conf policy amplification_floor 4096 &&
	if [ "$(mails_to victim@other3.net)" -gt 0 ]; then echo sent
	elif [ "$(mails_to m@r3b.net)" -gt 0 ] && audited policy-redirected victim@other3.net; then echo redirected
	else echo nothing; fi
}
case_vendor-directory() {
	"$VULNID" -c "$CONF" vendor add "Dir Co" --domain dir.net --contact psirt@dir.net >/dev/null &&
	printf "Vendor: Dir Co\n" >"$TMP/t" && request a@r4.net "$TMP/t" >/dev/null && sent_or psirt@dir.net x x
}
case_vendor-domain() {
	printf "Vendor: V <vendor5.net>\n" >"$TMP/t" && request a@r5.net "$TMP/t" >/dev/null &&
	sent_or security@vendor5.net x x
}
case_contact-unsigned() {
	printf "Vendor-Contact: psirt@c6.net\n" >"$TMP/t" && C6=$(request a@r6.net "$TMP/t") &&
	echo "$C6" >"$TMP/c6" && sent_or psirt@c6.net policy-held held
}
case_contact-confirmed() {
	confirm_entry "$(cat "$TMP/c6")" "<a@r6.net>" >/dev/null && sent_or psirt@c6.net policy-held held
}
case_contact-signed() {
	local fpr
	fpr=$(new_signing_key c8 "C Eight <a@r8.net>") &&
	"$VULNID" -c "$CONF" keys import "$TMP/c8.asc" >/dev/null &&
	clearsigned_mail "$TMP/s.eml" c8 "$fpr" "Vendor-Contact: psirt@c8.net" "From: <a@r8.net>" &&
	deliver_ok "$TMP/s.eml" -f a@r8.net && sent_or psirt@c8.net policy-held held
}
# contact CASE ADDRESS: a request naming ADDRESS as Vendor-Contact
contact() {
	printf "Vendor-Contact: %s\n" "$1" >"$TMP/t" && request a@r9.net "$TMP/t" >/dev/null &&
	if [ "$(mails_to "$1")" -gt 0 ]; then echo sent
	elif audited policy-refused "$1" || audited policy-refused "${1//\"/\\\"}"; then echo refused
	elif audited policy-held "$1"; then echo held
	elif mail_body "$(sent_to a@r9.net)" | grep -qF -- "$1"; then echo refused	# by the request format
	else echo nothing; fi
}
case_contact-literal() { contact "c@[127.0.0.1]"; }
case_contact-localhost() { contact "root@localhost.localdomain"; }
case_contact-quoted() { contact '"c,d"@target.net'; }
case_contact-own-domain() { contact "x@example.org"; }
case_contact-single-label() { contact "root@mailhost"; }
case_many-vendors() {
	local i sent held
	for i in $(seq 20); do printf "Vendor: V%s <v%s.many.net>\n---\n" "$i" "$i"; done >"$TMP/t"
	request a@r10.net "$TMP/t" >/dev/null &&
	sent=$(sql "SELECT count(*) FROM outbox_recipients WHERE address LIKE 'security@v%.many.net'") &&
	held=$(grep -c "\"event\":\"policy-held\".*many.net" "$INST/audit.log") &&
	if [ "$sent" = "$(sed -n 's/^third_party_per_mail = //p' "$CONF")" ] && [ "$held" = $((20 - sent)) ]; then
		echo held
	else echo "sent $sent held $held"; fi
}
case_per-address-cap() {
	local i
	set_conf policy per_address_per_day 2 &&
	for i in 1 2 3; do
		printf "Vendor: Cap <cap.net>\nProduct: %s\n" "$i" >"$TMP/t" && request "a$i@r11.net" "$TMP/t" >/dev/null || return 1
	done &&
	set_conf policy per_address_per_day 20 &&
	if [ "$(mails_to security@cap.net)" = 2 ] && audited policy-held security@cap.net; then echo held
	else echo "sent $(mails_to security@cap.net)"; fi
}
case_loop() {
	local i
	set_conf policy loop_answers 2 &&
	for i in 1 2 3; do
		printf "Thanks for your mail.\n\n> vulnid at example.org\n" >"$TMP/t" &&
		write_mail "$TMP/loop.eml" "From: <bot@r12.net>" "Subject: Auto: your mail $i" <"$TMP/t" &&
		deliver_ok "$TMP/loop.eml" -f bot@r12.net || return 1
	done &&
	set_conf policy loop_answers 5 &&
	if [ "$(mails_to bot@r12.net)" = 2 ] && audited loop-brake bot@r12.net; then echo braked
	else echo "answers $(mails_to bot@r12.net)"; fi
}
case_unverified-budget() {
	local i
	set_conf policy unverified_answer_bytes 6000 &&
	for i in 1 2 3 4 5 6; do
		printf "help\n" | write_mail "$TMP/h.eml" "From: <forged@r14.net>" "Subject: help $i" &&
		deliver_ok "$TMP/h.eml" -f forged@r14.net || return 1
	done &&
	set_conf policy unverified_answer_bytes 49152 &&
	if [ "$(mails_to forged@r14.net)" -lt 6 ] && audited policy-held forged@r14.net &&
	   audited answers-paused forged@r14.net; then echo held
	else echo "answers $(mails_to forged@r14.net)"; fi
}
case_subscription() {
	local id tok
	printf "Product: Sub\n" >"$TMP/t" && id=$(request a@r13.net "$TMP/t") &&
	printf "subscribe %s\n" "$id" | write_mail "$TMP/s1.eml" "From: <sub@r13b.net>" &&
	deliver_ok "$TMP/s1.eml" -f sub@r13b.net &&
	tok=$(mail_body "$(sent_to sub@r13b.net)" | sed -n "s/^ *Token: \(vulnid_[a-z2-7]*\)$/\1/p" | head -n 1) &&
	printf "Token: %s\n" "$tok" | write_mail "$TMP/s2.eml" "From: <sub@r13b.net>" "To: request+$id@example.org" &&
	deliver_ok "$TMP/s2.eml" -f sub@r13b.net -r "request+$id@example.org" &&
	printf "Version: 1.1\n" | write_mail "$TMP/s3.eml" "From: <other@r13c.net>" "To: request+$id@example.org" &&
	deliver_ok "$TMP/s3.eml" -f other@r13c.net -r "request+$id@example.org" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = 'subscription'")" >/dev/null &&
	sent_or sub@r13b.net x x
}

# rows "case;T{", "text", "T};writes;outcome" (tbl text blocks) joined
sed -n '/^\.\\" policy-table/,/^\.TE/p' "$MAN" | sed -n '/^_$/,/^\.TE/p' | sed '1d;$d' |
	awk '/T\{$/ { head = substr($0, 1, length($0) - 2); text = ""; inblock = 1; next }
	     inblock && /^T\}/ { print head text substr($0, 3); inblock = 0; next }
	     inblock { text = text (text == "" ? "" : " ") $0; next }
	     { print }' >"$TMP/table"
test_expect_success 'the man page has the policy table' '
	test "$(wc -l <"$TMP/table")" -ge 15
'
while IFS=';' read -r name mail to outcome; do
	test_expect_success "$name: $mail -> $to: $outcome" '
		declare -F "case_$name" >/dev/null || fail "no case for the row \"$name\""
		got=$("case_$name") || fail "case $name failed: $got"
		expect_eq "$outcome" "$got" "$name"
	'
done <"$TMP/table"

test_expect_success 'every case of this test is a row of the table' '
	for c in $(declare -F | sed -n "s/^declare -f case_//p"); do
		grep -q "^$c;" "$TMP/table" || fail "case $c is not in the table"
	done
'

test_done
