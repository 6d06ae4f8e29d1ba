#!/usr/bin/env bash
# Runs the sandbox and escape tests as an unprivileged user. Root changes
# what a sandbox means (it can always create namespaces, it owns the files it
# is meant to be kept from), so these tests must pass for a normal user too.
# As a non-root user the main test run already covered this.
set -euo pipefail
user=$1; shift
if [ "$(id -u)" -ne 0 ]; then
	echo "test-as-user: already unprivileged ($(id -un)); covered by the main run"
	exit 0
fi
if ! id "$user" >/dev/null 2>&1; then
	useradd --create-home --shell /bin/bash "$user"
fi
here=$(cd "$(dirname "$0")" && pwd)
export GATEHOUSE_TEST_USER=$user
REQUIRE_SANDBOX=1 go test -race -count=1 -exec "$here/exec-as-user.sh" "$@"
