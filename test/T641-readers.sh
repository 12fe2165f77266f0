#!/bin/bash
# T641-readers: the web archive as its readers use it: the front page lists
# the latest entries; an Atom feed (RFC 4287) of new entries and vendor
# positions, read by a real feed parser (Debian's python3-feedparser) and
# linked from every page; a page that says how to verify the archive,
# with the robot's fingerprint and the log key; read by headless Chromium.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
export_instance inst
for i in 1 2 3 4 5; do
	request "$TMP/r$i.eml" "researcher$i@example.net" "Finding number $i & <more>" <<-MAIL
	Vendor: Vendor $i
	Product: Product $i

	Details of finding $i.
	MAIL
done
dbtool add "TEST-$Y-0002" vendor-response vendor security@vendor2.example '[["Status","confirmed"]]' "Confirmed." >/dev/null
dbtool add "TEST-$Y-0003" vendor-response vendor intern@vendor3.example '[["Status","disputed"]]' "No." how=domain >/dev/null
dbtool sealed "TEST-$Y-0006" "SECRET-TITLE-T641" '[["Vendor","Hidden"]]' "hidden body" 2099-01-01 >/dev/null
FPR=$("$VULNID" -c "$CONF" key export --fingerprint)

test_expect_success 'the front page lists the latest entries, newest first, with their titles' '
	"$VULNID" -c "$CONF" export html "$TMP/site" >/dev/null &&
	$PYTHON - "$TMP/site/index.html" "$Y" <<-"PY"
	import html.parser, sys
	y = sys.argv[2]
	links, text = [], []
	class P(html.parser.HTMLParser):
	    def handle_starttag(self, tag, attrs):
	        a = dict(attrs)
	        if tag == "a" and a.get("href", "").startswith("entries/"):
	            links.append(a["href"])
	    def handle_data(self, d):
	        text.append(d)
	P().feed(open(sys.argv[1], encoding="utf-8").read())
	want = ["entries/TEST-%s-%04d.html" % (y, n) for n in (6, 5, 4, 3, 2, 1)]
	assert links[:6] == want, links
	assert "Finding number 5 & <more>" in "".join(text)
	assert "SECRET-TITLE-T641" not in "".join(text)
	PY
'

test_expect_success 'the Atom feed: valid for feedparser, new entries and vendor positions, newest first' '
	$PYTHON - "$TMP/site/feed.atom" "$Y" <<-"PY"
	import feedparser, sys
	y = sys.argv[2]
	f = feedparser.parse(sys.argv[1])
	assert not f.bozo, f.bozo_exception
	assert f.version == "atom10", f.version
	assert f.feed.title == "TEST vulnerability identifiers", f.feed.title
	ids = [e.id for e in f.entries]
	assert len(ids) == len(set(ids)) == 7, ids
	titles = [e.title for e in f.entries]
	assert "TEST-%s-0001: Finding number 1 & <more>" % y in titles, titles
	assert "TEST-%s-0002: the vendor says confirmed" % y in titles, titles
	assert not any("disputed" in t for t in titles), "an unverified position in the feed"
	assert "TEST-%s-0006 (under embargo)" % y in titles, titles
	assert not any("SECRET" in e.title + e.summary for e in f.entries)
	for e in f.entries:
	    assert e.updated_parsed and e.link.endswith(".html"), e
	upd = [e.updated for e in f.entries]
	assert upd == sorted(upd, reverse=True), upd
	PY
'

test_expect_success 'with a base URL the feed links and names itself absolutely' '
	"$VULNID" -c "$CONF" export html --base-url https://vulnid.example.org/archive "$TMP/site2" >/dev/null &&
	$PYTHON - "$TMP/site2/feed.atom" <<-"PY"
	import feedparser, sys
	f = feedparser.parse(sys.argv[1])
	assert not f.bozo, f.bozo_exception
	assert f.feed.id == "https://vulnid.example.org/archive/feed.atom", f.feed.id
	assert any(l.rel == "self" and l.href == f.feed.id for l in f.feed.links), f.feed.links
	assert all(e.link.startswith("https://vulnid.example.org/archive/entries/") for e in f.entries)
	PY
'

test_expect_success 'every page links the Atom feed and the page on verifying' '
	n=0 &&
	for p in $(find "$TMP/site" -name "*.html"); do
		grep -q "<link rel=\"alternate\" type=\"application/atom+xml\" href=\"\(\.\./\)\?feed.atom\"" "$p" ||
			fail "$p does not link the feed" &&
		grep -q "href=\"\(\.\./\)\?verify.html\"" "$p" || fail "$p does not link verify.html"
		n=$((n + 1))
	done &&
	[ "$n" -ge 10 ]
'

test_expect_success 'the page on verifying: the robot'\''s fingerprint, the log key, the tools' '
	p="$TMP/site/verify.html" &&
	expect_match "$FPR" "$p" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null &&
	grep -qF "$(cat "$TMP/feed/log.vkey")" "$p" &&
	expect_match "vulnid verify-feed FEED-DIR --key robot.asc" "$p" &&
	expect_match "golang.org/x/mod/sumdb/tlog" "$p" &&
	expect_match "request@example.org" "$p" &&
	expect_match "https://vulnid.example.org/archive/feed/" "$TMP/site2/verify.html"
'

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	test_skip 'Chromium reads the front page and the page on verifying' 'chromium is not installed'
else
	test_expect_success 'Chromium reads the front page and the page on verifying from file://' '
		mkdir "$TMP/chrome" &&
		flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$TMP/chrome" &&
		HOME="$TMP" timeout 120 "$CHROMIUM" $flags --dump-dom "file://$TMP/site/index.html" >"$TMP/index.dom" 2>"$TMP/chrome.log" &&
		expect_match "TEST-$Y-0005" "$TMP/index.dom" &&
		expect_match "Finding number 5 &amp; &lt;more&gt;" "$TMP/index.dom" &&
		expect_match "application/atom\\+xml" "$TMP/index.dom" &&
		HOME="$TMP" timeout 120 "$CHROMIUM" $flags --dump-dom "file://$TMP/site/verify.html" >"$TMP/verify.dom" 2>>"$TMP/chrome.log" &&
		expect_match "$FPR" "$TMP/verify.dom" &&
		expect_no_match "<script" "$TMP/verify.dom"
	'
fi

test_done
