#!/bin/bash
# T857-lmtp-smuggling: SMTP smuggling against vulnid-lmtpd.  A client
# (Python's smtplib.LMTP, on the unix socket) sends one DATA whose text
# holds "<LF>.<LF>" followed by a second envelope and mail; a server that
# ends the data at a bare LF took the rest for a second mail, without a
# client address.  The data ends only at <CR><LF>.<CR><LF>: the whole is
# one mail, refused with 550 5.5.2 for its bare line ends (as Postfix's
# smtpd_forbid_bare_newline does), and the session goes on in step.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"

make_instance inst
set_conf crypto sign none
start_lmtpd || exit 1

# smuggle END TAG: one session: LHLO, a mail whose data is a first mail, END
# (a fake end of data), a second envelope and mail, and the real end;
# then NOOP and a plain mail.  Every reply, one a line, in $TMP/replies.
smuggle() {
	$PYTHON - "$INST/lmtp.sock" "$1" "$2" >"$TMP/replies" 2>&1 <<'PY'
import smtplib, sys
sock, end, tag = sys.argv[1], sys.argv[2].encode().decode("unicode_escape").encode(), sys.argv[3]
s = smtplib.LMTP(sock)
s.ehlo("mx.example.net")
s.mail("researcher@example.net")
s.rcpt("request@example.org")
print(s.docmd("DATA")[0])
s.send(b"From: researcher@example.net\r\nSubject: first\r\nMessage-ID: <first@example.net>\r\n\r\n"
       b"Product: First\r\n" + end +
       b"MAIL FROM:<ceo@example.net>\r\nRCPT TO:<request@example.org>\r\nDATA\r\n"
       b"From: ceo@example.net\r\nSubject: smuggled\r\nMessage-ID: <smuggled@example.net>\r\n\r\n"
       b"Product: Smuggled\r\n\r\nwire the money\r\n.\r\n")
code, msg = s.getreply()
print(code, msg.decode())
print(s.docmd("NOOP")[0])
# the same session still delivers a mail with proper line ends
print(s.sendmail("researcher@example.net", ["request@example.org"],
                 ("From: researcher@example.net\r\nSubject: plain\r\nMessage-ID: <plain%s@example.net>\r\n\r\n"
                  "Product: Plain\r\n" % tag).encode()) or "delivered")
s.quit()
PY
}

n=0
for end in '\n.\n' '\r\n.\n' '\n.\r\n' '\r.\r'; do
	n=$((n + 1))
	test_expect_success "a second mail after \"$end\" inside DATA is no mail; the first is refused" '
		before=$(sql "SELECT count(*) FROM messages") &&
		smuggle "$end" $n &&
		expect_eq 354 "$(sed -n 1p "$TMP/replies")" &&
		expect_match "^550 5\.5\.2 bare <LF> or <CR> in the mail" "$TMP/replies" &&
		expect_eq 250 "$(sed -n 3p "$TMP/replies")" &&
		expect_eq delivered "$(sed -n 4p "$TMP/replies")" &&
		expect_eq $((before + 1)) "$(sql "SELECT count(*) FROM messages")" &&
		expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id IN ('\''smuggled@example.net'\'', '\''first@example.net'\'') OR envelope_from = '\''ceo@example.net'\''")"
	'
done

test_expect_success 'nothing smuggled was recorded or answered: only the plain mails' '
	expect_eq 0 "$(sql "SELECT count(*) FROM entries e JOIN records r ON r.entry = e.id WHERE r.body LIKE '\''%money%'\'' OR r.fields LIKE '\''%Smuggled%'\''")" &&
	expect_eq 4 "$(sql "SELECT count(*) FROM messages WHERE message_id LIKE '\''plain%@example.net'\''")" &&
	expect_eq 4 "$(sql "SELECT count(*) FROM messages")" &&
	wait_until sent_is 4 &&
	! grep -rqi "smuggled\|ceo@example.net" "$INST/sent/new"
'

test_done
