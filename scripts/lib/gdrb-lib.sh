# shellcheck shell=bash
# gdrb-lib.sh: what gdrb-sweep, gdrb-plot, gdrb-accept and gdrb-report share (sourced).
# The script sets prog (its name, for messages) before sourcing this file.
: "${prog:=gdrbench}"

GDRB_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GDRB_LIB=$GDRB_SCRIPTS/lib
GDRB_PROFILES=$GDRB_SCRIPTS/profiles

# Bad usage or input: one line, exit 2. A failure: one line, exit 1.
usage_error() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 2
}
die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}
say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

# Print the comment block at the top of the calling script (its help).
print_help() {
	sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//p}' "$0"
}

# The awk programs need gawk (RT, match() with arrays, asort, strftime).
need_gawk() {
	command -v gawk >/dev/null 2>&1 || die "gawk not found: install gawk (scripts/install-deps does)"
}

# gdrb_awk ARGS...: gawk with the shared functions (schema, CSV reader, sizes) loaded.
gdrb_awk() {
	gawk -f "$GDRB_LIB/gdrb.awk" "$@"
}

# results_csv DIR: the results.csv of a results directory (or DIR itself when it is a
# file); exit 2 with one line when there is none. The header is checked by the awk reader.
results_csv() {
	local dir=$1 csv
	[[ -n $dir ]] || usage_error "expected a results directory (results/<date>-<label>/); see --help"
	if [[ -f $dir ]]; then
		csv=$dir
	elif [[ -d $dir ]]; then
		csv=${dir%/}/results.csv
	else
		usage_error "$dir: no such results directory"
	fi
	[[ -f $csv ]] || usage_error "$dir: no results.csv in this directory; expected a gdrb-sweep results directory"
	[[ -s $csv ]] || usage_error "$csv:1: empty file; expected the header of the CSV schema (results/README.md)"
	printf '%s\n' "$csv"
}

# resolve_profile NAME|FILE: the profile's file. A name without '/' is looked up among the
# shipped profiles when no such file exists in the current directory.
resolve_profile() {
	local p=$1 shipped
	if [[ -f $p ]]; then
		printf '%s\n' "$p"
	elif [[ $p != */* && -f $GDRB_PROFILES/${p%.profile}.profile ]]; then
		printf '%s\n' "$GDRB_PROFILES/${p%.profile}.profile"
	else
		shipped=$(cd "$GDRB_PROFILES" 2>/dev/null && ls -- *.profile 2>/dev/null | sed 's/\.profile$//' | paste -sd, - | sed 's/,/, /g')
		usage_error "$p: no such profile; expected a file or a shipped profile: ${shipped:-none}"
	fi
}

# parse_profile FILE OUT: check the profile and write its records to OUT (exit 2 on errors).
parse_profile() {
	gdrb_awk -v profile="$1" -v profiles_dir="$GDRB_PROFILES" -f "$GDRB_LIB/profile.awk" >"$2" ||
		exit 2
}

# duration SECONDS: "41 s" or "3 min".
duration() {
	if (($1 < 90)); then
		printf '%d s' "$1"
	else
		printf '%d min' $((($1 + 30) / 60))
	fi
}

# js TEXT: TEXT as a JSON string, or null when empty. jn TEXT: a JSON number, or null.
js() {
	local s=$1
	if [[ -z $s ]]; then
		printf 'null'
		return
	fi
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/ }
	s=${s//$'\n'/ }
	s=${s//$'\r'/}
	printf '"%s"' "$s"
}
jn() {
	if [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then printf '%s' "$1"; else printf 'null'; fi
}

# cuda_toolkit_version: the CUDA Toolkit's version from nvcc (on PATH, else under CUDA_HOME or
# /usr/local/cuda), e.g. 13.0.48; nothing where there is none.
cuda_toolkit_version() {
	local nvcc version
	for nvcc in "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"; do
		[[ -n $nvcc && -x $nvcc ]] || continue
		version=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
		[[ -n $version ]] && { printf '%s' "$version"; return; }
	done
}

# shell_join WORDS...: one command line that a shell reads back as WORDS (quoted where needed).
shell_join() {
	local w out=
	for w in "$@"; do
		if [[ $w =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then
			out+=" $w"
		else
			out+=" '${w//\'/\'\\\'\'}'"
		fi
	done
	printf '%s' "${out# }"
}
