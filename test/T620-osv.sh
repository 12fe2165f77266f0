#!/bin/bash
# T620-osv: vulnid export osv writes one OSV record per public entry, valid
# against the OSV schema
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
SCHEMA="$SHARED/schemas/osv-schema.json"
[ -f "$SCHEMA" ] || SCHEMA="$VULNID_SRCDIR/test/corpora/osv/osv-schema.json"
export_instance inst

request "$TMP/r1.eml" alice@example.net "Heap overflow in foo" <<'MAIL'
Vendor: Foo Corp
Product: pkg:pypi/foo
Version: 2.4.1
Version: < 2.5
Type: CWE-122
Reference: https://example.net/advisory
Reference: not a url
CVSS: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H

A long Host header overflows a buffer.
MAIL
request "$TMP/r2.eml" bob@example.net "XSS in Bar's admin panel" <<'MAIL'
Vendor: Bar Inc
Product: Bar Admin
Version: 7

The admin panel reflects <script>.
MAIL
request "$TMP/r3.eml" carol@example.net "Spam" <<'MAIL'
Buy things.
MAIL
request "$TMP/r4.eml" dave@example.net "Nothing yet" </dev/null
request "$TMP/r5.eml" erin@example.net "Same as 0002" <<'MAIL'
Vendor: Bar Inc

Same bug again.
MAIL
dbtool add "TEST-$Y-0001" vendor-response vendor security@foo.example '[["Status","fixed"],["Fixed","2.5.0"]]' \
	"Fixed in 2.5.0." >/dev/null
dbtool add "TEST-$Y-0001" command creator alice@example.net '[["Alias","CVE-2026-12345"]]' "" >/dev/null
dbtool add "TEST-$Y-0002" command creator bob@example.net '[["Withdrawn","not a bug after all"]]' "" >/dev/null
dbtool add "TEST-$Y-0003" command moderator "" '[["Spam","yes"]]' "" >/dev/null
dbtool add "TEST-$Y-0005" command moderator mod@example.org "[[\"Duplicate-Of\",\"TEST-$Y-0002\"]]" "" >/dev/null
dbtool sealed "TEST-$Y-0006" "Secret" '[["Vendor","Hidden"]]' "hidden" 2099-01-01 >/dev/null

osv_valid() {
	/usr/bin/python3 -c 'import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$SCHEMA" "$1"
}

test_expect_success 'one record per public entry: not spam, reserved or embargoed ones' '
	"$VULNID" -c "$CONF" export osv "$TMP/osv" >"$TMP/out" &&
	expect_match "3 OSV records" "$TMP/out" &&
	ls "$TMP/osv" >"$TMP/ls" &&
	expect_eq "x_TEST-$Y-0001.json x_TEST-$Y-0002.json x_TEST-$Y-0005.json" "$(echo $(cat "$TMP/ls"))"
'

test_expect_success 'every record passes the OSV schema' '
	{ test -f "$SCHEMA" || fail "no OSV schema at $SCHEMA"; } &&
	for f in "$TMP"/osv/*.json; do osv_valid "$f" || fail "$f does not validate"; done
'

J1="$TMP/osv/x_TEST-$Y-0001.json"
test_expect_success 'ids, times, aliases, summary, details, severity' '
	expect_eq "x_TEST-$Y-0001" "$(json_get "j[\"id\"]" <"$J1")" &&
	expect_eq "$(sql "SELECT max(created) FROM records WHERE entry = '\''TEST-$Y-0001'\''")" "$(json_get "j[\"modified\"]" <"$J1")" &&
	expect_eq "$(sql "SELECT created FROM entries WHERE id = '\''TEST-$Y-0001'\''")" "$(json_get "j[\"published\"]" <"$J1")" &&
	expect_eq "[\"CVE-2026-12345\"]" "$(json_get "j[\"aliases\"]" <"$J1")" &&
	expect_eq "Heap overflow in foo" "$(json_get "j[\"summary\"]" <"$J1")" &&
	expect_match "overflows a buffer" "$J1" &&
	expect_eq "CVSS_V3 CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" \
		"$(json_get "j[\"severity\"][0][\"type\"] + \" \" + j[\"severity\"][0][\"score\"]" <"$J1")"
'

test_expect_success 'affected where a package URL maps to an ecosystem, with the fixed version' '
	expect_eq "PyPI foo" "$(json_get "j[\"affected\"][0][\"package\"][\"ecosystem\"] + \" \" + j[\"affected\"][0][\"package\"][\"name\"]" <"$J1")" &&
	expect_eq "[\"2.4.1\"]" "$(json_get "j[\"affected\"][0][\"versions\"]" <"$J1")" &&
	expect_eq "[{\"introduced\": \"0\"}, {\"fixed\": \"2.5.0\"}]" "$(json_get "j[\"affected\"][0][\"ranges\"][0][\"events\"]" <"$J1")"
'

test_expect_success 'references: URLs only; the rest and vendor data stay in database_specific' '
	expect_eq "[{\"type\": \"WEB\", \"url\": \"https://example.net/advisory\"}]" "$(json_get "j[\"references\"]" <"$J1")" &&
	expect_eq "[\"not a url\"]" "$(json_get "j[\"database_specific\"][\"other_references\"]" <"$J1")" &&
	expect_eq "$(sql "SELECT digest FROM entries WHERE id = '\''TEST-$Y-0001'\''")" "$(json_get "j[\"database_specific\"][\"digest\"]" <"$J1")" &&
	expect_eq 3 "$(json_get "j[\"database_specific\"][\"records\"]" <"$J1")" &&
	expect_eq "Foo Corp" "$(json_get "j[\"database_specific\"][\"vendor\"]" <"$J1")" &&
	expect_eq "[\"2.4.1\", \"< 2.5\"]" "$(json_get "j[\"database_specific\"][\"versions\"]" <"$J1")" &&
	expect_eq fixed "$(json_get "j[\"database_specific\"][\"vendor_position\"][\"status\"]" <"$J1")"
'

J2="$TMP/osv/x_TEST-$Y-0002.json"
test_expect_success 'no ecosystem: no affected; withdrawn entries say so; duplicates are related' '
	expect_eq False "$(json_get "\"affected\" in j" <"$J2")" &&
	expect_eq "Bar Inc Bar Admin" "$(json_get "j[\"database_specific\"][\"vendor\"] + \" \" + j[\"database_specific\"][\"product\"]" <"$J2")" &&
	expect_eq "$(sql "SELECT created FROM records WHERE entry = '\''TEST-$Y-0002'\'' AND seq = 2")" "$(json_get "j[\"withdrawn\"]" <"$J2")" &&
	expect_eq "not a bug after all" "$(json_get "j[\"database_specific\"][\"withdrawn_reason\"]" <"$J2")" &&
	expect_eq "[\"x_TEST-$Y-0005\"]" "$(json_get "j[\"related\"]" <"$J2")" &&
	expect_eq "[\"x_TEST-$Y-0002\"]" "$(json_get "j[\"related\"]" <"$TMP/osv/x_TEST-$Y-0005.json")"
'

test_expect_success 'a configured prefix replaces x_; an entry marked spam later loses its file' '
	"$VULNID" -c "$CONF" export osv --id-prefix "" "$TMP/osv2" >/dev/null &&
	expect_eq "TEST-$Y-0001" "$(json_get "j[\"id\"]" <"$TMP/osv2/TEST-$Y-0001.json")" &&
	dbtool add "TEST-$Y-0005" command moderator "" "[[\"Spam\",\"yes\"]]" "" >/dev/null &&
	touch "$TMP/osv/README" &&
	"$VULNID" -c "$CONF" export osv "$TMP/osv" >"$TMP/out" &&
	expect_match "2 OSV records" "$TMP/out" &&
	test ! -e "$TMP/osv/x_TEST-$Y-0005.json" && test -e "$TMP/osv/README" &&
	rc=0; "$VULNID" -c "$CONF" export osv --id-prefix "../x" "$TMP/osv3" 2>/dev/null || rc=$?
	expect_eq 64 "$rc"
'

test_done
