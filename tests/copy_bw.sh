#!/bin/bash
# gdrb_copy_bw: five copy kinds side by side where a GPU exists; exit 77 with
# the reason where none does.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

bin=$top_builddir/bench/gdrb_copy_bw
[ -x "$bin" ] || fail "gdrb_copy_bw not built"
"$bin" --bogus >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] || fail "bad option not refused with 2"
if ! have_gpu; then
	"$bin" -m 8 >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "without a GPU exited $rc, expected 77"; }
	grep -q "unsupported on this node: copy_bw: " "$WORK/err" || { cat "$WORK/err"; fail "no reason"; }
	grep -qv '^#' "$WORK/out" && fail "something was measured"
	skip "no GPU here; gdrb_copy_bw exits 77 with: $(cat "$WORK/err")"
fi
"$bin" -m 8,64K,16M -c -t 0.05 --csv "$WORK/copy.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "gdrb_copy_bw"; }
cat "$WORK/out"
csv_check -v status=ok -v rows=15 "$WORK/copy.csv" || fail "CSV"
pass "gdrb_copy_bw: 5 copy kinds x 3 sizes, validated"
