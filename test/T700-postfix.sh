#!/bin/bash
# T700-postfix: a real Postfix instance, built from filters/postfix-*, pipes
# mail into vulnid-filter; the robot's replies go back through the same
# Postfix into a local Maildir.  Exit 75 must make Postfix defer and retry.
#
# The instance is the test's own (config, queue and data directories under
# $TMP, smtpd on a free port of 127.0.0.1); the system's Postfix is never
# touched.  Postfix's master must run as root, and pipe(8) runs the filter
# as an unprivileged user (nobody), so this test needs root.
. "$(dirname "$0")/test-lib.sh"

FILTERS="$VULNID_SRCDIR/filters"
POSTFIX=$(command -v postfix 2>/dev/null || echo /usr/sbin/postfix)
POSTCONF=$(command -v postconf 2>/dev/null || echo /usr/sbin/postconf)
POSTQUEUE=$(command -v postqueue 2>/dev/null || echo /usr/sbin/postqueue)
POSTMAP=$(command -v postmap 2>/dev/null || echo /usr/sbin/postmap)
POSTALIAS=$(command -v postalias 2>/dev/null || echo /usr/sbin/postalias)
SWAKS=$(command -v swaks 2>/dev/null || true)
PIPE_USER=nobody

if [ "$(id -u)" != 0 ]; then
	test_skip "Postfix pipe transport" "needs root: Postfix's master runs as root and pipe(8) switches to an unprivileged user"
	test_done
fi
if [ ! -x "$POSTFIX" ] || [ ! -x "$POSTCONF" ]; then
	test_skip "Postfix pipe transport" "Postfix is not installed (Debian package postfix)"
	test_done
fi
if [ -z "$SWAKS" ]; then
	test_skip "Postfix pipe transport" "swaks is not installed (Debian package swaks)"
	test_done
fi
if ! id "$PIPE_USER" >/dev/null 2>&1 || ! id postfix >/dev/null 2>&1; then
	test_skip "Postfix pipe transport" "the users $PIPE_USER and postfix must exist"
	test_done
fi
PIPE_GROUP=$(id -gn "$PIPE_USER")
PIPE_UID=$(id -u "$PIPE_USER")
PIPE_GID=$(id -g "$PIPE_USER")
Y=$(date -u +%Y)

# as_user CMD...: run CMD as the pipe(8) user, so that nothing in the
# instance ever becomes root's.
as_user() {
	setpriv --reuid="$PIPE_UID" --regid="$PIPE_GID" --clear-groups -- \
		env VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" "$@"
}
sql() { as_user sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
vulnid() { as_user "$VULNID" -c "$CONF" "$@"; }

# wait_until CMD...: poll CMD every 0.2 s for up to 30 s.
wait_until() {
	local _
	for _ in $(seq 150); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# --- the Postfix instance ------------------------------------------------------
chmod 755 "$TMP"
PF="$TMP/pf"
PF_CFG="$PF/etc"
PF_Q="$PF/spool"
PF_LOG="$TMP/postfix.log"
PF_PORT=$(free_port)
MAILDIR="$PF/mail/maildir"
PF_MASTER_PID=

pf_stop() {
	local pid kids p
	[ -f "$PF_CFG/main.cf" ] || return 0
	pid=$(tr -d ' \n' <"$PF_Q/pid/master.pid" 2>/dev/null)
	kids=
	[ -z "$pid" ] || kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
	"$POSTFIX" -c "$PF_CFG" stop >/dev/null 2>&1
	for p in $pid $kids; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	return 0
}
# The filter runs as $PIPE_USER, and so does any gpg-agent it starts for
# the instance's keyring: stop that one as that user (gpgconf finds the
# agent's socket by the uid that runs it).
agent_stop() {
	[ -d "${INST:-/nonexistent}/gnupg" ] || return 0
	as_user gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
	return 0
}
trap 'pf_stop; agent_stop; test_cleanup' EXIT

# The vulnid instance, owned by the user the pipe transport runs as.
make_instance inst
cp "$VULNID_TEMPLATE_DIR"/*.txt "$INST/templates/"
set_conf delivery transport "smtp://127.0.0.1:$PF_PORT"
set_conf delivery starttls no
set_conf delivery timeout 10
mkdir "$TMP/run"
chown -R "$PIPE_USER:$PIPE_GROUP" "$INST" "$TMP/run"
# pipe(8) execs the filter as that user: use the built one if it can.
if ! as_user test -x "$FILTER"; then
	mkdir -p "$TMP/bin" && cp "$FILTER" "$TMP/bin/" && chmod 755 "$TMP/bin" "$TMP/bin/vulnid-filter"
	FILTER="$TMP/bin/vulnid-filter"
fi

mkdir -p "$PF_CFG" "$PF_Q" "$PF/data" "$PF/mail"
chown postfix "$PF/data"
chown "$PIPE_USER:$PIPE_GROUP" "$PF/mail"

# main.cf: the test's own base, then the active lines of the shipped
# snippet with its domain and paths replaced.
cat >"$PF_CFG/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $PF_Q
data_directory = $PF/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.example.org
mydomain = example.org
myorigin = \$myhostname
# local(8) for the aliases(5) and .forward variants
mydestination = example.com
local_transport = local
alias_maps = hash:$TMP/run/aliases
alias_database = hash:$TMP/run/aliases
forward_path = $TMP/run/\${user}.forward
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
# the researcher's and the vendor's side: one Maildir for all of example.net
virtual_mailbox_domains = example.net
virtual_mailbox_base = $PF/mail
virtual_mailbox_maps = static:maildir/
virtual_uid_maps = static:$PIPE_UID
virtual_gid_maps = static:$PIPE_GID
EOF
grep -v '^[[:space:]]*#' "$FILTERS/postfix-main.cf" | grep -v '^[[:space:]]*$' |
	sed -e "s|vulnid\.example\.org|example.org|g" -e "s|/etc/postfix/|$PF_CFG/|g" >>"$PF_CFG/main.cf"
sed -e "s|vulnid\.example\.org|example.org|g" "$FILTERS/postfix-transport" >"$PF_CFG/vulnid-transport"

# master.cf: the services this test needs, none chrooted, smtpd on our port,
# then the shipped vulnid entry with the built filter, the test instance and
# the test user.
cat >"$PF_CFG/master.cf" <<EOF
127.0.0.1:$PF_PORT inet n - n - - smtpd
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
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
local     unix  -       n       n       -       -       local
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF
grep -v '^#' "$FILTERS/postfix-master.cf" |
	sed -e "s|/usr/local/sbin/vulnid-filter|$FILTER|" -e "s|/var/lib/vulnid/vulnid.conf|$CONF|" \
	    -e "s|user=vulnid|user=$PIPE_USER|" >>"$PF_CFG/master.cf"

listening() { ss -ltnH "sport = :$PF_PORT" | grep -q .; }

# postfix-aliases and dot-forward: owned by the user local(8) is to run
# the filter as.
sed -e "s|/usr/local/sbin/vulnid-filter|$FILTER|" -e "s|/var/lib/vulnid/vulnid.conf|$CONF|" \
	"$FILTERS/postfix-aliases" >"$TMP/run/aliases"
sed -e "s|/usr/local/sbin/vulnid-filter|$FILTER|" -e "s|/var/lib/vulnid/vulnid.conf|$CONF|" \
	"$FILTERS/dot-forward" >"$TMP/run/$PIPE_USER.forward"
chown "$PIPE_USER:$PIPE_GROUP" "$TMP/run/aliases" "$TMP/run/$PIPE_USER.forward"

test_expect_success 'the shipped snippets make a Postfix instance that passes postfix check and starts' '
	grep -q "^vulnid .*pipe$" "$PF_CFG/master.cf" &&
	grep -q "argv=$FILTER$" "$PF_CFG/master.cf" &&
	"$POSTMAP" -c "$PF_CFG" hash:"$PF_CFG/vulnid-transport" &&
	expect_eq "vulnid:" "$("$POSTMAP" -c "$PF_CFG" -q request@example.org hash:"$PF_CFG/vulnid-transport")" &&
	expect_eq 1 "$("$POSTCONF" -c "$PF_CFG" -h vulnid_destination_recipient_limit)" &&
	as_user "$POSTALIAS" -c "$PF_CFG" hash:"$TMP/run/aliases" &&
	expect_eq "$PIPE_USER" "$(stat -c %U "$TMP/run/aliases.db")" &&
	{ "$POSTFIX" -c "$PF_CFG" check >"$TMP/check.out" 2>&1 || fail "postfix check: $(cat "$TMP/check.out")"; } &&
	expect_eq "" "$(cat "$TMP/check.out")" "postfix check output" &&
	{ "$POSTFIX" -c "$PF_CFG" start >"$TMP/start.out" 2>&1 || fail "postfix start: $(cat "$TMP/start.out" "$PF_LOG")"; } &&
	{ wait_until listening || fail "smtpd does not listen on $PF_PORT: $(cat "$PF_LOG")"; }
'
if ! listening; then
	test_done
fi

# send FROM TO FILE: one mail with swaks; its output in $TMP/swaks.out,
# its status in $src, Postfix's queue id in $qid.
send() {
	src=0
	"$SWAKS" --server 127.0.0.1 --port "$PF_PORT" --helo client.example.net \
		--from "$1" --to "$2" --data "@$3" --timeout 20 >"$TMP/swaks.out" 2>&1 || src=$?
	qid=$(sed -n "s/.*queued as \([0-9A-Za-z]*\).*/\1/p" "$TMP/swaks.out" | tail -n 1)
}
send_ok() {
	send "$@"
	[ "$src" -eq 0 ] && [ -n "$qid" ] || fail "swaks: $(cat "$TMP/swaks.out")"
}

# maildir_subject SUBJECT: the mail in the Maildir with that Subject.
maildir_subject() {
	local f
	for f in "$MAILDIR"/new/*; do
		[ -f "$f" ] || continue
		[ "$(mail_header "$f" Subject)" = "$1" ] && { echo "$f"; return 0; }
	done
	return 1
}
# wait_mail SUBJECT: wait for it, print its file name.
wait_mail() {
	wait_until maildir_subject "$1" >/dev/null ||
		fail "no mail with Subject '$1' in the Maildir; log: $(tail -n 30 "$PF_LOG")"
	maildir_subject "$1"
}
# entry_of MESSAGE-ID: the identifiers assigned for that mail.
entry_of() { sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'"; }
has_entry() { [ -n "$(entry_of "$1")" ]; }
queue_empty() { [ -z "$("$POSTQUEUE" -c "$PF_CFG" -j)" ]; }
# logged QUEUEID PATTERN: Postfix logged PATTERN for that queue id.
logged() { grep -E "$1: .*$2" "$PF_LOG" >/dev/null; }

test_expect_success 'a request sent with swaks comes back as an ack in the Maildir' '
	write_mail "$TMP/r1.eml" "Message-ID: <pf1@example.net>" "Subject: Overflow in Foo" <<<"Product: Foo" &&
	send_ok alice@example.net request@example.org "$TMP/r1.eml" &&
	f=$(wait_mail "[TEST-$Y-0001] Overflow in Foo") &&
	expect_eq "Alice Researcher <alice@example.net>" "$(mail_header "$f" To)" &&
	expect_eq "<pf1@example.net>" "$(mail_header "$f" In-Reply-To)" &&
	expect_match "^Return-Path: <request-bounces\+[0-9a-f]+@example.org>" "$f" &&
	wait_until logged "$qid" "to=<request@example.org>, relay=vulnid, .*status=sent" &&
	expect_eq "alice@example.net|request@example.org" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages WHERE message_id = '\''pf1@example.net'\''")" &&
	expect_eq "TEST-$Y-0001" "$(sql "SELECT id FROM entries")" &&
	expect_eq "127.0.0.1|127.0.0.0/24" "$(sql "SELECT client_address || '\''|'\'' || client_net FROM messages WHERE message_id = '\''pf1@example.net'\''")" "pipe(8) passes \${client_address}" &&
	sql "SELECT CAST(data AS TEXT) FROM blobs JOIN messages ON raw_sha256 = sha256 WHERE message_id = '\''pf1@example.net'\''" >"$TMP/raw1" &&
	expect_eq "Return-Path: <alice@example.net>" "$(head -n 1 "$TMP/raw1")" "the R flag"
'

test_expect_success 'request+ID reaches the filter with its extension; unknown addresses are refused' '
	write_mail "$TMP/r2.eml" "Message-ID: <pf2@example.net>" "Subject: Re: [TEST-$Y-0001] Overflow in Foo" <<<"More detail." &&
	send_ok alice@example.net "request+TEST-$Y-0001@example.org" "$TMP/r2.eml" &&
	wait_until logged "$qid" "to=<request\+TEST-$Y-0001@example.org>, relay=vulnid, .*status=sent" &&
	expect_eq "request+TEST-$Y-0001@example.org" \
		"$(sql "SELECT envelope_to FROM messages WHERE message_id = '\''pf2@example.net'\''")" &&
	write_mail "$TMP/r3.eml" "Message-ID: <pf3@example.net>" <<<"Product: Nobody" &&
	send alice@example.net nosuch@example.org "$TMP/r3.eml" &&
	test "$src" -ne 0 &&
	expect_match "<\*\* +5[0-9][0-9] .*nosuch@example.org" "$TMP/swaks.out" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''pf3@example.net'\''")"
'

test_expect_success 'aliases(5) and .forward: local(8) runs the filter as the owner, envelope from From_ and Delivered-To' '
	write_mail "$TMP/a1.eml" "Message-ID: <pfa1@example.net>" "Subject: Through an alias" <<<"Product: Alias" &&
	send_ok alice@example.net request@example.com "$TMP/a1.eml" &&
	wait_until logged "$qid" "to=<request@example.com>, relay=local, .*status=sent \(delivered to command" &&
	wait_until has_entry pfa1@example.net &&
	wait_mail "[$(entry_of pfa1@example.net)] Through an alias" >/dev/null &&
	expect_eq "alice@example.net|request@example.com" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages WHERE message_id = '\''pfa1@example.net'\''")" &&
	write_mail "$TMP/a2.eml" "Message-ID: <pfa2@example.net>" "Subject: Through a forward" <<<"Product: Forward" &&
	send_ok alice@example.net "$PIPE_USER@example.com" "$TMP/a2.eml" &&
	wait_until logged "$qid" "to=<$PIPE_USER@example.com>, relay=local, .*status=sent \(delivered to command" &&
	wait_until has_entry pfa2@example.net &&
	wait_mail "[$(entry_of pfa2@example.net)] Through a forward" >/dev/null &&
	expect_eq "alice@example.net|$PIPE_USER@example.com" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages WHERE message_id = '\''pfa2@example.net'\''")" &&
	expect_eq "127.0.0.1 127.0.0.1" "$(sql "SELECT group_concat(client_address, '\'' '\'') FROM messages WHERE message_id IN ('\''pfa1@example.net'\'', '\''pfa2@example.net'\'')")" "local(8) passes CLIENT_ADDRESS" &&
	expect_eq "" "$(find "$INST" ! -user "$PIPE_USER")" "files of the instance not owned by $PIPE_USER"
'

test_expect_success 'a vendor notification is delivered to the Maildir of security@example.net' '
	write_mail "$TMP/v1.eml" "Message-ID: <pfv1@example.net>" "Subject: SQLi in Widget" <<-MAIL &&
	Vendor: Widget Co <example.net>
	Product: Widget

	The search box is injectable.
	MAIL
	send_ok alice@example.net request@example.org "$TMP/v1.eml" &&
	wait_until has_entry pfv1@example.net &&
	id=$(entry_of pfv1@example.net) &&
	test -n "$id" &&
	n=$(wait_mail "[$id] Vulnerability report: Widget Co Widget: SQLi in Widget") &&
	expect_eq security@example.net "$(mail_header "$n" To)" &&
	expect_eq "request+$id@example.org" "$(mail_header "$n" Reply-To)" &&
	mail_body "$n" | grep -q "The search box is injectable." &&
	wait_mail "[$id] SQLi in Widget" >/dev/null &&
	expect_match "\"event\":\"notified\"" "$INST/audit.log"
'

test_expect_success 'the null sender reaches the filter as an empty -f: quarantined, no reply' '
	before=$(sql "SELECT count(*) FROM outbox") &&
	write_mail "$TMP/n1.eml" "Message-ID: <pfn1@example.net>" "Subject: Undeliverable: something" <<<"Product: Bounce" &&
	send_ok "<>" request@example.org "$TMP/n1.eml" &&
	expect_match "MAIL FROM:<>" "$TMP/swaks.out" &&
	wait_until logged "$qid" "relay=vulnid, .*status=sent" &&
	expect_eq "|automatic" "$(sql "SELECT m.envelope_from || '\''|'\'' || q.reason FROM messages m JOIN quarantine q ON q.message = m.id WHERE m.message_id = '\''pfn1@example.net'\''")" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM outbox")"
'

test_expect_success 'a mail over max_message_size: the filter exits 65 and Postfix bounces it with the reason' '
	set_conf limits max_message_size 2048 &&
	{ write_mail "$TMP/big.eml" "Message-ID: <pfbig@example.net>" "Subject: Big one" <<<"Product: Big" &&
	  head -c 6000 /dev/zero | tr "\\0" a | fold -w 70 >>"$TMP/big.eml"; } &&
	send_ok alice@example.net request@example.org "$TMP/big.eml" &&
	wait_until logged "$qid" "relay=vulnid, .*status=bounced" &&
	expect_match "$qid: .*status=bounced .*message too large: the limit is 2048 bytes" "$PF_LOG" &&
	b=$(wait_mail "Undelivered Mail Returned to Sender") &&
	expect_eq alice@example.net "$(mail_header "$b" To)" &&
	grep -q "message too large: the limit is 2048 bytes" "$b" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''pfbig@example.net'\''")" &&
	set_conf limits max_message_size 26214400
'

# The database locked by another process for as long as this takes; the
# filter gives up after busy_timeout with 75.
cat >"$TMP/lock.py" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(120)
PY
set_conf database busy_timeout 300
# (setpriv execs python: $! is the process that holds the lock)
setpriv --reuid="$PIPE_UID" --regid="$PIPE_GID" --clear-groups -- \
	"$PYTHON" "$TMP/lock.py" "$INST/vulnid.db" "$TMP/run/locked" &
LOCKER=$!
bg_track "$LOCKER"
wait_until test -e "$TMP/run/locked"

test_expect_success 'database locked: the filter exits 75 and Postfix defers the mail' '
	test -e "$TMP/run/locked" &&
	write_mail "$TMP/l1.eml" "Message-ID: <pflock@example.net>" "Subject: Locked out" <<<"Product: Lock" &&
	send_ok alice@example.net request@example.org "$TMP/l1.eml" &&
	echo "$qid" >"$TMP/lock.qid" &&
	wait_until logged "$qid" "relay=vulnid, .*status=deferred" &&
	expect_match "$qid: .*status=deferred .*vulnid-filter: temporary failure \(database busy\)" "$PF_LOG" &&
	"$POSTQUEUE" -c "$PF_CFG" -j >"$TMP/queue.json" &&
	$PYTHON - "$TMP/queue.json" "$qid" <<-PY &&
	import json, sys
	q = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
	m = [e for e in q if e["queue_id"] == sys.argv[2]]
	assert len(m) == 1, q
	assert m[0]["queue_name"] == "deferred", m[0]
	r = m[0]["recipients"][0]
	assert r["address"] == "request@example.org", r
	assert "temporary failure (database busy)" in r["delay_reason"], r
	PY
	! logged "$qid" "status=(sent|bounced)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''pflock@example.net'\''")"
'

test_expect_success 'database locked: local(8) defers the aliases(5) and .forward deliveries too' '
	write_mail "$TMP/l2.eml" "Message-ID: <pflock2@example.net>" "Subject: Locked alias" <<<"Product: Lock" &&
	send_ok alice@example.net request@example.com "$TMP/l2.eml" &&
	echo "$qid" >"$TMP/lock2.qid" &&
	write_mail "$TMP/l3.eml" "Message-ID: <pflock3@example.net>" "Subject: Locked forward" <<<"Product: Lock" &&
	send_ok alice@example.net "$PIPE_USER@example.com" "$TMP/l3.eml" &&
	echo "$qid" >"$TMP/lock3.qid" &&
	wait_until logged "$(cat "$TMP/lock2.qid")" "relay=local, .*status=deferred .*temporary failure \(database busy\)" &&
	wait_until logged "$(cat "$TMP/lock3.qid")" "relay=local, .*status=deferred .*temporary failure \(database busy\)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id IN ('\''pflock2@example.net'\'', '\''pflock3@example.net'\'')")"
'

kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null
set_conf database busy_timeout 10000

test_expect_success 'lock released: postqueue -f delivers them, and exactly one ID is assigned for each' '
	"$POSTQUEUE" -c "$PF_CFG" -f &&
	for n in "" 2 3; do
		wait_until logged "$(cat "$TMP/lock$n.qid")" "status=sent" || fail "lock$n not delivered: $(tail "$PF_LOG")"
		id=$(entry_of "pflock$n@example.net") &&
		expect_eq 1 "$(echo "$id" | grep -c .)" "entries for pflock$n" &&
		expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''pflock$n@example.net'\''")" ||
			exit 1
	done &&
	wait_mail "[$(entry_of pflock@example.net)] Locked out" >/dev/null &&
	wait_mail "[$(entry_of pflock2@example.net)] Locked alias" >/dev/null &&
	wait_mail "[$(entry_of pflock3@example.net)] Locked forward" >/dev/null &&
	{ wait_until queue_empty || fail "the queue is not empty: $("$POSTQUEUE" -c "$PF_CFG" -p)"; }
'

test_expect_success 'every reply was delivered, and the audit chain verifies' '
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" &&
	vulnid audit verify
'

test_done
