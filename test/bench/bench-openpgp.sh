#!/bin/bash
# bench-openpgp.sh BUILDDIR SRCDIR - the OpenPGP rows of `make bench`:
# gpg processes per mail (counted with strace), signed and sealed
# requests through the filter and over LMTP beside `gpg --verify` run one
# after the other, and the hostile mails (a compression bomb, signature
# floods) with their time, peak memory and what they add to the database.
# Prints a table; not a test.
#
#   BENCH_RUNS=N   signed requests per series (default 40)
set -u
B=$(cd "$1" && pwd) S=$(cd "$2" && pwd)
FILTER="$B/src/vulnid-filter" VULNID="$B/src/vulnid" LMTPD="$B/src/vulnid-lmtpd"
PGPMAIL="python3 $S/test/corpora/openpgp/pgpmail.py"
N=${BENCH_RUNS:-40}
W=$(mktemp -d "${TMPDIR:-/tmp}/vulnid-bench-openpgp.XXXXXX")
export VULNID_TEMPLATE_DIR="$S/templates"
unset VULNID_CONF VULNID_TEST_NOW
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for h in "$W"/*/gnupg "$W"/gnupg-*; do
		[ -d "$h" ] && gpgconf --homedir "$h" --kill all 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }
G() { local h=$1; shift; gpg --homedir "$h" --batch --yes --no-tty --pinentry-mode loopback --passphrase '' "$@"; }
now() { date +%s.%N; }
rows=()
row() { rows+=("$(printf '| %s | %s | %s | %s | %s |' "$@")"); }

# instance NAME: a fresh instance that knows Alice's key, limits off
instance() {
	"$VULNID" init --prefix TEST --domain example.org "$W/$1" >/dev/null || exit 1
	sed -i 's/^rate_requests_per_hour = .*/rate_requests_per_hour = 0/; s/^rate_network_per_hour = .*/rate_network_per_hour = 0/; s/^rate_domain_per_hour = .*/rate_domain_per_hour = 0/; s/^loop_answers = .*/loop_answers = 100000/' "$W/$1/vulnid.conf"
	"$VULNID" -c "$W/$1/vulnid.conf" keys import "$W/alice.asc" >/dev/null
	"$VULNID" -c "$W/$1/vulnid.conf" key export >"$W/$1.robot.asc"
	G "$A" --import "$W/$1.robot.asc" 2>/dev/null
	ROBOT=$("$VULNID" -c "$W/$1/vulnid.conf" key export --fingerprint | tr -d ' \n')
}
peak() {	# peak RSS (KiB) and wall seconds of: filter CONF < MAIL
	python3 - "$FILTER" "$1" "$2" <<'PY'
import resource, subprocess, sys, time
t = time.time()
with open(sys.argv[3], "rb") as f:
    rc = subprocess.run([sys.argv[1], "-c", sys.argv[2], "-f", "alice@example.net"], stdin=f,
                        stderr=subprocess.DEVNULL).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.2f" % (time.time() - t))
PY
}
gpg_execs() {	# gpg processes of: filter CONF < MAIL
	strace -f -qq -e trace=execve -e signal=none -o "$W/strace.out" "$FILTER" -c "$1" -f alice@example.net <"$2" >/dev/null 2>&1
	grep 'execve("[^"]*/gpg"' "$W/strace.out" | grep -vc ' = -1 '
}
dbsize() { cat "$W/$1/vulnid.db" "$W/$1/vulnid.db-wal" 2>/dev/null | wc -c; }

A="$W/gnupg-alice"
mkdir -m 700 "$A"
G "$A" --quick-gen-key "Alice <alice@example.net>" ed25519 sign never 2>/dev/null
AFPR=$(gpg --homedir "$A" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
G "$A" --quick-add-key "$AFPR" cv25519 encr never 2>/dev/null
G "$A" --armor --export "$AFPR" >"$W/alice.asc"

# --- gpg processes per mail -----------------------------------------------------------
say "gpg processes per mail"
instance procs
printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Signed\n' >"$W/signed.txt"
printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Sealed\nEmbargo: 2027-06-01\n\nDetails.\n' >"$W/sealed.txt"
$PGPMAIL sign-mime "$A" "$AFPR" "$W/signed.txt" "$W/s0.eml" "Message-ID: <s0@example.net>"
"$FILTER" -c "$W/procs/vulnid.conf" -f alice@example.net <"$W/s0.eml"	# the key listed once
$PGPMAIL sign-mime "$A" "$AFPR" "$W/signed.txt" "$W/s1.eml" "Message-ID: <s1@example.net>"
$PGPMAIL encrypt-mime "$A" "$ROBOT" "$W/sealed.txt" "$W/e1.eml" --sign "$AFPR" "Message-ID: <e1@example.net>"
p_signed=$(gpg_execs "$W/procs/vulnid.conf" "$W/s1.eml")
p_sealed=$(gpg_execs "$W/procs/vulnid.conf" "$W/e1.eml")
row "signed request (PGP/MIME), gpg processes" "$p_signed" "-" "<= 1" "$([ "$p_signed" -le 1 ] && echo yes || echo no)"
row "encrypted, signed, embargoed request, gpg processes" "$p_sealed" "-" "<= 4" "$([ "$p_sealed" -le 4 ] && echo yes || echo no)"

# --- signed and sealed requests: the filter beside gpg --verify --------------------------
say "signed and sealed requests, $N each"
mkdir -p "$W/ms" "$W/me"
for i in $(seq 1 "$N"); do
	printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Signed %s\n' "$i" >"$W/t.txt"
	$PGPMAIL sign-mime "$A" "$AFPR" "$W/t.txt" "$W/ms/$i" "Message-ID: <ms$i@example.net>"
	printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Sealed %s\nEmbargo: 2027-06-01\n' "$i" >"$W/t.txt"
	$PGPMAIL encrypt-mime "$A" "$ROBOT" "$W/t.txt" "$W/me/$i" --sign "$AFPR" "Message-ID: <me$i@example.net>"
done
$PGPMAIL split-signed "$W/ms/1" "$W/v.data" "$W/v.sig"
t0=$(now); for i in $(seq 1 "$N"); do gpg --homedir "$W/procs/gnupg" --batch --quiet --verify "$W/v.sig" "$W/v.data" 2>/dev/null; done; tv=$(echo "($(now) - $t0) / $N * 1000" | bc -l)
t0=$(now); for i in $(seq 1 "$N"); do "$FILTER" -c "$W/procs/vulnid.conf" -f alice@example.net <"$W/ms/$i"; done; ts=$(echo "($(now) - $t0) / $N * 1000" | bc -l)
t0=$(now); for i in $(seq 1 "$N"); do "$FILTER" -c "$W/procs/vulnid.conf" -f alice@example.net <"$W/me/$i"; done; te=$(echo "($(now) - $t0) / $N * 1000" | bc -l)
row "signed request, filter (mean)" "$(printf '%.1f ms' "$ts")" "$(printf 'gpg --verify %.1f ms' "$tv")" "ratio $(printf '%.1fx' "$(echo "$ts / $tv" | bc -l)")" "-"
row "encrypted, signed, embargoed request, filter (mean)" "$(printf '%.1f ms' "$te")" "gpg --verify" "ratio $(printf '%.1fx' "$(echo "$te / $tv" | bc -l)")" "-"

# --- LMTP: signed requests over 8 sessions --------------------------------------------
say "LMTP, signed requests over 8 sessions"
instance lmtp
mkdir -p "$W/ml"
for i in $(seq 1 $((N * 4))); do
	printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: LMTP %s\n' "$i" >"$W/t.txt"
	$PGPMAIL sign-mime "$A" "$AFPR" "$W/t.txt" "$W/ml/$i" "Message-ID: <ml$i@example.net>"
done
"$LMTPD" -c "$W/lmtp/vulnid.conf" 2>>"$W/lmtpd.err" &
LPID=$!; PIDS="$PIDS $LPID"
for _ in $(seq 100); do [ -S "$W/lmtp/lmtp.sock" ] && break; sleep 0.05; done
out=$(python3 "$S/test/bench/lmtp-load.py" "$W/lmtp/lmtp.sock" "$W/ml" $((N * 4)) 8)
kill "$LPID"; wait "$LPID" 2>/dev/null
rate=$(echo "$out" | awk '{ for (i = 1; i < NF; i++) if ($i == "total_s") t = $(i + 1); print '"$((N * 4))"' / t }')
vrate=$(echo "1000 / $tv" | bc -l)
valid=$(sqlite3 "$W/lmtp/vulnid.db" "SELECT count(*) FROM records WHERE auth LIKE '%\"method\":\"pgp\"%'")
row "LMTP, signed requests, 8 sessions" "$(printf '%.0f req/s' "$rate")" "$(printf 'gpg --verify one after the other %.0f/s' "$vrate")" "$(printf '%.2fx (%s of %s verified)' "$(echo "$rate / $vrate" | bc -l)" "$valid" $((N * 4)))" "$(echo "$rate >= $vrate" | bc -l | sed 's/1/yes/;s/0/no/')"

# --- hostile mails --------------------------------------------------------------------
say "hostile mails"
instance hostile
printf 'Content-Type: text/plain; charset=utf-8\n\nProduct: Inner\n' >"$W/inner.txt"
hostile() {	# LABEL MAIL
	local before after r
	before=$(dbsize hostile)
	r=$(peak "$W/hostile/vulnid.conf" "$2")
	after=$(dbsize hostile)
	set -- "$1" $r
	row "$1" "exit $2, $4 s" "$((${3} / 1024)) MiB peak RSS" "database +$(( (after - before) / 1024 )) KiB" \
		"$([ "$2" -eq 0 ] && [ "$(echo "$4 < 15" | bc -l)" = 1 ] && [ "$3" -lt 262144 ] && echo yes || echo no)"
}
$PGPMAIL encrypt-bomb "$A" "$ROBOT" text 157286400 "$W/bomb.eml" "Message-ID: <bomb@example.net>"
hostile "encrypted request of $(( $(wc -c <"$W/bomb.eml") / 1024 )) KiB decrypting to 150 MiB" "$W/bomb.eml"
$PGPMAIL encrypt-bomb "$A" "$ROBOT" parts 1000000 "$W/parts.eml" "Message-ID: <parts@example.net>"
hostile "encrypted request holding a million MIME parts" "$W/parts.eml"
$PGPMAIL sign-mime "$A" "$AFPR" "$W/inner.txt" "$W/flood.eml" --repeat 20000 "Message-ID: <flood@example.net>"
hostile "multipart/signed with 20,000 signatures" "$W/flood.eml"
$PGPMAIL encrypt-flood "$A" "$AFPR" "$ROBOT" 20000 "$W/inner.txt" "$W/eflood.eml" "Message-ID: <eflood@example.net>"
hostile "20,000 signatures inside the encryption (stopped at the ninth)" "$W/eflood.eml"

# --- LMTP: a plain mail and SIGTERM while gpg hangs on a mail --------------------------
# (test/faults/libfault.so makes every gpg --decrypt hang: whatever keeps
# gpg busy, the server must go on and stop)
say "LMTP beside a mail gpg hangs on"
LIBFAULT="$B/test/faults/libfault.so"
sed -i 's/^openpgp_time_limit = .*/openpgp_time_limit = 600/' "$W/lmtp/vulnid.conf"
$PGPMAIL encrypt-mime "$A" "$ROBOT" "$W/inner.txt" "$W/slow.eml" "Message-ID: <slow@example.net>"
LD_PRELOAD="$LIBFAULT" FAULT_OPS=stall FAULT_PATH="*/gpg" FAULT_ARGV=--decrypt "$LMTPD" -c "$W/lmtp/vulnid.conf" 2>>"$W/lmtpd.err" &
LPID=$!; PIDS="$PIDS $LPID"
for _ in $(seq 100); do [ -S "$W/lmtp/lmtp.sock" ] && break; sleep 0.05; done
python3 "$S/test/lmtp-client.py" "$W/lmtp/lmtp.sock" --from alice@example.net --to request@example.org <"$W/slow.eml" >"$W/slow.out" 2>&1 &
PIDS="$PIDS $!"
sleep 1
printf 'From: bob@example.net\nTo: request@example.org\nSubject: plain\nMessage-ID: <plain@example.net>\n\nProduct: Plain\n' >"$W/plain.eml"
t0=$(now)
python3 "$S/test/lmtp-client.py" "$W/lmtp/lmtp.sock" --from bob@example.net --to request@example.org <"$W/plain.eml" >"$W/plain.out" 2>&1
tp=$(echo "$(now) - $t0" | bc -l)
row "LMTP: a plain mail while gpg hangs on another" "$(printf '%.2f s to %s' "$tp" "$(grep -o 'END [^ ]* [0-9]*' "$W/plain.out" | cut -d' ' -f3)")" "-" "<= 10 s" "$([ "$(echo "$tp <= 10" | bc -l)" = 1 ] && grep -q "END.* 250 " "$W/plain.out" && echo yes || echo no)"
t0=$(now)
kill -TERM "$LPID"; wait "$LPID" 2>/dev/null
tt=$(echo "$(now) - $t0" | bc -l)
row "LMTP: SIGTERM while gpg hangs on a mail" "$(printf '%.2f s to exit' "$tt")" "that mail: $(grep -o 'END [^ ]* [0-9]*' "$W/slow.out" | cut -d' ' -f3)" "<= 10 s" "$([ "$(echo "$tt <= 10" | bc -l)" = 1 ] && echo yes || echo no)"

printf '\n| OpenPGP | vulnid | beside | ratio / more | target met |\n|---|---|---|---|---|\n'
printf '%s\n' "${rows[@]}"
