# /etc/cron.d/vulnid - the time-based work of the instance in /var/lib/vulnid
#
# vulnid tick every five minutes: embargo releases, the daily digest, the
# retries of outgoing mail (vulnid(8)).  It runs only once the instance
# exists ("vulnid init", README.Debian) and while the systemd timer is
# not enabled (systemctl enable --now vulnid-tick.timer replaces it).
# What tick prints on standard error (mail that stays deferred) is mailed
# to MAILTO: root, whom /etc/aliases forwards to the administrator (check
# that it names someone), or an address outside the robot's domain.
MAILTO=root
*/5 * * * * vulnid [ -r /var/lib/vulnid/vulnid.conf ] && [ ! -e /etc/systemd/system/timers.target.wants/vulnid-tick.timer ] && /usr/sbin/vulnid -c /var/lib/vulnid/vulnid.conf tick >/dev/null
