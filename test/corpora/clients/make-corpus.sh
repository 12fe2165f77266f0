#!/bin/bash
# make-corpus.sh - write the mails of this corpus again, with the clients
# that make them: mutt (batch mode: it composes, encodes and attaches as
# it does for its users; the "sendmail" keeps the message), gpg and
# Sequoia's sq (clearsigning), and Python's email package for the shapes of
# Gmail, Outlook and Apple Mail (shapes.py; those clients are not in
# Debian).  Run it from anywhere; it rewrites the .eml files beside it.
# The signing key is alice.sec.asc (a throwaway test key, no passphrase).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'gpgconf --homedir "$work/gnupg" --kill all 2>/dev/null; rm -rf "$work"' EXIT
mkdir -m 700 "$work/gnupg"
G() { gpg --homedir "$work/gnupg" --batch --yes --no-tty --pinentry-mode loopback --passphrase '' "$@"; }
G --import "$here/alice.sec.asc" 2>/dev/null
fpr=$(gpg --homedir "$work/gnupg" --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')
G --armor --export "$fpr" >"$work/alice.asc"

# mutt_send OUT SUBJECT BODY [ATTACHMENT...]: mutt in batch mode
mutt_send() {
	local out=$1 subject=$2 body=$3
	shift 3
	cat >"$work/capture.sh" <<EOS
#!/bin/sh
cat >"$out"
EOS
	chmod +x "$work/capture.sh"
	cat >"$work/muttrc" <<EOS
set sendmail="$work/capture.sh"
set from="alice@example.net"
set realname="${MUTT_REALNAME:-Alice Researcher}"
set use_from=yes
set hostname=mutt.example.net
set charset=utf-8
set send_charset="${MUTT_SEND_CHARSET:-us-ascii:utf-8}"
set record=""
set user_agent=yes
EOS
	if [ $# -gt 0 ]; then
		HOME=$work LANG=C.UTF-8 mutt -n -F "$work/muttrc" -s "$subject" -a "$@" -- request@example.org <"$body"
	else
		HOME=$work LANG=C.UTF-8 mutt -n -F "$work/muttrc" -s "$subject" -- request@example.org <"$body"
	fi
}

cat >"$work/request.txt" <<'EOS'
Vendor: Example Corp <example.com>
Product: Example Server
Version: 2.4.1
Type: CWE-122

A request with an overlong Host header overflows a fixed buffer in
parse_request(). The PoC is attached.
EOS
cat >"$work/poc.py" <<'EOS'
#!/usr/bin/python3
import socket
s = socket.create_connection(("127.0.0.1", 8080))
s.sendall(b"GET / HTTP/1.1\r\nHost: " + b"A" * 70000 + b"\r\n\r\n")
EOS

# 1, 2. long non-ASCII Subjects: mutt splits them into encoded words
MUTT_REALNAME="Алиса Исследователь" \
mutt_send "$here/mutt-cyrillic-subject.eml" \
	"Переполнение буфера в обработчике заголовков HTTP сервера Example Server" "$work/request.txt"
MUTT_SEND_CHARSET="us-ascii:iso-2022-jp:utf-8" \
mutt_send "$here/mutt-japanese-subject.eml" \
	"Example Server のリクエスト解析におけるヒープオーバーフローの脆弱性について" "$work/request.txt"

# 3, 4. clearsigned text in a mail with attachments (the PoC, the key)
G --local-user "$fpr" --clearsign <"$work/request.txt" >"$work/gpg.txt"
mutt_send "$here/mutt-gpg-clearsigned-mixed.eml" "Heap overflow in parse_request (gpg clearsigned)" \
	"$work/gpg.txt" "$work/poc.py" "$work/alice.asc"
sq sign --cleartext-signature --signer-key "$here/alice.sec.asc" <"$work/request.txt" >"$work/sq.txt"
mutt_send "$here/mutt-sq-clearsigned-mixed.eml" "Heap overflow in parse_request (sq clearsigned)" \
	"$work/sq.txt" "$work/poc.py"
# 5. the same sq text as the whole mail: verified at the top
mutt_send "$here/mutt-sq-clearsigned.eml" "Heap overflow in parse_request (sq, whole mail)" "$work/sq.txt"

# 6-9. webmail and desktop shapes
/usr/bin/python3 "$here/shapes.py" gmail-request "$here/gmail-autolinks.eml"
/usr/bin/python3 "$here/shapes.py" outlook-request "$here/outlook-double-spaced.eml"
/usr/bin/python3 "$here/shapes.py" html-only "$here/html-only-links.eml"
/usr/bin/python3 "$here/shapes.py" apple-request "$here/apple-mail-japanese.eml"
