#!/bin/bash
# prolog.sh: gdrbench's part of a Slurm Prolog. Runs gdrbench-healthcheck (beside this file,
# or GDRB_HEALTHCHECK): a node whose GPUDirect RDMA preconditions FAIL is drained with the
# reason "gdrbench: FAIL CHECK: evidence" and the prolog exits 1, so that Slurm requeues the
# job (held) instead of running it on the slow bounce path. Slurm drains a node whose prolog
# fails only when it is not drained already, so gdrbench's reason stays. Call it from the site's
# prolog ("/path/prolog.sh || exit 1"), or name it as the Prolog itself (README.md here).
#
# Environment: what gdrbench-healthcheck reads (GDRB_DOCTOR, GDRB_DOCTOR_ARGS, ...), and
#   GDRB_PROLOG_LET_RUN=1  drain the failing node but let this job run on it (exit 0)
#
# Exit status: 0 the node is healthy, the check gave no verdict (a wrong GDRB_DOCTOR must not
# fail every job; the reason is on stderr), or GDRB_PROLOG_LET_RUN=1; 1 a check FAILs.
set -u

healthcheck=${GDRB_HEALTHCHECK:-$(dirname "${BASH_SOURCE[0]}")/gdrbench-healthcheck}
"$healthcheck"
case $? in
0) exit 0 ;;
1 | 3) [ "${GDRB_PROLOG_LET_RUN:-0}" = 1 ] && exit 0 || exit 1 ;;
*) exit 0 ;;
esac
