#!/bin/sh
# Prints the build id make build links into both binaries
# (internal/buildid): git describe, plus a hash of the names and contents of
# every file in the tree that git tracks or would track (untracked files not
# ignored included), so that an uncommitted edit gives a different id.
# Outside a git checkout: "src-" and a hash of the Go sources and module files.
set -e
cd "$(dirname "$0")/.."
if desc=$(git describe --always --dirty 2>/dev/null); then
	sum=$(git ls-files -z --cached --others --exclude-standard |
		xargs -0 sha256sum 2>/dev/null | sha256sum | cut -c1-16)
	echo "$desc-$sum"
else
	sum=$(find . -name '*.go' -o -name go.mod -o -name go.sum | LC_ALL=C sort |
		xargs sha256sum | sha256sum | cut -c1-16)
	echo "src-$sum"
fi
