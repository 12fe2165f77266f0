#!/bin/bash
# T010-init: vulnid init creates a complete instance and refuses to clobber one
. "$(dirname "$0")/test-lib.sh"

make_instance one

test_expect_success 'init creates the instance layout with mode 0700' '
	test -f "$CONF" && test -f "$INST/vulnid.db" && test -f "$INST/audit.log" &&
	test -d "$INST/sent/new" && test -d "$INST/sent/cur" && test -d "$INST/sent/tmp" &&
	expect_eq 700 "$(stat -c %a "$INST")" "instance mode" &&
	expect_eq 600 "$(stat -c %a "$CONF")" "config mode"
'

test_expect_success 'the configuration has every key, commented' '
	for k in prefix domain request_local bounce_local blocks max_message_size \
		 max_header_size max_headers max_line_length max_parts max_depth max_ids \
		 max_fields max_field_length busy_timeout transport dir; do
		grep -q "^$k = " "$CONF" || fail "key $k missing"
	done &&
	expect_match "^prefix = TEST$" "$CONF" &&
	expect_match "^domain = example.org$" "$CONF" &&
	test "$(grep -c "^#" "$CONF")" -gt 20
'

test_expect_success 'the defaults the configuration states are the defaults: [export] title' '
	grep -B2 "^title = $" "$CONF" | tr "\n" " " >"$TMP/title-comment" &&
	expect_match "empty means \"PREFIX vulnerability # identifiers\", with the prefix of \[instance\]" "$TMP/title-comment" &&
	"$VULNID" -c "$CONF" export html "$TMP/site" >/dev/null &&
	expect_match "<title>TEST vulnerability identifiers</title>" "$TMP/site/index.html"
'

test_expect_success 'the database is in WAL mode at the current schema version' '
	expect_eq wal "$(sql "PRAGMA journal_mode")" &&
	expect_eq "$(schema_version)" "$(sql "PRAGMA user_version")"
'

test_expect_success 'init refuses a directory that already holds an instance' '
	rc=0; "$VULNID" init --prefix TEST "$INST" 2>"$TMP/err" || rc=$?
	expect_eq 73 "$rc" "exit status" &&
	expect_match "already holds an instance" "$TMP/err"
'

test_expect_success 'init refuses the prefix CVE and malformed prefixes' '
	for p in CVE cve X ABCDEFGHIJKLMNOPQ "A-B"; do
		rc=0; "$VULNID" init --prefix "$p" "$TMP/bad-$p" 2>/dev/null || rc=$?
		expect_eq 64 "$rc" "init --prefix $p" &&
		test ! -e "$TMP/bad-$p/vulnid.conf" || return 1
	done
'

test_expect_success 'a lower-case prefix is upper-cased' '
	"$VULNID" init --prefix lab1 --domain example.org "$TMP/lower" >/dev/null &&
	expect_match "^prefix = LAB1$" "$TMP/lower/vulnid.conf"
'

test_expect_success 'commands find the instance by -c and by VULNID_CONF' '
	"$VULNID" -c "$CONF" list >/dev/null &&
	VULNID_CONF="$CONF" "$VULNID" list >/dev/null &&
	rc=0; "$VULNID" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" "without config" &&
	expect_match "no configuration" "$TMP/err"
'

test_expect_success 'the audit log starts with an init event that verifies' '
	expect_match "\"event\":\"init\"" "$INST/audit.log" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "1 lines, chain intact" "$TMP/out"
'

test_expect_success 'a group- or world-writable instance is refused with a clear error' '
	chmod g+w "$CONF" &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	chmod g-w "$CONF" &&
	expect_eq 78 "$rc" &&
	expect_match "writable by group or others" "$TMP/err" &&
	chmod o+w "$INST" &&
	rc=0; "$FILTER" -c "$CONF" </dev/null 2>"$TMP/err" || rc=$?
	chmod o-w "$INST" &&
	expect_eq 75 "$rc" &&
	expect_match "writable by group or others" "$TMP/err" &&
	"$VULNID" -c "$CONF" list >/dev/null
'

test_expect_success 'an invalid configuration value is reported by name' '
	set_conf limits max_parts many &&
	rc=0; "$VULNID" -c "$CONF" list 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "max_parts" "$TMP/err"
'

test_done
