#!/bin/bash
# gdrb rails --layer nccl on the simulated NCCL and GPU (docs/rails.md): each rail's job is the
# real gdrb_nccl_sendrecv, one rank per "node" (a UTS namespace of its own, so that NCCL's
# per-host duplicate-GPU check and gdrbench's host names see two nodes on this machine), on GPU
# i with --nccl-net-only and NCCL_IB_HCA==NIC i. The header of every job shows the variable and
# --nccl-net-only's settings in force in NCCL's process, the rows crossed NET/IB on the rail's
# NIC (their nic column, from NCCL's log), and the verdict is SIMULATED (exit 1), never PASS. A
# NCCL that ignores the variable has rails 1 and 2 named as not on their NIC; with a GPU
# missing for rail 2, that rail is named as not measured (INVALID, exit 3) and the others not.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl
command -v python3 >/dev/null 2>&1 || skip "python3 not installed (gdrb rails)"
command -v unshare >/dev/null 2>&1 || skip "no unshare (util-linux)"
unshare -u true 2>/dev/null || skip "unshare -u refused here (needs root or user namespaces)"
export SIMNCCL_RANKS_PER_NODE=1

# A launcher for gdrb rails: the real one on this machine, each rank in a UTS namespace named
# rnodeR; `hostname` (gdrb rails' reach check) answers for every host.
launcher=$WORK/mpirun
cat >"$launcher" <<EOF
#!/bin/bash
np=1
env=()
while [ \$# -gt 0 ]; do
	case \$1 in
	-np) np=\$2; shift 2 ;;
	--host) shift 2 ;;
	--allow-run-as-root) shift ;;
	-x) env+=(-x "\$2"); shift 2 ;;
	*) break ;;
	esac
done
[ "\$1" = hostname ] && exit 0
exec $MPIRUN --oversubscribe -np "\$np" "\${env[@]}" unshare -u sh -c 'hostname "rnode\$OMPI_COMM_WORLD_RANK" && exec "\$@"' sh "\$@"
EOF
chmod +x "$launcher"

# rails NAME ARGS...: gdrb rails into $WORK/NAME, its output in $WORK/NAME.out, its status echoed.
rails() {
	local name=$1 rc=0
	shift
	python3 "$top_srcdir/scripts/gdrb" rails --hosts a,b --nics mlx5_0,mlx5_1,mlx5_2 --layer nccl \
		--mem device --size 1M --time 0.05 --lead 2 --timeout 120 --mpirun "$launcher" \
		--bin-dir "$top_builddir" "$@" "$WORK/$name" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	echo "$rc"
}

export SIMGPU_DEVICES=0000:3b:00.0,0000:5e:00.0,0000:86:00.0
rc=$(rails sim)
[ "$rc" -eq 1 ] || { cat "$WORK/sim.out" "$WORK/sim.err"; tail -n 5 "$WORK"/sim/*/rail-*/launch.log; fail "simulated NCCL: exit $rc, expected 1 (SIMULATED)"; }
grep -q '^rails: SIMULATED: simulated rows are never a PASS$' "$WORK/sim.out" || { cat "$WORK/sim.out"; fail "no SIMULATED verdict"; }
grep -q '^all rails at once: gdrb_nccl_sendrecv has no --start-at' "$WORK/sim.out" || { cat "$WORK/sim.out"; fail "the report does not say the NCCL jobs lack a common start"; }
for k in 0 1 2; do
	for run in alone all-1; do
		d=$WORK/sim/$run/rail-$k
		grep -q "^# NCCL environment (rank 0): NCCL_IB_HCA==mlx5_$k NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0" "$d/stdout.txt" ||
			{ grep '^#' "$d/stdout.txt"; fail "$run rail $k: NCCL did not run with NCCL_IB_HCA==mlx5_$k and --nccl-net-only"; }
		grep -q -- "--nccl-net-only --gpu $k$" "$d/launch.log" || { head -1 "$d/launch.log"; fail "$run rail $k: not on GPU $k"; }
		[ "$(csv_count "$d/results.csv" benchmark=nccl_sendrecv transport=NET/IB nic="mlx5_$k:1" status=ok)" -ge 1 ] ||
			{ cat "$d/results.csv"; fail "$run rail $k: no row that crossed NET/IB on mlx5_$k"; }
	done
done
[ "$(grep -c '^all,1,' "$WORK/sim/rails.csv")" -eq 3 ] || { cat "$WORK/sim/rails.csv"; fail "rails.csv: not one all-rails row per rail"; }
pass "simulated NCCL: 3 rails alone and together, each NCCL on NCCL_IB_HCA==its NIC with --nccl-net-only, over NET/IB on it; SIMULATED, exit 1"

# A NCCL that ignores NCCL_IB_HCA (SIMNCCL_NIC holds it on mlx5_0): rails 1 and 2 are named
# as not shown on their NIC, from the rows' nic column, and rail 0 is not.
rc=$(SIMNCCL_NIC=mlx5_0 rails offrail)
[ "$rc" -eq 3 ] || { cat "$WORK/offrail.out" "$WORK/offrail.err"; fail "NCCL off its rail: exit $rc, expected 3 (INVALID)"; }
for k in 1 2; do
	grep -q "^INVALID rail $k (mlx5_$k) alone: .*results.csv: the library used mlx5_0, not mlx5_$k alone" "$WORK/offrail.out" ||
		{ cat "$WORK/offrail.out"; fail "rail $k on mlx5_0 not named"; }
done
grep -q '^INVALID rail 0 ' "$WORK/offrail.out" && { cat "$WORK/offrail.out"; fail "rail 0, on its NIC, was named"; }
pass "a NCCL that ignored NCCL_IB_HCA (on mlx5_0 for every rail): rails 1 and 2 INVALID from the rows' nic column, rail 0 not"

# Rail 2's GPU missing: its job fails and it is named; nothing passes.
export SIMGPU_DEVICES=0000:3b:00.0,0000:5e:00.0
rc=$(rails nogpu)
[ "$rc" -eq 3 ] || { cat "$WORK/nogpu.out" "$WORK/nogpu.err"; fail "a rail without its GPU: exit $rc, expected 3 (INVALID)"; }
grep -q '^INVALID rail 2 (mlx5_2) alone: the job exited ' "$WORK/nogpu.out" || { cat "$WORK/nogpu.out"; fail "rail 2 not named as not measured"; }
grep -q '^INVALID rail [01] ' "$WORK/nogpu.out" && { cat "$WORK/nogpu.out"; fail "a rail that ran was named"; }
pass "a rail whose GPU is missing is named INVALID (exit 3), the others not"
