#!/bin/bash
# T730-contrib: the contrib/ scripts and service files: they parse, pass
# shellcheck, systemd-analyze verify and logrotate where those are
# installed; vulnid-request composes a mail the robot reads (plain, signed
# inline, PGP/MIME, encrypted to the robot); vulnid-fetch-securitytxt
# fetches and imports.
. "$(dirname "$0")/test-lib.sh"

C="$VULNID_SRCDIR/contrib"
REQUEST="$C/vulnid-request"
FETCH="$C/vulnid-fetch-securitytxt"
Y=$(date -u +%Y)

test_expect_success 'the scripts and the completion parse' '
	bash -n "$REQUEST" &&
	sh -n "$FETCH" &&
	bash -n "$C/bash-completion/vulnid" &&
	head -n 1 "$REQUEST" | grep -q "^#!/bin/bash" &&
	head -n 1 "$FETCH" | grep -q "^#!/bin/sh"
'

if command -v shellcheck >/dev/null 2>&1; then
	test_expect_success 'shellcheck finds nothing in the scripts and the completion' '
		shellcheck "$REQUEST" "$FETCH" "$C/vulnid-fetch-references" &&
		shellcheck -s bash -e SC2207 "$C/bash-completion/vulnid"
	'
else
	test_skip "shellcheck" "shellcheck is not installed (Debian package shellcheck)"
fi

# ---- manual pages of the scripts --------------------------------------------------
D="$VULNID_SRCDIR/doc"
# man_ok PAGE SCRIPT: the page renders without a warning, and names every
# option the script's --help lists
man_ok() {
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$1" >"$TMP/man.out" 2>"$TMP/man.err" ||
		fail "man $1: $(cat "$TMP/man.err")"
	[ ! -s "$TMP/man.err" ] || fail "man $1 warns: $(cat "$TMP/man.err")"
	for o in $(sh -c '"$@" --help' - "${@:2}" 2>&1 | grep -o -- "--[a-z][a-z-]*" | sort -u); do
		grep -q -- "$o" "$TMP/man.out" || fail "$1 does not describe $o"
	done
}

if command -v man >/dev/null 2>&1; then
	test_expect_success 'every installed script has a manual page that describes each of its options' '
		man_ok "$D/vulnid-request.1" bash "$REQUEST" &&
		man_ok "$D/vulnid-fetch-securitytxt.1" sh "$FETCH" &&
		man_ok "$D/vulnid-fetch-references.1" sh "$C/vulnid-fetch-references" &&
		man_ok "$D/vulnid-mirror.8" sh "$C/vulnid-mirror" &&
		grep -q "^\.BR vulnid\\\\-request (1)" "$D/vulnid-request.7"
	'
else
	test_skip "manual pages of the scripts" "man is not installed (Debian package man-db)"
fi

test_expect_success 'make install puts each script and its manual page in place' '
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$VULNID_BUILDDIR" install DESTDIR="$TMP/root" \
		>"$TMP/install.out" 2>&1 || fail "make install: $(tail "$TMP/install.out")"
	for f in bin/vulnid-request bin/vulnid-fetch-securitytxt bin/vulnid-fetch-references sbin/vulnid-mirror \
		sbin/vulnid sbin/vulnid-filter share/man/man1/vulnid-request.1 share/man/man1/vulnid-fetch-securitytxt.1 \
		share/man/man1/vulnid-fetch-references.1 \
		share/man/man8/vulnid-mirror.8 share/man/man8/vulnid.8 share/man/man7/vulnid-request.7; do
		test -e "$(find "$TMP/root" -path "*/$f" | head -n 1)" || fail "not installed: $f"
	done
'

# ---- vulnid-request ------------------------------------------------------------
printf 'A request with an overlong Host header overflows a fixed buffer\nin parse_request().\n' >"$TMP/desc"

test_expect_success 'vulnid-request --help names every option' '
	bash "$REQUEST" --help >"$TMP/help" &&
	for o in --to --vendor --product --version --title --type --reference --vendor-contact \
		--embargo --anonymous --description-file --sign --pgp-mime --encrypt-to --attach-key --dry-run; do
		grep -q -- "^  $o\b" "$TMP/help" || fail "--help does not mention $o"
	done
'

test_expect_success 'vulnid-request --dry-run: To, Subject, the fields at the top, then the description' '
	bash "$REQUEST" --dry-run --no-sign --to request@example.org --from alice@example.net \
		--vendor "Example Corp <example.com>" --product "Example Server" \
		--version 2.4.0 --version 2.4.1 --title "Heap overflow in Example Server" --type CWE-122 \
		--reference https://example.net/a --reference https://example.net/b \
		--vendor-contact security@example.com --embargo 2099-01-31 --anonymous \
		--description-file "$TMP/desc" >"$TMP/plain.eml" &&
	expect_eq request@example.org "$(mail_header "$TMP/plain.eml" To)" &&
	expect_eq alice@example.net "$(mail_header "$TMP/plain.eml" From)" &&
	expect_eq "Heap overflow in Example Server" "$(mail_header "$TMP/plain.eml" Subject)" &&
	test -n "$(mail_header "$TMP/plain.eml" Message-ID)" &&
	mail_body "$TMP/plain.eml" >"$TMP/body" &&
	cat >"$TMP/expected" <<-EOF &&
	Vendor: Example Corp <example.com>
	Product: Example Server
	Version: 2.4.0
	Version: 2.4.1
	Title: Heap overflow in Example Server
	Type: CWE-122
	Reference: https://example.net/a
	Reference: https://example.net/b
	Vendor-Contact: security@example.com
	Embargo: 2099-01-31
	Anonymous: yes

	A request with an overlong Host header overflows a fixed buffer
	in parse_request().

	EOF
	diff -u "$TMP/expected" "$TMP/body"
'

test_expect_success 'vulnid-request: a non-ASCII title is RFC 2047 encoded, the description can come from stdin' '
	printf "Ünïcode description\n" | bash "$REQUEST" --dry-run --no-sign --to request@example.org \
		--title "Überlauf im Parser eines sehr langen Produktnamens" --description-file - >"$TMP/utf8.eml" &&
	expect_no_match "Ü" <(sed "/^$/q" "$TMP/utf8.eml") &&
	expect_eq "Überlauf im Parser eines sehr langen Produktnamens" "$(mail_header "$TMP/utf8.eml" Subject)" &&
	mail_body "$TMP/utf8.eml" | grep -q "^Ünïcode description$"
'

test_expect_success 'vulnid-request refuses what the robot would misread' '
	rc=0
	bash "$REQUEST" --dry-run --no-sign --to request@example.org --title "$(printf "a\\nBcc: x@example.net")" \
		>/dev/null 2>&1 || rc=$?
	expect_eq 64 "$rc" "a title of two lines" &&
	for args in "--embargo tomorrow" "--vendor-contact" \
		"--to not-an-address" "--encrypt-to -x" "--bogus"; do
		rc=0
		# shellcheck disable=SC2086
		bash "$REQUEST" --dry-run --no-sign --to request@example.org $args >/dev/null 2>&1 || rc=$?
		expect_eq 64 "$rc" "exit status for $args"
	done &&
	rc=0; bash "$REQUEST" --dry-run --no-sign --vendor V >/dev/null 2>&1 || rc=$?
	expect_eq 64 "$rc" "without --to" &&
	printf "one\n---\ntwo\n" >"$TMP/bad-desc" &&
	rc=0; bash "$REQUEST" --dry-run --no-sign --to request@example.org --description-file "$TMP/bad-desc" \
		>/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 64 "$rc" "a --- line" && expect_match "would start another request" "$TMP/err"
'

test_expect_success 'vulnid-request hands the mail to sendmail -t -oi -f FROM' '
	printf "#!/bin/sh\nprintf \"%%s\\\\n\" \"\$@\" >\"%s/sendmail.args\"\ncat >\"%s/sendmail.in\"\n" "$TMP" "$TMP" >"$TMP/sendmail" &&
	chmod +x "$TMP/sendmail" &&
	SENDMAIL="$TMP/sendmail" bash "$REQUEST" --no-sign --to request@example.org --from alice@example.net \
		--product P 2>"$TMP/err" &&
	expect_eq "-t -oi -f alice@example.net" "$(tr "\\n" " " <"$TMP/sendmail.args" | sed "s/ $//")" &&
	expect_eq request@example.org "$(mail_header "$TMP/sendmail.in" To)" &&
	expect_match "request sent to request@example.org" "$TMP/err"
'

# The robot reads what vulnid-request writes: through the built filter.
make_instance robot
robot_reads() { # MAIL MESSAGE-ID: the entry of that mail has the fields
	deliver_ok "$1" &&
	id=$(sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$2'") &&
	test -n "$id" || fail "no entry for $2: $(sql "SELECT disposition FROM messages WHERE message_id = '$2'")"
	"$VULNID" -c "$CONF" show --json "$id" >"$TMP/entry.json" &&
	expect_eq "Example Server|2.4.0,2.4.1|https://example.net/a|CWE-122" \
		"$(json_get "\"|\".join([j[\"product\"], \",\".join(j[\"versions\"]), \",\".join(j[\"references\"]), j[\"type\"]])" <"$TMP/entry.json")"
}
request_args=(--to request@example.org --from alice@example.net --product "Example Server"
	--version 2.4.0 --version 2.4.1 --title "Heap overflow" --type CWE-122
	--reference https://example.net/a --description-file "$TMP/desc")
msgid_of() { mail_header "$1" Message-ID | tr -d "<>"; }

test_expect_success 'the robot reads an unsigned request from vulnid-request' '
	bash "$REQUEST" --dry-run --no-sign "${request_args[@]}" >"$TMP/r-plain.eml" &&
	robot_reads "$TMP/r-plain.eml" "$(msgid_of "$TMP/r-plain.eml")"
'

if ! command -v gpg >/dev/null 2>&1; then
	test_skip "vulnid-request signing" "gpg is not installed (Debian package gnupg)"
else
	export GNUPGHOME="$TMP/gnupg-alice"
	mkdir -m 700 "$GNUPGHOME"
	gpg --batch --quiet --pinentry-mode loopback --passphrase "" \
		--quick-gen-key "Alice Researcher <alice@example.net>" ed25519 sign 1d 2>/dev/null

	test_expect_success 'vulnid-request signs inline by default; gpg verifies; the robot reads the fields' '
		bash "$REQUEST" --dry-run "${request_args[@]}" >"$TMP/r-inline.eml" &&
		expect_match "^-----BEGIN PGP SIGNED MESSAGE-----$" "$TMP/r-inline.eml" &&
		expect_eq "text/plain" "$($PYTHON -c "import email,sys; print(email.message_from_binary_file(open(sys.argv[1],\"rb\")).get_content_type())" "$TMP/r-inline.eml")" &&
		mail_body "$TMP/r-inline.eml" >"$TMP/inline.txt" &&
		gpg --batch --verify "$TMP/inline.txt" 2>"$TMP/gpg.out" &&
		expect_match "Good signature from \"Alice Researcher" "$TMP/gpg.out" &&
		robot_reads "$TMP/r-inline.eml" "$(msgid_of "$TMP/r-inline.eml")"
	'

	test_expect_success 'vulnid-request --pgp-mime: multipart/signed that verifies over the canonical part' '
		bash "$REQUEST" --dry-run --pgp-mime "${request_args[@]}" >"$TMP/r-mime.eml" &&
		$PYTHON - "$TMP/r-mime.eml" "$TMP" <<-PY &&
		import re, sys
		raw = open(sys.argv[1], "rb").read()
		head, body = raw.split(b"\n\n", 1)
		assert b"multipart/signed; micalg=pgp-sha256;" in head, head
		b = re.search(rb"boundary=\"([^\"]+)\"", head).group(1)
		signed, rest = body.split(b"--" + b + b"\n", 1)[1].split(b"\n--" + b + b"\n", 1)
		sig = rest.split(b"\n\n", 1)[1].split(b"\n--" + b + b"--", 1)[0]
		open(sys.argv[2] + "/signed", "wb").write(signed.replace(b"\n", b"\r\n"))
		open(sys.argv[2] + "/signed.asc", "wb").write(sig)
		PY
		gpg --batch --verify "$TMP/signed.asc" "$TMP/signed" 2>"$TMP/gpg.out" &&
		expect_match "Good signature" "$TMP/gpg.out" &&
		robot_reads "$TMP/r-mime.eml" "$(msgid_of "$TMP/r-mime.eml")"
	'

	# The robot's own key, as a researcher would fetch it.
	if "$VULNID" -c "$CONF" key export >"$TMP/robot.asc" 2>/dev/null && [ -s "$TMP/robot.asc" ]; then
		gpg --batch --quiet --import "$TMP/robot.asc" 2>/dev/null
		robot_fpr=$(gpg --batch --with-colons --show-keys "$TMP/robot.asc" | awk -F: '/^fpr/ { print $10; exit }')
		test_expect_success 'vulnid-request --encrypt-to the robot key: inline and PGP/MIME, the robot reads both' '
			test -n "$robot_fpr" &&
			bash "$REQUEST" --dry-run --encrypt-to "$robot_fpr" "${request_args[@]}" >"$TMP/r-enc.eml" &&
			expect_match "^-----BEGIN PGP MESSAGE-----$" "$TMP/r-enc.eml" &&
			expect_no_match "Example Server" "$TMP/r-enc.eml" &&
			robot_reads "$TMP/r-enc.eml" "$(msgid_of "$TMP/r-enc.eml")" &&
			bash "$REQUEST" --dry-run --pgp-mime --encrypt-to "$robot_fpr" "${request_args[@]}" >"$TMP/r-encm.eml" &&
			expect_match "^Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\";" "$TMP/r-encm.eml" &&
			expect_no_match "Example Server" "$TMP/r-encm.eml" &&
			robot_reads "$TMP/r-encm.eml" "$(msgid_of "$TMP/r-encm.eml")"
		'
		test_expect_success 'vulnid-request --encrypt-to: the Subject is a fixed text, the title only inside' '
			bash "$REQUEST" --dry-run --pgp-mime --encrypt-to "$robot_fpr" --embargo 2099-01-01 \
				"${request_args[@]}" >"$TMP/r-encs.eml" &&
			expect_eq "Vulnerability identifier request" "$(mail_header "$TMP/r-encs.eml" Subject)" &&
			expect_no_match "Heap overflow" "$TMP/r-encs.eml" &&
			deliver_ok "$TMP/r-encs.eml" &&
			id=$(sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '\''$(msgid_of "$TMP/r-encs.eml")'\''") &&
			"$VULNID" -c "$CONF" show --private --json "$id" >"$TMP/encs.json" &&
			expect_eq "Heap overflow" "$(json_get "j[\"title\"]" <"$TMP/encs.json")"
		'
	else
		test_skip "vulnid-request --encrypt-to" "this vulnid has no robot key to export"
	fi

	test_expect_success 'vulnid-request refuses a "---" line with any line end or trailing white space' '
		for d in "one\r\n---\r\ntwo\r\n" "one\n---\rtwo\n" "one\r---\rtwo" "one\n---\f\ntwo\n" "one\n--- \v\ntwo\n"; do
			printf "$d" >"$TMP/split.txt"
			rc=0; bash "$REQUEST" --dry-run --no-sign --to request@example.org --embargo 2099-01-01 \
				--description-file "$TMP/split.txt" >/dev/null 2>"$TMP/err" || rc=$?
			expect_eq 64 "$rc" "exit status for $d"
			expect_match "would start another request" "$TMP/err"
		done
	'

	test_expect_success 'the robot splits exactly where the helper refuses: "---" then CR, form feed, vertical tab' '
		for sep in "---\r\r\n" "--- \f\n" "---\v\n"; do
			printf "Embargo: 2099-01-01\n\nsecret one\n${sep}Product: two\n" |
				write_mail "$TMP/sep.eml" "Message-ID: <sep-$RANDOM$RANDOM@example.net>" &&
			n0=$(sql "SELECT count(*) FROM entries") &&
			deliver_ok "$TMP/sep.eml" &&
			expect_eq $((n0 + 2)) "$(sql "SELECT count(*) FROM entries")" "entries for $sep"
		done
	'

	test_expect_success 'vulnid-request --attach-key: PGP/MIME with the key; the robot imports it on first use' '
		bash "$REQUEST" --dry-run --attach-key "${request_args[@]}" >"$TMP/r-key.eml" &&
		expect_match "^Content-Type: multipart/signed" "$TMP/r-key.eml" &&
		expect_match "^Content-Type: application/pgp-keys" "$TMP/r-key.eml" &&
		robot_reads "$TMP/r-key.eml" "$(msgid_of "$TMP/r-key.eml")" &&
		expect_eq pgp "$(json_get "j[\"records\"][0][\"auth\"][\"method\"]" <"$TMP/entry.json")"
	'
	gpgconf --homedir "$GNUPGHOME" --kill all 2>/dev/null
	unset GNUPGHOME
fi

# ---- vulnid-fetch-securitytxt ----------------------------------------------------
cat >"$TMP/security.txt" <<EOF
Contact: mailto:security@vendor.example
Expires: $((Y + 1))-12-31T23:00:00.000Z
Preferred-Languages: en
EOF

test_expect_success 'vulnid-fetch-securitytxt --dry-run: an https-only fetch of /.well-known/security.txt, then the import' '
	sh "$FETCH" --help | grep -q "import-securitytxt" &&
	CURL=/usr/bin/curl VULNID="$VULNID" sh "$FETCH" --dry-run -c "$CONF" vendor.example >"$TMP/dry" &&
	expect_match "^fetch: .*--proto.* .=https. .*.https://vendor.example/.well-known/security.txt.$" "$TMP/dry" &&
	expect_match "^run: .$VULNID. .-c. .$CONF. .vendor. .import-securitytxt. .vendor.example. " "$TMP/dry" &&
	rc=0; sh "$FETCH" --dry-run "vendor.example/../x" >/dev/null 2>&1 || rc=$?
	expect_eq 64 "$rc" "a domain with a path" &&
	rc=0; sh "$FETCH" --dry-run "-x.example" >/dev/null 2>&1 || rc=$?
	expect_eq 64 "$rc" "an option for a domain"
'

test_expect_success 'vulnid-fetch-securitytxt imports what it fetched (a stand-in curl) into the vendors directory' '
	printf "#!/bin/sh\nfor a; do case \$a in https://*) url=\$a ;; esac; prev=\$a; done\nout=\nwhile [ \$# -gt 0 ]; do [ \"\$1\" = --output ] && out=\$2; shift; done\necho \"\$url\" >\"%s/curl.url\"\ncp \"%s/security.txt\" \"\$out\"\n" "$TMP" "$TMP" >"$TMP/curl" &&
	chmod +x "$TMP/curl" &&
	CURL="$TMP/curl" VULNID="$VULNID" sh "$FETCH" -c "$CONF" vendor.example >"$TMP/out" 2>&1 ||
		fail "$(cat "$TMP/out")"
	expect_eq "https://vendor.example/.well-known/security.txt" "$(cat "$TMP/curl.url")" &&
	"$VULNID" -c "$CONF" vendor show vendor.example >"$TMP/vendor" &&
	expect_match "security@vendor.example" "$TMP/vendor"
'

test_expect_success 'vulnid-fetch-securitytxt: a failed fetch is 75 and imports nothing; --file imports a local copy' '
	printf "#!/bin/sh\necho \"curl: (7) Failed to connect\" >&2\nexit 7\n" >"$TMP/curl-down" &&
	chmod +x "$TMP/curl-down" &&
	rc=0; CURL="$TMP/curl-down" VULNID="$VULNID" sh "$FETCH" -c "$CONF" other.example >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 75 "$rc" &&
	expect_match "cannot fetch https://other.example/.well-known/security.txt" "$TMP/err" &&
	! "$VULNID" -c "$CONF" vendor show other.example >/dev/null 2>&1 &&
	sed "s/security@vendor/psirt@other/" "$TMP/security.txt" >"$TMP/other.txt" &&
	VULNID="$VULNID" sh "$FETCH" -c "$CONF" --file "$TMP/other.txt" other.example >/dev/null &&
	"$VULNID" -c "$CONF" vendor show other.example | grep -q "psirt@other.example"
'

# A vendor whose security.txt is elsewhere than /.well-known, on an HTTPS
# server with a certificate from a throwaway CA: curl, for real.
if command -v openssl >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
	mkdir -p "$TMP/https/www/psirt" &&
	sed "s/security@vendor/psirt@third/" "$TMP/security.txt" >"$TMP/https/www/psirt/security.txt" &&
	( cd "$TMP/https" &&
	  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test CA" \
		-addext "basicConstraints=critical,CA:TRUE" -keyout ca.key -out ca.crt &&
	  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout srv.key -out srv.csr &&
	  printf "subjectAltName=IP:127.0.0.1\n" >srv.ext &&
	  openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
		-extfile srv.ext -out srv.crt ) >"$TMP/https/openssl.log" 2>&1
	HTTPS_PORT=$(free_port)
	"$PYTHON" - "$TMP/https" "$HTTPS_PORT" >"$TMP/https/server.log" 2>&1 <<-'PY' &
	import functools, http.server, ssl, sys
	d, port = sys.argv[1], int(sys.argv[2])
	h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=d + "/www")
	srv = http.server.HTTPServer(("127.0.0.1", port), h)
	ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	ctx.load_cert_chain(d + "/srv.crt", d + "/srv.key")
	srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
	srv.serve_forever()
	PY
	bg_track $!
	for _ in $(seq 100); do ss -ltnH "sport = :$HTTPS_PORT" | grep -q . && break; sleep 0.05; done

	test_expect_success 'vulnid-fetch-securitytxt --url: that URL over https, the CA of --ca-file, then the import' '
		VULNID="$VULNID" sh "$FETCH" -c "$CONF" --ca-file "$TMP/https/ca.crt" \
			--url "https://127.0.0.1:$HTTPS_PORT/psirt/security.txt" third.example >"$TMP/out" 2>&1 ||
			fail "$(cat "$TMP/out" "$TMP/https/server.log")"
		expect_match "GET /psirt/security.txt HTTP" "$TMP/https/server.log" &&
		"$VULNID" -c "$CONF" vendor show third.example | grep -q "psirt@third.example"
	'

	test_expect_success 'vulnid-fetch-securitytxt --url: a certificate it does not trust is 75; http and user parts are refused' '
		rc=0; VULNID="$VULNID" sh "$FETCH" -c "$CONF" \
			--url "https://127.0.0.1:$HTTPS_PORT/psirt/security.txt" fourth.example >/dev/null 2>"$TMP/err" || rc=$?
		expect_eq 75 "$rc" &&
		expect_match "fourth.example: cannot fetch https://127.0.0.1:$HTTPS_PORT/psirt/security.txt" "$TMP/err" &&
		! "$VULNID" -c "$CONF" vendor show fourth.example >/dev/null 2>&1 &&
		rc=0; sh "$FETCH" --dry-run --url "http://vendor.example/security.txt" x.example >/dev/null 2>"$TMP/err" || rc=$?
		expect_eq 64 "$rc" && expect_match "over https only" "$TMP/err" &&
		rc=0; sh "$FETCH" --dry-run --url "https://u@vendor.example/s.txt" >/dev/null 2>"$TMP/err" || rc=$?
		expect_eq 64 "$rc" && expect_match "user name" "$TMP/err" &&
		CURL=/usr/bin/curl VULNID="$VULNID" sh "$FETCH" --dry-run -c "$CONF" \
			--url "https://www.fifth.example:8443/sec/security.txt" >"$TMP/dry" &&
		expect_match "^fetch: .* .--. .https://www.fifth.example:8443/sec/security.txt.$" "$TMP/dry" &&
		expect_match "^run: .* .import-securitytxt. .www.fifth.example. " "$TMP/dry"
	'
else
	test_skip "vulnid-fetch-securitytxt --url" "openssl or curl is not installed"
fi

# ---- bash completion -------------------------------------------------------------
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
if [ ! -r "$BASH_COMPLETION" ]; then
	test_skip "bash completion" "bash-completion is not installed (Debian package bash-completion)"
else
	test_expect_success 'bash completion: commands, subcommands, options, and entries of the instance' '
		"$VULNID" -c "$CONF" vendor add "Widget Co" --contact psirt@widget.example >/dev/null &&
		cat >"$TMP/complete.sh" <<-EOF &&
		source "$BASH_COMPLETION"
		source "$C/bash-completion/vulnid"
		comp() {
			COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1))
			COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=()
			_vulnid
			printf "%s\n" "\$*" "\${COMPREPLY[@]}" ""
		}
		comp "$VULNID" ""
		comp "$VULNID" -
		comp "$VULNID" -c "$CONF" queue ""
		comp "$VULNID" -c "$CONF" queue run -
		comp "$VULNID" -c "$CONF" audit ""
		comp "$VULNID" -c "$CONF" show ""
		comp "$VULNID" -c "$CONF" vendor show W
		EOF
		bash "$TMP/complete.sh" >"$TMP/complete.out" 2>&1 &&
		for w in init show list queue quarantine audit vendor tick help --config --version \
			list run retry --force verify flush "TEST-$Y-0001" "Widget\\\\ Co"; do
			grep -qx -- "$w" "$TMP/complete.out" || fail "no completion $w: $(cat "$TMP/complete.out")"
		done
	'

	# comp_of WORDS...: the completions alone, one per line
	comp_of() {
		cat >"$TMP/c1.sh" <<-EOF
		source "$BASH_COMPLETION"
		source "$C/bash-completion/vulnid"
		cd "$TMP"
		COMP_WORDS=($(printf "%q " "$@")); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1))
		COMP_LINE="\${COMP_WORDS[*]}"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=()
		_vulnid
		printf "%s\n" "\${COMPREPLY[@]}"
		EOF
		bash "$TMP/c1.sh" 2>/dev/null | sed "/^$/d" | sort
	}

	test_expect_success 'bash completion: retry once, only the options of each queue subcommand, no files after --key-algo' '
		words() { tr "\n" " " | sed "s/ $//"; } &&
		expect_eq "list retry run" "$(comp_of "$VULNID" -c "$CONF" queue "" | words)" &&
		expect_eq "--force" "$(comp_of "$VULNID" -c "$CONF" queue run - | words)" &&
		expect_eq "--all --json" "$(comp_of "$VULNID" -c "$CONF" queue list - | words)" &&
		expect_eq "" "$(comp_of "$VULNID" -c "$CONF" queue retry - | words)" &&
		: >"$TMP/a-file" &&
		expect_eq "ed25519 rsa3072" "$(comp_of "$VULNID" init --key-algo "" | words)" &&
		expect_eq "rsa3072" "$(comp_of "$VULNID" init --key-algo r | words)" &&
		expect_eq "" "$(comp_of "$VULNID" -c "$CONF" export html x --title "" | words)" &&
		rc=0; "$VULNID" -c "$CONF" queue run --json >/dev/null 2>"$TMP/err" || rc=$?
		expect_eq 64 "$rc" && expect_match "--json is for queue list only" "$TMP/err"
	'
fi

# ---- README: cron ----------------------------------------------------------------
test_expect_success 'the README'\''s cron line works with cron'\''s PATH, and prints what a healthy tick prints' '
	line=$(grep -E "^  \*/5 \* \* \* \* vulnid /usr/local/sbin/vulnid -c /var/lib/vulnid/vulnid.conf tick >/dev/null$" \
		"$VULNID_SRCDIR/README") ||
		fail "no cron line with full paths in README" &&
	cmd=$(printf "%s\n" "$line" | sed -e "s/^  \*\/5 \* \* \* \* vulnid //" -e "s| >/dev/null$||" \
		-e "s|/usr/local/sbin/vulnid|$VULNID|" -e "s|/var/lib/vulnid/vulnid.conf|$CONF|") &&
	env -i PATH=/usr/bin:/bin VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" sh -c "$cmd" >"$TMP/cron.out" 2>"$TMP/cron.err" ||
		fail "$(cat "$TMP/cron.err")"
	expect_eq "released 0 embargoed entries
queued 0 announcement digests
delivered 0, deferred 0, failed 0" "$(cat "$TMP/cron.out")" &&
	expect_eq "" "$(cat "$TMP/cron.err")"
'

# ---- systemd and logrotate ------------------------------------------------------
if command -v systemd-analyze >/dev/null 2>&1; then
	test_expect_success 'systemd-analyze verify accepts the tick service and timer' '
		mkdir "$TMP/units" &&
		sed -e "s|/usr/local/sbin/vulnid|$VULNID|" -e "s|/var/lib/vulnid|$INST|g" \
			"$C/systemd/vulnid-tick.service" >"$TMP/units/vulnid-tick.service" &&
		cp "$C/systemd/vulnid-tick.timer" "$TMP/units/" &&
		systemd-analyze verify --man=no "$TMP/units/vulnid-tick.timer" "$TMP/units/vulnid-tick.service" >"$TMP/sa.out" 2>&1 ||
			fail "$(cat "$TMP/sa.out")"
		expect_no_match "vulnid-tick" "$TMP/sa.out" &&
		grep -q "^ExecStart=/usr/local/sbin/vulnid -c /var/lib/vulnid/vulnid.conf tick$" "$C/systemd/vulnid-tick.service" &&
		grep -q "^OnCalendar=\*:0/5$" "$C/systemd/vulnid-tick.timer"
	'
	test_expect_success 'systemd-analyze verify accepts the LMTP server socket and service' '
		mkdir -p "$TMP/units2" &&
		sed -e "s|/usr/local/sbin/vulnid-lmtpd|$VULNID_BUILDDIR/src/vulnid-lmtpd|" -e "s|^User=vulnid|User=nobody|" -e "s|^Group=vulnid|Group=nogroup|" \
			-e "s|^ConditionPathExists=.*|ConditionPathExists=/|" \
			"$C/systemd/vulnid-lmtpd.service" >"$TMP/units2/vulnid-lmtpd.service" &&
		sed -e "s|^SocketUser=vulnid|SocketUser=nobody|" "$C/systemd/vulnid-lmtpd.socket" >"$TMP/units2/vulnid-lmtpd.socket" &&
		systemd-analyze verify --man=no "$TMP/units2/vulnid-lmtpd.socket" "$TMP/units2/vulnid-lmtpd.service" >"$TMP/sa2.out" 2>&1 ||
			fail "$(cat "$TMP/sa2.out")"
		grep -q "^ExecStart=/usr/local/sbin/vulnid-lmtpd -c /var/lib/vulnid/vulnid.conf$" "$C/systemd/vulnid-lmtpd.service" &&
		grep -q "^ListenStream=/var/spool/postfix/vulnid/lmtp.sock$" "$C/systemd/vulnid-lmtpd.socket"
	'
else
	test_skip "systemd-analyze verify" "systemd-analyze is not installed (Debian package systemd)"
fi

LOGROTATE=$(PATH="$PATH:/usr/sbin" command -v logrotate 2>/dev/null || true)
if [ -z "$LOGROTATE" ]; then
	test_skip "logrotate" "logrotate is not installed (Debian package logrotate)"
else
	test_expect_success 'logrotate rotates audit.log; the chain continues in a new 0600 file and verifies across both' '
		u=$(id -un) && g=$(id -gn) &&
		sed -e "s|/var/lib/vulnid|$INST|" -e "s|su vulnid vulnid|su $u $g|" \
			-e "s|create 0600 vulnid vulnid|create 0600 $u $g|" "$C/logrotate/vulnid" >"$TMP/logrotate.conf" &&
		chmod 644 "$TMP/logrotate.conf" &&
		"$LOGROTATE" -d -s "$TMP/logrotate.state" "$TMP/logrotate.conf" >"$TMP/lr.out" 2>&1 ||
			fail "logrotate -d: $(cat "$TMP/lr.out")"
		expect_no_match "^error" "$TMP/lr.out" &&
		lines=$(wc -l <"$INST/audit.log") &&
		"$LOGROTATE" -f -s "$TMP/logrotate.state" "$TMP/logrotate.conf" >"$TMP/lr.out" 2>&1 ||
			fail "logrotate -f: $(cat "$TMP/lr.out")"
		expect_eq "$lines" "$(wc -l <"$INST/audit.log.1")" "lines in the rotated file" &&
		expect_eq 600 "$(stat -c %a "$INST/audit.log")" &&
		write_mail "$TMP/after.eml" "Message-ID: <after-rotate@example.net>" <<<"Product: After" &&
		deliver_ok "$TMP/after.eml" &&
		"$VULNID" -c "$CONF" audit verify &&
		expect_match "after-rotate@example.net" "$INST/audit.log" &&
		expect_no_match "\"event\":\"init\"" "$INST/audit.log" &&
		$PYTHON - "$INST/audit.log.1" "$INST/audit.log" <<-PY
		import json, sys
		last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
		first = json.loads(open(sys.argv[2]).read().splitlines()[0])
		assert first["prev"] == last["hash"], (first["prev"], last["hash"])
		PY
	'
fi

test_done
