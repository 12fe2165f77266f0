#!/bin/bash
# T530-anonymity: Anonymous: yes keeps the researcher's address from the
# vendor, the lists and the public view; vendor and researcher talk through
# the robot, both ways
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf announce to "vuln-list@lists.example"
Y=$(date -u +%Y)
ID="TEST-$Y-0001"
SECRET="alice.secret@example.net"

token_in() { mail_body "$1" | grep -Eo 'Token: vulnid_[a-z2-7]{32}' | head -n 1 | cut -d" " -f2; }
mail_to_subject() {
	local f
	for f in $(sent_files | tac); do
		mail_header "$f" To | grep -qi -- "$1" || continue
		mail_header "$f" Subject | grep -Eq -- "$2" && { echo "$f"; return 0; }
	done
	fail "no mail to $1 with subject $2"
}
# no mail that went to anyone but the researcher names her
nobody_else_knows() {
	local f
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi "$SECRET" && continue
		! grep -qi -e "alice.secret" -e "Alice Secret" "$f" || fail "the researcher is named in $f"
	done
}

test_expect_success 'setup: an anonymous request; the vendor and the list are told without her address' '
	write_mail "$TMP/r.eml" "Message-ID: <anon-req@example.net>" "From: Alice Secret <$SECRET>" \
		"Subject: RCE in Widget" <<-MAIL &&
	Vendor: Widget Co
	Product: Widget
	Vendor-Contact: psirt@widget.example
	Anonymous: yes

	Remote code execution in the upload handler.
	MAIL
	deliver_ok "$TMP/r.eml" -f "$SECRET" -r request@example.org &&
	token_in "$(sent_to "$SECRET")" >"$TMP/ctok" && test -s "$TMP/ctok" &&
	confirm_entry "$ID" "Alice Secret <$SECRET>" &&
	n=$(sent_to psirt@widget.example) &&
	mail_body "$n" | grep -q "an anonymous researcher" &&
	sent_to vuln-list@lists.example >/dev/null &&
	token_in "$n" >"$TMP/vtok" && test -s "$TMP/vtok" &&
	nobody_else_knows
'

test_expect_success 'the vendor'\''s reply reaches the researcher through the robot, the vendor'\''s address kept' '
	n=$(sent_to psirt@widget.example) &&
	mid=$(mail_header "$n" Message-ID | tr -d "<>") &&
	printf "Token: %s\nStatus: confirmed\n\nThanks. Which version did you test?\n" "$(cat "$TMP/vtok")" |
		write_mail "$TMP/v1.eml" "Message-ID: <anon-v1@example.net>" "From: Widget PSIRT <psirt@widget.example>" \
			"In-Reply-To: <$mid>" "Subject: Re: [$ID] Vulnerability report" &&
	deliver_ok "$TMP/v1.eml" -f psirt@widget.example -r request@example.org &&
	r=$(mail_to_subject "$SECRET" "^\[$ID\] Response from the vendor \(verified\): confirmed$") &&
	expect_eq "vulnid <request@example.org>" "$(mail_header "$r" From)" &&
	expect_eq "request+$ID@example.org" "$(mail_header "$r" Reply-To)" &&
	mail_body "$r" >"$TMP/vr" &&
	expect_match "From: +psirt@widget.example" "$TMP/vr" &&
	expect_match "Which version did you test\?" "$TMP/vr" &&
	expect_match "relayed to the vendor, without" "$TMP/vr" &&
	mail_body "$(sent_to psirt@widget.example)" | grep -q "The researcher, who asked to stay anonymous, was sent your response" &&
	expect_match "\"event\":\"relayed\".*\"direction\":\"vendor-to-researcher\"" "$INST/audit.log" &&
	nobody_else_knows
'

test_expect_success 'the researcher'\''s answer reaches the vendor from the robot, without her address' '
	r=$(mail_to_subject "$SECRET" "Response from the vendor") &&
	mid=$(mail_header "$r" Message-ID | tr -d "<>") &&
	{ printf "Token: %s\n\nVersion 2.3.1, on Debian.\nAsk Alice Secret <%s> for the logs.\n\nOn Thu, Alice Secret <%s> wrote:\n> the first report\n\n-- \nAlice Secret, %s\n" \
		"$(cat "$TMP/ctok")" "$SECRET" "$SECRET" "$SECRET"; } |
		write_mail "$TMP/a1.eml" "Message-ID: <anon-a1@example.net>" "From: Alice Secret <$SECRET>" \
			"In-Reply-To: <$mid>" "Subject: Re: [$ID] Response from the vendor: confirmed" &&
	deliver_ok "$TMP/a1.eml" -f "$SECRET" -r request@example.org &&
	v=$(mail_to_subject psirt@widget.example "^\[$ID\] Message from the researcher$") &&
	expect_eq "vulnid <request@example.org>" "$(mail_header "$v" From)" &&
	expect_eq "request+$ID@example.org" "$(mail_header "$v" Reply-To)" &&
	mail_body "$v" >"$TMP/rv" &&
	expect_match "Version 2.3.1, on Debian." "$TMP/rv" &&
	tr "\n" " " <"$TMP/rv" | grep -Eq "the creator \(verified by token\), +anonymous" &&
	expect_match "\[the researcher\]" "$TMP/rv" &&
	mail_body "$(mail_to_subject "$SECRET" "^Re: \[$ID\]")" | grep -q "relayed to the vendor (1 address), without your" &&
	nobody_else_knows
'

test_expect_success 'the vendor answers the relayed mail: back to the researcher' '
	v=$(mail_to_subject psirt@widget.example "Message from the researcher") &&
	mid=$(mail_header "$v" Message-ID | tr -d "<>") &&
	printf "Status: fixed\n\nFixed in 2.3.2.\n" |
		write_mail "$TMP/v2.eml" "Message-ID: <anon-v2@example.net>" "From: psirt@widget.example" \
			"In-Reply-To: <$mid>" "Subject: Re: [$ID] Message from the researcher" &&
	deliver_ok "$TMP/v2.eml" -f psirt@widget.example -r request@example.org &&
	r=$(mail_to_subject "$SECRET" "said to be the vendor.s: fixed") &&
	mail_body "$r" | grep -q "Fixed in 2.3.2." &&
	mail_body "$r" | grep -q "unverified: sent from the vendor.s notified address" &&
	nobody_else_knows
'

test_expect_success 'without her token she is still relayed, marked as unverified' '
	r=$(mail_to_subject "$SECRET" "said to be the vendor.s: fixed") &&
	mid=$(mail_header "$r" Message-ID | tr -d "<>") &&
	printf "Thanks, confirmed fixed.\n" |
		write_mail "$TMP/a2.eml" "Message-ID: <anon-a2@example.net>" "From: $SECRET" "In-Reply-To: <$mid>" &&
	deliver_ok "$TMP/a2.eml" -f "$SECRET" -r request@example.org &&
	v=$(mail_to_subject psirt@widget.example "Message from the researcher") &&
	mail_body "$v" >"$TMP/rv2" &&
	expect_match "Thanks, confirmed fixed." "$TMP/rv2" &&
	expect_match "could not verify that this message comes from the researcher" "$TMP/rv2" &&
	nobody_else_knows
'

test_expect_success 'the public view, lookups and subscribers never show her address' '
	"$VULNID" -c "$CONF" show "$ID" --json >"$TMP/pub.json" &&
	expect_no_match "alice.secret" "$TMP/pub.json" &&
	"$VULNID" -c "$CONF" show "$ID" --json --private | grep -q "$SECRET" &&
	printf "lookup %s\nsubscribe %s\n" "$ID" "$ID" | write_mail "$TMP/l.eml" "Message-ID: <anon-l@example.net>" "From: zed@example.org" &&
	deliver_ok "$TMP/l.eml" -r request@example.org &&
	mail_body "$(sent_to zed@example.org)" >"$TMP/l" &&
	expect_match "$ID: RCE in Widget" "$TMP/l" &&
	expect_no_match "alice.secret|Alice Secret" "$TMP/l" &&
	tok=$(grep -Eo "Token: vulnid_[a-z2-7]{32}" "$TMP/l" | cut -d" " -f2) &&
	printf "Token: %s\n" "$tok" | write_mail "$TMP/l2.eml" "Message-ID: <anon-l2@example.net>" "From: zed@example.org" &&
	deliver_ok "$TMP/l2.eml" -r "request+$ID@example.org" &&
	printf "Token: %s\n\nOne more detail from me, %s.\n" "$(cat "$TMP/ctok")" "$SECRET" |
		write_mail "$TMP/a3.eml" "Message-ID: <anon-a3@example.net>" "From: Alice Secret <$SECRET>" \
			"Subject: more from Alice Secret" &&
	deliver_ok "$TMP/a3.eml" -f "$SECRET" -r "request+$ID@example.org" &&
	s=$(mail_to_subject zed@example.org "New record") &&
	mail_body "$s" | grep -q "One more detail from me, \[the researcher\]." &&
	sql "SELECT body, subject, fields FROM records WHERE entry = '\''$ID'\'' ORDER BY seq DESC LIMIT 1" >"$TMP/lastbody" &&
	expect_no_match "alice.secret|Alice Secret" "$TMP/lastbody" &&
	expect_match "more from \[the researcher\]" "$TMP/lastbody" &&
	nobody_else_knows
'

test_expect_success 'the archive keeps the raw messages' '
	sql "SELECT CAST(b.data AS TEXT) FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256 WHERE m.message_id = '\''anon-a3@example.net'\''" >"$TMP/raw" &&
	expect_match "One more detail from me, $SECRET" "$TMP/raw"
'

test_done
