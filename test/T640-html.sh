#!/bin/bash
# T640-html: the static web archive: pages, links, complete escaping of
# hostile text, and a real browser (headless Chromium) reading it from file://
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
E1="TEST-$Y-0001"

request "$TMP/r1.eml" mallory@example.net 'XSS <script>alert(1)</script> in "Foo"' <<'MAIL'
Vendor: Foo Corp"><img src=x onerror=alert(2)>
Product: Foo Server
Version: 1.0
Reference: javascript:alert(3)
Reference: https://example.net/advisory?a=1&b="2"

Steps: <script>alert(4)</script> & </div></pre><iframe src=x>
Right-to-left: abc‮def
MAIL
request "$TMP/r2.eml" anon@researcher.example "Anonymous finding" <<'MAIL'
Vendor: Bar Inc
Anonymous: yes

Bar's login leaks.
MAIL
request "$TMP/r3.eml" spammer@example.net "Spam entry" <<'MAIL'
Buy now.
MAIL
dbtool add "$E1" vendor-response vendor security@foo.example '[["Status","confirmed"]]' \
	"We confirm the XSS and will fix it in 1.1." >/dev/null
dbtool add "$E1" vendor-response vendor intern@foo.example '[["Status","disputed"]]' "Not a bug." how=domain >/dev/null
dbtool add "TEST-$Y-0002" command moderator mod@example.org "[[\"Duplicate-Of\",\"$E1\"]]" "" >/dev/null
dbtool sealed "TEST-$Y-0004" "Secret title" '[["Vendor","Hidden"]]' "hidden body" 2099-01-01 >/dev/null

test_expect_success 'the site: index, years, vendors, entry pages, OSV and the records as mails' '
	"$VULNID" -c "$CONF" export html "$TMP/site" >"$TMP/out" &&
	expect_match "4 entry pages, 3 OSV records, 6 mails" "$TMP/out" &&
	for f in index.html $Y.html vendors.html entries/$E1.html entries/TEST-$Y-0002.html \
		entries/TEST-$Y-0003.html entries/TEST-$Y-0004.html osv/x_$E1.json mail/$E1-1.eml \
		mail/TEST-$Y-0002-1.eml; do
		test -s "$TMP/site/$f" || fail "missing $f"
	done
'

test_expect_success 'hostile text is escaped everywhere: no markup gets through' '
	! grep -rli "<script\\|<img\\|<iframe\\|href=\"javascript" "$TMP/site" --include=*.html &&
	expect_match "XSS &lt;script&gt;alert\\(1\\)&lt;/script&gt; in &quot;Foo&quot;" "$TMP/site/entries/$E1.html" &&
	expect_match "Foo Corp&quot;&gt;&lt;img src=x onerror=alert\\(2\\)&gt;" "$TMP/site/entries/$E1.html" &&
	expect_match "&lt;/div&gt;&lt;/pre&gt;&lt;iframe src=x&gt;" "$TMP/site/entries/$E1.html" &&
	expect_match "href=\"https://example.net/advisory\\?a=1&amp;b=&quot;2&quot;\"" "$TMP/site/entries/$E1.html" &&
	expect_match "<td>javascript:alert\\(3\\)" "$TMP/site/entries/$E1.html" &&
	expect_no_match "‮" "$TMP/site/entries/$E1.html" &&
	expect_match "Content-Security-Policy" "$TMP/site/entries/$E1.html"
'

test_expect_success 'an entry page: fields, vendor position, records with role and authentication, digest' '
	p="$TMP/site/entries/$E1.html" &&
	expect_match "$(sql "SELECT digest FROM entries WHERE id = '\''$E1'\''")" "$p" &&
	expect_match "Confirmed by the vendor" "$p" &&
	expect_match "We confirm the XSS and will fix it in 1.1." "$p" &&
	expect_match "Record 2 &middot; vendor-response &middot; vendor" "$p" &&
	expect_match "creator, the request that made the entry" "$p" &&
	expect_match "how-verified\">vendor, verified by token" "$p" &&
	expect_match "href=\"../osv/x_$E1.json\"" "$p" &&
	expect_match "href=\"../mail/$E1-1.eml\">as a mail" "$p" &&
	expect_match "Duplicates</th><td><a href=\"../entries/TEST-$Y-0002.html\">" "$p"
'

test_expect_success 'anonymous authors are not shown, in pages or raw mails' '
	! grep -rl "anon@researcher.example" "$TMP/site" &&
	expect_match "an anonymous researcher" "$TMP/site/entries/TEST-$Y-0002.html" &&
	expect_match "^From: an anonymous researcher <anonymous@invalid>" "$TMP/site/mail/TEST-$Y-0002-1.eml"
'

test_expect_success 'an unverified vendor statement is shown apart, never as the vendor position' '
	p="$TMP/site/entries/$E1.html" &&
	expect_no_match "Disputed by the vendor" "$p" &&
	expect_match "<h2 id=\"unverified\">Unverified</h2>" "$p" &&
	expect_match "<th>Status</th><td>disputed <span class=\"meta\">\(<a href=\"#r3\">record 3</a>, vendor, unverified: sent from the vendor&#39;s domain\)" "$p" &&
	expect_match "how-unverified\">vendor, unverified: sent from the vendor&#39;s domain" "$p" &&
	expect_match "vendor-confirmed\">confirmed" "$TMP/site/$Y.html"'

test_expect_success 'an embargoed entry is a stub; its vendor is not listed' '
	p="$TMP/site/entries/TEST-$Y-0004.html" &&
	expect_match "under embargo" "$p" &&
	expect_match "$(sql "SELECT digest FROM entries WHERE id = '\''TEST-$Y-0004'\''")" "$p" &&
	! grep -rl "Secret title\\|hidden body\\|>Hidden<" "$TMP/site"
'

test_expect_success 'every link inside the site leads to a file of the site' '
	$PYTHON - "$TMP/site" <<-"PY"
	import html.parser, os, sys, urllib.parse
	root = sys.argv[1]
	bad = []
	class P(html.parser.HTMLParser):
	    def handle_starttag(self, tag, attrs):
	        for k, v in attrs:
	            if k == "href" and not v.startswith(("http://", "https://", "#")):
	                t = os.path.normpath(os.path.join(os.path.dirname(self.page), urllib.parse.unquote(v.split("#")[0])))
	                if not t.startswith(root) or not os.path.isfile(t):
	                    bad.append((self.page, v))
	for d, _, files in os.walk(root):
	    for f in files:
	        if f.endswith(".html"):
	            p = P(); p.page = os.path.join(d, f); p.feed(open(p.page, encoding="utf-8").read())
	sys.exit("broken links: %r" % bad if bad else 0)
	PY
'

test_expect_success 'an entry marked spam later disappears from the site' '
	dbtool add "TEST-$Y-0003" command moderator "" "[[\"Spam\",\"yes\"]]" "" >/dev/null &&
	"$VULNID" -c "$CONF" export html "$TMP/site" >"$TMP/out" &&
	expect_match "3 entry pages" "$TMP/out" &&
	test ! -e "$TMP/site/entries/TEST-$Y-0003.html" &&
	! grep -rl "Spam entry" "$TMP/site"
'

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	test_skip 'Chromium renders the entry page from file://' 'chromium is not installed'
else
	test_expect_success 'Chromium renders the entry page from file://: ID, vendor response, escaped script' '
		mkdir "$TMP/chrome" &&
		flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$TMP/chrome --window-size=1200,900" &&
		HOME="$TMP" timeout 120 "$CHROMIUM" $flags --screenshot="$TMP/entry.png" "file://$TMP/site/entries/$E1.html" >"$TMP/chrome.log" 2>&1 &&
		test -s "$TMP/entry.png" &&
		expect_eq "89504e47" "$(head -c 4 "$TMP/entry.png" | xxd -p)" &&
		HOME="$TMP" timeout 120 "$CHROMIUM" $flags --dump-dom "file://$TMP/site/entries/$E1.html" >"$TMP/dom.html" 2>>"$TMP/chrome.log" &&
		expect_match "$E1" "$TMP/dom.html" &&
		expect_match "We confirm the XSS and will fix it in 1.1." "$TMP/dom.html" &&
		expect_match "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" "$TMP/dom.html" &&
		expect_match "&lt;script&gt;alert\\(4\\)&lt;/script&gt;" "$TMP/dom.html" &&
		expect_no_match "<script|<img|<iframe" "$TMP/dom.html"
	'
	[ -z "${VULNID_KEEP_SCREENSHOT:-}" ] || cp "$TMP/entry.png" "$VULNID_KEEP_SCREENSHOT" 2>/dev/null
fi

test_done
