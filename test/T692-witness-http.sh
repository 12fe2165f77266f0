#!/bin/bash
# T692-witness-http: C2SP tlog-witness over HTTP, both ways: vulnid export
# posts each new checkpoint to the witnesses of [export] witnesses (libcurl)
# and merges their cosignatures, answering a 409 by proving again from the
# witness's size; vulnid witness serve answers on the connections systemd
# hands it (systemd-socket-activate, as a socket unit with Accept=yes), as
# Python's http.client sees it too: every status of the protocol,
# keep-alive, and the bounds.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

Y=$(date -u +%Y)
build_tlogcheck
command -v systemd-socket-activate >/dev/null || fail "systemd-socket-activate (package systemd) is needed"
export_instance a
robot_key "$TMP/a.asc"
request "$TMP/r1.eml" alice@example.net "First" <<'MAIL'
Vendor: Foo

Text.
MAIL
request "$TMP/r2.eml" bob@example.net "Second" </dev/null
# The log grows twice before it has a witness: the witness's size (0) is
# not the size of the checkpoint before the next export (3).
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
request "$TMP/r3.eml" carol@example.net "Third" </dev/null
"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null || fail "cannot export"
LK="$TMP/feed/log/log.vkey"
CP="$TMP/feed/log/checkpoint"
OH=$(printf %s "$(sed -n 1p "$CP")" | sha256sum | cut -c1-64)

"$VULNID" witness --state "$TMP/w" init example.net/w >"$TMP/w.vkey" || fail "no witness"
# Another log the witness knows nothing of.
export_instance other --prefix OTHR
request "$TMP/o1.eml" olga@example.net "Other" </dev/null
"$VULNID" -c "$CONF" export feed "$TMP/ofeed" >/dev/null || fail "cannot export"
INST=$TMP/a CONF=$TMP/a/vulnid.conf

PORT=$(free_port)
systemd-socket-activate -l "127.0.0.1:$PORT" --inetd -a \
	"$VULNID" witness --state "$TMP/w" serve --log-key "$LK" 2>"$TMP/ssa.log" &
bg_track $!
for _ in $(seq 100); do ss -ltnH "sport = :$PORT" | grep -q . && break; sleep 0.05; done
URL="http://127.0.0.1:$PORT/w"

# http METHOD PATH [BODYFILE [HEADER=VALUE...]]: one request with Python's
# http.client; prints "STATUS CONTENT-TYPE" and the body.
http() {
	"$PYTHON" - "$PORT" "$@" <<-"PY"
	import http.client, sys
	port, method, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
	body = open(sys.argv[4], "rb").read() if len(sys.argv) > 4 and sys.argv[4] != "-" else None
	headers = dict(h.split("=", 1) for h in sys.argv[5:])
	c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
	c.request(method, path, body=body, headers=headers)
	r = c.getresponse()
	sys.stdout.write("%d %s\n" % (r.status, r.getheader("Content-Type")))
	sys.stdout.buffer.write(r.read())
	PY
}

test_expect_success 'vulnid export posts the checkpoint, proves again from the size of the 409, merges the cosignature' '
	set_conf export witnesses "$(cat "$TMP/w.vkey") $URL/" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "0 new lines.*cosigned by 1 of 1 witnesses [(]1 new[)]" "$TMP/out" &&
	test ! -s "$TMP/err" &&
	expect_match "^— example.net/w " "$CP" &&
	expect_eq "3 " "$(cut -d" " -f1 "$TMP/w/logs/$OH.log" | tr "\n" " ")" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/a.asc" --witness-key "$TMP/w.vkey" >/dev/null &&
	"$GOCHECK" -feed "$TMP/feed" -vkey "$(cat "$LK")" -witness "$(cat "$TMP/w.vkey")" >"$TMP/go.out" 2>&1 &&
	expect_match "ok cosignatures 1" "$TMP/go.out"
'

request "$TMP/r4.eml" dave@example.net "Fourth" </dev/null

test_expect_success 'the next checkpoint is sent with the proof from the last one, and cosigned at once' '
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "1 new lines.*log of 4 entries, checkpoint signed, cosigned by 1 of 1 witnesses [(]1 new[)]" "$TMP/out" &&
	expect_eq "3 4 " "$(cut -d" " -f1 "$TMP/w/logs/$OH.log" | tr "\n" " ")" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/a.asc" --witness-key "$TMP/w.vkey" >/dev/null
'

test_expect_success 'the witness serves what it cosigned at PREFIX/HASH/checkpoint (GET)' '
	http GET "/w/$OH/checkpoint" >"$TMP/got" &&
	expect_eq "200 text/plain; charset=utf-8" "$(head -n 1 "$TMP/got")" &&
	tail -n +2 "$TMP/got" >"$TMP/got.cp" && cmp "$TMP/got.cp" "$CP" &&
	http GET "/w/$(printf %064d 0)/checkpoint" >"$TMP/got" && expect_match "^404 " "$TMP/got"
'

test_expect_success 'add-checkpoint as Python sees it: 409 with the size, 200 for the same tree, 404, 403' '
	"$VULNID" prove "$TMP/feed" --consistency 0 >"$TMP/req0" &&
	http POST /w/add-checkpoint "$TMP/req0" >"$TMP/got" &&
	expect_eq "409 text/x.tlog.size" "$(head -n 1 "$TMP/got")" && expect_eq 4 "$(sed -n 2p "$TMP/got")" &&
	"$VULNID" prove "$TMP/feed" --consistency 4 >"$TMP/req4" &&
	http POST /w/add-checkpoint "$TMP/req4" >"$TMP/got" &&
	expect_eq "200 text/plain; charset=utf-8" "$(head -n 1 "$TMP/got")" &&
	sed -n 2p "$TMP/got" >"$TMP/sig" && grep -qxF "$(cat "$TMP/sig")" "$CP" &&
	"$VULNID" prove "$TMP/ofeed" --consistency 0 >"$TMP/oreq" &&
	http POST /w/add-checkpoint "$TMP/oreq" >"$TMP/got" && expect_match "^404 " "$TMP/got" &&
	sed "0,/^— /s/^\(— [^ ]* .\{20\}\)./\1A/" "$TMP/req4" >"$TMP/req4.bad" && ! cmp -s "$TMP/req4" "$TMP/req4.bad" &&
	http POST /w/add-checkpoint "$TMP/req4.bad" >"$TMP/got" && expect_match "^403 " "$TMP/got"
'

test_expect_success 'add-checkpoint: 400 malformed or an old size beyond the tree, 422 a proof that does not verify' '
	printf "not a request\n" >"$TMP/junk" &&
	http POST /w/add-checkpoint "$TMP/junk" >"$TMP/got" && expect_match "^400 " "$TMP/got" &&
	sed "1s/.*/old 9/" "$TMP/req4" >"$TMP/req9" &&
	http POST /w/add-checkpoint "$TMP/req9" >"$TMP/got" && expect_match "^400 " "$TMP/got" &&
	request "$TMP/r5.eml" erin@example.net "Fifth" </dev/null &&
	set_conf export witnesses "" &&
	cp -a "$TMP/feed" "$TMP/f5" && "$VULNID" -c "$CONF" export feed "$TMP/f5" >/dev/null &&
	set_conf export witnesses "$(cat "$TMP/w.vkey") $URL/" &&
	"$VULNID" prove "$TMP/f5" --consistency 4 >"$TMP/req5" &&
	sed "2s/^./A/" "$TMP/req5" >"$TMP/req5.bad" && ! cmp -s "$TMP/req5" "$TMP/req5.bad" &&
	http POST /w/add-checkpoint "$TMP/req5.bad" >"$TMP/got" && expect_match "^422 " "$TMP/got" &&
	expect_eq "3 4 " "$(cut -d" " -f1 "$TMP/w/logs/$OH.log" | tr "\n" " ")"
'

test_expect_success 'HTTP: 405, 404 elsewhere, 411 chunked, 413 too large, two requests on one connection' '
	http GET /w/add-checkpoint >"$TMP/got" && expect_match "^405 " "$TMP/got" &&
	http GET /w/elsewhere >"$TMP/got" && expect_match "^404 " "$TMP/got" &&
	head -c 70000 /dev/zero >"$TMP/big" &&
	http POST /w/add-checkpoint "$TMP/big" >"$TMP/got" && expect_match "^413 " "$TMP/got" &&
	"$PYTHON" - "$PORT" "$TMP/req4" <<-"PY"
	import http.client, socket, sys
	port, body = int(sys.argv[1]), open(sys.argv[2], "rb").read()
	c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
	for i in range(2):
	    c.request("POST", "/w/add-checkpoint", body=body)
	    r = c.getresponse()
	    assert r.status == 200 and not r.will_close, (r.status, r.will_close)
	    r.read()
	s = socket.create_connection(("127.0.0.1", port), timeout=20)
	s.sendall(b"POST /w/add-checkpoint HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	assert s.recv(100).startswith(b"HTTP/1.1 411 "), "chunked"
	PY
'

test_expect_success 'an unreachable witness: the export is done, the problem reported' '
	set_conf export witnesses "$(cat "$TMP/w.vkey") http://127.0.0.1:$(free_port)" &&
	request "$TMP/r6.eml" fred@example.net "Sixth" </dev/null &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >"$TMP/out" 2>"$TMP/err" &&
	expect_match "cosigned by 0 of 1 witnesses" "$TMP/out" &&
	expect_match "witness example.net/w .*onnect" "$TMP/err" &&
	"$VULNID" verify-feed "$TMP/feed" --key "$TMP/a.asc" >/dev/null
'

test_expect_success 'the example systemd units for vulnid witness serve pass systemd-analyze verify' '
	if ! command -v systemd-analyze >/dev/null; then exit 0; fi &&
	mkdir -p "$TMP/units" &&
	sed "s|/usr/local/sbin/vulnid|$VULNID|" "$VULNID_SRCDIR/contrib/systemd/vulnid-witness@.service" \
		>"$TMP/units/vulnid-witness@.service" &&
	cp "$VULNID_SRCDIR/contrib/systemd/vulnid-witness.socket" "$TMP/units/" &&
	systemd-analyze verify --man=no "$TMP/units/vulnid-witness.socket" >"$TMP/sa.out" 2>&1 ||
		{ cat "$TMP/sa.out"; exit 1; }
	grep -q "^Accept=yes$" "$TMP/units/vulnid-witness.socket" &&
	grep -q "^StandardInput=socket$" "$TMP/units/vulnid-witness@.service"
'

test_done
