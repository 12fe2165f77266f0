#!/bin/bash
# mutt-reply.sh - have a real mail client (Debian's mutt) reply to a mail
# as its users do: it quotes the mail under its attribution line, the
# "editor" adds the user's text above the quote or below it, and what mutt
# would send is captured.
#
#   mutt-reply.sh MAIL TEXTFILE OUTPUT [top|bottom] [ADDRESS] [NAME]
#
# MAIL is the mail to answer (it becomes a one-message mbox).  mutt runs in
# a detached tmux session on a private tmux server (mutt's batch mode
# cannot reply); "r" replies, the Reply-To, To and Subject prompts are
# confirmed, and the compose menu's "y" sends through a "sendmail" that
# writes OUTPUT.  Exits 0 when OUTPUT was written, 1 otherwise (with the
# last screen on stderr).  The tmux server is always killed.
set -u

mail=$1 text=$2 out=$3 where=${4:-bottom} from=${5:-alice@example.net} name=${6:-Alice Researcher}
work=$(mktemp -d "${out}.mutt.XXXXXX")
sock="vulnid-mutt-$$-$RANDOM"
session=reply

cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
	rm -rf "$work"
}
trap cleanup EXIT

{ echo "From vulnid@example.org Mon Jan  5 10:00:00 2026"; sed 's/\r$//; s/^From />From /'; echo; } <"$mail" >"$work/mbox"
cat >"$work/capture.sh" <<EOS
#!/bin/sh
cat >"$out.tmp" && mv "$out.tmp" "$out"
EOS
# the user's editing: their text above the quote, or under it
cat >"$work/edit.sh" <<EOS
#!/bin/sh
if [ "$where" = top ]; then
	{ cat "$text"; echo; cat "\$1"; } >"\$1.new"
else
	{ cat "\$1"; echo; cat "$text"; } >"\$1.new"
fi
mv "\$1.new" "\$1"
EOS
chmod +x "$work/capture.sh" "$work/edit.sh"
cat >"$work/muttrc" <<EOS
set from="$from"
set realname="$name"
set use_from=yes
set sendmail="$work/capture.sh"
set editor="$work/edit.sh"
set edit_headers=no
set record=""
set folder="$work"
set spoolfile="$work/mbox"
set mbox_type=mbox
set postpone=no
set hostname=mutt.example.net
set include=yes
set reply_to=yes
set fast_reply=yes
set charset=utf-8
set send_charset="us-ascii:utf-8"
set crypt_autosign=no
set crypt_replysign=no
set pgp_auto_decode=no
set move=no
set mark_old=no
set confirmappend=no
EOS

rm -f "$out"
tmux -L "$sock" -f /dev/null new-session -d -s "$session" -x 120 -y 30 \
	"env HOME='$work' TERM=xterm LANG=C.UTF-8 mutt -n -F '$work/muttrc' -f '$work/mbox'; sleep 3"

screen() { tmux -L "$sock" capture-pane -p -t "$session" 2>/dev/null; }

# wait_for PATTERN: until the screen shows it (at most 10 s)
wait_for() {
	for _ in $(seq 100); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

wait_for 'q:Quit' || { echo "mutt-reply: no index:" >&2; screen >&2; exit 1; }
tmux -L "$sock" send-keys -t "$session" r
wait_for 'y:Send' || { echo "mutt-reply: no compose menu:" >&2; screen >&2; exit 1; }
tmux -L "$sock" send-keys -t "$session" y
for _ in $(seq 150); do
	[ -s "$out" ] && exit 0
	sleep 0.1
done
echo "mutt-reply: mutt sent nothing; its screen:" >&2
screen >&2
exit 1
