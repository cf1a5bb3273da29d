#!/bin/bash
# gdrb_write_pairs (all pairs over RDMA writes, one RC QP per peer) for real, in the soft-RoCE VM
# (tests/cluster/vm/rxe-vm.sh), 2 and 4 ranks over rxe0: bandwidth and latency matrices complete and the
# pairs CSV valid against common/core/pairs_schema.def, with host and pinned memory; messages
# split into 16 KiB work requests; --rounds samples the seeded shifts and only the peers of those
# shifts get a QP; device memory on the simulated GPU (tests/support/simgpu): direct through peer memory
# and staged where nvidia_peermem stands in (peermem), direct skipped with both registration
# errors and "GDR: no" where it does not (strict); a corrupted byte caught; a rank stopped in
# round 2 named within --timeout with round 1 kept. Options that do not apply are refused outside
# the VM. Skips (77) only where the VM cannot be had: no qemu, no kernel package.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
bin=$top_builddir/bench/gdrb_write_pairs
[ -x "$bin" ] || skip "gdrb_write_pairs not built (no libibverbs at configure time)"

# No device is needed to refuse what all pairs over verbs does not take.
expect_refused "--qps does not apply to" "$bin" --qps 2
expect_refused "--wait does not apply to" "$bin" --wait event
expect_refused "--staging both, --stage-chunk, --stage-slots and --buffers single do not apply" "$bin" --mem device --staging both

# Device memory needs the simulated GPU, built with CUDA; without it the device runs are left
# out, and said to be.
export SIM=0
if [ "${HAVE_CUDA:-1}" = 1 ] && ls "$top_builddir"/tests/support/simgpu/lib/libcudart.so.* >/dev/null 2>&1; then
	use_simgpu strict
	SIM=1
fi
need_vm

cat >"$WORK/inside.sh" <<'INSIDE'
# Runs inside the VM: $1 the shared work directory, $2 the build tree, $3 the source tree.
. "$3/tests/cluster/vm/prelude.sh"
# The test hooks below (GDRB_INJECT_*, GDRB_VERBS_MAX_MSG) run only with the test switch.
export GDRB_TEST_HOOKS=1
bin=$bin/gdrb_write_pairs
# NAME NP ARGS...: one run into $out/NAME/, its output and exit status kept; -T (the benchmark's
# watchdog) stretched as the run's limit is, unless a run sets $timeout.
run() {
	local name=$1 np=$2 t0=$SECONDS
	shift 2
	mkdir -p "$out/$name"
	timeout "$(vm_limit 300)" mpirun -np "$np" --oversubscribe --mca pml ob1 --mca btl self,vader \
		-x SIMGPU_MODE -x LD_LIBRARY_PATH -x GDRB_TEST_HOOKS -x GDRB_INJECT_CORRUPTION -x GDRB_INJECT_PAIRS_STOP \
		-x GDRB_VERBS_MAX_MSG \
		"$bin" -t 0.005 -W 2 -T "${timeout:-$(vm_limit 30)}" --csv "$out/$name/pairs.csv" "$@" \
		>"$out/$name/out" 2>"$out/$name/err"
	echo "$name $?" >>"$out/rc"
	echo "$name $((SECONDS - t0)) s" >>"$out/times"
}
export SIMGPU_MODE=strict GDRB_INJECT_CORRUPTION= GDRB_INJECT_PAIRS_STOP= GDRB_VERBS_MAX_MSG=
run host2 2 -m 8,64K --metric bw,lat --mem host
run pinned4 4 -m 8,64K --metric bw,lat --mem pinned
GDRB_VERBS_MAX_MSG=16K run split3 3 -m 64K --metric bw,lat
run rounds5 5 -m 4K --rounds 2 --seed 42
GDRB_INJECT_CORRUPTION=1 run corrupt 3 -m 4K
if [ "$SIM" = 1 ]; then
	for mode in peermem strict; do
		SIMGPU_MODE=$mode run "dev-$mode" 3 -m 8,64K --metric bw,lat --mem device
	done
	SIMGPU_MODE=peermem GDRB_INJECT_CORRUPTION=2 run corrupt-dev 3 -m 4K --mem device
fi
# Rank 2 stops (SIGSTOP) as round 2 begins; its peers must name it (mpirun then kills it).
GDRB_INJECT_PAIRS_STOP=2:2 timeout=3 run stop 4 -m 64K
INSIDE

vm_inside
echo "seconds per run in the VM:"
sed 's/^/  /' "$WORK/times"

ok_run() { # NAME
	[ "$(status_of "$1")" = 0 ] || { cat "$WORK/$1/out" "$WORK/$1/err"; fail "$1 exited $(status_of "$1") in the VM"; }
	no_simgpu_errors "$WORK/$1/err"
}

# The checkers catch their faults (as mpi_pairs.sh shows for its own rows): a hole in a matrix.
printf 'src\\dst,0,1\n0,,1.0\n1,,\n' >"$WORK/m.csv"
pairs_matrix_check "$WORK/m.csv" 2 all >/dev/null && fail "pairs_matrix_check passes a missing cell"

# Host and pinned memory, 2 and 4 ranks: every cell of every matrix, the rows, the rank table.
for run in host2:2:host pinned4:4:pinned; do
	IFS=: read -r name np mem <<<"$run"
	d=$WORK/$name
	ok_run "$name"
	pairs_check "$d/pairs.csv" -v rows=$((np * (np - 1) * 4)) -v status=ok -v shift=1 -v ranks="$np" ||
		fail "$name: the pairs CSV"
	for f in pairs-65536-direct pairs-8-direct pairs-lat-65536-direct pairs-lat-8-direct; do
		pairs_matrix_check "$d/$f.csv" "$np" all || fail "$name: $f.csv"
	done
	[ "$(pairs_count "$d/pairs.csv" benchmark=write_pairs layer=verbs mem="$mem" path=direct reg=host src_nic=rxe0:1 \
		dst_nic=rxe0:1)" -eq $((np * (np - 1) * 4)) ] ||
		{ head -3 "$d/pairs.csv"; fail "$name: rows are not write_pairs, verbs, $mem, direct, reg host, NIC rxe0:1"; }
	[ "$(ranks_count "$d/pairs-ranks.csv" 'rank~[0-9]*' host=gdrb-vm 'local_rank~[0-9]*' gpu= nic=rxe0:1)" -eq "$np" ] ||
		{ cat "$d/pairs-ranks.csv"; fail "$name: the rank table does not name rxe0:1"; }
	grep -q "^# NIC rxe0:1 (rank 0): Ethernet (RoCE), .*GID index 1 .*(RoCE v2).*; $((np - 1)) RC QP(s), one per peer met" "$d/out" &&
		grep -q '^# completion: a window is RDMA writes, the last with immediate' "$d/out" &&
		grep -q '^# GDR: n/a (host memory)' "$d/out" ||
		{ cat "$d/out"; fail "$name: the header does not give the NIC, the QPs, the completion and GDR"; }
	grep -q "^# matrix bw 64KiB direct" "$d/out" || { cat "$d/out"; fail "$name: no matrix on stdout"; }
	pass "$name: np $np, --mem $mem: complete bw and lat matrices over rxe0 ($((np - 1)) QPs a rank), $((np * (np - 1) * 4)) rows, rank table"
done

# 64 KiB messages in 16 KiB work requests.
d=$WORK/split3
ok_run split3
pairs_check "$d/pairs.csv" -v rows=12 -v status=ok -v shift=1 -v ranks=3 || fail "split: the pairs CSV"
grep -q 'at most 16KiB per work request' "$d/out" || { cat "$d/out"; fail "split: the header does not show 16 KiB work requests"; }
pass "64 KiB messages in 16 KiB work requests: bw and lat validated, 3 ranks"

# --rounds 2 of 4: the cells of the two shifts, and QPs only for the peers those shifts meet.
d=$WORK/rounds5
ok_run rounds5
shifts=$(sed -n 's/^# rounds: 2 of 4, shifts \([0-9,]*\); seed 42 .*/\1/p' "$d/out")
[ -n "$shifts" ] || { cat "$d/out"; fail "--rounds 2: the header does not give 2 of 4 shifts and seed 42"; }
cells=
for k in ${shifts//,/ }; do for i in 0 1 2 3 4; do cells+="$i:$(((i + k) % 5)) "; done; done
pairs_matrix_check "$d/pairs-4096-direct.csv" 5 "$cells" || fail "--rounds 2: cells of shifts $shifts"
pairs_check "$d/pairs.csv" -v rows=10 -v status=ok -v shift=1 -v ranks=5 || fail "--rounds 2: CSV"
qps=$(sed -n 's/^# NIC .*; \([0-9]*\) RC QP(s), one per peer met.*/\1/p' "$d/out")
# Shifts k and 5 - k meet the same two peers; any other two shifts meet four.
IFS=, read -r k1 k2 <<<"$shifts"
want=4
[ $((k1 + k2)) -eq 5 ] && want=2
[ "$qps" = "$want" ] || { cat "$d/out"; fail "--rounds 2 (shifts $shifts): $qps QPs, expected $want (the peers met)"; }
pass "--rounds 2 --seed 42: shifts $shifts measured, $qps QPs a rank (only the peers met of 4)"

# Device memory on the simulated GPU, direct and staged side by side.
device_checks() {
	d=$WORK/dev-peermem
	ok_run dev-peermem
	pairs_check "$d/pairs.csv" -v rows=48 -v status=ok || fail "device (peermem): CSV"
	for f in pairs-65536-direct pairs-65536-staged pairs-lat-8-direct pairs-lat-8-staged; do
		pairs_matrix_check "$d/$f.csv" 3 all || fail "device (peermem): $f.csv"
	done
	[ "$(grep -c ',device,direct,peermem,' "$d/pairs.csv")" -eq 24 ] &&
		[ "$(grep -c ',device,staged,staged,' "$d/pairs.csv")" -eq 24 ] ||
		{ cat "$d/pairs.csv"; fail "device (peermem): not 24 direct rows registered by peer memory and 24 staged"; }
	grep -q '^# GDR: yes: GPU memory registered with the NIC through peermem on every rank' "$d/out" &&
		grep -q '^# path direct: GPUDirect RDMA: the NIC reads and writes GPU memory registered through peer memory' "$d/out" ||
		{ cat "$d/out"; fail "device (peermem): the header does not say GDR: yes through peer memory"; }
	grep -qx "# NOTE: the GPU is simulated (the test suite's stand-in for CUDA): these rows prove behaviour, never speed" "$d/out" ||
		fail "device: no NOTE that the GPU is simulated"
	[ "$(ranks_count "$d/pairs-ranks.csv" 'rank~[0-9]' host=gdrb-vm 'local_rank~[0-9]' gpu=0000:3b:00.0 nic=rxe0:1)" -eq 3 ] ||
		{ cat "$d/pairs-ranks.csv"; fail "device: the rank table lacks the GPU bus id and the NIC"; }
	pass "--mem device (peermem): direct (GPUDirect through peer memory) and staged bw and lat matrices complete, 'GDR: yes'"

	d=$WORK/dev-strict
	ok_run dev-strict
	pairs_check "$d/pairs.csv" -v rows=48 || fail "device (strict): CSV"
	[ "$(grep -c ',device,direct,none,.*,skipped,0,.*ibv_reg_dmabuf_mr: Operation not supported.*ibv_reg_mr: Bad address' "$d/pairs.csv")" -eq 24 ] ||
		{ cat "$d/pairs.csv"; fail "device (strict): the direct rows are not skipped with both registration errors"; }
	[ "$(grep -c ',device,staged,staged,.*,ok,0,' "$d/pairs.csv")" -eq 24 ] || fail "device (strict): staged rows not ok"
	pairs_matrix_check "$d/pairs-65536-staged.csv" 3 all || fail "device (strict): staged matrix"
	[ ! -e "$d/pairs-65536-direct.csv" ] || fail "device (strict): a matrix for the skipped direct path"
	grep -q '^# GDR: no: rank 0 (gdrb-vm): GPU memory registration failed' "$d/out" ||
		{ cat "$d/out"; fail "device (strict): the header does not say GDR: no with the reason"; }
	grep -q 'GDR: yes' "$d/out" && fail "device (strict): 'GDR: yes' without a registration"
	pass "--mem device (strict): direct skipped with both registration errors, 'GDR: no', staged complete"
}
if [ "$SIM" = 1 ]; then
	device_checks
else
	echo "NOTE: --mem device not run: built without CUDA, no simulated GPU"
fi

# A flipped byte in rank 1's (rank 2's device) receive buffer: the pairs into it are errors, exit 1.
corrupt_runs=corrupt:1:
[ "$SIM" = 1 ] && corrupt_runs+=" corrupt-dev:2:,device,staged"
for c in $corrupt_runs; do
	IFS=: read -r name victim path <<<"$c"
	d=$WORK/$name
	[ "$(status_of "$name")" = 1 ] || { cat "$d/out" "$d/err"; fail "$name: exit $(status_of "$name"), expected 1"; }
	no_simgpu_errors "$d/err"
	n=$(grep -c "$path.*,bw,4096,[12],[0-9],$victim,.*,error,1," "$d/pairs.csv")
	[ "$n" -eq 2 ] || { cat "$d/pairs.csv"; fail "$name: $n of 2 pairs into rank $victim are errors with 1 wrong byte"; }
	grep -q "wrong byte(s) from rank" "$d/err" || fail "$name: no line naming the sender"
done
pass "a flipped byte is caught ($corrupt_runs): the pairs into that rank are errors, exit 1"

# The stopped rank is named within --timeout (a hang guard, as in mpi_pairs.sh), round 1 kept.
d=$WORK/stop
[ "$(status_of stop)" != 0 ] || { cat "$d/out" "$d/err"; fail "a stopped rank: exit 0"; }
grep -q "timeout: no answer from rank 2 (gdrb-vm)" "$d/err" || { cat "$d/err"; fail "the stopped rank 2 is not named"; }
pairs_matrix_check "$d/pairs-65536-direct.csv" 4 "0:1 1:2 2:3 3:0" || fail "round 1 not kept in the matrix"
pairs_check "$d/pairs.csv" -v rows=4 -v status=ok || fail "round 1 not kept in the CSV"
pass "rank 2 stopped in round 2: $(grep -m1 -o 'timeout: no answer from rank 2 ([^)]*)[^;]*' "$d/err"), round 1 kept ($(grep '^stop ' "$WORK/times" | cut -d' ' -f2-))"
