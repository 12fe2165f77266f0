#!/bin/bash
# T952-faults-database: SQLITE_BUSY (the write lock held by someone else
# past busy_timeout) and SQLITE_FULL (the disk fills up at any write of the
# transaction, including the commit).  The filter exits 75 with nothing
# written, the database stays consistent, and the retry completes the job
# exactly once.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
# many unsigned mails from one sender: their answers are not what is tested here
set_conf policy unverified_answer_bytes 0

# A holder of the write lock: BEGIN IMMEDIATE, then wait until told.
cat >"$TMP/lock.py" <<'PY'
import sqlite3, sys, time, os
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
deadline = time.time() + float(sys.argv[4])
while not os.path.exists(sys.argv[3]) and time.time() < deadline:
    time.sleep(0.02)
db.execute("ROLLBACK")
PY

# lock_db SECONDS: hold the lock until $TMP/unlock exists (at most SECONDS).
lock_db() {
	rm -f "$TMP/locked" "$TMP/unlock"
	$PYTHON "$TMP/lock.py" "$INST/vulnid.db" "$TMP/locked" "$TMP/unlock" "$1" &
	LOCKER=$!
	bg_track $LOCKER
	for _ in $(seq 200); do [ -e "$TMP/locked" ] && return 0; sleep 0.05; done
	fail "the lock was not taken"
}
unlock_db() { touch "$TMP/unlock"; wait "$LOCKER" 2>/dev/null; }

test_expect_success 'SQLITE_BUSY past busy_timeout: 75, nothing written, then exactly once' '
	set_conf database busy_timeout 300 &&
	request_mail "$TMP/busy.eml" busy &&
	lock_db 30 &&
	before=$(state) &&
	deliver "$TMP/busy.eml" &&
	cp "$TMP/.filter.err" "$TMP/busy.err" &&
	unlock_db &&
	expect_eq 75 "$rc" &&
	expect_match "temporary failure \(database busy\)" "$TMP/busy.err" &&
	expect_eq "$before" "$(state)" &&
	expect_consistent &&
	deliver_ok "$TMP/busy.eml" && expect_once busy && expect_consistent
'

test_expect_success 'SQLITE_BUSY shorter than busy_timeout: 8 filters wait and all get one ID' '
	set_conf database busy_timeout 10000 &&
	for i in $(seq 1 8); do request_mail "$TMP/wait$i.eml" "wait$i"; done &&
	lock_db 30 &&
	pids="" &&
	for i in $(seq 1 8); do
		"$FILTER" -c "$CONF" <"$TMP/wait$i.eml" >/dev/null 2>"$TMP/wait$i.err" & pids="$pids $!"
	done &&
	sleep 1 &&
	unlock_db &&
	for p in $pids; do wait "$p" || fail "a filter failed: $(cat "$TMP"/wait*.err)"; done &&
	for i in $(seq 1 8); do expect_once "wait$i"; done &&
	expect_consistent
'

test_expect_success 'SQLITE_BUSY on the lock held across the retry, then released: exactly once' '
	set_conf database busy_timeout 200 &&
	request_mail "$TMP/again.eml" again &&
	lock_db 30 &&
	deliver "$TMP/again.eml" && expect_eq 75 "$rc" &&
	deliver "$TMP/again.eml" && expect_eq 75 "$rc" &&
	unlock_db &&
	deliver_ok "$TMP/again.eml" && deliver_ok "$TMP/again.eml" &&
	expect_once again && expect_consistent &&
	set_conf database busy_timeout 10000
'

test_expect_success 'SQLITE_FULL at the first write: 75 "no space left", then exactly once' '
	request_mail "$TMP/full.eml" full &&
	before=$(state) &&
	deliver_fault "$TMP/full.eml" FAULT_OPS=pwrite FAULT_PATH="$INST/vulnid.db-wal" FAULT_ERRNO=ENOSPC &&
	test "$injected" -gt 0 &&
	expect_eq 75 "$rc" &&
	expect_match "no space left" "$TMP/.filter.err" &&
	expect_eq "$before" "$(state)" &&
	expect_consistent &&
	deliver_ok "$TMP/full.eml" && expect_once full && expect_consistent
'

# SQLITE_FULL at each write of the database in turn (the WAL frames of the
# transaction, the commit, the checkpoint at close), each retried.
full_sweep() {
	local n=0 id m
	while :; do
		id="full-$n"
		request_mail "$TMP/$id.eml" "$id"
		deliver_fault "$TMP/$id.eml" FAULT_OPS=pwrite,write FAULT_PATH="$INST/vulnid.db*" FAULT_ERRNO=ENOSPC \
			FAULT_AFTER=$n FAULT_COUNT=1
		m=$(sql "SELECT count(*) FROM messages WHERE message_id = '$id@example.net'")
		case "$rc" in
		0) expect_eq 1 "$m" "run $n exited 0: the mail must be recorded" || return 1 ;;
		75) expect_eq 0 "$m" "run $n exited 75: nothing of the mail may be kept" || return 1
		    grep -Eq "no space left|i/o error" "$TMP/.filter.err" ||
			fail "run $n: $(cat "$TMP/.filter.err")" || return 1 ;;
		*) fail "run $n: exit $rc: $(cat "$TMP/.filter.err")"; return 1 ;;
		esac
		expect_eq ok "$(sql "PRAGMA integrity_check")" "integrity after run $n" || return 1
		[ "$injected" -gt 0 ] || break
		deliver_ok "$TMP/$id.eml" || return 1
		n=$((n + 1))
		[ $n -lt 300 ] || fail "more than 300 writes?" || return 1
	done
	echo "$n fault points"
	[ $n -gt 3 ] || fail "only $n fault points" || return 1
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null || return 1
	for i in $(seq 0 $n); do expect_once "full-$i" || return 1; done
	expect_consistent
}
test_expect_success 'SQLITE_FULL at each database write in turn, each retried: exactly once' full_sweep

test_expect_success 'identifiers are dense and unique after all of it' '
	expect_eq "$(sql "SELECT count(*) FROM entries")" "$(sql "SELECT max(number) FROM entries")" &&
	expect_eq "$(sql "SELECT count(*) FROM entries")" "$(sql "SELECT count(DISTINCT message) FROM entries")" &&
	expect_eq "$(sql "SELECT count(*) FROM outbox")" "$(sent_count)"
'

test_done
