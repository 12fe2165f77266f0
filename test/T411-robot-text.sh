#!/bin/bash
# T411-robot-text: the robot's own mail as its readers see it: at most 78
# characters a line (but for a token, digest, URL or key that cannot be
# broken), no heading or label over nothing, every token on a line of its
# own, notices to the researcher threaded to the ack, a vendor response
# verified or not in its Subject and first line, the report's files sent
# to the vendor, a stub called a stub, the feed's address.  Every mail is
# read with Python's email package, as a mail program shows it.
. "$(dirname "$0")/test-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
set_conf announce to list@lists.example
Y=$(date -u +%Y)
E1="TEST-$Y-0001"
LONG_LINE="The overflow needs a Host header of more than 65536 bytes; shorter ones are cut by the proxy in front of it, which is why nobody saw this."

# check_text MAIL...: the text part of each mail, as a reader sees it,
# keeps the rules; lines the researcher wrote (in $TMP/own) may be long
check_text() {
	$PYTHON - "$TMP/own" "$@" <<'PY'
import email, email.policy, re, sys
own = set(l.strip() for l in open(sys.argv[1], encoding="utf-8"))
bad = []
for path in sys.argv[2:]:
    m = email.message_from_binary_file(open(path, "rb"), policy=email.policy.default)
    part = m.get_body(("plain",))
    if part is None:
        continue
    lines = part.get_content().split("\n")
    for i, l in enumerate(lines):
        s = l.strip()
        where = "%s line %d: %r" % (m["Subject"], i + 1, l)
        if len(l) > 78 and s not in own:
            words = l.split()
            long = max(words, key=len)
            # an unbreakable token after a short label, nothing else
            if not (len(long) >= 32 and words[-1] == long and len(l) - len(long) <= 20):
                bad.append("too long: " + where)
        if re.match(r"^\s+[A-Za-z][\w-]*( [\w-]+){0,2}:\s*$", l):
            # a label over nothing: no value, nothing indented under it
            ind = len(l) - len(l.lstrip())
            nxt = [x for x in lines[i + 1:] if x.strip()]
            if not nxt or len(nxt[0]) - len(nxt[0].lstrip()) <= ind:
                bad.append("a label over nothing: " + where)
        if re.match(r"^[A-Z][^:]*:$", l):
            nxt = [x for x in lines[i + 1:] if x.strip()]
            if not nxt or nxt[0] == "-- " or re.match(r"^[A-Z][^:]*:$", nxt[0]):
                bad.append("an empty heading: " + where)
        for tok in re.findall(r"\b(?:vulnid_[a-z2-7]{32}|[0-9a-f]{32})\b", l):
            if not re.match(r"^\s*(Token: |token: +)?(vulnid_[a-z2-7]{32}|[0-9a-f]{32})$", l) and "sha256" not in l:
                bad.append("a token inside a sentence: " + where)
if bad:
    sys.exit("\n".join(bad))
PY
}

# the researcher's key, that can sign and encrypt
mkdir -m 700 "$TMP/ga"
G "$TMP/ga" --quick-gen-key "Alice <alice@example.net>" ed25519 sign never 2>/dev/null
AFPR=$(gpg --homedir "$TMP/ga" --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')
G "$TMP/ga" --quick-add-key "$AFPR" cv25519 encr never 2>/dev/null
G "$TMP/ga" --armor --export "$AFPR" >"$TMP/alice.asc"

# R1: a request with a PoC attached and a long line in its description
printf 'print("A" * 70000)\n' >"$TMP/poc.py"
printf 'Vendor: Widget Co <widget.example>\nProduct: Widget Server\nVersion: 2.4.1\n\n%s\n' "$LONG_LINE" \
	>"$TMP/r1.txt"
$PYTHON - "$TMP/r1.txt" "$TMP/poc.py" "$TMP/alice.asc" "$TMP/r1.eml" <<'PY'
import sys
from email.message import EmailMessage
m = EmailMessage()
m["From"] = "Alice <alice@example.net>"
m["To"] = "request@example.org"
m["Subject"] = "Heap overflow in the request parser of Widget Server when the Host header is long"
m["Message-ID"] = "<r1@example.net>"
m.set_content(open(sys.argv[1]).read())
m.add_attachment(open(sys.argv[2], "rb").read(), maintype="text", subtype="x-python", filename="poc.py")
m.add_attachment(open(sys.argv[3], "rb").read(), maintype="application", subtype="pgp-keys", filename="alice.asc")
open(sys.argv[4], "wb").write(bytes(m))
PY
cp "$TMP/r1.txt" "$TMP/own"
deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org
ACK=$(sent_to alice@example.net)
NOTICE=$(sent_to security@widget.example)
VTOKEN=$(mail_body "$NOTICE" | sed -n 's/^ *Token: \(vulnid_[a-z2-7]*\)$/\1/p')

test_expect_success 'the ack, the vendor notice and the announcement keep the rules of text mail' '
	test -n "$NOTICE" && test -n "$VTOKEN" &&
	check_text "$ACK" "$NOTICE" "$(sent_to list@lists.example)"
'

test_expect_success 'the tokens stand on lines of their own, to copy whole' '
	mail_body "$ACK" | grep -Eq "^ +Token: vulnid_[a-z2-7]{32}$" &&
	mail_body "$NOTICE" | grep -Eq "^  Token: $VTOKEN$" &&
	expect_eq 1 "$(mail_body "$NOTICE" | grep -c "$VTOKEN")"
'

test_expect_success 'the vendor notice names no field the report lacks, and keeps its text as written' '
	mail_body "$NOTICE" >"$TMP/nb" &&
	expect_no_match "^  Type:" "$TMP/nb" &&
	expect_no_match "^References:" "$TMP/nb" &&
	grep -qxF "$LONG_LINE" "$TMP/nb"
'

test_expect_success 'the vendor gets the report'\''s files, the key excepted, with their hashes' '
	$PYTHON - "$NOTICE" "$TMP/poc.py" <<-"PY"
	import email, email.policy, hashlib, sys
	m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
	files = {p.get_filename(): p.get_content() for p in m.iter_attachments()}
	poc = open(sys.argv[2], "rb").read()
	got = files.get("poc.py")
	got = got.encode() if isinstance(got, str) else got
	assert got == poc, "poc.py not attached as it came: %r" % files
	assert "alice.asc" not in files, "the researcher key was sent on"
	text = m.get_body(("plain",)).get_content()
	assert hashlib.sha256(poc).hexdigest() in text, "no hash of poc.py"
	assert "poc.py, text/x-python, %d bytes, attached" % len(poc) in text
	PY
'

test_expect_success 'a verified vendor response: said so in its Subject and first line, in the thread' '
	printf "Token: %s\nStatus: confirmed\n\nWe confirm it.\n" "$VTOKEN" |
		write_mail "$TMP/v1.eml" "From: psirt@widget.example" "Subject: Re: [$E1] report" &&
	snap && deliver_ok "$TMP/v1.eml" -f psirt@widget.example -r "request+$E1@example.org" &&
	r=$(new_mail_to alice@example.net) &&
	expect_eq "[$E1] Response from the vendor (verified): confirmed" "$(mail_header "$r" Subject)" &&
	mail_body "$r" | sed -n 3p | grep -q "^the vendor responded to $E1, and the robot verified that" &&
	ackid=$(mail_header "$ACK" Message-ID) &&
	expect_eq "$ackid" "$(mail_header "$r" In-Reply-To)" &&
	expect_eq "<r1@example.net> $ackid" "$(mail_header "$r" References | tr -s " \t" " ")" &&
	check_text "$r"
'

test_expect_success 'an unverified one: said so first, in the Subject and the first line' '
	printf "Status: disputed\n\nNot a bug.\n" |
		write_mail "$TMP/v2.eml" "From: intern@widget.example" "Subject: Re: [$E1] report" &&
	snap && deliver_ok "$TMP/v2.eml" -f intern@widget.example -r "request+$E1@example.org" &&
	r=$(new_mail_to alice@example.net) &&
	expect_eq "[$E1] Unverified response, said to be the vendor'\''s: disputed" "$(mail_header "$r" Subject)" &&
	mail_body "$r" | sed -n 3p | grep -q "^someone responded to $E1 as the vendor, but the robot could not" &&
	expect_eq "$(mail_header "$ACK" Message-ID)" "$(mail_header "$r" In-Reply-To)" &&
	check_text "$r"
'

test_expect_success 'answers to commands, lookups, help, key and errors keep the rules too' '
	printf "subscribe %s\nlookup %s\n" "$E1" "$E1" | write_mail "$TMP/c.eml" "From: bob@example.com" &&
	deliver_ok "$TMP/c.eml" -f bob@example.com -r request@example.org &&
	echo help | write_mail "$TMP/h.eml" "From: carol@example.com" && deliver_ok "$TMP/h.eml" -f carol@example.com &&
	echo key | write_mail "$TMP/k.eml" "From: dan@example.com" && deliver_ok "$TMP/k.eml" -f dan@example.com &&
	echo "Embargo: someday" | write_mail "$TMP/e.eml" "From: erin@example.com" &&
	deliver_ok "$TMP/e.eml" -f erin@example.com &&
	check_text "$(sent_to bob@example.com)" "$(sent_to carol@example.com)" "$(sent_to dan@example.com)" \
		"$(sent_to erin@example.com)"
'

test_expect_success 'files too large for the mail are listed with their hashes, not attached' '
	head -c 5000000 /dev/zero | tr "\0" "A" >"$TMP/big.bin" &&
	$PYTHON - "$TMP/big.bin" "$TMP/r2.eml" <<-"PY" &&
	import sys
	from email.message import EmailMessage
	m = EmailMessage()
	m["From"] = "alice@example.net"; m["To"] = "request@example.org"; m["Subject"] = "Crash dump"
	m.set_content("Vendor: Widget Co <widget.example>\n\nThe dump is attached.\n")
	m.add_attachment(open(sys.argv[1], "rb").read(), maintype="application", subtype="octet-stream", filename="core.bin")
	open(sys.argv[2], "wb").write(bytes(m))
	PY
	snap && deliver_ok "$TMP/r2.eml" -f alice@example.net -r request@example.org &&
	n=$(new_mail_to security@widget.example) &&
	mail_body "$n" >"$TMP/n2" &&
	expect_match "core.bin, application/octet-stream, 5000000 bytes, not attached:" "$TMP/n2" &&
	expect_match "sha256 $(sha256sum "$TMP/big.bin" | cut -d" " -f1)" "$TMP/n2" &&
	expect_match "too large to attach; reply to this mail to ask for it" "$TMP/n2" &&
	expect_eq text/plain "$(mail_header "$n" Content-Type | cut -d";" -f1)"
'

test_expect_success 'an embargo told as a stub: the vendor is told what it is, the researcher too' '
	printf "Vendor: Widget Co <widget.example>\nEmbargo: 2099-01-01\n\nSecret details.\n" >"$TMP/e1.txt" &&
	$PGPMAIL with-keys "$TMP/ga" "$AFPR" "$TMP/e1.txt" "$TMP/e1.eml" "$TMP/alice.asc" -- \
		"From: Alice <alice@example.net>" "To: request@example.org" "Subject: embargoed" \
		"Message-ID: <e1@example.net>" &&
	snap && deliver_ok "$TMP/e1.eml" -f alice@example.net -r request@example.org &&
	n=$(new_mail_to security@widget.example) &&
	mail_body "$n" | grep -q "This notice is all you get now" &&
	check_text "$n" &&
	a=$(new_mail_to alice@example.net) &&
	"$VULNID" -c "$CONF" key export >"$TMP/robot.asc" &&
	G "$TMP/ga" --import "$TMP/robot.asc" 2>/dev/null &&
	$PGPMAIL decrypt "$a" "$TMP/ga" "$TMP/ea.eml" &&
	mail_body "$TMP/ea.eml" >"$TMP/ea.txt" &&
	tr "\n" " " <"$TMP/ea.txt" | grep -Eq "the vendor was told only that a report exists" &&
	expect_no_match "security contact was notified" "$TMP/ea.txt"
'

test_expect_success 'the ack names the feed'\''s address when the archive'\''s is configured' '
	expect_no_match "The feed is published" "$TMP/ea.txt" &&
	set_conf export base_url https://vulnid.example.org/archive &&
	echo "Product: p" | write_mail "$TMP/f.eml" "From: frank@example.com" "Subject: feed address" &&
	snap && deliver_ok "$TMP/f.eml" -f frank@example.com -r request@example.org &&
	a=$(new_mail_to frank@example.com) && mail_body "$a" >"$TMP/fa.txt" &&
	tr "\n" " " <"$TMP/fa.txt" | grep -Eq "The feed is published at +https://vulnid.example.org/archive/feed/" &&
	tr "\n" " " <"$TMP/fa.txt" | grep -Eq "https://vulnid.example.org/archive/verify.html +says how" &&
	check_text "$a"
'

test_done
