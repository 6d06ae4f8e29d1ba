#!/usr/bin/env bash
# Installs what the tests need when it is missing. Debian/Ubuntu via apt-get;
# elsewhere it names what to install and fails.
#
#   .ci/test-deps.sh         everything make test needs
#   .ci/test-deps.sh run     only what make run needs: bubblewrap
set -euo pipefail

mode=${1:-test}
case $mode in
test | run) ;;
*) echo "test-deps: unknown mode \"$mode\"; want test or run" >&2; exit 2 ;;
esac

need=()
need_claude=
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)

test_needs() {
	command -v unshare >/dev/null 2>&1 || need+=(util-linux)
	command -v runuser >/dev/null 2>&1 || need+=(util-linux)
	command -v git >/dev/null 2>&1 || need+=(git)
	command -v setsid >/dev/null 2>&1 || need+=(util-linux)
	command -v curl >/dev/null 2>&1 || need+=(curl)
	# git over SSH: the test starts its own sshd on a loopback port.
	[ -x /usr/sbin/sshd ] || need+=(openssh-server)
	# Masked credentials: the sandbox's CA bundle starts from the system's
	# roots; the credential tests dump values with xxd.
	[ -s /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
	command -v xxd >/dev/null 2>&1 || need+=(xxd)
	# The egress tests run python3 inside the sandbox, whose PATH is the
	# system's, and git ls-remote over smart http (git-http-backend, in git).
	[ -x /usr/bin/python3 ] || [ -x /usr/local/bin/python3 ] || need+=(python3)
	# The developer workflow suite (app/cli/workflow): make, and Debian's
	# python3 with venv, pip, setuptools, wheel and pytest (it runs
	# /usr/bin/python3, never a python earlier in PATH), node and npm.
	command -v make >/dev/null 2>&1 || need+=(make)
	/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
	/usr/bin/python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
	/usr/bin/python3 -c 'import setuptools' >/dev/null 2>&1 || need+=(python3-setuptools)
	/usr/bin/python3 -c 'import wheel' >/dev/null 2>&1 || need+=(python3-wheel)
	/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
	# The egress tests reach a server on the sandbox's loopback with
	# requests, as agents' scripts do.
	/usr/bin/python3 -c 'import requests' >/dev/null 2>&1 || need+=(python3-requests)
	# The masked-credential recipe for keyring CLIs runs the GitHub CLI in
	# the sandbox (service/pipeline/gh_linux_test.go).
	command -v gh >/dev/null 2>&1 || need+=(gh)
	command -v node >/dev/null 2>&1 || need+=(nodejs)
	command -v npm >/dev/null 2>&1 || need+=(npm)
	# The packages' test (.ci/package-test.sh): rpm to read the .rpm, file
	# to check each architecture's programs, man for the manual page, and
	# the shells whose completions it loads.
	command -v rpm >/dev/null 2>&1 || need+=(rpm)
	command -v file >/dev/null 2>&1 || need+=(file)
	command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
	command -v man >/dev/null 2>&1 || need+=(man-db)
	command -v zsh >/dev/null 2>&1 || need+=(zsh)
	command -v fish >/dev/null 2>&1 || need+=(fish)
	# Claude Code's own sandbox on Linux (the routing end-to-end test).
	command -v socat >/dev/null 2>&1 || need+=(socat)
	# The desktop session of the keychain and notification tests
	# (.ci/with-desktop-session.sh): a session bus, an X display, dunst, and
	# GNOME Keyring's Secret Service.
	command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus-daemon)
	command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus-daemon)
	command -v dbus-send >/dev/null 2>&1 || need+=(dbus-bin)
	command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
	command -v dunst >/dev/null 2>&1 || need+=(dunst)
	command -v busctl >/dev/null 2>&1 || need+=(systemd)
	command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
	command -v secret-tool >/dev/null 2>&1 || need+=(libsecret-tools)
	# The dashboard's end-to-end test drives a real headless Chromium
	# (app/cli/dashboard_linux_test.go, through chromedp).
	command -v chromium >/dev/null 2>&1 || need+=(chromium)

	# The real Claude Code for the routing end-to-end test (hook/claude/e2e),
	# pinned; npm installs its native binary as /usr/bin/claude (or under the
	# npm prefix).
	if [ "$(claude --version 2>/dev/null | cut -d' ' -f1)" != "$CLAUDE_CODE_VERSION" ]; then
		need_claude=1
		command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
	fi
}
CLAUDE_CODE_VERSION=2.1.332
[ "$mode" = run ] || test_needs

install_claude() {
	# The real Codex CLI for hook/codex/e2e, pinned.
	[ "$mode" = run ] || [ "$(codex --version 2>/dev/null)" = "codex-cli 0.169.0" ] || npm install -g --no-fund --no-audit @openai/codex@0.169.0 </dev/null >/dev/null
	# The real Gemini CLI for hook/gemini/e2e, pinned.
	[ "$mode" = run ] || [ "$(gemini --version 2>/dev/null)" = "0.61.0" ] || npm install -g --no-fund --no-audit @google/gemini-cli@0.61.0 </dev/null >/dev/null
	[ -n "$need_claude" ] || return 0
	echo "test-deps: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
	npm install -g --no-fund --no-audit --allow-scripts=@anthropic-ai/claude-code \
		"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" </dev/null >/dev/null
	if [ "$(claude --version 2>/dev/null | cut -d' ' -f1)" != "$CLAUDE_CODE_VERSION" ]; then
		echo "test-deps: claude $CLAUDE_CODE_VERSION did not install (is npm's bin directory in PATH?)" >&2
		exit 1
	fi
}

if [ ${#need[@]} -eq 0 ]; then
	if [ -n "$need_claude" ] && [ "$(id -u)" -ne 0 ]; then
		echo "test-deps: missing claude $CLAUDE_CODE_VERSION; install it (sudo npm install -g @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION)" >&2
		exit 1
	fi
	install_claude
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "test-deps: missing ${need[*]}; install them (Debian: sudo apt-get install -y ${need[*]}, or sudo $0 $mode)" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "test-deps: missing ${need[*]} and no apt-get here; install them with your package manager" >&2
	exit 1
fi
echo "test-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
install_claude
