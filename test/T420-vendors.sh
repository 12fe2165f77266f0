#!/bin/bash
# T420-vendors: the vendors directory (vulnid vendor ...) and security.txt import
. "$(dirname "$0")/test-lib.sh"

make_instance inst

# run_vendor ARGS...: run `vulnid vendor ARGS`, status in $rc, output in
# $TMP/out and $TMP/err.  Never fails by itself.
run_vendor() {
	rc=0
	"$VULNID" -c "$CONF" vendor "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
}

# audit_count EVENT: lines of audit.log for one event.
audit_count() { grep -c "\"event\":\"$1\"" "$INST/audit.log" || true; }

vendors() { sql "SELECT count(*) FROM vendors"; }

test_expect_success 'vendor add with aliases, domains, contacts and notes' '
	run_vendor add "Example  Corp" --alias ExCo --domain Example.COM --domain example.net \
		--contact security@example.com --contact psirt@example.com --notes "first line
second line" &&
	expect_eq 0 "$rc" "exit status" &&
	expect_match "^added vendor .Example Corp.$" "$TMP/out" &&
	expect_eq "Example Corp" "$(sql "SELECT name FROM vendors")" &&
	expect_eq "example.com example.net" "$(sql "SELECT group_concat(domain, '\'' '\'') FROM (SELECT domain FROM vendor_domains ORDER BY domain)")" &&
	expect_eq "operator operator" "$(sql "SELECT group_concat(source, '\'' '\'') FROM vendor_contacts")" &&
	expect_eq 1 "$(audit_count vendor-added)" &&
	expect_eq 1 "$(audit_count vendor-alias)" &&
	expect_eq 2 "$(audit_count vendor-domain)" &&
	expect_eq 2 "$(audit_count vendor-contact-added)" &&
	expect_match "\"event\":\"vendor-added\",\"id\":null,\"message_id\":null,\"vendor\":\"Example Corp\"" "$INST/audit.log" &&
	expect_match "\"event\":\"vendor-contact-added\",.*\"vendor\":\"Example Corp\",\"address\":\"psirt@example.com\",\"source\":\"operator\"" "$INST/audit.log"
'

test_expect_success 'vendor list, as text and as JSON, ordered by name' '
	run_vendor add "Acme" --domain acme.example &&
	expect_eq 0 "$rc" &&
	run_vendor list &&
	expect_eq 0 "$rc" &&
	expect_eq 2 "$(wc -l <"$TMP/out" | tr -d " ")" &&
	expect_match "^Acme  acme.example  -$" "$TMP/out" &&
	expect_match "^Example Corp  example.com,example.net  security@example.com, psirt@example.com$" "$TMP/out" &&
	run_vendor list --json &&
	expect_eq 0 "$rc" &&
	expect_eq "[\"Acme\", \"Example Corp\"]" "$(json_get "[v[\"name\"] for v in j]" <"$TMP/out")" &&
	expect_eq "[\"security@example.com\", \"psirt@example.com\"]" "$(json_get "j[1][\"contacts\"]" <"$TMP/out")" &&
	expect_eq "[]" "$(json_get "j[0][\"contacts\"]" <"$TMP/out")"
'

test_expect_success 'vendor show by name or alias, in any case; --json' '
	run_vendor show "example corp" &&
	expect_eq 0 "$rc" &&
	expect_match "^Name: +Example Corp$" "$TMP/out" &&
	expect_match "^Aliases: +ExCo$" "$TMP/out" &&
	expect_match "^Contacts: +security@example.com, psirt@example.com$" "$TMP/out" &&
	expect_match "^  second line$" "$TMP/out" &&
	run_vendor show EXCO --json &&
	expect_eq 0 "$rc" &&
	expect_eq "Example Corp" "$(json_get "j[\"name\"]" <"$TMP/out")" &&
	expect_eq "[\"example.com\", \"example.net\"]" "$(json_get "j[\"domains\"]" <"$TMP/out")" &&
	expect_eq "first line
second line" "$(json_get "j[\"notes\"]" <"$TMP/out")" &&
	expect_eq "None" "$(json_get "j[\"expires\"]" <"$TMP/out")"
'

test_expect_success 'vendor alias and vendor domain; lookups by alias ignore case' '
	run_vendor alias exco "Example Incorporated" &&
	expect_eq 0 "$rc" &&
	run_vendor domain "EXAMPLE INCORPORATED" Example.Org &&
	expect_eq 0 "$rc" &&
	run_vendor show "example incorporated" --json &&
	expect_eq "[\"example.com\", \"example.net\", \"example.org\"]" "$(json_get "j[\"domains\"]" <"$TMP/out")" &&
	expect_eq "[\"Example Incorporated\", \"ExCo\"]" "$(json_get "j[\"aliases\"]" <"$TMP/out")" &&
	expect_match "\"event\":\"vendor-alias\",.*\"vendor\":\"Example Corp\",\"alias\":\"Example Incorporated\"" "$INST/audit.log" &&
	expect_match "\"event\":\"vendor-domain\",.*\"vendor\":\"Example Corp\",\"domain\":\"example.org\"" "$INST/audit.log"
'

test_expect_success 'a duplicate name, alias, domain or contact exits 73 and changes nothing' '
	lines=$(wc -l <"$INST/audit.log") &&
	run_vendor add "EXAMPLE CORP" && expect_eq 73 "$rc" "duplicate name" &&
	expect_match "already the name or an alias of .Example Corp." "$TMP/err" &&
	run_vendor add exco && expect_eq 73 "$rc" "name equal to an alias" &&
	run_vendor alias Acme "example corp" && expect_eq 73 "$rc" "alias equal to a name" &&
	run_vendor alias Acme EXCO && expect_eq 73 "$rc" "alias equal to an alias" &&
	run_vendor domain Acme EXAMPLE.com && expect_eq 73 "$rc" "domain of another vendor" &&
	expect_match "belongs to .Example Corp." "$TMP/err" &&
	run_vendor contact exco Security@Example.COM && expect_eq 73 "$rc" "contact" &&
	run_vendor add "Acme Two" --domain acme.example && expect_eq 73 "$rc" "add with a taken domain" &&
	expect_eq 2 "$(vendors)" &&
	expect_eq "$lines" "$(wc -l <"$INST/audit.log")" "audit lines"
'

test_expect_success 'an invalid contact, domain or name exits 65 and changes nothing' '
	lines=$(wc -l <"$INST/audit.log") &&
	for a in "Security <security@acme.example>" "security@acme" "not an address" \
		"a@b.example, c@d.example" "@acme.example" "a@@acme.example" "<a@acme.example>"; do
		run_vendor contact Acme "$a" &&
		expect_eq 65 "$rc" "contact $a" || exit 1
	done &&
	expect_match "is not one mail address" "$TMP/err" &&
	for d in localhost "acme example" -acme.example acme.example- acme..example 192.0.2.1 "a_b.example"; do
		run_vendor domain Acme -- "$d" &&
		expect_eq 65 "$rc" "domain $d" || exit 1
	done &&
	run_vendor add "two
lines" && expect_eq 65 "$rc" "name of two lines" &&
	run_vendor add "   " && expect_eq 65 "$rc" "empty name" &&
	run_vendor add "$(printf "%0201d" 0)" && expect_eq 65 "$rc" "name of 201 characters" &&
	run_vendor add "New Co" --domain new.example --contact "bad address" &&
	expect_eq 65 "$rc" "add with a bad contact" &&
	run_vendor show "New Co" && expect_eq 66 "$rc" "half-added vendor" &&
	expect_eq 2 "$(vendors)" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM vendor_domains WHERE domain = '\''new.example'\''")" &&
	expect_eq "$lines" "$(wc -l <"$INST/audit.log")" "audit lines"
'

test_expect_success 'an unknown vendor exits 66, a usage error 64' '
	run_vendor show Nobody && expect_eq 66 "$rc" "show" &&
	expect_match "no vendor .Nobody." "$TMP/err" &&
	run_vendor contact Nobody a@nobody.example && expect_eq 66 "$rc" "contact" &&
	run_vendor alias Nobody Somebody && expect_eq 66 "$rc" "alias" &&
	run_vendor && expect_eq 64 "$rc" "no subcommand" &&
	run_vendor frobnicate && expect_eq 64 "$rc" "unknown subcommand" &&
	run_vendor add && expect_eq 64 "$rc" "add without a name" &&
	run_vendor alias Acme && expect_eq 64 "$rc" "alias without an alias" &&
	run_vendor list extra && expect_eq 64 "$rc" "list with an argument" &&
	run_vendor list --bogus && expect_eq 64 "$rc" "unknown option" &&
	run_vendor import-securitytxt acme.example && expect_eq 64 "$rc" "import without a file"
'

test_expect_success 'vendor remove-contact' '
	run_vendor remove-contact "Example Corp" PSIRT@example.com &&
	expect_eq 0 "$rc" &&
	run_vendor show exco --json &&
	expect_eq "[\"security@example.com\"]" "$(json_get "j[\"contacts\"]" <"$TMP/out")" &&
	expect_eq 1 "$(audit_count vendor-contact-removed)" &&
	expect_match "\"event\":\"vendor-contact-removed\",.*\"vendor\":\"Example Corp\",\"address\":\"psirt@example.com\"" "$INST/audit.log" &&
	run_vendor remove-contact exco psirt@example.com &&
	expect_eq 66 "$rc" "removed twice" &&
	expect_eq 1 "$(audit_count vendor-contact-removed)"
'

test_expect_success 'control characters from input are masked on output' '
	run_vendor add "Escape Co" --notes "$(printf "before\033[2Jafter")" &&
	expect_eq 0 "$rc" &&
	run_vendor show "escape co" &&
	expect_eq 0 "$rc" &&
	expect_no_match "$(printf "\033")" "$TMP/out" &&
	expect_match "before.x1b\[2Jafter" "$TMP/out"
'

cat >"$TMP/security.txt" <<'EOF'
# https://widgets.example/.well-known/security.txt
Contact: mailto:security@widgets.example
Contact: mailto:psirt%40widgets.example?subject=Vulnerability%20report
Contact: https://widgets.example/report
Contact: tel:+1-201-555-0123
Encryption: https://widgets.example/pgp-key.txt
Preferred-Languages: en, de
Expires: 2099-12-31T23:59:59Z
Policy: https://widgets.example/policy
EOF

test_expect_success 'import-securitytxt creates the vendor of a new domain with its mail contacts' '
	run_vendor import-securitytxt widgets.example "$TMP/security.txt" &&
	expect_eq 0 "$rc" "exit status: $(cat "$TMP/err")" &&
	expect_match "^vendor .widgets.example.: new$" "$TMP/out" &&
	expect_match "^contact security@widgets.example: added$" "$TMP/out" &&
	expect_match "^contact psirt@widgets.example: added$" "$TMP/out" &&
	expect_match "^contact https://widgets.example/report: not a mail address" "$TMP/out" &&
	expect_match "^imported 2 new contacts$" "$TMP/out" &&
	expect_no_match "warning" "$TMP/err" &&
	run_vendor show widgets.example --json &&
	expect_eq "[\"security@widgets.example\", \"psirt@widgets.example\"]" "$(json_get "j[\"contacts\"]" <"$TMP/out")" &&
	expect_eq "[\"widgets.example\"]" "$(json_get "j[\"domains\"]" <"$TMP/out")" &&
	expect_eq "https://widgets.example/pgp-key.txt" "$(json_get "j[\"encryption\"]" <"$TMP/out")" &&
	expect_eq "en, de" "$(json_get "j[\"languages\"]" <"$TMP/out")" &&
	expect_eq "2099-12-31T23:59:59Z" "$(json_get "j[\"expires\"]" <"$TMP/out")" &&
	expect_eq "security.txt security.txt" "$(sql "SELECT group_concat(c.source, '\'' '\'') FROM vendor_contacts c JOIN vendors v ON v.id = c.vendor WHERE v.name = '\''widgets.example'\''")" &&
	expect_match "\"event\":\"vendor-contact-added\",.*\"address\":\"psirt@widgets.example\",\"source\":\"security.txt\"" "$INST/audit.log" &&
	expect_match "\"event\":\"vendor-updated\",.*\"vendor\":\"widgets.example\",\"encryption\":\"https://widgets.example/pgp-key.txt\",\"languages\":\"en, de\",\"expires\":\"2099-12-31T23:59:59Z\"" "$INST/audit.log"
'

test_expect_success 'import-securitytxt again adds nothing twice; a domain finds its owner' '
	run_vendor import-securitytxt WIDGETS.example "$TMP/security.txt" &&
	expect_eq 0 "$rc" &&
	expect_match "^contact security@widgets.example: already listed$" "$TMP/out" &&
	expect_match "^imported 0 new contacts$" "$TMP/out" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM vendor_contacts c JOIN vendors v ON v.id = c.vendor WHERE v.name = '\''widgets.example'\''")" &&
	printf "Contact: mailto:cert@example.org\r\nExpires: 2099-01-01T00:00:00Z\r\n" >"$TMP/crlf.txt" &&
	run_vendor import-securitytxt example.org "$TMP/crlf.txt" &&
	expect_eq 0 "$rc" &&
	expect_match "^vendor .Example Corp.$" "$TMP/out" &&
	run_vendor show exco --json &&
	expect_eq "[\"security@example.com\", \"cert@example.org\"]" "$(json_get "j[\"contacts\"]" <"$TMP/out")"
'

test_expect_success 'import-securitytxt of an expired file warns, imports, and exits 0' '
	printf "Contact: mailto:old@stale.example\nExpires: 2020-01-01T00:00:00Z\n" >"$TMP/expired.txt" &&
	run_vendor import-securitytxt stale.example "$TMP/expired.txt" &&
	expect_eq 0 "$rc" &&
	expect_match "^vulnid: warning: .*expired.*2020-01-01T00:00:00Z" "$TMP/err" &&
	expect_match "^contact old@stale.example: added$" "$TMP/out" &&
	run_vendor show stale.example --json &&
	expect_eq "[\"old@stale.example\"]" "$(json_get "j[\"contacts\"]" <"$TMP/out")" &&
	expect_eq "2020-01-01T00:00:00Z" "$(json_get "j[\"expires\"]" <"$TMP/out")" &&
	printf "Contact: mailto:a@undated.example\n" >"$TMP/undated.txt" &&
	run_vendor import-securitytxt undated.example "$TMP/undated.txt" &&
	expect_eq 0 "$rc" &&
	expect_match "^vulnid: warning: no Expires field$" "$TMP/err"
'

signed_imports=0
if command -v gpg >/dev/null 2>&1; then
	signed_imports=1
	export GNUPGHOME="$TMP/gnupg"
	mkdir -m 700 "$GNUPGHOME"
	test_expect_success 'import-securitytxt of a file signed with gpg --clearsign' '
		gpg --batch --quiet --passphrase "" --pinentry-mode loopback \
			--quick-gen-key "Signed Security <security@signed.example>" ed25519 sign never &&
		printf "Contact: mailto:security@signed.example\n-Dash-Field: escaped by gpg\nExpires: 2099-01-01T00:00:00Z\n" >"$TMP/plain.txt" &&
		gpg --batch --quiet --passphrase "" --pinentry-mode loopback --clearsign \
			-o "$TMP/signed.txt" "$TMP/plain.txt" &&
		expect_match "^- -Dash-Field" "$TMP/signed.txt" &&
		printf "Contact: mailto:attacker@evil.example\n" >>"$TMP/signed.txt" &&
		run_vendor import-securitytxt signed.example "$TMP/signed.txt" &&
		expect_eq 0 "$rc" &&
		expect_match "^OpenPGP cleartext-signed \(signature not verified\)$" "$TMP/out" &&
		expect_match "warning: .*text after the OpenPGP signature ignored" "$TMP/err" &&
		expect_no_match "not a field" "$TMP/err" &&
		run_vendor show signed.example --json &&
		expect_eq "[\"security@signed.example\"]" "$(json_get "j[\"contacts\"]" <"$TMP/out")"
	'
	# gpg started an agent for this home directory; stop exactly that one.
	gpgconf --kill gpg-agent >/dev/null 2>&1
	unset GNUPGHOME
else
	test_skip 'import-securitytxt of a file signed with gpg --clearsign' 'gpg not installed'
fi

test_expect_success 'import-securitytxt of garbage exits 65 and creates nothing' '
	n=$(vendors) &&
	lines=$(wc -l <"$INST/audit.log") &&
	printf "<html><body>404 Not Found</body></html>\n" >"$TMP/garbage.txt" &&
	run_vendor import-securitytxt junk.example "$TMP/garbage.txt" &&
	expect_eq 65 "$rc" &&
	expect_match "no Contact field" "$TMP/err" &&
	head -c 70000 /dev/zero | tr "\0" "#" >"$TMP/big.txt" &&
	run_vendor import-securitytxt junk.example "$TMP/big.txt" &&
	expect_eq 65 "$rc" "oversize" &&
	printf "Contact: mailto:a@junk.example\n\377\376\n" >"$TMP/binary.txt" &&
	run_vendor import-securitytxt junk.example "$TMP/binary.txt" &&
	expect_eq 65 "$rc" "not UTF-8" &&
	run_vendor import-securitytxt "not a domain" "$TMP/security.txt" &&
	expect_eq 65 "$rc" "bad domain" &&
	run_vendor import-securitytxt junk.example "$TMP/does-not-exist" &&
	expect_eq 66 "$rc" "missing file" &&
	expect_eq "$n" "$(vendors)" &&
	expect_eq "$lines" "$(wc -l <"$INST/audit.log")" "audit lines"
'

# Successful imports so far, each one vendor-updated event.
imports=$((5 + signed_imports))

test_expect_success 'every change left an audit event and the chain verifies' '
	expect_eq "$(vendors)" "$(audit_count vendor-added)" "vendor-added" &&
	expect_eq "$(sql "SELECT count(*) FROM vendor_aliases")" "$(audit_count vendor-alias)" "vendor-alias" &&
	expect_eq "$(sql "SELECT count(*) FROM vendor_domains")" "$(audit_count vendor-domain)" "vendor-domain" &&
	expect_eq 1 "$(audit_count vendor-contact-removed)" "vendor-contact-removed" &&
	expect_eq "$(( $(sql "SELECT count(*) FROM vendor_contacts") + 1 ))" \
		"$(audit_count vendor-contact-added)" "vendor-contact-added" &&
	expect_eq "$imports" "$(audit_count vendor-updated)" "vendor-updated" &&
	expect_eq "$(sql "SELECT count(*) FROM audit")" "$(wc -l <"$INST/audit.log" | tr -d " ")" &&
	"$VULNID" -c "$CONF" audit verify >"$TMP/out" 2>"$TMP/err" &&
	expect_match "chain intact" "$TMP/out"
'

test_done
