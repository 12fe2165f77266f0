#!/bin/bash
# T016-quickstart: contrib/quickstart demo installs only what building and
# the demo need (the libraries configure asks for, the toolchain, gpg),
# never the test suite's MTAs, browser, Go or clang; check installs all of
# it and the rest; and the demo runs with just that.
. "$(dirname "$0")/test-lib.sh"

QS="$VULNID_SRCDIR/contrib/quickstart"

test_expect_success 'the demo installs the build dependencies and gpg, nothing the test suite alone needs' '
	"$QS" packages demo >"$TMP/demo" &&
	"$QS" packages check >"$TMP/check" &&
	for p in postfix chromium golang-go clang mutt swaks sqlite3 exim4-daemon-light opensmtpd lintian; do
		! grep -qx "$p" "$TMP/demo" || fail "the demo installs $p"
	done &&
	sed -n "s/^VULNID_DEP(\[[A-Z]*\], \[[^]]*\], \[\([^]]*\)\])$/\1/p" "$VULNID_SRCDIR/configure.ac" >"$TMP/configure" &&
	test "$(wc -l <"$TMP/configure")" -ge 8 &&
	for p in $(cat "$TMP/configure") build-essential autoconf automake pkg-config gnupg; do
		grep -qx "$p" "$TMP/demo" || fail "the demo does not install $p"
	done &&
	for p in $(cat "$TMP/demo") postfix sqlite3 sqv golang-go clang debhelper lintian fakeroot dpkg-dev cron; do
		grep -qx "$p" "$TMP/check" || fail "check does not install $p"
	done &&
	rc=0; "$QS" nonsense 2>/dev/null || rc=$?
	expect_eq 64 "$rc"
'

test_expect_success 'the demo needs no more than that: it runs on this build' '
	TMPDIR="$TMP" VULNID_BUILDDIR="$VULNID_BUILDDIR" VULNID_SRCDIR="$VULNID_SRCDIR" \
		sh "$VULNID_SRCDIR/contrib/demo.sh" >"$TMP/demo.out" 2>&1 ||
		fail "$(tail -n 20 "$TMP/demo.out")"
	expect_match "vulnid-filter exited 0" "$TMP/demo.out" &&
	expect_match "^DEMO-[0-9]+-0001 " "$TMP/demo.out" &&
	expect_match "lines, chain intact" "$TMP/demo.out"
'

test_done
