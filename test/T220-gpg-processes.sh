#!/bin/bash
# T220-gpg-processes: what a mail costs in gpg processes, and the robot's
# key remembered between runs.
#
# Every gpg process costs milliseconds (a fork, an exec, a keyring read,
# often a gpg-agent round trip), so the filter starts only those a mail
# needs: a plain request with a signed reply none (gpg-agent signs over its
# socket), a PGP/MIME signed request three (gpgme's engine probe, the
# verification and one listing of the signer's key), an instance that does
# not sign none.  Likewise libESMTP (with OpenSSL, half of the dynamic
# linker's work at start-up) is loaded only when a mail goes out over SMTP.
# The robot's fingerprint, keygrip and gpg-agent's socket are kept in
# GNUPGHOME/vulnid-robot-key; a keyring changed by hand must be noticed at
# once.
. "$(dirname "$0")/test-lib.sh"

command -v strace >/dev/null || { echo "1..0 # SKIP strace is not installed"; exit 0; }

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
GNUPG="$INST/gnupg"
ROBOT=$(gpg --homedir "$GNUPG" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

# traced_env COMMAND...: COMMAND under strace; LeakSanitizer cannot run
# under ptrace, so a sanitizer build checks leaks everywhere but here
traced_env() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
}

# request_mail FILE TAG: a plain request <TAG@example.net>
request_mail() {
	printf 'Product: %s\n\nA description.\n' "$2" | write_mail "$1" "Message-ID: <$2@example.net>" "Subject: $2"
}

# traced MAIL: deliver MAIL under strace; $TMP/gpg.list gets one line per
# gpg process started (its arguments), $rc the exit status
traced() {
	rc=0
	traced_env strace -f -qq -e trace=execve,connect -e signal=none -o "$TMP/strace.out" \
		"$FILTER" -c "$CONF" -f alice@example.net -r request@example.org <"$1" || rc=$?
	grep 'execve("[^"]*/gpg"' "$TMP/strace.out" | grep -v ' = -1 ' |
		sed 's/^[0-9]* *execve("[^"]*", \[//' >"$TMP/gpg.list" || true
	# any GnuPG program at all: gpg, gpgconf, gpg-connect-agent, gpg-agent
	grep 'execve("[^"]*/gpg[-a-z]*"' "$TMP/strace.out" | grep -v ' = -1 ' >"$TMP/gnupg.list" || true
}
# primary_fprs: the primary fingerprints of the secret keys in the robot's keyring
primary_fprs() {
	gpg --homedir "$GNUPG" --batch --list-secret-keys --with-colons 2>/dev/null |
		awk -F: '/^sec/ { s = 1; next } s && /^fpr/ { print $10; s = 0 }'
}
gpg_count() { wc -l <"$TMP/gpg.list" | tr -d ' '; }
gpg_count_of() { grep -c -- "\"$1\"" "$TMP/gpg.list" || true; }

# verify_robot MAIL: PGP/MIME signed, good, by the key whose fingerprint
# is $2 (default: the robot's)
verify_by() {
	$PGPMAIL split-signed "$1" "$TMP/v.data" "$TMP/v.sig" || fail "$1 is not PGP/MIME signed"
	gpg --homedir "$GNUPG" --batch --no-tty --status-fd 1 --verify "$TMP/v.sig" "$TMP/v.data" \
		>"$TMP/v.status" 2>/dev/null || fail "gpg --verify failed: $(cat "$TMP/v.status")"
	expect_match "^\[GNUPG:\] VALIDSIG $2 " "$TMP/v.status"
}

test_expect_success 'setup: the instance has a robot key' '
	test -n "$ROBOT"
'

request_mail "$TMP/p1.eml" p1
test_expect_success 'a plain request with a signed reply starts no GnuPG process: gpg-agent signs' '
	traced "$TMP/p1.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 0 "$(wc -l <"$TMP/gnupg.list" | tr -d " ")" "GnuPG processes: $(cat "$TMP/gnupg.list")" &&
	expect_match "connect\(.*S\.gpg-agent" "$TMP/strace.out" &&
	verify_by "$(sent_to alice@example.net | tail -n 1)" "$ROBOT"
'

test_expect_success 'the robot key is remembered in the keyring directory, with its keygrip and the agent socket' '
	GRIP=$(gpg --homedir "$GNUPG" --batch --with-colons --with-keygrip --list-secret-keys "$ROBOT" 2>/dev/null |
		awk -F: "/^grp/ { print \$10; exit }") &&
	SOCK=$(gpgconf --homedir "$GNUPG" --list-dirs agent-socket) &&
	expect_match "^$ROBOT $GRIP ed25519 0 $(id -u):$SOCK " "$GNUPG/vulnid-robot-key"
'

request_mail "$TMP/p2.eml" p2
test_expect_success 'a remembered key is not listed again' '
	traced "$TMP/p2.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 0 "$(gpg_count_of --list-secret-keys)" "secret key listings"
'

request_mail "$TMP/p3.eml" p3
test_expect_success 'a damaged memory of the key is listed again and rewritten' '
	echo "0000 garbage" >"$GNUPG/vulnid-robot-key" &&
	traced "$TMP/p3.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --list-secret-keys)" "secret key listings" &&
	expect_match "^$ROBOT " "$GNUPG/vulnid-robot-key" &&
	verify_by "$(sent_to alice@example.net | tail -n 1)" "$ROBOT"
'

# A new robot key, made by hand with gpg; the old one deleted.
request_mail "$TMP/p4.eml" p4
test_expect_success 'a robot key replaced by hand with gpg signs the next reply' '
	gpg --homedir "$GNUPG" --batch --yes --passphrase "" --quick-gen-key "vulnid <request@example.org>" ed25519 sign never 2>/dev/null &&
	NEW=$(primary_fprs | grep -v "$ROBOT" | head -n 1) &&
	test -n "$NEW" &&
	gpg --homedir "$GNUPG" --batch --yes --delete-secret-and-public-key "$ROBOT" 2>/dev/null &&
	traced "$TMP/p4.eml" &&
	expect_eq 0 "$rc" &&
	verify_by "$(sent_to alice@example.net | tail -n 1)" "$NEW" &&
	expect_match "^$NEW " "$GNUPG/vulnid-robot-key" &&
	echo "$NEW" >"$TMP/new.fpr"
'

# A second secret key that gpg would take by default: the reply must
# still be signed by the robot's key (the one remembered), not that one.
request_mail "$TMP/p5.eml" p5
test_expect_success 'a reply is signed by the robot key even when gpg'\''s default key is another' '
	NEW=$(cat "$TMP/new.fpr") &&
	gpg --homedir "$GNUPG" --batch --yes --passphrase "" --quick-gen-key "Other <other@example.org>" ed25519 sign never 2>/dev/null &&
	OTHER=$(primary_fprs | grep -v "$NEW" | head -n 1) &&
	echo "default-key $OTHER" >>"$GNUPG/gpg.conf" &&
	fpr_before=$(cut -d" " -f1 "$GNUPG/vulnid-robot-key") &&
	traced "$TMP/p5.eml" &&
	expect_eq 0 "$rc" &&
	verify_by "$(sent_to alice@example.net | tail -n 1)" "$(cut -d" " -f1 "$GNUPG/vulnid-robot-key")" &&
	expect_eq "$fpr_before" "$(cut -d" " -f1 "$GNUPG/vulnid-robot-key")" "robot key" &&
	sed -i "/^default-key /d" "$GNUPG/gpg.conf" &&
	gpg --homedir "$GNUPG" --batch --yes --delete-secret-and-public-key "$OTHER" 2>/dev/null
'

# --- a PGP/MIME signed request -------------------------------------------------
ALICE="$TMP/gnupg-alice"
mkdir -m 700 "$ALICE"
gpg --homedir "$ALICE" --batch --passphrase '' --quick-gen-key "Alice <alice@example.net>" ed25519 sign never 2>/dev/null
AFPR=$(gpg --homedir "$ALICE" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
gpg --homedir "$ALICE" --batch --export --armor "$AFPR" 2>/dev/null | gpg --homedir "$GNUPG" --batch --import 2>/dev/null

# signed_mail FILE TAG: a PGP/MIME request signed by Alice
signed_mail() {
	printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nProduct: Signed %s\r\n\r\nA signed request.\r\n' "$2" >"$TMP/part"
	gpg --homedir "$ALICE" --batch --yes --armor --detach-sign -o "$TMP/part.sig" "$TMP/part" 2>/dev/null
	{
		printf 'From: Alice <alice@example.net>\nTo: request@example.org\nSubject: signed %s\n' "$2"
		printf 'Message-ID: <signed-%s@example.net>\nMIME-Version: 1.0\n' "$2"
		printf 'Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature"; boundary="sig"\n\n'
		printf -- '--sig\n'
		tr -d '\r' <"$TMP/part"
		printf -- '\n--sig\nContent-Type: application/pgp-signature; name="signature.asc"\n\n'
		cat "$TMP/part.sig"
		printf -- '\n--sig--\n'
	} >"$1"
}

signed_mail "$TMP/s0.eml" s0
test_expect_success 'setup: a signed request after the import (the keyring changed)' '
	traced "$TMP/s0.eml" && expect_eq 0 "$rc"
'

test_expect_success 'the key listed again after the import: one line, rewritten whole, the agent socket kept' '
	expect_eq 1 "$(wc -l <"$GNUPG/vulnid-robot-key" | tr -d " ")" "lines" &&
	expect_match "^$(cat "$TMP/new.fpr") [0-9A-F]{40} ed25519 0 $(id -u):$(gpgconf --homedir "$GNUPG" --list-dirs agent-socket) " \
		"$GNUPG/vulnid-robot-key" &&
	expect_eq 0 "$(grep -c "gpgconf" "$TMP/strace.out")" "gpgconf runs"
'

signed_mail "$TMP/s1.eml" s1
test_expect_success 'a signed request by a known key starts one gpg process: the verification' '
	traced "$TMP/s1.eml" &&
	expect_eq 0 "$rc" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''signed-s1@example.net'\''") &&
	auth=$(sql "SELECT r.auth FROM records r JOIN entries e ON r.entry = e.id WHERE e.message = $msg") &&
	echo "$auth" >"$TMP/auth" &&
	expect_match "\"method\":\"pgp\",\"fingerprint\":\"$AFPR\"" "$TMP/auth" &&
	expect_eq 0 "$(gpg_count_of --version)" "engine probes" &&
	expect_eq 1 "$(gpg_count_of --verify)" "verifications" &&
	expect_eq 0 "$(gpg_count_of --list-keys)" "key listings: $(cat "$TMP/gpg.list")" &&
	expect_eq 1 "$(gpg_count)" "gpg processes: $(cat "$TMP/gpg.list")"
'

test_expect_success 'the signer'\''s key listed once is remembered beside the keyring, stamped with it' '
	test -f "$GNUPG/vulnid-keys/$AFPR" &&
	expect_match "^fpr $AFPR$" "$GNUPG/vulnid-keys/$AFPR" &&
	expect_match "^uid Alice <alice@example.net>$" "$GNUPG/vulnid-keys/$AFPR"
'

signed_mail "$TMP/s2.eml" s2
test_expect_success 'a keyring changed by hand makes the next signed request list the key again' '
	gpg --homedir "$ALICE" --batch --passphrase "" --quick-add-uid "$AFPR" "Alice Two <alice2@example.net>" 2>/dev/null &&
	gpg --homedir "$ALICE" --batch --export "$AFPR" 2>/dev/null | gpg --homedir "$GNUPG" --batch --import 2>/dev/null &&
	traced "$TMP/s2.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --list-keys)" "key listings: $(cat "$TMP/gpg.list")" &&
	expect_match "^uid Alice Two <alice2@example.net>$" "$GNUPG/vulnid-keys/$AFPR"
'

test_expect_success 'an instance that does not sign starts no gpg process for a plain request' '
	set_conf crypto sign none &&
	request_mail "$TMP/n1.eml" n1 &&
	traced "$TMP/n1.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 0 "$(gpg_count)" "gpg processes: $(cat "$TMP/gpg.list")"
'

# --- libESMTP is loaded only to speak SMTP ------------------------------------------
test_expect_success 'the programs do not link libESMTP' '
	ldd "$FILTER" >"$TMP/ldd" && expect_no_match "libesmtp" "$TMP/ldd" &&
	ldd "$VULNID" >"$TMP/ldd" && expect_no_match "libesmtp" "$TMP/ldd"
'

test_expect_success 'a mail delivered into a Maildir does not load libESMTP' '
	request_mail "$TMP/l1.eml" l1 &&
	traced_env strace -f -qq -e trace=openat -o "$TMP/open.out" "$FILTER" -c "$CONF" -f alice@example.net <"$TMP/l1.eml" &&
	expect_no_match "libesmtp" "$TMP/open.out"
'

test_expect_success 'a mail sent over SMTP loads libESMTP (server down: deferred)' '
	set_conf delivery transport "smtp://127.0.0.1:$(free_port)" &&
	set_conf delivery starttls no &&
	request_mail "$TMP/l2.eml" l2 &&
	traced_env strace -f -qq -e trace=openat -o "$TMP/open.out" "$FILTER" -c "$CONF" -f alice@example.net <"$TMP/l2.eml" &&
	expect_match "libesmtp\.so" "$TMP/open.out" &&
	msg=$(sql "SELECT id FROM messages WHERE message_id = '\''l2@example.net'\''") &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE cause = $msg")"
'

test_done
