#!/bin/bash
# T120-charsets: bodies and subjects in any charset end up as correct UTF-8
. "$(dirname "$0")/test-lib.sh"

make_instance inst

last_json() {
	"$VULNID" -c "$CONF" show "$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1")" --json
}

test_expect_success 'ISO-8859-1 body and raw 8-bit subject' '
	printf "From: J\xf6rg <joerg@example.net>\nTo: request@example.org\nSubject: Fehler in M\xfcnchen\nMessage-ID: <l1@example.net>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: 8bit\n\nProduct: Caf\xe9\n\nD\xe9j\xe0 vu.\n" >"$TMP/latin1.eml" &&
	deliver_ok "$TMP/latin1.eml" &&
	last_json >"$TMP/j" &&
	expect_eq "Café" "$(json_get "j[\"product\"]" <"$TMP/j")" &&
	expect_eq "Déjà vu." "$(json_get "j[\"records\"][0][\"body\"]" <"$TMP/j")" &&
	expect_eq "Fehler in München" "$(json_get "j[\"title\"]" <"$TMP/j")"
'

test_expect_success 'UTF-8 body, quoted-printable' '
	printf "From: a@example.net\nTo: request@example.org\nSubject: utf8\nMessage-ID: <u1@example.net>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nProduct: =E2=82=AC-Rechner =F0=9F=90=9B\n" >"$TMP/utf8.eml" &&
	deliver_ok "$TMP/utf8.eml" &&
	expect_eq "€-Rechner 🐛" "$(last_json | json_get "j[\"product\"]")"
'

test_expect_success 'RFC 2047 subjects mixing B and Q encodings and charsets' '
	printf "From: =?utf-8?q?Ren=C3=A9?= <rene@example.net>\nTo: request@example.org\nSubject: =?UTF-8?B?w5xiZXJsYXVm?= in\n =?ISO-8859-1?Q?Gr=F6=DFe?=\nMessage-ID: <s1@example.net>\n\nbody\n" >"$TMP/2047.eml" &&
	deliver_ok "$TMP/2047.eml" &&
	expect_eq "Überlauf in Größe" "$(last_json | json_get "j[\"title\"]")" &&
	ack=$(sent_files | tail -n 1) &&
	mail_header "$ack" Subject | grep -q "Überlauf in Größe" &&
	grep -q "^Subject: .*=?" "$ack"
'

test_expect_success 'windows-1252 without a charset parameter' '
	printf "From: a@example.net\nTo: request@example.org\nSubject: cp\nMessage-ID: <w1@example.net>\nMIME-Version: 1.0\nContent-Type: text/plain\nContent-Transfer-Encoding: 8bit\n\nTitle: \x93quoted\x94 \x80 sign\n" >"$TMP/cp.eml" &&
	deliver_ok "$TMP/cp.eml" &&
	expect_eq "“quoted” € sign" "$(last_json | json_get "j[\"title\"]")"
'

test_expect_success 'an unknown charset falls back without losing the mail' '
	printf "From: a@example.net\nTo: request@example.org\nSubject: x\nMessage-ID: <x1@example.net>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=x-unknown-42\n\nTitle: plain ascii\n" >"$TMP/unk.eml" &&
	deliver_ok "$TMP/unk.eml" &&
	expect_eq "plain ascii" "$(last_json | json_get "j[\"title\"]")"
'

test_expect_success 'a base64 UTF-16 text part is converted' '
	body=$(printf "Title: sixteen bits\n" | iconv -f utf-8 -t utf-16 | base64 -w0) &&
	printf "From: a@example.net\nTo: request@example.org\nSubject: x\nMessage-ID: <x16@example.net>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-16\nContent-Transfer-Encoding: base64\n\n%s\n" "$body" >"$TMP/u16.eml" &&
	deliver_ok "$TMP/u16.eml" &&
	expect_eq "sixteen bits" "$(last_json | json_get "j[\"title\"]")"
'

test_done
