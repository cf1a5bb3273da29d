#!/bin/bash
# Device memory. Without a usable GPU: exit 77 with the reason, never a crash,
# and nothing measured. With one: direct and staged side by side; the staged
# path validated; the direct path n/a with the reason when MPI is not CUDA-aware.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need_mpi

bin=$top_builddir/mpi/gdrb_mpi_latency
if ! have_gpu; then
	mpi 2 "$bin" -m 8 --mem device >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "--mem device without a GPU exited $rc, expected 77"; }
	grep -q "unsupported on this node: --mem device: " "$WORK/err" ||
		{ cat "$WORK/err"; fail "no reason given"; }
	[ "$(our_lines gdrb_mpi_latency "$WORK/err")" -eq 1 ] || fail "the reason is not one line"
	grep -qv '^#' "$WORK/out" && fail "something was measured"
	skip "no GPU here; --mem device exits 77 with: $(grep -m1 unsupported "$WORK/err")"
fi

csv=$WORK/dev.csv
for b in latency bw bibw; do
	mpi 2 "$top_builddir/mpi/gdrb_mpi_$b" -m 8,64K,4M -c -t 0.05 --mem device --csv "$csv" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/out" "$WORK/err"; fail "gdrb_mpi_$b --mem device"; }
	cat "$WORK/out"
	grep -q "^# GPU: .*PCI" "$WORK/out" || fail "header names no GPU"
	grep -q "^# path staged: " "$WORK/out" || fail "no staged path"
done
csv_check "$csv" || fail "schema"
[ "$(grep -c ',staged,staged,all,.*,ok,0,' "$csv")" -eq 9 ] || fail "staged rows not all ok"
if grep -q "CUDA-aware: no" "$WORK/out"; then
	[ "$(grep -c ',device,direct,mpi-cuda,all,.*,unsupported,0,' "$csv")" -eq 9 ] ||
		fail "direct rows of a non-CUDA-aware MPI must be unsupported"
fi
pass "device memory: staged path measured and validated"
