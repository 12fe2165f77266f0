#!/bin/bash
# T590-quarantine-sealed: mail that is set aside (or refused) and asked
# for an embargo, or is about an embargoed entry, is archived sealed:
# encrypted to the robot's key, no Subject in its messages row, and
# `vulnid quarantine list` and `quarantine show` say that it is sealed
# instead of showing its content.  Every path is tried: malformed mail
# whose text was read and whose parts were never read, a request and an
# addition over a rate limit, an automatic reply, a replay of a sealed
# mail, a request to an unknown entry.  Mail that asked for nothing
# stays readable in the listing.
. "$(dirname "$0")/test-lib.sh"

Y=$(date -u +%Y)
EMB=$(date -u -d '+30 days' +%F)
vulnid() { "$VULNID" -c "$CONF" "$@"; }
last_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
qid_of() { sql "SELECT q.id FROM quarantine q JOIN messages m ON m.id = q.message WHERE m.message_id = '$1'"; }

# sealed_row MID: the mail is archived sealed, without a Subject
sealed_row() {
	expect_eq "1|1" "$(sql "SELECT b.sealed, m.subject IS NULL FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256
		WHERE m.message_id = '$1'" | tr -d ' ')" "sealed, no subject ($1)"
}

# nowhere_clear S: S is in no database row in clear (text, or blob as
# hex) and not in the audit log
nowhere_clear() {
	local hex
	hex=$(printf '%s' "$1" | xxd -p | tr -d '\n')
	sqlite3 "$INST/vulnid.db" .dump >"$TMP/dump.sql"
	expect_no_match "$1" "$TMP/dump.sql"
	! grep -q -- "$hex" "$TMP/dump.sql" || fail "'$1' is in a blob in clear"
	expect_no_match "$1" "$INST/audit.log"
}

# sealed_aside MID SECRET REASON: quarantined with REASON, archived
# sealed, listed and shown as sealed, SECRET nowhere in clear
sealed_aside() {
	local mid=$1 secret=$2 reason=$3 q
	q=$(qid_of "$mid")
	test -n "$q" || fail "$mid is not quarantined"
	expect_eq "$reason" "$(sql "SELECT reason FROM quarantine WHERE id = $q")" "reason"
	sealed_row "$mid"
	vulnid quarantine list >"$TMP/ql"
	expect_match "^$q .*\(sealed: the mail asked for or concerns an embargo\)$" "$TMP/ql"
	expect_no_match "$secret" "$TMP/ql"
	vulnid quarantine list --json >"$TMP/ql.json"
	expect_eq "True|" "$(json_get "[(str(x[\"sealed\"]) + \"|\" + x[\"subject\"]) for x in j if x[\"id\"] == $q][0]" <"$TMP/ql.json")"
	expect_no_match "$secret" "$TMP/ql.json"
	vulnid quarantine show "$q" >"$TMP/qs"
	expect_match "^sealed: +yes" "$TMP/qs"
	expect_match "^subject: +\(sealed" "$TMP/qs"
	expect_no_match "$secret" "$TMP/qs"
	vulnid quarantine show "$q" --raw >"$TMP/qraw"
	expect_match "^-----BEGIN PGP MESSAGE-----" "$TMP/qraw"
	expect_no_match "$secret" "$TMP/qraw"
	nowhere_clear "$secret"
}

make_instance inst
set_conf limits max_parts 4
set_conf limits max_line_length 998
set_conf lifecycle rate_requests_per_hour 2
set_conf lifecycle rate_additions_per_hour 2

test_expect_success 'setup: an embargoed entry and a public one' '
	printf "Product: Vault\nEmbargo: %s\n\nSealed.\n" "$EMB" |
		write_mail "$TMP/x.eml" "Message-ID: <x@example.net>" "From: Olga <olga@example.net>" "Subject: x" &&
	snap && deliver_ok "$TMP/x.eml" && last_id >"$TMP/X" &&
	new_mail_to olga@example.net >"$TMP/x-ack.path" &&
	printf "Product: Open\n\nPublic.\n" |
		write_mail "$TMP/p.eml" "Message-ID: <p@example.net>" "From: Olga <olga@example.net>" "Subject: p" &&
	deliver_ok "$TMP/p.eml" && last_id >"$TMP/P" &&
	expect_eq embargoed "$(vulnid show "$(cat "$TMP/X")" --json | json_get "j[\"state\"]")"
'
X=$(cat "$TMP/X" 2>/dev/null) P=$(cat "$TMP/P" 2>/dev/null)

test_expect_success 'malformed (too many parts), its text read: an embargoed request is sealed' '
	{
		printf -- "--B\nContent-Type: text/plain\n\nProduct: Lock\nEmbargo: %s\n\nSECRET-T590-PARTS-BODY\n" "$EMB"
		for i in 1 2 3 4 5; do printf -- "--B\nContent-Type: application/octet-stream\n\npart %s\n" $i; done
		printf -- "--B--\n"
	} | write_mail "$TMP/m1.eml" "Message-ID: <m1@example.net>" "Subject: SECRET-T590-PARTS-SUBJ" \
		"MIME-Version: 1.0" "Content-Type: multipart/mixed; boundary=B" &&
	snap && deliver_ok "$TMP/m1.eml" &&
	sealed_aside m1@example.net SECRET-T590-PARTS too-many-parts &&
	r=$(new_mail_to alice@example.net) &&
	expect_eq "Re: your embargoed mail [not processed]" "$(mail_header "$r" Subject)" &&
	mail_body "$r" >"$TMP/r.txt" && expect_match "more than 4 MIME parts" "$TMP/r.txt" &&
	expect_eq "too-many-parts (the details are sealed with the mail)" \
		"$(sql "SELECT detail FROM quarantine WHERE id = $(qid_of m1@example.net)")"
'

test_expect_success 'malformed (a line too long), its parts never read: an Embargo line is found in the raw body' '
	{
		printf "Product: Door\nEmbargo: %s\n\nSECRET-T590-LINE-BODY\n" "$EMB"
		head -c 1200 /dev/zero | tr "\\0" x; echo
	} | write_mail "$TMP/m2.eml" "Message-ID: <m2@example.net>" "Subject: SECRET-T590-LINE-SUBJ" &&
	deliver_ok "$TMP/m2.eml" &&
	sealed_aside m2@example.net SECRET-T590-LINE line-too-long
'

test_expect_success 'malformed, its parts never read: an Embargo line inside a multipart body is found too' '
	{
		printf -- "--B\nContent-Type: text/plain\n\nProduct: Gate\nembargo :  yes\n\nSECRET-T590-MP-BODY\n"
		head -c 1200 /dev/zero | tr "\\0" y; echo
		printf -- "--B--\n"
	} | write_mail "$TMP/m3.eml" "Message-ID: <m3@example.net>" "Subject: SECRET-T590-MP-SUBJ" \
		"MIME-Version: 1.0" "Content-Type: multipart/mixed; boundary=B" &&
	deliver_ok "$TMP/m3.eml" &&
	sealed_aside m3@example.net SECRET-T590-MP line-too-long
'

test_expect_success 'control: malformed mail that asked for no embargo (Embargo: no) is listed with its Subject' '
	{
		printf "Product: Fence\nEmbargo: no\n\nPlain.\n"
		head -c 1200 /dev/zero | tr "\\0" z; echo
	} | write_mail "$TMP/m4.eml" "Message-ID: <m4@example.net>" "Subject: visible-T590-subject" &&
	deliver_ok "$TMP/m4.eml" &&
	q=$(qid_of m4@example.net) &&
	expect_eq "0|visible-T590-subject" "$(sql "SELECT b.sealed || '\''|'\'' || m.subject FROM messages m JOIN blobs b ON b.sha256 = m.raw_sha256 WHERE m.message_id = '\''m4@example.net'\''")" &&
	vulnid quarantine list >"$TMP/ql" &&
	expect_match "^$q .*visible-T590-subject$" "$TMP/ql" &&
	vulnid quarantine show "$q" >"$TMP/qs" &&
	expect_no_match "^sealed:" "$TMP/qs" &&
	expect_eq False "$(vulnid quarantine list --json | json_get "[x[\"sealed\"] for x in j if x[\"id\"] == $q][0]")"
'

test_expect_success 'a request over the rate limit that asked for an embargo is sealed' '
	for n in 1 2; do
		printf "Product: Flood %s\n\nplain\n" $n | write_mail "$TMP/f$n.eml" "Message-ID: <f$n@example.net>" \
			"From: Fred <fred@example.net>" "Subject: flood $n" && deliver_ok "$TMP/f$n.eml" || exit 1
	done &&
	printf "Product: Safe\nEmbargo: %s\n\nSECRET-T590-RATE-BODY\n" "$EMB" |
		write_mail "$TMP/f3.eml" "Message-ID: <f3@example.net>" "From: Fred <fred@example.net>" \
		"Subject: SECRET-T590-RATE-SUBJ" &&
	snap && deliver_ok "$TMP/f3.eml" &&
	sealed_aside f3@example.net SECRET-T590-RATE rate-limit &&
	expect_eq "Re: your embargoed mail [not processed: too much mail]" \
		"$(mail_header "$(new_mail_to fred@example.net)" Subject)"
'

test_expect_success 'an addition to an embargoed entry over the rate limit is sealed' '
	for n in 1 2; do
		printf "Version: %s\n\nplain\n" $n | write_mail "$TMP/g$n.eml" "Message-ID: <g$n@example.net>" \
			"From: Gina <gina@example.net>" "Subject: more $n" &&
		deliver_ok "$TMP/g$n.eml" -r "request+$P@example.org" || exit 1
	done &&
	printf "Version: 9\n\nSECRET-T590-ADD-BODY\n" |
		write_mail "$TMP/g3.eml" "Message-ID: <g3@example.net>" "From: Gina <gina@example.net>" \
		"Subject: SECRET-T590-ADD-SUBJ" &&
	deliver_ok "$TMP/g3.eml" -r "request+$X@example.org" &&
	sealed_aside g3@example.net SECRET-T590-ADD rate-limit
'

test_expect_success 'an automatic reply to the robot'\''s mail about an embargoed entry is sealed' '
	ackid=$(mail_header "$(cat "$TMP/x-ack.path")" Message-ID | tr -d "<>") &&
	printf "I am away.\n\n> SECRET-T590-AUTO-BODY quoted\n" |
		write_mail "$TMP/a1.eml" "Message-ID: <a1@example.net>" "From: Olga <olga@example.net>" \
		"Auto-Submitted: auto-replied" "In-Reply-To: <$ackid>" "Subject: Away: SECRET-T590-AUTO-SUBJ" &&
	deliver_ok "$TMP/a1.eml" &&
	sealed_aside a1@example.net SECRET-T590-AUTO automatic
'

test_expect_success 'an automatic mail that carries an embargoed request is sealed' '
	printf "Product: Bot\nEmbargo: %s\n\nSECRET-T590-AUTO2-BODY\n" "$EMB" |
		write_mail "$TMP/a2.eml" "Message-ID: <a2@example.net>" "Precedence: bulk" \
		"Subject: SECRET-T590-AUTO2-SUBJ" &&
	deliver_ok "$TMP/a2.eml" &&
	sealed_aside a2@example.net SECRET-T590-AUTO2 automatic
'

test_expect_success 'a request to an unknown entry that asked for an embargo is refused and sealed' '
	printf "Product: Ghost\nEmbargo: %s\n\nSECRET-T590-UNKNOWN-BODY\n" "$EMB" |
		write_mail "$TMP/u1.eml" "Message-ID: <u1@example.net>" "Subject: SECRET-T590-UNKNOWN-SUBJ" &&
	deliver_ok "$TMP/u1.eml" -r "request+TEST-$Y-0999@example.org" &&
	expect_eq rejected "$(sql "SELECT disposition FROM messages WHERE message_id = '\''u1@example.net'\''")" &&
	sealed_row u1@example.net &&
	nowhere_clear SECRET-T590-UNKNOWN
'

G() { gpg --homedir "$TMP/gnupg-kim" --batch --yes --no-tty --pinentry-mode loopback --passphrase '' "$@"; }

test_expect_success 'a replay of a sealed, clearsigned embargoed request is sealed too' '
	mkdir -m 700 "$TMP/gnupg-kim" &&
	G --quick-gen-key "Kim <kim@example.net>" ed25519 sign never 2>/dev/null &&
	kfpr=$(gpg --homedir "$TMP/gnupg-kim" --with-colons --list-secret-keys | awk -F: "/^fpr/ { print \$10; exit }") &&
	G --armor --export "$kfpr" >"$TMP/kim.asc" &&
	vulnid keys import "$TMP/kim.asc" >/dev/null &&
	printf "Product: Safe2\nEmbargo: %s\n\nSECRET-T590-REPLAY-BODY\n" "$EMB" |
		G --local-user "$kfpr" --clearsign >"$TMP/k.cs" 2>/dev/null &&
	write_mail "$TMP/k1.eml" "Message-ID: <k1@example.net>" "From: Kim <kim@example.net>" "Subject: mine" <"$TMP/k.cs" &&
	deliver_ok "$TMP/k1.eml" &&
	sealed_row k1@example.net &&
	write_mail "$TMP/k2.eml" "Message-ID: <k2@example.com>" "From: Mallory <mallory@example.com>" \
		"Subject: SECRET-T590-REPLAY-SUBJ" <"$TMP/k.cs" &&
	deliver_ok "$TMP/k2.eml" -r "request+$P@example.org" &&
	sealed_aside k2@example.com SECRET-T590-REPLAY replay
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify >/dev/null
'

test_done
