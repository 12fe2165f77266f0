#!/bin/bash
# T012-upgrade: an instance of the previous release (vulnid 0.1.0, schema
# 7, made by test/upgrade/make-instance.sh into test/upgrade/schema7: two
# entries, one under embargo, an addition, the creator's and the vendor's
# tokens) upgraded by this build: the first command that writes migrates
# it and says so (standard error, the audit log); every entry, digest,
# token and key works as before; the embargo is released with the old
# robot key; the versions and schemas of doc/UPGRADING are this build's.
. "$(dirname "$0")/test-lib.sh"

FIX="$VULNID_SRCDIR/test/upgrade/schema7"
UPGRADING="$VULNID_SRCDIR/doc/UPGRADING"

# fixture_instance NAME: the fixture's instance in $TMP/NAME (INST, CONF)
fixture_instance() {
	INST="$TMP/$1"
	CONF="$INST/vulnid.conf"
	mkdir -m 700 "$INST" "$INST/gnupg" "$INST/tmp" "$INST/templates" "$INST/sent" &&
	mkdir "$INST/sent/new" "$INST/sent/cur" "$INST/sent/tmp" &&
	sqlite3 "$INST/vulnid.db" <"$FIX/vulnid.sql" &&
	sqlite3 "$INST/vulnid.db" "PRAGMA journal_mode = WAL" >/dev/null &&
	G "$INST/gnupg" --import "$FIX/robot-secret.asc" 2>/dev/null &&
	cp "$FIX/vulnid.conf" "$FIX/log.key" "$FIX/audit.log" "$INST/" &&
	chmod 600 "$CONF" "$INST/log.key" "$INST/audit.log"
}
token_of() { awk -v a="$1" '$1 == a { print $2 }' "$FIX/tokens"; }

fixture_instance old
export VULNID_TEST_NOW=2026-03-10T09:00:00Z

test_expect_success 'the fixture is the previous release'\''s instance: schema 7, two entries' '
	expect_eq 7 "$(sql "PRAGMA user_version")" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM entries")" &&
	expect_eq "vulnid 0.1.0" "$(cat "$FIX/VERSION")" &&
	test "$(schema_version)" -gt 7 &&
	sql "SELECT id || '\'' '\'' || digest FROM entries ORDER BY id" >"$TMP/digests.before" &&
	sql "SELECT hash FROM audit ORDER BY seq" >"$TMP/audit.before"
'

test_expect_success 'a read-only command refuses the old schema, saying how to upgrade, and changes nothing' '
	rc=0; "$VULNID" -c "$CONF" export feed "$TMP/feed" 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "has schema version 7, older than this program.s $(schema_version) .*back it up \(vulnid backup --all\), then any command that writes migrates it" "$TMP/err" &&
	expect_eq 7 "$(sql "PRAGMA user_version")"
'

test_expect_success 'this build backs up the old schema before it migrates anything' '
	"$VULNID" -c "$CONF" backup "$TMP/before.db" >/dev/null &&
	expect_eq 7 "$(sqlite3 "$TMP/before.db" "PRAGMA user_version")" &&
	expect_eq 7 "$(sql "PRAGMA user_version")"
'

test_expect_success 'the first command that writes migrates, and says so on stderr, in the audit log and once' '
	"$VULNID" -c "$CONF" list >"$TMP/list" 2>"$TMP/err" &&
	expect_eq 1 "$(wc -l <"$TMP/err")" &&
	expect_match "^vulnid: upgraded .$INST/vulnid.db. from schema 7 to $(schema_version) \(vulnid [0-9.]+\): 8: queue list shows a failed item once .*; older versions cannot open it any more" "$TMP/err" &&
	expect_eq "$(schema_version)" "$(sql "PRAGMA user_version")" &&
	expect_match "^TEST-2026-0001 .*public +Heap overflow in the widget parser$" "$TMP/list" &&
	expect_match "^TEST-2026-0002 .*embargoed" "$TMP/list" &&
	tail -n 1 "$INST/audit.log" >"$TMP/last" &&
	expect_match "\"event\":\"migrated\",.*\"from\":7,\"to\":$(schema_version),\"version\":\"[0-9.]+\",\"what\":\"8: " "$TMP/last" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" &&
	expect_match "lines, chain intact" "$TMP/out" &&
	"$VULNID" -c "$CONF" list >/dev/null 2>"$TMP/err2" &&
	test ! -s "$TMP/err2"
'

test_expect_success 'every entry keeps its digest, and the audit chain runs on from the old one' '
	sql "SELECT id || '\'' '\'' || digest FROM entries ORDER BY id" >"$TMP/digests.after" &&
	expect_eq "$(cat "$TMP/digests.before")" "$(cat "$TMP/digests.after")" &&
	"$VULNID" -c "$CONF" show --json TEST-2026-0001 | json_get "j[\"digest\"]" >"$TMP/d1" &&
	expect_eq "$(awk "\$1 == \"TEST-2026-0001\" { print \$2 }" "$TMP/digests.before")" "$(cat "$TMP/d1")" &&
	n=$(wc -l <"$TMP/audit.before") &&
	expect_eq "$(cat "$TMP/audit.before")" "$(sql "SELECT hash FROM audit ORDER BY seq LIMIT $n")"
'

test_expect_success 'the tokens the old release mailed still prove their roles' '
	printf "Token: %s\nStatus: confirmed\n\nFixed in 1.2.\n" "$(token_of security@widget.example)" |
		write_mail "$TMP/vendor.eml" "From: psirt@widget.example" "To: request+TEST-2026-0001@example.org" \
			"Subject: Re: TEST-2026-0001" &&
	deliver_ok "$TMP/vendor.eml" -f psirt@widget.example -r request+TEST-2026-0001@example.org &&
	printf "Token: %s\nReference: https://example.net/adv\n" "$(token_of alice@example.net)" |
		write_mail "$TMP/creator.eml" "To: request+TEST-2026-0001@example.org" "Subject: more" &&
	deliver_ok "$TMP/creator.eml" -f alice@example.net -r request+TEST-2026-0001@example.org &&
	"$VULNID" -c "$CONF" show --json TEST-2026-0001 >"$TMP/e1.json" &&
	expect_eq "confirmed vendor token" "$(json_get "\" \".join(j[\"vendor_status\"][k] for k in (\"value\", \"role\", \"how\"))" <"$TMP/e1.json")" &&
	expect_eq "vendor token" "$(json_get "[r[\"role\"] + \" \" + r[\"how\"] for r in j[\"records\"] if r[\"seq\"] == 3][0]" <"$TMP/e1.json")" &&
	expect_eq "creator token" "$(json_get "[r[\"role\"] + \" \" + r[\"how\"] for r in j[\"records\"] if r[\"seq\"] == 4][0]" <"$TMP/e1.json")"
'

test_expect_success 'the embargo ends as the old release set it, unsealed with its robot key' '
	"$VULNID" -c "$CONF" show TEST-2026-0002 >"$TMP/e2.before" &&
	expect_no_match "Tuesdays" "$TMP/e2.before" &&
	VULNID_TEST_NOW=2026-07-01T00:00:00Z "$VULNID" -c "$CONF" tick >"$TMP/tick" &&
	expect_match "^released 1 embargoed entry$" "$TMP/tick" &&
	"$VULNID" -c "$CONF" show TEST-2026-0002 >"$TMP/e2.after" &&
	expect_match "accepts any password on Tuesdays" "$TMP/e2.after" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

fixture_instance by-filter
test_expect_success 'a filter that migrates handles its mail, and the audit log says it upgraded' '
	write_mail "$TMP/new.eml" "Message-ID: <after-upgrade@example.net>" <<<"Product: After" &&
	deliver_ok "$TMP/new.eml" -f dave@example.net -r request@example.org &&
	test ! -s "$TMP/.filter.err" &&
	expect_eq "$(schema_version)" "$(sql "PRAGMA user_version")" &&
	expect_eq 3 "$(sql "SELECT count(*) FROM entries")" &&
	expect_match "\"event\":\"migrated\",.*\"from\":7" "$INST/audit.log" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

# An instance an older version touched as root: a command run as root left
# audit.log root's.  The programs name it, its owner and the fix.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	fixture_instance as-root
	chmod 755 "$TMP"
	chown -R nobody "$INST"
	test_expect_success 'a file root left in the instance is named, with its owner and the chown that fixes it' '
		chown root "$INST/audit.log" &&
		rc=0; "$VULNID" -c "$CONF" list >/dev/null 2>"$TMP/err" || rc=$?
		expect_eq 78 "$rc" &&
		expect_eq "vulnid: '\''$INST/audit.log'\'' belongs to root (uid 0), not to nobody (uid $(id -u nobody)), the owner of the instance, as whom every vulnid program runs: as root, chown -R nobody:$(id -gn nobody) '\''$INST'\''" "$(cat "$TMP/err")" &&
		write_mail "$TMP/root.eml" "Message-ID: <root-left@example.net>" <<<"Product: Root" &&
		deliver "$TMP/root.eml" -f erin@example.net -r request@example.org &&
		expect_eq 75 "$rc" && expect_eq 1 "$(wc -l <"$TMP/.filter.err")" &&
		expect_match "^vulnid-filter: .*audit.log. belongs to root" "$TMP/.filter.err" &&
		chown -R nobody:"$(id -gn nobody)" "$INST" &&
		"$VULNID" -c "$CONF" list >/dev/null 2>"$TMP/err" &&
		expect_match "upgraded .* from schema 7" "$TMP/err" &&
		expect_eq "" "$(find "$INST" ! -user nobody)"
	'
	gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
else
	test_skip "a file root left in the instance is named" "needs root and the user nobody"
fi

test_expect_success 'vulnid --version and doc/UPGRADING name this version with this schema' '
	"$VULNID" --version >"$TMP/v" &&
	expect_match "^vulnid [0-9]+\.[0-9]+\.[0-9]+ \(database schema $(schema_version)\)$" "$TMP/v" &&
	v=$(sed -n "s/^vulnid \([0-9.]*\) .*/\1/p" "$TMP/v") &&
	for p in "$FILTER" "$VULNID_BUILDDIR/src/vulnid-lmtpd"; do
		expect_eq "$(basename "$p") $v (database schema $(schema_version))" "$("$p" --version)" || exit 1
	done &&
	awk "/^  version  schema/ { t = 1; next } t && /^  [0-9]/ { print \$1, \$2 } t && /^\$/ { exit }" \
		"$UPGRADING" >"$TMP/table" &&
	expect_match "^$v $(schema_version)$" "$TMP/table" &&
	expect_match "^0\.1\.0 7$" "$TMP/table" &&
	expect_eq "$(cut -d" " -f1 "$TMP/table" | sort -u | wc -l)" "$(wc -l <"$TMP/table")" "versions listed once" &&
	sort -t" " -k2,2n -c "$TMP/table"
'

test_done
