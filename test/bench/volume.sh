#!/bin/bash
# volume.sh BUILDDIR SRCDIR WORKDIR RESULTS - the volume rows of `make bench`
# (bench.sh runs it; alone it needs only an empty WORKDIR): what a mail
# costs once the robot has seen a lot.
#
# A fill of 20,000 distinct mails (a researcher each) over 8 LMTP sessions
# with the rate limits counting
# (limits far above the fill) and the relay refusing, so that every reply
# stays queued: the rate of its first and last tenth, and how many replies
# the delivery agent had not handled when it ended.  Then instructions per
# mail (callgrind: the whole filter process, and intake_message() alone) on
# that instance and on one filled with 100, at the time the fill ended;
# then one queue run over all the items, five hours later (everything due),
# with the relay still refusing.  With BENCH_BEFORE=DIR the build in DIR does
# the same on instances of its own.
#
#   BENCH_VOLUME_MAILS=N   the fill (default 20000, in tenths)
#
# Rows (KEY<TAB>values) are appended to RESULTS; bench.sh makes the table.
set -u
B=$(cd "$1" && pwd) S=$(cd "$2" && pwd) W=$3 R=$4
BEFORE=${BENCH_BEFORE:-}
[ -z "$BEFORE" ] || BEFORE=$(cd "$BEFORE" && pwd)
VM=${BENCH_VOLUME_MAILS:-20000}
VC=$((VM / 10))
PIDS=""
export VULNID_TEMPLATE_DIR="$S/templates"
unset VULNID_CONF VULNID_TEST_NOW
mkdir -p "$W"
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done' EXIT
say() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
medof() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# a port nothing listens on: the relay refuses every connection
refuse=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# vinstance BUILD NAME: an instance for these rows
vinstance() {
	rm -rf "${W:?}/$2"
	"$1/src/vulnid" init --prefix TEST --domain example.org "$W/$2" >/dev/null || exit 1
	sed -i "s/^sign = .*/sign = none/; s|^transport = .*|transport = smtp://127.0.0.1:$refuse|
		s/^starttls = .*/starttls = no/
		s/^rate_requests_per_hour = .*/rate_requests_per_hour = 1000000/
		s/^rate_additions_per_hour = .*/rate_additions_per_hour = 1000000/
		s/^rate_network_per_hour = .*/rate_network_per_hour = 100000000/
		s/^rate_domain_per_hour = .*/rate_domain_per_hour = 100000000/
		s/^rate_global_per_hour = .*/rate_global_per_hour = 100000000/
		s/^loop_answers = .*/loop_answers = 100000/" "$W/$2/vulnid.conf"
}

# fillmails DIR TAG COUNT: COUNT distinct 4 KiB requests DIR/1..COUNT, each
# from a researcher of its own (as the robot's mail comes)
fillmails() {
	mkdir -p "$1"
	python3 - "$@" <<'PY2'
import sys
d, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
line = "A description line of a plausible report, about seventy characters..\n"
for i in range(1, count + 1):
    head = (f"From: Researcher {i} <r{i}.{tag}@example.net>\nTo: request@example.org\n"
            f"Subject: {tag} request {i}\nMessage-ID: <{tag}-{i}@example.net>\n"
            "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n")
    body = f"Product: Volume {tag} {i}\nVersion: 1.{i}\n\n" + line * 56
    open(f"{d}/{i}", "w").write(head + body)
PY2
}

# vfill BUILD NAME CHUNKS SIZE: CHUNKS x SIZE distinct mails over 8
# sessions (test/bench/lmtp-load.py); prints the rate of each chunk, then
# "lag N"
vfill() {
	local b=$1 name=$2 chunks=$3 size=$4 pid out rates=""
	"$b/src/vulnid-lmtpd" -c "$W/$name/vulnid.conf" 2>>"$W/$name.lmtpd.err" &
	pid=$!
	PIDS="$PIDS $pid"
	for _ in $(seq 100); do [ -S "$W/$name/lmtp.sock" ] && break; sleep 0.05; done
	[ -S "$W/$name/lmtp.sock" ] || { say "vulnid-lmtpd did not start: $(tail -n 2 "$W/$name.lmtpd.err")"; exit 1; }
	for k in $(seq 1 "$chunks"); do
		fillmails "$W/fill-$name-$k" "$name$k" "$size"
		out=$(python3 "$S/test/bench/lmtp-load.py" "$W/$name/lmtp.sock" "$W/fill-$name-$k" "$size" 8)
		case "$out" in *" ok $size") ;; *) say "lmtp-load: $out" ;; esac
		rates="$rates $(echo "$out" | awk '{ print $2 / $6 }')"
		rm -rf "${W:?}/fill-$name-$k"
	done
	printf '%s lag %s' "$rates" "$(sqlite3 "$W/$name/vulnid.db" "SELECT count(*) FROM outbox WHERE attempts = 0")"
	kill "$pid"
	wait "$pid" 2>/dev/null
}

# vmails DIR TAG: four distinct 4 KiB requests, each from its own sender
vmails() {
	mkdir -p "$1"
	for i in 1 2 3 4; do
		{
			printf 'From: Researcher %s <r%s.%s@example.net>\nTo: request@example.org\n' "$i" "$i" "$2"
			printf 'Subject: %s request %s\nMessage-ID: <%s-%s@example.net>\n' "$2" "$i" "$2" "$i"
			printf 'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n'
			printf 'Product: Volume %s\nVersion: 1.%s\n\n' "$2" "$i"
			for _ in $(seq 56); do printf 'A description line of a plausible report, about seventy characters..\n'; done
		} >"$1/$i"
	done
}

# vcost BUILD NAME TAG: instructions of new mails through the filter, at
# the time the fill ended; the first mail is not counted (it defers what
# came due during the fill)
vcost() {
	local b=$1 name=$2 tag=$3 at f tot inc tots="" incs=""
	at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	vmails "$W/mv-$tag" "v$tag"
	for i in 1 2 3 4; do
		f="$W/cg-$tag-$i.out"
		# Each filter, the only connection, rebuilds SQLite's WAL index
		# from every frame since the last checkpoint (up to 1,000 pages,
		# some millions of instructions, at whatever phase the mails
		# before left it): a checkpoint first, so that every run starts
		# alike.
		sqlite3 "$W/$name/vulnid.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
		VULNID_TEST_NOW=$at valgrind --tool=callgrind --callgrind-out-file="$f" "$b/src/vulnid-filter" \
			-c "$W/$name/vulnid.conf" -f "r$i.v$tag@example.net" -r request@example.org \
			<"$W/mv-$tag/$i" 2>>"$W/cg-$tag.err" || say "filter under callgrind failed: $(tail -n 2 "$W/cg-$tag.err")"
		[ "$i" = 1 ] && continue
		tot=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$f" | head -n 1 | awk '{ print $1 }')
		inc=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
			awk '/[ :]intake_message[ (]/ { gsub(",", "", $1); print $1; exit }')
		tots="$tots $tot" incs="$incs ${inc:-0}"
	done
	printf 'total %s intake %s' "$(medof $tots)" "$(medof $incs)"
}

for which in this ${BEFORE:+before}; do
	b=$B
	[ "$which" = this ] || b=$BEFORE
	vinstance "$b" "vol-$which"
	out=$(vfill "$b" "vol-$which" 10 "$VC")
	# shellcheck disable=SC2086
	set -- $out
	printf '%s\tfirst %s last %s lag %s mails %s\n' "vol-fill-$which" "$1" "${10}" "${12}" "$VM" >>"$R"
	say "  vol-fill-$which: req/s per tenth ${out% lag*}; not yet handled by the agent ${out##* }"
	vinstance "$b" "vol100-$which"
	vfill "$b" "vol100-$which" 1 100 >/dev/null
	for n in 100 "$VM"; do
		name="vol-$which"
		[ "$n" = 100 ] && name="vol100-$which"
		out=$(vcost "$b" "$name" "$which$n")
		printf '%s\t%s\n' "vol-cost-$which-$n" "$out" >>"$R"
		say "  vol-cost-$which-$n: $out (queued $(sqlite3 "$W/$name/vulnid.db" \
			"SELECT count(*) FROM outbox WHERE status IN ('queued', 'deferred')"))"
	done
	later=$(date -u -d "+5 hours" +%Y-%m-%dT%H:%M:%SZ)
	queued=$(sqlite3 "$W/vol-$which/vulnid.db" "SELECT count(*) FROM outbox WHERE status IN ('queued', 'deferred')")
	t0=$(now)
	VULNID_TEST_NOW=$later "$b/src/vulnid" -c "$W/vol-$which/vulnid.conf" queue run >/dev/null 2>>"$W/vol-$which.queue.err"
	secs=$(echo "$(now) - $t0" | bc -l)
	left=$(sqlite3 "$W/vol-$which/vulnid.db" \
		"SELECT count(*) FROM outbox WHERE status IN ('queued', 'deferred') AND next_attempt <= '$later'")
	printf '%s\tseconds %s queued %s left_due %s\n' "vol-queue-$which" "$secs" "$queued" "$left" >>"$R"
	say "  vol-queue-$which: $secs s over $queued queued; $left still due after it"
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "${W:?}/vol-$which" "${W:?}/vol100-$which" "$W"/cg-"$which"*.out
done
