# merge.awk: the rows of one benchmark run, fit to append to results.csv (gdrb-sweep's).
#
#   gawk -v sizes=SPEC -v mem=MEM -v paths=LIST -v fill=failed|unsupported|none -v note=TEXT \
#        -v bench=B -v layer=L -v ranks=N -v hosts=N -v gpu=NAME -v version=V -v counts=FILE \
#        -f gdrb.awk -f merge.awk STEP.csv >> results.csv
#
# Prints every complete row of STEP.csv (the binary's own CSV): a row is complete when it ends
# with a newline and has the schema's field count, so a row cut short by Ctrl-C or a crash is
# dropped, never half-copied. With fill=failed or fill=unsupported it then prints one row of
# that status for every expected (memory kind, path, size) that has no aggregate row, so the
# CSV says what did not run. Expected: PATHS (PATH or MEM:PATH; default direct, and staged for
# device memory) x the sizes of SPEC. Writes "rows N", "dropped N" and "filled N" to COUNTS.

function expect(    list, n, i, p, k, s, ns) {
	if (paths == "")
		paths = mem == "device" ? "direct,staged" : "direct"
	n = split(paths, list, ",")
	ns = sizes_expand(sizes, SZ)
	for (i = 1; i <= n; i++) {
		if (index(list[i], ":")) { split(list[i], p, ":"); k = p[1] SUBSEP p[2] }
		else k = mem SUBSEP list[i]
		for (s = 1; s <= ns; s++)
			EXPECT[++NE] = k SUBSEP SZ[s]
	}
}

function reg_of(m, path) {
	if (path == "staged" || path == "staged-serial") return "staged"
	if (layer == "local") return "none"
	if (m == "host" || m == "pinned") return "host"
	return layer == "mpi" ? "mpi-cuda" : "none"
}

BEGIN {
	gdrb_schema()
	expect()
	rows = dropped = filled = 0
	header_ok = 0
}

{
	sub(/\r$/, "")
	if (FNR == 1) {
		header_ok = $0 == GDRB_HEADER
		if (!header_ok)
			printf "merge: %s:1: not the schema's header; its rows are not taken\n", FILENAME > "/dev/stderr"
		next
	}
	if (!header_ok || RT != "\n" || csv_split($0, F) != GDRB_NF) {
		dropped++
		next
	}
	print
	rows++
	if (F[COL["pair"]] == "all")
		SEEN[F[COL["mem"]], F[COL["path"]], F[COL["size_bytes"]] + 0] = 1
}

END {
	if (fill == "failed" || fill == "unsupported") {
		stamp = strftime("%Y-%m-%dT%H:%M:%SZ", systime(), 1)
		for (i = 1; i <= NE; i++) {
			if (EXPECT[i] in SEEN)
				continue
			split(EXPECT[i], e, SUBSEP)
			printf "%s,%s,%s,%s,%s,,,,,all,%.0f,0,,,,,,,,,,,%d,%d,%s,,,,,,,%s,0,,%s,%s,%s\n", bench, layer, e[1], e[2], reg_of(e[1], e[2]), \
				e[3], ranks, hosts, csv_quote(e[1] == "device" ? gpu : ""), fill, csv_quote(note), stamp, csv_quote(version)
			filled++
		}
	}
	if (counts != "")
		printf "rows %d\ndropped %d\nfilled %d\n", rows, dropped, filled > counts
}
