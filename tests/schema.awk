# schema.awk: the CSV schema's columns from its one definition, common/core/csv_schema.def, for the
# tests' awk programs (load with -f before them, with -v schema_def=FILE).
# schema_load() sets SCHEMA_HEADER, SCHEMA_NF, SCHEMA_COL[name] = index, SCHEMA_TYPE[name].
function schema_load(    line, p, n) {
	if (schema_def == "") {
		print "schema.awk: no -v schema_def=FILE (common/core/csv_schema.def)" > "/dev/stderr"
		exit 2
	}
	n = 0
	SCHEMA_HEADER = ""
	while ((getline line < schema_def) > 0) {
		if (line !~ /^GDRB_CSV_COL\([A-Za-z0-9_]+, [a-z]+\)$/)
			continue
		gsub(/^GDRB_CSV_COL\(|\)$/, "", line)
		split(line, p, ", ")
		SCHEMA_COL[p[1]] = ++n
		SCHEMA_TYPE[p[1]] = p[2]
		SCHEMA_HEADER = SCHEMA_HEADER (n > 1 ? "," : "") p[1]
	}
	close(schema_def)
	if (n == 0) {
		print "schema.awk: " schema_def ": no GDRB_CSV_COL lines" > "/dev/stderr"
		exit 2
	}
	SCHEMA_NF = n
}
