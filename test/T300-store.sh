#!/bin/bash
# T300-store: the database enforces append-only; the audit chain detects tampering
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
for i in 1 2 3; do
	write_mail "$TMP/r$i.eml" "Message-ID: <s$i@example.net>" <<<"Product: S$i"
	deliver_ok "$TMP/r$i.eml"
done
write_mail "$TMP/q.eml" "Auto-Submitted: auto-replied" <<<"away"
deliver_ok "$TMP/q.eml"

# must_refuse SQL: the statement fails with an append-only error
must_refuse() {
	if sqlite3 "$INST/vulnid.db" "PRAGMA recursive_triggers = ON; $1" 2>"$TMP/sqlerr"; then
		fail "allowed: $1"
	fi
	grep -Eq "append-only|immutable" "$TMP/sqlerr" || fail "unexpected error: $(cat "$TMP/sqlerr")"
}

test_expect_success 'records, entries, messages, blobs and audit refuse UPDATE and DELETE' '
	must_refuse "UPDATE records SET body = '\''x'\''" &&
	must_refuse "DELETE FROM records" &&
	must_refuse "UPDATE entries SET digest = '\''x'\''" &&
	must_refuse "DELETE FROM entries WHERE number = 2" &&
	must_refuse "DELETE FROM messages" &&
	must_refuse "UPDATE blobs SET size = 0" &&
	must_refuse "UPDATE audit SET line = '\''{}'\''" &&
	must_refuse "DELETE FROM audit" &&
	must_refuse "DELETE FROM quarantine"
'

test_expect_success 'INSERT OR REPLACE cannot overwrite an entry or a record' '
	must_refuse "INSERT OR REPLACE INTO entries (id, year, number, digest, created, message) SELECT id, year, number, '\''f'\'', created, message FROM entries LIMIT 1" &&
	must_refuse "REPLACE INTO records SELECT * FROM records LIMIT 1"
'

test_expect_success 'an outbox message is immutable, its delivery state is not' '
	must_refuse "UPDATE outbox SET data = x'\''00'\''" &&
	must_refuse "UPDATE outbox SET recipients = '\''[]'\''" &&
	must_refuse "DELETE FROM outbox" &&
	sqlite3 "$INST/vulnid.db" "UPDATE outbox SET attempts = attempts WHERE id = 1"
'

test_expect_success 'everything is still intact' '
	expect_eq 3 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq ok "$(sql "PRAGMA integrity_check")" &&
	"$VULNID" -c "$CONF" audit verify
'

cp "$INST/audit.log" "$TMP/audit.good"

test_expect_success 'audit verify names a line whose bytes were altered' '
	sed "3s/\"ts\":\"2/\"ts\":\"1/" "$TMP/audit.good" >"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "line 3: hash does not match" "$TMP/err"
'

test_expect_success 'audit verify names the place where a line was removed' '
	sed "4d" "$TMP/audit.good" >"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "line 4: does not follow line 3" "$TMP/err"
'

test_expect_success 'audit verify notices reordered lines' '
	{ sed -n "1,2p" "$TMP/audit.good"; sed -n "4p" "$TMP/audit.good"; sed -n "3p" "$TMP/audit.good"; sed -n "5,\$p" "$TMP/audit.good"; } >"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "line 3: does not follow" "$TMP/err"
'

test_expect_success 'audit verify notices a file shorter than the chain, flush repairs it' '
	head -n 5 "$TMP/audit.good" >"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "has 5 lines, the database chain" "$TMP/err" &&
	"$VULNID" -c "$CONF" audit flush &&
	cmp "$TMP/audit.good" "$INST/audit.log" &&
	"$VULNID" -c "$CONF" audit verify
'

test_expect_success 'a torn last line is cut and written again by the next flush' '
	{ cat "$TMP/audit.good"; printf "{\"ts\":\"2026-"; } >"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" &&
	"$VULNID" -c "$CONF" audit flush &&
	cmp "$TMP/audit.good" "$INST/audit.log"
'

test_expect_success 'a forged line appended to the file is detected' '
	cp "$TMP/audit.good" "$INST/audit.log" &&
	last=$(tail -n 1 "$TMP/audit.good" | sed "s/.*\"hash\":\"\\([0-9a-f]*\\)\"}/\\1/") &&
	body="{\"ts\":\"2026-12-03T00:00:00.000Z\",\"event\":\"assigned\",\"id\":\"TEST-$Y-0099\",\"message_id\":null,\"prev\":\"$last\"" &&
	h=$(printf "%s" "$body" | sha256sum | cut -d" " -f1) &&
	printf "%s,\"hash\":\"%s\"}\n" "$body" "$h" >>"$INST/audit.log" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" && expect_match "the database chain" "$TMP/err"
'

test_done
