#!/bin/bash
# --csv on a full disk (a 64 KiB tmpfs) and on damaged files: a row that does
# not fit is cut back to the last complete line, the run exits 1 with one line
# naming the file, and the next run appends clean rows, never onto half a row.
# A file whose last line is torn, or with CRLF line ends, is refused with exit
# 2 and one line naming --csv and the file, and left byte for byte as it was.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
need_mpi

bin=$top_builddir/mpi/gdrb_mpi_latency
name=gdrb_mpi_latency
args=(-m 8:4K -n 100 --min-iters 10 -w 5 -t 0.02)

# run CSV: one 10-size sweep appending to CSV; its exit status in rc, stderr in $WORK/err.
run() {
	rc=0
	mpi 2 "$bin" "${args[@]}" --csv "$1" >"$WORK/out" 2>"$WORK/err" || rc=$?
}
# Every line of CSV complete and of the schema; ROWS data rows.
whole() {
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$1 ends in half a row"
	csv_check -v rows="$2" "$1" || { cat "$1"; fail "$1: not $2 complete rows"; }
}

# Damaged files: refused before anything runs, unchanged.
run "$WORK/good.csv"
[ "$rc" -eq 0 ] || { cat "$WORK/err"; fail "a plain run exited $rc"; }
whole "$WORK/good.csv" 10
refused() { # FILE PATTERN
	local sum
	sum=$(sha256sum <"$1")
	run "$1"
	[ "$rc" -eq 2 ] || { cat "$WORK/err"; fail "$(basename "$1"): exited $rc, expected 2"; }
	[ "$(our_lines "$name" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "$(basename "$1"): not one line"; }
	grep -q -- "--csv: '$1' $2" "$WORK/err" || { cat "$WORK/err"; fail "$(basename "$1"): message lacks '$2'"; }
	grep -qv '^#' "$WORK/out" && fail "$(basename "$1"): something was measured"
	[ "$(sha256sum <"$1")" = "$sum" ] || fail "$(basename "$1") was changed"
	pass "$(basename "$1") -> 2, unchanged: $(grep -- --csv "$WORK/err")"
}
head -c -1 "$WORK/good.csv" >"$WORK/no-final-newline.csv"
refused "$WORK/no-final-newline.csv" "ends in a torn row"
head -c -40 "$WORK/good.csv" >"$WORK/torn.csv"
refused "$WORK/torn.csv" "ends in a torn row"
head -n 1 "$WORK/good.csv" | tr -d '\n' >"$WORK/torn-header.csv"
refused "$WORK/torn-header.csv" "ends in a torn row"
sed 's/$/\r/' "$WORK/good.csv" >"$WORK/crlf.csv"
refused "$WORK/crlf.csv" "has CRLF line ends"
head -n 1 "$WORK/crlf.csv" >"$WORK/crlf-header.csv"
refused "$WORK/crlf-header.csv" "has CRLF line ends"
{ head -n 1 "$WORK/good.csv"; sed -n '2p' "$WORK/crlf.csv"; } >"$WORK/crlf-last.csv"
refused "$WORK/crlf-last.csv" "has CRLF line ends"

# A full disk: a small tmpfs of our own.
mnt=$WORK/mnt
mkdir "$mnt"
mount -t tmpfs -o size=64k,mode=0755 tmpfs "$mnt" 2>"$WORK/mount.err" ||
	skip "cannot mount a tmpfs here: $(cat "$WORK/mount.err")"
trap 'umount "$mnt"; rm -rf "$WORK"' EXIT
csv=$mnt/full.csv

# Rows up to less than a row short of a 4 KiB page, then no page left on the
# disk: one of the sweep's first rows is written in part.
head -n 2 "$WORK/good.csv" >"$csv"
row=$(sed -n 2p "$WORK/good.csv")
while [ $(($(stat -c %s "$csv") + ${#row} + 1)) -le 4096 ]; do echo "$row" >>"$csv"; done
before=$(($(wc -l <"$csv") - 1))
dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
[ "$(df --output=avail -B1 "$mnt" | tail -n 1)" -eq 0 ] || fail "the tmpfs is not full"
run "$csv"
[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "a CSV row lost on a full disk: exit $rc, expected 1"; }
[ "$(grep -c "writing results to '$csv'" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "not one line for ten lost rows"; }
# What is left: the rows before it, and the first sizes of the sweep (8, 16, ...), all whole.
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -lt $((before + 10)) ] || fail "every row fit: the disk was not full"
whole "$csv" "$rows"
csv_col "$csv" size_bytes | awk -v from="$before" -v rows="$rows" '
	NR > from { if ($1 != 8 * 2 ^ (NR - 1 - from)) bad = 1 } END { exit bad || NR != rows }' ||
	{ cat "$csv"; fail "the rows kept are not the sweep's first sizes"; }
pass "short write: exit 1, $((rows - before)) row(s) kept, the half row cut back: $(grep "writing results" "$WORK/err")"
before=$rows

# Still full: the next run's first row does not fit either, and is cut back too.
sum=$(sha256sum <"$csv")
run "$csv"
[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "still full: exit $rc, expected 1"; }
[ "$(grep -c "writing results to '$csv'" "$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "still full: not one line"; }
[ "$(sha256sum <"$csv")" = "$sum" ] || fail "still full: the file changed"
pass "still full: exit 1, file unchanged"

# A new file whose header does not fit: exit 1 before anything is measured.
run "$mnt/new.csv"
[ "$rc" -eq 1 ] || { cat "$WORK/err"; fail "header on a full disk: exit $rc, expected 1"; }
grep -q "writing results to '$mnt/new.csv': No space left on device" "$WORK/err" || { cat "$WORK/err"; fail "header: no line"; }
grep -qv '^#' "$WORK/out" && fail "header on a full disk: something was measured"
pass "header on a full disk: exit 1 before measuring"

# Space again: the next run's rows follow the last complete one.
rm "$mnt/fill"
run "$csv"
[ "$rc" -eq 0 ] || { cat "$WORK/err"; fail "with space again: exit $rc"; }
whole "$csv" $((before + 10))
pass "with space again: 10 more complete rows, none glued onto another"
