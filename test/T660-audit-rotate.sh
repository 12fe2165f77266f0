#!/bin/bash
# T660-audit-rotate: the audit chain runs on across files rotated by
# logrotate; audit verify reads them all; audit repair rewrites a file that
# lost lines
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

make_instance inst
LOG="$INST/audit.log"

# The logrotate snippet of contrib/, pointed at this instance.
if [ -f "$VULNID_SRCDIR/contrib/logrotate/vulnid" ]; then
	sed -e "s|/var/lib/vulnid/audit.log|$LOG|" -e '/^[[:space:]]*su /d' \
		-e 's/create 0600 .*/create 0600/' "$VULNID_SRCDIR/contrib/logrotate/vulnid" >"$TMP/logrotate.conf"
else
	printf '%s {\n\trotate 24\n\tcompress\n\tdelaycompress\n\tnocopytruncate\n\tcreate 0600\n}\n' "$LOG" >"$TMP/logrotate.conf"
fi
rotate() {
	if command -v logrotate >/dev/null; then
		logrotate -f -s "$TMP/logrotate.state" "$TMP/logrotate.conf"
	else
		# what logrotate does with compress, delaycompress and create
		local n
		for n in $(seq 20 -1 2); do
			[ -f "$LOG.$n.gz" ] && mv "$LOG.$n.gz" "$LOG.$((n + 1)).gz"
		done
		[ -f "$LOG.1" ] && gzip -c "$LOG.1" >"$LOG.2.gz" && rm "$LOG.1"
		mv "$LOG" "$LOG.1" && install -m 600 /dev/null "$LOG"
	fi
}
n=0
mails() {
	local i
	for i in $(seq "$1"); do
		n=$((n + 1))
		write_mail "$TMP/m$n.eml" "Subject: request $n" <<<"Vendor: V$n" && deliver_ok "$TMP/m$n.eml"
	done
}

mails 2
test_expect_success 'after a rotation the new file continues the chain of the rotated one' '
	rotate && test -f "$LOG.1" && test ! -s "$LOG" &&
	mails 2 &&
	last=$(tail -n 1 "$LOG.1" | sed "s/.*\"hash\":\"\\([0-9a-f]*\\)\"}/\\1/") &&
	head -n 1 "$LOG" | grep -q "\"prev\":\"$last\"" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "audit.log and 1 rotated files: [0-9]+ lines from event 1, chain intact" "$TMP/out" &&
	expect_eq "$(sql "SELECT count(*) FROM audit")" "$(cat "$LOG.1" "$LOG" | wc -l | tr -d " ")"
'

test_expect_success 'compressed rotated files are read too' '
	rotate && mails 1 && rotate && mails 1 &&
	test -f "$LOG.1" && test -f "$LOG.2.gz" && test -f "$LOG.3.gz" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "audit.log and 3 rotated files: [0-9]+ lines from event 1, chain intact" "$TMP/out" &&
	"$VULNID" -c "$CONF" audit flush && cmp <(sql "SELECT line FROM audit WHERE seq > (SELECT count(*) FROM audit) - $(wc -l <"$LOG")") "$LOG"
'

test_expect_success 'a rotated file removed for good: the rest still verifies, from a later event' '
	mv "$LOG.3.gz" "$TMP/old.3.gz" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "audit.log and 2 rotated files: [0-9]+ lines from event [0-9]+, chain intact" "$TMP/out" &&
	mv "$TMP/old.3.gz" "$LOG.3.gz"
'

test_expect_success 'a line altered inside a compressed rotated file is named' '
	cp "$LOG.2.gz" "$TMP/good.2.gz" &&
	gunzip -c "$LOG.2.gz" | sed "2s/\"ts\":\"2/\"ts\":\"1/" | gzip -c >"$TMP/bad.gz" && mv "$TMP/bad.gz" "$LOG.2.gz" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	mv "$TMP/good.2.gz" "$LOG.2.gz" &&
	expect_eq 65 "$rc" && expect_match "audit.log.2.gz: line 2: hash does not match its content" "$TMP/err"
'

test_expect_success 'a gap between files is named' '
	cp "$LOG.1" "$TMP/good.1" && sed -i "1d" "$LOG.1" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	cp "$TMP/good.1" "$LOG.1" &&
	expect_eq 65 "$rc" && expect_match "audit.log.1: line 1: does not follow the last line of .*audit.log.2.gz" "$TMP/err"
'

test_expect_success 'lines lost after a crash: verify fails, repair rewrites the file, keeping the damaged one' '
	mails 3 && cp "$LOG" "$TMP/good.log" &&
	head -n 2 "$TMP/good.log" >"$LOG" &&
	rc=0; "$VULNID" -c "$CONF" audit verify 2>"$TMP/err" || rc=$?
	expect_eq 65 "$rc" &&
	"$VULNID" -c "$CONF" audit repair >"$TMP/out" &&
	expect_match "rewritten from the database chain" "$TMP/out" &&
	damaged=$(ls "$LOG".damaged-*) && cmp <(head -n 2 "$TMP/good.log") "$damaged" &&
	cmp "$TMP/good.log" <(head -n "$(wc -l <"$TMP/good.log")" "$LOG") &&
	expect_match "\"event\":\"audit-repaired\"" "$LOG" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_expect_success 'repair of a sound file changes nothing; of a lost file, writes it again' '
	cp "$LOG" "$TMP/before" &&
	"$VULNID" -c "$CONF" audit repair >"$TMP/out" && expect_match "nothing to repair" "$TMP/out" &&
	cmp "$TMP/before" "$LOG" &&
	rm "$LOG" && "$VULNID" -c "$CONF" audit repair >/dev/null &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_expect_success 'a line torn in the middle (a killed writer) is also repaired' '
	head -c -20 "$LOG" >"$TMP/torn" && cat "$TMP/torn" >"$LOG" &&
	"$VULNID" -c "$CONF" audit repair >/dev/null &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

# Rotation while filters write: nothing lost, nothing twice.
for w in 1 2 3 4; do
	for i in 1 2 3 4 5; do write_mail "$TMP/c$w-$i.eml" "Subject: conc $w/$i" <<<"Vendor: C"; done
	(for i in 1 2 3 4 5; do "$FILTER" -c "$CONF" <"$TMP/c$w-$i.eml" 2>/dev/null; done) &
	bg_track $!
done
rotate
for p in $BG_PIDS; do wait "$p" 2>/dev/null; done
BG_PIDS=""

test_expect_success 'rotating while filters write keeps one intact chain' '
	"$VULNID" -c "$CONF" audit flush &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "chain intact" "$TMP/out"
'

test_done
