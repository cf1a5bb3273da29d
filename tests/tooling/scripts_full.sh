#!/bin/bash
# Outputs that cannot be written are failures, said in one line, never claimed: gdrb-accept's
# verdict (on a full file system, and to a full device: printed, its file named), gdrb-plot's figures and gdrb-report's
# summary on a full file system, and a gdrb-sweep whose results fit but whose plots and report
# do not. A small tmpfs is the full disk (skip where it cannot be mounted: root is needed).
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"

mnt=$WORK/mnt
mkdir "$mnt"
mount -t tmpfs -o size=512k tmpfs "$mnt" 2>/dev/null || skip "cannot mount a tmpfs here (mount needs root)"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$WORK"' EXIT

# fill: take what is left of the tmpfs.
fill() { dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null; true; }
# one_line WHAT RC FILE REGEX: exit status 1, and FILE holds one line, matching REGEX.
one_line() {
	[ "$2" -eq 1 ] || { cat "$3"; fail "$1: exit $2, expected 1"; }
	[ "$(wc -l <"$3")" -eq 1 ] && grep -q -E -- "$4" "$3" || { cat "$3"; fail "$1: not one line matching '$4'"; }
}

# gdrb-accept: the verdict does not fit next to the results.
cp -r "$DATA/good-run" "$mnt/run"
fill
"$SCRIPTS/gdrb" accept "$mnt/run" ib-ndr400 >"$WORK/out" 2>"$WORK/err"
one_line "verdict on a full disk" $? "$WORK/err" "^$mnt/run/verdict.json: cannot write: No space left on device$"
# The verdict is still printed (what was judged is not lost), then the file it could not write.
grep -Eq '^(PASS|FAIL|NODATA|INVALID|SIMULATED): [0-9]+ rules' "$WORK/out" ||
	{ cat "$WORK/out"; fail "verdict on a full disk: no verdict printed"; }
[ -z "$(find "$mnt/run" -name 'verdict*')" ] || fail "verdict on a full disk: a verdict file is left: $(ls "$mnt/run")"
cmp -s "$DATA/good-run/results.csv" "$mnt/run/results.csv" || fail "verdict on a full disk: results.csv changed"
pass "gdrb-accept: a verdict that does not fit is printed, exit 1, one line naming the file, no file left, results kept"

# gdrb-accept --verdict to a full device: the device stays, the failure is said.
if mknod "$WORK/full" c 1 7 2>/dev/null; then
	rm -f "$mnt/filler"
	"$SCRIPTS/gdrb" accept --verdict "$WORK/full" "$mnt/run" ib-ndr400 >"$WORK/out" 2>"$WORK/err"
	one_line "--verdict to a full device" $? "$WORK/err" "^$WORK/full: cannot write: No space left on device$"
	[ -c "$WORK/full" ] || fail "--verdict to a full device: the device was replaced by a file"
	pass "gdrb-accept --verdict to a full device: exit 1, one line, the device left alone"
else
	echo "mknod not permitted: --verdict to a full device not checked"
fi

# gdrb-plot and gdrb-report: nothing half-written, one line each.
rm -rf "$mnt/run" "$mnt/filler"
cp -r "$DATA/bad-run" "$mnt/run"
fill
if command -v gnuplot >/dev/null 2>&1; then
	"$SCRIPTS/gdrb" plot "$mnt/run" >"$WORK/out" 2>"$WORK/err"
	one_line "plots on a full disk" $? "$WORK/err" "^$mnt/run/plots/.*: cannot write: No space left on device$"
	[ -z "$(find "$mnt/run/plots" -type f 2>/dev/null)" ] || fail "plots on a full disk: files left: $(find "$mnt/run/plots" -type f)"
	pass "gdrb-plot on a full disk: exit 1, one line, no file left"
fi
"$SCRIPTS/gdrb" report "$mnt/run" >"$WORK/out" 2>"$WORK/err"
one_line "report on a full disk" $? "$WORK/err" "^$mnt/run/(summary.md|report.html): cannot write: No space left on device$"
[ -z "$(find "$mnt/run" -name 'summary*' -o -name 'report*')" ] || fail "report on a full disk: files left: $(ls "$mnt/run")"
pass "gdrb-report on a full disk: exit 1, one line, no file left"

# gdrb-sweep: the results fit, the figures do not. The fake benchmark writes its rows, then
# leaves one page of the tmpfs free: enough to merge its rows and write meta.json (a page each,
# renamed over the old one), not for the figures. (Its report then fits: gdrb-report on a full
# disk is checked above, and the sweep's last line must name only files that are there.)
rm -rf "$mnt/run" "$mnt/filler"
mkdir "$WORK/bin"
fake_bench "$WORK/bin/gdrb_fake_ok" fake_bw "$(cat <<FAKE
[ -s "\$csv" ] || echo '$(head -n 1 "$DATA/good-run/results.csv")' >>"\$csv"
for size in 8 64 512 4096 32768; do
	echo "fake_bw,local,host,direct,host,,,,,all,\$size,10,,,,,,,,1.000,,,1,1,,,,,,,,ok,0,ok,full,2026-11-21T00:00:00Z,0.1.0,,,,,,,,," >>"\$csv"
done
dd if=/dev/zero of="$mnt/filler" bs=1k count=\$((\$(df -k --output=avail "$mnt" | tail -n 1) - 4)) 2>/dev/null
FAKE
)"
printf 'sizes 8,64,512,4K,32K\nrun gdrb_fake_ok launch=local mem=host\n' >"$WORK/full.profile"
"$SCRIPTS/gdrb" sweep --profile "$WORK/full.profile" --bin-dir "$WORK/bin" --out "$mnt/sweep" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "sweep on a full disk: exit $rc, expected 1"; }
[ "$(($(wc -l <"$mnt/sweep/results.csv") - 1))" -eq 5 ] || { cat "$WORK/err"; fail "sweep on a full disk: the results are lost"; }
json_ok "$mnt/sweep/meta.json" || fail "sweep on a full disk: meta.json is not whole"
last=$(tail -n 1 "$WORK/err")
case $last in
"gdrb-sweep: done in "*) ;;
*) cat "$WORK/err"; fail "sweep on a full disk: no last line" ;;
esac
for f in summary.md report.html; do
	[[ $last != *"$f"* || -s $mnt/sweep/$f ]] || { cat "$WORK/err"; fail "sweep on a full disk: claims $f, which is not there"; }
done
[ -z "$(find "$mnt/sweep/plots" -type f 2>/dev/null)" ] || fail "sweep on a full disk: plots left half-written"
[ "$(grep -c -E 'cannot write|No space left' "$WORK/err")" -eq 1 ] ||
	{ cat "$WORK/err"; fail "sweep on a full disk: the write failure is not said exactly once"; }
pass "gdrb-sweep with a disk that holds the results only: exit 1, results kept, the failure said once, nothing claimed that is not there"
