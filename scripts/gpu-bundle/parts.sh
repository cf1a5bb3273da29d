# shellcheck shell=bash
# The parts of the GPU check, each run by run.sh as `run.sh --part NAME` under its own time limit,
# after env.sh. B: the bundle, OUT: the output directory, W: the raw directory (archived as
# raw.tgz and read by python3 -m gdrbtool.reference). Each part writes its raw files under
# $W/<part>/, and a line "PART: not carried (...)" into $W/<part>/status.txt for a reference
# tool the bundle lacks.

lim() { timeout -k 5 "$@"; }
# GDRB_BUNDLE_QUICK=1 (a rehearsal's check of the pipeline, not of figures): small sizes, two MPI
# binaries.
if [[ ${GDRB_BUNDLE_QUICK:-0} == 1 ]]; then
	nccl_sizes=8:64K nccl_time=0.02 copy_sizes=(1 4) mpi_sizes=8:64K mpi_bins="gdrb_mpi_bw gdrb_mpi_latency"
else
	nccl_sizes=8:64M nccl_time=0.05 copy_sizes=(1 4 16 64 512) mpi_sizes=8:4M mpi_bins=
fi
tprog() { find "$B/build" -name "$1" -type f | head -n 1; }
not_carried() {
	mkdir -p "$W/$1"
	echo "$2: not carried ($3)" | tee -a "$W/$1/status.txt"
}

part_inventory() {
	{
		set -x
		uname -a
		head -n 2 /etc/os-release
		nproc
		free -g
		ulimit -l
		nvidia-smi
		nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.max.sm --format=csv
		nvidia-smi topo -m
		cat /proc/driver/nvidia/version
		grep -E '^(nvidia|rdma|ib_|mlx)' /proc/modules
		ls /sys/class/infiniband /sys/class/net
		command -v nvidia-cuda-mps-control python3 gcc nvcc mpirun
		ldd "$B/build/bench/gdrb_copy_bw" "$B/build/nccl/gdrb_nccl_allreduce"
		ldd "$B/tools/nccl-tests/bin/all_reduce_perf" "$B/tools/nvbandwidth/bin/nvbandwidth"
		cat "$B/MANIFEST"
		"$B/scripts/lib/node-info"
		set +x
	} >"$OUT/inventory.txt" 2>&1
}

part_semantics() {
	{
		echo "## tests/test_simgpu on this runtime (PASS or FAIL per case; is_simulated must fail)"
		(cd "$W" && CK_LOG_FILE_NAME="$W/test_simgpu.log" lim 30 "$(tprog test_simgpu)")
		echo "exit $?"
		cat "$W/test_simgpu.log"
		echo "## driver attributes (libcuda through ctypes)"
		lim 10 python3 - <<'EOF'
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
print("cuInit", cu.cuInit(0))
v = ctypes.c_int(); cu.cuDriverGetVersion(ctypes.byref(v)); print("driver API", v.value)
for name, a in [("GPU_DIRECT_RDMA_SUPPORTED", 116), ("DMA_BUF_SUPPORTED", 124),
                ("PAGEABLE_MEMORY_ACCESS", 88), ("ASYNC_ENGINE_COUNT", 40)]:
    v = ctypes.c_int(-1); rc = cu.cuDeviceGetAttribute(ctypes.byref(v), a, 0)
    print(name, "rc", rc, "value", v.value)
EOF
	} >"$OUT/cuda-semantics.txt" 2>&1
}

# gdrbench's NCCL binaries pass nccl-tests' timing (batches of -n calls, one synchronisation
# each) where they have it; otherwise they run as they are and the status says so.
nccl_timing_args() {
	local help
	help=$("$B/build/nccl/gdrb_nccl_allreduce" --help 2>/dev/null)
	if grep -q -- '--nccl-timing' <<<"$help" && grep -q -- '--nccl-batch' <<<"$help"; then
		echo "--nccl-timing batch --nccl-batch 20"
	fi
}

part_nccl() {
	local d=$W/nccl nt=$B/tools/nccl-tests/bin timing r c g first
	mkdir -p "$d"
	if [[ ! -x $B/build/nccl/gdrb_nccl_allreduce ]]; then
		echo "nccl: gdrbench was built without NCCL: no gdrb_nccl_* in the bundle" | tee -a "$d/status.txt"
		return 0
	fi
	[[ -x $nt/all_reduce_perf ]] || not_carried nccl nccl-tests "the bundle was built without it"
	timing=$(nccl_timing_args)
	if [[ -n $timing ]]; then
		echo "nccl: gdrbench timed as nccl-tests: $timing" | tee -a "$d/status.txt"
	else
		echo "nccl: gdrbench has no --nccl-timing/--nccl-batch: its own timing (a synchronisation per call)" | tee -a "$d/status.txt"
	fi
	# -n 20 and -w 5: nccl-tests' defaults; -c 1 checks the results; -z 0: launches not blocking.
	run_nt() {
		[[ -x $nt/${c}_perf ]] || return 0
		lim 40 "$nt/${c}_perf" -b 8 -e "${nccl_sizes#*:}" -f 2 -g 1 -w 5 -n 20 -c 1 >"$d/nt-$c-r$r.txt" 2>&1
		echo "nccl-tests ${c}_perf round $r: exit $?"
	}
	run_gd() {
		# shellcheck disable=SC2086 # $timing: words
		lim 60 "$MPIRUN" -np 1 "$B/build/nccl/gdrb_nccl_$g" --mem device --in-place both -c -m "$nccl_sizes" -t "$nccl_time" \
			$timing --csv "$d/gd-$c-r$r.csv" >"$d/gd-$c-r$r.txt" 2>&1
		echo "gdrbench gdrb_nccl_$g round $r: exit $?"
	}
	for ((r = 1; r <= GDRB_BUNDLE_ROUNDS; r++)); do
		for c in all_reduce all_gather reduce_scatter; do
			g=${c/all_reduce/allreduce}
			g=${g/all_gather/allgather}
			first=$(((r % 2) ? 1 : 0))
			if ((first)); then run_nt; run_gd; else run_gd; run_nt; fi
		done
	done 2>&1 | tee "$d/order.txt"
}

# nvbandwidth's testcases for one GPU and the host: copy engine and SM, each direction alone and
# both at once, and the GPU's local copy.
NVB_CASES="host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_memcpy_sm device_to_host_memcpy_sm
host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce
host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm device_local_copy"

part_copies() {
	local d=$W/copies nvb=$B/tools/nvbandwidth/bin/nvbandwidth mib sizes
	mkdir -p "$d"
	# nvbandwidth's own buffer (512 MiB) and gdrbench's sizes from 1 MiB (nvbandwidth counts MiB).
	sizes=$(printf '%sM,' "${copy_sizes[@]}")
	lim 40 "$B/build/bench/gdrb_copy_bw" -m "${sizes%,}" -t 0.2 --csv "$d/gd-copy.csv" >"$d/gd-copy.txt" 2>&1
	echo "gdrb_copy_bw: exit $?"
	# nvbandwidth's shape: 16 copies between CUDA events on a held stream, both directions at once
	# too (the report sets these rows beside nvbandwidth first; docs/benchmarks.md).
	lim 60 "$B/build/bench/gdrb_copy_bw" --copy-timing events --copy-batch 16 -m "${sizes%,}" -n 5 -w 1 \
		--min-iters 5 -c --csv "$d/gd-copy-events.csv" >"$d/gd-copy-events.txt" 2>&1
	echo "gdrb_copy_bw --copy-timing events: exit $?"
	if [[ ! -x $nvb ]]; then
		not_carried copies nvbandwidth "the bundle was built without it"
		return 0
	fi
	for mib in "${copy_sizes[@]}"; do
		# shellcheck disable=SC2086 # $NVB_CASES: words
		lim 25 "$nvb" -b "$mib" -t $NVB_CASES >"$d/nvb-b$mib.txt" 2>&1
		echo "nvbandwidth -b $mib: exit $?"
	done
}

# The node's one GPU against its SKU (issue 40, docs/skus.md): the SKU from the GPU's name
# (GDRB_BUNDLE_SKU overrides it), the node profile's copy steps (host<->GPU, within the GPU, GPU
# to GPU where there are two) judged against its floors, then gdrb inventory on the doctor's
# report the sweep kept (on a node of fewer GPUs than the SKU's it fails, naming what differs:
# the honest answer).
part_sku() {
	local d=$W/sku name sku gdrb=$B/scripts/gdrb sweep_args=()
	mkdir -p "$d"
	name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
	sku=${GDRB_BUNDLE_SKU:-}
	if [[ -z $sku ]]; then
		case $name in
		*A100*) sku=a100 ;;
		*H100*) sku=h100 ;;
		*H200*) sku=h200 ;;
		*B200*) sku=b200 ;;
		*)
			echo "sku: no node profile for the GPU '${name:-none listed by nvidia-smi}'" | tee -a "$d/status.txt"
			return 0
			;;
		esac
	fi
	{
		echo "## GPU '$name': SKU $sku (node profile hgx-$sku)"
		[[ ${GDRB_BUNDLE_QUICK:-0} == 1 ]] && sweep_args=(--sizes 256M --time-per-size 0.05)
		echo "## gdrb sweep --profile hgx-$sku --bench copy_bw ${sweep_args[*]}"
		lim 80 python3 "$gdrb" sweep --profile "hgx-$sku" --bench copy_bw --bin-dir "$B/build" --repeat-failed 1 \
			"${sweep_args[@]}" --out "$d/sweep"
		echo "exit $?"
		# The profile's doctor line ran the doctor into the sweep's folder: its report is read once.
		echo "## gdrb inventory --sku $sku (the sweep's doctor.json)"
		lim 15 python3 "$gdrb" inventory --sku "$sku" "$d/sweep/doctor.json"
		echo "exit $?"
	} >"$OUT/sku.txt" 2>&1
}

part_mpi() {
	local d=$W/mpi f b
	mkdir -p "$d"
	(
		if cuda_mpi_env; then
			echo "mpi: the bundle's CUDA-aware Open MPI over UCX" | tee -a "$d/status.txt"
			ompi_info --parsable --all 2>&1 | grep -iE 'cuda|ucx|ident' >"$d/ompi_info.txt"
			ucx_info -v >"$d/ucx_info.txt" 2>&1
			lim 20 ucx_info -d >>"$d/ucx_info.txt" 2>&1
			# UCX_PROTO_INFO=y: UCX prints its protocol selection (transport, zero-copy or
			# pipeline, per message range); pml_ucx_verbose: which PML and transports Open MPI took.
			export UCX_PROTO_INFO=y OMPI_MCA_pml_ucx_verbose=10 OMPI_MCA_mpi_common_cuda_verbose=10
		else
			not_carried mpi "CUDA-aware MPI" "the bundle was built without it; Debian's Open MPI is not CUDA-aware, so direct rows say n/a"
		fi
		for f in "$B"/build/mpi/gdrb_mpi_*; do
			b=${f##*/}
			# pairs: every pair of ranks (one pair here); barrier: no buffer to place on the GPU
			[[ $b == gdrb_mpi_pairs || $b == gdrb_mpi_barrier ]] && continue
			[[ -z $mpi_bins || " $mpi_bins " == *" $b "* ]] || continue
			lim 30 "$MPIRUN" -np 2 --oversubscribe "$f" --mem device --staging both -c -m "$mpi_sizes" -t 0.02 \
				--csv "$d/$b.csv" >"$d/$b.txt" 2>&1
			echo "$b: exit $?"
		done
		omb_cuda "$d"
		ucx_perftest_cuda "$d"
	) 2>&1 | tee "$d/order.txt"
}

# OSU's osu_latency and osu_bw between device buffers, where OMB was carried built with CUDA.
omb_cuda() {
	local d=$1 n
	if [[ ! -x $B/omb/osu_latency ]]; then
		echo "OMB: not carried" | tee -a "$d/status.txt"
		return 0
	fi
	if ! "$B/omb/osu_latency" --help 2>&1 | grep -q -- '-d'; then
		echo "OMB: carried without CUDA (no -d)" | tee -a "$d/status.txt"
		return 0
	fi
	for n in osu_latency osu_bw; do
		[[ -x $B/omb/$n ]] || continue
		lim 30 "$MPIRUN" -np 2 "$B/omb/$n" -d cuda -m 8:4194304 D D >"$d/$n-cuda.txt" 2>&1
		echo "$n -d cuda D D: exit $?"
	done
}

# ucx_perftest between two processes on this node, GPU memory on both sides.
ucx_perftest_cuda() {
	local d=$1 pid
	command -v ucx_perftest >/dev/null || {
		echo "ucx_perftest: not carried" | tee -a "$d/status.txt"
		return 0
	}
	lim 25 ucx_perftest -t tag_bw -m cuda -s 4194304 -n 200 -p 13377 >"$d/ucx_perftest-server.txt" 2>&1 &
	pid=$!
	sleep 1
	lim 20 ucx_perftest 127.0.0.1 -t tag_bw -m cuda -s 4194304 -n 200 -p 13377 >"$d/ucx_perftest.txt" 2>&1
	echo "ucx_perftest -t tag_bw -m cuda: exit $?"
	wait "$pid"
}

part_staging() {
	lim 100 "$B/scripts/measure/measure-staging" --build-dir "$B/build" --stage-chunk auto,512K,2M \
		--time-per-size 0.2 --out "$W/staging" --report "$W/staging.md" >"$W/staging.out" 2>&1
	echo "measure-staging: exit $?"
}
