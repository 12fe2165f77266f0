#!/bin/bash
# T580-said-not-silent: what the robot did not do is said in its answer:
# the last answer before the loop brake says that answers stop; a good
# signature that grants no role says so; an encrypted request without an
# Embargo: line is told that it is public at once; a key attached to an
# unsigned mail is told that it was ignored.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
Y=$(date -u +%Y)

ROBOT=$("$VULNID" -c "$CONF" key export --fingerprint)
"$VULNID" -c "$CONF" key export >"$TMP/robot.asc"
AFPR=$(new_signing_key alice "Alice <alice@example.net>")
G "$TMP/gnupg-alice" --import "$TMP/robot.asc" 2>/dev/null
printf '5\ny\n' | gpg --homedir "$TMP/gnupg-alice" --batch --no-tty --command-fd 0 --edit-key "$ROBOT" trust quit >/dev/null 2>&1

echo "Product: Example Server" | write_mail "$TMP/r1.eml" "Subject: unsigned request" "Message-ID: <r1@example.net>"
deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org
E1="TEST-$Y-0001"

test_expect_success 'the last answer before the loop brake says so; then silence' '
	set_conf policy loop_answers 2 &&
	ack=$(sent_to alice@example.net) && mid=$(mail_header "$ack" Message-ID) &&
	for i in 1 2 3; do
		printf "Note %s from an autoresponder.\n" "$i" |
			write_mail "$TMP/l$i.eml" "From: bot@robots.example" "In-Reply-To: $mid" \
				"Subject: Re: [$E1] unsigned request" "Message-ID: <l$i@robots.example>" &&
		snap && deliver_ok "$TMP/l$i.eml" -f bot@robots.example -r "request+$E1@example.org" &&
		new_mails >"$TMP/new$i"
	done &&
	mail_body "$(cat "$TMP/new1")" >"$TMP/a1" && mail_body "$(cat "$TMP/new2")" >"$TMP/a2" &&
	expect_no_match "This is the last answer" "$TMP/a1" &&
	tr "\n" " " <"$TMP/a2" | grep -Eq "This is the last answer to your address for 24 +hours" &&
	expect_eq "" "$(cat "$TMP/new3")" &&
	expect_match "\"event\":\"loop-brake\"" "$INST/audit.log"
'

test_expect_success 'a good signature on mail to an entry requested unsigned: the key has no role, said' '
	clearsigned_mail "$TMP/s1.eml" alice "$AFPR" "$E1: Version 2.4.2 is affected too." \
		"From: Alice <alice@example.net>" "Subject: Re: [$E1] more" "Message-ID: <s1@example.net>" &&
	"$VULNID" -c "$CONF" keys import "$TMP/alice.asc" >/dev/null &&
	snap && deliver_ok "$TMP/s1.eml" -f alice@example.net -r "request+$E1@example.org" &&
	mail_body "$(new_mail_to alice@example.net)" >"$TMP/s1.txt" &&
	tr "\n" " " <"$TMP/s1.txt" | grep -Eq "signed by the OpenPGP key $AFPR, but that key has no +role on $E1" &&
	tr "\n" " " <"$TMP/s1.txt" | grep -Eq "requested without a signature, so no key is its +creator"
'

test_expect_success 'an encrypted request without Embargo: told it is public at once' '
	printf "Content-Type: text/plain; charset=utf-8\n\nProduct: Example Server\n\nEncrypted, not embargoed.\n" >"$TMP/e.inner" &&
	$PGPMAIL encrypt-mime "$TMP/gnupg-alice" "$ROBOT" "$TMP/e.inner" "$TMP/e.eml" \
		"From: Carol <carol@example.net>" "To: request@example.org" "Subject: encrypted" \
		"Message-ID: <e1@example.net>" &&
	snap && deliver_ok "$TMP/e.eml" -f carol@example.net -r request@example.org &&
	expect_eq public "$("$VULNID" -c "$CONF" show "$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1")" --json | json_get "j[\"state\"]")" &&
	mail_body "$(new_mail_to carol@example.net)" >"$TMP/e.txt" &&
	tr "\n" " " <"$TMP/e.txt" | grep -Eq "came encrypted but has no \"Embargo:\" line, so its +entry +is public at once"
'

test_expect_success 'a key attached to an unsigned mail: told it was ignored' '
	$PYTHON - "$TMP/alice.asc" "$TMP/k.eml" <<-"PY" &&
	import sys
	from email.message import EmailMessage
	m = EmailMessage()
	m["From"] = "Dave <dave@example.net>"; m["To"] = "request@example.org"; m["Subject"] = "with my key"
	m["Message-ID"] = "<k1@example.net>"
	m.set_content("Product: Example Server\n\nMy key is attached.\n")
	m.add_attachment(open(sys.argv[1], "rb").read(), maintype="application", subtype="pgp-keys", filename="dave.asc")
	open(sys.argv[2], "wb").write(bytes(m))
	PY
	snap && deliver_ok "$TMP/k.eml" -f dave@example.net -r request@example.org &&
	mail_body "$(new_mail_to dave@example.net)" >"$TMP/k.txt" &&
	tr "\n" " " <"$TMP/k.txt" | grep -Eq "carries an OpenPGP key but is not signed, so the key was +ignored"
'

test_done
