#!/bin/bash
# T630-mbox: vulnid export mbox: every public record as a mail rendered from
# the public view, readable by mail clients; never the archived mail
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
set_conf announce to list@example.org

request "$TMP/r1.eml" alice@example.net "Overflow in Foo" <<'MAIL'
Vendor: Foo Corp

From the start the parser trusts the length.
>From quoted already.
MAIL
cat >"$TMP/r2.eml" <<'MAIL'
Received: from laptop.home.example (203.0.113.7) by mx.example.net
Return-Path: <anon@researcher.example>
From: Anonymous Researcher <anon@researcher.example>
Reply-To: anon@researcher.example
To: request@example.org
Subject: Secret finder
Message-ID: <12345@laptop.home.example>
Date: Thu, 03 Dec 2026 10:00:00 +0000
X-Originating-IP: 203.0.113.7

Vendor: Bar Inc
Anonymous: yes

Found by anon@researcher.example, of course.
MAIL
deliver_ok "$TMP/r2.eml" -f anon@researcher.example -r request@example.org
request "$TMP/r3.eml" spammer@example.net "Cheap things" <<'MAIL'
Buy now.
MAIL
dbtool add "TEST-$Y-0003" command moderator "" '[["Spam","yes"]]' "" >/dev/null
write_mail "$TMP/v1.eml" "From: security@foo.example" "Subject: Re: [TEST-$Y-0001] Overflow in Foo" <<'MAIL'
Status: confirmed

We confirm. (Reported by anon@researcher.example? No, by Alice.)
MAIL
dbtool add "TEST-$Y-0001" vendor-response vendor security@foo.example '[["Status","confirmed"]]' \
	"We confirm." mail="$TMP/v1.eml" >/dev/null
dbtool sealed "TEST-$Y-0009" "Hidden thing" '[["Vendor","Hidden"]]' "hidden body" 2099-01-01 >/dev/null

test_expect_success 'the public records, and only those, are in the mbox, one mail each' '
	"$VULNID" -c "$CONF" export mbox "$TMP/archive.mbox" >"$TMP/out" &&
	expect_match "3 mails" "$TMP/out" &&
	if command -v formail >/dev/null; then
		expect_eq 3 "$(formail -s echo x <"$TMP/archive.mbox" | wc -l | tr -d " ")"
	fi &&
	expect_eq 3 "$($PYTHON -c "import mailbox, sys; print(len(mailbox.mbox(sys.argv[1])))" "$TMP/archive.mbox")" &&
	expect_eq 3 "$(grep -c "^From " "$TMP/archive.mbox")" &&
	expect_no_match "Buy now|hidden body|Hidden thing" "$TMP/archive.mbox"
'

test_expect_success 'each mail is rendered from its record, in publication order' '
	$PYTHON - "$TMP/archive.mbox" >"$TMP/subjects" <<-"PY" &&
	import mailbox, sys
	for m in mailbox.mbox(sys.argv[1]):
	    print(m["Subject"], "|", m["Message-ID"], "|", m["X-Vulnid-Record"], "|", m["X-Vulnid-Author"])
	PY
	expect_eq "[TEST-$Y-0001] Overflow in Foo | <TEST-$Y-0001.1@example.org> | 1 request | creator, the request that made the entry" \
		"$(sed -n 1p "$TMP/subjects")" &&
	expect_match "^\\[TEST-$Y-0002\\] Secret finder \\| <TEST-$Y-0002.1@example.org> \\| 1 request" "$TMP/subjects" &&
	expect_match "^\\[TEST-$Y-0001\\] Re: TEST-$Y-0001 \\| <TEST-$Y-0001.2@example.org> \\| 2 vendor-response \\| vendor, verified by token$" "$TMP/subjects" &&
	$PYTHON - "$TMP/archive.mbox" "TEST-$Y-0001" "$(sql "SELECT sha256 FROM records WHERE entry = '\''TEST-$Y-0001'\'' AND seq = 2")" <<-"PY"
	import mailbox, sys
	m = [m for m in mailbox.mbox(sys.argv[1]) if m["X-Vulnid-Record"] == "2 vendor-response"][0]
	assert m["X-Vulnid-Entry"] == sys.argv[2] and m["X-Vulnid-SHA256"] == sys.argv[3], m
	assert m["In-Reply-To"] == "<%s.1@example.org>" % sys.argv[2], m["In-Reply-To"]
	body = m.get_payload(decode=True).decode()
	# the record, not the archived mail: its text, never what the mail quoted
	assert body == "Status: confirmed\n\nWe confirm.\n", repr(body)
	PY
'

test_expect_success 'From_ lines are quoted as mboxrd' '
	expect_match "^>From the start the parser" "$TMP/archive.mbox" &&
	expect_match "^>>From quoted already" "$TMP/archive.mbox"
'

test_expect_success 'anonymous: no address, name or trace of the researcher, in any mail' '
	expect_no_match "anon@researcher.example|Anonymous Researcher|203.0.113.7|laptop.home.example" "$TMP/archive.mbox" &&
	$PYTHON - "$TMP/archive.mbox" >"$TMP/anon" <<-"PY" &&
	import mailbox, sys
	for m in mailbox.mbox(sys.argv[1]):
	    if "Secret finder" in m["Subject"]:
	        print(m["From"], m["Message-ID"], m.get("Received"), m.get("Reply-To"), m.get_from())
	PY
	expect_match "^an anonymous researcher <anonymous@invalid> <TEST-$Y-0002.1@example.org> None None anonymous@invalid " "$TMP/anon" &&
	expect_match "Found by \\[the researcher\\], of course" "$TMP/archive.mbox" &&
	expect_match "alice@example.net" "$TMP/archive.mbox"
'

test_expect_success 'mutt reads the mbox (batch, copying every message)' '
	if ! command -v mutt >/dev/null || ! command -v script >/dev/null; then
		echo "# mutt not installed: checked with formail only"; exit 0
	fi
	cat >"$TMP/muttrc" <<-EOF &&
	set mbox_type=mbox
	set folder=$TMP
	set confirmcreate=no
	set confirmappend=no
	set quit=yes
	set wait_key=no
	set auto_tag=yes
	push "<tag-pattern>~A<enter><copy-message>$TMP/copied.mbox<enter><quit>"
	EOF
	# script(1) gives mutt a terminal; its input stays open (a FIFO held
	# by this shell), so that no end of input cuts mutt short.
	mkfifo "$TMP/tty.in" && exec 7<>"$TMP/tty.in" &&
	HOME="$TMP" TERM=xterm timeout 30 script -qec "mutt -n -F $TMP/muttrc -R -f $TMP/archive.mbox" /dev/null \
		<"$TMP/tty.in" >/dev/null 2>&1 &&
	exec 7>&- &&
	expect_eq 3 "$(grep -c "^From " "$TMP/copied.mbox")"
'

test_done
