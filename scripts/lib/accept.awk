# accept.awk: check a results CSV against the rules of a profile (gdrb-accept's engine).
#
#   gawk -v meta=META.json -v link_rate=GBITS -v verdict=FILE -v junit=FILE -v profile=NAME \
#        -v results=DIR -f gdrb.awk -f json.awk -f accept.awk RULES.tsv RESULTS.csv
#
# RULES.tsv is profile.awk's output. Each rule selects the rows of its benchmark that pass its
# filters (pair=all unless it says otherwise) and checks every one of them:
#   abs     the column against a number, in the column's unit
#   link    a bandwidth column against PERCENT of the port rate: the row's link_gbps, else a
#           rate in its nic column ("400 Gb/s"), else that port's rate in meta.json, else
#           meta.json's link_rate_gbps; -v link_rate overrides them all (GB/s = Gb/s / 8)
#   staged  the direct path's value against PERCENT of the staged path's at the same size,
#           memory kind, pair and rank count
#   text    =, != or in a comma list
# A row whose status is not ok fails a numeric check (the measurement did not happen), and so
# does an empty value (the binaries' "no figure"); a rule that selects no row at all is NODATA,
# which fails. A value a rule reads that is not a number of its column's form (value_fault:
# "nan", "abc", "-5", "0x10", a size "8x") makes the rule INVALID and the verdict INVALID: the
# rows cannot be judged. Prints one line per rule (and each invalid value with its file and
# line), writes the verdict as JSON and JUnit XML; exit 0 when every rule passes, 1 when one
# fails, 3 when a value is invalid, 2 on bad input, 4 when the verdict could not be written.

function dedash(s) { return s == "-" ? "" : s }

function load_meta(    J, n, k, p, nn, np, name, port, rate, base) {
	if (meta == "")
		return
	if (json_load(meta, J) < 0) {
		printf "%s: not JSON: %s\n", meta, JSON_ERROR > "/dev/stderr"
		GDRB_FAILED = 1
		exit 2
	}
	if (J["link_rate_gbps"] ~ /^[0-9]+(\.[0-9]+)?$/)
		DEFAULT_RATE = J["link_rate_gbps"] + 0
	nn = J["nodes.#"] + 0
	for (n = 0; n < nn; n++)
		for (k = 0; k < J["nodes." n ".nics.#"]; k++) {
			base = "nodes." n ".nics." k
			name = J[base ".name"]
			for (p = 0; p < J[base ".ports.#"]; p++) {
				port = J[base ".ports." p ".port"]
				rate = J[base ".ports." p ".rate_gbps"]
				if (rate !~ /^[0-9]+(\.[0-9]+)?$/)
					continue
				if (!((name ":" port) in PORT_RATE))
					PORT_RATE[name ":" port] = rate + 0
				if (!(name in PORT_RATE) && J[base ".ports." p ".state"] ~ /ACTIVE/)
					PORT_RATE[name] = rate + 0
			}
		}
}

# The port rate in Gb/s for a row's link_gbps and nic columns; 0 if none is known.
function nic_rate(gbps, nic,    m) {
	if (link_rate != "")
		return link_rate + 0
	if (gbps ~ /^[0-9]+(\.[0-9]+)?$/ && gbps + 0 > 0)
		return gbps + 0
	if (match(nic, /([0-9]+(\.[0-9]+)?) ?Gb\/s/, m))
		return m[1] + 0
	if (nic in PORT_RATE)
		return PORT_RATE[nic]
	sub(/:[0-9]+$/, "", nic)
	if (nic in PORT_RATE)
		return PORT_RATE[nic]
	return DEFAULT_RATE + 0
}

function sizes_text(i) {
	if (R_LIST[i] != "")
		return gensub(/,/, ", ", "g", list_fmt(R_LIST[i]))
	if (R_LO[i] == "")
		return "all sizes"
	if (R_HI[i] == "inf")
		return size_fmt(R_LO[i]) " and up"
	if (R_LO[i] == R_HI[i])
		return size_fmt(R_LO[i])
	return size_fmt(R_LO[i]) ".." size_fmt(R_HI[i])
}

function list_fmt(list,    a, n, i, s) {
	n = split(list, a, ",")
	s = size_fmt(a[1])
	for (i = 2; i <= n; i++)
		s = s "," size_fmt(a[i])
	return s
}

function filters_text(i,    s, k, a, n, j, kv) {
	s = ""
	n = split(R_FILTERS[i], a, " ")
	for (j = 1; j <= n; j++) {
		split(a[j], kv, "=")
		if (kv[1] == "sizes" || (kv[1] == "pair" && kv[2] == "all"))
			continue
		s = s (s == "" ? "" : " ") a[j]
	}
	return s (s == "" ? "" : ", ") sizes_text(i)
}

function rule_text(i) {
	return R_BENCH[i] " " R_COL[i] " " R_OP[i] " " R_TEXT[i] " (" filters_text(i) ")"
}

function compare(v, op, t) {
	if (op == ">=") return v >= t
	if (op == "<=") return v <= t
	if (op == ">") return v > t
	if (op == "<") return v < t
	return 0
}

# Relative distance to the threshold, negative when the check fails (for "worst").
function margin(v, op, t) {
	if (t == 0) return op ~ />/ ? v : -v
	return (op ~ />/ ? v - t : t - v) / (t < 0 ? -t : t)
}

# record(I, SIZE, OK, VALUE, THRESHOLD, WHY): one checked row of rule I.
function record(i, size, ok, value, thr, why,    k, m) {
	CHECKED[i]++
	SEEN_SIZE[i, size] = 1
	if (!(i in MIN_SIZE) || size < MIN_SIZE[i]) MIN_SIZE[i] = size
	if (!(i in MAX_SIZE) || size > MAX_SIZE[i]) MAX_SIZE[i] = size
	m = (value == "" || thr == "" || R_KIND[i] == "text") ? (ok ? 1e300 : -1e300) : margin(value, R_OP[i], thr)
	if (!(i in WORST) || m < WORST[i]) {
		WORST[i] = m; W_SIZE[i] = size; W_VAL[i] = value; W_THR[i] = thr; W_WHY[i] = why
	}
	if (ok)
		return
	k = ++FAILED[i]
	if (k <= 50) {
		F_SIZE[i, k] = size; F_VAL[i, k] = value; F_THR[i, k] = thr; F_WHY[i, k] = why
	}
}

# invalid(I, SIZE, TEXT): rule I read a value that is not a number of its column's form
# (TEXT: value_where's "FILE:LINE: COLUMN 'VALUE' is WHY"); listed once however many rules read it.
function invalid(i, size, text) {
	CHECKED[i]++
	if (size != "")
		SEEN_SIZE[i, size] = 1
	if (++INVALIDS[i] <= 50)
		I_TEXT[i, INVALIDS[i]] = text
	if (!(text in INVALID_SEEN)) {
		INVALID_SEEN[text] = 1
		INVALID_LIST[++NINVALID] = text
		INVALID_FILE[NINVALID] = FILENAME; INVALID_LINE[NINVALID] = FNR
		INVALID_COL[NINVALID] = INVALID_COL_NOW; INVALID_VAL[NINVALID] = INVALID_VAL_NOW
	}
}

# value_ok(I, SIZE, COLUMN, V): 1 when V is a value of COLUMN (or empty), else invalid() and 0.
function value_ok(i, size, column, v,    why) {
	why = column == "size_bytes" ? size_fault(v) : value_fault(column, v)
	if (why == "")
		return 1
	INVALID_COL_NOW = column; INVALID_VAL_NOW = v
	invalid(i, size, value_where(column, v, why))
	return 0
}

function unit_of(i) {
	if (R_COL[i] ~ /_us$/) return " us"
	if (R_COL[i] ~ /_GBps$/) return " GB/s"
	return ""
}

function status_why(st, note) {
	return "status " st (note != "" && st != "ok" ? " (" note ")" : "")
}

function size_ok(i, size,    a, n, j) {
	if (R_LIST[i] != "")
		return index("," R_LIST[i] ",", "," size ",") > 0
	if (R_LO[i] != "" && size < R_LO[i] + 0) return 0
	if (R_HI[i] != "" && R_HI[i] != "inf" && size > R_HI[i] + 0) return 0
	return 1
}

function filters_match(i,    k) {
	for (k in FILTER_KEYS)
		if ((i, k) in R_F && index("," R_F[i, k] ",", "," F[COL[k]] ",") == 0)
			return 0
	return 1
}

function row_matches(i) {
	return filters_match(i) && size_ok(i, F[COL["size_bytes"]] + 0)
}

function check_row(i,    st, v, size, thr, rate, ok, key, path, note, bad) {
	st = F[COL["status"]]
	note = F[COL["note"]]
	size = F[COL["size_bytes"]] + 0
	v = F[COL[R_COL[i]]]
	bad = R_KIND[i] != "text" && !value_ok(i, size, R_COL[i], v)
	if (bad && R_KIND[i] != "staged")
		return
	if (R_KIND[i] == "link" && link_rate == "" && !value_ok(i, size, "link_gbps", F[COL["link_gbps"]]))
		return
	if (R_KIND[i] == "text") {
		if (st != "ok" && R_COL[i] != "status") {
			record(i, size, 0, v, R_VALUE[i], status_why(st, note))
			return
		}
		if (R_OP[i] == "=") ok = v == R_VALUE[i]
		else if (R_OP[i] == "!=") ok = v != R_VALUE[i]
		else ok = index("," R_VALUE[i] ",", "," v ",") > 0
		record(i, size, ok, v, R_VALUE[i], ok ? "" : R_COL[i] " is '" v "'")
		return
	}
	if (R_KIND[i] == "staged") {
		path = F[COL["path"]]
		if (path != "direct" && path != "staged")
			return
		key = i SUBSEP F[COL["mem"]] SUBSEP F[COL["pair"]] SUBSEP F[COL["ranks"]] SUBSEP size
		if (path == "direct")
			ND_ANY[key] = 1
		# Judged INVALID already (value_ok above): not paired with anything.
		if (bad)
			return
		if (path == "direct") {
			ND[key]++
			D_VAL[key, ND[key]] = v; D_ST[key, ND[key]] = st; D_NOTE[key, ND[key]] = note
		} else {
			NS[key]++
			S_VAL[key, NS[key]] = v; S_ST[key, NS[key]] = st; S_NOTE[key, NS[key]] = note
		}
		return
	}
	if (st != "ok") {
		record(i, size, 0, "", "", status_why(st, note))
		return
	}
	if (v == "") {
		record(i, size, 0, "", "", R_COL[i] " is empty (no figure)")
		return
	}
	if (R_KIND[i] == "abs")
		thr = R_VALUE[i]
	else {
		rate = nic_rate(F[COL["link_gbps"]], F[COL["nic"]])
		if (rate <= 0) {
			record(i, size, 0, v, "", "no link rate recorded (nic column and meta.json name none; give --link-rate)")
			return
		}
		thr = R_VALUE[i] / 100 * rate / 8
	}
	ok = compare(v + 0, R_OP[i], thr + 0)
	record(i, size, ok, v + 0, thr + 0, ok ? "" : num_fmt(v) unit_of(i) " " (R_OP[i] ~ />/ ? "<" : ">") " " num_fmt(thr) unit_of(i) \
		(R_KIND[i] == "link" ? " (" R_VALUE[i] "% of " rate " Gb/s)" : ""))
}

# Pair each direct row with the staged row of the same size (in order of appearance).
function check_staged(    key, parts, i, n, k, dv, sv, thr, ok, size) {
	for (key in ND) {
		split(key, parts, SUBSEP)
		i = parts[1]; size = parts[5] + 0
		for (k = 1; k <= ND[key]; k++) {
			if (D_ST[key, k] != "ok") {
				record(i, size, 0, "", "", "direct " status_why(D_ST[key, k], D_NOTE[key, k]))
				continue
			}
			if (k > NS[key]) {
				record(i, size, 0, D_VAL[key, k] + 0, "", "no staged row at this size")
				continue
			}
			if (S_ST[key, k] != "ok") {
				record(i, size, 0, D_VAL[key, k] + 0, "", "staged " status_why(S_ST[key, k], S_NOTE[key, k]))
				continue
			}
			# An empty value is no figure, never 0 (which would pass any "<=").
			if (D_VAL[key, k] == "" || S_VAL[key, k] == "") {
				record(i, size, 0, "", "", (D_VAL[key, k] == "" ? "direct " : "staged ") R_COL[i] " is empty (no figure)")
				continue
			}
			dv = D_VAL[key, k] + 0; sv = S_VAL[key, k] + 0
			thr = R_VALUE[i] / 100 * sv
			ok = compare(dv, R_OP[i], thr)
			record(i, size, ok, dv, thr, ok ? "" : "direct " num_fmt(dv) unit_of(i) " " (R_OP[i] ~ />/ ? "<" : ">") " " \
				num_fmt(thr) unit_of(i) " (" R_VALUE[i] "% of staged " num_fmt(sv) unit_of(i) ")")
		}
	}
	# A staged row without a direct one: the direct path did not even write a row.
	for (key in NS) {
		if (key in ND_ANY) continue
		if (key in ND) continue
		split(key, parts, SUBSEP)
		record(parts[1], parts[5] + 0, 0, "", "", "no direct row at this size")
	}
}

function json_num(v) { return v == "" ? "null" : (v ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ ? v + 0 : json_str(v)) }
function json_val(i, v) { return R_KIND[i] == "text" ? (v == "" ? "null" : json_str(v)) : json_num(v) }

function range_text(i) {
	if (!(i in MIN_SIZE)) return ""
	return MIN_SIZE[i] == MAX_SIZE[i] ? size_fmt(MIN_SIZE[i]) : size_fmt(MIN_SIZE[i]) ".." size_fmt(MAX_SIZE[i])
}

function distinct_sizes(i,    k, n, parts) {
	n = 0
	for (k in SEEN_SIZE) {
		split(k, parts, SUBSEP)
		if (parts[1] == i) n++
	}
	return n
}

# Failures of rule I in increasing size (the staged pairs come in hash order).
function sort_failures(i,    n, a, b, t) {
	n = FAILED[i] < 50 ? FAILED[i] : 50
	for (a = 2; a <= n; a++)
		for (b = a; b > 1 && F_SIZE[i, b - 1] > F_SIZE[i, b]; b--) {
			t = F_SIZE[i, b]; F_SIZE[i, b] = F_SIZE[i, b - 1]; F_SIZE[i, b - 1] = t
			t = F_VAL[i, b]; F_VAL[i, b] = F_VAL[i, b - 1]; F_VAL[i, b - 1] = t
			t = F_THR[i, b]; F_THR[i, b] = F_THR[i, b - 1]; F_THR[i, b - 1] = t
			t = F_WHY[i, b]; F_WHY[i, b] = F_WHY[i, b - 1]; F_WHY[i, b - 1] = t
		}
}

function plural(n, word) { return n " " word (n == 1 ? "" : "s") }

function describe(i, k) {
	return size_fmt(F_SIZE[i, k]) ": " F_WHY[i, k]
}

function worst_text(i,    u) {
	u = unit_of(i)
	if (R_KIND[i] == "text")
		return R_COL[i] " " (W_VAL[i] == "" ? "empty" : "'" W_VAL[i] "'") " at " size_fmt(W_SIZE[i])
	if (R_KIND[i] == "staged")
		return "worst " num_fmt(W_VAL[i]) u " against " num_fmt(W_THR[i]) u " (" R_VALUE[i] "% of staged) at " size_fmt(W_SIZE[i])
	return "worst " num_fmt(W_VAL[i]) u " against " num_fmt(W_THR[i]) u " at " size_fmt(W_SIZE[i])
}

BEGIN {
	FS = "\t"
	gdrb_schema()
	split("mem path reg pair layer ranks", fk, " ")
	for (k in fk) FILTER_KEYS[fk[k]] = 1
	DEFAULT_RATE = 0
	load_meta()
	NR_RULES = 0
}

# The rules (first file).
FILENAME == ARGV[1] {
	if ($1 != "rule")
		next
	i = ++NR_RULES
	R_WHERE[i] = $2; R_NAME[i] = $3; R_BENCH[i] = $4; R_COL[i] = $5; R_OP[i] = $6
	R_KIND[i] = $7; R_VALUE[i] = $8; R_TEXT[i] = $9; R_FILTERS[i] = $10
	n = split($10, a, " ")
	for (j = 1; j <= n; j++) {
		split(a[j], kv, "=")
		if (kv[1] == "sizes") {
			if (index(kv[2], ":")) { split(kv[2], lh, ":"); R_LO[i] = lh[1]; R_HI[i] = lh[2] }
			else R_LIST[i] = kv[2]
		} else
			R_F[i, kv[1]] = kv[2]
	}
	if (R_KIND[i] == "staged")
		delete R_F[i, "path"]
	BY_BENCH[R_BENCH[i]] = BY_BENCH[R_BENCH[i]] " " i
	next
}

# The results CSV (second file).
{
	if (FNR == 1)
		FS = "\n"
	if (csv_record(F) == 0)
		next
	# A GPU that is the test suite's simulator proves behaviour, never speed.
	if (F[COL["gpu"]] ~ /simulated/)
		SIMULATED = F[COL["gpu"]]
	b = F[1]
	if (!(b in BY_BENCH))
		next
	n = split(BY_BENCH[b], ids, " ")
	# Every rule selects by size: a size that is not one leaves the row to no rule, so each
	# rule that would select it on its other filters is INVALID.
	if (size_fault(F[COL["size_bytes"]]) != "") {
		for (j = 1; j <= n; j++)
			if (filters_match(ids[j]))
				value_ok(ids[j], "", "size_bytes", F[COL["size_bytes"]])
		next
	}
	for (j = 1; j <= n; j++)
		if (row_matches(ids[j]))
			check_row(ids[j])
}

END {
	if (GDRB_FAILED)
		exit 2
	check_staged()
	PROCINFO["sorted_in"] = "@ind_num_asc"
	npass = nfail = nnodata = ninvalid = 0
	for (i = 1; i <= NR_RULES; i++) {
		if (INVALIDS[i]) {
			V[i] = "INVALID"; ninvalid++
			MSG[i] = INVALIDS[i] " of " plural(CHECKED[i], "check") " read a value that is not a number: " I_TEXT[i, 1]
			for (k = 2; k <= INVALIDS[i] && k <= 3; k++)
				MSG[i] = MSG[i] "; " I_TEXT[i, k]
			if (INVALIDS[i] > 3)
				MSG[i] = MSG[i] "; and " INVALIDS[i] - 3 " more"
		} else if (!CHECKED[i]) {
			V[i] = "NODATA"; nnodata++
			MSG[i] = "no data: no row of " R_BENCH[i] " with " filters_text(i) " in the results (not run, not built, or skipped here)"
		} else if (FAILED[i]) {
			V[i] = "FAIL"; nfail++
			sort_failures(i)
			MSG[i] = FAILED[i] " of " plural(CHECKED[i], "check") " failed: " describe(i, 1)
			for (k = 2; k <= FAILED[i] && k <= 5; k++)
				MSG[i] = MSG[i] "; " describe(i, k)
			if (FAILED[i] > 5)
				MSG[i] = MSG[i] "; and " FAILED[i] - 5 " more"
		} else {
			V[i] = "PASS"; npass++
			n = distinct_sizes(i)
			MSG[i] = plural(CHECKED[i], "check") " at " plural(n, "size") " (" range_text(i) "), " worst_text(i)
		}
		printf "%-6s %s: %s\n       %s\n", V[i], R_NAME[i], rule_text(i), MSG[i]
	}
	# The values that are not numbers, each once: the rows to fix or measure again.
	for (k = 1; k <= NINVALID; k++)
		printf "INVALID %s\n", INVALID_LIST[k]
	overall = (nfail + nnodata) ? "FAIL" : "PASS"
	if (SIMULATED != "")
		overall = "SIMULATED"
	# Values that are not numbers cannot be judged at all: that comes before any other outcome.
	if (ninvalid)
		overall = "INVALID"
	printf "%s: %d rules, %d passed, %d failed, %d without data%s%s\n", overall, NR_RULES, npass, nfail, nnodata, \
		ninvalid ? ", " ninvalid " invalid (" plural(NINVALID, "value") " not a number of its column: the results cannot be judged)" : "", \
		SIMULATED == "" ? "" : "; measured on " SIMULATED ", which proves behaviour, never speed: never a pass; run on real GPUs"

	if (verdict != "") {
		out_open(verdict)
		printf "{\n  \"schema\": \"gdrbench-verdict-1\",\n  \"verdict\": %s,\n  \"profile\": %s,\n  \"results\": %s,\n", \
			json_str(overall), json_str(profile), json_str(results) > verdict
		printf "  \"generated\": %s,\n  \"rules_total\": %d,\n  \"passed\": %d,\n  \"failed\": %d,\n  \"nodata\": %d,\n", \
			json_str(strftime("%Y-%m-%dT%H:%M:%SZ", systime(), 1)), NR_RULES, npass, nfail, nnodata > verdict
		printf "  \"invalid\": %d,\n  \"invalid_values\": [", ninvalid > verdict
		for (k = 1; k <= NINVALID; k++)
			printf "%s\n    {\"file\": %s, \"line\": %d, \"column\": %s, \"value\": %s, \"message\": %s}", (k > 1 ? "," : ""), \
				json_str(INVALID_FILE[k]), INVALID_LINE[k], json_str(INVALID_COL[k]), json_str(INVALID_VAL[k]), \
				json_str(INVALID_LIST[k]) > verdict
		printf "%s],\n  \"rules\": [", NINVALID ? "\n  " : "" > verdict
		for (i = 1; i <= NR_RULES; i++) {
			printf "%s\n    {\"name\": %s, \"where\": %s, \"verdict\": %s,\n", (i > 1 ? "," : ""), \
				json_str(R_NAME[i]), json_str(R_WHERE[i]), json_str(V[i]) > verdict
			printf "     \"benchmark\": %s, \"column\": %s, \"op\": %s, \"kind\": %s, \"threshold\": %s, \"selection\": %s,\n", \
				json_str(R_BENCH[i]), json_str(R_COL[i]), json_str(R_OP[i]), json_str(R_KIND[i]), \
				json_str(R_TEXT[i]), json_str(filters_text(i)) > verdict
			printf "     \"checked\": %d, \"failed_checks\": %d, \"invalid_checks\": %d, \"sizes\": %s,\n", CHECKED[i], FAILED[i], \
				INVALIDS[i], json_str(range_text(i)) > verdict
			if (i in WORST)
				printf "     \"worst\": {\"size_bytes\": %d, \"value\": %s, \"threshold\": %s, \"why\": %s},\n", \
					W_SIZE[i], json_val(i, W_VAL[i]), json_val(i, W_THR[i]), json_str(W_WHY[i]) > verdict
			printf "     \"failures\": [" > verdict
			for (k = 1; k <= FAILED[i] && k <= 50; k++)
				printf "%s{\"size_bytes\": %d, \"value\": %s, \"threshold\": %s, \"why\": %s}", (k > 1 ? ", " : ""), \
					F_SIZE[i, k], json_val(i, F_VAL[i, k]), json_val(i, F_THR[i, k]), json_str(F_WHY[i, k]) > verdict
			printf "],\n     \"message\": %s}", json_str(MSG[i]) > verdict
		}
		printf "\n  ]\n}\n" > verdict
		out_close(verdict)
	}
	if (junit != "" && !WRITE_FAILED) {
		out_open(junit)
		printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > junit
		if (SIMULATED != "")
			nfail = NR_RULES - nnodata - ninvalid      # nothing measured on a simulator passes
		printf "<testsuites name=\"gdrbench\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n", NR_RULES, nfail + nnodata, ninvalid > junit
		printf "  <testsuite name=\"gdrb-accept %s\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" timestamp=\"%s\">\n", \
			xml_str(profile), NR_RULES, nfail + nnodata, ninvalid, strftime("%Y-%m-%dT%H:%M:%S", systime(), 1) > junit
		for (i = 1; i <= NR_RULES; i++) {
			printf "    <testcase classname=\"gdrbench.%s\" name=\"%s\" time=\"0\">\n", \
				xml_str(R_BENCH[i]), xml_str(R_NAME[i] ": " rule_text(i)) > junit
			# Data that are not numbers: a JUnit error (the test could not run), not a failure.
			if (V[i] == "INVALID")
				printf "      <error type=\"invalid\" message=\"%s\">%s (%s)</error>\n", \
					xml_str(MSG[i]), xml_str(MSG[i]), xml_str(R_WHERE[i]) > junit
			else if (SIMULATED != "" && V[i] != "NODATA")
				printf "      <failure type=\"simulated\" message=\"measured on a simulated GPU\">%s (%s)</failure>\n", \
					xml_str(MSG[i]), xml_str(R_WHERE[i]) > junit
			else if (V[i] != "PASS")
				printf "      <failure type=\"%s\" message=\"%s\">%s (%s)</failure>\n", V[i] == "NODATA" ? "nodata" : "threshold", \
					xml_str(MSG[i]), xml_str(MSG[i]), xml_str(R_WHERE[i]) > junit
			else
				printf "      <system-out>%s</system-out>\n", xml_str(MSG[i]) > junit
			printf "    </testcase>\n" > junit
		}
		printf "  </testsuite>\n</testsuites>\n" > junit
		out_close(junit)
	}
	if (WRITE_FAILED)
		exit 4
	exit overall == "PASS" ? 0 : (overall == "INVALID" ? 3 : 1)
}
