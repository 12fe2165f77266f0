#!/bin/bash
# T181-rate-buckets: the rate limits count per minute (rate_counts, kept in
# the transaction of each mail), so that a check reads at most 61 minutes of
# one key whatever the hour holds.  The minute that holds "an hour ago"
# counts whole: a limit still holds for any 3600 s, and a sender is free
# again from the next minute on.  vulnid tick removes the minutes older than
# two hours; an older database gets the counters of its last two hours when
# it is upgraded, so that no limit starts from zero.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 2
set_conf lifecycle rate_additions_per_hour 2

# at TIME N [FROM]: request N at TIME; prints its disposition
at() {
	printf "Product: P%s\n" "$2" | write_mail "$TMP/b$2.eml" "Message-ID: <b$2@example.net>" "From: ${3:-flood@example.net}" &&
	VULNID_TEST_NOW=$1 "$FILTER" -c "$CONF" <"$TMP/b$2.eml" 2>"$TMP/.err" || fail "filter: $(cat "$TMP/.err")"
	sql "SELECT disposition FROM messages WHERE message_id = 'b$2@example.net'"
}

test_expect_success 'two requests at 10:00:10 and 10:00:50 fill the hour' '
	expect_eq request "$(at 2031-06-01T10:00:10Z 1)" &&
	expect_eq request "$(at 2031-06-01T10:00:50Z 2)" &&
	expect_eq quarantined "$(at 2031-06-01T10:30:00Z 3)" &&
	expect_eq "sender|flood@example.net|2031-06-01T10:00|request|2" \
		"$(sql "SELECT kind, value, minute, class, n FROM rate_counts WHERE kind = '\''sender'\''")"
'

test_expect_success 'an hour later the minute of 10:00 still counts whole; from 11:01 the sender is free' '
	expect_eq quarantined "$(at 2031-06-01T11:00:30Z 4)" &&
	expect_eq request "$(at 2031-06-01T11:01:00Z 5)"
'

test_expect_success 'the wider keys count requests and additions together, the sender apart' '
	id=$(sql "SELECT id FROM entries ORDER BY number LIMIT 1") &&
	printf "Version: 2\n" | write_mail "$TMP/add.eml" "Message-ID: <add@example.net>" "From: flood@example.net" &&
	VULNID_TEST_NOW=2031-06-01T11:02:00Z "$FILTER" -c "$CONF" -r "request+$id@example.org" <"$TMP/add.eml" &&
	expect_eq entry "$(sql "SELECT disposition FROM messages WHERE message_id = '\''add@example.net'\''")" &&
	expect_eq "1 1" "$(sql "SELECT n FROM rate_counts WHERE minute = '\''2031-06-01T11:02'\'' AND kind IN ('\''sender'\'', '\''everyone'\'') ORDER BY kind" | tr "\n" " " | sed "s/ $//")" &&
	expect_eq "2" "$(sql "SELECT sum(n) FROM rate_counts WHERE kind = '\''everyone'\'' AND minute >= '\''2031-06-01T11:01'\''")"
'

test_expect_success 'vulnid tick removes the minutes older than two hours' '
	before=$(sql "SELECT count(*) FROM rate_counts WHERE minute < '\''2031-06-01T11:00'\''") &&
	test "$before" -gt 0 &&
	VULNID_TEST_NOW=2031-06-01T13:01:30Z "$VULNID" -c "$CONF" tick >/dev/null &&
	expect_eq 0 "$(sql "SELECT count(*) FROM rate_counts WHERE minute < '\''2031-06-01T11:01'\''")" &&
	test "$(sql "SELECT count(*) FROM rate_counts WHERE minute >= '\''2031-06-01T11:01'\''")" -gt 0
'

# The database as the vulnid before the counters left it (what their
# migration adds taken away again); its messages of the last hour must
# count after the upgrade.
make_instance old
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 2
test_expect_success 'upgrade: the messages of the last two hours become counters' '
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ) &&
	for i in 21 22; do
		printf "Product: P%s\n" $i | write_mail "$TMP/u$i.eml" "Message-ID: <u$i@example.net>" "From: early@example.net" &&
		deliver_ok "$TMP/u$i.eml" || return 1
	done &&
	sql "DROP TRIGGER messages_rate_counts; DROP TRIGGER signatures_rate_counts; DROP TABLE rate_counts;
	     DROP INDEX outbox_pending; DROP INDEX outbox_claims; DROP INDEX messages_from_body;
	     DROP INDEX mail_ledger_suspect; DROP INDEX tokens_entry; DROP INDEX entries_embargoed;
	     DROP TABLE withheld_attachments; DROP TABLE answer_bytes;
	     DROP TABLE endorsements; DROP TABLE hashcash_spent;
	     PRAGMA user_version = 8;" &&
	printf "Product: P23\n" | write_mail "$TMP/u23.eml" "Message-ID: <u23@example.net>" "From: early@example.net" &&
	deliver_ok "$TMP/u23.eml" &&
	expect_eq "$(schema_version)" "$(sql "PRAGMA user_version")" &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''u23@example.net'\''")" &&
	expect_eq 2 "$(sql "SELECT sum(n) FROM rate_counts WHERE kind = '\''sender'\'' AND value = '\''early@example.net'\''")"
'

test_done
