#!/bin/bash
# T100-intake: a plain request gets an ID and an ack with the right headers
. "$(dirname "$0")/test-lib.sh"

make_instance inst

write_mail "$TMP/req.eml" \
	'From: Alice Researcher <alice@example.net>' \
	'Subject: XSS in Foo login' \
	'Message-ID: <req-1@example.net>' \
	'References: <older@example.net>' <<'MAIL'
Vendor: Foo Corp <foo.example>
Product: Foo Server
Version: 1.0
version: 1.1
Type: CWE-79
Reference: https://example.net/advisory
Severity: high

The login page reflects the "next" parameter
without escaping it.
MAIL

test_expect_success 'a plain request is assigned the first ID of the year' '
	deliver_ok "$TMP/req.eml" -f alice@example.net -r request@example.org &&
	year=$(date -u +%Y) &&
	expect_eq "TEST-$year-0001" "$(sql "SELECT id FROM entries")"
'

ID="TEST-$(date -u +%Y)-0001"

test_expect_success 'the entry keeps every field, unknown ones too, and the description' '
	"$VULNID" -c "$CONF" show "$ID" --json >"$TMP/show.json" &&
	expect_eq "Foo Corp <foo.example>" "$(json_get "j[\"vendor\"]" <"$TMP/show.json")" &&
	expect_eq "Foo Server" "$(json_get "j[\"product\"]" <"$TMP/show.json")" &&
	expect_eq "[\"1.0\", \"1.1\"]" "$(json_get "j[\"versions\"]" <"$TMP/show.json")" &&
	expect_eq "XSS in Foo login" "$(json_get "j[\"title\"]" <"$TMP/show.json")" &&
	expect_eq "[\"Severity\", \"high\"]" "$(json_get "j[\"records\"][0][\"fields\"][6]" <"$TMP/show.json")" &&
	expect_eq "alice@example.net" "$(json_get "j[\"records\"][0][\"author\"]" <"$TMP/show.json")" &&
	expect_eq "{\"method\": \"none\"}" "$(json_get "j[\"records\"][0][\"auth\"]" <"$TMP/show.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/show.json" >"$TMP/body" &&
	printf "The login page reflects the \"next\" parameter\nwithout escaping it.\n" >"$TMP/want" &&
	cmp "$TMP/want" "$TMP/body"
'

test_expect_success 'the digest is the SHA-256 of the first record and is unique' '
	digest=$(sql "SELECT digest FROM entries WHERE id = '\''$ID'\''") &&
	expect_eq "$digest" "$(sql "SELECT sha256 FROM records WHERE entry = '\''$ID'\'' AND seq = 1")" &&
	echo "$digest" | grep -Eq "^[0-9a-f]{64}$"
'

test_expect_success 'the raw message is archived byte for byte' '
	sha=$(sha256sum <"$TMP/req.eml" | cut -d" " -f1) &&
	expect_eq "$sha" "$(sql "SELECT raw_sha256 FROM messages")" &&
	sql "SELECT hex(data) FROM blobs WHERE sha256 = '\''$sha'\''" | xxd -r -p >"$TMP/raw" &&
	cmp "$TMP/req.eml" "$TMP/raw"
'

test_expect_success 'the ack is delivered into sent/ with the right headers' '
	expect_eq 2 "$(sent_count)" "mails sent: the ack and the vendor notification" &&
	ack=$(sent_to alice@example.net) &&
	expect_eq "vulnid <request@example.org>" "$(mail_header "$ack" From)" &&
	expect_eq "Alice Researcher <alice@example.net>" "$(mail_header "$ack" To)" &&
	expect_eq "[$ID] XSS in Foo login" "$(mail_header "$ack" Subject)" &&
	expect_eq "<req-1@example.net>" "$(mail_header "$ack" In-Reply-To)" &&
	expect_eq "<older@example.net> <req-1@example.net>" "$(mail_header "$ack" References)" &&
	expect_eq "request+$ID@example.org" "$(mail_header "$ack" Reply-To)" &&
	expect_eq "auto-replied" "$(mail_header "$ack" Auto-Submitted)" &&
	expect_eq "request@example.org" "$(mail_header "$ack" X-Loop)" &&
	mail_header "$ack" Message-ID | grep -Eq "^<[^<>@]+@example.org>$" &&
	test -n "$(mail_header "$ack" Date)"
'

test_expect_success 'the ack names the ID, the digest, the fields and how to add' '
	ack=$(sent_to alice@example.net) && mail_body "$ack" >"$TMP/ackbody" &&
	digest=$(sql "SELECT digest FROM entries") &&
	expect_match "^  $ID$" "$TMP/ackbody" &&
	expect_match "digest: +$digest" "$TMP/ackbody" &&
	expect_match "vendor: +Foo Corp <foo.example>" "$TMP/ackbody" &&
	expect_match "severity: +high" "$TMP/ackbody" &&
	expect_match "request\+$ID@example.org" "$TMP/ackbody" &&
	tr "\n" " " <"$TMP/ackbody" | grep -Eq "notified at +security@foo.example"
'

test_expect_success 'the outbox item is delivered and the queue is empty' '
	expect_eq "delivered delivered" "$(sql "SELECT group_concat(status, \" \") FROM outbox")" &&
	"$VULNID" -c "$CONF" queue list >"$TMP/q" &&
	test ! -s "$TMP/q"
'

test_expect_success 'the audit log records received, assigned, queued, replied, delivered' '
	for ev in received assigned queued replied delivered; do
		expect_match "\"event\":\"$ev\"" "$INST/audit.log" || return 1
	done &&
	head -n 2 "$INST/audit.log" | tail -n 1 | grep -q "^{\"ts\":\"[0-9T:.-]*Z\",\"event\":\"received\",\"id\":null,\"message_id\":\"req-1@example.net\"" &&
	"$VULNID" -c "$CONF" audit verify
'

test_expect_success 'vulnid show prints the entry for people' '
	"$VULNID" -c "$CONF" show "$ID" >"$TMP/show.txt" &&
	expect_match "^id: +$ID$" "$TMP/show.txt" &&
	expect_match "^state: +public$" "$TMP/show.txt" &&
	expect_match "^version: +1.1$" "$TMP/show.txt"
'

test_expect_success 'vulnid show of an unknown ID exits 66' '
	rc=0; "$VULNID" -c "$CONF" show TEST-2020-0042 2>"$TMP/err" || rc=$?
	expect_eq 66 "$rc" && expect_match "no entry" "$TMP/err"
'

test_expect_success 'the next request gets the next number' '
	write_mail "$TMP/req2.eml" "Subject: second" </dev/null &&
	deliver_ok "$TMP/req2.eml" &&
	expect_eq "TEST-$(date -u +%Y)-0002" "$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1")" &&
	"$VULNID" -c "$CONF" list --json >"$TMP/list.json" &&
	expect_eq 2 "$(json_get "len(j)" <"$TMP/list.json")" &&
	expect_eq reserved "$(json_get "j[1][\"state\"]" <"$TMP/list.json")"
'

test_expect_success 'a leading mbox From_ line is accepted and gives the envelope sender' '
	{ printf "From bob@example.com  Thu Dec  3 06:00:00 2026\n"; cat "$TMP/req.eml" | sed "s/req-1@/req-mbox@/"; } >"$TMP/mbox.eml" &&
	deliver_ok "$TMP/mbox.eml" &&
	expect_eq bob@example.com "$(sql "SELECT envelope_from FROM messages WHERE message_id = '\''req-mbox@example.net'\''")" &&
	sql "SELECT raw_sha256 FROM messages WHERE message_id = '\''req-mbox@example.net'\''" >"$TMP/sha" &&
	tail -n +2 "$TMP/mbox.eml" | sha256sum | cut -d" " -f1 | cmp - "$TMP/sha"
'

test_expect_success 'mail arriving on a pipe is handled like mail from a file' '
	sed "s/req-1@/req-pipe@/" "$TMP/req.eml" >"$TMP/pipe.eml" &&
	rc=0; "$FILTER" -c "$CONF" < <(cat "$TMP/pipe.eml") || rc=$?
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''req-pipe@example.net'\''")"
'

test_expect_success 'an HTML-only request is read as text' '
	write_mail "$TMP/html.eml" "Subject: html" "MIME-Version: 1.0" "Content-Type: text/html; charset=utf-8" <<-HTML &&
	<html><head><style>p{color:red}</style><script>alert(1)</script></head>
	<body><p>Vendor: Bar &amp; Co</p><p>Heap overflow in &lt;parse&gt;</p></body></html>
	HTML
	deliver_ok "$TMP/html.eml" &&
	id=$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1") &&
	"$VULNID" -c "$CONF" show "$id" --json >"$TMP/h.json" &&
	expect_eq "Bar & Co" "$(json_get "j[\"vendor\"]" <"$TMP/h.json")" &&
	expect_eq "Heap overflow in <parse>" "$(json_get "j[\"records\"][0][\"body\"]" <"$TMP/h.json")"
'

test_expect_success 'attachments are archived content-addressed and listed on the entry' '
	printf "PoC bytes\000\001\002" >"$TMP/poc.bin" &&
	b64=$(base64 -w 76 "$TMP/poc.bin") &&
	write_mail "$TMP/att.eml" "Subject: with poc" "MIME-Version: 1.0" \
		"Content-Type: multipart/mixed; boundary=\"XX\"" <<-MAIL &&
	--XX
	Content-Type: text/plain; charset=utf-8

	Product: Baz
	--XX
	Content-Type: application/octet-stream; name="../../poc.bin"
	Content-Disposition: attachment; filename="../../poc.bin"
	Content-Transfer-Encoding: base64

	$b64
	--XX--
	MAIL
	deliver_ok "$TMP/att.eml" &&
	sha=$(sha256sum <"$TMP/poc.bin" | cut -d" " -f1) &&
	id=$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1") &&
	"$VULNID" -c "$CONF" show "$id" --json >"$TMP/a.json" &&
	expect_eq "$sha" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"sha256\"]" <"$TMP/a.json")" &&
	expect_eq "poc.bin" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"filename\"]" <"$TMP/a.json")" &&
	expect_eq 12 "$(json_get "j[\"records\"][0][\"attachments\"][0][\"size\"]" <"$TMP/a.json")" &&
	sql "SELECT hex(data) FROM blobs WHERE sha256 = '\''$sha'\''" | xxd -r -p | cmp - "$TMP/poc.bin"
'

test_done
