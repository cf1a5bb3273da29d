#!/bin/bash
# Messages above INT_MAX bytes (2 GiB + 8): sizes are size_t end to end and
# MPI messages are split into 1 GiB chunks. Ping-pong and bandwidth, every
# byte validated. Needs about 9 GiB of free memory (two ranks, two buffers each).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

need_memory 10

size=$(((2 << 30) + 8))
# Sanitized, the bandwidth binary alone (2 GiB buffers under ASan cost half a minute a binary):
# its non-blocking chunks, with request slots counted per message, are the more involved of
# the two loops; the ping-pong's blocking one runs at this size in the plain pass.
benches="latency bw"
[ "${GDRB_SANITIZE:-0}" = 1 ] && benches=bw
rows=0
for b in $benches; do
	mpi 2 "$top_builddir/mpi/gdrb_mpi_$b" -m "$size" -c -n 2 -w 1 -t 0.01 --csv "$WORK/large.csv" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b at $size bytes"; }
	grep -q "^ *2147483656B " "$WORK/out" || { cat "$WORK/out"; fail "no table row at 2147483656 B"; }
	pass "gdrb_mpi_$b: $size bytes, validated"
	rows=$((rows + 1))
done
csv_check -v status=ok -v rows=$rows "$WORK/large.csv" || fail "CSV"
[ "$(csv_count "$WORK/large.csv" pair=all size_bytes=2147483656 'iterations~[1-9][0-9]*')" -eq $rows ] || fail "size_bytes not exact in the CSV"
pass "messages above INT_MAX work and validate"
