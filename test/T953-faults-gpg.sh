#!/bin/bash
# T953-faults-gpg: gpg-agent unavailable (stopped, and not allowed to start:
# no-autostart in the instance's gpg.conf, which vulnid obeys as gpg does).  What needs the robot's secret
# key cannot be done now but can later: the filter exits 75 with nothing
# written, or records the mail and keeps its reply queued; once the agent
# is back, the retry completes the job exactly once.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
GNUPG="$INST/gnupg"
ROBOT=$(gpg --homedir "$GNUPG" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')

agent_down() {
	gpgconf --homedir "$GNUPG" --kill gpg-agent
	echo no-autostart >>"$GNUPG/gpg.conf"
}
agent_up() { sed -i '/^no-autostart$/d' "$GNUPG/gpg.conf"; }

request_mail "$TMP/plain.eml" plain
printf 'Product: Sealed\nEmbargo: 2099-01-31\n\nUnder embargo.\n' |
	write_mail "$TMP/embargo.eml" "Message-ID: <embargo@example.net>" "Subject: embargo"
# A request encrypted to the robot (PGP/MIME), made while the agent runs.
{
	printf 'From: Alice <alice@example.net>\nTo: request@example.org\nSubject: encrypted\n'
	printf 'Message-ID: <encrypted@example.net>\nMIME-Version: 1.0\n'
	printf 'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="enc"\n\n'
	printf -- '--enc\nContent-Type: application/pgp-encrypted\n\nVersion: 1\n\n'
	printf -- '--enc\nContent-Type: application/octet-stream; name="encrypted.asc"\n\n'
	printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Encrypted\n' |
		gpg --homedir "$GNUPG" --batch --trust-model always --armor --encrypt --recipient "$ROBOT" 2>/dev/null
	printf -- '\n--enc--\n'
} >"$TMP/encrypted.eml"

test_expect_success 'setup: the robot key and an encrypted request' '
	test -n "$ROBOT" && expect_match "BEGIN PGP MESSAGE" "$TMP/encrypted.eml"
'

agent_down

test_expect_success 'agent down, plain request: 0, recorded with its identifier' '
	deliver_ok "$TMP/plain.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''plain@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_consistent
'
request_mail "$TMP/plain2.eml" plain2
test_expect_success 'agent down: the ack is not sent unsigned, it stays queued' '
	before=$(sent_count) &&
	deliver_ok "$TMP/plain2.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''plain2@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq "$before" "$(sent_count)" "replies sent (unsigned) while the key could not be used" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" &&
	sql "SELECT last_error FROM outbox WHERE cause = $msg" >"$TMP/why" &&
	expect_match "cannot sign: cannot sign with $ROBOT: gpg-agent is not running \(gpg.conf says no-autostart\)" "$TMP/why"
'

# Sealing encrypts to the robot's public key, which needs no agent; what
# it sealed is read back (for the acknowledgement and the vendor's notice)
# from memory, not through the agent.
test_expect_success 'agent down, embargoed request: sealed without the agent, recorded once; its ack waits' '
	deliver_ok "$TMP/embargo.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''embargo@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM records r JOIN entries e ON r.entry = e.id WHERE e.message = $msg AND r.sealed IS NOT NULL")" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg AND kind = '\''ack'\''")" &&
	expect_consistent
'

test_expect_success 'agent down, request encrypted to the robot: 75, nothing written' '
	before=$(state) &&
	deliver "$TMP/encrypted.eml" &&
	expect_eq 75 "$rc" "exit status (it is quarantined as undecryptable instead)" &&
	expect_eq "$before" "$(state)"
'

agent_up

test_expect_success 'agent back: every ack of the outage delivered exactly once' '
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	VULNID_TEST_NOW=$(minutes_from_now 30) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once plain && expect_once plain2 && expect_consistent
'

test_expect_success 'agent back: the ack of the outage goes out signed' '
	f=$(grep -l "^In-Reply-To: <plain2@example.net>" "$INST"/sent/new/*) &&
	expect_match "^Content-Type: multipart/signed" "$f"
'

test_expect_success 'agent back: the embargoed request is sealed and assigned exactly once' '
	deliver_ok "$TMP/embargo.eml" && deliver_ok "$TMP/embargo.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''embargo@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg AND embargo IS NOT NULL")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox WHERE cause = $msg AND kind = '\''ack'\''")" &&
	expect_consistent
'

test_expect_success 'agent back: the encrypted request gets its identifier exactly once' '
	deliver_ok "$TMP/encrypted.eml" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''encrypted@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" "entries (the first try quarantined it for good)"
'

# The agent stopped and its socket refusing connections (libfault.so in gpg).
request_mail "$TMP/sock.eml" sock
gpgconf --homedir "$GNUPG" --kill gpg-agent
echo no-autostart >>"$GNUPG/gpg.conf"
before_sock=$(sent_count)
deliver_fault "$TMP/sock.eml" FAULT_OPS=connect FAULT_PATH="*S.gpg-agent*" FAULT_ERRNO=ECONNREFUSED
sock_rc=$rc sock_injected=$injected
sock_status=$(sql "SELECT status FROM outbox WHERE cause = (SELECT id FROM messages WHERE message_id = 'sock@example.net')")
agent_up

test_expect_success 'the agent unreachable through its socket: 0, the mail recorded once' '
	test "$sock_injected" -gt 0 &&
	expect_eq 0 "$sock_rc" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''sock@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_consistent
'
test_expect_success 'the agent unreachable through its socket: the ack stays queued' '
	expect_eq deferred "$sock_status" "outbox status" &&
	expect_eq "$before_sock" "$(sent_count)" "replies sent"
'

test_expect_success 'after all of it: every ack delivered exactly once' '
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once plain && expect_once plain2 && expect_once sock && expect_consistent
'

# gpg itself cannot be started (not installed, or not executable).  The
# reply is signed through gpg-agent without it, as long as what signing
# needs of the robot key is remembered; when the key must be listed again
# the mail is recorded and its reply waits, never sent unsigned.
request_mail "$TMP/nogpg.eml" nogpg
test_expect_success 'gpg cannot be started, the robot key remembered: the ack is signed all the same' '
	before=$(sent_count) &&
	deliver_fault "$TMP/nogpg.eml" FAULT_OPS=exec "FAULT_PATH=*/gpg" FAULT_ERRNO=ENOENT &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	expect_eq 0 "$injected" "gpg processes tried" &&
	expect_once nogpg &&
	f=$(grep -l "^In-Reply-To: <nogpg@example.net>" "$INST"/sent/new/*) &&
	expect_match "^Content-Type: multipart/signed" "$f"
'
request_mail "$TMP/nogpg2.eml" nogpg2
test_expect_success 'gpg cannot be started and the key must be listed: 0, recorded once, the ack deferred with the reason' '
	before=$(sent_count) &&
	rm "$INST/gnupg/vulnid-robot-key" &&
	deliver_fault "$TMP/nogpg2.eml" FAULT_OPS=exec "FAULT_PATH=*/gpg" FAULT_ERRNO=ENOENT &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	test "$injected" -ge 1 &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''nogpg2@example.net'\''") &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = $msg")" &&
	expect_eq "$before" "$(sent_count)" "replies sent unsigned" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")" &&
	sql "SELECT last_error FROM outbox WHERE cause = $msg" | grep -q "the robot.s secret key cannot be used now" &&
	expect_consistent
'
test_expect_success 'gpg back: that ack goes out once, signed' '
	VULNID_TEST_NOW=$(minutes_from_now 2) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_once nogpg2 &&
	f=$(grep -l "^In-Reply-To: <nogpg2@example.net>" "$INST"/sent/new/*) &&
	expect_match "^Content-Type: multipart/signed" "$f"
'

test_done
