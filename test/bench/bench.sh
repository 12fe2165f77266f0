#!/bin/bash
# bench.sh BUILDDIR SRCDIR - the benchmark suite (`make bench`): vulnid
# side by side with a baseline on the same mails, medians and ratios, in a
# table.  Not a test: it prints numbers and says which targets are met.
#
#   BENCH_RUNS=N      runs per series (default 40; large mails fewer)
#   BENCH_BIG=0       skip the 1,000,000-entry database (about 20 s, 1.5 GB)
#                     and the 50 MiB mails
#   BENCH_QUEUE_RUN=0 skip the queue run rows
#   BENCH_KEEP=DIR    keep the work directory (default: a temporary one)
#   BENCH_BEFORE=DIR  a build directory of an earlier tree: its filter runs
#                     the plain and signed requests too, interleaved with
#                     this one's, for a before/after comparison in one run
#                     (and the volume rows, on instances of its own)
#   BENCH_VOLUME=0    skip the volume rows (20,000 mails; BENCH_VOLUME_MAILS)
#
# Rows (targets from the issue, on a 2-core machine):
#   plain 4 KiB, 2 MiB request  vs procmail into a Maildir       <= 3x
#   50 MiB request              peak RSS                         <= 16 MiB
#   signed request              vs gpg --verify of the signature <= 3x
#   signing a reply             through gpg-agent, median         <= 1.5 ms
#                               (beside the gpg process it replaced)
#   8 filters at once           requests/s, IDs dense and unique >= 300/s
#   1,000,000 entries           vs 1,000 entries                 <= 1.2x
#   vulnid queue run            vs smtp-source, same smtp-sink    >= 50%
#   LMTP, per mail (one session) vs a procmail run               <= 1x
#   LMTP, 8 sessions at once     requests/s, IDs dense and unique >= 1000/s
#   LMTP, signed, 8 sessions     requests/s                       >= 150/s
#   volume (test/bench/volume.sh; BENCH_VOLUME=0 skips it):
#     instructions per mail (callgrind) at 20,000 this hour with the
#     replies queued                vs 100 this hour                 <= 1.2x
#     LMTP fill of 20,000, 8 sessions: last tenth vs first tenth      >= 0.8x
#     queue run over 20,000 queued, relay refusing                   < 60 s
set -u
B=$(cd "$1" && pwd) S=$(cd "$2" && pwd)
FILTER="$B/src/vulnid-filter" VULNID="$B/src/vulnid" BR="$B/test/bench/benchrun"
SB="$B/test/bench/signbench"
LIBFAULT="$B/test/faults/libfault.so"
N=${BENCH_RUNS:-40}
W=${BENCH_KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/vulnid-bench.XXXXXX")}
mkdir -p "$W"
R="$W/results.tsv"
: >"$R"
export VULNID_TEMPLATE_DIR="$S/templates"
unset VULNID_CONF VULNID_TEST_NOW
PIDS=""
Y=$(date -u +%Y)
SMTP_SINK=$(command -v smtp-sink || echo /usr/sbin/smtp-sink)
SMTP_SOURCE=$(command -v smtp-source || echo /usr/sbin/smtp-source)

cleanup() {
	for h in "$W"/*/gnupg "$W"/gnupg-*; do
		[ -d "$h" ] && gpgconf --homedir "$h" --kill all 2>/dev/null
	done
	for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }

# instance NAME [sign [init options...]]: a fresh instance in $W/NAME
# (maildir transport).
instance() {
	local name=$1 sign=${2:-pgpmime}
	shift
	[ $# -eq 0 ] || shift
	rm -rf "$W/$name"
	"$VULNID" init --prefix TEST --domain example.org "$@" "$W/$name" >/dev/null || exit 1
	sed -i "s/^sign = .*/sign = $sign/" "$W/$name/vulnid.conf"
}
setconf() { sed -i "s|^$2 = .*|$2 = $3|" "$W/$1/vulnid.conf"; }

# mails DIR TAG COUNT SIZE: COUNT distinct requests of about SIZE bytes.
mails() {
	mkdir -p "$1"
	python3 - "$@" <<'PY'
import sys
d, tag, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
line = "A description line of a plausible report, about seventy characters..\n"
for i in range(1, count + 1):
    # one sender per mail, as from many researchers (the robot limits
    # requests per sender and hour)
    head = (f"From: Researcher {i} <r{i}.{tag}@example.net>\nTo: request@example.org\n"
            f"Subject: {tag} request {i}\nMessage-ID: <{tag}-{i}@example.net>\n"
            "Date: Mon, 01 Jun 2026 10:00:00 +0000\nMIME-Version: 1.0\n"
            "Content-Type: text/plain; charset=utf-8\n\n")
    body = f"Product: Bench {tag}\nVersion: 1.{i}\n\n"
    n = max(0, size - len(head) - len(body))
    body += line * (n // len(line)) + "x" * (n % len(line) - 1 if n % len(line) else 0) + ("\n" if n % len(line) else "")
    open(f"{d}/{i}", "w").write(head + body)
PY
}

# series KEY RUNS STDIN-PATTERN CMD...: benchrun; KEY's line goes to $R.
series() {
	local key=$1 runs=$2 in=$3 out
	shift 3
	out=$("$BR" -n "$runs" -i "$in" -e "$W/$key.err" -- "$@") || say "$key: some runs failed: $(tail -n 3 "$W/$key.err")"
	printf '%s\t%s\n' "$key" "$out" >>"$R"
	say "  $key: $out"
}

gpghome() { echo "$W/$1/gnupg"; }

# nogpg COMMAND...: COMMAND with every exec of gpg failing at once (as if
# GnuPG were not installed; test/faults/libfault.so), to tell gpg's cost
# from the rest.  The forks remain.
nogpg() {
	(
		export LD_PRELOAD="$LIBFAULT" FAULT_OPS=exec FAULT_PATH='*/gpg*' FAULT_ERRNO=ENOENT
		"$@"
	)
}

[ -f "$LIBFAULT" ] || { say "bench: $LIBFAULT is missing (make test/faults/libfault.so)"; exit 1; }
"$FILTER" --version >/dev/null || exit 1
series startup "$N" /dev/null "$FILTER" --version

# --- 1. plain request, 4 KiB and 2 MiB, vs procmail ------------------------------
say "plain requests"
mkdir -p "$W/pm/Maildir"
printf 'MAILDIR=%s\nDEFAULT=%s/Maildir/\nLOGFILE=/dev/null\nVERBOSE=off\n' "$W/pm" "$W/pm" >"$W/pm/rc"
mails "$W/m4k" p4k $((N * 4)) 4096
# BEFORE: the earlier tree's programs, when given
BEFORE=${BENCH_BEFORE:+$(cd "$BENCH_BEFORE" && pwd)}
# before_instance NAME [sign]: an instance made by the earlier vulnid
before_instance() {
	rm -rf "$W/$1"
	"$BEFORE/src/vulnid" init --prefix TEST --domain example.org "$W/$1" >/dev/null || exit 1
	sed -i "s/^sign = .*/sign = ${2:-pgpmime}/" "$W/$1/vulnid.conf"
}

instance plain
[ -z "$BEFORE" ] || before_instance plainbefore
instance plainnosign none
instance plainnogpg none
# interleave the series so that drift hits all alike
for part in 0 1; do
	ln -sfn "$W/m4k" "$W/m4k-$part"
	series "procmail-4k-$part" "$N" "$W/m4k/%d" procmail -m "$W/pm/rc"
	series "filter-4k-$part" "$N" "$W/m4k-$part/%d" "$FILTER" -c "$W/plain/vulnid.conf" -f alice@example.net -r request@example.org
	series "filter-4k-nosign-$part" "$N" "$W/m4k-$part/%d" "$FILTER" -c "$W/plainnosign/vulnid.conf" -f alice@example.net -r request@example.org
	nogpg series "filter-4k-nogpg-$part" "$N" "$W/m4k-$part/%d" "$FILTER" -c "$W/plainnogpg/vulnid.conf" -f alice@example.net -r request@example.org
	[ -z "$BEFORE" ] || series "before-4k-$part" "$N" "$W/m4k-$part/%d" "$BEFORE/src/vulnid-filter" -c "$W/plainbefore/vulnid.conf" -f alice@example.net -r request@example.org
	# the next half uses new mails (the same ones again would be duplicates)
	mails "$W/m4k" p4k$part $((N * 4)) 4096
done
M2=$(( N / 4 > 5 ? N / 4 : 5 ))
mails "$W/m2m" p2m "$M2" $((2 * 1024 * 1024))
series procmail-2m "$M2" "$W/m2m/%d" procmail -m "$W/pm/rc"
# the whole 2 MiB read as the request (by default only its first 512 KiB)
setconf plain max_request_text 4194304
series filter-2m "$M2" "$W/m2m/%d" "$FILTER" -c "$W/plain/vulnid.conf" -f alice@example.net -r request@example.org

# --- 2. 50 MiB: peak RSS --------------------------------------------------------------
if [ "${BENCH_BIG:-1}" != 0 ]; then
say "50 MiB request"
# as it comes: a short request with a 50 MiB (encoded) attachment
mkdir -p "$W/m50a"
for i in 1 2; do
	python3 - "$W/m50a/$i" "$i" <<'PY'
import base64, os, sys
path, i = sys.argv[1], sys.argv[2]
with open(path, "w") as f:
    f.write(f"From: Researcher <big{i}@example.net>\nTo: request@example.org\nSubject: big {i}\n"
            f"Message-ID: <big-attachment-{i}@example.net>\nMIME-Version: 1.0\n"
            'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n'
            "Product: Big\n\nThe core dump is attached.\n--b\nContent-Type: application/octet-stream\n"
            'Content-Disposition: attachment; filename="core"\nContent-Transfer-Encoding: base64\n\n')
    chunk = os.urandom(57 * 1024)
    for _ in range((50 * 1024 * 1024) // (len(chunk) * 4 // 3 + 1024)):
        f.write(base64.encodebytes(chunk).decode())
    f.write("--b--\n")
PY
done
# and a 50 MiB request text (a description of 50 MiB)
mails "$W/m50m" p50m 2 $((50 * 1024 * 1024))
instance big
setconf big max_message_size 104857600
series procmail-50m 2 "$W/m50a/%d" procmail -m "$W/pm/rc"
series filter-50m 2 "$W/m50a/%d" "$FILTER" -c "$W/big/vulnid.conf" -f alice@example.net -r request@example.org
series filter-50m-text 2 "$W/m50m/%d" "$FILTER" -c "$W/big/vulnid.conf" -f alice@example.net -r request@example.org
rm -rf "$W/m50m" "$W/m50a" "$W/big"
fi

# --- 3. signed request vs gpg --verify --------------------------------------------------
say "signed requests"
instance signed
instance signednosign none
[ -z "$BEFORE" ] || before_instance signedbefore
ALICE="$W/gnupg-alice"
mkdir -p "$ALICE" && chmod 700 "$ALICE"
gpg --homedir "$ALICE" --batch --passphrase '' --quick-gen-key "Alice Researcher <alice@example.net>" ed25519 sign never 2>/dev/null
gpg --homedir "$ALICE" --batch --export --armor alice@example.net >"$W/alice.asc"
for i in signed signednosign ${BEFORE:+signedbefore}; do
	gpg --homedir "$(gpghome $i)" --batch --import "$W/alice.asc" 2>/dev/null
done
mkdir -p "$W/msig"
for i in $(seq 1 $((N * 2))); do
	printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nProduct: Signed %s\r\nVersion: 1.%s\r\n\r\nA signed request.\r\n' \
		"$i" "$i" >"$W/msig/part$i"
	gpg --homedir "$ALICE" --batch --armor --detach-sign -o "$W/msig/sig$i" "$W/msig/part$i" 2>/dev/null
	{
		printf 'From: Alice Researcher <alice@example.net>\nTo: request@example.org\nSubject: signed %s\n' "$i"
		printf 'Message-ID: <signed-%s@example.net>\nMIME-Version: 1.0\n' "$i"
		printf 'Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature"; boundary="sig"\n\n'
		printf -- '--sig\n'
		tr -d '\r' <"$W/msig/part$i"
		printf -- '\n--sig\nContent-Type: application/pgp-signature; name="signature.asc"\n\n'
		cat "$W/msig/sig$i"
		printf -- '\n--sig--\n'
	} >"$W/msig/$i"
done
# in two halves, interleaved (as the plain requests), so that drift hits
# all series alike: mails 1..N for the signing instances, N+1..2N for
# the one that does not sign
H=$(( N / 2 > 1 ? N / 2 : 1 ))
for part in 0 1; do
	mkdir -p "$W/msig-$part" "$W/msig2-$part"
	for i in $(seq 1 "$H"); do
		ln -sf "$W/msig/$((part * H + i))" "$W/msig-$part/$i"
		ln -sf "$W/msig/$((N + part * H + i))" "$W/msig2-$part/$i"
	done
	series "gpg-verify-$part" "$H" /dev/null gpg --homedir "$(gpghome signed)" --batch --quiet --verify "$W/msig/sig1" "$W/msig/part1"
	series "filter-signed-$part" "$H" "$W/msig-$part/%d" "$FILTER" -c "$W/signed/vulnid.conf" -f alice@example.net -r request@example.org
	series "filter-signed-nosign-$part" "$H" "$W/msig2-$part/%d" "$FILTER" -c "$W/signednosign/vulnid.conf" -f alice@example.net -r request@example.org
	[ -z "$BEFORE" ] || series "before-signed-$part" "$H" "$W/msig-$part/%d" "$BEFORE/src/vulnid-filter" -c "$W/signedbefore/vulnid.conf" -f alice@example.net -r request@example.org
done
AUTH=$(sqlite3 "$W/signed/vulnid.db" "SELECT auth FROM records ORDER BY id DESC LIMIT 1")

# --- 3b. signing a reply: through gpg-agent, and with a gpg process ------------------------
# test/bench/signbench times crypto_sign_mime() on an acknowledgement in
# one process: a new connection to gpg-agent per signature (as the one
# signature of a filter process) and a kept one (a resident server).  The
# gpg process it replaced ran `gpg --local-user FPR! --detach-sign` on the
# same entity, timed here from fork to exit.
say "signing a reply"
instance signrsa pgpmime --key-algo rsa3072
for k in signed:ed25519 signrsa:rsa3072; do
	inst=${k%%:*} algo=${k#*:}
	fpr=$(gpg --homedir "$(gpghome "$inst")" --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	for round in 0 1; do
		out=$("$SB" -c "$W/$inst/vulnid.conf" -n $((N * 5)) -o "$W/entity-$algo" 2>"$W/sign-$algo.err") ||
			say "sign-agent-$algo: some signatures failed: $(tail -n 3 "$W/sign-$algo.err")"
		printf '%s\t%s\n' "sign-agent-$algo-$round" "$out" >>"$R"
		say "  sign-agent-$algo-$round: $out"
		series "sign-gpg-$algo-$round" "$N" "$W/entity-$algo" gpg --homedir "$(gpghome "$inst")" --batch --no-tty \
			--disable-dirmngr --status-fd=2 --armor --local-user "$fpr!" --detach-sign
		out=$("$SB" -c "$W/$inst/vulnid.conf" -n $((N * 5)) -k 2>>"$W/sign-$algo.err")
		printf '%s\t%s\n' "sign-kept-$algo-$round" "$out" >>"$R"
		say "  sign-kept-$algo-$round: $out"
	done
done

# --- 4. 8 filters at once -----------------------------------------------------------------------
say "8 filters at once"
C=${BENCH_CONCURRENT:-400}
for cfg in pgpmime none; do
	instance "par-$cfg" "$cfg"
	mails "$W/mpar-$cfg" "par$cfg" "$C" 4096
	out=$("$BR" -n "$C" -j 8 -i "$W/mpar-$cfg/%d" -e "$W/par-$cfg.err" -- "$FILTER" -c "$W/par-$cfg/vulnid.conf" -f alice@example.net -r request@example.org)
	db="$W/par-$cfg/vulnid.db"
	check="entries $(sqlite3 "$db" "SELECT count(*) FROM entries") distinct $(sqlite3 "$db" "SELECT count(DISTINCT id) FROM entries") min $(sqlite3 "$db" "SELECT min(number) FROM entries") max $(sqlite3 "$db" "SELECT max(number) FROM entries") messages $(sqlite3 "$db" "SELECT count(DISTINCT message) FROM entries")"
	printf '%s\t%s %s\n' "parallel-$cfg" "$out" "$check" >>"$R"
	say "  parallel-$cfg: $out | $check"
done

# --- 5. assignment with 1,000 vs 1,000,000 entries ------------------------------------------------
if [ "${BENCH_BIG:-1}" != 0 ]; then
	say "1,000 vs 1,000,000 entries (generating the databases)"
	for n in 1000 1000000; do
		instance "db$n" none
		bash "$S/test/bench/gen-db.sh" "$W/db$n/vulnid.db" "$n" "$Y" || say "gen-db $n failed"
		mails "$W/mdb$n" "db$n" "$N" 4096
	done
	for n in 1000 1000000; do
		nogpg series "assign-$n" "$N" "$W/mdb$n/%d" "$FILTER" -c "$W/db$n/vulnid.conf" -f alice@example.net -r request@example.org
	done
	printf '%s\tmb %s\n' dbsize "$(du -m "$W/db1000000/vulnid.db" | cut -f1)" >>"$R"
	rm -rf "$W/db1000000"
fi

# --- 6. queue run vs smtp-source to the same smtp-sink -----------------------------------------------
if [ -x "$SMTP_SINK" ] && [ -x "$SMTP_SOURCE" ] && [ "${BENCH_QUEUE_RUN:-1}" != 0 ]; then
	say "queue run vs smtp-source"
	Q=${BENCH_QUEUE:-500}
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$SMTP_SINK" -u nobody 127.0.0.1:"$port" 256 >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.5
	# QR rounds (default 3), each with its own QUEUE mails queued while
	# the server was down; the row gives the median round
	QR=${BENCH_QUEUE_ROUNDS:-3}
	for cfg in none pgpmime; do
		instance "q-$cfg" "$cfg"
		setconf "q-$cfg" starttls no
		times=""
		for round in $(seq 1 "$QR"); do
			setconf "q-$cfg" transport "smtp://127.0.0.1:1"
			mails "$W/mq-$cfg-$round" "q$cfg$round" "$Q" 2048
			"$BR" -n "$Q" -j 2 -i "$W/mq-$cfg-$round/%d" -- "$FILTER" -c "$W/q-$cfg/vulnid.conf" -f alice@example.net >/dev/null
			setconf "q-$cfg" transport "smtp://127.0.0.1:$port"
			later=$(date -u -d "+10 minutes" +%Y-%m-%dT%H:%M:%SZ)
			out=$("$BR" -n 1 -- env VULNID_TEST_NOW="$later" "$VULNID" -c "$W/q-$cfg/vulnid.conf" queue run)
			times="$times $(echo "$out" | sed -n 's/.*median_ms \([0-9.]*\).*/\1/p')"
			say "  queue-$cfg round $round: $out"
		done
		size=$(sqlite3 "$W/q-$cfg/vulnid.db" "SELECT avg(length(data)) FROM outbox" | cut -d. -f1)
		sent=$(sqlite3 "$W/q-$cfg/vulnid.db" "SELECT count(*) FROM outbox WHERE status = 'delivered'")
		med=$(printf '%s\n' $times | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		printf '%s\t%s sent %s size %s per_round %s\n' "queue-$cfg" "runs $QR median_ms $med" "$sent" "$size" "$Q" >>"$R"
		say "  queue-$cfg: median $med ms of$times; sent $sent of $((Q * QR)), $size bytes each"
	done
	size=$(sqlite3 "$W/q-none/vulnid.db" "SELECT avg(length(data)) FROM outbox" | cut -d. -f1)
	for mode in one-connection new-connection; do
		flag=-d
		[ "$mode" = one-connection ] || flag=
		# shellcheck disable=SC2086
		out=$("$BR" -n "$QR" -- "$SMTP_SOURCE" $flag -s 1 -m "$Q" -l "$size" -f request-bounces@example.org \
			-t alice@example.net 127.0.0.1:"$port")
		printf '%s\t%s\n' "smtp-source-$mode" "$out" >>"$R"
		say "  smtp-source-$mode: $out"
	done
fi

# --- 8. LMTP: vulnid-lmtpd against smtp-source -L and lmtp-load.py ---------------------------------------
if [ -x "$SMTP_SOURCE" ]; then
	say "LMTP"
	LMTPD="$B/src/vulnid-lmtpd"
	LR=${BENCH_LMTP_ROUNDS:-3}
	LN=${BENCH_LMTP_MAILS:-1000}
	# lmtpd_start NAME: the server of instance NAME (its rate limit off:
	# smtp-source sends every mail from one sender)
	lmtpd_start() {
		setconf "$1" rate_requests_per_hour 0
		setconf "$1" rate_network_per_hour 0
		setconf "$1" rate_domain_per_hour 0
		setconf "$1" loop_answers 100000
		setconf "$1" unverified_answer_bytes 0
		"$LMTPD" -c "$W/$1/vulnid.conf" 2>>"$W/$1.lmtpd.err" &
		LPID=$!
		PIDS="$PIDS $LPID"
		for _ in $(seq 100); do [ -S "$W/$1/lmtp.sock" ] && break; sleep 0.05; done
	}
	lmtpd_stop() { kill "$LPID"; wait "$LPID" 2>/dev/null; }
	now() { date +%s.%N; }
	medof() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	idcheck() {
		local db="$W/$1/vulnid.db"
		echo "entries $(sqlite3 "$db" "SELECT count(*) FROM entries") distinct $(sqlite3 "$db" "SELECT count(DISTINCT id) FROM entries") min $(sqlite3 "$db" "SELECT min(number) FROM entries") max $(sqlite3 "$db" "SELECT max(number) FROM entries") messages $(sqlite3 "$db" "SELECT count(DISTINCT message) FROM entries")"
	}
	for cfg in none pgpmime; do
		instance "lmtp-$cfg" "$cfg"
		lmtpd_start "lmtp-$cfg"
		sock="unix:$W/lmtp-$cfg/lmtp.sock"
		# per mail: one session, one mail after the other (what a
		# procmail run is to the pipe filter), against the procmail runs
		per=""
		for round in $(seq 1 "$LR"); do
			t0=$(now)
			"$SMTP_SOURCE" -L -d -s 1 -m 200 -l 4096 -f bench@example.net -t request@example.org "$sock" || say "smtp-source failed"
			per="$per $(echo "($(now) - $t0) * 1000 / 200" | bc -l)"
		done
		printf '%s\tmedian_ms %s\n' "lmtp-1-$cfg" "$(medof $per)" >>"$R"
		say "  lmtp-1-$cfg: ms per mail$per"
		# 8 sessions at once
		rates=""
		for round in $(seq 1 "$LR"); do
			t0=$(now)
			"$SMTP_SOURCE" -L -d -s 8 -m "$LN" -l 4096 -f bench@example.net -t request@example.org "$sock" || say "smtp-source failed"
			rates="$rates $(echo "$LN / ($(now) - $t0)" | bc -l)"
		done
		lmtpd_stop
		total=$((LN * LR + 200 * LR))
		printf '%s\trate %s runs %s %s\n' "lmtp-8-$cfg" "$(medof $rates)" "$total" "$(idcheck "lmtp-$cfg")" >>"$R"
		say "  lmtp-8-$cfg: req/s$rates; $(idcheck "lmtp-$cfg"); $(tail -n 1 "$W/lmtp-$cfg.lmtpd.err")"
	done
	# signed requests (PGP/MIME, by a key the robot knows), 8 sessions
	SN=${BENCH_LMTP_SIGNED:-400}
	instance lmtp-signed pgpmime
	gpg --homedir "$(gpghome lmtp-signed)" --batch --import "$W/alice.asc" 2>/dev/null
	mkdir -p "$W/mlsig"
	for i in $(seq 1 "$SN"); do
		printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nProduct: Signed LMTP %s\r\nVersion: 2.%s\r\n\r\nA signed request.\r\n' \
			"$i" "$i" >"$W/mlsig/part$i"
		gpg --homedir "$ALICE" --batch --armor --detach-sign -o "$W/mlsig/sig$i" "$W/mlsig/part$i" 2>/dev/null
		{
			printf 'From: Alice Researcher <alice@example.net>\nTo: request@example.org\nSubject: signed lmtp %s\n' "$i"
			printf 'Message-ID: <signed-lmtp-%s@example.net>\nMIME-Version: 1.0\n' "$i"
			printf 'Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature"; boundary="sig"\n\n'
			printf -- '--sig\n'
			tr -d '\r' <"$W/mlsig/part$i"
			printf -- '\n--sig\nContent-Type: application/pgp-signature; name="signature.asc"\n\n'
			cat "$W/mlsig/sig$i"
			printf -- '\n--sig--\n'
		} >"$W/mlsig/$i"
	done
	setconf lmtp-signed rate_requests_per_hour 0
	lmtpd_start lmtp-signed
	out=$(python3 "$S/test/bench/lmtp-load.py" "$W/lmtp-signed/lmtp.sock" "$W/mlsig" "$SN" 8)
	lmtpd_stop
	printf '%s\t%s %s\n' lmtp-signed "$out" "$(idcheck lmtp-signed)" >>"$R"
	say "  lmtp-signed: $out; $(idcheck lmtp-signed); auth $(sqlite3 "$W/lmtp-signed/vulnid.db" "SELECT auth FROM records LIMIT 1")"
fi

# --- 9. volume: what a mail costs after 20,000 this hour (test/bench/volume.sh) -----------------------
if [ -x "$SMTP_SOURCE" ] && [ "${BENCH_VOLUME:-1}" != 0 ] && command -v valgrind >/dev/null; then
	say "volume"
	BENCH_BEFORE=$BEFORE bash "$S/test/bench/volume.sh" "$B" "$S" "$W" "$R"
fi

# --- 7. hostile input: each costs seconds and a few MiB (T930) ---------------------------------------
say "hostile input"
instance hostile
setconf hostile max_message_size 30000000
mkdir -p "$W/hostile"
for k in cc line subject warnings parts to; do
	python3 "$S/test/hostile/gen-hostile.py" "$k" "$W/hostile/$k"
	series "hostile-$k" 3 "$W/hostile/$k" "$FILTER" -c "$W/hostile/vulnid.conf" -f mallory@example.net -r request@example.org
	rm -f "$W/hostile/$k"
done
rm -rf "$W/hostile"

# --- the table --------------------------------------------------------------------------------------------
python3 - "$R" "$N" "${AUTH:-}" <<'PY'
import sys, re, os
path, n, auth = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
for line in open(path):
    key, rest = line.rstrip("\n").split("\t", 1)
    d = {}
    toks = rest.split()
    for i in range(0, len(toks) - 1, 2):
        try:
            d[toks[i]] = float(toks[i + 1])
        except ValueError:
            d[toks[i]] = toks[i + 1]
    rows[key] = d

def med(*keys):
    v = [rows[k]["median_ms"] for k in keys if k in rows]
    v.sort()
    return sum(v) / len(v) if v else None

def fmt(x, unit=" ms"):
    return "-" if x is None else f"{x:.1f}{unit}"

out = []
def row(what, vulnid, base, ratio, target, met):
    out.append((what, vulnid, base, ratio, target, met))

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

pm = med("procmail-4k-0", "procmail-4k-1")
for key, label in (("filter-4k", "plain 4 KiB request (default: reply signed)"),
                   ("filter-4k-nosign", "plain 4 KiB request, [crypto] sign = none"),
                   ("filter-4k-nogpg", "plain 4 KiB request, gpg never started"),
                   ("before-4k", "plain 4 KiB request, the earlier tree (BENCH_BEFORE)")):
    if key + "-0" not in rows:
        continue
    v = med(key + "-0", key + "-1")
    r = ratio(v, pm)
    row(label, fmt(v), "procmail " + fmt(pm), f"{r:.1f}x" if r else "-", "<= 3x", "yes" if r and r <= 3 else "no")
v, b = med("filter-2m"), med("procmail-2m")
r = ratio(v, b)
row("plain 2 MiB request", fmt(v), "procmail " + fmt(b), f"{r:.1f}x" if r else "-", "<= 3x", "yes" if r and r <= 3 else "no")
prss = rows.get("procmail-50m", {}).get("rss_max_kb", 0) / 1024
for key, label in (("filter-50m", "50 MiB mail (attachment): peak RSS"), ("filter-50m-text", "50 MiB request text: peak RSS")):
    if key in rows:
        rss = rows[key]["rss_max_kb"] / 1024
        row(label, f"{rss:.1f} MiB", f"procmail {prss:.1f} MiB", f"{rows[key]['median_ms'] / 1000:.1f} s",
            "<= 16 MiB", "yes" if rss <= 16 else "no")
st = med("startup")
if st is not None:
    row("vulnid-filter --version (start-up only)", fmt(st), "procmail " + fmt(pm), f"{ratio(st, pm):.1f}x", "-", "-")
g = med("gpg-verify-0", "gpg-verify-1")
for key, label in (("filter-signed", "signed 4 KiB request (reply signed)"),
                   ("filter-signed-nosign", "signed 4 KiB request, sign = none"),
                   ("before-signed", "signed 4 KiB request, the earlier tree (BENCH_BEFORE)")):
    if key + "-0" not in rows:
        continue
    v = med(key + "-0", key + "-1")
    r = ratio(v, g)
    row(label, fmt(v), "gpg --verify " + fmt(g), f"{r:.1f}x" if r else "-", "<= 3x", "yes" if r and r <= 3 else "no")
def fmt2(x):
    return "-" if x is None else f"{x:.2f} ms"
for algo, name in (("ed25519", "Ed25519, the default"), ("rsa3072", "RSA 3072")):
    a, g = med(f"sign-agent-{algo}-0", f"sign-agent-{algo}-1"), med(f"sign-gpg-{algo}-0", f"sign-gpg-{algo}-1")
    kept = med(f"sign-kept-{algo}-0", f"sign-kept-{algo}-1")
    if a is None:
        continue
    r = ratio(a, g)
    row(f"signing a reply through the agent ({name})", fmt2(a), "gpg process " + fmt2(g),
        f"{r:.2f}x" if r else "-", "<= 1.5 ms", "yes" if a <= 1.5 else "no")
    row(f"  the same, connection kept ({name})", fmt2(kept), "gpg process " + fmt2(g),
        f"{ratio(kept, g):.2f}x" if kept and g else "-", "-", "-")
for cfg, label in (("pgpmime", "8 filters at once (reply signed)"), ("none", "8 filters at once, sign = none")):
    d = rows.get("parallel-" + cfg)
    if d:
        rate = d["runs"] / d["total_s"]
        ok = d["entries"] == d["runs"] and d["distinct"] == d["runs"] and d["min"] == 1 and d["max"] == d["runs"] and d["messages"] == d["runs"]
        row(label, f"{rate:.0f} req/s", f"{int(d['runs'])} mails, IDs 1..{int(d['max'])} {'dense, unique' if ok else 'WRONG'}",
            f"median {d['median_ms']:.0f} ms", ">= 300/s", "yes" if rate >= 300 and ok else "no")
a, b = med("assign-1000000"), med("assign-1000")
r = ratio(a, b)
if a is not None:
    row("assignment, 1,000,000 entries", fmt(a), "1,000 entries " + fmt(b), f"{r:.2f}x" if r else "-", "<= 1.2x",
        "yes" if r and r <= 1.2 else "no")
s1 = rows.get("smtp-source-one-connection")
s2 = rows.get("smtp-source-new-connection")
for cfg, label in (("none", "queue run to smtp-sink, sign = none"), ("pgpmime", "queue run to smtp-sink (signed)")):
    d = rows.get("queue-" + cfg)
    if d and s1:
        q = d["per_round"]
        rate = q / (d["median_ms"] / 1000)
        srate = q / (s1["median_ms"] / 1000)
        srate2 = q / (s2["median_ms"] / 1000) if s2 else 0
        r = rate / srate
        row(label, f"{rate:.0f} mails/s", f"smtp-source {srate:.0f}/s one conn. ({srate2:.0f}/s new conn.)",
            f"{100 * r:.0f}%", ">= 50%", "yes" if r >= 0.5 else "no")

for k, label in (("cc", "25 MB of Cc: fields (under the limits)"), ("line", "one 25 MB header line"),
                 ("subject", "a 25 MB Subject, 3-byte lines"), ("warnings", "1,000,000 parser warnings"),
                 ("parts", "a million MIME parts"), ("to", "a To: of a million addresses")):
    d = rows.get("hostile-" + k)
    if d:
        rss = d["rss_max_kb"] / 1024
        secs = d["median_ms"] / 1000
        row("hostile: " + label, f"{secs:.2f} s, {rss:.1f} MiB", "-", "-", "<= 10 s, <= 64 MiB",
            "yes" if secs <= 10 and rss <= 64 else "no")
lp = pm
for cfg, label in (("none", "LMTP, per mail, one session, sign = none"), ("pgpmime", "LMTP, per mail, one session (reply signed)")):
    v = med("lmtp-1-" + cfg)
    r = ratio(v, lp)
    if v is not None:
        row(label, fmt(v), "procmail " + fmt(lp), f"{r:.2f}x" if r else "-", "<= 1x", "yes" if r and r <= 1 else "no")
for cfg, label in (("none", "LMTP, 8 sessions at once, sign = none"), ("pgpmime", "LMTP, 8 sessions at once (reply signed)")):
    d = rows.get("lmtp-8-" + cfg)
    if d:
        ok = d["entries"] == d["runs"] and d["distinct"] == d["runs"] and d["min"] == 1 and d["max"] == d["runs"] and d["messages"] == d["runs"]
        row(label, f"{d['rate']:.0f} req/s", f"{int(d['runs'])} mails, IDs 1..{int(d['max'])} {'dense, unique' if ok else 'WRONG'}",
            "-", ">= 1000/s", "yes" if d["rate"] >= 1000 and ok else "no")
d = rows.get("lmtp-signed")
if d:
    rate = d["mails"] / d["total_s"]
    ok = d["ok"] == d["mails"] and d["entries"] == d["mails"] and d["max"] == d["mails"]
    row("LMTP, signed requests, 8 sessions (reply signed)", f"{rate:.0f} req/s",
        f"{int(d['mails'])} mails, IDs 1..{int(d['max'])} {'dense, unique' if ok else 'WRONG'}", "-", ">= 150/s",
        "yes" if rate >= 150 and ok else "no")

for which, label in (("this", ""), ("before", ", the earlier tree (BENCH_BEFORE)")):
    a, b = rows.get(f"vol-cost-{which}-100"), None
    for k in rows:
        if k.startswith(f"vol-cost-{which}-") and k != f"vol-cost-{which}-100":
            b = rows[k]
            big = k.rsplit("-", 1)[1]
    if a and b:
        r = b["intake"] / a["intake"] if a["intake"] else None
        row(f"instructions per mail (intake_message), {big} this hour and queued{label}",
            f"{b['intake'] / 1e6:.1f}M", f"100 this hour {a['intake'] / 1e6:.1f}M",
            f"{r:.2f}x" if r else "-", "<= 1.2x", "yes" if r and r <= 1.2 else "no")
        r2 = b["total"] / a["total"] if a["total"] else None
        row(f"  the same, the whole filter process{label}", f"{b['total'] / 1e6:.1f}M",
            f"100 this hour {a['total'] / 1e6:.1f}M", f"{r2:.2f}x" if r2 else "-", "-", "-")
    d = rows.get(f"vol-fill-{which}")
    if d:
        r = d["last"] / d["first"] if d["first"] else None
        row(f"LMTP fill of {int(d['mails'])}, 8 sessions: last tenth vs first{label}", f"{d['last']:.0f} req/s",
            f"first tenth {d['first']:.0f} req/s", f"{r:.2f}x" if r else "-", ">= 0.8x",
            "yes" if r and r >= 0.8 else "no")
        row(f"  replies not yet tried by the delivery agent at the end of the fill{label}", f"{int(d['lag'])}",
            "-", "-", "-", "-")
    d = rows.get(f"vol-queue-{which}")
    if d:
        row(f"queue run over {int(d['queued'])} queued, relay refusing{label}", f"{d['seconds']:.1f} s",
            f"{int(d['left_due'])} still due after it", "-", "< 60 s, none left",
            "yes" if d["seconds"] < 60 and d["left_due"] == 0 else "no")

w = [max(len(str(r[i])) for r in out + [("what", "vulnid", "baseline", "ratio", "target", "met")]) for i in range(6)]
hdr = ("what", "vulnid", "baseline", "ratio", "target", "met")
print()
print("  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)))
print("  ".join("-" * w[i] for i in range(6)))
for r in out:
    print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
print()
print(f"medians of {n} runs per series (large mails fewer, queue runs and smtp-source 3); procmail and vulnid runs interleaved")
print(f"signing a reply: medians of {5 * int(n)} signatures in one process (two rounds, averaged); the gpg process {n} runs")
if auth:
    print(f"auth recorded for the signed requests: {auth}")
if "dbsize" in rows:
    print(f"1,000,000-entry database: {rows['dbsize'].get('mb', '?'):.0f} MB")
md = os.environ.get("BENCH_MARKDOWN")
if md:
    with open(md, "w") as f:
        f.write("| " + " | ".join(hdr) + " |\n|" + "---|" * 6 + "\n")
        for r in out:
            f.write("| " + " | ".join(str(c) for c in r) + " |\n")
PY
