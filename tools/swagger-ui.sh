#!/bin/sh
# swagger-ui.sh: put the pinned Swagger UI release's browser files in
# shared/apidocs/swagger-ui/, where shared/apidocs embeds them for both
# services' GET /docs (shared/spec/decisions.md, "Both services: the API
# reference in a browser").
#
# The files come from the npm package swagger-ui-dist: the pinned release
# is fetched with `npm pack` (the tarball only: nothing of the package is
# installed or run, so its install-time analytics never run either), its
# SHA-256 checked, and the files the page needs extracted, with the
# package's LICENSE and NOTICE and the bundle's third-party notices. Then
# SHA256SUMS is rewritten; shared/apidocs's tests check the committed files
# against it and the version below against the bundle.
#
# The files are committed: building or testing the services never runs
# this script. Run it (`make swagger-ui`) only to move to another release:
# check it with `npm view swagger-ui-dist versions`, set the two values
# below from `npm pack swagger-ui-dist@NEW --ignore-scripts` and
# `sha256sum` of its tarball, run the script, update the version in
# shared/apidocs/swagger-ui/README.md and shared/apidocs.SwaggerUIVersion,
# then run shared/apidocs's tests and the services' browser tests
# (docs/operations.md, "The API reference").
set -eu

SWAGGER_UI_VERSION=5.35.0
# sha256 of swagger-ui-dist-$SWAGGER_UI_VERSION.tgz as `npm pack` writes it.
SWAGGER_UI_TARBALL_SHA256=1b8e891893404ea4c3558b6a87e2a3e494e7eedba41168c2ece5800a391a6ea6

# The files the page loads, and the licence texts that go with them.
FILES="swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css favicon-16x16.png favicon-32x32.png LICENSE NOTICE"

dest=${1:-shared/apidocs/swagger-ui}

say() { printf 'swagger-ui: %s\n' "$*"; }
die() { printf 'swagger-ui: %s\n' "$*" >&2; exit 1; }

# sha256 FILE prints the file's SHA-256 in hex.
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sum=$(sha256sum "$1") || return 1
	elif command -v shasum >/dev/null 2>&1; then
		sum=$(shasum -a 256 "$1") || return 1
	else
		die "neither sha256sum nor shasum found: cannot check the download"
	fi
	printf '%s\n' "${sum%% *}"
}

[ -d "$dest" ] || die "$dest is not a directory (run from the repository root)"
command -v npm >/dev/null 2>&1 || die "npm is needed to fetch swagger-ui-dist@$SWAGGER_UI_VERSION"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say "fetching swagger-ui-dist@$SWAGGER_UI_VERSION (npm pack, nothing installed)"
(cd "$tmp" && npm pack "swagger-ui-dist@$SWAGGER_UI_VERSION" --ignore-scripts --silent >/dev/null) ||
	die "npm pack swagger-ui-dist@$SWAGGER_UI_VERSION failed"
tarball=$tmp/swagger-ui-dist-$SWAGGER_UI_VERSION.tgz
[ -f "$tarball" ] || die "npm pack wrote no $tarball"
have=$(sha256 "$tarball")
[ "$have" = "$SWAGGER_UI_TARBALL_SHA256" ] ||
	die "swagger-ui-dist-$SWAGGER_UI_VERSION.tgz has SHA-256 $have, want $SWAGGER_UI_TARBALL_SHA256"

members=
for f in $FILES; do members="$members package/$f"; done
# shellcheck disable=SC2086 # word splitting of the member list is wanted
tar -xzf "$tarball" -C "$tmp" $members || die "the tarball lacks one of: $FILES"

: >"$tmp/SHA256SUMS"
for f in $FILES; do
	cp "$tmp/package/$f" "$dest/$f"
	printf '%s  %s\n' "$(sha256 "$dest/$f")" "$f" >>"$tmp/SHA256SUMS"
done
cp "$tmp/SHA256SUMS" "$dest/SHA256SUMS"
say "swagger-ui-dist@$SWAGGER_UI_VERSION in $dest ($(echo $FILES | wc -w | tr -d ' ') files, SHA256SUMS rewritten)"
