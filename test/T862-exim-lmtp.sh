#!/bin/bash
# T862-exim-lmtp: Exim 4's lmtp transport (filters/README) delivers to
# vulnid-lmtpd over its unix socket.  Exim cannot be installed beside
# Postfix as a Debian package, so the test unpacks exim4-daemon-light with
# apt-get download and dpkg-deb -x and runs it on a loopback port: as root
# with its setuid bit dropped, its system user Debian-exim supplied by
# nss_wrapper.  Skips when apt cannot fetch it.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/T85-lib.sh"
SWAKS=$(command -v swaks 2>/dev/null || true)

if [ "$(id -u)" != 0 ] || [ -z "$SWAKS" ]; then
	test_skip "Exim lmtp transport" "needs root and swaks"
	test_done
fi
if ! unpack_mta exim4-base exim4-daemon-light || [ ! -x "$MTA_ROOT/usr/sbin/exim4" ]; then
	test_skip "Exim lmtp transport" "apt-get download exim4-daemon-light failed"
	test_done
fi
if ! nss_wrap Debian-exim; then
	test_skip "Exim lmtp transport" "nss_wrapper is not installed (Debian package libnss-wrapper)"
	test_done
fi
EXIM="$TMP/exim4"
cp "$MTA_ROOT/usr/sbin/exim4" "$EXIM"
chmod 755 "$EXIM"	# not setuid: it stays root, and nss_wrapper stays loaded
chmod 755 "$TMP"

make_instance inst
set_conf crypto sign none
set_conf lmtpd socket_mode 0666
chmod 711 "$INST"
start_lmtpd || exit 1
EPORT=$(free_port)
mkdir -p "$TMP/exim/spool" "$TMP/exim/log"
chmod 777 "$TMP/exim" "$TMP/exim/spool" "$TMP/exim/log"
# The router and transport as filters/README gives them.
cat >"$TMP/exim/exim.conf" <<EOF
exim_path = $EXIM
keep_environment = LD_PRELOAD : NSS_WRAPPER_PASSWD : NSS_WRAPPER_GROUP
exim_user = nobody
exim_group = nogroup
spool_directory = $TMP/exim/spool
log_file_path = $TMP/exim/log/%slog
primary_hostname = mx.example.net
domainlist relay_to_domains = example.org
daemon_smtp_ports = $EPORT
local_interfaces = 127.0.0.1
tls_advertise_hosts =
acl_smtp_rcpt = acl_check_rcpt
trusted_users = root
begin acl
acl_check_rcpt:
  accept domains = +relay_to_domains
  deny
begin routers
vulnid:
  driver = accept
  domains = +relay_to_domains
  local_parts = request : request-bounces
  local_part_suffix = +*
  local_part_suffix_optional
  transport = vulnid_lmtp
begin transports
vulnid_lmtp:
  driver = lmtp
  socket = $INST/lmtp.sock
  batch_max = 50
begin retry
* * F,1h,2s
EOF
LD_PRELOAD=$NSS_PRELOAD NSS_WRAPPER_PASSWD="$TMP/nss.passwd" NSS_WRAPPER_GROUP="$TMP/nss.group" \
	"$EXIM" -C "$TMP/exim/exim.conf" -bdf -q1s -oX "$EPORT" >"$TMP/exim.out" 2>&1 &
bg_track $!
lmtpd_track $!
for _ in $(seq 100); do ss -ltnH "sport = :$EPORT" | grep -q . && break; sleep 0.1; done

exim_delivered() { grep -q "$1.*=> request.*T=vulnid_lmtp" "$TMP/exim/log/mainlog" 2>/dev/null; }

test_expect_success 'Exim delivers to vulnid-lmtpd with its lmtp transport; two recipients of one mail are answered each' '
	request_mail "$TMP/e1.eml" e1
	"$SWAKS" --server 127.0.0.1 --port "$EPORT" --from e1@example.net --to request@example.org,request+x@example.org \
		--data "@$TMP/e1.eml" >"$TMP/swaks.out" 2>&1 || fail "swaks: $(cat "$TMP/swaks.out")"
	id=$(sed -n "s/.*250 OK id=\([^ ]*\).*/\1/p" "$TMP/swaks.out")
	wait_until exim_delivered "$id" || fail "not delivered: $(tail -n 5 "$TMP/exim/log/mainlog")"
	expect_eq "e1@example.net|request@example.org|request" \
		"$(sql "SELECT envelope_from || '\''|'\'' || envelope_to || '\''|'\'' || disposition FROM messages WHERE message_id = '\''e1@example.net'\''")"
	expect_eq 2 "$(grep -cE "$id [-=]> request.*T=vulnid_lmtp" "$TMP/exim/log/mainlog")"
	expect_eq 1 "$(sql "SELECT count(*) FROM audit WHERE line LIKE '\''%\"event\":\"duplicate\"%'\''")"
'

test_expect_success 'while vulnid-lmtpd is down Exim defers, and delivers once it is back' '
	stop_lmtpd
	request_mail "$TMP/e2.eml" e2
	"$SWAKS" --server 127.0.0.1 --port "$EPORT" --from e2@example.net --to request@example.org \
		--data "@$TMP/e2.eml" >"$TMP/swaks.out" 2>&1 || fail "swaks: $(cat "$TMP/swaks.out")"
	id=$(sed -n "s/.*250 OK id=\([^ ]*\).*/\1/p" "$TMP/swaks.out")
	wait_until grep -q "$id == request@example.org .*defer" "$TMP/exim/log/mainlog" ||
		fail "no deferral: $(tail -n 5 "$TMP/exim/log/mainlog")"
	"$LMTPD" -c "$CONF" >/dev/null 2>>"$TMP/lmtpd.err" &
	pid=$!
	lmtpd_track "$pid"
	wait_until exim_delivered "$id" || fail "not delivered: $(tail -n 5 "$TMP/exim/log/mainlog")"
	expect_eq 1 "$(sql "SELECT count(*) FROM messages WHERE message_id = '\''e2@example.net'\''")"
	kill "$pid"
	wait "$pid"
'

test_done
