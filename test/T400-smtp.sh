#!/bin/bash
# T400-smtp: delivery over SMTP with libESMTP to a real server on 127.0.0.1
. "$(dirname "$0")/test-lib.sh"

[ -x "$SMTP_SINK" ] || { test_skip "SMTP delivery" "smtp-sink not installed"; test_done; }

make_instance inst
start_sink sink
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf delivery timeout 5
Y=$(date -u +%Y)

# minutes_from_now N: an RFC 3339 time N minutes ahead, for VULNID_TEST_NOW
minutes_from_now() { date -u -d "+$1 minutes" +%Y-%m-%dT%H:%M:%SZ; }

test_expect_success 'the filter delivers the ack over SMTP at once' '
	write_mail "$TMP/r1.eml" "Message-ID: <smtp1@example.net>" "Subject: over smtp" <<<"Product: S" &&
	deliver_ok "$TMP/r1.eml" &&
	expect_eq 1 "$(sink_count)" &&
	f=$(sink_files) &&
	expect_match "^X-Mail-Args: <request-bounces\+[0-9a-f]{24}@example.org>" "$f" &&
	expect_match "^X-Rcpt-Args: <alice@example.net>" "$f" &&
	expect_match "^X-Helo-Args: example.org" "$f" &&
	sink_message "$f" >"$TMP/m1" &&
	expect_eq "[TEST-$Y-0001] over smtp" "$(mail_header "$TMP/m1" Subject)" &&
	expect_eq "<smtp1@example.net>" "$(mail_header "$TMP/m1" In-Reply-To)" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox")" &&
	expect_eq "$(sql "SELECT envelope_from FROM outbox")" \
		"$(sed -n "s/^X-Mail-Args: <\(.*\)>.*/\1/p" "$f")" &&
	expect_match "\"event\":\"delivered\"" "$INST/audit.log"
'

stop_sink
test_expect_success 'server down: the filter still exits 0 and the mail is deferred' '
	write_mail "$TMP/r2.eml" "Message-ID: <smtp2@example.net>" <<<"Product: Down" &&
	deliver_ok "$TMP/r2.eml" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = 2")" &&
	sql "SELECT last_error FROM outbox WHERE id = 2" | grep -q "127.0.0.1:$SINK_PORT" &&
	expect_match "\"event\":\"deferred\"" "$INST/audit.log"
'

start_sink sink2
test_expect_success 'the backoff holds the mail until its time, then it goes out once' '
	rc=0; out=$("$VULNID" -c "$CONF" queue run 2>"$TMP/run.err") || rc=$?
	expect_eq 75 "$rc" "a queue that holds deferred mail: exit status" &&
	expect_eq "delivered 0, deferred 0, failed 0" "$out" &&
	expect_match "^vulnid: deferred: item 2 \(ack to \[\"alice@example.net\"\], .*1 attempts, next .*\): 127.0.0.1:$SINK_PORT: Connection refused" "$TMP/run.err" &&
	out=$(VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run) &&
	expect_eq "delivered 1, deferred 0, failed 0" "$out" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE id = 2")" &&
	expect_eq 1 "$(sink_count)" &&
	VULNID_TEST_NOW=$(minutes_from_now 10) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq 1 "$(sink_count)" "delivered exactly once"
'

start_sink soft -r RCPT
test_expect_success '4xx: deferred with the server reply, backoff doubling' '
	write_mail "$TMP/r3.eml" "Message-ID: <smtp3@example.net>" <<<"Product: Soft" &&
	deliver_ok "$TMP/r3.eml" &&
	id=$(sql "SELECT max(id) FROM outbox") &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	sql "SELECT last_error FROM outbox WHERE id = $id" | grep -q "^450 " &&
	first=$(sql "SELECT strftime(\"%s\", next_attempt) - strftime(\"%s\", updated) FROM outbox WHERE id = $id") &&
	expect_eq 60 "$first" "first delay" &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null || true
	second=$(sql "SELECT strftime(\"%s\", next_attempt) - strftime(\"%s\", updated) FROM outbox WHERE id = $id") &&
	expect_eq 120 "$second" "second delay" &&
	expect_eq 2 "$(sql "SELECT attempts FROM outbox WHERE id = $id")"
'

test_expect_success 'a deferred mail past its lifetime is given up and audited' '
	id=$(sql "SELECT max(id) FROM outbox") &&
	set_conf delivery lifetime 3600 &&
	rc=0; VULNID_TEST_NOW=$(minutes_from_now 120) "$VULNID" -c "$CONF" queue run >/dev/null || rc=$?
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	expect_match "\"event\":\"failed\".*gave up after 3600 s" "$INST/audit.log" &&
	set_conf delivery lifetime 432000
'

start_sink hard -f RCPT
test_expect_success '5xx: failed at once, audited with the reply' '
	write_mail "$TMP/r4.eml" "Message-ID: <smtp4@example.net>" <<<"Product: Hard" &&
	deliver_ok "$TMP/r4.eml" &&
	id=$(sql "SELECT max(id) FROM outbox") &&
	expect_eq failed "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	sql "SELECT last_error FROM outbox WHERE id = $id" | grep -q "^500 " &&
	expect_match "\"event\":\"failed\".*\"reason\":\"500 " "$INST/audit.log" &&
	"$VULNID" -c "$CONF" queue list | grep -q "failed"
'

start_sink sink3
test_expect_success 'queue retry makes a failed mail due again' '
	id=$(sql "SELECT max(id) FROM outbox") &&
	"$VULNID" -c "$CONF" queue retry "$id" &&
	"$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	expect_match "\"event\":\"retry\"" "$INST/audit.log"
'

start_sink many
test_expect_success 'many queued mails go out over one connection' '
	set_conf delivery filter_budget 0 &&
	for i in 1 2 3 4 5 6; do
		write_mail "$TMP/q$i.eml" "Message-ID: <many$i@example.net>" <<<"Product: M$i" && deliver_ok "$TMP/q$i.eml"
	done &&
	expect_eq 6 "$(sql "SELECT count(*) FROM outbox WHERE status = '\''queued'\''")" &&
	out=$("$VULNID" -c "$CONF" queue run) &&
	expect_eq "delivered 6, deferred 0, failed 0" "$out" &&
	expect_eq 6 "$(sink_count)" &&
	expect_eq 1 "$(sink_sessions)" "SMTP sessions" &&
	set_conf delivery filter_budget 10
'

start_sink notls
test_expect_success 'STARTTLS required but not offered: deferred, with the reason' '
	set_conf delivery starttls required &&
	write_mail "$TMP/r5.eml" "Message-ID: <smtp5@example.net>" <<<"Product: TLS" &&
	deliver_ok "$TMP/r5.eml" &&
	id=$(sql "SELECT max(id) FROM outbox") &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	sql "SELECT last_error FROM outbox WHERE id = $id" | grep -q "does not offer STARTTLS" &&
	expect_eq 0 "$(sink_count)" &&
	set_conf delivery starttls no
'

start_sink auth
test_expect_success 'SMTP AUTH: the password comes from a 0600 file, never the config' '
	printf "s3cret\n" >"$INST/smtp-password" && chmod 644 "$INST/smtp-password" &&
	set_conf delivery smtp_user robot &&
	set_conf delivery smtp_password_file smtp-password &&
	write_mail "$TMP/r6.eml" "Message-ID: <smtp6@example.net>" <<<"Product: Auth" &&
	deliver_ok "$TMP/r6.eml" &&
	id=$(sql "SELECT max(id) FROM outbox") &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	sql "SELECT last_error FROM outbox WHERE id = $id" | grep -q "must be mode 0600" &&
	chmod 600 "$INST/smtp-password" &&
	"$VULNID" -c "$CONF" queue run --force >/dev/null &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE id = $id")" &&
	grep -q "AUTH" "$SINK_LOG" &&
	set_conf delivery smtp_user ""
'

start_sink inj
test_expect_success 'header injection through Subject, Title and Vendor adds no header' '
	set_conf delivery starttls no &&
	printf "From: alice@example.net\nTo: request@example.org\nSubject: =?utf-8?q?x=0D=0ABcc:_victim@example.com?=\nMessage-ID: <inj@example.net>\n\nTitle: t\r\nBcc: victim2@example.com\nVendor: V =?utf-8?q?a=0ABcc:_v3@example.com?= <vendor.example>\n\nbody\n" >"$TMP/inj.eml" &&
	deliver_ok "$TMP/inj.eml" &&
	test "$(sink_count)" -ge 2 &&
	for f in $(sink_files); do
		! grep -qi "victim\|v3@" <(grep -a "^X-Rcpt-Args" "$f") || fail "injected recipient in $f"
		sink_message "$f" >"$TMP/inj.msg"
		$PYTHON - "$TMP/inj.msg" <<-PY || fail "extra header in $f"
		import sys, email
		m = email.message_from_binary_file(open(sys.argv[1], "rb"))
		bad = [k for k in m.keys() if k.lower() in ("bcc", "cc")]
		sys.exit(1 if bad else 0)
		PY
	done
'

test_expect_success 'the audit chain verifies after all of it' '
	"$VULNID" -c "$CONF" audit verify
'

test_done
