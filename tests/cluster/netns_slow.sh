#!/bin/bash
# A slow node on the multi-node test bed (tests/cluster/netns/bed.sh): tests/cluster/slow_node.so, a PMPI
# interposer LD_PRELOADed into the ranks, holds back the messages of the ranks on the host
# named by GDRB_SLOW_HOST. gdrb_mpi_bw across two nodes must show it: the bandwidth drops
# when either end is the slow node, and not when the slow host is not in the job. Then,
# where gdrb_mpi_pairs is built, across 6 nodes with gdrbn4 slow: its row and
# column of the matrix must read low; and where the pairs tools are there too
# (scripts/profiles/pairs.profile), the sweep with a `pairs` rule must fail naming node
# gdrbn4 and no other node, and pass the same nodes without a slow one; gdrbn4's NIC shaped
# (tc tbf) is named the same way; and one slow link (only gdrbn2 -> gdrbn5 shaped, tc htb) is
# named as that link alone.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=netns/bed.sh
. "$(dirname "$0")/netns/bed.sh"
need_mpi
slow=$top_builddir/tests/cluster/slow_node.so
[ -f "$slow" ] || fail "$slow is not built (make check builds it: make tests/cluster/slow_node.so)"
bed_up 6
# Under the sanitizer pass the binaries link ASan, which must otherwise come first of all
# libraries; the interposer has no code ASan needs to see.
[ "${GDRB_SANITIZE:-0}" = 1 ] && export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# bw NAME SLOW_HOST [DIR]: gdrb_mpi_bw at 64 KiB from gdrbn1 to gdrbn2, with SLOW_HOST as the
# slow node (none: empty); prints the bandwidth in GB/s.
bw() {
	local name=$1 rc=0
	on_node gdrbn1 "$MPIRUN" -np 2 --host gdrbn1,gdrbn2 -x LD_PRELOAD="$slow" -x GDRB_SLOW_HOST="$2" \
		-x GDRB_SLOW_DIR="${3:-both}" -x GDRB_SLOW_GBPS=0.02 "$top_builddir/mpi/gdrb_mpi_bw" -m 64K -t 0.2 -T 30 \
		--csv "$WORK/$name.csv" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$WORK/$name.out" "$WORK/$name.err" >&2; fail "$name: gdrb_mpi_bw exited $rc"; }
	csv_col "$WORK/$name.csv" bw_GBps
}

# below A B: A < B / 2.
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b / 2) }'; }

base=$(bw base gdrbn9)
! grep -q '^slow_node:' "$WORK/base.err" || { cat "$WORK/base.err"; fail "slow_node fired on a host not named"; }
recv=$(bw recv gdrbn2 recv)
grep -q '^slow_node: gdrbn2 rank 1: receives delayed' "$WORK/recv.err" ||
	{ cat "$WORK/recv.err"; fail "slow_node did not say it slowed gdrbn2's receives"; }
send=$(bw send gdrbn1 send)
grep -q '^slow_node: gdrbn1 rank 0: sends delayed' "$WORK/send.err" ||
	{ cat "$WORK/send.err"; fail "slow_node did not say it slowed gdrbn1's sends"; }
below "$recv" "$base" || fail "slow receiver gdrbn2: $recv GB/s, not below half of $base GB/s"
below "$send" "$base" || fail "slow sender gdrbn1: $send GB/s, not below half of $base GB/s"
pass "gdrb_mpi_bw 64KiB gdrbn1 -> gdrbn2: $base GB/s; slow receiver $recv GB/s; slow sender $send GB/s"

# --- all pairs: the slow node named (switches on when gdrb_mpi_pairs is built) -------------
if [ ! -x "$top_builddir/mpi/gdrb_mpi_pairs" ]; then
	echo "skipped case: gdrb_mpi_pairs is not built; the all-pairs runs did not run"
	exit 0
fi
# gdrb_mpi_pairs across 6 nodes, gdrbn4 (rank 3) slow. Healthy pairs here spread down to half
# their median (6 ranks on 2 loaded cores): the slow node is made about 10x slower than that.
# Each pair is timed for 0.2 s: a healthy rank descheduled for 20 ms (6 ranks on 2 busy cores)
# then costs its pair a tenth, where with 0.05 s one innocent link read 9% of the median.
pairs_slow=(-x GDRB_SLOW_GBPS=0.01)
pairs_args=(-m 64K -t 0.2 -T 30)

# matrix_check DIR MATRIX: in DIR/MATRIX (the 64 KiB bandwidth matrix: pairs-65536-direct.csv
# as the binary names it, pairs-host-65536-direct.csv in a sweep's results) every cell of row 3
# and column 3 is below half the median of the cells without rank 3; the other cells below
# that are listed.
matrix_check() {
	local matrix=$1/$2
	[ -s "$matrix" ] || { ls "$1"; fail "no $matrix"; }
	[ "$(ranks_col "$1/pairs-ranks.csv" host rank=3)" = gdrbn4 ] || { cat "$1/pairs-ranks.csv"; fail "rank 3 is not on gdrbn4"; }
	awk -F, -v slow=3 '
	NR == 1 { n = NF - 1; next }
	{ for (j = 2; j <= NF; j++) if ($j != "") { v[NR - 2, j - 2] = $j; if (NR - 2 != slow && j - 2 != slow) rest[++m] = $j } }
	END {
		if (n != 6 || m != 20) { print "matrix is not 6 x 6 with 30 cells: " n ", " m " other cells"; exit 1 }
		for (a = 2; a <= m; a++) for (b = a; b > 1 && rest[b - 1] + 0 > rest[b] + 0; b--) { t = rest[b]; rest[b] = rest[b - 1]; rest[b - 1] = t }
		med = (rest[10] + rest[11]) / 2
		for (i = 0; i < n; i++) for (j = 0; j < n; j++) if (i != j) {
			if (!((i, j) in v)) { print "cell " i "->" j " empty"; bad = 1; continue }
			low = v[i, j] < med / 2
			if ((i == slow || j == slow) && !low) { print "cell " i "->" j " = " v[i, j] " not below half of " med; bad = 1 }
			if (i != slow && j != slow && low) others = others " " i "->" j
		}
		printf "median without rank 3 %.3f GB/s; other low cells:%s\n", med, others ? others : " none"
		exit bad
	}' "$matrix" >"$1.check" || { cat "$matrix" "$1.check"; fail "gdrb_mpi_pairs: the slow node's row and column"; }
}

if [ ! -f "$top_srcdir/scripts/profiles/pairs.profile" ]; then
	# Without the pairs tools (part B): the binary alone.
	mkdir "$WORK/direct"
	rc=0
	on_node gdrbn1 "$MPIRUN" -np 6 --host "$(bed_hosts 6)" -x LD_PRELOAD="$slow" -x GDRB_SLOW_HOST=gdrbn4 \
		"${pairs_slow[@]}" "$top_builddir/mpi/gdrb_mpi_pairs" "${pairs_args[@]}" --csv "$WORK/direct/pairs.csv" \
		>"$WORK/direct.out" 2>"$WORK/direct.err" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$WORK/direct.out" "$WORK/direct.err"; fail "gdrb_mpi_pairs across 6 nodes exited $rc"; }
	matrix_check "$WORK/direct" pairs-65536-direct.csv
	pass "gdrb_mpi_pairs across 6 nodes, gdrbn4 slow: its row and column below half; $(cat "$WORK/direct.check")"
	echo "skipped case: no scripts/profiles/pairs.profile; the all-pairs verdict did not run"
	exit 0
fi

# only_gdrbn4 NAME VERDICT_JSON MATRIX: the verdict's suspects are node gdrbn4 and nothing else.
only_gdrbn4() {
	suspects_only "$2" 0 node "node gdrbn4 " >"$WORK/$1.suspects" ||
		{ cat "$2" "$3"; echo "suspects:"; cat "$WORK/$1.suspects"
		  fail "$1: the verdict names more than node gdrbn4 (an innocent link or node) or nothing"; }
}

# The sweep with a rule relative to the fabric: gdrb accept names the node. The slow node, NIC
# and link read 2-5% of the median; healthy pairs, 6 ranks polling on 2 cores, dip to 22% of it
# under load: the rule sits between, at 12%.
command -v python3 >/dev/null 2>&1 || skip "python3 not installed (gdrb-sweep); the gdrb_mpi_bw case passed"
cat >"$WORK/slow.profile" <<PROFILE
description all pairs across the test bed's nodes, one slow
run gdrb_mpi_pairs mem=host sizes=64K time=0.2 args="-T 30"
pairs bw below=12%median size=64K
PROFILE
# sweep NAME SLOW_HOST [LAUNCHER_ARGS [BIN_DIR]]: the all-pairs sweep across gdrbn1..6, BIN_DIR's
# binaries before the build's; exit status in $rc.
sweep() {
	rc=0
	on_node gdrbn1 "$top_srcdir/scripts/gdrb" sweep --hosts "$(bed_hosts 6)" --np 6 --profile "$WORK/slow.profile" \
		--launcher-args "-x LD_PRELOAD=$slow -x GDRB_SLOW_HOST=$2 ${pairs_slow[*]}${3:+ $3}" \
		${4:+--bin-dir "$4"} --bin-dir "$top_builddir" --out "$WORK/$1" >"$WORK/$1.out" 2>"$WORK/$1.err" || rc=$?
	if [ ! -s "$WORK/$1/pairs.csv" ] || [ ! -s "$WORK/$1/pairs-host-65536-direct.csv" ]; then
		cat "$WORK/$1.err"
		ls "$WORK/$1"
		fail "$1: no pairs.csv or matrix in the results directory"
	fi
	# The verdict as the sweep says it (stdout) and writes it (summary.md, verdict.json).
	cat "$WORK/$1.out" "$WORK/$1/summary.md" "$WORK/$1/verdict.json" >"$WORK/$1.verdict" 2>/dev/null
}
sweep healthy gdrbn9
[ "$rc" -eq 0 ] || { cat "$WORK/healthy.err" "$WORK/healthy.verdict"; fail "healthy nodes: gdrb-sweep exited $rc, expected 0"; }
# The slow sweep also reads counters: every node's from the mlx5 fixture tree, and a wrapper makes
# gdrbn4's symbol_error rise by 880 over the run (the hook on that node alone).
mkdir -p "$WORK/cbin"
cat >"$WORK/cbin/gdrb_mpi_pairs" <<WRAP
#!/bin/sh
[ "\$(hostname)" = gdrbn4 ] && export GDRB_INJECT_COUNTER=symbol_error+880@1
exec "$top_builddir/mpi/gdrb_mpi_pairs" "\$@"
WRAP
chmod +x "$WORK/cbin/gdrb_mpi_pairs"
sweep slow gdrbn4 "-x GDRB_TEST_HOOKS=1 -x GDRB_INJECT_SYSFS_ROOT=$top_builddir/tests/fixtures/mlx5-counters/sys" "$WORK/cbin"
[ "$rc" -eq 1 ] || { cat "$WORK/slow.err" "$WORK/slow.verdict"; fail "slow gdrbn4: gdrb-sweep exited $rc, expected 1"; }
matrix_check "$WORK/slow" pairs-host-65536-direct.csv
grep -q 'node gdrbn4' "$WORK/slow.verdict" || { cat "$WORK/slow.verdict"; fail "the verdict does not name node gdrbn4"; }
for h in gdrbn1 gdrbn2 gdrbn3 gdrbn5 gdrbn6; do
	! grep -q "node $h" "$WORK/slow.verdict" || { cat "$WORK/slow.verdict"; fail "the verdict names node $h too"; }
done
pass "gdrb_mpi_pairs across 6 nodes, gdrbn4 slow: its row and column below half; $(cat "$WORK/slow.check")"
# The verdict names gdrbn4 and nothing else: a pair's figure is that pair's alone (a barrier
# starts each iteration, the sender's time ends at its destination's acknowledgement), so no
# link between healthy nodes may read low because one of its ends also meets the slow node.
only_gdrbn4 slow "$WORK/slow/verdict.json" "$WORK/slow/pairs-host-65536-direct.csv"
pass "gdrb-sweep, all pairs across 6 nodes: healthy PASS; gdrbn4 slow FAIL, $(grep -m1 -o 'suspects: .*' "$WORK/slow.out")"

# ... and from suspect to cause: in that sweep every node's counters were read from the mlx5
# fixture tree, gdrbn4's symbol_error rising by 880 over the run (the wrapper sets the hook on
# gdrbn4 alone). The pairs binary's counter file is in results.counters.csv, and the verdict
# names the rise as gdrbn4's cause, on gdrbn4 and on no other node.
[ "$(awk -F, '$4 == "gdrbn4" && $9 == "symbol_error" && $13 == 880' "$WORK/slow/results.counters.csv" | wc -l)" -eq 2 ] &&
	[ "$(awk -F, '$4 != "gdrbn4" && $9 == "symbol_error" && $13 != 0' "$WORK/slow/results.counters.csv" | wc -l)" -eq 0 ] ||
	{ cat "$WORK/slow/results.counters.csv"; fail "results.counters.csv: not gdrbn4's two ports +880 and no other rise"; }
grep -q 'node gdrbn4 .*causes: gdrbn4: mlx5_0 port 1 symbol_error +880, mlx5_1 port 1 symbol_error +880' "$WORK/slow.verdict" ||
	{ cat "$WORK/slow.verdict"; fail "the verdict does not name gdrbn4's symbol_error rise as the cause"; }
pass "gdrb-sweep, gdrbn4 slow with its symbol_error rising: $(grep -m1 -o 'causes: .*' "$WORK/slow.out")"

# ... and by pair: no rank is in two pairs of a latency phase, and each reads its port after
# each phase it is in, so what rose in a phase is that pair's (nic_errors in its rows). Here
# gdrbn3's symbol_error rises by 5 at each of its readings (the hook's steady form) on both of
# its fixture ports: every latency row with gdrbn3 at one end counted 10, no other row any.
cat >"$WORK/cbin/ramp" <<WRAP
#!/bin/sh
[ "\$(hostname)" = gdrbn3 ] && export GDRB_INJECT_COUNTER=symbol_error+5@1+
exec "$top_builddir/mpi/gdrb_mpi_pairs" "\$@"
WRAP
chmod +x "$WORK/cbin/ramp"
mkdir "$WORK/bypair"
on_node gdrbn1 "$MPIRUN" -np 4 --host "$(bed_hosts 4)" -x GDRB_TEST_HOOKS=1 \
	-x GDRB_INJECT_SYSFS_ROOT="$top_builddir/tests/fixtures/mlx5-counters/sys" "$WORK/cbin/ramp" --metric lat \
	-m 8 -t 0.05 -T 30 --csv "$WORK/bypair/pairs.csv" >"$WORK/bypair.out" 2>"$WORK/bypair.err" ||
	{ cat "$WORK/bypair.out" "$WORK/bypair.err"; fail "gdrb_mpi_pairs --metric lat with gdrbn3's counter rising"; }
pairs_col "$WORK/bypair/pairs.csv" src_host,dst_host,nic_errors,nic_packets,note >"$WORK/bypair.rows"
awk -F'\t' '{ three = $1 == "gdrbn3" || $2 == "gdrbn3"; n++ }
	$3 != (three ? 10 : 0) || $4 != "0" || three != ($5 ~ /NIC errors rose: mlx5_0 port 1 symbol_error \+5 \(gdrbn3\)/) { bad++ }
	END { exit bad || n != 12 }' "$WORK/bypair.rows" ||
	{ cat "$WORK/bypair.rows"; fail "by pair: not nic_errors 10 in the 6 rows with gdrbn3 and 0 in the 6 without"; }
pass "gdrb_mpi_pairs --metric lat across 4 nodes, gdrbn3's symbol_error rising at each reading: nic_errors 10 in each of its 6 rows, 0 in the others"

# A slow NIC, not a slow process: gdrbn4's veth shaped (tc tbf) at both ends, its sends on its
# side, its receives on the switch's, so transfers are slow both ways and nothing in MPI is.
# 10 Mbit/s: at load 10 on two cores the healthy median fell to 0.03 GB/s, where 40 Mbit/s
# (0.005 GB/s) read 17% of it, above the rule's 12%, and the node went unnamed.
sw=$(bed_ns switch)
ns=$(bed_ns gdrbn4)
if ! command -v tc >/dev/null 2>&1; then
	echo "skipped case: no 'tc' (iproute2): the shaped slow NIC did not run"
	exit 0
fi
if ! tc -n "$ns" qdisc add dev eth0 root tbf rate 10mbit burst 32kb latency 400ms 2>"$WORK/tc.err" ||
	! tc -n "$sw" qdisc add dev p4 root tbf rate 10mbit burst 32kb latency 400ms 2>>"$WORK/tc.err"; then
	echo "skipped case: tc tbf on gdrbn4's veth: $(head -1 "$WORK/tc.err"); the shaped slow NIC did not run"
	exit 0
fi
# shaped_run NAME WHAT: gdrb_mpi_pairs across the 6 nodes into $WORK/NAME (nothing in MPI
# slowed: the shaping is in the network), then gdrb accept, which must fail (exit 1).
shaped_run() {
	local rc=0
	mkdir "$WORK/$1"
	on_node gdrbn1 "$MPIRUN" -np 6 --host "$(bed_hosts 6)" "$top_builddir/mpi/gdrb_mpi_pairs" "${pairs_args[@]}" \
		--csv "$WORK/$1/pairs.csv" >"$WORK/$1.out" 2>"$WORK/$1.err" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$WORK/$1.out" "$WORK/$1.err"; fail "gdrb_mpi_pairs, $2: exit $rc"; }
	rc=0
	"$top_srcdir/scripts/gdrb" accept "$WORK/$1" "$WORK/slow.profile" >"$WORK/$1.verdict" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || { cat "$WORK/$1.verdict" "$WORK/$1/pairs-65536-direct.csv"; fail "$2: gdrb accept exited $rc, expected 1"; }
}
shaped_run nic "gdrbn4's NIC shaped"
matrix_check "$WORK/nic" pairs-65536-direct.csv
only_gdrbn4 nic "$WORK/nic/verdict.json" "$WORK/nic/pairs-65536-direct.csv"
pass "gdrbn4's NIC shaped to 10 Mbit/s both ways (tc tbf): its row and column below half; $(cat "$WORK/nic.check"); suspects: $(paste -sd';' "$WORK/nic.suspects")"

# A slow link, not a node: gdrbn4's NIC back to full speed, then only what gdrbn2 sends to
# gdrbn5 shaped (htb, a u32 filter on the destination's address, on gdrbn2's eth0). With 6
# nodes, gdrbn5 -> gdrbn2 runs in the same round, and gdrbn2's TCP acknowledgements of it wait
# in the shaped queue behind its data: that direction may read low too (seen: 3% of the
# median both ways), as on a real congested link. The verdict must name that link, one way
# or both, and nothing else: no node, no other link.
tc -n "$ns" qdisc del dev eth0 root && tc -n "$sw" qdisc del dev p4 root || fail "cannot remove gdrbn4's shaping"
ns2=$(bed_ns gdrbn2)
if ! { tc -n "$ns2" qdisc add dev eth0 root handle 1: htb default 10 &&
	tc -n "$ns2" class add dev eth0 parent 1: classid 1:20 htb rate 10mbit &&
	tc -n "$ns2" filter add dev eth0 parent 1: protocol ip u32 match ip dst "$BED_NET.5/32" flowid 1:20; } 2>"$WORK/tc.err"; then
	echo "skipped case: tc htb with a u32 filter on gdrbn2's veth: $(head -1 "$WORK/tc.err"); the slow link did not run"
	exit 0
fi
shaped_run link "gdrbn2 -> gdrbn5 shaped"
suspects_only "$WORK/link/verdict.json" 1 link "link gdrbn2 -> gdrbn5 only" "link gdrbn2 <-> gdrbn5 " \
	>"$WORK/link.suspects" ||
	{ cat "$WORK/link.verdict" "$WORK/link/pairs-65536-direct.csv"; echo "suspects:"; cat "$WORK/link.suspects"
	  fail "gdrbn2 -> gdrbn5 shaped: the verdict does not name the link gdrbn2 - gdrbn5 alone"; }
pass "gdrbn2 -> gdrbn5 shaped to 10 Mbit/s (tc htb, one destination): FAIL, suspects: $(paste -sd';' "$WORK/link.suspects")"
