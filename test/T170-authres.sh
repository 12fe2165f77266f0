#!/bin/bash
# T170-authres: RFC 8601 Authentication-Results written by the operator's
# own MTA ([auth] authserv_id) make a From "authenticated" (DMARC pass, or
# a DKIM pass aligned with the From domain): stored with the message and
# on every record, a stronger role than a bare address ("address (DMARC
# pass)"), and a rate-limit key of its own.  Fields with another
# authserv-id, below the operator's Received field, or below an earlier
# result of the same method are ignored, whatever they claim.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf crypto sign none
set_conf auth authserv_id mx.example.org
RCV="Received: from out.r.net (out.r.net [192.0.2.9]) by mx.example.org (Postfix) with ESMTP id X1"
# verified FROM HEADERS...: deliver a request whose header starts with
# HEADERS; print messages.from_verified
verified() {
	local from=$1 mid
	shift
	mid="t170-$(date +%s%N)@r.net"
	{ for h in "$@"; do printf "%s\n" "$h"; done
	  printf "From: <%s>\nTo: request@example.org\nSubject: t\nMessage-ID: <%s>\n\nProduct: P\n" "$from" "$mid"; } >"$TMP/m.eml" &&
	deliver_ok "$TMP/m.eml" -f "$from" &&
	sql "SELECT coalesce(from_verified, 'none') FROM messages WHERE message_id = '$mid'"
}

test_expect_success 'dmarc=pass for the From domain, above the Received field: dmarc' '
	expect_eq dmarc "$(verified a@r.net "Authentication-Results: mx.example.org; dmarc=pass (p=reject) header.from=r.net" "$RCV")"
'
test_expect_success 'an aligned dkim=pass (a parent domain signed) gives dkim; another domain does not' '
	expect_eq dkim "$(verified a@mail.r.net "Authentication-Results: mx.example.org 1; dkim=pass header.d=r.net header.s=s1" "$RCV")" &&
	expect_eq none "$(verified a@r.net "Authentication-Results: mx.example.org; dkim=pass header.d=attacker.net" "$RCV")"
'
test_expect_success 'another authserv-id, or the field below the Received field, is ignored' '
	expect_eq none "$(verified a@r.net "Authentication-Results: mx.other.org; dmarc=pass header.from=r.net" "$RCV")" &&
	expect_eq none "$(verified a@r.net "$RCV" "Authentication-Results: mx.example.org; dmarc=pass header.from=r.net")"
'
test_expect_success 'the topmost result of a method counts: a forged pass below a fail is ignored' '
	expect_eq none "$(verified a@r.net "Authentication-Results: mx.example.org; dmarc=fail header.from=r.net" \
		"Authentication-Results: mx.example.org; dmarc=pass header.from=r.net" "$RCV")"
'
test_expect_success 'trusted_received = 1 reads the results below the first Received field, not below the second' '
	set_conf auth trusted_received 1 &&
	expect_eq dmarc "$(verified a@r.net "$RCV" "Authentication-Results: mx.example.org; dmarc=pass header.from=r.net" "$RCV")" &&
	expect_eq none "$(verified a@r.net "$RCV" "$RCV" "Authentication-Results: mx.example.org; dmarc=pass header.from=r.net")" &&
	set_conf auth trusted_received 0
'
test_expect_success 'no authserv_id: every field is ignored' '
	set_conf auth authserv_id "" &&
	expect_eq none "$(verified a@r.net "Authentication-Results: mx.example.org; dmarc=pass header.from=r.net" "$RCV")" &&
	set_conf auth authserv_id mx.example.org
'
test_expect_success 'the record says so: auth.from_verified and the role "address (DMARC pass)"' '
	expect_eq dmarc "$(verified c@r2.net "Authentication-Results: mx.example.org; dmarc=pass header.from=r2.net" "$RCV")" &&
	id=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1") &&
	expect_match "\"from_verified\":\"dmarc\"" <(sql "SELECT auth FROM records WHERE entry = '\''$id'\''") &&
	printf "Version: 2\n" | write_mail "$TMP/add.eml" "Authentication-Results: mx.example.org; dmarc=pass header.from=r2.net" \
		"From: <c@r2.net>" "To: request+$id@example.org" &&
	deliver_ok "$TMP/add.eml" -f c@r2.net -r "request+$id@example.org" &&
	expect_match "\"how\":\"address-dmarc\"" <(sql "SELECT auth FROM records WHERE entry = '\''$id'\'' ORDER BY seq DESC LIMIT 1") &&
	"$VULNID" -c "$CONF" show "$id" | grep -q "address (DMARC pass)"
'
test_expect_success 'forged mail naming an authenticated From does not use up its rate limit' '
	set_conf lifecycle rate_requests_per_hour 2 &&
	expect_eq none "$(verified v@r3.net)" && expect_eq none "$(verified v@r3.net)" &&
	verified v@r3.net >/dev/null &&
	expect_eq quarantined "$(sql "SELECT disposition FROM messages ORDER BY id DESC LIMIT 1")" &&
	expect_eq dmarc "$(verified v@r3.net "Authentication-Results: mx.example.org; dmarc=pass header.from=r3.net" "$RCV")" &&
	expect_eq request "$(sql "SELECT disposition FROM messages ORDER BY id DESC LIMIT 1")"
'

test_done
