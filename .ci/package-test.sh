#!/usr/bin/env bash
# The packages' test (make test-package, part of make test): builds the .deb
# and .rpm for amd64 and arm64 (.ci/package.sh) and checks them:
#
#   - dpkg-deb -c of each .deb is packaging/gatehouse.deb.contents (names,
#     modes and owners; not sizes or dates); UPDATE=1 writes it again;
#   - rpm -qlp lists the same files (zsh's directory excepted: Debian's
#     vendor-completions, Fedora's site-functions), both depend on
#     bubblewrap, and each architecture's programs are built for it;
#   - as root (CI runs make test as root on a throwaway machine), the .deb
#     of this machine's architecture is installed with dpkg -i: gatehouse
#     version prints the version, gatehouse doctor finds the init in
#     /usr/lib/gatehouse and a working sandbox, a command runs in it for an
#     unprivileged user, 'gatehouse install' names /usr/bin/gatehouse-hook,
#     the unit, the autostart entry, the manual page and the completions are
#     where they belong and load; then dpkg -r leaves nothing of it.
#
# It never installs over files it did not put there, and removes the
# package on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."
golden=packaging/gatehouse.deb.contents
user=${GATEHOUSE_TEST_USER:-gatehouse-test}

fail() { echo "package-test: $*" >&2; exit 1; }
for tool in dpkg-deb rpm file; do
	command -v "$tool" >/dev/null 2>&1 || fail "$tool missing; run .ci/test-deps.sh"
done

.ci/package.sh amd64 arm64
version=$(cat dist/version)

# The file list of a .deb: mode, owner, path.
deblist() { dpkg-deb -c "$1" | awk '{ print $1, $2, $6 }'; }
# Its regular files, as rpm names them.
debfiles() {
	dpkg-deb -c "$1" | awk '$1 ~ /^-/ { print substr($6, 2) }' |
		sed 's|^/usr/share/zsh/vendor-completions/|/usr/share/zsh/site-functions/|' | sort
}

for arch in amd64:x86_64:x86-64 "arm64:aarch64:ARM aarch64"; do
	IFS=: read -r deb rpmarch elf <<<"$arch"
	d=$(ls dist/gatehouse_*_"$deb".deb)
	r=$(ls dist/gatehouse-*."$rpmarch".rpm)
	if [ -n "${UPDATE:-}" ]; then
		deblist "$d" >"$golden"
	fi
	diff -u "$golden" <(deblist "$d") || fail "$d: the file list differs from $golden (UPDATE=1 $0 writes it)"
	diff -u <(debfiles "$d") <(rpm -qlp "$r" | sort) || fail "$r lists other files than $d"
	[ "$(dpkg-deb -f "$d" Depends)" = bubblewrap ] || fail "$d: Depends is not bubblewrap"
	rpm -qpR "$r" | grep -qx bubblewrap || fail "$r does not require bubblewrap"
	[ "$(dpkg-deb -f "$d" Architecture)" = "$deb" ] || fail "$d: not $deb"
	x=$(mktemp -d)
	dpkg-deb -x "$d" "$x"
	for prog in usr/bin/gatehouse usr/bin/gatehouse-hook usr/lib/gatehouse/gatehouse-init; do
		file -b "$x/$prog" | grep -q "ELF 64-bit.*, $elf.*statically linked" ||
			{ file "$x/$prog"; rm -rf "$x"; fail "$d: $prog is not a static $elf program"; }
	done
	rm -rf "$x"
	echo "package-test: $d and $r: contents as expected"
done

if [ "$(id -u)" -ne 0 ]; then
	echo "package-test: not root, so the .deb is not installed here (make test as root does)"
	exit 0
fi
command -v dpkg >/dev/null 2>&1 || fail "dpkg missing: the install test runs on Debian or Ubuntu"
status=$(dpkg-query -W -f='${db:Status-Status}' gatehouse 2>/dev/null || true)
[ -z "$status" ] || [ "$status" = not-installed ] ||
	fail "a gatehouse package is on this machine already ($status); remove it (dpkg -P gatehouse) and run again"
deb=$(ls dist/gatehouse_*_"$(dpkg --print-architecture)".deb)
files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print substr($6, 2) }')
for f in $files; do
	[ ! -e "$f" ] || fail "$f exists already; the install test would overwrite it"
done

work=$(mktemp -d /var/tmp/gatehouse-package-test.XXXXXX)
chmod 0755 "$work"
cleanup() {
	dpkg -r gatehouse >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
dpkg -i "$deb" >/dev/null
[ "$(dpkg-query -W -f='${db:Status-Status}' gatehouse)" = installed ] || fail "dpkg -i did not install gatehouse"

# gatehouse version prints the packaged version.
[ "$(/usr/bin/gatehouse version | head -1)" = "gatehouse $version" ] ||
	fail "gatehouse version says $(/usr/bin/gatehouse version | head -1), want gatehouse $version"

# doctor finds the init the package put in /usr/lib/gatehouse, of its build,
# and a working sandbox: for root, and for an unprivileged user.
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
for who in root "$user"; do
	home=$work/home-$who
	mkdir -p "$home/src"
	chown -R "$who:" "$home"
	as() { runuser -u "$who" -- env -i HOME="$home" USER="$who" PATH=/usr/bin:/bin "$@"; }
	out=$(as /usr/bin/gatehouse doctor 2>&1) || { echo "$out"; fail "gatehouse doctor failed for $who"; }
	echo "$out" | grep -q '^sandbox init: *\/usr\/lib\/gatehouse\/gatehouse-init (.*matches)$' ||
		{ echo "$out"; fail "gatehouse doctor ($who) did not find /usr/lib/gatehouse/gatehouse-init of its build"; }
	echo "$out" | grep -q '^ok: the governed shell can serve$' || { echo "$out"; fail "gatehouse doctor ($who) is not ok"; }
	out=$(as /usr/bin/gatehouse exec --cwd "$home/src" -- 'echo "sandboxed as $(id -un)"' 2>&1) || { echo "$out"; fail "gatehouse exec failed for $who"; }
	[ "$out" = "sandboxed as $who" ] || fail "gatehouse exec ($who) said: $out"
done

# gatehouse install names the small hook client installed beside it.
home=$work/home-root
env -i HOME="$home" PATH=/usr/bin:/bin /usr/bin/gatehouse install --no-service --no-tray >/dev/null
grep -q "\"'/usr/bin/gatehouse-hook' hook claude\"" "$home/.claude/settings.json" ||
	fail "gatehouse install did not name /usr/bin/gatehouse-hook: $(cat "$home/.claude/settings.json")"

# The user unit and the tray's autostart entry, for /usr/bin/gatehouse.
unit=/usr/lib/systemd/user/gatehouse.service
grep -qx 'Delegate=yes' "$unit" || fail "$unit: no Delegate=yes"
grep -qx 'ExecStart=/usr/bin/gatehouse "serve"' "$unit" || fail "$unit: not /usr/bin/gatehouse serve"
desktop=/etc/xdg/autostart/gatehouse-tray.desktop
grep -qx 'Exec=/usr/bin/gatehouse tray' "$desktop" || fail "$desktop: not /usr/bin/gatehouse tray"
[ -f /usr/share/icons/hicolor/32x32/apps/gatehouse.png ] || fail "no icon"

# The manual page, found by man and free of warnings.
[ "$(man -w gatehouse)" = /usr/share/man/man1/gatehouse.1.gz ] || fail "man -w gatehouse: $(man -w gatehouse 2>&1)"
warn=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings gatehouse 2>&1 >/dev/null) || fail "man gatehouse failed: $warn"
[ -z "$warn" ] || fail "man gatehouse warns: $warn"

# The completions: the binary's own and the installed ones, each found
# where its shell looks, complete a subcommand.
complete_au='COMP_WORDS=(gatehouse au); COMP_CWORD=1; _gatehouse; echo "${COMPREPLY[*]}"'
[ "$(bash -c "source <(/usr/bin/gatehouse completion bash); $complete_au")" = audit ] ||
	fail "bash: source <(gatehouse completion bash) does not complete 'gatehouse au'"
[ "$(bash -c "source /usr/share/bash-completion/completions/gatehouse; $complete_au")" = audit ] ||
	fail "bash: the installed completion does not complete 'gatehouse au'"
if command -v fish >/dev/null 2>&1; then
	[ "$(HOME=$work fish -c 'complete -C "gatehouse au"' | cut -f1)" = audit ] ||
		fail "fish: the installed completion does not complete 'gatehouse au'"
fi
if command -v zsh >/dev/null 2>&1; then
	[ "$(HOME=$work zsh -f -c 'autoload -Uz compinit; compinit -u -D; print -r -- $_comps[gatehouse]')" = _gatehouse ] ||
		fail "zsh: compinit does not find _gatehouse"
fi
echo "package-test: $deb installed: version, doctor, exec, install, unit, autostart, manual and completions as expected"

# dpkg -r leaves nothing of it.
dpkg -r gatehouse >/dev/null
status=$(dpkg-query -W -f='${db:Status-Status}' gatehouse 2>/dev/null || true)
[ -z "$status" ] || [ "$status" = not-installed ] || fail "after dpkg -r, gatehouse is $status"
for f in $files /usr/lib/gatehouse /usr/share/doc/gatehouse /usr/share/doc/gatehouse/docs /usr/share/doc/gatehouse/examples; do
	[ ! -e "$f" ] || fail "dpkg -r left $f"
done
echo "package-test: dpkg -r gatehouse left nothing"
