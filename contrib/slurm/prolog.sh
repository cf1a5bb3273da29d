#!/bin/bash
# prolog.sh: gdrbench's part of a Slurm Prolog. Runs gdrbench-healthcheck (beside this file,
# or GDRB_HEALTHCHECK) and lets the job run only where it says the node is healthy: a node
# whose GPUDirect RDMA preconditions FAIL, or that the doctor could not judge (UNJUDGED: it
# crashed, hung, could not start), is drained with a reason starting "gdrbench:" and the
# prolog exits 1, so that Slurm requeues the job (held) instead of running it there. Slurm
# drains a node whose prolog fails only when it is not drained already, so gdrbench's reason
# stays. Call it from the site's prolog ("/path/prolog.sh || exit 1"), or name it as the
# Prolog itself (README.md here, "Fail closed").
#
# Environment: what gdrbench-healthcheck reads (GDRB_DOCTOR, GDRB_DOCTOR_ARGS,
#   GDRB_HEALTHCHECK_TIMEOUT, GDRB_HEALTHCHECK_UNJUDGED, ...), and
#   GDRB_HEALTHCHECK       the health check to run (default: gdrbench-healthcheck beside this)
#   GDRB_PROLOG_LET_RUN=1  drain a failing or UNJUDGED node but let this job run on it (exit 0)
#
# Exit status: 0 the check said healthy (its exit 0), or UNJUDGED with
# GDRB_HEALTHCHECK_UNJUDGED=warn (its exit 5), or it drained the node (1, 3, 4) and
# GDRB_PROLOG_LET_RUN=1; 1 otherwise: a check FAILs, the node is UNJUDGED, a setting or the
# node name was refused, or the health check could not run at all.
set -u

healthcheck=${GDRB_HEALTHCHECK:-$(dirname "${BASH_SOURCE[0]}")/gdrbench-healthcheck}
"$healthcheck"
rc=$?
case $rc in
0 | 5) exit 0 ;;
1 | 3 | 4) [ "${GDRB_PROLOG_LET_RUN:-0}" = 1 ] && exit 0 || exit 1 ;;
*)
	printf 'prolog.sh: %s exited %d: no verdict on this node, the job does not run here\n' \
		"$(printf '%s' "$healthcheck" | LC_ALL=C tr -c '[:print:]' '?')" "$rc" >&2
	exit 1
	;;
esac
