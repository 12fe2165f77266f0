# T85-lib.sh - helpers of the LMTP server tests (sourced after test-lib.sh)

LMTPD="$VULNID_BUILDDIR/src/vulnid-lmtpd"
LMTPC="$PYTHON $VULNID_SRCDIR/test/lmtp-client.py"

# Servers started inside a test case (a subshell, where bg_track does not
# reach) are listed in $TMP/lmtpd.pids and stopped at exit too.
lmtpd_track() { echo "$1" >>"$TMP/lmtpd.pids"; }
lmtpd_cleanup() {
	local p
	[ -f "$TMP/lmtpd.pids" ] || return 0
	for p in $(cat "$TMP/lmtpd.pids"); do
		kill "$p" 2>/dev/null
	done
	sleep 0.5
	for p in $(cat "$TMP/lmtpd.pids"); do
		kill -9 "$p" 2>/dev/null
	done
	return 0
}
trap 'lmtpd_cleanup; test_cleanup' EXIT

# start_lmtpd [SOCKET]: run vulnid-lmtpd for $CONF in the background
# (LMTPD_PID), stderr in $TMP/lmtpd.err; wait until SOCKET (default
# $INST/lmtp.sock) accepts connections.
start_lmtpd() {
	local sock=${1:-$INST/lmtp.sock}
	"$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
	LMTPD_PID=$!
	bg_track "$LMTPD_PID"
	lmtpd_track "$LMTPD_PID"
	for _ in $(seq 200); do
		if [ -S "$sock" ] && $PYTHON -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$sock" 2>/dev/null; then
			return 0
		fi
		kill -0 "$LMTPD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "vulnid-lmtpd did not start: $(cat "$TMP/lmtpd.err")" >&2
	return 1
}

# stop_lmtpd [SIGNAL]: signal it (TERM) and wait until it is gone; its
# exit status in $lmtpd_rc when it is a child of this shell (started in
# the same test case), else 0.
stop_lmtpd() {
	lmtpd_rc=0
	[ -n "${LMTPD_PID:-}" ] || return 0
	kill -"${1:-TERM}" "$LMTPD_PID" 2>/dev/null
	if wait "$LMTPD_PID" 2>/dev/null; then
		:
	else
		lmtpd_rc=$?
		[ "$lmtpd_rc" != 127 ] || lmtpd_rc=0
	fi
	for _ in $(seq 300); do
		kill -0 "$LMTPD_PID" 2>/dev/null || break
		sleep 0.05
	done
	LMTPD_PID=
}

# lmtp FILE [client options]: one mail over $INST/lmtp.sock; the replies
# in $TMP/lmtp.out.
lmtp() {
	local file=$1
	shift
	$LMTPC "${LMTP_ADDR:-$INST/lmtp.sock}" "$@" <"$file" >"$TMP/lmtp.out" 2>&1 ||
		fail "lmtp-client: $(cat "$TMP/lmtp.out")"
}

# wait_until CMD...: poll CMD every 0.1 s for up to 20 s.
wait_until() {
	local _
	for _ in $(seq 200); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# A distinct request of about SIZE bytes (default 1 KiB).
request_mail() {
	local file=$1 tag=$2 size=${3:-1024}
	$PYTHON - "$file" "$tag" "$size" <<'PY'
import sys
path, tag, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = (f"From: Researcher <{tag}@example.net>\nTo: request@example.org\nSubject: request {tag}\n"
        f"Message-ID: <{tag}@example.net>\nDate: Mon, 01 Jun 2026 10:00:00 +0000\n\n")
body = f"Product: Product {tag}\nVersion: 1.0\n\n"
line = "A line of the description, of a plausible length for such a text.\n"
while len(head) + len(body) + len(line) < size:
    body += line
open(path, "w").write(head + body)
PY
}

# sent_is N: N mails in the instance's sent/ Maildir (for wait_until).
sent_is() { [ "$(sent_count)" = "$1" ]; }

# --- private Postfix instances (root only) --------------------------------------
POSTFIX=$(command -v postfix 2>/dev/null || echo /usr/sbin/postfix)
POSTMAP=$(command -v postmap 2>/dev/null || echo /usr/sbin/postmap)
POSTQUEUE=$(command -v postqueue 2>/dev/null || echo /usr/sbin/postqueue)
PF_NAMES=""

# pf_start NAME PORT MAIN-SNIPPET TRANSPORT-TABLE: a Postfix instance of the
# test's own in $TMP/NAME (smtpd on 127.0.0.1:PORT, log in
# $TMP/NAME/postfix.log), with the active lines of a filters/ snippet
# (vulnid.example.org and /etc/postfix/ replaced) and TRANSPORT-TABLE as
# its vulnid-transport.
pf_start() {
	local name=$1 port=$2 snippet=$3 table=$4 d="$TMP/$1"
	mkdir -p "$d/etc" "$d/spool" "$d/data"
	chown postfix "$d/data"
	cat >"$d/etc/main.cf" <<-EOF
	compatibility_level = 3.6
	queue_directory = $d/spool
	data_directory = $d/data
	mail_owner = postfix
	setgid_group = postdrop
	myhostname = $name.example.net
	mydomain = example.net
	mydestination =
	inet_interfaces = 127.0.0.1
	inet_protocols = ipv4
	mynetworks = 127.0.0.0/8
	smtputf8_enable = no
	maillog_file = $d/postfix.log
	maillog_file_prefixes = $TMP
	relayhost =
	biff = no
	queue_run_delay = 1s
	minimal_backoff_time = 1s
	maximal_backoff_time = 2s
	delay_warning_time = 0
	smtpd_banner = \$myhostname ESMTP
	EOF
	grep -v '^[[:space:]]*#' "$snippet" | grep -v '^[[:space:]]*$' |
		sed -e "s|vulnid\.example\.org|example.org|g" -e "s|/etc/postfix/|$d/etc/|g" >>"$d/etc/main.cf"
	cp "$table" "$d/etc/vulnid-transport"
	cat >"$d/etc/master.cf" <<-EOF
	127.0.0.1:$port inet n - n - - smtpd
	pickup    unix  n       -       n       60      1       pickup
	cleanup   unix  n       -       n       -       0       cleanup
	qmgr      unix  n       -       n       300     1       qmgr
	rewrite   unix  -       -       n       -       -       trivial-rewrite
	bounce    unix  -       -       n       -       0       bounce
	defer     unix  -       -       n       -       0       bounce
	trace     unix  -       -       n       -       0       bounce
	verify    unix  -       -       n       -       1       verify
	flush     unix  n       -       n       1000?   0       flush
	proxymap  unix  -       -       n       -       -       proxymap
	proxywrite unix -       -       n       -       1       proxymap
	smtp      unix  -       -       n       -       -       smtp
	lmtp      unix  -       -       n       -       -       lmtp
	showq     unix  n       -       n       -       -       showq
	error     unix  -       -       n       -       -       error
	retry     unix  -       -       n       -       -       error
	discard   unix  -       -       n       -       -       discard
	anvil     unix  -       -       n       -       1       anvil
	scache    unix  -       -       n       -       1       scache
	postlog   unix-dgram n  -       n       -       1       postlogd
	EOF
	"$POSTMAP" -c "$d/etc" "hash:$d/etc/vulnid-transport" || return 1
	"$POSTFIX" -c "$d/etc" check >"$d/check.out" 2>&1 || { cat "$d/check.out" >&2; return 1; }
	"$POSTFIX" -c "$d/etc" start >"$d/start.out" 2>&1 || { cat "$d/start.out" "$d/postfix.log" >&2; return 1; }
	PF_NAMES="$PF_NAMES $name"
	for _ in $(seq 100); do
		ss -ltnH "sport = :$port" | grep -q . && return 0
		sleep 0.1
	done
	echo "postfix $name does not listen on $port" >&2
	return 1
}

pf_stop() {
	local d="$TMP/$1" pid kids p
	[ -f "$d/etc/main.cf" ] || return 0
	pid=$(tr -d ' \n' <"$d/spool/pid/master.pid" 2>/dev/null)
	kids=
	[ -z "$pid" ] || kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
	"$POSTFIX" -c "$d/etc" stop >/dev/null 2>&1
	for p in $pid $kids; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	return 0
}
pf_stop_all() { for n in $PF_NAMES; do pf_stop "$n"; done; }
pf_queue_empty() { [ -z "$("$POSTQUEUE" -c "$TMP/$1/etc" -j)" ]; }
