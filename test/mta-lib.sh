# mta-lib.sh - real MTAs for the tests, each a private instance of the test:
# its configuration, queue, log and mailboxes under $TMP, its listeners on
# free ports of 127.0.0.1, stopped at exit.  Sourced after test-lib.sh.
# The system's own MTA is never touched.
#
# Postfix (needs root: its master runs as root):
#   pf_setup DIR      a configuration in DIR/etc: local mail for
#                     example.net into the Maildir DIR/mail/maildir (owned
#                     by MTA_USER), the log in DIR/postfix.log, queue_run_delay
#                     1 s; PF_CFG, PF_LOG, PF_MAILDIR
#   pf_service LINE   one more master.cf line (an smtpd on a port, ...)
#   pf_start, pf_stop (pf_stop also runs at exit)

: "${MTA_USER:=nobody}"
POSTFIX=$(command -v postfix 2>/dev/null || echo /usr/sbin/postfix)
POSTCONF=$(command -v postconf 2>/dev/null || echo /usr/sbin/postconf)

# mta_wait_port PORT: up to 10 s for a listener on 127.0.0.1:PORT
mta_wait_port() {
	for _ in $(seq 200); do
		ss -ltnH "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# mta_stop_pids PID...: TERM, then KILL what is left after 5 s
mta_stop_pids() {
	local p
	for p in "$@"; do kill "$p" 2>/dev/null; done
	for p in "$@"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	return 0
}

# ---- Postfix -------------------------------------------------------------------

pf_usable() {
	[ "$(id -u)" = 0 ] && [ -x "$POSTFIX" ] && [ -x "$POSTCONF" ] && id postfix >/dev/null 2>&1 &&
		id "$MTA_USER" >/dev/null 2>&1
}

pf_setup() {
	PF_DIR=$1
	PF_CFG="$PF_DIR/etc"
	PF_Q="$PF_DIR/spool"
	PF_LOG="$PF_DIR/postfix.log"
	PF_MAILDIR="$PF_DIR/mail/maildir"
	chmod o+x "$TMP"
	mkdir -p "$PF_CFG" "$PF_Q" "$PF_DIR/data" "$PF_DIR/mail"
	chmod 755 "$PF_DIR"
	chown postfix "$PF_DIR/data"
	chown "$MTA_USER" "$PF_DIR/mail"
	cat >"$PF_CFG/main.cf" <<-EOF
	compatibility_level = 3.6
	queue_directory = $PF_Q
	data_directory = $PF_DIR/data
	mail_owner = postfix
	setgid_group = postdrop
	myhostname = mx.example.org
	mydomain = example.org
	myorigin = \$myhostname
	mydestination =
	alias_maps =
	alias_database =
	inet_interfaces = 127.0.0.1
	inet_protocols = ipv4
	mynetworks = 127.0.0.0/8
	smtputf8_enable = no
	maillog_file = $PF_LOG
	maillog_file_prefixes = $TMP
	relayhost =
	biff = no
	queue_run_delay = 1s
	minimal_backoff_time = 2s
	maximal_backoff_time = 5s
	delay_warning_time = 0
	smtpd_banner = \$myhostname ESMTP
	virtual_mailbox_domains = example.net
	virtual_mailbox_base = $PF_DIR/mail
	virtual_mailbox_maps = static:maildir/
	virtual_uid_maps = static:$(id -u "$MTA_USER")
	virtual_gid_maps = static:$(id -g "$MTA_USER")
	EOF
	cat >"$PF_CFG/master.cf" <<-EOF
	pickup    unix  n       -       n       60      1       pickup
	cleanup   unix  n       -       n       -       0       cleanup
	qmgr      unix  n       -       n       300     1       qmgr
	tlsmgr    unix  -       -       n       1000?   1       tlsmgr
	rewrite   unix  -       -       n       -       -       trivial-rewrite
	bounce    unix  -       -       n       -       0       bounce
	defer     unix  -       -       n       -       0       bounce
	trace     unix  -       -       n       -       0       bounce
	verify    unix  -       -       n       -       1       verify
	flush     unix  n       -       n       1000?   0       flush
	proxymap  unix  -       -       n       -       -       proxymap
	proxywrite unix -       -       n       -       1       proxymap
	smtp      unix  -       -       n       -       -       smtp
	relay     unix  -       -       n       -       -       smtp
	showq     unix  n       -       n       -       -       showq
	error     unix  -       -       n       -       -       error
	retry     unix  -       -       n       -       -       error
	discard   unix  -       -       n       -       -       discard
	virtual   unix  -       n       n       -       -       virtual
	anvil     unix  -       -       n       -       1       anvil
	scache    unix  -       -       n       -       1       scache
	postlog   unix-dgram n  -       n       -       1       postlogd
	EOF
	trap 'pf_stop; test_cleanup' EXIT
}

pf_service() { printf '%s\n' "$1" >>"$PF_CFG/master.cf"; }

pf_start() {
	"$POSTFIX" -c "$PF_CFG" check >"$PF_DIR/check.out" 2>&1 || { cat "$PF_DIR/check.out" >&2; return 1; }
	"$POSTFIX" -c "$PF_CFG" start >"$PF_DIR/start.out" 2>&1 || { cat "$PF_DIR/start.out" "$PF_LOG" >&2; return 1; }
}

pf_stop() {
	local pid kids
	[ -n "${PF_CFG:-}" ] && [ -f "$PF_CFG/main.cf" ] || return 0
	pid=$(tr -d ' \n' <"$PF_Q/pid/master.pid" 2>/dev/null)
	kids=
	[ -z "$pid" ] || kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
	"$POSTFIX" -c "$PF_CFG" stop >/dev/null 2>&1
	# shellcheck disable=SC2086
	mta_stop_pids $pid $kids
}

# pf_logged PATTERN: Postfix logged a line matching the grep -E PATTERN
pf_logged() { grep -Eq -- "$1" "$PF_LOG"; }
