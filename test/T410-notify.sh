#!/bin/bash
# T410-notify: vendor notifications, list announcements and bounces
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)

test_expect_success 'Vendor-Contact: the vendor is notified, with how to respond' '
	write_mail "$TMP/v1.eml" "Message-ID: <v1@example.net>" "Subject: SQLi in Widget" <<-MAIL &&
	Vendor: Widget Co
	Product: Widget
	Version: 3.1
	Vendor-Contact: psirt@widget.example
	Reference: https://example.net/w

	The search box is injectable.
	MAIL
	deliver_ok "$TMP/v1.eml" &&
	! sent_to psirt@widget.example >/dev/null &&
	mail_body "$(sent_to alice@example.net)" >"$TMP/ack" &&
	expect_match "the vendor contact psirt@widget.example is held" "$TMP/ack" &&
	confirm_entry "TEST-$Y-0001" &&
	n=$(sent_to psirt@widget.example) &&
	expect_eq "[TEST-$Y-0001] Vulnerability report: Widget Co Widget: SQLi in Widget" "$(mail_header "$n" Subject)" &&
	expect_eq "request+TEST-$Y-0001@example.org" "$(mail_header "$n" Reply-To)" &&
	expect_eq auto-generated "$(mail_header "$n" Auto-Submitted)" &&
	mail_body "$n" >"$TMP/nb" &&
	expect_match "Reporter: +alice@example.net" "$TMP/nb" &&
	expect_match "The search box is injectable." "$TMP/nb" &&
	expect_match "https://example.net/w" "$TMP/nb" &&
	expect_match "Status: confirmed" "$TMP/nb" &&
	mail_body "$(sent_to alice@example.net)" >"$TMP/ack" &&
	expect_match "Token: accepted: TEST-$Y-0001 is confirmed" "$TMP/ack" &&
	tr "\n" " " <"$TMP/ack" | grep -Eq "notified at +psirt@widget.example" &&
	expect_match "from your Vendor-Contact line" "$TMP/ack" &&
	expect_match "\"event\":\"notified\"" "$INST/audit.log"
'

test_expect_success 'Anonymous: yes keeps the researcher out of the notification' '
	write_mail "$TMP/v2.eml" "Message-ID: <v2@example.net>" "From: Alice <alice.secret@example.net>" <<-MAIL &&
	Vendor: Widget Co
	Vendor-Contact: psirt@widget.example
	Anonymous: yes

	Another bug.
	MAIL
	deliver_ok "$TMP/v2.eml" &&
	confirm_entry "TEST-$Y-0002" "Alice <alice.secret@example.net>" &&
	n=$(sent_to psirt@widget.example) &&
	! grep -qi "alice" "$n" &&
	mail_body "$n" | grep -q "an anonymous researcher"
'

test_expect_success 'the vendors directory wins over the request, names match case-insensitively' '
	"$VULNID" -c "$CONF" vendor add "Gadget Inc" --alias gadget --contact secure@gadget.example >/dev/null &&
	write_mail "$TMP/v3.eml" "Message-ID: <v3@example.net>" <<-MAIL &&
	Vendor: GADGET
	Vendor-Contact: someone@else.example
	MAIL
	deliver_ok "$TMP/v3.eml" &&
	sent_to secure@gadget.example >/dev/null &&
	! sent_to someone@else.example >/dev/null &&
	mail_body "$(sent_to alice@example.net)" | grep -q "from the vendors directory"
'

test_expect_success 'a vendor named with its domain gets security@ that domain' '
	write_mail "$TMP/v4.eml" "Message-ID: <v4@example.net>" <<<"Vendor: Thing Corp <thing.example>" &&
	deliver_ok "$TMP/v4.eml" &&
	sent_to security@thing.example >/dev/null
'

test_expect_success 'no address is ever guessed from a name: the ack says how to add one' '
	before=$(sent_count) &&
	write_mail "$TMP/v5.eml" "Message-ID: <v5@example.net>" <<<"Vendor: Nameonly Ltd" &&
	deliver_ok "$TMP/v5.eml" &&
	expect_eq $((before + 1)) "$(sent_count)" "only the ack" &&
	mail_body "$(sent_to alice@example.net)" >"$TMP/ack5" &&
	expect_match "no security contact is known for \"Nameonly Ltd\"" "$TMP/ack5" &&
	expect_match "Vendor-Contact: address" "$TMP/ack5"
'

test_expect_success 'an embargoed entry: the vendor gets only the ID and the date' '
	write_mail "$TMP/v6.eml" "Message-ID: <v6@example.net>" "Subject: secret thing" <<-MAIL &&
	Vendor: Widget Co
	Vendor-Contact: psirt@widget.example
	Embargo: 2099-01-31

	Top secret details.
	MAIL
	deliver_ok "$TMP/v6.eml" &&
	confirm_entry "$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1")" &&
	n=$(sent_to psirt@widget.example) &&
	expect_match "2099-01-31" "$n" &&
	! grep -q "Top secret details" "$n" &&
	! grep -q "secret thing" "$n"
'

make_instance lists
set_conf announce to "vuln-list@lists.example, archive@lists.example"

test_expect_success 'a public entry is announced once to every list, stable Message-ID' '
	write_mail "$TMP/a1.eml" "Message-ID: <a1@example.net>" "Subject: RCE in Router" <<-MAIL &&
	Vendor: NetGear-ish <router.example>
	Product: R7000
	Version: 1.0.2

	Remote code execution.
	MAIL
	deliver_ok "$TMP/a1.eml" &&
	a=$(sent_to vuln-list@lists.example) &&
	expect_eq "[TEST-$Y-0001] NetGear-ish R7000: RCE in Router" "$(mail_header "$a" Subject)" &&
	expect_eq "<vulnid.announce.TEST-$Y-0001@example.org>" "$(mail_header "$a" Message-ID)" &&
	expect_eq auto-generated "$(mail_header "$a" Auto-Submitted)" &&
	mail_header "$a" To | grep -q "archive@lists.example" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''announce'\''")" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM outbox_recipients r JOIN outbox o ON o.id = r.outbox WHERE o.kind = '\''announce'\'' AND r.status = '\''delivered'\''")" &&
	mail_body "$a" | grep -q "Remote code execution." &&
	! grep -q "alice@example.net" "$a"
'

test_expect_success 'reserved and embargoed entries are not announced' '
	write_mail "$TMP/a2.eml" "Message-ID: <a2@example.net>" </dev/null &&
	deliver_ok "$TMP/a2.eml" &&
	printf "Embargo: 2099-01-01\n\nsecret\n" | write_mail "$TMP/a3.eml" "Message-ID: <a3@example.net>" &&
	deliver_ok "$TMP/a3.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''announce'\''")"
'

test_expect_success 'an anonymous request is announced without the address' '
	printf "Anonymous: yes\nProduct: Anon\n\nquiet\n" | write_mail "$TMP/a4.eml" "Message-ID: <a4@example.net>" "From: hidden@example.net" &&
	deliver_ok "$TMP/a4.eml" &&
	for f in $(sent_files); do
		mail_header "$f" To | grep -q lists.example || continue
		! grep -q "hidden@example.net" "$f" || fail "address in $f"
	done
'

test_expect_success 'digest mode: one mail a day, sent by vulnid tick' '
	make_instance digest &&
	set_conf announce to "vuln-list@lists.example" &&
	set_conf announce digest daily &&
	for i in 1 2 3; do
		printf "Product: D%s\n\ntext\n" $i | write_mail "$TMP/d$i.eml" "Message-ID: <d$i@example.net>" "Subject: digest $i" &&
		VULNID_TEST_NOW=2031-05-01T10:0$i:00Z "$FILTER" -c "$CONF" <"$TMP/d$i.eml" || return 1
	done &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE kind LIKE '\''announce%'\''")" &&
	VULNID_TEST_NOW=2031-05-01T23:00:00Z "$VULNID" -c "$CONF" tick >/dev/null &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''announce-digest'\''")" "not before the day is over" &&
	VULNID_TEST_NOW=2031-05-02T00:05:00Z "$VULNID" -c "$CONF" tick >/dev/null &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''announce-digest'\''")" &&
	d=$(sent_to vuln-list@lists.example) &&
	expect_eq "vulnid digest 2031-05-02: 3 new entries" "$(mail_header "$d" Subject)" &&
	mail_body "$d" >"$TMP/db" &&
	expect_match "TEST-2031-0001" "$TMP/db" && expect_match "TEST-2031-0003" "$TMP/db" &&
	VULNID_TEST_NOW=2031-05-02T08:00:00Z "$VULNID" -c "$CONF" tick >/dev/null &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''announce-digest'\''")" "once"
'

# --- bounces ---------------------------------------------------------------
INST="$TMP/inst"; CONF="$INST/vulnid.conf"

# dsn FILE VERP RECIPIENT ORIGINAL-MESSAGE-ID
dsn() {
	cat >"$1" <<-MAIL
	From: Mail Delivery System <MAILER-DAEMON@mx.widget.example>
	To: $2
	Subject: Undelivered Mail Returned to Sender
	Message-ID: <dsn.$RANDOM.$RANDOM@mx.widget.example>
	Auto-Submitted: auto-replied
	MIME-Version: 1.0
	Content-Type: multipart/report; report-type=delivery-status; boundary="BB"

	--BB
	Content-Type: text/plain

	Your message could not be delivered.
	--BB
	Content-Type: message/delivery-status

	Reporting-MTA: dns; mx.widget.example

	Final-Recipient: rfc822; $3
	Action: failed
	Status: 5.1.1
	Diagnostic-Code: smtp; 550 5.1.1 <$3>: Recipient address rejected:
	  User unknown

	--BB
	Content-Type: text/rfc822-headers

	Message-ID: <$4>
	Subject: whatever

	--BB--
	MAIL
}

test_expect_success 'a DSN for a vendor notification is recorded, the researcher told, nothing answered' '
	id=$(sql "SELECT id FROM outbox WHERE kind = '\''vendor-notify'\'' ORDER BY id LIMIT 1") &&
	verp=$(sql "SELECT envelope_from FROM outbox WHERE id = $id") &&
	mid=$(sql "SELECT message_id FROM outbox WHERE id = $id") &&
	dsn "$TMP/dsn1.eml" "$verp" psirt@widget.example "$mid" &&
	before=$(sent_count) &&
	deliver_ok "$TMP/dsn1.eml" -f "" -r "$verp" &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	expect_eq "5.1.1" "$(sql "SELECT status FROM bounces WHERE outbox = $id")" &&
	sql "SELECT diagnostic FROM bounces WHERE outbox = $id" | grep -q "User unknown" &&
	expect_match "\"event\":\"bounced\"" "$INST/audit.log" &&
	expect_eq $((before + 1)) "$(sent_count)" "only the notice to the researcher" &&
	n=$(sent_files | tail -n 1) &&
	expect_eq "alice@example.net" "$(mail_header "$n" To)" &&
	expect_eq "[TEST-$Y-0001] The vendor could not be notified" "$(mail_header "$n" Subject)" &&
	mail_body "$n" | grep -q "5.1.1" &&
	expect_eq bounce "$(sql "SELECT disposition FROM messages ORDER BY id DESC LIMIT 1")"
'

test_expect_success 'the same DSN again changes nothing' '
	before=$(sent_count) &&
	verp=$(sql "SELECT envelope_from FROM outbox WHERE kind = '\''vendor-notify'\'' ORDER BY id LIMIT 1") &&
	deliver_ok "$TMP/dsn1.eml" -f "" -r "$verp" &&
	expect_eq "$before" "$(sent_count)" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM bounces")"
'

test_expect_success 'a bounce to an unknown VERP address is quarantined, not answered' '
	before=$(sent_count) &&
	dsn "$TMP/dsn2.eml" request-bounces+ffffffffffffffffffffffff@example.org x@y.example nothing@example.org &&
	deliver_ok "$TMP/dsn2.eml" -f "" -r request-bounces+ffffffffffffffffffffffff@example.org &&
	expect_eq unmatched-bounce "$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")" &&
	expect_eq "$before" "$(sent_count)"
'

test_expect_success 'a non-RFC-3464 bounce to a VERP address still marks the mail failed' '
	id=$(sql "SELECT id FROM outbox WHERE kind = '\''ack'\'' ORDER BY id LIMIT 1") &&
	verp=$(sql "SELECT envelope_from FROM outbox WHERE id = $id") &&
	printf "From: postmaster@old.example\nTo: %s\nSubject: failure notice\nMessage-ID: <qmail@old.example>\n\nSorry, no mailbox here by that name.\n" "$verp" >"$TMP/qmail.eml" &&
	deliver_ok "$TMP/qmail.eml" -f "" -r "$verp" &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	sql "SELECT last_error FROM outbox WHERE id = $id" | grep -q "failure notice"
'

test_expect_success 'the audit chain verifies' '
	"$VULNID" -c "$CONF" audit verify
'

test_done
