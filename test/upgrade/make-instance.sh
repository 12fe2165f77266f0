#!/bin/bash
# make-instance.sh BUILDDIR OUT - make the fixture of an instance of the
# release built in BUILDDIR, as text in OUT (test/upgrade/README): an
# instance with two entries, one under embargo, an addition, the creator's
# and the vendor's tokens, at a fixed time.  T012 builds the instance
# again from OUT and upgrades it with the current build.
#
# The fixture in schema7/ was made with vulnid 0.1.0 (commit 60dd7cf,
# schema 7):
#   git archive 60dd7cf | tar -x -C /tmp/old && (cd /tmp/old && autoreconf -fi &&
#       ./configure && make) && test/upgrade/make-instance.sh /tmp/old test/upgrade/schema7
set -eu

build=$1
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vulnid-fixture.XXXXXX")
trap 'gpgconf --homedir "$tmp/inst/gnupg" --kill all 2>/dev/null; rm -rf "$tmp"' EXIT
export VULNID_TEMPLATE_DIR="$build/templates"
[ -d "$VULNID_TEMPLATE_DIR" ] || VULNID_TEMPLATE_DIR="$src/templates"
export VULNID_TEST_NOW=2026-03-02T10:00:00Z

inst="$tmp/inst"
conf="$inst/vulnid.conf"
"$build/src/vulnid" init --prefix TEST --domain example.org "$inst" >/dev/null
python3 - "$conf" <<'PY'
import sys
p = sys.argv[1]
t = open(p).read().replace("allow_reserved_domains = \n", "allow_reserved_domains = .example\n")
open(p, "w").write(t)
PY
grep -q '^allow_reserved_domains = .example$' "$conf"

mail() {	# mail FROM MESSAGE-ID SUBJECT [TO]: the body on stdin
	printf 'From: %s\nTo: %s\nSubject: %s\nMessage-ID: <%s>\nDate: Mon, 02 Mar 2026 10:00:00 +0000\n\n' \
		"$1" "${4:-request@example.org}" "$3" "$2"
	cat
}
deliver() {	# deliver FROM RCPT: the mail on stdin
	"$build/src/vulnid-filter" -c "$conf" -f "$1" -r "$2" -a 192.0.2.10
}

mail alice@example.net up1@example.net "Heap overflow in the widget parser" <<'M' | deliver alice@example.net request@example.org
Vendor: Widget Corp <widget.example>
Product: Widget
Version: 1.0
Type: CWE-122

A request with an overlong header overflows a fixed buffer.
M
mail bob@example.net up2@example.net "Sealed gadget flaw" <<'M' | deliver bob@example.net request@example.org
Embargo: 2026-06-30
Product: Gadget
Version: 2.0

The gadget accepts any password on Tuesdays.
M
# the creator sends her token back: the vendor is told (with a token of
# its own)
tokens() {
	python3 - "$inst/sent/new" <<'PY'
import email, email.policy, os, re, sys
d = sys.argv[1]
for name in sorted(os.listdir(d), key=lambda n: os.stat(os.path.join(d, n)).st_mtime_ns):
    m = email.message_from_binary_file(open(os.path.join(d, name), "rb"), policy=email.policy.default)
    to = str(m["To"])
    for part in m.walk():
        if part.get_content_type() != "text/plain":
            continue
        for t in re.findall(r"(?:^ *token: *|^Your response token is )([0-9a-f]{20,})\b", part.get_content(), re.M):
            print(to.split("<")[-1].rstrip(">"), t)
PY
}
t=$(tokens | awk '$1 == "alice@example.net" { print $2; exit }')
printf 'Token: %s\n' "$t" | mail alice@example.net up4@example.net "confirm" request+TEST-2026-0001@example.org |
	deliver alice@example.net request+TEST-2026-0001@example.org
mail carol@example.net up3@example.net "Re: widget" request+TEST-2026-0001@example.org <<'M' | deliver carol@example.net request+TEST-2026-0001@example.org
Version: 1.1

Also in the next release.
M

mkdir -p "$out"
"$build/src/vulnid" -c "$conf" audit flush
{
	sqlite3 "$inst/vulnid.db" .dump
	echo "PRAGMA user_version = $(sqlite3 "$inst/vulnid.db" 'PRAGMA user_version');"
} >"$out/vulnid.sql"
gpg --homedir "$inst/gnupg" --batch --armor --export-secret-keys >"$out/robot-secret.asc" 2>/dev/null
cp "$conf" "$inst/log.key" "$inst/audit.log" "$out/"
# the tokens the robot mailed, as the researchers and the vendor got them
tokens >"$out/tokens"
"$build/src/vulnid" --version | head -n 1 >"$out/VERSION"
