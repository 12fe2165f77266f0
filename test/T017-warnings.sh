#!/bin/bash
# T017-warnings: what should reach the operator does.  vulnid queue list
# shows what needs attention: a failed item once (then only queue list
# --all), so that an empty list means healthy again, and a retried item
# that fails again is shown again.  The crontab lines of vulnid(8), the
# README and the Debian package run under cron's PATH, and their MAILTO
# is an address that the recommended routing delivers: a local account or
# an outside address, never one of the robot's domain.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf crypto sign none

if [ -x "$SMTP_SINK" ]; then
	# every RCPT refused with 550: the ack fails at once
	start_sink hard -f RCPT
	set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
	set_conf delivery starttls no
	test_expect_success 'a failed item is shown once by queue list, then only by queue list --all' '
		write_mail "$TMP/r1.eml" "Message-ID: <warn1@example.net>" <<<"Product: Warn" &&
		deliver_ok "$TMP/r1.eml" -f alice@example.net -r request@example.org &&
		"$VULNID" -c "$CONF" queue list >"$TMP/l1" 2>"$TMP/e1" &&
		expect_match "^1  .*  failed  +ack .*alice@example.net" "$TMP/l1" &&
		expect_eq "vulnid: 1 failed item shown this once; vulnid queue list --all lists it again, vulnid queue retry N sends one again" "$(cat "$TMP/e1")" &&
		"$VULNID" -c "$CONF" queue list >"$TMP/l2" 2>"$TMP/e2" &&
		test ! -s "$TMP/l2" && test ! -s "$TMP/e2" &&
		"$VULNID" -c "$CONF" queue list --all >"$TMP/l3" 2>"$TMP/e3" &&
		expect_match "^1  .*  failed  +ack" "$TMP/l3" && test ! -s "$TMP/e3" &&
		"$VULNID" -c "$CONF" queue list --all --json >"$TMP/j" &&
		shown=$(json_get "j[0][\"shown\"]" <"$TMP/j") &&
		case $shown in 20*T*Z) ;; *) fail "shown: $shown" ;; esac &&
		"$VULNID" -c "$CONF" queue list --json >"$TMP/j2" &&
		expect_eq "[]" "$(json_get "j" <"$TMP/j2")"
	'

	test_expect_success 'a retried item that fails again is shown again' '
		"$VULNID" -c "$CONF" queue retry 1 &&
		"$VULNID" -c "$CONF" queue list >"$TMP/l4" 2>/dev/null &&
		expect_match "^1  .*  queued " "$TMP/l4" &&
		"$VULNID" -c "$CONF" queue run >/dev/null &&
		"$VULNID" -c "$CONF" queue list >"$TMP/l5" 2>"$TMP/e5" &&
		expect_match "^1  .*  failed " "$TMP/l5" &&
		expect_match "1 failed item shown this once" "$TMP/e5" &&
		"$VULNID" -c "$CONF" queue list >"$TMP/l6" 2>/dev/null &&
		test ! -s "$TMP/l6"
	'
	stop_sink
	set_conf delivery transport maildir:sent
else
	test_skip "queue list shows a failed item once" "smtp-sink is not installed (Debian package postfix)"
fi

# cron_lines FILE: the crontab lines of a file (man page, README, cron.d),
# as "MAILTO|LINE", the roff escapes undone
cron_lines() {
	sed -e 's/\\-/-/g' -e 's/^  //' "$1" | awk '
		/^MAILTO=/ { m = substr($0, 8) }
		/^\*\/5 \* \* \* \* / { print m "|" $0 }'
}

test_expect_success 'every crontab line shipped runs with cron'\''s PATH; MAILTO reaches someone' '
	n=0
	for f in "$VULNID_SRCDIR/doc/vulnid.8" "$VULNID_SRCDIR/README" "$VULNID_SRCDIR/debian/vulnid.cron.d"; do
		[ -f "$f" ] || continue
		cron_lines "$f" >"$TMP/lines" &&
		test -s "$TMP/lines" || fail "no crontab line in $f"
		while IFS="|" read -r mailto line; do
			n=$((n + 1))
			case $mailto in
			root | *@*.* ) ;;
			*) fail "$f: MAILTO '\''$mailto'\'' for: $line" ;;
			esac
			case $mailto in
			*@vulnid.example.org | *@example.org) fail "$f: MAILTO $mailto is of the robot'\''s domain" ;;
			esac
			# the command: after the user field of /etc/cron.d, if any
			cmd=$(printf "%s\n" "$line" | sed -e "s/^\*\/5 \* \* \* \* //" -e "s/^vulnid //" -e "s| >/dev/null$||") &&
			cmd=$(printf "%s\n" "$cmd" | sed -e "s|/usr/s\{0,1\}bin/vulnid\b|$VULNID|; s|/usr/local/sbin/vulnid|$VULNID|" \
				-e "s|/var/lib/vulnid/vulnid.conf|$CONF|g" -e "s|/var/lib/vulnid|$INST|g" \
				-e "s|/run/systemd/system|$TMP/no-systemd|g") &&
			case $cmd in /*|\[*) ;; *) fail "$f: no full path: $line" ;; esac
			env -i PATH=/usr/bin:/bin VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" sh -c "$cmd" >"$TMP/cron.out" 2>"$TMP/cron.err" ||
				fail "$f: $line: $(cat "$TMP/cron.err")"
			expect_match "^delivered [0-9]+, deferred 0, failed [0-9]+$" "$TMP/cron.out"
		done <"$TMP/lines"
	done &&
	test "$n" -ge 2
'

test_done
