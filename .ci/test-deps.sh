#!/usr/bin/env bash
# Installs what the tests need when it is missing. Debian/Ubuntu via apt-get;
# elsewhere it names what to install and fails.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v runuser >/dev/null 2>&1 || need+=(util-linux)
command -v git >/dev/null 2>&1 || need+=(git)
command -v setsid >/dev/null 2>&1 || need+=(util-linux)
command -v curl >/dev/null 2>&1 || need+=(curl)

if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "test-deps: missing ${need[*]}; install them (Debian: sudo apt-get install -y ${need[*]})" >&2
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
