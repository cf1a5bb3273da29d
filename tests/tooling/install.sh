#!/bin/bash
# make install into a DESTDIR whose path has spaces and non-ASCII letters, the tree moved
# elsewhere (a module that moves, a bundle) and tested there as make installcheck tests an
# installed tree (installed.sh); then what an installation refuses, one line and exit 2 each,
# nothing half-written: a prefix with a quote, a missing profile directory, binaries beside
# gdrb of another version, a current directory that cannot hold the results.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
command -v make >/dev/null 2>&1 || skip "make not installed"

# names_path PATH FILE...: exit 0 if a FILE (or a file under a FILE) names PATH, as a path of its
# own: not where PATH's text is the tail of another path (a tree cloned to /gdrbench, as in
# CI's fresh root, is in no '../share/gdrbench/python').
names_path() {
	local re
	re=$(printf '%s' "$1" | sed 's/[][\\.^$*+?(){}|]/\\&/g')
	grep -rqE -- "(^|[^[:alnum:]._/~-])$re(/|[^[:alnum:]._-]|\$)" "${@:2}"
}

# The check catches the source tree named, and not its text at the end of another path.
printf "LIB_FROM_HERE = '%s/scripts/lib'\n" "$top_srcdir" >"$WORK/planted"
names_path "$top_srcdir" "$WORK/planted" || fail "names_path missed the source tree planted in a copy of gdrb"
printf "LIB_FROM_HERE = '../share%s/python'\n" "$top_srcdir" >"$WORK/planted"
! names_path "$top_srcdir" "$WORK/planted" || fail "names_path took the tail of another path for the source tree"

dest="$WORK/dé st"
make -s -C "$top_builddir" install DESTDIR="$dest" prefix="/opt/gdr bench" >"$WORK/install.out" 2>&1 ||
	{ cat "$WORK/install.out"; fail "make install into '$dest' exited $?"; }
grep -q '^LIB_FROM_HERE = ' "$dest/opt/gdr bench/bin/gdrb" || fail "the installed gdrb does not name its package"
names_path "$top_srcdir" "$dest/opt/gdr bench/bin/gdrb" "$dest/opt/gdr bench/share/gdrbench/python" &&
	fail "the installed tool names the source tree $top_srcdir"
mv "$dest/opt/gdr bench" "$WORK/moved ü"
root="$WORK/moved ü"
pass "make install with a prefix and DESTDIR holding spaces and non-ASCII letters, the tree moved"
# The installed package is what runs, not the source tree's: the source tree off PYTHONPATH too.
"$root/bin/gdrb" --version >/dev/null || fail "the moved gdrb does not start"
bash "$top_srcdir/tests/tooling/installed.sh" "$root" || fail "the moved installed tree fails its own test (above)"

# Binaries beside gdrb of another version: refused before anything is written.
cp -p "$root/bin/gdrb_doctor" "$WORK/doctor.real"
printf '#!/bin/sh\necho "gdrb_doctor (gdrbench) 9.9.9"\n' >"$root/bin/gdrb_doctor"
mkdir "$WORK/cwd"
cd "$WORK/cwd" || fail "cd"
expect_refused "this gdrb is gdrbench [0-9.]*, but .*/bin/gdrb_doctor beside it is gdrbench 9.9.9" "$root/bin/gdrb" sweep
[ -z "$(ls -A "$WORK/cwd")" ] || fail "the refused sweep wrote $(ls -A "$WORK/cwd")"
cp -p "$WORK/doctor.real" "$root/bin/gdrb_doctor"

# A missing profile directory.
mv "$root/share/gdrbench/profiles" "$WORK/profiles.away"
expect_refused "the profile directory .*/share/gdrbench/profiles not there: this installation is incomplete" "$root/bin/gdrb" sweep
expect_refused "the profile directory .* not there" "$root/bin/gdrb" accept "$top_srcdir/tests/support/data/good-run" quick
[ -z "$(ls -A "$WORK/cwd")" ] || fail "the refused sweep wrote $(ls -A "$WORK/cwd")"
mv "$WORK/profiles.away" "$root/share/gdrbench/profiles"

# A current directory that cannot hold results/ (results are never written into the prefix).
printf 'not a directory\n' >"$WORK/cwd/results"
expect_refused "no --out, and '.*/cwd/results' cannot hold the results: .*; run gdrb sweep from a writable directory, or give --out DIR" \
	"$root/bin/gdrb" sweep --bench latency
rm "$WORK/cwd/results"
if [ "$(id -u)" -ne 0 ]; then
	chmod a-w "$WORK/cwd"
	expect_refused "cannot hold the results: Permission denied" "$root/bin/gdrb" sweep --bench latency
	chmod u+w "$WORK/cwd"
else
	cd /proc || fail "cd /proc"
	expect_refused "no --out, and '/proc/results' cannot hold the results" "$root/bin/gdrb" sweep --bench latency
fi
cd "$WORK" || fail "cd"
[ -z "$(ls -A "$WORK/cwd")" ] || fail "a refused sweep wrote $(ls -A "$WORK/cwd")"

# A prefix a shell script cannot hold in quotes: refused before anything is installed.
make -s -C "$top_builddir" install DESTDIR="$WORK/quote" prefix="/opt/it's" >"$WORK/quote.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/quote.out"; fail "make install with a quote in the prefix exited $rc, expected 2"; }
grep -q "^gdrbench: install directory '/opt/it?s': a quote, backslash, dollar, backquote or control character cannot be installed to" \
	"$WORK/quote.out" || { cat "$WORK/quote.out"; fail "no clear line for the quote in the prefix"; }
[ ! -e "$WORK/quote" ] || fail "make install with a refused prefix installed $(find "$WORK/quote" -type f | head -n 3)"
pass "a prefix with a quote: make install refuses it in one line, exit 2, nothing installed"
