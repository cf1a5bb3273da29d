# gdrb.awk: functions shared by the gdrbench scripts (load with -f before a program).
# The CSV schema of results/README.md, a CSV reader that refuses what does not
# follow it, message sizes in the binaries' syntax, and JSON string escaping.
# Needs gawk (RT tells a complete last line from a cut one).

# --- CSV schema --------------------------------------------------------------

function gdrb_schema(    i, num) {
	GDRB_HEADER = "benchmark,layer,mem,path,reg,stage_chunk,stage_slots,window,buffers,pair,size_bytes,iterations," \
		"lat_min_us,lat_p50_us,lat_avg_us,lat_p99_us,lat_p999_us,lat_max_us,lat_stdev_us," \
		"bw_GBps,algbw_GBps,busbw_GBps,ranks,hosts,gpu,nic,link_layer,link_gbps,gpu_nic_dist," \
		"cpu_initiator_pct,cpu_responder_pct,status,errors,quality,note,timestamp,version"
	GDRB_NF = split(GDRB_HEADER, GDRB_COLS, ",")
	for (i = 1; i <= GDRB_NF; i++)
		COL[GDRB_COLS[i]] = i
	# Columns that hold numbers (the rest is text).
	split("stage_chunk stage_slots window size_bytes iterations lat_min_us lat_p50_us lat_avg_us lat_p99_us lat_p999_us " \
	      "lat_max_us lat_stdev_us bw_GBps algbw_GBps busbw_GBps ranks hosts link_gbps " \
	      "cpu_initiator_pct cpu_responder_pct errors", num, " ")
	for (i in num)
		NUMERIC[num[i]] = 1
	# Of those, the counts (whole numbers); the rest are decimals.
	split("stage_chunk stage_slots window size_bytes iterations ranks hosts errors", num, " ")
	for (i in num)
		INTEGER[num[i]] = 1
}

# value_fault(NAME, V): why V is not a value of column NAME as the binaries write it (counts
# as digits, measurements as "%.Nf" of a finite non-negative number); "" when it is one.
# An empty field is the binaries' "no figure" (never a 0): valid here, the reader decides.
function value_fault(name, v) {
	if (v == "" || !(name in NUMERIC))
		return ""
	if (name in INTEGER)
		return v ~ /^[0-9]+$/ ? "" : "not a non-negative integer"
	return v ~ /^[0-9]+(\.[0-9]+)?$/ ? "" : "not a finite non-negative decimal number"
}

# size_fault(V): why V is not a size_bytes value (which may not be empty); "" when it is one.
function size_fault(v) {
	return v == "" ? "empty" : value_fault("size_bytes", v)
}

# value_where(NAME, V, WHY): "FILE:LINE: NAME 'V' is WHY" for the current input line.
function value_where(name, v, why) {
	return FILENAME ":" FNR ": " name " '" v "' is " why
}

# csv_split(LINE, F): the fields of one CSV line (RFC 4180 quoting) into F[1..n]; returns n.
function csv_split(line, F,    n, i, c, field, inq, len) {
	if (index(line, "\"") == 0)
		return split(line, F, ",")
	delete F
	n = 0; field = ""; inq = 0; len = length(line)
	for (i = 1; i <= len; i++) {
		c = substr(line, i, 1)
		if (inq) {
			if (c == "\"") {
				if (substr(line, i + 1, 1) == "\"") { field = field "\""; i++ }
				else inq = 0
			} else
				field = field c
		} else if (c == "\"")
			inq = 1
		else if (c == ",") { F[++n] = field; field = "" }
		else
			field = field c
	}
	F[++n] = field
	return n
}

# csv_quote(S): S as one CSV field.
function csv_quote(s) {
	if (s !~ /[,"\r\n]/)
		return s
	gsub(/"/, "\"\"", s)
	gsub(/[\r\n]/, " ", s)
	return "\"" s "\""
}

# csv_bad(MSG): a file the scripts cannot use; one line naming file and line, exit 2.
function csv_bad(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	GDRB_FAILED = 1
	exit 2
}

# csv_record(F): call for every line of a results CSV. Checks the header on line 1
# (returns 0 there) and the field count after it; returns the number of fields.
function csv_record(F,    n) {
	sub(/\r$/, "")
	if (FNR == 1) {
		if ($0 != GDRB_HEADER)
			csv_bad("not a gdrbench results CSV: the first line must be the schema's header (results/README.md), starting 'benchmark,layer,mem,path,'")
		return 0
	}
	n = csv_split($0, F)
	if (n != GDRB_NF)
		csv_bad("has " n " fields, the schema has " GDRB_NF)
	return n
}

# --- sizes ---------------------------------------------------------------------

# size_parse(TEXT): bytes for "8", "64K", "1MiB", "2g" (binary suffixes, any case); -1 if not a size.
function size_parse(text,    m, unit, v) {
	if (!match(text, /^([0-9]+)([A-Za-z]*)$/, m))
		return -1
	v = m[1] + 0
	unit = tolower(m[2])
	if (unit == "" || unit == "b") return v > 0 ? v : -1
	if (unit == "k" || unit == "kib") v *= 1024
	else if (unit == "m" || unit == "mib") v *= 1048576
	else if (unit == "g" || unit == "gib") v *= 1073741824
	else if (unit == "t" || unit == "tib") v *= 1099511627776
	else return -1
	return v > 0 ? v : -1
}

# sizes_expand(SPEC, OUT): the sizes a binary measures for -m SPEC ("MIN:MAX" doubles
# from MIN and always ends at MAX; "A,B,C" is a list) into OUT[1..n]; returns n, -1 if bad.
function sizes_expand(spec, OUT,    n, i, parts, lo, hi, v) {
	delete OUT
	n = 0
	if (index(spec, ":")) {
		if (split(spec, parts, ":") != 2)
			return -1
		lo = size_parse(parts[1]); hi = size_parse(parts[2])
		if (lo < 0 || hi < 0 || lo > hi)
			return -1
		for (v = lo; v <= hi; v *= 2)
			OUT[++n] = v
		if (OUT[n] != hi)
			OUT[++n] = hi
		return n
	}
	i = split(spec, parts, ",")
	for (n = 1; n <= i; n++) {
		v = size_parse(parts[n])
		if (v < 0)
			return -1
		OUT[n] = v
	}
	return i
}

# size_fmt(BYTES): "8B", "4KiB", "1MiB", "1GiB"; sizes that are not whole units keep the smaller one.
function size_fmt(v,    u, units) {
	split("B KiB MiB GiB TiB", units, " ")
	u = 1
	while (u < 5 && v >= 1024 && v % 1024 == 0) { v /= 1024; u++ }
	return sprintf("%d%s", v, units[u])
}

# --- output files --------------------------------------------------------------

# gawk dies on a failed write with exit 2, the code of bad input, and without saying which
# output was lost. out_open(FILE) opens FILE (truncated) with write errors left to the
# program; out_close(FILE) flushes and closes it and returns 0, or -1 after saying once
# which file could not be written and why (WRITE_FAILED is then set; exit 4 tells the
# calling script, which exits 1).
function out_open(file) {
	PROCINFO[file, "NONFATAL"] = 1
	ERRNO = ""
	printf "" > file
	if (ERRNO != "")
		OUT_OPEN_ERROR[file] = ERRNO
}

function out_close(file,    r, why) {
	if (file in OUT_OPEN_ERROR) {
		why = OUT_OPEN_ERROR[file]
		r = -1
	} else {
		ERRNO = ""
		r = fflush(file)
		why = ERRNO
		close(file)
	}
	if (r == 0)
		return 0
	# FILE.tmp, renamed once complete, is the file the user asked for.
	if (!WRITE_FAILED)
		printf "%s: cannot write: %s\n", gensub(/\.tmp$/, "", 1, file), why == "" ? "write error" : why > "/dev/stderr"
	WRITE_FAILED = 1
	return -1
}

# --- output helpers ------------------------------------------------------------

# json_str(S): S as a JSON string literal.
function json_str(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	gsub(/\t/, "\\t", s)
	gsub(/\n/, "\\n", s)
	gsub(/\r/, "\\r", s)
	gsub(/[\001-\037]/, " ", s)
	return "\"" s "\""
}

# xml_str(S): S escaped for XML text and attributes.
function xml_str(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	gsub(/[\001-\010\013\014\016-\037]/, " ", s)
	return s
}

# num_fmt(V): a measured value for people: 4 significant digits, no exponent below 1e9.
function num_fmt(v,    a) {
	a = v < 0 ? -v : v
	if (a >= 1000) return sprintf("%.0f", v)
	if (a >= 100) return sprintf("%.1f", v)
	if (a >= 10) return sprintf("%.2f", v)
	if (a >= 1) return sprintf("%.3f", v)
	return sprintf("%.4g", v)
}
