# chainlint fixture: failures that are lost.  Each line whose comment holds
# the kind between "?!" marks (AMP, LOOP) must be reported as that kind, and
# nothing else.  The bodies run with set -e (test-lib.sh), so only failures
# set -e ignores are lost: those left of && or ||, and in a loop, if or
# subshell that is itself in such a list.
test_expect_success 'a command not chained' '
	echo a >file &&
	grep a file # ?!AMP?!
	grep b file
'

test_expect_success 'a semicolon instead of &&' '
	mkdir a && mkdir dir; # ?!AMP?!
	test -d dir
'

test_expect_success 'a failure before an assignment of the status' '
	mkdir dir && rc=0; # ?!AMP?!
	false || rc=$?
	expect_eq 1 "$rc" "status"
'

test_expect_success 'a loop whose last command may fail' '
	for f in a b c
	do
		echo "$f" >"$f" &&
		grep "$f" "$f" # ?!LOOP?!
	done
'

test_expect_success 'a loop in a chain, inside an if' '
	if test -d dir
	then
		while read -r line
		do
			cat "$line" # ?!LOOP?!
		done <list &&
		echo read
	fi
'

test_expect_success 'a subshell not chained' '
	(
		cd dir &&
		ls # ?!AMP?!
		pwd
	)
	true
'

test_expect_success 'quotes spliced into the body, a here-document' '
	cat >expect <<-\EOF &&
	it'\''s here
	EOF
	grep "it'\''s" expect # ?!AMP?!
	cat expect
'

# a helper used by a body: its chain counts as the body's
make_files() {
	mkdir -p "$1" &&
	touch "$1/a" # ?!AMP?!
	touch "$1/b"
}

test_expect_success 'a helper with a broken chain' '
	make_files here
'
