#!/usr/bin/python3
"""sigcheck.py - check a signature the robot made with two independent
OpenPGP implementations: gpg (GnuPG) and sqv (Sequoia).

  mime MAIL HOME KEY FPR     a PGP/MIME signed mail (RFC 3156), read with
                             Python's email package
  clear MAIL HOME KEY FPR [TEXT]
                             a mail whose text is a cleartext signed message
                             (RFC 9580 section 7); TEXT: a file with what the
                             signed text must read as (LF line ends)
  detached SIG DATA HOME KEY FPR
                             a detached armored signature over DATA

HOME is a gpg home with the robot's public key, KEY the same key armored
(for sqv), FPR the fingerprint the signature must be by.  Both tools must
name FPR; the signature packet is read as well: version 4, SHA-256, the
issuer fingerprint hashed.  Prints what it checked; exits non-zero with the
reason on the first failure.  The work files go next to MAIL (or SIG).
"""
import email
import email.policy
import os
import re
import subprocess
import sys


def fail(msg):
    sys.exit("sigcheck: " + msg)


def rd(p):
    with open(p, "rb") as f:
        return f.read()


def wr(p, b):
    with open(p, "wb") as f:
        f.write(b)


def gpg_verify(home, fpr, sig, data=None):
    args = ["gpg", "--homedir", home, "--batch", "--no-tty", "--status-fd", "1", "--verify", sig]
    if data is not None:
        args.append(data)
    p = subprocess.run(args, capture_output=True)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0 or not re.search(r"^\[GNUPG:\] VALIDSIG %s " % fpr, out, re.M):
        fail("gpg --verify: %s %s" % (out, p.stderr.decode(errors="replace")))


def sqv_verify(key, fpr, sig, data):
    p = subprocess.run(["sqv", "--keyring", key, sig, data], capture_output=True)
    if p.returncode != 0 or p.stdout.decode().split() != [fpr]:
        fail("sqv: %s %s" % (p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")))


def packet(home, sig, sigclass):
    """the signature packet as gpg --list-packets shows it"""
    p = subprocess.run(["gpg", "--homedir", home, "--batch", "--list-packets", sig], capture_output=True)
    out = p.stdout.decode(errors="replace")
    for want in (r"version 4, created \d+, md5len 0, sigclass 0x%02x" % sigclass,
                 r"digest algo 8, begin of digest",
                 r"hashed subpkt 2 len 4 \(sig created",
                 r"hashed subpkt 33 len 21 \(issuer fpr v4 [0-9A-F]{40}\)",
                 r"\n\tsubpkt 16 len 8 \(issuer key ID [0-9A-F]{16}\)"):
        if not re.search(want, out):
            fail("signature packet: %r not in %s" % (want, out))


def both(home, key, fpr, sig, data, sigclass):
    gpg_verify(home, fpr, sig, data)
    sqv_verify(key, fpr, sig, data)
    packet(home, sig, sigclass)


def cmd_mime(mail, home, key, fpr):
    raw = rd(mail)
    m = email.message_from_bytes(raw, policy=email.policy.compat32)
    if m.get_content_type() != "multipart/signed":
        fail("not multipart/signed but %s" % m.get_content_type())
    if m.get_param("protocol") != "application/pgp-signature" or m.get_param("micalg") != "pgp-sha256":
        fail("protocol %s, micalg %s" % (m.get_param("protocol"), m.get_param("micalg")))
    parts = m.get_payload()
    if len(parts) != 2 or parts[1].get_content_type() != "application/pgp-signature":
        fail("not two parts, the second application/pgp-signature")
    # what the email package reads as the first part, with CRLF, must be
    # the bytes between the boundaries (RFC 3156 section 5) ...
    signed = parts[0].as_bytes(policy=email.policy.compat32.clone(linesep="\r\n"))
    text = raw.replace(b"\r\n", b"\n")
    delim = b"\n--" + m.get_boundary().encode()
    start = text.index(b"\n", text.index(delim) + len(delim)) + 1
    end = text.index(delim, start)
    exact = text[start:end].replace(b"\n", b"\r\n")
    if signed != exact:
        fail("the email package reads the signed part otherwise than its bytes")
    base = os.path.splitext(mail)[0]
    wr(base + ".signed", exact)
    wr(base + ".sig", parts[1].get_payload(decode=True))
    both(home, key, fpr, base + ".sig", base + ".signed", 0x00)
    print("mime ok: gpg and sqv, %d octets signed" % len(exact))


def split_cleartext(text):
    """(signed text as a verifier hashes it, armored signature, text as read)"""
    head = "-----BEGIN PGP SIGNED MESSAGE-----\n"
    if not text.startswith(head):
        fail("no cleartext signed message")
    hdr_end = text.index("\n\n")
    if text[len(head):hdr_end] != "Hash: SHA256":
        fail("armor headers: %r" % text[len(head):hdr_end])
    arm = text.index("\n-----BEGIN PGP SIGNATURE-----\n", hdr_end)
    lines = text[hdr_end + 2:arm].split("\n")
    out = []
    for l in lines:
        if l.startswith("-"):
            if not l.startswith("- "):
                fail("a line starting with a dash is not escaped: %r" % l)
            l = l[2:]
        out.append(l)
    # trailing spaces and tabs are shown but not signed, nor read out
    signed = [l.rstrip(" \t") for l in out]
    return "\r\n".join(signed), text[arm + 1:], "\n".join(signed) + "\n"


def cmd_clear(mail, home, key, fpr, want=None):
    m = email.message_from_binary_file(open(mail, "rb"), policy=email.policy.default)
    if m.get_content_type() != "text/plain":
        fail("not text/plain but %s" % m.get_content_type())
    text = m.get_content()
    if "\r" in text:
        fail("a CR in the text")
    signed, sig, shown = split_cleartext(text)
    base = os.path.splitext(mail)[0]
    wr(base + ".asc", text.encode())
    wr(base + ".txt", signed.encode())
    wr(base + ".sig", sig.encode())
    # gpg reads the whole message, sqv the text and signature apart
    gpg_verify(home, fpr, base + ".asc")
    sqv_verify(key, fpr, base + ".sig", base + ".txt")
    packet(home, base + ".sig", 0x01)
    p = subprocess.run(["gpg", "--homedir", home, "--batch", "--no-tty", "--decrypt", base + ".asc"],
                       capture_output=True)
    if p.returncode != 0 or p.stdout.decode() != shown:
        fail("gpg reads the text otherwise: %r" % p.stdout)
    if want is not None and shown != rd(want).decode():
        fail("the signed text is not what was expected: %r" % shown)
    print("clear ok: gpg and sqv, %d lines" % len(shown.splitlines()))


def cmd_detached(sig, data, home, key, fpr):
    both(home, key, fpr, sig, data, 0x00)
    print("detached ok: gpg and sqv")


CMDS = {"mime": (cmd_mime, 4, 4), "clear": (cmd_clear, 4, 5), "detached": (cmd_detached, 5, 5)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS:
        fail("usage: sigcheck.py mime|clear|detached ...")
    f, lo, hi = CMDS[sys.argv[1]]
    if not lo <= len(sys.argv) - 2 <= hi:
        fail("wrong number of arguments for %s" % sys.argv[1])
    f(*sys.argv[2:])
