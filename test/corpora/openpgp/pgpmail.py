#!/usr/bin/python3
"""pgpmail.py - build, take apart and break OpenPGP mail for the tests.

Raw bytes are kept as they are wherever a signature must survive: the
tools cut and paste byte strings and only use the email package to read.
gpg runs with --homedir given on the command line.

  sign-mime HOME FPR INNER OUT [opts] [Header: value ...]
      multipart/signed over the MIME entity in INNER.  opts:
      --also HOME:FPR    another good signature over the same entity
      --bad HOME:FPR     a signature over other bytes (bad for this entity)
      --repeat N         the first signature N times (a packet flood)
      --micalg X, --protocol X   Content-Type parameters
  with-keys HOME FPR TEXT OUT [--encrypt TO] KEYFILE... -- [Header: value ...]
      signed multipart/mixed: TEXT as text/plain, each KEYFILE as
      application/pgp-keys (TYPE=FILE: FILE as TYPE, base64); with
      --encrypt, signed and encrypted to TO in one go (multipart/encrypted)
  wrap-mixed IN OUT TEXTFILE [Header: value ...]
      IN's top entity as the second part of a multipart/mixed whose first
      part is TEXTFILE; the outer header is IN's unless given
  forward IN OUT TEXTFILE [Header: value ...]
      TEXTFILE then IN as message/rfc822
  encrypt-bomb HOME TO KIND N OUT [Header: value ...]
      multipart/encrypted to key TO (compressed, as gpg does by default) of
      an entity made here: KIND text (N bytes of one repeated line), parts
      (a multipart/mixed of N empty parts) or nest (N nested multiparts)
  encrypt-flood HOME FPR TO N INNER OUT [Header: value ...]
      multipart/encrypted to TO of a signed OpenPGP message over the MIME
      entity in INNER that carries N copies of FPR's signature (gpg checks
      each when it decrypts)
  encrypt-mime HOME TO INNER OUT [--sign FPR] [Header: value ...]
      multipart/encrypted to key TO of the MIME entity in INNER (CRLF),
      unsigned, or signed and encrypted in one with --sign
  to-inline IN OUT [Header: value ...]
      the ciphertext of IN's multipart/encrypted, as it is, as the whole
      text/plain body of a new mail with IN's outer header
  reheader IN OUT [Header: value ...]   replace or add top header fields
  tamper IN OUT          flip a byte inside the first PGP MESSAGE's packets
  rearmor IN OUT KIND    add an armor header to the first KIND armor
                         (SIGNATURE or MESSAGE): same packets, new bytes
  double-clearsign IN OUT  IN's inline signed block twice in a row
  split-signed MAIL DATA SIG   the signed entity (CRLF) and the signature
                         of the top multipart/signed, for gpg --verify
  sig-sha256 MAIL        SHA-256 of the signature as received (PGP/MIME:
                         the decoded signature part; inline: the text part;
                         encrypted: the decoded ciphertext part)
  decrypt MAIL HOME OUT  decrypt the top multipart/encrypted part with
                         gpg in HOME; gpg's status lines go to OUT.status
  text MAIL              every text/plain part, decoded, one after another
  keys MAIL OUT          the first application/pgp-keys part, decoded
"""
import base64
import email
import email.policy
import hashlib
import re
import subprocess
import sys


def rd(p):
    with open(p, "rb") as f:
        return f.read()


def wr(p, b):
    with open(p, "wb") as f:
        f.write(b)


def split_msg(raw):
    i = raw.find(b"\n\n")
    return raw[: i + 1], raw[i + 2:]


def fields(hdr):
    """[(lower-case name, bytes of the whole field with its newline)]"""
    out = []
    for line in hdr.splitlines(keepends=True):
        if line[:1] in (b" ", b"\t") and out:
            out[-1] = (out[-1][0], out[-1][1] + line)
        else:
            out.append((line.split(b":", 1)[0].strip().lower().decode(), line))
    return out


def set_fields(hdr, new):
    """new: list of "Name: value" strings replacing or adding fields"""
    fl = fields(hdr)
    for h in new:
        name = h.split(":", 1)[0].strip().lower()
        line = (h + "\n").encode()
        idx = [i for i, (n, _) in enumerate(fl) if n == name]
        if idx:
            fl[idx[0]] = (name, line)
            for i in reversed(idx[1:]):
                del fl[i]
        else:
            fl.append((name, line))
    return b"".join(b for _, b in fl)


def mime_fields(hdr):
    return b"".join(b for n, b in fields(hdr) if n.startswith("content-") or n == "mime-version")


def outer_fields(hdr):
    return b"".join(b for n, b in fields(hdr) if not (n.startswith("content-") or n == "mime-version"))


def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def armor(data, kind, headers=()):
    b64 = base64.b64encode(data).decode()
    lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
    crc = base64.b64encode(crc24(data).to_bytes(3, "big")).decode()
    out = ["-----BEGIN PGP %s-----" % kind] + list(headers) + [""] + lines + ["=" + crc,
                                                                          "-----END PGP %s-----" % kind]
    return ("\n".join(out) + "\n").encode()


ARMOR_RE = (rb"-----BEGIN PGP (%s)-----\r?\n((?:[^\r\n]+\r?\n)*?)\r?\n(.*?)\r?\n=(....)\r?\n"
            rb"-----END PGP \1-----\r?\n?")


def dearmor(text, kind):
    m = re.search(ARMOR_RE % kind.encode(), text, re.S)
    if m is None:
        sys.exit("no %s armor" % kind)
    data = base64.b64decode(b"".join(m.group(3).split()))
    return m, data


def dearmor_any(sig):
    """A signature armored or binary, as binary packets."""
    return dearmor(sig, "SIGNATURE")[1] if sig.startswith(b"-----BEGIN") else sig


def gpg(home, args, data=None):
    p = subprocess.run(["gpg", "--homedir", home, "--batch", "--yes", "--no-tty",
                        "--pinentry-mode", "loopback", "--passphrase", ""] + args,
                       input=data, capture_output=True)
    if p.returncode != 0:
        sys.exit("gpg %s failed: %s" % (" ".join(args), p.stderr.decode(errors="replace")))
    return p.stdout


def crlf(b):
    return re.sub(rb"\r?\n", b"\r\n", b)


def detached(home, fpr, data):
    return gpg(home, ["--local-user", fpr, "--digest-algo", "SHA256", "--detach-sign"], data)


def default_outer(extra):
    hdr = ("From: Alice <alice@example.net>\nTo: request@example.org\nSubject: Signed request\n"
           "Date: Thu, 03 Dec 2026 10:00:00 +0000\n").encode()
    return set_fields(hdr, extra)


def multipart_signed(outer, entity, sigs, micalg="pgp-sha256",
                     protocol="application/pgp-signature", armor_headers=()):
    b = "=-sig-%s" % hashlib.sha256(entity).hexdigest()[:16]
    if len(sigs) == 1 and sigs[0].startswith(b"-----BEGIN"):
        sig = sigs[0]
    else:
        sig = armor(b"".join(dearmor_any(x) for x in sigs), "SIGNATURE", armor_headers)
    return (outer + ('MIME-Version: 1.0\nContent-Type: multipart/signed; micalg=%s;\n'
                     ' protocol="%s"; boundary="%s"\n\n' % (micalg, protocol, b)).encode()
            + ("--%s\n" % b).encode() + entity + ("\n--%s\n" % b).encode()
            + b'Content-Type: application/pgp-signature; name="signature.asc"\n\n'
            + sig + ("--%s--\n" % b).encode())


def cmd_sign_mime(a):
    home, fpr, inner, out = a[:4]
    rest = a[4:]
    entity = rd(inner).rstrip(b"\n")
    sigs = [detached(home, fpr, crlf(entity))]
    micalg, protocol, hdrs = "pgp-sha256", "application/pgp-signature", []
    i = 0
    while i < len(rest):
        o = rest[i]
        if o == "--also":
            h, f = rest[i + 1].split(":")
            sigs.append(detached(h, f, crlf(entity)))
            i += 2
        elif o == "--bad":
            h, f = rest[i + 1].split(":")
            sigs.append(detached(h, f, crlf(entity) + b"\r\nnot what was sent"))
            i += 2
        elif o == "--repeat":
            sigs = [dearmor_any(sigs[0])] * int(rest[i + 1])
            sigs = [armor(b"".join(sigs), "SIGNATURE")]
            i += 2
        elif o == "--micalg":
            micalg = rest[i + 1]
            i += 2
        elif o == "--protocol":
            protocol = rest[i + 1]
            i += 2
        else:
            hdrs.append(o)
            i += 1
    wr(out, multipart_signed(default_outer(hdrs), entity, sigs, micalg, protocol))


def multipart_encrypted(outer, armored):
    b = "=-enc-%s" % hashlib.sha256(armored).hexdigest()[:16]
    return (outer + ('MIME-Version: 1.0\nContent-Type: multipart/encrypted;\n'
                     ' protocol="application/pgp-encrypted"; boundary="%s"\n\n' % b).encode()
            + ("--%s\nContent-Type: application/pgp-encrypted\n\nVersion: 1\n\n" % b).encode()
            + ('--%s\nContent-Type: application/octet-stream; name="encrypted.asc"\n'
               'Content-Disposition: inline; filename="encrypted.asc"\n\n' % b).encode()
            + armored + ("\n--%s--\n" % b).encode())


def cmd_with_keys(a):
    home, fpr, text, out = a[:4]
    rest = a[4:]
    encrypt_to = None
    if rest[:1] == ["--encrypt"]:
        encrypt_to, rest = rest[1], rest[2:]
    keys, hdrs = [], []
    if "--" in rest:
        k = rest.index("--")
        keys, hdrs = rest[:k], rest[k + 1:]
    else:
        keys = rest
    b = "=-mixed-%s" % hashlib.sha256(rd(text)).hexdigest()[:12]
    ent = ('Content-Type: multipart/mixed; boundary="%s"\n\n--%s\n'
           'Content-Type: text/plain; charset=utf-8\n\n' % (b, b)).encode() + rd(text).rstrip(b"\n")
    for n, k in enumerate(keys):
        if "=" in k:
            # TYPE=PATH: any file, base64
            ctype, path = k.split("=", 1)
            name = path.rsplit("/", 1)[-1]
            b64 = base64.encodebytes(rd(path)).rstrip(b"\n")
            ent += ('\n--%s\nContent-Type: %s; name="%s"\nContent-Disposition: attachment; '
                    'filename="%s"\nContent-Transfer-Encoding: base64\n\n' % (b, ctype, name, name)).encode()
            ent += b64
            continue
        ent += ('\n--%s\nContent-Type: application/pgp-keys\n'
                'Content-Disposition: attachment; filename="key%d.asc"\n\n' % (b, n)).encode()
        ent += rd(k).rstrip(b"\n")
    # as mutt writes it: a line break after the inner close delimiter
    ent += ("\n--%s--\n" % b).encode()
    if encrypt_to is not None:
        # signed and encrypted in one OpenPGP message, as mutt and
        # Thunderbird do it
        armored = gpg(home, ["--local-user", fpr, "--trust-model", "always", "--armor",
                             "--sign", "--encrypt", "--recipient", encrypt_to], crlf(ent))
        wr(out, multipart_encrypted(default_outer(hdrs), armored))
        return
    sig = detached(home, fpr, crlf(ent))
    wr(out, multipart_signed(default_outer(hdrs), ent, [sig]))


def cmd_encrypt_mime(a):
    home, to, inner, out = a[:4]
    rest = a[4:]
    sign = []
    if rest[:1] == ["--sign"]:
        sign, rest = ["--local-user", rest[1], "--sign"], rest[2:]
    armored = gpg(home, ["--trust-model", "always", "--armor"] + sign +
                  ["--encrypt", "--recipient", to], crlf(rd(inner).rstrip(b"\n") + b"\n"))
    wr(out, multipart_encrypted(default_outer(rest), armored))


def bomb_entity(kind, n):
    """Chunks of a MIME entity that costs a reader n of something."""
    if kind == "text":
        yield b"Content-Type: text/plain; charset=us-ascii\r\n\r\nProduct: Bomb\r\n\r\n"
        line = b"A" * 70 + b"\r\n"
        chunk = line * (1024 * 1024 // len(line))
        left = n
        while left > 0:
            yield chunk[:left]
            left -= len(chunk)
    elif kind == "parts":
        yield b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        part = b"--b\r\n\r\n"
        for _ in range(0, n, 10000):
            yield part * min(10000, n)
        yield b"--b--\r\n"
    elif kind == "nest":
        for i in range(n):
            yield b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i)
        yield b"Content-Type: text/plain\r\n\r\nProduct: Nested\r\n"
        for i in reversed(range(n)):
            yield b"\r\n--b%d--\r\n" % i
    else:
        sys.exit("unknown bomb " + kind)


def cmd_encrypt_bomb(a):
    home, to, kind, n, out = a[:5]
    p = subprocess.Popen(["gpg", "--homedir", home, "--batch", "--yes", "--no-tty",
                          "--trust-model", "always", "--armor", "--compress-level", "9",
                          "--encrypt", "--recipient", to],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    import threading
    got = []
    t = threading.Thread(target=lambda: got.append(p.stdout.read()))
    t.start()
    for chunk in bomb_entity(kind, int(n)):
        p.stdin.write(chunk)
    p.stdin.close()
    t.join()
    if p.wait() != 0:
        sys.exit("gpg --encrypt failed")
    wr(out, multipart_encrypted(default_outer(a[5:]), got[0]))


def packet(tag, body):
    """A new-format packet with a five-octet length."""
    return bytes([0xC0 | tag, 0xFF]) + len(body).to_bytes(4, "big") + body


def cmd_encrypt_flood(a):
    home, fpr, to, n, inner, out = a[:6]
    data = crlf(rd(inner).rstrip(b"\n") + b"\n")
    sig = gpg(home, ["--local-user", fpr, "--digest-algo", "SHA256", "--detach-sign"], data)
    literal = packet(11, b"b\x00\x00\x00\x00\x00" + data)
    msg = sig * int(n) + literal
    armored = gpg(home, ["--trust-model", "always", "--armor", "--no-literal", "--compress-algo", "zlib",
                         "--encrypt", "--recipient", to], msg)
    wr(out, multipart_encrypted(default_outer(a[6:]), armored))


def cmd_to_inline(a):
    src, out = a[:2]
    hdr, body = split_msg(rd(src))
    m = re.search(rb"-----BEGIN PGP MESSAGE-----.*?-----END PGP MESSAGE-----\r?\n?", body, re.S)
    if m is None:
        sys.exit("no PGP MESSAGE in %s" % src)
    outer = set_fields(outer_fields(hdr), a[2:])
    wr(out, outer + b"MIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n\n" + m.group(0))


def cmd_wrap_mixed(a):
    src, out, textfile = a[:3]
    hdr, body = split_msg(rd(src))
    b = "=-wrap-outer"
    outer = set_fields(outer_fields(hdr), a[3:])
    res = (outer + ('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="%s"\n\n' % b).encode()
           + ("--%s\nContent-Type: text/plain; charset=utf-8\n\n" % b).encode() + rd(textfile).rstrip(b"\n")
           + ("\n--%s\n" % b).encode() + mime_fields(hdr) + b"\n" + body.rstrip(b"\n")
           + ("\n--%s--\n" % b).encode())
    wr(out, res)


def cmd_forward(a):
    src, out, textfile = a[:3]
    raw = rd(src)
    b = "=-fwd-outer"
    outer = default_outer(["From: Mallory <mallory@example.com>", "Subject: Fwd: request"] + a[3:])
    res = (outer + ('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="%s"\n\n' % b).encode()
           + ("--%s\nContent-Type: text/plain; charset=utf-8\n\n" % b).encode() + rd(textfile).rstrip(b"\n")
           + ("\n--%s\nContent-Type: message/rfc822\nContent-Disposition: inline\n\n" % b).encode()
           + raw.rstrip(b"\n") + ("\n--%s--\n" % b).encode())
    wr(out, res)


def cmd_reheader(a):
    src, out = a[:2]
    hdr, body = split_msg(rd(src))
    wr(out, set_fields(hdr, a[2:]) + b"\n" + body)


def cmd_tamper(a):
    src, out = a[:2]
    raw = rd(src)
    m, data = dearmor(raw, "MESSAGE")
    d = bytearray(data)
    pos = len(d) - 30
    d[pos] ^= 0x55
    d[pos + 1] ^= 0xAA
    new = armor(bytes(d), "MESSAGE")
    wr(out, raw[:m.start()] + new + raw[m.end():])


def cmd_rearmor(a):
    src, out, kind = a
    raw = rd(src)
    begin = ("-----BEGIN PGP %s-----\n" % kind).encode()
    i = raw.find(begin)
    if i < 0:
        sys.exit("no %s armor" % kind)
    wr(out, raw[:i + len(begin)] + b"Comment: sent again\n" + raw[i + len(begin):])


def cmd_double_clearsign(a):
    src, out = a
    hdr, body = split_msg(rd(src))
    block = body.strip(b"\n")
    wr(out, hdr + b"\n" + block + b"\n" + block + b"\n")


def parse(path):
    return email.message_from_binary_file(open(path, "rb"), policy=email.policy.compat32)


def cmd_split_signed(a):
    mail, data_out, sig_out = a
    raw = rd(mail).replace(b"\r\n", b"\n")
    m = email.message_from_bytes(raw, policy=email.policy.compat32)
    if m.get_content_type() != "multipart/signed":
        sys.exit("not multipart/signed but %s" % m.get_content_type())
    b = m.get_boundary().encode()
    _, body = split_msg(raw)
    delim = b"\n--" + b
    body = b"\n" + body
    first = body.index(delim)
    start = body.index(b"\n", first + len(delim)) + 1
    second = body.index(delim, start)
    wr(data_out, crlf(body[start:second]))
    wr(sig_out, m.get_payload(1).get_payload(decode=True))


def cmd_sig_sha256(a):
    m = parse(a[0])
    ct = m.get_content_type()
    if ct == "multipart/signed":
        data = m.get_payload(1).get_payload(decode=True)
    elif ct == "multipart/encrypted":
        data = m.get_payload(1).get_payload(decode=True)
    else:
        data = m.get_payload(decode=True)
    print(hashlib.sha256(data).hexdigest())


def cmd_decrypt(a):
    mail, home, out = a
    m = parse(mail)
    if m.get_content_type() != "multipart/encrypted":
        sys.exit("not multipart/encrypted but %s" % m.get_content_type())
    data = m.get_payload(1).get_payload(decode=True)
    p = subprocess.run(["gpg", "--homedir", home, "--batch", "--no-tty", "--status-fd", "2",
                        "--decrypt"], input=data, capture_output=True)
    wr(out + ".status", p.stderr)
    if p.returncode != 0:
        sys.exit("gpg --decrypt failed: %s" % p.stderr.decode(errors="replace"))
    wr(out, p.stdout)


def texts(m):
    out = []
    for p in m.walk():
        if p.get_content_type() == "text/plain" and not p.is_multipart():
            payload = p.get_payload(decode=True) or b""
            out.append(payload.decode(p.get_content_charset() or "utf-8", errors="replace"))
    return "\n".join(out)


def cmd_text(a):
    sys.stdout.write(texts(parse(a[0])))


def cmd_keys(a):
    for p in parse(a[0]).walk():
        if p.get_content_type() == "application/pgp-keys":
            wr(a[1], p.get_payload(decode=True))
            return
    sys.exit("no application/pgp-keys part")


CMDS = {
    "sign-mime": cmd_sign_mime, "with-keys": cmd_with_keys, "wrap-mixed": cmd_wrap_mixed,
    "forward": cmd_forward, "reheader": cmd_reheader, "tamper": cmd_tamper,
    "encrypt-mime": cmd_encrypt_mime, "to-inline": cmd_to_inline,
    "encrypt-bomb": cmd_encrypt_bomb, "encrypt-flood": cmd_encrypt_flood,
    "rearmor": cmd_rearmor, "double-clearsign": cmd_double_clearsign,
    "split-signed": cmd_split_signed, "sig-sha256": cmd_sig_sha256, "decrypt": cmd_decrypt,
    "text": cmd_text, "keys": cmd_keys,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS:
        sys.exit(__doc__)
    CMDS[sys.argv[1]](sys.argv[2:])
