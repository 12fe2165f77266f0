#!/bin/bash
# T570-token-shape: tokens are removed by their shape, with no budget.
# Tokens were scrubbed by looking up hex runs, 200 lookups a mail: a vendor
# who top-posted 25 commit ids (nine lookups each) above the quoted
# notice published its token, in the records, the feed and the response
# relayed to the researcher; "withdraw please TOKEN" and "rate N TOKEN"
# were recorded and quoted in the answer.  Now every token-shaped string
# goes, in every field, text, Subject, attachment name, command argument
# and quoted line, before anything is recorded, relayed or answered; tokens
# of the old shape (an instance from before) keep working and go as well,
# however many hex digits surround them.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf crypto sign none
V() { "$VULNID" -c "$CONF" "$@"; }
# a token of either shape in a mail (the old one: on the code before)
TOK='vulnid_[a-z2-7]{32}|[0-9a-f]{32}'
token_in() { mail_body "$1" | grep -Eio "token:? +($TOK)" | head -n 1 | grep -Eo "$TOK"; }
# commits N: N commit ids, one a line, as "git log --oneline" prints them
commits() { seq "$1" | sha1sum_lines; }
sha1sum_lines() { while read -r i; do printf '%s fix %s\n' "$(printf %s "$i" | sha1sum | cut -c1-40)" "$i"; done; }
# nowhere SECRET...: in no public surface, no record, no mail but those to
# whom they were sent (none here: all were checked before they were quoted)
surfaces() {
	V show "$E" && V show "$E" --json && V list &&
	V export feed "$TMP/feed" >/dev/null && cat "$TMP/feed"/*.jsonl &&
	V export mbox "$TMP/m.mbox" >/dev/null && cat "$TMP/m.mbox" &&
	V export html "$TMP/html" >/dev/null && find "$TMP/html" -type f -exec cat {} + &&
	V quarantine list &&
	sql "SELECT subject, fields, body FROM records; SELECT filename FROM attachments; SELECT subject FROM messages;
	     SELECT detail FROM quarantine; SELECT line FROM audit"
}
nowhere() {
	local s
	surfaces >"$TMP/all" 2>&1 || fail "cannot collect the surfaces"
	for s in "$@"; do
		! grep -qiF -- "$s" "$TMP/all" || fail "the secret $s is published"
	done
}
# mails_since: the mails the robot wrote after snap, decoded, in one file
mails_since() {
	local f
	for f in $(new_mails); do
		mail_header "$f" Subject
		$PYTHON -c 'import email, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
for p in m.walk():
    if not p.is_multipart():
        print((p.get_payload(decode=True) or b"").decode("utf-8", "replace"))' "$f"
	done
}

V vendor add "Widget Co" --domain widget.example --contact psirt@widget.example >/dev/null
printf 'Vendor: Widget Co\nProduct: Widget\n\nA use after free.\n' |
	write_mail "$TMP/r.eml" "From: Alice <alice@example.net>" "Subject: UAF in Widget"
deliver_ok "$TMP/r.eml" -f alice@example.net -r request@example.org
E=$(sql "SELECT id FROM entries")
TC=$(token_in "$(sent_to alice@example.net)")
TV=$(token_in "$(sent_to psirt@widget.example)")

test_expect_success 'setup: tokens of the documented shape, with a checksum' '
	test -n "$E" && test -n "$TC" && test -n "$TV" &&
	echo "$TC $TV" | grep -Eq "^vulnid_[a-z2-7]{32} vulnid_[a-z2-7]{32}$"
'

test_expect_success 'the vendor top-posts 200 commit ids above the quoted notice with its token' '
	{ printf "Token: %s\nStatus: fixed\n\nFixed in these commits:\n\n" "$TV"; commits 200
	  printf "\nOn Mon, vulnid wrote:\n> Your response token is %s: keep the line\n> Token: %s\n" "$TV" "$TV"; } |
		write_mail "$TMP/v.eml" "From: psirt@widget.example" "Subject: Re: [$E] fixed, token $TV" &&
	snap && deliver_ok "$TMP/v.eml" -f psirt@widget.example -r "request+$E@example.org" &&
	V show "$E" >"$TMP/show" && expect_match "^  Status: fixed$" "$TMP/show" &&
	mails_since >"$TMP/relayed" && grep -q "Fixed in these commits" "$TMP/relayed" &&
	! grep -qiF "$TV" "$TMP/relayed" &&
	expect_eq 200 "$(grep -cE "^    [0-9a-f]{40} fix" "$TMP/show")" &&
	nowhere "$TV" "$TC"
'

test_expect_success 'the researcher quotes the ack, her token glued, below 300 commit ids' '
	{ printf "Token: %s\n\nAlso in the backports:\n" "$TC"; commits 300
	  printf "mytoken=%s.\n\n> token: %s\n" "$TC" "$TC"; } |
		write_mail "$TMP/a.eml" "From: alice@example.net" "Subject: Re: [$E] backports" &&
	snap && deliver_ok "$TMP/a.eml" -f alice@example.net -r "request+$E@example.org" &&
	V show "$E" >"$TMP/show" && expect_match "^    mytoken=\[token removed\]\.$" "$TMP/show" &&
	mails_since >"$TMP/answered" && ! grep -qiF "$TC" "$TMP/answered" &&
	nowhere "$TC"
'

test_expect_success 'command arguments: withdraw please TOKEN, rate N TOKEN, alias X-TOKEN' '
	printf "Token: %s\nrate 3 %s\nwithdraw please %s\nalias GHSA-%s\n" "$TC" "$TC" "$TC" "$TC" |
		write_mail "$TMP/w.eml" "From: alice@example.net" "Subject: Re: [$E] withdraw" &&
	snap && deliver_ok "$TMP/w.eml" -f alice@example.net -r "request+$E@example.org" &&
	V show "$E" >"$TMP/show" && expect_match "^  Withdrawn: please \[token removed\]$" "$TMP/show" &&
	expect_match "^  Rating-Reason: \[token removed\]$" "$TMP/show" &&
	mails_since >"$TMP/w.out" && ! grep -qiF "$TC" "$TMP/w.out" &&
	grep -q "withdraw please \[token removed\]" "$TMP/w.out" &&
	nowhere "$TC" &&
	printf "rate 1 %s\n" "$TV" | write_mail "$TMP/r2.eml" "From: bob@example.com" "Subject: Re: [$E] rating" &&
	snap && deliver_ok "$TMP/r2.eml" -f bob@example.com -r "request+$E@example.org" &&
	mails_since >"$TMP/r2.out" && ! grep -qiF "$TV" "$TMP/r2.out" && nowhere "$TV"
'

test_expect_success 'Subject, attachment name, a wrong checksum, a quarantined mail: all token-shaped strings go' '
	fake=vulnid_$(printf "%s" "${TC#vulnid_}" | tr "a-y" "b-z") &&
	{ printf "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\nFrom: carol@example.org\n"
	  printf "To: request+%s@example.org\nSubject: see %s and %s\nMessage-ID: <%s@example.org>\n\n" "$E" "$TV" "$fake" "$TC"
	  printf -- "--b\nContent-Type: text/plain\n\nA note, and %s.\n" "$(echo "$TV" | tr a-z A-Z)"
	  printf -- "--b\nContent-Type: text/plain\nContent-Disposition: attachment; filename=%s.txt\n\nx\n--b--\n" "$TV"; } >"$TMP/s.eml" &&
	snap && deliver_ok "$TMP/s.eml" -f carol@example.org -r "request+$E@example.org" &&
	printf "MIME-Version: 1.0\nContent-Type: multipart/mixed\nFrom: dave@example.org\nSubject: broken %s\n\nno boundary\n" "$TC" >"$TMP/q.eml" &&
	deliver_ok "$TMP/q.eml" -f dave@example.org -r request@example.org &&
	expect_eq 1 "$(sql "SELECT count(*) FROM quarantine")" &&
	mails_since >"$TMP/s.out" && ! grep -qiE "$TV|$TC|$fake" "$TMP/s.out" &&
	nowhere "$TV" "$TC" "$fake" "$(echo "$TV" | tr a-z A-Z)"
'

test_expect_success 'the old shape: a token issued before still acts, and still goes among 200 commit ids' '
	old=0123456789abcdef0f1e2d3c4b5a6978 &&
	sql "INSERT INTO tokens (sha256, entry, role, address, created) VALUES
		('\''$(printf %s "$old" | sha256sum | cut -c1-64)'\'', '\''$E'\'', '\''vendor'\'', '\''psirt@widget.example'\'', '\''2025-01-01T00:00:00Z'\'')" &&
	{ printf "Token: %s\nStatus: confirmed\n\nStill fixed by:\n" "$(echo "$old" | tr a-f A-F)"; commits 200
	  printf "commit deadbeef%s\n> Token: %s\n" "$old" "$old"; } |
		write_mail "$TMP/o.eml" "From: psirt@widget.example" "Subject: Re: [$E] still fixed" &&
	snap && deliver_ok "$TMP/o.eml" -f psirt@widget.example -r "request+$E@example.org" &&
	V show "$E" >"$TMP/show" &&
	expect_match "vendor-response by vendor, verified by token" "$TMP/show" &&
	expect_match "^    commit deadbeef\[token removed\]$" "$TMP/show" &&
	mails_since >"$TMP/o.out" && ! grep -qiF "$old" "$TMP/o.out" &&
	nowhere "$old"
'

test_done
