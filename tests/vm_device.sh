#!/bin/bash
# The six verbs binaries on GPU memory, in the soft-RoCE VM (tests/vm/rxe-vm.sh)
# with the simulated GPU (tests/simgpu), validation on, in its two modes:
#  - strict (a node without nvidia_peermem): ibv_reg_dmabuf_mr answers EOPNOTSUPP
#    (soft-RoCE has no dma-buf) and ibv_reg_mr on device memory EFAULT, so the
#    direct path is unsupported with both errors in the note; staged is validated;
#  - peermem (a node with nvidia_peermem): ibv_reg_mr on device memory works, so
#    the direct path runs with reg peermem and is validated, the dma-buf
#    EOPNOTSUPP stands in the header; GPUDirect writes are flushed before
#    validation reads device memory back (the simulator's call trace shows it).
# Both: scatter-to-CQE is off for device receive buffers (the header says so);
# gdrb_doctor's checks 3 and 4 (CUDA devices, GPU memory registration) for real.
# Skips (77) only where the VM cannot be had: no qemu, no kernel package.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need_mpi
[ -x "$top_builddir/bench/gdrb_write_lat" ] || skip "verbs benchmarks not built (no libibverbs at configure time)"
use_simgpu strict
need_vm

cat >"$WORK/inside.sh" <<'INSIDE'
# Runs inside the VM: $1 the shared work directory, $2 the build tree.
out=$1 bin=$2/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # NAME CSV BINARY ARGS...: one run, its output and exit status kept
	local name=$1 csv=$2 b=$3
	shift 3
	timeout 120 mpirun -np 2 --mca pml ob1 --mca btl self,vader,tcp -x SIMGPU_MODE -x SIMGPU_TRACE \
		-x LD_LIBRARY_PATH "$bin/gdrb_$b" -n 20 -w 2 -t 0.05 -c -T 30 --mem device \
		--csv "$out/$csv" "$@" >"$out/$name.out" 2>"$out/$name.err"
	echo "$name $?" >>"$out/rc"
}
for mode in strict peermem; do
	export SIMGPU_MODE=$mode SIMGPU_TRACE=
	for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
		[ "$mode/$b" = peermem/write_bw ] && export SIMGPU_TRACE=$out/trace
		run "$b-$mode" "$mode.csv" "$b" -m 8,4K,64K
	done
	export SIMGPU_TRACE=
	"$bin/gdrb_doctor" >"$out/doctor-$mode.out" 2>"$out/doctor-$mode.err"
	echo "doctor-$mode $?" >>"$out/rc"
done
INSIDE

vm_inside
for mode in strict peermem; do
	for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
		[ "$(status_of "$b-$mode")" = 0 ] || { show "$b-$mode"; fail "gdrb_$b --mem device ($mode) failed in the VM"; }
		no_simgpu_errors "$WORK/$b-$mode.err"
		grep -q '^# GPU: gdrbench simulated GPU (simgpu)' "$WORK/$b-$mode.out" ||
			{ show "$b-$mode"; fail "gdrb_$b ($mode): no simulated GPU in the header"; }
	done
	csv_check -v rows=36 -v ranks=2 "$WORK/$mode.csv" || fail "$mode.csv: schema or row count"
	staged=$(grep -c ',device,staged,staged,.*,ok,0,' "$WORK/$mode.csv")
	[ "$staged" -eq 18 ] || { cat "$WORK/$mode.csv"; fail "$mode: $staged of 18 staged rows validated"; }
done
pass "strict and peermem: 6 verbs binaries x 3 sizes, staged path validated on device memory"

# strict: the direct path is unsupported, and the note says why with both attempts.
direct=$(grep -c ',device,direct,[a-z]*,.*,unsupported,0,' "$WORK/strict.csv")
[ "$direct" -eq 18 ] || { cat "$WORK/strict.csv"; fail "strict: $direct of 18 direct rows unsupported"; }
grep ',device,direct,' "$WORK/strict.csv" | grep -v 'ibv_reg_dmabuf_mr: Operation not supported' |
	grep -q . && fail "strict: a direct row's note lacks the dma-buf EOPNOTSUPP"
grep ',device,direct,' "$WORK/strict.csv" | grep -v 'ibv_reg_mr: Bad address' |
	grep -q . && fail "strict: a direct row's note lacks the peer-memory EFAULT"
pass "strict: direct unsupported, note: $(grep -m1 -o 'ibv_reg_dmabuf_mr: [^;]*' "$WORK/strict.csv" | head -c 120)..."

# peermem: the direct path registered with peer memory and validated.
direct=$(grep -c ',device,direct,peermem,.*,ok,0,' "$WORK/peermem.csv")
[ "$direct" -eq 18 ] || { cat "$WORK/peermem.csv"; fail "peermem: $direct of 18 direct rows ok with reg peermem"; }
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
