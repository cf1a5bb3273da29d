#!/bin/bash
# mpirun across "nodes", not ranks on one host: the test bed of tests/cluster/netns/bed.sh (8
# network namespaces with their own hostnames on a bridge, Open MPI's daemons started in
# each through a launcher agent, TCP only). gdrb_mpi_bw and gdrb_mpi_latency across 2
# nodes, a collective across 8, gdrb_doctor_mpi across 6 (one line per node), and
# scripts/gdrb-sweep --hosts across 2: every CSV must count the hosts it crossed; a node cut
# off the network mid-run named within --timeout. Where
# gdrb_mpi_pairs is built: its rail and node granularities, which read the ranks'
# hosts, across 4 and 6 nodes, and nodes with unequal rank counts refused naming them.
# Skips (77) where the machine has no root, network namespaces, bridges or Open MPI.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=netns/bed.sh
. "$(dirname "$0")/netns/bed.sh"
need_mpi
bed_up 8

# col FILE NAME: the values of column NAME of a results CSV, one a line.
col() { csv_col "$1" "$2"; }

# hosts_of CSV WANT WHAT: every row of CSV is ok and counts WANT hosts.
hosts_of() {
	csv_check "$1" || fail "$3: the CSV does not follow the schema"
	[ "$(col "$1" status | sort -u)" = ok ] || { cat "$1"; fail "$3: rows not ok"; }
	[ "$(col "$1" hosts | sort -u)" = "$2" ] || { cat "$1"; fail "$3: hosts column is not $2"; }
}

# step NAME CMD...: run CMD on gdrbn1 (where mpirun and the sweep start), output in
# $WORK/NAME.out and .err; fail with both unless it exits 0.
step() {
	local name=$1 rc=0
	shift
	on_node gdrbn1 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$WORK/$name.out" "$WORK/$name.err"; fail "$name: '$*' exited $rc"; }
}

# cut_off NODE LOG TEXT WHAT: NODE's link down until LOG holds TEXT (20 s at most), then up
# again, took the seconds that took; the run in the background ($launcher, WHAT) must then
# end with an error.
cut_off() {
	local at rc=0
	at=$(date +%s)
	ip -n "$(bed_ns "$1")" link set eth0 down || fail "cannot take $1's link down"
	for _ in $(seq 1 200); do
		grep -q "$3" "$2" && break
		sleep 0.1
	done
	took=$(($(date +%s) - at))
	ip -n "$(bed_ns "$1")" link set eth0 up
	wait "$launcher" || rc=$?
	[ "$rc" -ne 0 ] || fail "$4 exited 0 with $1 cut off"
}

# The bed itself: distinct hostnames on the nodes, and a daemon on each through the agent.
step names "$MPIRUN" -np 8 --host "$(bed_hosts 8)" hostname
[ "$(sort -u "$WORK/names.out" | tr '\n' ' ')" = "gdrbn1 gdrbn2 gdrbn3 gdrbn4 gdrbn5 gdrbn6 gdrbn7 gdrbn8 " ] ||
	{ cat "$WORK/names.out"; fail "the ranks do not see 8 distinct hostnames"; }
[ "$(hostname)" != gdrbn1 ] || fail "the test bed renamed this machine"
pass "8 nodes: mpirun starts a rank on each, each sees its own hostname"

for b in bw latency; do
	step "$b" "$MPIRUN" -np 2 --host "$(bed_hosts 2)" "$top_builddir/mpi/gdrb_mpi_$b" -m 8,64K -t 0.05 \
		-T 20 --validate --csv "$WORK/$b.csv"
	hosts_of "$WORK/$b.csv" 2 "gdrb_mpi_$b"
	grep -q '2 ranks on 2 host(s)' "$WORK/$b.out" || { cat "$WORK/$b.out"; fail "gdrb_mpi_$b: header does not say 2 hosts"; }
	pass "gdrb_mpi_$b across gdrbn1,gdrbn2: 2 hosts, validated, $(col "$WORK/$b.csv" size_bytes | wc -l) sizes"
done

# The check above can fail: both ranks on one node count one host.
step one "$MPIRUN" -np 2 --host gdrbn1:2 "$top_builddir/mpi/gdrb_mpi_bw" -m 8 -t 0.05 -T 20 --csv "$WORK/one.csv"
hosts_of "$WORK/one.csv" 1 "gdrb_mpi_bw on one node"
pass "gdrb_mpi_bw with both ranks on gdrbn1: 1 host"

step ar "$MPIRUN" -np 8 --host "$(bed_hosts 8)" "$top_builddir/mpi/gdrb_mpi_allreduce" -m 8,64K -t 0.05 \
	-T 20 --validate --csv "$WORK/ar.csv"
hosts_of "$WORK/ar.csv" 8 "gdrb_mpi_allreduce"
[ "$(col "$WORK/ar.csv" ranks | sort -u)" = 8 ] || fail "gdrb_mpi_allreduce: ranks column is not 8"
pass "gdrb_mpi_allreduce across 8 nodes: 8 ranks on 8 hosts, validated"

# The doctor: the first rank of each host checks it, rank 0 prints a line per node.
fx=$top_builddir/tests/fixtures
step doc "$MPIRUN" -np 12 --host "$(bed_hosts 6 | sed 's/,/:2,/g'):2" "$top_builddir/mpi/gdrb_doctor_mpi" \
	--sysfs-root "$fx/healthy/sys" --procfs-root "$fx/healthy/proc"
[ "$(grep -vc '^#' "$WORK/doc.out")" -eq 6 ] || { cat "$WORK/doc.out"; fail "gdrb_doctor_mpi: not one line per node"; }
for i in 1 2 3 4 5 6; do
	grep -q "^gdrbn$i: PASS" "$WORK/doc.out" || { cat "$WORK/doc.out"; fail "gdrb_doctor_mpi: no PASS line for gdrbn$i"; }
done
grep -q '^# 6 nodes' "$WORK/doc.out" || { cat "$WORK/doc.out"; fail "gdrb_doctor_mpi: no total of 6 nodes"; }
pass "gdrb_doctor_mpi, 12 ranks on 6 nodes: one PASS line per node"

# The sweep: --hosts places the ranks, node-info runs on each host through mpirun.
export SIMGPU_DRIVER=none
step sweep "$top_srcdir/scripts/gdrb" sweep --hosts gdrbn1,gdrbn2 --bench gdrb_mpi_bw,gdrb_mpi_latency \
	--mem host --sizes 8,64K --time-per-size 0.05 --bin-dir "$top_builddir" --out "$WORK/sweep"
hosts_of "$WORK/sweep/results.csv" 2 "gdrb-sweep --hosts gdrbn1,gdrbn2"
[ "$(col "$WORK/sweep/results.csv" benchmark | sort -u | tr '\n' ' ')" = "mpi_bw mpi_latency " ] ||
	{ cat "$WORK/sweep/results.csv"; fail "gdrb-sweep: not the two benchmarks asked for"; }
for h in gdrbn1 gdrbn2; do
	grep -q "\"hostname\": *\"$h\"" "$WORK/sweep/meta.json" || { cat "$WORK/sweep/meta.json"; fail "gdrb-sweep: meta.json lacks node $h"; }
done
pass "gdrb-sweep --hosts gdrbn1,gdrbn2: every row on 2 hosts, meta.json describes both nodes"

# A node cut off the network mid-run (its link down): rank 0 names rank 1 and its host within
# --timeout, and the rows measured before stay. mpirun itself waits for the daemon it can no
# longer reach (Open MPI's way), so the link comes back once the binary has spoken.
csv=$WORK/cut.csv
on_node gdrbn1 "$MPIRUN" -np 2 --host gdrbn1,gdrbn2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8:256M -t 0.5 -T 3 \
	--csv "$csv" >"$WORK/cut.out" 2>"$WORK/cut.err" &
launcher=$!
for _ in $(seq 1 600); do
	[ -f "$csv" ] && [ "$(wc -l <"$csv")" -ge 4 ] && break
	kill -0 "$launcher" 2>/dev/null || break
	sleep 0.1
done
rows_before=$(($(wc -l <"$csv" 2>/dev/null || echo 1) - 1))
[ "$rows_before" -ge 3 ] || {
	cat "$WORK/cut.out" "$WORK/cut.err"
	kill -0 "$launcher" 2>/dev/null && fail "the run wrote no 3 rows in 60 s, still running (output above)"
	fail "the run ended before writing 3 rows (output above)"
}
cut_off gdrbn2 "$WORK/cut.err" 'no answer from rank 1' "the run"
grep -q '^gdrb_mpi_latency: rank 0 (gdrbn1): error: timeout: no answer from rank 1 (gdrbn2) for [0-9]* s' "$WORK/cut.err" ||
	{ cat "$WORK/cut.err"; fail "gdrbn2 cut off: no line naming rank 1 on gdrbn2"; }
[ "$took" -le 15 ] || fail "gdrbn2 cut off: named after $took s, --timeout was 3 s"
[ "$(($(wc -l <"$csv") - 1))" -ge "$rows_before" ] || fail "gdrbn2 cut off: rows measured before were lost"
pass "gdrbn2 cut off the network mid-run: rank 1 on gdrbn2 named after $took s (--timeout 3), $rows_before rows kept"

# --- gdrb_mpi_pairs across nodes (switches on when it is built) ---------------------------
# Its granularities read the hosts of the ranks: only distinct nodes can test them.
pairs=$top_builddir/mpi/gdrb_mpi_pairs
if [ ! -x "$pairs" ]; then
	echo "skipped case: gdrb_mpi_pairs is not built; granularities across nodes not run"
	exit 0
fi
# rail: 2 ranks ("GPUs") on each of 4 nodes; local rank i pairs only with local rank i elsewhere.
mkdir "$WORK/rail"
step rail "$MPIRUN" -np 8 --host gdrbn1:2,gdrbn2:2,gdrbn3:2,gdrbn4:2 "$pairs" --granularity rail -m 8K -t 0.05 \
	-T 20 --validate --csv "$WORK/rail/pairs.csv"
awk -F, '
	NR == FNR { split($0, r, "\t"); host[r[1]] = r[2]; lr[r[1]] = r[3]; next }
	FNR == 1 { next }
	{ for (j = 2; j <= NF; j++) {
		i = $1; d = j - 2; want = i != d && lr[i] == lr[d] && host[i] != host[d]
		if (want != ($j != "")) { print "cell " i "->" d " (" host[i] "/" lr[i] " -> " host[d] "/" lr[d] "): \"" $j "\""; bad = 1 }
		cells += $j != ""
	} }
	END { if (cells != 24) { print cells " cells, expected 24"; bad = 1 } exit bad }' \
	<(ranks_col "$WORK/rail/pairs-ranks.csv" rank,host,local_rank) "$WORK/rail/pairs-8192-direct.csv" >"$WORK/rail.check" ||
	{ cat "$WORK/rail/pairs-ranks.csv" "$WORK/rail/pairs-8192-direct.csv" "$WORK/rail.check"; fail "--granularity rail: the matrix"; }
[ "$(ranks_col "$WORK/rail/pairs-ranks.csv" host | sort -u | wc -l)" -eq 4 ] || fail "--granularity rail: not 4 hosts in the rank table"
pass "gdrb_mpi_pairs --granularity rail, 2 ranks on each of 4 nodes: the 24 same-rail pairs measured, no other cell"

# node: one rank on each of 6 nodes, every pair measured.
mkdir "$WORK/node"
step node "$MPIRUN" -np 6 --host "$(bed_hosts 6)" "$pairs" --granularity node -m 8K -t 0.05 -T 20 --validate \
	--csv "$WORK/node/pairs.csv"
[ "$(sed 1d "$WORK/node/pairs-8192-direct.csv" | tr ',' '\n' | grep -c .)" -eq $((6 + 30)) ] ||
	{ cat "$WORK/node/pairs-8192-direct.csv"; fail "--granularity node: not every pair of 6 nodes measured"; }
pass "gdrb_mpi_pairs --granularity node across 6 nodes: 30 pairs measured"

# Nodes that do not match the granularity: exit 2, one line of its own naming the hosts.
rc=0
on_node gdrbn1 "$MPIRUN" -np 3 --host gdrbn1:2,gdrbn2:1 "$pairs" --granularity rail -m 8 \
	>"$WORK/uneven.out" 2>"$WORK/uneven.err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/uneven.out" "$WORK/uneven.err"; fail "--granularity rail on 2+1 ranks: exit $rc, expected 2"; }
[ "$(our_lines gdrb_mpi_pairs "$WORK/uneven.err")" -eq 1 ] &&
	grep -q '^gdrb_mpi_pairs: .*host gdrbn1 runs 2 and host gdrbn2 runs 1' "$WORK/uneven.err" ||
	{ cat "$WORK/uneven.err"; fail "--granularity rail on 2+1 ranks: not one line naming both hosts"; }
pass "gdrb_mpi_pairs --granularity rail, 2 ranks on gdrbn1 and 1 on gdrbn2: exit 2, $(grep '^gdrb_mpi_pairs:' "$WORK/uneven.err")"

# A node cut off mid-run: the rank on it named within --timeout, the finished rounds kept.
mkdir "$WORK/pcut"
on_node gdrbn1 "$MPIRUN" -np 6 --host "$(bed_hosts 6)" "$pairs" -m 64K -t 0.3 -T 3 --csv "$WORK/pcut/pairs.csv" \
	>"$WORK/pcut.out" 2>"$WORK/pcut.err" &
launcher=$!
for _ in $(seq 1 600); do
	grep -q '^ *2 ' "$WORK/pcut.out" 2>/dev/null && break
	sleep 0.1
done
if ! grep -q '^ *2 ' "$WORK/pcut.out"; then
	# Seen once in the fresh root beside the sanitizer pass, the run already ended: what it said.
	kill "$launcher" 2>/dev/null
	rc=0
	wait "$launcher" || rc=$?
	cat "$WORK/pcut.out" "$WORK/pcut.err"
	fail "gdrb_mpi_pairs: no round 2 in 60 s (the run's exit status $rc, its output above)"
fi
cut_off gdrbn4 "$WORK/pcut.err" 'no answer from rank 3' gdrb_mpi_pairs
# Named by a rank waiting on it: its sender or receiver in the round (rank 0 where it meets
# rank 3 then), or a rank waiting on it in a step of all ranks (every wait there is on one
# named rank: common/boot/boot_steps.c); the ranks stuck behind it name theirs too.
grep -q '^gdrb_mpi_pairs: rank [0-9] (gdrbn[0-9]): error: timeout: no answer from rank 3 (gdrbn4)' "$WORK/pcut.err" ||
	{ cat "$WORK/pcut.err"; fail "gdrb_mpi_pairs, gdrbn4 cut off: no rank names rank 3 on gdrbn4"; }
[ "$took" -le 15 ] || fail "gdrb_mpi_pairs, gdrbn4 cut off: named after $took s, --timeout was 3 s"
# The matrix holds the pairs of the rounds stdout reported done, and no other.
shifts=$(awk '$3 == "bw" && $1 ~ /^[0-9]+$/ { printf "%s%s", sep, $2; sep = "," }' "$WORK/pcut.out")
awk -F, -v shifts="$shifts" '
	BEGIN { k = split(shifts, s, ","); for (i = 1; i <= k; i++) done[s[i]] = 1 }
	NR == 1 { n = NF - 1; next }
	{ for (j = 2; j <= NF; j++) if ((($j != "") != (((j - 2 - $1 + n) % n) in done)) && $1 != j - 2) { print "cell " $1 "->" j - 2 ": \"" $j "\""; bad = 1 } }
	END { if (k < 2) { print "fewer than 2 rounds done: " shifts; bad = 1 } exit bad }' \
	"$WORK/pcut/pairs-65536-direct.csv" >"$WORK/pcut.check" ||
	{ cat "$WORK/pcut.out" "$WORK/pcut/pairs-65536-direct.csv" "$WORK/pcut.check"; fail "gdrb_mpi_pairs, gdrbn4 cut off: the matrix is not the finished rounds"; }
pass "gdrb_mpi_pairs, gdrbn4 cut off mid-run: rank 3 on gdrbn4 named after $took s, the pairs of shifts $shifts kept"
