#!/usr/bin/env bash
# bench-as-user.sh USER -- COMMAND...: runs one benchmark command as USER
# when invoked as root, since root changes what a sandbox costs (no user
# namespace to make) as well as what it means; as anyone else it runs the
# command as it is. COMMAND is either "gatehouse-bench ARGS..." (the
# whole-process comparisons: the bench program, the binaries in bin/ and
# the Go toolchain it builds its empty program with are made readable by
# USER) or "go test ARGS..." (Go benchmarks, run through exec-as-user.sh).
set -euo pipefail
user=$1; shift
[ "$1" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if [ "$(id -u)" -ne 0 ]; then
	case $1 in
	gatehouse-bench) shift; exec go run ./app/gatehouse-bench -gatehouse bin/gatehouse "$@" ;;
	*) exec "$@" ;;
	esac
fi
if ! id "$user" >/dev/null 2>&1; then
	useradd --create-home --shell /bin/bash "$user"
fi
home=$(getent passwd "$user" | cut -d: -f6)
# bins DIR: the programs make build put in bin/, copied into DIR.
bins() {
	cp "$root/bin/gatehouse" "$root/bin/gatehouse-core" "$root/bin/gatehouse-init" "$root/bin/gatehouse-hook" "$1/"
}
case $1 in
gatehouse-bench)
	shift
	work=$(mktemp -d /var/tmp/gatehouse-bench.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	go build -o "$work/gatehouse-bench" ./app/gatehouse-bench
	bins "$work"
	mkdir "$work/gocache"
	chown -R "$user:" "$work"
	chmod 0755 "$work"
	cd "$work"
	runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
		PATH="/usr/local/bin:/usr/bin:/bin:$(dirname "$(command -v go)")" \
		GOCACHE="$work/gocache" TMPDIR=/var/tmp \
		"$work/gatehouse-bench" -gatehouse "$work/gatehouse" "$@"
	;;
go)
	shift
	[ "$1" = test ] || { echo "bench-as-user: want 'go test ...', got 'go $*'" >&2; exit 2; }
	shift
	# The end-to-end tests take the programs built here: the user cannot
	# build them from the checkout.
	work=$(mktemp -d /var/tmp/gatehouse-bench-bin.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	bins "$work"
	CGO_ENABLED=0 go build -o "$work/timewrap" ./hook/claude/e2e/internal/timewrap
	chmod -R a+rX "$work"
	GATEHOUSE_E2E_BIN=$work GATEHOUSE_TEST_USER=$user go test -exec "$here/exec-as-user.sh" "$@"
	;;
*)
	echo "bench-as-user: want 'gatehouse-bench ...' or 'go test ...', got '$*'" >&2
	exit 2
	;;
esac
