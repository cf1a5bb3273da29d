# csv_split.awk: the awk CSV splitter of the test suite's awk programs (csv_check.awk, csv_col.awk),
# which read the binaries' CSVs as the Python tools do (csv_split of scripts/lib/gdrbtool/common.py).
# POSIX awk. Load with -f before the program.

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
