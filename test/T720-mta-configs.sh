#!/bin/bash
# T720-mta-configs: the Exim and OpenSMTPD snippets of filters/ pass the
# daemons' own configuration checks, and route the robot's addresses (and
# only those) to the filter.  On Debian exim4-daemon-* and opensmtpd each
# replace postfix as the system MTA, so where they are not installed the
# test runs them from their packages, unpacked (test/mta-lib.sh; T750 and
# T751 run them as daemons).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/mta-lib.sh"

FILTERS="$VULNID_SRCDIR/filters"

# Every snippet that runs the filter hands it the SMTP client's address
# (-a, --client-address=), which the rate limits count per network.
test_expect_success 'every shipped snippet passes the client address' '
	n=0
	for f in "$FILTERS"/*; do
		case $f in *.am | */README | */postfix-main.cf | */postfix-transport | */postfix-lmtp-transport) continue ;; esac
		case $f in
		*/postfix-lmtp-*)
			# over LMTP the client address travels in XFORWARD
			grep -Eq "^lmtp_send_xforward_command *= *yes" "$f" || fail "$f: no XFORWARD"
			continue ;;
		*/opensmtpd-lmtp)
			# the LMTP client of smtpd sends no XFORWARD: vulnid-lmtpd reads
			# the client from the Received field of smtpd (T863)
			grep -q "^action \"vulnid\" lmtp " "$f" || fail "$f: no lmtp action"
			continue ;;
		esac
		n=$((n + 1))
		tr "\n" " " <"$f" | sed "s/\\\\ / /g" | grep -Eq "vulnid-filter[^#]* (-a [^ ]|--client-address=)|VULNID_FILTER[^#]* -a " ||
			fail "$f: no -a / --client-address"
	done
	expect_eq 7 "$n" "snippets checked" &&
	grep -q -- "-a \${client_address}" "$FILTERS/postfix-master.cf" &&
	grep -q "CLIENT_ADDRESS=\$sender_host_address" "$FILTERS/exim" &&
	grep -q -- "-a received" "$FILTERS/opensmtpd"
'

# ---- Exim --------------------------------------------------------------------
EXIM=
for e in exim4 exim; do
	EXIM=$(PATH="$PATH:/usr/sbin:/usr/lib/sendmail" command -v "$e" 2>/dev/null) && break
done
: >"$TMP/empty.conf"
if [ -z "$EXIM" ] || ! "$EXIM" -C "$TMP/empty.conf" -bV </dev/null 2>/dev/null | grep -q "^Exim version"; then
	EXIM=
	if mta_have exim4-daemon-light usr/sbin/exim4; then
		# the unpacked one, as nobody, with the user it was built for in
		# its passwd
		chmod o+x "$TMP"
		mkdir -p "$TMP/exim-ns"
		mta_passwd "$TMP/exim-ns" "Debian-exim:$MTA_NOBODY"
		exim_unpacked() {
			mta_ns "bind $TMP/exim-ns/passwd /etc/passwd
bind $TMP/exim-ns/group /etc/group" 'exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"' \
				"$MTA_ROOT/usr/sbin/exim4" "$@"
		}
		EXIM=exim_unpacked
	fi
fi
if [ -z "$EXIM" ]; then
	test_skip "Exim router and pipe transport" "Exim is not installed (Debian package exim4-daemon-light; it conflicts with postfix), and its package cannot be run here: $MTA_WHY"
else
	mkdir -p "$TMP/exim/spool" "$TMP/exim/log"
	# A whole configuration: a main section, the snippet (which has its
	# own "begin routers" and "begin transports"), retry rules.  The
	# snippet's user must exist: nobody stands in for vulnid.
	{
		cat <<-EOF
		primary_hostname = mx.example.org
		domainlist local_domains = vulnid.example.org
		spool_directory = $TMP/exim/spool
		log_file_path = $TMP/exim/log/%slog
		EOF
		sed -e "s/^\([[:space:]]*user = \)vulnid$/\1nobody/" \
		    -e "s/^\([[:space:]]*group = \)vulnid$/\1$(id -gn nobody)/" "$FILTERS/exim"
		printf '\nbegin retry\n*   *   F,2h,15m; G,16h,1h,1.5; F,4d,6h\n'
	} >"$TMP/exim.conf"

	test_expect_success 'exim -bV accepts a configuration built around filters/exim' '
		grep -q "^vulnid:" "$TMP/exim.conf" && grep -q "^vulnid_pipe:" "$TMP/exim.conf" &&
		"$EXIM" -C "$TMP/exim.conf" -bV >"$TMP/exim.out" 2>&1 ||
			fail "exim -bV: $(cat "$TMP/exim.out")"
		expect_match "^Configuration file is $TMP/exim.conf" "$TMP/exim.out"
	'

	test_expect_success 'exim -bV refuses a broken transport (the check is real)' '
		sed "s/^  driver = pipe$/  driver = pipe\n  no_such_option = 1/" "$TMP/exim.conf" >"$TMP/exim-bad.conf" &&
		! "$EXIM" -C "$TMP/exim-bad.conf" -bV >"$TMP/exim.out" 2>&1 &&
		expect_match "no_such_option" "$TMP/exim.out"
	'

	test_expect_success 'exim -bt: request@, request+ID@ and request-bounces+TOKEN@ go to vulnid_pipe, nothing else' '
		for a in request@vulnid.example.org request+VULN-2026-0001@vulnid.example.org \
			request-bounces+0123456789abcdef01234567@vulnid.example.org; do
			"$EXIM" -C "$TMP/exim.conf" -bt "$a" >"$TMP/bt.out" 2>&1 || fail "exim -bt $a: $(cat "$TMP/bt.out")"
			expect_match "router = vulnid, transport = vulnid_pipe" "$TMP/bt.out"
		done &&
		! "$EXIM" -C "$TMP/exim.conf" -bt postmaster@vulnid.example.org >"$TMP/bt.out" 2>&1 &&
		expect_no_match "transport = vulnid_pipe" "$TMP/bt.out"
	'
fi

# ---- OpenSMTPD ---------------------------------------------------------------
SMTPD=
for s in $(PATH="$PATH:/usr/sbin" command -v smtpd 2>/dev/null) /usr/sbin/smtpd; do
	if [ -x "$s" ] && "$s" -h 2>&1 | grep -q OpenSMTPD; then
		SMTPD=$s
		break
	fi
done
if [ -z "$SMTPD" ] && mta_have opensmtpd usr/sbin/smtpd; then
	chmod o+x "$TMP"
	mkdir -p "$TMP/smtpd-ns"
	mta_passwd "$TMP/smtpd-ns" opensmtpd:64001 opensmtpq:64002
	smtpd_unpacked() {
		mta_ns "bind $TMP/smtpd-ns/passwd /etc/passwd
bind $TMP/smtpd-ns/group /etc/group" 'exec "$@"' "$MTA_ROOT/usr/sbin/smtpd" "$@"
	}
	SMTPD=smtpd_unpacked
fi
if [ -z "$SMTPD" ]; then
	test_skip "OpenSMTPD action and match rule" "OpenSMTPD is not installed (Debian package opensmtpd; it conflicts with postfix), and its package cannot be run here: $MTA_WHY"
else
	test_expect_success 'smtpd -n accepts filters/opensmtpd as an smtpd.conf' '
		cp "$FILTERS/opensmtpd" "$TMP/smtpd.conf" &&
		grep -q "^action \"vulnid\" mda " "$TMP/smtpd.conf" &&
		"$SMTPD" -n -f "$TMP/smtpd.conf" >"$TMP/smtpd.out" 2>&1 || fail "smtpd -n: $(cat "$TMP/smtpd.out")"
		expect_match "configuration OK" "$TMP/smtpd.out"
	'

	test_expect_success 'smtpd -n accepts it inside a fuller configuration, and refuses a broken one' '
		{ printf "table aliases file:%s\n" "$TMP/aliases" &&
		  printf "listen on 127.0.0.1 port 2525\n" &&
		  cat "$FILTERS/opensmtpd" &&
		  printf "action \"local\" mbox alias <aliases>\nmatch from local for local action \"local\"\n"; } >"$TMP/smtpd-full.conf" &&
		printf "postmaster: root\n" >"$TMP/aliases" &&
		"$SMTPD" -n -f "$TMP/smtpd-full.conf" >"$TMP/smtpd.out" 2>&1 || fail "smtpd -n: $(cat "$TMP/smtpd.out")"
		sed "s/ action \"vulnid\"$/ action \"no-such-action\"/" "$TMP/smtpd.conf" >"$TMP/smtpd-bad.conf" &&
		! "$SMTPD" -n -f "$TMP/smtpd-bad.conf" >"$TMP/smtpd.out" 2>&1
	'
fi

test_done
