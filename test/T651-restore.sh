#!/bin/bash
# T651-restore: vulnid backup --all carries everything an instance needs
# (the database, the keyring, log2.key, vulnid.conf, the witness state, the
# operator's templates); the instance wiped, vulnid restore rebuilds it:
# the audit chain verifies, the robot key is the same, the embargo opens
# with it, and the next export into the published feed continues the
# same log (verify-feed passes, extending the HEAD and checkpoint seen
# before).  An instance without its log2.key writes nothing into the
# published feed; audit verify without audit.log names audit flush.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

export_instance inst
PUB="$TMP/pub"
request "$TMP/r1.eml" alice@example.net "Widget overflow" <<<"Product: Widget"
request "$TMP/r2.eml" bob@example.net "Gadget" <<<"Product: Gadget"
printf 'Embargo: 2027-01-31\nProduct: Sealed\n\nThe secret of the sealed product.\n' |
	write_mail "$TMP/r3.eml" "From: carol@example.net" "Subject: sealed"
deliver_ok "$TMP/r3.eml" -f carol@example.net -r request@example.org
"$VULNID" -c "$CONF" witness init witness.example.org/w1 >/dev/null
echo "custom ack of this operator {{id}}" >"$INST/templates/ack.txt"
"$VULNID" -c "$CONF" export feed "$PUB" >/dev/null
robot_key "$TMP/robot.asc"
FPR=$("$VULNID" -c "$CONF" key export --fingerprint)
cp "$PUB/HEAD.json" "$TMP/HEAD.before"
cp "$PUB/log/checkpoint" "$TMP/checkpoint.before"

# feed_sums: every published file, with its hash
feed_sums() { (cd "$PUB" && find . -type f | sort | xargs sha256sum); }

test_expect_success 'backup --all carries the keyring, log2.key, vulnid.conf, the witness state and templates' '
	"$VULNID" -c "$CONF" backup --all "$TMP/full.backup" >"$TMP/out" &&
	expect_match "full.backup: [0-9]+ bytes, a copy of $INST/vulnid.db and of the files of the instance$" "$TMP/out" &&
	expect_eq 600 "$(stat -c %a "$TMP/full.backup")" &&
	sqlite3 "$TMP/full.backup" "SELECT name FROM vulnid_backup_files ORDER BY name" >"$TMP/names" &&
	for n in vulnid.conf log2.key gnupg/pubring.kbx gnupg/trustdb.gpg templates/ack.txt; do
		grep -qx "$n" "$TMP/names" || fail "$n is not in the backup: $(cat "$TMP/names")"
	done &&
	expect_match "^gnupg/private-keys-v1.d/[0-9A-F]+\.key$" "$TMP/names" &&
	expect_match "^witness/" "$TMP/names" &&
	expect_no_match "^(vulnid\.db|audit\.log|tmp/|sent/|gnupg/S\.|gnupg/vulnid-robot-key)" "$TMP/names" &&
	expect_eq 3 "$(sqlite3 "$TMP/full.backup" "SELECT count(*) FROM entries")" &&
	expect_eq ok "$(sqlite3 "$TMP/full.backup" "PRAGMA integrity_check")"
'

test_expect_success 'the instance wiped, restore rebuilds it: the same chain, key and entries' '
	"$VULNID" -c "$CONF" list >"$TMP/list.before" &&
	gpgconf --homedir "$INST/gnupg" --kill all &&
	rm -rf "$INST" && mkdir -m 700 "$INST" &&
	"$VULNID" restore "$TMP/full.backup" "$INST" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "^restored instance in $INST from $TMP/full.backup$" "$TMP/out" &&
	expect_match "^backup: made [0-9T:-]+Z by vulnid [0-9.]+ of $INST, schema $(schema_version), [0-9]+ files of the instance$" "$TMP/out" &&
	expect_match "^entries: 3, the last TEST-[0-9]+-0003$" "$TMP/out" &&
	expect_match "^robot key: $FPR$" "$TMP/out" &&
	expect_match "^log key: $INST/log2.key$" "$TMP/out" &&
	expect_match "set \[ids\] blocks_YYYY past them" "$TMP/err" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/v" &&
	expect_match "chain intact" "$TMP/v" &&
	expect_match "\"event\":\"restored\",.*\"backup\":\"$TMP/full.backup\"" "$INST/audit.log" &&
	expect_eq "$FPR" "$("$VULNID" -c "$CONF" key export --fingerprint)" &&
	"$VULNID" -c "$CONF" list >"$TMP/list.after" &&
	expect_eq "$(cat "$TMP/list.before")" "$(cat "$TMP/list.after")" &&
	expect_eq "custom ack of this operator {{id}}" "$(cat "$INST/templates/ack.txt")" &&
	test -d "$INST/witness" && test -d "$INST/sent/new" && test -d "$INST/tmp" &&
	expect_eq 700 "$(stat -c %a "$INST/gnupg")"
'

test_expect_success 'the next export into the published feed continues the same log' '
	rm "$INST/templates/ack.txt" &&
	request "$TMP/r4.eml" dave@example.net "After the restore" <<<"Product: After" &&
	"$VULNID" -c "$CONF" export feed "$PUB" >"$TMP/out" &&
	expect_match "1 new lines, .*log of 4 entries, checkpoint signed" "$TMP/out" &&
	"$VULNID" verify-feed "$PUB" --key "$TMP/robot.asc" --previous "$TMP/HEAD.before" \
		--previous-checkpoint "$TMP/checkpoint.before" >"$TMP/v" 2>&1 &&
	expect_match "feed verified: 4 lines" "$TMP/v"
'

test_expect_success 'the embargo opens with the restored robot key' '
	VULNID_TEST_NOW=2027-02-01T00:00:00Z "$VULNID" -c "$CONF" tick >"$TMP/tick" &&
	expect_match "^released 1 embargoed entry$" "$TMP/tick" &&
	"$VULNID" -c "$CONF" show TEST-$(date +%Y)-0003 >"$TMP/e3" &&
	expect_match "The secret of the sealed product" "$TMP/e3"
'

test_expect_success 'without its log2.key an instance writes nothing into the published feed' '
	feed_sums >"$TMP/sums.before" &&
	"$VULNID" -c "$CONF" backup "$TMP/db-only.db" >/dev/null &&
	mkdir -m 700 "$TMP/nokey" && cp -p "$CONF" "$TMP/nokey/" && cp -rp "$INST/gnupg" "$TMP/nokey/" &&
	rm -f "$TMP/nokey/gnupg/S."* &&
	"$VULNID" restore "$TMP/db-only.db" "$TMP/nokey" >"$TMP/out" 2>/dev/null &&
	expect_match "^backup: of the database alone, schema" "$TMP/out" &&
	expect_match "^log key: none \(copy the old log2.key" "$TMP/out" &&
	rc=0; "$VULNID" -c "$TMP/nokey/vulnid.conf" export feed "$PUB" >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" &&
	expect_match "log2.key. is missing: restore the log key that made it .*nothing was written" "$TMP/err" &&
	test ! -e "$TMP/nokey/log2.key" &&
	feed_sums >"$TMP/sums.after" &&
	expect_eq "$(cat "$TMP/sums.before")" "$(cat "$TMP/sums.after")"
'

test_expect_success 'with another log key, export refuses before it replaces log.vkey or anything else' '
	"$VULNID" init --prefix TEST --domain example.org "$TMP/other" >/dev/null &&
	cp -p "$TMP/other/log2.key" "$TMP/nokey/log2.key" &&
	gpgconf --homedir "$TMP/other/gnupg" --kill all &&
	request "$TMP/r5.eml" erin@example.net "One more" <<<"Product: More" &&
	rc=0; "$VULNID" -c "$TMP/nokey/vulnid.conf" export feed "$PUB" >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" &&
	expect_match "log/log.vkey. is the key of another log than this instance.s log2.key .*nothing was written" "$TMP/err" &&
	feed_sums >"$TMP/sums.after" &&
	expect_eq "$(cat "$TMP/sums.before")" "$(cat "$TMP/sums.after")" &&
	gpgconf --homedir "$TMP/nokey/gnupg" --kill all
'

test_expect_success 'audit verify without audit.log names audit flush; flush writes it anew' '
	mv "$INST/audit.log" "$TMP/audit.log.aside" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 66 "$rc" &&
	expect_match "audit.log: .*\(vulnid audit flush writes it anew from the database\)$" "$TMP/err" &&
	"$VULNID" -c "$CONF" audit flush &&
	"$VULNID" -c "$CONF" audit verify >/dev/null &&
	cmp "$TMP/audit.log.aside" "$INST/audit.log"
'

test_expect_success 'restore refuses a directory that holds an instance, and a backup that is none' '
	rc=0; "$VULNID" restore "$TMP/full.backup" "$INST" >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 73 "$rc" &&
	expect_match "holds an instance already \(vulnid.db\)" "$TMP/err" &&
	printf "not a database" >"$TMP/junk" && mkdir -m 700 "$TMP/junkdir" &&
	rc=0; "$VULNID" restore "$TMP/junk" "$TMP/junkdir" >/dev/null 2>"$TMP/err" || rc=$?
	test "$rc" -ne 0 &&
	expect_eq "" "$(ls -A "$TMP/junkdir")"
'

test_expect_success 'a backup to standard output restores from standard input' '
	"$VULNID" -c "$CONF" backup --all - >"$TMP/stream.backup" &&
	mkdir -m 700 "$TMP/fromstdin" &&
	"$VULNID" restore - "$TMP/fromstdin" <"$TMP/stream.backup" >"$TMP/out" 2>/dev/null &&
	expect_match "^entries: 5, the last" "$TMP/out" &&
	"$VULNID" -c "$TMP/fromstdin/vulnid.conf" audit verify >/dev/null &&
	gpgconf --homedir "$TMP/fromstdin/gnupg" --kill all
'

# Root backs up and restores an instance of another user (the robot's).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod 755 "$TMP"
	install -d -o nobody -m 0700 "$TMP/robot"
	"$VULNID" init --prefix ROBO --domain example.org "$TMP/robot" >/dev/null
	test_expect_success 'as root: the backup of the robot user'\''s instance is a file of root'\''s, where only root writes' '
		install -d -m 0700 "$TMP/rootonly" &&
		"$VULNID" -c "$TMP/robot/vulnid.conf" backup --all "$TMP/rootonly/robot.backup" >"$TMP/out" &&
		expect_match "robot.backup: [0-9]+ bytes, a copy of $TMP/robot/vulnid.db and of the files" "$TMP/out" &&
		expect_eq "root 600" "$(stat -c "%U %a" "$TMP/rootonly/robot.backup")" &&
		expect_eq "" "$(find "$TMP/robot" ! -user nobody)" &&
		expect_eq "" "$(ls "$TMP/rootonly" | grep tmp)" &&
		rc=0; "$VULNID" -c "$TMP/robot/vulnid.conf" backup "$TMP/rootonly/robot.backup" 2>"$TMP/err" || rc=$?
		expect_eq 73 "$rc" && expect_match "exists" "$TMP/err"
	'
	test_expect_success 'as root: restore reads root'\''s file and writes the instance as its user' '
		rc=0; "$VULNID" restore "$TMP/rootonly/robot.backup" "$TMP/robot2" 2>"$TMP/err" || rc=$?
		expect_eq 73 "$rc" &&
		expect_match "install -d -o vulnid -g vulnid -m 0700" "$TMP/err" &&
		install -d -o nobody -m 0700 "$TMP/robot2" &&
		"$VULNID" restore "$TMP/rootonly/robot.backup" "$TMP/robot2" >/dev/null 2>&1 &&
		expect_eq "" "$(find "$TMP/robot2" ! -user nobody)" &&
		"$VULNID" -c "$TMP/robot2/vulnid.conf" audit verify >/dev/null
	'
	for h in "$TMP/robot/gnupg" "$TMP/robot2/gnupg"; do
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- gpgconf --homedir "$h" --kill all 2>/dev/null
	done
else
	test_skip "as root: backup and restore of another user's instance" "needs root and the user nobody"
fi

test_done
