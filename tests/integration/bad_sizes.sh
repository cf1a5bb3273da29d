#!/bin/bash
# Sizes no node can hold, sizes in forms -m does not take, and options that
# clash: exit 2 and one line saying what is wrong, under mpirun as users run
# them, each bounded by a timeout so a hang fails the test instead of blocking it.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
command -v timeout >/dev/null 2>&1 || skip "no timeout(1)"

# refused_mpi NP PATTERN BIN ARGS...: mpirun exits 2 within the timeout, the
# binary prints one line holding PATTERN and measures nothing.
refused_mpi() {
	local np=$1 pattern=$2 bin=$3 name args rc=0
	shift 3
	name=$(basename "$bin")
	[ "$name" != late0 ] || name=$(basename "$1")     # the wrapper of the last case
	args="$*"
	[ "${#args}" -le 60 ] || args="${args:0:60}..."
	timeout 120 "$MPIRUN" -np "$np" "$bin" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -ne 124 ] || fail "np=$np $name $args: still running after 120 s (hang)"
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "np=$np $name $args: exited $rc, expected 2"; }
	[ "$(our_lines "$name" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "$name $args: not one line"; }
	grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "$name $args: message lacks '$pattern'"; }
	[ "$(awk 'length > 400' "$WORK/err" | wc -l)" -eq 0 ] || fail "$name $args: a line over 400 characters"
	! grep -qv '^#' "$WORK/out" || { cat "$WORK/out"; fail "$name $args: measured something"; }
	pass "np=$np $name $args -> 2: $(grep "^$name:" "$WORK/err" | cut -c1-160)"
}

mpi_dir=$top_builddir/mpi
limit="-m/--sizes: size too large (the largest accepted is 128TiB)"

# Within a page of 2^64 the allocator's page rounding wrapped to 0: a 1-byte
# buffer filled with 2^64 bytes, then both ranks hung.
for size in 18446744073709551615 18446744073709547520 18446744073709551614 \
	9223372036854775808 16777215T 140737488355328K 8:18446744073709551615; do
	refused_mpi 2 "$limit" "$mpi_dir/gdrb_mpi_bw" -m "$size"
done
refused_mpi 2 "$limit" "$mpi_dir/gdrb_mpi_latency" -m 18446744073709547520
refused_mpi 2 "$limit" "$mpi_dir/gdrb_mpi_allgather" -m 8,18446744073709551615
refused_mpi 2 "$limit" "$mpi_dir/gdrb_mpi_alltoall" -m 9223372036854775808
refused_mpi 2 "$limit" "$mpi_dir/gdrb_mpi_allreduce" -m 129T

# What is wrong with a size, not "unknown size suffix" for all of it.
refused_mpi 2 "takes no step and no list.*MIN:MAX" "$mpi_dir/gdrb_mpi_bw" -m 8:1G,4
refused_mpi 2 "whole number of bytes, not a fraction" "$mpi_dir/gdrb_mpi_bw" -m 1.5K
refused_mpi 2 "decimal number, not hexadecimal" "$mpi_dir/gdrb_mpi_bw" -m 0x10
refused_mpi 2 "no exponent" "$mpi_dir/gdrb_mpi_bw" -m 1e6
refused_mpi 2 "empty size in list" "$mpi_dir/gdrb_mpi_bw" -m 8,,16

# A 2001-item list: the limit is said, the argument is not echoed whole.
list=$(seq -s, 1 2001)
refused_mpi 2 "too many sizes: at most 128 in '1,2,3,[0-9,]*\.\.\.' (${#list} characters)" \
	"$mpi_dir/gdrb_mpi_bw" -m "$list"

# An option given twice, an option that does nothing with the memory asked for.
refused_mpi 2 "-m/--sizes given twice; give each option once" "$mpi_dir/gdrb_mpi_bw" -m 8 -m 16
refused_mpi 2 "--gpu has no effect with --mem host.*drop --gpu" "$mpi_dir/gdrb_mpi_bw" -m 8 --gpu 5

# Only the leader says why; a rank that left at once could make mpirun kill a
# leader that starts late before its line is out. Rank 0 here starts 3 s late.
cat >"$WORK/late0" <<'SH'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-0}" != 0 ] || sleep 3
exec "$@"
SH
chmod +x "$WORK/late0"
refused_mpi 2 "$limit" "$WORK/late0" "$mpi_dir/gdrb_mpi_bw" -m 9223372036854775808
