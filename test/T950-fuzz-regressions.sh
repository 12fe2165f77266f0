#!/bin/bash
# T950-fuzz-regressions: every seed input of test/fuzz/corpus/NAME and every
# input that once made a fuzzer fail (test/fuzz/regressions/NAME) runs
# through the same target code without libFuzzer (test/fuzz/replay-NAME):
# no crash, no sanitizer report, no violated property.  In the sanitizer
# build this runs under ASan and UBSan.  Inputs listed in
# test/fuzz/regressions/KNOWN-OPEN are bugs not fixed yet: TODO cases.
. "$(dirname "$0")/test-lib.sh"

FUZZ_SRC="$VULNID_SRCDIR/test/fuzz"
KNOWN="$FUZZ_SRC/regressions/KNOWN-OPEN"
export TMPDIR="$TMP"
# leaks inside libraries that the inputs show (see the file)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$FUZZ_SRC/lsan.supp"
# whole stacks through the libraries, so that the suppressions match
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"

known_open() { grep -q "^$1[[:space:]]" "$KNOWN" 2>/dev/null; }

replay() {
	local name=$1 prog="$VULNID_BUILDDIR/test/fuzz/replay-$1" files=() f out
	[ -x "$prog" ] || fail "$prog not built"
	for f in "$FUZZ_SRC/corpus/$name"/* "$FUZZ_SRC/regressions/$name"/*; do
		[ -f "$f" ] || continue
		known_open "$name/$(basename "$f")" || files+=("$f")
	done
	[ "${#files[@]}" -gt 0 ] || fail "no inputs for $name"
	out=$("$prog" "${files[@]}" 2>"$TMP/$name.err") ||
		fail "replay-$name failed: $(tail -n 40 "$TMP/$name.err")"
	echo "$out"
	expect_eq "ran ${#files[@]} inputs" "$out"
}

for name in intake request commands template dsn securitytxt feed tlog lmtp openpgp pgpkey; do
	test_expect_success "fuzz corpus and regressions of $name replay cleanly" "replay $name"
done

# Known open bugs: expected to fail until fixed (TAP TODO: XFAIL / XPASS).
while IFS='	' read -r input where; do
	case "$input" in '' | '#'*) continue ;; esac
	test_count=$((test_count + 1))
	name=${input%%/*}
	if ("$VULNID_BUILDDIR/test/fuzz/replay-$name" "$FUZZ_SRC/regressions/$input") >/dev/null 2>&1; then
		echo "ok $test_count - known open $input now passes: remove it from KNOWN-OPEN # TODO $where"
	else
		echo "not ok $test_count - known open $input # TODO $where"
	fi
done <"$KNOWN"

test_expect_success 'every regression input is named after what it found' '
	for f in "$FUZZ_SRC"/regressions/*/*; do
		[ -e "$f" ] || continue
		case "$(basename "$f")" in
		crash-* | leak-* | timeout-* | oom-* | property-*) ;;
		*) fail "unexpected file name $f" ;;
		esac
	done
'

test_done
