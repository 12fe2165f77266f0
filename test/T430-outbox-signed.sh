#!/bin/bash
# T430-outbox-signed: a mail is signed once.  A reply that could not be
# delivered at its first attempt keeps the bytes it was signed as
# (outbox_signed); every retry sends those bytes without starting gpg,
# until [crypto] sign changes.  The table is append-only like the rest.
. "$(dirname "$0")/test-lib.sh"

[ -x "$SMTP_SINK" ] || { test_skip "signed retries" "smtp-sink not installed"; test_done; }
command -v strace >/dev/null || { test_skip "signed retries" "strace is not installed"; test_done; }

make_instance inst || { echo "Bail out! cannot create an instance"; exit 1; }
SINK_PORT=$(free_port)
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf delivery timeout 5
PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

# traced_env COMMAND...: COMMAND under strace; LeakSanitizer cannot run
# under ptrace, so a sanitizer build checks leaks everywhere but here
traced_env() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
}

later() { date -u -d "+$1 minutes" +%Y-%m-%dT%H:%M:%SZ; }

# queue_run_traced: vulnid queue run (10 minutes later, so that deferred
# items are due), with the gpg processes it starts in $TMP/gpg.list
queue_run_traced() {
	VULNID_TEST_NOW=$(later "${1:-10}") traced_env strace -f -qq -e trace=execve -e signal=none -o "$TMP/strace.out" \
		"$VULNID" -c "$CONF" queue run >"$TMP/run.out"
	grep 'execve("[^"]*/gpg"' "$TMP/strace.out" | grep -v ' = -1 ' >"$TMP/gpg.list" || true
}

# the armored signature of a stored or sent mail
signature_of() { sed -n '/^-----BEGIN PGP SIGNATURE-----/,/^-----END PGP SIGNATURE-----/p' "$1" | tr -d '\r'; }

test_expect_success 'server down: the deferred reply keeps the bytes it was signed as' '
	write_mail "$TMP/r1.eml" "Message-ID: <signed-once@example.net>" <<<"Product: Once" &&
	deliver_ok "$TMP/r1.eml" &&
	expect_eq deferred "$(sql "SELECT status FROM outbox WHERE id = 1")" &&
	expect_eq "1|pgpmime" "$(sql "SELECT outbox, mode FROM outbox_signed")" &&
	sql "SELECT writefile('\''$TMP/stored.eml'\'', data) FROM outbox_signed WHERE outbox = 1" >/dev/null &&
	expect_match "^Content-Type: multipart/signed" "$TMP/stored.eml" &&
	signature_of "$TMP/stored.eml" >"$TMP/stored.sig" &&
	test -s "$TMP/stored.sig"
'

start_sink sink
test_expect_success 'the retry sends those bytes and starts no gpg' '
	queue_run_traced &&
	expect_eq "delivered 1, deferred 0, failed 0" "$(cat "$TMP/run.out")" &&
	expect_eq 0 "$(wc -l <"$TMP/gpg.list" | tr -d " ")" "gpg processes: $(cat "$TMP/gpg.list")" &&
	sink_message "$(sink_files | tail -n 1)" >"$TMP/sent.eml" &&
	signature_of "$TMP/sent.eml" >"$TMP/sent.sig" &&
	cmp "$TMP/stored.sig" "$TMP/sent.sig" &&
	$PGPMAIL split-signed "$TMP/sent.eml" "$TMP/v.data" "$TMP/v.sig" &&
	gpg --homedir "$INST/gnupg" --batch --no-tty --verify "$TMP/v.sig" "$TMP/v.data" 2>/dev/null
'

test_expect_success 'a reply delivered at its first attempt keeps no signed copy' '
	write_mail "$TMP/r2.eml" "Message-ID: <signed-direct@example.net>" <<<"Product: Direct" &&
	deliver_ok "$TMP/r2.eml" &&
	expect_eq delivered "$(sql "SELECT status FROM outbox WHERE id = 2")" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox_signed WHERE outbox = 2")"
'

stop_sink
test_expect_success 'with [crypto] sign changed, the stored signature is not used' '
	write_mail "$TMP/r3.eml" "Message-ID: <signed-changed@example.net>" <<<"Product: Changed" &&
	deliver_ok "$TMP/r3.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM outbox_signed WHERE outbox = 3 AND mode = '\''pgpmime'\''")" &&
	set_conf crypto sign none &&
	start_sink sink2 &&
	queue_run_traced &&
	expect_eq "delivered 1, deferred 0, failed 0" "$(cat "$TMP/run.out")" &&
	sink_message "$(sink_files | tail -n 1)" >"$TMP/sent3.eml" &&
	expect_no_match "multipart/signed" "$TMP/sent3.eml" &&
	expect_match "^Subject: \[TEST-[0-9]+-0003\]" "$TMP/sent3.eml" &&
	set_conf crypto sign pgpmime &&
	stop_sink	# started in this case'\''s subshell: the script'\''s cleanup does not know it
'

test_expect_success 'outbox_signed is append-only, also for a plain sqlite3 shell' '
	! sqlite3 "$INST/vulnid.db" "UPDATE outbox_signed SET data = x'\''00'\'' WHERE outbox = 1" 2>/dev/null &&
	! sqlite3 "$INST/vulnid.db" "DELETE FROM outbox_signed WHERE outbox = 1" 2>/dev/null &&
	! sqlite3 "$INST/vulnid.db" "INSERT OR REPLACE INTO outbox_signed (outbox, mode, created, data) VALUES (1, '\''pgpmime'\'', '\''x'\'', x'\''00'\'')" 2>/dev/null &&
	cmp <(sql "SELECT hex(data) FROM outbox_signed WHERE outbox = 1") \
		<(xxd -p "$TMP/stored.eml" | tr -d "\n" | tr a-f A-F; echo)
'

test_expect_success 'the database and the audit chain are consistent' '
	expect_eq ok "$(sql "PRAGMA integrity_check")" &&
	"$VULNID" -c "$CONF" audit verify
'

test_done
