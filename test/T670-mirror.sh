#!/bin/bash
# T670-mirror: contrib/vulnid-mirror publishes feeds into git; two robots
# with disjoint blocks share one repository, and a mirror verifies both
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T6-lib.sh"

if ! command -v git >/dev/null; then
	test_skip 'vulnid-mirror publishes into git' 'git is not installed'
	test_done
fi
export VULNID
export GIT_CONFIG_NOSYSTEM=1 HOME="$TMP"
MIRROR="$VULNID_SRCDIR/contrib/vulnid-mirror"
Y=$(date -u +%Y)

export_instance robot-a && set_conf ids blocks 1-999 && A="$INST" && robot_key "$TMP/a.asc"
export_instance robot-b && set_conf ids blocks 1000-1999 && B="$INST" && robot_key "$TMP/b.asc"
git init -q --bare --initial-branch=main "$TMP/repo.git"

send() {	# send INSTANCE N...
	local inst=$1 i
	shift
	for i in "$@"; do
		write_mail "$TMP/$i.eml" "Subject: request $i" <<<"Vendor: V$i" &&
		"$FILTER" -c "$inst/vulnid.conf" -f x@example.net -r request@example.org <"$TMP/$i.eml" ||
			return 1
	done
}
mirror() {	# mirror INSTANCE NAME [options]
	local inst=$1 name=$2
	shift 2
	"$MIRROR" -c "$inst/vulnid.conf" --repo "$TMP/repo.git" --name "$name" "$@"
}
verify_clone() {
	"$VULNID" verify-feed "$TMP/clone/robot-a" --key "$TMP/a.asc" "$@" >"$TMP/va" &&
	"$VULNID" verify-feed "$TMP/clone/robot-b" --key "$TMP/b.asc" "$@" >"$TMP/vb"
}

send "$A" a1 a2
send "$B" b1 b2

test_expect_success 'two robots publish into one repository, each into its own directory' '
	mirror "$A" robot-a >"$TMP/out" && expect_match "robot-a: feed robot-a: 2 new lines" "$TMP/out" &&
	mirror "$B" robot-b >/dev/null &&
	git clone -q "$TMP/repo.git" "$TMP/clone" &&
	ls "$TMP/clone" >"$TMP/ls" && expect_eq "robot-a robot-b" "$(echo $(cat "$TMP/ls"))" &&
	grep -q "\"entry\":\"TEST-$Y-0001\"" "$TMP/clone/robot-a/$Y.jsonl" &&
	grep -q "\"entry\":\"TEST-$Y-1000\"" "$TMP/clone/robot-b/$Y.jsonl"
'

test_expect_success 'a mirror verifies each robot with its own key' '
	verify_clone &&
	expect_match "2 lines in 1 years, 2 entries" "$TMP/va" &&
	expect_match "2 lines in 1 years, 2 entries" "$TMP/vb" &&
	rc=0; "$VULNID" verify-feed "$TMP/clone/robot-a" --key "$TMP/b.asc" 2>/dev/null || rc=$?
	expect_eq 65 "$rc"
'

test_expect_success 'commits are signed with the robots keys' '
	mkdir -m 700 "$TMP/verifier-gpg" &&
	gpg --homedir "$TMP/verifier-gpg" --batch --import "$TMP/a.asc" "$TMP/b.asc" 2>/dev/null &&
	GNUPGHOME="$TMP/verifier-gpg" git -C "$TMP/clone" log --format="%G? %GF %s" >"$TMP/log" &&
	expect_eq 2 "$(grep -c "^[GU] [0-9A-F]\\{40\\} feed robot-" "$TMP/log")"
'
GNUPG_HOMES="$GNUPG_HOMES $TMP/verifier-gpg"

cp "$TMP/clone/robot-a/HEAD.json" "$TMP/a-head.json"
send "$A" a3 a4
send "$B" b3

test_expect_success 'both robots pushing at once: one rebases and pushes again; nothing collides' '
	(mirror "$A" robot-a >"$TMP/ma" 2>&1; echo $? >"$TMP/ma.rc") &
	pa=$!
	(mirror "$B" robot-b >"$TMP/mb" 2>&1; echo $? >"$TMP/mb.rc") &
	pb=$!
	wait $pa $pb
	cat "$TMP/ma" "$TMP/mb" &&
	expect_eq 0 "$(cat "$TMP/ma.rc")" && expect_eq 0 "$(cat "$TMP/mb.rc")" &&
	git -C "$TMP/clone" pull -q &&
	verify_clone &&
	expect_match "4 lines in 1 years" "$TMP/va" && expect_match "3 lines in 1 years" "$TMP/vb" &&
	"$VULNID" verify-feed "$TMP/clone/robot-a" --key "$TMP/a.asc" --previous "$TMP/a-head.json" >/dev/null &&
	expect_eq 4 "$(git -C "$TMP/clone" rev-list --count HEAD)" &&
	GNUPGHOME="$TMP/verifier-gpg" git -C "$TMP/clone" log --format="%G?" >"$TMP/sigs" &&
	expect_eq 0 "$(grep -vc "^[GU]$" "$TMP/sigs")"
'

test_expect_success 'nothing new: no commit' '
	mirror "$A" robot-a >"$TMP/out" && expect_match "nothing new" "$TMP/out" &&
	expect_eq 4 "$(git -C "$TMP/repo.git" rev-list --count main)"
'

test_expect_success 'unsigned when asked, and names that are not one path component are refused' '
	send "$B" b4 &&
	mirror "$B" robot-b --no-sign >/dev/null &&
	expect_eq N "$(git -C "$TMP/repo.git" log -1 --format=%G? main)" &&
	rc=0; mirror "$A" "../escape" 2>/dev/null || rc=$?
	expect_eq 64 "$rc"
'

test_expect_success 'the log is published, and two robots witness each other (--witness-log)' '
	git -C "$TMP/clone" pull -q &&
	test -f "$TMP/clone/robot-a/log/checkpoint" && test -d "$TMP/clone/robot-a/log/tile/0" &&
	test -f "$TMP/clone/robot-b/log/log.vkey" &&
	cp "$TMP/clone/robot-a/log/log.vkey" "$TMP/a.vkey" && cp "$TMP/clone/robot-b/log/log.vkey" "$TMP/b.vkey" &&
	"$VULNID" -c "$A/vulnid.conf" witness init example.org/witness-a >"$TMP/wa.vkey" &&
	"$VULNID" -c "$B/vulnid.conf" witness init example.org/witness-b >"$TMP/wb.vkey" &&
	send "$A" a5 &&
	mirror "$A" robot-a --witness-log "robot-b=$TMP/b.vkey" >/dev/null &&
	mirror "$B" robot-b --witness-log "robot-a=$TMP/a.vkey" >/dev/null &&
	mirror "$A" robot-a --witness-log "robot-b=$TMP/b.vkey" >/dev/null &&
	git -C "$TMP/clone" pull -q &&
	"$VULNID" verify-feed "$TMP/clone/robot-a" --key "$TMP/a.asc" --witness-key "$TMP/wb.vkey" \
		--cosigned "$TMP/clone/robot-b/witness" >"$TMP/out" &&
	expect_match "1 cosignatures" "$TMP/out" &&
	"$VULNID" verify-feed "$TMP/clone/robot-b" --key "$TMP/b.asc" --witness-key "$TMP/wa.vkey" \
		--cosigned "$TMP/clone/robot-a/witness" >"$TMP/out" &&
	expect_match "1 cosignatures" "$TMP/out" &&
	mirror "$B" robot-b --witness-log "robot-a=$TMP/a.vkey" >"$TMP/out" &&
	expect_match "nothing new" "$TMP/out"
'

test_expect_success 'a checkpoint the witness cannot check is refused: exit 65, its own feed still published' '
	send "$B" b6 &&
	rc=0; mirror "$B" robot-b --witness-log "robot-a=$TMP/b.vkey" >/dev/null 2>"$TMP/err" || rc=$? &&
	expect_eq 65 "$rc" && expect_match "REFUSED to cosign the log in .robot-a." "$TMP/err" &&
	git -C "$TMP/clone" pull -q &&
	"$VULNID" verify-feed "$TMP/clone/robot-b" --key "$TMP/b.asc" >"$TMP/out" &&
	expect_match "Vendor: V6|b6|request b6" "$TMP/clone/robot-b/'"$Y"'.jsonl"
'

test_done
