#!/bin/bash
# Health checks that act: gdrb_doctor --oneline gives one line and the documented exit code on
# fixture nodes (healthy, warning, failing, two failing, hostile text in what it reads), --fast
# asks no CUDA and stays fast; contrib/slurm/gdrbench-healthcheck, with a fake scontrol on PATH
# recording its arguments, drains a failing node with gdrbench's reason, leaves a healthy one
# alone, resumes only its own drain and never overwrites another; contrib/slurm/prolog.sh
# fails the job where a check FAILs; contrib/nhc/gdrbench.nhc calls NHC's die with the line.
# Both fail closed: fake doctors that segfault, are SIGKILLed, ignore SIGTERM (bounded in
# time), leave a child on their output, are missing or not executable or refuse their
# arguments leave the node UNJUDGED (drained, the prolog failing the job; only a warning with
# GDRB_HEALTHCHECK_UNJUDGED=warn); host lists as node names are refused; every text is clean.
# Planted faults (a wrapper that resumes any drain, one that passes quotes on, one that leaves
# the doctor's child running) are caught.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

bin=$top_builddir/bench/gdrb_doctor
fx=$top_builddir/tests/fixtures
hc=$top_srcdir/contrib/slurm/gdrbench-healthcheck
[ -x "$bin" ] || fail "gdrb_doctor not built"
[ -d "$fx/healthy/sys" ] || fail "no fixture trees in $fx (make check generates them)"
unset GDRB_DOCTOR GDRB_DOCTOR_ARGS

roots() { echo "--sysfs-root $fx/$1/sys --procfs-root $fx/$1/proc"; }

# oneline WANT_RC PATTERN DOCTOR_ARGS...: exactly one line, matching PATTERN, and WANT_RC.
oneline() {
	local want_rc=$1 pattern=$2 rc=0
	shift 2
	"$bin" --oneline "$@" >"$WORK/line" 2>"$WORK/line.err" || rc=$?
	[ "$rc" -eq "$want_rc" ] || { cat "$WORK/line" "$WORK/line.err"; fail "--oneline $*: exit $rc, expected $want_rc"; }
	[ ! -s "$WORK/line.err" ] || { cat "$WORK/line.err"; fail "--oneline $*: diagnostics on stderr"; }
	[ "$(wc -l <"$WORK/line")" -eq 1 ] || { cat "$WORK/line"; fail "--oneline $*: not one line"; }
	[ "$(wc -c <"$WORK/line")" -le 241 ] || { cat "$WORK/line"; fail "--oneline $*: longer than 240 bytes"; }
	LC_ALL=C grep -q '^[ -~]*$' "$WORK/line" || { cat -v "$WORK/line"; fail "--oneline $*: bytes outside printable ASCII"; }
	grep -q -- "$pattern" "$WORK/line" || { cat "$WORK/line"; fail "--oneline $*: no '$pattern'"; }
	pass "--oneline ${*##*/fixtures/} -> $rc: $(cat "$WORK/line")"
}

# shellcheck disable=SC2046 # roots gives words
{
	oneline 0 '^gdrbench: OK (9 PASS, 0 WARN, 0 FAIL, 2 SKIP)$' $(roots healthy)
	oneline 0 '^gdrbench: OK (8 PASS, 1 WARN, 0 FAIL, 2 SKIP) WARN: topology$' $(roots phb)
	oneline 1 '^gdrbench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded$' $(roots nopeermem)
	oneline 1 '^gdrbench: FAIL rdma-ports: mlx5_1 port 1: DOWN (Disabled)' $(roots portdown)
	# A long evidence is cut at 240 bytes.
	oneline 1 '^gdrbench: FAIL acs: GPU 0000:13:00.0 - mlx5_0: ACS redirects' $(roots acs)
	[ "$(wc -c <"$WORK/line")" -eq 241 ] || fail "the acs line was not cut at 240 bytes"
	oneline 0 '^gdrbench: OK' --fast $(roots healthy)
}

# Two checks FAIL: the first is named with its evidence, the other after it, and the names
# stay when the evidence is cut. nopeermem with the 64 KiB memlock limit of the memlock node.
cp -r "$fx/nopeermem" "$WORK/two" && cp "$fx/memlock/proc/self/limits" "$WORK/two/proc/self/limits" ||
	fail "could not build the two-failure node"
oneline 1 '^gdrbench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded; also FAIL: memlock$' \
	--sysfs-root "$WORK/two/sys" --procfs-root "$WORK/two/proc"
cp -r "$fx/acs" "$WORK/acs2" && cp "$fx/memlock/proc/self/limits" "$WORK/acs2/proc/self/limits" ||
	fail "could not build the second two-failure node"
oneline 1 '^gdrbench: FAIL memlock: .*; also FAIL: acs$' --sysfs-root "$WORK/acs2/sys" --procfs-root "$WORK/acs2/proc"

# What the doctor reads is untrusted: the sysfs root it names in the line of a node without
# RDMA holds quotes, a dollar, a backquote, a backslash, an escape and a newline.
hostile=$WORK/$'a"b\'c$d`e\\f\033[2Jg\nh'
mkdir -p "$hostile" && cp -r "$fx/noib/sys" "$fx/noib/proc" "$hostile/" || fail "could not copy the noib node"
oneline 1 'a_b_c_d_e_f?\[2Jg?h/sys/class/infiniband does not exist' --sysfs-root "$hostile/sys" --procfs-root "$hostile/proc"

expect_refused "--json and --oneline: give one output form" "$bin" --json --oneline
if [ "${HAVE_MPI:-1}" = 1 ] && [ -x "$top_builddir/mpi/gdrb_doctor_mpi" ] && command -v "$MPIRUN" >/dev/null 2>&1; then
	rc=0
	mpi 1 "$top_builddir/mpi/gdrb_doctor_mpi" --oneline >"$WORK/mpi.out" 2>"$WORK/mpi.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "--oneline: gdrb_doctor_mpi prints one line per node already" "$WORK/mpi.err" ||
		{ cat "$WORK/mpi.out" "$WORK/mpi.err"; fail "gdrb_doctor_mpi --oneline: exit $rc, expected 2 and one line"; }
	pass "gdrb_doctor_mpi --oneline -> 2"
fi

# --fast asks no CUDA and attempts no registration; on this node and on a fixture it takes well
# under a second (checked loosely: 3 s, the machine may be loaded).
"$bin" --fast >"$WORK/fast.txt" 2>&1
grep -q "CUDA not asked (--fast)" "$WORK/fast.txt" || { cat "$WORK/fast.txt"; fail "--fast: CUDA was asked"; }
grep -q "^  4 gpu-registration  *SKIP  *not attempted: --fast$" "$WORK/fast.txt" ||
	{ cat "$WORK/fast.txt"; fail "--fast: registration not skipped as --fast"; }
for where in "" "$(roots dgx8)"; do
	start=$(date +%s%N)
	# shellcheck disable=SC2086 # where is words
	"$bin" --fast --oneline $where >/dev/null
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$ms" -lt 3000 ] || fail "--fast --oneline ${where:-on this node} took $ms ms"
	pass "--fast --oneline ${where:+on dgx8 }${where:-on this node}: $ms ms"
done

# The wrapper, with a fake scontrol recording each call as [arg][arg]... and answering
# 'show node' from $WORK/node.
mkdir -p "$WORK/bin"
cat >"$WORK/bin/scontrol" <<'FAKE'
#!/bin/bash
printf '[%s]' "$@" >>"$SCONTROL_LOG"
echo >>"$SCONTROL_LOG"
case $1 in
show) cat "$FAKE_NODE" ;;
update) exit "${FAKE_UPDATE_RC:-0}" ;;
esac
FAKE
chmod +x "$WORK/bin/scontrol"
export PATH=$WORK/bin:$PATH SCONTROL_LOG=$WORK/calls FAKE_NODE=$WORK/node SLURMD_NODENAME=node1
unset SCONTROL GDRB_HEALTHCHECK_TIMEOUT GDRB_PROLOG_LET_RUN GDRB_HEALTHCHECK GDRB_HEALTHCHECK_REPEAT

# show_node STATE [REASON]: what the fake scontrol shows.
show_node() {
	{
		echo "NodeName=node1 Arch=x86_64 CoresPerSocket=1"
		echo "   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.05"
		echo "   State=$1 ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A"
		[ -z "${2:-}" ] || echo "   Reason=$2 [root@2026-11-27T09:00:00]"
	} >"$WORK/node"
}

# run_hc WANT_RC WANT_CALLS FIXTURE [WRAPPER]: the wrapper on FIXTURE exits WANT_RC and calls
# scontrol update exactly as WANT_CALLS says (the 'show node' calls are left out).
run_hc() {
	local want_rc=$1 want=$2 fixture=$3 wrapper=${4:-$hc} rc=0 got
	: >"$WORK/calls"
	GDRB_DOCTOR=${GDRB_DOCTOR:-$bin} GDRB_DOCTOR_ARGS="$(roots "$fixture")" \
		"$wrapper" >"$WORK/hc.out" 2>"$WORK/hc.err" || rc=$?
	got=$(grep -v '^\[show\]' "$WORK/calls")
	[ "$rc" -eq "$want_rc" ] && [ "$got" = "$want" ] && return 0
	echo "exit $rc (expected $want_rc); scontrol update calls:"
	echo "${got:-(none)}"
	echo "expected:"
	echo "${want:-(none)}"
	cat "$WORK/hc.out" "$WORK/hc.err"
	return 1
}

drain_nopeermem='[update][nodename=node1][state=drain][reason=gdrbench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded]'
show_node IDLE
run_hc 0 "" healthy || fail "healthy idle node: touched"
pass "wrapper: healthy idle node left alone"
run_hc 1 "$drain_nopeermem" nopeermem || fail "failing node: not drained with the check's reason"
grep -q "node1 drained: gdrbench: FAIL peermem-dmabuf" "$WORK/hc.err" || fail "the drain is not said on stderr"
pass "wrapper: failing node drained: $(cat "$WORK/hc.err")"
show_node IDLE+DRAIN "gdrbench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded"
run_hc 1 "" nopeermem || fail "node drained by gdrbench for the same reason: drained again"
run_hc 1 "[update][nodename=node1][state=drain][reason=gdrbench: FAIL rdma-ports: mlx5_1 port 1: DOWN (Disabled), InfiniBand, 400 Gb/sec (4X NDR)]" portdown ||
	fail "node drained by gdrbench for another check: reason not updated"
run_hc 0 "[update][nodename=node1][state=resume]" healthy || fail "node drained by gdrbench, now healthy: not resumed"
pass "wrapper: its own drain kept, updated, and resumed once healthy"
show_node MIXED+DRAIN "gdrbench: FAIL memlock: RLIMIT_MEMLOCK 64 KiB"
run_hc 0 "[update][nodename=node1][state=resume]" healthy || fail "draining node (jobs on it) drained by gdrbench: not resumed"
show_node IDLE+DRAIN "admin: replacing a DIMM"
run_hc 0 "" healthy || fail "a healthy node drained by an admin was resumed"
run_hc 1 "" nopeermem || fail "a failing node drained by an admin: its reason overwritten"
grep -q "left as it is" "$WORK/hc.err" || fail "the admin's drain kept without a word"
show_node DOWN+NOT_RESPONDING "Not responding"
run_hc 1 "" nopeermem || fail "a down node: its reason overwritten"
pass "wrapper: a drain or down of another reason never touched"

# Planted fault: a wrapper that resumes any drained node. The admin case above must catch it.
sed 's/ && \$reason == gdrbench:\* \]\]/ ]]/' "$hc" >"$WORK/hc-resume-any"
chmod +x "$WORK/hc-resume-any"
cmp -s "$hc" "$WORK/hc-resume-any" && fail "could not plant the resume-any fault"
show_node IDLE+DRAIN "admin: replacing a DIMM"
! run_hc 0 "" healthy "$WORK/hc-resume-any" >/dev/null || fail "the test passes a wrapper that resumes an admin's drain"
pass "planted: a wrapper resuming an admin's drain is caught"

# The doctor's line is cleaned again before scontrol: a doctor printing quotes, a dollar, a
# command substitution and control bytes.
cat >"$WORK/bin/evil-doctor" <<'EVIL'
#!/bin/bash
printf 'gdrbench: FAIL x: a"b'"'"'c$(reboot)`d`\\e\033[2J\x01 %0300d\n' 0
exit 1
EVIL
chmod +x "$WORK/bin/evil-doctor"
show_node IDLE
clean_prefix='gdrbench: FAIL x: a_b_c_(reboot)_d__e?[2J? '
clean_reason="[update][nodename=node1][state=drain][reason=$clean_prefix$(printf '%0*d' $((200 - ${#clean_prefix})) 0)]"
GDRB_DOCTOR=$WORK/bin/evil-doctor run_hc 1 "$clean_reason" healthy || fail "hostile doctor line not cleaned"
sed 's/^\ts=\${s\/\/\[.*\]\/_}$/\t:/' "$hc" >"$WORK/hc-no-clean"
chmod +x "$WORK/hc-no-clean"
cmp -s "$hc" "$WORK/hc-no-clean" && fail "could not plant the no-clean fault"
! GDRB_DOCTOR=$WORK/bin/evil-doctor run_hc 1 "$clean_reason" healthy "$WORK/hc-no-clean" >/dev/null ||
	fail "the test passes a wrapper that hands quotes to scontrol"
pass "wrapper: reason cleaned to printable ASCII without quotes, cut at 200 bytes; a wrapper without it is caught"

# Repeat before fail: a doctor that FAILs once, then passes, leaves the node up and says what it
# saw; a steady FAIL drains after every attempt FAILed, each attempt's line on stderr.
cat >"$WORK/bin/flaky-doctor" <<FLAKY
#!/bin/bash
[ -e "$WORK/flaky.state" ] && { echo "gdrbench: OK (9 PASS, 0 WARN, 0 FAIL, 2 SKIP)"; exit 0; }
: >"$WORK/flaky.state"
echo "gdrbench: FAIL pcie-width: GPU 0000:13:00.0 at x8 (a one-off)"
exit 1
FLAKY
chmod +x "$WORK/bin/flaky-doctor"
show_node IDLE
rm -f "$WORK/flaky.state"
GDRB_DOCTOR=$WORK/bin/flaky-doctor run_hc 0 "" healthy || fail "a FAIL that did not repeat drained the node"
grep -q "node1: 1 FAIL of the doctor's attempts: 1: FAIL pcie-width: GPU 0000:13:00.0 at x8 (a one-off); 2: OK" "$WORK/hc.err" &&
	grep -q "node1: a FAIL that did not repeat: not drained" "$WORK/hc.err" ||
	{ cat "$WORK/hc.err"; fail "a FAIL that did not repeat: the attempts not said"; }
pass "wrapper: a FAIL that did not repeat leaves the node up: $(head -1 "$WORK/hc.err")"
rm -f "$WORK/flaky.state"
GDRB_HEALTHCHECK_REPEAT=0 GDRB_DOCTOR=$WORK/bin/flaky-doctor run_hc 1 \
	"[update][nodename=node1][state=drain][reason=gdrbench: FAIL pcie-width: GPU 0000:13:00.0 at x8 (a one-off)]" healthy ||
	fail "GDRB_HEALTHCHECK_REPEAT=0: the first FAIL did not drain"
run_hc 1 "$drain_nopeermem" nopeermem || fail "a steady FAIL: not drained"
grep -q "node1: 2 FAIL of the doctor's attempts: 1: FAIL peermem-dmabuf: .*; 2: FAIL peermem-dmabuf: " "$WORK/hc.err" ||
	{ cat "$WORK/hc.err"; fail "a steady FAIL: the attempts not said"; }
pass "wrapper: a steady FAIL drains after every attempt FAILed; GDRB_HEALTHCHECK_REPEAT=0 drains on the first"
# Planted fault: a runner that never repeats. The one-off above must catch it.
sed 's/((gdrb_rc == 1 \&\& n <= repeat)) || break/break/' "$hc" >"$WORK/hc-no-repeat"
chmod +x "$WORK/hc-no-repeat"
cmp -s "$hc" "$WORK/hc-no-repeat" && fail "could not plant the no-repeat fault"
rm -f "$WORK/flaky.state"
! GDRB_DOCTOR=$WORK/bin/flaky-doctor run_hc 0 "" healthy "$WORK/hc-no-repeat" >/dev/null ||
	fail "the test passes a wrapper that drains on a FAIL that did not repeat"
pass "planted: a wrapper that never repeats is caught"
show_node IDLE
GDRB_HEALTHCHECK_REPEAT=11 expect_refused "GDRB_HEALTHCHECK_REPEAT: expected a count from 0 to 10, got '11'" "$hc"

FAKE_UPDATE_RC=1 run_hc 3 "$drain_nopeermem" nopeermem || fail "scontrol refusing the drain: not exit 3"
expect_refused "takes no arguments" "$hc" --now
GDRB_HEALTHCHECK_TIMEOUT=0 expect_refused "GDRB_HEALTHCHECK_TIMEOUT: expected seconds" "$hc"
pass "wrapper: scontrol failing 3, bad usage 2"

# Fail closed: a doctor that gives no verdict leaves the node UNJUDGED, drained with a reason
# that says what happened. Fake doctors, one for each way (run_hc's fixture arguments reach
# them and are ignored).
fake() { # NAME BODY: $WORK/bin/NAME, a bash script running BODY
	printf '#!/bin/bash\n%s\n' "$2" >"$WORK/bin/$1" && chmod +x "$WORK/bin/$1" || fail "cannot write $1"
}
fake segv-doctor 'ulimit -c 0; kill -SEGV $$'
fake oom-doctor 'kill -KILL $$' # as the OOM killer does
fake slow-doctor 'exec sleep 30'
fake usage-doctor 'echo "gdrb_doctor: --bogus: unknown option" >&2; exit 2'
fake three-doctor 'exit 3'
# Ignores SIGTERM and leaves a child, deaf too, holding its stdout; notes both pids.
fake deaf-doctor "trap '' TERM; sleep 30 & echo \$! \$\$ >'$WORK/deaf.pids'; echo started; sleep 30"
# Says OK and exits, leaving a child that holds its stdout.
fake orphan-doctor "echo 'gdrbench: OK (9 PASS, 0 WARN, 0 FAIL, 2 SKIP)'; sleep 30 & echo \$! >'$WORK/orphan.pids'"
cp "$WORK/bin/slow-doctor" "$WORK/bin/noexec-doctor" && chmod 644 "$WORK/bin/noexec-doctor" || fail "noexec-doctor"
unjudged() { echo "[update][nodename=node1][state=drain][reason=gdrbench: UNJUDGED $1]"; }
# gone PIDFILE: every process PIDFILE names has ended (or is a zombie waiting for its reaper),
# within 1 s (a killed process may still be on its way out).
gone() {
	local p tries
	for p in $(cat "$1"); do
		tries=0
		until [ ! -e "/proc/$p" ] || [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ]; do
			[ $((tries += 1)) -le 10 ] || { kill "$p"; return 1; }
			sleep 0.1
		done
	done
}
# timed CMD...: CMD, its wall time in ms in $ms.
timed() {
	local start rc=0
	start=$(date +%s%N)
	"$@" || rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	return "$rc"
}

show_node IDLE
GDRB_DOCTOR=$WORK/missing run_hc 4 "$(unjudged "doctor not found: $WORK/missing")" healthy ||
	fail "missing doctor: node not drained UNJUDGED"
grep -q "node1 drained: gdrbench: UNJUDGED doctor not found" "$WORK/hc.err" || fail "the UNJUDGED drain is not said on stderr"
GDRB_DOCTOR=no-such-gdrb-doctor run_hc 4 "$(unjudged "doctor not found: no-such-gdrb-doctor")" healthy ||
	fail "doctor not on PATH: node not drained UNJUDGED"
GDRB_DOCTOR=$WORK/bin/noexec-doctor run_hc 4 "$(unjudged "doctor not executable: $WORK/bin/noexec-doctor")" healthy ||
	fail "doctor not executable: node not drained UNJUDGED"
GDRB_DOCTOR=$WORK/bin/segv-doctor run_hc 4 "$(unjudged "doctor killed by signal 11 (SIGSEGV)")" healthy ||
	fail "doctor crashing on SIGSEGV: node not drained UNJUDGED"
GDRB_DOCTOR=$WORK/bin/oom-doctor run_hc 4 "$(unjudged "doctor killed by signal 9 (SIGKILL)")" healthy ||
	fail "doctor SIGKILLed: node not drained UNJUDGED"
GDRB_DOCTOR=$WORK/bin/usage-doctor run_hc 4 \
	"$(unjudged "doctor refused its arguments (exit 2): gdrb_doctor: --bogus: unknown option")" healthy ||
	fail "doctor refusing its arguments: node not drained UNJUDGED"
GDRB_DOCTOR=$WORK/bin/three-doctor run_hc 4 "$(unjudged "doctor exited 3 without a verdict")" healthy ||
	fail "doctor exiting 3: node not drained UNJUDGED"
pass "wrapper: a doctor missing, not executable, crashing, killed, refusing its arguments or exiting 3: drained UNJUDGED, exit 4"

# The time limit: SIGTERM at GDRB_HEALTHCHECK_TIMEOUT; a doctor deaf to it is killed with its
# child 2 s later. Bounds with 3 s of slack for a loaded machine.
GDRB_DOCTOR=$WORK/bin/slow-doctor GDRB_HEALTHCHECK_TIMEOUT=1 \
	timed run_hc 4 "$(unjudged "doctor gave no verdict within 1 s (stopped by SIGTERM)")" healthy ||
	fail "hung doctor: node not drained UNJUDGED"
[ "$ms" -lt 4000 ] || fail "hung doctor, limit 1 s: the check took $ms ms"
GDRB_DOCTOR=$WORK/bin/deaf-doctor GDRB_HEALTHCHECK_TIMEOUT=1 \
	timed run_hc 4 "$(unjudged "doctor gave no verdict within 1 s (ignored SIGTERM, killed): started")" healthy ||
	fail "doctor ignoring SIGTERM: node not drained UNJUDGED"
[ "$ms" -lt 6000 ] || fail "doctor ignoring SIGTERM, limit 1 s: the check took $ms ms (1 + 2 s of grace allowed)"
gone "$WORK/deaf.pids" || fail "the doctor ignoring SIGTERM, or its child, outlived the check"
pass "wrapper: time limit, SIGTERM then SIGKILL to the doctor's process group: a deaf doctor and its child gone in $ms ms"
show_node IDLE
GDRB_DOCTOR=$WORK/bin/orphan-doctor timed run_hc 0 "" healthy || fail "doctor leaving a child on its stdout: not healthy"
[ "$ms" -lt 4000 ] || fail "doctor leaving a child on its stdout: the check waited $ms ms for it"
gone "$WORK/orphan.pids" || fail "the child a doctor left outlived the check"
# Planted fault: a runner that does not kill what the doctor left in its process group.
sed '/^\tkill -KILL -- "-\$pid" 2>\/dev\/null$/d' "$hc" >"$WORK/hc-no-group-kill"
chmod +x "$WORK/hc-no-group-kill"
[ "$(($(wc -l <"$hc") - $(wc -l <"$WORK/hc-no-group-kill")))" -eq 1 ] || fail "could not plant the no-group-kill fault"
GDRB_DOCTOR=$WORK/bin/orphan-doctor run_hc 0 "" healthy "$WORK/hc-no-group-kill" || fail "planted no-group-kill: not healthy"
! gone "$WORK/orphan.pids" || fail "the test passes a runner that leaves the doctor's child running"
# No temporary file is needed: TMPDIR names no folder.
TMPDIR=$WORK/no-such-dir run_hc 0 "" healthy || fail "TMPDIR unwritable: a healthy node not judged healthy"
pass "wrapper: a child left holding the doctor's stdout killed, not waited for ($ms ms; a runner leaving it is caught); no temporary folder needed"

# A line that reaches the check in pieces (a loaded machine: the first bytes, then the rest after
# a read's 1 s wait ended) is one line: the drain names gdrbench's whole line, never the tail a
# reader that judged each piece alone would take for it (seen: "drbench: FAIL ..." in CI's fresh
# root). A runner that keeps each piece apart is caught.
fake split-doctor "printf 'gdr'; sleep 1.6; echo 'bench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded'; exit 1"
GDRB_HEALTHCHECK_REPEAT=0 GDRB_DOCTOR=$WORK/bin/split-doctor run_hc 1 "$drain_nopeermem" healthy ||
	fail "a line in two pieces: not drained with the whole line"
sed 's/^\t\t((rc > 128)) \&\& kill -0 "\$pid" 2>\/dev\/null \&\& continue$/\t\t:/' "$hc" >"$WORK/hc-pieces"
chmod +x "$WORK/hc-pieces"
! cmp -s "$hc" "$WORK/hc-pieces" || fail "could not plant the piece-by-piece reader"
GDRB_HEALTHCHECK_REPEAT=0 GDRB_DOCTOR=$WORK/bin/split-doctor run_hc 1 "$drain_nopeermem" healthy "$WORK/hc-pieces" >/dev/null &&
	fail "the test passes a runner that judges a line's pieces apart"
pass "wrapper: a line in two pieces (1.6 s apart) drained as one line; a piece-by-piece reader caught"

# Warn only, by the site's choice: the UNJUDGED node left as it is, exit 5; any other value refused.
GDRB_HEALTHCHECK_UNJUDGED=warn GDRB_DOCTOR=$WORK/bin/segv-doctor run_hc 5 "" healthy ||
	fail "GDRB_HEALTHCHECK_UNJUDGED=warn: node touched or not exit 5"
grep -q "node1 left as it is (GDRB_HEALTHCHECK_UNJUDGED=warn): gdrbench: UNJUDGED doctor killed by signal 11 (SIGSEGV)" \
	"$WORK/hc.err" || { cat "$WORK/hc.err"; fail "GDRB_HEALTHCHECK_UNJUDGED=warn: no warning"; }
GDRB_HEALTHCHECK_UNJUDGED=drain GDRB_DOCTOR=$WORK/bin/segv-doctor run_hc 4 "$(unjudged "doctor killed by signal 11 (SIGSEGV)")" healthy ||
	fail "GDRB_HEALTHCHECK_UNJUDGED=drain: not drained"
GDRB_HEALTHCHECK_UNJUDGED=Warn expect_refused "GDRB_HEALTHCHECK_UNJUDGED: expected drain or warn, got 'Warn'" "$hc"
# A healthy run resumes gdrbench's UNJUDGED drain; an UNJUDGED node drained by an admin is left.
show_node IDLE+DRAIN "gdrbench: UNJUDGED doctor killed by signal 11 (SIGSEGV)"
run_hc 0 "[update][nodename=node1][state=resume]" healthy || fail "an UNJUDGED drain not resumed once healthy"
show_node IDLE+DRAIN "admin: replacing a DIMM"
GDRB_DOCTOR=$WORK/bin/segv-doctor run_hc 4 "" healthy || fail "an admin's drain overwritten by UNJUDGED"
grep -q "left as it is; gdrbench: UNJUDGED" "$WORK/hc.err" || fail "UNJUDGED on an admin's drain not said"
pass "wrapper: GDRB_HEALTHCHECK_UNJUDGED=warn warns (exit 5), drain drains, others refused; UNJUDGED drain resumed once healthy"

# One node only: a host list, ALL, blanks, an empty name or a bad character is refused before
# scontrol is called (no 'show' either), in one clean line.
esc=$(printf '\033')
for name in 'gpu[01-64]' 'a,b' 'gpu01 gpu02' '' 'ALL' 'all' '-x' "node1${esc}[2J" "$(printf 'n%.0s' {1..256})"; do
	show_node IDLE
	: >"$WORK/calls"
	rc=0
	SLURMD_NODENAME=$name GDRB_DOCTOR=$bin GDRB_DOCTOR_ARGS="$(roots nopeermem)" "$hc" >"$WORK/hc.out" 2>"$WORK/hc.err" || rc=$?
	shown=$(printf '%s' "$name" | cut -c1-20 | cat -v)
	[ "$rc" -eq 2 ] || { cat "$WORK/hc.err"; fail "node name '$shown': exit $rc, expected 2"; }
	[ ! -s "$WORK/calls" ] || { cat "$WORK/calls"; fail "node name '$shown': scontrol called"; }
	[ "$(wc -l <"$WORK/hc.err")" -eq 1 ] && grep -q "expected one host name" "$WORK/hc.err" ||
		{ cat -v "$WORK/hc.err"; fail "node name '$shown': not refused in one line"; }
	LC_ALL=C grep -q '^[ -~]*$' "$WORK/hc.err" || { cat -v "$WORK/hc.err"; fail "node name '$shown': raw bytes on stderr"; }
done
# A name scontrol shows as several nodes (a NodeSet's) is refused too, nothing updated.
{
	echo "NodeName=gpu01 Arch=x86_64"
	echo "   State=IDLE ThreadsPerCore=1"
	echo "NodeName=gpu02 Arch=x86_64"
	echo "   State=IDLE ThreadsPerCore=1"
} >"$WORK/node"
SLURMD_NODENAME=gpus run_hc 2 "" nopeermem || fail "a name scontrol shows as two nodes: not refused"
grep -q "shows 'gpu01,gpu02', not this one node" "$WORK/hc.err" || { cat "$WORK/hc.err"; fail "two nodes not said"; }
pass "wrapper: node names gpu[01-64], 'a,b', blanks, empty, ALL, '-x', an escape, 256 bytes, a NodeSet: refused, exit 2, scontrol untouched"

# Everything printed is clean: escapes in the doctor's name, its line, scontrol's state.
show_node "IDLE+DRAIN${esc}[2J" "admin: x${esc}]0;title"
GDRB_DOCTOR=$WORK/bin/evil-doctor run_hc 1 "" healthy || fail "hostile doctor on an admin's drain"
LC_ALL=C grep -q '^[ -~]*$' "$WORK/hc.err" || { cat -v "$WORK/hc.err"; fail "raw bytes from scontrol or the doctor on stderr"; }
show_node IDLE
GDRB_DOCTOR="$WORK/no${esc}[2Jdoctor" run_hc 4 "$(unjudged "doctor not found: $WORK/no?[2Jdoctor")" healthy ||
	fail "a doctor's name with an escape: not cleaned in the reason"
LC_ALL=C grep -q '^[ -~]*$' "$WORK/hc.err" || { cat -v "$WORK/hc.err"; fail "raw bytes of the doctor's name on stderr"; }
pass "wrapper: escapes from scontrol, the doctor's line and its name cleaned on stderr and in the reason"

# The prolog: the job runs only where the check said healthy (0), or UNJUDGED with warn (5),
# or with GDRB_PROLOG_LET_RUN=1 after a drain; anything else fails it.
prolog() {
	local rc=0
	: >"$WORK/calls"
	GDRB_DOCTOR=${GDRB_DOCTOR:-$bin} GDRB_DOCTOR_ARGS="$(roots "$1")" \
		"$top_srcdir/contrib/slurm/prolog.sh" >/dev/null 2>"$WORK/prolog.err" || rc=$?
	echo "$rc"
}
show_node IDLE
[ "$(prolog nopeermem)" = 1 ] || fail "prolog on a failing node did not exit 1"
grep -q "state=drain" "$WORK/calls" || fail "prolog did not drain the failing node"
[ "$(GDRB_PROLOG_LET_RUN=1 prolog nopeermem)" = 0 ] || fail "prolog with GDRB_PROLOG_LET_RUN=1 did not exit 0"
[ "$(prolog healthy)" = 0 ] || fail "prolog on a healthy node did not exit 0"
pass "prolog: 1 on a failing node (drained), 0 healthy, 0 with GDRB_PROLOG_LET_RUN=1"
[ "$(GDRB_DOCTOR=$WORK/missing prolog healthy)" = 1 ] || fail "prolog with a missing doctor let the job run"
[ "$(GDRB_DOCTOR=$WORK/bin/segv-doctor prolog healthy)" = 1 ] || fail "prolog with a crashing doctor let the job run"
grep -q "state=drain.*UNJUDGED" "$WORK/calls" || fail "prolog did not drain the UNJUDGED node"
[ "$(GDRB_HEALTHCHECK_UNJUDGED=warn GDRB_DOCTOR=$WORK/bin/segv-doctor prolog healthy)" = 0 ] ||
	fail "prolog with GDRB_HEALTHCHECK_UNJUDGED=warn failed the job"
! grep -q update "$WORK/calls" || fail "prolog with GDRB_HEALTHCHECK_UNJUDGED=warn drained the node"
[ "$(GDRB_PROLOG_LET_RUN=1 GDRB_DOCTOR=$WORK/bin/segv-doctor prolog healthy)" = 0 ] ||
	fail "prolog with GDRB_PROLOG_LET_RUN=1 failed the job on an UNJUDGED node"
[ "$(GDRB_HEALTHCHECK_UNJUDGED=bogus prolog healthy)" = 1 ] || fail "prolog with a refused setting let the job run"
[ "$(SLURMD_NODENAME='gpu[01-64]' prolog nopeermem)" = 1 ] || fail "prolog with a host list as node name let the job run"
[ ! -s "$WORK/calls" ] || fail "prolog with a host list as node name called scontrol"
[ "$(GDRB_HEALTHCHECK=$WORK/missing prolog healthy)" = 1 ] || fail "prolog without its health check let the job run"
[ "$(GDRB_HEALTHCHECK=$WORK/bin/noexec-doctor prolog healthy)" = 1 ] || fail "prolog with a health check it cannot run let the job run"
grep -q "no verdict on this node, the job does not run here" "$WORK/prolog.err" || fail "prolog: the failed health check not said"
pass "prolog: 1 where the doctor gives no verdict, a setting or the node name is refused, the check cannot run; 0 with warn or LET_RUN"

# The NHC check, in a shell with NHC's die and log stubbed.
nhc() {
	bash -c '
		die() { echo "die $1: $2"; }
		log() { echo "log: $*"; }
		. "$1"
		shift
		check_gdrbench_doctor "$@"
		echo "return $?"' nhc "$top_srcdir/contrib/nhc/gdrbench.nhc" "$@"
}
# shellcheck disable=SC2046 # roots gives words
{
	got=$(GDRB_DOCTOR=$bin nhc $(roots healthy))
	[ "$got" = "return 0" ] || fail "NHC check on a healthy node: $got"
	got=$(GDRB_DOCTOR=$bin nhc $(roots nopeermem))
	[ "$got" = "log: check_gdrbench_doctor: 2 FAIL of the doctor's attempts: 1: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded; 2: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded
die 1: check_gdrbench_doctor: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded
return 1" ] || fail "NHC check on a failing node: $got"
	pass "NHC: $(tail -2 <<<"$got" | head -1)"
	# A FAIL that does not repeat: logged, each attempt's line, and the node stays online.
	rm -f "$WORK/flaky.state"
	got=$(GDRB_DOCTOR=$WORK/bin/flaky-doctor nhc)
	[ "$got" = "log: check_gdrbench_doctor: 1 FAIL of the doctor's attempts: 1: FAIL pcie-width: GPU 0000:13:00.0 at x8 (a one-off); 2: OK
return 0" ] || fail "NHC check, a FAIL that did not repeat: $got"
	pass "NHC: a FAIL that did not repeat: $(head -1 <<<"$got")"
}
# nhc_says WANT DOCTOR [ARGS...]: the NHC check with DOCTOR prints WANT (die or log, return).
nhc_says() {
	local want=$1 got
	got=$(GDRB_DOCTOR=$2 nhc "${@:3}")
	[ "$got" = "$want" ] || { printf '%s\n' "$got" | cat -v; fail "NHC check with $2: not '$want'"; }
}
nhc_says "die 1: check_gdrbench_doctor: UNJUDGED doctor not found: $WORK/missing
return 1" "$WORK/missing"
nhc_says "die 1: check_gdrbench_doctor: UNJUDGED doctor not executable: $WORK/bin/noexec-doctor
return 1" "$WORK/bin/noexec-doctor"
nhc_says "die 1: check_gdrbench_doctor: UNJUDGED doctor killed by signal 11 (SIGSEGV)
return 1" "$WORK/bin/segv-doctor"
nhc_says "die 1: check_gdrbench_doctor: UNJUDGED doctor killed by signal 9 (SIGKILL)
return 1" "$WORK/bin/oom-doctor"
got=$(GDRB_DOCTOR=$bin nhc --bogus)
[[ $got == "die 1: check_gdrbench_doctor: UNJUDGED doctor refused its arguments (exit 2): "*"--bogus"*"
return 1" ]] || fail "NHC, bad argument: $got"
GDRB_HEALTHCHECK_TIMEOUT=1 timed nhc_says "die 1: check_gdrbench_doctor: UNJUDGED doctor gave no verdict within 1 s (stopped by SIGTERM)
return 1" "$WORK/bin/slow-doctor"
[ "$ms" -lt 4000 ] || fail "NHC check, hung doctor, limit 1 s: took $ms ms"
GDRB_HEALTHCHECK_UNJUDGED=warn nhc_says "log: check_gdrbench_doctor: UNJUDGED, left online (GDRB_HEALTHCHECK_UNJUDGED=warn): doctor killed by signal 11 (SIGSEGV)
return 0" "$WORK/bin/segv-doctor"
GDRB_HEALTHCHECK_UNJUDGED=maybe nhc_says "die 1: check_gdrbench_doctor: GDRB_HEALTHCHECK_UNJUDGED: expected drain or warn, got maybe
return 1" "$bin"
GDRB_HEALTHCHECK_TIMEOUT=0 nhc_says "die 1: check_gdrbench_doctor: GDRB_HEALTHCHECK_TIMEOUT: expected seconds from 1 to 99999, got 0
return 1" "$bin"
got=$(GDRB_HEALTHCHECK_REPEAT=0 GDRB_DOCTOR=$WORK/bin/evil-doctor nhc)
[[ $got == "die 1: check_gdrbench_doctor: FAIL x: a_b_c_(reboot)_d__e?[2J? 000"* ]] || { cat -v <<<"$got"; fail "NHC: hostile line not cleaned"; }
# The attempts' lines, logged, are cleaned too.
got=$(GDRB_DOCTOR=$WORK/bin/evil-doctor nhc)
[[ $got == "log: check_gdrbench_doctor: 2 FAIL of the doctor's attempts: 1: FAIL x: a_b_c_(reboot)_d__e?[2J? 000"* ]] ||
	{ cat -v <<<"$got"; fail "NHC: hostile attempts not cleaned"; }
pass "NHC: missing, not executable, crashing, killed, refusing its arguments, past the limit ($ms ms): UNJUDGED through die; warn logs; settings checked; text cleaned"

# The doctor runner is one text in both checks.
block() { sed -n '/^# BEGIN doctor runner/,/^# END doctor runner/p' "$1"; }
[ -n "$(block "$hc")" ] && [ "$(block "$hc")" = "$(block "$top_srcdir/contrib/nhc/gdrbench.nhc")" ] ||
	fail "the doctor runner differs between gdrbench-healthcheck and gdrbench.nhc"
pass "the doctor runner is the same in the Slurm and the NHC check"
