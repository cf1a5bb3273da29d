#!/bin/bash
# Collectives: a corrupted result is caught (GDRB_INJECT_CORRUPTION=RANK flips
# one byte of the result that rank checks), and bad input is refused with 2.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# The GDRB_INJECT_* test hooks below run only with the test switch (common/util/gdrb_inject.h).
export GDRB_TEST_HOOKS=1
need_mpi

for b in allreduce allgather reduce_scatter alltoall bcast reduce gather scatter; do
	# Rooted collectives with root 0: only rank 0 holds a result for reduce and gather.
	victim=1
	case $b in reduce | gather) victim=0 ;; esac
	GDRB_INJECT_CORRUPTION=$victim mpi 3 -x GDRB_INJECT_CORRUPTION "$top_builddir/mpi/gdrb_mpi_$b" \
		-m 24,3K -c -t 0.01 -n 20 --csv "$WORK/$b.csv" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "gdrb_mpi_$b: corruption on rank $victim gave exit $rc"; }
	csv_check -v status=invalid-data -v rows=2 "$WORK/$b.csv" || fail "gdrb_mpi_$b: rows not invalid-data"
	grep -q "rank $victim (.*validation: " "$WORK/err" || { cat "$WORK/err"; fail "gdrb_mpi_$b: no mismatch named"; }
	pass "gdrb_mpi_$b: corrupted result on rank $victim caught"
done

bin=$top_builddir/mpi
expect2() { # PATTERN NP ARGS...
	local pattern=$1 np=$2 rc
	shift 2
	mpi "$np" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "'$*' exited $rc, expected 2"; }
	[ "$(grep -c "^gdrb_mpi_" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "'$*': not one line"; }
	grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*': lacks '$pattern'"; }
	grep -qv '^#' "$WORK/out" && fail "'$*' measured something"
	pass "np=$np $(basename "$1") ${*:2} -> 2"
}
expect2 "--root: rank 2 does not exist; accepted: 0 to 1" 2 "$bin/gdrb_mpi_reduce" -m 8 --root 2
expect2 "--root: rank 9 does not exist" 3 "$bin/gdrb_mpi_bcast" -m 8 --root 9
expect2 "--op does not apply to gdrb_mpi_allgather" 2 "$bin/gdrb_mpi_allgather" --op sum
expect2 "--dtype does not apply to gdrb_mpi_bcast" 2 "$bin/gdrb_mpi_bcast" --dtype int32
expect2 "--op: unknown reduction 'avg'" 2 "$bin/gdrb_mpi_allreduce" --op avg
expect2 "--dtype: unknown type 'quad'" 2 "$bin/gdrb_mpi_allreduce" --dtype quad
expect2 "--dtype half: MPI has no such type" 2 "$bin/gdrb_mpi_allreduce" --dtype half
expect2 "--dtype bfloat16: MPI has no such type" 3 "$bin/gdrb_mpi_reduce" --dtype bfloat16
expect2 "6 bytes is not a multiple of the 4-byte int32" 2 "$bin/gdrb_mpi_allreduce" -m 8,6 --dtype int32
expect2 "--root does not apply to gdrb_mpi_allreduce" 2 "$bin/gdrb_mpi_allreduce" --root 0
expect2 "--in-place does not apply to gdrb_mpi_bcast" 2 "$bin/gdrb_mpi_bcast" --in-place
expect2 "--in-place: unknown mode 'sideways'; accepted: no, yes, both (--in-place alone: yes)" 2 \
	"$bin/gdrb_mpi_allreduce" --in-place=sideways
expect2 "--sizes does not apply to gdrb_mpi_barrier" 2 "$bin/gdrb_mpi_barrier" -m 8
