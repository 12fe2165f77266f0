#!/usr/bin/python3
# smtp-server.py - a small SMTP server for the tests of outgoing mail, for
# what Postfix's smtp-sink cannot do: answer RCPT per address, and bounce
# a message at once (before it answers the end of DATA).
#
#   smtp-server.py --port P --dir DIR [--reply ADDR=CODE TEXT]...
#                  [--bounce ADDR --bounce-cmd CMD [--final-recipient ADDR]]
#
# Every message accepted is written to DIR/NNNN.eml, after one line
# "X-Mail-From: <...>" and one "X-Rcpt-To: <...>" per accepted recipient.
# --reply gives the answer to RCPT TO for one address (550 5.1.1 ...).
# --bounce: a message for ADDR is accepted, but before the server answers
# the end of its DATA it writes a delivery status notification for ADDR
# (RFC 3464, with Original-Recipient ADDR and Final-Recipient the
# --final-recipient, as a relay that rewrote the address would) to a
# file, and runs CMD through the shell with $DSN (that file) and $VERP (the
# message's envelope sender) in its environment, and waits for it: the
# bounce is recorded before the client hears "250".  Each connection is
# served by a thread of its own.  The server runs until it is killed.
import argparse
import email.utils
import os
import socketserver
import subprocess
import sys
import threading

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--dir", required=True)
ap.add_argument("--reply", action="append", default=[])
ap.add_argument("--bounce", action="append", default=[])
ap.add_argument("--bounce-cmd")
ap.add_argument("--final-recipient")
args = ap.parse_args()

replies = {}
for r in args.reply:
    addr, _, answer = r.partition("=")
    replies[addr.lower()] = answer
bounce = {a.lower() for a in args.bounce}
lock = threading.Lock()
counter = [0]


def dsn(verp, rcpt, final):
    return (
        f"From: MAILER-DAEMON@relay.example\r\nTo: {verp}\r\n"
        f"Subject: Undelivered Mail Returned to Sender\r\n"
        f"Message-ID: <{os.urandom(8).hex()}@relay.example>\r\n"
        f"Date: {email.utils.formatdate()}\r\nAuto-Submitted: auto-replied\r\n"
        "MIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n'
        "--B\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n\r\n"
        "--B\r\nContent-Type: message/delivery-status\r\n\r\n"
        "Reporting-MTA: dns; relay.example\r\n\r\n"
        f"Original-Recipient: rfc822; {rcpt}\r\nFinal-Recipient: rfc822; {final}\r\n"
        "Action: failed\r\nStatus: 5.1.1\r\n"
        f"Diagnostic-Code: smtp; 550 5.1.1 <{final}>: Recipient address rejected\r\n\r\n"
        "--B--\r\n"
    )


class Session(socketserver.StreamRequestHandler):
    def say(self, line):
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def handle(self):
        self.say("220 test.example ESMTP")
        mail_from, rcpts = None, []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode("utf-8", "replace").rstrip("\r\n")
            verb = cmd[:4].upper()
            if verb in ("EHLO", "HELO"):
                self.say("250-test.example\r\n250-PIPELINING\r\n250 8BITMIME")
            elif verb == "MAIL":
                mail_from, rcpts = cmd[cmd.index(":") + 1:].strip().split(" ")[0].strip("<>"), []
                self.say("250 2.1.0 ok")
            elif verb == "RCPT":
                addr = cmd[cmd.index(":") + 1:].strip().split(" ")[0].strip("<>")
                answer = replies.get(addr.lower())
                if answer is None:
                    rcpts.append(addr)
                    self.say("250 2.1.5 ok")
                else:
                    self.say(answer)
            elif verb == "DATA":
                if not rcpts:
                    self.say("554 5.5.1 no valid recipients")
                    continue
                self.say("354 go ahead")
                data = []
                while True:
                    l = self.rfile.readline()
                    if not l or l in (b".\r\n", b".\n"):
                        break
                    data.append(l[1:] if l.startswith(b"..") else l)
                with lock:
                    counter[0] += 1
                    n = counter[0]
                head = f"X-Mail-From: <{mail_from}>\n" + "".join(f"X-Rcpt-To: <{r}>\n" for r in rcpts)
                with open(os.path.join(args.dir, f"{n:04d}.eml"), "wb") as f:
                    f.write(head.encode() + b"".join(data))
                for r in rcpts:
                    if r.lower() in bounce and args.bounce_cmd:
                        path = os.path.join(args.dir, f"{n:04d}.dsn")
                        with open(path, "w") as f:
                            f.write(dsn(mail_from, r, args.final_recipient or r))
                        env = dict(os.environ, DSN=path, VERP=mail_from)
                        subprocess.run(args.bounce_cmd, shell=True, env=env, check=False)
                self.say("250 2.0.0 queued")
            elif verb == "RSET":
                mail_from, rcpts = None, []
                self.say("250 ok")
            elif verb == "QUIT":
                self.say("221 bye")
                return
            else:
                self.say("502 5.5.2 not implemented")


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


os.makedirs(args.dir, exist_ok=True)
with Server(("127.0.0.1", args.port), Session) as srv:
    print("listening", flush=True)
    srv.serve_forever()
