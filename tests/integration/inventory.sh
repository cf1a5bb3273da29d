#!/bin/bash
# gdrb inventory on the doctor's reports of sysfs fixtures of an HGX H200 node: the healthy node
# matches --sku h200; a GPU trained to x8, a GPU gone and a NIC gone each fail (exit 1) naming
# the part that differs; the healthy node is not an H100 (the model is read); an unknown SKU
# is one line and exit 2.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"

doctor=$top_builddir/bench/gdrb_doctor
gdrb=$top_srcdir/scripts/gdrb
fx=$top_builddir/tests/fixtures
[ -x "$doctor" ] || fail "gdrb_doctor not built"
[ -d "$fx/hgx-h200/sys" ] || fail "no fixture trees in $fx (make check generates them)"

# expect FIXTURE SKU STATUS REGEX: the doctor's report of FIXTURE judged against SKU.
expect() {
	local rc=0
	"$doctor" --sysfs-root "$fx/$1/sys" --procfs-root "$fx/$1/proc" --json >"$WORK/$1.json" 2>/dev/null || true
	"$gdrb" inventory --sku "$2" "$WORK/$1.json" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = "$3" ] || fail "$1 --sku $2: exit $rc, expected $3: $(cat "$WORK/out" "$WORK/err")"
	grep -Eq "$4" "$WORK/out" || fail "$1 --sku $2: no line matching '$4' in: $(cat "$WORK/out")"
	pass "$1 --sku $2 -> $3: $(grep -E "$4" "$WORK/out" | head -1)"
}

expect hgx-h200 h200 0 '^inventory h200: PASS'
expect hgx-h200-downtrained h200 1 '^FAIL +gpu 0000:34:00\.0 +PCIe Gen5 x8, expected x16: down-trained width'
expect hgx-h200-nogpu h200 1 '^FAIL +gpus +7 GPUs of HGX H200 \(H200 SXM 141GB\), expected 8'
expect hgx-h200-nonic h200 1 '^FAIL +nics +7 RDMA NICs with a port ACTIVE at 400 Gb/s or more, expected 8'
expect hgx-h200 h100 1 '^FAIL +gpu 0000:13:00\.0 +PCI device 0x2335, not a HGX H100 GPU'
expect dgx8 h100 0 '^inventory h100: PASS'

rc=0
"$gdrb" inventory --sku h300 "$WORK/hgx-h200.json" >"$WORK/out" 2>"$WORK/err" || rc=$?
if [ "$rc" != 2 ] || [ -s "$WORK/out" ] || [ "$(wc -l <"$WORK/err")" != 1 ]; then
	fail "--sku h300: exit $rc, expected 2 and one line: $(cat "$WORK/err")"
fi
grep -q "unknown SKU 'h300'; known: a100, b200, h100, h200" "$WORK/err" || fail "--sku h300: $(cat "$WORK/err")"
pass "--sku h300 -> 2: $(cat "$WORK/err")"
