#!/usr/bin/env bash
# Runs a command inside a private desktop session, for the tests that need
# one: a D-Bus session bus (dbus-run-session), an X display (Xvfb), a
# notification server (dunst, read back with `dunstctl history`) and an
# unlocked Secret Service (gnome-keyring, whose login keyring is created and
# unlocked non-interactively with a throwaway password). Nothing of the
# user's own session is used: the keyring lives in a temporary directory
# removed on exit.
#
#   .ci/with-desktop-session.sh COMMAND [ARG...]
#
# Inside, GATEHOUSE_DESKTOP_SESSION=1 is set; COMMAND's exit status is the
# script's.
set -euo pipefail

if [ "${GATEHOUSE_DESKTOP_SESSION:-}" != 1 ]; then
	for tool in dbus-run-session Xvfb dunst dunstctl gnome-keyring-daemon; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "with-desktop-session: $tool missing; run .ci/test-deps.sh (Debian: apt-get install dbus dbus-daemon xvfb dunst gnome-keyring libsecret-tools)" >&2
			exit 1
		}
	done
	exec env GATEHOUSE_DESKTOP_SESSION=1 dbus-run-session -- "$0" "$@" 2> >(grep --line-buffered -v 'Failed to set fd limit' >&2)
fi

work=$(mktemp -d /tmp/gatehouse-desktop.XXXXXX)
chmod 0700 "$work"
mkdir -m 0700 "$work/run" "$work/data" "$work/config"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# X display: Xvfb picks a free display number and writes it to fd 3.
Xvfb -displayfd 3 -nolisten tcp -screen 0 1024x768x24 3>"$work/display" >"$work/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.05; done
[ -s "$work/display" ] || { echo "with-desktop-session: Xvfb did not start:" >&2; cat "$work/xvfb.log" >&2; exit 1; }
export DISPLAY=":$(cat "$work/display")"
dbus-update-activation-environment DISPLAY >/dev/null 2>&1 || true

# Notification server. Identical notifications are not stacked, history
# keeps everything, and nothing expires on its own (the tests close them
# with `dunstctl close-all` before reading the history).
cat >"$work/dunstrc" <<'RC'
[global]
    history_length = 0
    notification_limit = 0
    stack_duplicates = false
    idle_threshold = 0
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
RC
dunst -config "$work/dunstrc" >"$work/dunst.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true' && break
	sleep 0.05
done
dunstctl debug >/dev/null || { echo "with-desktop-session: dunst did not start:" >&2; cat "$work/dunst.log" >&2; exit 1; }

# Secret Service: create and unlock a login keyring with a throwaway
# password read from stdin. The daemon forks and ends with the bus.
printf 'gatehouse-test' | XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/data" \
	XDG_CONFIG_HOME="$work/config" gnome-keyring-daemon --unlock --components=secrets >/dev/null
has_owner() {
	dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q 'boolean true'
}
# Wait for it on the bus, lest a first client activate a second daemon.
for _ in $(seq 100); do has_owner org.freedesktop.secrets && break; sleep 0.05; done
command -v secret-tool >/dev/null 2>&1 && {
	printf 'probe' | secret-tool store --label='gatehouse session probe' service gatehouse-session-probe user probe
	[ "$(secret-tool lookup service gatehouse-session-probe user probe)" = probe ] || {
		echo "with-desktop-session: the Secret Service does not answer" >&2
		exit 1
	}
}

"$@"
