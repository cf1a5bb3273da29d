# gpu-report.awk: what scripts/measure-gpu reads from a gdrbench CSV (schema in results/README.md).
# POSIX awk (mawk, busybox, gawk): the GPU machine may have any of them.
#   -v mode=summary  one line: rows ok unsupported invalid failed errors, a tab, the first
#                    unsupported row's note
#   -v mode=copy     gdrb_copy_bw's rows as a Markdown table: one row per size, a column per
#                    copy; -v metric=bw: GB/s (1e9 B/s), metric=p50: median time per copy, us
# Load posix-fns.awk first (awk -f posix-fns.awk -f gpu-report.awk).

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
	sort_num(sizes, nsizes)
	for (i = 1; i <= nsizes; i++) {
		line = "| " size_text(sizes[i])
		for (k = 1; k <= 5; k++)
			line = line " | " ((sizes[i], keys[k]) in val ? val[sizes[i], keys[k]] : "-")
		print line " |"
	}
}
