#!/bin/bash
# T864-postfix-debian-lmtp: Postfix with Debian's master.cf as installed
# (/usr/share/postfix/master.cf.dist: lmtp(8) and smtpd chrooted to the
# queue directory) delivers to vulnid-lmtpd with the shipped snippets
# (filters/postfix-lmtp-main.cf, postfix-lmtp-transport) and the three
# steps of vulnid-lmtpd(8), POSTFIX ON DEBIAN: the socket in a setgid
# directory of Postfix's group inside the chroot, named relative to the
# queue directory.  vulnid-lmtpd runs as a user outside Postfix's group.
# The mistakes around it are refused with the fix: socket_group without
# membership, a socket directory that is missing, one the group cannot
# pass.  Needs root (Postfix's master, chroot) and Postfix.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SMTP_SOURCE=$(command -v smtp-source 2>/dev/null || echo /usr/sbin/smtp-source)
MASTER_DIST=/usr/share/postfix/master.cf.dist
RUN_USER=nobody

if [ "$(id -u)" != 0 ]; then
	test_skip "Postfix on Debian: chrooted lmtp(8) to vulnid-lmtpd" "needs root: Postfix's master runs as root"
	test_done
fi
if [ ! -x "$POSTFIX" ] || [ ! -x "$SMTP_SOURCE" ] || ! id postfix >/dev/null 2>&1 || [ ! -f "$MASTER_DIST" ]; then
	test_skip "Postfix on Debian: chrooted lmtp(8) to vulnid-lmtpd" "Debian's postfix package is not installed"
	test_done
fi
trap 'pf_stop_all; lmtpd_cleanup; test_cleanup' EXIT
RUN_UID=$(id -u $RUN_USER) RUN_GID=$(id -g $RUN_USER)
sql() { sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
chmod 755 "$TMP"

make_instance inst
set_conf crypto sign none
D="$TMP/mx"
SPOOL="$D/spool"
mkdir -p "$SPOOL"
# step 1: the socket's directory, inside the chroot, setgid to Postfix's group
install -d -o "$RUN_USER" -g postfix -m 2750 "$SPOOL/vulnid"
# step 2: the socket there
SOCK="$SPOOL/vulnid/lmtp.sock"
set_conf lmtpd socket "$SOCK"
chown -R "$RUN_UID:$RUN_GID" "$INST"
if ! setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- test -x "$LMTPD"; then
	mkdir -p "$TMP/bin" && cp "$LMTPD" "$TMP/bin/" && chmod 755 "$TMP/bin" "$TMP/bin/vulnid-lmtpd"
	LMTPD="$TMP/bin/vulnid-lmtpd"
fi
# run_lmtpd: as $RUN_USER, in no group of Postfix's (setpriv execs it:
# $! is the server); its exit status in $TMP/lmtpd.rc when it ends
run_lmtpd() {
	setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/lmtpd.err" &
	LMTPD_PID=$!
	bg_track "$LMTPD_PID"
	lmtpd_track "$LMTPD_PID"
}
# lmtpd_fails: the server, as $RUN_USER, must not start: 75, its message in $TMP/lmtpd.err
lmtpd_fails() {
	local rc=0
	timeout 20 setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/lmtpd.err" || rc=$?
	expect_eq 75 "$rc" "vulnid-lmtpd's exit: $(cat "$TMP/lmtpd.err")"
}

# A Postfix of the test's own, its master.cf Debian's as installed: only
# the smtpd line listens on a port of loopback instead of port 25 (chroot
# still "y").  As Debian's start script does, the chroot gets the files
# of /etc the daemons read.
PF_PORT=$(free_port)
mkdir -p "$D/etc" "$D/data" "$SPOOL/etc"
chown postfix "$D/data"
for f in localtime host.conf hosts nsswitch.conf resolv.conf services; do
	[ -f "/etc/$f" ] && cp -L "/etc/$f" "$SPOOL/etc/"
done
cat >"$D/etc/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $SPOOL
data_directory = $D/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.example.net
mydomain = example.net
mydestination =
alias_maps =
alias_database =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtputf8_enable = no
maillog_file = $D/postfix.log
maillog_file_prefixes = $TMP
relayhost =
biff = no
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
delay_warning_time = 0
smtpd_banner = \$myhostname ESMTP
EOF
grep -v '^[[:space:]]*#' "$VULNID_SRCDIR/filters/postfix-lmtp-main.cf" | grep -v '^[[:space:]]*$' |
	sed -e "s|vulnid\.example\.org|example.org|g" -e "s|/etc/postfix/|$D/etc/|g" >>"$D/etc/main.cf"
sed "s|^smtp      inet  n       -       y       -       -       smtpd$|127.0.0.1:$PF_PORT inet n - y - - smtpd|" \
	"$MASTER_DIST" >"$D/etc/master.cf"
# step 3: the transport table as shipped (the path relative to the queue directory)
sed "s|vulnid\.example\.org|example.org|g" "$VULNID_SRCDIR/filters/postfix-lmtp-transport" >"$D/etc/vulnid-transport"
pf_rc=0
{ "$POSTMAP" -c "$D/etc" "hash:$D/etc/vulnid-transport" &&
	"$POSTFIX" -c "$D/etc" check && "$POSTFIX" -c "$D/etc" start; } >"$TMP/pf.err" 2>&1 || pf_rc=$?
PF_NAMES="mx"
run_lmtpd
wait_until test -S "$SOCK"

test_expect_success 'Debian'\''s master.cf as installed: lmtp(8) runs chrooted; Postfix starts with the snippets' '
	expect_eq 0 "$pf_rc" "postfix: $(cat "$TMP/pf.err")" &&
	expect_match "^lmtp +unix +- +- +y " "$D/etc/master.cf" &&
	expect_eq "lmtp:unix:vulnid/lmtp.sock" "$("$POSTMAP" -c "$D/etc" -q request@example.org "hash:$D/etc/vulnid-transport")" &&
	wait_until ss -ltnH "sport = :$PF_PORT" | grep -q . &&
	test -S "$SOCK"
'
[ "$pf_rc" = 0 ] || test_done

test_expect_success 'the socket is Postfix'\''s group by the setgid directory, mode 0660; the server is in no group of Postfix'\''s' '
	expect_eq "$RUN_USER postfix 660" "$(stat -c "%U %G %a" "$SOCK")" &&
	! grep -q "^Groups:.* $(getent group postfix | cut -d: -f3)\( \|$\)" "/proc/$LMTPD_PID/status" &&
	test ! -s "$TMP/lmtpd.err"
'

test_expect_success 'a mail through the chrooted lmtp(8) reaches the robot and is answered' '
	request_mail "$TMP/one.eml" deb1 &&
	"$SMTP_SOURCE" -s 1 -m 1 -F "$TMP/one.eml" -f deb1@example.net -t request@example.org "127.0.0.1:$PF_PORT" &&
	wait_until pf_queue_empty mx ||
		fail "still queued: $("$POSTQUEUE" -c "$D/etc" -p | tail -n 5); $(tail -n 5 "$D/postfix.log")"
	expect_match "relay=[^,]*\[vulnid/lmtp.sock\], .*status=sent \(250 2.0.0 assigned TEST-" "$D/postfix.log" &&
	expect_no_match "No such file or directory|Permission denied" "$D/postfix.log" &&
	expect_eq "deb1@example.net|request@example.org" "$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages")" &&
	wait_until sent_is 1
'

kill "$LMTPD_PID" 2>/dev/null
wait_until sh -c "! kill -0 $LMTPD_PID 2>/dev/null"

test_expect_success 'socket_group without membership (a socket outside the setgid directory) is refused with the two ways to fix it' '
	set_conf lmtpd socket "$INST/lmtp.sock" &&
	set_conf lmtpd socket_group postfix &&
	lmtpd_fails &&
	expect_match "\[lmtpd\] socket_group: cannot give .* to group .postfix.: Operation not permitted: $RUN_USER is not in that group" "$TMP/lmtpd.err" &&
	expect_match "install -d -o $RUN_USER -g postfix -m 2750 DIR" "$TMP/lmtpd.err" &&
	expect_match "adduser $RUN_USER postfix" "$TMP/lmtpd.err" &&
	test ! -e "$INST/lmtp.sock" &&
	set_conf lmtpd socket_group "" && set_conf lmtpd socket "$SOCK"
'

test_expect_success 'a socket directory that is missing is refused with the install -d that makes it' '
	set_conf lmtpd socket "$SPOOL/nonesuch/lmtp.sock" &&
	lmtpd_fails &&
	expect_match "cannot listen on .*nonesuch/lmtp.sock.: No such file or directory: .*install -d -o $RUN_USER -g postfix -m 2750 .$SPOOL/nonesuch." "$TMP/lmtpd.err" &&
	set_conf lmtpd socket "$SOCK"
'

test_expect_success 'a socket the group cannot reach starts with a warning that says why' '
	install -d -o "$RUN_USER" -g postfix -m 2700 "$SPOOL/closed" &&
	set_conf lmtpd socket "$SPOOL/closed/lmtp.sock" &&
	run_lmtpd &&
	wait_until test -S "$SPOOL/closed/lmtp.sock" &&
	wait_until grep -q "warning" "$TMP/lmtpd.err" &&
	expect_match "warning: group postfix cannot reach .$SPOOL/closed/lmtp.sock.: .$SPOOL/closed. is mode 2700" "$TMP/lmtpd.err" &&
	kill "$LMTPD_PID" && set_conf lmtpd socket "$SOCK"
'

test_done
