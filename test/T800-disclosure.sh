#!/bin/bash
# T800-disclosure: the disclosure matrix.  Distinct secrets are planted
# (tokens of each kind; an anonymous researcher's name, addresses, Reply-To
# and key; another one's key attached as Thunderbird attaches it, a file
# named after her, her signed mail from another address that does not name
# the entry; embargoed text in a request, an addition, an attachment and a
# Subject), with every kind of record (additions, vendor responses,
# commands of every kind: endorsements and an endorsed contributor's
# addition, approvals, reviews, access requests and grants, and the
# robot's deliveries of sealed records to a key given access; references
# with checksums and mirrors), then every surface that shows entries is
# collected and each secret is looked for in each surface: absent where
# the one disclosure policy forbids it, present where it must be shown.
#
# SURFACES below is the one list of surfaces.  The last tests fail when
# something that can show an entry (a mail template, an export format, a
# subcommand) is in neither this list nor the list of what is not a
# surface: a new surface cannot be added without joining the matrix.
# SHOWS says what each surface must show (its entries, or what it is
# about), so that an empty or broken surface fails instead of passing
# every check of absence; proofs are read with the lines they prove
# (base64 in the proof), and quarantine holds mail set aside.
. "$(dirname "$0")/test-lib.sh"

make_instance inst
set_conf announce to list@lists.example
set_conf crypto sign none
Y=$(date -u +%Y)
V() { "$VULNID" -c "$CONF" "$@"; }
PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"

# Every text of a mail, decoded: headers (RFC 2047), and each part.
dump_mail() {
	$PYTHON - "$1" <<'PY'
import sys, email, email.policy
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
for k, v in m.items():
    print("%s: %s" % (k, v))
for p in m.walk():
    if p.is_multipart():
        continue
    for k, v in p.items():
        print("%s: %s" % (k, v))
    b = p.get_payload(decode=True) or b""
    print(b.decode("utf-8", "replace"))
PY
}
token_in() { dump_mail "$1" | grep -Eo '[Tt]oken:? +(is +)?vulnid_[a-z2-7]{32}' | head -n 1 | grep -Eo 'vulnid_[a-z2-7]{32}'; }
mails_to() {
	local f
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi -- "$1" && echo "$f"
	done
	return 0
}
newest_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
# decrypted MAIL: an encrypted mail as the reader reads it
decrypted() {
	$PYTHON - "$1" "$TMP/gnupg-reader" <<'PY'
import sys, email, email.policy, subprocess
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
if m.get_content_type() != "multipart/encrypted":
    sys.exit(0)
p = subprocess.run(["gpg", "--homedir", sys.argv[2], "--batch", "--no-tty", "--decrypt"],
                   input=m.get_payload()[1].get_payload(decode=True), capture_output=True)
inner = email.message_from_bytes(p.stdout, policy=email.policy.default)
for part in inner.walk():
    if not part.is_multipart():
        print(part.get_payload(decode=True).decode("utf-8", "replace"))
PY
}

# --- the secrets -------------------------------------------------------------

ZADDR=zelda.secret@researcher.example
ZREPLY=zreply.secret@other.example
ZNAME="Zelda Quux"
ZFPR=$(new_signing_key zelda "$ZNAME <$ZADDR>")
V keys import "$TMP/zelda.asc" >/dev/null
V vendor add "Widget Co" --domain widget.example --contact psirt@widget.example >/dev/null

# A: public and anonymous, signed by the researcher's key
clearsigned_mail "$TMP/a.eml" zelda "$ZFPR" "Vendor: Widget Co
Product: Widget
Anonymous: yes

Remote code execution in the upload handler. Reach me at $ZADDR,
or ask $ZNAME." "From: $ZNAME <$ZADDR>" "Reply-To: $ZREPLY" "Subject: RCE in Widget, found by $ZNAME"
deliver_ok "$TMP/a.eml" -f "$ZADDR" -r request@example.org
A=$(newest_id)

# D: public and anonymous, PGP/MIME signed by a key the robot does not know
# yet, which comes attached as Thunderbird attaches it (OpenPGP_0xKEYID.asc,
# the bytes of gpg --armor --export), with a proof of concept named after
# her; then her signed mail from another address whose text does not name
# the entry (its signature grants nothing there)
YADDR=yves.hidden@researcher.example
YOTHER=yw.elsewhere@other.example
YNAME="Yves Wexler"
YFPR=$(new_signing_key yves "$YNAME <$YADDR>")
YKEYID=${YFPR: -16}
YKEYSHA=$(sha256sum <"$TMP/yves.asc" | cut -d" " -f1)
cp "$TMP/yves.asc" "$TMP/OpenPGP_0x$YKEYID.asc"
printf 'print("a proof of concept")\n' >"$TMP/poc-yves.hidden.py"
printf 'Vendor: Widget Co\nProduct: Widget Cloud\nAnonymous: yes\n\nSSRF in the importer.\n' >"$TMP/d.txt"
$PGPMAIL with-keys "$TMP/gnupg-yves" "$YFPR" "$TMP/d.txt" "$TMP/d.eml" \
	"application/pgp-keys=$TMP/OpenPGP_0x$YKEYID.asc" "text/x-python=$TMP/poc-yves.hidden.py" -- \
	"From: $YNAME <$YADDR>" "To: request@example.org" "Subject: SSRF in Widget Cloud" \
	"Message-ID: <d1@researcher.example>" "Date: $(date -R)"
deliver_ok "$TMP/d.eml" -f "$YADDR" -r request@example.org
D=$(newest_id)
clearsigned_mail "$TMP/d2.eml" yves "$YFPR" "One more detail: the importer follows redirects." \
	"From: $YOTHER" "Subject: Re: [$D] SSRF"
deliver_ok "$TMP/d2.eml" -f "$YOTHER" -r "request+$D@example.org"

# C: public, Alice's; her creator token goes into an addition in every form
printf 'Vendor: Widget Co\nProduct: Widget Admin\n\nXSS in the admin panel.\n' |
	write_mail "$TMP/c.eml" "Subject: XSS in Widget Admin"
deliver_ok "$TMP/c.eml" -f alice@example.net -r request@example.org
C=$(newest_id)
TC=$(token_in "$(mails_to alice@example.net | tail -n 1)")
TV=$(token_in "$(mails_to psirt@widget.example | tail -n 1)")
{
	printf 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b1"\n'
	printf 'From: Alice <alice@example.net>\nTo: request+%s@example.org\n' "$C"
	printf 'Subject: Re: [%s] with my token %s\nMessage-ID: <c2@example.net>\n\n' "$C" "$TC"
	printf -- '--b1\nContent-Type: text/plain\n\nToken: %s\nVersion: 1.2\n\n' "$TC"
	printf 'More details; my token was x%sy, glued.\n\n> Token: %s\n> keep it secret\n' "$TC" "$TC"
	printf -- '--b1\nContent-Type: text/plain\nContent-Disposition: attachment; filename=notes.txt\n\n'
	printf 'token %s in an attachment\n--b1--\n' "$TC"
} >"$TMP/c2.eml"
deliver_ok "$TMP/c2.eml" -f alice@example.net -r "request+$C@example.org"
printf 'Token: %s\nStatus: confirmed\n\nWe confirm.\n\n> Your response token is %s: keep the line\n' "$TV" "$TV" |
	write_mail "$TMP/v.eml" "From: psirt@widget.example" "Subject: Re: [$C] XSS, token $TV"
deliver_ok "$TMP/v.eml" -f psirt@widget.example -r "request+$C@example.org"

# B: embargoed, with an attachment; an addition while sealed
{
	printf 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b2"\n'
	printf 'From: Alice <alice@example.net>\nTo: request@example.org\n'
	printf 'Subject: EMBSUBJ-SECRET router\nMessage-ID: <b1@example.net>\n\n'
	printf -- '--b2\nContent-Type: text/plain\n\nVendor: Widget Co\nEmbargo: 2099-01-01\n\nEMBBODY-SECRET details.\n'
	printf -- '--b2\nContent-Type: text/plain\nContent-Disposition: attachment; filename=EMBNAME-SECRET.txt\n\n'
	printf 'EMBATT-SECRET bytes\n--b2--\n'
} >"$TMP/b.eml"
deliver_ok "$TMP/b.eml" -f alice@example.net -r request@example.org
B=$(newest_id)
TB=$(token_in "$(mails_to alice@example.net | tail -n 1)")
printf 'Token: %s\n\nEMBADD-SECRET more.\n' "$TB" |
	write_mail "$TMP/b2.eml" "From: alice@example.net" "Subject: EMBADDSUBJ-SECRET"
deliver_ok "$TMP/b2.eml" -f alice@example.net -r "request+$B@example.org"

# the proposals: on A (anonymous, signed) the researcher endorses a key,
# whose addition then counts; a third party mirrors its reference; on C a
# third party's value is approved by the creator's token and a moderator
# reviews it; on B (embargoed) a reader's key asks for access, the creator
# grants it with the token, and a later sealed addition is delivered too.
NFPR=$(new_signing_key newbie "Nick Newbie <nick@example.com>")
MFPR=$(new_signing_key mod "Mo Derator <mo@example.org>")
RFPR=$(new_signing_key reader "Rita Reader <rita@cert.example>")
G "$TMP/gnupg-reader" --quick-add-key "$RFPR" cv25519 encr never 2>/dev/null
G "$TMP/gnupg-reader" --armor --export "$RFPR" >"$TMP/reader.asc"
for k in newbie mod reader; do V keys import "$TMP/$k.asc" >/dev/null; done
set_conf lifecycle moderators "$MFPR"
POCSHA=$(printf 'poc' | sha256sum | cut -d' ' -f1)
clearsigned_mail "$TMP/e1.eml" zelda "$ZFPR" "endorse $A $NFPR" "From: $ZNAME <$ZADDR>"
deliver_ok "$TMP/e1.eml" -f "$ZADDR" -r request@example.org
clearsigned_mail "$TMP/e2.eml" newbie "$NFPR" "Version: 9.1
Reference: https://example.org/poc sha256=$POCSHA

For $A." "From: nick@example.com"
deliver_ok "$TMP/e2.eml" -f nick@example.com -r "request+$A@example.org"
printf 'Mirror: https://mirror.example.net/poc sha256=%s
' "$POCSHA" | write_mail "$TMP/e3.eml" "From: bob@example.com"
deliver_ok "$TMP/e3.eml" -f bob@example.com -r "request+$A@example.org"
printf 'Version: 1.9
' | write_mail "$TMP/e4.eml" "From: bob@example.com"
deliver_ok "$TMP/e4.eml" -f bob@example.com -r "request+$C@example.org"
CSEQ=$(sql "SELECT max(seq) FROM records WHERE entry = '$C'")
printf 'Token: %s\napprove %s\n' "$TC" "$CSEQ" | write_mail "$TMP/e5.eml" "From: alice@example.net"
deliver_ok "$TMP/e5.eml" -f alice@example.net -r "request+$C@example.org"
clearsigned_mail "$TMP/e6.eml" mod "$MFPR" "reviewed $C Widget Admin 1.9" "From: mo@example.org"
deliver_ok "$TMP/e6.eml" -f mo@example.org -r request@example.org
clearsigned_mail "$TMP/e7.eml" reader "$RFPR" "access $B" "From: rita@cert.example"
deliver_ok "$TMP/e7.eml" -f rita@cert.example -r request@example.org
printf 'Token: %s\ngrant %s\n' "$TB" "$RFPR" | write_mail "$TMP/e8.eml" "From: alice@example.net"
deliver_ok "$TMP/e8.eml" -f alice@example.net -r "request+$B@example.org"
printf 'Token: %s\n\nEMBLATE-SECRET after the grant.\n' "$TB" | write_mail "$TMP/e9.eml" "From: alice@example.net"
deliver_ok "$TMP/e9.eml" -f alice@example.net -r "request+$B@example.org"

# a subscriber, and what it gets; lookups by a stranger
printf 'subscribe %s\nsubscribe %s\n' "$A" "$C" | write_mail "$TMP/s1.eml" "From: bob@example.com"
deliver_ok "$TMP/s1.eml" -f bob@example.com -r request@example.org
for t in $(dump_mail "$(mails_to bob@example.com | tail -n 1)" | grep -Eo 'Token: vulnid_[a-z2-7]{32}' | cut -d" " -f2); do
	printf 'Token: %s\n' "$t" | write_mail "$TMP/s2.eml" "From: bob@example.com"
	deliver_ok "$TMP/s2.eml" -f bob@example.com -r request@example.org
done
clearsigned_mail "$TMP/a2.eml" zelda "$ZFPR" "$A: one more detail from $ZNAME, $ZADDR." \
	"From: $ZNAME <$ZADDR>" "Subject: Re: [$A] detail"
deliver_ok "$TMP/a2.eml" -f "$ZADDR" -r "request+$A@example.org"
printf 'Status: fixed\n\nFixed.\n' | write_mail "$TMP/v2.eml" "From: psirt@widget.example" "Subject: Re: [$A] RCE"
deliver_ok "$TMP/v2.eml" -f psirt@widget.example -r "request+$A@example.org"
# (signed: unverified mail gets headlines only, and the whole public view
# is what the matrix must see)
MFPR=$(new_signing_key mallory "Mallory <mallory@example.com>")
V keys import "$TMP/mallory.asc" >/dev/null
clearsigned_mail "$TMP/l.eml" mallory "$MFPR" "$(printf 'lookup %s\nlookup %s\nlookup %s\nlookup %s' "$A" "$B" "$C" "$D")" \
	"From: mallory@example.com"
deliver_ok "$TMP/l.eml" -f mallory@example.com -r request@example.org
printf 'lookup %s\nlookup %s\nlookup %s\nlookup %s\n' "$A" "$B" "$C" "$D" | write_mail "$TMP/l2.eml" "From: eve@example.com"
deliver_ok "$TMP/l2.eml" -f eve@example.com -r request@example.org

# Mail set aside (quarantine): an automatic reply about the public entry
# whose Subject carries a token, and one about the embargoed entry.
printf 'I am away.\n' | write_mail "$TMP/q1.eml" "From: bot@else.example" \
	"Subject: Re: [$A] out of office $TC" "Auto-Submitted: auto-replied"
deliver_ok "$TMP/q1.eml" -f bot@else.example -r "request+$A@example.org"
printf 'I am away. EMBBODY-SECRET\n' | write_mail "$TMP/q2.eml" "From: bot@else.example" \
	"Subject: Re: [$B] out of office EMBSUBJ-SECRET" "Auto-Submitted: auto-replied"
deliver_ok "$TMP/q2.eml" -f bot@else.example -r "request+$B@example.org"

# --- the surfaces ----------------------------------------------------------------

S="$TMP/surfaces"
mkdir -p "$S"
# The one list: NAME AUDIENCE, and how each is collected below.
SURFACES="show:public show-json:public show-references:public list:public list-json:public lookup:public
lookup-headline:public subscription:public announce:public feed:public prove:public osv:public mbox:public
html:public atom:public verify-page:public quarantine:public vendor-mail:vendor reader-mail:reader
show-private:operator"

collect() {
	local name=$1 f
	case "$name" in
	show) for e in $A $B $C $D; do V show "$e"; done ;;
	show-json) for e in $A $B $C $D; do V show "$e" --json; done ;;
	show-references) for e in $A $B $C $D; do V show "$e" --references; done ;;
	list) V list ;;
	list-json) V list --json ;;
	lookup) for f in $(mails_to mallory@example.com); do dump_mail "$f"; done ;;
	lookup-headline) for f in $(mails_to eve@example.com); do dump_mail "$f"; done ;;
	subscription) for f in $(mails_to bob@example.com); do
			mail_header "$f" Subject | grep -q "^\[" && dump_mail "$f"; done; true ;;
	announce) for f in $(mails_to list@lists.example); do dump_mail "$f"; done ;;
	feed) V export feed "$TMP/feed" >/dev/null && find "$TMP/feed" -type f -exec cat {} + ;;
	prove) for e in $A $B $C $D; do
			"$VULNID" prove "$TMP/feed" "$e" >"$TMP/proof" || return 1
			cat "$TMP/proof" && sed -n "s/^extra //p" "$TMP/proof" | base64 -d && echo || return 1
		done ;;
	osv) V export osv "$TMP/osv" >/dev/null && cat "$TMP"/osv/* ;;
	mbox) V export mbox "$TMP/mbox" >/dev/null && cat "$TMP/mbox" &&
		$PYTHON -c 'import mailbox, sys
for m in mailbox.mbox(sys.argv[1]):
    print(m.get_payload(decode=True).decode())' "$TMP/mbox" ;;
	html) V export html "$TMP/html" >/dev/null && find "$TMP/html" -type f -exec cat {} + &&
		for f in "$TMP"/html/mail/*.eml; do dump_mail "$f"; done ;;
	atom) V export html "$TMP/html-atom" >/dev/null && cat "$TMP/html-atom/feed.atom" &&
		$PYTHON -c 'import feedparser, sys
f = feedparser.parse(sys.argv[1])
assert not f.bozo and f.entries
for e in f.entries:
    print(e.id, e.title, e.link, e.summary)' "$TMP/html-atom/feed.atom" ;;
	verify-page) V export html "$TMP/html-verify" >/dev/null && cat "$TMP/html-verify/verify.html" ;;
	quarantine) V quarantine list && V quarantine list --json ;;
	vendor-mail) for f in $(mails_to psirt@widget.example); do dump_mail "$f"; done ;;
	reader-mail) for f in $(mails_to rita@cert.example); do dump_mail "$f"; decrypted "$f"; done ;;
	show-private) for e in $A $B $C $D; do V show "$e" --private; V show "$e" --private --json; done ;;
	*) return 1 ;;
	esac
}

test_expect_success 'setup: every surface is collected' '
	test -n "$A" && test -n "$B" && test -n "$C" && test -n "$D" && test "$D" != "$C" &&
	test -n "$TC" && test -n "$TV" && test -n "$TB" &&
	expect_eq "$YFPR" "$(gpg --homedir "$INST/gnupg" --with-colons --list-keys "$YFPR" | awk -F: "/^fpr/ { print \$10; exit }")" &&
	expect_eq embargoed "$(V show "$B" --json | json_get "j[\"state\"]")" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM tokens WHERE role = '\''subscriber'\''")" &&
	for s in $SURFACES; do
		collect "${s%%:*}" >"$S/${s%%:*}" 2>&1 || fail "cannot collect ${s%%:*}"
	done &&
	test -s "$S/subscription" && test -s "$S/announce" && test -s "$S/lookup" && test -s "$S/vendor-mail" &&
	test -s "$S/reader-mail" && test -s "$S/show-references" &&
	grep -q "address: *request+$A@example.org" "$S/lookup-headline"
'

# CLASS:SECRET...; a class names who may see it.
TOKENS="$TC $TB $TV"
ANON="$ZADDR $ZREPLY $ZNAME $ZFPR ${ZFPR: -16} $YADDR $YOTHER $YNAME $YFPR $YKEYID $YKEYSHA OpenPGP_0x yves.hidden"
EMB="EMBSUBJ-SECRET EMBBODY-SECRET EMBATT-SECRET EMBNAME-SECRET EMBADD-SECRET EMBADDSUBJ-SECRET EMBLATE-SECRET"

# absent SURFACE SECRETS...
absent() {
	local surface=$1 secret
	shift
	for secret in "$@"; do
		! grep -qiF -- "$secret" "$S/$surface" || fail "$surface shows the secret '$secret'"
	done
}

for s in $SURFACES; do
	name=${s%%:*} aud=${s#*:}
	case "$aud" in
	public)
		test_expect_success "$name: no token, no anonymous identity, no embargoed content" "
			absent $name \$TOKENS && absent $name $(printf '%q ' $ANON) && absent $name \$EMB
		" ;;
	vendor)
		# the vendor's own token only in the notice to it; never the
		# researcher's tokens, identity or sealed content (no vendor key)
		test_expect_success "$name: no researcher token, no anonymous identity, no embargoed content" "
			absent $name \$TC \$TB && absent $name $(printf '%q ' $ANON) && absent $name \$EMB
		" ;;
	reader)
		# a key the creator gave access: the sealed records, encrypted to
		# it; never a token or an anonymous identity
		test_expect_success "$name: the sealed records, no token, no anonymous identity" "
			absent $name \$TOKENS && absent $name $(printf '%q ' $ANON) &&
			for x in EMBBODY-SECRET EMBADD-SECRET EMBLATE-SECRET; do
				grep -qF -- \"\$x\" \"$S/$name\" || fail \"$name does not show \$x\"
			done
		" ;;
	operator)
		test_expect_success "$name: everything but tokens, which are never kept" "
			absent $name \$TOKENS &&
			for x in $ZADDR $ZFPR EMBSUBJ-SECRET EMBBODY-SECRET EMBADD-SECRET EMBNAME-SECRET EMBLATE-SECRET \
				$YADDR $YOTHER $YFPR $YKEYSHA OpenPGP_0x$YKEYID; do
				grep -qF -- \"\$x\" \"$S/$name\" || fail \"$name does not show \$x\"
			done
		" ;;
	esac
done

# What each surface must show, so that an empty or broken surface never
# passes the checks of absence above: SURFACE:WORD,WORD...
SHOWS="show:$A,$B,$C,$D show-json:$A,$B,$C,$D show-references:mirror.example.net/poc
list:$A,$B,$C,$D list-json:$A,$B,$C,$D lookup:$A,$B,$C,$D lookup-headline:$A,$B,$C,$D
subscription:$A announce:$A,$C,$D feed:$A,$B,$C,$D prove:$A,$B,$C,$D,c2sp.org/tlog-proof@v1
osv:$A,$C,$D mbox:$A,$C,$D html:$A,$B,$C,$D atom:$A,$C,$D verify-page:verify-feed,log.vkey
quarantine:$A,automatic,sealed: vendor-mail:$A,$B,$C,$D reader-mail:$B show-private:$A,$B,$C,$D"

for s in $SURFACES; do
	name=${s%%:*}
	words=$(printf "%s\n" $SHOWS | sed -n "s/^$name://p")
	test_expect_success "$name: shows what it must ($words)" "
		test -n \"$words\" || fail \"$name has no entry in SHOWS\"
		for w in ${words//,/ }; do
			grep -qF -- \"\$w\" \"$S/$name\" || fail \"$name does not show \$w\"
		done
	"
done

test_expect_success 'what must be shown is shown: the researcher gets her ack, the public the rest' '
	dump_mail "$(mails_to "$ZREPLY" | head -n 1)" | grep -q "$A" &&
	grep -q "an anonymous researcher\|(anonymous)" "$S/show" &&
	grep -q "signed by the researcher.s key (withheld)" "$S/show" &&
	grep -q "XSS in the admin panel" "$S/mbox" &&
	grep -q "\[token removed\]" "$S/show" &&
	for s in show mbox html lookup; do
		grep -q "a key (withheld)" "$S/$s" || fail "$s does not say the key is withheld"
	done &&
	grep -q "poc-\[the researcher\]\.py" "$S/show" &&
	grep -q "SSRF in the importer" "$S/feed" &&
	grep -q "$(sql "SELECT sha256 FROM records WHERE entry = '\''$B'\'' AND seq = 2")" "$S/feed"
'

test_expect_success 'every new kind of record shows where it must: contributor, approval, review, access' '
	grep -q "contributor, endorsed by the creator, signed by $NFPR" "$S/show" &&
	grep -q "approved by the creator in record" "$S/show" &&
	grep -q "^reviewed: *Widget Admin 1.9" "$S/show" &&
	grep -q "^access: *$RFPR given access" "$S/show" &&
	grep -q "sha256=$POCSHA" "$S/show" &&
	grep -q "mirror.example.net/poc" "$S/show-references" &&
	grep -q "\"type\" : \"ANALYST\"" "$S/osv" &&
	expect_eq 2 "$(sql "SELECT count(*) FROM records WHERE entry = '\''$B'\'' AND kind = '\''delivery'\''")"
'

# --- no surface outside the matrix ------------------------------------------------

# Mail templates and who reads them: public surfaces are collected above;
# the rest go to one person about their own mail or entry.
TEMPLATES="ack:creator announce:announce announce-digest:announce entry-reply:sender
error:sender help:sender key:sender notify-failed:creator rate-limited:sender answers-paused:sender
relay-to-vendor:vendor-mail subscription:subscription vendor-notify:vendor-mail
vendor-notify-embargoed:vendor-mail vendor-response:creator access-request:creator
access-delivery:reader-mail"
# Subcommands: those that show entries are surfaces; the others are not.
COMMANDS="show:show list:list export:feed/osv/mbox/html quarantine:quarantine prove:prove
init:- queue:- audit:- vendor:- tick:- key:- keys:- verify-feed:- backup:- restore:- witness:- config:-"

test_expect_success 'every mail template is in the matrix' '
	for f in "$VULNID_SRCDIR"/templates/*.txt; do
		t=$(basename "$f" .txt)
		echo " $TEMPLATES " | tr "\n" " " | grep -q " $t:" || fail "template $t is not in the disclosure matrix"
	done
'

test_expect_success 'every subcommand and export format is in the matrix' '
	"$VULNID" --help 2>&1 | sed -n "s/^  \([a-z-]*\) .*/\1/p" >"$TMP/cmds" &&
	test -s "$TMP/cmds" &&
	while read -r c; do
		echo " $COMMANDS " | tr "\n" " " | grep -q " $c:" || fail "subcommand $c is not in the disclosure matrix"
	done <"$TMP/cmds" &&
	"$VULNID" --help 2>&1 | sed -n "s/.*vulnid export \(.*\)/\1/p" | tr "|" "\n" | awk "{print \$1}" >"$TMP/formats" &&
	test -s "$TMP/formats" &&
	while read -r f; do
		echo " $SURFACES " | tr "\n" " " | grep -q " $f:" || fail "export $f is not in the disclosure matrix"
	done <"$TMP/formats"
'

test_done
