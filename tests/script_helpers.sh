# shellcheck shell=bash
# Helpers for the tests of scripts/gdrb-* (sourced after lib.sh).

: "${top_srcdir:?source lib.sh first}"
SCRIPTS=$top_srcdir/scripts
# shellcheck disable=SC2034 # used by the tests that source this file
DATA=$top_srcdir/tests/data
command -v gawk >/dev/null 2>&1 || skip "gawk not installed"


# png_ok FILE: the PNG signature and more than a trivial size (an axis and a curve).
png_ok() {
	[ -f "$1" ] || return 1
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	[ "$(wc -c <"$1")" -gt 10000 ]
}

# json_ok FILE: parses as JSON (with the project's own reader, and jq where installed).
json_ok() {
	gawk -f "$SCRIPTS/lib/json.awk" -v f="$1" -e 'BEGIN { exit json_load(f, J) < 0 }' || return 1
	if command -v jq >/dev/null 2>&1; then
		jq -e . "$1" >/dev/null || return 1
	fi
}

# json_get FILE PATH: one value of a JSON file, PATH like nodes.0.hostname.
json_get() {
	gawk -f "$SCRIPTS/lib/json.awk" -v f="$1" -v p="$2" -e 'BEGIN { if (json_load(f, J) == 0) print J[p] }'
}
