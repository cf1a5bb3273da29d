#!/bin/bash
# The verbs benchmarks on a machine without an RDMA device: every binary
# exits 77 with one line; bad verbs options exit 2 with one line naming the
# option, before anything is measured. (On a machine with an RDMA device the
# first part is skipped; tests/cluster/vm_verbs.sh runs them for real.)
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi
benches="write_lat write_bw read_lat read_bw send_lat send_bw"
for b in $benches; do
	[ -x "$top_builddir/bench/gdrb_$b" ] || skip "verbs benchmarks not built (no libibverbs at configure time)"
done

if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	for b in $benches; do
		rc=0
		mpi 2 "$top_builddir/bench/gdrb_$b" -m 8 --csv "$WORK/$b.csv" >"$WORK/out" 2>"$WORK/err" || rc=$?
		[ "$rc" -eq 77 ] || { cat "$WORK/err"; fail "gdrb_$b without an RDMA device exited $rc, expected 77"; }
		[ "$(our_lines "gdrb_$b" "$WORK/err")" -eq 1 ] &&
			grep -qx "gdrb_$b: no RDMA device found; run gdrb_doctor" "$WORK/err" ||
			{ cat "$WORK/err"; fail "gdrb_$b: not the one line 'no RDMA device found; run gdrb_doctor'"; }
		[ ! -s "$WORK/out" ] || { cat "$WORK/out"; fail "gdrb_$b printed results without a device"; }
		[ ! -s "$WORK/$b.csv" ] || [ "$(wc -l <"$WORK/$b.csv")" -le 1 ] || fail "gdrb_$b wrote CSV rows"
	done
	pass "every verbs binary: exit 77, one line: no RDMA device found; run gdrb_doctor"
else
	echo "RDMA devices present: the exit-77 check does not apply here"
fi

# expect_usage BENCH PATTERN ARGS...: refused while parsing, before MPI starts.
expect_usage() { expect_refused "$2" "$top_builddir/bench/gdrb_$1" "${@:3}"; }
expect_usage write_lat "--gid-index: expected an integer from 0 to 255" --gid-index 300
expect_usage write_bw "--ib-dev: expected NAME or NAME:PORT" --ib-dev :1
expect_usage write_bw "--ib-dev: expected NAME or NAME:PORT" --ib-dev mlx5_0:x
expect_usage read_bw "--mtu: expected 256, 512, 1024, 2048 or 4096" --mtu 1000
expect_usage send_bw "--reg: unknown registration 'gdr'; accepted: auto, dmabuf, peermem" --reg gdr
expect_usage send_bw "--qps: expected an integer from 1 to 64" --qps 0
expect_usage read_lat "--sl: expected an integer from 0 to 15" --sl 16
expect_usage write_lat "--bidir does not apply to gdrb_write_lat" -b
expect_usage write_lat "--completion: unknown mode 'event'; accepted: auto, poll, imm" --completion event
expect_usage write_lat "--completion poll: the CPU never polls GPU memory" --completion poll --mem device
expect_usage send_lat "--completion does not apply to gdrb_send_lat" --completion poll
expect_usage send_lat "--window does not apply to gdrb_send_lat" -W 4
expect_usage write_bw "--op does not apply" --op sum
"$top_builddir/bench/gdrb_write_bw" --help | grep -q -- "--no-relaxed-ordering" || fail "--help lacks the verbs options"
pass "--help lists the verbs options"
