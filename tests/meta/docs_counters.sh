#!/bin/bash
# docs/counters.md documents the counters' one classification and the counter file's one schema:
# its table of counters names every counter of common/sysinfo/counter_classes.def, each once,
# with the same class and unit, and no other; its table of a RoCE netdev's ethtool statistics
# does the same for common/sysinfo/ethtool_classes.def; its table of the counter file's columns names the
# columns of common/core/counters_schema.def in their order, with their types. Planted faults
# show the check can fail: a class changed, a row dropped and a column moved in copies of the
# doc, a counter named twice in a copy of the table, an ethtool statistic's unit changed and one
# dropped from the doc.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
def=$top_srcdir/common/sysinfo/counter_classes.def
edef=$top_srcdir/common/sysinfo/ethtool_classes.def
schema=$top_srcdir/common/core/counters_schema.def
doc=$top_srcdir/docs/counters.md

# check DEF SCHEMA DOC [ETHTOOL_DEF]: prints what differs; exit 1 if anything does.
check() {
	awk '
		FNR == 1 { file++ }
		file == 1 && /^GDRB_COUNTER\(/ {
			s = $0; gsub(/^GDRB_COUNTER\(|\)$|[ ]/, "", s); split(s, f, ",")
			if (f[1] in def) { print "counter_classes.def names " f[1] " twice"; bad = 1 }
			def[f[1]] = tolower(f[2]) " " tolower(f[3]); ndef++
		}
		file == 4 && /^GDRB_ETHTOOL_COUNTER\(/ {
			s = $0; gsub(/^GDRB_ETHTOOL_COUNTER\(|\)$|[ ]/, "", s); split(s, f, ",")
			if (f[1] in edef) { print "ethtool_classes.def names " f[1] " twice"; bad = 1 }
			edef[f[1]] = tolower(f[2]) " " tolower(f[3]); nedef++
		}
		file == 3 && section == "## The ethtool statistics of a RoCE netdev" && /^\| `[A-Za-z0-9_]+` \| / {
			split($0, c, /[ ]*\|[ ]*/); name = c[2]; gsub(/`/, "", name)
			if (name in edoc) { print "the doc names ethtool " name " twice"; bad = 1 }
			edoc[name] = c[3] " " c[4]
		}
		file == 2 && /^GDRB_COUNTERS_COL\(/ {
			s = $0; gsub(/^GDRB_COUNTERS_COL\(|\)$|[ ]/, "", s); cols[++ncols] = s
		}
		file == 3 && /^## / { section = $0 }
		file == 3 && section == "## The classes" && /^\| `[A-Za-z0-9_]+` \| / {
			split($0, c, /[ ]*\|[ ]*/); name = c[2]; gsub(/`/, "", name)
			if (name in doc) { print "the doc names " name " twice"; bad = 1 }
			doc[name] = c[3] " " c[4]
		}
		file == 3 && section == "## The counter file" && /^\| `[a-z_]+` \| / {
			split($0, c, /[ ]*\|[ ]*/); name = c[2]; gsub(/`/, "", name); dcols[++ndcols] = name "," c[3]
		}
		END {
			for (n in def) {
				if (!(n in doc)) { print "the doc lacks " n; bad = 1 }
				else if (doc[n] != def[n]) { print n ": the doc says " doc[n] ", the table " def[n]; bad = 1 }
			}
			for (n in doc) if (!(n in def)) { print "the doc names " n ", the table does not"; bad = 1 }
			for (n in edef) {
				if (!(n in edoc)) { print "the doc lacks ethtool " n; bad = 1 }
				else if (edoc[n] != edef[n]) { print "ethtool " n ": the doc says " edoc[n] ", the table " edef[n]; bad = 1 }
			}
			for (n in edoc) if (!(n in edef)) { print "the doc names ethtool " n ", the table does not"; bad = 1 }
			if (nedef < 25) { print "read too little: " nedef " ethtool statistics"; bad = 1 }
			if (ncols != ndcols) { print "the doc has " ndcols " columns, the schema " ncols; bad = 1 }
			for (i = 1; i <= ncols; i++) if (cols[i] != dcols[i]) { print "column " i ": schema " cols[i] ", doc " dcols[i]; bad = 1 }
			if (ndef < 90 || ncols < 14) { print "read too little: " ndef " counters, " ncols " columns"; bad = 1 }
			exit bad
		}' "$1" "$2" "$3" "${4:-$edef}"
}

planted() { # WHAT PATTERN FILE...: the check fails on the planted copies, saying PATTERN
	local what=$1 pattern=$2 out rc=0
	shift 2
	out=$(check "$@") || rc=$?
	[ "$rc" = 1 ] && grep -q -- "$pattern" <<<"$out" || { echo "$out"; fail "the check missed $what"; }
	pass "planted $what: caught ($(head -n 1 <<<"$out"))"
}

sed 's/^| `symbol_error` | error | events |/| `symbol_error` | other | events |/' "$doc" >"$WORK/class.md"
planted "a class changed" "symbol_error: the doc says other events" "$def" "$schema" "$WORK/class.md"
grep -v '^| `completer_retry_err` |' "$doc" >"$WORK/row.md"
planted "a row dropped" "the doc lacks completer_retry_err" "$def" "$schema" "$WORK/row.md"
awk '/^\| `before` \|/ { held = $0; next } { print } /^\| `after` \|/ { print held }' "$doc" >"$WORK/col.md"
planted "two columns swapped" "column 11: schema before,integer, doc after,integer" "$def" "$schema" "$WORK/col.md"
cat "$def" <(echo 'GDRB_COUNTER(sent_pkts, ERROR, PACKETS)') >"$WORK/twice.def"
planted "a counter named twice" "counter_classes.def names sent_pkts twice" "$WORK/twice.def" "$schema" "$doc"

sed 's/^| `rx_prioN_pause_duration` | congestion | us |/| `rx_prioN_pause_duration` | congestion | events |/' "$doc" >"$WORK/unit.md"
planted "an ethtool statistic's unit changed" "ethtool rx_prioN_pause_duration: the doc says congestion events" \
	"$def" "$schema" "$WORK/unit.md"
grep -v '^| `rx_discards_phy` |' "$doc" >"$WORK/erow.md"
planted "an ethtool row dropped" "the doc lacks ethtool rx_discards_phy" "$def" "$schema" "$WORK/erow.md"

out=$(check "$def" "$schema" "$doc") || { echo "$out"; fail "docs/counters.md and the definitions differ (above)"; }
pass "docs/counters.md: every counter of counter_classes.def and statistic of ethtool_classes.def with its class and unit, every column of counters_schema.def in order"
