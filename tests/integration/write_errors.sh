#!/bin/bash
# Results that cannot be written make a failed run: stdout on /dev/full (rank 0's
# own stdout under mpirun, a one-process benchmark, the doctor's table and JSON,
# gdrb_doctor_mpi, --help) exits 1 with one line on stderr naming stdout and the
# error, however many sizes were measured; the same runs to a file exit 0.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
if [ ! -c /dev/full ] || [ ! -w /dev/full ]; then skip "no /dev/full device"; fi

fx=$top_builddir/tests/fixtures
[ -d "$fx/dgx8/sys" ] || fail "no fixture trees in $fx (make check generates them)"
doctor=$top_builddir/bench/gdrb_doctor
roots=(--sysfs-root "$fx/dgx8/sys" --procfs-root "$fx/dgx8/proc")
msg="writing results to stdout: No space left on device"

# rank0_to OUT CMD...: under mpirun, rank 0's stdout goes to OUT itself (mpirun
# forwards ranks' output through pipes, where a full disk is mpirun's to see).
cat >"$WORK/rank0_to" <<'WRAP'
#!/bin/bash
out=$1
shift
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && exec "$@" >"$out"
exec "$@"
WRAP
chmod +x "$WORK/rank0_to"

# expect_write_error NAME CMD...: CMD (stdout already redirected by the caller's
# wrapper, or here to /dev/full) exits 1 with exactly one line of NAME's holding $msg.
check_one_error() {
	local name=$1 rc=$2
	[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "$name: exited $rc with its results lost, expected 1"; }
	[ "$(grep -c -- "$msg" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "$name: not one '$msg' line"; }
	[ "$(our_lines "$name" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "$name: more than one line of its own"; }
	pass "$name: exit 1, $(grep -- "$msg" "$WORK/err")"
}
on_full() { # NAME CMD...: run with stdout on /dev/full
	local name=$1 rc=0
	shift
	"$@" >/dev/full 2>"$WORK/err" || rc=$?
	check_one_error "$name" "$rc"
}
rank0_full() { # NAME NP CMD...: under mpirun, rank 0's stdout on /dev/full
	local name=$1 np=$2 rc=0
	shift 2
	mpi "$np" "$WORK/rank0_to" /dev/full "$@" 2>"$WORK/err" >/dev/null || rc=$?
	check_one_error "$name" "$rc"
}

# A sweep of ten sizes: one line, not one per size.
args=(-m 8:4K -n 200 --min-iters 10 -w 5 -t 0.02)
mpi 2 "$WORK/rank0_to" "$WORK/lat.out" "$top_builddir/mpi/gdrb_mpi_latency" "${args[@]}" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "gdrb_mpi_latency to a file"; }
[ "$(grep -vc '^#' "$WORK/lat.out")" -eq 10 ] || { cat "$WORK/lat.out"; fail "gdrb_mpi_latency: not 10 rows"; }
rank0_full gdrb_mpi_latency 2 "$top_builddir/mpi/gdrb_mpi_latency" "${args[@]}"
rank0_full gdrb_mpi_allreduce 2 "$top_builddir/mpi/gdrb_mpi_allreduce" "${args[@]}"
on_full gdrb_mpi_latency "$top_builddir/mpi/gdrb_mpi_latency" --help
on_full gdrb_mpi_bw "$top_builddir/mpi/gdrb_mpi_bw" --version

# One process, no MPI: gdrb_copy_bw on the simulated GPU where it is built.
if [ "${HAVE_CUDA:-1}" = 1 ] && ls "$top_builddir"/tests/support/simgpu/lib/libcudart.so.* >/dev/null 2>&1; then
	(
		use_simgpu strict
		on_full gdrb_copy_bw "$top_builddir/bench/gdrb_copy_bw" -m 8,4K -n 20 --min-iters 5 -w 2 -t 0.02
	) || exit 1
else
	echo "gdrb_copy_bw: not run (no simulated GPU built)"
fi

# The doctor: a healthy fixture node (exit 0 to a file), table and JSON.
"$doctor" "${roots[@]}" >"$WORK/doctor.out" 2>"$WORK/err" || { cat "$WORK/err"; fail "gdrb_doctor to a file"; }
on_full gdrb_doctor "$doctor" "${roots[@]}"
on_full gdrb_doctor "$doctor" --json "${roots[@]}"
on_full gdrb_doctor "$doctor" --help
if [ -x "$top_builddir/mpi/gdrb_doctor_mpi" ]; then
	mpi 2 "$top_builddir/mpi/gdrb_doctor_mpi" "${roots[@]}" >/dev/null 2>"$WORK/err" ||
		{ cat "$WORK/err"; fail "gdrb_doctor_mpi to a pipe"; }
	rank0_full gdrb_doctor_mpi 2 "$top_builddir/mpi/gdrb_doctor_mpi" "${roots[@]}"
	rank0_full gdrb_doctor_mpi 2 "$top_builddir/mpi/gdrb_doctor_mpi" --json "${roots[@]}"
fi
