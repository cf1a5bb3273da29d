#!/bin/bash
# The six verbs binaries on GPU memory, in the soft-RoCE VM (tests/cluster/vm/rxe-vm.sh)
# with the simulated GPU (tests/support/simgpu), validation on, in its two modes:
#  - strict (a node without nvidia_peermem): ibv_reg_dmabuf_mr answers EOPNOTSUPP
#    (soft-RoCE has no dma-buf) and ibv_reg_mr on device memory EFAULT, so the
#    direct path is unsupported with both errors in the note; staged is validated;
#  - peermem (a node with nvidia_peermem): ibv_reg_mr on device memory works, so
#    the direct path runs with reg peermem and is validated, the dma-buf
#    EOPNOTSUPP stands in the header; GPUDirect writes are flushed before
#    validation reads device memory back (the simulator's call trace shows it).
# Both staged paths run side by side (--staging both): pipelined (4 KiB fragments
# through the rings: 8 B and 4 KiB are one fragment, 20 KiB five, more than the
# four slots, 64 KiB sixteen; bandwidth runs carry a window of messages) and
# serial, each validated; the pipelined rows name their fragment and slots.
# Strict mode also runs the pipeline both ways at once over two QPs, with
# fragments split into several work requests, and with GDRB_INJECT_STAGE_RACE
# (no wait for a slot's copy): that must come out as invalid-data.
# Both: scatter-to-CQE is off for device receive buffers (the header says so);
# gdrb_doctor's checks 3 and 4 (CUDA devices, GPU memory registration) for real.
# Skips (77) only where the VM cannot be had: no qemu, no kernel package.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
[ -x "$top_builddir/bench/gdrb_write_lat" ] || skip "verbs benchmarks not built (no libibverbs at configure time)"
use_simgpu strict
need_vm

cat >"$WORK/inside.sh" <<'INSIDE'
# Runs inside the VM: $1 the shared work directory, $2 the build tree, $3 the source tree.
. "$3/tests/cluster/vm/prelude.sh"
# The test hooks below (GDRB_INJECT_*, GDRB_VERBS_MAX_MSG) run only with the test switch.
export GDRB_TEST_HOOKS=1
run() { # NAME CSV BINARY ARGS...: one run, its output and exit status kept
	local name=$1 csv=$2 b=$3 t0=$SECONDS
	shift 3
	timeout "$(vm_limit 300)" mpirun -np 2 --mca pml ob1 --mca btl self,vader -x SIMGPU_MODE -x SIMGPU_TRACE \
		-x LD_LIBRARY_PATH "$bin/gdrb_$b" -n 20 -w 2 -t 0.05 -c -T 30 --mem device \
		--csv "$out/$csv" "$@" >"$out/$name.out" 2>"$out/$name.err"
	echo "$name $?" >>"$out/rc"
	echo "$name $((SECONDS - t0)) s" >>"$out/times"
}
for mode in strict peermem; do
	export SIMGPU_MODE=$mode SIMGPU_TRACE=
	for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
		[ "$mode/$b" = peermem/write_bw ] && export SIMGPU_TRACE=$out/trace
		# Bandwidth windows of 8 messages, still more than the 4 staging slots: the default
		# 64 made each peermem bandwidth run (its direct rows validated) three times as long.
		win=()
		case $b in *_bw) win=(-W 8) ;; esac
		run "$b-$mode" "$mode.csv" "$b" -m 8,4K,20K,64K --staging both --stage-chunk 4K "${win[@]}"
	done
	export SIMGPU_TRACE=
	"$bin/gdrb_doctor" >"$out/doctor-$mode.out" 2>"$out/doctor-$mode.err"
	echo "doctor-$mode $?" >>"$out/rc"
done
export SIMGPU_MODE=strict
for b in write_bw read_bw send_bw; do
	run "$b-bidir" pipe.csv "$b" -m 8,20K --stage-chunk 4K -b --qps 2
done
# 4 KiB fragments in 1 KiB work requests (3000 B: three, 10 KiB: 2.5 fragments' worth).
for b in write_bw send_lat read_lat; do
	GDRB_VERBS_MAX_MSG=1K run "$b-split" pipe.csv "$b" -m 3000,10K --stage-chunk 4K
done
# Slower copies make the missing wait show on every run.
for b in write_bw read_bw send_lat; do
	GDRB_INJECT_STAGE_RACE=all SIMGPU_LATENCY_US=100 run "$b-race" race.csv "$b" -m 4K,20K --stage-chunk 4K
done
INSIDE

vm_inside
echo "seconds per run in the VM:"
sed 's/^/  /' "$WORK/times"
for mode in strict peermem; do
	for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
		[ "$(status_of "$b-$mode")" = 0 ] || { show "$b-$mode"; fail "gdrb_$b --mem device ($mode) failed in the VM"; }
		no_simgpu_errors "$WORK/$b-$mode.err"
		grep -q '^# GPU: gdrbench simulated GPU (simgpu)' "$WORK/$b-$mode.out" ||
			{ show "$b-$mode"; fail "gdrb_$b ($mode): no simulated GPU in the header"; }
	done
	csv_check -v rows=72 -v ranks=2 "$WORK/$mode.csv" || fail "$mode.csv: schema or row count"
	staged=$(csv_count "$WORK/$mode.csv" mem=device path=staged reg=staged stage_chunk=4096 stage_slots=4 status=ok errors=0)
	[ "$staged" -eq 24 ] || { cat "$WORK/$mode.csv"; fail "$mode: $staged of 24 pipelined staged rows validated with 4096-byte fragments in 4 slots"; }
	serial=$(csv_count "$WORK/$mode.csv" mem=device path=staged-serial reg=staged stage_chunk= stage_slots= status=ok errors=0)
	[ "$serial" -eq 24 ] || { cat "$WORK/$mode.csv"; fail "$mode: $serial of 24 serial staged rows validated"; }
done
grep -q '^# staging: 4KiB fragments, 4 pinned slots per direction' "$WORK/send_bw-strict.out" &&
	grep -q '^# path staged: pipelined: .*each a send into a receive posted on a slot' "$WORK/send_bw-strict.out" &&
	grep -q '^# path staged-serial: cudaMemcpy device->registered pinned bounce buffer' "$WORK/send_bw-strict.out" ||
	{ show send_bw-strict; fail "the header does not describe both staged paths"; }
pass "strict and peermem: 6 verbs binaries x 4 sizes (1 to 16 fragments), pipelined and serial staged paths validated on device memory"

# The pipeline both ways at once over two QPs, and with fragments of several work requests.
for name in write_bw-bidir read_bw-bidir send_bw-bidir write_bw-split send_lat-split read_lat-split; do
	[ "$(status_of "$name")" = 0 ] || { show "$name"; fail "$name (pipelined staging, strict) failed in the VM"; }
	no_simgpu_errors "$WORK/$name.err"
done
csv_check -v rows=24 -v ranks=2 "$WORK/pipe.csv" || fail "pipe.csv: schema or row count"
staged=$(csv_count "$WORK/pipe.csv" mem=device path=staged reg=staged stage_chunk=4096 stage_slots=4 status=ok errors=0)
[ "$staged" -eq 12 ] || { cat "$WORK/pipe.csv"; fail "$staged of 12 pipelined rows (-b --qps 2, split work requests) validated"; }
pass "pipelined staging validated both ways at once over 2 QPs (write, read, send) and in 1 KiB work requests (write_bw, send_lat, read_lat)"

# Without the wait for a slot's copy, validation must catch it (one binary per protocol).
for b in write_bw read_bw send_lat; do
	[ "$(status_of "$b-race")" = 1 ] || { show "$b-race"; fail "gdrb_$b with GDRB_INJECT_STAGE_RACE=all exited $(status_of "$b-race"), expected 1"; }
	no_simgpu_errors "$WORK/$b-race.err"
	csv_has "$WORK/race.csv" benchmark="$b" layer=verbs mem=device path=staged reg=staged stage_chunk=4096 stage_slots=4 \
		status=invalid-data 'errors~[1-9][0-9]*' ||
		{ show "$b-race"; cat "$WORK/race.csv"; fail "gdrb_$b: GDRB_INJECT_STAGE_RACE=all not caught as invalid-data"; }
done
csv_check -v rows=12 -v ranks=2 "$WORK/race.csv" || fail "race.csv: schema or row count"
multi=$(csv_count "$WORK/race.csv" mem=device path=staged reg=staged stage_chunk=4096 stage_slots=4 'window~[0-9]*' \
	'buffers~[a-z]*' pair=all size_bytes=20480 status=invalid-data)
[ "$multi" -eq 3 ] || { cat "$WORK/race.csv"; fail "GDRB_INJECT_STAGE_RACE=all: $multi of 3 five-fragment rows invalid-data"; }
pass "GDRB_INJECT_STAGE_RACE=all: $(csv_count "$WORK/race.csv" status=invalid-data) of 6 pipelined rows invalid-data (write_bw, read_bw, send_lat)"

# strict: the direct path is unsupported, and the note says why with both attempts.
direct=$(grep -c ',device,direct,[a-z]*,.*,unsupported,0,' "$WORK/strict.csv")
[ "$direct" -eq 24 ] || { cat "$WORK/strict.csv"; fail "strict: $direct of 24 direct rows unsupported"; }
grep ',device,direct,' "$WORK/strict.csv" | grep -v 'ibv_reg_dmabuf_mr: Operation not supported' |
	grep -q . && fail "strict: a direct row's note lacks the dma-buf EOPNOTSUPP"
grep ',device,direct,' "$WORK/strict.csv" | grep -v 'ibv_reg_mr: Bad address' |
	grep -q . && fail "strict: a direct row's note lacks the peer-memory EFAULT"
pass "strict: direct unsupported, note: $(grep -m1 -o 'ibv_reg_dmabuf_mr: [^;]*' "$WORK/strict.csv" | head -c 120)..."

# peermem: the direct path registered with peer memory and validated.
direct=$(grep -c ',device,direct,peermem,.*,ok,0,' "$WORK/peermem.csv")
[ "$direct" -eq 24 ] || { cat "$WORK/peermem.csv"; fail "peermem: $direct of 24 direct rows ok with reg peermem"; }
grep -q 'ibv_reg_dmabuf_mr: Operation not supported' "$WORK/write_bw-peermem.out" ||
	{ show write_bw-peermem; fail "peermem: the header does not give the dma-buf attempt's EOPNOTSUPP"; }
pass "peermem: direct path registered with ibv_reg_mr (peer memory) and validated; dma-buf EOPNOTSUPP in the header"

# mlx5 would copy small received messages out of the completion entry into the
# buffer with the CPU: with device receive buffers gdrbench turns that off.
grep -q '^# scatter-to-CQE: off (MLX5_SCATTER_TO_CQE=0' "$WORK/send_lat-strict.out" ||
	{ show send_lat-strict; fail "device memory: the header does not say scatter-to-CQE is off"; }
pass "device receive buffers: scatter-to-CQE off, said in the header"

# The doctor's check 4 registers GPU memory with rxe0 for real: dma-buf refused
# in both modes; peer memory refused (EFAULT) in strict mode, accepted in peermem.
for mode in strict peermem; do
	[ "$(status_of "doctor-$mode")" -le 1 ] || { show "doctor-$mode"; fail "gdrb_doctor ($mode) exited $(status_of "doctor-$mode")"; }
	no_simgpu_errors "$WORK/doctor-$mode.err"
done
grep -q '^  4 gpu-registration  *FAIL ' "$WORK/doctor-strict.out" &&
	grep -q 'FAIL rxe0 with GPU 0 (0000:3B:00.0): dma-buf: .*Operation not supported' "$WORK/doctor-strict.out" &&
	grep -q 'FAIL rxe0 with GPU 0 (0000:3B:00.0): peer memory: ibv_reg_mr: Bad address' "$WORK/doctor-strict.out" ||
	{ show doctor-strict; fail "doctor check 4 (strict): both registrations must fail with their reasons"; }
grep -q '^  4 gpu-registration  *WARN  *1 of 1 RDMA devices registered GPU memory' "$WORK/doctor-peermem.out" &&
	grep -q 'PASS rxe0 with GPU 0 (0000:3B:00.0): peer memory' "$WORK/doctor-peermem.out" &&
	grep -q 'WARN rxe0 with GPU 0 (0000:3B:00.0): dma-buf: .*Operation not supported' "$WORK/doctor-peermem.out" ||
	{ show doctor-peermem; fail "doctor check 4 (peermem): peer memory must register, dma-buf fail with its reason"; }
grep -q '^  3 gpus .*1 device' "$WORK/doctor-peermem.out" || { show doctor-peermem; fail "doctor check 3: no CUDA device"; }
pass "gdrb_doctor checks 3 and 4 on the simulated GPU: strict FAIL (EOPNOTSUPP, EFAULT), peermem WARN: registered by peer memory, not by dma-buf"

# GPUDirect writes are flushed before device memory is read back for validation.
[ -s "$WORK/trace" ] || fail "no simulator trace"
# Lines are "PID call ..."; validation reads device memory into a pageable host chunk.
awk '$2 == "cudaDeviceFlushGPUDirectRDMAWrites" { flushed[$1] = 1 }
	$2 == "cudaMemcpy" && /pageable<-device/ { if (!flushed[$1]) bad++; flushed[$1] = 0; reads++ }
	END { exit bad || !reads }' "$WORK/trace" ||
	fail "device memory was read back without cudaDeviceFlushGPUDirectRDMAWrites before it"
pass "every validation read of device memory follows cudaDeviceFlushGPUDirectRDMAWrites"
