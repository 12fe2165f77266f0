#!/bin/bash
# T111-client-requests: requests as real mail clients write them, from the
# corpus in test/corpora/clients (made by mutt, gpg, sq and, for Gmail,
# Outlook and Apple Mail, Python's email package in their shapes; see its
# README): long non-ASCII Subjects in adjacent encoded words, clearsigned
# text beside attachments, autolinks, double-spaced fields, HTML alone.
# What the entry holds is read back with vulnid show --json, what the
# sender is told with Python's email package.
. "$(dirname "$0")/test-lib.sh"

CLIENTS="$CORPORA/clients"
make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
set_conf policy allow_reserved_domains .example,example.com

# feed NAME: deliver the corpus mail NAME.eml (or a file) as sent by its
# From; ID is the identifier it got, ACK the robot's answer
feed() {
	local f=$1 from
	[ -f "$f" ] || f="$CLIENTS/$1.eml"
	from=$(mail_header "$f" From | sed 's/.*<\(.*\)>.*/\1/')
	snap
	deliver_ok "$f" -f "$from" -r request@example.org
	ID=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1")
	ACK=$(new_mail_to "$from")
	mail_body "$ACK" >"$TMP/ack.txt"
}
show() { "$VULNID" -c "$CONF" show "$1" --json; }
title_of() { show "$1" | json_get 'j["title"]'; }
first_of() { show "$1" | json_get "j[\"records\"][0]$2"; }

test_expect_success 'mutt: a long Cyrillic Subject in adjacent UTF-8 base64 words is the whole title' '
	grep -q "^ =?utf-8?B?.*=?=$" "$CLIENTS/mutt-cyrillic-subject.eml" &&
	feed mutt-cyrillic-subject &&
	want="Переполнение буфера в обработчике заголовков HTTP сервера Example Server" &&
	expect_eq "$want" "$(title_of "$ID")" &&
	expect_eq "$want" "$(first_of "$ID" "[\"subject\"]")" &&
	expect_eq "[$ID] $want" "$(mail_header "$ACK" Subject)" &&
	expect_eq "Алиса Исследователь <alice@example.net>" "$(mail_header "$ACK" To)" &&
	cp "$ACK" "$TMP/cyrillic-ack.eml" && echo "$ID" >"$TMP/cyrillic.id"
'

test_expect_success 'mutt: a Japanese Subject in ISO-2022-JP words after a padded one is whole' '
	feed mutt-japanese-subject &&
	want="Example Server のリクエスト解析におけるヒープオーバーフローの脆弱性について" &&
	expect_eq "$want" "$(title_of "$ID")" &&
	expect_eq "[$ID] $want" "$(mail_header "$ACK" Subject)"
'

test_expect_success 'Apple Mail: a Subject in three UTF-8 base64 words and an encoded name' '
	feed apple-mail-japanese &&
	expect_eq "Example Server のリクエスト解析におけるヒープオーバーフローの脆弱性について" "$(title_of "$ID")" &&
	expect_eq "山田太郎 <yamada@icloud.example>" "$(mail_header "$ACK" To)"
'

test_expect_success 'the robot keeps its own encoded Subject whole when a reply quotes it' '
	# the Subject of the ack of the Cyrillic request, folded and encoded
	# as the robot wrote it, in a reply (no In-Reply-To: the [ID] routes)
	s=$(sed -n "/^Subject:/,/^[^ ]/p" "$TMP/cyrillic-ack.eml" | sed "\$d" | sed "1s/^Subject: *//") &&
	echo "$s" | grep -q "=?" &&
	{ printf "Subject: Re: %s\n" "$s"; echo "From: Alice <alice@example.net>"; echo "To: request@example.org";
	  echo "Message-ID: <reply-subject@example.net>"; echo; echo "Version: 2.4.2"; } >"$TMP/re.eml" &&
	e1=$(cat "$TMP/cyrillic.id") &&
	deliver_ok "$TMP/re.eml" -f alice@example.net -r request@example.org &&
	expect_eq "Re: [$e1] Переполнение буфера в обработчике заголовков HTTP сервера Example Server" \
		"$(show "$e1" | json_get "j[\"records\"][1][\"subject\"]")"
'

test_expect_success 'a Subject over 998 characters: the title is its head, and the ack says so' '
	long=$(printf "overflow %.0s" $(seq 150)) &&
	echo "Product: p" | write_mail "$TMP/long.eml" "Subject: $long" &&
	feed "$TMP/long.eml" &&
	expect_eq 998 "$(title_of "$ID" | tr -d "\n" | wc -m)" &&
	tr "\n" " " <"$TMP/ack.txt" | grep -Eq "Subject is 1349 characters long; +only its first 998"
'

for tool in gpg sq; do
	test_expect_success "$tool clearsigned text beside attachments (mutt): fields read, why unsigned said" "
		feed mutt-$tool-clearsigned-mixed &&
		show \$ID >\"\$TMP/e.json\" &&
		expect_eq 'Example Corp <example.com>' \"\$(json_get 'j[\"vendor\"]' <\"\$TMP/e.json\")\" &&
		expect_eq 'Example Server' \"\$(json_get 'j[\"product\"]' <\"\$TMP/e.json\")\" &&
		expect_eq CWE-122 \"\$(json_get 'j[\"type\"]' <\"\$TMP/e.json\")\" &&
		expect_eq '[\"2.4.1\"]' \"\$(json_get 'j[\"versions\"]' <\"\$TMP/e.json\")\" &&
		body=\$(json_get 'j[\"records\"][0][\"body\"]' <\"\$TMP/e.json\") &&
		expect_eq 'A request with an overlong Host header overflows a fixed buffer in
parse_request(). The PoC is attached.' \"\$body\" &&
		expect_eq none \"\$(json_get 'j[\"records\"][0][\"auth\"][\"method\"]' <\"\$TMP/e.json\")\" &&
		json_get 'j[\"records\"][0][\"auth\"][\"reason\"]' <\"\$TMP/e.json\" | grep -q 'clearsigned text in one part' &&
		json_get '[a[\"filename\"] for a in j[\"records\"][0][\"attachments\"]]' <\"\$TMP/e.json\" | grep -q poc.py &&
		expect_match 'Your text is clearsigned' \"\$TMP/ack.txt\" &&
		expect_match 'only a signature of' \"\$TMP/ack.txt\" &&
		expect_no_match 'BEGIN PGP' \"\$TMP/ack.txt\"
	"
done

test_expect_success 'sq clearsigned text as the whole mail: verified (Sequoia and gpg agree)' '
	mkdir -m 700 "$TMP/g" && gpg --homedir "$TMP/g" --batch --quiet --import "$CLIENTS/alice.sec.asc" 2>/dev/null &&
	fpr=$(gpg --homedir "$TMP/g" --with-colons --list-keys | awk -F: "/^fpr/ { print \$10; exit }") &&
	gpg --homedir "$TMP/g" --armor --export "$fpr" >"$TMP/alice.asc" &&
	gpgconf --homedir "$TMP/g" --kill all &&
	"$VULNID" -c "$CONF" keys import "$TMP/alice.asc" >/dev/null &&
	feed mutt-sq-clearsigned &&
	expect_eq pgp "$(first_of "$ID" "[\"auth\"][\"method\"]")" &&
	expect_eq "$fpr" "$(first_of "$ID" "[\"auth\"][\"fingerprint\"]")" &&
	expect_eq "Example Server" "$(show "$ID" | json_get "j[\"product\"]")"
'

test_expect_success 'Gmail: autolinked values are taken as written, and the vendor is told' '
	grep -q "example.com <http://example.com>" "$CLIENTS/gmail-autolinks.eml" &&
	feed gmail-autolinks &&
	show "$ID" >"$TMP/e.json" &&
	expect_eq "Example Corp <example.com>" "$(json_get "j[\"vendor\"]" <"$TMP/e.json")" &&
	expect_eq "security@example.com" "$(json_get "j[\"vendor_contact\"]" <"$TMP/e.json")" &&
	expect_eq "[\"https://example.org/advisory\"]" "$(json_get "j[\"references\"]" <"$TMP/e.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/e.json" | grep -q "proof of concept is at example.org/poc.py\.$" &&
	confirm_entry "$ID" "Alice Researcher <alice.researcher@gmail.example>" &&
	n=$(new_mail_to security@example.com) &&
	expect_eq "[$ID] Vulnerability report: Example Corp Example Server: Heap overflow in Example Server" \
		"$(mail_header "$n" Subject)"
'

test_expect_success 'Outlook: double-spaced fields are all fields' '
	feed outlook-double-spaced &&
	show "$ID" >"$TMP/e.json" &&
	expect_eq "Example Corp <example.com>" "$(json_get "j[\"vendor\"]" <"$TMP/e.json")" &&
	expect_eq "Example Server" "$(json_get "j[\"product\"]" <"$TMP/e.json")" &&
	expect_eq "[\"2.4.1\"]" "$(json_get "j[\"versions\"]" <"$TMP/e.json")" &&
	expect_eq "security@example.com" "$(json_get "j[\"vendor_contact\"]" <"$TMP/e.json")" &&
	expect_eq "[\"https://example.org/advisory\"]" "$(json_get "j[\"references\"]" <"$TMP/e.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/e.json" | grep -q "^A request with an overlong Host header"
'

test_expect_success 'a field under the description is not read, and the ack says so' '
	printf "Vendor: Example Corp <example.com>\nThe parser overflows.\nProduct: Example Server\n" |
		write_mail "$TMP/late.eml" "Subject: late field" &&
	feed "$TMP/late.eml" &&
	expect_eq None "$(show "$ID" | json_get "j[\"product\"]")" &&
	tr "\n" " " <"$TMP/ack.txt" | grep -Eq "the line \"Product: ...\" in the description was not read as a +field"
'

test_expect_success 'HTML alone: the links keep their targets' '
	feed html-only-links &&
	body=$(first_of "$ID" "[\"body\"]") &&
	expect_eq "A long Host header overflows a buffer. See the proof of concept <https://example.org/poc.py> and https://example.org/advisory." "$body"
'

test_done
