# shellcheck shell=bash
# Helpers for the tests of scripts/gdrb-* (sourced after lib.sh).

: "${top_srcdir:?source lib.sh first}"
SCRIPTS=$top_srcdir/scripts
# shellcheck disable=SC2034 # used by the tests that source this file
DATA=$top_srcdir/tests/support/data
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"


# png_ok FILE: the PNG signature and more than a trivial size (an axis and a curve).
png_ok() {
	[ -f "$1" ] || return 1
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	[ "$(wc -c <"$1")" -gt 10000 ]
}

# json_ok FILE: parses as JSON (with the project's own reader, and jq where installed).
json_ok() {
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from gdrbtool.common import Json; Json.load(sys.argv[2])' \
		"$SCRIPTS/lib" "$1" 2>/dev/null || return 1
	if command -v jq >/dev/null 2>&1; then
		jq -e . "$1" >/dev/null || return 1
	fi
}

# json_get FILE PATH: one value of a JSON file as written (numbers as in the file, null, true,
# false; nothing where there is none), PATH like nodes.0.hostname.
json_get() {
	python3 - "$SCRIPTS/lib" "$1" "$2" <<'PY' 2>/dev/null
import sys
sys.path.insert(0, sys.argv[1])
from gdrbtool.common import Json
j = Json.load(sys.argv[2])
path = []
for key in sys.argv[3].split("."):
    path.append(int(key) if key.isdigit() and isinstance(j.get(*path), list) else key)
if j.text(*path) or j.get(*path) == "":
    print(j.text(*path))
PY
}

# fake_describe BIN [BENCH]: BIN.json, what a fake local benchmark on host memory says it is
# (--describe, docs/describe.md): layer local, one direct path whose unwritten rows carry reg
# none. The fake answers with it: for a; do [ "$a" = --describe ] && exec cat "$0.json"; done
fake_describe() {
	local name bench
	name=$(basename "$1")
	bench=${2:-${name#gdrb_}}
	cat >"$1.json" <<JSON
{"describe_format": 1, "binary": "$name", "package": "gdrbench", "version": "0.1.0", "csv_schema": 4,
 "benchmark": "$bench", "bidir_benchmark": null, "layer": "local", "summary": "fake", "metric": "latency",
 "traffic": "local", "all_pairs": false, "needs_gpu": false, "default_mem": "host",
 "mem_kinds": [{"name": "host", "opens_gpu": false, "needs_gpu": false, "on_gpu": false, "staged": false,
                "paths": [{"path": "direct", "label": "direct", "reg": "none", "staged": false, "pipelined": false}]}],
 "options": []}
JSON
}

# fake_bench BIN BENCH BODY: BIN, a fake local benchmark that reads --csv, --mem and --label
# into csv, mem and label as the binaries do, answers --version and --describe (fake_describe
# BIN BENCH), then runs the bash of BODY.
fake_bench() {
	fake_describe "$1" "$2"
	{
		printf '#!/bin/bash\ncsv= mem=host label=\nwhile [ $# -gt 0 ]; do\n\tcase $1 in\n'
		printf '\t--csv) csv=$2; shift ;;\n\t--mem) mem=$2; shift ;;\n\t--label) label=$2; shift ;;\n'
		printf '\t--version) echo "%s (gdrbench) 0.1.0"; exit 0 ;;\n' "$(basename "$1")"
		printf '\t--describe) exec cat "$0.json" ;;\n\tesac\n\tshift\ndone\n'
		printf '%s\n' "$3"
	} >"$1"
	chmod +x "$1"
}
