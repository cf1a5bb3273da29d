# gpu-report.awk: what scripts/measure-gpu reads from a gdrbench CSV (schema in results/README.md).
# POSIX awk (mawk, busybox, gawk): the GPU machine may have any of them.
#   -v mode=summary  one line: rows ok unsupported invalid failed errors, a tab, the first
#                    unsupported row's note
#   -v mode=copy     gdrb_copy_bw's rows as a Markdown table: one row per size, a column per
#                    copy; -v metric=bw: GB/s (1e9 B/s), metric=p50: median time per copy, us

# csv_split LINE F: RFC 4180 fields of LINE into F[1..n] (no newlines inside fields); n.
function csv_split(line, f,    n, i, c, q, field) {
	n = 0; q = 0; field = ""
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (q) {
			if (c != "\"") field = field c
			else if (substr(line, i + 1, 1) == "\"") { field = field c; i++ }
			else q = 0
		} else if (c == "\"") q = 1
		else if (c == ",") { f[++n] = field; field = "" }
		else field = field c
	}
	f[++n] = field
	return n
}

# num V: three significant digits, no exponent below 1000 (0.000842, 3.31, 24.7, 1234).
function num(v,    d, s) {
	if (v >= 1000 || v <= 0) return sprintf("%.0f", v)
	s = v
	for (d = 0; s < 100 && d < 12; d++) s *= 10
	return sprintf("%." d "f", v)
}

# size_text BYTES: 8 B, 64 KiB, 1 GiB (exact multiples only, else bytes).
function size_text(b,    u, i) {
	split("B KiB MiB GiB TiB", u, " ")
	for (i = 1; i < 5 && b >= 1024 && b % 1024 == 0; i++)
		b /= 1024
	return b " " u[i]
}

{ sub(/\r$/, "") }
NR == 1 {
	n = csv_split($0, h)
	for (i = 1; i <= n; i++) col[h[i]] = i
	next
}
{
	csv_split($0, f)
	st = f[col["status"]]
	rows++
	count[st]++
	errors += f[col["errors"]]
	if (st == "unsupported" && note == "") note = f[col["note"]]
	if (mode == "copy" && f[col["benchmark"]] == "copy_bw") {
		size = f[col["size_bytes"]] + 0
		if (!(size in seen)) { seen[size] = 1; sizes[++nsizes] = size }
		key = f[col["mem"]] "," f[col["path"]]
		val[size, key] = st != "ok" ? st : num(f[col[metric == "p50" ? "lat_p50_us" : "bw_GBps"]] + 0)
	}
}
END {
	if (mode == "summary") {
		printf "%d %d %d %d %d %d\t%s\n", rows, count["ok"], count["unsupported"],
			count["invalid-data"], count["failed"], errors, note
		exit 0
	}
	split("host,h2d pinned,h2d host,d2h pinned,d2h device,d2d", keys, " ")
	print "| size | H2D pageable | H2D pinned | D2H pageable | D2H pinned | D2D |"
	print "|---:|---:|---:|---:|---:|---:|"
	# Sizes ascending (insertion sort: a few dozen at most).
	for (i = 2; i <= nsizes; i++)
		for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) {
			t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t
		}
	for (i = 1; i <= nsizes; i++) {
		line = "| " size_text(sizes[i])
		for (k = 1; k <= 5; k++)
			line = line " | " ((sizes[i], keys[k]) in val ? val[sizes[i], keys[k]] : "-")
		print line " |"
	}
}
