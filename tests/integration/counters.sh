#!/bin/bash
# The counters read around every measurement (docs/counters.md), on the sysfs fixture trees
# (GDRB_INJECT_SYSFS_ROOT):
#  - gdrb_mpi_latency, host memory, 2 ranks, 3 sizes, on mlx5-counters with symbol_error rising
#    by 1532 in the reading after the second size (GDRB_INJECT_COUNTER): the counter file beside
#    the CSV (its header, rank 0's rows for both active ports, the rise, run_start and run_end
#    around the CSV rows' timestamps), the line after the table, the note of the second size's
#    row and of no other; gdrb_mpi_bw then appends to both files: one header, its own rows,
#    "none rose";
#  - gdrb_copy_bw on the simulated GPU at 0000:3b:00.0: its x8 of x16 link said after the
#    table, and an AER line that rose in the row's note and after the table;
#  - RoCE ports (roce-counters): their netdevs' ethtool statistics (pause frames rising: congestion;
#    falling: a reset);
#  - a node without class/infiniband (noib): one header line, no counter file, exit 0;
#  - a bad counter file (another header, a torn row, a planted symbolic link): exit 2 with
#    one line, nothing measured, the file left as it was.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

fx=$top_builddir/tests/fixtures
fake=$top_builddir/tests/integration/fake_transport
unset GDRB_INJECT_CORRUPTION GDRB_INJECT_STALL GDRB_INJECT_HOSTS GDRB_INJECT_PAIRS_STOP GDRB_INJECT_STEP_STOP \
	GDRB_INJECT_STAGE_RACE GDRB_VERBS_MAX_MSG GDRB_INJECT_COUNTER
export GDRB_TEST_HOOKS=1 GDRB_INJECT_SYSFS_ROOT=$fx/mlx5-counters/sys

# cnt_col FILE COLUMN[,COLUMN...] [NAME=VALUE...]: those columns (comma-separated) of the counter
# file's rows whose named columns hold those values (no field holds a comma here: fixture names,
# numbers, timestamps).
cnt_col() {
	awk -F, -v want="$2" -v filters="${*:3}" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(filters, f, " "); nw = split(want, w, ","); next }
		{ for (k = 1; k <= n; k++) { split(f[k], kv, "="); if ($(col[kv[1]]) != kv[2]) next }
		  line = ""; for (k = 1; k <= nw; k++) line = line (k > 1 ? "," : "") $(col[w[k]]); print line }' "$1"
}

bad_file() { # WHAT: a refused counter file: exit 2, one line naming WHAT, the files as they were
	local rc=0
	cp "$WORK/bad.counters.csv" "$WORK/before"
	"$fake" -m 8 -n 5 -w 1 -t 0.01 --csv "$WORK/bad.csv" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = 2 ] || { cat "$WORK/err"; fail "$1: exit $rc, expected 2"; }
	[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "$1: not one line"; }
	grep -q "counter file: '$WORK/bad.counters.csv'.*$1" "$WORK/err" || { cat "$WORK/err"; fail "$1: the line"; }
	[ ! -s "$WORK/out" ] || { cat "$WORK/out"; fail "$1: measured"; }
	cmp -s "$WORK/before" "$WORK/bad.counters.csv" || fail "$1: the counter file changed"
	pass "counter file with $1: exit 2, $(cat "$WORK/err")"
}

# Bad counter files first: one process, no MPI.
[ -x "$fake" ] || fail "tests/integration/fake_transport not built"
printf 'run,node\n1,x\n' >"$WORK/bad.counters.csv"
bad_file "another header"
header=$(awk -F'[(,]' '/^GDRB_COUNTERS_COL/ { printf "%s%s", s, $2; s = "," }' "$top_srcdir/common/core/counters_schema.def")
printf '%s\n1,2' "$header" >"$WORK/bad.counters.csv"
bad_file "torn row"
rm "$WORK/bad.counters.csv" "$WORK/bad.csv"
printf 'kept\n' >"$WORK/target"
ln -s "$WORK/target" "$WORK/bad.counters.csv"
rc=0
"$fake" -m 8 -n 5 -w 1 -t 0.01 --csv "$WORK/bad.csv" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "counter file: .* is a symbolic link" "$WORK/err" ||
	{ cat "$WORK/err"; fail "a planted link at the counter file's path: exit $rc"; }
[ "$(cat "$WORK/target")" = kept ] || fail "the link's target was written"
pass "a symbolic link planted at the counter file's path: exit 2, not followed ($(cat "$WORK/err"))"

need_mpi
lat=$top_builddir/mpi/gdrb_mpi_latency
csv=$WORK/results.csv
cnt=$WORK/results.counters.csv
GDRB_INJECT_COUNTER=symbol_error+1532@2 mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT -x GDRB_INJECT_COUNTER \
	"$lat" -m 8,64,512 -t 0.01 --csv "$csv" >"$WORK/lat.out" 2>"$WORK/lat.err" ||
	{ cat "$WORK/lat.out" "$WORK/lat.err"; fail "gdrb_mpi_latency on mlx5-counters"; }
[ -f "$cnt" ] || fail "no counter file beside the CSV"
[ "$(head -n 1 "$cnt")" = "$header" ] || { head -n 1 "$cnt"; fail "the counter file's header is not its schema's"; }
host=$(cnt_col "$cnt" node rank=0 | head -n 1)
[ -n "$host" ] || fail "no row of rank 0"
# Rank 0 reads its node's two active ports (52 counters each) and their PCIe links (4 link
# values, 2 upstream maxima, 9 + 19 + 19 AER lines each); rank 1, on the same node, none.
[ "$(cnt_col "$cnt" counter rank=0 | wc -l)" = $((2 * 52 + 2 * 53)) ] ||
	fail "rank 0: $(cnt_col "$cnt" counter rank=0 | wc -l) rows, expected 210"
[ -z "$(cnt_col "$cnt" counter rank=1)" ] || fail "rank 1 read its node's ports too"
for dev in mlx5_0 mlx5_1; do
	[ "$(cnt_col "$cnt" before,after,delta,state,class device=$dev source=counters counter=symbol_error)" = "0,1532,1532,ok,error" ] ||
		{ grep symbol_error "$cnt"; fail "$dev symbol_error: not 0 -> 1532, delta 1532, ok"; }
done
[ "$(cnt_col "$cnt" delta device=mlx5_0 source=counters counter=port_xmit_data)" = 0 ] || fail "port_xmit_data moved"
[ -z "$(awk -F, 'NR > 1 && $14 != "ok"' "$cnt")" ] || fail "a counter of the fixture is not ok"
start=$(cnt_col "$cnt" run_start rank=0 | sort -u)
end=$(cnt_col "$cnt" run_end rank=0 | sort -u)
[ "$(wc -l <<<"$start")" = 1 ] && [ "$(wc -l <<<"$end")" = 1 ] || fail "more than one run_start or run_end"
while read -r ts; do
	[[ ! $ts < $start && ! $ts > $end ]] || fail "a CSV row at $ts, outside its run ($start .. $end)"
done < <(csv_col "$csv" timestamp)
pass "counter file beside the CSV: 210 rows of rank 0 (both active ports, their PCIe links), symbol_error 0 -> 1532 on each, every CSV row's timestamp within $start .. $end"

line="# NIC errors during the run: mlx5_0 port 1 symbol_error +1532 on $host, mlx5_1 port 1 symbol_error +1532 on $host"
grep -qxF "$line" "$WORK/lat.out" || { cat "$WORK/lat.out"; fail "the line after the table"; }
grep -q '^# counters: every active RDMA port of each node, read by the node.s first rank (MPI does not say which NIC it uses): on rank 0.s node mlx5_0 port 1, mlx5_1 port 1, and their PCIe links' \
	"$WORK/lat.out" || { cat "$WORK/lat.out"; fail "the header does not say which ports are read and why"; }
note="NIC errors rose: mlx5_0 port 1 symbol_error +1532 ($host), mlx5_1 port 1 symbol_error +1532 ($host)"
[ "$(csv_col "$csv" note size_bytes=64 | grep -cF "; $note")" = 1 ] || { cat "$csv"; fail "the 64 B row's note"; }
[ "$(grep -cF "NIC errors rose" "$csv")" = 1 ] || { cat "$csv"; fail "a row measured before or after the rise says it rose"; }
pass "after the table: '${line#\# }'; the note of the 64 B row, and of no other: '$note'"

# A second run appends: one header, its rows named by its benchmark, nothing rose.
mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT "$top_builddir/mpi/gdrb_mpi_bw" -m 4K -t 0.01 --csv "$csv" \
	>"$WORK/bw.out" 2>"$WORK/bw.err" || { cat "$WORK/bw.out" "$WORK/bw.err"; fail "gdrb_mpi_bw on mlx5-counters"; }
[ "$(grep -c '^run_start,' "$cnt")" = 1 ] || fail "the counter file got a second header"
[ "$(cnt_col "$cnt" counter benchmark=mpi_bw | wc -l)" = 210 ] || fail "the second run's rows"
[ "$(cnt_col "$cnt" counter benchmark=mpi_latency | wc -l)" = 210 ] || fail "the first run's rows were touched"
grep -qxF "# NIC error counters: none rose (mlx5_0 port 1, mlx5_1 port 1 on 1 node, 68 error counters)" "$WORK/bw.out" ||
	{ cat "$WORK/bw.out"; fail "'none rose' after the table"; }
# Each run's rows share one run id, HOST:PID:NS of rank 0; the two runs' differ (gdrb accept
# keys the rises by it: two runs that start within one second are not merged).
ids=$(cnt_col "$cnt" run_id | sort -u)
[ "$(cnt_col "$cnt" run_id benchmark=mpi_latency | sort -u | wc -l)" = 1 ] &&
	[ "$(cnt_col "$cnt" run_id benchmark=mpi_bw | sort -u | wc -l)" = 1 ] && [ "$(wc -l <<<"$ids")" = 2 ] &&
	! grep -qvE "^$host:[0-9]+:[0-9]{19}$" <<<"$ids" || fail "run ids: $(paste -sd' ' <<<"$ids")"

# All pairs reads them too, before the first round, after each latency phase and after the last
# round (what gdrb accept joins to a suspect node: tests/cluster/netns_slow.sh): its counter file
# beside its CSV, the line after. Its 4 ranks share a host, whose first rank reads the node's
# ports: a phase's rise is not one pair's, so no row has nic_errors or nic_packets.
if [ -x "$top_builddir/mpi/gdrb_mpi_pairs" ]; then
	mkdir "$WORK/pairs"
	GDRB_INJECT_COUNTER=symbol_error+880@1 mpi 4 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT -x GDRB_INJECT_COUNTER \
		"$top_builddir/mpi/gdrb_mpi_pairs" --metric bw,lat -m 4K -t 0.01 --csv "$WORK/pairs/pairs.csv" >"$WORK/pairs.out" 2>"$WORK/pairs.err" ||
		{ cat "$WORK/pairs.out" "$WORK/pairs.err"; fail "gdrb_mpi_pairs on mlx5-counters"; }
	pcnt=$WORK/pairs/pairs.counters.csv
	[ "$(cnt_col "$pcnt" counter benchmark=mpi_pairs rank=0 | wc -l)" = 210 ] && [ -z "$(cnt_col "$pcnt" counter rank=1)" ] ||
		{ cat "$pcnt"; fail "gdrb_mpi_pairs: not rank 0's 210 counters in pairs.counters.csv"; }
	[ "$(cnt_col "$pcnt" before,after,delta device=mlx5_1 counter=symbol_error)" = "0,880,880" ] ||
		{ grep symbol_error "$pcnt"; fail "gdrb_mpi_pairs: symbol_error not 0 -> 880"; }
	[ "$(pairs_count "$WORK/pairs/pairs.csv")" = 24 ] && [ "$(pairs_count "$WORK/pairs/pairs.csv" nic_errors= nic_packets=)" = 24 ] ||
		{ cat "$WORK/pairs/pairs.csv"; fail "gdrb_mpi_pairs, 4 ranks on one host: not 24 rows, all without nic_errors and nic_packets"; }
	grep -q '^# counters: .*rank 0 reads 210 counters, before the first round, after each latency phase it takes part in, and after the last round, outside the timed loops$' "$WORK/pairs.out" &&
		grep -qxF "# NIC errors during the run: mlx5_0 port 1 symbol_error +880 on $host, mlx5_1 port 1 symbol_error +880 on $host" "$WORK/pairs.out" ||
		{ cat "$WORK/pairs.out"; fail "gdrb_mpi_pairs: the header's counters line or the line after the rounds"; }
	pass "gdrb_mpi_pairs: pairs.counters.csv beside pairs.csv (210 counters, symbol_error 0 -> 880), read around the rounds and latency phases; no pair's figure where ranks share a host"
else
	echo "skipped case: gdrb_mpi_pairs is not built"
fi
pass "a second run appends 210 rows of its own under the one header, with a run id of its own; after its table: none rose"

# RoCE (roce-counters): each port's netdev's ethtool statistics, read through the fixture
# transport in mlx5's names. Pause frames that rise are congestion: said after the table, no
# error, no row's note; a discard counter that falls is a reset, never a rise.
roce=$fx/roce-counters/sys
GDRB_INJECT_SYSFS_ROOT=$roce GDRB_INJECT_COUNTER=rx_prio3_pause+5000@2 mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT \
	-x GDRB_INJECT_COUNTER "$lat" -m 8,64,512 -t 0.01 --csv "$WORK/roce.csv" >"$WORK/roce.out" 2>"$WORK/roce.err" ||
	{ cat "$WORK/roce.out" "$WORK/roce.err"; fail "gdrb_mpi_latency on roce-counters"; }
rcnt=$WORK/roce.counters.csv
grep -q "^# counters: .*; of their netdevs' ethtool statistics, the pause, ECN, discard and error ones: enp0s0np0 52 of 104, enp1s0np0 52 of 104; rank 0 reads" \
	"$WORK/roce.out" || { cat "$WORK/roce.out"; fail "roce-counters: the header does not name the netdevs and what of them is read"; }
[ "$(cnt_col "$rcnt" counter rank=0 source=ethtool | wc -l)" = 104 ] || fail "roce-counters: not 2 x 52 ethtool rows"
[ -z "$(cnt_col "$rcnt" counter source=ethtool counter=rx_packets)$(cnt_col "$rcnt" counter source=ethtool counter=ch0_events)" ] ||
	fail "roce-counters: a traffic or per-channel statistic was read"
[ "$(cnt_col "$rcnt" before,after,delta,state,class device=mlx5_1 source=ethtool counter=rx_prio3_pause)" = "2400,7400,5000,ok,congestion" ] &&
	[ "$(cnt_col "$rcnt" class,state device=mlx5_0 source=ethtool counter=rx_discards_phy)" = "error,ok" ] ||
	{ grep -E 'rx_prio3_pause|rx_discards_phy' "$rcnt"; fail "roce-counters: rx_prio3_pause or rx_discards_phy's row"; }
line="# NIC congestion during the run (reported, not errors): mlx5_0 port 1 rx_prio3_pause +5000 on $host, mlx5_1 port 1 rx_prio3_pause +5000 on $host"
grep -qxF "$line" "$WORK/roce.out" && grep -q '^# NIC error counters: none rose (mlx5_0 port 1, mlx5_1 port 1 on 1 node, 138 error counters)$' "$WORK/roce.out" ||
	{ cat "$WORK/roce.out"; fail "roce-counters: the congestion line, or 'none rose' with the ethtool error counters"; }
! grep -q "rose:" "$WORK/roce.csv" || { cat "$WORK/roce.csv"; fail "roce-counters: pause frames in a row's note (an error's place)"; }
GDRB_INJECT_SYSFS_ROOT=$roce GDRB_INJECT_COUNTER=rx_prio3_pause-1000@1 mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT \
	-x GDRB_INJECT_COUNTER "$lat" -m 8 -t 0.01 --csv "$WORK/roce2.csv" >"$WORK/roce2.out" 2>"$WORK/roce2.err" ||
	{ cat "$WORK/roce2.out" "$WORK/roce2.err"; fail "gdrb_mpi_latency on roce-counters, a fall"; }
[ "$(cnt_col "$WORK/roce2.counters.csv" before,after,delta,state device=mlx5_0 source=ethtool counter=rx_prio3_pause)" = "1200,200,,reset" ] &&
	grep -q "^# counters that went back during the run (a wrap or a reset; no rise counted): .*mlx5_0 port 1 rx_prio3_pause on $host" "$WORK/roce2.out" &&
	! grep -q "^# NIC congestion" "$WORK/roce2.out" ||
	{ cat "$WORK/roce2.out"; grep rx_prio3_pause "$WORK/roce2.counters.csv"; fail "roce-counters: a fallen ethtool statistic is not a reset"; }
pass "roce-counters: 52 of each netdev's 104 ethtool statistics read; rx_prio3_pause +5000 after the table as congestion, not an error nor in a note; its fall a reset with no rise"

# The GPU: its PCIe link and AER lines, on the simulated GPU at the fixture's 0000:3b:00.0.
if why=$(simgpu_here); then
	use_simgpu strict
	export SIMGPU_DEVICES=0000:3b:00.0
	GDRB_INJECT_COUNTER=BadTLP+3@1 "$top_builddir/bench/gdrb_copy_bw" -m 4K -t 0.01 --csv "$WORK/copy.csv" \
		>"$WORK/copy.out" 2>"$WORK/copy.err" || { cat "$WORK/copy.out" "$WORK/copy.err"; fail "gdrb_copy_bw"; }
	grep -q '^# PCIe: GPU 0000:3b:00.0 x8 of x16 (down-trained) on ' "$WORK/copy.out" ||
		{ cat "$WORK/copy.out"; fail "the GPU's down-trained link is not said"; }
	grep -q '^# PCIe AER during the run: GPU 0000:3b:00.0 BadTLP (aer_dev_correctable) +3 on ' "$WORK/copy.out" ||
		{ cat "$WORK/copy.out"; fail "the AER rise is not said"; }
	[ "$(csv_col "$WORK/copy.csv" note | grep -c 'PCIe errors rose: GPU 0000:3b:00.0 BadTLP +3 (')" = 1 ] ||
		{ cat "$WORK/copy.csv"; fail "the note of the first path's row"; }
	[ "$(cnt_col "$WORK/copy.counters.csv" before,after,delta device=GPU counter=BadTLP | tr '\n' ' ')" = "5,8,3 " ] ||
		fail "BadTLP's row"
	[ "$(cnt_col "$WORK/copy.counters.csv" after,delta device=GPU counter=current_link_width)" = "8," ] ||
		fail "current_link_width's row (a value: no delta)"
	pass "the GPU: 'PCIe: GPU 0000:3b:00.0 x8 of x16 (down-trained)', BadTLP +3 after the table, in its row's note and file"
else
	echo "skipped case: the GPU's PCIe link and AER lines ($why)"
fi

# No class/infiniband: one line, the run goes on.
GDRB_INJECT_SYSFS_ROOT=$fx/noib/sys mpi 2 -x GDRB_TEST_HOOKS -x GDRB_INJECT_SYSFS_ROOT "$lat" -m 8 -t 0.01 \
	--csv "$WORK/noib.csv" >"$WORK/noib.out" 2>"$WORK/noib.err" || { cat "$WORK/noib.out" "$WORK/noib.err"; fail "a node without RDMA"; }
[ "$(grep -c 'class/infiniband' "$WORK/noib.out")" = 1 ] &&
	grep -q "^# counters: no RDMA device on rank 0's node (.*/noib/sys/class/infiniband does not exist): no NIC counter is read$" "$WORK/noib.out" ||
	{ cat "$WORK/noib.out"; fail "no RDMA device: not one header line"; }
[ ! -s "$WORK/noib.err" ] || { cat "$WORK/noib.err"; fail "no RDMA device: stderr"; }
[ ! -e "$WORK/noib.counters.csv" ] || fail "no RDMA device, no counter: a counter file was made"
csv_check -v status=ok -v rows=1 "$WORK/noib.csv" || fail "no RDMA device: the CSV"
pass "no class/infiniband: one header line, nothing on stderr, exit 0, no counter file (nothing to put in it)"
