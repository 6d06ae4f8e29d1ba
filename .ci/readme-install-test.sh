#!/usr/bin/env bash
# The README's install lines, run as written by a fresh account: the code
# block under "From the source tree:" is taken from README.md and run line
# by line, with bash -e, as an unprivileged user (default gatehouse-test)
# whose HOME is a new empty directory (no ~/.local/bin, no ~/src, no
# caches) and whose PATH is the system's, in a copy of the source tree it
# owns. Its lines starting with sudo are run first, as root (this script
# runs as root, as make test does on a throwaway machine). It passes when
# every line succeeds and the first governed command printed its output.
#
#   .ci/readme-install-test.sh [USER]
#
# GATEHOUSE_README_PREBUILT=1 skips the block's 'make build' and uses this
# tree's bin/ (a cold build as a new user downloads and compiles every
# module, minutes of work); every other line still runs as written.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${1:-gatehouse-test}
fail() { echo "readme-install-test: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root: it makes a fresh account's home and runs the README's sudo lines"
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"

block=$(awk '/^From the source tree:/ { f = 1; next } f && /^```sh$/ { in_ = 1; next } in_ && /^```$/ { exit } in_ { print }' README.md)
[ -n "$block" ] || fail "README.md has no sh block under \"From the source tree:\""

work=$(mktemp -d /tmp/gatehouse-readme.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/home" "$work/tree"
git ls-files -z | xargs -0 cp --parents -t "$work/tree"
[ -d .git ] && cp -a .git "$work/tree/" # the version is read from git
user_lines=$block
if [ -n "${GATEHOUSE_README_PREBUILT:-}" ]; then
	cp -a bin "$work/tree/"
	user_lines=$(grep -v '^make build' <<<"$user_lines")
fi
chown -R "$user": "$work"
chmod 0755 "$work"

# The sudo lines, as root; the rest as the user.
while IFS= read -r line; do
	echo "readme-install-test: root: $line"
	bash -ec "${line#sudo }"
done < <(grep '^sudo ' <<<"$block")
grep -v '^sudo ' <<<"$user_lines" >"$work/lines.sh"
echo "readme-install-test: as $user, HOME=$work/home:"
sed 's/^/  /' "$work/lines.sh"
out=$(su "$user" -s /bin/bash -c "cd '$work/tree' && env -i HOME='$work/home' USER='$user' PATH=/usr/local/bin:/usr/local/go/bin:/usr/bin:/bin bash -ex '$work/lines.sh'" 2>&1) ||
	{ echo "$out"; fail "a README line failed"; }
grep -q '^hello from the sandbox$' <<<"$out" || { echo "$out"; fail "the first governed command printed nothing"; }
echo "readme-install-test: the README's install lines ran as written for a fresh $user"
