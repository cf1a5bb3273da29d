#!/bin/bash
# Pipelined staging over MPI on the simulated GPU (strict mode: copies land
# asynchronously on a copy thread, so a fragment sent before its copy finished
# or a slot reused too early reads as wrong bytes). latency, bw and bibw with
# --staging both at sizes of one fragment, a fragment and a tail, and many
# fragments per message and per window: staged and staged-serial rows
# validated, the CSV naming chunk and slots of the pipelined rows only. Then
# the checker is shown to catch a pipeline without its waits, collectives say
# they stage whole buffers, and bad --staging/--stage-chunk values exit 2.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi
use_simgpu strict

csv=$WORK/stage.csv
run() { # BINARY ARGS...
	local b=$1
	shift
	mpi 2 "$top_builddir/mpi/gdrb_mpi_$b" -c --mem device -t 0.02 -n 30 -w 2 "$@" \
		>"$WORK/out" 2>"$WORK/err"
}

rows=0
for b in latency bw bibw; do
	w=(-W 3)
	[ "$b" = latency ] && w=()
	run "$b" --csv "$csv" --staging both --stage-chunk 4K "${w[@]}" -m 8,4K,5000,64K,1M ||
		{ cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b --staging both"; }
	no_simgpu_errors "$WORK/err"
	grep -q "^# path staged: pipelined: " "$WORK/out" || { cat "$WORK/out"; fail "$b: no pipelined path"; }
	grep -q "^# path staged-serial: serial: " "$WORK/out" || fail "$b: no serial path"
	grep -q "^# staging: 4KiB fragments, 4 pinned slots per direction" "$WORK/out" ||
		{ cat "$WORK/out"; fail "$b: the header does not say chunk and slots"; }
	rows=$((rows + 15))
done
csv_check -v rows=$rows "$csv" || fail "schema"
agg=('window~[0-9]*' 'buffers~[a-z]*' pair=all status=ok errors=0)
n=$(csv_count "$csv" mem=device path=staged reg=staged stage_chunk=4096 stage_slots=4 "${agg[@]}")
[ "$n" -eq $((rows / 3)) ] || { cat "$csv"; fail "$n of $((rows / 3)) pipelined rows validated with chunk 4096 and 4 slots"; }
n=$(csv_count "$csv" mem=device path=staged-serial reg=staged stage_chunk= stage_slots= "${agg[@]}")
[ "$n" -eq $((rows / 3)) ] || fail "$n of $((rows / 3)) serial rows validated"
pass "latency, bw, bibw: $((rows / 3)) pipelined and $((rows / 3)) serial staged rows validated, 1 to 256 fragments a message"

# The default: pipelined only, 512 KiB fragments; a message of several fragments.
run bw -m 8,2M -W 2 || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_bw default staging"; }
grep -q "^# staging: 512KiB fragments, 4 pinned slots per direction" "$WORK/out" || fail "default chunk"
grep -q "^# path staged-serial" "$WORK/out" && fail "the serial path ran without --staging serial|both"
run latency -m 4K --staging serial || fail "--staging serial"
grep -q "^# path staged-serial: serial: " "$WORK/out" && ! grep -q "^# path staged:" "$WORK/out" ||
	{ cat "$WORK/out"; fail "--staging serial: not the serial path alone"; }
pass "default pipelined at 512 KiB; --staging serial alone"

# The checker catches a pipeline with one of its waits removed: the sender
# sends a slot before its copy finished (out), or the receiver reuses a slot
# and returns before its copies to the device finished (in).
for side in out in; do
	rc=0
	GDRB_INJECT_STAGE_RACE=$side mpi 2 -x GDRB_INJECT_STAGE_RACE "$top_builddir/mpi/gdrb_mpi_bw" -c \
		--mem device -t 0.02 -n 30 -w 2 -m 256K -W 4 --stage-chunk 16K --csv "$WORK/race-$side.csv" \
		>"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -ne 0 ] || { cat "$WORK/out"; fail "a pipeline without its $side waits exited 0"; }
	csv_has "$WORK/race-$side.csv" mem=device path=staged reg=staged stage_chunk=16384 stage_slots=4 'window~[0-9]*' \
		'buffers~[a-z]*' pair=all status=invalid-data 'errors~[1-9][0-9]*' ||
		{ cat "$WORK/out" "$WORK/race-$side.csv"; fail "a pipeline without its $side waits is not invalid-data"; }
	pass "a pipeline without its $side waits is caught: exit $rc, invalid-data"
done

# Collectives stage whole buffers, whatever --staging says, and say so.
mpi 2 "$top_builddir/mpi/gdrb_mpi_allreduce" -c --mem device -m 64K -t 0.01 -n 10 -w 1 --staging both \
	--csv "$WORK/coll.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "allreduce --staging both"; }
grep -q "^# path staged: cudaMemcpy of the whole buffer .*(not pipelined, whatever --staging says" "$WORK/out" ||
	{ cat "$WORK/out"; fail "allreduce: the header does not say the collective stages whole buffers"; }
csv_has "$WORK/coll.csv" mem=device path=staged reg=staged stage_chunk= stage_slots= window= buffers= pair=all status=ok \
	errors=0 || fail "allreduce staged row"
pass "collectives stage whole buffers and say so"

bw=$top_builddir/mpi/gdrb_mpi_bw
expect_refused "^gdrb_mpi_bw: --staging: unknown mode 'fast'; accepted: pipelined, serial, both" "$bw" --staging fast
for v in 1K 2G 512KB ""; do
	expect_refused "^gdrb_mpi_bw: --stage-chunk: expected a size from 4K to 1G" "$bw" --stage-chunk "$v"
done
