#!/usr/bin/python3
# lmtp-load.py ADDRESS DIR COUNT SESSIONS - send the mails DIR/1..COUNT over
# SESSIONS concurrent LMTP sessions (each one connection, several mails),
# as smtp-source -L does with one message; prints
#   mails COUNT sessions S total_s T ok N
# where N counts 250 replies.  ADDRESS: a unix socket path or HOST:PORT.
import socket, sys, threading, time

addr, d, count, sessions = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
mails = []
for i in range(1, count + 1):
    b = open(f"{d}/{i}", "rb").read().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    b = b"\r\n".join(b"." + l if l.startswith(b".") else l for l in b.split(b"\r\n"))
    if not b.endswith(b"\r\n"):
        b += b"\r\n"
    mails.append(b)
ok = [0]
lock = threading.Lock()

def session(part):
    s = socket.socket(socket.AF_UNIX) if "/" in addr else socket.socket()
    s.connect(addr if "/" in addr else (addr.rsplit(":", 1)[0], int(addr.rsplit(":", 1)[1])))
    f = s.makefile("rb")
    def reply():
        while True:
            l = f.readline()
            if not l or l[3:4] != b"-":
                return l
    reply()
    s.sendall(b"LHLO bench\r\n")
    reply()
    n = 0
    for m in part:
        # pipelined: MAIL, RCPT, DATA in one write, as Postfix does
        s.sendall(b"MAIL FROM:<bench@example.net>\r\nRCPT TO:<request@example.org>\r\nDATA\r\n")
        reply(); reply(); reply()
        s.sendall(m + b".\r\n")
        if reply().startswith(b"250"):
            n += 1
    s.sendall(b"QUIT\r\n")
    s.close()
    with lock:
        ok[0] += n

parts = [mails[i::sessions] for i in range(sessions)]
t = time.time()
th = [threading.Thread(target=session, args=(p,)) for p in parts]
for x in th:
    x.start()
for x in th:
    x.join()
print(f"mails {count} sessions {sessions} total_s {time.time() - t:.3f} ok {ok[0]}")
