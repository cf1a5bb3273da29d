#!/bin/bash
# The kernel's SIOCETHTOOL path of common/sysinfo/ethtool.c against a real netdev with driver
# statistics: a veth pair in a network namespace of its own (with its own sysfs), where
# test_ethtool's kernel case reads every netdev there (lo: none, said so; the veth: its
# statistics, none of which gdrbench reads). Skipped without root or unshare.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

prog=$top_builddir/tests/unit/test_ethtool
[ -x "$prog" ] || skip "tests/unit/test_ethtool is not built"
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null || skip "needs root, unshare and ip"
unshare --net --mount true 2>/dev/null || skip "unshare --net --mount is refused here"
rc=0
unshare --net --mount sh -c 'ip link add gdrbveth0 type veth peer name gdrbveth1 && mount -t sysfs sysfs /sys &&
	exec "$1"' sh "$prog" >"$WORK/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/out"; fail "test_ethtool in a namespace with a veth: exit $rc"; }
grep -q '^# lo: 0 ethtool statistics$' "$WORK/out" && grep -q '^# gdrbveth0: the kernel.s ioctl gave [1-9][0-9]* statistics' "$WORK/out" ||
	{ cat "$WORK/out"; fail "the veth's or lo's statistics were not read through the kernel"; }
pass "SIOCETHTOOL on a veth: $(grep -o 'gave [0-9]* statistics' "$WORK/out"), none gdrbench reads; lo: none (said so)"
