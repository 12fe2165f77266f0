#!/bin/bash
# T500-additions: mail to an entry appends records (by reply, by plus
# address, by subject tag); fields add to the derived view; tokens never
# stored; nothing is ever changed
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
ID="TEST-$Y-0001"

# token_in MAIL: the token an ack or a reply gives
token_in() { mail_body "$1" | sed -n 's/^ *token: *\(vulnid_[a-z2-7]\{32\}\)$/\1/p; s/^ *Token: \(vulnid_[a-z2-7]\{32\}\)$/\1/p' | head -n 1; }
# newest MAIL to ADDRESS whose Subject matches PATTERN
mail_to_subject() {
	local f
	for f in $(sent_files | tac); do
		mail_header "$f" To | grep -qi -- "$1" || continue
		mail_header "$f" Subject | grep -Eq -- "$2" && { echo "$f"; return 0; }
	done
	fail "no mail to $1 with subject $2"
}
records() { sql "SELECT count(*) FROM records WHERE entry = '$ID'"; }

write_mail "$TMP/req.eml" "Message-ID: <req@example.net>" "Subject: SQLi in Widget" <<'MAIL'
Vendor: Widget Co
Product: Widget
Version: 3.1
Vendor-Contact: psirt@widget.example

The search box is injectable.
MAIL

test_expect_success 'setup: a request, its ack with a creator token' '
	deliver_ok "$TMP/req.eml" -f alice@example.net -r request@example.org &&
	ack=$(sent_to alice@example.net) &&
	tok=$(token_in "$ack") &&
	echo "$ack" >"$TMP/ack.path" &&
	echo "$tok" | grep -Eq "^vulnid_[a-z2-7]{32}$" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM tokens WHERE entry = '\''$ID'\'' AND role = '\''creator'\''")" &&
	expect_eq "t:$(printf %s "$tok" | sha256sum | cut -d" " -f1)" \
		"$(sql "SELECT sha256 FROM tokens WHERE role = '\''creator'\''")" &&
	sql "SELECT * FROM records" >"$TMP/rec1.before"
'

test_expect_success 'a reply to the ack (In-Reply-To) is an addition to the entry' '
	mid=$(mail_header "$(cat "$TMP/ack.path")" Message-ID | tr -d "<>") &&
	write_mail "$TMP/a1.eml" "Message-ID: <a1@example.net>" "In-Reply-To: <$mid>" \
		"Subject: Re: something else entirely" <<-MAIL &&
	Version: 3.2
	Reference: https://example.net/widget-advisory

	Version 3.2 is affected too.
	MAIL
	deliver_ok "$TMP/a1.eml" -f alice@example.net -r request@example.org &&
	expect_eq 0 "$(sql "SELECT count(*) FROM entries WHERE id <> '\''$ID'\''")" "no new entry" &&
	expect_eq 2 "$(records)" &&
	expect_eq "addition|creator" "$(sql "SELECT kind || '\''|'\'' || role FROM records WHERE entry = '\''$ID'\'' AND seq = 2")" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''a1@example.net'\''")" &&
	"$VULNID" -c "$CONF" show "$ID" --json --private >"$TMP/s.json" &&
	expect_eq "[\"3.1\"]" "$(json_get "j[\"versions\"]" <"$TMP/s.json")" &&
	expect_eq "[]" "$(json_get "j[\"references\"]" <"$TMP/s.json")" &&
	expect_eq "Version=3.2 Reference=https://example.net/widget-advisory" \
		"$(json_get "\" \".join(p[\"key\"] + \"=\" + p[\"value\"] for p in j[\"proposals\"])" <"$TMP/s.json")" &&
	expect_eq "Version 3.2 is affected too." "$(json_get "j[\"records\"][1][\"body\"]" <"$TMP/s.json")" &&
	expect_eq "address" "$(json_get "j[\"records\"][1][\"auth\"][\"how\"]" <"$TMP/s.json")" &&
	r=$(mail_to_subject alice@example.net "^Re: \[$ID\] something else entirely$") &&
	expect_eq "request+$ID@example.org" "$(mail_header "$r" Reply-To)" &&
	expect_eq "<a1@example.net>" "$(mail_header "$r" In-Reply-To)" &&
	mail_body "$r" >"$TMP/r1" &&
	expect_match "recorded as record 2 of $ID: an addition by the creator" "$TMP/r1" &&
	expect_match "unverified: sent from the creator.s address" "$TMP/r1"
'

test_expect_success 'a mail to request+ID is an addition; a third party cannot change owned fields' '
	write_mail "$TMP/a2.eml" "Message-ID: <a2@example.net>" "From: Bob <bob@example.com>" \
		"To: request+$ID@example.org" "Subject: also seen" <<-MAIL &&
	Product: Gadget
	Version: 4.0
	Embargo: 2099-01-01

	I can reproduce it.
	MAIL
	deliver_ok "$TMP/a2.eml" -f bob@example.com -r "request+$ID@example.org" &&
	expect_eq 3 "$(records)" &&
	expect_eq "addition|third-party|bob@example.com" \
		"$(sql "SELECT kind || '\''|'\'' || role || '\''|'\'' || author FROM records WHERE entry = '\''$ID'\'' AND seq = 3")" &&
	"$VULNID" -c "$CONF" show "$ID" --json --private >"$TMP/s.json" &&
	expect_eq "Widget" "$(json_get "j[\"product\"]" <"$TMP/s.json")" "owned field unchanged" &&
	expect_eq "[[\"Version\", \"4.0\"]]" "$(json_get "j[\"records\"][2][\"fields\"]" <"$TMP/s.json")" &&
	json_get "j[\"records\"][2][\"body\"]" <"$TMP/s.json" >"$TMP/b3" &&
	expect_match "^Product: Gadget$" "$TMP/b3" &&
	expect_match "^Embargo: 2099-01-01$" "$TMP/b3" &&
	expect_match "^I can reproduce it.$" "$TMP/b3" &&
	r=$(sent_to bob@example.com) &&
	mail_body "$r" >"$TMP/r2" &&
	expect_match "record 3 of $ID: an addition by the third party" "$TMP/r2" &&
	expect_match "Product: not taken as a field \(only the creator, the vendor or a moderator" "$TMP/r2" &&
	expect_match "Embargo: not taken as a field" "$TMP/r2"
'

test_expect_success 'an upper- or lower-case plus address both reach the entry' '
	lower=$(echo "$ID" | tr A-Z a-z) &&
	write_mail "$TMP/a3.eml" "Message-ID: <a3@example.net>" "From: carol@example.org" <<<"Lower-case address." &&
	deliver_ok "$TMP/a3.eml" -r "request+$lower@example.org" &&
	expect_eq 4 "$(records)"
'

test_expect_success 'a [ID] tag in the Subject reaches the entry' '
	write_mail "$TMP/a4.eml" "Message-ID: <a4@example.net>" "From: dave@example.org" \
		"Subject: Fwd: [$ID] SQLi in Widget" <<<"Seen in the wild." &&
	deliver_ok "$TMP/a4.eml" -r request@example.org &&
	expect_eq 5 "$(records)" &&
	expect_eq "Seen in the wild." "$(sql "SELECT body FROM records WHERE entry = '\''$ID'\'' AND seq = 5")"
'

test_expect_success 'a tag with another prefix is an ordinary request' '
	write_mail "$TMP/n1.eml" "Message-ID: <n1@example.net>" "Subject: [CVE-2026-1234] and [OTHER-2026-0001]" <<<"Product: Other" &&
	deliver_ok "$TMP/n1.eml" -r request@example.org &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE id = '\''TEST-$Y-0002'\''")"
'

test_expect_success 'an unknown ID gets an error reply and adds nothing' '
	before=$(sql "SELECT count(*) FROM records") &&
	write_mail "$TMP/u1.eml" "Message-ID: <u1@example.net>" "From: erin@example.org" <<<"For a missing entry." &&
	deliver_ok "$TMP/u1.eml" -r "request+TEST-$Y-0999@example.org" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM records")" &&
	expect_eq rejected "$(sql "SELECT disposition FROM messages WHERE message_id = '\''u1@example.net'\''")" &&
	r=$(sent_to erin@example.org) &&
	mail_body "$r" | grep -q "there is no entry TEST-$Y-0999 here" &&
	write_mail "$TMP/u2.eml" "Message-ID: <u2@example.net>" "From: erin@example.org" "Subject: Re: [TEST-$Y-0998] x" <<<"Tagged." &&
	deliver_ok "$TMP/u2.eml" -r request@example.org &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM records")" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM entries")" &&
	r=$(sent_to erin@example.org) &&
	mail_body "$r" | grep -q "there is no entry TEST-$Y-0998 here" &&
	write_mail "$TMP/u3.eml" "Message-ID: <u3@example.net>" "From: erin@example.org" <<<"Garbage detail." &&
	deliver_ok "$TMP/u3.eml" -r "request+nonsense@example.org" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM records")"
'

test_expect_success 'a token is never stored or echoed, not even quoted from the ack' '
	tok=$(token_in "$(cat "$TMP/ack.path")") &&
	test -n "$tok" &&
	{ printf "Token: %s\nVersion: 3.3\n\nFixed in 3.3 says the changelog.\n\n> your token: %s\n> (keep it secret)\n" "$tok" "$tok"; } |
		write_mail "$TMP/t1.eml" "Message-ID: <t1@example.net>" "Subject: Re: [$ID] token $tok" &&
	deliver_ok "$TMP/t1.eml" -r request@example.org &&
	seq=$(sql "SELECT max(seq) FROM records WHERE entry = '\''$ID'\'' AND kind = '\''addition'\''") &&
	expect_eq "creator|token" "$(sql "SELECT role || '\''|'\'' || json_extract(auth, '\''$.how'\'') FROM records WHERE entry = '\''$ID'\'' AND seq = $seq")" &&
	sql "SELECT body || subject FROM records WHERE entry = '\''$ID'\'' AND seq = $seq" >"$TMP/tb" &&
	expect_match "\[token removed\]" "$TMP/tb" &&
	expect_eq "[[\"Version\", \"3.3\"]]" "$("$VULNID" -c "$CONF" show "$ID" --json | json_get "[r for r in j[\"records\"] if r[\"kind\"] == \"addition\"][-1][\"fields\"]")" &&
	sqlite3 "$INST/vulnid.db" "SELECT * FROM records; SELECT * FROM audit; SELECT * FROM tokens" >"$TMP/dump" &&
	expect_no_match "$tok" "$TMP/dump" &&
	r=$(sent_files | tail -n 1) &&
	expect_no_match "$tok" "$r" &&
	expect_no_match "$tok" "$INST/audit.log"
'

test_expect_success 'a mail of commands only adds no text record' '
	before=$(records) &&
	write_mail "$TMP/c1.eml" "Message-ID: <c1@example.net>" "From: frank@example.org" <<<"alias CVE-$Y-4242" &&
	deliver_ok "$TMP/c1.eml" -r "request+$ID@example.org" &&
	expect_eq $((before + 1)) "$(records)" &&
	expect_eq "command" "$(sql "SELECT kind FROM records WHERE entry = '\''$ID'\'' ORDER BY seq DESC LIMIT 1")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$ID'\'' AND kind = '\''addition'\'' AND message = (SELECT id FROM messages WHERE message_id = '\''c1@example.net'\'')")"
'

test_expect_success 'an attachment of an addition is archived and listed on its record' '
	cat >"$TMP/att.eml" <<-MAIL &&
	From: Alice Researcher <alice@example.net>
	To: request+$ID@example.org
	Subject: proof of concept
	Message-ID: <att1@example.net>
	MIME-Version: 1.0
	Content-Type: multipart/mixed; boundary="XX"

	--XX
	Content-Type: text/plain

	The PoC is attached.
	--XX
	Content-Type: text/x-python; name="poc.py"
	Content-Disposition: attachment; filename="poc.py"

	print("hello")
	--XX--
	MAIL
	deliver_ok "$TMP/att.eml" -r "request+$ID@example.org" &&
	seq=$(sql "SELECT max(seq) FROM records WHERE entry = '\''$ID'\''") &&
	expect_eq "poc.py" "$(sql "SELECT a.filename FROM attachments a JOIN records r ON r.id = a.record WHERE r.entry = '\''$ID'\'' AND r.seq = $seq")" &&
	sha=$(sql "SELECT a.sha256 FROM attachments a JOIN records r ON r.id = a.record WHERE r.entry = '\''$ID'\'' AND r.seq = $seq") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM blobs WHERE sha256 = '\''$sha'\''")"
'

test_expect_success 'every record hash is the SHA-256 of its canonical bytes; the first is untouched' '
	sql "SELECT * FROM records WHERE entry = '\''$ID'\'' AND seq = 1" >"$TMP/rec1.after" &&
	head -n 1 "$TMP/rec1.before" >"$TMP/rec1.b" &&
	cmp "$TMP/rec1.b" "$TMP/rec1.after" &&
	"$VULNID" -c "$CONF" show "$ID" --json --private >"$TMP/all.json" &&
	$PYTHON - "$TMP/all.json" "$ID" <<-PY
	import json, hashlib, sys
	j = json.load(open(sys.argv[1]))
	def s(v): return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
	for r in j["records"]:
	    atts = ",".join("{" + ",".join([s("sha256") + ":" + s(a["sha256"]), s("size") + ":" + str(a["size"]),
	            s("content_type") + ":" + s(a["content_type"]), s("filename") + ":" + s(a["filename"])]) + "}"
	            for a in r["attachments"])
	    auth = json.dumps(r["auth"], ensure_ascii=False, separators=(",", ":"))
	    canon = "{" + ",".join([s("v") + ":" + s("vulnid-record-1"), s("entry") + ":" + s(sys.argv[2]),
	            s("seq") + ":" + str(r["seq"]), s("created") + ":" + s(r["created"]), s("kind") + ":" + s(r["kind"]),
	            s("auth") + ":" + auth, s("subject") + ":" + s(r["subject"]),
	            s("fields") + ":" + s(r["fields"]), s("body") + ":" + s(r["body"]),
	            s("attachments") + ":[" + atts + "]"]) + "}"
	    h = hashlib.sha256(canon.encode()).hexdigest()
	    assert h == r["sha256"], (r["seq"], canon)
	PY
'

test_expect_success 'the append-only triggers hold for records' '
	! sqlite3 "$INST/vulnid.db" "PRAGMA recursive_triggers = ON; UPDATE records SET body = '\''x'\'' WHERE seq = 2" 2>"$TMP/e1" &&
	expect_match "append-only" "$TMP/e1" &&
	! sqlite3 "$INST/vulnid.db" "PRAGMA recursive_triggers = ON; DELETE FROM records WHERE seq = 3" 2>"$TMP/e2" &&
	expect_match "append-only" "$TMP/e2" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_done
