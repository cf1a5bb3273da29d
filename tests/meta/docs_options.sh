#!/bin/bash
# docs/options.md is every binary's --help, verbatim: scripts/gen-options-doc --check compares each
# built binary with its section, and fails on a program of bin_PROGRAMS (read from the Makefiles)
# without one. Planted faults show the check can fail: a changed line in a copy of the doc, and a
# new program in a copy of the Makefiles. The list read from the Makefiles is set against make's
# own bin_PROGRAMS of this configuration (GDRB_BIN_PROGRAMS, from tests/support/Makefile.inc).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
gen=$top_srcdir/scripts/gen-options-doc
doc=$top_srcdir/docs/options.md

# A program the Makefiles gain without a section in the doc.
mkdir -p "$WORK/tree"
# The Makefiles are Makefile.am and what it includes.
(cd "$top_srcdir" && sed -n 's/^include //p' Makefile.am | tar cf - Makefile.am -T -) | (cd "$WORK/tree" && tar xf -) ||
	fail "could not copy the Makefiles of $top_srcdir"
chmod -R u+w "$WORK/tree"    # distcheck's source tree is read-only
cat >>"$WORK/tree/bench/Makefile.inc" <<'PLANT'
# planted: a new binary, behind a variable and a conditional as the verbs benchmarks are
if HAVE_MPI
PLANTED = bench/gdrb_planted
bin_PROGRAMS += $(PLANTED)
endif
PLANT
python3 "$gen" --srcdir "$WORK/tree" --list >"$WORK/planted.list" || fail "--list on the planted Makefiles"
grep -qx 'bench/gdrb_planted' "$WORK/planted.list" || fail "the planted program is not in --list"
python3 "$gen" --check --srcdir "$WORK/tree" --build-dir "$top_builddir" "$doc" >"$WORK/planted.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'no section for bench/gdrb_planted' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "the check passed a program with no section (exit $rc)"; }
pass "a program added to bin_PROGRAMS without a section fails the check"

# Every program this configuration builds is one the Makefiles were read to have.
python3 "$gen" --list >"$WORK/list" || fail "gen-options-doc --list"
if [ -n "${GDRB_BIN_PROGRAMS+set}" ]; then
	for p in $GDRB_BIN_PROGRAMS; do
		grep -qx -- "$p" "$WORK/list" || fail "make's bin_PROGRAMS has $p, gen-options-doc --list does not"
	done
	pass "gen-options-doc --list holds make's bin_PROGRAMS ($(echo "$GDRB_BIN_PROGRAMS" | wc -w) programs)"
fi

sed '0,/--sizes SIZES/s/--sizes SIZES  /--sizes SIZEZ  /' "$doc" >"$WORK/planted.md"
cmp -s "$doc" "$WORK/planted.md" && fail "could not plant a change in a copy of $doc"
python3 "$gen" --check --build-dir "$top_builddir" "$WORK/planted.md" >"$WORK/planted.out" 2>&1
rc=$?
[ "$rc" -eq 77 ] && skip "no binary is built"
[ "$rc" -eq 1 ] && grep -q 'differs at its line' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "the check passed a planted change (exit $rc)"; }

python3 "$gen" --check --build-dir "$top_builddir" "$doc" || fail "docs/options.md differs from --help (above)"
pass "docs/options.md has a section for every program and matches every built binary's --help"
