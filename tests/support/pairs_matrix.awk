# Check a pairs matrix file (pairs-SIZE-PATH.csv): n x n (-v n=N) with rank numbers as the first
# row and column, an empty diagonal, and the cells -v cells="i:j ..." filled with numbers and
# every other cell empty (cells="all": every off-diagonal cell). Exits 1 naming each problem.
function bad(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; errors++ }
BEGIN {
	errors = 0
	if (cells != "all") { k = split(cells, c, " "); for (i = 1; i <= k; i++) want[c[i]] = 1 }
}
FNR == 1 {
	h = "src\\dst"
	for (j = 0; j < n; j++) h = h "," j
	if ($0 != h) bad("header '" $0 "', expected '" h "'")
	next
}
{
	i = FNR - 2
	if (split($0, F, ",") != n + 1) { bad(split($0, F, ",") " fields, expected " n + 1); next }
	if (F[1] != i) bad("row " i " is labelled '" F[1] "'")
	for (j = 0; j < n; j++) {
		v = F[j + 2]
		on = i != j && (cells == "all" || ((i ":" j) in want))
		if (on && v !~ /^[0-9]+\.[0-9]+$/) bad("cell " i "->" j " is '" v "', expected a figure")
		if (!on && v != "") bad("cell " i "->" j " is '" v "', expected empty")
	}
}
END {
	if (FNR != n + 1) { printf "%s: %d lines, expected %d\n", FILENAME, FNR, n + 1; errors++ }
	exit errors > 0
}
