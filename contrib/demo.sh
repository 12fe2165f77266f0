#!/bin/sh
# demo.sh - create a throwaway instance, feed it a sample request, and show
# the identifier it assigned and the reply it sent.  Run by `make demo`.
set -eu

builddir=${VULNID_BUILDDIR:-$(pwd)}
srcdir=${VULNID_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
VULNID_TEMPLATE_DIR=${VULNID_TEMPLATE_DIR:-$srcdir/templates}
export VULNID_TEMPLATE_DIR

dir=$(mktemp -d "${TMPDIR:-/tmp}/vulnid-demo.XXXXXX")
"$builddir/src/vulnid" init --prefix DEMO --domain vulnid.example "$dir/instance"
conf="$dir/instance/vulnid.conf"

echo
echo "== feeding $srcdir/contrib/sample-request.eml to vulnid-filter"
status=0
"$builddir/src/vulnid-filter" -c "$conf" -f alice@researcher.example \
	-r request@vulnid.example <"$srcdir/contrib/sample-request.eml" || status=$?
echo "vulnid-filter exited $status"

echo
echo "== assigned"
"$builddir/src/vulnid" -c "$conf" list

echo
echo "== the reply, as delivered into $dir/instance/sent/new"
cat "$dir/instance/sent/new/"*

echo
echo "== the audit log"
"$builddir/src/vulnid" -c "$conf" audit verify
echo
echo "The instance stays in $dir for a look around (vulnid -c $conf show ID)."
