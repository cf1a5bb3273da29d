# plot.awk: turn a results CSV into gnuplot data files and one gnuplot script (gdrb-plot's engine).
#
#   gawk -v meta=META.json -v outdir=PLOTS -v formats=png,svg -v png_term=pngcairo \
#        -f gdrb.awk -f json.awk -f plot.awk RESULTS.csv
#
# One figure per benchmark and memory kind: every path of that benchmark on the same axes
# (direct and staged, or h2d, d2h, d2d), from the aggregate rows (pair=all) whose status is ok.
# Latency benchmarks (names ending in lat, latency or barrier) plot p50 (solid) and p99
# (dashed) in us on log-log axes; the others plot GB/s (busbw where the rows have it) on a
# log size axis. With both a direct and a staged path, a second panel shows staged time over
# direct time at each size (above 1: direct is faster). Repeated rows of one size are reduced
# to their median. An empty value (no figure) is not drawn; neither is a value that is not a
# number of its column (value_fault), which is named on stderr with its file and line, never
# drawn as 0. Writes OUTDIR/data/*.dat, OUTDIR/plots.gp and OUTDIR/index.tsv (file, benchmark,
# mem, title), and prints the number of figures; exit 2 on bad input, 4 when a file could not
# be written (out_close says which).

function is_latency(bench) { return bench ~ /(^|_)(lat|latency|barrier)$/ }

# not_plotted(NAME, V, WHY): say (the first 5 times) that a value is left out of the figures.
function not_plotted(name, v, why) {
	if (++NOT_PLOTTED <= 5)
		printf "%s: not plotted\n", value_where(name, v, why) > "/dev/stderr"
}

# keep(KEY, NAME, V): V, a value of column NAME, joins the values of KEY (empty: no figure).
function keep(key, name, v,    why) {
	if (v == "")
		return
	why = value_fault(name, v)
	if (why != "") {
		not_plotted(name, v, why)
		return
	}
	VALS[key, ++NV[key]] = v
}

# The median of the values of KEY; "NaN" (gnuplot: no point) when there is none.
function median(key, n,    v, i, m) {
	if (n == 0)
		return "NaN"
	if (n == 1)
		return VALS[key, 1]
	for (i = 1; i <= n; i++)
		v[i] = VALS[key, i] + 0
	m = asort(v)
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}

function path_rank(p) {
	return p == "direct" ? "0" p : (p == "staged" ? "1" p : "2" p)
}

function gp_str(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	gsub(/\n/, "\\n", s)
	return "\"" s "\""
}

# Host, GPU and NIC names for the titles: meta.json first, the CSV columns otherwise.
function load_meta(    J, n, k, p, h, nics, rate) {
	HOSTS = ""; META_GPU = ""; META_NIC = ""
	if (meta == "" || json_load(meta, J) < 0)
		return
	for (n = 0; n < J["nodes.#"]; n++)
		HOSTS = HOSTS (HOSTS == "" ? "" : ", ") J["nodes." n ".hostname"]
	if (J["nodes.#"] == "" && J["hosts.#"] > 0)
		for (h = 0; h < J["hosts.#"]; h++)
			HOSTS = HOSTS (HOSTS == "" ? "" : ", ") J["hosts." h]
	if (J["nodes.0.gpus.#"] > 0)
		META_GPU = J["nodes.0.gpus.0.name"] (J["nodes.0.gpus.#"] > 1 ? " x" J["nodes.0.gpus.#"] : "")
	for (k = 0; k < J["nodes.0.nics.#"] && META_NIC == ""; k++)
		for (p = 0; p < J["nodes.0.nics." k ".ports.#"]; p++)
			if (J["nodes.0.nics." k ".ports." p ".state"] ~ /ACTIVE/) {
				rate = J["nodes.0.nics." k ".ports." p ".rate_gbps"]
				META_NIC = J["nodes.0.nics." k ".name"] ":" J["nodes.0.nics." k ".ports." p ".port"] \
					(rate != "" && rate != "null" ? " " rate " Gb/s" : "")
				break
			}
	for (n = 0; n < J["nodes.#"]; n++)
		for (k = 0; k < J["nodes." n ".nics.#"]; k++)
			for (p = 0; p < J["nodes." n ".nics." k ".ports.#"]; p++) {
				rate = J["nodes." n ".nics." k ".ports." p ".rate_gbps"]
				nics = J["nodes." n ".nics." k ".name"] ":" J["nodes." n ".nics." k ".ports." p ".port"]
				if (rate ~ /^[0-9.]+$/ && !(nics in PORT_RATE))
					PORT_RATE[nics] = rate
			}
	if (split(HOSTS, h, ", ") > 4)
		HOSTS = h[1] ", " h[2] ", " h[3] ", ... (" length(h) " hosts)"
}

# Major tics at powers of two whose exponent is a multiple of STEP (so 1KiB, 1MiB, 1GiB
# appear when the span is wide), minor tics at every other power of two.
function xtics(lo, hi,    elo, ehi, step, e, s, first) {
	elo = int(log(lo) / log(2) + 1e-9)
	ehi = int(log(hi) / log(2) + 0.999999)
	step = ehi - elo <= 8 ? 1 : (ehi - elo <= 16 ? 2 : (ehi - elo <= 24 ? 5 : 10))
	s = ""
	first = 1
	for (e = elo; e <= ehi; e++) {
		# The smallest size gets a label too unless a major tic is next to it.
		if (e % step == 0 || (step <= 2 && (e == elo || e == ehi)) || (e == elo && (int(e / step) + 1) * step - e >= 2))
			s = s (first ? "" : ", ") gp_str(size_fmt(2 ^ e)) " " sprintf("%.0f", 2 ^ e) " 0"
		else
			s = s (first ? "" : ", ") "\"\" " sprintf("%.0f", 2 ^ e) " 1"
		first = 0
	}
	return "set xtics (" s ")"
}

BEGIN {
	gdrb_schema()
	load_meta()
	split("#1f77b4 #e6550d #2ca02c #9467bd #8c564b #d62728 #17becf", COLORS, " ")
}

{
	if (csv_record(F) == 0)
		next
	if (F[COL["pair"]] != "all" || F[COL["status"]] != "ok")
		next
	if (size_fault(F[COL["size_bytes"]]) != "") {
		not_plotted("size_bytes", F[COL["size_bytes"]], size_fault(F[COL["size_bytes"]]))
		next
	}
	bench = F[COL["benchmark"]]; mem = F[COL["mem"]]; path = F[COL["path"]]; size = F[COL["size_bytes"]] + 0
	g = bench SUBSEP mem
	GROUP[g] = 1
	PATHS[g, path] = 1
	key = g SUBSEP path SUBSEP size
	if (!(key in N)) {
		SIZES[g, path, ++NS[g, path]] = size
	}
	N[key]++
	if (is_latency(bench)) {
		keep(key "p50", "lat_p50_us", F[COL["lat_p50_us"]])
		keep(key "p99", "lat_p99_us", F[COL["lat_p99_us"]])
	} else {
		keep(key "bw", "bw_GBps", F[COL["bw_GBps"]])
		if (F[COL["busbw_GBps"]] != "") {
			keep(key "busbw", "busbw_GBps", F[COL["busbw_GBps"]])
			HAS_BUSBW[g] = 1
		}
	}
	if (!(g in GPU) && F[COL["gpu"]] != "") GPU[g] = F[COL["gpu"]]
	if (!(g in NIC) && F[COL["nic"]] != "") NIC[g] = F[COL["nic"]]
	if (!(g in RANKS)) { RANKS[g] = F[COL["ranks"]]; NHOSTS[g] = F[COL["hosts"]]; LAYER[g] = F[COL["layer"]] }
}

END {
	if (GDRB_FAILED)
		exit 2
	if (NOT_PLOTTED > 5)
		printf "%s: and %d more values not plotted\n", FILENAME, NOT_PLOTTED - 5 > "/dev/stderr"
	gp = outdir "/plots.gp"
	idx = outdir "/index.tsv"
	out_open(idx)
	PROCINFO["sorted_in"] = "@ind_str_asc"
	nfig = 0
	for (g in GROUP) {
		split(g, gm, SUBSEP)
		bench = gm[1]; mem = gm[2]
		lat = is_latency(bench)
		metric = lat ? "p50" : (g in HAS_BUSBW ? "busbw" : "bw")
		# Paths in a stable order: direct, staged, then the rest by name.
		delete order
		np = 0
		for (k in PATHS) {
			split(k, pm, SUBSEP)
			if (pm[1] SUBSEP pm[2] == g)
				order[path_rank(pm[3])] = pm[3]
		}
		delete plist
		for (k in order)
			plist[++np] = order[k]
		lo = hi = 0
		base = bench "-" mem
		for (j = 1; j <= np; j++) {
			path = plist[j]
			file = outdir "/data/" base "." path ".dat"
			out_open(file)
			printf "# size %s\n", lat ? "p50_us p99_us" : metric "_GBps" > file
			for (s = 1; s <= NS[g, path]; s++) {
				size = SIZES[g, path, s]
				key = g SUBSEP path SUBSEP size
				VAL[path, size] = median(key metric, NV[key metric])
				if (lat)
					printf "%.0f %s %s\n", size, VAL[path, size], median(key "p99", NV[key "p99"]) > file
				else
					printf "%.0f %s\n", size, VAL[path, size] > file
				if (lo == 0 || size < lo) lo = size
				if (size > hi) hi = size
			}
			out_close(file)
		}
		ratio = ((g, "direct") in PATHS) && ((g, "staged") in PATHS)
		nratio = 0
		if (ratio) {
			rfile = outdir "/data/" base ".ratio.dat"
			out_open(rfile)
			printf "# size staged_time/direct_time\n" > rfile
			for (s = 1; s <= NS[g, "direct"]; s++) {
				size = SIZES[g, "direct", s]
				if (!(("staged", size) in VAL) || VAL["direct", size] == "NaN" || VAL["staged", size] == "NaN" ||
				    VAL["direct", size] <= 0 || VAL["staged", size] <= 0)
					continue
				printf "%.0f %.6g\n", size, lat ? VAL["staged", size] / VAL["direct", size] : VAL["direct", size] / VAL["staged", size] > rfile
				nratio++
			}
			out_close(rfile)
			ratio = nratio > 0
		}
		delete VAL

		what = lat ? "latency" : (metric == "busbw" ? "bus bandwidth" : "bandwidth")
		t1 = bench ", " mem " memory: " what (np > 1 ? " by path" : "")
		hosts = HOSTS != "" ? HOSTS : NHOSTS[g] " host(s)"
		if (LAYER[g] == "local")
			hosts = gensub(/,.*/, "", 1, hosts)
		# Name only what the run used: no GPU for host memory, no NIC on one host or locally.
		gpu = g in GPU ? GPU[g] : (mem == "device" && META_GPU != "" ? META_GPU : "none used")
		if (g in NIC)
			nic = NIC[g] (NIC[g] in PORT_RATE ? " " PORT_RATE[NIC[g]] " Gb/s" : "")
		else if (LAYER[g] == "local" || NHOSTS[g] == 1)
			nic = "none used (" (LAYER[g] == "local" ? "local copies" : "one host") ")"
		else
			nic = META_NIC != "" ? META_NIC : "none recorded"
		t2 = (LAYER[g] == "local" ? "host " hosts "; one process" : "hosts " hosts "; " RANKS[g] " ranks") "; GPU " gpu "; NIC " nic
		nfig++
		FIG[nfig] = base
		printf "%s\t%s\t%s\t%s\n", base, bench, mem, t1 " (" t2 ")" > idx

		body = "reset\nset encoding utf8\nset grid xtics ytics mytics lc rgb '#dddddd'\nset border lc rgb '#555555'\n"
		body = body "set lmargin 12\nset rmargin 4\nset logscale x 2\n" xtics(lo, hi) "\nset xrange [" sprintf("%.0f", lo / 1.3) ":" sprintf("%.0f", hi * 1.3) "]\n"
		body = body "set multiplot\n"
		body = body (ratio ? "set size 1,0.7\nset origin 0,0.3\n" : "set size 1,1\nset origin 0,0\n")
		body = body "set title " gp_str(t1 "\n" t2) " noenhanced\n"
		body = body (ratio ? "set xlabel \"\"\n" : "set xlabel \"message size (bytes, binary units)\"\n")
		if (lat)
			body = body "set logscale y 10\nset ylabel \"latency (us)\"\nset format y \"%g\"\nset key top left noenhanced\n"
		else
			body = body "unset logscale y\nset yrange [0:*]\nset ylabel \"" what " (GB/s, 1 GB = 1e9 B)\"\nset key top left noenhanced\n"
		plot = ""
		for (j = 1; j <= np; j++) {
			path = plist[j]
			file = "data/" base "." path ".dat"
			color = COLORS[(j - 1) % 7 + 1]
			if (lat) {
				plot = plot (plot == "" ? "" : ", ") gp_str(file) " using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '" color "' title " gp_str(path " p50")
				plot = plot ", " gp_str(file) " using 1:3 with lines lw 1.5 dt 2 lc rgb '" color "' title " gp_str(path " p99")
			} else
				plot = plot (plot == "" ? "" : ", ") gp_str(file) " using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '" color "' title " gp_str(path)
		}
		body = body "plot " plot "\n"
		if (ratio) {
			body = body "set size 1,0.3\nset origin 0,0\nset xlabel \"message size (bytes, binary units)\"\n"
			body = body "set title " gp_str(lat ? "staged p50 / direct p50: above 1, the direct path is faster" : \
				"direct GB/s / staged GB/s (= staged time / direct time): above 1, the direct path is faster") " font \",9\"\n"
			body = body "unset logscale y\nset yrange [0:*]\nset format y \"%g\"\nunset key\n"
			body = body "set ylabel \"staged / direct (x)\"\n"
			body = body "plot " gp_str("data/" base ".ratio.dat") " using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#333333', " \
				"1 with lines lc rgb '#999999' dt 3\n"
		}
		body = body "unset multiplot\n"
		BODY[nfig] = body
	}
	out_open(gp)
	nf = split(formats, fmts, ",")
	for (f = 1; f <= nf; f++) {
		if (fmts[f] == "png" && png_term == "pngcairo")
			printf "set terminal pngcairo size 1000,760 font \"sans,10\" noenhanced\n" > gp
		else if (fmts[f] == "png")
			printf "set terminal png size 1000,760 noenhanced\n" > gp
		else
			printf "set terminal svg size 1000,760 dynamic font \"sans,10\" noenhanced\n" > gp
		for (k = 1; k <= nfig; k++) {
			printf "set output %s\n%s", gp_str(FIG[k] "." fmts[f]), BODY[k] > gp
		}
		printf "set output\n" > gp
	}
	out_close(gp)
	out_close(idx)
	if (WRITE_FAILED)
		exit 4
	print nfig
}
