#!/bin/bash
# T630-mbox: vulnid export mbox: every public mail, readable by mail clients,
# anonymous researchers' addresses replaced
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

test_expect_success 'the public mails, and only those, are in the mbox' '
	"$VULNID" -c "$CONF" export mbox "$TMP/archive.mbox" >"$TMP/out" &&
	expect_match "5 mails" "$TMP/out" &&
	if command -v formail >/dev/null; then
		expect_eq 5 "$(formail -s echo x <"$TMP/archive.mbox" | wc -l | tr -d " ")"
	fi &&
	expect_eq 5 "$($PYTHON -c "import mailbox, sys; print(len(mailbox.mbox(sys.argv[1])))" "$TMP/archive.mbox")" &&
	expect_eq 5 "$(grep -c "^From " "$TMP/archive.mbox")" &&
	expect_no_match "Buy now|hidden body|Hidden thing" "$TMP/archive.mbox"
'

test_expect_success 'requests, the vendor response and the announcements, oldest first' '
	$PYTHON - "$TMP/archive.mbox" >"$TMP/subjects" <<-"PY" &&
	import mailbox, sys
	for m in mailbox.mbox(sys.argv[1]):
	    print(m["Subject"])
	PY
	expect_eq "Overflow in Foo" "$(sed -n 1p "$TMP/subjects")" &&
	expect_match "^Secret finder$" "$TMP/subjects" &&
	expect_match "^Re: \\[TEST-$Y-0001\\] Overflow in Foo$" "$TMP/subjects" &&
	expect_eq 2 "$(grep -c "TEST-$Y-000[12]" <(grep -v "^Re:" "$TMP/subjects"))"
'

test_expect_success 'From_ lines are quoted as mboxrd' '
	expect_match "^>From the start the parser" "$TMP/archive.mbox" &&
	expect_match "^>>From quoted already" "$TMP/archive.mbox"
'

test_expect_success 'anonymous: address, traces and Message-ID replaced, in every mail' '
	expect_no_match "anon@researcher.example|203.0.113.7|laptop.home.example" "$TMP/archive.mbox" &&
	$PYTHON - "$TMP/archive.mbox" >"$TMP/anon" <<-"PY" &&
	import mailbox, sys
	for m in mailbox.mbox(sys.argv[1]):
	    if m["Subject"] == "Secret finder":
	        print(m["From"], m["Message-ID"], m.get("Received"), m.get("Reply-To"), m.get_from())
	PY
	expect_match "^Anonymous <anonymous@invalid> <TEST-$Y-0002.1.anonymous@example.org> None None anonymous@invalid " "$TMP/anon" &&
	expect_match "Found by anonymous@invalid, of course" "$TMP/archive.mbox" &&
	expect_match "Reported by anonymous@invalid\\?" "$TMP/archive.mbox" &&
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
	expect_eq 5 "$(grep -c "^From " "$TMP/copied.mbox")"
'

test_done
