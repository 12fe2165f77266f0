# T85-lib.sh - helpers of the LMTP server tests (sourced after test-lib.sh)

LMTPD="$VULNID_BUILDDIR/src/vulnid-lmtpd"
LMTPC="$PYTHON $VULNID_SRCDIR/test/lmtp-client.py"

# start_lmtpd [SOCKET]: run vulnid-lmtpd for $CONF in the background
# (LMTPD_PID), stderr in $TMP/lmtpd.err; wait until SOCKET (default
# $INST/lmtp.sock) accepts connections.
start_lmtpd() {
	local sock=${1:-$INST/lmtp.sock}
	"$LMTPD" -c "$CONF" 2>>"$TMP/lmtpd.err" &
	LMTPD_PID=$!
	bg_track "$LMTPD_PID"
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
