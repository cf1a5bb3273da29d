# profile.awk: read a gdrbench profile and print it as tab-separated records.
#
#   gawk -v profile=FILE -v profiles_dir=DIR -f gdrb.awk -f profile.awk
#
# A profile says what gdrb-sweep runs and what gdrb-accept requires. One statement
# per line; '#' starts a comment; "double quotes" keep spaces in a value.
#
#   description TEXT           shown in the summary
#   include NAME|FILE          read another profile here (NAME: DIR/NAME.profile; FILE:
#                              relative to this file). Defaults set inside stay inside.
#   sizes SPEC | time SEC | iters N | validate on|off
#                              defaults for the run lines below: -m SPEC (else 8:1G),
#                              -t SEC, -n N, -c (else the binaries' own defaults)
#   run BINARY [key=value ...] run BINARY once per memory kind; keys:
#       mem=host,pinned,device   memory kinds (default host); device only where a GPU is;
#                                none: the binary takes no --mem (give paths=MEM:PATH,...)
#       needs=gpu,rdma           skip the line where this host has no GPU / RDMA device
#       launch=mpi|local         through the launcher (default) or as one local process
#       sizes= time= iters= validate= np=   this line's own values
#       bench=NAME layer=mpi|verbs|local    the CSV benchmark and layer (default: the
#                                binary without "gdrb_"; verbs when needs=rdma, local
#                                when launch=local, else mpi)
#       paths=LIST               the rows a complete run writes at each size, as PATH or
#                                MEM:PATH (default direct, plus staged for device memory)
#       args="..."               more arguments for the binary
#   doctor BINARY [args="..."]  run BINARY --json, keep its output as doctor.json
#   rule NAME BENCH COLUMN OP THRESHOLD [key=value ...]   see gdrb-accept
#
# Output records (fields separated by tabs, "-" for empty):
#   run    WHERE BINARY BENCH LAYER LAUNCH MEMS NEEDS SIZES TIME ITERS NP PATHS VALIDATE ARGS
#   doctor WHERE BINARY ARGS
#   rule   WHERE NAME BENCH COLUMN OP KIND VALUE TEXT FILTERS
#   description WHERE TEXT
# KIND is abs (VALUE in the column's unit), link or staged (VALUE a percentage) or text
# (VALUE a comma list); FILTERS is "key=value ..." with sizes as MIN:MAX bytes (MAX may
# be inf) or a comma list. WHERE is FILE:LINE. Errors: one line "FILE:LINE: ...", exit 2.

function perr(where, msg) {
	printf "%s: %s\n", where, msg > "/dev/stderr"
	PROFILE_FAILED = 1
	exit 2
}

function dash(s) { return s == "" ? "-" : s }

# tokens(LINE, T): whitespace-separated words, "quotes" kept together; returns n.
function tokens(line, T,    n, i, c, w, inq, have) {
	delete T
	n = 0; w = ""; inq = 0; have = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (inq) {
			if (c == "\"") inq = 0
			else w = w c
		} else if (c == "\"") {
			inq = 1; have = 1
		} else if (c == "#") {
			break
		} else if (c == " " || c == "\t") {
			if (have) { T[++n] = w; w = ""; have = 0 }
		} else {
			w = w c; have = 1
		}
	}
	if (inq)
		return -1
	if (have)
		T[++n] = w
	return n
}

function dirname(path) {
	return path ~ /\// ? gensub(/\/[^\/]*$/, "", 1, path) : "."
}

function resolve(name, from) {
	if (name !~ /\//)
		return profiles_dir "/" name ".profile"
	if (name ~ /^\//)
		return name
	return dirname(from) "/" name
}

function is_num(s) { return s ~ /^[0-9]+(\.[0-9]+)?$/ }

function check_list(where, key, value, allowed,    items, i, n) {
	n = split(value, items, ",")
	if (n == 0)
		perr(where, key "= needs a value; accepted: " allowed)
	for (i = 1; i <= n; i++)
		if (index("," allowed ",", "," items[i] ","))
			continue
		else
			perr(where, key "=: unknown value '" items[i] "'; accepted: " allowed)
}

function check_sizes(where, key, spec,    tmp) {
	if (sizes_expand(spec, tmp) < 1)
		perr(where, key ": '" spec "' is not a size list; expected MIN:MAX (doubling) or A,B,C, e.g. 8:1G or 8,64K,1M")
}

# parse_file(FILE, DEPTH): read one profile; defaults are local to the file.
function parse_file(file, depth,    line, nr, where, T, n, kw, rc, save_sizes, save_time, save_iters, save_validate, i) {
	if (depth > 8)
		perr(file, "includes nest deeper than 8 (an include loop?)")
	save_sizes = D_SIZES; save_time = D_TIME; save_iters = D_ITERS; save_validate = D_VALIDATE
	nr = 0
	while ((rc = (getline line < file)) > 0) {
		nr++
		where = file ":" nr
		sub(/\r$/, "", line)
		n = tokens(line, T)
		if (n < 0)
			perr(where, "unterminated \"quote\"")
		if (n == 0)
			continue
		kw = T[1]
		if (kw == "description") {
			sub(/^[ \t]*description[ \t]*/, "", line)
			print "description", where, dash(line)
		} else if (kw == "include") {
			if (n != 2)
				perr(where, "include takes one profile name or file, e.g. 'include quick'")
			close(file)
			INCLUDE_FROM = file
			parse_include(where, resolve(T[2], file), depth)
			# getline resumes where it was: reopen and skip to the same line.
			for (i = 0; i < nr; i++)
				getline line < file
		} else if (kw == "sizes" || kw == "time" || kw == "iters" || kw == "validate") {
			if (n != 2)
				perr(where, kw " takes one value")
			if (kw == "sizes") { check_sizes(where, "sizes", T[2]); D_SIZES = T[2] }
			if (kw == "time") {
				if (!is_num(T[2]) || T[2] + 0 <= 0) perr(where, "time: expected seconds per size, e.g. 0.3, got '" T[2] "'")
				D_TIME = T[2]
			}
			if (kw == "iters") {
				if (T[2] !~ /^[1-9][0-9]*$/) perr(where, "iters: expected a positive integer, got '" T[2] "'")
				D_ITERS = T[2]
			}
			if (kw == "validate") {
				if (T[2] != "on" && T[2] != "off") perr(where, "validate: expected on or off, got '" T[2] "'")
				D_VALIDATE = T[2]
			}
		} else if (kw == "run") {
			parse_run(where, T, n)
		} else if (kw == "doctor") {
			parse_doctor(where, T, n)
		} else if (kw == "rule") {
			parse_rule(where, T, n)
		} else
			perr(where, "unknown statement '" kw "'; expected run, doctor, rule, include, sizes, time, iters, validate or description")
	}
	if (rc < 0)
		perr(INCLUDE_WHERE != "" ? INCLUDE_WHERE : file, "cannot read profile '" file "'")
	close(file)
	D_SIZES = save_sizes; D_TIME = save_time; D_ITERS = save_iters; D_VALIDATE = save_validate
}

function parse_include(where, file, depth,    probe) {
	if ((getline probe < file) < 0)
		perr(where, "include: cannot read '" file "'")
	close(file)
	parse_file(file, depth + 1)
}

function parse_run(where, T, n,    binary, i, k, v, KV, bench, layer, m) {
	if (n < 2 || index(T[2], "="))
		perr(where, "run needs a binary name first, e.g. 'run gdrb_mpi_bw mem=host,device'")
	binary = T[2]
	if (binary !~ /^[A-Za-z0-9._+-]+$/)
		perr(where, "run: '" binary "' is not a binary name (no paths; binaries are found in the build tree or on PATH)")
	delete KV
	KV["mem"] = "host"; KV["needs"] = ""; KV["launch"] = "mpi"; KV["sizes"] = D_SIZES
	KV["time"] = D_TIME; KV["iters"] = D_ITERS; KV["validate"] = D_VALIDATE; KV["np"] = ""
	KV["paths"] = ""; KV["bench"] = ""; KV["layer"] = ""; KV["args"] = ""
	for (i = 3; i <= n; i++) {
		if (!match(T[i], /^([a-z]+)=(.*)$/, m))
			perr(where, "run: expected key=value, got '" T[i] "'")
		k = m[1]; v = m[2]
		if (!(k in KV))
			perr(where, "run: unknown key '" k "'; accepted: mem, needs, launch, sizes, time, iters, validate, np, paths, bench, layer, args")
		KV[k] = v
	}
	if (KV["mem"] != "none")
		check_list(where, "mem", KV["mem"], "host,pinned,device")
	if (KV["needs"] != "")
		check_list(where, "needs", KV["needs"], "gpu,rdma")
	check_list(where, "launch", KV["launch"], "mpi,local")
	check_sizes(where, "sizes", KV["sizes"])
	if (KV["time"] != "" && (!is_num(KV["time"]) || KV["time"] + 0 <= 0))
		perr(where, "time=: expected seconds per size, got '" KV["time"] "'")
	if (KV["iters"] != "" && KV["iters"] !~ /^[1-9][0-9]*$/)
		perr(where, "iters=: expected a positive integer, got '" KV["iters"] "'")
	if (KV["validate"] != "" && KV["validate"] != "on" && KV["validate"] != "off")
		perr(where, "validate=: expected on or off, got '" KV["validate"] "'")
	if (KV["np"] != "" && KV["np"] !~ /^[1-9][0-9]*$/)
		perr(where, "np=: expected a number of ranks, got '" KV["np"] "'")
	if (KV["paths"] != "" && KV["paths"] !~ /^([a-z]+:)?[a-z0-9_]+(,([a-z]+:)?[a-z0-9_]+)*$/)
		perr(where, "paths=: expected a comma list of PATH or MEM:PATH, e.g. direct,staged or host:h2d,device:d2d")
	if (KV["mem"] == "none" && KV["paths"] !~ /^[a-z]+:/)
		perr(where, "mem=none (the binary takes no --mem) needs paths=MEM:PATH,..., e.g. paths=host:h2d,device:d2d")
	bench = KV["bench"] != "" ? KV["bench"] : gensub(/^gdrb_/, "", 1, binary)
	if (bench !~ /^[a-z0-9_]+$/)
		perr(where, "bench=: expected lower-case letters, digits and '_', got '" bench "'")
	layer = KV["layer"]
	if (layer == "")
		layer = KV["launch"] == "local" ? "local" : (index("," KV["needs"] ",", ",rdma,") ? "verbs" : "mpi")
	check_list(where, "layer", layer, "mpi,verbs,local")
	BENCHES[bench] = 1
	print "run", where, binary, bench, layer, KV["launch"], KV["mem"], dash(KV["needs"]), KV["sizes"],
		dash(KV["time"]), dash(KV["iters"]), dash(KV["np"]), dash(KV["paths"]), dash(KV["validate"]), dash(KV["args"])
}

function parse_doctor(where, T, n,    args) {
	if (n < 2 || index(T[2], "="))
		perr(where, "doctor needs a binary name, e.g. 'doctor gdrb_doctor'")
	args = ""
	if (n == 3 && T[3] ~ /^args=/)
		args = substr(T[3], 6)
	else if (n > 2)
		perr(where, "doctor: only args=\"...\" may follow the binary")
	print "doctor", where, T[2], dash(args)
}

# unit_scale(COLUMN, UNIT): factor from UNIT to the column's own unit; 0 if they do not fit.
function unit_scale(column, unit) {
	if (column ~ /_us$/) {
		if (unit == "us") return 1
		if (unit == "ms") return 1000
		if (unit == "ns") return 0.001
		return 0
	}
	if (column ~ /_GBps$/) {
		if (unit == "GB/s") return 1
		if (unit == "Gb/s") return 0.125
		if (unit == "MB/s") return 0.001
		return 0
	}
	return 0
}

function column_unit(column) {
	if (column ~ /_us$/) return "us"
	if (column ~ /_GBps$/) return "GB/s"
	return ""
}

function parse_rule(where, T, n,    name, bench, column, op, i, j, thr, THR, k, v, F, kind, value, text, filters, scale, pct, target, lo, hi, list, m) {
	if (n < 6)
		perr(where, "rule needs NAME BENCH COLUMN OP THRESHOLD, e.g. 'rule bw-large mpi_bw bw_GBps >= 20 GB/s sizes=1M:'")
	name = T[2]; bench = T[3]; column = T[4]; op = T[5]
	if (name !~ /^[A-Za-z0-9._-]+$/)
		perr(where, "rule name '" name "': expected letters, digits, '.', '_' or '-'")
	if (name in RULES)
		perr(where, "rule name '" name "' already used at " RULES[name])
	RULES[name] = where
	if (bench !~ /^[a-z0-9_]+$/)
		perr(where, "rule " name ": '" bench "' is not a benchmark name (e.g. mpi_bw, write_lat)")
	if (!(column in COL))
		perr(where, "rule " name ": unknown column '" column "'; the schema's columns: " GDRB_HEADER)
	# Threshold words run up to the first key=value.
	thr = 0
	for (i = 6; i <= n && !index(T[i], "="); i++)
		THR[++thr] = T[i]
	delete F
	F["pair"] = "all"
	for (; i <= n; i++) {
		if (!match(T[i], /^([a-z]+)=(.+)$/, m))
			perr(where, "rule " name ": expected key=value after the threshold, got '" T[i] "'")
		k = m[1]; v = m[2]
		if (k !~ /^(mem|path|reg|pair|layer|sizes|ranks)$/)
			perr(where, "rule " name ": unknown key '" k "'; accepted: mem, path, reg, pair, layer, sizes, ranks")
		if (k == "mem") check_list(where, "mem", v, "host,pinned,device")
		if (k == "layer") check_list(where, "layer", v, "mpi,verbs,local")
		if (k == "sizes") {
			if (match(v, /^([^:,]*):([^:,]*)$/, m)) {
				lo = m[1] == "" ? 1 : size_parse(m[1])
				hi = m[2] == "" ? "inf" : size_parse(m[2])
				if (lo < 0 || hi < 0 || (hi != "inf" && lo > hi))
					perr(where, "rule " name ": sizes=" v ": expected MIN:MAX, MIN: (and up), :MAX or A,B,C with sizes like 8, 4K, 1MiB")
				v = lo ":" hi
			} else {
				if (sizes_expand(v, list) < 1)
					perr(where, "rule " name ": sizes=" v ": expected MIN:MAX, MIN: (and up), :MAX or A,B,C with sizes like 8, 4K, 1MiB")
				v = list[1]
				for (j = 2; j in list; j++)
					v = v "," list[j]
			}
		}
		F[k] = v
	}
	if (op ~ /^(>=|<=|>|<)$/) {
		if (!(column in NUMERIC))
			perr(where, "rule " name ": " op " needs a numeric column; '" column "' is text (use =, != or in)")
		if (thr == 0 || thr > 3)
			perr(where, "rule " name ": threshold: expected NUMBER [UNIT], PERCENT% of link or PERCENT% of staged")
		if (THR[1] ~ /^[0-9]+(\.[0-9]+)?%$/) {
			pct = substr(THR[1], 1, length(THR[1]) - 1) + 0
			target = THR[thr]
			if ((thr == 2 || (thr == 3 && THR[2] == "of")) && (target == "link" || target == "staged")) {
				kind = target
				value = pct
			} else
				perr(where, "rule " name ": a percentage must say of what: '" THR[1] " of link' or '" THR[1] " of staged'")
			if (kind == "link" && column !~ /_GBps$/)
				perr(where, "rule " name ": '% of link' compares a bandwidth column (bw_GBps, algbw_GBps, busbw_GBps) with the port rate")
			if (kind == "staged" && ("path" in F))
				perr(where, "rule " name ": '% of staged' compares the direct path with the staged one; drop path=")
			text = THR[1] (kind == "link" ? " of link rate" : " of staged")
		} else if (is_num(THR[1])) {
			kind = "abs"
			scale = 1
			if (thr == 2) {
				scale = unit_scale(column, THR[2])
				if (scale == 0)
					perr(where, "rule " name ": unit '" THR[2] "' does not fit " column (column_unit(column) != "" ? " (in " column_unit(column) ")" : " (a plain number)"))
			} else if (thr > 2)
				perr(where, "rule " name ": threshold: expected NUMBER [UNIT], got '" THR[1] " " THR[2] " " THR[3] "'")
			value = THR[1] * scale
			text = THR[1] (thr == 2 ? " " THR[2] : "")
		} else
			perr(where, "rule " name ": threshold '" THR[1] "': expected a number, or PERCENT% of link / of staged")
	} else if (op ~ /^(=|!=|in)$/) {
		if (column in NUMERIC)
			perr(where, "rule " name ": " op " compares text; '" column "' is numeric (use >=, <=, > or <)")
		if (thr != 1)
			perr(where, "rule " name ": " op " takes one value" (op == "in" ? " list, e.g. dmabuf,peermem" : ""))
		kind = "text"
		value = THR[1]
		text = THR[1]
	} else
		perr(where, "rule " name ": unknown operator '" op "'; accepted: >= <= > < = != in")
	filters = ""
	for (k in F)
		filters = filters (filters == "" ? "" : " ") k "=" F[k]
	RULE_BENCH[name] = bench
	print "rule", where, name, bench, column, op, kind, value, text, filters
}

BEGIN {
	FS = "\t"
	OFS = "\t"
	PROCINFO["sorted_in"] = "@ind_str_asc"
	gdrb_schema()
	# The binaries' own default sizes; the sweep passes them explicitly (it must know them).
	D_SIZES = "8:1G"; D_TIME = ""; D_ITERS = ""; D_VALIDATE = ""
	if (profile == "")
		perr("profile.awk", "no profile given")
	if ((getline probe < profile) < 0)
		perr(profile, "cannot read this profile")
	close(profile)
	parse_file(profile, 0)
	# A rule may only check what the profile runs: a misspelt benchmark is an error, not a silent pass.
	for (name in RULE_BENCH)
		if (!(RULE_BENCH[name] in BENCHES))
			perr(RULES[name], "rule " name ": benchmark '" RULE_BENCH[name] "' is not run by this profile; its run lines give: " bench_list())
}

function bench_list(    b, s) {
	PROCINFO["sorted_in"] = "@ind_str_asc"
	s = ""
	for (b in BENCHES)
		s = s (s == "" ? "" : ", ") b
	return s == "" ? "(no run lines)" : s
}
