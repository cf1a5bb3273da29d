# staging-model.awk: scripts/measure-staging's model of the staged path and its tables, from one
# gdrbench CSV holding the rows of gdrb_copy_bw, gdrb_mpi_bw (--mem pinned and --mem device) and
# gdrb_mpi_latency (--mem device). POSIX awk; load posix-fns.awk first.
#   -v sizes="B ..."   message sizes in bytes, ascending; -v chunks="B ...": fragment sizes, the
#                      first the one judged; -v target=0.9; -v lat_tol=1.05
#   -v mode=rates      C and W per size, Markdown
#   -v mode=bw         pipelined against its model per chunk and size, Markdown
#   -v mode=serial     serial against its model per size, Markdown
#   -v mode=lat        small-message p50, pipelined against serial, Markdown
#   -v mode=verdict    "key value" lines: bw_ratio, bw_verdict, lat_worst, lat_worst_size,
#                      lat_verdict (PASS, FAIL or NODATA), bad (rows neither ok nor unsupported)
#
# Model (results/staging-model.md): a message of S bytes in fragments of f = min(chunk, S) passes
# three stages, device->pinned copy (rate Cd), wire (W), pinned->device copy (Ch), each fragment
# after the one before it. With the stages overlapped, the slowest one B = min(Cd, W, Ch) sets the
# pace and the first fragment fills the other two:
#   T_pipelined = f/Cd + f/W + f/Ch + (S - f)/B
#   T_serial    = S/Cd + S/W + S/Ch
# Cd and Ch are gdrb_copy_bw's pinned rates at the copy's own size (f for the pipeline, S for
# serial), so the per-copy overhead is in them; W is gdrb_mpi_bw --mem pinned -W 1 at S.

function min2(a, b) { return a < b ? a : b }
function have(arr, k) { return (k in arr) && arr[k] > 0 }
function cell(v) { return v == "" ? "-" : num(v) }

# pipe_model(S, C): the model's pipelined bandwidth in GB/s, "" where a rate is missing.
function pipe_model(s, c,    f, b) {
	f = min2(c, s)
	if (!have(Cd, f) || !have(Ch, f) || !have(W, s)) return ""
	b = min2(min2(Cd[f], Ch[f]), W[s])
	return s / (f / Cd[f] + f / W[s] + f / Ch[f] + (s - f) / b)
}
# bound(S, C): the stage that sets the pipeline's pace.
function bound(s, c,    f) {
	f = min2(c, s)
	if (W[s] <= Cd[f] && W[s] <= Ch[f]) return "wire"
	return Cd[f] <= Ch[f] ? "copy D2H" : "copy H2D"
}
# fill_share(S, C): the part of the model's time spent filling and draining the pipeline.
function fill_share(s, c,    f, b, t) {
	f = min2(c, s)
	b = min2(min2(Cd[f], Ch[f]), W[s])
	t = f / Cd[f] + f / W[s] + f / Ch[f] + (s - f) / b
	return (t - s / b) / t
}
function serial_model(s) {
	if (!have(Cd, s) || !have(Ch, s) || !have(W, s)) return ""
	return 1 / (1 / Cd[s] + 1 / W[s] + 1 / Ch[s])
}
function cw_min(s) {
	if (!have(Cd, s) || !have(Ch, s) || !have(W, s)) return ""
	return min2(min2(Cd[s], Ch[s]), W[s])
}
function ratio(a, b) { return (a == "" || b == "" || b <= 0) ? "" : a / b }

{ sub(/\r$/, "") }
$0 == "" { next }
# The header comes once per file; gdrbench writes it only into an empty file.
/^benchmark,/ {
	n = csv_split($0, h)
	for (i = 1; i <= n; i++) col[h[i]] = i
	next
}
{
	csv_split($0, f)
	st = f[col["status"]]
	if (st == "unsupported") next
	if (st != "ok") { bad++; next }
	b = f[col["benchmark"]]; mem = f[col["mem"]]; path = f[col["path"]]
	s = f[col["size_bytes"]] + 0
	bw = f[col["bw_GBps"]] + 0
	if (b == "copy_bw" && mem == "pinned" && path == "h2d") Ch[s] = bw
	else if (b == "copy_bw" && mem == "pinned" && path == "d2h") Cd[s] = bw
	else if (b == "mpi_bw" && mem == "pinned") W[s] = bw
	else if (b == "mpi_bw" && mem == "device" && path == "staged") P[f[col["stage_chunk"]] + 0, s] = bw
	else if (b == "mpi_bw" && mem == "device" && path == "staged-serial") Ser[s] = bw
	else if (b == "mpi_latency" && mem == "device" && (path == "staged" || path == "staged-serial")) {
		if (!(s in lat_seen)) { lat_seen[s] = 1; lat_sizes[++nlat] = s }
		L[path, s] = f[col["lat_p50_us"]] + 0
	}
}
END {
	ns = split(sizes, S, " ")
	nc = split(chunks, CH, " ")
	big = S[ns]
	if (mode == "rates") {
		# Every size a copy was measured at: the messages', and the fragments' too.
		for (i = 1; i <= ns; i++) { use[S[i]] = "message"; all[++na] = S[i] }
		for (i = 1; i <= nc; i++) {
			if (CH[i] in use) { if (use[CH[i]] !~ /fragment/) use[CH[i]] = use[CH[i]] ", fragment" }
			else { use[CH[i]] = "fragment"; all[++na] = CH[i] }
		}
		sort_num(all, na)
		print "| size | used as | C H2D pinned (GB/s) | C D2H pinned (GB/s) | W pinned to pinned (GB/s) | min(C, W) (GB/s) |"
		print "|---:|---|---:|---:|---:|---:|"
		for (i = 1; i <= na; i++) {
			s = all[i]
			print "| " size_text(s) " | " use[s] " | " cell(Ch[s]) " | " cell(Cd[s]) " | " \
				(use[s] ~ /message/ ? cell(W[s]) : "-") " | " (use[s] ~ /message/ ? cell(cw_min(s)) : "-") " |"
		}
	} else if (mode == "bw") {
		print "| chunk | size | pipelined (GB/s) | model (GB/s) | measured / model | bound by | fill and drain in the model | staged / (" target " x min(C, W)) |"
		print "|---:|---:|---:|---:|---:|---|---:|---:|"
		for (k = 1; k <= nc; k++)
			for (i = 1; i <= ns; i++) {
				c = CH[k]; s = S[i]
				m = pipe_model(s, c)
				v = ((c, s) in P) ? P[c, s] : ""
				lim = cw_min(s)
				print "| " size_text(c) " | " size_text(s) " | " cell(v) " | " cell(m) " | " cell(ratio(v, m)) " | " \
					(m == "" ? "-" : bound(s, c)) " | " (m == "" ? "-" : sprintf("%.1f%%", 100 * fill_share(s, c))) " | " \
					cell(ratio(v, lim == "" ? "" : target * lim)) " |"
			}
	} else if (mode == "serial") {
		print "| size | serial (GB/s) | model (GB/s) | measured / model | pipelined (" size_text(CH[1]) ") / serial |"
		print "|---:|---:|---:|---:|---:|"
		for (i = 1; i <= ns; i++) {
			s = S[i]
			v = (s in Ser) ? Ser[s] : ""
			p = ((CH[1], s) in P) ? P[CH[1], s] : ""
			print "| " size_text(s) " | " cell(v) " | " cell(serial_model(s)) " | " cell(ratio(v, serial_model(s))) " | " cell(ratio(p, v)) " |"
		}
	} else if (mode == "lat") {
		print "| size | pipelined p50 (us) | serial p50 (us) | pipelined / serial |"
		print "|---:|---:|---:|---:|"
		sort_num(lat_sizes, nlat)
		for (i = 1; i <= nlat; i++) {
			s = lat_sizes[i]
			p = (("staged", s) in L) ? L["staged", s] : ""
			q = (("staged-serial", s) in L) ? L["staged-serial", s] : ""
			print "| " size_text(s) " | " cell(p) " | " cell(q) " | " cell(ratio(p, q)) " |"
		}
	} else if (mode == "verdict") {
		v = ((CH[1], big) in P) ? P[CH[1], big] : ""
		lim = cw_min(big)
		r = ratio(v, lim == "" ? "" : target * lim)
		print "bw_ratio " (r == "" ? "-" : sprintf("%.3f", r))
		print "bw_verdict " (r == "" ? "NODATA" : r >= 1 ? "PASS" : "FAIL")
		worst = ""; wsize = ""
		for (i = 1; i <= nlat; i++) {
			s = lat_sizes[i]
			r = ratio(L["staged", s], L["staged-serial", s])
			if (r == "") { worst = ""; wsize = ""; break }
			if (worst == "" || r > worst) { worst = r; wsize = s }
		}
		print "lat_worst " (worst == "" ? "-" : sprintf("%.3f", worst))
		print "lat_worst_size " (wsize == "" ? "-" : size_text(wsize))
		print "lat_verdict " (worst == "" ? "NODATA" : worst <= lat_tol ? "PASS" : "FAIL")
		print "bad " (bad + 0)
	}
}
