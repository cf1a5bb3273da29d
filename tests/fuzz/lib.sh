# shellcheck shell=bash
# The fuzz tests' runner (sourced by tests/fuzz/TARGET.sh): replay the target's committed
# seeds and regression corpus, then fuzz it for GDRB_FUZZ_TIME seconds where its fuzzer is
# here. A crash fails the test; the input is kept in tests/fuzz/found/TARGET/ of the build
# tree, for tests/fuzz/corpus/TARGET/regress/ once it is fixed (docs/testing.md, "Fuzzing").
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

fuzz_dir=$top_srcdir/tests/fuzz
fuzz_time=${GDRB_FUZZ_TIME:-20}
case $fuzz_time in '' | *[!0-9]*) fail "GDRB_FUZZ_TIME='$fuzz_time': expected whole seconds" ;; esac

# corpus_of TARGET: the committed inputs replayed on every run.
corpus_of() {
	local d
	for d in seeds regress; do
		[ -d "$fuzz_dir/corpus/$1/$d" ] && printf '%s\n' "$fuzz_dir/corpus/$1/$d"
	done
}

# replayed TARGET LOG: the count of inputs replayed, from LOG's last line.
replayed() {
	sed -n 's/^replayed \([0-9]*\) inputs.*/\1/p' "$2" | tail -n 1
}

# fuzz_found TARGET REPLAY...: replay what the fuzzer saved (the contract's message or the
# sanitizer's report: libFuzzer closed the harness's stderr), show it, then fail.
fuzz_found() {
	local target=$1 f
	shift
	for f in "$found"/*; do
		[ -f "$f" ] || continue
		echo "== the input: $f ($(wc -c <"$f") bytes), first bytes:"
		od -A d -c "$f" | head -n 8
		echo "== replayed:"
		"$@" "$f" 2>&1 | tail -n 30
	done
	fail "$target: the fuzzer found the crash above; fix it, then commit the input to tests/fuzz/corpus/$target/regress/"
}

# fuzz_run TARGET REPLAY -- CMD...: CMD (a libFuzzer command line) for fuzz_time seconds over a
# working corpus (GDRB_FUZZ_CORPUS/TARGET to keep it, else a temporary one) and the committed
# inputs; REPLAY (a command line) replays a crash it finds.
fuzz_run() {
	local target=$1 work again=()
	shift
	while [ "$1" != -- ]; do
		again+=("$1")
		shift
	done
	shift
	work=${GDRB_FUZZ_CORPUS:+$GDRB_FUZZ_CORPUS/$target}
	work=${work:-$WORK/corpus}
	found=$top_builddir/tests/fuzz/found/$target
	mkdir -p "$work" "$found"
	rm -f "$found"/*
	# -error_exitcode: libFuzzer's default, 77, is a SKIP to Automake. An input that takes
	# over -timeout seconds (generous: loaded CI machines) and a process over -rss_limit_mb
	# are crashes too.
	# shellcheck disable=SC2046
	timeout -k 10 $((fuzz_time + 300)) "$@" -max_total_time="$fuzz_time" -timeout=30 \
		-rss_limit_mb=2048 -error_exitcode=1 -print_final_stats=1 \
		-artifact_prefix="$found/" "$work" $(corpus_of "$target") </dev/null >"$WORK/fuzz.log" 2>&1
	local rc=$?
	tail -n 40 "$WORK/fuzz.log"
	[ "$rc" -eq 0 ] || fuzz_found "$target" "${again[@]}"
	pass "$target: fuzzed ${fuzz_time}s: $(grep -o 'stat::number_of_executed_units: *[0-9]*' \
		"$WORK/fuzz.log" | grep -o '[0-9]*$') inputs, $(find "$work" -type f | wc -l) in the corpus, no crash"
}

# Whether to fuzz after the replay: not in the sanitizer pass (the plain pass fuzzes, and
# the sanitizer build has no fuzzers), not with GDRB_FUZZ_TIME=0.
fuzz_wanted() {
	if [ "${GDRB_SANITIZE:-0}" = 1 ]; then
		pass "$1: replayed $2 inputs; the sanitizer pass replays only (the plain pass fuzzes)"
		exit 0
	fi
	if [ "$fuzz_time" -eq 0 ]; then
		pass "$1: replayed $2 inputs; GDRB_FUZZ_TIME=0: not fuzzed"
		exit 0
	fi
}

# fuzz_c TARGET: tests/fuzz/fuzz_TARGET.c through its replay program, then its fuzzer.
fuzz_c() {
	local target=$1 replay=$top_builddir/tests/fuzz/replay_$1 fuzzer=$top_builddir/tests/fuzz/fuzz_$1 n
	[ -x "$replay" ] || fail "$replay is not built"
	# shellcheck disable=SC2046
	"$replay" $(corpus_of "$target") >"$WORK/replay.log" 2>&1 || {
		cat "$WORK/replay.log"
		fail "$target: an input of the corpus crashes the harness (above: the last 'replay:' line names it)"
	}
	n=$(replayed "$target" "$WORK/replay.log")
	fuzz_wanted "$target" "$n"
	[ -x "$fuzzer" ] || skip "$target: replayed $n inputs; not fuzzed: configure found no clang with libFuzzer (FUZZ_CC)"
	# -close_fd_mask=3: the option parser's lines (--help, errors) are not kept; a crash is
	# replayed with them.
	fuzz_run "$target" "$replay" -- "$fuzzer" -close_fd_mask=3
}

# fuzz_python: a Python 3.8+ with atheris: GDRB_FUZZ_PYTHON, python3, or the virtual
# environment scripts/install-deps makes where python3 has none.
fuzz_python() {
	local py venv=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/gdrbench/atheris
	for py in ${GDRB_FUZZ_PYTHON:-} python3 "$venv/bin/python3"; do
		command -v "$py" >/dev/null 2>&1 && "$py" -c 'import atheris' >/dev/null 2>&1 &&
			{ printf '%s\n' "$py"; return 0; }
	done
	return 1
}

# fuzz_py TARGET: tests/fuzz/fuzz_TARGET.py, replayed by plain python3, then fuzzed by atheris.
fuzz_py() {
	local target=$1 harness=$fuzz_dir/fuzz_$1.py n py
	command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
	python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "python3 is older than 3.8"
	export PYTHONDONTWRITEBYTECODE=1
	# The contract catches its faults: an exception that is not Stop, a Stop of a status the
	# reader does not document (a Stop's message is one line by construction: test_common).
	printf 'x' >"$WORK/not-a-number"
	printf 'stop' >"$WORK/stop"
	for f in not-a-number stop; do
		! python3 -c '
import sys
sys.path.insert(0, sys.argv.pop(1))
import fuzzing
from gdrbtool.common import Stop
def planted(data):
    if data == b"stop":
        raise Stop(5, "an undocumented status")
    int(data)
fuzzing.main(fuzzing.check(planted, (2,)))' "$fuzz_dir" --replay "$WORK/$f" >"$WORK/planted.log" 2>&1 ||
			fail "the fuzz contract passes a planted fault ($f): $(cat "$WORK/planted.log")"
	done
	# shellcheck disable=SC2046
	python3 "$harness" --replay $(corpus_of "$target") >"$WORK/replay.log" 2>&1 || {
		cat "$WORK/replay.log"
		fail "$target: an input of the corpus breaks the contract (above: CRASH names it)"
	}
	n=$(replayed "$target" "$WORK/replay.log")
	fuzz_wanted "$target" "$n"
	py=$(fuzz_python) || skip "$target: replayed $n inputs; not fuzzed: no atheris for python3 (scripts/install-deps installs it)"
	fuzz_run "$target" python3 "$harness" --replay -- "$py" "$harness"
}
