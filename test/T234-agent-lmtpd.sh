#!/bin/bash
# T234-agent-lmtpd: the LMTP server's replies are signed through gpg-agent
# like the filter's.  vulnid-lmtpd signs in its delivery agent, one
# process that lives as long as the server: it starts no GnuPG program and
# keeps one connection to gpg-agent for all the replies of several rounds;
# when gpg-agent is restarted between two mails, the next reply is signed
# on a new connection.  Every reply verifies with gpg and with Sequoia's
# sqv, read with Python's email package.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"

command -v sqv >/dev/null || { echo "1..0 # SKIP sqv is not installed (Debian package sqv)"; exit 0; }
command -v strace >/dev/null || { echo "1..0 # SKIP strace is not installed"; exit 0; }
SIGCHECK="$PYTHON $CORPORA/openpgp/sigcheck.py"
Y=$(date -u +%Y)

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
GNUPG="$INST/gnupg"
ROBOT=$(gpg --homedir "$GNUPG" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
gpg --homedir "$GNUPG" --batch --armor --export "$ROBOT" >"$TMP/robot.pub" 2>/dev/null
agent_running() { gpg-connect-agent --homedir "$GNUPG" --no-autostart "GETINFO pid" /bye 2>/dev/null | grep -q "^D "; }

# verified TAG: the reply to TAG's request went out signed by the robot,
# as gpg and sqv see it
verified() {
	local f
	f=$(grep -l "^In-Reply-To: <$1@example.net>" "$INST"/sent/new/* 2>/dev/null) || fail "no reply to $1"
	cp "$f" "$TMP/$1.reply.eml"
	$SIGCHECK mime "$TMP/$1.reply.eml" "$GNUPG" "$TMP/robot.pub" "$ROBOT" >"$TMP/$1.check" ||
		fail "$1: $(cat "$TMP/$1.check")"
	expect_match "^mime ok" "$TMP/$1.check"
}
replied() { grep -qs "^In-Reply-To: <$1@example.net>" "$INST"/sent/new/*; }
# one TAG: a request over LMTP, assigned, and its signed reply delivered
one() {
	request_mail "$TMP/$1.eml" "$1" &&
	lmtp "$TMP/$1.eml" --from "$1@example.net" --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-$Y-[0-9]{4}$" "$TMP/lmtp.out" &&
	wait_until replied "$1" ||
		fail "$1: no reply; outbox: $(sql "SELECT status, last_error FROM outbox")"
}

test_expect_success 'setup: the robot key is Ed25519 and gpg-agent runs' '
	test -n "$ROBOT" &&
	gpg --homedir "$GNUPG" --batch --with-colons --list-secret-keys "$ROBOT" >"$TMP/sec" 2>/dev/null &&
	expect_match "^sec:u:255:22:" "$TMP/sec" &&
	agent_running
'

# The server under strace -f (its delivery agent included): the GnuPG
# programs it starts and its connections to gpg-agent.  gpg-agent runs
# already (vulnid init made the key), so strace follows no daemon.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=execve,connect \
	-e signal=none -o "$TMP/strace.out" "$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
STRACE_PID=$!
bg_track "$STRACE_PID"
for _ in $(seq 200); do
	LMTPD_PID=$(pgrep -P "$STRACE_PID" | head -n 1)
	[ -n "$LMTPD_PID" ] && [ -S "$INST/lmtp.sock" ] && break
	sleep 0.05
done
[ -n "$LMTPD_PID" ] && lmtpd_track "$LMTPD_PID"

test_expect_success 'three requests, one after the other: each reply signed, verified by gpg and sqv' '
	for t in r1 r2 r3; do
		one "$t" && verified "$t"
	done &&
	expect_eq 3 "$(sql "SELECT count(*) FROM outbox WHERE status = '\''delivered'\''")"
'

test_expect_success 'no GnuPG program ran; the delivery agent connected to gpg-agent once for all three' '
	kill -TERM "$LMTPD_PID" &&
	wait_until sh -c "! kill -0 $STRACE_PID 2>/dev/null" &&
	{ grep "execve(" "$TMP/strace.out" | grep -v " = -1 " >"$TMP/execs" || true; } &&
	dagent=$(awk "/execve\\(.*--delivery-agent/ { print \$1; exit }" "$TMP/execs") &&
	{ test -n "$dagent" || fail "no delivery agent in $(cat "$TMP/execs")"; } &&
	expect_no_match "execve\(\"[^\"]*/gpg[-a-z]*\"" "$TMP/execs" &&
	{ grep "S\.gpg-agent\"" "$TMP/strace.out" >"$TMP/connects" || true; } &&
	expect_eq 1 "$(wc -l <"$TMP/connects" | tr -d " ")" "connections: $(cat "$TMP/connects")" &&
	expect_match "^$dagent +connect\(.* = 0$" "$TMP/connects"
'

# Untraced from here: the agent it starts would be followed for ever.
test_expect_success 'gpg-agent restarted between two mails: the next reply is signed on a new connection' '
	start_lmtpd &&
	one r4 && verified r4 &&
	gpgconf --homedir "$GNUPG" --kill gpg-agent &&
	wait_until sh -c "! gpg-connect-agent --homedir \"$GNUPG\" --no-autostart \"GETINFO pid\" /bye 2>/dev/null | grep -q \"^D \"" &&
	one r5 && verified r5 &&
	agent_running &&
	expect_eq 5 "$(sql "SELECT count(*) FROM outbox WHERE status = '\''delivered'\''")" &&
	stop_lmtpd &&
	expect_eq 0 "$lmtpd_rc"
'

test_done
