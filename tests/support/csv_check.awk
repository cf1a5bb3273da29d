# Check a gdrbench CSV against the schema (common/core/csv_schema.def, through schema.awk); its fields
# from csv_split (tests/support/csv_split.awk, loaded first).
# Variables (-v): status=S every row has status S; rows=N exactly N data rows;
# ranks=N every row has N ranks; bench=B only rows of benchmark B are counted;
# cpu_max=N the CPU percentages' bound (default 101: one thread within its wall window).
# Prints one line per problem and exits 1 if there is any.
function is_num(s) { return s ~ /^-?[0-9]+(\.[0-9]+)?$/ }
function bad(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; errors++ }
BEGIN {
	schema_load()
	want = SCHEMA_HEADER
	nh = SCHEMA_NF
	for (c in SCHEMA_COL) COL[c] = SCHEMA_COL[c]
	errors = 0; count = 0
}
FNR == 1 {
	if ($0 != want) bad("header differs from the schema")
	next
}
{
	n = csv_split($0, F)
	if (n != nh) { bad("has " n " fields, the schema has " nh); next }
	if (bench != "" && F[COL["benchmark"]] != bench) next
	count++
	st = F[COL["status"]]
	if (st !~ /^(ok|unsupported|failed|invalid-data)$/) bad("unknown status '" st "'")
	if (status != "" && st != status) bad("status " st ", expected " status)
	if (F[COL["layer"]] !~ /^(mpi|verbs|local|nccl)$/) bad("unknown layer " F[COL["layer"]])
	if (F[COL["path"]] == "") bad("empty path")
	if (F[COL["reg"]] !~ /^(host|dmabuf|peermem|mpi-cuda|staged|none|nccl)$/) bad("unknown reg " F[COL["reg"]])
	if (F[COL["size_bytes"]] !~ /^[1-9][0-9]*$/ && !(F[COL["benchmark"]] == "mpi_barrier" && F[COL["size_bytes"]] == "0"))
		bad("size_bytes not a positive integer")
	if (F[COL["errors"]] !~ /^[0-9]+$/) bad("errors not an integer")
	if (ranks != "" && F[COL["ranks"]] != ranks) bad("ranks " F[COL["ranks"]] ", expected " ranks)
	if (F[COL["timestamp"]] !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/) bad("bad timestamp")
	if (F[COL["version"]] == "") bad("empty version")
	coll = F[COL["benchmark"]] ~ /^(mpi|nccl)_(allreduce|allgather|reduce_scatter|alltoall|bcast|reduce|gather|scatter|barrier|sendrecv)$/
	# What NCCL says it used: its rows only, from its log (docs/csv-schema.md).
	nccl = F[COL["layer"]] == "nccl"
	if (nccl && (st == "ok" || st == "invalid-data")) {
		if (F[COL["transport"]] !~ /^(unknown|none|[A-Za-z0-9][A-Za-z0-9_.\/-]*(\+[A-Za-z0-9][A-Za-z0-9_.\/-]*)*)$/)
			bad("NCCL row with transport '" F[COL["transport"]] "'")
		if (F[COL["transport"]] != "unknown" && F[COL["gdr_connections"]] !~ /^[0-9]+\/[0-9]+$/)
			bad("NCCL row with gdr_connections '" F[COL["gdr_connections"]] "'")
		if (F[COL["library"]] !~ /^NCCL [0-9]/) bad("NCCL row with library '" F[COL["library"]] "'")
	}
	payload = F[COL["size_bytes"]] != "0"
	if (st == "ok" || st == "invalid-data") {
		if (F[COL["iterations"]] !~ /^[1-9][0-9]*$/) bad("no iterations")
		split("lat_min_us lat_p50_us lat_avg_us lat_p99_us lat_p999_us lat_max_us lat_stdev_us", L, " ")
		for (i = 1; i <= 7; i++) if (!is_num(F[COL[L[i]]])) bad(L[i] " not a number")
		mn = F[COL["lat_min_us"]] + 0; p50 = F[COL["lat_p50_us"]] + 0; avg = F[COL["lat_avg_us"]] + 0
		p99 = F[COL["lat_p99_us"]] + 0; mx = F[COL["lat_max_us"]] + 0
		# Collectives: min/avg/max are per-rank means, the percentiles pooled samples.
		if (coll ? (mn > avg || avg > mx || p50 > p99) : (mn > p50 || p50 > p99 || p99 > mx))
			bad("latency figures out of order")
		if (payload) {
			if (!is_num(F[COL["bw_GBps"]]) || F[COL["bw_GBps"]] + 0 <= 0) bad("bandwidth not positive")
			if (coll && (!is_num(F[COL["algbw_GBps"]]) || !is_num(F[COL["busbw_GBps"]])))
				bad("collective without algbw/busbw")
		}
	}
	if (!coll && (F[COL["algbw_GBps"]] != "" || F[COL["busbw_GBps"]] != ""))
		bad("algbw/busbw on a point-to-point row")
	verbs = F[COL["layer"]] == "verbs"
	if (verbs && (st == "ok" || st == "invalid-data") && F[COL["link_layer"]] !~ /^(InfiniBand|Ethernet)$/) bad("verbs row without link_layer")
	if (verbs && (st == "ok" || st == "invalid-data") && F[COL["gpu_nic_dist"]] !~ /^(PIX|PXB|PHB|NODE|SYS|unknown)$/) bad("verbs row without gpu_nic_dist")
	if (F[COL["link_gbps"]] != "" && (!is_num(F[COL["link_gbps"]]) || F[COL["link_gbps"]] + 0 <= 0)) bad("link_gbps not a positive number")
	if (!verbs && (F[COL["link_layer"]] != "" || F[COL["link_gbps"]] != "" || F[COL["gpu_nic_dist"]] != ""))
		bad("link columns on a row that is not verbs")
	# Pipelined staging names its fragment and slots; every other path leaves both empty.
	pipe = F[COL["path"]] == "staged" && !coll && (st == "ok" || st == "invalid-data")
	if (pipe && (F[COL["stage_chunk"]] !~ /^[1-9][0-9]*$/ || F[COL["stage_slots"]] !~ /^[2-9][0-9]*$/))
		bad("pipelined staged row without stage_chunk and stage_slots")
	if (F[COL["path"]] != "staged" && (F[COL["stage_chunk"]] != "" || F[COL["stage_slots"]] != ""))
		bad("stage_chunk/stage_slots on a row that is not pipelined staging")
	# Point-to-point bandwidth rows name their window and buffer layout; no other row does.
	windowed = F[COL["benchmark"]] ~ /_(bw|bibw)$/ && F[COL["layer"]] != "local" && (st == "ok" || st == "invalid-data")
	if (windowed && (F[COL["window"]] !~ /^[1-9][0-9]*$/ || F[COL["buffers"]] !~ /^(slots|single)$/))
		bad("bandwidth row without window and buffers")
	if (F[COL["benchmark"]] !~ /_(bw|bibw)$/ && (F[COL["window"]] != "" || F[COL["buffers"]] != ""))
		bad("window/buffers on a row without a window")
	# CPU time of a side, % of the timed part's wall time: measured rows only; a responder only in pairs.
	local = F[COL["layer"]] == "local"
	for (i = 0; i < 2; i++) {
		c = i ? "cpu_responder_pct" : "cpu_initiator_pct"
		v = F[COL[c]]
		if (st == "unsupported") { if (v != "") bad(c " on a row never measured"); continue }
		if (st == "failed") continue
		if (i && (coll || local)) { if (v != "") bad(c " on a row without responders"); continue }
		# One thread's CPU time over a wall window around it: 100 % at most, 1 for the two clocks'
		# skew (cpu_max=N: where the kernel's thread clock is coarser, as in a VM with unstable TSCs).
		if (!is_num(v) || v + 0 < 0 || v + 0 > (cpu_max != "" ? cpu_max : 101)) bad(c " '" v "' not a plausible percentage")
	}
	# What a library that picks its own path says it took: NCCL's transports and GPUDirect
	# connections; MPI's transport (from UCX's tables, else unknown) on the rows that ran.
	lay = F[COL["layer"]]
	if (lay == "mpi") {
		if (F[COL["gdr_connections"]] != "") bad("gdr_connections on a row of layer mpi")
		if (st == "unsupported" && F[COL["transport"]] != "") bad("transport on an MPI row never measured")
		if (st != "unsupported" && F[COL["transport"]] !~ /^(unknown|cuda_ipc|rdma-zcopy|rdma|host-pipeline|shm|tcp|self)(\+(unknown|cuda_ipc|rdma-zcopy|rdma|host-pipeline|shm|tcp|self))*$/)
			bad("MPI transport '" F[COL["transport"]] "' is not UCX's transports '+'-joined, nor unknown")
		if (F[COL["transport"]] ~ /unknown/ && F[COL["note"]] !~ /transport unknown/) bad("MPI transport unknown without the reason in the note")
	} else if (lay != "nccl" && (F[COL["transport"]] != "" || F[COL["gdr_connections"]] != "" || F[COL["library"]] != ""))
		bad("transport/gdr_connections/library on a row of layer " lay)
	# Where a collective's result went: every measured row of one that takes --in-place says
	# (gdrb-sweep's rows for sizes a step did not measure cannot); no other benchmark has the choice.
	pl = F[COL["placement"]]
	placed = F[COL["benchmark"]] ~ /^(mpi_(allreduce|allgather|reduce_scatter|alltoall|reduce|gather|scatter)|nccl_(allreduce|allgather|reduce_scatter|reduce))$/
	if (pl !~ /^(|out-of-place|in-place)$/) bad("unknown placement '" pl "'")
	if (placed && pl == "" && (st == "ok" || st == "invalid-data")) bad("no placement on a row of a collective that takes --in-place")
	if (!placed && pl != "") bad("placement on a row of a benchmark without --in-place")
	# How a library's calls were timed and what it chose (NCCL only).
	tm = F[COL["timing"]]
	if (tm !~ /^(|batch|call|graph)$/) bad("unknown timing '" tm "'")
	if (F[COL["layer"]] != "nccl" && (tm != "" || F[COL["calls_per_sync"]] != "" || F[COL["algorithm"]] != "" || F[COL["protocol"]] != "" || F[COL["channels"]] != ""))
		bad("timing/calls_per_sync/algorithm/protocol/channels on a row of layer " F[COL["layer"]])
	if (tm == "call" && F[COL["calls_per_sync"]] != "1") bad("timing call with calls_per_sync '" F[COL["calls_per_sync"]] "'")
	# Measured rows carry a quality verdict; rows never measured none.
	q = F[COL["quality"]]
	if ((st == "ok" || st == "invalid-data") && q !~ /^(ok|few-samples|noisy|few-samples\+noisy)$/)
		bad("measured row with quality '" q "'")
	if ((st == "unsupported" || st == "failed") && q != "") bad("quality on a row never measured")
	if (st == "ok" && F[COL["errors"]] != 0) bad("status ok with errors")
	if (st == "invalid-data" && F[COL["errors"]] == 0) bad("invalid-data without errors")
	if (st == "unsupported" && F[COL["note"]] == "") bad("unsupported without a reason in note")
}
END {
	if (rows != "" && count != rows) { printf "%s: %d rows, expected %d\n", FILENAME, count, rows; errors++ }
	exit errors ? 1 : 0
}
