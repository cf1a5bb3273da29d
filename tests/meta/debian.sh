#!/bin/bash
# The Debian package's version (debian/changelog's newest entry) is configure.ac's: a release
# that bumps AC_INIT without a changelog entry would build a package that names the old
# version. A local suffix (0.1.0+site1, 0.1.0~rc1) is allowed. A changelog of another version,
# planted in a copy, must be caught.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$version" ] || fail "no PACKAGE_VERSION in $top_builddir/config.h"

# check CHANGELOG: its newest entry's version, less a +suffix or ~suffix, is configure's.
check() {
	local deb
	deb=$(sed -n '1s/^gdrbench (\([^)]*\)) .*/\1/p' "$1")
	[ -n "$deb" ] || { echo "$1: the first line is not 'gdrbench (VERSION) ...'"; return 1; }
	[ "${deb%%[+~]*}" = "$version" ] ||
		{ echo "$1: version $deb, but configure.ac's AC_INIT says $version: add an entry (dch -v $version)"; return 1; }
}

sed '1s/(\([0-9.]*\))/(9.9.9)/' "$top_srcdir/debian/changelog" >"$WORK/changelog"
out=$(check "$WORK/changelog") && fail "a changelog of version 9.9.9 passed against $version"
case $out in *"version 9.9.9, but configure.ac's AC_INIT says $version"*) ;; *) fail "planted 9.9.9: '$out'" ;; esac
sed "1s/([^)]*)/($version+site1)/" "$top_srcdir/debian/changelog" >"$WORK/changelog"
check "$WORK/changelog" >/dev/null || fail "a local suffix (+site1) was refused: $(check "$WORK/changelog")"
pass "a planted changelog version is caught, a local suffix allowed"

check "$top_srcdir/debian/changelog" || fail "debian/changelog does not follow configure.ac (above)"
pass "debian/changelog's version is configure.ac's ($version)"
