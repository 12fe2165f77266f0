# T52-lib.sh - helpers of the tests of endorsed contributors, approval,
# access to sealed records, proof of work, references and review (T52x,
# T54x, T56x, T83x; sourced after test-lib.sh)

PGPMAIL="$PYTHON $CORPORA/openpgp/pgpmail.py"
vulnid() { "$VULNID" -c "$CONF" "$@"; }
newest_id() { sql "SELECT id FROM entries ORDER BY number DESC LIMIT 1"; }
last_record() { sql "SELECT $2 FROM records WHERE entry = '$1' ORDER BY seq DESC LIMIT 1"; }
records_of() { sql "SELECT count(*) FROM records WHERE entry = '$1'"; }

# new_key NAME "UID": a keyring $TMP/gnupg-NAME with an ed25519 key that
# signs and a cv25519 subkey that encrypts, exported to $TMP/NAME.asc;
# prints the fingerprint
new_key() {
	local h="$TMP/gnupg-$1" fpr
	mkdir -m 700 "$h"
	G "$h" --quick-gen-key "$2" ed25519 sign never 2>/dev/null || return 1
	fpr=$(gpg --homedir "$h" --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ { print $10; exit }')
	G "$h" --quick-add-key "$fpr" cv25519 encr never 2>/dev/null || return 1
	G "$h" --armor --export "$fpr" >"$TMP/$1.asc" 2>/dev/null
	echo "$fpr"
}

# signed NAME FPR TO TEXT [HEADER...]: deliver TEXT clearsigned by key NAME
# to address TO (request@ or request+ID@); the mail is $SIGNED_MAIL
signed() {
	local name=$1 fpr=$2 to=$3 text=$4 n
	shift 4
	n=$(date +%s%N).$RANDOM
	SIGNED_MAIL="$TMP/s$n.eml"
	clearsigned_mail "$SIGNED_MAIL" "$name" "$fpr" "$text" "Message-ID: <s$n@example.net>" "To: $to" "$@" &&
	deliver_ok "$SIGNED_MAIL" -r "$to"
}

# plain FROM TO TEXT [HEADER...]: deliver an unsigned mail
plain() {
	local from=$1 to=$2 text=$3 n
	shift 3
	n=$(date +%s%N).$RANDOM
	printf '%s\n' "$text" | write_mail "$TMP/p$n.eml" "Message-ID: <p$n@example.net>" \
		"From: $from" "To: $to" "$@" &&
	deliver_ok "$TMP/p$n.eml" -r "$to"
}

# reply_to ADDR: the text of the newest mail the robot sent to ADDR
reply_to() { mail_body "$(sent_to "$1")"; }

# token_of ID: the creator token of ID from its acknowledgement
token_of() {
	local f t
	for f in $(sent_files | tac); do
		t=$(mail_body "$f" 2>/dev/null | sed -n "/^  $1\$/,/^\$/s/^ *token: *\(vulnid_[a-z2-7]*\)\$/\1/p" | head -n 1)
		[ -n "$t" ] && { echo "$t"; return 0; }
	done
	return 1
}

# headline ID EXPR: a Python expression on vulnid show ID --json (j)
headline() { vulnid show "$1" --json | json_get "$2"; }

# decrypted_text MAIL NAME: the text of an encrypted mail of the robot, as
# the holder of key NAME reads it (the robot's signature inside is not
# checked here: NAME's keyring does not hold the robot's key)
decrypted_text() {
	$PYTHON - "$1" "$TMP/gnupg-$2" <<'PY'
import sys, email, email.policy, subprocess
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
if m.get_content_type() != "multipart/encrypted":
    sys.exit("not encrypted: " + m.get_content_type())
data = m.get_payload()[1].get_payload(decode=True)
p = subprocess.run(["gpg", "--homedir", sys.argv[2], "--batch", "--no-tty", "--status-fd", "2", "--decrypt"],
                   input=data, capture_output=True)
if b"[GNUPG:] DECRYPTION_OKAY" not in p.stderr:
    sys.exit("cannot decrypt: " + p.stderr.decode(errors="replace"))
inner = email.message_from_bytes(p.stdout, policy=email.policy.default)
for part in inner.walk():
    if part.get_content_type() == "text/plain" and not part.is_multipart():
        print(part.get_content())
PY
}

# mails_to ADDR: every mail the robot sent to ADDR, oldest first
mails_to() {
	local f
	for f in $(sent_files); do
		mail_header "$f" To | grep -qi -- "$1" && echo "$f"
	done
	return 0
}
