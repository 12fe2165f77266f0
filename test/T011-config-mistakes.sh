#!/bin/bash
# T011-config-mistakes: an operator's slip in vulnid.conf is never silent.
# A misspelt key or group, a key in the wrong group, a key set twice or a
# broken line stops every program with the file, the line and the nearest
# known key; vulnid config check lists them all; the filter keeps the mail
# (75, one line); vulnid-lmtpd does not start, and keeps its old
# configuration on a reload.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"

make_instance inst
cp "$CONF" "$TMP/good.conf"
# line_of KEY: the line of "KEY = " in the good file
line_of() { grep -n "^$1 = " "$TMP/good.conf" | head -n 1 | cut -d: -f1; }
restore_conf() { cp "$TMP/good.conf" "$CONF"; }

test_expect_success 'a misspelt key: every program stops and says where, and what was meant' '
	n=$(line_of transport) &&
	sed -i "s|^transport = maildir:sent|transprot = smtp://127.0.0.1:25|" "$CONF" &&
	msg="$CONF:$n: unknown key '\''transprot'\'' in \[delivery\] \(did you mean transport\?\)" &&
	for c in tick "queue list" list "audit verify"; do
		rc=0; "$VULNID" -c "$CONF" $c >"$TMP/out" 2>"$TMP/err" || rc=$?
		expect_eq 78 "$rc" "vulnid $c" &&
		expect_match "^vulnid: $msg$" "$TMP/err" &&
		expect_no_match "delivered" "$TMP/out" || exit 1
	done &&
	write_mail "$TMP/m1.eml" "Message-ID: <conf1@example.net>" <<<"Product: Conf" &&
	deliver "$TMP/m1.eml" -f alice@example.net -r request@example.org &&
	expect_eq 75 "$rc" "the filter keeps the mail" &&
	expect_eq 1 "$(wc -l <"$TMP/.filter.err")" "lines on stderr" &&
	expect_match "^vulnid-filter: $msg$" "$TMP/.filter.err" &&
	restore_conf &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages")" &&
	deliver_ok "$TMP/m1.eml" -f alice@example.net -r request@example.org &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")"
'

test_expect_success 'a misspelt group, a key of another group, a key set twice, a broken line' '
	restore_conf && printf "[delivry]\ntransport = smtp://127.0.0.1:25\n" >>"$CONF" &&
	n=$(($(wc -l <"$TMP/good.conf") + 1)) &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "^vulnid: $CONF:$n: unknown group \[delivry\] \(did you mean \[delivery\]\?\)$" "$TMP/err" &&
	restore_conf && sed -i "s|^prefix = TEST|prefix = TEST\ntransport = smtp://127.0.0.1:25|" "$CONF" &&
	n=$(($(line_of prefix) + 1)) &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "^vulnid: $CONF:$n: .transport. is not a key of \[instance\]: it belongs in \[delivery\]$" "$TMP/err" &&
	restore_conf && printf "[delivery]\ntransport = smtp://127.0.0.1:25\n" >>"$CONF" &&
	n=$(($(wc -l <"$TMP/good.conf") + 2)) &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "^vulnid: $CONF:$n: \[delivery\] transport is set twice \(also on line $(line_of transport)\): remove one$" "$TMP/err" &&
	restore_conf && printf "[delivery]\nstarttls required\n" >>"$CONF" &&
	n=$(($(wc -l <"$TMP/good.conf") + 2)) &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "^vulnid: $CONF:$n: .starttls required. is neither \[group\], key = value nor a # comment$" "$TMP/err" &&
	restore_conf
'

test_expect_success 'a wrong value names its line' '
	restore_conf && set_conf limits max_parts many &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "^vulnid: $CONF:$(line_of max_parts): \[limits\] max_parts must be a whole number" "$TMP/err" &&
	restore_conf
'

test_expect_success 'vulnid config check lists every mistake at once, and says ok after the fix' '
	restore_conf &&
	printf "[delivry]\nx = 1\n[limits]\nmax_partz = 3\n[lmtpd]\nsocket_grop = postfix\n" >>"$CONF" &&
	rc=0; "$VULNID" -c "$CONF" config check >"$TMP/out" 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_eq 3 "$(wc -l <"$TMP/err")" "mistakes listed" &&
	expect_match "unknown group \[delivry\]" "$TMP/err" &&
	expect_match "unknown key .max_partz. in \[limits\] \(did you mean max_parts\?\)" "$TMP/err" &&
	expect_match "unknown key .socket_grop. in \[lmtpd\] \(did you mean socket_group\?\)" "$TMP/err" &&
	test ! -s "$TMP/out" &&
	restore_conf &&
	VULNID_CONF="$CONF" "$VULNID" config check >"$TMP/out" &&
	expect_eq "$CONF: ok" "$(cat "$TMP/out")"
'

test_expect_success 'vulnid-lmtpd does not start on a misspelt key (75, the message)' '
	restore_conf && printf "[lmtpd]\nsesions = 4\n" >>"$CONF" &&
	rc=0; "$LMTPD" -c "$CONF" >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 75 "$rc" &&
	expect_match "^vulnid-lmtpd: $CONF:[0-9]+: unknown key .sesions. in \[lmtpd\] \(did you mean sessions\?\)$" "$TMP/err" &&
	test ! -e "$INST/lmtp.sock" &&
	restore_conf
'

restore_conf
start_lmtpd
test_expect_success 'a reload with a misspelt key keeps the running configuration, all of it' '
	before=$(sent_count) &&
	set_conf delivery transport smtp://127.0.0.1:1 &&
	printf "[lmtpd]\nsesions = 4\n" >>"$CONF" &&
	kill -HUP "$LMTPD_PID" && sleep 0.5 &&
	kill -0 "$LMTPD_PID" &&
	request_mail "$TMP/l1.eml" reload1 &&
	lmtp "$TMP/l1.eml" --from r@example.net --to request@example.org &&
	expect_match "^END request@example.org 250 2.0.0 assigned TEST-" "$TMP/lmtp.out" &&
	wait_until sent_is $((before + 1)) || fail "the ack did not go by the old transport, maildir:sent" &&
	restore_conf
'
stop_lmtpd

test_done
