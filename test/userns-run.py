#!/usr/bin/python3
# userns-run.py - run a shell script as root of a new user namespace, with
# a mount namespace of its own: for MTAs unpacked from their Debian
# packages, which want their users in /etc/passwd and their fixed paths
# (/var/spool/smtpd, ...), bind-mounted there from the test's directory.
#
#   userns-run.py BASE SCRIPT [ARG...]
#
# Inside, uids and gids 0-65535 are BASE..BASE+65535 outside: "root" in
# there is an unprivileged user of the machine, so nothing the script
# starts has any privilege outside its namespace.  Mounts are private to
# it.  The caller must be root (it writes the maps itself, no newuidmap).
# SCRIPT runs under /bin/sh -c as root of the namespace, with ARGs as $1...
# The exit status is the script's; SIGTERM and SIGINT are passed on, and
# the script is killed when this process dies.
import ctypes
import os
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG = 1

if len(sys.argv) < 3:
    sys.exit("usage: userns-run.py BASE SCRIPT [ARG...]")
base = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
to_child_r, to_child_w = os.pipe()
to_parent_r, to_parent_w = os.pipe()

pid = os.fork()
if pid == 0:
    os.close(to_child_w)
    os.close(to_parent_r)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        sys.stderr.write(f"userns-run: unshare: {os.strerror(e)}\n")
        os._exit(71)
    os.write(to_parent_w, b"u")
    if os.read(to_child_r, 1) != b"m":
        os._exit(71)
    os.setresgid(0, 0, 0)
    os.setgroups([])
    os.setresuid(0, 0, 0)
    # nothing mounted in here may show outside
    if os.system("mount --make-rprivate /") != 0:
        os._exit(71)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:
        os._exit(71)
    os.execv("/bin/sh", ["sh", "-c", sys.argv[2], "sh"] + sys.argv[3:])

os.close(to_child_r)
os.close(to_parent_w)
if os.read(to_parent_r, 1) != b"u":
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) or 71)
mapping = f"0 {base} 65536\n"
for f in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{f}", "w") as m:
        m.write(mapping)
os.write(to_child_w, b"m")


def forward(sig, frame):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


signal.signal(signal.SIGTERM, forward)
signal.signal(signal.SIGINT, forward)
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
sys.exit(os.waitstatus_to_exitcode(status) if os.waitstatus_to_exitcode(status) >= 0 else 128 - os.waitstatus_to_exitcode(status))
