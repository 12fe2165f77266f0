#!/bin/bash
# T956-memory: a 50 MiB mail does not take 50 MiB of memory, and nothing of
# it is lost.  A short request with a 50 MiB attachment and a request whose
# text itself is 50 MiB each stay under 16 MiB of peak resident memory
# (the target of doc/PERFORMANCE.md; VULNID_TEST_RSS_KIB overrides it),
# while the raw message, the attachment and the whole text are archived
# byte for byte.  Of a text longer than [limits] max_request_text only the
# head is read as the request; the sender is told, and normal-size text is
# read as before.  Blobs stream into the database because the no-replace
# check of blobs lives on the small side table blob_keys (schema 2), which
# an older database gets by migration in place.
. "$(dirname "$0")/test-lib.sh"

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
set_conf limits max_message_size 104857600
set_conf crypto sign none
SENDER=alice@example.net
MIB=$((1024 * 1024))
BOUND=${VULNID_TEST_RSS_KIB:-16384}
DEFAULT_TEXT=$(sed -n 's/^max_request_text = //p' "$CONF")

# Peak RSS is measured by GNU time (fork from a small process; a helper in
# Python would count the interpreter's own pages, which the child shares
# until exec).  Sanitizer builds use far more memory by design.
RSS_OK=1
if ! /usr/bin/time -f %M true >/dev/null 2>&1; then
	RSS_OK=0 RSS_WHY="no GNU time in /usr/bin/time"
elif grep -aq -e __asan_init -e __tsan_init -e __msan_init "$FILTER"; then
	RSS_OK=0 RSS_WHY="the filter is built with sanitizers"
fi

# run_rss FILE [filter options]: deliver FILE, status in $rc, peak RSS of
# the filter in KiB in $rss.
run_rss() {
	local file=$1
	shift
	rc=0
	/usr/bin/time -o "$TMP/.rss" -f %M "$FILTER" -c "$CONF" -f "$SENDER" -r request@example.org "$@" \
		<"$file" 2>"$TMP/.filter.err" || rc=$?
	rss=$(tail -n 1 "$TMP/.rss")
	echo "# peak RSS of the filter for $(basename "$file"): $rss KiB (bound $BOUND KiB)" >&3
}
exec 3>&1

# blob_bytes SHA256 FILE: write the blob's bytes to FILE (sqlite3's
# writefile(), no hex round trip for 50 MiB) and print their SHA-256.
blob_bytes() {
	rm -f "$2"
	sql "SELECT writefile('$2', data) FROM blobs WHERE sha256 = '$1'" >/dev/null
	sha256sum <"$2" | cut -d' ' -f1
}
newest_entry() { sql "SELECT id FROM entries ORDER BY rowid DESC LIMIT 1"; }
show_json() { "$VULNID" -c "$CONF" show --json "$1"; }

# --- the two mails of the benchmark (test/bench/bench.sh, "2. 50 MiB") ---------

$PYTHON - "$TMP" <<'PY'
import base64, os, sys
d = sys.argv[1]
core = os.urandom(38 * 1024 * 1024)
open(f"{d}/core.bin", "wb").write(core)
with open(f"{d}/big-attachment.eml", "w") as f:
    f.write("From: Alice Researcher <alice@example.net>\nTo: request@example.org\nSubject: big attachment\n"
            "Message-ID: <t956-attachment@example.net>\nMIME-Version: 1.0\n"
            'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n'
            "Product: Big\n\nThe core dump is attached.\n--b\nContent-Type: application/octet-stream\n"
            'Content-Disposition: attachment; filename="core"\nContent-Transfer-Encoding: base64\n\n')
    f.write(base64.encodebytes(core).decode())
    f.write("--b--\n")
line = "A description line of a plausible report, about seventy characters..\n"
head = ("From: Alice Researcher <alice@example.net>\nTo: request@example.org\n"
        "Subject: big text\nMessage-ID: <t956-text@example.net>\nMIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=utf-8\n\n")
body = "Product: Big Text\nVersion: 1.0\n\nFIRST-LINE of the description.\n"
body += line * ((50 * 1024 * 1024 - len(head) - len(body) - 20) // len(line)) + "LAST-LINE\n"
open(f"{d}/big-text.eml", "w").write(head + body)
open(f"{d}/big-text.body", "w").write(body)
PY

test_expect_success 'setup: two mails of 50 MiB' '
	[ "$(stat -c %s "$TMP/big-attachment.eml")" -gt $((50 * MIB)) ] &&
	[ "$(stat -c %s "$TMP/big-text.eml")" -ge $((50 * MIB - 100)) ]
'

test_expect_success 'a 50 MiB attachment: assigned, under the memory bound' '
	run_rss "$TMP/big-attachment.eml" &&
	expect_eq 0 "$rc" "exit status ($(cat "$TMP/.filter.err"))" &&
	echo "$(newest_entry)" >"$TMP/att.id" &&
	expect_eq "Big" "$(show_json "$(cat "$TMP/att.id")" | json_get "j[\"product\"]")" &&
	if [ "$RSS_OK" = 1 ]; then
		[ "$rss" -le "$BOUND" ] || fail "peak RSS $rss KiB is over $BOUND KiB"
	fi
'

test_expect_success 'the attachment is archived whole: its SHA-256, size and bytes' '
	sha=$(sha256sum <"$TMP/core.bin" | cut -d" " -f1) &&
	size=$(stat -c %s "$TMP/core.bin") &&
	show_json "$(cat "$TMP/att.id")" >"$TMP/att.json" &&
	expect_eq "core application/octet-stream $size $sha" \
		"$(json_get "\" \".join(str(j[\"records\"][0][\"attachments\"][0][k]) for k in (\"filename\", \"content_type\", \"size\", \"sha256\"))" <"$TMP/att.json")" &&
	expect_eq "$size" "$(sql "SELECT size FROM blobs WHERE sha256 = '\''$sha'\''")" &&
	expect_eq "$sha" "$(blob_bytes "$sha" "$TMP/core.out")" &&
	cmp "$TMP/core.bin" "$TMP/core.out"
'

test_expect_success 'the raw 50 MiB message is archived byte for byte' '
	sha=$(sha256sum <"$TMP/big-attachment.eml" | cut -d" " -f1) &&
	expect_eq "$sha" "$(sql "SELECT raw_sha256 FROM messages WHERE message_id = '\''t956-attachment@example.net'\''")" &&
	expect_eq "$sha" "$(blob_bytes "$sha" "$TMP/raw.out")" &&
	cmp "$TMP/big-attachment.eml" "$TMP/raw.out" &&
	rm -f "$TMP/raw.out" "$TMP/core.out"
'

test_expect_success 'the same 50 MiB mail again is a duplicate, under the bound too' '
	run_rss "$TMP/big-attachment.eml" &&
	expect_eq 0 "$rc" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''t956-attachment@example.net'\''")" &&
	if [ "$RSS_OK" = 1 ]; then
		[ "$rss" -le "$BOUND" ] || fail "peak RSS $rss KiB is over $BOUND KiB"
	fi
'

test_expect_success 'a 50 MiB request text: assigned from its head, under the memory bound' '
	n0=$(sent_count) &&
	run_rss "$TMP/big-text.eml" &&
	expect_eq 0 "$rc" "exit status ($(cat "$TMP/.filter.err"))" &&
	id=$(newest_entry) && echo "$id" >"$TMP/text.id" &&
	show_json "$id" >"$TMP/text.json" &&
	expect_eq "Big Text" "$(json_get "j[\"product\"]" <"$TMP/text.json")" &&
	expect_eq "1.0" "$(json_get "j[\"versions\"][0]" <"$TMP/text.json")" &&
	if [ "$RSS_OK" = 1 ]; then
		[ "$rss" -le "$BOUND" ] || fail "peak RSS $rss KiB is over $BOUND KiB"
	fi &&
	[ "$(sent_count)" -gt "$n0" ]
'

test_expect_success 'the record keeps the head of the text and says where the rest is' '
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/text.json" >"$TMP/text.body" &&
	head -n 1 "$TMP/text.body" | grep -qx "FIRST-LINE of the description." &&
	expect_no_match "LAST-LINE" "$TMP/text.body" &&
	total=$(stat -c %s "$TMP/big-text.body") &&
	expect_match "^\[The text of this mail is $total bytes long; only its first $DEFAULT_TEXT\$" "$TMP/text.body" &&
	expect_match "^bytes were read. All of it is kept as the attachment request-text.txt.\]\$" "$TMP/text.body" &&
	[ "$(stat -c %s "$TMP/text.body")" -le $((DEFAULT_TEXT + 300)) ] &&
	n=$(grep -c "^A description line of a plausible report" "$TMP/text.body") &&
	[ "$n" -gt $((DEFAULT_TEXT / 80)) ] || fail "only $n lines of the head kept"
'

test_expect_success 'the whole text is archived as the attachment request-text.txt' '
	sha=$(sha256sum <"$TMP/big-text.body" | cut -d" " -f1) &&
	size=$(stat -c %s "$TMP/big-text.body") &&
	expect_eq "request-text.txt text/plain $size $sha" \
		"$(json_get "\" \".join(str(j[\"records\"][0][\"attachments\"][0][k]) for k in (\"filename\", \"content_type\", \"size\", \"sha256\"))" <"$TMP/text.json")" &&
	expect_eq "$sha" "$(blob_bytes "$sha" "$TMP/text.out")" &&
	cmp "$TMP/big-text.body" "$TMP/text.out" &&
	rm -f "$TMP/text.out" &&
	raw=$(sha256sum <"$TMP/big-text.eml" | cut -d" " -f1) &&
	expect_eq "$raw" "$(sql "SELECT raw_sha256 FROM messages WHERE message_id = '\''t956-text@example.net'\''")" &&
	expect_eq "$(stat -c %s "$TMP/big-text.eml")" "$(sql "SELECT size FROM blobs WHERE sha256 = '\''$raw'\''")"
'

test_expect_success 'the acknowledgement tells the sender that only the head was read' '
	ack=$(sent_to alice@example.net) &&
	mail_body "$ack" >"$TMP/ack.txt" &&
	expect_match "^Please note:" "$TMP/ack.txt" &&
	expect_match "the text of your mail is 50\.0 MiB \($(stat -c %s "$TMP/big-text.body") bytes\); only" "$TMP/ack.txt" &&
	expect_match "its first 512\.0 KiB were read as the request" "$TMP/ack.txt" &&
	expect_match "attachment request-text\.txt\." "$TMP/ack.txt" &&
	expect_match "attachments: 1" "$TMP/ack.txt"
'

rm -f "$TMP/big-attachment.eml" "$TMP/core.bin" "$TMP/big-text.eml" "$TMP/big-text.body"

# --- the limit itself, with small numbers ------------------------------------------

# text_mail FILE MID [header...]: body on stdin, a request to the robot
text_mail() {
	local f=$1 mid=$2
	shift 2
	write_mail "$f" "Message-ID: <$mid@example.net>" "MIME-Version: 1.0" "$@"
}

# body_of_size N [FIELD]: FIELD ("Product: Limit"), a blank line and lines
# of 10 bytes, the last one of x, N bytes in all
body_of_size() {
	$PYTHON -c '
import sys
n = int(sys.argv[1])
s = sys.argv[2] + "\n\n"
while len(s) + 12 <= n:
    s += "line %04d\n" % (len(s) % 10000)
s += "x" * (n - len(s) - 1) + "\n"
assert len(s) == n
sys.stdout.write(s)' "$1" "${2:-Product: Limit}"
}

test_expect_success 'a text of exactly max_request_text bytes is read whole, as before' '
	set_conf limits max_request_text 2048 &&
	body_of_size 2048 >"$TMP/b2048" &&
	text_mail "$TMP/t2048.eml" t956-2048 "Content-Type: text/plain; charset=us-ascii" <"$TMP/b2048" &&
	deliver_ok "$TMP/t2048.eml" -f "$SENDER" &&
	id=$(newest_entry) && show_json "$id" >"$TMP/s.json" &&
	expect_eq 0 "$(json_get "len(j[\"records\"][0][\"attachments\"])" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	tail -n +3 "$TMP/b2048" | cmp - "$TMP/got" &&
	mail_body "$(sent_to alice@example.net)" >"$TMP/ack.txt" &&
	expect_match "digest:" "$TMP/ack.txt" &&
	expect_no_match "Please note" "$TMP/ack.txt"
'

test_expect_success 'one byte more and only the head is read; the rest is an attachment' '
	body_of_size 2049 >"$TMP/b2049" &&
	text_mail "$TMP/t2049.eml" t956-2049 "Content-Type: text/plain; charset=us-ascii" <"$TMP/b2049" &&
	deliver_ok "$TMP/t2049.eml" -f "$SENDER" &&
	id=$(newest_entry) && show_json "$id" >"$TMP/s.json" &&
	expect_eq "Limit" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	expect_eq "request-text.txt 2049 $(sha256sum <"$TMP/b2049" | cut -d" " -f1)" \
		"$(json_get "\" \".join(str(j[\"records\"][0][\"attachments\"][0][k]) for k in (\"filename\", \"size\", \"sha256\"))" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	expect_match "^\[The text of this mail is 2049 bytes long; only its first 2048\$" "$TMP/got" &&
	expect_no_match "^xxx" "$TMP/got" &&
	expect_match "^line " "$TMP/got" &&
	mail_body "$(sent_to alice@example.net)" >"$TMP/ack.txt" &&
	expect_match "the text of your mail is 2\.0 KiB \(2049 bytes\); only" "$TMP/ack.txt"
'

test_expect_success 'a UTF-8 character split by the cut is left out, not garbled' '
	{ printf "Product: Accents\n\n"; for i in $(seq 1 300); do printf "éèàüö€"; done; printf "\n"; } >"$TMP/butf8" &&
	text_mail "$TMP/tutf8.eml" t956-utf8 "Content-Type: text/plain; charset=utf-8" \
		"Content-Transfer-Encoding: 8bit" <"$TMP/butf8" &&
	deliver_ok "$TMP/tutf8.eml" -f "$SENDER" &&
	show_json "$(newest_entry)" >"$TMP/s.json" &&
	expect_eq "Accents" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	head -n 1 "$TMP/got" | grep -q "^éèàüö€éèàüö€" &&
	expect_no_match "Ã|�" "$TMP/got" &&
	expect_match "^\[The text of this mail is" "$TMP/got"
'

test_expect_success 'UTF-16 and quoted-printable texts are cut after decoding, fields intact' '
	{ printf "Product: Wide\n\n"; for i in $(seq 1 400); do printf "wide line %d\n" "$i"; done; } |
		iconv -f utf-8 -t utf-16le >"$TMP/b16" &&
	text_mail "$TMP/t16.eml" t956-utf16 "Content-Type: text/plain; charset=utf-16le" \
		"Content-Transfer-Encoding: base64" < <(base64 -w 76 "$TMP/b16") &&
	deliver_ok "$TMP/t16.eml" -f "$SENDER" &&
	show_json "$(newest_entry)" >"$TMP/s.json" &&
	expect_eq "Wide" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	expect_eq "$(sha256sum <"$TMP/b16" | cut -d" " -f1)" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"sha256\"]" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	expect_match "^wide line 1\$" "$TMP/got" &&
	expect_no_match "^wide line 400\$" "$TMP/got" &&
	{ printf "Product: Quoted\n\n"; for i in $(seq 1 300); do printf "caf=C3=A9 line %d=\n continued\n" "$i"; done; } >"$TMP/bqp" &&
	text_mail "$TMP/tqp.eml" t956-qp "Content-Type: text/plain; charset=utf-8" \
		"Content-Transfer-Encoding: quoted-printable" <"$TMP/bqp" &&
	deliver_ok "$TMP/tqp.eml" -f "$SENDER" &&
	show_json "$(newest_entry)" >"$TMP/s.json" &&
	expect_eq "Quoted" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	expect_match "^café line 1 continued\$" "$TMP/got" &&
	expect_match "^\[The text of this mail is" "$TMP/got"
'

test_expect_success 'an HTML text is cut too, and kept as request-text.html' '
	{ printf "<html><body><p>Product: Markup</p>\n"; for i in $(seq 1 200); do printf "<p>paragraph %d</p>\n" "$i"; done; printf "</body></html>\n"; } >"$TMP/bhtml" &&
	text_mail "$TMP/thtml.eml" t956-html "Content-Type: text/html; charset=utf-8" <"$TMP/bhtml" &&
	deliver_ok "$TMP/thtml.eml" -f "$SENDER" &&
	show_json "$(newest_entry)" >"$TMP/s.json" &&
	expect_eq "Markup" "$(json_get "j[\"product\"]" <"$TMP/s.json")" &&
	expect_eq "request-text.html text/html" "$(json_get "j[\"records\"][0][\"attachments\"][0][\"filename\"] + \" \" + j[\"records\"][0][\"attachments\"][0][\"content_type\"]" <"$TMP/s.json")" &&
	json_get "j[\"records\"][0][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	expect_no_match "<p>" "$TMP/got" &&
	expect_match "^\[The text of this mail is" "$TMP/got"
'

test_expect_success 'mail about an entry is cut the same way' '
	id=$(cat "$TMP/text.id") &&
	body_of_size 5000 "Version: 2.0" >"$TMP/badd" &&
	text_mail "$TMP/tadd.eml" t956-addition "To: request+$id@example.org" "Subject: Re: [$id] more" <"$TMP/badd" &&
	deliver_ok "$TMP/tadd.eml" -f "$SENDER" -r "request+$id@example.org" &&
	show_json "$id" >"$TMP/s.json" &&
	expect_eq "addition" "$(json_get "j[\"records\"][-1][\"kind\"]" <"$TMP/s.json")" &&
	expect_eq "request-text.txt 5000" "$(json_get "j[\"records\"][-1][\"attachments\"][0][\"filename\"] + \" \" + str(j[\"records\"][-1][\"attachments\"][0][\"size\"])" <"$TMP/s.json")" &&
	json_get "j[\"records\"][-1][\"body\"]" <"$TMP/s.json" >"$TMP/got" &&
	expect_match "^\[The text of this mail is 5000 bytes long" "$TMP/got"
'

test_expect_success 'an embargoed request with a cut text: its whole text appears at release' '
	EMB=$(date -u -d "+30 days" +%F) &&
	body_of_size 6000 "Embargo: $EMB" | sed "1i Product: Sealed" >"$TMP/bemb" &&
	text_mail "$TMP/temb.eml" t956-embargo <"$TMP/bemb" &&
	deliver_ok "$TMP/temb.eml" -f "$SENDER" &&
	id=$(newest_entry) &&
	sha=$(sha256sum <"$TMP/bemb" | cut -d" " -f1) &&
	expect_eq 0 "$(sql "SELECT count(*) FROM blobs WHERE sha256 = '\''$sha'\''")" "stored in clear before the release" &&
	VULNID_TEST_NOW=$(date -u -d "+31 days" +%FT%H:%M:%SZ) "$VULNID" -c "$CONF" tick >"$TMP/tick.out" &&
	expect_match "^released 1 embargoed entr" "$TMP/tick.out" &&
	show_json "$id" >"$TMP/s.json" &&
	expect_eq "Sealed public" "$(json_get "j[\"product\"] + \" \" + j[\"state\"]" <"$TMP/s.json")" &&
	expect_eq "request-text.txt $sha" "$(json_get "j[\"records\"][1][\"attachments\"][0][\"filename\"] + \" \" + j[\"records\"][1][\"attachments\"][0][\"sha256\"]" <"$TMP/s.json")" &&
	expect_eq "$sha" "$(blob_bytes "$sha" "$TMP/emb.out")" &&
	cmp "$TMP/bemb" "$TMP/emb.out"
'

test_expect_success 'max_request_text out of range is a configuration error naming it (75)' '
	set_conf limits max_request_text 100 &&
	printf "Product: R\n" | text_mail "$TMP/range.eml" t956-range &&
	deliver "$TMP/range.eml" &&
	set_conf limits max_request_text "$DEFAULT_TEXT" &&
	expect_eq 75 "$rc" &&
	expect_match "max_request_text" "$TMP/.filter.err"
'

test_expect_success 'max_request_text is documented in vulnid.conf(5) and commented in vulnid.conf' '
	grep -q "max_request_text" "$VULNID_SRCDIR/doc/vulnid.conf.5" &&
	make_instance fresh &&
	grep -B3 "^max_request_text = 524288$" "$TMP/fresh/vulnid.conf" | grep -q "^#"
'

# --- the database stays append-only; old databases are upgraded -------------------

CONF="$TMP/inst/vulnid.conf" INST="$TMP/inst"

# must_refuse SQL: a plain sqlite3 connection (recursive_triggers off) is
# refused with an append-only error
must_refuse() {
	if sqlite3 "$INST/vulnid.db" "$1" 2>"$TMP/sqlerr"; then
		fail "allowed: $1"
	fi
	grep -q "append-only" "$TMP/sqlerr" || fail "unexpected error: $(cat "$TMP/sqlerr")"
}

test_expect_success 'blobs cannot be replaced, with or without recursive_triggers' '
	n=$(sql "SELECT count(*) FROM blobs") &&
	sha=$(sql "SELECT sha256 FROM blobs ORDER BY rowid LIMIT 1") &&
	must_refuse "INSERT OR REPLACE INTO blobs (sha256, size, data) VALUES ('\''$sha'\'', 1, x'\''00'\'')" &&
	must_refuse "PRAGMA recursive_triggers = ON; INSERT OR REPLACE INTO blobs (sha256, size, data) VALUES ('\''$sha'\'', 1, x'\''00'\'')" &&
	must_refuse "INSERT OR REPLACE INTO blobs (rowid, sha256, size, data) VALUES (1, '\''$(printf "%064d" 1)'\'', 1, x'\''00'\'')" &&
	must_refuse "REPLACE INTO blobs SELECT * FROM blobs LIMIT 1" &&
	must_refuse "UPDATE blobs SET size = 0" &&
	must_refuse "DELETE FROM blobs" &&
	must_refuse "DELETE FROM blob_keys" &&
	must_refuse "UPDATE blob_keys SET sha256 = '\''x'\''" &&
	must_refuse "INSERT OR REPLACE INTO blob_keys (sha256, blob) VALUES ('\''$sha'\'', 999999)" &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM blobs")" &&
	expect_eq "$n" "$(sql "SELECT count(*) FROM blob_keys k JOIN blobs b ON b.rowid = k.blob AND b.sha256 = k.sha256")" &&
	expect_eq ok "$(sql "PRAGMA integrity_check")"
'

test_expect_success 'a schema 1 database is upgraded in place and keeps its blobs' '
	make_instance old &&
	set_conf crypto sign none &&
	printf "Product: Before\n\nSent before the upgrade.\n" | text_mail "$TMP/old1.eml" t956-old1 &&
	deliver_ok "$TMP/old1.eml" -f "$SENDER" &&
	id1=$(newest_entry) &&
	sha1=$(sql "SELECT raw_sha256 FROM messages WHERE message_id = '\''t956-old1@example.net'\''") &&
	sqlite3 "$INST/vulnid.db" "
		DROP TRIGGER messages_rate_counts; DROP TRIGGER signatures_rate_counts; DROP TABLE rate_counts;
		DROP INDEX outbox_pending; DROP INDEX outbox_claims; DROP INDEX messages_from_body;
		DROP INDEX mail_ledger_suspect; DROP INDEX tokens_entry; DROP INDEX entries_embargoed;
		DROP TRIGGER blobs_keyed; DROP TRIGGER blob_keys_no_replace;
		DROP TRIGGER blob_keys_no_update; DROP TRIGGER blob_keys_no_delete;
		DROP TABLE blob_keys; DROP TABLE outbox_signed; DROP TABLE record_signers; DROP TABLE decrypted;
		DROP INDEX messages_net_received; DROP INDEX messages_domain_received;
		DROP INDEX messages_received; DROP TABLE mail_ledger;
		ALTER TABLE messages DROP COLUMN client_address; ALTER TABLE messages DROP COLUMN client_net;
		ALTER TABLE messages DROP COLUMN sender_domain; ALTER TABLE messages DROP COLUMN from_verified;
		DROP TRIGGER outbox_recipients_forward;
		DROP TABLE withheld_attachments; DROP TABLE answer_bytes;
		ALTER TABLE outbox DROP COLUMN claim; ALTER TABLE outbox DROP COLUMN claim_until;
		ALTER TABLE outbox DROP COLUMN shown;
		DROP TABLE endorsements; DROP TABLE hashcash_spent;
		CREATE TRIGGER blobs_no_replace BEFORE INSERT ON blobs
		  WHEN EXISTS (SELECT 1 FROM blobs WHERE sha256 = NEW.sha256)
		  BEGIN SELECT RAISE(ABORT, '\''blobs is append-only'\''); END;
		PRAGMA user_version = 1;" &&
	expect_eq 1 "$(sql "PRAGMA user_version")" &&
	printf "Product: After\n\nSent after the upgrade.\n" | text_mail "$TMP/old2.eml" t956-old2 &&
	deliver_ok "$TMP/old2.eml" -f "$SENDER" &&
	expect_eq "$(schema_version)" "$(sql "PRAGMA user_version")" &&
	expect_eq "" "$(sql "SELECT name FROM sqlite_master WHERE name = '\''blobs_no_replace'\''")" &&
	expect_eq outbox_signed "$(sql "SELECT name FROM sqlite_master WHERE name = '\''outbox_signed'\''")" &&
	expect_eq "$(sql "SELECT count(*) FROM blobs")" "$(sql "SELECT count(*) FROM blob_keys")" &&
	expect_eq "$sha1" "$(blob_bytes "$sha1" "$TMP/old1.out")" &&
	cmp "$TMP/old1.eml" "$TMP/old1.out" &&
	expect_eq "Before" "$(show_json "$id1" | json_get "j[\"product\"]")" &&
	expect_eq "After" "$(show_json "$(newest_entry)" | json_get "j[\"product\"]")" &&
	must_refuse "INSERT OR REPLACE INTO blobs (sha256, size, data) VALUES ('\''$sha1'\'', 1, x'\''00'\'')" &&
	"$VULNID" -c "$CONF" audit verify >/dev/null
'

test_expect_success 'audit verify' '
	CONF="$TMP/inst/vulnid.conf" && "$VULNID" -c "$CONF" audit verify >/dev/null
'

test_done
