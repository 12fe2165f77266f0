#!/bin/bash
# T951-faults-disk: full disks and I/O errors on every write and every sync
# of vulnid-filter (test/faults/libfault.so preloaded into the real
# program).  Whatever fails, the filter exits 75 with nothing written, or 0
# with the mail recorded; the database and the audit chain stay consistent;
# and a redelivery without the fault completes the job exactly once (one
# entry, one ack in the Maildir).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
# many unsigned mails from one sender: their answers are not what is tested here
set_conf policy unverified_answer_bytes 0

# fault_then_retry ID VAR=VALUE...: a new request under the fault (75,
# nothing changed, the fault really hit), then again without it.
fault_then_retry() {
	local id=$1 before
	shift
	request_mail "$TMP/$id.eml" "$id" &&
	before=$(state) &&
	deliver_fault "$TMP/$id.eml" "$@" &&
	cp "$TMP/.filter.err" "$TMP/.fault.err" &&
	[ "$injected" -gt 0 ] || fail "the fault was never injected" || return 1
	expect_eq 75 "$rc" "exit status under the fault" || return 1
	expect_eq 1 "$(wc -l <"$TMP/.filter.err" | tr -d ' ')" "stderr lines" || return 1
	expect_eq "$before" "$(state)" "state after the failed delivery" || return 1
	expect_consistent || return 1
	deliver_ok "$TMP/$id.eml" || return 1
	expect_once "$id" || return 1
	expect_consistent
}

test_expect_success 'spool file: ENOSPC on write gives 75, then exactly once' '
	fault_then_retry spool-nospc FAULT_OPS=write FAULT_PATH="$INST/tmp/spool.*" FAULT_ERRNO=ENOSPC &&
	expect_match "temporary failure \(no space left\): cannot write spool file" "$TMP/.fault.err"
'

test_expect_success 'spool file: EIO on write gives 75, then exactly once' '
	fault_then_retry spool-eio FAULT_OPS=write FAULT_PATH="$INST/tmp/spool.*" FAULT_ERRNO=EIO
'

test_expect_success 'database: ENOSPC on the WAL (SQLITE_FULL) gives 75, then exactly once' '
	request_mail "$TMP/full.eml" db-full &&
	before=$(state) &&
	deliver_fault "$TMP/full.eml" FAULT_OPS=pwrite FAULT_PATH="$INST/vulnid.db-wal" FAULT_ERRNO=ENOSPC &&
	test "$injected" -gt 0 &&
	expect_eq 75 "$rc" &&
	expect_match "temporary failure \(no space left\): database: database or disk is full" "$TMP/.filter.err" &&
	expect_eq "$before" "$(state)" &&
	expect_consistent &&
	deliver_ok "$TMP/full.eml" && expect_once db-full && expect_consistent
'

test_expect_success 'database: EIO on any database file gives 75, then exactly once' '
	fault_then_retry db-eio FAULT_OPS=pwrite FAULT_PATH="$INST/vulnid.db*" FAULT_ERRNO=EIO &&
	expect_match "temporary failure \(i/o error\)" "$TMP/.fault.err"
'

test_expect_success 'database: fdatasync failing gives 75, then exactly once' '
	fault_then_retry db-sync FAULT_OPS=fdatasync,fsync FAULT_PATH="$INST/vulnid.db*" FAULT_ERRNO=EIO
'

test_expect_success 'audit.log: ENOSPC after the commit: 0, recorded; audit flush catches up' '
	request_mail "$TMP/audit.eml" audit-nospc &&
	deliver_fault "$TMP/audit.eml" FAULT_OPS=write FAULT_PATH="$INST/audit.log" FAULT_ERRNO=ENOSPC &&
	test "$injected" -gt 0 &&
	expect_eq 0 "$rc" "the mail is recorded: the audit file is written from the database" &&
	expect_once audit-nospc &&
	! "$VULNID" -c "$CONF" audit verify >/dev/null 2>&1 &&
	"$VULNID" -c "$CONF" audit flush &&
	expect_consistent &&
	deliver_ok "$TMP/audit.eml" && expect_once audit-nospc && expect_consistent
'

test_expect_success 'audit.log: a torn line (short write, then ENOSPC) is cut off by the next flush' '
	request_mail "$TMP/torn.eml" audit-torn &&
	deliver_fault "$TMP/torn.eml" FAULT_OPS=write FAULT_PATH="$INST/audit.log" FAULT_SHORT=1 FAULT_ERRNO=ENOSPC &&
	test "$injected" -gt 0 &&
	expect_eq 0 "$rc" &&
	test -n "$(tail -c 1 "$INST/audit.log")" &&
	! "$VULNID" -c "$CONF" audit verify >/dev/null 2>&1 &&
	"$VULNID" -c "$CONF" audit flush &&
	expect_consistent && expect_once audit-torn
'

test_expect_success 'Maildir: ENOSPC writing the ack: 0, deferred; queue run delivers it once' '
	request_mail "$TMP/md.eml" maildir-nospc &&
	deliver_fault "$TMP/md.eml" FAULT_OPS=write FAULT_PATH="$INST/sent/tmp/*" FAULT_ERRNO=ENOSPC &&
	test "$injected" -gt 0 &&
	expect_eq 0 "$rc" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''maildir-nospc@example.net'\''") &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" &&
	expect_eq "" "$(ls -A "$INST/sent/tmp")" "half-written files in sent/tmp" &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once maildir-nospc && expect_consistent &&
	VULNID_TEST_NOW=$(minutes_from_now 20) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once maildir-nospc
'

test_expect_success 'Maildir: fsync failing: deferred, delivered once later' '
	request_mail "$TMP/mds.eml" maildir-sync &&
	deliver_fault "$TMP/mds.eml" FAULT_OPS=fsync FAULT_PATH="$INST/sent/tmp/*" FAULT_ERRNO=EIO &&
	test "$injected" -gt 0 &&
	expect_eq 0 "$rc" &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once maildir-sync && expect_consistent
'

# sweep OPS ERRNO PREFIX: fail the Nth matching call (N = 0, 1, ...) until
# a run no longer reaches it, each time with a new mail, then redeliver it
# without the fault.  Every run ends 0 or 75 and never leaves half a mail.
sweep() {
	local ops=$1 errno=$2 prefix=$3 n=0 id m
	while :; do
		id="$prefix-$n"
		request_mail "$TMP/$id.eml" "$id"
		deliver_fault "$TMP/$id.eml" FAULT_OPS="$ops" FAULT_PATH="$INST/*" FAULT_EXCLUDE="$INST/gnupg/*" \
			FAULT_ERRNO="$errno" FAULT_AFTER=$n FAULT_COUNT=1
		m=$(sql "SELECT count(*) FROM messages WHERE message_id = '$id@example.net'")
		case "$rc" in
		0) expect_eq 1 "$m" "run $n exited 0: the mail must be recorded" || return 1 ;;
		75) expect_eq 0 "$m" "run $n exited 75: nothing of the mail may be kept" || return 1 ;;
		*) fail "run $n ($(cat "$FAULT_LOG")): exit $rc: $(cat "$TMP/.filter.err")"; return 1 ;;
		esac
		expect_eq ok "$(sql "PRAGMA integrity_check")" "integrity after run $n" || return 1
		[ "$injected" -gt 0 ] || break
		deliver_ok "$TMP/$id.eml" || return 1
		n=$((n + 1))
		[ $n -lt 300 ] || fail "more than 300 calls to fail?" || return 1
	done
	echo "$prefix: $n fault points"
	# (fsync: the commit, the Maildir file, the outcome; audit.log is not synced)
	[ $n -ge 3 ] || fail "only $n fault points: is the shim working?" || return 1
	"$VULNID" -c "$CONF" audit flush >/dev/null &&
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null || return 1
	for i in $(seq 0 $n); do
		expect_once "$prefix-$i" || return 1
	done
	expect_consistent
}

test_expect_success 'sweep: ENOSPC on each write of a delivery in turn, each retried: exactly once' \
	'sweep write,pwrite ENOSPC w'
test_expect_success 'sweep: EIO on each fsync/fdatasync of a delivery in turn: exactly once' \
	'sweep fsync,fdatasync EIO s'

test_expect_success 'no identifier was assigned twice or skipped' '
	expect_eq "$(sql "SELECT count(*) FROM entries")" "$(sql "SELECT max(number) FROM entries")" &&
	expect_eq "$(sql "SELECT count(*) FROM entries")" "$(sql "SELECT count(DISTINCT message) FROM entries")" &&
	expect_eq "$(sql "SELECT count(*) FROM outbox WHERE kind = '\''ack'\''")" "$(sent_count)"
'

test_done
