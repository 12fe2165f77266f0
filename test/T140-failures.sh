#!/bin/bash
# T140-failures: temporary failures exit 75 with nothing written; oversize 65
. "$(dirname "$0")/test-lib.sh"

make_instance inst
Y=$(date -u +%Y)
write_mail "$TMP/req.eml" "Message-ID: <f1@example.net>" <<<'Product: Fail'

# state: counts that must not move when a delivery fails
state() {
	echo "$(sql "SELECT count(*) FROM messages") $(sql "SELECT count(*) FROM entries") $(sql "SELECT count(*) FROM audit") $(wc -l <"$INST/audit.log") $(sent_count)"
}

test_expect_success 'database locked past busy_timeout: 75, nothing written' '
	set_conf database busy_timeout 300 &&
	before=$(state) &&
	cat >"$TMP/lock.py" <<-PY &&
	import sqlite3, sys, time, os
	db = sqlite3.connect(sys.argv[1], isolation_level=None)
	db.execute("BEGIN IMMEDIATE")
	open(sys.argv[2], "w").close()
	time.sleep(3)
	db.execute("ROLLBACK")
	PY
	{ $PYTHON "$TMP/lock.py" "$INST/vulnid.db" "$TMP/locked" & }
	locker=$! && bg_track $locker &&
	for _ in $(seq 100); do [ -e "$TMP/locked" ] && break; sleep 0.05; done &&
	deliver "$TMP/req.eml" &&
	expect_eq 75 "$rc" "exit status" &&
	expect_match "temporary failure \(database busy\)" "$TMP/.filter.err" &&
	test "$(wc -l <"$TMP/.filter.err")" -eq 1 &&
	wait $locker &&
	expect_eq "$before" "$(state)" "state after the failed delivery" &&
	deliver_ok "$TMP/req.eml" &&
	expect_eq "TEST-$Y-0001" "$(sql "SELECT id FROM entries")"
'

test_expect_success 'the per-message time limit: 75 in time, nothing written' '
	set_conf database busy_timeout 20000 &&
	set_conf limits time_limit 1 &&
	before=$(state) &&
	rm -f "$TMP/locked" &&
	{ $PYTHON "$TMP/lock.py" "$INST/vulnid.db" "$TMP/locked" & }
	locker=$! &&
	for _ in $(seq 100); do [ -e "$TMP/locked" ] && break; sleep 0.05; done &&
	write_mail "$TMP/tl.eml" "Message-ID: <tl@example.net>" <<<"Product: Slow" &&
	start=$(date +%s) &&
	deliver "$TMP/tl.eml" &&
	end=$(date +%s) &&
	wait $locker;
	expect_eq 75 "$rc" "exit status" &&
	expect_match "time limit reached" "$TMP/.filter.err" &&
	test $((end - start)) -le 2 &&
	expect_eq "$before" "$(state)" &&
	set_conf limits time_limit 120 &&
	set_conf database busy_timeout 300
'

test_expect_success 'a read-only instance: 75, nothing written' '
	make_instance ro &&
	before=$(state) &&
	if [ "$(id -u)" = 0 ]; then
		chown -R nobody "$INST" && chmod -R a-w "$INST" &&
		rc=0; setpriv --reuid=nobody --regid=nogroup --clear-groups \
			env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$FILTER" -c "$CONF" <"$TMP/req.eml" 2>"$TMP/err" || rc=$?
		chown -R root "$INST"
	else
		chmod -R a-w "$INST" &&
		rc=0; "$FILTER" -c "$CONF" <"$TMP/req.eml" 2>"$TMP/err" || rc=$?
	fi
	chmod -R u+w "$INST" &&
	expect_eq 75 "$rc" "exit status" &&
	expect_eq "$before" "$(state)"
'

test_expect_success 'an unreadable configuration: 75' '
	rc=0; "$FILTER" -c "$TMP/nonexistent/vulnid.conf" <"$TMP/req.eml" 2>"$TMP/err" || rc=$?
	expect_eq 75 "$rc" && expect_match "cannot read" "$TMP/err"
'

test_expect_success 'a bad command-line option: 75, never 1' '
	rc=0; "$FILTER" --no-such-option <"$TMP/req.eml" 2>/dev/null || rc=$?
	expect_eq 75 "$rc"
'

test_expect_success 'a mail over max_message_size: 65 with a one-line reason' '
	CONF="$TMP/inst/vulnid.conf"; INST="$TMP/inst" &&
	set_conf limits max_message_size 4096 &&
	before=$(state) &&
	{ cat "$TMP/req.eml"; head -c 8000 /dev/zero | tr "\\0" a; echo; } >"$TMP/big.eml" &&
	deliver "$TMP/big.eml" &&
	expect_eq 65 "$rc" &&
	expect_eq 1 "$(wc -l <"$TMP/.filter.err")" &&
	expect_match "message too large: the limit is 4096 bytes" "$TMP/.filter.err" &&
	expect_eq "$before" "$(state)" &&
	test -z "$(ls "$INST/tmp")"
'

test_expect_success 'blocks exhausted: 75, audited, nothing lost; new blocks continue' '
	make_instance blocks &&
	set_conf ids blocks 1-2 &&
	for i in 1 2 3; do
		write_mail "$TMP/b$i.eml" "Message-ID: <b$i@example.net>" </dev/null
	done &&
	deliver_ok "$TMP/b1.eml" && deliver_ok "$TMP/b2.eml" &&
	deliver "$TMP/b3.eml" &&
	expect_eq 75 "$rc" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''b3@example.net'\''")" &&
	expect_match "\"event\":\"blocks-exhausted\"" "$INST/audit.log" &&
	set_conf ids blocks "1-2, 10-19" &&
	deliver_ok "$TMP/b3.eml" &&
	expect_eq "TEST-$Y-0010" "$(sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1")" &&
	"$VULNID" -c "$CONF" audit verify
'

test_expect_success 'blocks_YYYY overrides the blocks of one year' '
	make_instance peryear &&
	set_conf ids "blocks_$Y" "5000-" &&
	write_mail "$TMP/y.eml" </dev/null &&
	deliver_ok "$TMP/y.eml" &&
	expect_eq "TEST-$Y-5000" "$(sql "SELECT id FROM entries")"
'

test_expect_success 'numbers restart in a new year and never go backwards' '
	make_instance years &&
	for d in 2031-12-31T23:59:59Z 2032-01-01T00:00:01Z 2032-06-01T00:00:00Z; do
		write_mail "$TMP/y$d.eml" "Message-ID: <y$d@example.net>" </dev/null &&
		VULNID_TEST_NOW=$d "$FILTER" -c "$CONF" <"$TMP/y$d.eml" || return 1
	done &&
	expect_eq "TEST-2031-0001 TEST-2032-0001 TEST-2032-0002" "$(sql "SELECT group_concat(id, \" \") FROM (SELECT id FROM entries ORDER BY year, number)")"
'

test_expect_success 'a configuration with an invalid blocks value: 75' '
	set_conf ids blocks "9-3" &&
	deliver "$TMP/req.eml" &&
	expect_eq 75 "$rc" && expect_match "blocks" "$TMP/.filter.err"
'

test_done
