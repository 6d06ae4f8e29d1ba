#!/usr/bin/env bash
# A newcomer's journey through the README, run as written by a fresh
# account: an unprivileged user (default gatehouse-test) whose HOME is a new
# empty directory (no ~/.local/bin, no ~/src, no caches, no systemd --user:
# su gives it no user bus) and whose PATH is the system's, in a copy of the
# source tree it owns. Lines are taken from README.md's code blocks and run
# with bash -e; this script runs as root (as make test does on a throwaway
# machine).
#
#  1. The sh block under "From the source tree:": its lines starting with
#     sudo first, as root, the rest as the user. The first governed command
#     must print its output.
#  2. In the same shell, the sh block of "## With Claude Code" up to its
#     'gatehouse uninstall' line: 'gatehouse install' starts the service
#     (without systemd --user, a supervised background 'gatehouse serve')
#     and puts the hook in ~/.claude/settings.json. Its sudo line is IT's
#     (system-wide managed settings, for every account of the machine) and
#     is not run here.
#  3. A routed Claude call: the real claude (.ci/test-deps.sh installs it,
#     pinned) runs 'claude -p' from ~/src against a fake Messages API on
#     127.0.0.1 (hook/claude/e2e/internal/fakeapi, built here as root),
#     which asks for one Bash call that reads ~/.ssh/id_journey and prints
#     routed-42 with $GATEHOUSE_EXECUTION_ID. The tool_result the API
#     receives must carry routed-42 and an execution id (the command ran in
#     Gatehouse's sandbox) and not the key (~/.ssh is hidden there);
#     'gatehouse audit list --agent claude-code' must show that execution,
#     completed, and its card must say it was routed from the hook.
#  4. The block's 'gatehouse uninstall' line (and any after it): the service
#     stops and the hook leaves ~/.claude/settings.json; nothing the journey
#     started may still run.
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
say() { echo "readme-install-test: $*"; }
[ "$(id -u)" -eq 0 ] || fail "run as root: it makes a fresh account's home and runs the README's sudo lines"
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
command -v claude >/dev/null 2>&1 || fail "claude is not installed; run .ci/test-deps.sh"

# block HEADING: the first sh block after the line HEADING.
block() {
	awk -v h="$1" '$0 == h { f = 1; next } f && /^```sh$/ { in_ = 1; next } in_ && /^```$/ { exit } in_ { print }' README.md
}
source_block=$(block "From the source tree:")
[ -n "$source_block" ] || fail "README.md has no sh block under \"From the source tree:\""
claude_block=$(block "## With Claude Code")
grep -q '^gatehouse install' <<<"$claude_block" || fail "README.md's \"## With Claude Code\" has no sh block with 'gatehouse install'"
grep -q '^gatehouse uninstall' <<<"$claude_block" || fail "README.md's \"## With Claude Code\" block has no 'gatehouse uninstall' line"
claude_setup=$(awk '/^gatehouse uninstall/ { exit } !/^sudo / { print }' <<<"$claude_block")
claude_teardown=$(awk '/^gatehouse uninstall/ { f = 1 } f && !/^sudo / { print }' <<<"$claude_block")

work=$(mktemp -d /tmp/gatehouse-readme.XXXXXX)
home=$work/home
syspath=/usr/local/bin:/usr/local/go/bin:/usr/bin:/bin
api_pid=
# cleanup stops what the journey started, by its ids: the service the
# README's way, then any process whose command line names the fresh home
# (the service, its sandboxes); then the fake API. It removes the journey's
# directory and Claude Code's temporary one for ~/src.
cleanup() {
	if [ -x "$home/.local/bin/gatehouse" ]; then
		su "$user" -s /bin/bash -c "env -i HOME='$home' USER='$user' PATH='$home/.local/bin:$syspath' gatehouse service stop" </dev/null >/dev/null 2>&1 || true
	fi
	local pids
	pids=$(pgrep -f -- "$home/" || true)
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	if [ -n "$api_pid" ]; then
		kill "$api_pid" 2>/dev/null || true
		wait "$api_pid" 2>/dev/null || true
	fi
	rm -rf "$work" "/tmp/claude-$(id -u "$user")/$(tr /. -- <<<"$home/src")"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM

mkdir "$home" "$work/tree"
git ls-files -z | xargs -0 cp --parents -t "$work/tree"
[ -d .git ] && cp -a .git "$work/tree/" # the version is read from git
# A key the routed call will try to read: Gatehouse's sandbox hides ~/.ssh.
mkdir -m 0700 "$home/.ssh"
echo "JOURNEY-SECRET-KEY" >"$home/.ssh/id_journey"
chmod 0600 "$home/.ssh/id_journey"
user_lines=$source_block
if [ -n "${GATEHOUSE_README_PREBUILT:-}" ]; then
	cp -a bin "$work/tree/"
	user_lines=$(grep -v '^make build' <<<"$user_lines")
fi
chown -R "$user": "$work"
chmod 0755 "$work"

# The fake Messages API, built and run by root (the module cache is
# root's); its files are root's alone.
mkdir -m 0700 "$work/api"
go build -o "$work/api/fakeapi" ./hook/claude/e2e/internal/fakeapi
# In single quotes: the command is expanded in the sandbox, not here.
"$work/api/fakeapi" -command 'cat ~/.ssh/id_journey; echo routed-$((6*7)) in ${GATEHOUSE_EXECUTION_ID:-no-gatehouse}' \
	-addr "$work/api/addr" -result "$work/api/result" </dev/null &
api_pid=$!

# as_user DIR PATH SCRIPT: SCRIPT run by bash -ex as the user, from DIR,
# with nothing of this environment but HOME, USER and PATH.
as_user() {
	su "$user" -s /bin/bash -c "cd '$1' && env -i HOME='$home' USER='$user' PATH='$2' bash -ex '$3'" </dev/null 2>&1
}

# 1 and 2: the sudo lines, as root; the rest as the user, in one shell.
while IFS= read -r line; do
	say "root: $line"
	bash -ec "${line#sudo }" </dev/null
done < <(grep '^sudo ' <<<"$source_block")
while IFS= read -r line; do
	say "not run (IT's, for every account of the machine): $line"
done < <(grep '^sudo ' <<<"$claude_block")
{
	grep -v '^sudo ' <<<"$user_lines"
	echo "$claude_setup"
} >"$work/lines.sh"
say "as $user, HOME=$home:"
sed 's/^/  /' "$work/lines.sh"
out=$(as_user "$work/tree" "$syspath" "$work/lines.sh") || { echo "$out"; fail "a README line failed"; }
grep -q '^hello from the sandbox$' <<<"$out" || { echo "$out"; fail "the first governed command printed nothing"; }
grep -q '^service: running' <<<"$out" || { echo "$out"; fail "'gatehouse service status' does not say the service runs after 'gatehouse install'"; }
grep '^service: running' <<<"$out" | sed 's/^/  /' 

# 3: a routed Claude call, from the workspace. PATH from here on is the one
# the README tells the user to keep in ~/.profile.
userpath=$home/.local/bin:$syspath
for _ in $(seq 100); do
	[ -s "$work/api/addr" ] && break
	kill -0 "$api_pid" 2>/dev/null || fail "the fake Messages API did not start"
	sleep 0.1
done
[ -s "$work/api/addr" ] || fail "the fake Messages API did not start"
cat >"$work/claude.sh" <<EOF
ANTHROPIC_BASE_URL=$(cat "$work/api/addr") ANTHROPIC_API_KEY=readme-journey-key \\
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \\
timeout 120 claude -p 'run the command' --output-format json
EOF
say "as $user, a routed Claude call against the fake API:"
out=$(as_user "$home/src" "$userpath" "$work/claude.sh") || {
	echo "$out"
	tail -n 20 "$home/.local/state/gatehouse/service.log" 2>/dev/null || true
	fail "claude -p failed"
}
[ -s "$work/api/result" ] || { echo "$out"; fail "the fake API received no tool_result: claude did not run the Bash call"; }
result=$(cat "$work/api/result")
say "the tool_result the API received:"
sed 's/^/  /' <<<"$result"
id=$(grep -o 'routed-42 in [0-9a-f]\{32\}' <<<"$result" | cut -d' ' -f3 || true)
[ -n "$id" ] || fail "the Bash call did not run in Gatehouse's sandbox (no routed-42 with an execution id in its tool_result)"
! grep -q 'JOURNEY-SECRET-KEY' <<<"$result" || fail "the Bash call read ~/.ssh/id_journey: it did not run in Gatehouse's sandbox"

echo "gatehouse audit list --agent claude-code" >"$work/audit.sh"
out=$(as_user "$home/src" "$userpath" "$work/audit.sh") || { echo "$out"; fail "gatehouse audit list failed"; }
echo "$out"
grep -Eq "^${id:0:12} .* claude-code +completed " <<<"$out" || fail "'gatehouse audit list --agent claude-code' does not show execution $id, completed"
echo "gatehouse audit show $id --json" >"$work/audit.sh"
out=$(as_user "$home/src" "$userpath" "$work/audit.sh") || { echo "$out"; fail "gatehouse audit show failed"; }
for field in '"routed": true' '"surface": "agent_hook"' '"agent": "claude-code"'; do
	grep -qF "$field" <<<"$out" || { echo "$out"; fail "execution $id's card lacks $field"; }
done

# 4: the README's way out.
echo "$claude_teardown" >"$work/teardown.sh"
say "as $user:"
sed 's/^/  /' "$work/teardown.sh"
out=$(as_user "$home/src" "$userpath" "$work/teardown.sh") || { echo "$out"; fail "a README line failed"; }
echo "$out"
! grep -q 'gatehouse-hook' "$home/.claude/settings.json" || fail "'gatehouse uninstall' left the hook in ~/.claude/settings.json"
left=$(pgrep -af -- "$home/" || true)
[ -z "$left" ] || fail "still running after 'gatehouse uninstall':"$'\n'"$left"
say "a fresh $user followed the README's install lines as written, ran a governed command and a routed Claude call"
