# csv_col.awk: columns of a CSV of the project by name (tests/support/lib.sh's csv_col, csv_count, pairs_col,
# ranks_col). Load schema.awk (with -v schema_def, schema_macro: the file's schema) and
# tests/support/csv_split.awk (csv_split) first. Arguments: the file, then filters, each
# NAME=VALUE (the field is VALUE; empty VALUE: the field is empty), NAME!=VALUE, or NAME~ERE (the
# whole field matches ERE). -v cols=A,B,...: print those fields of each row that passes every
# filter, tab-separated; -v count=1: print the number of such rows instead; -v rows=1: the
# header and those rows as they are; -v set=NAME -v value=V: the whole file, field NAME of those
# rows replaced by V (their fields quoted where they need it); -v header=1: print the schema's
# header line, read no file. A header other than
# the schema's, a column the schema lacks, a bad filter or a row with another number of fields
# than the schema ends it with exit 2 and a line on stderr, so that a check cannot pass on a
# misread file.
# quote V: V as one CSV field (RFC 4180 quoted where it holds a comma or a quote).
function quote(v) {
	if (v !~ /[",]/)
		return v
	gsub(/"/, "\"\"", v)
	return "\"" v "\""
}
function die(msg) { print "csv_col: " msg > "/dev/stderr"; died = 1; exit 2 }
function column(name) {
	if (!(name in SCHEMA_COL))
		die("no column '" name "' in " schema_def)
	return SCHEMA_COL[name]
}
BEGIN {
	schema_load()
	if (header) {
		print SCHEMA_HEADER
		done = 1
		exit 0
	}
	if (ARGC < 2)
		die("no file")
	file = ARGV[1]
	nfilt = 0
	for (i = 2; i < ARGC; i++) {
		if (!match(ARGV[i], /^[A-Za-z0-9_]+(!=|=|~)/))
			die("filter '" ARGV[i] "': expected NAME=VALUE, NAME!=VALUE or NAME~ERE")
		op = substr(ARGV[i], RLENGTH, 1)
		name = substr(ARGV[i], 1, RLENGTH - 1)
		if (op == "=" && substr(name, length(name)) == "!") {
			op = "!="
			name = substr(name, 1, length(name) - 1)
		}
		FCOL[++nfilt] = column(name)
		FOP[nfilt] = op
		FVAL[nfilt] = op == "~" ? "^(" substr(ARGV[i], RLENGTH + 1) ")$" : substr(ARGV[i], RLENGTH + 1)
		ARGV[i] = ""
	}
	ncols = cols == "" ? 0 : split(cols, C, ",")
	for (i = 1; i <= ncols; i++)
		CIDX[i] = column(C[i])
	if (set != "")
		SET = column(set)
	if (!ncols && !count && !rows && set == "")
		die("none of -v cols, count, rows, set")
	n = 0
}
FNR == 1 {
	if ($0 != SCHEMA_HEADER)
		die(FILENAME ":1: not the header of " schema_def)
	if (rows || set != "")
		print
	next
}
{
	if (csv_split($0, F) != SCHEMA_NF)
		die(FILENAME ":" FNR ": not " SCHEMA_NF " fields")
	for (i = 1; i <= nfilt; i++) {
		v = F[FCOL[i]]
		if (FOP[i] == "=" ? v != FVAL[i] : FOP[i] == "!=" ? v == FVAL[i] : v !~ FVAL[i]) {
			if (set != "")
				print
			next
		}
	}
	n++
	if (rows)
		print
	if (set != "") {
		F[SET] = value
		line = ""
		for (i = 1; i <= SCHEMA_NF; i++)
			line = line (i > 1 ? "," : "") quote(F[i])
		print line
	}
	if (count || rows || set != "")
		next
	line = ""
	for (i = 1; i <= ncols; i++)
		line = line (i > 1 ? "\t" : "") F[CIDX[i]]
	print line
}
END {
	if (died)
		exit 2
	if (done)
		exit 0
	if (NR == 0)
		die(file ": empty, no header")
	if (count)
		print n
}
