#!/bin/bash
# Queue sizing and waiting of the verbs benchmarks, for real in the soft-RoCE VM
# (tests/cluster/vm/rxe-vm.sh), whose rxe0 takes at most 32,767 entries per completion
# queue (max_cqe):
# - send_bw with 512 KiB messages in 1 KiB work requests and the default window
#   of 64 wants 32,776 receives on one QP, more than ibv_create_cq takes (EINVAL):
#   the run goes through with a window of 63, said once on stderr and in each
#   row's note; with --qps 2 the CQ is shared by two QPs (window 62).
# - write_bw's target sleeps on a completion channel by default (--wait auto) and
#   spins with --wait spin, and sleeps with --event: its CPU time
#   (cpu_responder_pct) shows it; read_bw's
#   buffer owner sleeps too; --event runs validated (send_bw, write_lat by write
#   with immediate).
# Every CSV row passes csv_check (CPU columns included). Few iterations: the VM is
# about 10x slower than the host.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
[ -x "$top_builddir/bench/gdrb_send_bw" ] || skip "verbs benchmarks not built (no libibverbs at configure time)"
need_vm

cat >"$WORK/inside.sh" <<'INSIDE'
# Runs inside the VM: $1 the shared work directory, $2 the build tree, $3 the source tree.
. "$3/tests/cluster/vm/prelude.sh"
# The test hooks below (GDRB_INJECT_*, GDRB_VERBS_MAX_MSG) run only with the test switch.
export GDRB_TEST_HOOKS=1
ibv_devinfo -v -d rxe0 | grep -E 'max_(cqe|qp_wr):' >"$out/limits"
run() { # NAME BINARY ARGS...: one run, its output and exit status kept
	local name=$1 b=$2
	shift 2
	# -T, the benchmark's own watchdog, stretched as the run's limit is.
	timeout "$(vm_limit 240)" mpirun -np 2 --mca pml ob1 --mca btl self,vader \
		"$bin/gdrb_$b" -c -T "$(vm_limit 60)" \
		--csv "$out/$name.csv" "$@" >"$out/$name.out" 2>"$out/$name.err"
	echo "$name $?" >>"$out/rc"
}
GDRB_VERBS_MAX_MSG=1K run cq send_bw -m 512K -n 2 -w 1 -t 0.01 --event
GDRB_VERBS_MAX_MSG=1K run cq2 send_bw -m 512K -n 2 -w 1 -t 0.01 --event --qps 2
run spin write_bw -m 1M -t 0.3 --wait spin
run auto write_bw -m 1M -t 0.3
run event write_bw -m 1M -t 0.3 --event
run read read_bw -m 1M -t 0.3
run lat write_lat -m 8,4K -n 50 -w 5 -t 0.05 --event
INSIDE

vm_inside

max_cqe=$(awk '$1 == "max_cqe:" { print $2 }' "$WORK/limits")
[ "$max_cqe" = 32767 ] || fail "rxe0's max_cqe is '$max_cqe', not the 32767 this test is built on"
col() { # CSV COLUMN: the column of the first data row
	csv_col "$WORK/$1" "$2" | sed -n 1p
}
for name in cq cq2 spin auto event read lat; do
	[ "$(status_of "$name")" = 0 ] || { show "$name"; fail "$name exited $(status_of "$name")"; }
	csv_check -v status=ok -v ranks=2 "$WORK/$name.csv" || fail "$name.csv does not pass csv_check"
done

[ "$(col cq.csv window)" = 63 ] || { cat "$WORK/cq.csv"; fail "cq: window $(col cq.csv window), expected 63"; }
grep -q ',"test hook GDRB_VERBS_MAX_MSG=1K; window 63, not 64: 512 receive(s) per message, room for 32759 per QP on rxe0:1 ' "$WORK/cq.csv" ||
	{ cat "$WORK/cq.csv"; fail "cq: the note does not say why the window is 63"; }
[ "$(grep -c 'warning: send_bw: window 63, not 64, at 524288 B' "$WORK/cq.err")" = 1 ] ||
	{ show cq; fail "cq: the cut window is not said once on stderr"; }
grep -q 'Invalid argument' "$WORK/cq.err" && fail "cq: EINVAL"
pass "send_bw, 512 KiB in 1 KiB work requests, window 64 asked (32,776 receives; max_cqe $max_cqe): ran validated with window 63, said in the note and once on stderr"
[ "$(col cq2.csv window)" = 62 ] || { cat "$WORK/cq2.csv"; fail "cq2: window $(col cq2.csv window), expected 62"; }
pass "the same with --qps 2 (one receive CQ for two QPs): window 62"

spin=$(col spin.csv cpu_responder_pct) auto=$(col auto.csv cpu_responder_pct)
grep -q '^# waiting: every rank polls' "$WORK/spin.out" || fail "spin: the header does not say every rank polls"
grep -q '^# waiting: the initiator polls .*the target, which only waits for the window.s end, sleeps' "$WORK/auto.out" ||
	fail "auto: the header does not say the target sleeps"
awk -v s="$spin" -v a="$auto" 'BEGIN { exit !(s >= 50 && a < s / 2) }' ||
	fail "write_bw target CPU: --wait spin $spin %, default (sleeps) $auto %: expected spin >= 50 and the sleeping one under half of it"
event=$(col event.csv cpu_responder_pct)
awk -v s="$spin" -v e="$event" 'BEGIN { exit !(e < s / 2) }' ||
	fail "write_bw --event: the target used $event % CPU; expected under half of the spinning $spin %"
pass "write_bw target CPU over the timed part: $spin % spinning, $auto % sleeping (default), $event % with --event"
read_cpu=$(col read.csv cpu_responder_pct)
awk -v r="$read_cpu" -v s="$spin" 'BEGIN { exit !(r < s / 2) }' ||
	fail "read_bw: the buffer owner used $read_cpu % CPU; expected it asleep (under half of $spin %)"
pass "read_bw: the buffer owner sleeps by default ($read_cpu % CPU)"
grep -q '^# completion: each message is an RDMA write with immediate' "$WORK/lat.out" ||
	{ show lat; fail "write_lat --event: the header does not say write with immediate"; }
pass "write_lat --event: validated ping-pong by write with immediate, both ranks sleeping between completions"
