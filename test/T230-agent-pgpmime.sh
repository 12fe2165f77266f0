#!/bin/bash
# T230-agent-pgpmime: PGP/MIME replies signed through gpg-agent, for both
# kinds of robot key vulnid init makes (Ed25519, RSA 3072).  Each reply is
# read back with Python's email package and its signature checked with gpg
# and with Sequoia's sqv, an independent implementation: a plain reply, a
# reply with an attachment (the robot's key), and a reply that went
# through a real SMTP server (libESMTP adds headers on the way).  No gpg
# process is started for any of them.
. "$(dirname "$0")/test-lib.sh"

command -v sqv >/dev/null || { echo "1..0 # SKIP sqv is not installed (Debian package sqv)"; exit 0; }
SIGCHECK="$PYTHON $CORPORA/openpgp/sigcheck.py"

# robot_setup NAME: $INST/$CONF of instance NAME, its robot's fingerprint
# in $ROBOT and public key in $TMP/NAME.pub
robot_setup() {
	INST="$TMP/$1" CONF="$TMP/$1/vulnid.conf"
	ROBOT=$(gpg --homedir "$INST/gnupg" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	gpg --homedir "$INST/gnupg" --batch --armor --export "$ROBOT" >"$TMP/$1.pub" 2>/dev/null
}

# traced_deliver FILE: deliver FILE under strace; GnuPG programs started in $TMP/gnupg.list
traced_deliver() {
	rc=0
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=execve \
		-e signal=none -o "$TMP/strace.out" "$FILTER" -c "$CONF" -f alice@example.net \
		-r request@example.org <"$1" 2>"$TMP/.filter.err" || rc=$?
	grep 'execve("[^"]*/gpg[-a-z]*"' "$TMP/strace.out" | grep -v ' = -1 ' >"$TMP/gnupg.list" || true
}

make_instance ed25519 || { echo "Bail out! cannot create an instance"; exit 1; }
make_instance rsa3072 --key-algo rsa3072 || { echo "Bail out! cannot create an instance"; exit 1; }

for algo in ed25519 rsa3072; do
	robot_setup "$algo"
	printf 'Product: Agent %s\n\nA description.\n' "$algo" |
		write_mail "$TMP/$algo-plain.eml" "Message-ID: <plain-$algo@example.net>" "Subject: plain $algo"

	test_expect_success "$algo: setup: the robot key is $algo" '
		test -n "$ROBOT" &&
		gpg --homedir "$INST/gnupg" --batch --with-colons --list-secret-keys "$ROBOT" >"$TMP/sec" 2>/dev/null &&
		case $algo in
		ed25519) expect_match "^sec:u:255:22:" "$TMP/sec" ;;
		rsa3072) expect_match "^sec:u:3072:1:" "$TMP/sec" ;;
		esac
	'

	if command -v strace >/dev/null; then
		test_expect_success "$algo: a plain request: the reply is signed and no GnuPG program runs" '
			traced_deliver "$TMP/$algo-plain.eml" &&
			expect_eq 0 "$rc" "exit status: $(cat "$TMP/.filter.err")" &&
			expect_eq 0 "$(wc -l <"$TMP/gnupg.list" | tr -d " ")" "GnuPG programs: $(cat "$TMP/gnupg.list")"
		'
	else
		test_expect_success "$algo: a plain request" 'deliver_ok "$TMP/$algo-plain.eml" -f alice@example.net'
	fi

	test_expect_success "$algo: the reply verifies with gpg and sqv, read with the email package" '
		f=$(grep -l "^In-Reply-To: <plain-$algo@example.net>" "$INST"/sent/new/*) &&
		cp "$f" "$TMP/$algo-reply.eml" &&
		$SIGCHECK mime "$TMP/$algo-reply.eml" "$INST/gnupg" "$TMP/$algo.pub" "$ROBOT" >"$TMP/out" &&
		expect_match "^mime ok" "$TMP/out"
	'

	test_expect_success "$algo: the signature names the robot key and was made now" '
		gpg --homedir "$INST/gnupg" --batch --status-fd 1 --verify "$TMP/$algo-reply.sig" "$TMP/$algo-reply.signed" \
			>"$TMP/status" 2>/dev/null &&
		created=$(awk "/VALIDSIG/ { print \$5 }" "$TMP/status") &&
		now=$(date +%s) &&
		test "$created" -le "$now" && test "$created" -ge $((now - 300))
	'

	test_expect_success "$algo: a changed byte in the signed part fails with both tools" '
		sed "s/Agent/agent/" "$TMP/$algo-reply.signed" >"$TMP/$algo-bad.signed" &&
		! cmp -s "$TMP/$algo-reply.signed" "$TMP/$algo-bad.signed" &&
		! gpg --homedir "$INST/gnupg" --batch --verify "$TMP/$algo-reply.sig" "$TMP/$algo-bad.signed" 2>/dev/null &&
		! sqv --keyring "$TMP/$algo.pub" "$TMP/$algo-reply.sig" "$TMP/$algo-bad.signed" >/dev/null 2>&1
	'

	printf 'key\n' | write_mail "$TMP/$algo-key.eml" "Message-ID: <key-$algo@example.net>" "Subject: key"
	test_expect_success "$algo: the reply with the robot key attached verifies with gpg and sqv" '
		deliver_ok "$TMP/$algo-key.eml" -f alice@example.net &&
		f=$(grep -l "^In-Reply-To: <key-$algo@example.net>" "$INST"/sent/new/*) &&
		cp "$f" "$TMP/$algo-keyreply.eml" &&
		expect_match "application/pgp-keys" "$TMP/$algo-keyreply.eml" &&
		$SIGCHECK mime "$TMP/$algo-keyreply.eml" "$INST/gnupg" "$TMP/$algo.pub" "$ROBOT" >"$TMP/out"
	'
done

# Over SMTP: libESMTP adds Date and Message-ID and the sink its own lines.
if [ -x "$SMTP_SINK" ]; then
	robot_setup rsa3072
	SINK_PORT=$(free_port)
	set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
	set_conf delivery starttls no
	start_sink sink
	printf 'Product: Over SMTP\n\nA description.\n' |
		write_mail "$TMP/smtp.eml" "Message-ID: <smtp@example.net>" "Subject: smtp"
	test_expect_success 'a reply sent over SMTP verifies with gpg and sqv as received' '
		deliver_ok "$TMP/smtp.eml" -f alice@example.net &&
		expect_eq delivered "$(sql "SELECT status FROM outbox WHERE cause = (SELECT id FROM messages WHERE message_id = '\''smtp@example.net'\'')")" &&
		sink_message "$(sink_files | tail -n 1)" >"$TMP/smtp-reply.eml" &&
		expect_match "^In-Reply-To: <smtp@example.net>" "$TMP/smtp-reply.eml" &&
		$SIGCHECK mime "$TMP/smtp-reply.eml" "$INST/gnupg" "$TMP/rsa3072.pub" "$ROBOT" >"$TMP/out"
	'
else
	test_skip 'a reply sent over SMTP verifies with gpg and sqv as received' 'smtp-sink not installed'
fi

test_done
