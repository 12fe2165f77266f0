#!/bin/bash
# T231-agent-clearsign: inline clearsigned replies ([crypto] sign = inline)
# signed through gpg-agent, for Ed25519 and RSA 3072 robot keys.  The
# acknowledgement's template is made a torture text for the cleartext
# framework (RFC 9580 section 7): CRLF and lone CR line ends, trailing
# spaces and tabs, lines starting with "-", "From " and armor lines, blank
# lines of white space, non-ASCII text.  Every reply must verify with gpg
# (the whole message) and with sqv (text and signature taken apart as RFC
# 9580 says), and read back as the text that was signed.
. "$(dirname "$0")/test-lib.sh"

command -v sqv >/dev/null || { echo "1..0 # SKIP sqv is not installed (Debian package sqv)"; exit 0; }
SIGCHECK="$PYTHON $CORPORA/openpgp/sigcheck.py"

robot_setup() {
	INST="$TMP/$1" CONF="$TMP/$1/vulnid.conf"
	ROBOT=$(gpg --homedir "$INST/gnupg" --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	gpg --homedir "$INST/gnupg" --batch --armor --export "$ROBOT" >"$TMP/$1.pub" 2>/dev/null
}

# The torture lines, inserted after "Hello," in the acknowledgement ...
torture() {
	printf 'trailing spaces   \n'
	printf 'trailing tab\t\n'
	printf 'a crlf line\r\n'
	printf 'crlf after spaces  \r\n'
	printf 'lone cr\rafter the cr\n'
	printf -- '- a dash line\n'
	printf -- '-----BEGIN PGP SIGNATURE-----\n'
	printf -- '-----END PGP SIGNED MESSAGE-----\n'
	printf 'From the start of a line\n'
	printf '>From quoted\n'
	printf ' leading space kept\n'
	printf '   \n'
	printf '\t\n'
	printf '\r\n'
	printf 'mixed \t \t\n'
	printf '\303\274n\303\257c\303\266d\303\251 \342\234\223\n'
}
# ... and how they read once signed: every line end one LF, trailing
# blanks gone (shown in the mail, but not signed)
torture_read() {
	printf 'trailing spaces\n'
	printf 'trailing tab\n'
	printf 'a crlf line\n'
	printf 'crlf after spaces\n'
	printf 'lone cr\nafter the cr\n'
	printf -- '- a dash line\n'
	printf -- '-----BEGIN PGP SIGNATURE-----\n'
	printf -- '-----END PGP SIGNED MESSAGE-----\n'
	printf 'From the start of a line\n'
	printf '>From quoted\n'
	printf ' leading space kept\n'
	printf '\n'
	printf '\n'
	printf '\n'
	printf 'mixed\n'
	printf '\303\274n\303\257c\303\266d\303\251 \342\234\223\n'
}

make_instance ed25519 || { echo "Bail out! cannot create an instance"; exit 1; }
make_instance rsa3072 --key-algo rsa3072 || { echo "Bail out! cannot create an instance"; exit 1; }

for algo in ed25519 rsa3072; do
	robot_setup "$algo"
	set_conf crypto sign inline
	printf 'Product: Clear %s\n\nA description.\n' "$algo" |
		write_mail "$TMP/$algo-plain.eml" "Message-ID: <plain-$algo@example.net>" "Subject: plain $algo"
	printf 'Product: Torture %s\n\nA description.\n' "$algo" |
		write_mail "$TMP/$algo-torture.eml" "Message-ID: <torture-$algo@example.net>" "Subject: torture $algo"

	test_expect_success "$algo: a clearsigned reply verifies with gpg and sqv" '
		deliver_ok "$TMP/$algo-plain.eml" -f alice@example.net &&
		f=$(grep -l "^In-Reply-To: <plain-$algo@example.net>" "$INST"/sent/new/*) &&
		cp "$f" "$TMP/$algo-reply.eml" &&
		expect_match "^Content-Type: text/plain" "$TMP/$algo-reply.eml" &&
		$SIGCHECK clear "$TMP/$algo-reply.eml" "$INST/gnupg" "$TMP/$algo.pub" "$ROBOT" >"$TMP/out" &&
		expect_match "^clear ok" "$TMP/out"
	'

	test_expect_success "$algo: the signature separator keeps its space, dash-escaped" '
		expect_match "^- -- $" "$TMP/$algo-reply.asc"
	'

	test_expect_success "$algo: the torture text verifies with gpg and sqv and reads as it was written" '
		cp "$VULNID_TEMPLATE_DIR"/*.txt "$INST/templates/" &&
		{ sed -n "1,/^Hello,/p" "$VULNID_TEMPLATE_DIR/ack.txt"; torture; sed -n "/^Hello,/,\$p" "$VULNID_TEMPLATE_DIR/ack.txt" | tail -n +2; } \
			>"$INST/templates/ack.txt" &&
		deliver_ok "$TMP/$algo-torture.eml" -f alice@example.net &&
		f=$(grep -l "^In-Reply-To: <torture-$algo@example.net>" "$INST"/sent/new/*) &&
		cp "$f" "$TMP/$algo-torture-reply.eml" &&
		$SIGCHECK clear "$TMP/$algo-torture-reply.eml" "$INST/gnupg" "$TMP/$algo.pub" "$ROBOT" >"$TMP/out" &&
		{ torture_read; echo; } >"$TMP/want" &&
		gpg --homedir "$INST/gnupg" --batch --decrypt "$TMP/$algo-torture-reply.asc" 2>/dev/null >"$TMP/got" &&
		sed -n "/^Hello,/,/^your request/p" "$TMP/got" | sed "1d;\$d" >"$TMP/got-torture" &&
		cmp "$TMP/want" "$TMP/got-torture"
	'

	test_expect_success "$algo: the torture text is dash-escaped where RFC 9580 wants it" '
		expect_match "^- - a dash line$" "$TMP/$algo-torture-reply.asc" &&
		expect_match "^- -----BEGIN PGP SIGNATURE-----$" "$TMP/$algo-torture-reply.asc" &&
		expect_match "^- From the start of a line$" "$TMP/$algo-torture-reply.asc" &&
		expect_eq 1 "$(grep -c "^-----BEGIN PGP SIGNATURE-----" "$TMP/$algo-torture-reply.asc")" &&
		! grep -q "$(printf "\r")" "$TMP/$algo-torture-reply.asc"
	'

	test_expect_success "$algo: a changed word in the text fails with gpg" '
		sed "s/^lone cr$/lone CR/" "$TMP/$algo-torture-reply.asc" >"$TMP/$algo-bad.asc" &&
		! cmp -s "$TMP/$algo-torture-reply.asc" "$TMP/$algo-bad.asc" &&
		! gpg --homedir "$INST/gnupg" --batch --verify "$TMP/$algo-bad.asc" 2>/dev/null
	'
done

test_done
