#!/bin/bash
# The verbs benchmarks for real, in the soft-RoCE VM (tests/cluster/vm/rxe-vm.sh):
# every binary under mpirun with host memory, and with pinned memory in work requests
# split by a small largest message (the bandwidth binaries in the same run bidirectional, with
# several QPs and a window from one buffer, --buffers single), validation on, CSV rows checked;
# write latency both polling the buffer and by write with
# immediate, a corrupted byte caught; a missing device, a port that does not
# exist and a GID index out of range exit 2 naming what exists; rank 0's stdout on
# /dev/full exits 1 with one line; a peer frozen mid-run is
# named within --timeout and a link taken down mid-run gives a work completion
# error, rows measured before either fault kept. Four ranks run as two pairs. The counters
# read around every size (docs/counters.md): rxe0's hw_counters in the counter file beside
# host.csv, sent_pkts risen, and the header's and the closing lines on the port.
# Skips (77) only where the VM cannot be had: no qemu, no kernel package.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
[ -x "$top_builddir/bench/gdrb_write_lat" ] || skip "verbs benchmarks not built (no libibverbs at configure time)"
need_vm

cat >"$WORK/inside.sh" <<'INSIDE'
# Runs inside the VM: $1 the shared work directory, $2 the build tree, $3 the source tree.
. "$3/tests/cluster/vm/prelude.sh"
# The test hooks below (GDRB_INJECT_*, GDRB_VERBS_MAX_MSG) run only with the test switch.
export GDRB_TEST_HOOKS=1
mpi() { timeout "$(vm_limit 300)" mpirun -np 2 --mca pml ob1 --mca btl self,vader "$@"; }
run() { # NAME CSV BINARY ARGS...: one run, its output and exit status kept
	local name=$1 csv=$2 b=$3
	shift 3
	mpi "$bin/gdrb_$b" -n 30 -w 3 -t 0.05 -c -T 30 --csv "$out/$csv" "$@" \
		>"$out/$name.out" 2>"$out/$name.err"
	echo "$name $?" >>"$out/rc"
}
# Each mpirun costs seconds here: one run per feature set, not one per feature. Host memory
# as it comes; pinned memory with 64 KiB messages in 16 KiB work requests: the latency
# binaries alone, and the bandwidth binaries both directions at once, three QPs and a window
# of 16 from one buffer, in one run each.
for b in write_lat write_bw read_lat read_bw send_lat send_bw; do
	run "$b-host" host.csv "$b" -m 8,4K,64K --mem host
done
for b in write_lat read_lat send_lat; do
	GDRB_VERBS_MAX_MSG=16K run "$b-pinned" pinned.csv "$b" -m 8,4K,64K --mem pinned
done
for b in write_bw read_bw send_bw; do
	GDRB_VERBS_MAX_MSG=16K run "$b-bidir" bidir.csv "$b" -m 8,64K --mem pinned -b --qps 3 --buffers single -W 16
done
# Write latency's two ways of noticing a message (host memory polls by default),
# and the polled byte fooling no one: a byte flipped after arrival is caught.
run write_lat-imm imm.csv write_lat -m 8,4K --completion imm
GDRB_INJECT_CORRUPTION=1 run write_lat-corrupt corrupt.csv write_lat -m 8,4K
# Two pairs at once (ranks 0-2 and 1-3), each its own QPs: a row per pair and one for all.
# Four spinning ranks on two virtual CPUs: slow, so few iterations, and two binaries (the pairs'
# QPs and rows are the driver's, the same for every binary: a bandwidth window and a polled
# ping-pong).
for b in write_bw write_lat; do
	timeout "$(vm_limit 300)" mpirun -np 4 --oversubscribe --mca pml ob1 --mca btl self,vader "$bin/gdrb_$b" \
		-m 8,4K -n 20 -w 2 -t 0.05 -c -T 30 --csv "$out/pairs.csv" >"$out/$b-pairs.out" 2>"$out/$b-pairs.err"
	echo "$b-pairs $?" >>"$out/rc"
done
# Bad input that only a device can judge: exit 2.
run bad-gid bad.csv write_lat -m 8 --gid-index 7
run bad-dev bad.csv write_bw -m 8 --ib-dev mlx5_9
run bad-port bad.csv send_lat -m 8 --ib-dev rxe0:2
# Results that cannot be written: rank 0's own stdout on /dev/full.
mpi bash -c '[ "$OMPI_COMM_WORLD_RANK" = 0 ] && exec "$@" >/dev/full; exec "$@"' - \
	"$bin/gdrb_write_bw" -m 8,4K,64K -n 30 -w 3 -t 0.05 >/dev/null 2>"$out/stdout-full.err"
echo "stdout-full $?" >>"$out/rc"

# Fault 1: rank 1 frozen once two rows are in the CSV; rank 0 must name it within --timeout.
(
	until [ "$(wc -l <"$out/freeze.csv" 2>/dev/null || echo 0)" -ge 3 ]; do sleep 0.2; done
	# Rank 1's process, found in /proc (the root the VM shares may have no procps).
	for d in /proc/[0-9]*; do
		mapfile -d '' args <"$d/cmdline" 2>/dev/null || continue
		[[ "${args[*]}" == *"$bin/gdrb_write_lat"* ]] || continue
		p=${d#/proc/}
		tr '\0' '\n' <"$d/environ" | grep -qx OMPI_COMM_WORLD_RANK=1 && kill -STOP "$p" && echo "$p" >"$out/frozen"
	done
) &
start=$(date +%s)
# Each size runs for up to 2 s (100000 iterations last longer here), so the
# freeze lands mid-run however slowly this machine schedules the watcher.
mpi "$bin/gdrb_write_lat" -m 8:1M -n 100000 -t 2 -T 5 --csv "$out/freeze.csv" >"$out/freeze.out" 2>"$out/freeze.err"
echo "freeze $? $(($(date +%s) - start))" >>"$out/rc"
[ -s "$out/frozen" ] && kill -CONT "$(cat "$out/frozen")" 2>/dev/null
wait

# Fault 2 (last: the link stays down): eth0 down once two rows are in the CSV.
(
	until [ "$(wc -l <"$out/linkdown.csv" 2>/dev/null || echo 0)" -ge 3 ]; do sleep 0.2; done
	ip link set eth0 down
) &
start=$(date +%s)
mpi "$bin/gdrb_write_bw" -m 4K:4M -n 100000 -t 1 -T 20 --csv "$out/linkdown.csv" >"$out/linkdown.out" 2>"$out/linkdown.err"
echo "linkdown $? $(($(date +%s) - start))" >>"$out/rc"
wait
INSIDE

vm_inside

# Every CSV row: layer verbs, nic rxe0:1 (Ethernet, 2.5 Gb/s, no GPU: distance unknown),
# reg host, status ok, 2 ranks.
verbs_rows() { # CSV ROWS
	csv_check -v status=ok -v rows="$2" -v ranks=2 "$WORK/$1" || return 1
	# Every one of the ROWS rows (csv_check counted them) has these columns.
	[ "$(csv_count "$WORK/$1" layer=verbs nic=rxe0:1 link_layer=Ethernet link_gbps=2.500 gpu_nic_dist=unknown \
		reg=host)" -eq "$2" ] || { cat "$WORK/$1"; return 1; }
}
for mem in host:"write_lat write_bw read_lat read_bw send_lat send_bw" pinned:"write_lat read_lat send_lat"; do
	bins=${mem#*:} mem=${mem%%:*} n=0
	for b in $bins; do
		[ "$(status_of "$b-$mem")" = 0 ] || { show "$b-$mem"; fail "gdrb_$b --mem $mem failed in the VM"; }
		n=$((n + 1))
	done
	verbs_rows "$mem.csv" $((3 * n)) || fail "$mem.csv: rows do not match"
	[ "$(csv_count "$WORK/$mem.csv" "mem!=$mem")" -eq 0 ] || fail "$mem.csv: mem column is not $mem"
	pass "$n verbs binaries ($bins), --mem $mem, 8 B/4 KiB/64 KiB, validated: $((3 * n)) ok rows (layer verbs, nic rxe0:1 Ethernet 2.5 Gb/s, reg host)"
done
# The counter file beside host.csv: each rank's rxe0 port 1 hw_counters (no counters/: rxe has
# no PMA), read around the sizes of every run that wrote host.csv; sent_pkts rose in write_bw's.
cnt=$WORK/host.counters.csv
[ "$(head -n 1 "$cnt")" = run_start,run_end,benchmark,node,rank,device,port,source,counter,class,before,after,delta,state,run_id ] ||
	fail "host.counters.csv: no counter file, or another header"
for c in sent_pkts:traffic rcvd_pkts:traffic duplicate_request:error completer_retry_err:error; do
	for rank in 0 1; do
		grep -q ",write_bw,gdrb-vm,$rank,rxe0,1,hw_counters,${c%:*},${c#*:},[0-9]*,[0-9]*,[0-9]*,ok,[^,]*$" "$cnt" ||
			{ grep ",write_bw," "$cnt"; fail "host.counters.csv: no ok row of rxe0 ${c%:*} (${c#*:}) for write_bw's rank $rank"; }
	done
done
! grep -q ',counters,' "$cnt" || fail "host.counters.csv: a counters/ row on rxe0"
awk -F, '$3 == "write_bw" && $5 == 0 && $9 == "sent_pkts" && $13 > 0 { ok = 1 } END { exit !ok }' "$cnt" ||
	fail "host.counters.csv: write_bw's sent_pkts did not rise"
# rxe0's netdev (eth0, virtio_net) answers SIOCETHTOOL with statistics of its own, none of them
# pause, ECN or discards: the header says how many it has and that none is read.
grep -Eq "^# counters: rxe0 port 1, the port this run uses; of its netdev's ethtool statistics, the pause, ECN, discard and error ones: eth0 (0 of [0-9]+|none \\(it has no statistics\\)); rank 0 reads [0-9]+ counters, before the first size" \
	"$WORK/write_bw-host.out" || { show write_bw-host; fail "the header does not say which port's counters are read, and what of its netdev's"; }
! grep -q ',ethtool,' "$cnt" || fail "host.counters.csv: an ethtool row of virtio_net (none is pause, ECN or discards)"
grep -Eq '^# (NIC errors during the run: rxe0 port 1 [a-z_]+ \+[0-9]+ on gdrb-vm|NIC error counters: none rose \(rxe0 port 1 on 1 node, [0-9]+ error counters\))' \
	"$WORK/write_bw-host.out" || { show write_bw-host; fail "no line after the table on rxe0's error counters"; }
pass "counters: rxe0's hw_counters of both ranks in host.counters.csv, sent_pkts risen; $(grep -m1 -E '^# NIC error' "$WORK/write_bw-host.out" | cut -c3-)"

grep -q '^# completion: each message is a plain RDMA write; the receiver spins on the last byte of its host receive buffer' \
	"$WORK/write_lat-host.out" || { show write_lat-host; fail "write_lat header does not say how completion is detected"; }
grep -q 'relaxed ordering requested (off for the polled receive buffer)' "$WORK/write_lat-host.out" ||
	fail "write_lat header does not say the polled buffer has no relaxed ordering"
grep -q '^# NIC rxe0:1 (rank 0): Ethernet (RoCE), .*GID index 1 0000:0000:0000:0000:0000:ffff:0a00:020f (RoCE v2)' \
	"$WORK/write_bw-host.out" || { show write_bw-host; fail "header lacks the NIC, link layer and chosen RoCE v2 GID"; }
pass "headers: NIC rxe0:1, Ethernet, GID index 1 (RoCE v2 IPv4-mapped, chosen automatically), completion method"

for b in write_bw read_bw send_bw; do
	[ "$(status_of "$b-bidir")" = 0 ] || { show "$b-bidir"; fail "gdrb_$b -b --qps 3 --buffers single failed in the VM"; }
	grep -q '3 QP(s)' "$WORK/$b-bidir.out" || { show "$b-bidir"; fail "gdrb_$b: --qps 3 not in the header"; }
done
verbs_rows bidir.csv 6 || fail "bidir.csv: rows do not match"
[ "$(grep -c '^\(write\|read\|send\)_bibw,' "$WORK/bidir.csv")" -eq 6 ] || fail "-b rows are not named *_bibw"
[ "$(grep -c ',pinned,direct,host,,,16,single,all,' "$WORK/bidir.csv")" -eq 6 ] || { cat "$WORK/bidir.csv"; fail "--buffers single: rows without pinned memory, window 16 and buffers single"; }
pass "-b --qps 3 --buffers single --mem pinned (write_bibw, read_bibw, send_bibw; 3 QPs, a window of 16 from one buffer): validated, ok"

for name in write_lat-pinned read_lat-pinned send_lat-pinned write_bw-bidir read_bw-bidir send_bw-bidir; do
	grep -q 'at most 16KiB per work request' "$WORK/$name.out" ||
		{ show "$name"; fail "$name (--mem pinned): the header does not show the 16 KiB work requests"; }
done
pass "pinned memory: 64 KiB messages split into 16 KiB work requests by every binary (write, read, send; latency and bandwidth): validated"

[ "$(status_of write_lat-imm)" = 0 ] || { show write_lat-imm; fail "gdrb_write_lat --completion imm failed"; }
verbs_rows imm.csv 2 || fail "imm.csv: rows do not match"
grep -q '^# completion: each message is an RDMA write with immediate' "$WORK/write_lat-imm.out" ||
	{ show write_lat-imm; fail "--completion imm: the header does not say write with immediate"; }
pass "write_lat --completion imm: validated, header names the write with immediate"
[ "$(status_of write_lat-corrupt)" = 1 ] || { show write_lat-corrupt; fail "a corrupted polled write was not caught (exit $(status_of write_lat-corrupt))"; }
grep -q 'validation: 1 wrong byte(s) from rank 0 at size 8, iteration 0' "$WORK/write_lat-corrupt.err" ||
	{ show write_lat-corrupt; fail "the corrupted byte is not named"; }
csv_check -v status=invalid-data -v rows=2 "$WORK/corrupt.csv" || fail "corrupt.csv: rows not invalid-data"
pass "polled write latency with a byte flipped on rank 1: exit 1, rows invalid-data"

for b in write_bw write_lat; do
	[ "$(status_of "$b-pairs")" = 0 ] || { show "$b-pairs"; fail "gdrb_$b with 4 ranks (2 pairs) failed"; }
done
csv_check -v status=ok -v rows=12 -v ranks=4 "$WORK/pairs.csv" || fail "pairs.csv: rows do not match"
[ "$(for p in all 0:2 1:3; do csv_count "$WORK/pairs.csv" pair="$p"; done | paste -sd' ')" = "4 4 4" ] ||
	{ cat "$WORK/pairs.csv"; fail "pairs.csv: expected 4 rows each for all, 0:2 and 1:3"; }
grep -q '2 pair(s): rank i with rank i+2' "$WORK/write_lat-pairs.out" || fail "the header does not name the pairs"
pass "4 ranks = 2 concurrent pairs (0:2, 1:3): write_bw, write_lat validated, rows per pair and all"

expect_bad() { # NAME PATTERN
	[ "$(status_of "$1")" = 2 ] || { show "$1"; fail "$1 exited $(status_of "$1"), expected 2"; }
	grep -q -- "$2" "$WORK/$1.err" || { show "$1"; fail "$1: message lacks '$2'"; }
	pass "$1 -> 2: $(grep -m1 -- "$2" "$WORK/$1.err")"
}
expect_bad bad-gid "--gid-index 7: no such GID on this port; set GIDs: 0 (RoCE v2), 1 (RoCE v2)"
expect_bad bad-dev "--ib-dev mlx5_9: no such RDMA device; ports here: rxe0:1 (ACTIVE)"
expect_bad bad-port "--ib-dev rxe0:2: no such port; ports here: rxe0:1 (ACTIVE)"

[ "$(status_of stdout-full)" = 1 ] ||
	{ cat "$WORK/stdout-full.err"; fail "gdrb_write_bw, stdout on /dev/full: exit $(status_of stdout-full), expected 1"; }
[ "$(grep -c 'writing results to stdout: No space left on device' "$WORK/stdout-full.err")" -eq 1 ] ||
	{ cat "$WORK/stdout-full.err"; fail "gdrb_write_bw, stdout on /dev/full: not one line for 3 sizes"; }
pass "gdrb_write_bw, rank 0's stdout on /dev/full: exit 1, one line"

read -r _ frc fsec < <(grep '^freeze ' "$WORK/rc")
[ -s "$WORK/frozen" ] || { show freeze; fail "the freeze never happened (fewer than 2 rows?)"; }
[ "$frc" -ne 0 ] || { show freeze; fail "a frozen peer went unnoticed (exit 0)"; }
rows=$(($(wc -l <"$WORK/freeze.csv") - 1))
[ "$rows" -lt 18 ] || { show freeze; fail "the freeze came after the last size: the run was not interrupted"; }
grep -q 'timeout: no answer from rank 1 (gdrb-vm)' "$WORK/freeze.err" ||
	{ show freeze; fail "the timeout does not name rank 1 (gdrb-vm)"; }
[ "$rows" -ge 2 ] && csv_check -v status=ok "$WORK/freeze.csv" || fail "rows before the freeze were lost"
pass "rank 1 frozen: rank 0 exited $frc after $fsec s naming rank 1 (gdrb-vm), $rows rows kept"

read -r _ lrc lsec < <(grep '^linkdown ' "$WORK/rc")
rows=$(($(wc -l <"$WORK/linkdown.csv") - 1))
[ "$rows" -lt 11 ] || { show linkdown; fail "the link went down after the last size: the run was not interrupted"; }
[ "$lrc" -ne 0 ] || { show linkdown; fail "the link went down and gdrb_write_bw exited 0"; }
grep -Eq 'work completion error on .*peer rank [01] \(gdrb-vm\)|timeout: no answer from rank [01] \(gdrb-vm\)' \
	"$WORK/linkdown.err" || { show linkdown; fail "the link-down error names no status and peer"; }
[ "$rows" -ge 2 ] && csv_check -v status=ok "$WORK/linkdown.csv" || fail "rows before the link went down were lost"
pass "link down mid-run: exit $lrc after $lsec s: $(grep -m1 -Eo 'work completion error on [^:]*: [^(]*|timeout: no answer from rank [01]' "$WORK/linkdown.err"), $rows rows kept"
