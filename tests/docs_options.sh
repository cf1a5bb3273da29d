#!/bin/bash
# docs/options.md is every binary's --help, verbatim: scripts/gen-options-doc --check compares each
# built binary with its section. A copy with one planted change shows the check can fail.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
gen=$top_srcdir/scripts/gen-options-doc
doc=$top_srcdir/docs/options.md

sed '0,/--sizes SIZES/s/--sizes SIZES  /--sizes SIZEZ  /' "$doc" >"$WORK/planted.md"
cmp -s "$doc" "$WORK/planted.md" && fail "could not plant a change in a copy of $doc"
python3 "$gen" --check --build-dir "$top_builddir" "$WORK/planted.md" >"$WORK/planted.out" 2>&1
rc=$?
[ "$rc" -eq 77 ] && skip "no binary is built"
[ "$rc" -eq 1 ] && grep -q 'differs at its line' "$WORK/planted.out" ||
	{ cat "$WORK/planted.out"; fail "the check passed a planted change (exit $rc)"; }

python3 "$gen" --check --build-dir "$top_builddir" "$doc" || fail "docs/options.md differs from --help (above)"
pass "docs/options.md matches every built binary's --help"
