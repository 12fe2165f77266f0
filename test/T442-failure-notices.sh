#!/bin/bash
# T442-failure-notices: every failure of mail the researcher was told about
# (a 5xx in the SMTP session, given up after the lifetime, a relay of their
# message) brings them exactly one notice, naming the address they gave;
# the operator sees it in queue list and the audit log.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
SRV_PORT=$(free_port)
set_conf delivery transport "smtp://127.0.0.1:$SRV_PORT"
set_conf delivery starttls no
set_conf delivery timeout 5
set_conf delivery lifetime 3600

hours_from_now() { date -u -d "+$1 hours" +%Y-%m-%dT%H:%M:%SZ; }
# request MID VENDOR-CONTACT [Anonymous]: a request naming a vendor whose
# contact is in the vendors directory (an unverified Vendor-Contact line
# alone is held until the creator confirms it: T410)
request() {
	"$VULNID" -c "$CONF" vendor add "Widget $1" --contact "$2" >/dev/null &&
	write_mail "$TMP/$1.eml" "Message-ID: <$1@example.net>" "Subject: Bug $1" <<-MAIL
	Vendor: Widget $1
	Product: Widget
	Vendor-Contact: $2
	${3:+Anonymous: yes}

	Details of $1.
	MAIL
}
entry_of() { sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'"; }
notices() { sql "SELECT count(*) FROM outbox WHERE kind = 'notify-failed' AND entry = '$1'"; }
item_of() { sql "SELECT id FROM outbox WHERE kind = '$2' AND entry = '$1' ORDER BY id DESC LIMIT 1"; }

start_server srv --reply 'nobody@widget.example=550 5.1.1 <nobody@widget.example>: Recipient address rejected' \
	--reply 'later@widget.example=450 4.2.0 <later@widget.example>: mailbox busy' \
	--reply 'gone@widget.example=554 5.7.1 <gone@widget.example>: relay access denied'

test_expect_success '550 at RCPT: failed at once, and the researcher told by the same filter run' '
	request hard nobody@widget.example &&
	deliver_ok "$TMP/hard.eml" &&
	id=$(entry_of hard@example.net) && n=$(item_of "$id" vendor-notify) &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $n")" &&
	expect_eq 1 "$(notices "$id")" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE kind = '\''notify-failed'\'' AND entry = '\''$id'\''")" &&
	f=$(srv_mails_to alice@example.net | xargs grep -l "could not be notified") &&
	expect_eq "[$id] The vendor could not be notified" "$(mail_header "$f" Subject)" &&
	mail_body "$f" >"$TMP/n1" &&
	expect_match "^  nobody@widget.example: 550 5.1.1 <nobody@widget.example>: Recipient address rejected$" "$TMP/n1" &&
	expect_match "\"event\":\"failed\".*\"reason\":\"550 5.1.1.*\"outbox\":$n," "$INST/audit.log" &&
	expect_match "\"event\":\"failure-notice\",\"id\":\"$id\".*\"outbox\":$n,\"kind\":\"vendor-notify\",\"failed\":\"nobody@widget.example\"" "$INST/audit.log" &&
	"$VULNID" -c "$CONF" queue list >"$TMP/list" &&
	expect_match "^$n  .*  failed  +vendor-notify .*nobody@widget.example.*550 5.1.1" "$TMP/list"
'

test_expect_success 'later runs and a late bounce for it tell nobody again' '
	id=$(entry_of hard@example.net) && n=$(item_of "$id" vendor-notify) &&
	"$VULNID" -c "$CONF" queue run --force >/dev/null &&
	"$VULNID" -c "$CONF" queue retry "$n" && "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 2 "$(notices "$id")" "a retry that fails again is a new failure" &&
	verp=$(sql "SELECT envelope_from FROM outbox WHERE id = $n") &&
	printf "From: MAILER-DAEMON@relay.example\nTo: %s\nSubject: Undelivered Mail\nMessage-ID: <late-dsn@relay.example>\nMIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary=B\n\n--B\nContent-Type: text/plain\n\nfailed\n\n--B\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; relay.example\n\nFinal-Recipient: rfc822; nobody@widget.example\nAction: failed\nStatus: 5.1.1\n\n--B--\n" "$verp" >"$TMP/late.eml" &&
	deliver_ok "$TMP/late.eml" -f "" -r "$verp" &&
	expect_eq 2 "$(notices "$id")" &&
	expect_eq 2 "$(grep -c "\"event\":\"failure-notice\",\"id\":\"$id\"" "$INST/audit.log")"
'

test_expect_success '450 until the lifetime ends: given up once, the researcher told once' '
	request soft later@widget.example &&
	deliver_ok "$TMP/soft.eml" &&
	id=$(entry_of soft@example.net) && n=$(item_of "$id" vendor-notify) &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = $n")" &&
	expect_eq 0 "$(notices "$id")" &&
	rc=0; VULNID_TEST_NOW=$(hours_from_now 2) "$VULNID" -c "$CONF" queue run >"$TMP/out" 2>"$TMP/err" || rc=$?
	expect_eq 0 "$rc" &&
	expect_eq "delivered 1, deferred 0, failed 1" "$(cat "$TMP/out")" &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $n")" &&
	expect_eq 1 "$(notices "$id")" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE kind = '\''notify-failed'\'' AND entry = '\''$id'\''")" &&
	f=$(srv_mails_to alice@example.net | xargs grep -l "\[$id\] The vendor could not be notified") &&
	mail_body "$f" | grep -q "^  later@widget.example: gave up after 3600 s: 450 4.2.0 <later@widget.example>: mailbox busy$" &&
	expect_match "\"event\":\"failed\",\"id\":\"$id\".*\"reason\":\"gave up after 3600 s: 450 4.2.0" "$INST/audit.log" &&
	VULNID_TEST_NOW=$(hours_from_now 3) "$VULNID" -c "$CONF" queue run --force >/dev/null &&
	expect_eq 1 "$(notices "$id")"
'

test_expect_success 'setup: an anonymous request, its vendor notified' '
	request anon psirt@widget.example yes &&
	deliver_ok "$TMP/anon.eml" &&
	id=$(entry_of anon@example.net) &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE id = $(item_of "$id" vendor-notify)")" &&
	ack=$(srv_mails_to alice@example.net | xargs grep -l "^Subject: \[$id\] Bug anon") &&
	mail_body "$ack" | grep -Eo "Token: vulnid_[a-z2-7]{32}" | head -n 1 | cut -d" " -f2 >"$TMP/tok" &&
	test -s "$TMP/tok"
'

# the vendor's relay refuses it now
stop_server
start_server srv2 --reply "psirt@widget.example=554 5.7.1 <psirt@widget.example>: no" \
	--reply "gone@widget.example=554 5.7.1 <gone@widget.example>: relay access denied"

test_expect_success 'a relay of the anonymous researcher'\''s message refused: told with what failed' '
	id=$(entry_of anon@example.net) &&
	printf "Token: %s\n\nA second look: also in 2.4.\n" "$(cat "$TMP/tok")" |
		write_mail "$TMP/more.eml" "Message-ID: <anon-more@example.net>" "Subject: Re: [$id] Bug anon" &&
	deliver_ok "$TMP/more.eml" -r "request+$id@example.org" &&
	n=$(item_of "$id" relay-to-vendor) && test -n "$n" &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $n")" &&
	expect_eq 1 "$(notices "$id")" &&
	f=$(srv_mails_to alice@example.net | xargs grep -l "could not be relayed") &&
	expect_eq "[$id] Your message could not be relayed to the vendor" "$(mail_header "$f" Subject)" &&
	mail_body "$f" | grep -q "^  psirt@widget.example: 554 5.7.1"
'

test_expect_success 'mail to others than the researcher'\''s vendor tells nobody (the operator sees it)' '
	before=$(sql "SELECT count(*) FROM outbox WHERE kind = '\''notify-failed'\''") &&
	write_mail "$TMP/gone.eml" "Message-ID: <gone1@example.net>" "From: gone@widget.example" <<<"Product: Gone" &&
	deliver_ok "$TMP/gone.eml" -f gone@widget.example &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE kind = '\''ack'\'' ORDER BY id DESC LIMIT 1")" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''notify-failed'\''")" &&
	"$VULNID" -c "$CONF" queue list | grep -Eq "failed +ack .*gone@widget.example.*554 5.7.1" &&
	"$VULNID" -c "$CONF" audit verify
'

test_done
