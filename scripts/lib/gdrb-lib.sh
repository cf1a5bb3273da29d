# shellcheck shell=bash
# gdrb-lib.sh: what the bash scripts of measure/ and lib/node-info share (sourced); scripts/gdrb
# has its own, in Python (lib/gdrbtool/common.py). The script sets prog (its name, for
# messages) before sourcing this file.
: "${prog:=gdrbench}"

GDRB_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GDRB_LIB=$GDRB_SCRIPTS/lib

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
# Not possible on this machine (no GPU, no MPI): one line, exit 77.
unsupported() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 77
}
# need_value OPTION VALUE WHAT: bad usage unless the option has a value.
need_value() {
	[[ -n ${2:-} ]] || usage_error "$1: expected $3"
}

# Print the comment block at the top of the calling script (its help).
print_help() {
	sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//p}' "$0"
}

# gdrbtool MODULE ARGS...: python3 -m gdrbtool.MODULE ARGS (the Python package in lib/).
gdrbtool() {
	PYTHONPATH=$GDRB_LIB${PYTHONPATH:+:$PYTHONPATH} python3 -m "gdrbtool.$1" "${@:2}"
}

# Scripts whose awk programs need gawk (match() with arrays, asort, strftime) call this first.
need_gawk() {
	command -v gawk >/dev/null 2>&1 || die "gawk not found: install gawk (scripts/install-deps does)"
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
