#!/bin/bash
# T810-entry-defects: the attacks that broke the robot's two promises at the
# edges ("authority comes from keys and tokens, never from From"; "what is
# secret stays secret"), each as it was done, each failing before the entry
# model and the one disclosure policy
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf crypto sign none
set_conf announce to list@lists.example
Y=$(date -u +%Y)
V() { "$VULNID" -c "$CONF" "$@"; }
newest_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
token_in() { mail_body "$1" | grep -Eo '[Tt]oken:? +(is +)?vulnid_[a-z2-7]{32}' | head -n 1 | grep -Eo 'vulnid_[a-z2-7]{32}'; }
reply_to_addr() {
	local f
	for f in $(sent_files | tac); do
		mail_header "$f" To | grep -qi -- "$1" && { mail_body "$f"; return 0; }
	done
	return 1
}
V vendor add "Widget Co" --domain widget.example --contact psirt@widget.example >/dev/null

test_expect_success 'defect 1: no token in the public archive, so none can be taken from it to act' '
	printf "Vendor: Widget Co\n\nA bug.\n" | write_mail "$TMP/r1.eml" "Subject: a bug"
	deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org &&
	E=$(newest_id) && echo "$E" >"$TMP/E1" &&
	T=$(token_in "$(sent_to alice@example.net)") && test -n "$T" &&
	VT=$(token_in "$(sent_to psirt@widget.example)") && test -n "$VT" &&
	{
		printf "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=x\n"
		printf "From: alice@example.net\nTo: request+%s@example.org\nSubject: Re: %s%s\n\n" "$E" "$T" "$E"
		printf -- "--x\nContent-Type: text/plain\n\nToken: %s\n\nMy token, glued: Z%s, quoted:\n> Token: %s\n" "$T" "$T" "$T"
		printf -- "--x\nContent-Type: text/plain\nContent-Disposition: attachment; filename=t.txt\n\n%s\n--x--\n" "$T"
	} >"$TMP/a1.eml" &&
	deliver_ok "$TMP/a1.eml" -f alice@example.net -r "request+$E@example.org" &&
	printf "Token: %s\nStatus: confirmed\n\nYes.\n> Your response token is %s\n" "$VT" "$VT" |
		write_mail "$TMP/v1.eml" "From: psirt@widget.example" "Subject: Re: [$E] $VT" &&
	deliver_ok "$TMP/v1.eml" -f psirt@widget.example -r "request+$E@example.org" &&
	V export mbox "$TMP/m.mbox" >/dev/null && V export html "$TMP/site" >/dev/null &&
	V export feed "$TMP/feed" >/dev/null &&
	! grep -rqiF -e "$T" -e "$VT" "$TMP/m.mbox" "$TMP/site" "$TMP/feed" &&
	# and nothing token-shaped is anywhere in them
	! grep -rqiE "vulnid_[a-z2-7]{16}" "$TMP/m.mbox" "$TMP/site" "$TMP/feed"
'

test_expect_success 'defect 2: an anonymous researcher: no name, address, Reply-To or key in any public view' '
	fpr=$(new_signing_key anon "Ann Onymous-Person <ann.onymous@researcher.example>") &&
	V keys import "$TMP/anon.asc" >/dev/null &&
	clearsigned_mail "$TMP/r2.eml" anon "$fpr" "Vendor: Widget Co
Anonymous: yes

Found by Ann Onymous-Person, write to ann.onymous@researcher.example
or reply.secret@elsewhere.example." "From: Ann Onymous-Person <ann.onymous@researcher.example>" \
		"Reply-To: reply.secret@elsewhere.example" "Subject: Anonymous bug" &&
	deliver_ok "$TMP/r2.eml" -f ann.onymous@researcher.example -r request@example.org &&
	E=$(newest_id) &&
	V export mbox "$TMP/m2.mbox" >/dev/null && V export html "$TMP/site2" >/dev/null &&
	V export feed "$TMP/feed2" >/dev/null && V export osv "$TMP/osv2" >/dev/null &&
	V show "$E" >"$TMP/show2" && V show "$E" --json >>"$TMP/show2" &&
	for x in "Onymous-Person" "ann.onymous" "reply.secret" "$fpr" "${fpr: -16}"; do
		! grep -rqiF -- "$x" "$TMP/m2.mbox" "$TMP/site2" "$TMP/feed2" "$TMP/osv2" "$TMP/show2" ||
			fail "$x is published"
	done &&
	expect_match "\"fingerprint\":\"withheld\",\"key_commitment\":\"[0-9a-f]{64}\"" "$TMP/feed2/$Y.jsonl" &&
	expect_match "signed by the researcher.s key \\(withheld\\)" "$TMP/show2" &&
	# the operator still knows
	V show "$E" --private >"$TMP/priv2" &&
	expect_match "signed by $fpr" "$TMP/priv2" &&
	expect_match "ann.onymous@researcher.example" "$TMP/priv2"
'

test_expect_success 'defect 5: a key that grants no role is not shown as the role'\''s signature' '
	E=$(cat "$TMP/E1") &&
	bfpr=$(new_signing_key bob "Bob <bob@example.com>") && V keys import "$TMP/bob.asc" >/dev/null &&
	clearsigned_mail "$TMP/f1.eml" bob "$bfpr" "Title: Hijacked title
Vendor-Contact: attacker@evil.example

$E: forged." "From: alice@example.net" "Subject: Re: [$E] forged" &&
	deliver_ok "$TMP/f1.eml" -f alice@example.net -r "request+$E@example.org" &&
	V show "$E" >"$TMP/show5" &&
	expect_no_match "by creator, signed by" "$TMP/show5" &&
	expect_match "by creator, unverified: sent from the creator.s address \\(signed, but the key grants no role here\\)" "$TMP/show5" &&
	expect_eq "a bug" "$(V show "$E" --json | json_get "j[\"title\"]")" &&
	expect_eq "None" "$(V show "$E" --json | json_get "j[\"vendor_contact\"]")" &&
	V show "$E" --json | json_get "[p[\"key\"] for p in j[\"proposals\"]]" | grep -q "Vendor-Contact"
'

test_expect_success 'defect 5: a forged From of the vendor shows no position, only an unverified proposal' '
	E=$(cat "$TMP/E1") &&
	printf "Status: disputed\n\nNot a bug.\n" |
		write_mail "$TMP/f2.eml" "From: psirt@widget.example" "Subject: Re: [$E] bug" &&
	deliver_ok "$TMP/f2.eml" -f psirt@widget.example -r "request+$E@example.org" &&
	expect_eq confirmed "$(V show "$E" --json | json_get "j[\"vendor_status\"][\"value\"]")" &&
	V export html "$TMP/site5" >/dev/null &&
	expect_no_match "Disputed by the vendor" "$TMP/site5/entries/$E.html" &&
	expect_match "disputed <span class=\"meta\">" "$TMP/site5/entries/$E.html"
'

test_expect_success 'defect 5: the web archive names the key that signed' '
	cfpr=$(new_signing_key carol "Carol <carol@example.com>") && V keys import "$TMP/carol.asc" >/dev/null &&
	clearsigned_mail "$TMP/r5.eml" carol "$cfpr" "Vendor: Widget Co

Signed bug." "From: carol@example.com" "Subject: signed bug" &&
	deliver_ok "$TMP/r5.eml" -f carol@example.com -r request@example.org &&
	E=$(newest_id) && V export html "$TMP/site6" >/dev/null &&
	expect_match "OpenPGP signature by key <code class=\"fpr\">$cfpr</code>" "$TMP/site6/entries/$E.html"
'

test_expect_success 'defect 7: sealed additions have commitments; releases are audited; no ciphertext is published' '
	printf "Vendor: Widget Co\nEmbargo: 2099-01-01\n\nSealed.\n" | write_mail "$TMP/r7.eml" "Subject: sealed"
	deliver_ok "$TMP/r7.eml" -f alice@example.net -r request@example.org &&
	E=$(newest_id) && T=$(token_in "$(sent_to alice@example.net)") &&
	printf "Token: %s\n\nMore sealed text.\n" "$T" | write_mail "$TMP/a7.eml" "Subject: more"
	deliver_ok "$TMP/a7.eml" -f alice@example.net -r "request+$E@example.org" &&
	c2=$(sql "SELECT sha256 FROM records WHERE entry = '\''$E'\'' AND seq = 2") &&
	V show "$E" --json | json_get "[c[\"commitment\"] for c in j[\"commitments\"]]" | grep -q "$c2" &&
	printf "Token: %s\nrelease\n" "$T" | write_mail "$TMP/rel7.eml" "Subject: release"
	deliver_ok "$TMP/rel7.eml" -f alice@example.net -r "request+$E@example.org" &&
	for seq in $(sql "SELECT seq FROM records WHERE entry = '\''$E'\'' AND kind = '\''release'\''"); do
		grep -q "\"event\":\"recorded\",\"id\":\"$E\".*\"seq\":$seq,\"kind\":\"release\"" "$INST/audit.log" ||
			fail "release record $seq is not audited"
	done &&
	expect_eq 2 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$E'\'' AND kind = '\''release'\''")" &&
	V export mbox "$TMP/m7.mbox" >/dev/null &&
	expect_no_match "BEGIN PGP MESSAGE" "$TMP/m7.mbox" &&
	expect_match "More sealed text" "$TMP/m7.mbox"
'

test_expect_success 'defect 7: the reply about an embargoed entry repeats no word of the Subject' '
	printf "Vendor: Gadget Co\nEmbargo: 2099-01-01\n\nSealed.\n" | write_mail "$TMP/r9.eml" "Subject: sealed too"
	deliver_ok "$TMP/r9.eml" -f alice@example.net -r request@example.org &&
	E=$(newest_id) && T=$(token_in "$(sent_to alice@example.net)") &&
	printf "Token: %s\n\nStill secret.\n" "$T" |
		write_mail "$TMP/a9.eml" "Subject: Re: [$E] heap overflow in parse_frobnicate()"
	deliver_ok "$TMP/a9.eml" -f alice@example.net -r "request+$E@example.org" &&
	f=$(sent_to alice@example.net) &&
	expect_eq "Re: [$E] your embargoed mail" "$(mail_header "$f" Subject)" &&
	expect_no_match "frobnicate" "$f"
'

test_expect_success 'defect 8: subject is "" (never null) in every record of the JSON views' '
	for e in $(sql "SELECT id FROM entries"); do
		V show "$e" --json | json_get "[type(r[\"subject\"]).__name__ for r in j.get(\"records\", [])]"
	done >"$TMP/types" &&
	expect_no_match "NoneType" "$TMP/types"
'

test_done
