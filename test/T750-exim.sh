#!/bin/bash
# T750-exim: a real Exim (the Debian package, unpacked: it cannot be
# installed next to Postfix) built around filters/exim pipes mail into
# vulnid-filter, as an unprivileged user on a port of 127.0.0.1; the
# robot's replies go back through the same Exim (over STARTTLS, with
# Exim's self-signed certificate) into a Maildir.  75 defers, 65 bounces.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/mta-lib.sh"

SWAKS=$(command -v swaks 2>/dev/null || true)
if [ -z "$SWAKS" ]; then
	test_skip "Exim pipe transport" "swaks is not installed (Debian package swaks)"
	test_done
fi
if ! mta_have exim4-daemon-light usr/sbin/exim4; then
	test_skip "Exim pipe transport" "$MTA_WHY"
	test_done
fi
OWNER=$(mta_uid $MTA_NOBODY)
Y=$(date -u +%Y)

# everything of the instance as its owner, the namespace's nobody
as_owner() { setpriv --reuid="$OWNER" --regid="$OWNER" --clear-groups -- env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$@"; }
sql() { as_owner sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
vulnid() { as_owner "$VULNID" -c "$CONF" "$@"; }
agent_stop() {
	[ -d "${INST:-/nonexistent}/gnupg" ] && as_owner gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
	return 0
}
trap 'exim_stop; agent_stop; test_cleanup' EXIT

wait_until() {
	local _
	for _ in $(seq 150); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

chmod 755 "$TMP"
PORT=$(free_port)
make_instance inst
cp "$VULNID_TEMPLATE_DIR"/*.txt "$INST/templates/"
set_conf delivery transport "smtp://127.0.0.1:$PORT"
set_conf delivery timeout 10
# init ran as root: its gpg-agent goes, the owner's starts when needed
gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
chown -R "$OWNER:$OWNER" "$INST"
exim_setup "$TMP/exim" "$PORT"
# at the top level, so that the trap stops it
exim_ns -bV >"$TMP/bv.out" 2>&1 && exim_start

test_expect_success 'exim -bV accepts the configuration built around filters/exim, and the daemon runs unprivileged' '
	expect_match "^Exim version 4" "$TMP/bv.out" &&
	expect_match "^Configuration file is $EXIM_CONF" "$TMP/bv.out" &&
	grep -q "^vulnid:" "$EXIM_CONF" && grep -q "^vulnid_pipe:" "$EXIM_CONF" &&
	mta_wait_port "$PORT" &&
	pid=$(pgrep -f "^$EXIM_BIN -C $EXIM_CONF -bdf" | head -n 1) && test -n "$pid" &&
	expect_eq "$(mta_uid $MTA_NOBODY)" "$(awk "/^Uid:/ { print \$2 }" "/proc/$pid/status")" "the daemon'\''s uid"
'

# send FROM TO FILE: one mail with swaks; its status in $src, Exim's id in $qid
send() {
	src=0
	"$SWAKS" --server 127.0.0.1 --port "$PORT" --helo client.example.net \
		--from "$1" --to "$2" --data "@$3" --timeout 20 >"$TMP/swaks.out" 2>&1 || src=$?
	qid=$(sed -n "s/.*250 OK id=\([0-9A-Za-z-]*\).*/\1/p" "$TMP/swaks.out" | tail -n 1)
}
send_ok() {
	send "$@"
	[ "$src" -eq 0 ] && [ -n "$qid" ] || fail "swaks: $(cat "$TMP/swaks.out")"
}
maildir_subject() {
	local f
	for f in "$EXIM_MAILDIR"/new/*; do
		[ -f "$f" ] || continue
		[ "$(mail_header "$f" Subject)" = "$1" ] && { echo "$f"; return 0; }
	done
	return 1
}
wait_mail() {
	wait_until maildir_subject "$1" >/dev/null ||
		fail "no mail with Subject '$1' in the Maildir; log: $(tail -n 30 "$EXIM_LOG")"
	maildir_subject "$1"
}
logged() { grep -E "$1 .*$2" "$EXIM_LOG" >/dev/null; }
# wait_logged QID PATTERN: wait until Exim logged it for that message
wait_logged() { wait_until logged "$1" "$2" || fail "no '$2' for $1 in Exim's log: $(grep "$1" "$EXIM_LOG")"; }
entry_of() { sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'"; }
has_entry() { [ -n "$(entry_of "$1")" ]; }
has_quarantine() { [ "$(sql "SELECT count(*) FROM quarantine")" -gt 0 ]; }

test_expect_success 'a request comes back as an ack in the Maildir, the reply sent to Exim over STARTTLS' '
	write_mail "$TMP/r1.eml" "Message-ID: <ex1@example.net>" "Subject: Overflow in Foo" <<<"Product: Foo" &&
	send_ok alice@example.net request@example.org "$TMP/r1.eml" &&
	wait_logged "$qid" "=> request <request@example.org> R=vulnid T=vulnid_pipe" &&
	f=$(wait_mail "[TEST-$Y-0001] Overflow in Foo") &&
	expect_eq "Alice Researcher <alice@example.net>" "$(mail_header "$f" To)" &&
	expect_eq "<ex1@example.net>" "$(mail_header "$f" In-Reply-To)" &&
	expect_eq "alice@example.net|request@example.org" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages WHERE message_id = '\''ex1@example.net'\''")" &&
	expect_match "<= request-bounces\+[0-9a-f]+@example.org H=\(example.org\) \[127.0.0.1\] P=esmtps X=TLS1\.2:" "$EXIM_LOG" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE kind = '\''ack'\''")"
'

# (Exim lowercases the local part: filters/exim says so)
test_expect_success 'request+ID reaches the filter with its extension; an unknown local part is refused' '
	write_mail "$TMP/r2.eml" "Message-ID: <ex2@example.net>" "Subject: Re: [TEST-$Y-0001] Overflow in Foo" <<<"More detail." &&
	send_ok alice@example.net "request+TEST-$Y-0001@example.org" "$TMP/r2.eml" &&
	wait_logged "$qid" "=> request <request\+TEST-$Y-0001@example.org> R=vulnid T=vulnid_pipe" &&
	wait_until test -n "$(sql "SELECT envelope_to FROM messages WHERE message_id = '\''ex2@example.net'\''")" &&
	expect_eq "request+test-$Y-0001@example.org" \
		"$(sql "SELECT envelope_to FROM messages WHERE message_id = '\''ex2@example.net'\''")" &&
	expect_eq "TEST-$Y-0001" "$(sql "SELECT r.entry FROM records r JOIN messages m ON r.message = m.id WHERE m.message_id = '\''ex2@example.net'\''")" &&
	write_mail "$TMP/r3.eml" "Message-ID: <ex3@example.net>" <<<"Product: Nobody" &&
	send alice@example.net nosuch@example.org "$TMP/r3.eml" &&
	test "$src" -ne 0 &&
	expect_match "<\*\* +550 .*" "$TMP/swaks.out" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''ex3@example.net'\''")"
'

test_expect_success 'the null sender reaches the filter as an empty -f: quarantined, no reply' '
	before=$(sql "SELECT count(*) FROM outbox") &&
	write_mail "$TMP/n1.eml" "Message-ID: <exn1@example.net>" "Subject: Undeliverable: something" <<<"Product: Bounce" &&
	send_ok "<>" request@example.org "$TMP/n1.eml" &&
	wait_logged "$qid" "=> request <request@example.org> R=vulnid T=vulnid_pipe" &&
	{ wait_until has_quarantine || fail "nothing quarantined"; } &&
	expect_eq "|automatic" "$(sql "SELECT m.envelope_from || '\''|'\'' || q.reason FROM messages m JOIN quarantine q ON q.message = m.id WHERE m.message_id = '\''exn1@example.net'\''")" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM outbox")"
'

test_expect_success 'a mail over max_message_size: 65, and Exim bounces it with the reason' '
	set_conf limits max_message_size 2048 &&
	{ write_mail "$TMP/big.eml" "Message-ID: <exbig@example.net>" "Subject: Big one" <<<"Product: Big" &&
	  head -c 6000 /dev/zero | tr "\\0" a | fold -w 70 >>"$TMP/big.eml"; } &&
	send_ok alice@example.net request@example.org "$TMP/big.eml" &&
	wait_logged "$qid" "\*\* request@example.org R=vulnid T=vulnid_pipe: Child process of vulnid_pipe transport returned 65" &&
	expect_match "$qid .*message too large: the limit is 2048 bytes" "$EXIM_LOG" &&
	b=$(wait_mail "Mail delivery failed: returning message to sender") &&
	expect_eq alice@example.net "$(mail_header "$b" To)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''exbig@example.net'\''")" &&
	set_conf limits max_message_size 26214400
'

# The database locked by another process; the filter gives up after
# busy_timeout with 75.
cat >"$TMP/lock.py" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(120)
PY
set_conf database busy_timeout 300
mkdir "$TMP/run" && chown "$OWNER" "$TMP/run"
setpriv --reuid="$OWNER" --regid="$OWNER" --clear-groups -- "$PYTHON" "$TMP/lock.py" "$INST/vulnid.db" "$TMP/run/locked" &
LOCKER=$!
bg_track "$LOCKER"
wait_until test -e "$TMP/run/locked"

test_expect_success 'database locked: the filter exits 75 and Exim defers the mail' '
	write_mail "$TMP/l1.eml" "Message-ID: <exlock@example.net>" "Subject: Locked out" <<<"Product: Lock" &&
	send_ok alice@example.net request@example.org "$TMP/l1.eml" &&
	echo "$qid" >"$TMP/lock.qid" &&
	wait_logged "$qid" "== request@example.org R=vulnid T=vulnid_pipe defer \(0\): Child process of vulnid_pipe transport returned 75" &&
	expect_match "$qid .*vulnid-filter: temporary failure \(database busy\)" "$EXIM_LOG" &&
	expect_no_match "$qid (=>|\*\*)" "$EXIM_LOG" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''exlock@example.net'\''")"
'

kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null
set_conf database busy_timeout 10000

test_expect_success 'lock released: exim -qff delivers it, one ID assigned, its ack back in the Maildir' '
	exim_ns -qff >/dev/null 2>&1 &&
	wait_logged "$(cat "$TMP/lock.qid")" "=> request <request@example.org> R=vulnid T=vulnid_pipe" &&
	expect_eq 1 "$(entry_of exlock@example.net | grep -c .)" &&
	wait_mail "[$(entry_of exlock@example.net)] Locked out" >/dev/null
'

test_expect_success 'every reply was delivered, the audit chain verifies, nothing of the instance is another user'\''s' '
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" &&
	vulnid audit verify >/dev/null &&
	expect_eq "" "$(find "$INST" ! -user "$OWNER")"
'

test_done
