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

# ---- Exim and OpenSMTPD, from their Debian packages ----------------------------
#
# Each replaces Postfix as the system's MTA, so neither is installed next
# to it: test/mta-fetch downloads the package (apt-get download) and
# unpacks it (dpkg-deb -x) into MTA_CACHE once, and the daemon runs from
# there, in a user namespace of its own (test/userns-run.py) whose uid N
# is MTA_BASE+N on the machine: "root" and "nobody" in there have no
# privilege here, and its mounts (a passwd with the MTA's users, its fixed
# spool and run paths bind-mounted from the test's directory) are its own.
# The listeners are on free ports of 127.0.0.1.
#
#   mta_have PACKAGE BINARY   fetched and unpacked, and BINARY finds its
#                             libraries; else false, the reason in MTA_WHY
#   mta_uid N                 the machine's uid of the namespace's uid N
#   mta_ns BINDS SCRIPT [ARG...]
#                             SCRIPT (sh) as root of a new namespace, after
#                             the mounts in BINDS: lines "bind FROM TO" or
#                             "overlay DIR TO" (DIR laid over TO)
#
# Exim (exim4-daemon-light) runs as the namespace's nobody, its pipe
# transport too:
#   exim_setup DIR PORT       a configuration in DIR: example.net into the
#                             Maildir EXIM_MAILDIR, and for example.org the
#                             router and transport in EXIM_ROUTERS and
#                             EXIM_TRANSPORTS (by default those of
#                             filters/exim, with $FILTER, $CONF, $INST and
#                             the user nobody); EXIM_CONF, EXIM_LOG (mainlog)
#   exim_start, exim_stop, exim_ns ARG...  (exim_ns -bt ADDR, -qff, ...)
# OpenSMTPD starts as the namespace's root and drops to its own users, the
# mda action to nobody:
#   smtpd_setup DIR PORT      the same, with the rules in SMTPD_RULES (by
#                             default filters/opensmtpd's); SMTPD_CONF,
#                             SMTPD_LOG (its -d output), SMTPD_MAILDIR
#   smtpd_start, smtpd_stop, smtpd_ns ARG... (smtpd -n ...), smtpctl_ns ARG...
#
# Start the daemons at the top level of a test, so that their PIDs are
# known to the trap that stops them.  The instance of the filter must
# belong to $(mta_uid 65534).

: "${MTA_CACHE:=${VULNID_MTA_CACHE:-$VULNID_BUILDDIR/test/mta-cache}}"
MTA_ROOT="$MTA_CACHE/root"
MTA_BASE=3000000000
MTA_NOBODY=65534
FILTERS_DIR="$VULNID_SRCDIR/filters"

mta_uid() { echo $((MTA_BASE + $1)); }

mta_have() {
	local missing
	MTA_WHY=
	if [ "$(id -u)" != 0 ]; then
		MTA_WHY="needs root, to give the MTA a user namespace of its own"
		return 1
	fi
	MTA_WHY=$("$VULNID_SRCDIR/test/mta-fetch" "$MTA_CACHE" "$1" 2>&1) || return 1
	missing=$(ldd "$MTA_ROOT/$2" 2>&1 | sed -n 's/^[[:space:]]*\([^ ]*\) => not found$/\1/p' | tr '\n' ' ')
	if [ -n "$missing" ]; then
		MTA_WHY="$2 needs $missing(contrib/quickstart installs them)"
		return 1
	fi
	if ! "$PYTHON" "$VULNID_SRCDIR/test/userns-run.py" "$MTA_BASE" true 2>/dev/null; then
		MTA_WHY="no user namespaces here (unshare(CLONE_NEWUSER) failed)"
		return 1
	fi
}

mta_ns() {
	local binds=$1 script mounts
	shift
	mounts=$(printf '%s\n' "$binds" | while read -r kind a b; do
		case $kind in
		bind) printf "mount --bind '%s' '%s'\n" "$a" "$b" ;;
		overlay) printf "mount -t overlay overlay -o 'lowerdir=%s:%s' '%s'\n" "$b" "$a" "$b" ;;
		esac
	done)
	script=$1
	shift
	# a daemon started in the background replaces its subshell, so that
	# its PID is the one to stop
	if [ -n "${MTA_EXEC:-}" ]; then
		exec "$PYTHON" "$VULNID_SRCDIR/test/userns-run.py" "$MTA_BASE" "set -e
$mounts
$script" "$@"
	fi
	"$PYTHON" "$VULNID_SRCDIR/test/userns-run.py" "$MTA_BASE" "set -e
$mounts
$script" "$@"
}

# mta_passwd DIR USER... : DIR/passwd and DIR/group, the machine's plus USER
# (name:uid, also a group of that number)
mta_passwd() {
	local dir=$1 u
	shift
	cp /etc/passwd "$dir/passwd"
	cp /etc/group "$dir/group"
	for u; do
		printf '%s:x:%s:%s::/nonexistent:/usr/sbin/nologin\n' "${u%%:*}" "${u#*:}" "${u#*:}" >>"$dir/passwd"
		printf '%s:x:%s:\n' "${u%%:*}" "${u#*:}" >>"$dir/group"
	done
}

# mta_snippet FILE: a snippet of filters/ with the test's paths, domain and
# user
mta_snippet() {
	sed -e "s|vulnid\\.example\\.org|example.org|g" -e "s|vulnid\\\\\\.example\\\\\\.org|example\\\\.org|g" \
	    -e "s|/usr/local/sbin/vulnid-filter|$FILTER|" -e "s|/var/lib/vulnid/vulnid.conf|$CONF|" \
	    -e "s|/var/lib/vulnid|$INST|g" \
	    -e "s/^\\([[:space:]]*user = \\)vulnid$/\\1nobody/" -e "s/^\\([[:space:]]*group = \\)vulnid$/\\1nogroup/" \
	    -e "s/ user vulnid$/ user nobody/" -e "s/\"@\" = vulnid/\"@\" = nobody/" "$1"
}

# mta_mail_dir DIR: a Maildir root for the namespace's nobody
mta_mail_dir() {
	mkdir -p "$1"
	chown "$(mta_uid $MTA_NOBODY):$(mta_uid $MTA_NOBODY)" "$1"
}

mta_stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill "$1" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	return 0
}

# ---- Exim -------------------------------------------------------------------------

exim_setup() {
	EXIM_DIR=$1
	EXIM_PORT=$2
	EXIM_CONF="$EXIM_DIR/exim.conf"
	EXIM_LOG="$EXIM_DIR/log/mainlog"
	EXIM_MAILDIR="$EXIM_DIR/mail/Maildir"
	EXIM_BIN="$MTA_ROOT/usr/sbin/exim4"
	chmod o+x "$TMP"
	mkdir -p "$EXIM_DIR/spool" "$EXIM_DIR/log"
	chmod 755 "$EXIM_DIR"
	chown -R "$(mta_uid $MTA_NOBODY):$(mta_uid $MTA_NOBODY)" "$EXIM_DIR/spool" "$EXIM_DIR/log"
	mta_mail_dir "$EXIM_DIR/mail"
	# the package's compiled-in user, which it looks up before it reads
	# its configuration
	mta_passwd "$EXIM_DIR" "Debian-exim:$MTA_NOBODY"
	EXIM_BINDS="bind $EXIM_DIR/passwd /etc/passwd
bind $EXIM_DIR/group /etc/group"
	mta_snippet "$FILTERS_DIR/exim" >"$EXIM_DIR/snippet"
	: "${EXIM_ROUTERS=$(sed -n '/^begin routers/,/^begin transports/p' "$EXIM_DIR/snippet" | sed '1d;$d')}"
	: "${EXIM_TRANSPORTS=$(sed -n '/^begin transports/,$p' "$EXIM_DIR/snippet" | sed '1d')}"
	{
		cat <<-EOF
		exim_path = $EXIM_BIN
		exim_user = nobody
		exim_group = nogroup
		primary_hostname = mx.example.org
		qualify_domain = example.org
		domainlist local_domains = example.org : example.net
		spool_directory = $EXIM_DIR/spool
		log_file_path = $EXIM_DIR/log/%slog
		pid_file_path = $EXIM_DIR/exim.pid
		daemon_smtp_ports = $EXIM_PORT
		local_interfaces = 127.0.0.1
		acl_smtp_rcpt = acl_check_rcpt
		keep_environment =
		message_size_limit = 50M
		log_selector = +tls_cipher +delivery_size

		begin acl
		acl_check_rcpt:
		  accept domains = +local_domains
		         verify = recipient
		  deny   message = relay not permitted

		EOF
		printf 'begin routers\n\n%s\n\n' "$EXIM_ROUTERS"
		cat <<-EOF
		maildir_router:
		  driver = accept
		  domains = example.net
		  transport = maildir

		EOF
		printf 'begin transports\n\n%s\n' "$EXIM_TRANSPORTS"
		cat <<-EOF

		maildir:
		  driver = appendfile
		  directory = $EXIM_MAILDIR
		  maildir_format
		  create_directory
		  user = nobody
		  group = nogroup

		begin retry
		*   *   F,1h,1m
		EOF
	} >"$EXIM_CONF"
}

exim_ns() {
	mta_ns "$EXIM_BINDS" 'exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"' \
		"$EXIM_BIN" -C "$EXIM_CONF" "$@"
}

exim_start() {
	(MTA_EXEC=1 exim_ns -bdf -q2s) >"$EXIM_DIR/daemon.out" 2>&1 &
	EXIM_PID=$!
	bg_track "$EXIM_PID"
	mta_wait_port "$EXIM_PORT" || { cat "$EXIM_DIR/daemon.out" "$EXIM_LOG" >&2; return 1; }
}

exim_stop() { mta_stop_pid "${EXIM_PID:-}"; EXIM_PID=; }

# ---- OpenSMTPD --------------------------------------------------------------------

smtpd_setup() {
	SMTPD_DIR=$1
	SMTPD_PORT=$2
	SMTPD_CONF="$SMTPD_DIR/smtpd.conf"
	SMTPD_LOG="$SMTPD_DIR/smtpd.log"
	SMTPD_MAILDIR="$SMTPD_DIR/mail/Maildir"
	SMTPD_BIN="$MTA_ROOT/usr/sbin/smtpd"
	chmod o+x "$TMP"
	chmod 755 "$SMTPD_DIR"
	# its fixed paths: /var/spool/smtpd, the chroot /var/lib/opensmtpd/empty,
	# the control socket in /run; its users opensmtpd and opensmtpq
	mkdir -p "$SMTPD_DIR/spool" "$SMTPD_DIR/varlib/opensmtpd/empty" "$SMTPD_DIR/run"
	chown "$(mta_uid 0):$(mta_uid 0)" "$SMTPD_DIR/spool" "$SMTPD_DIR/run" "$SMTPD_DIR/varlib" \
		"$SMTPD_DIR/varlib/opensmtpd" "$SMTPD_DIR/varlib/opensmtpd/empty"
	mta_mail_dir "$SMTPD_DIR/mail"
	mta_passwd "$SMTPD_DIR" opensmtpd:64001 opensmtpq:64002
	SMTPD_BINDS="bind $SMTPD_DIR/passwd /etc/passwd
bind $SMTPD_DIR/group /etc/group
bind $SMTPD_DIR/spool /var/spool
bind $SMTPD_DIR/varlib /var/lib
bind $SMTPD_DIR/run /run
overlay $MTA_ROOT/usr/libexec /usr/libexec"
	: "${SMTPD_RULES=$(mta_snippet "$FILTERS_DIR/opensmtpd" | grep -v '^#')}"
	{
		printf 'listen on 127.0.0.1 port %s\n' "$SMTPD_PORT"
		printf '%s\n' "$SMTPD_RULES"
		printf 'action "maildir" maildir "%s" virtual { "@" = nobody }\n' "$SMTPD_MAILDIR"
		printf 'match from any for domain "example.net" action "maildir"\n'
	} >"$SMTPD_CONF"
}

smtpd_ns() { mta_ns "$SMTPD_BINDS" 'exec "$@"' "$SMTPD_BIN" "$@"; }
# (smtpctl insists on running with the group opensmtpq, as installed setgid)
smtpctl_ns() {
	mta_ns "$SMTPD_BINDS" 'exec setpriv --regid=64002 --clear-groups -- "$@"' "$MTA_ROOT/usr/sbin/smtpctl" "$@"
}

smtpd_start() {
	(MTA_EXEC=1 smtpd_ns -d -f "$SMTPD_CONF") >"$SMTPD_LOG" 2>&1 &
	SMTPD_PID=$!
	bg_track "$SMTPD_PID"
	mta_wait_port "$SMTPD_PORT" || { cat "$SMTPD_LOG" >&2; return 1; }
}

smtpd_stop() { mta_stop_pid "${SMTPD_PID:-}"; SMTPD_PID=; }
