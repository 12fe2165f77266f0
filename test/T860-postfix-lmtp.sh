#!/bin/bash
# T860-postfix-lmtp: Postfix's lmtp(8) delivers to vulnid-lmtpd over its
# unix socket, configured from filters/postfix-lmtp-*; vulnid-lmtpd is
# killed with SIGKILL in the middle of the deliveries and started again:
# Postfix retries, and every mail is recorded once and answered once.
# Needs root (Postfix's master), postfix and smtp-source.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)
RUN_USER=nobody

if [ "$(id -u)" != 0 ]; then
	test_skip "Postfix lmtp:unix to vulnid-lmtpd" "needs root: Postfix's master runs as root"
test_done
fi
if [ ! -x "$POSTFIX" ] || [ ! -x "$SMTP_SOURCE" ] || ! id postfix >/dev/null 2>&1; then
	test_skip "Postfix lmtp:unix to vulnid-lmtpd" "Postfix is not installed (Debian package postfix)"
test_done
fi
trap 'pf_stop_all; lmtpd_cleanup; test_cleanup' EXIT
RUN_UID=$(id -u $RUN_USER) RUN_GID=$(id -g $RUN_USER)
as_user() {
	setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$@"
}
sql() { sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
chmod 755 "$TMP"

# The robot's instance, its user's; the socket outside the 0700 instance.
make_instance inst
set_conf crypto sign none
set_conf lifecycle rate_requests_per_hour 0
set_conf lifecycle rate_network_per_hour 0
set_conf lifecycle rate_domain_per_hour 0
set_conf policy loop_answers 100000
# one sender, hundreds of mails: no answer budget either
set_conf policy unverified_answer_bytes 0
mkdir "$TMP/run"
SOCK="$TMP/run/lmtp.sock"
set_conf lmtpd socket "$SOCK"
set_conf lmtpd socket_mode 0666
chown -R "$RUN_UID:$RUN_GID" "$INST" "$TMP/run"
if ! as_user test -x "$LMTPD"; then
	mkdir -p "$TMP/bin" && cp "$LMTPD" "$TMP/bin/" && chmod 755 "$TMP/bin" "$TMP/bin/vulnid-lmtpd"
	LMTPD="$TMP/bin/vulnid-lmtpd"
fi
# setpriv execs the server: $! is the server itself (through a shell
# function it would be a subshell, and kill -9 would miss the server)
run_lmtpd() {
	setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
	LMTPD_PID=$!
	bg_track "$LMTPD_PID"
	lmtpd_track "$LMTPD_PID"
	wait_until test -S "$SOCK"
}

PF_PORT=$(free_port)
sed -e "s|vulnid\.example\.org|example.org|g" -e "s|lmtp:unix:vulnid/lmtp.sock|lmtp:unix:$SOCK|" \
	"$VULNID_SRCDIR/filters/postfix-lmtp-transport" >"$TMP/transport"

pf_start mx "$PF_PORT" "$VULNID_SRCDIR/filters/postfix-lmtp-main.cf" "$TMP/transport" >"$TMP/pf.err" 2>&1
pf_rc=$?
run_lmtpd
test_expect_success 'the shipped snippets make a Postfix that passes postfix check and starts' '
	expect_eq 0 "$pf_rc" "pf_start: $(cat "$TMP/pf.err")" &&
	expect_eq "lmtp:unix:$SOCK" "$("$POSTMAP" -c "$TMP/mx/etc" -q request@example.org "hash:$TMP/mx/etc/vulnid-transport")" &&
	test -S "$SOCK"
'
[ "$pf_rc" = 0 ] || test_done

# mx_sent: recipients Postfix delivered over LMTP.
mx_sent() { grep -c "relay=[^,]*\[$SOCK\], .*status=sent" "$TMP/mx/postfix.log" || true; }

test_expect_success 'a mail through Postfix reaches the robot over LMTP and is answered once' '
	request_mail "$TMP/one.eml" one &&
	"$SMTP_SOURCE" -s 1 -m 1 -F "$TMP/one.eml" -f one@example.net -t "request@example.org" "127.0.0.1:$PF_PORT" &&
	wait_until pf_queue_empty mx &&
	expect_eq 1 "$(mx_sent)" &&
	expect_match "relay=[^,]*\[$SOCK\], .*status=sent \(250 2.0.0 assigned TEST-" "$TMP/mx/postfix.log" &&
	expect_eq "one@example.net|request@example.org" "$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages")" &&
	wait_until sent_is 1
'

test_expect_success 'kill -9 of vulnid-lmtpd amid 300 deliveries: Postfix retries, each mail is recorded and answered exactly once' '
	"$SMTP_SOURCE" -s 4 -m 300 -l 1500 -f r@example.net -t request@example.org "127.0.0.1:$PF_PORT" &
	source=$!
	n=0
	for _ in $(seq 600); do
		n=$(sql "SELECT count(*) FROM messages")
		[ "$n" -lt 30 ] || break
		sleep 0.02
	done
	kill -9 "$LMTPD_PID"
	echo "# killed after $n mails" >&2
	wait_until sh -c "! kill -0 $LMTPD_PID 2>/dev/null" || fail "the server survived kill -9"
	sleep 1
	test "$(sql "SELECT count(*) FROM messages")" -lt 301 || fail "all was delivered before the kill"
	rm -f "$SOCK"
	setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
	echo $! >"$TMP/lmtpd2.pid"
	lmtpd_track $!
	wait_until test -S "$SOCK"
	wait "$source" || fail "smtp-source"
	wait_until pf_queue_empty mx || { "$POSTQUEUE" -c "$TMP/mx/etc" -f; wait_until pf_queue_empty mx; } ||
		fail "mail left in the queue: $("$POSTQUEUE" -c "$TMP/mx/etc" -p | tail -n 5)"
	expect_eq 301 "$(mx_sent)" "recipients Postfix delivered"
	expect_eq "301|301|301|1|301" "$(sql "SELECT count(*) || '\''|'\'' || count(DISTINCT message_id) || '\''|'\'' || (SELECT count(*) FROM entries) || '\''|'\'' || (SELECT min(number) FROM entries) || '\''|'\'' || (SELECT max(number) FROM entries) FROM messages")"
	grep -q "status=deferred" "$TMP/mx/postfix.log" || fail "Postfix deferred nothing: the kill hit no delivery"
	wait_until sent_is 301 || fail "$(sent_count) acks"
	expect_eq 301 "$(grep -h "^In-Reply-To:" "$INST"/sent/new/* | sort -u | wc -l | tr -d " ")" "acks to distinct mails"
	expect_eq 301 "$(sql "SELECT count(*) FROM outbox")"
'

if [ -f "$TMP/lmtpd2.pid" ]; then
	kill "$(cat "$TMP/lmtpd2.pid")" 2>/dev/null
	wait_until sh -c "! kill -0 $(cat "$TMP/lmtpd2.pid") 2>/dev/null"
fi
test_done
