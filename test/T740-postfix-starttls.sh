#!/bin/bash
# T740-postfix-starttls: the robot's mail over SMTP with STARTTLS to a real
# Postfix smtpd: after STARTTLS the client says EHLO again (Postfix logs
# ehlo=2 starttls=1); a self-signed certificate on a relay of this machine
# is accepted by default; with verification on, a certificate from a
# throwaway CA that the instance trusts verifies, by IP address and by
# name, and one for another name does not; a pinned certificate is
# accepted whatever its chain.  Three smtpd services of one private
# Postfix instance, one per certificate.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/mta-lib.sh"

if ! pf_usable; then
	test_skip "STARTTLS against Postfix" "needs root, Postfix (Debian package postfix) and the users postfix and $MTA_USER"
	test_done
fi
if ! command -v openssl >/dev/null 2>&1; then
	test_skip "STARTTLS against Postfix" "openssl is not installed (Debian package openssl)"
	test_done
fi

# ---- certificates ----------------------------------------------------------------
T="$TMP/tls"
mkdir -p "$T"
ssl() { openssl "$@" >>"$T/openssl.log" 2>&1 || { cat "$T/openssl.log" >&2; return 1; }; }
# self-signed for the host name, as Debian's ssl-cert makes the snakeoil one
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=mx.example.org" \
	-keyout "$T/self.key" -out "$T/self.crt"
# a throwaway CA, and two certificates it signed
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=vulnid test CA" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
	-keyout "$T/ca.key" -out "$T/ca.crt"
ca_signed() {
	ssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$T/$1.key" -out "$T/$1.csr"
	printf "subjectAltName=%s\nextendedKeyUsage=serverAuth\n" "$3" >"$T/$1.ext"
	ssl x509 -req -in "$T/$1.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
		-extfile "$T/$1.ext" -out "$T/$1.crt"
}
ca_signed good localhost "DNS:localhost,IP:127.0.0.1"
ca_signed other other.example "DNS:other.example"
fingerprint() { openssl x509 -noout -fingerprint -sha256 -in "$1" | sed 's/^.*=//'; }

# ---- Postfix: one smtpd per certificate ----------------------------------------
SELF=$(free_port)
GOOD=$(free_port)
OTHER=$(free_port)
pf_setup "$TMP/pf"
cat >>"$PF_CFG/main.cf" <<EOF
smtpd_tls_security_level = may
smtpd_tls_loglevel = 1
EOF
for s in "SELF self" "GOOD good" "OTHER other"; do
	set -- $s
	pf_service "127.0.0.1:${!1} inet n - n - - smtpd -o smtpd_tls_chain_files=$T/$2.key,$T/$2.crt"
done

test_expect_success 'setup: a Postfix instance with three STARTTLS smtpd services' '
	pf_start &&
	mta_wait_port "$SELF" && mta_wait_port "$GOOD" && mta_wait_port "$OTHER"
'

make_instance inst
# many unsigned mails from one sender: their answers are not what is tested here
set_conf policy unverified_answer_bytes 0
set_conf delivery timeout 10
Y=$(date -u +%Y)
echo 0 >"$TMP/n"
# send: one request through the filter, whose ack goes out at once; its
# number in $n, its outbox item in $ID, the Postfix log lines of that
# session in $TMP/session.log.  (Cases run in subshells: the count is
# kept in a file.)
send() {
	n=$(($(cat "$TMP/n") + 1))
	echo "$n" >"$TMP/n"
	local before
	before=$(wc -l <"$PF_LOG")
	printf "Product: TLS%s\n" "$n" | write_mail "$TMP/m$n.eml" "Message-ID: <tls$n@example.net>" "Subject: TLS case $n"
	deliver_ok "$TMP/m$n.eml"
	ID=$(sql "SELECT max(id) FROM outbox")
	sleep 0.3
	tail -n +"$((before + 1))" "$PF_LOG" >"$TMP/session.log"
	cat "$TMP/session.log" >&2
}
status() { sql "SELECT status FROM outbox WHERE id = $ID"; }
why() { sql "SELECT last_error FROM outbox WHERE id = $ID"; }
# in_maildir N: the ack of case N reached the Maildir through Postfix
in_maildir() {
	local _
	for _ in $(seq 100); do
		grep -lq "^Subject: \[TEST-$Y-[0-9]*\] TLS case $1$" "$PF_MAILDIR"/new/* 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

test_expect_success 'defaults of a new instance, self-signed relay on 127.0.0.1: delivered over TLS, EHLO again after STARTTLS' '
	set_conf delivery transport "smtp://127.0.0.1:$SELF" &&
	expect_match "^starttls = if-available$" "$CONF" &&
	expect_match "^tls_verify = remote$" "$CONF" &&
	send &&
	expect_eq delivered "$(status)" &&
	expect_match "Anonymous TLS connection established from localhost\[127.0.0.1\]: TLSv1.2 " "$TMP/session.log" &&
	expect_match "disconnect from localhost\[127.0.0.1\] ehlo=2 starttls=1 mail=1 rcpt=1 (data=1|bdat=[0-9]+) quit=1" "$TMP/session.log" &&
	in_maildir $n
'

# TLS 1.3 session tickets arriving before the second EHLO made libESMTP
# wait for an answer to an EHLO it had not sent, now and then: many
# sessions in a row, none may hang.
test_expect_success '20 sessions in a row: every one delivers, none waits for the timeout' '
	set_conf delivery timeout 3 &&
	for i in $(seq 20); do
		send 2>/dev/null &&
		expect_eq delivered "$(status)" "session $i: $(why)" || exit 1
	done &&
	set_conf delivery timeout 10
'

test_expect_success 'tls_verify = yes: the self-signed certificate is refused before anything is sent, with what to do' '
	set_conf delivery tls_verify yes &&
	send &&
	expect_eq deferred "$(status)" &&
	why >"$TMP/why" &&
	expect_match "the relay.s TLS certificate does not verify: self-signed certificate \(depth 0\); for a relay on this machine set \[delivery\] tls_verify = remote" "$TMP/why" &&
	expect_no_match "mail=|rcpt=" "$TMP/session.log" &&
	expect_match "disconnect from localhost\[127.0.0.1\] ehlo=1 starttls=0/1 commands=1/2" "$TMP/session.log"
'

test_expect_success 'starttls = if-available never falls back to plain text when the certificate is refused' '
	"$VULNID" -c "$CONF" queue run --force >/dev/null 2>&1 || true
	ID=$(sql "SELECT max(id) FROM outbox") && n=$(cat "$TMP/n") &&
	expect_eq deferred "$(status)" &&
	expect_eq 0 "$(grep -c "TLS case $n" "$PF_MAILDIR"/new/* 2>/dev/null | awk -F: "{s+=\$2} END {print s+0}")"
'

test_expect_success 'a certificate from a CA in tls_ca_file verifies, for 127.0.0.1 (IP SAN) and localhost (DNS SAN)' '
	cp "$T/ca.crt" "$INST/relay-ca.pem" &&
	set_conf delivery tls_ca_file relay-ca.pem &&
	set_conf delivery transport "smtp://127.0.0.1:$GOOD" &&
	send &&
	expect_eq delivered "$(status)" "$(why)" &&
	expect_match "Anonymous TLS connection established from localhost\[127.0.0.1\]" "$TMP/session.log" &&
	expect_match "ehlo=2 starttls=1 mail=1 rcpt=1 (data=1|bdat=[0-9]+) quit=1" "$TMP/session.log" &&
	in_maildir $n &&
	set_conf delivery transport "smtp://localhost:$GOOD" &&
	send &&
	expect_eq delivered "$(status)" "$(why)" &&
	in_maildir $n
'

test_expect_success 'without that CA (the system'\''s only) it does not verify' '
	set_conf delivery tls_ca_file "" &&
	send &&
	expect_eq deferred "$(status)" &&
	why | grep -q "does not verify: unable to get local issuer certificate" &&
	set_conf delivery tls_ca_file relay-ca.pem
'

test_expect_success 'a certificate of the same CA for another name does not verify' '
	set_conf delivery transport "smtp://127.0.0.1:$OTHER" &&
	send &&
	expect_eq deferred "$(status)" &&
	why | grep -q "does not verify: IP address mismatch" &&
	set_conf delivery transport "smtp://localhost:$OTHER" &&
	send &&
	expect_eq deferred "$(status)" &&
	why | grep -q "does not verify: hostname mismatch" &&
	expect_no_match "mail=" "$TMP/session.log"
'

test_expect_success 'tls_fingerprint pins the self-signed certificate: accepted; another one refused' '
	set_conf delivery transport "smtp://127.0.0.1:$SELF" &&
	set_conf delivery tls_fingerprint "$(fingerprint "$T/self.crt")" &&
	send &&
	expect_eq delivered "$(status)" "$(why)" &&
	in_maildir $n &&
	set_conf delivery transport "smtp://127.0.0.1:$GOOD" &&
	send &&
	expect_eq deferred "$(status)" &&
	why | grep -Eq "certificate \(SHA-256 $(fingerprint "$T/good.crt" | tr -d : | tr A-F a-f)\) is not one of \[delivery\] tls_fingerprint" &&
	set_conf delivery tls_fingerprint "sha256:12:34"
	rc=0; "$VULNID" -c "$CONF" queue list >/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_match "tls_fingerprint: .sha256:12:34. is not a SHA-256 fingerprint" "$TMP/err" &&
	set_conf delivery tls_fingerprint ""
'

test_expect_success 'tls_verify = no accepts the wrong name too; the deferred mail then goes out' '
	set_conf delivery tls_verify no &&
	set_conf delivery transport "smtp://127.0.0.1:$OTHER" &&
	"$VULNID" -c "$CONF" queue run --force >"$TMP/out" 2>&1 &&
	expect_eq 0 "$(sql "SELECT count(*) FROM outbox WHERE status <> '\''delivered'\''")" &&
	"$VULNID" -c "$CONF" audit verify
'

test_done
