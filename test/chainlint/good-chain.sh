# chainlint fixture: bodies that lose no failure (nothing is reported)
test_expect_success 'a chain' '
	echo a >file &&
	grep a file &&
	! grep b file
'

test_expect_success 'a loop that stops on failure' '
	for f in a b c
	do
		echo "$f" >"$f" &&
		grep "$f" "$f" || return 1
	done &&
	while read -r line
	do
		test -n "$line" || exit 1
	done <a
'

test_expect_success 'the status kept, then checked' '
	rc=0 &&
	false || rc=$?
	expect_eq 1 "$rc" "status"
'

test_expect_success 'an if, a case, $(...) and a here-document over many lines' '
	x=$(printf "%s\n" "one
two" | wc -l) &&
	if test "$x" -eq 2
	then
		echo two
	else
		fail "not two: $x"
	fi &&
	case "$x" in
	2) echo ok ;;
	*) fail "bad" ;;
	esac &&
	cat >f <<-\EOF &&
	a line; not a command
	EOF
	grep -q line f
'

test_expect_success 'a polling loop, a background job' '
	sleep 5 &
	pid=$! &&
	for i in 1 2 3
	do
		test -e done && break
		sleep 0
	done &&
	kill "$pid"
'

chained() {
	mkdir -p "$1" &&
	touch "$1/a" "$1/b"
}

# only the top level uses it: set-up, outside the rule
cleanup() {
	rm -f a
	rm -f b
}
cleanup

test_expect_success 'a helper with a chain' '
	chained here
'
