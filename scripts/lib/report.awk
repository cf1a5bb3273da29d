# report.awk: summary.md and a self-contained report.html for a results directory
# (gdrb-report's engine).
#
#   gawk -v dir=DIR -v meta=META.json -v verdict=VERDICT.json -v plots=PLOTS_DIR \
#        -v md=OUT.md -v html=OUT.html -f gdrb.awk -f json.awk -f report.awk RESULTS.csv
#
# Both files hold, in this order: the verdict (when gdrb-accept ran), the run (profile,
# command, times), the environment of each node, the steps of the sweep, and per benchmark
# and memory kind a table with every path side by side (p50 and p99 latency, or GB/s) and
# the staged/direct ratio, next to its figure. The HTML embeds the PNG figures as base64.
# Tables use the aggregate rows (pair=all); when a size was measured more than once, the
# last row is shown. An empty value (no figure) shows as "n/a"; a value that is not a number
# of its column (value_fault) as "invalid 'VALUE'", listed below the table with its file and
# line; a row whose size is not one is left out and listed. Never a 0 for either.
# Exit 2 on bad input, 4 when summary.md or report.html could not be written (out_close).

function esc(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	return s
}

function mdc(s) {
	gsub(/\|/, "\\|", s)
	gsub(/\n/, " ", s)
	return s
}

function out(mdtext, htmltext) {
	if (mdtext != "-") print mdtext > md
	if (htmltext != "-") print htmltext > html
}

function para(text) {
	out(text "\n", "<p>" esc(text) "</p>")
}

# table_head(N, CELLS) / table_row(N, CELLS): one table in both files.
# NUMERIC: the columns after the first hold numbers (right-aligned in Markdown).
function table_head(n, C, numeric,    i, m, h) {
	m = "|"; h = "<table" (numeric ? " class=\"num\"" : "") "><tr>"
	for (i = 1; i <= n; i++) { m = m " " mdc(C[i]) " |"; h = h "<th>" esc(C[i]) "</th>" }
	out(m, h "</tr>")
	m = "|"
	for (i = 1; i <= n; i++) m = m (i > 1 && numeric ? "---:|" : "---|")
	out(m, "-")
}

function table_row(n, C, cls,    i, m, h) {
	m = "|"; h = "<tr" (cls != "" ? " class=\"" cls "\"" : "") ">"
	for (i = 1; i <= n; i++) { m = m " " mdc(C[i]) " |"; h = h "<td>" esc(C[i]) "</td>" }
	out(m, h "</tr>")
}

function table_end() {
	out("", "</table>")
}

function j(key) { return key in J && J[key] != "null" ? J[key] : "" }
function orq(s) { return s == "" ? "unknown" : s }

function is_latency(bench) { return bench ~ /(^|_)(lat|latency|barrier)$/ }

function path_rank(p) { return p == "direct" ? "0" p : (p == "staged" ? "1" p : "2" p) }

function verdict_section(    V, i, n, v, cls) {
	if (verdict == "" || json_load(verdict, V) < 0)
		return
	v = V["verdict"]
	inv = V["invalid"] + 0 ? ", " V["invalid"] " invalid (values that are not numbers)" : ""
	out("**Verdict: " v "** (profile " V["profile"] "): " V["passed"] " of " V["rules_total"] " rules passed, " \
		V["failed"] " failed, " V["nodata"] " without data" inv ".\n",
		"<div class=\"verdict " tolower(v) "\">Verdict: " esc(v) " <span>(profile " esc(V["profile"]) "): " V["passed"] " of " \
		V["rules_total"] " rules passed, " V["failed"] " failed, " V["nodata"] " without data" esc(inv) "</span></div>")
	n = V["invalid_values.#"] + 0
	for (i = 0; i < n; i++)
		para("Invalid: " V["invalid_values." i ".message"])
	split("verdict|rule|check|result", H, "|")
	table_head(4, H, 0)
	n = V["rules.#"]
	for (i = 0; i < n; i++) {
		C[1] = V["rules." i ".verdict"]
		C[2] = V["rules." i ".name"]
		C[3] = V["rules." i ".benchmark"] " " V["rules." i ".column"] " " V["rules." i ".op"] " " V["rules." i ".threshold"] \
			" (" V["rules." i ".selection"] ")"
		C[4] = V["rules." i ".message"]
		table_row(4, C, tolower(C[1]))
	}
	table_end()
}

function run_section(    started, d, nodes, i, k, g, s, p, line, n) {
	out("## Run\n", "<h2>Run</h2><ul>")
	item("profile", orq(j("profile")) (PROFILE_DESC != "" ? ": " PROFILE_DESC : ""))
	item("command", orq(j("sweep_command")))
	item("time", orq(j("started")) " to " (j("finished") != "" ? j("finished") : "(not finished)") \
		" (" orq(j("status")) (j("exit_status") != "" ? ", exit " j("exit_status") : "") ")")
	item("launcher", orq(j("launcher")) (j("launcher_version") != "" ? " (" j("launcher_version") ")" : "") ", " \
		orq(j("np")) " ranks, hosts " host_list() (j("slurm_job_id") != "" ? ", Slurm job " j("slurm_job_id") : ""))
	item("gdrbench", orq(j("gdrbench_version")) (j("gdrbench_git") != "" ? " (git " j("gdrbench_git") ")" : ""))
	if (j("doctor.file") != "")
		item("gdrb_doctor", "exit " j("doctor.exit") ", see " j("doctor.file"))
	out("", "</ul>")
}

function item(k, v) {
	out("- " k ": " v, "<li><b>" esc(k) "</b>: " esc(v) "</li>")
}

function host_list(    i, s) {
	s = ""
	for (i = 0; i < J["hosts.#"]; i++)
		s = s (s == "" ? "" : ", ") J["hosts." i]
	return s == "" ? "unknown" : s
}

function env_section(    i, n, k, p, gpus, nics, base, c) {
	n = J["nodes.#"] + 0
	if (n == 0)
		return
	out("\n## Environment\n", "<h2>Environment</h2>")
	split("host|OS, kernel|GPU driver|CUDA driver / toolkit|MPI|rdma-core|GPUs|RDMA ports", H, "|")
	table_head(8, H, 0)
	for (i = 0; i < n; i++) {
		base = "nodes." i "."
		gpus = ""
		for (k = 0; k < J[base "gpus.#"]; k++)
			gpus = gpus (gpus == "" ? "" : "; ") J[base "gpus." k ".index"] ": " J[base "gpus." k ".name"] \
				" (" J[base "gpus." k ".pci_bus_id"] ", " J[base "gpus." k ".pci_id"] ")"
		nics = ""
		for (k = 0; k < J[base "nics.#"]; k++)
			for (p = 0; p < J[base "nics." k ".ports.#"]; p++)
				nics = nics (nics == "" ? "" : "; ") J[base "nics." k ".name"] ":" J[base "nics." k ".ports." p ".port"] " " \
					J[base "nics." k ".ports." p ".link_layer"] " " J[base "nics." k ".ports." p ".rate"] " " \
					gensub(/^[0-9]+: */, "", 1, J[base "nics." k ".ports." p ".state"]) \
					" (" J[base "nics." k ".pci_bus_id"] ", " J[base "nics." k ".pci_id"] ")"
		c[1] = orq(j(base "hostname"))
		c[2] = orq(j(base "os")) ", " orq(j(base "kernel"))
		c[3] = j(base "gpu_driver") == "" ? "none" : j(base "gpu_driver")
		c[4] = (j(base "cuda_driver") == "" ? "none" : j(base "cuda_driver")) " / " (j(base "cuda_toolkit") == "" ? "none" : j(base "cuda_toolkit"))
		c[5] = orq(j(base "mpi"))
		c[6] = j(base "rdma_core") == "" ? "none" : j(base "rdma_core")
		c[7] = gpus == "" ? "none" : gpus
		c[8] = nics == "" ? "none" : nics
		table_row(8, c, "")
	}
	table_end()
	if (j("node_info_error") != "")
		para("Node information: " j("node_info_error"))
}

function steps_section(    n, i, base, C, cls) {
	n = J["steps.#"] + 0
	if (n == 0 && J["skipped.#"] + 0 == 0)
		return
	out("\n## Steps\n", "<h2>Steps</h2>")
	if (n > 0) {
		split("#|binary|memory|status|rows|time|log", H, "|")
		table_head(7, H, 0)
		for (i = 0; i < n; i++) {
			base = "steps." i "."
			C[1] = J[base "n"]
			C[2] = J[base "binary"]
			C[3] = J[base "mem"]
			C[4] = J[base "status"] (J[base "exit"] != "0" && J[base "exit"] != "" ? " (exit " J[base "exit"] ")" : "")
			C[5] = J[base "rows"]
			C[6] = J[base "seconds"] " s"
			C[7] = J[base "log"]
			cls = J[base "status"] == "ok" ? "" : (J[base "status"] == "failed" ? "fail" : "nodata")
			table_row(7, C, cls)
		}
		table_end()
	}
	n = J["skipped.#"] + 0
	if (n > 0) {
		out("Skipped here:\n", "<p>Skipped here:</p><ul>")
		for (i = 0; i < n; i++)
			item(J["skipped." i ".binary"] (J["skipped." i ".mem"] != "" ? " mem=" J["skipped." i ".mem"] : ""), J["skipped." i ".reason"])
		out("", "</ul>")
	}
}

function embed(file,    cmd, b64, line) {
	cmd = "base64 -w0 '" gensub(/'/, "'\\\\''", "g", file) "' 2>/dev/null"
	b64 = ""
	while ((cmd | getline line) > 0)
		b64 = b64 line
	close(cmd)
	return b64
}

# cell(COLUMN, V): V for the tables: "n/a" when empty (no figure), "invalid 'V'" when not a number.
function cell(column, v,    why) {
	if (v == "")
		return "n/a"
	why = value_fault(column, v)
	if (why == "")
		return num_fmt(v)
	if (!((column, v) in BAD_SEEN)) {
		BAD_SEEN[column, v] = 1
		BAD_LIST[++NBAD] = BAD_WHERE[column, v]
	}
	return "invalid '" v "'"
}

# figure(COLUMN, V): V as a number when it is a figure, else "" (no ratio is computed from it).
function figure(column, v) {
	return v != "" && value_fault(column, v) == "" && v + 0 > 0 ? v + 0 : ""
}

function results_section(    g, gi, k, pm, order, plist, np, lat, metric, i, s, size, C, H, n, key, st, d, st2, notes, nn, note, png, b64, title, v, sorted, ns) {
	out("\n## Results\n", "<h2>Results</h2>")
	if (NG == 0) {
		para("No aggregate rows in results.csv.")
		return
	}
	for (gi = 1; gi <= NG; gi++) {
		g = GROUPS[gi]
		split(g, pm, SUBSEP)
		bench = pm[1]; mem = pm[2]
		lat = is_latency(bench)
		metric = lat ? "" : (g in HAS_BUSBW ? "busbw_GBps" : "bw_GBps")
		delete order
		for (k in GPATHS)
			if (index(k, g SUBSEP) == 1) {
				split(k, pm, SUBSEP)
				order[path_rank(pm[3])] = pm[3]
			}
		delete plist
		np = 0
		PROCINFO["sorted_in"] = "@ind_str_asc"
		for (k in order)
			plist[++np] = order[k]
		title = bench ", " mem " memory"
		out("### " title "\n", "<h3>" esc(title) "</h3>")
		png = plots "/" bench "-" mem ".png"
		if (plots != "" && (getline line < png) >= 0) {
			close(png)
			out("![" title "](plots/" bench "-" mem ".png)\n", "-")
			b64 = embed(png)
			if (b64 != "")
				out("-", "<img alt=\"" esc(title) "\" src=\"data:image/png;base64," b64 "\">")
		}
		n = 1
		H[1] = "size"
		for (i = 1; i <= np; i++) {
			if (lat) { H[++n] = plist[i] " p50 us"; H[++n] = plist[i] " p99 us" }
			else H[++n] = plist[i] " " (metric == "busbw_GBps" ? "busbw GB/s" : "GB/s")
		}
		d = ((g, "direct") in GPATHS) && ((g, "staged") in GPATHS)
		if (d)
			H[++n] = lat ? "staged/direct p50" : "direct/staged GB/s"
		table_head(n, H, 1)
		# Sizes in increasing order.
		delete sorted
		ns = 0
		for (k in GSIZES)
			if (index(k, g SUBSEP) == 1) {
				split(k, pm, SUBSEP)
				sorted[++ns] = pm[3] + 0
			}
		asort(sorted)
		delete notes
		nn = 0
		for (s = 1; s <= ns; s++) {
			size = sorted[s]
			n = 1
			C[1] = size_fmt(size)
			for (i = 1; i <= np; i++) {
				key = g SUBSEP plist[i] SUBSEP size
				st = key in STATUS ? STATUS[key] : ""
				if (st == "ok") {
					if (lat) { C[++n] = cell("lat_p50_us", P50[key]); C[++n] = cell("lat_p99_us", P99[key]) }
					else C[++n] = metric == "busbw_GBps" ? cell("busbw_GBps", BUSBW[key]) : cell("bw_GBps", BW[key])
				} else {
					C[++n] = st == "" ? "-" : st
					if (lat) C[++n] = st == "" ? "-" : st
					if (st != "" && NOTE[key] != "" && !(NOTE[key] in notes)) { notes[NOTE[key]] = ++nn; NOTES[nn] = plist[i] ": " NOTE[key] }
				}
			}
			if (d) {
				key = g SUBSEP "direct" SUBSEP size
				k = g SUBSEP "staged" SUBSEP size
				v = ""
				if (STATUS[key] == "ok" && STATUS[k] == "ok") {
					if (lat && figure("lat_p50_us", P50[key]) != "" && figure("lat_p50_us", P50[k]) != "")
						v = P50[k] / P50[key]
					if (!lat && figure("bw_GBps", BW[key]) != "" && figure("bw_GBps", BW[k]) != "")
						v = BW[key] / BW[k]
				}
				C[++n] = v == "" ? "-" : sprintf("%.2fx", v)
			}
			table_row(n, C, "")
		}
		table_end()
		for (i = 1; i <= nn; i++)
			para("Note, " NOTES[i])
	}
	for (i = 1; i <= NBAD; i++)
		para("Invalid: " BAD_LIST[i] " (shown as invalid, never as a number)")
	for (i = 1; i <= NBADSIZE; i++)
		para("Invalid: " BAD_SIZE[i] " (row not shown)")
}

BEGIN {
	gdrb_schema()
	if (meta != "" && json_load(meta, J) < 0) {
		printf "%s: not JSON: %s\n", meta, JSON_ERROR > "/dev/stderr"
		exit 2
	}
	PROFILE_DESC = j("profile_description")
}

{
	if (csv_record(F) == 0)
		next
	if (F[COL["pair"]] != "all")
		next
	if (size_fault(F[COL["size_bytes"]]) != "") {
		BAD_SIZE[++NBADSIZE] = value_where("size_bytes", F[COL["size_bytes"]], size_fault(F[COL["size_bytes"]]))
		next
	}
	g = F[COL["benchmark"]] SUBSEP F[COL["mem"]]
	if (!(g in SEEN)) { SEEN[g] = 1; GROUPS[++NG] = g }
	key = g SUBSEP F[COL["path"]] SUBSEP F[COL["size_bytes"]]
	GPATHS[g, F[COL["path"]]] = 1
	GSIZES[g, F[COL["size_bytes"]]] = 1
	STATUS[key] = F[COL["status"]]
	NOTE[key] = F[COL["status"]] == "ok" ? "" : F[COL["note"]]
	P50[key] = F[COL["lat_p50_us"]]
	P99[key] = F[COL["lat_p99_us"]]
	BW[key] = F[COL["bw_GBps"]]
	BUSBW[key] = F[COL["busbw_GBps"]]
	if (F[COL["busbw_GBps"]] != "") HAS_BUSBW[g] = 1
	# Where each value that is not a number was read, for the list under the tables.
	split("lat_p50_us lat_p99_us bw_GBps busbw_GBps", shown, " ")
	for (c in shown)
		if (value_fault(shown[c], F[COL[shown[c]]]) != "" && !((shown[c], F[COL[shown[c]]]) in BAD_WHERE))
			BAD_WHERE[shown[c], F[COL[shown[c]]]] = value_where(shown[c], F[COL[shown[c]]], value_fault(shown[c], F[COL[shown[c]]]))
}

END {
	if (GDRB_FAILED)
		exit 2
	name = dir
	sub(/\/+$/, "", name)
	sub(/.*\//, "", name)
	out_open(md)
	out_open(html)
	out("# gdrbench results: " name "\n", "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" \
		"<title>gdrbench " esc(name) "</title><style>\n" \
		"body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}\n" \
		"table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:90%}\n" \
		"th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0}\n" \
		"table.num td,table.num th{text-align:right}table.num td:first-child,table.num th:first-child{text-align:left}\n" \
		"tr.fail td{background:#fde0dc}tr.nodata td{background:#fff3cd}\n" \
		".verdict{font-size:150%;font-weight:bold;padding:0.4em 0.6em;margin:0.5em 0;border-radius:4px}\n" \
		".verdict span{font-size:60%;font-weight:normal}.pass{background:#d4edda}.fail{background:#f8d7da}\n" \
		".invalid{background:#f8d7da}tr.invalid td{background:#fde0dc}\n" \
		"img{max-width:100%;border:1px solid #eee}\n</style></head><body>\n<h1>gdrbench results: " esc(name) "</h1>")
	if (j("status") == "interrupted")
		para("This run was interrupted (Ctrl-C): the tables hold what was measured before.")
	verdict_section()
	run_section()
	env_section()
	steps_section()
	results_section()
	out("-", "</body></html>")
	out_close(md)
	out_close(html)
	if (WRITE_FAILED)
		exit 4
}
