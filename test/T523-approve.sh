#!/bin/bash
# T523-approve: the creator approves foreign additions.  A third party's
# Version, Reference or Title stays an unverified proposal until the
# verified creator approves its record (approve ID SEQ) or its key
# (approve ID KEY): then those values enter the headline, marked with the
# approval, on every surface; the record says who approved what.  Nobody
# else can approve, and an approval cannot reach records that hold
# nothing unverified.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T52-lib.sh"

make_instance inst
set_conf crypto sign none
KFPR=$(new_signing_key kim 'Kim Keyholder <kim@example.com>')
vulnid keys import "$TMP/kim.asc" >/dev/null
Y=$(date -u +%Y)
E1="TEST-$Y-0001"

test_expect_success 'setup: an unsigned request; a third party adds, unverified' '
	plain alice@example.net request@example.org "Product: Foo
Version: 1.0

A bug." &&
	T=$(token_of "$E1") && test -n "$T" && echo "$T" >"$TMP/token" &&
	plain bob@example.com "request+$E1@example.org" "Version: 1.1
Reference: https://example.com/bob" &&
	expect_eq 2 "$(last_record "$E1" seq)" &&
	expect_eq "[\"1.0\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	expect_eq 2 "$(headline "$E1" "len(j[\"proposals\"])")"
'

test_expect_success 'nobody but the verified creator approves' '
	plain bob@example.com "request+$E1@example.org" "approve 2" &&
	expect_match_text "refused: not authenticated: only the creator may do this" "$(sent_to bob@example.com)" &&
	plain alice@example.net "request+$E1@example.org" "approve 2" &&
	expect_match_text "refused: not authenticated" "$(sent_to alice@example.net)" &&
	signed kim "$KFPR" request@example.org "approve $E1 2" "From: kim@example.com" &&
	expect_match_text "refused: wrong role" "$(sent_to kim@example.com)" &&
	expect_eq 2 "$(headline "$E1" "len(j[\"proposals\"])")"
'

test_expect_success 'approve SEQ by the creator'\''s token: the record'\''s values enter the headline' '
	plain alice@example.net "request+$E1@example.org" "Token: $(cat "$TMP/token")
approve 2" &&
	reply_to alice@example.net >"$TMP/r" &&
	expect_match_text "done: approved \(record 3\): these values are now part of $E1:" "$TMP/r" &&
	expect_match "Version: 1.1 \(record 2\)" "$TMP/r" &&
	expect_eq "[[\"Approve\",\"2\"]]" "$(last_record "$E1" fields)" &&
	expect_eq "creator|token" "$(last_record "$E1" "role || '\''|'\'' || json_extract(auth, '\''$.how'\'')")" &&
	expect_eq "[\"1.0\", \"1.1\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	expect_eq "[\"https://example.com/bob\"]" "$(headline "$E1" "j[\"references\"]")" &&
	expect_eq 0 "$(headline "$E1" "len(j[\"proposals\"])")" &&
	vulnid show "$E1" >"$TMP/show" &&
	expect_match "^reference: +https://example.com/bob \(record 2, third party bob@example.com, not authenticated; approved by the creator in record 3\)" "$TMP/show" &&
	expect_no_match "^proposed:" "$TMP/show" &&
	expect_match "^version: +1.1 \(record 2, third party bob@example.com, not authenticated; approved by the creator in record 3\)" "$TMP/show" &&
	expect_eq "Version=1.1@2/3,Reference=https://example.com/bob@2/3" \
		"$(headline "$E1" "\",\".join(c[\"key\"]+\"=\"+c[\"value\"]+\"@%d/%d\" % (c[\"seq\"], c[\"approved\"]) for c in j[\"approved\"])")" &&
	vulnid show "$E1" --json | json_get "[r[\"fields\"] for r in j[\"records\"] if r[\"seq\"] == 3]" >"$TMP/f" &&
	expect_match "Approve" "$TMP/f" &&
	plain zed@example.org request@example.org "lookup $E1" &&
	reply_to zed@example.org >"$TMP/l" &&
	expect_match "version: +1.1" "$TMP/l"
'

test_expect_success 'the record approved is named wherever the value is traced' '
	headline "$E1" "j[\"reference_details\"]" >"$TMP/d" &&
	expect_match "\"url\": \"https://example.com/bob\"" "$TMP/d" &&
	vulnid export osv "$TMP/osv" >/dev/null &&
	expect_match "\"url\" : \"https://example.com/bob\"" "$TMP/osv/x_$E1.json"
'

test_expect_success 'approve KEY: every unverified value the key signed' '
	signed kim "$KFPR" "request+$E1@example.org" "Version: 2.0

For $E1." "From: kim@example.com" &&
	signed kim "$KFPR" "request+$E1@example.org" "Version: 2.1
Reference: https://example.com/kim

For $E1." "From: kim@example.com" &&
	expect_eq 3 "$(headline "$E1" "len(j[\"proposals\"])")" &&
	plain alice@example.net "request+$E1@example.org" "Token: $(cat "$TMP/token")
approve $E1 $KFPR" &&
	expect_match_text "done: approved" "$(sent_to alice@example.net)" &&
	expect_eq "[[\"Approve-Key\",\"$KFPR\"]]" "$(last_record "$E1" fields)" &&
	expect_eq "[\"1.0\", \"1.1\", \"2.0\", \"2.1\"]" "$(headline "$E1" "j[\"versions\"]")" &&
	expect_eq 0 "$(headline "$E1" "len(j[\"proposals\"])")" &&
	vulnid show "$E1" --json | json_get "[c for c in j[\"proposals\"]]" >/dev/null
'

test_expect_success 'later values of the key stay proposals: approval is not endorsement' '
	signed kim "$KFPR" "request+$E1@example.org" "Version: 3.0

For $E1." "From: kim@example.com" &&
	expect_eq "Version=3.0" "$(headline "$E1" "\",\".join(p[\"key\"]+\"=\"+p[\"value\"] for p in j[\"proposals\"])")"
'

test_expect_success 'refused: a record that does not exist, or holds nothing unverified' '
	before=$(records_of "$E1") &&
	plain alice@example.net "request+$E1@example.org" "Token: $(cat "$TMP/token")
approve 99
approve 1" &&
	reply_to alice@example.net >"$TMP/r" &&
	expect_match_text "refused: $E1 has no record 99" "$TMP/r" &&
	expect_match_text "refused: record 1 holds no unverified value of $E1" "$TMP/r" &&
	expect_eq "$before" "$(records_of "$E1")" &&
	plain alice@example.net "request+$E1@example.org" "approve 0" &&
	expect_match "not understood: \"approve\" needs a record number or a key" "$(sent_to alice@example.net)"
'

test_expect_success 'as of a record before the approval, the value was a proposal (the feed recomputes it)' '
	vulnid export feed "$TMP/feed" >/dev/null &&
	grep -h "\"Approve\"" "$TMP"/feed/*.jsonl | grep -q "\"role\":\"creator\""
'

test_done
