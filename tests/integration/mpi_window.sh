#!/bin/bash
# The window in force at a size depends on that size, -W and --window-bytes
# only: gdrb_mpi_bw -m 4M measures 4 MiB with the window the default sweep
# (8:1G) gives it, whatever else the size list holds. Where --window-bytes
# makes it smaller than asked, the row's note says so; --buffers single never
# shrinks it.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
# -m 4M,64M: 1 GiB buffers (a window of 16 x 64 MiB), send and receive, 2 ranks.
need_memory 5

csv=$WORK/window.csv
# bw SIZES ARGS...: gdrb_mpi_bw at SIZES, a few quick iterations, rows in $csv.
bw() {
	local sizes=$1
	shift
	rm -f "$csv"
	mpi 2 "$top_builddir/mpi/gdrb_mpi_bw" -m "$sizes" -t 0.01 -n 20 -w 2 --min-iters 3 --csv "$csv" "$@" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_bw -m $sizes $*"; }
}
# field SIZE COLUMN: a column of the aggregate row at SIZE; a note without the transport's
# clause (an MPI that does not say which transport it used adds one to every row: mpi_p2p.sh).
field() {
	csv_col "$csv" "$2" pair=all size_bytes="$1" | tail -n 1 |
		if [ "$2" = note ]; then sed -e 's/^transport unknown: [^;]*$//' -e 's/; transport unknown: [^;]*//'; else cat; fi
}

mib4=4194304
for sizes in 4M 8:4M 4M,64M 1K,4M,16M,64M; do
	bw "$sizes"
	w=$(field $mib4 window)
	[ "$w" = 64 ] || { cat "$WORK/out" "$csv"; fail "-m $sizes: 4 MiB ran with a window of '$w', expected 64 (-W 64) whatever the other sizes"; }
	[ -z "$(field $mib4 note)" ] || fail "-m $sizes: 4 MiB has a note '$(field $mib4 note)' with the window asked"
done
# 64 MiB: 16 fit the default 1 GiB per buffer.
[ "$(field 67108864 window)" = 16 ] || { cat "$csv"; fail "-m 1K,4M,16M,64M: 64 MiB window '$(field 67108864 window)', expected 16"; }
pass "4 MiB ran with a window of 64 under -m 4M, 8:4M, 4M,64M and 1K,4M,16M,64M; 64 MiB with 16"

# A lower cap: the window shrinks at the sizes it must, the row says so.
bw 8:4M --window-bytes 16M --label mine
[ "$(field $mib4 window)" = 4 ] || { cat "$csv"; fail "--window-bytes 16M: 4 MiB window '$(field $mib4 window)', expected 4"; }
field $mib4 note | grep -q '^mine; window 4 of -W 64: --window-bytes 16MiB$' ||
	{ cat "$csv"; fail "--window-bytes 16M: the 4 MiB row's note does not say the window was capped"; }
[ "$(field 8 window)" = 64 ] && [ "$(field 8 note)" = mine ] || { cat "$csv"; fail "--window-bytes 16M: 8 B not a window of 64 with the label alone"; }
grep -q '^# buffers slots: .*--window-bytes 16MiB' "$WORK/out" || { cat "$WORK/out"; fail "the header does not give the cap"; }
pass "--window-bytes 16M: 4 MiB ran with 4, its note: $(field $mib4 note)"

# One buffer: memory never limits the window.
bw 4M --buffers single --window-bytes 1M -W 32
[ "$(field $mib4 window)" = 32 ] && [ -z "$(field $mib4 note)" ] ||
	{ cat "$csv"; fail "--buffers single: 4 MiB window '$(field $mib4 window)', expected 32, no note"; }
pass "--buffers single --window-bytes 1M -W 32: 4 MiB ran with 32"

expect_refused "--window-bytes: expected a size from 1 byte" "$top_builddir/mpi/gdrb_mpi_bw" --window-bytes 0
expect_refused "--window-bytes: expected a size from 1 byte" "$top_builddir/mpi/gdrb_mpi_bw" --window-bytes 1X
expect_refused "--window-bytes does not apply to gdrb_mpi_latency" "$top_builddir/mpi/gdrb_mpi_latency" --window-bytes 1G
