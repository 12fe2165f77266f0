#!/bin/bash
# T865-lmtp-disk-full: vulnid-lmtpd on a full disk (test/faults/libfault.so
# preloaded): the reply names the cause, "452 4.3.1 disk full", for the
# mail's spool file and for the database; nothing is kept, and the mail
# sent again once there is room is recorded once.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"
trap 'lmtpd_cleanup; test_cleanup' EXIT

make_instance inst
set_conf crypto sign none

# start_lmtpd_fault VAR=VALUE...: the server with a fault, as start_lmtpd
# (env execs it: $! is the server, which stop_lmtpd stops)
start_lmtpd_fault() {
	: >"$FAULT_LOG"
	env LD_PRELOAD="$LIBFAULT" FAULT_LOG="$FAULT_LOG" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$@" "$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
	LMTPD_PID=$!
	bg_track "$LMTPD_PID"
	lmtpd_track "$LMTPD_PID"
	wait_until test -S "$INST/lmtp.sock"
}
count() { sql "SELECT count(*) FROM messages"; }

start_lmtpd_fault FAULT_OPS=write,writev FAULT_PATH="$INST/tmp/*" FAULT_ERRNO=ENOSPC
test_expect_success 'the spool file on a full disk: 452 4.3.1 disk full, nothing kept' '
	request_mail "$TMP/m1.eml" full1 &&
	lmtp "$TMP/m1.eml" --from r@example.net --to request@example.org &&
	expect_match "^END request@example.org 452 4.3.1 disk full: cannot spool the mail, try again later$" "$TMP/lmtp.out" &&
	test -s "$FAULT_LOG" &&
	expect_eq 0 "$(count)"
'
stop_lmtpd
test -S "$INST/lmtp.sock" && { echo "Bail out! the server did not stop"; exit 1; }

start_lmtpd_fault FAULT_OPS=pwrite FAULT_PATH="$INST/vulnid.db-wal" FAULT_ERRNO=ENOSPC
test_expect_success 'the database on a full disk: 452 4.3.1 disk full with what could not be written' '
	lmtp "$TMP/m1.eml" --from r@example.net --to request@example.org &&
	expect_match "^END request@example.org 452 4.3.1 disk full \(.*database or disk is full.*\), try again later$" "$TMP/lmtp.out" &&
	test -s "$FAULT_LOG" &&
	expect_eq 0 "$(count)"
'
stop_lmtpd

start_lmtpd
test_expect_success 'with room again, the mail sent again is recorded once' '
	lmtp "$TMP/m1.eml" --from r@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-" "$TMP/lmtp.out" &&
	expect_eq 1 "$(count)" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'
stop_lmtpd

test_done
