#!/bin/bash
# T150-auto-reply: automatic mail is archived and quarantined, never answered
. "$(dirname "$0")/test-lib.sh"

make_instance inst
n=0

# check_auto NAME FILE [filter options]
check_auto() {
	local before_sent before_q
	before_sent=$(sent_count)
	before_q=$(sql "SELECT count(*) FROM quarantine")
	deliver "$@"
	expect_eq 0 "$rc" "exit status" &&
	expect_eq "$before_sent" "$(sent_count)" "mails sent" &&
	expect_eq $((before_q + 1)) "$(sql "SELECT count(*) FROM quarantine")" "quarantined" &&
	expect_eq automatic "$(sql "SELECT reason FROM quarantine ORDER BY id DESC LIMIT 1")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM entries")" "entries"
}

test_expect_success 'an empty envelope sender is never answered' '
	write_mail "$TMP/a1.eml" "Message-ID: <a1@example.net>" <<<"hello" &&
	check_auto "$TMP/a1.eml" -f ""
'

test_expect_success 'mail from MAILER-DAEMON is never answered' '
	write_mail "$TMP/a2.eml" "From: Mail Delivery System <MAILER-DAEMON@mx.example.net>" <<<"Undelivered" &&
	check_auto "$TMP/a2.eml" -f MAILER-DAEMON@mx.example.net
'

test_expect_success 'mail from postmaster is never answered' '
	write_mail "$TMP/a3.eml" "From: postmaster@example.net" <<<"note" &&
	check_auto "$TMP/a3.eml"
'

test_expect_success 'Auto-Submitted: auto-replied (vacation) is never answered' '
	write_mail "$TMP/a4.eml" "Auto-Submitted: auto-replied (vacation)" <<<"I am away" &&
	check_auto "$TMP/a4.eml"
'

test_expect_success 'Precedence: bulk, junk and list are never answered' '
	for p in bulk JUNK list; do
		write_mail "$TMP/p$p.eml" "Precedence: $p" <<<"x" && check_auto "$TMP/p$p.eml" || return 1
	done
'

test_expect_success 'our own X-Loop is never answered' '
	write_mail "$TMP/a5.eml" "X-Loop: request@example.org" <<<"loop" &&
	check_auto "$TMP/a5.eml"
'

test_expect_success 'mailing-list traffic (List-Id) is never answered' '
	write_mail "$TMP/a6.eml" "List-Id: <dev.lists.example.net>" <<<"post" &&
	check_auto "$TMP/a6.eml"
'

test_expect_success 'the quarantine tells why, and keeps the raw mail' '
	"$VULNID" -c "$CONF" quarantine list >"$TMP/ql" &&
	expect_eq 9 "$(wc -l <"$TMP/ql")" &&
	"$VULNID" -c "$CONF" quarantine show 1 >"$TMP/qs" &&
	expect_match "^reason: +automatic$" "$TMP/qs" &&
	expect_match "empty envelope sender" "$TMP/qs" &&
	"$VULNID" -c "$CONF" quarantine show 1 --raw >"$TMP/raw" &&
	cmp "$TMP/a1.eml" "$TMP/raw" &&
	"$VULNID" -c "$CONF" quarantine list --json | json_get "j[0][\"reason\"]" | grep -qx automatic
'

test_expect_success 'Auto-Submitted: no is an ordinary request' '
	write_mail "$TMP/ok.eml" "Auto-Submitted: no" <<<"Product: fine" &&
	deliver_ok "$TMP/ok.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 1 "$(sent_count)"
'

test_done
