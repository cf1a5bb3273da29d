#!/bin/bash
# The soft-RoCE VM (tests/cluster/vm/rxe-vm.sh) for real: rxe0 is ACTIVE with a RoCE v2
# IPv4-mapped GID, Debian's perftest RDMA-writes over it, gdrb_mpi_latency runs
# on 2 ranks inside, the command's exit status comes back, and a link taken
# down mid-run (rxe-vm.sh --at) fails a running transfer.
# Skips (77) only where the VM cannot be had: no qemu, no kernel package.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

for tool in ibv_devinfo ib_write_bw; do
	command -v "$tool" >/dev/null 2>&1 ||
		skip "no $tool here (Debian: ibverbs-utils perftest; scripts/install-deps installs them)"
done
# The VM shows this machine's root read-only with an empty /tmp: the work
# directory is shared writable, and the build tree too where it lives in /tmp.
need_vm
mpi_in_vm=0
[ "${HAVE_MPI:-1}" = 1 ] && [ -x "$top_builddir/mpi/gdrb_mpi_latency" ] && mpi_in_vm=1

# --- One boot: device, perftest, MPI, then the link down under a transfer, and the exit status --
cat >"$WORK/smoke.sh" <<'EOF'
# Runs inside the VM: $1 is the shared work directory, $2 the build tree, $3 1 for MPI.
out=$1 builddir=$2 with_mpi=$3
# perftest's client gives up at once when its server is not listening yet.
wait_listen() {
	for _ in $(seq 1 100); do
		ss -ltn 2>/dev/null | grep -q ":$1 " && return 0
		sleep 0.2
	done
	return 1
}
ibv_devinfo -d rxe0 >"$out/devinfo" 2>&1
cat /sys/class/infiniband/rxe0/ports/1/gids/1 /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1 >"$out/gid1" 2>&1
# perftest calibrates its cycle counter against gettimeofday before it reports, and gives up
# ("Correlation coefficient r^2: ... < 0.9", "Can't produce a report", exit 1) when the VM's
# CPU is taken from it mid-calibration on a loaded host. That, and only that, is tried again
# (3 tries, each on its own port); each calibration failure is counted in bw-calib.
: >"$out/bw-calib"
for port in 18515 18517 18519; do
	ib_write_bw -d rxe0 -x 1 -s 4096 -n 200 -p "$port" >"$out/bw-server" 2>&1 &
	server=$!
	: >"$out/bw-client"
	wait_listen "$port" || echo "server not listening" >"$out/bw-client"
	ib_write_bw -d rxe0 -x 1 -s 4096 -n 200 -p "$port" 10.0.2.15 >>"$out/bw-client" 2>&1
	echo $? >"$out/bw-client.rc"
	wait "$server"
	echo $? >"$out/bw-server.rc"
	grep -qF 'Correlation coefficient r^2' "$out/bw-server" "$out/bw-client" || break
	echo "$port" >>"$out/bw-calib"
done
if [ "$with_mpi" = 1 ]; then
	mpirun -np 2 "$builddir/mpi/gdrb_mpi_latency" -m 8,4K -n 200 -t 0.05 -c \
		--csv "$out/vm.csv" >"$out/mpi.out" 2>"$out/mpi.err"
	echo $? >"$out/mpi.rc"
fi
# Last, the link goes down under a running transfer: the harness's fault injection (--at, below)
# takes eth0 down once fault-go is here and rxe0 has sent 2000 packets more (a fixed time could
# fire before the transfer starts on a loaded machine). A 30 s ib_write_bw that it cuts short.
: >"$out/fault-go"
ib_write_bw -d rxe0 -x 1 -s 4096 -D 30 -p 18516 >"$out/fault-server" 2>&1 &
wait_listen 18516
start=$(date +%s)
ib_write_bw -d rxe0 -x 1 -s 4096 -D 30 -p 18516 10.0.2.15 >"$out/fault-client" 2>&1
echo "$? $(($(date +%s) - start))" >"$out/fault.rc"
port=/sys/class/infiniband/rxe0/ports/1
cat "$port/state" "$port/hw_counters/link_downed" >"$out/fault-state"
exit 3
EOF
sent=/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts
link_down="until [ -e $WORK/fault-go ]; do sleep 0.2; done; base=\$(cat $sent);"
link_down+=" until [ \"\$(cat $sent)\" -gt \$((base + 2000)) ]; do sleep 0.2; done; ip link set eth0 down"
start=$(date +%s)
rc=0
bash "$vm" run -v --at 0 "$link_down" "${shares[@]}" -- bash "$WORK/smoke.sh" "$WORK" "$top_builddir" "$mpi_in_vm" \
	>"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
echo "VM run: $(($(date +%s) - start)) s"
[ "$rc" -eq 3 ] || { cat "$WORK/run.out" "$WORK/run.err"; fail "the VM run exited $rc, not the command's 3"; }
pass "the command's exit status came back from the VM"

{ grep -q 'PORT_ACTIVE' "$WORK/devinfo" && grep -q 'link_layer:.*Ethernet' "$WORK/devinfo"; } ||
	{ cat "$WORK/devinfo"; fail "rxe0 port 1 is not ACTIVE on Ethernet"; }
pass "ibv_devinfo: rxe0 port 1 ACTIVE, link layer Ethernet"
# 10.0.2.15 as an IPv4-mapped IPv6 address.
{ [ "$(head -n 1 "$WORK/gid1")" = 0000:0000:0000:0000:0000:ffff:0a00:020f ] &&
	grep -q 'RoCE v2' "$WORK/gid1"; } || { cat "$WORK/gid1"; fail "GID index 1 is not the RoCE v2 IPv4 GID"; }
pass "GID index 1: RoCE v2, ::ffff:10.0.2.15"

{ [ "$(cat "$WORK/bw-client.rc")" = 0 ] && [ "$(cat "$WORK/bw-server.rc")" = 0 ]; } ||
	{ cat "$WORK/bw-server" "$WORK/bw-client"; fail "ib_write_bw failed in the VM"; }
bw=$(awk '$1 == 4096 && $2 == 200 { print $4 }' "$WORK/bw-client")
awk -v bw="$bw" 'BEGIN { exit !(bw + 0 > 0) }' ||
	{ cat "$WORK/bw-client"; fail "ib_write_bw printed no bandwidth row"; }
calib=$(wc -l <"$WORK/bw-calib")
[ "$calib" -eq 0 ] || echo "perftest's clock calibration failed under load $calib time(s); tried again"
pass "ib_write_bw over rxe0, 4 KiB x 200: $bw MB/s"

if [ "$mpi_in_vm" = 1 ]; then
	[ "$(cat "$WORK/mpi.rc")" = 0 ] || { cat "$WORK/mpi.out" "$WORK/mpi.err"; fail "gdrb_mpi_latency failed in the VM"; }
	csv_check -v status=ok -v rows=2 -v ranks=2 "$WORK/vm.csv" || fail "CSV from the VM does not match the schema"
	pass "gdrb_mpi_latency, 2 ranks in the VM, validation on: 2 rows"
else
	echo "MPI binaries not built: gdrb_mpi_latency not run in the VM"
fi

# --- the link down under a running transfer (the same boot) --------------------------------
read -r client_rc client_s <"$WORK/fault.rc"
# What this test owns: the fault really happened while traffic ran.
{ grep -q DOWN "$WORK/fault-state" && [ "$(sed -n 2p "$WORK/fault-state")" -ge 1 ]; } ||
	{ cat "$WORK/fault-state"; fail "rxe0 port not DOWN, or link_downed not counted"; }
if [ "$client_rc" -ne 0 ]; then
	if grep -q 'Completion with error' "$WORK/fault-client"; then
		pass "link down mid-transfer: ib_write_bw got a completion error after $client_s s (exit $client_rc), rxe0 port DOWN"
	elif grep -qF 'Correlation coefficient r^2' "$WORK/fault-client" &&
		grep -qF "Can't produce a report" "$WORK/fault-client"; then
		# It missed the fault (below) and then failed its clock calibration under load: the
		# fault itself is shown above; perftest's outcome is not this test's to judge.
		pass "link down mid-transfer: rxe0 port DOWN; perftest reached its report and failed its clock calibration (exit $client_rc)"
	else
		cat "$WORK/fault-client"
		fail "ib_write_bw failed, but not with a completion error"
	fi
else
	# perftest's duration mode polls nothing once the link is gone between two of its
	# phases: it then reports 0 iterations and exits 0. That is perftest's blind spot
	# (gdrbench's verbs binaries must catch it through --timeout), not the harness's.
	grep -q '^ *4096 *0 ' "$WORK/fault-client" ||
		{ cat "$WORK/fault-client"; fail "ib_write_bw exited 0 with traffic after the link went down"; }
	pass "link down mid-transfer: rxe0 port DOWN; perftest missed it (0 iterations, exit 0 after $client_s s)"
fi
