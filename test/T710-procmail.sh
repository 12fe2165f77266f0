#!/bin/bash
# T710-procmail: the shipped filters/procmailrc and filters/maildrop run the
# real procmail and maildrop, and end with the filter's verdict: 0 handled,
# 75 try again (nothing kept), 65 too large.
. "$(dirname "$0")/test-lib.sh"

PROCMAIL=$(command -v procmail 2>/dev/null || true)
MAILDROP=$(command -v maildrop 2>/dev/null || true)
Y=$(date -u +%Y)

# The mail as the MTA's local delivery hands it over: a From_ line with
# the envelope sender and Delivered-To with the recipient.
write_mail "$TMP/body.eml" "Message-ID: <pm1@example.net>" "Subject: Procmail request" <<<"Product: Procmail"
envelope() { # FILE SENDER RECIPIENT
	{ printf 'From %s %s\nDelivered-To: %s\n' "$2" "$(LC_ALL=C date -u '+%a %b %e %T %Y')" "$3"; cat "$1"; } >"$1.mbox"
}

# lock_db / unlock_db: hold the write lock of $INST/vulnid.db from another
# process.  Called at the top level, so the locker is stopped at exit.
cat >"$TMP/lock.py" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(60)
PY
lock_db() {
	rm -f "$TMP/locked"
	$PYTHON "$TMP/lock.py" "$INST/vulnid.db" "$TMP/locked" &
	LOCKER=$!
	bg_track "$LOCKER"
	for _ in $(seq 100); do [ -e "$TMP/locked" ] && break; sleep 0.05; done
}
unlock_db() {
	kill "$LOCKER" 2>/dev/null
	wait "$LOCKER" 2>/dev/null
}

state() { echo "$(sql "SELECT count(*) FROM messages") $(sql "SELECT count(*) FROM entries") $(sent_count)"; }
ids_for() { sql "SELECT e.id FROM entries e JOIN messages m ON e.message = m.id WHERE m.message_id = '$1'"; }

# ---- procmail ----------------------------------------------------------------
if [ -z "$PROCMAIL" ]; then
	test_skip "procmail" "procmail is not installed (Debian package procmail)"
else
	make_instance pm
	set_conf database busy_timeout 300
	cp "$VULNID_SRCDIR/filters/procmailrc" "$TMP/procmailrc"
	chmod 644 "$TMP/procmailrc"
	# run_procmail FILE: the shipped rcfile with the built filter and this
	# instance given on the command line; status in $prc.  (procmail
	# passes on only the environment it is given this way.)
	run_procmail() {
		prc=0
		"$PROCMAIL" -m VULNID_TEMPLATE_DIR="$VULNID_TEMPLATE_DIR" \
			VULNID_FILTER="$FILTER" VULNID_CONF="$CONF" "$TMP/procmailrc" \
			<"$1" >"$TMP/procmail.out" 2>&1 || prc=$?
	}
	envelope "$TMP/body.eml" alice@example.net request@example.org

	test_expect_success 'procmail: a request is handled, acknowledged, and procmail exits 0' '
		run_procmail "$TMP/body.eml.mbox" &&
		expect_eq 0 "$prc" "procmail exit status ($(cat "$TMP/procmail.out"))" &&
		f=$(sent_to alice@example.net) &&
		expect_eq "[TEST-$Y-0001] Procmail request" "$(mail_header "$f" Subject)" &&
		expect_eq "alice@example.net|request@example.org" \
			"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages")" &&
		sql "SELECT CAST(data AS TEXT) FROM blobs JOIN messages ON raw_sha256 = sha256" | head -n 1 >"$TMP/first" &&
		expect_eq "Delivered-To: request@example.org" "$(cat "$TMP/first")" "the From_ line is not archived"
	'

	write_mail "$TMP/l.eml" "Message-ID: <pmlock@example.net>" "Subject: Locked" <<<"Product: Lock"
	envelope "$TMP/l.eml" alice@example.net request@example.org
	before=$(state)
	lock_db
	test_expect_success 'procmail: database locked: procmail itself exits 75 and nothing is kept' '
		test -e "$TMP/locked" &&
		run_procmail "$TMP/l.eml.mbox" &&
		expect_eq 75 "$prc" "procmail exit status" &&
		expect_match "temporary failure \(database busy\)" "$TMP/procmail.out"
	'
	unlock_db
	test_expect_success 'procmail: nothing was assigned; the same mail again gets exactly one ID' '
		expect_eq "$before" "$(state)" &&
		expect_eq "" "$(ids_for pmlock@example.net)" &&
		run_procmail "$TMP/l.eml.mbox" &&
		expect_eq 0 "$prc" "procmail exit status ($(cat "$TMP/procmail.out"))" &&
		expect_eq "TEST-$Y-0002" "$(ids_for pmlock@example.net)" &&
		run_procmail "$TMP/l.eml.mbox" &&
		expect_eq 0 "$prc" "a redelivery" &&
		expect_eq "TEST-$Y-0002" "$(ids_for pmlock@example.net)" &&
		"$VULNID" -c "$CONF" audit verify
	'

	test_expect_success 'procmail: a mail over max_message_size: procmail exits 65' '
		set_conf limits max_message_size 2048 &&
		{ cat "$TMP/l.eml.mbox"; head -c 6000 /dev/zero | tr "\\0" a | fold -w 70; } >"$TMP/big.mbox" &&
		run_procmail "$TMP/big.mbox" &&
		expect_eq 65 "$prc" &&
		expect_match "message too large" "$TMP/procmail.out" &&
		set_conf limits max_message_size 26214400
	'

	test_expect_success 'procmail: a filter that cannot run is a temporary failure (75), not a bounce' '
		prc=0; "$PROCMAIL" -m VULNID_FILTER="$TMP/no-such-filter" VULNID_CONF="$CONF" "$TMP/procmailrc" \
			<"$TMP/body.eml.mbox" >"$TMP/procmail.out" 2>&1 || prc=$?
		expect_eq 75 "$prc"
	'
fi

# ---- maildrop ----------------------------------------------------------------
if [ -z "$MAILDROP" ]; then
	test_skip "maildrop" "maildrop is not installed (Debian package maildrop)"
	test_done
fi

make_instance md
set_conf database busy_timeout 300
# The shipped mailfilter with the built filter and this instance; maildrop
# wants its filter file private to the user.
sed -e "s|^VULNID_FILTER=.*|VULNID_FILTER=\"$FILTER\"|" -e "s|^VULNID_CONF=.*|VULNID_CONF=\"$CONF\"|" \
	"$VULNID_SRCDIR/filters/maildrop" >"$TMP/mailfilter"
chmod 600 "$TMP/mailfilter"
# run_maildrop FILE SENDER: status in $mrc.
run_maildrop() {
	mrc=0
	"$MAILDROP" -f "$2" "$TMP/mailfilter" <"$1" >"$TMP/maildrop.out" 2>&1 || mrc=$?
}
write_mail "$TMP/md.eml" "Message-ID: <md1@example.net>" "Subject: Maildrop request" "Delivered-To: request@example.org" <<<"Product: Maildrop"

test_expect_success 'maildrop: a request is handled, acknowledged, and maildrop exits 0' '
	grep -q "^VULNID_FILTER=\"$FILTER\"$" "$TMP/mailfilter" &&
	run_maildrop "$TMP/md.eml" bob@example.net &&
	expect_eq 0 "$mrc" "maildrop exit status ($(cat "$TMP/maildrop.out"))" &&
	f=$(sent_to alice@example.net) &&
	expect_eq "[TEST-$Y-0001] Maildrop request" "$(mail_header "$f" Subject)" &&
	expect_eq "bob@example.net|request@example.org" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to FROM messages")"
'

test_expect_success 'maildrop: a hostile envelope sender never reaches a shell' '
	write_mail "$TMP/md-inj.eml" "Message-ID: <mdinj@example.net>" <<<"Product: Quotes" &&
	run_maildrop "$TMP/md-inj.eml" "x\";touch $TMP/pwned;\"@example.net" &&
	expect_eq 0 "$mrc" "maildrop exit status ($(cat "$TMP/maildrop.out"))" &&
	test ! -e "$TMP/pwned" &&
	expect_eq "x\";touch $TMP/pwned;\"@example.net" \
		"$(sql "SELECT envelope_from FROM messages WHERE message_id = '\''mdinj@example.net'\''")"
'

write_mail "$TMP/ml.eml" "Message-ID: <mdlock@example.net>" "Subject: Locked" <<<"Product: Lock"
before=$(state)
lock_db
test_expect_success 'maildrop: database locked: maildrop exits 75 and nothing is kept' '
	test -e "$TMP/locked" &&
	run_maildrop "$TMP/ml.eml" alice@example.net &&
	expect_eq 75 "$mrc" "maildrop exit status" &&
	expect_match "temporary failure \(database busy\)" "$TMP/maildrop.out"
'
unlock_db
test_expect_success 'maildrop: nothing was assigned; the same mail again gets exactly one ID' '
	expect_eq "$before" "$(state)" &&
	run_maildrop "$TMP/ml.eml" alice@example.net &&
	expect_eq 0 "$mrc" "maildrop exit status ($(cat "$TMP/maildrop.out"))" &&
	expect_eq 1 "$(ids_for mdlock@example.net | wc -l)" &&
	run_maildrop "$TMP/ml.eml" alice@example.net &&
	expect_eq 1 "$(ids_for mdlock@example.net | wc -l)" "after a redelivery"
'

test_expect_success 'maildrop: too large gives 65, a filter that cannot run gives 75' '
	set_conf limits max_message_size 2048 &&
	{ cat "$TMP/ml.eml"; head -c 6000 /dev/zero | tr "\\0" a | fold -w 70; } >"$TMP/mbig.eml" &&
	run_maildrop "$TMP/mbig.eml" alice@example.net &&
	expect_eq 65 "$mrc" &&
	set_conf limits max_message_size 26214400 &&
	sed "s|^VULNID_FILTER=.*|VULNID_FILTER=\"$TMP/no-such-filter\"|" "$TMP/mailfilter" >"$TMP/mailfilter.bad" &&
	chmod 600 "$TMP/mailfilter.bad" &&
	mrc=0; "$MAILDROP" -f alice@example.net "$TMP/mailfilter.bad" <"$TMP/ml.eml" >/dev/null 2>&1 || mrc=$?
	expect_eq 75 "$mrc"
'

test_done
