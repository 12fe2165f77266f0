#!/bin/bash
# T760-debian: debian/ as the tree has it: the package's version is this
# build's, its maintainer scripts parse (and pass shellcheck where it is
# installed), the units and the logrotate file it installs are those of
# contrib/ with Debian's paths, and nothing is enabled without being
# asked.  .ci/debian-package builds, installs, uses and purges it (CI).
. "$(dirname "$0")/test-lib.sh"

D="$VULNID_SRCDIR/debian"
if [ ! -d "$D" ]; then
	test_skip "debian/" "no debian/ in this tree (a release tarball)"
	test_done
fi

test_expect_success 'the package version is the version of this build' '
	v=$(sed -n "1s/^vulnid (\([^)]*\)).*/\1/p" "$D/changelog") &&
	expect_eq "$v" "$(sed -n "s/^AC_INIT(\[vulnid\], \[\([^]]*\)\].*/\1/p" "$VULNID_SRCDIR/configure.ac")" &&
	"$VULNID" --version | grep -q "^vulnid $v " &&
	expect_eq "3.0 (native)" "$(cat "$D/source/format")"
'

test_expect_success 'the maintainer scripts parse, and pass shellcheck where it is installed' '
	for f in preinst postinst postrm config; do
		sh -n "$D/vulnid.$f" || fail "vulnid.$f does not parse"
		test -x "$D/vulnid.$f" || fail "vulnid.$f is not executable"
		grep -q "^set -e$" "$D/vulnid.$f" || fail "vulnid.$f: no set -e"
	done &&
	if command -v shellcheck >/dev/null; then
		shellcheck -s sh "$D"/vulnid.preinst "$D"/vulnid.postinst "$D"/vulnid.postrm "$D"/vulnid.config
	fi &&
	sh -n "$VULNID_SRCDIR/.ci/debian-package" 2>/dev/null || bash -n "$VULNID_SRCDIR/.ci/debian-package"
'

test_expect_success 'the postinst makes the user and nothing else; nothing is enabled or started' '
	expect_match "adduser --system --group --home /var/lib/vulnid --no-create-home" "$D/vulnid.postinst" &&
	expect_no_match "install -d|mkdir|vulnid init|systemctl" "$D/vulnid.postinst" &&
	test "$(grep -c "^	dh_installsystemd" "$D/rules")" -eq 4 &&
	test "$(grep -c "^	dh_installsystemd --no-enable --no-start --name=vulnid-" "$D/rules")" -eq 4 &&
	expect_match "^Rules-Requires-Root: no$" "$D/control"
'

test_expect_success 'the units and logrotate file are contrib/'\''s with /usr/sbin' '
	units=$(sed -n "s/^UNITS = //p" "$D/rules") &&
	expect_eq "$(ls "$VULNID_SRCDIR/contrib/systemd" | sort | tr "\n" " ")" "$(printf "%s\n" $units | sort | tr "\n" " ")" &&
	for u in $units; do
		sed "s|/usr/local/sbin/|/usr/sbin/|g" "$VULNID_SRCDIR/contrib/systemd/$u" >"$TMP/$u" &&
		expect_no_match "/usr/local" "$TMP/$u" || exit 1
	done &&
	grep -q "^ExecStart=/usr/sbin/vulnid -c /var/lib/vulnid/vulnid.conf tick$" "$TMP/vulnid-tick.service" &&
	grep -q "^/var/lib/vulnid/audit.log {" "$VULNID_SRCDIR/contrib/logrotate/vulnid"
'

test_expect_success 'purge keeps the instance unless asked: the question defaults to no' '
	expect_match "^Template: vulnid/purge_instance$" "$D/vulnid.templates" &&
	expect_match "^Default: false$" "$D/vulnid.templates" &&
	expect_match "rm -rf /var/lib/vulnid" "$D/vulnid.postrm" &&
	awk "/remove=true/ { t = 1 } /rm -rf/ { exit !t }" "$D/vulnid.postrm"
'

test_done
