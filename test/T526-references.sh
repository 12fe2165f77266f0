#!/bin/bash
# T526-references: related material with checksums, mirrored.  A
# Reference may carry the SHA-256 of the single file it names; the
# checksum is kept and shown on every surface; anyone may add a mirror of
# it (Mirror: URL sha256=HEX, or Mirror: URL of REFERENCE-URL), which is
# shown with the reference.  The robot never fetches anything: the
# operator's vulnid-fetch-references fetches the references and mirrors
# and checks each against the checksum (here from a local HTTP server).
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
Y=$(date -u +%Y)
E1="TEST-$Y-0001"
FETCHREF="$VULNID_SRCDIR/contrib/vulnid-fetch-references"

# the files and a web server for them
mkdir -p "$TMP/www/a" "$TMP/www/m"
printf 'proof of concept\n' >"$TMP/www/a/poc.txt"
cp "$TMP/www/a/poc.txt" "$TMP/www/m/poc.txt"
printf 'something else\n' >"$TMP/www/m/evil.txt"
SHA=$(sha256sum "$TMP/www/a/poc.txt" | cut -d" " -f1)
PORT=$(free_port)
(cd "$TMP/www" && exec "$PYTHON" -m http.server --bind 127.0.0.1 "$PORT") >"$TMP/http.log" 2>&1 &
bg_track $!
for _ in $(seq 100); do ss -ltnH "sport = :$PORT" | grep -q . && break; sleep 0.05; done
URL="http://127.0.0.1:$PORT"
# curl and wget both ignore a proxy for 127.0.0.1 only when told so
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1

test_expect_success 'a request names a reference with its checksum: kept and shown' '
	plain alice@example.net request@example.org "Product: Foo
Reference: $URL/a/poc.txt sha256=$(echo "$SHA" | tr a-f A-F)
Reference: https://example.org/advisory

A bug." &&
	expect_eq "$E1" "$(newest_id)" &&
	expect_eq "$URL/a/poc.txt $SHA" "$(headline "$E1" "j[\"reference_details\"][0][\"url\"] + \" \" + j[\"reference_details\"][0][\"sha256\"]")" &&
	expect_eq "[\"$URL/a/poc.txt\", \"https://example.org/advisory\"]" "$(headline "$E1" "j[\"references\"]")" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "^reference: +$URL/a/poc.txt sha256=$SHA$" "$TMP/show" &&
	plain zed@example.org request@example.org "lookup $E1" &&
	expect_match "reference: +$URL/a/poc.txt sha256=$SHA" "$(sent_to zed@example.org)"
'

test_expect_success 'a malformed checksum is refused, in a request and in an addition' '
	before=$(sql "SELECT count(*) FROM entries") &&
	plain alice@example.net request@example.org "Reference: $URL/x sha256=1234" &&
	expect_eq "$before" "$(sql "SELECT count(*) FROM entries")" &&
	expect_match "a checksum is written sha256= and 64" "$(sent_to alice@example.net)" &&
	plain bob@example.com "request+$E1@example.org" "Reference: $URL/y sha256=xyz" &&
	expect_match "Reference: not taken as a field" "$(sent_to bob@example.com)" &&
	expect_eq "[]" "$(last_record "$E1" fields)"
'

test_expect_success 'anyone adds a mirror of a reference with a checksum: shown with it' '
	plain bob@example.com "request+$E1@example.org" "Mirror: $URL/m/poc.txt sha256=$SHA" &&
	expect_eq "[[\"Mirror\",\"$URL/m/poc.txt sha256=$SHA\"]]" "$(last_record "$E1" fields)" &&
	expect_eq "$URL/m/poc.txt third-party" \
		"$(headline "$E1" "j[\"reference_details\"][0][\"mirrors\"][0][\"value\"] + \" \" + j[\"reference_details\"][0][\"mirrors\"][0][\"role\"]")" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "^  mirror: +$URL/m/poc.txt \(record [0-9]+, third party bob@example.com" "$TMP/show" &&
	vulnid export osv "$TMP/osv" >/dev/null &&
	expect_match "\"url\" : \"$URL/m/poc.txt\"" "$TMP/osv/x_$E1.json" &&
	expect_match "\"sha256\" : \"$SHA\"" "$TMP/osv/x_$E1.json" &&
	vulnid export html "$TMP/html" >/dev/null &&
	grep -q "mirror: <a rel=\"nofollow noopener\" href=\"$URL/m/poc.txt\"" "$TMP/html/entries/$E1.html" &&
	grep -q "$SHA" "$TMP/html/entries/$E1.html"
'

test_expect_success 'a mirror that names no reference is refused; one of a reference without checksum is a proposal' '
	plain bob@example.com "request+$E1@example.org" "Mirror: $URL/m/other.txt sha256=$(printf x | sha256sum | cut -d" " -f1)" &&
	expect_match "Mirror: not taken as a field \(it names no reference of the entry" "$(sent_to bob@example.com)" &&
	plain bob@example.com "request+$E1@example.org" "Mirror: https://mirror.example.net/advisory of https://example.org/advisory" &&
	expect_eq "Mirror=https://mirror.example.net/advisory of https://example.org/advisory" \
		"$(headline "$E1" "\",\".join(p[\"key\"]+\"=\"+p[\"value\"] for p in j[\"proposals\"])")" &&
	expect_eq 0 "$(headline "$E1" "len(j[\"reference_details\"][1][\"mirrors\"])")"
'

test_expect_success 'vulnid show --references lists what the operator may fetch' '
	vulnid show "$E1" --references >"$TMP/refs" &&
	printf "%s\t%s\t-\n%s\t%s\t%s\nhttps://example.org/advisory\t-\t-\n" \
		"$URL/a/poc.txt" "$SHA" "$URL/m/poc.txt" "$SHA" "$URL/a/poc.txt" >"$TMP/expect" &&
	diff "$TMP/expect" "$TMP/refs"
'

test_expect_success 'vulnid-fetch-references fetches and checks the reference and its mirror' '
	mkdir -p "$TMP/keep" &&
	VULNID="$VULNID" sh "$FETCHREF" -c "$CONF" --keep "$TMP/keep" "$E1" >"$TMP/out" 2>&1 ||
		fail "exit $?: $(cat "$TMP/out")" &&
	expect_match "^ok $E1 $URL/a/poc.txt$" "$TMP/out" &&
	expect_match "^ok $E1 $URL/m/poc.txt \(mirror of $URL/a/poc.txt\)$" "$TMP/out" &&
	expect_match "^unchecked $E1 https://example.org/advisory: no checksum recorded" "$TMP/out" &&
	cmp "$TMP/www/a/poc.txt" "$TMP/keep/$SHA" &&
	grep -q "GET /a/poc.txt" "$TMP/http.log"
'

test_expect_success 'a mirror whose file differs is reported, exit 65; the robot itself fetched nothing' '
	plain bob@example.com "request+$E1@example.org" "Mirror: $URL/m/evil.txt sha256=$SHA" &&
	rc=0 &&
	VULNID="$VULNID" sh "$FETCHREF" -c "$CONF" "$E1" >"$TMP/out" 2>&1 || rc=$? &&
	expect_eq 65 "$rc" &&
	expect_match "^MISMATCH $E1 $URL/m/evil.txt \(mirror of $URL/a/poc.txt\): sha256=$(sha256sum "$TMP/www/m/evil.txt" | cut -d" " -f1), recorded $SHA" "$TMP/out" &&
	expect_eq 2 "$(grep -c "GET /a/poc.txt" "$TMP/http.log")" &&
	rm -rf "$TMP/www/a" &&
	rc=0 && VULNID="$VULNID" sh "$FETCHREF" -c "$CONF" "$E1" >"$TMP/out" 2>&1 || rc=$? &&
	expect_eq 65 "$rc" && expect_match "^failed $E1 $URL/a/poc.txt" "$TMP/out"
'

test_done
