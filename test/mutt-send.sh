#!/bin/bash
# mutt-send.sh - have a real mail client (Debian's mutt, with GPGME) sign,
# or sign and encrypt, a draft, and capture what it would send.
#
#   mutt-send.sh GNUPGHOME SIGNER_FPR DRAFT OUTPUT [sign|encrypt]
#
# DRAFT is a message (From, To, Subject, body) for mutt -H.  mutt's batch
# mode cannot sign, so mutt runs in a detached tmux session on a private
# tmux server: the To and Subject prompts are confirmed and the compose
# menu's "y" sends.  The "sendmail" is a script that writes the message to
# OUTPUT.  For "encrypt", the recipient's key must be in GNUPGHOME with
# ultimate ownertrust.  Exits 0 when OUTPUT was written, 1 otherwise (with
# the last screen on stderr).  The tmux server is always killed.
set -u

home=$1 fpr=$2 draft=$3 out=$4 mode=${5:-sign}
work=$(mktemp -d "${out}.mutt.XXXXXX")
sock="vulnid-mutt-$$-$RANDOM"
session=send

cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	# kill-server leaves the socket file behind
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
	rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/capture.sh" <<EOF
#!/bin/sh
# mutt's sendmail: keep the message; arguments are the recipients
cat >"$out.tmp" && mv "$out.tmp" "$out"
EOF
chmod +x "$work/capture.sh"

from=$(sed -n 's/^From: *//p' "$draft" | head -n 1)
from_addr=$(printf '%s\n' "$from" | sed 's/.*<\(.*\)>.*/\1/')
{
	echo "set from=\"$from_addr\""
	echo "set sendmail=\"$work/capture.sh\""
	echo "set crypt_use_gpgme=yes"
	echo "set pgp_sign_as=$fpr"
	echo "set pgp_default_key=$fpr"
	echo "set crypt_autosign=yes"
	if [ "$mode" = encrypt ]; then
		echo "set crypt_autoencrypt=yes"
		echo "set crypt_opportunistic_encrypt=no"
	fi
	echo "set editor=\"/bin/true\""
	echo "set abort_unmodified=no"
	echo "set folder=\"$work\""
	echo "set record=\"\""
	echo "set spoolfile=/dev/null"
	echo "set postpone=no"
	echo "set use_from=yes"
	echo "set user_agent=yes"
	echo "set hostname=mutt.example.net"
	echo "set fast_reply=no"
	echo "set pgp_auto_decode=no"
	echo "set crypt_replysign=no"
	echo "set pgp_check_gpg_decrypt_status_fd=yes"
} >"$work/muttrc"

rm -f "$out"
tmux -L "$sock" -f /dev/null new-session -d -s "$session" -x 100 -y 30 \
	"env GNUPGHOME='$home' TERM=xterm HOME='$work' LANG=C.UTF-8 mutt -n -F '$work/muttrc' -H '$draft'; sleep 3"

screen() { tmux -L "$sock" capture-pane -p -t "$session" 2>/dev/null; }

# wait_for PATTERN: until the screen shows it (at most 10 s)
wait_for() {
	for _ in $(seq 100); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

step() {
	wait_for "$1" || { echo "mutt-send: no '$1' on the screen:" >&2; screen >&2; exit 1; }
	tmux -L "$sock" send-keys -t "$session" "$2"
}

step '^To: ' Enter
step '^Subject: ' Enter
step 'y:Send' y
for _ in $(seq 150); do
	[ -s "$out" ] && exit 0
	sleep 0.1
done
echo "mutt-send: mutt sent nothing; its screen:" >&2
screen >&2
exit 1
