#!/bin/bash
# scripts/measure/measure-omb against a fake OMB source tree this test writes (a configure that writes a
# Makefile, binaries that print OMB's tables) and the real gdrbench binaries with a short -t: the
# out-of-tree build (autogen.sh first where a tree has no configure), the binaries found where
# OMB keeps them (new and old layouts), the rounds alternating, the report. The fake OMB's
# figures are far from gdrbench's, so that run misses every target. Then the runs it kept are
# judged again (--from-raw) with OMB's tables rewritten from gdrbench's own CSV rows: within 5%
# they pass (exit 0); OMB 20% faster at one bw size misses there (exit 1). Bad usage exits 2 with
# one line; no mpirun or no gdrbench binaries, 77.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
script=$top_srcdir/scripts/measure/measure-omb
command -v python3 >/dev/null 2>&1 || skip "no python3"

# --- a fake OMB source tree ----------------------------------------------------------------------
# Its binaries print OMB's table on rank 0 for -m MIN:MAX, 1 s latencies and 0.01 MB/s at every
# size, far from any figure of gdrbench's; a decoy osu_latency outside c/mpi must not be taken.
src=$WORK/omb-src
mkdir -p "$src"
echo 'AC_INIT([OSU-Micro-Benchmarks], [9.9-fake], [nobody@example.invalid])' >"$src/configure.ac"
cat >"$src/fake-osu" <<'FAKE'
#!/bin/bash
name=$(basename "$0")
case " $* " in
*" -v "*) echo "# OSU MPI Fake Test v9.9-fake"; exit 0 ;;
*" -h "*) echo "  -T, --type  [all,mpi_char,mpi_int,mpi_float]"; exit 0 ;;
esac
[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0
range=$(printf '%s\n' "$@" | sed -n '/^-m$/{n;p}')
echo "# OSU MPI Fake $name Test v9.9-fake"
case $name in
*bw) echo "# Size      Bandwidth (MB/s)"; value=0.01 ;;
*) echo "# Size       Avg Latency(us)"; value=1000000 ;;
esac
for ((s = ${range%:*}; s <= ${range#*:}; s *= 2)); do printf '%-10d%18.2f\n' "$s" "$value"; done
FAKE
cat >"$src/configure" <<'CONFIGURE'
#!/bin/bash
srcdir=$(cd "$(dirname "$0")" && pwd)
echo "$*" >config.args
case " $* " in *" CC=mpicc "*) ;; *) echo "configure: expected CC=mpicc" >&2; exit 1 ;; esac
{
	printf 'all:\n'
	printf '\tmkdir -p c/mpi/pt2pt/standard c/mpi/collective/blocking python\n'
	for b in osu_latency osu_bw osu_bibw; do printf '\tcp %s/fake-osu c/mpi/pt2pt/standard/%s\n' "$srcdir" "$b"; done
	printf '\tcp %s/fake-osu c/mpi/collective/blocking/osu_allreduce\n' "$srcdir"
	printf '\tprintf "#!/bin/sh\\nexit 9\\n" >python/osu_latency\n'
	printf '\tchmod +x c/mpi/pt2pt/standard/* c/mpi/collective/blocking/* python/osu_latency\n'
} >Makefile
CONFIGURE
chmod +x "$src/configure" "$src/fake-osu"

# --- bad usage ---------------------------------------------------------------------------------
mkdir "$WORK/empty"
expect_refused "^measure-omb: --rounds: expected a positive integer, like 5, not '0'" "$script" --rounds 0 "$WORK"
expect_refused "^measure-omb: --rounds: expected a positive integer, like 5, not 'x'" "$script" --rounds x "$WORK"
expect_refused "^measure-omb: OMB_SOURCE_DIR: '/nonexistent' is not a directory" "$script" /nonexistent
expect_refused "OMB_SOURCE_DIR: '$WORK/empty' has neither configure nor autogen.sh" "$script" "$WORK/empty"
expect_refused "expected one of OMB_SOURCE_DIR, --omb-bin DIR or --from-raw WORK_DIR" "$script"
expect_refused "unknown option '--bogus'" "$script" --bogus "$WORK"
expect_refused "--bw-sizes: expected MIN:MAX, powers of two" "$script" --bw-sizes 1K:3K "$WORK"
expect_refused "--np-coll: expected a number of ranks of 2 or more" "$script" --np-coll 1 "$WORK"
expect_refused "--report: no directory '/nonexistent'" "$script" --report /nonexistent/omb.md "$src"
expect_refused "--from-raw: no readable run.json in $WORK/empty" "$script" --from-raw "$WORK/empty" --report "$WORK/x.md"
"$script" --help | grep -q 'scripts/measure/measure-omb \[options\] OMB_SOURCE_DIR' || fail "--help prints no usage"
pass "bad usage: exit 2 with one line"

need_mpi
# The launcher through a wrapper that logs the program each run starts.
mkdir "$WORK/bin"
cat >"$WORK/bin/mpirun-logged" <<LAUNCHER
#!/bin/bash
for w in "\$@"; do case \$w in *.csv) ;; */osu_* | */gdrb_mpi_*) basename "\$w" >>"$WORK/launched" ;; esac; done
exec $(command -v "$MPIRUN") "\$@"
LAUNCHER
chmod +x "$WORK/bin/mpirun-logged"

# gdrbench's --buffers single where the binaries have it; their default buffers otherwise.
buffers=(--allow-default-buffers)
if "$top_builddir/mpi/gdrb_mpi_bw" --help | grep -q -- '--buffers'; then
	buffers=()
else
	rc=0
	"$script" --build-dir "$top_builddir" --report "$WORK/x.md" "$src" >"$WORK/nobuf.out" 2>"$WORK/nobuf.err" || rc=$?
	{ [ "$rc" -eq 1 ] && grep -q '^measure-omb: gdrb_mpi_bw/gdrb_mpi_bibw have no --buffers option' "$WORK/nobuf.err"; } ||
		{ cat "$WORK/nobuf.err"; fail "binaries without --buffers: exit $rc, expected 1 and the reason"; }
	pass "binaries without --buffers: $(cat "$WORK/nobuf.err")"
fi
mo() {
	"$script" --build-dir "$top_builddir" --rounds 3 --lat-sizes 8:32 --bw-sizes 1K:4K \
		--allreduce-sizes 8:32 --time-per-size 0.02 "${buffers[@]}" "$@"
}

# --- no MPI, no binaries: 77 ---------------------------------------------------------------------
# one_line CODE PATTERN FILE: the run exited CODE ($rc) with exactly one stderr line holding PATTERN.
one_line() {
	[ "$rc" -eq "$1" ] || { cat "$3"; fail "exit $rc, expected $1"; }
	[ "$(wc -l <"$3")" -eq 1 ] || { cat "$3"; fail "not one line on stderr"; }
	grep -q -- "$2" "$3" || { cat "$3"; fail "the message lacks '$2'"; }
}
rc=0
mo --mpirun /nonexistent/mpirun --report "$WORK/x.md" "$src" >/dev/null 2>"$WORK/77.err" || rc=$?
one_line 77 "^measure-omb: /nonexistent/mpirun not found: no MPI here" "$WORK/77.err"
rc=0
mo --build-dir "$WORK/empty" --report "$WORK/x.md" "$src" >/dev/null 2>"$WORK/77.err" || rc=$?
one_line 77 "^measure-omb: --build-dir: no mpi/gdrb_mpi_latency, .* in $WORK/empty: build gdrbench" "$WORK/77.err"
[ ! -e "$WORK/x.md" ] || fail "a report without a run"
pass "no mpirun, no gdrbench binaries: exit 77 with one line"

# --- a run against the fake OMB: built, found, alternated, reported; every target missed -------------
results_before=$(ls -lA "$top_srcdir/results")
rc=0
mo --mpirun "$WORK/bin/mpirun-logged" --work "$WORK/run" --report "$WORK/live.md" "$src" \
	>"$WORK/live.out" 2>"$WORK/live.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/live.err"; fail "the fake OMB's figures: exit $rc, expected 1 (targets missed)"; }
grep -q '^measure-omb: round\|^measure-omb: report' "$WORK/live.err" || fail "no progress on stderr"
grep -v '^measure-omb: \(round [123]/3: [a-z_]*\|OMB: .*\|report: .*\)$' "$WORK/live.err" &&
	fail "a run failed or complained (lines above)"
# OMB's 2 printed decimals would round 0.16 us by 3%: built to print 4.
grep -q '^CC=mpicc \(CXX=mpicxx \)\{0,1\}CFLAGS=-g -O2 -DFLOAT_PRECISION=4 CXXFLAGS=-g -O2 -DFLOAT_PRECISION=4$' \
	"$WORK/run/omb-build/config.args" || fail "configure's arguments: $(cat "$WORK/run/omb-build/config.args")"
[ ! -e "$src/Makefile" ] || fail "OMB was built in its source tree"
pairs="osu_latency gdrb_mpi_latency osu_bw gdrb_mpi_bw osu_bibw gdrb_mpi_bibw osu_allreduce gdrb_mpi_allreduce"
swapped="gdrb_mpi_latency osu_latency gdrb_mpi_bw osu_bw gdrb_mpi_bibw osu_bibw gdrb_mpi_allreduce osu_allreduce"
[ "$(tr '\n' ' ' <"$WORK/launched")" = "$pairs $swapped $pairs " ] ||
	fail "the runs' order: $(tr '\n' ' ' <"$WORK/launched"), expected OMB first in rounds 1 and 3, gdrbench in 2"
grep -qx 'latency at 8 B within 5% of osu_latency: MISS at 8 B (0\.[0-9]*)' "$WORK/live.out" ||
	{ cat "$WORK/live.out"; fail "latency 1 s: no MISS at 8 B"; }
grep -q '^bw within 5% of osu_bw at every size from 1 KiB to 64 MiB (--buffers [a-z]*): MISS at 1 KiB ([0-9.]*), 2 KiB ([0-9.]*), 4 KiB ([0-9.]*) (partial: 1 KiB..4 KiB measured of 1 KiB..64 MiB)$' "$WORK/live.out" ||
	{ cat "$WORK/live.out"; fail "bw at 0.01 MB/s: no MISS naming each size"; }
report=$WORK/live.md
grep -q '^| CPU | .*, [0-9]* CPUs online (.*) |$' "$report" || fail "report: CPU line"
grep -q '^| Kernel | Linux [0-9]' "$report" || fail "report: kernel line"
grep -q "^| MPI | $("$MPIRUN" --version 2>&1 | head -n 1) |$" "$report" || fail "report: MPI line"
grep -q '^| OMB | OSU-Micro-Benchmarks 9.9-fake (configure.ac) |$' "$report" || fail "report: OMB version"
grep -q "^| gdrbench | $("$top_builddir/mpi/gdrb_mpi_latency" -V | awk '{ print $NF }')" "$report" || fail "report: gdrbench version"
grep -q '^| Load (1 min) | [0-9.]* to [0-9.]* over the rounds |$' "$report" || fail "report: the load's range"
[ "$(grep -c '^| [123] | \(OMB\|gdrbench\) | [0-9.]* [0-9.]* [0-9.]* | [0-9.]* [0-9.]* [0-9.]* |$' "$report")" -eq 3 ] ||
	fail "report: /proc/loadavg before and after each round"
grep -q '^| 2 | gdrbench | ' "$report" || fail "report: round 2 did not start with gdrbench"
grep -q '^# OMB, built out of tree: OMB_SOURCE_DIR/configure CC=mpicc' "$report" || fail "report: configure"
grep -q '^mpirun-logged -np 2 --mca pml ob1 --mca btl self,vader OMB/c/mpi/pt2pt/standard/osu_latency -m 8:32$' "$report" ||
	fail "report: the osu_latency command (or a decoy taken)"
bw_cmd='mpi/gdrb_mpi_bw --mem host -m 1K:4K -W 64'
[ "${#buffers[@]}" -eq 0 ] && bw_cmd+=' --buffers single'
grep -qF -- "mpirun-logged -np 2 --mca pml ob1 --mca btl self,vader $bw_cmd -t 0.02 --csv OUT/round-1/gdrb_mpi_bw.csv" "$report" ||
	fail "report: the gdrb_mpi_bw command"
grep -q 'OMB/c/mpi/collective/blocking/osu_allreduce -m 8:32 -T mpi_float$' "$report" || fail "report: osu_allreduce, floats"
num='[0-9][0-9.]*'
for s in '8 B' '16 B' '32 B'; do
	grep -q "^| $s | $num | 1000000.0 | $num | $num..$num | $num $num $num | [0-9]* [0-9]* [0-9]* |$" "$report" ||
		fail "report: no figures at $s"
done
grep -n "/tmp\|$WORK\|$top_builddir" "$report" && fail "the report names this machine's paths"
grep -nw -- "$(hostname)" "$report" && fail "the report names this machine"
[ "$(ls -lA "$top_srcdir/results")" = "$results_before" ] || fail "the run changed results/"
pass "fake OMB at 1 s and 0.01 MB/s: built out of tree, alternated, every target MISS (exit 1), report complete"

# --- a tree without configure: autogen.sh first; binaries where older releases put them -----------
old=$WORK/omb-old
mkdir "$old"
cp "$src/fake-osu" "$src/configure.ac" "$old/"
cat >"$old/autogen.sh" <<AUTOGEN
#!/bin/sh
sed 's|c/mpi/pt2pt/standard|mpi/pt2pt|g; s|c/mpi/collective/blocking|mpi/collective|g' "$src/configure" >configure
chmod +x configure
AUTOGEN
chmod +x "$old/autogen.sh"
rc=0
mo --rounds 1 --lat-sizes 8:8 --bw-sizes 1K:1K --allreduce-sizes 8:8 --report "$WORK/old.md" "$old" \
	>"$WORK/old.out" 2>"$WORK/old.err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/old.err"; fail "autogen.sh tree: exit $rc, expected 1 (targets missed)"; }
grep -q '^measure-omb: OMB: ./autogen.sh (the tree has no configure)$' "$WORK/old.err" || fail "autogen.sh not run"
grep -q '^# OMB, built out of tree: (cd OMB_SOURCE_DIR && ./autogen.sh)$' "$WORK/old.md" || fail "report: autogen.sh"
grep -q ' OMB/mpi/pt2pt/osu_bibw -m 1024:1024 -W 64$' "$WORK/old.md" || fail "report: osu_bibw in mpi/pt2pt"
grep -q ' OMB/mpi/collective/osu_allreduce -m 8:8 -T mpi_float$' "$WORK/old.md" || fail "report: osu_allreduce in mpi/collective"
pass "a tree with autogen.sh only, binaries in mpi/pt2pt and mpi/collective: built and found"

# --- judged again from the kept runs: OMB = gdrbench's own figures x F ---------------------------
# omb_from_gdrb F1 F2 F3 [BENCH SIZE F]: each OMB table of round R is rewritten from gdrbench's
# CSV of that round, times FR; BENCH at SIZE times F in every round.
omb_from_gdrb() {
	local r f b
	for r in 1 2 3; do
		f=${!r}
		for b in latency bw bibw allreduce; do
			csv_col "$WORK/run/raw/round-$r/gdrb_mpi_$b.csv" size_bytes,bw_GBps,lat_avg_us path=direct pair=all |
				awk -F'\t' -v bench="$b" -v f="$f" -v hit="${4:-}" -v hit_size="${5:-}" -v hit_f="${6:-}" '
				BEGIN {
					bw = bench ~ /bw$/
					print "# OSU MPI Fake Test v9.9-fake"
					print "# Size          " (bw ? "Bandwidth (MB/s)" : "Latency (us)")
				}
				{
					v = bw ? $2 * 1000 : $3
					k = bench == hit && $1 == hit_size ? hit_f : f
					printf "%-10d%24.6f\n", $1, v * k
				}' >"$WORK/run/raw/round-$r/osu_$b.out"
		done
	done
}
# judge NAME RC WHAT: the kept runs judged again into $WORK/NAME.md (and .out, .err); fails the
# test, saying WHAT, unless the exit status is RC.
judge() {
	local rc=0
	"$script" --from-raw "$WORK/run" --report "$WORK/$1.md" >"$WORK/$1.out" 2>"$WORK/$1.err" || rc=$?
	[ "$rc" -eq "$2" ] || { cat "$WORK/$1.out" "$WORK/$1.err"; fail "$3: exit $rc, expected $2"; }
}
# Ratios 1/0.97 = 1.031, 1/1.04 = 0.962 and, one round where OMB was twice as fast, 2: the median,
# 1.031, within 5% everywhere (their mean, 1.331, is not).
omb_from_gdrb 0.97 1.04 0.5
judge pass 0 "within 5%"
grep -q '^latency at 8 B within 5% of osu_latency: PASS: ratio 1.031$' "$WORK/pass.out" || { cat "$WORK/pass.out"; fail "latency: no PASS"; }
grep -q '^bw within 5% .*: PASS: ratios 1 KiB 1.031, 2 KiB 1.031, 4 KiB 1.031 (partial: ' "$WORK/pass.out" || fail "bw: no PASS"
grep -q '^bibw within 5% .*: PASS: ' "$WORK/pass.out" || fail "bibw: no PASS"
[ "$(grep -c '^[a-z]* *[0-9]* [KM]*i*B  *[0-9.]*  *[0-9.]* \(us\|GB/s\)  *1.031  *0.962..2.000$' "$WORK/pass.out")" -eq 12 ] ||
	{ cat "$WORK/pass.out"; fail "the table: expected ratio 1.031, 0.962..2.000 at all 12 sizes"; }
grep -q '^Measured by `scripts/measure/measure-omb .*` on [0-9-]* [0-9:]* UTC; judged again by `scripts/measure/measure-omb --from-raw WORK_DIR` on ' "$WORK/pass.md" ||
	fail "the report does not say it was judged again"
grep -q '^- latency at 8 B within 5% of osu_latency: \*\*PASS\*\*: ratio 1.031$' "$WORK/pass.md" || fail "report: latency PASS"
pass "OMB within 5% of gdrbench's own figures: every target PASS, exit 0"

# OMB's bw 20% faster at 2 KiB: ratio 1/1.2 = 0.833 there, a MISS naming that size only.
omb_from_gdrb 0.97 1.04 0.5 bw 2048 1.2
judge fail 1 "OMB 20% faster"
grep -q '^bw within 5% .*: MISS at 2 KiB (0.833) (partial: ' "$WORK/fail.out" || { cat "$WORK/fail.out"; fail "bw: no MISS at 2 KiB"; }
grep -q '^- bw within 5% .*: \*\*MISS\*\* at 2 KiB (0.833)' "$WORK/fail.md" || fail "report: no MISS at 2 KiB"
grep -q '^bibw within 5% .*: PASS: ' "$WORK/fail.out" || fail "bibw: the fault leaked into another benchmark"
pass "OMB 20% faster at bw 2 KiB: $(grep '^bw within' "$WORK/fail.out")"

# What the rows say of themselves is every value with its sizes: every bw row ok but one
# few-samples row at 2 KiB (round 2), which is named, not hidden behind the ok of the others.
omb_from_gdrb 0.97 1.04 0.5
for r in 1 2 3; do
	awk -F, -v OFS=, -v r="$r" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
		NR > 1 { $col["quality"] = r == 2 && $col["size_bytes"] == 2048 ? "few-samples" : "ok" } 1' \
		"$WORK/run/raw/round-$r/gdrb_mpi_bw.csv" >"$WORK/q.csv"
	mv "$WORK/q.csv" "$WORK/run/raw/round-$r/gdrb_mpi_bw.csv"
done
"$script" --from-raw "$WORK/run" --report "$WORK/said.md" >/dev/null 2>&1 || true
grep -q '; bw quality `ok`, `few-samples` at 2 KiB; ' "$WORK/said.md" ||
	{ grep 'rows say' "$WORK/said.md"; fail "a few-samples row is not named in the report"; }
pass "a few-samples row named: $(grep -o '; bw quality [^;]*' "$WORK/said.md" | cut -c3-)"

# A size gdrbench did not write is a problem, named, and fails the run, also at a size that no
# target judges.
omb_from_gdrb 0.97 1.04 0.5
sed -i '/^mpi_allreduce,.*,all,16,/d' "$WORK/run/raw/round-2/gdrb_mpi_allreduce.csv"
judge gap 1 "a missing row"
grep -q '^measure-omb: round 2: gdrb_mpi_allreduce: no figure at 16 B$' "$WORK/gap.err" || { cat "$WORK/gap.err"; fail "the missing row is not named"; }
pass "a missing gdrbench row: exit 1, $(head -n 1 "$WORK/gap.err")"
