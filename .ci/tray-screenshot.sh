#!/usr/bin/env bash
# Makes docs/tray.png: the tray's menu, open, under a real status-notifier
# host (xfce4-panel's systray plugin) on a throwaway Xvfb display and D-Bus
# session, against the tray test's fake service with an approval waiting
# (TestServeForScreenshot in app/tray). A one-off for the docs, not run by
# make test. It needs xfce4-panel, xdotool and ImageMagick:
#
#   apt-get install -y xfce4-panel xdotool imagemagick
#   .ci/tray-screenshot.sh [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/tray.png}

if [ "${TRAY_SHOT_SESSION:-}" != 1 ]; then
	for tool in dbus-run-session Xvfb xfce4-panel xfconf-query xdotool import; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "tray-screenshot: $tool missing; apt-get install -y xfce4-panel xdotool imagemagick xvfb dbus-daemon" >&2
			exit 1
		}
	done
	exec env TRAY_SHOT_SESSION=1 dbus-run-session -- "$0" "$@"
fi

work=$(mktemp -d /tmp/gatehouse-tray-shot.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/gatehouse" ./app/gatehouse
go build -o "$work/gatehouse-core" ./app/gatehouse-core
go test -c -o "$work/tray.test" ./app/tray

Xvfb -displayfd 3 -nolisten tcp -screen 0 1100x420x24 3>"$work/display" >"$work/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.05; done
export DISPLAY=":$(cat "$work/display")"

# One panel along the top holding only the systray plugin (which hosts
# status-notifier items and serves org.kde.StatusNotifierWatcher).
export XDG_CONFIG_HOME="$work/config"
q() { xfconf-query -c xfce4-panel "$@"; }
q -p /panels -n -a -t int -s 1
q -p /panels/panel-1/position -n -t string -s "p=6;x=0;y=0"
q -p /panels/panel-1/position-locked -n -t bool -s true
q -p /panels/panel-1/size -n -t uint -s 32
q -p /panels/panel-1/icon-size -n -t uint -s 24
q -p /panels/panel-1/length -n -t uint -s 100
q -p /panels/panel-1/plugin-ids -n -a -t int -s 1 -t int -s 2
q -p /plugins/plugin-1 -n -t string -s separator
q -p /plugins/plugin-1/expand -n -t bool -s true
q -p /plugins/plugin-1/style -n -t uint -s 0
q -p /plugins/plugin-2 -n -t string -s systray
q -p /plugins/plugin-2/square-icons -n -t bool -s true
xfce4-panel --disable-wm-check >"$work/panel.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
	dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner string:org.kde.StatusNotifierWatcher 2>/dev/null | grep -q 'boolean true' && break
	sleep 0.05
done

sock="$work/run/gatehouse.sock"
GATEHOUSE_TRAY_SHOT_SOCKET="$sock" "$work/tray.test" -test.run '^TestServeForScreenshot$' -test.timeout 10m >"$work/service.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done

HOME="$work/home" GATEHOUSE_SOCKET="$sock" XDG_STATE_HOME="$work/state" \
	"$work/gatehouse" tray --theme light >"$work/tray.log" 2>&1 &
pids+=($!)
sleep 3

# The icon is the last thing on the panel: click it, then point at the
# approvals and at the waiting request, whose submenus open to the left
# (their places are those of the menu this script's panel draws).
width=$(xdpyinfo | awk '/dimensions:/ { split($2, d, "x"); print d[1] }')
xdotool mousemove "$((width - 16))" 16 click 1
sleep 1.5
for p in "$((width - 150)),124" "$((width - 330)),124"; do
	xdotool mousemove "${p%,*}" "${p#*,}"
	sleep 1.5
done
import -window root "$out"
echo "tray-screenshot: wrote $out"
