#!/bin/bash
# T693-witness-cgi: vulnid witness serve as a CGI program under Go's
# net/http/cgi, reached by vulnid export (libcurl) and by Go's HTTP client;
# and vulnid's client against witnesses written with Python's http.server
# that answer wrongly: nothing but a good cosignature of this very
# checkpoint reaches it.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
WH="$TMP/witnesshttp"
cp "$VULNID_SRCDIR/test/witnesshttp.go" "$TMP/" &&
(cd "$TMP" && GO111MODULE=off GOCACHE="$TMP/gocache" GOFLAGS= go build -o "$WH" witnesshttp.go) >"$TMP/go.out" 2>&1 ||
	fail "cannot build test/witnesshttp.go (golang-go): $(cat "$TMP/go.out")"

export_instance a
robot_key "$TMP/a.asc"
request "$TMP/r1.eml" alice@example.net "First" <<'MAIL'
Vendor: Foo

Text.
MAIL
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
request "$TMP/r2.eml" bob@example.net "Second" </dev/null
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
LK="$TMP/feed/log/log.vkey"
CP="$TMP/feed/log/checkpoint"
OH=$(printf %s "$(sed -n 1p "$CP")" | sha256sum | cut -c1-64)
"$VULNID" witness --state "$TMP/w" init example.net/cgi >"$TMP/w.vkey" || fail "no witness"

"$WH" serve "$TMP/cgi.port" /cgi "$VULNID" witness --state "$TMP/w" serve --log-key "$LK" 2>"$TMP/cgi.log" &
bg_track $!
for _ in $(seq 100); do test -s "$TMP/cgi.port" && break; sleep 0.05; done
CGI="http://127.0.0.1:$(cat "$TMP/cgi.port")/cgi"

test_expect_success 'as a CGI program under Go: vulnid export gets its cosignature (after a 409 that Go passed on)' '
	set_conf export witnesses "$(cat "$TMP/w.vkey") $CGI" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "cosigned by 1 of 1 witnesses [(]1 new[)]" "$TMP/out" &&
	expect_match "^— example.net/cgi " "$CP" &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$LK")" -witness "$(cat "$TMP/w.vkey")" >"$TMP/go.out" 2>&1
'

test_expect_success 'Go'"'"'s client: 409 with text/x.tlog.size, 200 for the tree it has, the cosigned checkpoint' '
	"$VULNID" prove "$TMP/feed" --consistency 0 >"$TMP/req0" &&
	"$WH" post "$CGI/add-checkpoint" "$TMP/req0" >"$TMP/got" &&
	expect_eq "409 text/x.tlog.size" "$(head -n 1 "$TMP/got")" && expect_eq 2 "$(sed -n 2p "$TMP/got")" &&
	"$VULNID" prove "$TMP/feed" --consistency 2 >"$TMP/req2" &&
	"$WH" post "$CGI/add-checkpoint" "$TMP/req2" >"$TMP/got" &&
	expect_match "^200 text/plain" "$TMP/got" && expect_match "^— example.net/cgi " "$TMP/got" &&
	"$PYTHON" -c "import urllib.request, sys; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())" \
		"$CGI/$OH/checkpoint" >"$TMP/got.cp" &&
	"$VULNID" verify-feed "$TMP/feed" --log-key "$LK" --witness-key "$TMP/w.vkey" --cosigned "$TMP/got.cp" >/dev/null
'

test_expect_success 'CGI by hand: the environment, the body on standard input, a Status header' '
	GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST PATH_INFO=/add-checkpoint CONTENT_LENGTH=$(stat -c %s "$TMP/req0") \
		"$VULNID" witness --state "$TMP/w" serve --log-key "$LK" <"$TMP/req0" >"$TMP/cgi.out" &&
	expect_eq "Status: 409 Conflict" "$(head -n 1 "$TMP/cgi.out" | tr -d "\r")" &&
	expect_match "^Content-Type: text/x.tlog.size" "$TMP/cgi.out" &&
	GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET PATH_INFO=/nothing \
		"$VULNID" witness --state "$TMP/w" serve --log-key "$LK" </dev/null >"$TMP/cgi.out" &&
	expect_eq "Status: 404 Not Found" "$(head -n 1 "$TMP/cgi.out" | tr -d "\r")"
'

# Witnesses that answer wrongly, written with Python's http.server; each
# request is logged (method, path, Content-Type, Expect, the body's first
# line).
WPORT=$(free_port)
"$PYTHON" - "$WPORT" "$TMP/requests" "$CGI" >"$TMP/pyw.log" 2>&1 <<'PY' &
import http.server, sys, urllib.request
port, log, good = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def answer(self, status, body, ctype="text/plain; charset=utf-8", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(log, "a") as f:
            f.write("%s %s %s %s %s\n" % (self.command, self.path, self.headers.get("Content-Type"),
                                          self.headers.get("Expect"), body.split(b"\n")[0].decode()))
        p = self.path
        if p.startswith("/other/"):
            # a good answer, from another witness's key
            r = urllib.request.urlopen(urllib.request.Request(good + "/add-checkpoint", data=body))
            self.answer(200, r.read())
        elif p.startswith("/error/"):
            self.answer(500, b"broken\n")
        elif p.startswith("/stuck/"):
            self.answer(409, body.split(b"\n")[0][4:] + b"\n", "text/x.tlog.size")
        elif p.startswith("/ahead/"):
            self.answer(409, b"1000\n", "text/x.tlog.size")
        elif p.startswith("/huge/"):
            self.answer(200, b"\xe2\x80\x94 x " + b"A" * 70000 + b"\n")
        elif p.startswith("/moved/"):
            self.answer(302, b"", extra=[("Location", good + "/add-checkpoint")])
        else:
            self.answer(404, b"no\n")
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
bg_track $!
for _ in $(seq 100); do ss -ltnH "sport = :$WPORT" | grep -q . && break; sleep 0.05; done

request "$TMP/r3.eml" carol@example.net "Third" </dev/null

test_expect_success 'wrong answers merge nothing: another key'"'"'s cosignature, 500, endless or impossible 409, too much, a redirection' '
	"$VULNID" witness --state "$TMP/x" init example.net/x >"$TMP/x.vkey" &&
	X=$(cat "$TMP/x.vkey") && P="http://127.0.0.1:$WPORT" &&
	set_conf export witnesses "$X $P/other/, $X $P/error/, $X $P/stuck/, $X $P/ahead/, $X $P/huge/, $X $P/moved/" &&
	cp "$CP" "$TMP/cp.before" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "log of 3 entries, checkpoint signed, cosigned by 0 of 6 witnesses" "$TMP/out" &&
	expect_match "/other.: the answer holds no good cosignature" "$TMP/err" &&
	expect_match "/error.: HTTP status 500: broken" "$TMP/err" &&
	expect_match "/stuck.: it refused the proof from its own size 2" "$TMP/err" &&
	expect_match "/ahead.: it cosigned a tree of 1000 entries" "$TMP/err" &&
	expect_match "/huge.: .*an answer of more than 65536 bytes" "$TMP/err" &&
	expect_match "/moved.: HTTP status 302" "$TMP/err" &&
	expect_eq 1 "$(grep -c "^— " "$CP")" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/a.asc" >/dev/null
'

test_expect_success 'the requests: POST to PREFIX/add-checkpoint, text/plain, no Expect, the old size first' '
	expect_match "^POST /error/add-checkpoint text/plain; charset=utf-8 None old 2$" "$TMP/requests" &&
	expect_match "^POST /ahead/add-checkpoint .* old 2$" "$TMP/requests" &&
	expect_eq 1 "$(grep -c "^POST /ahead/" "$TMP/requests")"
'

test_done
