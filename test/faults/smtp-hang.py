#!/usr/bin/python3
"""smtp-hang.py PORTFILE MODE SECONDS - an SMTP server on 127.0.0.1 that
stops answering at one point of the dialogue, for the fault tests.

MODE  greeting   accept the connection, never greet
      data       take MAIL, RCPT and DATA, read the whole message, then
                 never answer the final dot (the classic hang mid-DATA)
      midbody    answer DATA with 354, read part of the message, then stop
                 reading (the client's writes block once buffers fill)

The port goes to PORTFILE; one line per event goes to PORTFILE.log.  The
server stops by itself after SECONDS, closing every connection."""
import socket, sys, threading, time

portfile, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
log = open(portfile + ".log", "a", buffering=1)
deadline = time.time() + seconds


def session(conn):
    conn.settimeout(max(0.1, deadline - time.time()))
    f = conn.makefile("rb")
    try:
        log.write("connect\n")
        if mode == "greeting":
            time.sleep(max(0, deadline - time.time()))
            return
        conn.sendall(b"220 hang.example ESMTP\r\n")
        while True:
            line = f.readline()
            if not line:
                return
            cmd = line.strip().upper()
            if cmd.startswith(b"EHLO") or cmd.startswith(b"HELO"):
                conn.sendall(b"250-hang.example\r\n250 8BITMIME\r\n")
            elif cmd.startswith(b"MAIL") or cmd.startswith(b"RCPT") or cmd.startswith(b"RSET"):
                conn.sendall(b"250 ok\r\n")
            elif cmd == b"DATA":
                conn.sendall(b"354 go ahead\r\n")
                if mode == "midbody":
                    conn.recv(512)
                    log.write("stopped reading\n")
                    time.sleep(max(0, deadline - time.time()))
                    return
                while True:
                    l = f.readline()
                    if not l or l in (b".\r\n", b".\n"):
                        break
                log.write("message received, not answering\n")
                time.sleep(max(0, deadline - time.time()))
                return
            elif cmd == b"QUIT":
                conn.sendall(b"221 bye\r\n")
                return
            else:
                conn.sendall(b"502 no\r\n")
    except OSError:
        pass
    finally:
        log.write("closed\n")
        conn.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(portfile + ".tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
while time.time() < deadline:
    s.settimeout(max(0.05, deadline - time.time()))
    try:
        c, _ = s.accept()
    except OSError:
        continue
    threading.Thread(target=session, args=(c,), daemon=True).start()
s.close()
