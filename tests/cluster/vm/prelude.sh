# shellcheck shell=sh
# Sourced first by the tests' inside.sh, in the soft-RoCE VM, with inside.sh's own arguments
# (the shared work directory, the build tree, the source tree): sets out, build, src and
# bin ($build/bench), lets Open MPI run as the VM's root, and defines vm_limit.
# vm_limit SEC prints SEC stretched by how slowly this VM booted, so a run's time limit grows
# with the load on the host instead of failing a healthy test on a busy machine. The guest's
# uptime when this file is sourced (the boot) is set against GDRB_VM_BOOT_REF_S, the boot on a
# quiet 2-core host (about 6 s there; 8 by default), and the factor is never below 1.
# shellcheck disable=SC2034 # out, build, src and bin are the caller's
out=$1 build=$2 src=$3 bin=$2/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
VM_SLOWDOWN=$(awk -v ref="${GDRB_VM_BOOT_REF_S:-8}" '{ f = $1 / ref; printf "%.2f", f < 1 ? 1 : f }' /proc/uptime)
vm_limit() {
	awk -v s="$1" -v f="$VM_SLOWDOWN" 'BEGIN { printf "%d\n", s * f + 0.5 }'
}
