#!/bin/bash
# Bad input: exit 2 and one line naming the option and the accepted form,
# before anything is measured (no table row, no CSV row).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

bin=$top_builddir/mpi/gdrb_mpi_latency
name=gdrb_mpi_latency

# expect_usage PATTERN ARGS...: run directly (parsing precedes MPI_Init).
expect_usage() { expect_refused "$1" "$bin" "${@:2}"; }

expect_usage "unknown option '--bogus'" --bogus
expect_usage "at least 1 byte.*MIN:MAX" -m 0
expect_usage "exactly one ':'.*MIN:MAX" -m 8:4:2
expect_usage "unknown size suffix.*KiB" -m 1Q
expect_usage "too large.*MIN:MAX" -m 99999999999999999999
expect_usage "MIN is larger than MAX" -m 64:8
expect_usage "--mem: unknown memory kind 'gpu'.*did you mean 'device'" --mem gpu
expect_usage "--iters: expected an integer" --iters -1
expect_usage "--iters: expected an integer" --iters 1x
expect_usage "--time-per-size: expected seconds" -t -3
expect_usage "--timeout: expected seconds" --timeout soon
# A timeout shorter than the ranks can answer in would name healthy ranks as lost.
expect_usage "--timeout: expected 0 (never) or at least 1 second" -T 1e-9
expect_usage "--timeout: expected 0 (never) or at least 1 second" --timeout 0.5
expect_usage "--sizes needs a value" -m
expect_usage "unexpected argument 'extra'" extra
expect_usage "--mpi-cuda: unknown value 'maybe'; accepted: auto, yes, no" --mpi-cuda maybe
expect_usage "--mpi-cuda needs a value" --mpi-cuda

# These are refused after MPI starts, by rank 0 alone, with mpirun's exit code 2.
expect_usage_mpi() {
	local np=$1 pattern=$2 rc
	shift 2
	mpi "$np" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "np=$np '$*' exited $rc, expected 2"; }
	[ "$(our_lines "$name" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "'$*': not one line"; }
	grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*': message lacks '$pattern'"; }
	grep -qv '^#' "$WORK/out" && fail "'$*' measured something"
	pass "np=$np $* -> 2"
}

expect_usage_mpi 2 "--csv: cannot open.*existing, writable directory" "$bin" -m 8 --csv "$WORK/missing/x.csv"
[ ! -e "$WORK/missing" ] || fail "the missing directory was created"
expect_usage_mpi 1 "needs an even number of ranks, at least 2 (got 1)" "$bin" -m 8
expect_usage_mpi 3 "needs an even number of ranks, at least 2 (got 3)" "$bin" -m 8

# A CSV of another schema is refused, and left as it was.
printf 'a,b,c\n1,2,3\n' >"$WORK/other.csv"
expect_usage_mpi 2 "another header" "$bin" -m 8 --csv "$WORK/other.csv"
[ "$(cat "$WORK/other.csv")" = "$(printf 'a,b,c\n1,2,3')" ] || fail "the other CSV was changed"

# Outputs are checked before they are opened, the same way for every one of them: a symbolic
# link at --csv is refused (its target left alone, not created), a FIFO or a device refused
# without blocking, and two outputs that are one file under two names (the counter file a hard
# link to the CSV) refused by naming both; all with one line, exit 2, nothing measured.
ln -s "$WORK/target.csv" "$WORK/link.csv"
expect_usage_mpi 2 "--csv: '$WORK/link.csv' is a symbolic link" "$bin" -m 8 --csv "$WORK/link.csv"
[ ! -e "$WORK/target.csv" ] || fail "--csv followed a symbolic link: its target was created"
printf 'x\n' >"$WORK/target.csv"
expect_usage_mpi 2 "--csv: '$WORK/link.csv' is a symbolic link" "$bin" -m 8 --csv "$WORK/link.csv"
[ "$(cat "$WORK/target.csv")" = x ] || fail "--csv followed a symbolic link: its target was changed"
mkfifo "$WORK/fifo.csv"
expect_usage_mpi 2 "--csv: '$WORK/fifo.csv' is not a regular file" "$bin" -m 8 --csv "$WORK/fifo.csv"
expect_usage_mpi 2 "--csv: '/dev/null' is not a regular file" "$bin" -m 8 --csv /dev/null
mpi 2 "$bin" -m 8 -t 0.01 --csv "$WORK/one.csv" >/dev/null 2>&1 || fail "a first run into one.csv"
ln "$WORK/one.csv" "$WORK/one.counters.csv"
expect_usage_mpi 2 "counter file: '$WORK/one.counters.csv' is the same file as --csv '$WORK/one.csv'" \
	"$bin" -m 8 --csv "$WORK/one.csv"

# The all-pairs CSV and the files beside it alike. A FIFO blocked the pairs CSV's reading of
# its header, so that run is under a time limit of its own.
name=gdrb_mpi_pairs
pairs=$top_builddir/mpi/gdrb_mpi_pairs
timeout 60 "$MPIRUN" -np 2 "$pairs" -m 8 --csv "$WORK/fifo.csv" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -ne 124 ] || fail "gdrb_mpi_pairs --csv on a FIFO blocked (killed after 60 s)"
[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "gdrb_mpi_pairs --csv on a FIFO: exit $rc, expected 2"; }
grep -q -- "--csv: '$WORK/fifo.csv' is not a regular file" "$WORK/err" ||
	{ cat "$WORK/err"; fail "gdrb_mpi_pairs --csv on a FIFO: not refused as not a regular file"; }
pass "gdrb_mpi_pairs --csv on a FIFO -> 2, at once"
expect_usage_mpi 2 "--csv: '$WORK/link.csv' is a symbolic link" "$pairs" -m 8 --csv "$WORK/link.csv"
[ "$(cat "$WORK/target.csv")" = x ] || fail "the pairs CSV followed a symbolic link: its target was changed"
mkdir "$WORK/pairs"
expect_usage_mpi 2 "--csv: '$WORK/pairs/pairs-ranks.csv' is a name the run gives" \
	"$pairs" -m 8 --csv "$WORK/pairs/pairs-ranks.csv"
ln -s "$WORK/target.csv" "$WORK/pairs/pairs-ranks.csv"
expect_usage_mpi 2 "'$WORK/pairs/pairs-ranks.csv' is a symbolic link" "$pairs" -m 8 --csv "$WORK/pairs/p.csv"
[ "$(cat "$WORK/target.csv")" = x ] || fail "pairs-ranks.csv followed a symbolic link: its target was changed"
name=gdrb_mpi_latency

"$bin" --help >"$WORK/help" || fail "--help did not exit 0"
for opt in --sizes --iters --warmup --time-per-size --timeout --validate --csv --mem --gpu --mpi-cuda --version; do
	grep -q -- "$opt" "$WORK/help" || fail "--help does not list $opt"
done
grep -q "default 8:1G" "$WORK/help" || fail "--help does not show the default sizes"
"$bin" --version | grep -q "gdrbench" || fail "--version"
pass "--help and --version"
"$top_builddir/mpi/gdrb_mpi_bw" --window 0 >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && grep -q -- "--window: expected an integer from 1" "$WORK/err" || fail "--window 0"
"$bin" --window 8 >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && grep -q -- "--window does not apply to gdrb_mpi_latency" "$WORK/err" || fail "latency takes no --window"
pass "--window only where it applies"

# A one-process binary in a shell that a launcher left its rank variables in (a job's shell):
# it is rank 0 all the same, says why at once, and does not wait for a leader that is not there.
start=$SECONDS
OMPI_COMM_WORLD_RANK=1 PMIX_RANK=1 PMI_RANK=3 SLURM_PROCID=2 \
	expect_refused "unknown option '--bogus'" "$top_builddir/bench/gdrb_copy_bw" --bogus
OMPI_COMM_WORLD_RANK=1 PMI_RANK=3 \
	expect_refused "unknown option '--bogus'" "$top_builddir/bench/gdrb_doctor" --bogus
[ $((SECONDS - start)) -le 5 ] || fail "stale launcher variables: $((SECONDS - start)) s to refuse"
pass "gdrb_copy_bw and gdrb_doctor with stale launcher rank variables: the line at once"
