# T6-lib.sh - helpers of the export tests (sourced after test-lib.sh)
#
# The robot's key: vulnid init makes it in DIR/gnupg; an instance without
# one gets a throwaway key here.  Every gpg-agent the tests cause is stopped
# at exit, by home directory.

GNUPG_HOMES=""

stop_agents() {
	local h
	for h in $GNUPG_HOMES; do
		gpgconf --homedir "$h" --kill all 2>/dev/null
	done
}
trap 'stop_agents; test_cleanup' EXIT

# ensure_robot_key: $INST/gnupg holds a secret key afterwards.
ensure_robot_key() {
	GNUPG_HOMES="$GNUPG_HOMES $INST/gnupg"
	if ! gpg --homedir "$INST/gnupg" --batch --list-secret-keys 2>/dev/null | grep -q '^sec'; then
		mkdir -m 700 "$INST/gnupg" 2>/dev/null || chmod 700 "$INST/gnupg"
		gpg --homedir "$INST/gnupg" --batch --passphrase '' \
			--quick-gen-key 'vulnid <request@example.org>' ed25519 sign never >/dev/null 2>&1
	fi
}

# export_instance NAME [init options]: make_instance, with a robot key.
export_instance() {
	make_instance "$@" && ensure_robot_key
}

# robot_key FILE: the robot's public key, as a mirror would have it.
robot_key() {
	gpg --homedir "$INST/gnupg" --batch --armor --export >"$1"
}

# request FILE ADDRESS SUBJECT with the body on stdin; delivered at once.
request() {
	local file=$1 from=$2 subject=$3
	write_mail "$file" "From: $from" "Subject: $subject" || return 1
	deliver_ok "$file" -f "$from" -r request@example.org
}

# dbtool COMMAND ...: change the database as the lifecycle code would
# (records of other kinds, embargoes), computing hashes as vulnid-json(7)
# says.  Commands:
#   add ENTRY KIND ROLE AUTHOR FIELDS_JSON BODY [opens=N] [mail=FILE] [subject=S] [how=H]
#       (the role established by token, or key for moderators, unless how=)
#   sealed ENTRY_ID SUBJECT FIELDS_JSON BODY EMBARGO   (a new entry, record 1 sealed)
#   release ENTRY SUBJECT FIELDS_JSON BODY             (discloses record 1)
dbtool() {
	"$PYTHON" - "$INST/vulnid.db" "$@" <<'PY'
import hashlib, json, os, sqlite3, sys, time

def s(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

def canon(e, seq, created, kind, auth, subject, fields, body, atts=()):
    a = ",".join('{"sha256":' + s(x["sha256"]) + ',"size":' + str(x["size"]) +
                 ',"content_type":' + s(x["content_type"]) + ',"filename":' + s(x["filename"]) + "}"
                 for x in atts)
    return ('{"v":"vulnid-record-1","entry":' + s(e) + ',"seq":' + str(seq) +
            ',"created":' + s(created) + ',"kind":' + s(kind) + ',"auth":' + auth +
            ',"subject":' + s(subject) + ',"fields":' + fields + ',"body":' + s(body) +
            ',"attachments":[' + a + "]}").encode("utf-8")

def sha(b):
    return hashlib.sha256(b).hexdigest()

db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
cmd, args = sys.argv[2], sys.argv[3:]
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
AUTH = '{"method":"none"}'

def message(raw, sender):
    h = sha(raw)
    if db.execute("SELECT 1 FROM blobs WHERE sha256 = ?", (h,)).fetchone() is None:
        db.execute("INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)", (h, len(raw), raw))
    db.execute("INSERT INTO messages (received, raw_sha256, dedup_key, message_id, envelope_from,"
               " from_addr, disposition) VALUES (?, ?, ?, ?, ?, ?, 'request')",
               (now, h, "test:" + h + ":" + str(time.time_ns()), None, sender, sender))
    return db.execute("SELECT last_insert_rowid()").fetchone()[0]

def canonical_fields(text):
    f = json.loads(text)
    return s(f)

if cmd == "add":
    entry, kind, role, author, fields, body = args[:6]
    opt = dict(a.split("=", 1) for a in args[6:])
    fields = canonical_fields(fields)
    subject = opt.get("subject", "Re: " + entry)
    seq = db.execute("SELECT max(seq) FROM records WHERE entry = ?", (entry,)).fetchone()[0] + 1
    msg = message(open(opt["mail"], "rb").read(), author) if "mail" in opt else None
    opens = int(opt["opens"]) if "opens" in opt else None
    # the role as verified intake would have established it, unless how= says otherwise
    how = opt.get("how", {"creator": "token", "vendor": "token", "moderator": "key",
                          "operator": "key"}.get(role, "none"))
    auth = '{"method":"none","role":' + s(role) + ',"how":' + s(how) + '}'
    h = sha(canon(entry, seq, now, kind, auth, subject, fields, body))
    db.execute("INSERT INTO records (entry, seq, created, kind, message, author, role, auth, subject,"
               " fields, body, sha256, opens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (entry, seq, now, kind, msg, author or None, role, auth, subject, fields, body, h, opens))
    print(seq)
elif cmd == "sealed":
    eid, subject, fields, body, embargo = args
    fields = canonical_fields(fields)
    year, number = int(eid.split("-")[1]), int(eid.split("-")[2])
    msg = message(("Subject: " + subject + "\n\n" + body + "\n").encode(), "sealed@example.net")
    digest = sha(canon(eid, 1, now, "request", AUTH, subject, fields, body))
    db.execute("INSERT INTO entries (id, year, number, digest, created, embargo, message)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)", (eid, year, number, digest, now, embargo, msg))
    db.execute("INSERT INTO records (entry, seq, created, kind, message, author, role, auth, subject,"
               " fields, body, sha256, sealed) VALUES (?, 1, ?, 'request', ?, ?, 'creator', ?, NULL,"
               " '[]', '', ?, ?)", (eid, now, msg, "sealed@example.net", AUTH, digest,
               "-----BEGIN PGP MESSAGE-----\n\nnot really\n-----END PGP MESSAGE-----\n"))
    print(digest)
elif cmd == "release":
    entry, subject, fields, body = args
    fields = canonical_fields(fields)
    seq = db.execute("SELECT max(seq) FROM records WHERE entry = ?", (entry,)).fetchone()[0] + 1
    h = sha(canon(entry, seq, now, "release", AUTH, subject, fields, body))
    db.execute("INSERT INTO records (entry, seq, created, kind, author, role, auth, subject,"
               " fields, body, sha256, opens) VALUES (?, ?, ?, 'release', NULL, 'operator', ?, ?, ?,"
               " ?, ?, 1)", (entry, seq, now, AUTH, subject, fields, body, h))
    print(seq)
else:
    sys.exit("dbtool: unknown command " + cmd)
db.execute("COMMIT")
PY
}

# forge DIR YEAR LINE PYTHON [rehash] [GNUPGHOME]: change line LINE of
# DIR/YEAR.jsonl (the statement PYTHON acts on the dict o), optionally
# recompute the record's sha256, re-chain the rest of the file, rewrite
# HEAD.json, and sign it again with the key in GNUPGHOME: what a forger
# (or a lying robot, with its own key) would do.
forge() {
	"$PYTHON" - "$@" <<'PY'
import hashlib, json, os, subprocess, sys
d, year, ln, stmt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rehash = len(sys.argv) > 5 and sys.argv[5] == "rehash"
home = sys.argv[6] if len(sys.argv) > 6 else None
def s(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
def sha(b):
    return hashlib.sha256(b).hexdigest()
def canon(o):
    a = ",".join('{"sha256":' + s(x["sha256"]) + ',"size":' + str(x["size"]) +
                 ',"content_type":' + s(x["content_type"]) + ',"filename":' + s(x["filename"]) + "}"
                 for x in o["attachments"])
    return ('{"v":"vulnid-record-1","entry":' + s(o["entry"]) + ',"seq":' + str(o["seq"]) +
            ',"created":' + s(o["created"]) + ',"kind":' + s(o["kind"]) + ',"auth":' + s(o["auth"]) +
            ',"subject":' + s(o["subject"]) + ',"fields":' + s(o["fields"]) + ',"body":' + s(o["body"]) +
            ',"attachments":[' + a + "]}").encode("utf-8")
path = os.path.join(d, "%04d.jsonl" % year)
objs = [json.loads(l) for l in open(path, "rb")]
o = objs[ln - 1]
exec(stmt)
if rehash:
    o["sha256"] = sha(canon(o))
prev = "0" * 64
with open(path, "wb") as f:
    for i, o in enumerate(objs, 1):
        o["n"], o["prev"] = i, prev
        o.pop("hash")
        body = s(o).encode("utf-8")[:-1]
        o["hash"] = sha(body)
        prev = o["hash"]
        f.write(s(o).encode("utf-8") + b"\n")
hp = os.path.join(d, "HEAD.json")
head = json.load(open(hp, "rb"))
for y in head["years"]:
    if y["year"] == year:
        y["lines"], y["hash"] = len(objs), prev
open(hp, "wb").write(s(head).encode("utf-8") + b"\n")
if home:
    subprocess.run(["gpg", "--homedir", home, "--batch", "--yes", "--armor", "--detach-sign",
                    "-o", hp + ".asc", hp], check=True, stderr=subprocess.DEVNULL)
PY
}

# doc_verifier FILE: the Python verifier of doc/vulnid-feed.5, as printed.
doc_verifier() {
	awk '/^\.SS A verifier in Python/ { f = 1 } f && /^\.EX/ { g = 1; next } g && /^\.EE/ { exit } g { print }' \
		"$VULNID_SRCDIR/doc/vulnid-feed.5" |
		sed -e "s/\\\\(aq/'/g" -e 's/\\-/-/g' -e 's/\\e/\\/g' >"$1"
	test -s "$1"
}

# build_tlogcheck: $GOCHECK, the Go checker test/tlogcheck.go built from
# Debian's golang.org/x/mod/sumdb packages (GOPATH mode, no network).
build_tlogcheck() {
	GOCHECK="$TMP/tlogcheck"
	cp "$VULNID_SRCDIR/test/tlogcheck.go" "$TMP/tlogcheck.go" &&
	(cd "$TMP" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$TMP/gocache" GOFLAGS= \
		go build -o "$GOCHECK" tlogcheck.go) >"$TMP/go.out" 2>&1 ||
		fail "cannot build the Go verifier (contrib/quickstart installs golang-go and golang-golang-x-mod-dev): $(cat "$TMP/go.out")"
}

# feed_records N: $INST's fresh database gets N entries of one record each
# (test/bench/gen-db.sh), with the hashes vulnid-json(7) gives them.
feed_records() {
	bash "$VULNID_SRCDIR/test/bench/gen-db.sh" "$INST/vulnid.db" "$1" "$(date -u +%Y)" >/dev/null &&
	"$PYTHON" - "$INST/vulnid.db" <<'PY'
import hashlib, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
s = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
trig = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
db.execute("BEGIN")
for name, _ in trig:
    db.execute("DROP TRIGGER " + name)
for rid, e, seq, created, kind, auth, subject, fields, body in db.execute(
        "SELECT id, entry, seq, created, kind, auth, subject, fields, body FROM records").fetchall():
    c = ('{"v":"vulnid-record-1","entry":' + s(e) + ',"seq":' + str(seq) + ',"created":' + s(created) +
         ',"kind":' + s(kind) + ',"auth":' + auth + ',"subject":' + s(subject) + ',"fields":' + fields +
         ',"body":' + s(body) + ',"attachments":[]}').encode()
    h = hashlib.sha256(c).hexdigest()
    db.execute("UPDATE records SET sha256 = ? WHERE id = ?", (h, rid))
    db.execute("UPDATE entries SET digest = ? WHERE id = ? AND ? = 1", (h, e, seq))
for _, sql in trig:
    db.execute(sql)
db.execute("COMMIT")
PY
}

# flip_byte FILE OFFSET: invert every bit of one byte (writing a fixed
# value would change nothing when the byte already had it).
flip_byte() {
	"$PYTHON" -c 'import sys; p, o = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[o] ^= 0xff; open(p, "wb").write(b)' "$1" "$2"
}

# verify_fails DIR PATTERN [extra options]: verify-feed must exit 65 and
# say PATTERN.
verify_fails() {
	local dir=$1 pattern=$2
	shift 2
	rc=0
	"$VULNID" verify-feed "$dir" --key "$TMP/robot.asc" "$@" >"$TMP/vf.out" 2>"$TMP/vf.err" || rc=$?
	[ "$rc" -eq 65 ] || fail "verify-feed exited $rc, not 65: $(cat "$TMP/vf.err")"
	expect_match "$pattern" "$TMP/vf.err"
}
