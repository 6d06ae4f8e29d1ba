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
# The agents' end-to-end suites build gatehouse from the module, which the
# user cannot read: with GATEHOUSE_E2E_BIN=build they take the programs
# make build put in bin/, copied where the user can read them.
if [ "${GATEHOUSE_E2E_BIN:-}" = build ]; then
	root=$(dirname "$here")
	e2e=$(mktemp -d /var/tmp/gatehouse-e2e-bin.XXXXXX)
	trap 'rm -rf "$e2e"' EXIT
	cp "$root/bin/gatehouse" "$root/bin/gatehouse-core" "$root/bin/gatehouse-init" "$root/bin/gatehouse-hook" "$e2e/"
	(cd "$root" && CGO_ENABLED=0 go build -o "$e2e/timewrap" ./hook/claude/e2e/internal/timewrap)
	chmod -R a+rX "$e2e"
	export GATEHOUSE_E2E_BIN=$e2e
fi
REQUIRE_SANDBOX=1 go test -race -count=1 -exec "$here/exec-as-user.sh" "$@"
