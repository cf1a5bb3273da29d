# shellcheck shell=bash
# Helpers shared by the shell tests of every group (sourced, not run; each test is
# tests/GROUP/NAME.sh, two levels under the top).
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Keep Open MPI on shared memory here: no network is needed on one host.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gdrb-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The sanitizer pass runs ASan and UBSan on every test, and LeakSanitizer, with whole
# allocation stacks (tests/support/Makefile.inc says why), on the unit tests, the fuzz corpora,
# its own proof (sanitizers.sh) and the integration tests below, which between them run every
# binary's main path and each layer's errors: every point-to-point binary (mpi_p2p), every
# collective with bad input (coll_bad), the staging of device memory (mpi_staging), all pairs
# (mpi_pairs), a memory kind and a transport added from outside (fake_mem, fake_transport),
# results that cannot be written (write_errors) and bad command lines (bad_input). That
# unwinding costs about 10 s a process of two ranks; in every other integration test (their
# code leak-checked in those) the leak check is off and the unwinding fast.
if [ "${GDRB_SANITIZE:-0}" = 1 ]; then
	case $0 in
	*/integration/mpi_p2p.sh | */integration/coll_bad.sh | */integration/mpi_staging.sh | \
	*/integration/mpi_pairs.sh | */integration/fake_mem.sh | */integration/fake_transport.sh | \
	*/integration/write_errors.sh | */integration/bad_input.sh) ;;
	*/integration/*)
		export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:fast_unwind_on_malloc=1 ;;
	esac
fi

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

need_mpi() {
	[ "${HAVE_MPI:-1}" = 1 ] || skip "built without MPI"
	command -v "$MPIRUN" >/dev/null 2>&1 || skip "no mpirun"
	[ -x "$top_builddir/mpi/gdrb_mpi_latency" ] || skip "MPI binaries not built"
}

# pids_matching TEXT: the processes whose command line (arguments joined by spaces) contains
# TEXT, one pid a line, as `pgrep -f` gives them; read from /proc, so that the tests need no
# procps (a minimal Debian or container image has none).
pids_matching() {
	local dir args
	for dir in /proc/[0-9]*; do
		[ "${dir#/proc/}" = "$BASHPID" ] && continue
		mapfile -d '' args <"$dir/cmdline" 2>/dev/null || continue
		[[ "${args[*]}" == *"$1"* ]] && echo "${dir#/proc/}"
	done
	return 0
}

# mpi NP ARGS...: run under mpirun with NP ranks.
mpi() {
	local np=$1
	shift
	"$MPIRUN" -np "$np" "$@"
}

# A GPU this process can use (the driver answers, a device is listed).
have_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# rank_counts: the rank counts of a test that runs every collective at several: 2 3 4; the
# sanitizer pass 2 and 3 (even and odd: every rounding and layout path of the code it checks for
# memory errors; four ranks on two cores under ASan cost the most, and prove no other path).
rank_counts() {
	if [ "${GDRB_SANITIZE:-0}" = 1 ]; then echo 2 3; else echo 2 3 4; fi
}

# use_simgpu [strict|peermem]: put the simulated GPU (tests/support/simgpu) in front of
# the CUDA runtime for this test and the ranks it starts; skip when it is not built.
# The GPUs sit at the PCI addresses of SIMGPU_DEVICES (default one, 0000:3b:00.0).
use_simgpu() {
	local lib=$top_builddir/tests/support/simgpu/lib
	[ "${HAVE_CUDA:-1}" = 1 ] || skip "built without CUDA: no simulated GPU"
	ls "$lib"/libcudart.so.* >/dev/null 2>&1 || skip "the simulated GPU is not built (no readelf at configure time?)"
	export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export SIMGPU_MODE=${1:-strict}
	# One simulated GPU unless the test names more: a caller's SIMGPU_DEVICES must not change what it proves.
	unset CUDA_VISIBLE_DEVICES SIMGPU_DRIVER SIMGPU_DEVICES SIMGPU_NODE SIMGPU_CORRUPT_PEER SIMGPU_PEER_GBPS SIMGPU_PEER_MAX
}

# simgpu_here: exit 0 where use_simgpu can put the simulated GPU in front (CUDA built, the
# simulator built), else print why not and exit 1: for a test whose device case is one of
# several, which then skips that case and still proves the others (a build without CUDA).
simgpu_here() {
	if [ "${HAVE_CUDA:-1}" != 1 ]; then
		echo "built without CUDA: no simulated GPU"
	elif ! ls "$top_builddir"/tests/support/simgpu/lib/libcudart.so.* >/dev/null 2>&1; then
		echo "the simulated GPU is not built"
	else
		return 0
	fi
	return 1
}

# use_simnccl: the NCCL binaries on the simulated NCCL (tests/support/simnccl) over the simulated
# GPU in strict mode, one simulated GPU a rank (four), a short modelled delay per call, nothing
# from the caller's environment steering NCCL or the simulator; skip where either is not built.
# Sets bin (the nccl/ build folder).
use_simnccl() {
	local lib=$top_builddir/tests/support/simnccl/lib
	use_simgpu strict
	bin=$top_builddir/nccl
	[ -x "$bin/gdrb_nccl_allreduce" ] || skip "built without NCCL"
	ls "$lib"/libnccl.so.* >/dev/null 2>&1 || skip "the simulated NCCL is not built"
	export LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH
	export SIMGPU_DEVICES=0000:3b:00.0,0000:5e:00.0,0000:86:00.0,0000:af:00.0
	unset NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_CONF_FILE \
		NCCL_IB_DISABLE NCCL_NET NCCL_NET_GDR_LEVEL SIMNCCL_RANKS_PER_NODE SIMNCCL_NET \
		SIMNCCL_NIC_GDR SIMNCCL_NIC SIMNCCL_NIC_MBPS SIMNCCL_FAIL_AFTER SIMNCCL_FAIL_RANK
	export SIMNCCL_DELAY_US=50
}

# need_vm: the soft-RoCE VM (tests/cluster/vm/rxe-vm.sh) prepared, or skip where it cannot
# be had here. Sets vm (the harness) and shares (--share options: the work
# directory, and the build tree where it lives under the VM's empty /tmp).
need_vm() {
	local rc
	# A run that has no time for the VM tests (they take minutes each) skips them.
	[ -z "${GDRB_SKIP_VM_TESTS:-}" ] || skip "GDRB_SKIP_VM_TESTS is set"
	vm=$top_srcdir/tests/cluster/vm/rxe-vm.sh
	bash "$vm" prepare || {
		rc=$?
		[ "$rc" -eq 77 ] && skip "no soft-RoCE VM on this machine (reason above)"
		fail "rxe-vm.sh prepare exited $rc"
	}
	shares=(--share "$WORK")
	vm_opts=()
	# The VM's vCPUs have unsynchronised TSCs: a thread that moves between them gains or loses
	# their skew on its CPU clock, so a short window's CPU figure reads anything (114 % over
	# 50 ms, 260 % over the 3 ms of 30 write-with-immediate iterations): csv_check takes any
	# non-negative number there, and the host's tests bound the figure.
	csv_cpu_max=1000000000
	# The sanitizer pass reaches the VM through the environment, ASan and UBSan as on
	# the host, but not LeakSanitizer: its scan at exit costs 20 to 40 s a process under
	# emulation, hours for these tests. The host's tests check the same code for leaks.
	# Four ASan ranks with the default 256 MiB quarantine each were OOM-killed in the 2 GiB
	# VM: a smaller quarantine, and more memory for the VM (the run options ride in shares).
	if [ "${GDRB_SANITIZE:-0}" = 1 ]; then
		export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:fast_unwind_on_malloc=1:quarantine_size_mb=16
		shares+=(--mem 4096)
	fi
	# The trees where the VM's root does not show them (its /tmp is empty): the build tree,
	# and the source tree where it is another (the sanitizer pass's _sanitize/src).
	case $top_builddir in
	/tmp/* | /run/* | /dev/shm/*) shares+=(--share "$top_builddir") ;;
	esac
	case $top_srcdir in
	"$top_builddir") ;;
	/tmp/* | /run/* | /dev/shm/*) shares+=(--share "$top_srcdir") ;;
	esac
}

# vm_inside: run $WORK/inside.sh in the VM with three arguments, the work directory,
# the build tree and the source tree (inside.sh sources tests/cluster/vm/prelude.sh from it); fail
# unless it exits 0. inside.sh records "NAME STATUS" lines in $WORK/rc and each run's
# NAME.out and NAME.err: status_of NAME and show NAME. vm_opts (an array, emptied by need_vm):
# more options for rxe-vm.sh run, e.g. (--vms 3).
vm_inside() {
	local start rc=0
	start=$(date +%s)
	bash "$vm" run --timeout "${GDRB_VM_TEST_TIMEOUT:-1200}" "${shares[@]}" "${vm_opts[@]}" \
		-- bash "$WORK/inside.sh" "$WORK" "$top_builddir" "$top_srcdir" \
		>"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
	echo "VM run: $(($(date +%s) - start)) s"
	[ "$rc" -eq 0 ] || { cat "$WORK/run.out" "$WORK/run.err"; fail "the VM run exited $rc"; }
}
status_of() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/rc"; }
show() { cat "$WORK/$1.out" "$WORK/$1.err" 2>/dev/null; }

# no_simgpu_errors FILE: the simulator reported no misuse (bad copies, frees) in FILE.
# nccl_run NP BINARY ARGS...: gdrb_nccl_BINARY at NP ranks, validated, its rows added to $csv,
# its output in $WORK/out and $WORK/err; fails the test unless it exits 0.
nccl_run() {
	local np=$1 b=$2
	shift 2
	mpi "$np" "$bin/gdrb_nccl_$b" -c -t 0.01 --csv "$csv" "$@" >"$WORK/out" 2>"$WORK/err" ||
		{ cat "$WORK/out" "$WORK/err"; fail "gdrb_nccl_$b np=$np $*"; }
}

no_simgpu_errors() {
	if grep -q '^simgpu: error' "$1"; then
		grep '^simgpu: error' "$1" | head -5 >&2
		fail "the simulated GPU caught a misuse of the CUDA API"
	fi
}

# fake_nvidia_smi DIR NAME BUS_ID [DEVICE_ID MEMORY_MIB DRIVER CUDA]: an nvidia-smi in DIR
# that lists one GPU: -L; --query-gpu=FIELDS with the fields asked for, in their order
# (index, name, pci.bus_id, pci.device_id, memory.total, driver_version; "MiB" after the
# memory unless --format says nounits); otherwise its banner with driver and CUDA versions.
fake_nvidia_smi() {
	mkdir -p "$1"
	cat >"$1/nvidia-smi" <<FAKE
#!/bin/bash
declare -A field=([index]=0 [name]="$2" [pci.bus_id]="$3" [pci.device_id]="${4:-0x233010DE}"
	[memory.total]="${5:-81559}" [driver_version]="${6:-580.65.06}")
case "\$1" in
-L) echo "GPU 0: $2 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
--query-gpu=*)
	IFS=, read -ra want <<<"\${1#--query-gpu=}"
	[[ "\$*" == *nounits* ]] || field[memory.total]+=" MiB"
	line=
	for f in "\${want[@]}"; do line+="\${line:+, }\${field[\$f]}"; done
	echo "\$line" ;;
*) echo "| NVIDIA-SMI ${6:-580.65.06}    Driver Version: ${6:-580.65.06}    CUDA Version: ${7:-13.0} |" ;;
esac
FAKE
	chmod +x "$1/nvidia-smi"
}

# need_memory GIB: hold the big-memory lock (tests needing many GiB run one at a
# time, also under make -j), then skip unless GIB GiB are available.
need_memory() {
	local avail_kib
	exec 9>"${TMPDIR:-/tmp}/gdrb-big-memory.lock"
	flock 9
	avail_kib=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
	[ "${avail_kib:-0}" -ge $(($1 * 1024 * 1024)) ] ||
		skip "needs $1 GiB of free memory, $((avail_kib / 1024)) MiB available"
}

# The CSVs' columns come from their one definition in common/core (*.def, through tests/support/schema.awk),
# their fields from the one awk CSV splitter, tests/support/csv_split.awk.
schema_dir=$top_srcdir/common/core
awk_csv_split=$top_srcdir/tests/support/csv_split.awk

# csv_check [awk -v ...] CSV...: a results CSV against its schema and tests/support/csv_check.awk's checks.
csv_check() {
	awk -v schema_def="$schema_dir/csv_schema.def" -v cpu_max="${csv_cpu_max:-}" -f "$awk_csv_split" \
		-f "$top_srcdir/tests/support/schema.awk" -f "$top_srcdir/tests/support/csv_check.awk" "$@"
}

# csv_col CSV COLUMN[,COLUMN...] [FILTER...]: the named fields (tab-separated) of each row of a
# results CSV that passes every FILTER: NAME=VALUE (VALUE empty: an empty field), NAME!=VALUE,
# NAME~ERE (the whole field matches). Exits 2, saying why, on a header other than the schema's, an
# unknown column or a row of another width (tests/support/csv_col.awk). csv_count CSV [FILTER...]: how
# many rows pass. csv_has CSV FILTER...: exit 0 if at least one does. pairs_col, pairs_count, pairs_has:
# the same for a pairs CSV (pairs_schema.def), ranks_col and ranks_count for a rank table
# (pairs-ranks.csv, pairs_ranks.def). pairs_header: the pairs CSV's header line.
csv_col() { _schema_col csv_schema.def GDRB_CSV_COL cols="$2" "$1" "${@:3}"; }
csv_count() { _schema_col csv_schema.def GDRB_CSV_COL count=1 "$@"; }
# _at_least_one COUNTER ARGS...: exit 0 if COUNTER counts a row, 1 if none, 2 if it failed.
_at_least_one() {
	local n
	n=$("$@") || return 2
	[ "$n" -gt 0 ]
}
csv_has() { _at_least_one csv_count "$@"; }
# csv_rows CSV [FILTER...]: the header and the rows that pass, as they are. csv_set CSV COLUMN VALUE
# [FILTER...]: CSV with COLUMN set to VALUE in the rows that pass (-v: no backslashes in VALUE).
csv_rows() { _schema_col csv_schema.def GDRB_CSV_COL rows=1 "$@"; }
csv_set() { _schema_col csv_schema.def GDRB_CSV_COL set="$2" -v value="$3" "$1" "${@:4}"; }
pairs_header() { _schema_col pairs_schema.def GDRB_PAIRS_COL header=1; }
pairs_col() { _schema_col pairs_schema.def GDRB_PAIRS_COL cols="$2" "$1" "${@:3}"; }
pairs_count() { _schema_col pairs_schema.def GDRB_PAIRS_COL count=1 "$@"; }
pairs_has() { _at_least_one pairs_count "$@"; }
ranks_col() { _schema_col pairs_ranks.def GDRB_RANKS_COL cols="$2" "$1" "${@:3}"; }
ranks_count() { _schema_col pairs_ranks.def GDRB_RANKS_COL count=1 "$@"; }
# _schema_col DEF MACRO VAR=VALUE FILE [FILTER...]
_schema_col() {
	awk -v schema_def="$schema_dir/$1" -v schema_macro="$2" -v "$3" -f "$awk_csv_split" \
		-f "$top_srcdir/tests/support/schema.awk" -f "$top_srcdir/tests/support/csv_col.awk" "${@:4}"
}

# pairs_check CSV [awk -v ...]: an all-pairs CSV (gdrb_mpi_pairs, gdrb_write_pairs) against its
# schema (common/core/pairs_schema.def) and tests/support/pairs_check.awk's checks.
pairs_check() {
	local csv=$1
	shift
	awk -v schema_def="$schema_dir/pairs_schema.def" -v schema_macro=GDRB_PAIRS_COL \
		-f "$top_srcdir/tests/support/schema.awk" -f "$top_srcdir/tests/support/pairs_check.awk" "$@" "$csv"
}
# suspects_only VERDICT_JSON MAX KIND PREFIX...: print the suspects a verdict names ("kind:
# text", a line each); exit 0 only if there is at least one, at most MAX (0: any number), each of
# KIND and its text starting with one of the PREFIXes.
suspects_only() {
	python3 - "$@" <<'PY'
import json, sys
path, most, kind, prefixes = sys.argv[1], int(sys.argv[2]), sys.argv[3], tuple(sys.argv[4:])
found = [(s["kind"], s["text"]) for r in json.load(open(path))["rules"] for s in r.get("suspects", [])]
for k, t in found:
    print("%s: %s" % (k, t))
ok = found and (not most or len(found) <= most) and all(k == kind and t.startswith(prefixes) for k, t in found)
sys.exit(0 if ok else 1)
PY
}
# pairs_matrix_check FILE N CELLS: a matrix file, N x N, the cells CELLS ("i:j ..." or "all") filled
# and no other (tests/support/pairs_matrix.awk).
pairs_matrix_check() {
	awk -v n="$2" -v cells="$3" -f "$top_srcdir/tests/support/pairs_matrix.awk" "$1"
}

# expect_refused PATTERN CMD...: bad input refused: CMD exits 2 with exactly one
# line on stderr holding PATTERN, and prints nothing on stdout.
expect_refused() {
	local pattern=$1 rc=0
	shift
	"$@" >"$WORK/refused.out" 2>"$WORK/refused.err" || rc=$?
	[ "$rc" -eq 2 ] || { cat "$WORK/refused.out" "$WORK/refused.err"; fail "'$*' exited $rc, expected 2"; }
	[ "$(wc -l <"$WORK/refused.err")" -eq 1 ] || { cat "$WORK/refused.err"; fail "'$*': not one line on stderr"; }
	grep -q -- "$pattern" "$WORK/refused.err" || { cat "$WORK/refused.err"; fail "'$*': message lacks '$pattern'"; }
	[ ! -s "$WORK/refused.out" ] || { cat "$WORK/refused.out"; fail "'$*' printed on stdout"; }
	pass "$(basename "$1") ${*:2} -> 2: $(cat "$WORK/refused.err")"
}

# Lines our binary printed to stderr (mpirun adds its own banner lines).
our_lines() {
	grep -c "^$1:" "$2" || true
}

# drv_accounts FILE: the driver's account (-v) of each size in the stderr FILE, one line a size:
# SIZE TIMED PLANNED WARMUP COLD_US MEDIAN_US BEGAN ENDED STOP: the timed iterations, the
# minimum planned, the warm-up iterations, the first (cold) warm-up iteration and the warm-up
# median that planned the minimum (us), when the last batch began and the size ended, and the
# hard stop (s, on the clock the stop is checked on; mpi_budget.sh holds it to the truth).
drv_accounts() {
	sed -n 's/.* size \([0-9]*\) path [^:]*: \([0-9]*\) timed iterations (at least \([0-9]*\) planned), .*; \([0-9]*\) warm-up (the first took \([0-9.]*\) us, the plan.s median \([0-9.]*\) us); the size.s last batch began at \([0-9.]*\) s, it ended at \([0-9.]*\) s (hard stop \([0-9.]*\) s)$/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$1"
}
