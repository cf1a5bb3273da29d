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
	run "$b" --csv "$csv" --staging both --stage-chunk 4K --stage-slots 4 "${w[@]}" -m 8,4K,5000,64K,1M ||
		{ cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b --staging both"; }
	no_simgpu_errors "$WORK/err"
	grep -q "^# path staged: pipelined: " "$WORK/out" || { cat "$WORK/out"; fail "$b: no pipelined path"; }
	grep -q "^# path staged-serial: serial: " "$WORK/out" || fail "$b: no serial path"
	grep -q "^# staging: 4KiB fragments, 4 pinned slots per direction: set by --stage-chunk and --stage-slots;" "$WORK/out" ||
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

# The default: pipelined only, fragment and slots chosen from the rates measured at setup
# (the simulated copies: 20 us + bytes at 2 GB/s; the wire: MPI here); a message of several fragments.
SIMGPU_LATENCY_US=20 SIMGPU_COPY_GBPS=2 run bw -m 8,8M -W 2 --csv "$WORK/auto.csv" ||
	{ cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_bw default staging"; }
line=$(grep "^# staging: " "$WORK/out") || fail "default staging: no staging line"
[[ $line =~ ^"# staging: "([0-9]+)(KiB|MiB)" fragments, "([2-8])" pinned slots per direction: chosen from copy device->pinned "[0-9.]+" GB/s + "[0-9.]+" us, pinned->device ".*", wire (the bootstrap's sendrecv of pinned memory) " ]] ||
	fail "default staging line: $line"
# The fragment is judged against the rates the line says were measured, not the simulation's
# (20 us at 2 GB/s would give 512 KiB): under the sanitizers beside CI's other pass a copy
# measured 0.8 GB/s + 17 us, and 256 KiB was right. The rule (gdrb_stage_choose): the smallest
# power of two from 64 KiB up to 4 MiB whose time at the slowest rate is at least 10 x the
# largest fixed cost; the line's rounding allowed for by 1 % either way.
chunk=${BASH_REMATCH[1]}; [ "${BASH_REMATCH[2]}" = MiB ] && chunk=$((chunk * 1024))
read -r lo hi < <(awk '
function frag(x,  f) { for (f = 64; f < 4096 && f * 1024 < 10 * x; f *= 2); return f }
{
	s = $0
	while (match(s, /[0-9.]+ GB\/s \+ [0-9.]+ us/)) {
		split(substr(s, RSTART, RLENGTH), w, " ")
		if (pace == "" || w[1] < pace) pace = w[1]
		if (w[4] > fixed) fixed = w[4]
		n++
		s = substr(s, RSTART + RLENGTH)
	}
	x = fixed * 1e-6 * pace * 1e9
	if (n >= 2) print frag(x * 0.98), frag(x * 1.02)
}' <<<"$line")
[ -n "$lo" ] && [ "$chunk" -ge "$lo" ] && [ "$chunk" -le "$hi" ] ||
	fail "default staging: fragment ${chunk} KiB, the rule gives ${lo:-?}-${hi:-?} KiB from the rates: $line"
csv_has "$WORK/auto.csv" mem=device path=staged size_bytes=8388608 stage_chunk=$((chunk * 1024)) \
	stage_slots="${BASH_REMATCH[3]}" status=ok errors=0 || { cat "$WORK/auto.csv"; fail "the CSV does not carry the chosen fragment"; }
grep -q "^# path staged-serial" "$WORK/out" && fail "the serial path ran without --staging serial|both"
run latency -m 4K --staging serial || fail "--staging serial"
grep -q "^# path staged-serial: serial: " "$WORK/out" && ! grep -q "^# path staged:" "$WORK/out" ||
	{ cat "$WORK/out"; fail "--staging serial: not the serial path alone"; }
pass "default pipelined, fragment and slots chosen from the measured rates ($line); --staging serial alone"

# The checker catches a pipeline with one of its waits removed: the sender
# sends a slot before its copy finished (out), or the receiver reuses a slot
# and returns before its copies to the device finished (in).
# The side whose waits are gone has slow copies (2 ms each; its peer's are not): they are
# still in flight when the slot is sent or reused, however the machine is loaded.
cat >"$WORK/slow-copies.sh" <<'EOS'
#!/bin/sh
case " $SLOW_RANKS " in *" $OMPI_COMM_WORLD_RANK "*) export SIMGPU_LATENCY_US=2000 ;; esac
exec "$@"
EOS
chmod +x "$WORK/slow-copies.sh"
for side in out in; do
	rc=0
	slow=0
	[ "$side" = in ] && slow=1
	GDRB_INJECT_STAGE_RACE=$side SLOW_RANKS=$slow mpi 2 -x GDRB_INJECT_STAGE_RACE -x SLOW_RANKS \
		"$WORK/slow-copies.sh" "$top_builddir/mpi/gdrb_mpi_bw" -c \
		--mem device -t 0.02 -n 30 -w 2 -m 256K -W 4 --stage-chunk 16K --stage-slots 4 --csv "$WORK/race-$side.csv" \
		>"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -ne 0 ] || { cat "$WORK/out"; fail "a pipeline without its $side waits exited 0"; }
	csv_has "$WORK/race-$side.csv" mem=device path=staged reg=staged stage_chunk=16384 stage_slots=4 'window~[0-9]*' \
		'buffers~[a-z]*' pair=all status=invalid-data 'errors~[1-9][0-9]*' ||
		{ cat "$WORK/out" "$WORK/race-$side.csv"; fail "a pipeline without its $side waits is not invalid-data"; }
	pass "a pipeline without its $side waits is caught: exit $rc, invalid-data"
done

# Collectives whose every rank holds the whole vector (allreduce, reduce, bcast) pipeline:
# one call per fragment, validated out of and in place on 3 ranks, 1 to 63 fragments; the
# blocked ones (allgather ...) stage whole buffers and say so.
for b in allreduce reduce bcast; do
	place=(--in-place both) rows=6
	[ "$b" = bcast ] && place=() rows=3
	mpi 3 "$top_builddir/mpi/gdrb_mpi_$b" -c --mem device -m 8,100000,1M -t 0.01 -n 10 -w 1 --staging both \
		"${place[@]}" --stage-chunk 16K --stage-slots 3 --csv "$WORK/coll-$b.csv" >"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "$b --staging both"; }
	grep -q "^# path staged: pipelined: the vector cut into fragments, one collective call per fragment" "$WORK/out" ||
		{ cat "$WORK/out"; fail "$b: the header does not say the collective is pipelined"; }
	[ "$(csv_count "$WORK/coll-$b.csv" mem=device path=staged reg=staged stage_chunk=16384 stage_slots=3 status=ok errors=0)" -eq "$rows" ] ||
		{ cat "$WORK/coll-$b.csv"; fail "$b: pipelined rows not all validated"; }
	[ "$(csv_count "$WORK/coll-$b.csv" mem=device path=staged-serial reg=staged stage_chunk= status=ok errors=0)" -eq "$rows" ] ||
		fail "$b: serial rows not all validated"
done
pass "allreduce, reduce, bcast: pipelined and serial staged rows validated on 3 ranks, out of and in place (bcast: one buffer)"

# A bcast's non-roots fill nothing: fragment k is received into a slot whose copy to the device
# (fragment k - slots) may still be reading it, and must be waited for first. Their copies made
# slow (the root's not) leave those copies in flight whenever the wait is missing.
SLOW_RANKS="1 2" mpi 3 -x SLOW_RANKS "$WORK/slow-copies.sh" "$top_builddir/mpi/gdrb_mpi_bcast" -c --mem device -m 256K -t 0.01 -n 2 -w 1 \
	--staging pipelined --stage-chunk 16K --stage-slots 3 >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "bcast pipelined with the non-roots' copies slow"; }
pass "bcast pipelined, the non-roots' copies to the device 2 ms each: every fragment right"

# Overlap, by order: rank 0's simulated GPU traces its copies; fragments k+1.. are copied
# device->pinned before fragment k's result is copied back (D before H), and copies out
# keep coming between copies back (H D H): never the whole buffer out, then in.
cat >"$WORK/trace.sh" <<'EOS'
#!/bin/sh
[ "$OMPI_COMM_WORLD_RANK" = 0 ] && export SIMGPU_TRACE="$TRACE_FILE"
exec "$@"
EOS
chmod +x "$WORK/trace.sh"
TRACE_FILE=$WORK/trace.txt mpi 2 -x TRACE_FILE "$WORK/trace.sh" "$top_builddir/mpi/gdrb_mpi_allreduce" --mem device \
	-m 128K -n 1 -w 0 -t 0.01 --stage-chunk 16K --stage-slots 4 >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "allreduce traced"; }
order=$(awk '/cudaMemcpyAsync .* pinned<-device/ { printf "D" } /cudaMemcpyAsync .* device<-pinned/ { printf "H" }' "$WORK/trace.txt")
case $order in
DD*HDH*) ;;
*) fail "allreduce: the copies do not overlap the calls: $order" ;;
esac
pass "allreduce: copies out of later fragments issued before earlier results come back ($order)"

# The checker catches the collective pipeline without its waits (out: a slot handed to MPI
# before its copy finished; in: the call returns before its copies to the device finished).
# The out side only: a slot handed to MPI before its copy out finished. Each simulated copy takes
# 0.5 ms, so the missing wait reads before the copy lands whatever the load. The in side (the
# call returning before its last copies to the device land) is not a reliable check on the
# simulated GPU: in whole CI runs on the loaded machine it was caught in one run of two to five,
# the last copies landing before the check read them, so it is not claimed here (the
# point-to-point pipeline's in side above is caught every time).
rc=0
GDRB_INJECT_STAGE_RACE=out SIMGPU_LATENCY_US=500 mpi 2 -x GDRB_INJECT_STAGE_RACE -x SIMGPU_LATENCY_US \
	"$top_builddir/mpi/gdrb_mpi_allreduce" -c \
	--mem device -t 0.02 -n 20 -w 2 -m 256K --stage-chunk 16K --stage-slots 4 --csv "$WORK/crace-out.csv" \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] || { cat "$WORK/out"; fail "a collective pipeline without its out waits exited 0"; }
csv_has "$WORK/crace-out.csv" mem=device path=staged stage_chunk=16384 status=invalid-data 'errors~[1-9][0-9]*' ||
	{ cat "$WORK/crace-out.csv"; fail "a collective pipeline without its out waits is not invalid-data"; }
pass "a collective pipeline without its out waits is caught"

mpi 2 "$top_builddir/mpi/gdrb_mpi_allgather" -c --mem device -m 64K -t 0.01 -n 10 -w 1 --staging both \
	--csv "$WORK/coll.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "allgather --staging both"; }
grep -q "^# path staged: cudaMemcpy of the whole buffer .*(not pipelined, whatever --staging says" "$WORK/out" ||
	{ cat "$WORK/out"; fail "allgather: the header does not say the collective stages whole buffers"; }
csv_has "$WORK/coll.csv" mem=device path=staged reg=staged stage_chunk= stage_slots= window= buffers= pair=all status=ok \
	errors=0 || fail "allgather staged row"
pass "blocked collectives stage whole buffers and say so"

bw=$top_builddir/mpi/gdrb_mpi_bw
expect_refused "^gdrb_mpi_bw: --staging: unknown mode 'fast'; accepted: pipelined, serial, both" "$bw" --staging fast
for v in 1K 2G 512KB ""; do
	expect_refused "^gdrb_mpi_bw: --stage-chunk: expected a size from 4K to 1G" "$bw" --stage-chunk "$v"
done
for v in 0 1 9 x; do
	expect_refused "^gdrb_mpi_bw: --stage-slots: expected an integer from 2 to 8" "$bw" --stage-slots "$v"
done
