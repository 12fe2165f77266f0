#!/bin/bash
# T245-lmtpd-openpgp: vulnid-lmtpd never waits on one mail's OpenPGP
# work.  While gpg hangs on an encrypted mail (test/faults/libfault.so
# makes every gpg --decrypt stall), a plain mail on another connection is
# taken and answered; a signed mail too.  SIGTERM then stops the server
# at once: the mail gpg was working on is answered 451 (the MTA sends it
# again, nothing is lost), and no gpg is left behind.  With a short
# openpgp_time_limit the same mail is set aside and answered 250; a
# signature flood inside the encryption is stopped at its ninth
# signature.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

make_instance inst
ROBOT=$("$VULNID" -c "$CONF" key export --fingerprint | tr -d ' \n')
"$VULNID" -c "$CONF" key export >"$TMP/robot.asc"
A="$TMP/gnupg-alice"
mkdir -m 700 "$A"
G "$A" --quick-gen-key "Alice <alice@example.net>" ed25519 sign never 2>/dev/null
AFPR=$(gpg --homedir "$A" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
G "$A" --import "$TMP/robot.asc" 2>/dev/null
G "$A" --armor --export "$AFPR" >"$TMP/alice.asc"
"$VULNID" -c "$CONF" keys import "$TMP/alice.asc" >/dev/null
printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nProduct: Inner\r\n\r\nA request.\r\n' >"$TMP/inner.txt"
$PGPMAIL encrypt-mime "$A" "$ROBOT" "$TMP/inner.txt" "$TMP/slow.eml" "Message-ID: <slow@example.net>"
$PGPMAIL encrypt-flood "$A" "$AFPR" "$ROBOT" 20000 "$TMP/inner.txt" "$TMP/flood.eml" "Message-ID: <flood@example.net>"

# start_stalling: the server, every gpg --decrypt it runs hanging
start_stalling() {
	: >"$FAULT_LOG"
	LD_PRELOAD="$LIBFAULT" FAULT_LOG="$FAULT_LOG" FAULT_OPS=stall FAULT_PATH="*/gpg" FAULT_ARGV=--decrypt \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" start_lmtpd
}

# gpg processes (not gpg-agent) working in the instance's keyring
gpg_running() { pgrep -f -- "bin/gpg --batch .*--homedir $INST/gnupg" | grep -c . || true; }
gpg_busy() { test "$(gpg_running)" -gt 0; }
gpg_idle() { test "$(gpg_running)" -eq 0; }

# hostile_in_background: the encrypted mail over LMTP in the background
# (its pid in $TMP/flood.pid, its replies in $TMP/flood.out), until gpg
# works on it
hostile_in_background() {
	$LMTPC "$INST/lmtp.sock" --from alice@example.net --to request@example.org <"$TMP/slow.eml" >"$TMP/flood.out" 2>&1 &
	echo $! >"$TMP/flood.pid"
	lmtpd_track "$!"
	wait_until gpg_busy
}
alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }

test_expect_success 'while gpg works on a hostile mail, a plain mail on another connection is answered 250' '
	set_conf limits openpgp_time_limit 600 &&
	start_stalling &&
	echo "$LMTPD_PID" >"$TMP/lmtpd.pid" &&
	hostile_in_background &&
	printf "Product: Plain\n" | write_mail "$TMP/plain.eml" "From: bob@example.net" \
		"To: request@example.org" "Subject: plain" "Message-ID: <plain@example.net>" &&
	lmtp "$TMP/plain.eml" --from alice@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 .* assigned TEST-2026-0001" "$TMP/lmtp.out" &&
	alive "$(cat "$TMP/flood.pid")" &&
	{ gpg_busy || fail "the hostile mail is no longer in the server"; }
'

test_expect_success 'and so is a signed mail, verified by its own gpg' '
	printf "Content-Type: text/plain; charset=utf-8\n\nProduct: Signed\n" >"$TMP/signed.txt" &&
	$PGPMAIL sign-mime "$A" "$AFPR" "$TMP/signed.txt" "$TMP/signed.eml" "Message-ID: <signed@example.net>" &&
	lmtp "$TMP/signed.eml" --from alice@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 " "$TMP/lmtp.out" &&
	"$VULNID" -c "$CONF" show TEST-2026-0002 --private --json | json_get "j[\"records\"][0][\"auth\"]" >"$TMP/auth" &&
	expect_match "$AFPR" "$TMP/auth" &&
	alive "$(cat "$TMP/flood.pid")"
'

test_expect_success 'SIGTERM stops the server at once: the hostile mail gets 451, no gpg is left' '
	kill -TERM "$(cat "$TMP/lmtpd.pid")" &&
	wait_until gone "$(cat "$TMP/lmtpd.pid")" &&
	wait_until gone "$(cat "$TMP/flood.pid")" &&
	expect_match "^END request@example.org 451 " "$TMP/flood.out" &&
	wait_until gpg_idle &&
	expect_eq "" "$(sql "SELECT id FROM messages WHERE message_id = '\''slow@example.net'\''")"
'

test_expect_success 'with openpgp_time_limit the same mail is set aside and answered 250 once' '
	set_conf limits openpgp_time_limit 2 &&
	start_stalling &&
	lmtp "$TMP/slow.eml" --from alice@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 .*quarantined" "$TMP/lmtp.out" &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages WHERE message_id = '\''slow@example.net'\''")" &&
	lmtp "$TMP/slow.eml" --from alice@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 .*duplicate" "$TMP/lmtp.out" &&
	stop_lmtpd TERM &&
	expect_eq 0 "$lmtpd_rc"
'

test_expect_success 'a signature flood inside the encryption is stopped at its ninth signature' '
	set_conf limits openpgp_time_limit 20 &&
	start_lmtpd &&
	lmtp "$TMP/flood.eml" --from alice@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 .*quarantined" "$TMP/lmtp.out" &&
	sql "SELECT q.detail FROM quarantine q JOIN messages m ON m.id = q.message
	     WHERE m.message_id = '\''flood@example.net'\''" >"$TMP/why" &&
	expect_match "more than 8 signatures|took longer than 20 seconds" "$TMP/why" &&
	stop_lmtpd TERM &&
	expect_eq 0 "$lmtpd_rc"
'

test_done
