#!/bin/bash
# T233-agent-failures: signing through gpg-agent when things are not as
# they should be.  An agent that is not running is started (gpgconf, no
# gpg); a socket path remembered wrongly is asked for again; a secret key
# the agent cannot use defers the reply with the reason and never sends it
# unsigned; a robot key with a passphrase fails at once instead of waiting
# for a pinentry; a robot key of another algorithm (NIST P-256) is signed
# with by gpg.  Every reply that goes out verifies with gpg and sqv.
. "$(dirname "$0")/test-lib.sh"

command -v sqv >/dev/null || { echo "1..0 # SKIP sqv is not installed (Debian package sqv)"; exit 0; }
command -v strace >/dev/null || { echo "1..0 # SKIP strace is not installed"; exit 0; }
LIBFAULT="$VULNID_BUILDDIR/test/faults/libfault.so"
[ -f "$LIBFAULT" ] || { echo "Bail out! $LIBFAULT not built (make check builds it)"; exit 1; }
SIGCHECK="$PYTHON $CORPORA/openpgp/sigcheck.py"

robot_setup() {
	INST="$TMP/$1" CONF="$TMP/$1/vulnid.conf" GNUPG="$TMP/$1/gnupg"
	ROBOT=$(primary_fprs | head -n 1)
	gpg --homedir "$GNUPG" --batch --armor --export "$ROBOT" >"$TMP/$1.pub" 2>/dev/null
}
primary_fprs() {
	gpg --homedir "$GNUPG" --batch --list-secret-keys --with-colons 2>/dev/null |
		awk -F: '/^sec/ { s = 1; next } s && /^fpr/ { print $10; s = 0 }'
}
memory() { cat "$GNUPG/vulnid-robot-key"; }
agent_running() { gpg-connect-agent --homedir "$GNUPG" --no-autostart "GETINFO pid" /bye 2>/dev/null | grep -q "^D "; }
# agent_stop: stop the agent and wait until nothing answers on its socket
agent_stop() {
	gpgconf --homedir "$GNUPG" --kill gpg-agent
	for _ in $(seq 100); do
		agent_running || return 0
		sleep 0.05
	done
	return 1
}

# traced_deliver FILE: the filter on FILE under strace; $rc, and the
# GnuPG programs it started in $TMP/gnupg.list
traced_deliver() {
	rc=0
	# (timeout: an agent started under strace -f would be followed for ever)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 60 strace -f -qq -e trace=execve \
		-e signal=none -o "$TMP/strace.out" "$FILTER" -c "$CONF" -f alice@example.net \
		-r request@example.org <"$1" 2>"$TMP/.filter.err" || rc=$?
	grep 'execve("[^"]*/gpg[-a-z]*"' "$TMP/strace.out" | grep -v ' = -1 ' |
		sed 's/^[0-9]* *execve("[^"]*", \[//' >"$TMP/gnupg.list" || true
}
count() { grep -c -- "$1" "$TMP/gnupg.list" || true; }

# request_mail FILE TAG
request_mail() {
	printf 'Product: %s\n\nA description.\n' "$2" | write_mail "$1" "Message-ID: <$2@example.net>" "Subject: $2"
}
reply_to() { grep -l "^In-Reply-To: <$1@example.net>" "$INST"/sent/new/* 2>/dev/null; }
outbox_of() { sql "SELECT $2 FROM outbox WHERE cause = (SELECT id FROM messages WHERE message_id = '$1@example.net')"; }

# verified TAG: the reply to TAG is signed by $1 (default the robot), as gpg and sqv see it
verified() {
	local f
	f=$(reply_to "$1") || fail "no reply to $1"
	cp "$f" "$TMP/$1.reply.eml"
	$SIGCHECK mime "$TMP/$1.reply.eml" "$GNUPG" "$TMP/${3:-a}.pub" "${2:-$ROBOT}" >/dev/null
}

make_instance a || { echo "Bail out! cannot create an instance"; exit 1; }
robot_setup a

# (Not under strace -f, which would follow the agent it starts for ever;
# gpg is made impossible to run instead, with test/faults/libfault.so.)
request_mail "$TMP/start.eml" start
test_expect_success 'the agent stopped: started again, the reply signed, without gpg' '
	agent_stop &&
	: >"$TMP/fault.log" &&
	rc=0 &&
	env LD_PRELOAD="$LIBFAULT" FAULT_OPS=exec "FAULT_PATH=*/gpg" FAULT_ERRNO=ENOENT FAULT_LOG="$TMP/fault.log" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$FILTER" -c "$CONF" -f alice@example.net -r request@example.org <"$TMP/start.eml" 2>"$TMP/.filter.err" || rc=$? &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	expect_eq 0 "$(wc -l <"$TMP/fault.log" | tr -d " ")" "gpg processes tried" &&
	agent_running &&
	verified start
'

request_mail "$TMP/next.eml" next
test_expect_success 'the next reply starts no GnuPG program at all' '
	traced_deliver "$TMP/next.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 0 "$(wc -l <"$TMP/gnupg.list" | tr -d " ")" "GnuPG programs: $(cat "$TMP/gnupg.list")" &&
	verified next
'

request_mail "$TMP/moved.eml" moved
test_expect_success 'a socket remembered wrongly is asked for again, and remembered' '
	SOCK=$(gpgconf --homedir "$GNUPG" --list-dirs agent-socket) &&
	sed -i "s| [0-9]*:[^ ]*S.gpg-agent | $(id -u):$TMP/nowhere/S.gpg-agent |" "$GNUPG/vulnid-robot-key" &&
	memory >"$TMP/mem" && expect_match " $(id -u):$TMP/nowhere/S.gpg-agent " "$TMP/mem" &&
	traced_deliver "$TMP/moved.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(count "\"--list-dirs\", \"agent-socket\"")" "socket asked: $(cat "$TMP/gnupg.list")" &&
	expect_eq 0 "$(count "\"--launch\"")" "agent launches" &&
	verified moved &&
	memory >"$TMP/mem" && expect_match " $(id -u):$SOCK " "$TMP/mem"
'

# The key file damaged in place (same file, same directory: the memory of
# the key stays valid), so that gpg-agent cannot use the key.
GRIP=$(memory | cut -d" " -f2)
KEYFILE="$GNUPG/private-keys-v1.d/$GRIP.key"
request_mail "$TMP/broken.eml" broken
test_expect_success 'a secret key the agent cannot use: 0, recorded once, the ack deferred with the reason' '
	test -f "$KEYFILE" && cp "$KEYFILE" "$TMP/key.saved" &&
	before=$(sent_count) &&
	printf "(garbage)" >"$KEYFILE" &&
	deliver "$TMP/broken.eml" -f alice@example.net &&
	cat "$TMP/key.saved" >"$KEYFILE" &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries WHERE message = (SELECT id FROM messages WHERE message_id = '\''broken@example.net'\'')")" &&
	expect_eq "$before" "$(sent_count)" "replies sent unsigned" &&
	expect_eq deferred "$(outbox_of broken status)" &&
	outbox_of broken last_error >"$TMP/why" &&
	expect_match "^cannot sign: cannot sign with $ROBOT: gpg-agent: PKSIGN: " "$TMP/why"
'
test_expect_success 'the key usable again: that ack goes out once, signed' '
	VULNID_TEST_NOW=$(date -u -d "+10 minutes" +%Y-%m-%dT%H:%M:%SZ) "$VULNID" -c "$CONF" queue run >/dev/null &&
	expect_eq delivered "$(outbox_of broken status)" &&
	expect_eq 1 "$(grep -l "^In-Reply-To: <broken@example.net>" "$INST"/sent/new/* | wc -l | tr -d " ")" &&
	verified broken
'

# A robot key with a passphrase: nobody is there to type it.
make_instance b || { echo "Bail out! cannot create an instance"; exit 1; }
robot_setup b
OLD=$ROBOT
G "$GNUPG" --passphrase secret --quick-gen-key "vulnid <request@example.org>" ed25519 sign never 2>/dev/null
gpg --homedir "$GNUPG" --batch --yes --delete-secret-and-public-key "$OLD" 2>/dev/null
robot_setup b
request_mail "$TMP/pass.eml" pass
test_expect_success 'a robot key with a passphrase: deferred at once with the reason, never unsigned' '
	test "$ROBOT" != "$OLD" &&
	before=$(sent_count) &&
	start=$(date +%s) &&
	deliver "$TMP/pass.eml" -f alice@example.net &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	test $(( $(date +%s) - start )) -lt 20 &&
	expect_eq "$before" "$(sent_count)" "replies sent unsigned" &&
	expect_eq deferred "$(outbox_of pass status)" &&
	outbox_of pass last_error >"$TMP/why" &&
	expect_match "^cannot sign: cannot sign with $ROBOT: gpg-agent: PKSIGN: " "$TMP/why"
'

# A robot key of an algorithm the packets are not built for: gpg signs.
make_instance c || { echo "Bail out! cannot create an instance"; exit 1; }
robot_setup c
OLD=$ROBOT
G "$GNUPG" --quick-gen-key "vulnid <request@example.org>" nistp256 sign never 2>/dev/null
gpg --homedir "$GNUPG" --batch --yes --delete-secret-and-public-key "$OLD" 2>/dev/null
robot_setup c
request_mail "$TMP/p256.eml" p256
test_expect_success 'a NIST P-256 robot key: the reply is signed by gpg and verifies with gpg and sqv' '
	test "$ROBOT" != "$OLD" &&
	traced_deliver "$TMP/p256.eml" &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
	expect_eq 1 "$(count "\"--detach-sign\"")" "signatures by gpg: $(cat "$TMP/gnupg.list")" &&
	memory >"$TMP/mem" && expect_match "^$ROBOT [0-9A-F]{40} other " "$TMP/mem" &&
	verified p256 "$ROBOT" c
'

test_done
