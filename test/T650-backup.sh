#!/bin/bash
# T650-backup: vulnid backup makes a consistent online copy of the database,
# while filters keep writing
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

export_instance inst
for i in 1 2 3; do
	request "$TMP/r$i.eml" "user$i@example.net" "Request $i" <<<"Vendor: V$i"
done

# check_copy FILE: the copy is sound: integrity, its own audit chain, every
# entry with its first record.
check_copy() {
	expect_eq ok "$(sqlite3 "$1" "PRAGMA integrity_check")" &&
	expect_eq delete "$(sqlite3 "$1" "PRAGMA journal_mode")" &&
	expect_eq 0 "$(sqlite3 "$1" "SELECT count(*) FROM entries e WHERE NOT EXISTS
		(SELECT 1 FROM records r WHERE r.entry = e.id AND r.seq = 1 AND r.sha256 = e.digest)")" &&
	$PYTHON - "$1" <<-"PY"
	import hashlib, sqlite3, sys
	prev = "0" * 64
	for seq, line, h in sqlite3.connect(sys.argv[1]).execute("SELECT seq, line, hash FROM audit ORDER BY seq"):
	    cut = line.rindex(',"hash":"')
	    assert hashlib.sha256(line[:cut].encode()).hexdigest() == h, seq
	    assert ',"prev":"%s"' % prev in line, seq
	    prev = h
	PY
}

test_expect_success 'a backup is a checked, private copy' '
	"$VULNID" -c "$CONF" backup "$TMP/b1.db" >"$TMP/out" &&
	expect_match "b1.db: [0-9]+ bytes" "$TMP/out" &&
	expect_eq 600 "$(stat -c %a "$TMP/b1.db")" &&
	check_copy "$TMP/b1.db" &&
	expect_eq 3 "$(sqlite3 "$TMP/b1.db" "SELECT count(*) FROM entries")" &&
	expect_eq "$(sql "SELECT group_concat(hash) FROM audit")" "$(sqlite3 "$TMP/b1.db" "SELECT group_concat(hash) FROM audit")" &&
	test -z "$(ls "$TMP" | grep "b1.db.tmp")"
'

test_expect_success 'an existing file is kept unless --force' '
	rc=0; "$VULNID" -c "$CONF" backup "$TMP/b1.db" 2>"$TMP/err" || rc=$?
	expect_eq 73 "$rc" && expect_match "exists" "$TMP/err" &&
	"$VULNID" -c "$CONF" backup --force "$TMP/b1.db" >/dev/null &&
	rc=0; "$VULNID" -c "$CONF" backup "$TMP/no/such/dir/b.db" 2>/dev/null || rc=$?
	test "$rc" -ne 0
'

# Eight filters deliver twelve requests each while backups are taken.
for w in $(seq 8); do
	for i in $(seq 12); do
		write_mail "$TMP/w$w-$i.eml" "From: w$w@example.net" "Subject: load $w/$i" <<<"Vendor: Load $w"
	done
done
for w in $(seq 8); do
	(for i in $(seq 12); do "$FILTER" -c "$CONF" -f "w$w@example.net" -r request@example.org \
		<"$TMP/w$w-$i.eml" 2>>"$TMP/load.err" || echo "filter $w/$i: $?" >>"$TMP/load.fail"; done) &
	bg_track $!
done

test_expect_success 'backups taken while filters write are consistent snapshots' '
	for k in 1 2 3 4 5; do
		"$VULNID" -c "$CONF" backup --force "$TMP/live$k.db" >/dev/null || fail "backup $k failed"
		check_copy "$TMP/live$k.db" || fail "copy $k is not sound"
	done
'

for p in $BG_PIDS; do wait "$p" 2>/dev/null; done
BG_PIDS=""

test_expect_success 'the filters were not disturbed; the last copy is a prefix of the database' '
	test ! -s "$TMP/load.fail" &&
	expect_eq 99 "$(sql "SELECT count(*) FROM entries")" &&
	n=$(sqlite3 "$TMP/live5.db" "SELECT count(*) FROM audit") &&
	expect_eq "$(sqlite3 "$TMP/live5.db" "SELECT hash FROM audit WHERE seq = $n")" \
		"$(sql "SELECT hash FROM audit WHERE seq = $n")"
'

test_expect_success 'the copy serves as the database of an instance' '
	"$VULNID" -c "$CONF" backup "$TMP/final.db" >/dev/null &&
	mkdir -m 700 "$TMP/restored" && cp -p "$CONF" "$TMP/restored/" &&
	cp -p "$TMP/final.db" "$TMP/restored/vulnid.db" && cp -p "$INST/audit.log" "$TMP/restored/" &&
	"$VULNID" -c "$TMP/restored/vulnid.conf" list >"$TMP/list" &&
	expect_eq 99 "$(wc -l <"$TMP/list")" &&
	"$VULNID" -c "$TMP/restored/vulnid.conf" audit verify >/dev/null
'

test_done
