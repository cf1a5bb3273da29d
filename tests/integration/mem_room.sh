#!/bin/bash
# A run larger than the node's memory is refused before it allocates, with
# one line saying what it needs and what is available (MemAvailable, and the
# memory cgroup it runs in), instead of ending in the OOM killer with none.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
command -v timeout >/dev/null 2>&1 || skip "no timeout(1)"
bin=$top_builddir/mpi/gdrb_mpi_bw

# run_in CGROUP_DIR ARGS...: mpirun and its ranks inside the cgroup (none: here).
run_in() {
	local cg=$1
	shift
	if [ -n "$cg" ]; then
		# shellcheck disable=SC2016
		timeout 120 bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" \
			"$MPIRUN" -np 2 "$bin" "$@"
	else
		timeout 120 "$MPIRUN" -np 2 "$bin" "$@"
	fi
}

# refused CGROUP_DIR PATTERN ARGS...
refused() {
	local cg=$1 pattern=$2 rc=0
	shift 2
	run_in "$cg" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "$*: exited $rc, expected 2 (137: killed)"; }
	[ "$(our_lines gdrb_mpi_bw "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "$*: not one line"; }
	grep -q -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "$*: message lacks '$pattern'"; }
	! grep -qv '^#' "$WORK/out" || { cat "$WORK/out"; fail "$*: measured something"; }
	pass "$* -> 2: $(grep '^gdrb_mpi_bw:' "$WORK/err")"
}

# Everywhere: more than any node has (under the 128 TiB size limit).
refused "" "^gdrb_mpi_bw: -m: buffers of 64TiB need 128.0TiB of host memory per rank, 256.0TiB for the 2 ranks on this node; available: .*(MemAvailable .*); use smaller sizes" -m 64T

# In a memory cgroup of 256 MiB: 2 ranks x 2 buffers of 128 MiB do not fit.
cgroot=/sys/fs/cgroup
name=gdrb-test-$$
if [ -e "$cgroot/cgroup.controllers" ] && grep -qw memory "$cgroot/cgroup.subtree_control" 2>/dev/null; then
	cg=$cgroot/$name limit=memory.max
elif [ -d "$cgroot/memory" ]; then
	cg=$cgroot/memory/$name limit=memory.limit_in_bytes
else
	skip "no memory cgroup here"
fi
mkdir "$cg" 2>/dev/null || skip "cannot create a memory cgroup in $(dirname "$cg") (not root, or read-only)"
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$WORK"' EXIT
echo $((256 << 20)) >"$cg/$limit" || skip "cannot set $cg/$limit"

refused "$cg" "buffers of 128MiB need 256.0MiB of host memory per rank, 512.0MiB for the 2 ranks on this node; available: [0-9.]*MiB (MemAvailable .*, memory cgroup /$name: [0-9.]*MiB)" -m 128M -W 1
run_in "$cg" -m 8:1K -n 10 -t 0.01 >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "a small run in the cgroup failed"; }
pass "a run that fits the cgroup runs"
