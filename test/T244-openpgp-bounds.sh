#!/bin/bash
# T244-openpgp-bounds: what OpenPGP yields is bounded as received mail is.
# A few kilobytes of ciphertext that decompress to tens of megabytes, a
# million MIME parts or deep nesting under encryption, a signature part
# that repeats one signature 20,000 times, a signature flood inside the
# encryption that would keep gpg busy for minutes, a key attachment full
# of keys: each is handled at once (exit 0), set aside and answered once
# or treated as unsigned, in bounded memory, without growing the
# database by what it decrypts to.  A captured encrypted command acts
# once, whoever sends it again.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/faults/fault-lib.sh"

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

vulnid() { "$VULNID" -c "$CONF" "$@"; }
disposition_of() { sql "SELECT disposition FROM messages WHERE message_id = '$1'"; }
quarantine_of() {
	sql "SELECT q.reason || ': ' || q.detail FROM quarantine q JOIN messages m ON m.id = q.message
	     WHERE m.message_id = '$1'"
}
db_bytes() { cat "$INST/vulnid.db" "$INST/vulnid.db-wal" 2>/dev/null | wc -c; }

# measured FILE [filter options]: deliver FILE; $rc, and $rss (KiB) the
# peak resident memory of the filter and the gpg it ran
measured() {
	local file=$1
	shift
	"$PYTHON" - "$FILTER" "$CONF" "$file" "$TMP/.rss" "$@" <<'PY'
import resource, subprocess, sys
filt, conf, mail, out = sys.argv[1:5]
with open(mail, "rb") as f:
    rc = subprocess.run([filt, "-c", conf] + sys.argv[5:], stdin=f, stderr=subprocess.DEVNULL).returncode
open(out, "w").write("%d %d\n" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
PY
	read -r rc rss <"$TMP/.rss"
}

make_instance inst
ROBOT=$("$VULNID" -c "$CONF" key export --fingerprint | tr -d ' \n')
"$VULNID" -c "$CONF" key export >"$TMP/robot.asc"

A="$TMP/gnupg-alice"
mkdir -m 700 "$A"
G "$A" --quick-gen-key "Alice <alice@example.net>" ed25519 sign never 2>/dev/null
AFPR=$(gpg --homedir "$A" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
G "$A" --quick-add-key "$AFPR" cv25519 encr never 2>/dev/null
G "$A" --import "$TMP/robot.asc" 2>/dev/null
G "$A" --armor --export "$AFPR" >"$TMP/alice.asc"
printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nProduct: Inner\r\n\r\nA request.\r\n' >"$TMP/inner.txt"

test_expect_success 'setup: Alice knows the robot key, the robot knows Alice' '
	test -n "$ROBOT" && test -n "$AFPR" &&
	vulnid keys import "$TMP/alice.asc" >/dev/null
'

test_expect_success 'an encrypted request that decompresses to 64 MiB is set aside unread and answered, in bounded memory' '
	$PGPMAIL encrypt-bomb "$A" "$ROBOT" text 67108864 "$TMP/bomb.eml" "Message-ID: <bomb@example.net>" &&
	test "$(wc -c <"$TMP/bomb.eml")" -lt 1000000 &&
	before=$(db_bytes) && snap &&
	measured "$TMP/bomb.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq quarantined "$(disposition_of bomb@example.net)" &&
	quarantine_of bomb@example.net >"$TMP/why" &&
	expect_match "decrypts to more than [0-9]+ bytes" "$TMP/why" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM entries")" &&
	{ test "$rss" -lt 262144 || fail "peak RSS $rss KiB"; } &&
	{ test $(( $(db_bytes) - before )) -lt 20971520 || fail "database grew by $(( $(db_bytes) - before ))"; } &&
	expect_eq 1 "$(new_mails | wc -l)" &&
	mail_body "$(new_mails)" >"$TMP/answer" &&
	expect_match "decrypts to more than" "$TMP/answer"
'

test_expect_success 'the same bomb delivered again is a duplicate: no second answer, nothing retried' '
	snap &&
	measured "$TMP/bomb.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 0 "$(new_mails | wc -l)"
'

test_expect_success 'a million empty MIME parts under encryption never reach the parser' '
	$PGPMAIL encrypt-bomb "$A" "$ROBOT" parts 1000000 "$TMP/parts.eml" "Message-ID: <parts@example.net>" &&
	measured "$TMP/parts.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq quarantined "$(disposition_of parts@example.net)" &&
	{ test "$rss" -lt 262144 || fail "peak RSS $rss KiB"; }
'

test_expect_success 'what a mail decrypts to is held to the part limit as received mail is' '
	set_conf limits max_decrypted_ratio 1000000 &&
	$PGPMAIL encrypt-bomb "$A" "$ROBOT" parts 600 "$TMP/p600.eml" "Message-ID: <p600@example.net>" &&
	deliver_ok "$TMP/p600.eml" &&
	expect_eq quarantined "$(disposition_of p600@example.net)" &&
	quarantine_of p600@example.net >"$TMP/why" &&
	expect_match "more than 500 MIME parts in what the mail decrypts to" "$TMP/why"
'

test_expect_success 'and to the nesting limit' '
	$PGPMAIL encrypt-bomb "$A" "$ROBOT" nest 40 "$TMP/nest.eml" "Message-ID: <nest@example.net>" &&
	deliver_ok "$TMP/nest.eml" &&
	expect_eq quarantined "$(disposition_of nest@example.net)" &&
	quarantine_of nest@example.net >"$TMP/why" &&
	expect_match "nest" "$TMP/why" &&
	set_conf limits max_decrypted_ratio 100
'

test_expect_success 'a signature part of 20,000 good signatures is refused before gpg: the mail counts as unsigned' '
	$PGPMAIL sign-mime "$A" "$AFPR" "$TMP/inner.txt" "$TMP/flood.eml" --repeat 20000 \
		"Message-ID: <flood@example.net>" &&
	measured "$TMP/flood.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq request "$(disposition_of flood@example.net)" &&
	id=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1") &&
	vulnid show "$id" --private --json | json_get "j[\"records\"][0][\"auth\"]" >"$TMP/auth" &&
	expect_match "\"method\": \"none\"" "$TMP/auth" &&
	expect_match "more than 8 signatures" "$TMP/auth"
'

# (gpg reads every signature packet before it checks the first: on a busy
# machine the deadline may come first; either way the mail is set aside)
test_expect_success 'a signature flood inside the encryption: gpg is stopped at the ninth signature, the mail set aside once' '
	$PGPMAIL encrypt-flood "$A" "$AFPR" "$ROBOT" 20000 "$TMP/inner.txt" "$TMP/eflood.eml" \
		"Message-ID: <eflood@example.net>" &&
	snap &&
	measured "$TMP/eflood.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq quarantined "$(disposition_of eflood@example.net)" &&
	quarantine_of eflood@example.net >"$TMP/why" &&
	expect_match "more than 8 signatures|took longer than 10 seconds" "$TMP/why" &&
	expect_eq 1 "$(new_mails | wc -l)" &&
	snap &&
	deliver_ok "$TMP/eflood.eml" &&
	expect_eq 0 "$(new_mails | wc -l)"
'

# Whatever else keeps gpg busy: a gpg that hangs stands in for it.
test_expect_success 'gpg that takes longer than openpgp_time_limit is stopped; the mail is set aside and answered once' '
	set_conf limits openpgp_time_limit 2 &&
	$PGPMAIL encrypt-mime "$A" "$ROBOT" "$TMP/inner.txt" "$TMP/slow.eml" "Message-ID: <slow@example.net>" &&
	snap &&
	deliver_fault "$TMP/slow.eml" FAULT_OPS=stall FAULT_PATH="*/gpg" &&
	test "$injected" -gt 0 &&
	expect_eq 0 "$rc" &&
	expect_eq quarantined "$(disposition_of slow@example.net)" &&
	quarantine_of slow@example.net >"$TMP/why" &&
	expect_match "took longer than 2 seconds" "$TMP/why" &&
	expect_eq 1 "$(new_mails | wc -l)" &&
	snap &&
	deliver_ok "$TMP/slow.eml" &&
	expect_eq 0 "$(new_mails | wc -l)" &&
	set_conf limits openpgp_time_limit 10
'

test_expect_success 'a key attachment of more keys than allowed is not imported: the signature stays unverified' '
	for i in 1 2 3 4 5 6 7 8 9; do
		mkdir -m 700 "$TMP/gk$i" &&
		G "$TMP/gk$i" --quick-gen-key "K$i <k$i@example.net>" ed25519 sign never 2>/dev/null &&
		G "$TMP/gk$i" --armor --export >>"$TMP/many.asc" || return 1
	done &&
	mkdir -m 700 "$TMP/gb" &&
	G "$TMP/gb" --quick-gen-key "Bob <bob@example.net>" ed25519 sign never 2>/dev/null &&
	BFPR=$(gpg --homedir "$TMP/gb" --with-colons --list-secret-keys 2>/dev/null | awk -F: "/^fpr/ { print \$10; exit }") &&
	G "$TMP/gb" --armor --export >>"$TMP/many.asc" &&
	printf "Product: Many keys\n" >"$TMP/mk.txt" &&
	$PGPMAIL with-keys "$TMP/gb" "$BFPR" "$TMP/mk.txt" "$TMP/mk.eml" "$TMP/many.asc" -- \
		"From: Bob <bob@example.net>" "Message-ID: <manykeys@example.net>" &&
	deliver_ok "$TMP/mk.eml" &&
	vulnid keys list >"$TMP/keys" &&
	expect_no_match "$BFPR" "$TMP/keys" &&
	id=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1") &&
	vulnid show "$id" --private --json | json_get "j[\"records\"][0][\"auth\"]" >"$TMP/auth" &&
	expect_match "more than 8 keys" "$TMP/auth"
'

# A captured encrypted command: Alice's "embargo" with her token, sent
# later by Mallory with a new Message-ID, her From and another network.
test_expect_success 'setup: an embargoed entry of Alice and her token' '
	printf "Product: Sealed\nEmbargo: 2027-06-01\n\nDetails.\n" |
		write_mail "$TMP/req.eml" "From: Alice <alice@example.net>" "To: request@example.org" \
			"Subject: sealed" "Message-ID: <sealed-req@example.net>" &&
	deliver_ok "$TMP/req.eml" -a 192.0.2.10 &&
	X=$(sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1") &&
	echo "$X" >"$TMP/x.id" &&
	for f in $(sent_files | tac); do
		T=$(mail_body "$f" | sed -n "s/^ *token: *\([0-9a-zA-Z_]*\)\$/\1/p" | head -n 1) &&
		test -n "$T" && break
	done &&
	test -n "$T" && echo "$T" >"$TMP/token"
'

test_expect_success 'an encrypted command with the token acts once; sent again by anyone it is a replay' '
	X=$(cat "$TMP/x.id") && T=$(cat "$TMP/token") &&
	printf "Content-Type: text/plain\r\n\r\nToken: %s\r\nembargo 2027-09-01\r\n" "$T" >"$TMP/cmd.txt" &&
	$PGPMAIL encrypt-mime "$A" "$ROBOT" "$TMP/cmd.txt" "$TMP/cmd.eml" "Subject: [$X] embargo" \
		"Message-ID: <cmd1@example.net>" &&
	deliver_ok "$TMP/cmd.eml" -r "request+$X@example.org" -a 192.0.2.10 &&
	vulnid show "$X" --json | json_get "j[\"embargo\"]" >"$TMP/emb1" &&
	expect_match "2027-09-01" "$TMP/emb1" &&
	$PGPMAIL reheader "$TMP/cmd.eml" "$TMP/cmd2.eml" "Message-ID: <cmd2@example.net>" \
		"Date: Fri, 04 Dec 2026 12:00:00 +0000" &&
	deliver_ok "$TMP/cmd2.eml" -r "request+$X@example.org" -a 203.0.113.99 &&
	expect_eq quarantined "$(disposition_of cmd2@example.net)" &&
	quarantine_of cmd2@example.net >"$TMP/why" &&
	expect_match "^replay: .*decrypted before" "$TMP/why" &&
	vulnid show "$X" --json | json_get "j[\"embargo\"]" >"$TMP/emb2" &&
	expect_match "2027-09-01" "$TMP/emb2"
'

test_expect_success 'the audit chain is intact' '
	vulnid audit verify >/dev/null
'

test_done
