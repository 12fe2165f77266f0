#!/bin/bash
# T441-fast-bounce: a bounce that is recorded before the sender records the
# server's "250" is not overwritten by it.  Reproduced deterministically: a
# server that, before it answers the end of the vendor notification's DATA,
# runs vulnid-filter on a DSN for it and waits for it to finish.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
ID="TEST-$Y-0001"
set_conf delivery transport "smtp://127.0.0.1:$(free_port)"
SRV_PORT=$(sed -n 's|^transport = smtp://127.0.0.1:||p' "$CONF")
set_conf delivery starttls no
set_conf delivery timeout 10
set_conf delivery filter_budget 20
# The bounce: the relay rewrote psirt@ to the vendor's internal address,
# which the researcher must never see.
start_server srv --bounce psirt@widget.example --final-recipient secteam@corp.widget.internal \
	--bounce-cmd "'$FILTER' -c '$CONF' -f '' -r \"\$VERP\" <\"\$DSN\"; echo \$? >>'$TMP/bounce.status'"

test_expect_success 'setup: a request names the vendor; the relay bounces the notification at once' '
	"$VULNID" -c "$CONF" vendor add "Widget Co" --contact psirt@widget.example >/dev/null &&
	write_mail "$TMP/r.eml" "Message-ID: <fast1@example.net>" "Subject: SQLi in Widget" <<-MAIL &&
	Vendor: Widget Co
	Product: Widget
	Vendor-Contact: psirt@widget.example

	The search box is injectable.
	MAIL
	deliver_ok "$TMP/r.eml" &&
	expect_eq 0 "$(cat "$TMP/bounce.status")" "the bounce filter, run inside the session" &&
	expect_eq 1 "$(srv_count_to psirt@widget.example)" "notifications the relay took"
'

test_expect_success 'the bounce came first, and the later "250" did not make the item delivered' '
	n=$(sql "SELECT id FROM outbox WHERE kind = '\''vendor-notify'\''") &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $n")" &&
	expect_eq "failed" "$(sql "SELECT status FROM outbox_recipients WHERE outbox = $n")" &&
	sql "SELECT last_error FROM outbox WHERE id = $n" | grep -q "^5.1.1 550 5.1.1 <secteam@corp.widget.internal>" &&
	expect_eq 1 "$(sql "SELECT attempts FROM outbox WHERE id = $n")" &&
	expect_eq "" "$(sql "SELECT claim_until FROM outbox WHERE id = $n")" "the claim ends with the outcome" &&
	grep "\"outbox\":$n," "$INST/audit.log" | grep -o "\"event\":\"[a-z-]*\"" | tr "\n" " " >"$TMP/events" &&
	expect_eq "\"event\":\"queued\" \"event\":\"bounced\" \"event\":\"failure-notice\" \"event\":\"failed\" " "$(cat "$TMP/events")" &&
	expect_match "\"event\":\"failed\".*\"outbox\":$n,.*\"settled_before\":\"psirt@widget.example\"" "$INST/audit.log" &&
	expect_no_match "\"event\":\"delivered\".*\"outbox\":$n," "$INST/audit.log"
'

test_expect_success 'vulnid queue list shows the failure' '
	"$VULNID" -c "$CONF" queue list >"$TMP/list" &&
	expect_match "^$(sql "SELECT id FROM outbox WHERE kind = '\''vendor-notify'\''")  .*  failed  +vendor-notify .*5.1.1" "$TMP/list"
'

test_expect_success 'the researcher is told once, under the address they gave, never the rewritten one' '
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''notify-failed'\''")" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE kind = '\''notify-failed'\''")" &&
	expect_eq 2 "$(srv_count_to alice@example.net)" "the ack and the notice" &&
	f=$(srv_mails_to alice@example.net | xargs grep -l "could not be notified") &&
	expect_eq "[$ID] The vendor could not be notified" "$(mail_header "$f" Subject)" &&
	mail_body "$f" >"$TMP/notice" &&
	expect_match "^  psirt@widget.example: 5.1.1 550 5.1.1 <psirt@widget.example>: Recipient address rejected$" "$TMP/notice" &&
	expect_no_match "secteam|corp.widget.internal" "$TMP/notice" &&
	expect_match "\"event\":\"bounced\".*\"recipient\":\"secteam@corp.widget.internal\".*\"original_recipient\":\"psirt@widget.example\"" "$INST/audit.log" &&
	expect_match "\"event\":\"failure-notice\".*\"failed\":\"psirt@widget.example\",\"to\":\"alice@example.net\"" "$INST/audit.log"
'

test_expect_success 'queue runs afterwards change nothing and tell nobody again' '
	"$VULNID" -c "$CONF" queue run --force >/dev/null &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''notify-failed'\''")" &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE kind = '\''vendor-notify'\''")" &&
	expect_eq 1 "$(srv_count_to psirt@widget.example)" &&
	"$VULNID" -c "$CONF" audit verify
'

test_expect_success 'the database refuses to turn a failed recipient into a delivered one' '
	n=$(sql "SELECT id FROM outbox WHERE kind = '\''vendor-notify'\''") &&
	! sql "UPDATE outbox_recipients SET status = '\''delivered'\'' WHERE outbox = $n" 2>"$TMP/err" &&
	expect_match "delivery outcomes only move forward" "$TMP/err"
'

test_done
