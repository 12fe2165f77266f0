# test-lib.sh - shared helpers for the end-to-end tests (sourced, TAP output)
#
# Each test script sources this file, defines its cases with
# test_expect_success, and ends with test_done.  Every script makes its own
# instances under a private temporary directory and stops every process it
# started, by PID, on exit.

set -u

: "${VULNID_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${VULNID_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${VULNID_TEMPLATE_DIR:=$VULNID_SRCDIR/templates}"
export VULNID_TEMPLATE_DIR
unset VULNID_CONF VULNID_TEST_NOW

VULNID="$VULNID_BUILDDIR/src/vulnid"
FILTER="$VULNID_BUILDDIR/src/vulnid-filter"
CORPORA="$VULNID_SRCDIR/test/corpora"
SHARED="${VULNID_SHARED:-$VULNID_SRCDIR/../shared}"
PYTHON=/usr/bin/python3
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vulnid-$TEST_NAME.XXXXXX")
BG_PIDS=""
test_count=0
test_failures=0

test_cleanup() {
	# gpg-agents of the instances' keyrings outlive their users
	for h in "$TMP"/*/gnupg "$TMP"/*/*/gnupg "$TMP"/gnupg*; do
		[ -d "$h" ] && gpgconf --homedir "$h" --kill all 2>/dev/null
	done
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ "$test_failures" -eq 0 ] || [ -z "${VULNID_KEEP_TMP:-}" ]; then
		rm -rf "$TMP"
	else
		echo "# kept $TMP" >&2
	fi
}
trap test_cleanup EXIT

# Remember a background process to stop at the end.
bg_track() { BG_PIDS="$BG_PIDS $1"; }

# test_expect_success DESCRIPTION COMMANDS: run COMMANDS in a subshell with
# set -e; a non-zero status is a failure and shows the captured output.
# The subshell is not run as a condition (where bash would ignore set -e),
# and every expect_* helper and fail exit the subshell at once, so an
# assertion anywhere in an && chain still fails the case.
test_expect_success() {
	local status=0
	test_count=$((test_count + 1))
	(set -e; eval "$2") >"$TMP/.out" 2>&1
	status=$?
	if [ "$status" -eq 0 ]; then
		echo "ok $test_count - $1"
	else
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $1"
		sed 's/^/# /' "$TMP/.out"
	fi
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failures" -eq 0 ]
	exit $?
}

# fail MESSAGE: end the current case with a message.
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_eq EXPECTED ACTUAL [WHAT]
expect_eq() {
	if [ "$1" != "$2" ]; then
		fail "${3:-value}: expected '$1', got '$2'"
	fi
}

# expect_match PATTERN FILE: a grep -E pattern must occur in FILE.
expect_match() {
	grep -Eq -- "$1" "$2" || fail "'$1' not found in $2: $(head -c 2000 "$2")"
}
# expect_match_text PATTERN FILE: the same on FILE as prose, each line end
# and the indentation after it read as one space (the robot wraps its
# mail at 78 columns).
expect_match_text() {
	flat "$2" | grep -Eq -- "$1" || fail "'$1' not found in $2 (as text): $(head -c 2000 "$2")"
}
# flat [FILE]: the text as prose (see expect_match_text)
flat() { sed -z 's/\n */ /g' "$@"; }
expect_no_match() {
	! grep -Eq -- "$1" "$2" || fail "'$1' unexpectedly found in $2"
}

# make_instance NAME [vulnid init options]: sets INST and CONF.
make_instance() {
	local name=$1
	shift
	INST="$TMP/$name"
	CONF="$INST/vulnid.conf"
	"$VULNID" init --prefix TEST --domain example.org "$@" "$INST" >"$TMP/.init.out" 2>&1 ||
		{ cat "$TMP/.init.out" >&2; return 1; }
	# The tests name vendors under the reserved .example; a real robot
	# refuses such contacts unless configured so (vulnid.conf(5)).
	set_conf policy allow_reserved_domains .example
}

# confirm_entry ID [FROM]: the creator sends the token of ID's ack back to
# the entry's address (held vendor contacts are told then).
confirm_entry() {
	local f t
	for f in $(sent_files | tac); do
		t=$(mail_body "$f" 2>/dev/null | sed -n "/^  $1\$/,/^\$/s/^ *token: *\(vulnid_[a-z2-7]*\)\$/\1/p" | head -n 1)
		[ -n "$t" ] && break
	done
	[ -n "$t" ] || fail "no token for $1 in sent/"
	printf "Token: %s\n" "$t" | write_mail "$TMP/.confirm-$1.eml" "From: ${2:-Alice Researcher <alice@example.net>}" \
		"To: request+$1@example.org" "Subject: confirm $1"
	deliver_ok "$TMP/.confirm-$1.eml" -r "request+$1@example.org"
}

# set_conf GROUP KEY VALUE: change one key of $CONF.
set_conf() {
	$PYTHON - "$CONF" "$1" "$2" "$3" <<'PY'
import sys, re
path, group, key, value = sys.argv[1:]
lines = open(path).read().split("\n")
out, cur, done = [], None, False
for l in lines:
    m = re.match(r"^\[(.*)\]$", l)
    if m:
        if cur == group and not done:
            out.append(f"{key} = {value}"); done = True
        cur = m.group(1)
    if cur == group and re.match(rf"^{re.escape(key)}\s*=", l):
        l = f"{key} = {value}"; done = True
    out.append(l)
if not done:
    if cur != group:
        out.append(f"[{group}]")
    out.append(f"{key} = {value}")
open(path, "w").write("\n".join(out))
PY
}

# deliver FILE [filter options]: run the filter on FILE, status in $rc,
# stderr in $TMP/.filter.err.  Never fails by itself.
deliver() {
	local file=$1
	shift
	rc=0
	"$FILTER" -c "$CONF" "$@" <"$file" 2>"$TMP/.filter.err" || rc=$?
}

# deliver_ok FILE [options]: the filter must exit 0.
deliver_ok() {
	deliver "$@"
	[ "$rc" -eq 0 ] || fail "vulnid-filter exited $rc: $(cat "$TMP/.filter.err")"
}

sql() { sqlite3 -batch -noheader "$INST/vulnid.db" "$@"; }

# The schema version this build writes (tests never hard-code it: branches
# that add a migration are renumbered when merged).
schema_version() { sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$VULNID_SRCDIR/src/lib/store.h"; }

# Mails the robot delivered into its Maildir, oldest first.
sent_files() { ls -1tr "$INST/sent/new" 2>/dev/null | sed "s|^|$INST/sent/new/|"; }
sent_count() { sent_files | wc -l | tr -d ' '; }

# sent_to ADDRESS: the newest mail in sent/ whose To names ADDRESS
sent_to() {
	local f
	for f in $(sent_files | tac); do
		mail_header "$f" To | grep -qi -- "$1" && { echo "$f"; return 0; }
	done
	return 1
}

# mail_header FILE NAME: the decoded (RFC 2047) value of a header.
mail_header() {
	$PYTHON - "$1" "$2" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
v = m.get(sys.argv[2])
print("" if v is None else str(v))
PY
}

# mail_body FILE: the decoded text of a single-part mail.
mail_body() {
	$PYTHON - "$1" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
print(m.get_body(("plain",)).get_content())
PY
}

# json_get EXPR: read JSON on stdin, print a Python expression on it (j).
json_get() {
	$PYTHON -c "import json,sys; j=json.load(sys.stdin); v=($1); print(v if not isinstance(v,(dict,list)) else json.dumps(v, ensure_ascii=False))"
}

# write_mail FILE [headers...] with the body on stdin.  Default headers
# are added unless given.
write_mail() {
	local file=$1
	shift
	{
		local have_from=0 have_to=0 have_subj=0 have_mid=0 have_date=0
		for h in "$@"; do
			case "$h" in
			From:*) have_from=1 ;; To:*) have_to=1 ;; Subject:*) have_subj=1 ;;
			Message-ID:*) have_mid=1 ;; Date:*) have_date=1 ;;
			esac
			printf '%s\n' "$h"
		done
		[ $have_from = 1 ] || printf 'From: Alice Researcher <alice@example.net>\n'
		[ $have_to = 1 ] || printf 'To: request@example.org\n'
		[ $have_subj = 1 ] || printf 'Subject: Test request\n'
		[ $have_mid = 1 ] || printf 'Message-ID: <%s.%s@example.net>\n' "$(date +%s%N)" "$RANDOM"
		[ $have_date = 1 ] || printf 'Date: %s\n' "$(date -R)"
		printf '\n'
		cat
	} >"$file"
}

# --- OpenPGP and replies, for the tests that need them ---------------------------

# G HOME ARGS: gpg in HOME, never asking anything
G() {
	local h=$1
	shift
	gpg --homedir "$h" --batch --yes --no-tty --pinentry-mode loopback --passphrase '' "$@"
}

# new_signing_key NAME "UID": a keyring $TMP/gnupg-NAME with an ed25519
# signing key, exported to $TMP/NAME.asc; prints the fingerprint
new_signing_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --armor --export "$fpr" >"$TMP/$1.asc"
	echo "$fpr"
}

# clearsigned_mail FILE NAME FPR TEXT [HEADER...]: a mail whose body is TEXT
# clearsigned with key FPR of keyring $TMP/gnupg-NAME
clearsigned_mail() {
	local file=$1 name=$2 fpr=$3 text=$4
	shift 4
	printf '%s\n' "$text" | G "$TMP/gnupg-$name" --local-user "$fpr" --clearsign >"$TMP/.cs" 2>/dev/null || return 1
	write_mail "$file" "$@" <"$TMP/.cs"
}

# snap; deliver...; new_mail_to ADDR: the mail the robot sent to ADDR since snap
snap() { ls -1 "$INST/sent/new" | sort >"$TMP/.snap"; }
new_mails() { ls -1 "$INST/sent/new" | sort | comm -13 "$TMP/.snap" - | sed "s|^|$INST/sent/new/|"; }
new_mail_to() {
	local f
	for f in $(new_mails); do
		mail_header "$f" To | grep -qi -- "$1" && { echo "$f"; return 0; }
	done
	fail "no new mail to $1 (new: $(new_mails | tr '\n' ' '))"
}

# --- a real SMTP server on 127.0.0.1: Postfix's smtp-sink -----------------
SMTP_SINK=$(command -v smtp-sink 2>/dev/null || echo /usr/sbin/smtp-sink)

free_port() {
	$PYTHON -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_sink NAME [smtp-sink options]: a sink on SINK_PORT (kept if set)
# dumping every mail into SINK_DIR, its conversation log in SINK_LOG.
# Start it at the top level of a script, not inside a case, so that it is
# stopped at exit.
start_sink() {
	local name=$1 user=
	shift
	[ -z "${SINK_PID:-}" ] || stop_sink
	SINK_DIR="$TMP/$name"
	SINK_LOG="$TMP/$name.log"
	mkdir -p "$SINK_DIR"
	chmod 777 "$SINK_DIR"
	chmod o+x "$TMP"
	: "${SINK_PORT:=$(free_port)}"
	[ "$(id -u)" != 0 ] || user="-u nobody"
	# shellcheck disable=SC2086
	"$SMTP_SINK" $user -v "$@" -d "$SINK_DIR/%M." "127.0.0.1:$SINK_PORT" 100 >"$SINK_LOG" 2>&1 &
	SINK_PID=$!
	bg_track "$SINK_PID"
	for _ in $(seq 100); do
		ss -ltnH "sport = :$SINK_PORT" | grep -q . && return 0
		sleep 0.05
	done
	echo "smtp-sink did not start: $(cat "$SINK_LOG")" >&2
	return 1
}

stop_sink() {
	[ -n "${SINK_PID:-}" ] || return 0
	# (|| true: also inside a case, where set -e holds and a killed
	# sink's status would end it)
	kill "$SINK_PID" 2>/dev/null || true
	wait "$SINK_PID" 2>/dev/null || true
	SINK_PID=
	# the port must be free again before a new sink binds it
	for _ in $(seq 100); do
		ss -ltnH "sport = :$SINK_PORT" | grep -q . || return 0
		sleep 0.05
	done
	return 0
}

# Mails the sink received, oldest first; their number; SMTP sessions seen.
sink_files() { ls -1tr "$SINK_DIR" 2>/dev/null | sed "s|^|$SINK_DIR/|"; }
sink_count() { sink_files | wc -l | tr -d ' '; }
sink_sessions() { grep -c "connect (AF_INET" "$SINK_LOG" || true; }

# The message in a sink dump, without smtp-sink's own X-* and Received lines.
sink_message() {
	$PYTHON - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read().split(b"\n")
i = 0
while i < len(data) and (data[i].startswith(b"X-") or data[i].startswith(b"Received:") or data[i][:1] in (b" ", b"\t")):
    i += 1
sys.stdout.buffer.write(b"\n".join(data[i:]))
PY
}

# --- a scriptable SMTP server on 127.0.0.1: test/smtp-server.py -------------
# For what smtp-sink cannot do: a reply per recipient (--reply
# ADDR='550 ...'), and a bounce run before the end of DATA is answered
# (--bounce ADDR --bounce-cmd CMD).  start_server NAME [options]: a server
# on SRV_PORT (kept if set) that writes each mail into SRV_DIR.  Start it
# at the top level of a script, so that it is stopped at exit.
SMTP_SERVER_PY="$VULNID_SRCDIR/test/smtp-server.py"
start_server() {
	local name=$1
	shift
	[ -z "${SRV_PID:-}" ] || stop_server
	SRV_DIR="$TMP/$name"
	mkdir -p "$SRV_DIR"
	: "${SRV_PORT:=$(free_port)}"
	"$PYTHON" "$SMTP_SERVER_PY" --port "$SRV_PORT" --dir "$SRV_DIR" "$@" >"$TMP/$name.log" 2>&1 &
	SRV_PID=$!
	bg_track "$SRV_PID"
	for _ in $(seq 100); do
		ss -ltnH "sport = :$SRV_PORT" | grep -q . && return 0
		sleep 0.05
	done
	echo "smtp-server.py did not start: $(cat "$TMP/$name.log")" >&2
	return 1
}
stop_server() {
	[ -n "${SRV_PID:-}" ] || return 0
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=
	for _ in $(seq 100); do
		ss -ltnH "sport = :$SRV_PORT" | grep -q . || return 0
		sleep 0.05
	done
	return 0
}
# srv_mails_to ADDR: the mails the server accepted for ADDR, oldest first;
# srv_count_to ADDR: how many.
srv_mails_to() { grep -il -- "^X-Rcpt-To: <$1>" "$SRV_DIR"/*.eml 2>/dev/null | sort; }
srv_count_to() { srv_mails_to "$1" | wc -l | tr -d ' '; }
