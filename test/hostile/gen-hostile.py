#!/usr/bin/python3
# gen-hostile.py KIND FILE [SIZE]: one hostile mail of about SIZE bytes
# (default 25 MB) for the cost tests (T930) and `make bench`.
#
#   cc        header lines of Cc: addresses without separators, each field
#             under [limits] max_header_size: every address is a parser
#             warning whose item is the rest of the field
#   line      one header line of SIZE bytes
#   subject   one Subject field of SIZE bytes, folded into 3-byte lines
#   warnings  1,000,000 parser warnings: a MIME part whose header holds a
#             million 8-bit header fields
#   parts     a million empty MIME parts
#   to        one To field of a million addresses without separators
import sys

kind, path = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 25_000_000
head = (b"From: Mallory <mallory@example.net>\nTo: request@example.org\n"
        b"Subject: hostile " + kind.encode() + b"\nMessage-ID: <hostile-" + kind.encode() +
        b"@example.net>\nMIME-Version: 1.0\n")
req = b"Product: Hostile\n\nDetails.\n"
multi = b'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n' + req
out = bytearray()
if kind == "cc":
    field = b"Cc: a@b.cc" + (b"\n " + b" ".join([b"a@b.cc"] * 10)) * 850
    out += head
    while len(out) < size:
        out += field + b"\n"
    out += b"\n" + req
elif kind == "line":
    out += head + b"X-Long: " + b"h" * size + b"\n\n" + req
elif kind == "subject":
    out += head.replace(b"Subject: hostile subject\n", b"") + b"Subject: s" + b"\n s" * (size // 3) + b"\n\n" + req
elif kind == "warnings":
    out += head + multi + b"--b\n" + b"X-8: \xff\n" * 1_000_000 + b"\nbody\n--b--\n"
elif kind == "parts":
    out += head + multi + b"--b\n\n" * 1_000_000 + b"--b--\n"
elif kind == "to":
    out += head.replace(b"To: request@example.org\n", b"") + b"To: request@example.org" + b" a@b.cc" * 1_000_000 + b"\n\n" + req
else:
    sys.exit("unknown kind " + kind)
open(path, "wb").write(out)
