#!/bin/bash
# T940-header-words: a value that came from a mail (Subject, Title, a
# name) reaches the header of the robot's mail decoded, cleaned of control
# and bidi characters, and encoded once: an RFC 2047 encoded word in a
# Title is never passed through, so it cannot decode to CR LF, a new
# header or a bidi override at the recipient (checked with Python's
# email package as the recipient).
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
b64() { printf "%s" "$1" | base64 -w0; }

# subject_of_ack TITLE: the Subject of the ack, as the recipient decodes it
ack_subject() {
	local f
	write_mail "$TMP/t.eml" "Message-ID: <t940-$(date +%s%N)@example.net>" <<<"Title: $1" &&
	snap && deliver_ok "$TMP/t.eml" -f alice@example.net &&
	f=$(new_mail_to alice@example.net) &&
	cp "$f" "$TMP/ack.eml" &&
	$PYTHON - "$f" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
s = str(m["Subject"])
bad = [c for c in s if ord(c) < 0x20 or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
if bad or len(m.get_all("Bcc") or []) or len(m.get_all("Subject")) != 1:
    sys.exit("unsafe: %r" % s)
print(s)
PY
}

test_expect_success 'an encoded word with CR LF and Bcc: decoded once, one line, no Bcc' '
	s=$(ack_subject "=?utf-8?b?$(b64 $'"'"'x\r\nBcc: victim@example.com\r\n'"'"')?=") &&
	expect_eq "[TEST-$(date -u +%Y)-0001] x Bcc: victim@example.com" "$s" &&
	! grep -qi "^Bcc:" "$TMP/ack.eml"
'

test_expect_success 'a bidi override in an encoded word is removed' '
	s=$(ack_subject "=?utf-8?b?$(b64 $'"'"'safe\u202etxt.exe'"'"')?=") &&
	expect_match "safe txt.exe$" <(echo "$s")
'

test_expect_success 'an encoded word inside an encoded word is decoded too, never sent on as one' '
	inner="=?utf-8?b?$(b64 $'"'"'\r\nBcc: x@example.com'"'"')?=" &&
	s=$(ack_subject "=?utf-8?b?$(b64 "$inner")?=") &&
	expect_match "Bcc: x@example.com$" <(echo "$s")
'

test_expect_success 'what still looks like an encoded word is encoded by the robot and reads as text' '
	s=$(ack_subject "=?utf-8?x?DQo=?= tail") &&
	expect_match "\] =\?utf-8\?x\?DQo=\?= tail$" <(echo "$s") &&
	expect_no_match "^Subject:.*=\?utf-8\?x" "$TMP/ack.eml" &&
	s=$(ack_subject "=?x-unknown?q?=0D=0ABcc:_y@example.com?=") &&
	expect_match "\] Bcc: y@example.com$" <(echo "$s")
'

test_expect_success 'plain UTF-8 and ASCII titles are unchanged' '
	expect_match "^\[TEST-[0-9]+-[0-9]+\] Überlauf in der Anfrage$" <(ack_subject "Überlauf in der Anfrage") &&
	expect_match "^\[TEST-[0-9]+-[0-9]+\] a = \? b$" <(ack_subject "a = ? b")
'

test_done
