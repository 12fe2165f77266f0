#!/usr/bin/env python3
"""make-seeds.py - write the seed corpora of test/fuzz/corpus/NAME.

Hand-made, real-world-shaped inputs; run it again after changing it (the
files are kept in the repository, so the fuzzers and T950 need no Python).
Also copies test/corpora/malformed/*.eml and ../shared/mail-samples/*
(when that directory exists) into the intake corpus."""
import base64, hashlib, json, os, shutil, sys

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
out = os.path.join(here, "corpus")

def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def hdr(subject="Heap overflow in frobnicate()", mid="seed1@example.net", extra="",
        frm="Alice Researcher <alice@example.net>", to="request@example.org"):
    return (f"From: {frm}\nTo: {to}\nSubject: {subject}\n"
            f"Date: Mon, 01 Jun 2026 10:00:00 +0200\nMessage-ID: <{mid}>\n"
            "MIME-Version: 1.0\n" + extra)

REQ = ("Vendor: Example Corp <example.com>\nProduct: Example Server\nVersion: 2.4.1\n"
       "Version: 2.5.0-rc1\nType: CWE-122\nReference: https://example.org/advisory/1\n"
       "Anonymous: no\n\nA heap buffer overflow in frobnicate() lets a remote attacker\n"
       "run code by sending a long Host header.\n")

# --- intake: whole mails -----------------------------------------------------
put("intake", "01-mutt-plain", hdr(extra="Content-Type: text/plain; charset=us-ascii\n"
    "Content-Disposition: inline\nUser-Agent: NeoMutt/20220429\n") + "\n" + REQ + "\n-- \nAlice\n")
put("intake", "02-two-blocks", hdr(mid="seed2@example.net",
    extra="Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n") +
    "\nProduct: Zeta\nTitle: Überlauf in zeta_parse()\n\nFirst.\n---\nProduct: Eta\nEmbargo: no\n\nSecond.\n---\n")
put("intake", "03-help", hdr(subject="help", mid="seed3@example.net",
    extra="Content-Type: text/plain\n") + "\nhelp\n")
put("intake", "04-key", hdr(subject="key", mid="seed4@example.net", extra="Content-Type: text/plain\n") + "\n")
put("intake", "05-thunderbird-alternative", hdr(mid="seed5@example.net",
    extra='User-Agent: Mozilla/5.0 Thunderbird/115.0\nContent-Type: multipart/alternative;\n boundary="------------tb0123456789"\n') +
    "\nThis is a multi-part message in MIME format.\n--------------tb0123456789\n"
    "Content-Type: text/plain; charset=UTF-8; format=flowed\nContent-Transfer-Encoding: 7bit\n\n"
    "Product: Flowed \nThing\n\nA long line that was \nwrapped by the client.\n\n"
    "--------------tb0123456789\nContent-Type: text/html; charset=UTF-8\nContent-Transfer-Encoding: 7bit\n\n"
    "<html><body><p>Product: Flowed Thing</p><p>A long line</p></body></html>\n"
    "--------------tb0123456789--\n")
put("intake", "06-outlook-html-only", hdr(mid="seed6@example.net", frm='"M\u00fcller, J\u00f6rg" <joerg@example.de>',
    extra="Content-Type: text/html; charset=\"windows-1252\"\nContent-Transfer-Encoding: quoted-printable\n"
    "X-MS-Has-Attach: \nThread-Topic: Sicherheitsl=FCcke\n").replace("Müller, Jörg", "=?iso-8859-1?Q?M=FCller=2C_J=F6rg?=") +
    "\n<html><head><style>p{margin:0}</style><script>x()</script></head><body>"
    "<p>Vendor: Beispiel GmbH &lt;beispiel.de&gt;</p><p>Product: Ger=E4t=20</p><br>"
    "<div>Preis 10 =80 &amp; mehr&nbsp;&#8364;</div></body></html>\n")
put("intake", "07-apple-mail-flowed", hdr(mid="seed7@example.net",
    extra="Content-Type: text/plain;\n\tcharset=utf-8;\n\tdelsp=yes;\n\tformat=flowed\nContent-Transfer-Encoding: quoted-printable\n"
    "X-Mailer: Apple Mail (2.3731.500.231)\n") + "\nProduct: Soft=20\nBreak\n\nText with =E2=82=AC and a soft =\nline break.\n")
put("intake", "08-git-send-email", hdr(subject="[PATCH] frob: fix overflow in frobnicate()", mid="20260601-1-git-send-email-alice@example.net",
    extra="X-Mailer: git-send-email 2.39.2\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n") +
    "\nProduct: frob\n\n---\n frob.c | 2 +-\n 1 file changed\n\ndiff --git a/frob.c b/frob.c\n--- a/frob.c\n+++ b/frob.c\n"
    "@@ -1 +1 @@\n-char buf[16];\n+char buf[64];\n-- \n2.39.2\n")
poc = base64.encodebytes(b"GET / HTTP/1.1\r\nHost: " + b"A" * 300 + b"\r\n\r\n").decode()
key = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZm9vYhYJKwYBBAHaRw8BAQdA\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n"
put("intake", "09-attachments", hdr(mid="seed9@example.net", extra='Content-Type: multipart/mixed; boundary="mix"\n') +
    "\n--mix\nContent-Type: text/plain; charset=utf-8\n\n" + REQ +
    "\n--mix\nContent-Type: application/octet-stream; name=\"poc.bin\"\nContent-Disposition: attachment; filename=\"../../etc/poc.bin\"\n"
    "Content-Transfer-Encoding: base64\n\n" + poc +
    "\n--mix\nContent-Type: application/pgp-keys; name=\"alice.asc\"\nContent-Disposition: attachment; filename=\"alice.asc\"\n\n" + key +
    "\n--mix\nContent-Type: text/plain; name=\"notes.txt\"\nContent-Disposition: attachment; filename*=UTF-8''n%C3%B6tes.txt\n\nnotes\n--mix--\n")
sig = "-----BEGIN PGP SIGNATURE-----\n\niHUEARYKAB0WIQQAAAAAAAAAAAAAAAAAAAAAAAAAAAUCZm9vYgAKCRAA\n=XXXX\n-----END PGP SIGNATURE-----\n"
put("intake", "10-pgp-mime-signed", hdr(mid="seed10@example.net",
    extra='Content-Type: multipart/signed; micalg=pgp-sha256;\n protocol="application/pgp-signature"; boundary="sig"\n') +
    "\nThis is an OpenPGP/MIME signed message (RFC 4880 and 3156)\n--sig\nContent-Type: text/plain; charset=utf-8\n"
    "Content-Transfer-Encoding: quoted-printable\n\n" + REQ + "\n--sig\nContent-Type: application/pgp-signature; name=\"signature.asc\"\n"
    "Content-Description: OpenPGP digital signature\nContent-Disposition: attachment; filename=\"signature.asc\"\n\n" + sig + "\n--sig--\n")
put("intake", "11-inline-clearsigned", hdr(mid="seed11@example.net", extra="Content-Type: text/plain; charset=utf-8\n") +
    "\n-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n" + REQ.replace("\n-", "\n- -") + sig)
put("intake", "12-pgp-mime-encrypted", hdr(mid="seed12@example.net",
    extra='Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="enc"\n') +
    "\n--enc\nContent-Type: application/pgp-encrypted\n\nVersion: 1\n\n--enc\nContent-Type: application/octet-stream; name=\"encrypted.asc\"\n\n"
    "-----BEGIN PGP MESSAGE-----\n\nhF4DAAAAAAAAAAASAQdA\n=abcd\n-----END PGP MESSAGE-----\n\n--enc--\n")
put("intake", "13-postfix-dsn-to-verp", "Return-Path: <>\nDelivered-To: request-bounces+000000000000000000000000@example.org\n"
    "From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\nTo: request-bounces+000000000000000000000000@example.org\n"
    "Subject: Undelivered Mail Returned to Sender\nDate: Mon, 01 Jun 2026 10:00:00 +0000\nMessage-Id: <dsn1@mx.example.net>\n"
    "Auto-Submitted: auto-replied\nMIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status;\n boundary=\"B1\"\n\n"
    "--B1\nContent-Description: Notification\nContent-Type: text/plain; charset=us-ascii\n\nI'm sorry to have to inform you...\n\n"
    "--B1\nContent-Description: Delivery report\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.net\n"
    "X-Postfix-Queue-ID: 4AB\nArrival-Date: Mon,  1 Jun 2026 10:00:00 +0000 (UTC)\n\nFinal-Recipient: rfc822; security@example.com\n"
    "Original-Recipient: rfc822;security@example.com\nAction: failed\nStatus: 5.1.1\nRemote-MTA: dns; mx.example.com\n"
    "Diagnostic-Code: smtp; 550 5.1.1 <security@example.com>: Recipient address\n    rejected: User unknown\n\n"
    "--B1\nContent-Description: Undelivered Message Headers\nContent-Type: text/rfc822-headers\n\n"
    "From: vulnid <request@example.org>\nMessage-Id: <vendor-notify.0123@example.org>\nSubject: [FUZZ-2026-0001]\n\n--B1--\n")
put("intake", "13b-exim-dsn-delayed-and-failed", "Delivered-To: request-bounces+000000000000000000000000@example.org\n"
    "From: Mail Delivery System <Mailer-Daemon@mx.example.net>\nTo: request-bounces+000000000000000000000000@example.org\n"
    "Subject: Warning: message delayed\nMessage-Id: <dsn2@mx.example.net>\nAuto-Submitted: auto-replied\nMIME-Version: 1.0\n"
    "Content-Type: multipart/report; report-type=delivery-status; boundary=X\n\n--X\nContent-Type: text/plain\n\ndelayed\n"
    "--X\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mx.example.net\n\nAction: delayed\n"
    "Final-Recipient: rfc822;security@example.com\nStatus: 4.4.1\n\nAction: failed\nFinal-Recipient: rfc822;other@example.com\n"
    "Status: 5.1.1\nDiagnostic-Code: smtp; 550 unknown\n\n--X\nContent-Type: message/rfc822\n\n"
    "From: vulnid <request@example.org>\nMessage-ID: <vendor-notify.0123@example.org>\nSubject: x\n\nbody\n--X--\n")
put("intake", "13c-non-standard-bounce", "Delivered-To: request-bounces+000000000000000000000000@example.org\n"
    "From: postmaster@example.com\nTo: request-bounces+000000000000000000000000@example.org\nSubject: Returned mail: see transcript\n\n"
    "The mail to security@example.com could not be delivered.\n")
put("intake", "14-vacation", hdr(subject="Out of office: Heap overflow", mid="seed14@example.net",
    extra="Auto-Submitted: auto-replied (vacation)\nPrecedence: bulk\nContent-Type: text/plain\n") + "\nI am away until Monday.\n")
put("intake", "15-list-traffic", hdr(mid="seed15@example.net", to="oss-security@lists.example.org",
    extra="List-Id: <oss-security.lists.example.org>\nList-Post: <mailto:oss-security@lists.example.org>\nX-Loop: request@example.org\nContent-Type: text/plain\n") + "\n" + REQ)
put("intake", "16-procmail-from-line", "From alice@example.net  Mon Jun  1 10:00:00 2026\n" + hdr(mid="seed16@example.net",
    extra="Content-Type: text/plain\n") + "\n" + REQ + "\n>From the archive: a quoted From_ line\n")
put("intake", "17-embargo", hdr(mid="seed17@example.net", extra="Content-Type: text/plain\n") +
    "\nProduct: Secret\nEmbargo: 2027-01-31\nVendor-Contact: security@example.com\n\nDetails under embargo.\n")
put("intake", "18-reply-to-ack", hdr(subject="Re: [FUZZ-2026-0001] Heap overflow in frobnicate()", mid="seed18@example.net",
    to="request+FUZZ-2026-0001@example.org",
    extra="In-Reply-To: <ack.0123456789abcdef@example.org>\nReferences: <seed1@example.net> <ack.0123456789abcdef@example.org>\n"
    "Content-Type: text/plain\n") + "\nalias CVE-2026-12345\nrate 7 reachable remotely\nToken: 0123456789abcdef0123456789abcdef\n"
    "Version: 2.4.2\n\nMore details.\n\n> On Mon, vulnid wrote:\n> TEST\n")
put("intake", "19-entry-commands", hdr(subject="commands", mid="seed19@example.net", to="request+FUZZ-2026-0001@example.org",
    extra="Delivered-To: request+FUZZ-2026-0001@example.org\nContent-Type: text/plain\n") +
    "\nwithdraw FUZZ-2026-0001 not a vulnerability\nembargo 2027-02-01\nlink FUZZ-2026-0001 FUZZ-2026-0002\n"
    "duplicate-of FUZZ-2026-0003\nlookup GHSA-xxxx-yyyy-zzzz\nsubscribe\nspam\nrelease\nkey\nhelp\n")
put("intake", "20-utf16", hdr(subject="=?UTF-8?B?w5xiZXJsYXVm?= =?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=", mid="seed20@example.net",
    extra="Content-Type: text/plain; charset=utf-16\nContent-Transfer-Encoding: base64\n") + "\n" +
    base64.encodebytes(("Product: Wide\n\nUTF-16 text \u20ac\n").encode("utf-16")).decode())
put("intake", "21-forwarded-rfc822", hdr(subject="Fwd: report", mid="seed21@example.net", extra='Content-Type: multipart/mixed; boundary="fw"\n') +
    "\n--fw\nContent-Type: text/plain\n\nProduct: Forwarded\n\nSee the attached report.\n--fw\nContent-Type: message/rfc822\n\n" +
    hdr(mid="inner@example.net", extra='Content-Type: multipart/signed; protocol="application/pgp-signature"; micalg=pgp-sha1; boundary="in"\n') +
    "\n--in\nContent-Type: text/plain\n\ninner text\n--in\nContent-Type: application/pgp-signature\n\n" + sig + "--in--\n--fw--\n")
put("intake", "22-raw-8bit-headers", ("From: J\u00f6rg <joerg@example.de>\nTo: request@example.org\nSubject: L\u00fccke in Ger\u00e4t\n"
    "Message-ID: <seed22@example.net>\nContent-Type: text/plain; charset=iso-8859-1\n\nProduct: Ger\u00e4t\n").encode("latin-1"))
put("intake", "23-crlf", (hdr(mid="seed23@example.net", extra="Content-Type: text/plain\n") + "\n" + REQ).replace("\n", "\r\n"))
put("intake", "24-no-message-id", "From: bob@example.net\nTo: request@example.org\nSubject: no id\n\nProduct: NoID\n")
put("intake", "25-reply-to-and-x-loop", hdr(mid="seed25@example.net", extra="Reply-To: Security Team <team@example.net>, other@example.net\n"
    "X-Loop: someone@else.example\nPrecedence: first-class\nContent-Type: text/plain\n") + "\n\n\n" + REQ)
put("intake", "26-nested-multipart", hdr(mid="seed26@example.net", extra='Content-Type: multipart/mixed; boundary="a"\n') +
    '\n--a\nContent-Type: multipart/alternative; boundary="b"\n\n--b\nContent-Type: multipart/related; boundary="c"\n\n'
    "--c\nContent-Type: text/html\n\n<p>Product: Deep</p>\n--c\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\niVBORw0KGgo=\n--c--\n"
    "--b\nContent-Type: text/plain\n\nProduct: Deep\n--b--\n--a--\n")
put("intake", "27-many-ids", hdr(mid="seed27@example.net", extra="Content-Type: text/plain\n") + "\n" +
    "\n---\n".join(f"Product: P{i}" for i in range(25)) + "\n")
put("intake", "28-bad-fields", hdr(mid="seed28@example.net", extra="Content-Type: text/plain\n") +
    "\nEmbargo: 2020-13-45\nAnonymous: maybe\nVendor-Contact: not an address\nReference: javascript:alert(1)\nTitle: " + "x" * 1100 + "\n")
put("intake", "29-bidi-controls", hdr(subject="Fix \u202egnp.exe\u202c and \u2028newline", mid="seed29@example.net",
    extra="Content-Type: text/plain; charset=utf-8\n").replace("Fix \u202egnp.exe\u202c and \u2028newline",
    "=?UTF-8?B?" + base64.b64encode("Fix \u202egnp.exe\u202c and\u2028\r\nX-Injected: yes".encode()).decode() + "?=") +
    "\nProduct: \u202eevil\u202c\nTitle: a\u0000b\n")
put("intake", "30-hashcash-proposals", hdr(mid="seed30@example.net", to="request+FUZZ-2026-0001@example.org",
    extra="X-Hashcash: 1:20:260601:request+fuzz-2026-0001@example.org::AAJQN4BPljS1bN14:000000000\n"
    "\t00000000000000009n5/\nX-Hashcash: 1:99:991399:request@example.org::x:0\nContent-Type: text/plain\n") +
    "\nReference: https://example.org/poc.tgz sha256=" + "9F" * 32 + "\nMirror: https://m.example/poc.tgz of "
    "https://example.org/poc.tgz\nendorse FUZZ-2026-0001 0123456789ABCDEF0123456789ABCDEF01234567 Version\n"
    "approve 2\naccess FUZZ-2026-0001\ngrant 0123456789ABCDEF0123456789ABCDEF01234567\nreviewed Example Server 2.4.1\n")
for f in sorted(os.listdir(os.path.join(top, "test", "corpora", "malformed"))):
    if f.endswith(".eml"):
        shutil.copy(os.path.join(top, "test", "corpora", "malformed", f), os.path.join(out, "intake", "malformed-" + f))
samples = os.path.join(top, "..", "shared", "mail-samples")
if os.path.isdir(samples):
    for f in sorted(os.listdir(samples)):
        p = os.path.join(samples, f)
        if os.path.isfile(p) and os.path.getsize(p) < 1 << 20:
            shutil.copy(p, os.path.join(out, "intake", "sample-" + f))

# --- request: first line Subject, then the text ---------------------------------
put("request", "01-full", "Heap overflow\n" + REQ)
put("request", "02-blocks", "two\nProduct: A\n\nfirst\n---\nProduct: B\nVersion: 1\n  continued\n\nsecond\n--- \n")
put("request", "03-help", "help\n")
put("request", "04-key-subject", "key\n\n")
put("request", "05-small-limits", "!subject\nA: 1\nB: 2\nC: 3\nD: 4\n---\n---\n---\nTitle: 0123456789abcdef0123\n")
put("request", "06-signature", "sig\nProduct: S\n\ntext\n-- \nProduct: not a field\n")
put("request", "07-invalid", "bad\nEmbargo: 2026-02-30\nEmbargo: yes\nAnonymous: perhaps\nVendor-Contact: a@b, c@d\nReference: ftp:x\nhttp://not-a-field\n")
put("request", "08-crlf-unicode", "caf\u00e9\r\nTitle: \u00dcberlauf \u2028 im \u202e Parser\r\nProduct:\t\u00e9\r\n\r\nbody\r\n")

# --- commands: the text of an entry mail -----------------------------------------
put("commands", "01-all", "\x05help\nlookup FUZZ-2026-0001\nlookup CVE-2026-1234\nkey\nrelease FUZZ-2026-0002\n"
    "embargo 2027-01-31\nembargo FUZZ-2026-0001 2027-02-29\nwithdraw duplicate of another\nalias CVE-2026-123456\n"
    "alias FUZZ-2026-0001 GHSA-abcd-efgh-ijkl\nrate 10\nrate FUZZ-2026-0001 3 meh\nduplicate-of FUZZ-2026-0004\n"
    "link FUZZ-2026-0001 FUZZ-2026-0002\nspam\nsubscribe\nunsubscribe FUZZ-2026-0003\n\nText after.\n")
put("commands", "02-tokens-fields", "\x02Token: 0123456789ABCDEF0123456789ABCDEF\nToken: short\nVersion: 2.4\n  continued\nFixed: 2.5\n"
    "Note: third\n\nrate 7\n")
put("commands", "03-not-understood", "\x00rate eleven\nwithdraw\nalias cve-2026-1\nlink FUZZ-2026-0001 FUZZ-2026-0002 FUZZ-2026-0003\n")
put("commands", "04-signature", "\x01spam\n-- \nwithdraw all\n")
put("commands", "05-many", "\x07" + "spam\n" * 30 + "Token: " + "a" * 24 + "\n" * 2)
put("commands", "06-proposals", "\x03endorse FUZZ-2026-0001 0123456789ABCDEF0123456789ABCDEF01234567 Version reference\n"
    "unendorse 0123456789abcdef0123456789abcdef01234567\napprove FUZZ-2026-0001 3\n"
    "approve 0123456789ABCDEF0123456789ABCDEF01234567\naccess FUZZ-2026-0002\n"
    "grant FUZZ-2026-0002 0123456789ABCDEF0123456789ABCDEF01234567\nreviewed FUZZ-2026-0001 Example Server 2.4.1\n"
    "reviewed Foo\n\nText.\n")

# --- template: see fuzz-template.c for the layout -------------------------------------
put("template", "01-ack-values", bytes([0, 0]) + b"\x00".join([b"Heap overflow \xe2\x80\xae", b"FUZZ-2026-0001", b"a" * 64,
    b"Alice \"The Hacker\" <evil@example.com>", b"seed@example.net", b"ref@example.net"]))
put("template", "02-error", bytes([0, 3]) + b"\x00".join([b"x", b"- Embargo: bad\n- Anonymous: bad", b"Subject: injected\nX: y",
    b"Bob, <b@x>", b"\r\n", b"<a@b>"]))
put("template", "03-own", bytes([1]) + b"Subject: [{{id}}] {{subject}}\nSubject: again {{x}}\n\nHello {{name}},\n{{ body }}\n{{unterminated\n\x00"
    b"ID-1\x00=?utf-8?q?encoded?=\x00\xff\xfe bytes\x00Line one\nLine two\n.\nFrom x\x00Mallory\x00<>\x00x@y")
put("template", "04-long", bytes([0, 5]) + b"\x00".join([b"\xf0\x9f\x98\x80" * 500, b"x" * 2000, b"\t \t", b"a@b@c", b"no-at", b"id@host"]))

# --- dsn ------------------------------------------------------------------------------------
with open(os.path.join(out, "intake", "13-postfix-dsn-to-verp"), "rb") as f:
    put("dsn", "01-postfix", f.read())
put("dsn", "02-exim", "From: Mail Delivery System <Mailer-Daemon@mx.example.net>\nTo: request-bounces+abc@example.org\n"
    "Subject: Mail delivery failed: returning message to sender\nMIME-Version: 1.0\n"
    "Content-Type: multipart/report; report-type=delivery-status; boundary=1717236000-eximdsn-123\n\n"
    "--1717236000-eximdsn-123\nContent-type: text/plain; charset=us-ascii\n\nThis message was created automatically by mail delivery software.\n\n"
    "--1717236000-eximdsn-123\nContent-type: message/delivery-status\n\nReporting-MTA: dns; mx.example.net\n\n"
    "Action: failed\nFinal-Recipient: rfc822;security@example.com\nStatus: 5.0.0\nRemote-MTA: dns; mx.example.com\n"
    "Diagnostic-Code: smtp; 550 No such user\n\nAction: delayed\nFinal-Recipient: rfc822;<other@example.com>\nStatus: 4.4.1\n"
    "Will-Retry-Until: Wed, 03 Jun 2026 10:00:00 +0000\n\n--1717236000-eximdsn-123\nContent-type: message/rfc822\n\n"
    "From: request@example.org\nMessage-ID: <vendor-notify.77@example.org>\nSubject: x\n\nbody\n--1717236000-eximdsn-123--\n")
put("dsn", "03-exchange-global", "From: postmaster@example.com\nTo: request-bounces+abc@example.org\nSubject: Undeliverable: [FUZZ-2026-0001]\n"
    "MIME-Version: 1.0\nContent-Type: multipart/report; report-type=delivery-status; boundary=\"_000_\"\n\n--_000_\n"
    "Content-Type: multipart/alternative; boundary=\"_001_\"\n\n--_001_\nContent-Type: text/plain; charset=utf-8\n\nDelivery has failed.\n"
    "--_001_--\n--_000_\nContent-Type: message/global-delivery-status\n\nReporting-MTA: dns;EX01.example.com\nReceived-From-MTA: dns;x\n\n"
    "Original-Recipient: utf-8;s\u00e9curit\u00e9@example.com\nFinal-Recipient: rfc822;security@example.com\nAction: failed\nStatus: 5.1.10\n"
    "Diagnostic-Code: smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup\n"
    "\n--_000_\nContent-Type: text/rfc822-headers\n\nMessage-ID: <notify.1@example.org>\nSubject: hi\n\n--_000_--\n")
put("dsn", "04-status-text-only", "Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; <x@y>\r\nAction: FAILED\r\nStatus: 5.7.1 extra words\r\n"
    "Diagnostic-Code: smtp;\r\n 550 folded\r\n\tdiagnostic\r\n\r\nOriginal-Recipient: z@y\r\nAction: relayed\r\n")

# --- security.txt -------------------------------------------------------------------------------
put("securitytxt", "01-typical", "# Our security policy\nContact: mailto:security@example.com\nContact: https://example.com/security\n"
    "Contact: tel:+1-201-555-0123\nExpires: 2027-12-31T23:59:59.000Z\nEncryption: https://example.com/pgp-key.txt\n"
    "Encryption: openpgp4fpr:5F2DE5521C63A801AB59CCB603D49DE44B29100F\nAcknowledgments: https://example.com/hall-of-fame.html\n"
    "Preferred-Languages: en, de, fr\nCanonical: https://example.com/.well-known/security.txt\nPolicy: https://example.com/policy\n"
    "Hiring: https://example.com/jobs\n")
put("securitytxt", "02-signed", "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nContact: mailto:psirt@example.org?subject=vuln\n"
    "Expires: 2026-01-01T00:00:00Z\n- -----not a header\nPreferred-Languages: en\n-----BEGIN PGP SIGNATURE-----\n\niQ==\n=abcd\n-----END PGP SIGNATURE-----\n")
put("securitytxt", "03-problems", "\ufeffcontact: MAILTO:Sec%40example.com\r\nContact: mailto:a@b,c@d\r\nContact: mailto:\r\nExpires: tomorrow\r\n"
    "Expires: 2030-01-01T00:00:00+02:00\r\nPreferred-Languages: en\r\nPreferred-Languages: de\r\nUnknown-Field: x\r\nno colon here\r\n"
    "Contact: mailto:\"quoted local\"@example.com\r\nContact: mailto:user@[192.0.2.1]\r\n")
put("securitytxt", "04-minimal", "Contact: mailto:security@example.net\nExpires: 2030-01-01T00:00:00Z\n")

# --- feed: mode byte, then lines (see fuzz-feed.c) -------------------------------------------------
Z = "0" * 64
def canon(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
def rec(year, n, pos, entry, seq, subject="Overflow", fields=(("Product", "X"),), body="", opens=None, atts=()):
    o = {"feed": "vulnid-feed-1", "year": year, "n": n, "pos": pos, "type": "record", "entry": entry, "seq": seq,
         "created": "2026-06-01T10:00:00Z", "kind": "request" if seq == 1 else "addition", "role": "creator",
         "author": None, "opens": opens, "auth": {"method": "none"}, "subject": subject,
         "fields": [list(f) for f in fields], "body": body,
         "attachments": [{"sha256": "a" * 64, "size": 10, "content_type": "text/plain", "filename": fn} for fn in atts],
         "sha256": Z, "prev": Z, "hash": Z}
    return canon(o)
def stub(year, n, pos, entry, seq, commitment=Z, digest=Z):
    return canon({"feed": "vulnid-feed-1", "year": year, "n": n, "pos": pos, "type": "stub", "entry": entry, "seq": seq,
                  "digest": digest, "created": "2026-06-01T10:00:00Z", "state": "embargoed", "embargo": "2027-01-31",
                  "commitment": commitment, "prev": Z, "hash": Z})
put("feed", "01-records", "\x00" + "\n".join([rec(2026, 1, 1, "FUZZ-2026-0001", 1), rec(2026, 2, 2, "FUZZ-2026-0002", 1, atts=("poc.bin", None)),
    rec(2026, 3, 3, "FUZZ-2026-0001", 2, fields=(("Version", "2"),), body="more")]) + "\n")
put("feed", "02-two-years", "\x04" + "\n".join([rec(2025, 1, 1, "FUZZ-2025-0001", 1), rec(2026, 1, 2, "FUZZ-2026-0001", 1),
    rec(2025, 2, 3, "FUZZ-2025-0001", 2, body="x")]) + "\n")
put("feed", "03-stub-release", "\x00" + "\n".join([stub(2026, 1, 1, "FUZZ-2026-0001", 1), rec(2026, 2, 2, "FUZZ-2026-0002", 1),
    rec(2026, 3, 3, "FUZZ-2026-0001", 1), rec(2026, 4, 4, "FUZZ-2026-0001", 2, opens=1)]) + "\n")
put("feed", "04-chain-only", "\x01" + rec(2026, 1, 1, "FUZZ-2026-0001", 1) + "\n" + rec(2026, 2, 1, "FUZZ-2026-0001", 2) + "\n")
put("feed", "05-raw-lines", "\x02" + rec(2026, 1, 1, "FUZZ-2026-0001", 1) + "\n{\"feed\":1}\n")
put("feed", "06-raw-dir", "\x03" + canon({"feed": "vulnid-feed-1", "time": "2026-06-01T12:00:00Z",
    "robot": "0123456789ABCDEF0123456789ABCDEF01234567", "pos": 1, "years": [{"year": 2026, "lines": 1, "hash": Z}]}) +
    "\n\n==== 2026.jsonl\n" + rec(2026, 1, 1, "FUZZ-2026-0001", 1) + "\n\n==== 2027.jsonl\n\n==== notes.txt\nx\n")
print("seeds written to", out)
