# posix-fns.awk: functions of the POSIX awk programs (gpu-report.awk, staging-model.awk), which
# run on GPU machines that may have mawk, busybox or gawk. Load with -f before the program.

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

# sort_num A N: sort A[1..N] in ascending numeric order (insertion sort: a few dozen at most).
function sort_num(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
}

# size_text BYTES: 8 B, 64 KiB, 1 GiB (exact multiples only, else bytes).
function size_text(b,    u, i) {
	split("B KiB MiB GiB TiB", u, " ")
	for (i = 1; i < 5 && b >= 1024 && b % 1024 == 0; i++)
		b /= 1024
	return b " " u[i]
}
