#!/bin/bash
# gen-db.sh DB COUNT YEAR: fill an instance's fresh database with COUNT
# entries of YEAR, each with its message, first record, ack in the outbox
# (delivered) and an audit row, as if COUNT requests had come in; and
# write the matching last line of audit.log next to it.  The append-only
# triggers are dropped for the bulk insert and put back unchanged.
set -eu
db=$1 n=$2 y=$3
dir=$(dirname "$db")
sqlite3 -batch "$db" "SELECT sql || ';' FROM sqlite_master WHERE type = 'trigger'" >"$dir/.triggers.sql"
sqlite3 -batch "$db" "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger'" >"$dir/.drop.sql"
sqlite3 -batch "$db" <<SQL
.read $dir/.drop.sql
PRAGMA synchronous = OFF;
BEGIN;
INSERT INTO blobs (sha256, size, data) VALUES ('$(printf '%064d' 0)', 1, x'00');
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO messages (id, received, raw_sha256, dedup_key, message_id, envelope_from, envelope_to,
                      from_addr, subject, disposition)
SELECT i, '$y-01-01T00:00:00Z', '$(printf '%064d' 0)', 'gen:' || i, 'gen' || i || '@example.net',
       'alice@example.net', 'request@example.org', 'alice@example.net', 'generated ' || i, 'request' FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO entries (id, year, number, digest, created, message)
SELECT printf('TEST-$y-%04d', i), $y, i, printf('%064x', i), '$y-01-01T00:00:00Z', i FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO records (entry, seq, created, kind, message, author, role, auth, subject, fields, body, sha256)
SELECT printf('TEST-$y-%04d', i), 1, '$y-01-01T00:00:00Z', 'request', i, 'alice@example.net', 'creator',
       '{"method":"none"}', 'generated ' || i, '[["Product","Generated"]]', 'A generated entry.',
       printf('%064x', i) FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO outbox (id, created, kind, entry, cause, message_id, envelope_from, recipients, data, status,
                    attempts, next_attempt, updated)
SELECT i, '$y-01-01T00:00:00Z', 'ack', printf('TEST-$y-%04d', i), i, 'ack.' || i || '@example.org',
       'request-bounces+' || printf('%024x', i) || '@example.org', '["alice@example.net"]', 'x',
       'delivered', 1, '$y-01-01T00:00:00Z', '$y-01-01T00:00:00Z' FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO outbox_recipients (outbox, address, status, reply, updated)
SELECT i, 'alice@example.net', 'delivered', '250 ok', '$y-01-01T00:00:00Z' FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $n)
INSERT INTO audit (line, hash)
SELECT '{"event":"generated","n":' || i || ',"hash":"' || printf('%064x', i + 1000000000) || '"}',
       printf('%064x', i + 1000000000) FROM c;
COMMIT;
.read $dir/.triggers.sql
PRAGMA wal_checkpoint(TRUNCATE);
SQL
# audit_flush reads the file's last line and finds it in the chain.
sqlite3 -batch "$db" "SELECT line FROM audit ORDER BY seq DESC LIMIT 1" >"$dir/audit.log"
rm -f "$dir/.triggers.sql" "$dir/.drop.sql"
