#!/bin/bash
# Ctrl-C in the middle of a sweep: the sweep stops the running benchmark (launcher and ranks),
# exits 130, and leaves a results.csv with every row measured so far and no half-written
# row; meta.json and the summary say it was interrupted. The CSV checker is shown to catch a
# half-written row.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"
need_mpi

sweep=("$SCRIPTS/gdrb" sweep)
header=$(head -n 1 "$DATA/good-run/results.csv")

# wait_for COND_CMD...: poll up to 30 s.
wait_for() {
	local t
	for ((t = 0; t < 300; t++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
lines_at_least() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# --- the real MPI benchmarks, Ctrl-C as a terminal sends it (to the foreground process group) --
cat >"$WORK/slow.profile" <<'PROFILE'
sizes 8:4M
time 0.3
run gdrb_mpi_latency mem=host
run gdrb_mpi_bw      mem=host
PROFILE
# sigint_default CMD...: CMD with SIGINT at its default, even where this test was started with it
# ignored (nohup, a background job), which a shell cannot undo and the sweep rightly keeps. For
# "sigint_default CMD... &" only: it execs, so that $! is the sweep itself.
sigint_default() {
	exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
set -m # the sweep gets a process group of its own
sigint_default "${sweep[@]}" --profile "$WORK/slow.profile" --bin-dir "$top_builddir" --out "$WORK/run" >"$WORK/run.out" 2>"$WORK/run.err" &
pid=$!
set +m
part=$WORK/run/logs/01-mpi_latency-host.csv
wait_for lines_at_least "$part" 4 || { kill -TERM -- "-$pid"; cat "$WORK/run.err"; fail "the first benchmark wrote no rows in 30 s"; }
measured=$(($(wc -l <"$part") - 1))
start=$SECONDS
kill -INT -- "-$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/run.err"; fail "interrupted sweep exited $rc, expected 130"; }
[ $((SECONDS - start)) -le 15 ] || fail "the sweep took $((SECONDS - start)) s to stop"
csv=$WORK/run/results.csv
csv_check -v status=ok "$csv" || fail "after Ctrl-C, results.csv is not complete and valid"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -ge "$measured" ] && [ "$rows" -lt 20 ] || { cat "$csv"; fail "expected the $measured+ rows measured before Ctrl-C, got $rows"; }
[ ! -e "$part" ] && [ ! -e "$csv.tmp" ] || fail "partial files left behind"
grep -q 'interrupted by SIGINT: .*results.csv keeps every row measured so far' "$WORK/run.err" || fail "no word about the interruption"
[ "$(json_get "$WORK/run/meta.json" status)" = interrupted ] && [ "$(json_get "$WORK/run/meta.json" exit_status)" = 130 ] ||
	fail "meta.json does not say interrupted"
[ "$(json_get "$WORK/run/meta.json" steps.0.status)" = interrupted ] || fail "meta.json: the running step is not 'interrupted'"
json_get "$WORK/run/meta.json" skipped.0.reason | grep -q 'not run: the sweep was interrupted' || fail "meta.json: the step not run"
grep -q 'This run was interrupted by SIGINT' "$WORK/run/summary.md" || fail "summary.md does not say interrupted"
sleep 1
left=$(pids_matching "$WORK/run/")
[ -z "$left" ] || {
	for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done
	fail "benchmark processes survive the interruption"
}
pass "Ctrl-C (SIGINT to the process group): exit 130 within 15 s, $rows complete rows, no process left"

# --- a row half written when Ctrl-C comes: it is dropped, never copied ---------------------
mkdir "$WORK/bin"
cat >"$WORK/bin/gdrb_fake_half" <<FAKE
#!/bin/bash
for a; do [ "\$a" = --describe ] && exec cat "\$0.json"; done
while [ \$# -gt 0 ]; do [ "\$1" = --csv ] && csv=\$2; shift; done
echo '$header' >>"\$csv"
echo "fake_half,local,host,direct,host,,,,,all,8,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,,,1,1,,,,,,50.0,,ok,0,ok,,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," >>"\$csv"
printf 'fake_half,local,host,direct,host,,,,,all,65536,10,1.0' >>"\$csv"
while :; do sleep 0.1; done
FAKE
chmod +x "$WORK/bin/gdrb_fake_half"
fake_describe "$WORK/bin/gdrb_fake_half"
printf 'sizes 8,64K\nrun gdrb_fake_half launch=local\nrun gdrb_mpi_bw mem=host\n' >"$WORK/half.profile"

# The checker must catch what this test is about: a CSV whose last row is cut.
printf '%s\n%s\n%s' "$header" \
	"fake_half,local,host,direct,host,,,,,all,8,10,1.000,1.000,1.000,1.000,1.000,1.000,0.000,0.008000,,,1,1,,,,,,50.0,,ok,0,ok,,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," \
	"fake_half,local,host,direct,host,,,,,all,65536,10,1.0" >"$WORK/cut.csv"
! csv_check "$WORK/cut.csv" >/dev/null || fail "csv_check accepts a half-written row"

set -m
sigint_default "${sweep[@]}" --profile "$WORK/half.profile" --bin-dir "$WORK/bin" --bin-dir "$top_builddir" --out "$WORK/half" \
	>"$WORK/half.out" 2>"$WORK/half.err" &
pid=$!
set +m
part=$WORK/half/logs/01-fake_half-host.csv
wait_for grep -qs ',65536,10,1.0$' "$part" || { kill -TERM -- "-$pid"; fail "the fake benchmark did not start"; }
kill -INT "$pid" # this time to the sweep alone, as 'kill -INT PID' from another shell does
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || { cat "$WORK/half.err"; fail "interrupted sweep exited $rc, expected 130"; }
csv_check "$WORK/half/results.csv" || fail "results.csv holds a half-written row"
[ "$(wc -l <"$WORK/half/results.csv")" -eq 2 ] || { cat "$WORK/half/results.csv"; fail "expected the header and the one complete row"; }
[ "$(json_get "$WORK/half/meta.json" steps.0.dropped)" = 1 ] || fail "meta.json: the dropped row is not counted"
grep -q 'gdrb_fake_half mem=host: interrupted, 1 row, 1 incomplete rows dropped' "$WORK/half.err" || { cat "$WORK/half.err"; fail "the dropped row is not reported"; }
! grep -q '^mpi_bw' "$WORK/half/results.csv" || fail "the sweep went on after Ctrl-C"
pass "a row half written at Ctrl-C is dropped; the complete one is kept; nothing runs after"
