#!/bin/bash
# How the NCCL binaries time their calls (docs/nccl.md), on the simulated NCCL and GPU:
# --nccl-timing batch synchronises once per --nccl-batch calls, call once per call, graph
# launches a captured batch once per synchronisation (counted from simgpu's trace, never from
# the clock); with a synchronisation cost (SIMGPU_SYNC_US) batch's fastest time per call is
# the smaller by most of it; the CSV says the mode and the calls per synchronisation; the buffer offset rotates
# between calls; a flipped byte at a rotated offset is caught in every mode, in place too;
# sendrecv's ring; bad values refused with one line.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl

csv=$WORK/timing.csv
ar=$bin/gdrb_nccl_allreduce

# count PATTERN FILE: the lines of FILE matching PATTERN (0 when none).
count() { grep -c "$1" "$2" || true; }

# Synchronisations per call, from the trace of both ranks: no -c, so that every iteration,
# warm-up included, is a whole sample.
for mode in batch call graph; do
	trace=$WORK/trace.$mode
	SIMGPU_TRACE=$trace mpi 2 "$ar" -m 8,4K -t 0.01 -n 6 -w 3 --nccl-timing $mode --nccl-batch 8 \
		--csv "$csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "--nccl-timing $mode"; }
	no_simgpu_errors "$WORK/err"
	syncs=$(count 'cudaStreamQuery .* idle' "$trace")
	calls=$(count cudaLaunchHostFunc "$trace")
	launches=$(count cudaGraphLaunch "$trace")
	[ "$syncs" -gt 0 ] || fail "$mode: no synchronisation traced"
	case $mode in
	batch) [ "$calls" -eq $((8 * syncs)) ] || fail "batch: $calls calls for $syncs synchronisations, not 8 each" ;;
	call) [ "$calls" -eq "$syncs" ] || fail "call: $calls calls for $syncs synchronisations, not 1 each" ;;
	graph)
		# Per size and rank one untimed call and its synchronisation, then the graph of 8 calls.
		[ "$(count 'cudaStreamEndCapture .* ops 8$' "$trace")" -eq 4 ] || { grep -v Memcpy "$trace"; fail "graph: not one capture of 8 calls per size and rank"; }
		[ "$syncs" -eq $((launches + 4)) ] || fail "graph: $syncs synchronisations for $launches launches"
		[ "$launches" -gt 0 ] || fail "graph: no launch" ;;
	esac
	want=$([ $mode = call ] && echo 1 || echo 8)
	[ "$(csv_count "$csv" timing=$mode calls_per_sync="$want")" -eq 2 ] || { cat "$csv"; fail "$mode: the CSV does not say timing $mode, $want calls per sync"; }
	: >"$csv"
done
grep -q "^# comparable nccl-tests figures: all_reduce_perf -b 8 -e 4K -f 2 -g 1 -n 8 -w 5 -c 0 -G 1 -o sum -d float" "$WORK/out" ||
	{ cat "$WORK/out"; fail "graph: the header does not give nccl-tests' command"; }
pass "synchronisations: batch 1 per 8 calls, call 1 per call, graph 1 per launch of a captured batch of 8; CSV timing and calls_per_sync"

# Rotation: at 8 B in a 4 KiB buffer, the calls of a batch read distinct addresses.
addrs=$(grep 'cudaMemcpyAsync .* 8 pageable<-device' "$WORK/trace.batch" | awk '{ print $5 }' | sort -u | wc -l)
[ "$addrs" -ge 8 ] || fail "rotation: the 8-byte calls read $addrs distinct device addresses"
grep -q '^# NCCL buffer offset: call k of a size and placement runs at size x (k mod floor(4096 / size))' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the header does not say the rotation"; }
pass "rotation: the 8-byte calls moved through the 4 KiB buffer ($addrs addresses read)"

# With a synchronisation cost of 100 ms and none per call on the device, a batch of 8 pays it
# once, call mode once a call. Judged on the fastest sample (lat_min_us), which load stretches
# least: call's is at least the synchronisation, batch's at most half of it below call's (an
# eighth of it, 12.5 ms, plus the calls themselves: under the sanitizers beside CI's passes a
# simulated call took up to 30 ms, so a 20 ms synchronisation was lost in that noise).
sync_us=100000
for mode in batch call; do
	SIMGPU_SYNC_US=$sync_us SIMNCCL_DELAY_US=0 SIMNCCL_LAUNCH_US=100 mpi 2 "$ar" -m 8 -t 0.01 -n 3 -w 2 \
		--nccl-timing $mode --nccl-batch 8 --csv "$csv" >"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "sync cost, $mode"; }
done
lat() { csv_col "$csv" lat_min_us timing="$1"; }
awk -v b="$(lat batch)" -v c="$(lat call)" -v s="$sync_us" 'BEGIN { exit !(b > 0 && c >= 0.9 * s && b < c - s / 2) }' ||
	fail "with a 100 ms synchronisation: fastest batch $(lat batch) us a call, call $(lat call) us"
pass "a 100 ms synchronisation: fastest batch of 8 $(lat batch) us a call, call $(lat call) us"
: >"$csv"

# A flipped byte at a rotated offset is caught in every mode: without warm-up the one
# validated call of 8 B comes after the timed ones, at a non-zero offset into the 4 KiB buffer
# (a flip at offset 0 passed unseen there); and an in-place batch (each call changes the data)
# validates.
for mode in batch call graph; do
	GDRB_TEST_HOOKS=1 GDRB_INJECT_CORRUPTION=1 mpi 2 "$ar" -m 8,4K -c -t 0.01 -n 4 -w 0 --nccl-batch 8 --nccl-timing $mode \
		--csv "$csv" >"$WORK/out" 2>"$WORK/err" && fail "$mode: a corrupted element was not caught (exit 0)"
	grep -q 'element .* of the result is' "$WORK/err" || { cat "$WORK/err"; fail "$mode: the wrong element is not named"; }
	csv_has "$csv" size_bytes=8 status=invalid-data || { cat "$csv"; fail "$mode: the 8-byte row is not invalid-data"; }
	: >"$csv"
	mpi 3 "$ar" -m 12,3K -c -t 0.01 -n 4 --nccl-timing $mode --in-place both --csv "$csv" >"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "$mode: in place and out of place"; }
	csv_check -v status=ok -v rows=4 "$csv" || fail "$mode: in-place rows"
	: >"$csv"
done
pass "a flipped byte at a rotated offset caught in batch, call and graph; in place validated in each"

# sendrecv's ring: any count of ranks, validated (rank i's message from rank i-1), busbw = algbw;
# a flipped byte caught.
mpi 3 "$bin/gdrb_nccl_sendrecv" -m 8,4K -c -t 0.01 -n 4 --nccl-pattern ring --csv "$csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err"; fail "sendrecv ring at 3 ranks"; }
csv_check -v status=ok -v rows=2 "$csv" || fail "ring rows"
grep -q 'nccl-pattern ring, 3 ranks: rank i sends its message to rank i+1' "$WORK/out" || { cat "$WORK/out"; fail "the header does not say the ring"; }
grep -q '^# comparable nccl-tests figures: sendrecv_perf ' "$WORK/out" || fail "no sendrecv_perf command"
csv_col "$csv" algbw_GBps,busbw_GBps | awk -F'\t' '$1 != $2 { bad = 1 } END { exit bad }' || fail "ring busbw"
: >"$csv"
GDRB_TEST_HOOKS=1 GDRB_INJECT_CORRUPTION=2 mpi 3 "$bin/gdrb_nccl_sendrecv" -m 8,4K -c -t 0.01 -n 4 --nccl-pattern ring \
	--csv "$csv" >"$WORK/out" 2>"$WORK/err" && fail "ring: a corrupted byte was not caught (exit 0)"
grep -q 'wrong byte(s) from rank 1' "$WORK/err" || { cat "$WORK/err"; fail "ring: rank 2's error does not name rank 1"; }
pass "sendrecv --nccl-pattern ring at 3 ranks: validated, busbw = algbw, a flipped byte from rank 1 caught on rank 2"

# Bad values: one line, exit 2.
bad() { # WANT ARGS...: exit 2, one line on stderr containing WANT (one rank: mpirun adds its own)
	local want=$1 rc=0
	shift
	"$@" -m 8 >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "$want" "$WORK/err" && [ "$(wc -l <"$WORK/err")" -eq 1 ] ||
		{ cat "$WORK/err"; fail "$* -> $rc"; }
}
bad "--nccl-timing: unknown timing mode 'sometimes'; accepted: batch, call, graph" "$ar" --nccl-timing sometimes
bad "--nccl-batch: expected an integer from 1 to 100000, got '0'" "$ar" --nccl-batch 0
bad "--nccl-batch: expected an integer from 1 to 100000, got '100001'" "$ar" --nccl-batch 100001
bad "--nccl-batch: expected an integer from 1 to 100000, got 'x'" "$ar" --nccl-batch x
bad "--nccl-pattern: unknown pattern 'star'; accepted: pairs, ring" "$bin/gdrb_nccl_sendrecv" --nccl-pattern star
bad "--nccl-pattern does not apply to gdrb_nccl_allreduce" "$ar" --nccl-pattern ring
pass "bad --nccl-timing, --nccl-batch, --nccl-pattern: one line, exit 2"
