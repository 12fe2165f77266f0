# fault-lib.sh - helpers for the fault-injection tests (sourced after
# test-lib.sh).  Faults come from test/faults/libfault.so (see its top
# comment for the FAULT_* variables).

LIBFAULT="$VULNID_BUILDDIR/test/faults/libfault.so"
FAULT_LOG="$TMP/fault.log"
[ -f "$LIBFAULT" ] || { echo "Bail out! $LIBFAULT not built (make check builds it)"; exit 1; }

# with_fault VAR=VALUE... -- COMMAND...: run COMMAND with libfault.so
# preloaded and the FAULT_* settings given; $FAULT_LOG lists what was
# injected.  (ASan wants to be first in the library list; the order is
# fine here, so its check is switched off.)
with_fault() {
	local vars=()
	while [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	: >"$FAULT_LOG"
	env LD_PRELOAD="$LIBFAULT" FAULT_LOG="$FAULT_LOG" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"${vars[@]}" "$@"
}

# deliver_fault FILE VAR=VALUE...: the filter on FILE under a fault; exit
# status in $rc, stderr in $TMP/.filter.err, injected faults counted in
# $injected.
deliver_fault() {
	local file=$1
	shift
	rc=0
	with_fault "$@" -- "$FILTER" -c "$CONF" <"$file" 2>"$TMP/.filter.err" || rc=$?
	injected=$(wc -l <"$FAULT_LOG" | tr -d ' ')
}

# The instance is consistent: SQLite's own check, the audit chain (file
# and database), nothing left in the spool directory.
expect_consistent() {
	expect_eq ok "$(sql "PRAGMA integrity_check")" "integrity_check" || return 1
	expect_eq "" "$(sql "PRAGMA foreign_key_check")" "foreign_key_check" || return 1
	"$VULNID" -c "$CONF" audit verify >"$TMP/.verify" 2>&1 ||
		fail "audit verify: $(cat "$TMP/.verify")" || return 1
	expect_eq "" "$(ls -A "$INST/tmp")" "spool leftovers" || return 1
}

# Counts that a failed delivery must leave alone.
state() {
	echo "$(sql "SELECT count(*) FROM messages") $(sql "SELECT count(*) FROM entries")" \
		"$(sql "SELECT count(*) FROM outbox") $(sql "SELECT count(*) FROM audit")" \
		"$(wc -l <"$INST/audit.log" | tr -d ' ') $(sent_count)"
}

# request_mail FILE ID: a small request with Message-ID <ID@example.net>.
request_mail() {
	printf 'Product: %s\n\nA description.\n' "$2" | write_mail "$1" "Message-ID: <$2@example.net>" "Subject: $2"
}

# Exactly once: the mail <ID@example.net> made one message row, one entry
# and one ack, and the ack is in the Maildir once.
expect_once() {
	local id=$1 msg
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '$id@example.net'")" "messages for $id" || return 1
	msg=$(sql "SELECT id FROM messages WHERE message_id = '$id@example.net'")
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "entries for $id" || return 1
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE cause = $msg AND kind = 'ack'")" "acks for $id" || return 1
	if [ -d "$INST/sent/new" ]; then
		expect_eq 1 "$(grep -l "^In-Reply-To: <$id@example.net>" "$INST"/sent/new/* 2>/dev/null | wc -l | tr -d ' ')" \
			"acks of $id in the Maildir" || return 1
	fi
}

# minutes_from_now N: an RFC 3339 time N minutes ahead (VULNID_TEST_NOW),
# past the retry backoff.
minutes_from_now() { date -u -d "+$1 minutes" +%Y-%m-%dT%H:%M:%SZ; }

# test_expect_todo DESCRIPTION COMMANDS WHERE: a case that shows a bug not
# fixed yet (TAP TODO): its failure is expected (XFAIL); once it passes it
# is reported (XPASS) so that it becomes a test_expect_success.
test_expect_todo() {
	test_count=$((test_count + 1))
	if (set -e; eval "$2") >"$TMP/.out" 2>&1; then
		echo "ok $test_count - $1 # TODO fixed? $3"
	else
		echo "not ok $test_count - $1 # TODO $3"
		sed 's/^/# /' "$TMP/.out"
	fi
}
