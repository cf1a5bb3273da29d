# schema.awk: the CSV schema's columns from its one definition, common/core/csv_schema.def, for the
# tests' awk programs (load with -f before them, with -v schema_def=FILE).
# schema_load() sets SCHEMA_HEADER, SCHEMA_NF, SCHEMA_COL[name] = index, SCHEMA_TYPE[name].
# -v schema_macro=GDRB_PAIRS_COL reads common/core/pairs_schema.def the same way.
function schema_load(    line, p, n, macro) {
	macro = schema_macro == "" ? "GDRB_CSV_COL" : schema_macro
	if (schema_def == "") {
		print "schema.awk: no -v schema_def=FILE (common/core/csv_schema.def)" > "/dev/stderr"
		exit 2
	}
	n = 0
	SCHEMA_HEADER = ""
	while ((getline line < schema_def) > 0) {
		if (line !~ ("^" macro "\\([A-Za-z0-9_]+, [a-z]+\\)$"))
			continue
		sub("^" macro "\\(", "", line)
		sub(/\)$/, "", line)
		split(line, p, ", ")
		SCHEMA_COL[p[1]] = ++n
		SCHEMA_TYPE[p[1]] = p[2]
		SCHEMA_HEADER = SCHEMA_HEADER (n > 1 ? "," : "") p[1]
	}
	close(schema_def)
	if (n == 0) {
		print "schema.awk: " schema_def ": no " macro " lines" > "/dev/stderr"
		exit 2
	}
	SCHEMA_NF = n
}
