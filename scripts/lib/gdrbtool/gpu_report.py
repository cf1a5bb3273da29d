"""What scripts/measure/measure-gpu reads from a gdrbench CSV (schema in results/README.md).

    python3 -m gdrbtool.gpu_report summary CSV
        one line: rows ok unsupported invalid failed errors, a tab, the first unsupported
        row's note
    python3 -m gdrbtool.gpu_report copy bw|p50 CSV
        gdrb_copy_bw's rows as a Markdown table: one row per size, a column per copy; bw: GB/s
        (1e9 B/s), p50: median time per copy, us

Fields are read leniently (a missing column is empty, a number is the digits a field starts
with, awk_value), so that a damaged CSV still gives a line rather than a traceback."""

from __future__ import annotations

import sys
from typing import Dict, List, Tuple

from .common import awk_num, awk_value, csv_split, sig3, size_fmt

COPIES = ("host,h2d", "pinned,h2d", "host,d2h", "pinned,d2h", "device,d2d")


class Rows:
    """The lines of a CSV after its header, each split into fields by column name; a short line
    keeps the fields it lacks from the line before it."""

    def __init__(self, text: str):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        self.col: Dict[str, int] = {}
        for i, name in enumerate(csv_split(lines[0]) if lines else []):
            self.col[name] = i
        self.lines = lines[1:]

    def __iter__(self):
        fields: List[str] = []
        for line in self.lines:
            got = csv_split(line)
            fields[:len(got)] = got
            yield lambda name, fields=list(fields): self.field(fields, name)

    def field(self, fields: List[str], name: str) -> str:
        i = self.col.get(name)
        return fields[i] if i is not None and i < len(fields) else ""


def summary(rows: Rows) -> str:
    count: Dict[str, int] = {}
    n, errors, note = 0, 0.0, ""
    for f in rows:
        st = f("status")
        n += 1
        count[st] = count.get(st, 0) + 1
        errors += awk_value(f("errors"))
        if st == "unsupported" and note == "":
            note = f("note")
    return "%d %d %d %d %d %d\t%s\n" % (n, count.get("ok", 0), count.get("unsupported", 0),
                                       count.get("invalid-data", 0), count.get("failed", 0), int(errors), note)


def copy_table(rows: Rows, metric: str) -> str:
    column = "lat_p50_us" if metric == "p50" else "bw_GBps"
    sizes: List[float] = []
    seen = set()
    val: Dict[Tuple[str, str], str] = {}
    for f in rows:
        if f("benchmark") != "copy_bw":
            continue
        size = awk_value(f("size_bytes"))
        if awk_num(size) not in seen:
            seen.add(awk_num(size))
            sizes.append(size)
        st = f("status")
        val[awk_num(size), f("mem") + "," + f("path")] = st if st != "ok" else sig3(awk_value(f(column)))
    out = ["| size | H2D pageable | H2D pinned | D2H pageable | D2H pinned | D2D |",
           "|---:|---:|---:|---:|---:|---:|"]
    for size in sorted(sizes):
        out.append("| " + size_fmt(size, " ") + "".join(" | " + val.get((awk_num(size), k), "-") for k in COPIES)
                   + " |")
    return "\n".join(out) + "\n"


def main(argv: List[str]) -> int:
    if len(argv) == 2 and argv[0] == "summary":
        mode, metric, path = "summary", "", argv[1]
    elif len(argv) == 3 and argv[0] == "copy" and argv[1] in ("bw", "p50"):
        mode, metric, path = argv
    else:
        sys.stderr.write("usage: gpu_report summary CSV | gpu_report copy bw|p50 CSV\n")
        return 2
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            rows = Rows(f.read())
    except OSError as e:
        sys.stderr.write("gpu_report: %s: %s\n" % (path, e.strerror))
        return 2
    text = summary(rows) if mode == "summary" else copy_table(rows, metric)
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
