#!/bin/bash
# Bad input to the NCCL binaries, on the simulated NCCL over the simulated GPU: a bad or
# impossible --nccl-gdr, host memory, a staging option, an odd sendrecv, --nccl-* on an MPI
# binary (exit 2, one line each); two ranks on one GPU (exit 77, one line naming the cause);
# an NCCL error in a timed call (exit 1 naming the rank and NCCL's error, the rows measured
# before kept); a log that cannot be read (transport
# unknown, the note says why); NCCL_DEBUG_SUBSYS=COLL gaining INIT and NET; a variable NCCL does not read (a one-line warning); an
# NCCL_DEBUG_FILE that is a FIFO, a link, a folder or an output of the run (exit 2, one line,
# nothing written); a rank stuck in ncclCommInitRank (named within --timeout, exit 1, no
# private log folder left); control characters of NCCL's log kept off stderr.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

need_mpi
use_simnccl

expect_code() { # CODE PATTERN NP ARGS...: exit CODE, one line of ours on stderr holding PATTERN
	local code=$1 pattern=$2 np=$3 rc=0 prog
	shift 3
	prog=$(basename "$1")
	mpi "$np" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -eq "$code" ] || { cat "$WORK/out" "$WORK/err"; fail "'$prog ${*:2}' exited $rc, expected $code"; }
	[ "$(our_lines "$prog" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "'$prog ${*:2}': not one line"; }
	grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$prog ${*:2}': lacks '$pattern'"; }
	! grep -qv '^#' "$WORK/out" || { cat "$WORK/out"; fail "'$prog ${*:2}' measured something"; }
	pass "np=$np $prog ${*:2} -> $code: $(grep -m1 -- "$pattern" "$WORK/err")"
}
ar=$bin/gdrb_nccl_allreduce
expect_code 2 "--nccl-gdr: unknown mode 'maybe'; accepted: auto, on, off, both" 2 "$ar" --nccl-gdr maybe
expect_code 2 "--nccl-gdr both: NCCL reads its settings once per process" 2 "$ar" --nccl-gdr both
expect_code 2 "--mem host: NCCL's kernels read and write GPU-accessible memory only" 2 "$ar" --mem host
expect_code 2 "--staging does not apply to gdrb_nccl_allreduce" 2 "$ar" --staging serial
expect_code 2 "it needs an even number of ranks" 3 "$bin/gdrb_nccl_sendrecv" -m 8
expect_code 2 "--root: rank 5 does not exist" 2 "$bin/gdrb_nccl_reduce" -m 8 --root 5
expect_code 2 "--in-place does not apply to gdrb_nccl_alltoall" 2 "$bin/gdrb_nccl_alltoall" --in-place both
# A word after --in-place that is not a mode is an operand, refused as before.
expect_code 2 "unexpected argument 'sideways'" 2 "$ar" --in-place sideways
if [ -x "$top_builddir/mpi/gdrb_mpi_allreduce" ]; then
	expect_code 2 "--nccl-gdr does not apply to gdrb_mpi_allreduce" 2 "$top_builddir/mpi/gdrb_mpi_allreduce" --nccl-gdr off
fi
# Two ranks on the one simulated GPU: NCCL refuses them, said once with the shared GPU.
SIMGPU_DEVICES=0000:3b:00.0 expect_code 77 "NCCL cannot run here: rank 0 .*Duplicate GPU detected.*2 ranks share GPU" \
	2 "$ar" -m 8

# An NCCL error during a timed call: rank 1's 501st operation fails (a size runs at most 2
# warm-up and 20 timed samples of 20 calls (the default batch), 440 calls, and -t 1 holds all
# of them however loaded the machine: the error lands in the second size), the rank and NCCL's error named, earlier rows kept, and no
# rank's private NCCL log folder left behind (the failing rank aborts the launch, the other is
# killed by it).
csv=$WORK/fail.csv
rc=0
mkdir "$WORK/tmp-fail"
TMPDIR=$WORK/tmp-fail SIMNCCL_FAIL_AFTER=500 SIMNCCL_FAIL_RANK=1 mpi 2 "$ar" -m 8,16,32,64,128 -n 20 -w 2 -t 1 \
	--csv "$csv" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] || { cat "$WORK/err"; fail "an NCCL error in a timed call: exit 0"; }
grep -q 'rank 1: NCCL error in nccl_allreduce at size [0-9]*: unhandled system error' "$WORK/err" ||
	{ cat "$WORK/err"; fail "the NCCL error does not name rank 1 and NCCL's error string"; }
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -ge 1 ] && [ "$rows" -lt 5 ] && csv_check -v status=ok "$csv" ||
	{ cat "$csv"; fail "the rows measured before the error were not kept ($rows)"; }
left=$(find "$WORK/tmp-fail" -name 'gdrb-nccl*' | wc -l)
[ "$left" -eq 0 ] || { ls -la "$WORK/tmp-fail"; fail "a failed run left $left private NCCL log folder(s)"; }
pass "an NCCL error in a timed call: exit $rc naming rank 1 and 'unhandled system error', $rows row(s) kept, no log folder left"

# The log: one NCCL cannot write (its folder does not exist), one that leaves out the
# connection lines (the user's NCCL_DEBUG_SUBSYS): transport unknown, the note says why.
csv=$WORK/log.csv
NCCL_DEBUG_FILE=$WORK/no/such/dir/nccl.%p.log mpi 2 "$ar" -m 8 -t 0.01 --csv "$csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "an unwritable NCCL_DEBUG_FILE failed the run"; }
csv_has "$csv" transport=unknown gdr_connections= || { cat "$csv"; fail "an unreadable log: transport not unknown"; }
grep -q "transport unknown: NCCL's log on rank 0 (.*) could not be read" "$csv" || { cat "$csv"; fail "the note does not say the log could not be read"; }
: >"$csv"
NCCL_DEBUG_SUBSYS=COLL mpi 2 "$ar" -m 8 -t 0.01 --csv "$csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "NCCL_DEBUG_SUBSYS=COLL failed the run"; }
# A user's NCCL_DEBUG_SUBSYS without INIT and NET gains them (said once): the connections are read.
csv_has "$csv" transport=P2P || { cat "$csv"; fail "NCCL_DEBUG_SUBSYS=COLL: the connection lines were lost"; }
grep -q 'NCCL_DEBUG_SUBSYS=COLL lacks INIT,NET' "$WORK/err" || { cat "$WORK/err"; fail "NCCL_DEBUG_SUBSYS=COLL: INIT and NET added without a word"; }
csv_check -v status=ok "$csv" || fail "CSV rows"
pass "an unwritable log and one without connection lines: transport unknown, the note says why"

NCCL_NET_GDR=1 mpi 2 "$ar" -m 8 -t 0.01 >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "NCCL_NET_GDR=1 failed the run"; }
[ "$(grep -c 'NCCL_NET_GDR is not a variable NCCL reads; NCCL_NET_GDR_LEVEL is' "$WORK/err")" -eq 1 ] ||
	{ cat "$WORK/err"; fail "NCCL_NET_GDR=1: not one warning naming NCCL_NET_GDR_LEVEL"; }
pass "NCCL_NET_GDR=1: one warning naming NCCL_NET_GDR_LEVEL"

# NVIDIA's container images set NCCL_VERSION for the NCCL they shipped; a real GPU node's image said
# 2.28.3-1 while its loaded NCCL was 2.28.9. Not NCCL's variable: never listed as NCCL's environment,
# one warning where it names another NCCL than the one loaded, none where it names that one.
NCCL_VERSION=2.28.3-1 mpi 2 "$ar" -m 8 -t 0.01 --csv "$WORK/v.csv" >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "NCCL_VERSION=2.28.3-1 failed the run"; }
[ "$(grep -c 'NCCL_VERSION=2.28.3-1 in the environment (a container.s label; NCCL reads no such variable) is not the NCCL loaded: 2.28.9' "$WORK/err")" -eq 1 ] ||
	{ cat "$WORK/err"; fail "NCCL_VERSION=2.28.3-1: not one warning naming the NCCL loaded"; }
! grep -q 'NCCL_VERSION' "$WORK/out" "$WORK/v.csv" || fail "NCCL_VERSION listed as NCCL's environment"
NCCL_VERSION=2.28.9-1 mpi 2 "$ar" -m 8 -t 0.01 >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "NCCL_VERSION=2.28.9-1 failed the run"; }
! grep -q 'NCCL_VERSION' "$WORK/err" "$WORK/out" || { cat "$WORK/err"; fail "NCCL_VERSION naming the NCCL loaded: warned or listed"; }
pass "NCCL_VERSION: not NCCL's environment; one warning when it names another NCCL than the one loaded"

# NCCL_DEBUG_FILE is judged on every rank before anything is written: NCCL opens it with
# fopen "w" (following a link, waiting on a FIFO forever, truncating what is there). A FIFO,
# a link, a folder, the --csv file (by name or a hard link to it) and its counter file: exit
# 2, one line naming NCCL_DEBUG_FILE and the accepted form, no CSV made or changed. `timeout`
# bounds each run: a FIFO hung every rank past --timeout.
refused_file() { # WHAT NCCL_DEBUG_FILE PATTERN [CSV]: refused, and the CSV as it was
	local what=$1 file=$2 pattern=$3 out=${4:-$WORK/refused.csv} rc=0 before=
	[ -e "$out" ] && before=$(cksum <"$out")
	NCCL_DEBUG_FILE=$file timeout 60 "$MPIRUN" -np 2 "$ar" -m 8 -t 0.01 --csv "$out" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "NCCL_DEBUG_FILE $what: exit $rc, expected 2"; }
	[ "$(our_lines gdrb_nccl_allreduce "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "NCCL_DEBUG_FILE $what: not one line"; }
	grep -q "^gdrb_nccl_allreduce: NCCL_DEBUG_FILE: on rank 0 (.*) '.*' is ${pattern}[^;]*; accepted: a regular file or a path not there yet, not a link, not an output of the run" "$WORK/err" ||
		{ cat "$WORK/err"; fail "NCCL_DEBUG_FILE $what: the line lacks '$pattern' or the accepted form"; }
	if [ -n "$before" ]; then
		[ "$(cksum <"$out")" = "$before" ] || fail "NCCL_DEBUG_FILE $what: the CSV changed"
	else
		[ ! -e "$out" ] || fail "NCCL_DEBUG_FILE $what: a CSV was made"
	fi
	! grep -qv '^#' "$WORK/out" || { cat "$WORK/out"; fail "NCCL_DEBUG_FILE $what: measured something"; }
}
mkfifo "$WORK/nccl.fifo"
refused_file "a FIFO" "$WORK/nccl.fifo" "a FIFO (NCCL would wait on it forever)"
ln -s "$WORK/elsewhere.log" "$WORK/nccl.link"
refused_file "a link" "$WORK/nccl.link" "a symbolic link (not followed)"
refused_file "a folder" "$WORK" "a directory"
mpi 2 "$ar" -m 8 -t 0.01 --csv "$WORK/kept.csv" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "a run to make a CSV failed"; }
refused_file "the --csv file" "$WORK/kept.csv" "the --csv file (NCCL would overwrite the results)" "$WORK/kept.csv"
mkdir -p "$WORK/sub"
refused_file "the --csv file by another name" "$WORK/sub/../kept.csv" "the --csv file" "$WORK/kept.csv"
ln "$WORK/kept.csv" "$WORK/hardlink.log"
refused_file "a hard link to the --csv file" "$WORK/hardlink.log" "the --csv file" "$WORK/kept.csv"
refused_file "the counter file" "$WORK/fresh.counters.csv" "the counter file beside the --csv file" "$WORK/fresh.csv"
# The name as each rank expands it is judged (%h: the host name up to its first dot).
host=$(hostname)
mkfifo "$WORK/fifo-${host%%.*}"
refused_file "a FIFO once expanded" "$WORK/fifo-%h" "a FIFO"
pass "NCCL_DEBUG_FILE a FIFO, a link, a folder, the --csv file (by name, by another path, by a hard link), its counter file, %h expanded: exit 2, one line, nothing written"

# A rank stuck in NCCL's initialisation (simnccl's hook: rank 1 never returns from
# ncclCommInitRank once every rank joined): the watchdog covers NCCL's start, rank 0 names
# rank 1 within --timeout (plus the launcher's teardown), exit 1; no private NCCL log folder
# is left in TMPDIR by either rank (rank 0 ends by the watchdog, rank 1 by the launcher's
# SIGTERM).
mkdir -p "$WORK/tmp"
start=$(date +%s)
rc=0
rm -f "$WORK/aborts"
TMPDIR=$WORK/tmp SIMNCCL_ABORT_LOG=$WORK/aborts SIMNCCL_HANG_INIT=1 timeout 100 "$MPIRUN" -np 2 "$ar" -m 8 -t 0.01 -T 2 \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
took=$(($(date +%s) - start))
[ "$rc" -ne 124 ] || { cat "$WORK/err"; fail "a rank stuck in ncclCommInitRank: the run hung (killed after 100 s)"; }
[ "$rc" -ne 0 ] || { cat "$WORK/err"; fail "a rank stuck in ncclCommInitRank: exit 0"; }
grep -q '^gdrb_nccl_allreduce: rank 0 (.*): error: timeout: no answer from rank 1 (.*) for [0-9]* s (--timeout 2) during starting NCCL; giving up$' "$WORK/err" ||
	{ cat "$WORK/err"; fail "a rank stuck in ncclCommInitRank: rank 0 does not name rank 1"; }
[ "$took" -lt 60 ] || fail "a rank stuck in ncclCommInitRank: $took s to end with -T 2"
left=$(find "$WORK/tmp" -name 'gdrb-nccl.*')
[ -z "$left" ] || { ls -lR "$WORK/tmp"; fail "a rank stuck in ncclCommInitRank: NCCL log folders left in TMPDIR: $left"; }
# Rank 0 holds a communicator when it gives up: it aborts it (simnccl records the call)
# before exiting and says so; rank 1, still inside ncclCommInitRank, has none to abort.
grep -qx 'rank 0 ncclCommAbort' "$WORK/aborts" 2>/dev/null ||
	{ cat "$WORK/err" "$WORK/aborts"; fail "a rank stuck in ncclCommInitRank: rank 0 did not call ncclCommAbort after its timeout"; }
grep -q 'rank 0: timeout: aborting NCCL.s communicator (ncclCommAbort) before exiting' "$WORK/err" ||
	{ cat "$WORK/err"; fail "a rank stuck in ncclCommInitRank: rank 0 does not say it aborted its communicator"; }
! grep -q 'rank 1 ncclCommAbort' "$WORK/aborts" ||
	{ cat "$WORK/aborts"; fail "a rank stuck in ncclCommInitRank: rank 1 aborted a communicator NCCL had not handed over"; }
pass "a rank stuck in ncclCommInitRank: rank 0 names rank 1 after ${took} s (-T 2), aborts its communicator, exit $rc, no NCCL log folder left"

# What NCCL's log says reaches stderr cleaned: a control character in a name NCCL prints (here
# simnccl's warning quoting SIMNCCL_NET) is not written to the terminal as it is.
SIMNCCL_NET=$(printf 'I\033[2JB') NCCL_DEBUG=WARN mpi 2 "$ar" -m 8 -t 0.01 >"$WORK/out" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "a control character in NCCL's warning failed the run"; }
grep -q 'NCCL WARN simnccl: SIMNCCL_NET=I\\x1b\[2JB is not IB' "$WORK/err" || { cat -v "$WORK/err"; fail "NCCL's warning not shown, or not cleaned"; }
! grep -q "$(printf '\033')" "$WORK/err" || { cat -v "$WORK/err"; fail "an escape character from NCCL's log reached stderr"; }
pass "NCCL's log lines copied to stderr: control characters written as \\xHH, as every diagnostic is"
