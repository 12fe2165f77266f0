#!/bin/bash
# T112-client-replies: replies to the robot's mail as real clients write
# them: mutt (driven in tmux by test/clients/mutt-reply.sh: it quotes, the user writes
# below the quote) and the shapes of Gmail (top-posted, the attribution
# wrapped onto a second line), Outlook (the mail replied to, unquoted,
# after a separator), Apple Mail (the attribution quoted too) and
# Thunderbird (interleaved), made by test/corpora/clients/shapes.py.
# A reply that quotes never starts an entry, and what it quotes is left
# out of the record (the archived mail keeps it).
. "$(dirname "$0")/test-lib.sh"

SHAPES="$PYTHON $CORPORA/clients/shapes.py"
MUTT_REPLY="$VULNID_SRCDIR/test/clients/mutt-reply.sh"
make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
set_conf announce to list@lists.example
Y=$(date -u +%Y)

echo "Product: Example Server" | write_mail "$TMP/r1.eml" "Subject: Overflow in the parser" \
	"Message-ID: <r1@example.net>"
deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org
E1="TEST-$Y-0001"
ACK=$(sent_to alice@example.net)
TOKEN=$(mail_body "$ACK" | sed -n 's/^ *token: *\(vulnid_[a-z2-7]*\)$/\1/p' | head -n 1)

entries() { sql "SELECT count(*) FROM entries"; }
records() { sql "SELECT count(*) FROM records WHERE entry = '$1'"; }
announced() { sql "SELECT count(*) FROM outbox WHERE kind = 'announce'"; }
# reply_to FILE: deliver a reply as its From sends it to its To
reply_to() {
	local to from
	to=$(mail_header "$1" To | sed 's/.*<\(.*\)>.*/\1/')
	from=$(mail_header "$1" From | sed 's/.*<\(.*\)>.*/\1/')
	snap
	deliver_ok "$1" -f "$from" -r "$to"
}
# body_of ID SEQ: a record's text
body_of() { "$VULNID" -c "$CONF" show "$1" --json | json_get "j[\"records\"][$2 - 1][\"body\"]"; }

test_expect_success 'setup: an entry, its ack and token' '
	test -n "$TOKEN" && expect_eq 1 "$(entries)" && expect_eq 1 "$(announced)"
'

# subscribe ADDRESS: the commands mail and the robot's answer with the token
subscribe() {
	echo "subscribe $E1" | write_mail "$TMP/sub-$1.eml" "From: $1" "Subject: subscribe" \
		"Message-ID: <sub-$1@example.net>"
	deliver_ok "$TMP/sub-$1.eml" -f "$1" -r request@example.org
	CONFIRM=$(sent_to "$1")
	SUBTOKEN=$(mail_body "$CONFIRM" | sed -n 's/^ *Token: *\(vulnid_[a-z2-7]*\)$/\1/p' | head -n 1)
}

subscribe bob@gmail.example

test_expect_success 'the answer that asks to confirm a subscription belongs to the entry' '
	test -n "$SUBTOKEN" &&
	expect_eq "request+$E1@example.org" "$(mail_header "$CONFIRM" Reply-To)" &&
	mail_header "$CONFIRM" Subject | grep -q "^Re: \[$E1\]" &&
	expect_eq "$E1" "$(sql "SELECT entry FROM outbox WHERE message_id = '\''$(mail_header "$CONFIRM" Message-ID | tr -d "<>")'\''")"
'

test_expect_success 'Gmail: the token above the quoted confirmation subscribes; no entry starts' '
	$SHAPES reply gmail "$CONFIRM" "$TMP/g1.eml" --top "Token: $SUBTOKEN" --from "Bob <bob@gmail.example>" &&
	grep -q "^wrote:.\?$" "$TMP/g1.eml" &&
	before=$(records "$E1") &&
	reply_to "$TMP/g1.eml" &&
	expect_eq 1 "$(entries)" "no new entry" &&
	expect_eq 1 "$(announced)" "nothing announced" &&
	expect_eq "$before" "$(records "$E1")" "the quote is no addition" &&
	mail_body "$(new_mail_to bob@gmail.example)" | grep -q "bob@gmail.example is subscribed to $E1"
'

test_expect_success 'mutt: the token under the quoted confirmation subscribes; no entry starts' '
	subscribe carol@example.net &&
	echo "Token: $SUBTOKEN" >"$TMP/t.txt" &&
	"$MUTT_REPLY" "$CONFIRM" "$TMP/t.txt" "$TMP/m1.eml" bottom carol@example.net Carol &&
	grep -q "^> " "$TMP/m1.eml" && tail -n 3 "$TMP/m1.eml" | grep -q "^Token: " &&
	before=$(records "$E1") &&
	reply_to "$TMP/m1.eml" &&
	expect_eq 1 "$(entries)" "no new entry" &&
	expect_eq "$before" "$(records "$E1")" "the quote is no addition" &&
	mail_body "$(new_mail_to carol@example.net)" | grep -q "carol@example.net is subscribed to $E1"
'

test_expect_success 'confirmations of two entries: the answer to the answer is commands, not a request' '
	echo "Product: other" | write_mail "$TMP/r2.eml" "Subject: Second" && deliver_ok "$TMP/r2.eml" -f alice@example.net &&
	E2="TEST-$Y-0002" && n=$(entries) &&
	printf "subscribe %s\nsubscribe %s\n" "$E1" "$E2" | write_mail "$TMP/sub2.eml" "From: dave@example.net" &&
	deliver_ok "$TMP/sub2.eml" -f dave@example.net -r request@example.org &&
	c=$(sent_to dave@example.net) &&
	expect_eq "request@example.org" "$(mail_header "$c" Reply-To)" &&
	toks=$(mail_body "$c" | sed -n "s/^ *Token: *\(vulnid_[a-z2-7]*\)$/Token: \1/p" | sed -z "s/\n/\\\\n/g") &&
	$SHAPES reply gmail "$c" "$TMP/g2.eml" --top "$toks" --from "dave@example.net" &&
	reply_to "$TMP/g2.eml" &&
	expect_eq "$n" "$(entries)" "no new entry" &&
	expect_eq commands "$(sql "SELECT disposition FROM messages ORDER BY id DESC LIMIT 1")" &&
	mail_body "$(new_mail_to dave@example.net)" | grep -q "dave@example.net is subscribed to $E2"
'

test_expect_success 'Gmail: a token-only reply to the ack, attribution wrapped: no record of the quote' '
	$SHAPES reply gmail "$ACK" "$TMP/g3.eml" --top "Token: $TOKEN" &&
	before=$(records "$E1") &&
	reply_to "$TMP/g3.eml" &&
	expect_eq "$before" "$(records "$E1")" &&
	mail_body "$(new_mail_to alice@example.net)" | grep -q "you act as the creator of $E1"
'

test_expect_success 'Outlook, top-posted: only the new text is recorded; the archived mail keeps all' '
	$SHAPES reply outlook "$ACK" "$TMP/o1.eml" --top "Version: 2.4.2\n\nThe same overflow is in 2.4.2." &&
	reply_to "$TMP/o1.eml" &&
	n=$(records "$E1") &&
	expect_eq "The same overflow is in 2.4.2." "$(body_of "$E1" "$n")" &&
	mail_body "$(new_mail_to alice@example.net)" | grep -q "The mail your text quotes was left out of the record" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256
		WHERE m.message_id = '\''$(mail_header "$TMP/o1.eml" Message-ID | tr -d "<>")'\''
		AND instr(b.data, CAST('\''Sent: Monday, January 5'\'' AS BLOB)) > 0")"
'

test_expect_success 'Apple Mail, top-posted with the attribution quoted: only the new text' '
	$SHAPES reply apple "$ACK" "$TMP/a1.eml" --top "Also affected: the 2.3 branch." &&
	reply_to "$TMP/a1.eml" &&
	expect_eq "Also affected: the 2.3 branch." "$(body_of "$E1" "$(records "$E1")")"
'

test_expect_success 'mutt, bottom-posted: the quote is left out, the text under it kept' '
	printf "Version: 2.4.3\n\nAnd 2.4.3 too.\n" >"$TMP/t2.txt" &&
	"$MUTT_REPLY" "$ACK" "$TMP/t2.txt" "$TMP/m2.eml" bottom &&
	reply_to "$TMP/m2.eml" &&
	n=$(records "$E1") &&
	expect_eq "And 2.4.3 too." "$(body_of "$E1" "$n")" &&
	expect_eq "[[\"Version\", \"2.4.3\"]]" "$("$VULNID" -c "$CONF" show "$E1" --json | json_get "j[\"records\"][$n - 1][\"fields\"]")"
'

test_expect_success 'Thunderbird, interleaved: the answers stay, each quote between them is marked' '
	$SHAPES reply thunderbird "$ACK" "$TMP/t1.eml" --bottom "The fix is in 2.5.\n\n> Use the identifier in your advisory\n\nWe will." &&
	reply_to "$TMP/t1.eml" &&
	expect_eq "The fix is in 2.5.

> [...]

We will." "$(body_of "$E1" "$(records "$E1")")"
'

test_done
