# gen_csv.awk: write a synthetic gdrbench results CSV with plausible numbers for a node pair
# with InfiniBand NDR (400 Gb/s) NICs and H100 GPUs, CUDA-aware MPI.
#
#   gawk -v schema_def=common/core/csv_schema.def -f tests/support/schema.awk -f tests/support/gen_csv.awk \
#        [-v fault=1|gdr] [-v rows=N] [-v pairs=P]
#
# 28 sizes (8 B..1 GiB) x mpi_latency, mpi_bw, write_lat, write_bw (host and device memory,
# direct and staged) and copy_bw: 476 aggregate rows. fault=1 plants what an acceptance run
# must catch: write_bw direct from GPU memory dips to 41 GB/s at 4-16 MiB, the 8-byte
# write_lat p99 on device memory is 7.9 us, and write_bw from host memory failed at 1 GiB.
# fault=gdr is GPUDirect RDMA that does not pay: the GPU and the NIC under different sockets
# (gpu_nic_dist SYS), the direct write latency from GPU memory 5 us more than the good run's
# (above half the staged one at 8 B..4 KiB), the direct write bandwidth from GPU memory 30% of
# the good run's from 1 MiB (below the staged path), and its 1 GiB buffer never registered
# (the 'failed' row gdrb-sweep writes for it, reg none).
# rows=N repeats the run until N rows are written (a large file for timing the scripts);
# pairs=P adds P per-pair rows after each aggregate row.
# Rows are built by column name (set, emit) from the schema's one definition, so that a column
# added, renamed or moved there needs no change here, and a name it lacks ends the program.
# Deterministic: the jitter comes from srand(1).

function lat_row(bench, layer, mem, path, reg, size, base, bw, nic,    p50) {
	p50 = (base + size / (bw * 1e3)) * (1 + 0.02 * rand())
	row(bench, layer, mem, path, reg, size, p50, p50 * 1.3 + 0.2, size / (p50 * 1e3), nic)
}

function bw_row(bench, layer, mem, path, reg, size, peak, half, nic,    gbps, t) {
	gbps = peak * size / (size + half) * (1 - 0.01 * rand())
	t = size / (gbps * 1e3)
	row(bench, layer, mem, path, reg, size, t, t * 1.2, gbps, nic)
}

function row(bench, layer, mem, path, reg, size, p50, p99, gbps, nic,    iters, status, i, n) {
	if (fault == 1 && bench == "write_bw" && mem == "device" && path == "direct" && size >= 4194304 && size <= 16777216) {
		gbps = 41 + (size / 4194304) * 0.1
		p50 = p99 = size / (gbps * 1e3)
	}
	if (fault == 1 && bench == "write_lat" && mem == "device" && path == "direct" && size == 8)
		p99 = 7.9
	if (fault == "gdr" && bench == "write_lat" && mem == "device" && path == "direct") {
		p50 += 5
		p99 += 5
		gbps = size / (p50 * 1e3)
	}
	if (fault == "gdr" && bench == "write_bw" && mem == "device" && path == "direct" && size >= 1048576) {
		gbps *= 0.3
		p50 = size / (gbps * 1e3)
		p99 = p50 * 1.2
	}
	status = "ok"
	if (fault == 1 && bench == "write_bw" && mem == "host" && size == 1073741824)
		status = "failed"
	if (fault == "gdr" && bench == "write_bw" && mem == "device" && path == "direct" && size == 1073741824) {
		status = "failed"
		reg = "none"
	}
	iters = int(0.3 / (p50 * 1e-6))
	iters = iters > 10000 ? 10000 : (iters < 3 ? 3 : iters)
	SECOND++
	for (i = 0; i <= pairs; i++) {
		n = i ? 2 * pairs : 2
		set("benchmark", bench); set("layer", layer); set("mem", mem); set("path", path); set("reg", reg)
		set("pair", i ? (i - 1) ":" (i - 1 + pairs) : "all")
		set("size_bytes", size)
		set("hosts", 2)
		set("nic", nic)
		# Verbs rows name their link (the rate left unknown, as from a port without one) and
		# distance; the CPU columns stay empty (nothing is measured here).
		if (layer == "verbs") {
			set("link_layer", "InfiniBand"); set("gpu_nic_dist", fault == "gdr" ? "SYS" : "PIX")
		}
		set("status", status)
		set("errors", 0)
		set("timestamp", stamp(SECOND))
		set("version", "0.1.0")
		if (status == "ok") {
			# Pipelined staging names its fragment and slots; bandwidth rows their window and
			# buffer layout.
			if (path == "staged") {
				set("stage_chunk", 524288); set("stage_slots", 4)
			}
			if (bench ~ /_bw$/ && layer != "local") {
				set("window", 64); set("buffers", "slots")
			}
			set("iterations", iters)
			set("lat_min_us", sprintf("%.3f", p50 * 0.93)); set("lat_p50_us", sprintf("%.3f", p50))
			set("lat_avg_us", sprintf("%.3f", p50 * 1.04)); set("lat_p99_us", sprintf("%.3f", p99))
			set("lat_p999_us", sprintf("%.3f", p99 * 1.5)); set("lat_max_us", sprintf("%.3f", p99 * 3))
			set("lat_stdev_us", sprintf("%.3f", p50 * 0.08))
			set("bw_GBps", sprintf("%.6f", gbps / (i ? pairs : 1)))
			set("ranks", layer == "local" ? 1 : n)
			set("hosts", layer == "local" ? 1 : 2)
			set("gpu", mem == "host" && layer != "local" ? "" : GPU)
			set("quality", "ok")
			set("note", "acceptance")
		} else {
			set("iterations", 0)
			set("ranks", n)
			set("gpu", mem == "host" ? "" : GPU)
			set("note", "\"gdrb-sweep: gdrb_" bench " exited 1; see logs/04-" bench "-" mem ".log\"")
		}
		print emit()
		if (++WRITTEN == rows)
			exit 0
	}
}

# set NAME VALUE: field NAME of the row being built (CSV text, quoted by the caller where needed);
# a name the schema does not have ends the program.
function set(name, value) {
	if (!(name in SCHEMA_COL)) {
		print "gen_csv.awk: no column '" name "' in " schema_def > "/dev/stderr"
		exit 2
	}
	ROW[name] = value
}

# emit: the row built by set, its fields in the schema's order (a column not set is empty: no
# figure); the row is then cleared.
function emit(    i, line) {
	line = ""
	for (i = 1; i <= SCHEMA_NF; i++) {
		line = line (i > 1 ? "," : "") ROW[SCHEMA_NAME[i]]
		ROW[SCHEMA_NAME[i]] = ""
	}
	return line
}

function stamp(s) {
	return strftime("%Y-%m-%dT%H:%M:%SZ", 1795082400 + s, 1)
}

function run(    n, k, s, nic) {
	n = 0
	for (s = 8; s <= 1073741824; s *= 2)
		S[++n] = s
	nic = "mlx5_0:1"
	for (k = 1; k <= n; k++) lat_row("mpi_latency", "mpi", "host", "direct", "host", S[k], 1.9, 24, "")
	for (k = 1; k <= n; k++) {
		lat_row("mpi_latency", "mpi", "device", "direct", "mpi-cuda", S[k], 2.6, 22, "")
		lat_row("mpi_latency", "mpi", "device", "staged", "staged", S[k], 12.6, 11, "")
	}
	for (k = 1; k <= n; k++) bw_row("mpi_bw", "mpi", "host", "direct", "host", S[k], 24.5, 16384, "")
	for (k = 1; k <= n; k++) {
		bw_row("mpi_bw", "mpi", "device", "direct", "mpi-cuda", S[k], 23.8, 24576, "")
		bw_row("mpi_bw", "mpi", "device", "staged", "staged", S[k], 12.1, 65536, "")
	}
	for (k = 1; k <= n; k++) lat_row("write_lat", "verbs", "host", "direct", "host", S[k], 1.05, 48, nic)
	for (k = 1; k <= n; k++) {
		lat_row("write_lat", "verbs", "device", "direct", "dmabuf", S[k], 1.6, 47, nic)
		lat_row("write_lat", "verbs", "device", "staged", "staged", S[k], 10.6, 17, nic)
	}
	for (k = 1; k <= n; k++) bw_row("write_bw", "verbs", "host", "direct", "host", S[k], 48.6, 8192, nic)
	for (k = 1; k <= n; k++) {
		bw_row("write_bw", "verbs", "device", "direct", "dmabuf", S[k], 48.2, 12288, nic)
		bw_row("write_bw", "verbs", "device", "staged", "staged", S[k], 17.5, 65536, nic)
	}
	for (k = 1; k <= n; k++) {
		bw_row("copy_bw", "local", "host", "h2d", "none", S[k], 12.4, 32768, "")
		bw_row("copy_bw", "local", "pinned", "h2d", "none", S[k], 52.3, 131072, "")
		bw_row("copy_bw", "local", "host", "d2h", "none", S[k], 10.8, 32768, "")
		bw_row("copy_bw", "local", "pinned", "d2h", "none", S[k], 53.1, 131072, "")
		bw_row("copy_bw", "local", "device", "d2d", "none", S[k], 1180, 1048576, "")
	}
}

BEGIN {
	srand(1)
	schema_load()
	for (c in SCHEMA_COL)
		SCHEMA_NAME[SCHEMA_COL[c]] = c
	GPU = "NVIDIA H100 80GB HBM3"
	pairs += 0
	rows += 0
	print SCHEMA_HEADER
	do
		run()
	while (rows && WRITTEN < rows)
}
