#!/bin/bash
# T751-opensmtpd: a real OpenSMTPD (the Debian package, unpacked: it cannot
# be installed next to Postfix), configured with filters/opensmtpd, hands
# mail to vulnid-filter through its mda action, in a user namespace where
# its root is no one on this machine, on a port of 127.0.0.1; the robot's
# replies go back through it into a Maildir.  75 keeps the mail queued,
# 65 bounces it.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/mta-lib.sh"

SWAKS=$(command -v swaks 2>/dev/null || true)
if [ -z "$SWAKS" ]; then
	test_skip "OpenSMTPD mda action" "swaks is not installed (Debian package swaks)"
	test_done
fi
if ! mta_have opensmtpd usr/sbin/smtpd; then
	test_skip "OpenSMTPD mda action" "$MTA_WHY"
	test_done
fi
OWNER=$(mta_uid $MTA_NOBODY)
Y=$(date -u +%Y)

as_owner() { setpriv --reuid="$OWNER" --regid="$OWNER" --clear-groups -- env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$@"; }
sql() { as_owner sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
vulnid() { as_owner "$VULNID" -c "$CONF" "$@"; }
agent_stop() {
	[ -d "${INST:-/nonexistent}/gnupg" ] && as_owner gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
	return 0
}
trap 'smtpd_stop; agent_stop; test_cleanup' EXIT

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
gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
chown -R "$OWNER:$OWNER" "$INST"
smtpd_setup "$TMP/smtpd" "$PORT"
# at the top level, so that the trap stops it
smtpd_ns -n -f "$SMTPD_CONF" >"$TMP/n.out" 2>&1 && smtpd_start

test_expect_success 'smtpd -n accepts the configuration with filters/opensmtpd, and the daemon runs in its namespace' '
	expect_match "configuration OK" "$TMP/n.out" &&
	grep -q "^action \"vulnid\" mda " "$SMTPD_CONF" &&
	mta_wait_port "$PORT" &&
	pid=$(pgrep -f "^$SMTPD_BIN -d -f $SMTPD_CONF" | head -n 1) && test -n "$pid" &&
	expect_eq "$(mta_uid 0)" "$(awk "/^Uid:/ { print \$2 }" "/proc/$pid/status")" "the uid of its root"
'

send() {
	src=0
	"$SWAKS" --server 127.0.0.1 --port "$PORT" --helo client.example.net \
		--from "$1" --to "$2" --data "@$3" --timeout 20 >"$TMP/swaks.out" 2>&1 || src=$?
	msgid=$(sed -n "s/.*250 2.0.0 \([0-9a-f]*\) Message accepted.*/\1/p" "$TMP/swaks.out" | tail -n 1)
}
send_ok() {
	send "$@"
	[ "$src" -eq 0 ] && [ -n "$msgid" ] || fail "swaks: $(cat "$TMP/swaks.out")"
}
maildir_subject() {
	local f
	for f in "$SMTPD_MAILDIR"/new/*; do
		[ -f "$f" ] || continue
		[ "$(mail_header "$f" Subject)" = "$1" ] && { echo "$f"; return 0; }
	done
	return 1
}
wait_mail() {
	wait_until maildir_subject "$1" >/dev/null ||
		fail "no mail with Subject '$1' in the Maildir; log: $(tail -n 30 "$SMTPD_LOG")"
	maildir_subject "$1"
}
# logged MSGID PATTERN: smtpd logged PATTERN for an envelope of that message
logged() { grep -E "evpid=$1[0-9a-f]{8} " "$SMTPD_LOG" | grep -Eq -- "$2"; }
wait_logged() { wait_until logged "$1" "$2" || fail "no '$2' for $1 in smtpd's log: $(grep "$1" "$SMTPD_LOG")"; }
entry_of() { sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'"; }
has_quarantine() { [ "$(sql "SELECT count(*) FROM quarantine")" -gt 0 ]; }

test_expect_success 'a request comes back as an ack in the Maildir' '
	write_mail "$TMP/r1.eml" "Message-ID: <os1@example.net>" "Subject: Overflow in Foo" <<<"Product: Foo" &&
	send_ok alice@example.net request@example.org "$TMP/r1.eml" &&
	wait_logged "$msgid" "mda delivery .*rcpt=<request@example.org> user=nobody .*result=Ok stat=Delivered" &&
	f=$(wait_mail "[TEST-$Y-0001] Overflow in Foo") &&
	expect_eq "Alice Researcher <alice@example.net>" "$(mail_header "$f" To)" &&
	expect_eq "<os1@example.net>" "$(mail_header "$f" In-Reply-To)" &&
	expect_eq "alice@example.net|request@example.org" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages WHERE message_id = '\''os1@example.net'\''")" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE kind = '\''ack'\''")"
'

test_expect_success 'request+ID reaches the filter with its extension; an unknown local part is refused' '
	write_mail "$TMP/r2.eml" "Message-ID: <os2@example.net>" "Subject: Re: [TEST-$Y-0001] Overflow in Foo" <<<"More detail." &&
	send_ok alice@example.net "request+TEST-$Y-0001@example.org" "$TMP/r2.eml" &&
	wait_logged "$msgid" "mda delivery .*rcpt=<request\+TEST-$Y-0001@example.org> .*result=Ok" &&
	expect_eq "request+TEST-$Y-0001@example.org" \
		"$(sql "SELECT envelope_to FROM messages WHERE message_id = '\''os2@example.net'\''")" &&
	expect_eq "TEST-$Y-0001" "$(sql "SELECT r.entry FROM records r JOIN messages m ON r.message = m.id WHERE m.message_id = '\''os2@example.net'\''")" &&
	write_mail "$TMP/r3.eml" "Message-ID: <os3@example.net>" <<<"Product: Nobody" &&
	send alice@example.net nosuch@example.org "$TMP/r3.eml" &&
	test "$src" -ne 0 &&
	expect_match "<\*\* +550 .*" "$TMP/swaks.out" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''os3@example.net'\''")"
'

test_expect_success 'the null sender reaches the filter as an empty -f: quarantined, no reply' '
	before=$(sql "SELECT count(*) FROM outbox") &&
	write_mail "$TMP/n1.eml" "Message-ID: <osn1@example.net>" "Subject: Undeliverable: something" <<<"Product: Bounce" &&
	send_ok "<>" request@example.org "$TMP/n1.eml" &&
	wait_logged "$msgid" "mda delivery .*result=Ok" &&
	{ wait_until has_quarantine || fail "nothing quarantined"; } &&
	expect_eq "|automatic" "$(sql "SELECT m.envelope_from || '\''|'\'' || q.reason FROM messages m JOIN quarantine q ON q.message = m.id WHERE m.message_id = '\''osn1@example.net'\''")" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM outbox")"
'

test_expect_success 'a mail over max_message_size: 65, and OpenSMTPD bounces it with the reason' '
	set_conf limits max_message_size 2048 &&
	{ write_mail "$TMP/big.eml" "Message-ID: <osbig@example.net>" "Subject: Big one" <<<"Product: Big" &&
	  head -c 6000 /dev/zero | tr "\\0" a | fold -w 70 >>"$TMP/big.eml"; } &&
	send_ok alice@example.net request@example.org "$TMP/big.eml" &&
	wait_logged "$msgid" "mda delivery .*result=PermFail stat=Error \(data format error: .vulnid-filter: message too large: the limit is 2048 bytes" &&
	b=$(wait_mail "Delivery status notification: failed") &&
	expect_eq alice@example.net "$(mail_header "$b" To)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''osbig@example.net'\''")" &&
	set_conf limits max_message_size 26214400
'

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

test_expect_success 'database locked: the filter exits 75 and OpenSMTPD keeps the mail' '
	write_mail "$TMP/l1.eml" "Message-ID: <oslock@example.net>" "Subject: Locked out" <<<"Product: Lock" &&
	send_ok alice@example.net request@example.org "$TMP/l1.eml" &&
	echo "$msgid" >"$TMP/lock.id" &&
	wait_logged "$msgid" "mda delivery .*result=TempFail stat=Error \(temporary failure: .vulnid-filter: temporary failure \(database busy\)" &&
	{ smtpctl_ns show queue >"$TMP/queue" 2>&1 || fail "smtpctl show queue: $(cat "$TMP/queue")"; } &&
	{ grep -q "^$msgid" "$TMP/queue" || fail "not queued: $(cat "$TMP/queue")"; } &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''oslock@example.net'\''")"
'

kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null
set_conf database busy_timeout 10000

test_expect_success 'lock released: smtpctl schedule delivers it, one ID assigned, its ack back in the Maildir' '
	smtpctl_ns schedule all >/dev/null 2>&1 &&
	wait_logged "$(cat "$TMP/lock.id")" "mda delivery .*result=Ok stat=Delivered" &&
	expect_eq 1 "$(entry_of oslock@example.net | grep -c .)" &&
	wait_mail "[$(entry_of oslock@example.net)] Locked out" >/dev/null
'

test_expect_success 'every reply was delivered, the audit chain verifies, nothing of the instance is another user'\''s' '
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" &&
	vulnid audit verify >/dev/null &&
	expect_eq "" "$(find "$INST" ! -user "$OWNER")"
'

test_done
