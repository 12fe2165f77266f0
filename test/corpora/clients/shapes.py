#!/usr/bin/python3
"""shapes.py - mail in the shapes Gmail, Outlook and Apple Mail give it, made
with Python's email package (those clients are not in Debian): their MIME
structure, header fields, encodings and what their plain text looks like
(Gmail's autolinks and wrapped attribution, Outlook's double spacing and
separator, Apple Mail's quoted attribution).

  shapes.py gmail-request OUT     the request, autolinked, with its HTML
  shapes.py outlook-request OUT   the request, fields double-spaced
  shapes.py html-only OUT         the request as HTML alone, links inside
  shapes.py apple-request OUT     a Japanese Subject in UTF-8 base64 words
  shapes.py reply STYLE IN OUT [--top TEXT] [--bottom TEXT] [--from ADDR]
      a reply to the mail IN (the robot's), quoting its text as STYLE
      (gmail, outlook, apple, thunderbird) does, with TEXT above the
      quote (--top) or below it (--bottom); \\n in TEXT is a line end
"""
import email
import email.policy
import email.utils
import sys
from email.message import EmailMessage
from email.header import Header

POLICY = email.policy.SMTP.clone(max_line_length=78)
DATE = "Mon, 05 Jan 2026 10:00:00 +0000"

REQUEST = [
    ("Vendor", "Example Corp <example.com>"),
    ("Product", "Example Server"),
    ("Version", "2.4.1"),
    ("Vendor-Contact", "security@example.com"),
    ("Reference", "https://example.org/advisory"),
]
DESCRIPTION = ("A request with an overlong Host header overflows a fixed buffer in\n"
               "parse_request(). The proof of concept is at example.org/poc.py.")


def write(msg, out):
    with open(out, "wb") as f:
        f.write(msg.as_bytes(policy=POLICY))


def gmail_autolink(v):
    """What Gmail's plain text makes of a value it linked in the HTML."""
    if v.startswith("http"):
        return v    # the link text is the URL: it stays
    if "@" in v and "<" not in v:
        return "%s <mailto:%s>" % (v, v)
    if v.endswith(">") and "<" in v:
        name, dom = v[:-1].split("<", 1)
        return "%s<%s <http://%s>>" % (name, dom, dom)
    return v


def gmail_request(out):
    m = EmailMessage(policy=POLICY)
    m["MIME-Version"] = "1.0"
    m["From"] = "Alice Researcher <alice.researcher@gmail.example>"
    m["Date"] = DATE
    m["Message-ID"] = "<CAKx9+q7yH3WcJ0p1sGm4@mail.gmail.com>"
    m["Subject"] = "Heap overflow in Example Server"
    m["To"] = "request@example.org"
    lines = ["%s: %s" % (k, gmail_autolink(v)) for k, v in REQUEST]
    desc = DESCRIPTION.replace("example.org/poc.py", "example.org/poc.py <http://example.org/poc.py>")
    m.set_content("\n".join(lines) + "\n\n" + desc + "\n", cte="quoted-printable")
    html = "".join("<div>%s: %s</div>" % (k, v.replace("<", "&lt;").replace(">", "&gt;")) for k, v in REQUEST)
    m.add_alternative('<div dir="ltr">%s<div><br></div><div>%s</div></div>\n' % (html, DESCRIPTION),
                      subtype="html", cte="quoted-printable")
    m.set_boundary("000000000000a1b2c3d4e5f60718")
    write(m, out)


def outlook_request(out):
    m = EmailMessage(policy=POLICY)
    m["From"] = "Alice Researcher <alice@outlook.example>"
    m["To"] = "\"request@example.org\" <request@example.org>"
    m["Subject"] = "Heap overflow in Example Server"
    m["Thread-Topic"] = "Heap overflow in Example Server"
    m["Thread-Index"] = "AdqIvV2mX0ZyOmz1T4mWJQk0rP1xIw=="
    m["Date"] = DATE
    m["Message-ID"] = "<DB9PR07MB7323A1B2C3D4E5F6A7B8C9D0E1F2A@DB9PR07MB7323.eurprd07.prod.outlook.com>"
    m["Accept-Language"] = "en-US"
    m["Content-Language"] = "en-US"
    m["X-MS-Has-Attach"] = ""
    m["X-MS-TNEF-Correlator"] = ""
    m["MIME-Version"] = "1.0"
    # Outlook writes each paragraph of its HTML as a paragraph of text
    text = "\n\n".join("%s: %s" % (k, v) for k, v in REQUEST) + "\n\n" + DESCRIPTION.replace("\n", " ") + "\n\n"
    m.set_content(text, charset="us-ascii", cte="quoted-printable")
    html = "".join('<p class="MsoNormal">%s: %s<o:p></o:p></p>' % (k, v.replace("<", "&lt;").replace(">", "&gt;"))
                   for k, v in REQUEST)
    m.add_alternative("<html><body lang=\"EN-US\">%s<p class=\"MsoNormal\">%s</p></body></html>\n" % (html, DESCRIPTION),
                      subtype="html", cte="quoted-printable")
    m.set_boundary("_000_DB9PR07MB7323A1B2C3D4E5F6A7B8C9D0E1F2ADB9PR07MB7323eurp_")
    write(m, out)


def html_only(out):
    m = EmailMessage(policy=POLICY)
    m["From"] = "Alice Researcher <alice@example.net>"
    m["To"] = "request@example.org"
    m["Subject"] = "Heap overflow in Example Server (HTML only)"
    m["Date"] = DATE
    m["Message-ID"] = "<html-only-1@example.net>"
    m["MIME-Version"] = "1.0"
    m.set_content("<html><body><div>Vendor: Example Corp &lt;example.com&gt;</div>"
                  "<div>Product: Example Server</div><div><br></div>"
                  "<div>A long Host header overflows a buffer. See "
                  "<a href=\"https://example.org/poc.py\">the proof of concept</a> and "
                  "<a href=\"https://example.org/advisory\">https://example.org/advisory</a>.</div>"
                  "</body></html>\n", subtype="html", cte="quoted-printable")
    write(m, out)


def apple_request(out):
    m = EmailMessage(policy=POLICY)
    m["From"] = "=?utf-8?B?5bGx55Sw5aSq6YOO?= <yamada@icloud.example>"
    # Apple Mail splits a long Subject into UTF-8 base64 words, each whole
    title = "Example Server のリクエスト解析におけるヒープオーバーフローの脆弱性について"
    m["Subject"] = "placeholder"
    m["Message-Id"] = "<5F1A2B3C-4D5E-6F70-8192-A3B4C5D6E7F8@icloud.example>"
    m["Date"] = DATE
    m["To"] = "request@example.org"
    m["X-Mailer"] = "Apple Mail (2.3774.600.62)"
    m["Mime-Version"] = "1.0 (Mac OS X Mail 16.0 \\(3774.600.62\\))"
    m.set_content("Vendor: Example Corp <example.com>\nProduct: Example Server\n\n"
                  "Host ヘッダーが長すぎるとバッファがあふれます。\n", charset="utf-8", cte="quoted-printable")
    words = Header(title, "utf-8").encode(maxlinelen=76).replace("\n", "\r\n")
    data = m.as_bytes(policy=POLICY).replace(b"Subject: placeholder", b"Subject: " + words.encode())
    with open(out, "wb") as f:
        f.write(data)


def quote(text, prefix="> "):
    return "".join((prefix + l).rstrip(" ") + "\n" if l else prefix.rstrip() + "\n"
                   for l in text.rstrip("\n").split("\n"))


def reply(style, src, out, top, bottom, sender):
    with open(src, "rb") as f:
        orig = email.message_from_binary_file(f, policy=email.policy.default)
    body = orig.get_body(("plain",)).get_content()
    frm = str(orig["From"])
    name, addr = email.utils.parseaddr(frm)
    subj = str(orig["Subject"])
    m = EmailMessage(policy=POLICY)
    m["From"] = sender
    m["To"] = str(orig["Reply-To"] or orig["From"])
    m["Subject"] = subj if subj.lower().startswith("re:") else "Re: " + subj
    m["Date"] = email.utils.formatdate()
    m["Message-ID"] = email.utils.make_msgid(domain=sender.split("@")[-1].strip(">"))
    mid = str(orig["Message-ID"]).strip()
    m["In-Reply-To"] = mid
    m["References"] = ((str(orig["References"]) + " ") if orig["References"] else "") + mid
    top = (top or "").replace("\\n", "\n")
    bottom = (bottom or "").replace("\\n", "\n")
    if style == "gmail":
        # Gmail wraps its plain text at 78 columns: "wrote:" goes on a line of its own
        attribution = "On Mon, Jan 5, 2026 at 10:00\u202fAM %s <%s>\nwrote:\n" % (name, addr)
        quoted = attribution + "\n" + quote(body)
    elif style == "outlook":
        quoted = ("________________________________\nFrom: %s <%s>\nSent: Monday, January 5, 2026 10:00 AM\n"
                  "To: %s\nSubject: %s\n\n%s" % (name, addr, sender, subj, body))
    elif style == "apple":
        quoted = quote("On 5 Jan 2026, at 10:00, %s <%s> wrote:\n\n%s" % (name, addr, body))
    elif style == "thunderbird":
        quoted = "On 1/5/26 10:00 AM, %s wrote:\n%s" % (name, quote(body))
    else:
        sys.exit("unknown style " + style)
    text = (top + "\n\n" if top else "") + quoted + ("\n" + bottom + "\n" if bottom else "")
    if style == "outlook":
        m.set_content(text, charset="us-ascii" if text.isascii() else "utf-8", cte="quoted-printable")
        m["Thread-Topic"] = subj
        m["Thread-Index"] = "AdqIvV2mX0ZyOmz1T4mWJQk0rP1xIw=="
    else:
        m.set_content(text, charset="utf-8", cte="quoted-printable" if not text.isascii() else "7bit")
    write(m, out)


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    cmd = a.pop(0)
    if cmd == "reply":
        style, src, out = a[0], a[1], a[2]
        opts = {"--top": None, "--bottom": None, "--from": "Alice Researcher <alice@example.net>"}
        rest = a[3:]
        while rest:
            opts[rest[0]] = rest[1]
            rest = rest[2:]
        reply(style, src, out, opts["--top"], opts["--bottom"], opts["--from"])
    else:
        {"gmail-request": gmail_request, "outlook-request": outlook_request,
         "html-only": html_only, "apple-request": apple_request}[cmd](a[0])


main()
