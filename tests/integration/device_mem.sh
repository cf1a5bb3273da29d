#!/bin/bash
# Device memory on the simulated GPU (tests/support/simgpu, strict mode: a CPU touch of
# device memory faults, early-returning copies land late). Every MPI
# point-to-point binary and every collective (2, 3 and 4 ranks, in place too)
# with --mem device -c: staged rows validated, direct rows unsupported with the
# reason on an MPI that is not CUDA-aware; the header and CSV say the GPU was
# simulated. Then a node without a driver: exit 77 with the reason.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi
use_simgpu strict

csv=$WORK/dev.csv
run() { # NP BINARY ARGS...
	local np=$1 b=$2
	shift 2
	mpi "$np" "$top_builddir/mpi/gdrb_mpi_$b" -c --mem device --csv "$csv" "$@" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b np=$np --mem device $*"; }
	no_simgpu_errors "$WORK/err"
	grep -q "^# GPU: gdrbench simulated GPU (simgpu), PCI 0000:3B:00.0" "$WORK/out" ||
		{ cat "$WORK/out"; fail "gdrb_mpi_$b: the header names no simulated GPU"; }
	grep -q "^# NOTE: the GPU is simulated" "$WORK/out" || fail "gdrb_mpi_$b: no 'simulated' note"
	grep -q "^# path staged: " "$WORK/out" || fail "gdrb_mpi_$b: no staged path"
}

rows=0
for b in latency bw bibw; do
	run 2 "$b" -m 8,64K,4M -t 0.05
	rows=$((rows + 6))
done
pass "point-to-point: latency, bw, bibw on device memory"

colls="allreduce allgather reduce_scatter alltoall bcast reduce gather scatter"
# Sanitized, one count (3, odd): mpi_coll.sh runs every collective at 2 and 3 ranks there, and
# the staging around a collective (copies of the whole buffers) is one code path at any count.
nps=$(rank_counts)
[ "${GDRB_SANITIZE:-0}" = 1 ] && nps=3
for np in $nps; do
	for b in $colls; do
		run "$np" "$b" -m 8,64K -t 0.01 -n 20 -w 2
		rows=$((rows + 4))
	done
	pass "np=$np: every collective on device memory"
done
for b in allreduce allgather reduce_scatter alltoall reduce gather scatter; do
	run 3 "$b" -m 12,3K -t 0.01 -n 20 -w 2 --in-place
	rows=$((rows + 4))
done
pass "--in-place collectives on device memory"

csv_check -v rows=$rows "$csv" || fail "schema"
staged=$(grep -c ',device,staged,staged,.*,ok,0,' "$csv")
[ "$staged" -eq $((rows / 2)) ] || fail "$staged of $((rows / 2)) staged rows ok"
direct=$(grep -c ',device,direct,mpi-cuda,.*,unsupported,0,' "$csv")
[ "$direct" -eq $((rows / 2)) ] || fail "$direct of $((rows / 2)) direct rows unsupported on a non-CUDA-aware MPI"
[ "$(grep -vc 'gdrbench simulated GPU' "$csv")" -eq 1 ] || fail "a CSV row lacks the simulated GPU's name"
pass "device memory: $staged staged rows validated, direct unsupported with the reason"

# The transport MPI used: this Open MPI prints no UCX protocol table (its ob1, or a UCX
# without them), so every row that ran says unknown and why, never a transport by
# assumption; a path that did not run names none.
n=$(csv_count "$csv" path=staged transport=unknown note~'transport unknown: rank [0-9]+: .*') ||
	fail "csv_count"
[ "$n" -eq $((rows / 2)) ] || fail "$n of $((rows / 2)) staged rows say transport unknown with the reason"
n=$(csv_count "$csv" path=direct transport=) || fail "csv_count"
[ "$n" -eq $((rows / 2)) ] || fail "$n of $((rows / 2)) unsupported direct rows name no transport"
grep -q '^# transport: unknown, ' "$WORK/out" || { cat "$WORK/out"; fail "the header does not say the transport is unknown"; }
pass "transport: unknown with the reason on every staged row, none on the direct rows that did not run"

# Who decides that the direct path hands MPI device pointers: MPI itself (auto,
# here: not CUDA-aware), or --mpi-cuda no whatever MPI says.
dev1() { # ARGS...: one latency run on device memory, no CSV
	mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8 -t 0.02 -n 20 --mem device "$@" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_latency --mem device $*"; }
	no_simgpu_errors "$WORK/err"
}
dev1
grep -Eq "^# path direct: n/a: .* is not CUDA-aware \(by (MPIX_Query_cuda_support\(\) = 0|MPIX_CUDA_AWARE_SUPPORT = 0|default: this MPI has neither)" "$WORK/out" ||
	{ cat "$WORK/out"; fail "auto: the direct path is not n/a with MPI's own answer"; }
dev1 --mpi-cuda no
grep -q "^# path direct: n/a: --mpi-cuda no: " "$WORK/out" ||
	{ cat "$WORK/out"; fail "--mpi-cuda no: the direct path is not n/a naming the option"; }
pass "the direct path is n/a by MPI's own answer, and by --mpi-cuda no"

# Two GPUs whose CUDA order is not their PCI order: each rank takes local rank
# modulo the count, --gpu overrides it, and the header names the one used.
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 mpi 2 -x SIMGPU_DEVICES "$top_builddir/mpi/gdrb_mpi_bw" \
	-m 64K -c -t 0.02 -n 20 --mem device >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "two simulated GPUs"; }
grep -q '^# GPU: gdrbench simulated GPU (simgpu), PCI 0000:B1:00.0 (rank 0: device 0 of 2)' "$WORK/out" ||
	{ cat "$WORK/out"; fail "two GPUs: rank 0 does not use CUDA device 0 (PCI 0000:B1:00.0)"; }
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 mpi 2 -x SIMGPU_DEVICES "$top_builddir/mpi/gdrb_mpi_bw" \
	-m 64K -c -t 0.02 -n 20 --mem device --gpu 1 >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "--gpu 1"; }
grep -q '^# GPU: gdrbench simulated GPU (simgpu), PCI 0000:17:00.0 (rank 0: device 1 of 2)' "$WORK/out" ||
	{ cat "$WORK/out"; fail "--gpu 1 does not select CUDA device 1 (PCI 0000:17:00.0)"; }
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 CUDA_VISIBLE_DEVICES=1 mpi 2 -x SIMGPU_DEVICES -x CUDA_VISIBLE_DEVICES \
	"$top_builddir/mpi/gdrb_mpi_bw" -m 64K -t 0.02 -n 20 --mem device >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "CUDA_VISIBLE_DEVICES=1"; }
grep -q 'PCI 0000:17:00.0 (rank 0: device 0 of 1)' "$WORK/out" || { cat "$WORK/out"; fail "CUDA_VISIBLE_DEVICES not honoured"; }
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 mpi 2 -x SIMGPU_DEVICES "$top_builddir/mpi/gdrb_mpi_bw" \
	-m 64K --mem device --gpu 2 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--gpu 2: this node has 2 GPU(s), 0..1" "$WORK/err" ||
	{ cat "$WORK/err"; fail "--gpu 2 with two GPUs: exit $rc, expected 2 naming the GPUs there are"; }
pass "two GPUs: local rank picks the CUDA device, --gpu and CUDA_VISIBLE_DEVICES are honoured"

# Ranks on one GPU (results/gpu-h200: time-sliced without MPS) are named in the
# header and in each measured row's note; ranks on GPUs of their own are not.
shared_run() { # NP ARGS...: gdrb_mpi_latency, CSV in $WORK/sh.csv
	local np=$1
	shift
	rm -f "$WORK/sh.csv"
	mpi "$np" -x SIMGPU_DEVICES -x SIMGPU_MPS "$top_builddir/mpi/gdrb_mpi_latency" -m 8 -t 0.02 -n 20 \
		--csv "$WORK/sh.csv" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "shared GPU: np=$np $*"; }
}
export SIMGPU_DEVICES=0000:b1:00.0 SIMGPU_MPS=0
shared_run 2 --mem device
grep -q "^# NOTE: 2 ranks share GPU 0000:B1:00.0 on [^ ]* (MPS off): without MPS the GPU time-slices" "$WORK/out" ||
	{ cat "$WORK/out"; fail "two ranks on one GPU: no note in the header"; }
[ "$(csv_count "$WORK/sh.csv" path=staged 'note~.*2 ranks share GPU 0000:B1:00\.0 on .* \(MPS off\)')" -eq 1 ] ||
	{ cat "$WORK/sh.csv"; fail "two ranks on one GPU: the staged row's note does not say so"; }
SIMGPU_MPS=1 shared_run 2 --mem device
grep -q "^# NOTE: 2 ranks share GPU 0000:B1:00.0 on [^ ]* (MPS on): the ranks share its copy engines" "$WORK/out" ||
	{ cat "$WORK/out"; fail "two ranks on one GPU under MPS: not said so"; }
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 shared_run 4 --mem device
grep -q "^# NOTE: 2 ranks share GPU 0000:B1:00.0 on [^ ]* (MPS off); 2 ranks share GPU 0000:17:00.0 on " "$WORK/out" ||
	{ cat "$WORK/out"; fail "four ranks on two GPUs: not both GPUs named"; }
SIMGPU_DEVICES=0000:b1:00.0,0000:17:00.0 shared_run 2 --mem device
grep -q "share GPU" "$WORK/out" "$WORK/sh.csv" && { cat "$WORK/out"; fail "a GPU per rank: a sharing note"; }
shared_run 2 --mem pinned
grep -q "share GPU" "$WORK/out" "$WORK/sh.csv" && { cat "$WORK/out"; fail "pinned memory: a sharing note"; }
unset SIMGPU_DEVICES SIMGPU_MPS
pass "ranks that share a GPU are named (MPS off or on); a GPU per rank, or pinned memory, is not"

# Rails: each rank's GPU and the NIC nearest it, read from an HGX-shaped sysfs tree (two GPUs
# and two NICs under each PCIe switch): local rank i on CUDA device i, each with a NIC of its own.
fx=$top_builddir/tests/fixtures/hgx-h200/sys
[ -d "$fx" ] || fail "no fixture tree $fx (make check generates it)"
SIMGPU_DEVICES=0000:13:00.0,0000:14:00.0 GDRB_INJECT_SYSFS_ROOT=$fx mpi 2 -x SIMGPU_DEVICES -x GDRB_INJECT_SYSFS_ROOT \
	"$top_builddir/mpi/gdrb_mpi_bw" -m 64K -t 0.02 -n 20 --mem device >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "rails: two simulated GPUs on the HGX tree"; }
grep -q '^# rails (each rank.s GPU, and the NIC nearest it by PCI distance): [^ ]* local rank 0: GPU 0 0000:13:00.0, NIC mlx5_0 (PIX); [^ ]* local rank 1: GPU 1 0000:14:00.0, NIC mlx5_1 (PIX)$' "$WORK/out" ||
	{ cat "$WORK/out"; fail "rails: the header does not name each local rank's GPU and its own nearest NIC"; }
SIMGPU_DEVICES=0000:13:00.0,0000:14:00.0 GDRB_INJECT_SYSFS_ROOT=$fx mpi 2 -x SIMGPU_DEVICES -x GDRB_INJECT_SYSFS_ROOT \
	"$top_builddir/mpi/gdrb_mpi_bw" -m 64K -t 0.02 -n 20 --mem pinned >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "rails: pinned memory"; }
grep -q '^# rails' "$WORK/out" && { cat "$WORK/out"; fail "rails: a line for a run without a GPU buffer"; }
pass "rails: the header names each local rank's GPU and its nearest NIC"

# Validation reads device memory back through CUDA: a flipped byte in a device
# receive buffer must be caught.
GDRB_INJECT_CORRUPTION=1 mpi 2 -x GDRB_INJECT_CORRUPTION "$top_builddir/mpi/gdrb_mpi_latency" \
	-m 8,4K -c -t 0.02 -n 20 --mem device --csv "$WORK/bad.csv" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "corrupted device memory: exit $rc, expected 1"; }
csv_check -v status=invalid-data -v rows=2 <(grep -v ',direct,' "$WORK/bad.csv") ||
	fail "corrupted device memory: staged rows are not invalid-data"
pass "a flipped byte in device memory is caught (exit 1, invalid-data)"

# Without a driver (a node whose CUDA runtime finds no GPU): 77, one line, nothing measured.
SIMGPU_DRIVER=none mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8 --mem device >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "--mem device without a driver exited $rc, expected 77"; }
grep -q "unsupported on this node: --mem device: .*cudaErrorInsufficientDriver" "$WORK/err" ||
	{ cat "$WORK/err"; fail "no reason given"; }
[ "$(our_lines gdrb_mpi_latency "$WORK/err")" -eq 1 ] || fail "the reason is not one line"
grep -qv '^#' "$WORK/out" && fail "something was measured"
pass "no driver: exit 77 with $(grep -m1 unsupported "$WORK/err")"
