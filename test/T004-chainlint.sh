#!/bin/bash
# T004-chainlint: the bodies of the shell tests lose no failure (test/README,
# "The chain rule"): test/chainlint.py finds exactly the problems marked in
# its fixtures, no test has a problem beyond those recorded in
# test/chainlint-known.txt, and every test is numbered in a family of
# test/README and registered in the Makefile.
. "$(dirname "$0")/test-lib.sh"

T="$VULNID_SRCDIR/test"
LINT="$T/chainlint.py"

test_expect_success 'the linter finds exactly the problems marked in its fixtures' '
	"$PYTHON" "$LINT" --marks "$T"/chainlint/*.sh >"$TMP/out" || { cat "$TMP/out"; false; } &&
	expect_match "^# broken-chain.sh: 8 marked, 8 reported" "$TMP/out" &&
	expect_match "^# good-chain.sh: 0 marked, 0 reported" "$TMP/out"
'

test_expect_success 'a broken chain, an unmarked one and a loop are reported' '
	cat >"$TMP/T999-broken.sh" <<-\EOF &&
	test_expect_success '\''one'\'' '\''
		mkdir a &&
		touch a/b
		rm -r a
	'\''
	test_expect_success '\''two'\'' '\''
		for f in a b
		do
			touch "$f" &&
			cat "$f"
		done &&
		true
	'\''
	EOF
	rc=0 &&
	"$PYTHON" "$LINT" "$TMP/T999-broken.sh" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "exit status" &&
	expect_match "^T999-broken.sh:3: AMP: .one.: touch a/b\$" "$TMP/out" &&
	expect_match "^T999-broken.sh:10: LOOP: .two.: cat \".f\"\$" "$TMP/out" &&
	expect_eq 2 "$(wc -l <"$TMP/out")" "problems" &&
	sed -e "/touch a.b/s/\$/ # ?!AMP?!/" "$TMP/T999-broken.sh" >"$TMP/T999-marked.sh" &&
	rc=0 &&
	"$PYTHON" "$LINT" --marks "$TMP/T999-marked.sh" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "self-check status with a problem not marked" &&
	expect_match "T999-marked.sh:10: LOOP reported, not marked" "$TMP/out" &&
	rc=0 &&
	"$PYTHON" "$LINT" --marks "$T"/chainlint/good-chain.sh "$TMP/T999-broken.sh" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "self-check status with nothing marked"
'

test_expect_success 'a problem not in the known list is new, a listed one known' '
	printf "%s\n" "# comment" "T999-broken.sh: AMP: '\''one'\'': touch a/b" \
		"T999-broken.sh: AMP: '\''gone'\'': true" >"$TMP/known" &&
	rc=0 &&
	"$PYTHON" "$LINT" --known "$TMP/known" "$TMP/T999-broken.sh" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "exit status" &&
	expect_match "^known: T999-broken.sh:3: AMP" "$TMP/out" &&
	expect_match "^new: T999-broken.sh:10: LOOP" "$TMP/out" &&
	expect_match "^fixed: T999-broken.sh: AMP: .gone.: true" "$TMP/out"
'

test_expect_success 'no test has a chain problem beyond test/chainlint-known.txt' '
	"$PYTHON" "$LINT" --known "$T/chainlint-known.txt" "$T"/T*.sh "$T"/*-lib.sh >"$TMP/out" ||
		{ grep -v "^known:" "$TMP/out"; false; } &&
	grep -q "^known:" "$TMP/out"
'

test_expect_success 'every test is numbered in a family of test/README and registered' '
	sed -n "s/^  T\([0-9][0-9][0-9]\)-T\([0-9][0-9][0-9]\)  .*/\1 \2/p" "$T/README" >"$TMP/families" &&
	test -s "$TMP/families" &&
	: >"$TMP/bad" &&
	for f in "$T"/T[0-9][0-9][0-9]-*.sh
	do
		name=${f##*/} &&
		n=$((10#${name:1:3})) &&
		in_family=$(awk -v n="$n" "\$1 + 0 <= n && n <= \$2 + 0" "$TMP/families") &&
		{ [ -n "$in_family" ] || echo "$name: in no family of test/README" >>"$TMP/bad"; } &&
		{ cat "$VULNID_SRCDIR"/Makefile.am "$VULNID_SRCDIR"/*/*.am "$VULNID_SRCDIR"/test/*/*.am |
			grep -q "test/$name" || echo "$name: not in Makefile.am" >>"$TMP/bad"; } || return 1
	done &&
	if test -s "$TMP/bad"
	then
		cat "$TMP/bad" &&
		false
	fi
'

test_done
