#!/bin/bash
# T243-seal-in-process: sealing embargoed content costs no gpg process.
#
# The robot seals to its own key (the request record, the raw mail, the
# records added later), several times for one embargoed mail; through gpg
# each was a key listing and an encryption.  The message is now built in
# vulnid (src/lib/openpgp-encrypt.c) to the robot's public key, exported
# once and kept in DIR/gnupg/vulnid-robot-pubkey, stamped with the
# keyring's files: a changed keyring exports it again (one gpg process),
# a key of a kind not encrypted to in vulnid is left to gpg.  What is
# sealed must decrypt with gpg (which unseals it) and with Sequoia's sq,
# to the bytes that were sealed.  libcrypto is loaded only to seal: the
# programs do not link it.
. "$(dirname "$0")/test-lib.sh"

command -v strace >/dev/null || { echo "1..0 # SKIP strace is not installed"; exit 0; }

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
EMB=$(date -u -d '+30 days' +%F)
HAVE_SQ=0
command -v sq >/dev/null && HAVE_SQ=1

# traced_env COMMAND...: LeakSanitizer cannot run under ptrace
traced_env() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
}

# traced MAIL [to]: deliver MAIL under strace; $TMP/gpg.list gets one line
# per gpg process started (its arguments), $TMP/gnupg.list one per GnuPG
# program of any kind, $rc the exit status
traced() {
	rc=0
	traced_env strace -f -qq -e trace=execve,openat -e signal=none -o "$TMP/strace.out" \
		"$FILTER" -c "$CONF" -f alice@example.net -r "${2:-request@example.org}" <"$1" || rc=$?
	grep 'execve("[^"]*/gpg"' "$TMP/strace.out" | grep -v ' = -1 ' |
		sed 's/^[0-9]* *execve("[^"]*", \[//' >"$TMP/gpg.list" || true
	grep 'execve("[^"]*/gpg[-a-z]*"' "$TMP/strace.out" | grep -v ' = -1 ' >"$TMP/gnupg.list" || true
}
gpg_count_of() { grep -c -- "\"$1\"" "$TMP/gpg.list" || true; }
# the gpg processes besides gpgme's engine probe and decryptions (the
# vendor's notification reads the sealed request back; gpg unseals): none
# of them may be for sealing
gpg_others() { grep -v -e '"--version"' -e '"--decrypt"' "$TMP/gpg.list" || true; }

# embargoed_mail FILE TAG: a request in clear asking for an embargo
embargoed_mail() {
	printf 'Product: SECRET-PROD-%s\nEmbargo: %s\n\nSECRET-DESC-%s: the parser overflows.\n' "$2" "$EMB" "$2" |
		write_mail "$1" "Message-ID: <$2@example.net>" "Subject: SECRET-SUBJ-$2"
}

# setup_robot NAME [init options]: an instance, the robot's secret key
# exported for the independent decryptions ($TMP/NAME.sec.asc for sq, a
# keyring of its own for gpg: the instance's stays untouched)
setup_robot() {
	make_instance "$1" "${@:2}" || return 1
	GNUPG="$INST/gnupg"
	ROBOT=$("$VULNID" -c "$CONF" key export --fingerprint) || return 1
	GDEC="$TMP/gnupg-dec-$1"
	mkdir -m 700 "$GDEC"
	gpg --homedir "$GNUPG" --batch --armor --export-secret-keys "$ROBOT" >"$TMP/$1.sec.asc" 2>/dev/null &&
		G "$GDEC" --import "$TMP/$1.sec.asc" 2>/dev/null
	SEC="$TMP/$1.sec.asc"
}

# decrypts SEALED_FILE OUT: gpg (and sq) decrypt it to the same bytes
# (OUT); $TMP/dec.status has gpg's status lines
decrypts() {
	rm -f "$2" "$2.sq"
	G "$GDEC" --status-fd 1 --decrypt -o "$2" "$1" >"$TMP/dec.status" 2>/dev/null ||
		fail "gpg cannot decrypt $1: $(cat "$TMP/dec.status")"
	expect_match '^\[GNUPG:\] DECRYPTION_OKAY' "$TMP/dec.status"
	expect_match '^\[GNUPG:\] GOODMDC' "$TMP/dec.status"
	if [ "$HAVE_SQ" = 1 ]; then
		sq decrypt --recipient-key "$SEC" -o "$2.sq" "$1" 2>"$TMP/sq.err" ||
			fail "sq cannot decrypt $1: $(cat "$TMP/sq.err")"
		cmp "$2" "$2.sq" || fail "gpg and sq decrypt $1 to different bytes"
	fi
}

# sealed_of MID: the sealed record 1 of the entry the mail <MID> made, and
# the sealed raw mail, into $TMP/rec.asc and $TMP/raw.asc; $TMP/raw.sha256
# is the SHA-256 the database gives for the raw mail's clear bytes
sealed_of() {
	local msg
	msg=$(sql "SELECT id FROM messages WHERE message_id = '$1'")
	sql "SELECT r.sealed FROM records r JOIN entries e ON r.entry = e.id WHERE e.message = $msg AND r.seq = 1" >"$TMP/rec.asc"
	sql "SELECT b.data FROM blobs b JOIN messages m ON m.raw_sha256 = b.sha256 WHERE m.id = $msg AND b.sealed = 1" >"$TMP/raw.asc"
	sql "SELECT raw_sha256 FROM messages WHERE id = $msg" >"$TMP/raw.sha256"
	grep -q "^-----BEGIN PGP MESSAGE-----" "$TMP/rec.asc" || fail "no sealed record for <$1>"
	grep -q "^-----BEGIN PGP MESSAGE-----" "$TMP/raw.asc" || fail "no sealed raw mail for <$1>"
}

# sealed_ok MID TAG: both decrypt with gpg and sq; the record to the
# request's canonical bytes (their hash is the entry's commitment), the raw
# mail to the bytes delivered
sealed_ok() {
	local id
	sealed_of "$1"
	decrypts "$TMP/rec.asc" "$TMP/rec.clear"
	expect_match "SECRET-DESC-$2: the parser overflows" "$TMP/rec.clear"
	id=$(sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'")
	expect_eq "$(sql "SELECT digest FROM entries WHERE id = '$id'")" "$(sha256sum <"$TMP/rec.clear" | cut -d" " -f1)" "commitment"
	decrypts "$TMP/raw.asc" "$TMP/raw.clear"
	expect_eq "$(cat "$TMP/raw.sha256")" "$(sha256sum <"$TMP/raw.clear" | cut -d" " -f1)" "raw mail hash"
	expect_match "SECRET-SUBJ-$2" "$TMP/raw.clear"
}

# the key ID a sealed message is encrypted to
enc_keyid() {
	gpg --homedir "$GDEC" --batch --list-packets "$1" 2>/dev/null |
		sed -n 's/^:pubkey enc packet: .*keyid \([0-9A-F]*\)$/\1/p' | head -n 1
}
# the key ID of the robot's newest encryption subkey of algorithm ALGO (gpg's numbers)
subkey_id() {
	gpg --homedir "$GNUPG" --batch --with-colons --list-keys "$ROBOT" 2>/dev/null |
		awk -F: -v a="$1" '$1 == "sub" && $4 == a && $12 ~ /e/ { id = $5 } END { print id }'
}

# (A sanitizer build links every library named, used or not: there only
# the symbols are checked.)
test_expect_success 'the programs call libcrypto only through dlopen(), and start without loading it' '
	for p in "$FILTER" "$VULNID_BUILDDIR/src/vulnid-lmtpd"; do
		nm -D --undefined-only "$p" >"$TMP/undef" &&
		expect_no_match " (EVP|OSSL|BN|RSA|ERR|OPENSSL)_" "$TMP/undef" || exit 1
		ldd "$p" >"$TMP/ldd" || exit 1
		grep -q libasan "$TMP/ldd" || expect_no_match "libcrypto" "$TMP/ldd" || exit 1
	done &&
	traced_env strace -f -qq -e trace=openat -o "$TMP/open.out" "$FILTER" --version >/dev/null &&
	{ grep -q libasan "$TMP/ldd" || expect_no_match "libcrypto" "$TMP/open.out"; }
'

# the key vulnid init makes: Ed25519, with a Curve25519 encryption subkey
setup_robot inst || { echo "Bail out! cannot create an instance"; exit 1; }
test_expect_success 'setup: nothing exported before the first seal' '
	test -n "$ROBOT" && test ! -e "$GNUPG/vulnid-robot-pubkey"
'

embargoed_mail "$TMP/e1.eml" e1
test_expect_success 'the first embargoed request exports the public key once, seals without gpg' '
	traced "$TMP/e1.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --export)" "exports: $(cat "$TMP/gpg.list")" &&
	expect_eq 0 "$(gpg_count_of --encrypt)" "gpg encryptions" &&
	expect_eq 1 "$(gpg_others | wc -l | tr -d " ")" "gpg processes: $(cat "$TMP/gpg.list")" &&
	expect_match "libcrypto" "$TMP/strace.out" &&
	head -n 1 "$GNUPG/vulnid-robot-pubkey" >"$TMP/stamp" &&
	expect_match "^$ROBOT [0-9]+:[0-9]+:[0-9]+:[0-9]+\.[0-9]{9} " "$TMP/stamp" &&
	expect_match "^-----BEGIN PGP PUBLIC KEY BLOCK-----" "$GNUPG/vulnid-robot-pubkey" &&
	expect_eq 600 "$(stat -c %a "$GNUPG/vulnid-robot-pubkey")" "mode" &&
	: what it sealed decrypts with gpg and sq: the record to its commitment, the raw mail to its hash &&
	sealed_ok e1@example.net e1 &&
	expect_eq "$(subkey_id 18)" "$(enc_keyid "$TMP/rec.asc")" "the key sealed to"
'

embargoed_mail "$TMP/e2.eml" e2
test_expect_success 'the next embargoed request starts no gpg process to seal' '
	traced "$TMP/e2.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq "" "$(gpg_others)" "gpg processes" &&
	expect_eq 0 "$(grep -v "/gpg\"" "$TMP/gnupg.list" | wc -l | tr -d " ")" "other GnuPG programs: $(cat "$TMP/gnupg.list")" &&
	sealed_ok e2@example.net e2 &&
	vulnid() { "$VULNID" -c "$CONF" "$@"; } &&
	id=$(sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '\''e2@example.net'\''") &&
	vulnid show "$id" --json --private >"$TMP/p.json" &&
	expect_eq "SECRET-PROD-e2" "$(json_get "j[\"product\"]" <"$TMP/p.json")"
'

# An encrypted request is sealed three times: the request record, the raw
# mail, and the decrypted text with it.
test_expect_success 'an encrypted embargoed request: sealed without gpg encrypting (gpg decrypts it)' '
	GA="$TMP/gnupg-alice" && mkdir -m 700 "$GA" &&
	gpg --homedir "$GNUPG" --batch --armor --export "$ROBOT" 2>/dev/null | G "$GA" --import 2>/dev/null &&
	printf "Content-Type: text/plain; charset=utf-8\n\nProduct: SECRET-PROD-x1\nEmbargo: %s\n\nSECRET-DESC-x1: the parser overflows.\n" "$EMB" >"$TMP/x1.inner" &&
	$PGPMAIL encrypt-mime "$GA" "$ROBOT" "$TMP/x1.inner" "$TMP/x1.eml" "Message-ID: <x1@example.net>" \
		"Subject: SECRET-SUBJ-x1" "From: Alice Researcher <alice@example.net>" "To: request@example.org" &&
	traced "$TMP/x1.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq "" "$(gpg_others)" "gpg processes" &&
	sealed_of x1@example.net &&
	decrypts "$TMP/rec.asc" "$TMP/rec.clear" &&
	expect_match "SECRET-DESC-x1" "$TMP/rec.clear" &&
	decrypts "$TMP/raw.asc" "$TMP/raw.clear" &&
	expect_eq "$(cat "$TMP/raw.sha256")" "$(sha256sum <"$TMP/raw.clear" | cut -d" " -f1)" "raw mail hash"
'

embargoed_mail "$TMP/e3.eml" e3
test_expect_success 'a changed keyring exports the key again, once' '
	new_signing_key bob "Bob <bob@example.net>" >/dev/null &&
	G "$GNUPG" --import "$TMP/bob.asc" 2>/dev/null &&
	traced "$TMP/e3.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --export)" "exports: $(cat "$TMP/gpg.list")" &&
	expect_eq 0 "$(gpg_count_of --encrypt)" "gpg encryptions" &&
	head -n 1 "$GNUPG/vulnid-robot-pubkey" >"$TMP/stamp2" &&
	! cmp -s "$TMP/stamp" "$TMP/stamp2" &&
	sealed_ok e3@example.net e3
'

embargoed_mail "$TMP/e4.eml" e4
test_expect_success 'a damaged copy of the key is exported again, never trusted' '
	sed -i "2,\$d" "$GNUPG/vulnid-robot-pubkey" &&
	printf "garbage\n" >>"$GNUPG/vulnid-robot-pubkey" &&
	traced "$TMP/e4.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --export)" "exports: $(cat "$TMP/gpg.list")" &&
	sealed_ok e4@example.net e4 &&
	expect_match "^-----END PGP PUBLIC KEY BLOCK-----" "$GNUPG/vulnid-robot-pubkey"
'

# A newer encryption subkey on NIST P-256: gpg encrypts to it, and so must
# the robot, through gpg.
embargoed_mail "$TMP/e5.eml" e5
test_expect_success 'a robot key whose encryption subkey is of another kind is sealed by gpg, to that subkey' '
	sleep 1 &&
	G "$GNUPG" --quick-add-key "$ROBOT" nistp256 encr never 2>/dev/null &&
	gpg --homedir "$GNUPG" --batch --armor --export-secret-keys "$ROBOT" 2>/dev/null | G "$GDEC" --import 2>/dev/null &&
	gpg --homedir "$GNUPG" --batch --armor --export-secret-keys "$ROBOT" >"$SEC" 2>/dev/null &&
	traced "$TMP/e5.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_count_of --export)" "exports: $(cat "$TMP/gpg.list")" &&
	head -n 1 "$GNUPG/vulnid-robot-pubkey" >"$TMP/stamp3" &&
	! cmp -s "$TMP/stamp2" "$TMP/stamp3" &&
	expect_eq 2 "$(gpg_count_of --encrypt)" "gpg encryptions: $(cat "$TMP/gpg.list")" &&
	sealed_ok e5@example.net e5 &&
	expect_eq "$(subkey_id 18)" "$(enc_keyid "$TMP/rec.asc")" "the key sealed to" &&
	expect_eq "$(gpg --homedir "$GNUPG" --batch --with-colons --list-keys "$ROBOT" 2>/dev/null | awk -F: "\$1 == \"sub\" && \$17 == \"nistp256\" { print \$5 }")" \
		"$(enc_keyid "$TMP/raw.asc")" "the P-256 subkey"
'

# --- the RSA key of vulnid init --key-algo rsa3072 -----------------------------------
embargoed_mail "$TMP/r1.eml" r1
embargoed_mail "$TMP/r2.eml" r2
setup_robot rsa --key-algo rsa3072 || { echo "Bail out! cannot create an RSA instance"; exit 1; }
test_expect_success 'an RSA 3072 robot seals without gpg too, for gpg and sq to decrypt' '
	traced "$TMP/r1.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(gpg_others | wc -l | tr -d " ")" "gpg processes: $(cat "$TMP/gpg.list")" &&
	expect_eq 1 "$(gpg_count_of --export)" "exports" &&
	sealed_ok r1@example.net r1 &&
	expect_eq "$(subkey_id 1)" "$(enc_keyid "$TMP/rec.asc")" "the key sealed to" &&
	traced "$TMP/r2.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq "" "$(gpg_others)" "gpg processes" &&
	sealed_ok r2@example.net r2
'

test_done
