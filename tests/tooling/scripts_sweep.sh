#!/bin/bash
# gdrb-sweep on this machine: the default profile with small sizes; a profile where one
# benchmark fails (its missing sizes become 'failed' rows, the sweep goes on, exit 1) and one
# is unsupported; skips (no GPU, no RDMA device, not built); meta.json read from the system;
# srun inside a (fake) Slurm allocation; a (fake) GPU and RDMA port; bad usage.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
need_mpi
# A node without a GPU (make check puts the simulated GPU in front of CUDA; it
# answers as a machine without a driver here, except where a test says otherwise).
export SIMGPU_DRIVER=none

sweep=("$SCRIPTS/gdrb" sweep)
header=$(head -n 1 "$DATA/good-run/results.csv")
# Filters for csv_count and csv_has: an MPI row on host memory; a row without staging or window
# (an aggregate); no latency or bandwidth figure.
mpi_host=(layer=mpi mem=host path=direct reg=host stage_chunk= stage_slots=)
unwindowed=(stage_chunk= stage_slots= window= buffers= pair=all)
no_figures=(lat_min_us= lat_p50_us= lat_avg_us= lat_p99_us= lat_p999_us= lat_max_us= lat_stdev_us= bw_GBps=
	algbw_GBps= busbw_GBps=)

# --- the default profile (quick), with small sizes -----------------------------------
"${sweep[@]}" --bin-dir "$top_builddir" --sizes 8,64K --time-per-size 0.02 --out "$WORK/quick" \
	>"$WORK/quick.out" 2>"$WORK/quick.err" || { cat "$WORK/quick.err"; fail "default sweep exited $?"; }
csv=$WORK/quick/results.csv
csv_check "$csv" || fail "default sweep: results.csv does not follow the schema"
# The quick profile's MPI lines: latency, bw, bibw and allreduce, 2 sizes each.
[ "$(csv_count "$csv" 'benchmark~mpi_[a-z]*' "${mpi_host[@]}" 'window~[0-9]*' 'buffers~[a-z]*' pair=all)" -eq 8 ] || { cat "$csv"; fail "default sweep: expected 4 benchmarks x 2 sizes with host memory"; }
csv_has "$csv" benchmark=mpi_allreduce "${mpi_host[@]}" "${unwindowed[@]}" size_bytes=65536 || fail "default sweep: no allreduce row"
grep -q -E '^\[1/[0-9]+\] gdrb_mpi_latency mem=host 8B\.\.64KiB  [0-9]+ s  ETA [0-9]+ (s|min)$' "$WORK/quick.err" ||
	{ cat "$WORK/quick.err"; fail "default sweep: no progress line"; }
grep -q -E '^\[1/[0-9]+\] gdrb_mpi_latency mem=host: ok, 2 rows, [0-9]+ s$' "$WORK/quick.err" || fail "default sweep: no step result line"
grep -q '^# gdrbench .* mpi_bw: ' "$WORK/quick.out" || fail "default sweep: tables not on stdout"
meta=$WORK/quick/meta.json
json_ok "$meta" || fail "meta.json is not JSON"
[ "$(json_get "$meta" nodes.0.hostname)" = "$(hostname)" ] || fail "meta.json: hostname"
[ "$(json_get "$meta" nodes.0.kernel)" = "$(uname -r)" ] || fail "meta.json: kernel"
[ "$(json_get "$meta" nodes.0.mpi)" = "$(mpirun --version 2>/dev/null | sed -n '/./{p;q}')" ] || fail "meta.json: MPI version"
[ "$(json_get "$meta" gdrbench_version)" = "$("$top_builddir/mpi/gdrb_mpi_latency" --version | sed 's/.*) //')" ] ||
	fail "meta.json: gdrbench version"
[ "$(json_get "$meta" status)" = complete ] && [ "$(json_get "$meta" exit_status)" = 0 ] || fail "meta.json: status"
[ "$(json_get "$meta" steps.0.status)" = ok ] && json_get "$meta" steps.0.command | grep -q 'gdrb_mpi_latency -m 8,64K' ||
	fail "meta.json: steps and command lines"
if ! have_gpu; then
	[ "$(json_get "$meta" nodes.0.gpu_driver)" = null ] || fail "meta.json: a GPU driver on a machine without GPU"
	json_get "$meta" skipped.0.reason | grep -q 'device memory needs a GPU' || fail "meta.json: skipped device memory not recorded"
fi
[ "$(wc -l <"$WORK/quick/commands.txt")" -ge 3 ] || fail "commands.txt"
[ -s "$WORK/quick/summary.md" ] && [ -s "$WORK/quick/report.html" ] || fail "no summary.md or report.html"
if command -v gnuplot >/dev/null 2>&1; then
	png_ok "$WORK/quick/plots/mpi_bw-host.png" || fail "no plot of mpi_bw"
fi
[ ! -e "$WORK/quick/verdict.json" ] || fail "quick has no rules, but a verdict was written"
ls "$WORK/quick/logs/"*.csv >/dev/null 2>&1 && fail "per-step CSVs left in logs/"
pass "default sweep: 4 benchmarks, schema-valid CSV, meta.json from the system, progress, plots, summary"

# --- failures, unsupported, skips ---------------------------------------------------------
# Fake benchmarks (one local process each) that behave like gdrbench binaries toward --csv,
# and say what they are as the binaries do (--describe, docs/describe.md): layer local, host
# memory, one direct path whose rows the run could not write carry reg none.
mkdir "$WORK/bin"
for name in fail unsupp; do
	fake_bench "$WORK/bin/gdrb_fake_$name" "fake_$name" "$(cat <<FAKE
[ -s "\$csv" ] || echo '$header' >>"\$csv"
case $name in
fail)
	echo "fake_fail,local,\$mem,direct,host,,,,,all,8,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,,,1,1,,,,,,50.0,,ok,0,ok,\$label,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," >>"\$csv"
	echo "gdrb_fake_fail: lost the peer at 64KiB (injected)" >&2
	exit 1 ;;
unsupp)
	echo "gdrb_fake_unsupp: unsupported on this node: no widget (injected)" >&2
	exit 77 ;;
esac
FAKE
)"
done
cat >"$WORK/test.profile" <<'PROFILE'
# sweep test: real MPI benchmarks around a failing and an unsupported fake
sizes 8,64K
time 0.02
run gdrb_mpi_latency mem=host,pinned
run gdrb_fake_fail   launch=local
run gdrb_mpi_bw      mem=host
run gdrb_fake_unsupp launch=local
run gdrb_not_built   mem=host
run gdrb_write_bw    mem=host,device needs=rdma
rule lat-any   mpi_latency lat_p50_us <= 1000 ms sizes=8
rule fake-ok   fake_fail   status     =  ok
PROFILE
# Each step once: repeats of the failing one are test_sweep.py's RepeatTest.
"${sweep[@]}" --profile "$WORK/test.profile" --bin-dir "$top_builddir" --bin-dir "$WORK/bin" --out "$WORK/mixed" \
	--repeat-failed 0 >"$WORK/mixed.out" 2>"$WORK/mixed.err"
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/mixed.err"; fail "mixed sweep exited $rc, expected 1"; }
csv=$WORK/mixed/results.csv
csv_check "$csv" || fail "mixed sweep: results.csv does not follow the schema"
# 2 + 2 (latency host, pinned) + 1 ok + 1 failed (fake_fail) + 2 (bw) + 2 unsupported = 10 rows
[ "$(($(wc -l <"$csv") - 1))" -eq 10 ] || { cat "$csv"; fail "mixed sweep: expected 10 rows"; }
csv_has "$csv" benchmark=fake_fail layer=local mem=host path=direct reg=host "${unwindowed[@]}" size_bytes=8 \
	iterations=10 status=ok errors=0 || fail "the failing benchmark's measured row is lost"
csv_has "$csv" benchmark=fake_fail layer=local mem=host path=direct reg=none "${unwindowed[@]}" size_bytes=65536 \
	iterations=0 "${no_figures[@]}" ranks=1 hosts=1 gpu= nic= link_layer= link_gbps= gpu_nic_dist= \
	cpu_initiator_pct= cpu_responder_pct= status=failed errors=0 quality= \
	'note=gdrb-sweep: gdrb_fake_fail exited 1 without a row for this size; lost the peer at 64KiB (injected); see logs/03-fake_fail-host.log' ||
	{ cat "$csv"; fail "no 'failed' row for the size the failing benchmark did not measure"; }
grep -q 'lost the peer at 64KiB (injected)' "$WORK/mixed/logs/03-fake_fail-host.log" || fail "the failing step's log does not say why"
[ "$(csv_count "$csv" benchmark=fake_unsupp layer=local mem=host path=direct reg=none "${unwindowed[@]}" \
	'size_bytes~[0-9]*' iterations=0 status=unsupported errors=0 quality= \
	'note=unsupported here: unsupported on this node: no widget (injected)')" -eq 2 ] ||
	{ cat "$csv"; fail "no 'unsupported' rows for the unsupported benchmark"; }
csv_has "$csv" benchmark=mpi_bw "${mpi_host[@]}" window=64 buffers=slots pair=all size_bytes=65536 || fail "the sweep stopped after the failure"
grep -q '^\[3/5\] gdrb_fake_fail mem=host: failed, 1 row, 1 missing rows written as failed (exit 1; logs/03-fake_fail-host.log)' "$WORK/mixed.err" ||
	{ cat "$WORK/mixed.err"; fail "the failure is not reported on stderr"; }
meta=$WORK/mixed/meta.json
[ "$(json_get "$meta" steps.2.status)" = failed ] && [ "$(json_get "$meta" steps.2.exit)" = 1 ] &&
	[ "$(json_get "$meta" steps.4.status)" = unsupported ] || fail "meta.json: step outcomes"
json_get "$meta" skipped.0.reason | grep -q 'not built here' || fail "meta.json: the binary that is not built"
json_get "$meta" skipped.1.reason | grep -q 'needs an RDMA device' || fail "meta.json: the verbs benchmark without RDMA device"
[ "$(json_get "$WORK/mixed/verdict.json" verdict)" = FAIL ] || fail "the profile's rules were not checked"
grep -q '^FAIL   fake-ok: ' "$WORK/mixed.out" && grep -q '^PASS   lat-any: ' "$WORK/mixed.out" || fail "verdict lines not on stdout"
sed -n 3p "$WORK/mixed/summary.md" | grep -q '^\*\*Verdict: FAIL\*\*' || fail "summary.md: no verdict on top"
pass "a failing benchmark: its missing size is a 'failed' row, its log says why, the sweep goes on, exit 1"

# --- where ranks go: hosts, hostfile, Slurm --------------------------------------------------
# A fake Slurm: srun records its arguments and runs the ranks with mpirun on this host.
mkdir "$WORK/slurm"
cat >"$WORK/slurm/srun" <<'FAKE'
#!/bin/bash
echo "srun $*" >>"$SRUN_LOG"
[ "$1" = --version ] && { echo "slurm 23.02.0 (fake)"; exit 0; }
n=2
while [ $# -gt 0 ]; do
	case $1 in
	--ntasks=*) n=${1#--ntasks=} ;;
	--*) ;;
	*) break ;;
	esac
	shift
done
exec mpirun -np "$n" --oversubscribe "$@"
FAKE
chmod +x "$WORK/slurm/srun"
"${sweep[@]}" --dry-run --hosts nodeA,nodeB --np 4 --bench bw --bin-dir "$top_builddir" >"$WORK/dry" 2>&1 || fail "--dry-run exited $?"
grep -q -- '--host nodeA:2,nodeB:2 .*/gdrb_mpi_bw -m 8:1G ' "$WORK/dry" || { cat "$WORK/dry"; fail "--hosts: ranks not split across the hosts"; }
printf 'nodeC slots=8\n# comment\nnodeD slots=8\n' >"$WORK/hostfile"
PATH=$WORK/slurm:$PATH "${sweep[@]}" --dry-run --hostfile "$WORK/hostfile" --launcher srun --bench bw --bin-dir "$top_builddir" >"$WORK/dry" 2>&1
grep -q -- 'srun --ntasks=2 --distribution=block --nodes=2 --nodelist=nodeC,nodeD ' "$WORK/dry" || { cat "$WORK/dry"; fail "--hostfile with srun"; }
pass "--hosts and --hostfile place rank i and i+N/2 on different hosts"

SRUN_LOG=$WORK/srun.log SLURM_JOB_ID=4242 SLURM_JOB_NODELIST=$(hostname) PATH=$WORK/slurm:$PATH \
	"${sweep[@]}" --bin-dir "$top_builddir" --bench latency --sizes 8 --out "$WORK/slurmrun" >/dev/null 2>"$WORK/slurm.err" ||
	{ cat "$WORK/slurm.err"; fail "sweep in a (fake) Slurm allocation exited $?"; }
grep -q "^srun --ntasks=2 --distribution=block --nodes=1 --nodelist=$(hostname) .*/gdrb_mpi_latency -m 8 " "$WORK/srun.log" ||
	{ cat "$WORK/srun.log"; fail "srun not used, or not with 2 tasks on the allocation's node"; }
[ "$(json_get "$WORK/slurmrun/meta.json" launcher)" = srun ] && [ "$(json_get "$WORK/slurmrun/meta.json" slurm_job_id)" = 4242 ] ||
	fail "meta.json: launcher and Slurm job"
csv_has "$WORK/slurmrun/results.csv" benchmark=mpi_latency "${mpi_host[@]}" "${unwindowed[@]}" size_bytes=8 || fail "no row through srun"
pass "inside a Slurm allocation the sweep launches with srun on the allocation's nodes"

# --- a node with a GPU and an RDMA port (fakes): what is planned, what meta.json records -----
mkdir -p "$WORK/sys/class/infiniband/mlx5_0/ports/1" "$WORK/sys/class/infiniband/mlx5_0/device/net/ib0"
fake_nvidia_smi "$WORK/gpu" "NVIDIA H100 80GB HBM3" 00000000:18:00.0
ib=$WORK/sys/class/infiniband/mlx5_0
printf 'DRIVER=mlx5_core\nPCI_ID=15B3:1021\nPCI_SLOT_NAME=0000:1a:00.0\n' >"$ib/device/uevent"
echo 28.39.1002 >"$ib/fw_ver"
echo MT_0000000838 >"$ib/board_id"
echo '4: ACTIVE' >"$ib/ports/1/state"
echo '5: LinkUp' >"$ib/ports/1/phys_state"
echo InfiniBand >"$ib/ports/1/link_layer"
echo '400 Gb/sec (4X NDR)' >"$ib/ports/1/rate"
PATH=$WORK/gpu:$PATH GDRB_SYSFS=$WORK/sys "$SCRIPTS/lib/node-info" >"$WORK/node.json" || fail "node-info exited $?"
json_ok "$WORK/node.json" || fail "node-info: not JSON"
for kv in gpu_driver=580.65.06 cuda_driver=13.0 gpus.0.name="NVIDIA H100 80GB HBM3" gpus.0.pci_bus_id=0000:18:00.0 \
	gpus.0.pci_id=10de:2330 nics.0.name=mlx5_0 nics.0.pci_bus_id=0000:1a:00.0 nics.0.pci_id=15b3:1021 \
	nics.0.netdevs.0=ib0 nics.0.ports.0.rate_gbps=400 nics.0.ports.0.link_layer=InfiniBand; do
	[ "$(json_get "$WORK/node.json" "${kv%%=*}")" = "${kv#*=}" ] || { cat "$WORK/node.json"; fail "node-info: ${kv%%=*} is not ${kv#*=}"; }
done
pass "node-info reads GPUs (driver, CUDA, PCI ids) and RDMA ports (PCI ids, state, rate) where they exist"

PATH=$WORK/gpu:$PATH GDRB_SYSFS=$WORK/sys "${sweep[@]}" --dry-run --bin-dir "$top_builddir" >"$WORK/dry" 2>&1
grep -q -- '/gdrb_mpi_bw -m 8:1G .*--mem device' "$WORK/dry" || { cat "$WORK/dry"; fail "with a GPU, device memory is not planned"; }
grep -Eq 'skip: gdrb_write_bw mem=device: not built here|/gdrb_write_bw -m 8:1G .*--mem device' "$WORK/dry" || { cat "$WORK/dry"; fail "with an RDMA device, the verbs benchmarks are not considered"; }
grep -q -- 'gdrb_copy_bw -m 8:1G --csv [^ ]* --label quick$' "$WORK/dry" || { cat "$WORK/dry"; fail "with a GPU, gdrb_copy_bw is not planned without --mem"; }
# A device run on this machine (no real GPU): the binaries say unsupported, the CSV says so too,
# with the reason: no GPU answers, or this build has no CUDA at all.
no_gpu='no usable GPU'
[ "${HAVE_CUDA:-1}" = 1 ] || no_gpu='gdrbench was built without CUDA'
PATH=$WORK/gpu:$PATH GDRB_SYSFS=$WORK/sys "${sweep[@]}" --bin-dir "$top_builddir" --bench latency --mem device --sizes 8 \
	--out "$WORK/gpurun" >/dev/null 2>"$WORK/gpurun.err"
rc=$?
[ "$(json_get "$WORK/gpurun/meta.json" link_rate_gbps)" = 400 ] || fail "meta.json: link rate of the active port"
[ "$(json_get "$WORK/gpurun/meta.json" nodes.0.nics.0.ports.0.rate)" = "400 Gb/sec (4X NDR)" ] || fail "meta.json: NIC ports"
[ "$rc" -eq 0 ] || { cat "$WORK/gpurun.err"; fail "device sweep exited $rc"; }
csv_check "$WORK/gpurun/results.csv" || fail "device sweep: rows do not follow the schema"
lat_dev=(benchmark=mpi_latency layer=mpi mem=device)
if csv_has "$WORK/gpurun/results.csv" "${lat_dev[@]}" path=staged reg=staged "${unwindowed[@]}" size_bytes=8 \
	iterations=0 status=unsupported errors=0 quality= "note~unsupported here: .*$no_gpu.*" &&
	csv_has "$WORK/gpurun/results.csv" "${lat_dev[@]}" path=direct reg=mpi-cuda "${unwindowed[@]}" size_bytes=8 \
		iterations=0 status=unsupported errors=0; then
	pass "device memory where no GPU is usable: an 'unsupported' row for each path, with the reason, exit 0"
else
	csv_has "$WORK/gpurun/results.csv" "${lat_dev[@]}" path=staged reg=staged 'stage_chunk~[0-9]*' \
		'stage_slots~[0-9]*' window= buffers= pair=all size_bytes=8 'iterations~[1-9][0-9]*' status=ok errors=0 ||
		{ cat "$WORK/gpurun/results.csv"; fail "device sweep: neither unsupported nor measured rows"; }
	pass "device memory measured on a real GPU"
fi

# --- the simulated GPU (tests/support/simgpu), listed by a fake nvidia-smi: device rows are
# measured and validated, and the verdict is SIMULATED, never PASS --------------------------
if [ "${HAVE_CUDA:-1}" = 1 ] && ! have_gpu; then
	use_simgpu strict
	fake_nvidia_smi "$WORK/gpu" "gdrbench simulated GPU (simgpu)" 00000000:3B:00.0 0x00000000 16384 0.0
	printf 'sizes 8,64K\ntime 0.02\nrun gdrb_mpi_latency mem=device\nrule staged-ok mpi_latency status = ok path=staged\n' \
		>"$WORK/sim.profile"
	PATH=$WORK/gpu:$PATH "${sweep[@]}" --profile "$WORK/sim.profile" --bin-dir "$top_builddir" --validate \
		--out "$WORK/simrun" >"$WORK/simrun.out" 2>"$WORK/simrun.err"
	rc=$?
	[ "$rc" -eq 1 ] || { cat "$WORK/simrun.out" "$WORK/simrun.err"; fail "sweep on the simulated GPU exited $rc, expected 1"; }
	csv=$WORK/simrun/results.csv
	[ "$(csv_count "$csv" benchmark=mpi_latency layer=mpi mem=device path=staged reg=staged 'stage_chunk~[0-9]*' \
		'stage_slots~[0-9]*' window= buffers= pair=all 'size_bytes~[0-9]*' 'iterations~[1-9][0-9]*' \
		'gpu=gdrbench simulated GPU (simgpu)' status=ok errors=0)" -eq 2 ] ||
		{ cat "$csv"; fail "sweep on the simulated GPU: no validated device rows"; }
	[ "$(json_get "$WORK/simrun/verdict.json" verdict)" = SIMULATED ] ||
		{ cat "$WORK/simrun.out"; fail "sweep on the simulated GPU: the verdict is not SIMULATED"; }
	grep -q '^SIMULATED: 1 rules, 1 passed' "$WORK/simrun.out" || fail "sweep on the simulated GPU: verdict line"
	pass "sweep on the simulated GPU: device rows validated, verdict SIMULATED (exit 1)"
	# The node profiles' GPU-to-GPU line and rule (pair=*) on a simulated node of 4 GPUs two by two
	# over NVLink: each of the 12 ordered pairs a row of its own per path, the 8 pairs without a
	# link failing the rule by name, the verdict SIMULATED all the same.
	printf '%s\n' 'sizes 64K' 'time 0.02' \
		'run gdrb_copy_bw launch=local needs=gpu mem=none paths=device:p2p-direct,device:p2p-staged args="--p2p=uni"' \
		'rule p2p copy_bw bw_GBps >= 0.001 GB/s mem=device path=p2p-direct pair=*' >"$WORK/p2p.profile"
	PATH=$WORK/gpu:$PATH SIMGPU_NODE=nvlink4 "${sweep[@]}" --profile "$WORK/p2p.profile" --bin-dir "$top_builddir" \
		--repeat-failed 0 --out "$WORK/p2prun" >"$WORK/p2prun.out" 2>"$WORK/p2prun.err"
	rc=$?
	[ "$rc" -eq 1 ] || { cat "$WORK/p2prun.out" "$WORK/p2prun.err"; fail "p2p sweep on the simulated node exited $rc, expected 1"; }
	csv=$WORK/p2prun/results.csv
	[ "$(csv_count "$csv" benchmark=copy_bw mem=device path=p2p-staged 'pair~gpu[0-3]->gpu[0-3]' status=ok)" -eq 12 ] &&
		[ "$(csv_count "$csv" benchmark=copy_bw mem=device path=p2p-direct status=ok)" -eq 4 ] &&
		[ "$(csv_count "$csv" benchmark=copy_bw mem=device path=p2p-direct status=unsupported)" -eq 8 ] ||
		{ cat "$csv"; fail "p2p sweep: not 12 staged rows and 4 direct (the linked pairs) + 8 unsupported"; }
	grep -q '^FAIL   p2p: ' "$WORK/p2prun.out" && grep -q '8 of 12 checks failed: .*gpu0->gpu2: status unsupported' "$WORK/p2prun.out" ||
		{ cat "$WORK/p2prun.out"; fail "p2p sweep: the rule does not fail the 8 pairs without peer access by name"; }
	[ "$(json_get "$WORK/p2prun/verdict.json" verdict)" = SIMULATED ] || fail "p2p sweep: the verdict is not SIMULATED"
	pass "the node profiles' GPU-to-GPU step on a simulated 4-GPU node: 12 pairs per path, the 8 without peer access failing pair=* by name, SIMULATED"
	export SIMGPU_DRIVER=none
fi

# --- bad usage: exit 2, one line naming the option and the accepted form -----------------
expect_refused "--np: expected an even number of ranks, at least 2, got '3'" "${sweep[@]}" --np 3
expect_refused "--launcher: expected mpirun or srun, got 'ssh'" "${sweep[@]}" --launcher ssh
expect_refused "--sizes: expected MIN:MAX (doubling) or a list" "${sweep[@]}" --sizes 0
# Memory kinds are the binaries' (--describe): one none of the profile's binaries takes is refused.
expect_refused "--mem: no binary of profile quick takes 'gpu'; they take: device, host, pinned" "${sweep[@]}" --mem gpu
expect_refused "--time-per-size: expected seconds per size" "${sweep[@]}" --time-per-size 0
expect_refused "--hosts: expected a comma list of host names" "${sweep[@]}" --hosts 'a b'
expect_refused "--hosts and --hostfile: give one of them" "${sweep[@]}" --hosts a --hostfile "$WORK/hostfile"
expect_refused "--profile needs a value" "${sweep[@]}" --profile
expect_refused "nosuch: no such profile" "${sweep[@]}" --profile nosuch
expect_refused "--bench: 'nosuch' is not run by profile quick; its run lines: mpi_latency, " "${sweep[@]}" --bench nosuch
expect_refused "unknown option '--fast'" "${sweep[@]}" --fast
expect_refused "--out: '$WORK/quick' already holds results" "${sweep[@]}" --out "$WORK/quick"
printf 'run gdrb_mpi_bw mem=host\nrule r mpi_bw bw >= 1\n' >"$WORK/bad.profile"
expect_refused "bad.profile:2: rule r: unknown column 'bw'" "${sweep[@]}" --profile "$WORK/bad.profile"

# --- nothing to run here: not a success ---------------------------------------------------
"${sweep[@]}" --bin-dir "$top_builddir" --bench write_bw --out "$WORK/none" >/dev/null 2>"$WORK/none.err"
rc=$?
if [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	echo "this host has an RDMA device: the 'nothing ran' case is not tested here"
else
	[ "$rc" -eq 1 ] || { cat "$WORK/none.err"; fail "a sweep where every line is skipped exited $rc, expected 1"; }
	grep -q 'nothing ran: every line of profile quick was skipped here' "$WORK/none.err" || fail "no word on why nothing ran"
	grep -q 'gdrb_write_bw mem=host: needs an RDMA device' "$WORK/none/summary.md" || fail "summary.md lacks the reasons"
	pass "a sweep where nothing applies exits 1 and says why"
fi
