#!/bin/bash
# T110-request-format: several IDs, reserved IDs, help, and rejected requests
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)

test_expect_success 'several blocks separated by --- get consecutive IDs' '
	write_mail "$TMP/multi.eml" "Subject: three bugs" <<-MAIL &&
	Vendor: Foo
	Title: first bug

	one
	---
	Vendor: Foo
	Title: second bug
	---
	Title: third bug
	---
	MAIL
	deliver_ok "$TMP/multi.eml" &&
	expect_eq "TEST-$Y-0001 TEST-$Y-0002 TEST-$Y-0003" "$(sql "SELECT group_concat(id, \" \") FROM (SELECT id FROM entries ORDER BY number)")" &&
	expect_eq 1 "$(sent_count)" "one ack for the mail" &&
	ack=$(sent_files) &&
	expect_eq "[TEST-$Y-0001] [TEST-$Y-0002] [TEST-$Y-0003] first bug" "$(mail_header "$ack" Subject)" &&
	mail_body "$ack" >"$TMP/body" &&
	expect_match "title: +second bug" "$TMP/body" &&
	expect_match "request\+TEST-$Y-0003@example.org" "$TMP/body" &&
	expect_eq "third bug" "$("$VULNID" -c "$CONF" show TEST-$Y-0003 --json | json_get "j[\"title\"]")"
'

test_expect_success 'each entry of a multi-ID mail has its own digest' '
	expect_eq 3 "$(sql "SELECT count(DISTINCT digest) FROM entries")"
'

test_expect_success 'a reply to a multi-ID ack adds to its first entry, it is no new request' '
	ack=$(sent_files | head -n 1) &&
	printf "Version: 2.0\n" | write_mail "$TMP/re.eml" "Subject: Re: $(mail_header "$ack" Subject)" \
		"In-Reply-To: $(mail_header "$ack" Message-ID)" &&
	deliver_ok "$TMP/re.eml" &&
	expect_eq 3 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM records WHERE entry = '\''TEST-$Y-0001'\''")"
'

test_expect_success 'an empty request still gets an ID: a reserved entry' '
	printf "From: alice@example.net\nTo: request@example.org\nSubject: \nMessage-ID: <empty@example.net>\n\n" >"$TMP/empty.eml" &&
	deliver_ok "$TMP/empty.eml" &&
	"$VULNID" -c "$CONF" show "TEST-$Y-0004" --json >"$TMP/e.json" &&
	expect_eq reserved "$(json_get "j[\"state\"]" <"$TMP/e.json")" &&
	expect_eq "" "$(json_get "j[\"records\"][0][\"body\"]" <"$TMP/e.json")" &&
	mail_body "$(sent_files | tail -n 1)" >"$TMP/body" &&
	expect_match "reserved" "$TMP/body"
'

test_expect_success 'the signature after "-- " is not part of the request' '
	printf "Product: Qux\n\nDetails here.\n-- \nAlice\nACME Security\n" |
		write_mail "$TMP/sig.eml" "Message-ID: <sig@example.net>" &&
	deliver_ok "$TMP/sig.eml" &&
	id=$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1") &&
	expect_eq "Details here." "$("$VULNID" -c "$CONF" show "$id" --json | json_get "j[\"records\"][0][\"body\"]")"
'

test_expect_success 'help gets the help text and no ID' '
	n=$(sql "SELECT count(*) FROM entries") &&
	printf "help\n" | write_mail "$TMP/help.eml" "Subject: question" &&
	deliver_ok "$TMP/help.eml" &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM entries")" &&
	reply=$(sent_files | tail -n 1) &&
	expect_eq "vulnid: how to request an identifier" "$(mail_header "$reply" Subject)" &&
	mail_body "$reply" >"$TMP/body" &&
	expect_match "Vendor-Contact:" "$TMP/body" &&
	expect_match "\-\-\-" "$TMP/body"
'

test_expect_success 'an empty mail with the subject help also gets help' '
	n=$(sent_count) &&
	write_mail "$TMP/help2.eml" "Subject: HELP" </dev/null &&
	deliver_ok "$TMP/help2.eml" &&
	expect_eq $((n + 1)) "$(sent_count)" &&
	expect_eq "vulnid: how to request an identifier" "$(mail_header "$(sent_files | tail -n 1)" Subject)"
'

test_expect_success 'more blocks than max_ids: error reply, nothing assigned' '
	set_conf limits max_ids 3 &&
	n=$(sql "SELECT count(*) FROM entries") &&
	printf "a\n---\nb\n---\nc\n---\nd\n" | write_mail "$TMP/many.eml" "Subject: four" &&
	deliver_ok "$TMP/many.eml" &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM entries")" &&
	reply=$(sent_files | tail -n 1) &&
	mail_header "$reply" Subject | grep -q "not processed" &&
	mail_body "$reply" >"$TMP/body" &&
	expect_match "4 identifiers requested in one mail; at most 3" "$TMP/body" &&
	expect_match "\"event\":\"rejected\"" "$INST/audit.log"
'

test_expect_success 'an invalid Embargo date is refused with what to fix' '
	n=$(sql "SELECT count(*) FROM entries") &&
	printf "Embargo: 2027-02-30\nVendor-Contact: not an address\nAnonymous: maybe\n" |
		write_mail "$TMP/bad.eml" "Subject: bad fields" &&
	deliver_ok "$TMP/bad.eml" &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM entries")" &&
	mail_body "$(sent_files | tail -n 1)" >"$TMP/body" &&
	expect_match "Embargo: .2027-02-30. is not a date" "$TMP/body" &&
	expect_match "Vendor-Contact: .not an address. is not one mail address" "$TMP/body" &&
	expect_match "Anonymous: .maybe. must be yes or no" "$TMP/body"
'

test_expect_success 'an embargo date in the past is refused' '
	printf "Embargo: 2001-01-01\n" | write_mail "$TMP/past.eml" &&
	deliver_ok "$TMP/past.eml" &&
	mail_body "$(sent_files | tail -n 1)" | grep -q "Embargo: 2001-01-01 is in the past"
'

test_expect_success 'a field value over max_field_length is refused' '
	set_conf limits max_field_length 50 &&
	printf "Title: %s\n" "$(head -c 80 /dev/zero | tr "\\0" x)" | write_mail "$TMP/long.eml" &&
	deliver_ok "$TMP/long.eml" &&
	mail_body "$(sent_files | tail -n 1)" | grep -q "Title: the value is longer than 50 characters"
'

test_expect_success 'a Reference that is no URL is kept with a warning in the ack' '
	printf "Reference: see the mailing list\n" | write_mail "$TMP/ref.eml" &&
	deliver_ok "$TMP/ref.eml" &&
	mail_body "$(sent_files | tail -n 1)" >"$TMP/body" &&
	expect_match "Please note:" "$TMP/body" &&
	expect_match "Reference: .see the mailing list. is not an http" "$TMP/body"
'

test_expect_success 'a format=flowed body is unwrapped before parsing' '
	set_conf limits max_field_length 1024 &&
	printf "Title: A rather long title that a mail client wrapped at \r\nseventy-two characters\r\n\r\nBody\r\n" |
		write_mail "$TMP/flowed.eml" "MIME-Version: 1.0" "Content-Type: text/plain; charset=utf-8; format=flowed" &&
	deliver_ok "$TMP/flowed.eml" &&
	id=$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1") &&
	expect_eq "A rather long title that a mail client wrapped at seventy-two characters" \
		"$("$VULNID" -c "$CONF" show "$id" --json | json_get "j[\"title\"]")"
'

test_done
