#!/bin/bash
# The manual pages make builds into man/ (scripts/gen-man) are each command's --help: every
# built binary, gdrb and each of its subcommands has a page, and each page read back is its
# command's --help, line for line. Planted faults show the check can fail: a changed line in a
# copy of a page, and a page missing from a copy of the folder.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
gen=$top_srcdir/scripts/gen-man
man=$top_builddir/man
[ -s "$man/gdrb.1" ] || fail "no $man/gdrb.1: make builds the pages"
# shellcheck disable=SC2086 # GDRB_BIN_PROGRAMS is words
set -- ${GDRB_BIN_PROGRAMS:-}
cd "$top_builddir" || fail "cd $top_builddir"

cp -r "$man" "$WORK/man"
sed -i '0,/\\-\\-help/s/\\-\\-help/\\-\\-halp/' "$WORK/man/gdrb-sweep.1"
cmp -s "$man/gdrb-sweep.1" "$WORK/man/gdrb-sweep.1" && fail "could not plant a change in a copy of gdrb-sweep.1"
python3 "$gen" --check "$WORK/man" --build-dir . "$@" >"$WORK/planted.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'gdrb-sweep.1 differs from gdrb-sweep --help at its line' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "the check passed a planted change (exit $rc)"; }
cp "$man/gdrb-sweep.1" "$WORK/man/gdrb-sweep.1"
if [ $# -gt 0 ]; then
	rm "$WORK/man/$(basename "$1").1"
	python3 "$gen" --check "$WORK/man" --build-dir . "$@" >"$WORK/planted.out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] && grep -q "$(basename "$1").1: No such file" "$WORK/planted.out" ||
		{ cat "$WORK/planted.out"; fail "the check passed a missing page (exit $rc)"; }
fi
pass "a changed line and a missing page fail the check"

python3 "$gen" --check "$man" --build-dir . "$@" || fail "the manual pages differ from --help (above)"
pass "a manual page for each of the $# built binaries, gdrb and its subcommands, each its command's --help"
