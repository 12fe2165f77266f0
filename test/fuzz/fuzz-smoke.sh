#!/bin/bash
# fuzz-smoke.sh BUILD_FUZZ_DIR SRC_FUZZ_DIR SECONDS NAME... - run each fuzzer
# for SECONDS on its seed corpus and regression inputs, FUZZ_JOBS (2) at a
# time, and print a table.  New corpus entries go to BUILD_FUZZ_DIR/work/
# NAME/corpus; crashes to BUILD_FUZZ_DIR/work/NAME/ (crash-*, leak-*,
# timeout-*, oom-*).  Exit status 1 when any fuzzer found something.
set -u
build=$1 src=$2 secs=$3
shift 3
jobs=${FUZZ_JOBS:-2}
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# the targets' scratch instances: in memory where possible, and removed
# even when a crash skipped their own clean-up
scratch=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/vulnid-fuzz-smoke.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch"
export FUZZ_KNOWN_OPEN="$src/regressions/KNOWN-OPEN"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$src/lsan.supp"

run_one() {
	local name=$1 work="$build/work/$1" extra=() f
	rm -rf "$work/artifacts" "$work/regressions"
	mkdir -p "$work/corpus" "$work/artifacts" "$work/regressions"
	# the regression inputs, less those of bugs still open
	for f in "$src/regressions/$name"/*; do
		[ -f "$f" ] || continue
		grep -q "^$name/$(basename "$f")[[:space:]]" "$FUZZ_KNOWN_OPEN" 2>/dev/null || cp "$f" "$work/regressions/"
	done
	[ -f "$src/dict/$name.dict" ] && extra+=("-dict=$src/dict/$name.dict")
	case $name in
	intake | dsn) extra+=(-max_len=65536) ;;
	feed | template) extra+=(-max_len=16384) ;;
	*) extra+=(-max_len=8192) ;;
	esac
	# a full malloc stack (through libraries built without frame
	# pointers) where lsan.supp must match one
	local asan=$ASAN_OPTIONS
	[ "$name" != securitytxt ] || asan="$asan:fast_unwind_on_malloc=0"
	ASAN_OPTIONS=$asan "$build/fuzz-$name" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "${extra[@]}" \
		"$work/corpus" "$src/corpus/$name" "$work/regressions" \
		>"$work/log" 2>&1
	echo $? >"$work/status"
}

pids=()
for name in "$@"; do
	[ -x "$build/fuzz-$name" ] || { echo "fuzz-smoke: no $build/fuzz-$name" >&2; exit 2; }
	run_one "$name" &
	pids+=($!)
	if [ "${#pids[@]}" -ge "$jobs" ]; then
		wait "${pids[0]}"
		pids=("${pids[@]:1}")
	fi
done
wait

found=0
printf '%-12s %7s %10s %8s %7s %8s %8s %s\n' target seconds runs exec/s cov features corpus result
for name in "$@"; do
	work="$build/work/$name"
	log="$work/log"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: [0-9]+' | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	arts=$(ls "$work/artifacts" 2>/dev/null | tr '\n' ' ')
	if [ -n "$arts" ] || [ "$(cat "$work/status")" != 0 ]; then
		found=1
		result="FOUND: ${arts:-exit $(cat "$work/status")} (log: $log)"
	else
		result=ok
	fi
	printf '%-12s %7s %10s %8s %7s %8s %8s %s\n' "$name" "$secs" "${runs:-?}" "${eps:-?}" \
		"${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
if [ "$found" = 1 ]; then
	echo "fuzz-smoke: a fuzzer found a problem: copy the input into test/fuzz/regressions/NAME/," >&2
	echo "fix the bug, and let T950 replay it from then on" >&2
fi
exit "$found"
