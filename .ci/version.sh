#!/bin/sh
# Prints the version, commit and build date make build and make package
# link into the binaries (internal/version), one per line:
#
#   version  from git: a tag vX.Y.Z on the commit gives X.Y.Z; N commits
#            after it, X.Y.Z-dev.N+gHASH; no tag at all, 0.0.0-dev+gHASH;
#            ".dirty" is appended to the build metadata for a modified tree
#   commit   the full commit hash
#   date     the build time in UTC (RFC 3339), or $SOURCE_DATE_EPOCH's
#
# Outside a git checkout: 0.0.0-dev, unknown, and the date.
set -e
cd "$(dirname "$0")/.."
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
	date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
if ! commit=$(git rev-parse HEAD 2>/dev/null); then
	printf '0.0.0-dev\nunknown\n%s\n' "$date"
	exit 0
fi
short=$(git rev-parse --short=12 HEAD)
dirty=
git diff --quiet HEAD 2>/dev/null || dirty=.dirty
if desc=$(git describe --tags --match 'v[0-9]*' --long 2>/dev/null); then
	# vX.Y.Z-N-gHASH
	n=${desc%-g*}
	n=${n##*-}
	tag=${desc%-*-g*}
	tag=${tag#v}
	if [ "$n" = 0 ] && [ -z "$dirty" ]; then
		version=$tag
	elif [ "$n" = 0 ]; then
		version="$tag+g$short$dirty"
	else
		version="$tag-dev.$n+g$short$dirty"
	fi
else
	version="0.0.0-dev+g$short$dirty"
fi
printf '%s\n%s\n%s\n' "$version" "$commit$( [ -n "$dirty" ] && echo -dirty)" "$date"
