#!/bin/bash
# Element counts above INT_MAX: an allreduce of 2 GiB + 1 MiB of int8 (more
# than 2^31 elements, sent as contiguous groups with a user-defined reduction)
# and a bcast of the same size, every element validated. In place, so each rank
# holds one 2 GiB buffer: about 5 GiB in all.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

need_memory 7

size=$(((2 << 30) + (1 << 20)))
# Sanitized, the allreduce alone: its grouped elements and user-defined reduction are the
# bcast's grouping and more, and a 2 GiB buffer under ASan costs a minute a binary.
benches="allreduce bcast"
[ "${GDRB_SANITIZE:-0}" = 1 ] && benches=allreduce
rows=0
for b in $benches; do
	extra=()
	[ "$b" = allreduce ] && extra=(--dtype int8 --op max --in-place)
	mpi 2 "$top_builddir/mpi/gdrb_mpi_$b" -m "$size" -c -n 1 -w 1 -t 0.01 "${extra[@]}" \
		--csv "$WORK/large.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b $size"; }
	pass "gdrb_mpi_$b: $size bytes ($size elements), validated"
	rows=$((rows + 1))
done
csv_check -v status=ok -v rows=$rows "$WORK/large.csv" || fail "CSV"
