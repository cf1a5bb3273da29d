#!/bin/bash
# untrusted_text.sh: text the binaries read from sysfs or a user is made harmless where it lands.
#  - gdrb_doctor's table: a NIC name in a sysfs tree carrying terminal escapes (OSC retitle,
#    clear screen, CR, BEL, DEL, C1 CSI as UTF-8 and as a lone byte) is printed with each of
#    those bytes as \xHH, valid UTF-8 kept; --json of the same tree still parses;
#  - a benchmark's header: a host name carrying terminal escapes (a UTS namespace of its own, as
#    root; skipped elsewhere) is printed with those bytes as \xHH;
#  - stderr: a path, an option or a device name carrying escapes (ESC[2J, BEL, CR, C1 CSI) is
#    shown as \xHH on one line (the logger cleans every diagnostic; test_topo checks the host
#    name of its prefix);
#  - a CSV cell that a spreadsheet would run as a formula (a --label starting =, +, -, @) gets a
#    leading apostrophe in the main and the all-pairs CSV, the form gdrbtool's csv_text() writes.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
# shellcheck source=../support/script_helpers.sh
. "$(dirname "$0")/../support/script_helpers.sh"

doctor=$top_builddir/bench/gdrb_doctor
fx=$top_builddir/tests/fixtures
[ -d "$fx/dgx8/sys" ] || fail "no fixture trees in $fx (make check generates them)"

# A NIC renamed in a copy of a healthy tree: its name reaches the evidence of several checks.
cp -r "$fx/dgx8" "$WORK/tree"
evil=$(printf 'mlx5_7\033]0;pwned\007\033[2J\r\302\233\233\177X')
mv "$WORK/tree/sys/class/infiniband/mlx5_7" "$WORK/tree/sys/class/infiniband/$evil"
mv "$WORK/tree/sys/class/infiniband/mlx5_6" "$WORK/tree/sys/class/infiniband/mlx5_é"
"$doctor" --sysfs-root "$WORK/tree/sys" --procfs-root "$WORK/tree/proc" >"$WORK/table" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "gdrb_doctor on the renamed tree: exit non-zero"; }
raw=$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]\|\x9b' "$WORK/table" || true)
[ "$raw" = 0 ] || { cat -v "$WORK/table"; fail "the table holds $raw line(s) with a raw control byte"; }
grep -qF 'mlx5_7\x1b]0;pwned\x07\x1b[2J\x0d\xc2\x9b\x9b\x7fX port 1: ACTIVE' "$WORK/table" ||
	{ cat -v "$WORK/table"; fail "the NIC's name is not shown with its controls as \\xHH"; }
grep -q 'mlx5_é port 1: ACTIVE' "$WORK/table" || { cat "$WORK/table"; fail "a UTF-8 NIC name not kept"; }
"$doctor" --json --sysfs-root "$WORK/tree/sys" --procfs-root "$WORK/tree/proc" >"$WORK/json" 2>"$WORK/err" ||
	{ cat "$WORK/err"; fail "gdrb_doctor --json on the renamed tree"; }
json_ok "$WORK/json" || fail "gdrb_doctor --json on the renamed tree: not JSON"
pass "gdrb_doctor: a NIC name with terminal escapes shown as \\xHH, UTF-8 kept, --json valid"

# The sysfs root itself (an argument) in the header.
mkdir -p "$WORK/root$(printf '\033[31m')"
cp -r "$fx/dgx8/sys" "$fx/dgx8/proc" "$WORK/root$(printf '\033[31m')/"
"$doctor" --sysfs-root "$WORK/root$(printf '\033[31m')/sys" --procfs-root "$WORK/root$(printf '\033[31m')/proc" \
	>"$WORK/table" 2>"$WORK/err" || { cat "$WORK/err"; fail "gdrb_doctor under a root with an escape"; }
grep -q $'\033' "$WORK/table" && { cat -v "$WORK/table"; fail "a raw ESC of --sysfs-root in the table"; }
grep -qF 'root\x1b[31m/sys' "$WORK/table" || { cat -v "$WORK/table"; fail "--sysfs-root not shown as \\xHH"; }
pass "gdrb_doctor: --sysfs-root with an escape shown as \\xHH in the header"

# stderr: every diagnostic goes through one logger that writes controls as \xHH, whatever
# the message carries (a path, a device name, an option's value, a host name).
# stderr_clean FILE WANT: FILE is one line, holds no raw control byte, and holds WANT.
stderr_clean() {
	local raw
	raw=$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]\|\x9b' "$1" || true)
	[ "$raw" = 0 ] || { cat -v "$1"; fail "stderr holds $raw line(s) with a raw control byte"; }
	[ "$(wc -l <"$1")" = 1 ] || { cat -v "$1"; fail "stderr is not one line"; }
	grep -qF -- "$2" "$1" || { cat -v "$1"; fail "stderr does not show '$2'"; }
}
esc=$(printf '\033[2J\007\r\302\233')
"$doctor" --sysfs-root "$WORK/no$esc" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 2 ] || fail "gdrb_doctor --sysfs-root of a missing folder with escapes: exit $rc, expected 2"
stderr_clean "$WORK/err" "--sysfs-root: '$WORK/no\x1b[2J\x07\x0d\xc2\x9b' is not a directory"
"$doctor" --sysfs-root "$fx/dgx8/sys" --procfs-root "$fx/dgx8/sys$esc" >"$WORK/out" 2>"$WORK/err"
stderr_clean "$WORK/err" "--procfs-root: '$fx/dgx8/sys\x1b[2J\x07\x0d\xc2\x9b' is not a directory"
"$top_builddir/bench/gdrb_copy_bw" "--bogus$esc" >"$WORK/out" 2>"$WORK/err"
stderr_clean "$WORK/err" "unknown option '--bogus\x1b[2J\x07\x0d\xc2\x9b'"
# A device name as an option's value, as a user pastes one from a listing.
if [ -x "$top_builddir/bench/gdrb_write_bw" ]; then
	"$top_builddir/bench/gdrb_write_bw" --ib-dev "mlx5_0$esc:x" >"$WORK/out" 2>"$WORK/err"
	stderr_clean "$WORK/err" "got 'mlx5_0\x1b[2J\x07\x0d\xc2\x9b:x'"
fi
pass "stderr: paths, options and device names with terminal escapes shown as \\xHH on one line"

need_mpi
# same_form CSV LABEL: the note of every row starts with the label after an apostrophe, and
# the raw line holds the note exactly as gdrbtool.common.csv_text() writes it.
same_form() {
	python3 - "$top_srcdir/scripts/lib" "$1" "$2" <<'PY' || fail "$1: the note of label '$2'"
import sys
sys.path.insert(0, sys.argv[1])
from gdrbtool import common
path, label = sys.argv[2], sys.argv[3]
with open(path, encoding="utf-8") as f:
    header, *lines = f.read().splitlines()
i = header.split(",").index("note")
assert lines, "no rows"
for line in lines:
    note = common.csv_split(line)[i]
    assert note.startswith("'" + label), "note %r does not start with '%s" % (note, label)
    assert "," + common.csv_text(note[1:]) + "," in line, "%r not written as csv_text() writes %r" % (line, note[1:])
PY
}
n=0
for label in '=HYPERLINK("http://example.invalid/?x","click")' '-2+3' '+cmd|calc' '@SUM(A1:A9)'; do
	rm -f "$WORK/lat.csv"
	mpi 2 "$top_builddir/mpi/gdrb_mpi_latency" -m 8 -t 0.01 --label "$label" --csv "$WORK/lat.csv" \
		>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "gdrb_mpi_latency --label '$label'"; }
	same_form "$WORK/lat.csv" "$label"
	n=$((n + 1))
done
pass "main CSV: $n labels that start a formula written after an apostrophe, as csv_text() writes them"

mkdir -p "$WORK/pairs"
mpi 2 "$top_builddir/mpi/gdrb_mpi_pairs" -m 8 -t 0.01 --label '=1+1' --csv "$WORK/pairs/pairs.csv" \
	>"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "gdrb_mpi_pairs --label '=1+1'"; }
notes=$(pairs_col "$WORK/pairs/pairs.csv" note | sort -u)
[ "$notes" = "'=1+1" ] || { cat "$WORK/pairs/pairs.csv"; fail "pairs CSV notes '$notes', expected '=1+1 after an apostrophe"; }
pass "all-pairs CSV: a label that starts a formula written after an apostrophe"

# A benchmark's header names the host (gdrb_copy_bw, one process, on the simulated GPU; where
# there is none, a build without CUDA, use_simgpu's skip ends the subshell with 77).
evil_host=$(printf 'n\033]0;pwned\007\033[2J\302\233')
header=0
if unshare -u true 2>/dev/null; then
	(
		use_simgpu strict
		unshare -u python3 -c 'import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])' \
			"$evil_host" "$top_builddir/bench/gdrb_copy_bw" -m 8 -t 0.01 >"$WORK/hdr" 2>"$WORK/err"
	) || header=$?
else
	header=no-uts
fi
if [ "$header" = no-uts ]; then
	echo "# SKIP: no UTS namespace here (unshare -u needs root): the header's host name not tried"
elif [ "$header" = 77 ]; then
	echo "# SKIP: no simulated GPU in this build: the header's host name not tried"
elif [ "$header" != 0 ]; then
	cat "$WORK/err"
	fail "gdrb_copy_bw under a host name with escapes (exit $header)"
else
	raw=$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]\|\x9b' "$WORK/hdr" || true)
	[ "$raw" = 0 ] || { cat -v "$WORK/hdr"; fail "the header holds $raw line(s) with a raw control byte"; }
	grep -qF 'on n\x1b]0;pwned\x07\x1b[2J\xc2\x9b' "$WORK/hdr" ||
		{ cat -v "$WORK/hdr"; fail "the host name is not shown with its controls as \\xHH"; }
	pass "a benchmark's header: a host name with terminal escapes shown as \\xHH"
fi
exit 0
