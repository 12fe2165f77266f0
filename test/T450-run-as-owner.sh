#!/bin/bash
# T450-run-as-owner: vulnid and vulnid-filter run as the owner of the
# instance.  Started as root on an instance that belongs to another user,
# they switch to that user before they touch anything, so that no file and
# no gpg-agent of the instance is ever root's; started as a third user they
# refuse, saying whose instance it is.
. "$(dirname "$0")/test-lib.sh"

OWNER=nobody
if [ "$(id -u)" != 0 ]; then
	test_skip "commands run as the instance's owner" "needs root, to start them as root and as another user"
	test_done
fi
if ! id "$OWNER" >/dev/null 2>&1; then
	test_skip "commands run as the instance's owner" "the user $OWNER must exist"
	test_done
fi
OWNER_UID=$(id -u "$OWNER")
STRANGER=54321	# a uid without a passwd entry

agent_stop() {
	[ -d "${INST:-/nonexistent}/gnupg" ] && as_owner gpgconf --homedir "$INST/gnupg" --kill all 2>/dev/null
	return 0
}
trap 'agent_stop; test_cleanup' EXIT

chmod 755 "$TMP"
INST="$TMP/inst"
CONF="$INST/vulnid.conf"
install -d -o "$OWNER" -m 0700 "$INST"
[ -x "$SMTP_SINK" ] && start_sink sink

# the database read as its owner: sqlite3 run as root would make root's
# -wal and -shm files
as_owner() { setpriv --reuid="$OWNER_UID" --regid="$(id -g "$OWNER")" --clear-groups -- "$@"; }
sql() { as_owner sqlite3 -batch -noheader -cmd ".timeout 5000" "$INST/vulnid.db" "$@"; }
# not_owned: every file in the instance that is not the owner's
not_owned() { find "$INST" ! -user "$OWNER" -printf '%u %p\n'; }
# the instance's gpg-agents, with their users
agents() { ps -eo user:20,args | grep "[g]pg-agent.*--homedir $INST/gnupg" | awk '{print $1}' | sort -u; }

test_expect_success 'init as root in a directory of the robot'\''s user: everything is that user'\''s' '
	"$VULNID" init --prefix TEST --domain example.org "$INST" >"$TMP/init.out" &&
	expect_match "^created instance in $INST$" "$TMP/init.out" &&
	expect_eq "" "$(not_owned)" &&
	cp "$VULNID_TEMPLATE_DIR"/*.txt "$INST/templates/" && chown "$OWNER" "$INST"/templates/*.txt
'

test_expect_success 'the filter started as root records the mail as the owner' '
	write_mail "$TMP/r1.eml" "Message-ID: <own1@example.net>" <<<"Product: Root" &&
	deliver_ok "$TMP/r1.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM entries")" &&
	test "$(sent_count)" -ge 1 &&
	expect_eq "" "$(not_owned)" &&
	expect_eq "$OWNER" "$(agents)" "the users of the instance'\''s gpg-agents"
'

test_expect_success 'queue run, tick, audit, vendor, keys and export as root: nothing becomes root'\''s' '
	if [ -n "${SINK_PORT:-}" ]; then
		set_conf delivery transport "smtp://127.0.0.1:$SINK_PORT" && set_conf delivery starttls no
	fi &&
	write_mail "$TMP/r2.eml" "Message-ID: <own2@example.net>" <<<"Vendor-Contact: psirt@vendor.example" &&
	set_conf delivery filter_budget 0 &&
	deliver_ok "$TMP/r2.eml" &&
	"$VULNID" -c "$CONF" queue run >"$TMP/run.out" &&
	expect_match "^delivered [1-9]" "$TMP/run.out" &&
	"$VULNID" -c "$CONF" tick >/dev/null &&
	"$VULNID" -c "$CONF" audit verify >/dev/null &&
	"$VULNID" -c "$CONF" vendor add "Vendor Co" --domain vendor.example >/dev/null &&
	new_signing_key k "Key <k@example.net>" >/dev/null && chmod 644 "$TMP/k.asc" &&
	"$VULNID" -c "$CONF" keys import "$TMP/k.asc" >/dev/null &&
	install -d -o "$OWNER" "$TMP/feed" &&
	"$VULNID" -c "$CONF" export feed "$TMP/feed" >/dev/null &&
	expect_eq "" "$(not_owned)" &&
	expect_eq "" "$(find "$TMP/feed" ! -user "$OWNER")" &&
	expect_eq "$OWNER" "$(agents)"
'

test_expect_success 'what root may not give away is refused, not made root'\''s: an output where the owner cannot write' '
	install -d -m 0700 "$TMP/rootonly" &&
	! "$VULNID" -c "$CONF" export feed "$TMP/rootonly/feed" 2>"$TMP/err" &&
	expect_eq "" "$(find "$TMP/rootonly" -mindepth 1)" &&
	expect_eq "" "$(not_owned)"
'

test_expect_success 'another user is refused, with whose instance it is; the filter keeps the mail (75)' '
	rc=0; setpriv --reuid=$STRANGER --regid=$STRANGER --clear-groups -- "$VULNID" -c "$CONF" queue list \
		>/dev/null 2>"$TMP/err" || rc=$?
	expect_eq 78 "$rc" &&
	expect_eq "vulnid: the instance '\''$INST'\'' belongs to $OWNER (uid $OWNER_UID), not to uid $STRANGER: run this as $OWNER (uid $OWNER_UID) (or as root, which switches to it)" "$(cat "$TMP/err")" &&
	write_mail "$TMP/r3.eml" "Message-ID: <own3@example.net>" <<<"Product: Stranger" &&
	rc=0; setpriv --reuid=$STRANGER --regid=$STRANGER --clear-groups -- "$FILTER" -c "$CONF" <"$TMP/r3.eml" 2>"$TMP/err" || rc=$?
	expect_eq 75 "$rc" &&
	expect_match "^vulnid-filter: the instance .* belongs to $OWNER" "$TMP/err" &&
	expect_eq 0 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''own3@example.net'\''")"
'

test_expect_success 'the owner itself runs them as before' '
	as_owner "$VULNID" -c "$CONF" queue list >/dev/null &&
	as_owner "$FILTER" -c "$CONF" <"$TMP/r3.eml" &&
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''own3@example.net'\''")" &&
	expect_eq "" "$(not_owned)"
'

test_done
