#!/usr/bin/python3
# lmtp-client.py - a small LMTP client for the tests (RFC 2033), which
# Python's smtplib is not: it reads one reply per recipient after DATA.
#
#   lmtp-client.py ADDRESS --from SENDER --to RCPT [--to RCPT ...]
#                  [--xforward ATTR=VALUE ...] [--size N] < MAIL
#       one mail; prints every reply after LHLO, one line each, as
#       "CMD CODE TEXT" (RCPT and DATA replies carry the recipient)
#   lmtp-client.py ADDRESS --raw < BYTES
#       sends the bytes as they are, prints everything the server says
#       until it closes the connection (or 10 s pass)
#
# ADDRESS is a unix socket path or HOST:PORT.  Exit status 0 when the
# conversation happened, whatever the replies; 1 when it could not.
import argparse, socket, sys

def connect(addr):
    if "/" in addr:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host.strip("[]"), int(port)))
    s.settimeout(60)
    return s

class Conn:
    def __init__(self, s):
        self.s, self.buf = s, b""
    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l.decode("utf-8", "replace")
    def reply(self):
        lines = [self.line()]
        while lines[-1][3:4] == "-":
            lines.append(self.line())
        return lines
    def send(self, data):
        self.s.sendall(data if isinstance(data, bytes) else data.encode())

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("address")
    ap.add_argument("--from", dest="sender", default="")
    ap.add_argument("--to", action="append", default=[])
    ap.add_argument("--xforward", action="append", default=[])
    ap.add_argument("--size", type=int)
    ap.add_argument("--lhlo", default="client.example.net")
    ap.add_argument("--raw", action="store_true")
    a = ap.parse_args()
    s = connect(a.address)
    c = Conn(s)
    data = sys.stdin.buffer.read()
    if a.raw:
        try:
            s.sendall(data)
        except OSError:
            pass    # the server closed first: what it said is still read
        s.settimeout(10)
        out = b""
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except (socket.timeout, ConnectionResetError):
            pass    # a reset after the server's last words: they were read
        sys.stdout.write(out.decode("utf-8", "replace"))
        return 0
    print("GREETING " + c.reply()[0])
    c.send("LHLO %s\r\n" % a.lhlo)
    for l in c.reply():
        print("LHLO " + l)
    if a.xforward:
        c.send("XFORWARD %s\r\n" % " ".join(a.xforward))
        print("XFORWARD " + c.reply()[0])
    size = " SIZE=%d" % a.size if a.size is not None else ""
    c.send("MAIL FROM:<%s>%s\r\n" % (a.sender, size))
    r = c.reply()[0]
    print("MAIL " + r)
    if not r.startswith("2"):
        c.send("QUIT\r\n")
        return 0
    accepted = []
    for t in a.to:
        c.send("RCPT TO:<%s>\r\n" % t)
        r = c.reply()[0]
        print("RCPT %s %s" % (t, r))
        if r.startswith("2"):
            accepted.append(t)
    c.send("DATA\r\n")
    r = c.reply()[0]
    print("DATA " + r)
    if r.startswith("354"):
        body = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        if body and not body.endswith(b"\r\n"):
            body += b"\r\n"
        body = b"\r\n".join(b"." + l if l.startswith(b".") else l for l in body.split(b"\r\n"))
        c.send(body + b".\r\n")
        for t in accepted:
            print("END %s %s" % (t, c.reply()[0]))
    c.send("QUIT\r\n")
    try:
        print("QUIT " + c.reply()[0])
    except EOFError:
        pass
    return 0

if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, EOFError) as e:
        print("lmtp-client: %s" % e, file=sys.stderr)
        sys.exit(1)
