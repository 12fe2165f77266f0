#!/bin/bash
# T232-agent-feed: the feed's HEAD.json and its transparency log's key
# (log/log.vkey) are signed through gpg-agent (detached signatures,
# crypto_sign_detached()), for Ed25519 and RSA 3072 robot keys, without a
# gpg process; the signatures verify with gpg, gpgv and sqv (the recipes
# of vulnid-feed(5)) and vulnid verify-feed.
. "$(dirname "$0")/test-lib.sh"

command -v sqv >/dev/null || { echo "1..0 # SKIP sqv is not installed (Debian package sqv)"; exit 0; }
SIGCHECK="$PYTHON $CORPORA/openpgp/sigcheck.py"

robot_setup() {
	INST="$TMP/$1" CONF="$TMP/$1/vulnid.conf"
	ROBOT=$(gpg --homedir "$INST/gnupg" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	gpg --homedir "$INST/gnupg" --batch --armor --export "$ROBOT" >"$TMP/$1.pub" 2>/dev/null
}

make_instance ed25519 || { echo "Bail out! cannot create an instance"; exit 1; }
make_instance rsa3072 --key-algo rsa3072 || { echo "Bail out! cannot create an instance"; exit 1; }

for algo in ed25519 rsa3072; do
	robot_setup "$algo"
	for i in 1 2; do
		printf 'Product: Feed %s %s\n\nA description.\n' "$algo" "$i" |
			write_mail "$TMP/$algo-$i.eml" "Message-ID: <feed-$algo-$i@example.net>" "Subject: feed $i"
	done

	test_expect_success "$algo: HEAD.json.asc verifies with gpg and sqv" '
		deliver_ok "$TMP/$algo-1.eml" -f alice@example.net &&
		"$VULNID" -c "$CONF" export feed "$TMP/$algo-feed" >/dev/null &&
		$SIGCHECK detached "$TMP/$algo-feed/HEAD.json.asc" "$TMP/$algo-feed/HEAD.json" "$INST/gnupg" \
			"$TMP/$algo.pub" "$ROBOT" >"$TMP/out" &&
		expect_match "^detached ok" "$TMP/out" &&
		$SIGCHECK detached "$TMP/$algo-feed/log/log.vkey.asc" "$TMP/$algo-feed/log/log.vkey" "$INST/gnupg" \
			"$TMP/$algo.pub" "$ROBOT" >"$TMP/out" &&
		expect_match "^detached ok" "$TMP/out"
	'

	test_expect_success "$algo: the recipes of vulnid-feed(5) (gpgv, sqv) and vulnid verify-feed accept it" '
		gpg --dearmor <"$TMP/$algo-feed/robot.asc" >"$TMP/$algo.gpg" &&
		gpgv --keyring "$TMP/$algo.gpg" "$TMP/$algo-feed/HEAD.json.asc" "$TMP/$algo-feed/HEAD.json" 2>/dev/null &&
		(cd "$TMP/$algo-feed" && sqv --keyring robot.asc HEAD.json.asc HEAD.json) >"$TMP/out" &&
		expect_eq "$ROBOT" "$(cat "$TMP/out")" &&
		gpgv --keyring "$TMP/$algo.gpg" "$TMP/$algo-feed/log/log.vkey.asc" "$TMP/$algo-feed/log/log.vkey" 2>/dev/null &&
		(cd "$TMP/$algo-feed" && sqv --keyring robot.asc log/log.vkey.asc log/log.vkey) >"$TMP/out" &&
		expect_eq "$ROBOT" "$(cat "$TMP/out")" &&
		"$VULNID" verify-feed "$TMP/$algo-feed" --key "$TMP/$algo-feed/robot.asc" >/dev/null
	'

	if command -v strace >/dev/null; then
		test_expect_success "$algo: an incremental export signs the new HEAD without a GnuPG program" '
			deliver_ok "$TMP/$algo-2.eml" -f alice@example.net &&
			strace -f -qq -e trace=execve -e signal=none -o "$TMP/strace.out" \
				env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
				"$VULNID" -c "$CONF" export feed "$TMP/$algo-feed" >/dev/null &&
			{ grep "execve(\"[^\"]*/gpg\"" "$TMP/strace.out" | grep -v " = -1 " | grep -v -- "--export" >"$TMP/gpg.list" || true; } &&
			expect_eq 0 "$(grep -c -- "--detach-sign" "$TMP/gpg.list")" "signatures by gpg" &&
			$SIGCHECK detached "$TMP/$algo-feed/HEAD.json.asc" "$TMP/$algo-feed/HEAD.json" "$INST/gnupg" \
				"$TMP/$algo.pub" "$ROBOT" >/dev/null &&
			expect_match "feed $algo|Feed $algo 2" "$TMP/$algo-feed/$(date -u +%Y).jsonl"
		'
	fi
done

test_done
