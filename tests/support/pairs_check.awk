# Check a pairs CSV (gdrb_mpi_pairs --csv) against common/core/pairs_schema.def (through schema.awk,
# -v schema_macro=GDRB_PAIRS_COL). Variables (-v): rows=N exactly N data rows; status=S every
# row has status S. Every row: the schema's fields and types, no quoted or comma-holding text,
# metric bw with bw_GBps and no lat_us (lat the other way round) unless skipped, status one of
# ok|error|timeout|skipped, nic_errors and nic_packets both or neither and never on a bw row,
# round in 1..n-1 and dst = (src + round) mod n in a group of all
# ranks (-v shift=1). Prints one line per problem and exits 1 if there is any.
function bad(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; errors++ }
function num(s) { return s ~ /^[0-9]+(\.[0-9]+)?$/ }
BEGIN {
	schema_load()
	errors = 0; count = 0
}
FNR == 1 {
	if ($0 != SCHEMA_HEADER) bad("header is not the schema's: " $0)
	next
}
{
	count++
	if (index($0, "\"")) bad("a quoted field")
	nf = split($0, F, ",")
	if (nf != SCHEMA_NF) { bad(nf " fields, the schema has " SCHEMA_NF); next }
	for (c in SCHEMA_COL) {
		v = F[SCHEMA_COL[c]]
		if (v == "") continue
		if (SCHEMA_TYPE[c] == "integer" && v !~ /^[0-9]+$/) bad(c " is not an integer: " v)
		if (SCHEMA_TYPE[c] == "decimal" && !num(v)) bad(c " is not a decimal: " v)
	}
	st = F[SCHEMA_COL["status"]]; m = F[SCHEMA_COL["metric"]]
	if (st !~ /^(ok|error|timeout|skipped)$/) bad("status '" st "'")
	if (status != "" && st != status) bad("status " st ", expected " status)
	if (m != "bw" && m != "lat") bad("metric '" m "'")
	bw = F[SCHEMA_COL["bw_GBps"]]; lat = F[SCHEMA_COL["lat_us"]]
	if (st == "ok" && m == "bw" && (bw == "" || lat != "")) bad("a bw row needs bw_GBps and no lat_us")
	if (st == "ok" && m == "lat" && (lat == "" || bw != "")) bad("a lat row needs lat_us and no bw_GBps")
	if (st == "ok" && F[SCHEMA_COL["iterations"]] !~ /^[1-9]/) bad("no iterations")
	if (st == "ok" && F[SCHEMA_COL["errors"]] != "0") bad("status ok with errors " F[SCHEMA_COL["errors"]])
	ne = F[SCHEMA_COL["nic_errors"]]; np = F[SCHEMA_COL["nic_packets"]]
	if (m == "bw" && (ne != "" || np != "")) bad("a bw row with nic_errors or nic_packets")
	if ((ne == "") != (np == "")) bad("nic_errors without nic_packets or the other way round")
	if (F[SCHEMA_COL["src_rank"]] == F[SCHEMA_COL["dst_rank"]]) bad("a rank paired with itself")
	if (shift && ranks && (F[SCHEMA_COL["src_rank"]] + F[SCHEMA_COL["round"]]) % ranks != F[SCHEMA_COL["dst_rank"]] + 0)
		bad("dst is not src + round mod " ranks)
}
END {
	if (rows != "" && count != rows + 0) { printf "%s: %d rows, expected %d\n", FILENAME, count, rows; errors++ }
	exit errors > 0
}
