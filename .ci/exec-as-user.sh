#!/usr/bin/env bash
# go test -exec wrapper: runs one test binary as $GATEHOUSE_TEST_USER. The
# binary and its package directory (testdata included) are copied to a
# directory that user owns, since go's build cache and the checkout may not
# be readable by it: at the same depth below a copy of the module's
# packaging/ directory, which the tests of the files packaged read.
set -euo pipefail
user=${GATEHOUSE_TEST_USER:?}
bin=$1; shift
work=$(mktemp -d /var/tmp/gatehouse-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$PWD
while [ "$root" != / ] && [ ! -f "$root/go.mod" ]; do root=$(dirname "$root"); done
pkg=$work/${PWD#"$root"/}
[ "$root" != / ] && [ "$root" != "$PWD" ] || pkg=$work/pkg
mkdir -p "$pkg"
cp -a . "$pkg"
[ ! -d "$root/packaging" ] || cp -a "$root/packaging" "$work/packaging"
# The pipeline's FuzzDecide seeds itself from the analysis corpus.
if [ -d "$root/service/analysis/testdata" ]; then
	mkdir -p "$work/service/analysis"
	cp -a "$root/service/analysis/testdata" "$work/service/analysis/testdata"
fi
cp "$bin" "$work/test.bin"
chown -R "$user:" "$work"
chmod 0755 "$work"
home=$(getent passwd "$user" | cut -d: -f6)
cd "$pkg"
runuser -u "$user" -- env -i \
	HOME="$home" USER="$user" LOGNAME="$user" \
	PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin \
	REQUIRE_SANDBOX="${REQUIRE_SANDBOX:-}" GATEHOUSE_TEST_WARM="${GATEHOUSE_TEST_WARM:-}" GATEHOUSE_E2E_BIN="${GATEHOUSE_E2E_BIN:-}" TMPDIR=/var/tmp \
	"$work/test.bin" "$@"
