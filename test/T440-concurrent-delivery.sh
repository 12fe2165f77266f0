#!/bin/bash
# T440-concurrent-delivery: 8 queue runs and 8 filters at once, against
# smtp-sink, over a backlog of 500 items: every recipient receives exactly
# one copy (counted at the sink), every item is tried once and audited
# delivered once.  Items are claimed before they are sent.
. "$(dirname "$0")/test-lib.sh"

[ -x "$SMTP_SINK" ] || { test_skip "concurrent delivery" "smtp-sink not installed"; test_done; }

N=500		# the backlog
RUNS=8		# concurrent vulnid queue run --force
FILTERS=8	# concurrent filters, each redelivering part of the backlog
FRESH=5		# new requests per filter

make_instance inst
start_sink sink
set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT"
set_conf delivery starttls no
set_conf delivery timeout 20
set_conf delivery filter_budget 0
# the claims are what is tested here, not signing: no gpg per item
set_conf crypto sign none

# request FILE N SENDER: a request from its own sender (one recipient each)
request() { printf "Product: P%s\n" "$2" | write_mail "$1" "Message-ID: <c$2@example.net>" "From: $3"; }

test_expect_success "setup: $N requests from $N senders, their acks queued" '
	for i in $(seq 1 $N); do request "$TMP/c$i.eml" "$i" "user$i@example.net"; done
	{ for i in $(seq 1 2 $N); do deliver_ok "$TMP/c$i.eml" -f "user$i@example.net"; done; } &
	p=$!
	for i in $(seq 2 2 $N); do deliver_ok "$TMP/c$i.eml" -f "user$i@example.net"; done &&
	wait $p &&
	expect_eq $N "$(sql "SELECT count(*) FROM outbox WHERE status = '\''queued'\''")" &&
	expect_eq 0 "$(sink_count)"
'

# worker K: redeliver every FILTERS-th mail of the backlog (a duplicate:
# the filter retries that mail's pending reply), then FRESH new requests.
worker() {
	local k=$1 i
	for i in $(seq "$k" $FILTERS $N); do
		"$FILTER" -c "$CONF" -f "user$i@example.net" <"$TMP/c$i.eml" || echo "filter $i: $?" >>"$TMP/errors"
	done
	for i in $(seq 1 $FRESH); do
		request "$TMP/f$k-$i.eml" "f$k-$i" "fresh$k-$i@example.net"
		"$FILTER" -c "$CONF" -f "fresh$k-$i@example.net" <"$TMP/f$k-$i.eml" || echo "fresh $k $i: $?" >>"$TMP/errors"
	done
}

test_expect_success "$RUNS queue runs and $FILTERS filters at once deliver everything" '
	set_conf delivery filter_budget 10 &&
	: >"$TMP/errors" &&
	start=$(date +%s.%N) &&
	pids= &&
	for r in $(seq 1 $RUNS); do
		{ "$VULNID" -c "$CONF" queue run --force >"$TMP/run$r.out" 2>&1; echo $? >"$TMP/run$r.rc"; } &
		pids="$pids $!"
	done &&
	for k in $(seq 1 $FILTERS); do worker "$k" & pids="$pids $!"; done &&
	for p in $pids; do wait "$p"; done &&
	end=$(date +%s.%N) &&
	echo "# concurrent phase: $($PYTHON -c "print(round($end - $start, 2))") s" >"$TMP/measured" &&
	expect_eq "" "$(cat "$TMP/errors")" "filter failures" &&
	for r in $(seq 1 $RUNS); do
		expect_eq 0 "$(cat "$TMP/run$r.rc")" "queue run $r: $(cat "$TMP/run$r.out")" || exit 1
	done &&
	total=$((N + FILTERS * FRESH)) &&
	expect_eq $total "$(sql "SELECT count(*) FROM outbox")" &&
	expect_eq $total "$(sql "SELECT count(*) FROM outbox WHERE status = '\''delivered'\''")" "delivered items"
'

test_expect_success 'each recipient received exactly one copy, at the sink' '
	total=$((N + FILTERS * FRESH)) &&
	cat "$SINK_DIR"/* | sed -n "s/^X-Rcpt-Args: <\([^>]*\)>.*/\1/p" | sort | uniq -c | sort -rn >"$TMP/per-rcpt" &&
	expect_eq $total "$(wc -l <"$TMP/per-rcpt" | tr -d " ")" "distinct recipients" &&
	expect_eq 1 "$(head -n 1 "$TMP/per-rcpt" | awk "{print \$1}")" "copies of the most served recipient ($(head -n 1 "$TMP/per-rcpt"))" &&
	expect_eq $total "$(sink_count)" "mails at the sink" &&
	sessions=$(sink_sessions) &&
	echo "# $(sink_count) mails in $sessions SMTP sessions; items per claimer: $(sql "SELECT group_concat(n, \" \") FROM (SELECT count(*) AS n FROM outbox GROUP BY claim ORDER BY n DESC)")" >>"$TMP/measured"
'

test_expect_success 'every item was tried once, and audited queued and delivered once each' '
	expect_eq 1 "$(sql "SELECT DISTINCT attempts FROM outbox")" &&
	$PYTHON - "$INST/audit.log" <<-PY
	import collections, json, sys
	ev = collections.Counter()
	for line in open(sys.argv[1]):
	    j = json.loads(line)
	    if "outbox" in j:
	        ev[(j["event"], j["outbox"])] += 1
	kinds = collections.Counter(e for (e, _) in ev)
	assert kinds["delivered"] == $((N + FILTERS * FRESH)), kinds
	assert kinds["queued"] == $((N + FILTERS * FRESH)), kinds
	assert set(ev.values()) == {1}, [k for k, v in ev.items() if v > 1][:10]
	assert kinds["deferred"] == 0 and kinds["failed"] == 0, kinds
	PY
	"$VULNID" -c "$CONF" audit verify
'

cat "$TMP/measured" 2>/dev/null
test_done
