#!/bin/bash
# A real Slurm on the multi-node test bed (tests/cluster/netns/bed.sh): munged, slurmctld and
# one slurmd a node (gdrbn1, gdrbn2, each in its namespace, `slurmd -N NAME`), all from a
# slurm.conf generated in the test's work directory (SLURM_CONF; nothing in /etc is read or
# changed). `srun -N2` runs a gdrbench MPI binary across the two nodes, and slurmd's
# HealthCheckProgram, contrib/slurm/gdrbench-healthcheck, drains gdrbn2, whose doctor reads
# a failing fixture node, with gdrbench's reason, leaves gdrbn1 (a healthy fixture) alone,
# and resumes gdrbn2 once its fixture is healthy: read back with scontrol show node. Then
# `gdrb sweep` inside `salloc -N2` launches with srun by itself, and the Prolog,
# contrib/slurm/prolog.sh, refuses a job on gdrbn2 once its doctor fails and drains it.
# Skips (77) where Slurm or munge is not installed, or the bed cannot be made.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
# shellcheck source=netns/bed.sh
. "$(dirname "$0")/netns/bed.sh"
need_mpi
PATH=$PATH:/usr/sbin
for cmd in munged slurmctld slurmd srun scontrol sinfo; do
	command -v "$cmd" >/dev/null 2>&1 || skip "$cmd not installed (Debian: munge slurmctld slurmd slurm-client)"
done
fx=$top_builddir/tests/fixtures
[ -d "$fx/healthy/sys" ] || fail "no fixture trees in $fx (make check generates them)"
bed_up 2

s=$WORK/slurm
mkdir -p "$s/munge" "$s/state" "$s/spool.gdrbn1" "$s/spool.gdrbn2" \
	"$s/tmp.gdrbn1" "$s/tmp.gdrbn2" && chmod 700 "$s/munge" || fail "cannot make $s"
# Each node's doctor reads the fixture its link names; the test turns gdrbn2 healthy by
# pointing its link elsewhere.
ln -s "$fx/healthy" "$s/gdrbn1.node" && ln -s "$fx/nopeermem" "$s/gdrbn2.node" || fail "links"

dd if=/dev/urandom of="$s/munge/key" bs=1024 count=1 2>/dev/null && chmod 400 "$s/munge/key" || fail "munge key"
sock=$s/munge/socket
munged --force --socket="$sock" --key-file="$s/munge/key" --pid-file="$s/munge/pid" \
	--log-file="$s/munge/log" --seed-file="$s/munge/seed" 2>"$WORK/munged.err" ||
	{ cat "$WORK/munged.err" "$s/munge/log"; fail "munged did not start"; }
trap 'kill "$(cat "$s/munge/pid" 2>/dev/null)" 2>/dev/null; bed_down; rm -rf "$WORK"' EXIT

export SLURM_CONF=$s/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gdrbbed
SlurmctldHost=gdrbn1($BED_NET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool.%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.%n.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.%n.log
# The nodes share one /tmp: PMIx's per-step directories go under TmpFS, one a node.
TmpFS=$s/tmp.%n
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=5
HealthCheckProgram=$s/healthcheck
HealthCheckInterval=5
HealthCheckNodeState=ANY
Prolog=$s/prolog
NodeName=gdrbn1 NodeAddr=$BED_NET.1 CPUs=2 State=UNKNOWN
NodeName=gdrbn2 NodeAddr=$BED_NET.2 CPUs=2 State=UNKNOWN
PartitionName=bed Nodes=gdrbn[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd starts a cgroup plugin whatever the proctrack and task plugins; ip netns exec mounts a
# sysfs of its own, with nothing on /sys/fs/cgroup. An empty v1 tree (a tmpfs in the node's
# own mount namespace) is enough where no cgroup is used.
echo "CgroupPlugin=cgroup/v1" >"$s/cgroup.conf"
on_node gdrbn1 mount -t tmpfs gdrbcg /sys/fs/cgroup 2>"$WORK/mount.err" ||
	skip "no tmpfs can be mounted in a node's namespace: $(head -n 1 "$WORK/mount.err")"

# slurmd runs its HealthCheckProgram with an environment of its own (SLURMD_NODENAME and PWD
# alone, none of slurmd's variables, SLURM_CONF included): the settings go in a site's script
# that runs the wrapper, as contrib/slurm/README.md says. Each node's doctor reads its fixture.
# The prolog likewise (slurmd gives it the job's variables and SLURMD_NODENAME); it notes each
# run in prolog.ran. The health check stands aside once healthcheck.off exists, so that the
# prolog's drain at the end is the prolog's own.
site_script() { # NAME FIRST-LINE WRAPPER: $s/NAME runs FIRST-LINE, then contrib/slurm/WRAPPER
	cat >"$s/$1" <<EOF
#!/bin/bash
$2
export SLURM_CONF=$SLURM_CONF
export GDRB_DOCTOR=$top_builddir/bench/gdrb_doctor
export GDRB_DOCTOR_ARGS="--sysfs-root $s/\$SLURMD_NODENAME.node/sys --procfs-root $s/\$SLURMD_NODENAME.node/proc"
exec $top_srcdir/contrib/slurm/$3
EOF
	chmod +x "$s/$1" || fail "cannot make $s/$1"
}
site_script healthcheck "[ -e $s/healthcheck.off ] && exit 0" gdrbench-healthcheck
site_script prolog "echo \"\$SLURMD_NODENAME \$SLURM_JOB_ID\" >>$s/prolog.ran" prolog.sh

on_node gdrbn1 slurmctld -D -i >"$WORK/slurmctld.out" 2>&1 &
for h in gdrbn1 gdrbn2; do
	on_node "$h" bash -c 'mount -t tmpfs gdrbcg /sys/fs/cgroup && exec slurmd -D -N "$0"' "$h" \
		>"$WORK/slurmd.$h.out" 2>&1 &
done

# until SECONDS_MAX CMD...: CMD succeeds within SECONDS_MAX seconds.
until_ok() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 1
	done
}
node_line() { on_node gdrbn1 scontrol show node "$1" 2>/dev/null | grep -E "^ *(State|Reason)=" | tr -s ' '; }
logs() { tail -n 20 "$WORK"/*.out "$s"/*.log; }
up() { on_node gdrbn1 sinfo -h -n gdrbn1 -o %T 2>/dev/null | grep -q '^idle'; }
until_ok 60 up || { logs; fail "gdrbn1 not idle within 60 s"; }
pass "slurmctld and 2 slurmd up"
on_node gdrbn1 srun --mpi=list 2>&1 | grep -qx '[[:space:]]*pmix' || skip "this Slurm has no PMIx plugin (srun --mpi=list)"

# slurmd ran the health check when it started, and runs it every 5 s: gdrbn2 (no
# nvidia_peermem in its fixture) drained with the doctor's line, gdrbn1 left alone.
drained() { node_line gdrbn2 | grep -q "Reason=gdrbench: FAIL peermem-dmabuf: neither nvidia_peermem nor nv_peer_mem is loaded"; }
until_ok 30 drained || { node_line gdrbn2; logs; fail "gdrbn2 not drained by the health check within 30 s"; }
node_line gdrbn2 | grep -q "State=[A-Z]*+DRAIN" || { node_line gdrbn2; fail "gdrbn2: reason set, not drained"; }
node_line gdrbn1 | grep -q "Reason=" && { node_line gdrbn1; fail "gdrbn1 (healthy) has a reason"; }
node_line gdrbn1 | grep -q "DRAIN" && { node_line gdrbn1; fail "gdrbn1 (healthy) drained"; }
pass "health check: gdrbn2 $(node_line gdrbn2 | tr '\n' ' ')"

# gdrbn2's node turns healthy: the next health check resumes it (gdrbench drained it).
ln -sfn "$fx/healthy" "$s/gdrbn2.node" || fail "cannot relink gdrbn2's fixture"
resumed() { ! node_line gdrbn2 | grep -q "DRAIN\|Reason="; }
until_ok 30 resumed || { node_line gdrbn2; logs; fail "gdrbn2 not resumed within 30 s of turning healthy"; }
pass "health check: gdrbn2 resumed once healthy: $(node_line gdrbn2 | head -1)"

step() {
	local name=$1
	shift
	on_node gdrbn1 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.out" "$WORK/$name.err"; logs; fail "$name: $* failed"; }
}
step hostnames timeout 60 srun -N2 -n2 hostname
[ "$(sort "$WORK/hostnames.out" | tr '\n' ' ')" = "gdrbn1 gdrbn2 " ] ||
	{ cat "$WORK/hostnames.out"; fail "srun -N2 hostname: not one task on each node"; }
pass "srun -N2: $(sort "$WORK/hostnames.out" | tr '\n' ' ')"

# An MPI binary launched by srun across the two nodes (PMIx; Open MPI over TCP on the bed):
# its CSV counts 2 hosts, every row ok.
step mpi timeout 120 srun -N2 -n2 --mpi=pmix "$top_builddir/mpi/gdrb_mpi_latency" -m 8:1K -n 20 -w 2 \
	--csv "$WORK/mpi.csv"
csv_check "$WORK/mpi.csv" || fail "srun gdrb_mpi_latency: the CSV does not follow the schema"
[ "$(csv_col "$WORK/mpi.csv" hosts | sort -u)" = 2 ] || { cat "$WORK/mpi.csv"; fail "srun gdrb_mpi_latency: hosts is not 2"; }
[ "$(csv_col "$WORK/mpi.csv" status | sort -u)" = ok ] || { cat "$WORK/mpi.csv"; fail "srun gdrb_mpi_latency: rows not ok"; }
pass "srun -N2 --mpi=pmix gdrb_mpi_latency: $(grep -c . "$WORK/mpi.csv") CSV lines, 2 hosts, all ok"

# gdrb sweep inside an allocation: it launches with srun on the allocation's nodes by itself
# (the PMIx plugin through --launcher-args, as a site without MpiDefault=pmix would give it).
step sweep timeout 300 salloc -N2 -n2 "$top_srcdir/scripts/gdrb" sweep --bin-dir "$top_builddir" \
	--bench gdrb_mpi_latency --sizes 8,1K --time-per-size 0.02 --launcher-args --mpi=pmix --out "$WORK/sweep"
csv=$WORK/sweep/results.csv
csv_check "$csv" || fail "sweep in salloc: results.csv does not follow the schema"
[ "$(csv_col "$csv" hosts benchmark=mpi_latency | sort -u)" = 2 ] || { cat "$csv"; fail "sweep in salloc: rows not across 2 hosts"; }
[ "$(csv_col "$csv" status benchmark=mpi_latency | sort -u)" = ok ] || { cat "$csv"; fail "sweep in salloc: rows not ok"; }
grep -q '^srun .*gdrb_mpi_latency' "$WORK/sweep/commands.txt" || { cat "$WORK/sweep/commands.txt"; fail "sweep in salloc: not launched with srun"; }
[ "$(json_get "$WORK/sweep/meta.json" nodes.0.hostname) $(json_get "$WORK/sweep/meta.json" nodes.1.hostname)" = "gdrbn1 gdrbn2" ] ||
	fail "sweep in salloc: meta.json does not name gdrbn1 and gdrbn2"
pass "gdrb sweep in salloc -N2: srun by itself, rows across 2 hosts, meta.json names both nodes"

# The prolog: the steps above ran it on both nodes, and passed. A job started on gdrbn2 once
# its doctor FAILs does not run: the prolog drains it with gdrbench's reason, which Slurm's own
# "Prolog error" does not replace.
for h in gdrbn1 gdrbn2; do
	grep -q "^$h [0-9]" "$s/prolog.ran" 2>/dev/null || { cat "$s/prolog.ran"; fail "the prolog did not run on $h"; }
done
: >"$s/healthcheck.off"
sleep 1     # a health check already started ends (the doctor takes milliseconds)
ran=$(grep -c '^gdrbn2 ' "$s/prolog.ran")
ln -sfn "$fx/nopeermem" "$s/gdrbn2.node" || fail "cannot relink gdrbn2's fixture"
on_node gdrbn1 timeout 60 srun -N1 -w gdrbn2 -t 1 true >"$WORK/prolog.out" 2>&1 &&
	{ cat "$WORK/prolog.out"; fail "a job ran on gdrbn2 past a failing prolog"; }
[ "$(grep -c '^gdrbn2 ' "$s/prolog.ran")" -gt "$ran" ] || { cat "$WORK/prolog.out"; fail "the job's prolog did not run on gdrbn2"; }
grep -q "Job prolog failed" "$WORK/prolog.out" || { cat "$WORK/prolog.out"; fail "srun did not fail on the prolog"; }
until_ok 30 drained || { node_line gdrbn2; logs; fail "gdrbn2 not drained by its prolog within 30 s"; }
pass "prolog: a job on gdrbn2 failed (srun: Job prolog failed), gdrbn2 drained: $(node_line gdrbn2 | tr '\n' ' ')"
