"""gdrbench's figures beside its reference tools', from the raw directory of the GPU bundle's
run.sh (scripts/gpu-bundle): a Markdown report with each figure, the reference's, their ratio,
and a flag where they differ by more than 5% (the issue's target).

    python3 -m gdrbtool.reference [--out FILE] RAW_DIR

RAW_DIR holds what run.sh's parts wrote:
    nccl/nt-<coll>-r<N>.txt    nccl-tests' stdout (<coll>: all_reduce, all_gather, reduce_scatter)
    nccl/gd-<coll>-r<N>.csv    gdrb_nccl_*'s CSV of the same round
    copies/nvb-b<MiB>.txt      nvbandwidth's stdout at a buffer of <MiB> MiB
    copies/gd-copy.csv         gdrb_copy_bw's CSV
    mpi/gdrb_mpi_*.csv, .txt   the MPI binaries' CSVs and output (UCX's protocol lines among it)
    <part>/status.txt          lines the parts wrote: a tool not carried, a timing mode
An output this module cannot read makes its rows say so; the rest of the report stands. Exit 0
when the report was written, 2 on bad usage (one line)."""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Tuple

from .common import CONTROLS, csv_split, sig3, size_fmt

GAP = 0.05
LIMIT = 64 << 20   # the most of any one raw file this reads

NCCL_COLLS = (("all_reduce", "nccl_allreduce"), ("all_gather", "nccl_allgather"),
              ("reduce_scatter", "nccl_reduce_scatter"))
PLACEMENTS = ("out-of-place", "in-place")

# nvbandwidth's testcase beside gdrb_copy_bw's (mem, paths): gdrbench copies with
# cudaMemcpyAsync, which the copy engines carry, from pinned host memory as nvbandwidth does. The
# first path is --copy-timing events' (a batch of copies timed between CUDA events on a held
# stream, nvbandwidth's shape: docs/benchmarks.md), the second the per-copy default's.
COPY_PAIRS = (("host_to_device_memcpy_ce", "pinned", ("h2d-batch", "h2d"), "host to device, copy engine"),
              ("device_to_host_memcpy_ce", "pinned", ("d2h-batch", "d2h"), "device to host, copy engine"),
              ("host_to_device_bidirectional_memcpy_ce", "pinned", ("h2d-bidir",),
               "host-to-device leg of both directions at once, copy engine"),
              ("device_to_host_bidirectional_memcpy_ce", "pinned", ("d2h-bidir",),
               "device-to-host leg of both directions at once, copy engine"),
              ("device_local_copy", "device", ("d2d-batch", "d2d"), "device to device (local), copy engine"))
# nvbandwidth's figures gdrbench has no copy of its own for (SM copies: a kernel, where gdrbench
# measures the copy engines only): shown beside the copy engine's one-way figure.
COPY_ONLY_REF = (("host_to_device_memcpy_sm", "host to device, SM"),
                 ("device_to_host_memcpy_sm", "device to host, SM"),
                 ("host_to_device_bidirectional_memcpy_sm", "host to device while device to host, SM"),
                 ("device_to_host_bidirectional_memcpy_sm", "device to host while host to device, SM"))
# gdrb_copy_bw's CSVs in copies/: the per-copy default's and --copy-timing events'.
COPY_CSVS = ("gd-copy.csv", "gd-copy-events.csv")


class Unreadable(Exception):
    """A tool's output that does not follow its format: the reason, for the rows it fed."""


def cell(s: str) -> str:
    """S from a file as a Markdown table cell: no control, no cell end, no HTML."""
    s = CONTROLS.sub(" ", s).replace("&", "&amp;").replace("<", "&lt;")
    return s.replace("|", "\\|").replace("`", "'")


def first_words(text: str) -> str:
    """The first non-empty line of TEXT, cut at 100 characters: what a tool said instead."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:100]
    return "(empty)"


def median(values: List[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def read_text(path: str) -> str:
    """The text of PATH (a regular file, not a link, at most LIMIT bytes); Unreadable otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise Unreadable("cannot open %s: %s" % (os.path.basename(path), e.strerror or "error"))
    with os.fdopen(fd, "rb") as f:
        if not os.path.isfile(path) or os.fstat(f.fileno()).st_size > LIMIT:
            raise Unreadable("%s is not a regular file of at most %d bytes" % (os.path.basename(path), LIMIT))
        return f.read(LIMIT).decode("utf-8", "replace")


# --- nccl-tests -----------------------------------------------------------------------------

def parse_nccl_tests(text: str) -> Dict[Tuple[int, str], float]:
    """nccl-tests' table (src/common.cu and src/util.cu, writeResultHeader and
    writeBenchmarkLineBody): a '#' header line naming the columns (size count type redop root,
    then time algbw busbw #wrong out of place and again in place, "cputime" for -C, per-iteration
    columns for -I), one line per size. Returns {(size, placement): time in us}. A line cut short
    (a truncated file, a test that died) is skipped; no header, or no row, is Unreadable."""
    columns: List[str] = []
    got: Dict[Tuple[int, str], float] = {}
    for line in text.split("\n"):
        words = line.split()
        if not words:
            continue
        if words[0] == "#":
            if "size" in words and "count" in words and ("time" in words or "cputime" in words):
                columns = words[1:]
            continue
        if words[0].startswith("#") or not columns or not words[0].isdigit():
            continue
        if len(words) < len(columns):
            continue
        times = [i for i, c in enumerate(columns) if c in ("time", "cputime")]
        for i, placement in zip(times, PLACEMENTS):
            try:
                value = float(words[i])
            except ValueError:
                continue
            if value == value and value > 0:
                got[int(words[0]), placement] = value
    if not columns:
        raise Unreadable("no nccl-tests column header (# size count type redop root time ...); it begins: "
                         + first_words(text))
    if not got:
        raise Unreadable("a column header but no row of figures")
    return got


# --- nvbandwidth -------------------------------------------------------------------------------

_RUNNING = re.compile(r"^Running (\S+)\.$")
_SUM = re.compile(r"^SUM (\S+) (\S+)$")


def parse_nvbandwidth(text: str) -> Dict[str, object]:
    """nvbandwidth's plain output (output.cpp: "Running NAME.", the matrix's description ending in
    "(GB/s)", the matrix of PeerValueMatrix's operator<< in inline_common.h: column labels, then a
    row label and one value or N/A per column, then "SUM NAME VALUE"). Returns {testcase: GB/s of
    the first GPU (the matrix's first numeric cell), or the reason it has none (str)}. A
    testcase that started but printed no SUM (a truncated file) has its reason; a text with no
    testcase at all is Unreadable."""
    got: Dict[str, object] = {}
    name: Optional[str] = None
    first: Optional[float] = None
    in_matrix = False
    for raw in text.split("\n"):
        line = raw.strip()
        m = _RUNNING.match(line)
        if m:
            if name is not None and name not in got:
                got[name] = "started, but printed no figure (output cut short?)"
            name, first, in_matrix = m.group(1), None, False
            continue
        if name is None:
            continue
        if line.endswith("(GB/s)"):
            in_matrix = True
            continue
        m = _SUM.match(line)
        if m and m.group(1) == name:
            if first is None:
                try:
                    first = float(m.group(2))
                except ValueError:
                    first = None
            got[name] = first if first is not None else "no figure in its matrix"
            name, in_matrix = None, False
            continue
        if in_matrix and first is None:
            words = line.split()
            if len(words) >= 2 and not all(w.isdigit() for w in words):
                for w in words[1:]:
                    try:
                        v = float(w)
                    except ValueError:
                        continue
                    if v > 0:
                        first = v
                        break
        elif not in_matrix and ":" in line and name not in got:
            # "WAIVED: ...", "ERROR: ..." between the testcase and its matrix
            status, _, msg = line.partition(":")
            if status.strip().upper() in ("WAIVED", "ERROR", "NOT FOUND", "FAILED"):
                got[name] = "%s: %s" % (status.strip(), msg.strip())
                name = None
    if name is not None and name not in got:
        got[name] = "started, but printed no figure (output cut short?)"
    if not got:
        raise Unreadable("no nvbandwidth testcase in it (no 'Running NAME.' line); it begins: " + first_words(text))
    return got


# --- gdrbench's CSVs ---------------------------------------------------------------------------

def gd_rows(text: str) -> List[Dict[str, str]]:
    """The rows of a gdrbench CSV as {column: field}; Unreadable where it has no header."""
    lines = [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()]
    if not lines or "benchmark" not in csv_split(lines[0]):
        raise Unreadable("not a gdrbench CSV (no header line naming 'benchmark')")
    head = csv_split(lines[0])
    out = []
    for ln in lines[1:]:
        f = csv_split(ln)
        if len(f) < len(head):
            continue   # cut short
        out.append(dict(zip(head, f)))
    return out


def num(s: str) -> Optional[float]:
    try:
        v = float(s)
    except ValueError:
        return None
    return v if v == v else None


# --- the report ---------------------------------------------------------------------------------

def judge(gd: Optional[float], ref: Optional[float], lower_is_better: bool) -> Tuple[str, str]:
    """(ratio gdrbench/reference, verdict): "ok" within 5%, else which way it is off."""
    if gd is None or ref is None or ref <= 0:
        return "-", "-"
    r = gd / ref
    if abs(r - 1) <= GAP:
        return "%.3f" % r, "ok"
    worse = r > 1 if lower_is_better else r < 1
    return "%.3f" % r, "**GAP %+.0f%%** (gdrbench %s)" % ((r - 1) * 100, "slower" if worse else "faster")


class Raw:
    def __init__(self, root: str):
        self.root = root

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    def text(self, *parts: str) -> str:
        return read_text(self.path(*parts))

    def status(self, part: str) -> List[str]:
        try:
            return [ln for ln in self.text(part, "status.txt").split("\n") if ln.strip()]
        except Unreadable:
            return []

    def rounds(self, part: str, prefix: str, suffix: str) -> List[str]:
        try:
            names = os.listdir(self.path(part))
        except OSError:
            return []
        pat = re.compile(re.escape(prefix) + r"-r([0-9]+)" + re.escape(suffix) + "$")
        return sorted((n for n in names if pat.match(n)), key=lambda n: int(pat.match(n).group(1)))


def nccl_section(raw: Raw, out: List[str]) -> None:
    out.append("## NCCL on one rank: gdrbench beside nccl-tests")
    out.append("")
    for line in raw.status("nccl"):
        out.append("- " + cell(line))
    out.append("")
    not_carried = any("nccl-tests: not carried" in ln for ln in raw.status("nccl"))
    out.append("Time per call in us, median over the rounds (nccl-tests' `time` column, "
               "gdrbench's `lat_avg_us`); ratio = gdrbench / nccl-tests; a gap over 5% is flagged.")
    out.append("")
    for nt_name, bench in NCCL_COLLS:
        out.append("### %s beside %s_perf" % (bench, nt_name))
        out.append("")
        nt: Dict[Tuple[int, str], List[float]] = {}
        gd: Dict[Tuple[int, str], List[float]] = {}
        problems: List[str] = []
        timing = set()
        for name in raw.rounds("nccl", "nt-" + nt_name, ".txt"):
            try:
                for k, v in parse_nccl_tests(raw.text("nccl", name)).items():
                    nt.setdefault(k, []).append(v)
            except Unreadable as e:
                problems.append("nccl-tests output %s unreadable: %s" % (name, e))
        for name in raw.rounds("nccl", "gd-" + nt_name, ".csv"):
            try:
                for row in gd_rows(raw.text("nccl", name)):
                    if row.get("benchmark") != bench or row.get("status") != "ok":
                        continue
                    size, t = num(row.get("size_bytes", "")), num(row.get("lat_avg_us", ""))
                    if size is None or t is None:
                        continue
                    gd.setdefault((int(size), row.get("placement", "")), []).append(t)
                    if row.get("timing"):
                        timing.add(row["timing"] + (" x" + row["calls_per_sync"] if row.get("calls_per_sync") else ""))
            except Unreadable as e:
                problems.append("gdrbench CSV %s unreadable: %s" % (name, e))
        for p in problems:
            out.append("- " + cell(p))
        if timing:
            out.append("- gdrbench timing (CSV): " + cell(", ".join(sorted(timing))))
        if not nt and not gd:
            out.append("- no figures from either tool")
            out.append("")
            continue
        out.append("")
        out.append("| size | placement | gdrbench us | nccl-tests us | ratio | verdict |")
        out.append("|---:|---|---:|---:|---:|---|")
        for key in sorted(set(nt) | set(gd), key=lambda k: (k[0], PLACEMENTS.index(k[1]) if k[1] in PLACEMENTS else 9)):
            g = median(gd[key]) if key in gd else None
            n = median(nt[key]) if key in nt else None
            ratio, verdict = judge(g, n, lower_is_better=True)
            if n is None:
                verdict = ("nccl-tests not carried" if not_carried else
                           "nccl-tests gave no figure" + ("" if not problems else " (see above)"))
            elif g is None:
                verdict = "gdrbench gave no figure"
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                size_fmt(key[0], " "), cell(key[1]), sig3(g) if g is not None else "-",
                sig3(n) if n is not None else "-", ratio, verdict))
        out.append("")


def copies_section(raw: Raw, out: List[str]) -> None:
    out.append("## Copies: gdrb_copy_bw beside nvbandwidth")
    out.append("")
    for line in raw.status("copies"):
        out.append("- " + cell(line))
    # (mem, path, size): GB/s. nvbandwidth reports the median of its samples, so the figure set
    # beside it is the size over the median time per copy (lat_p50_us), the mean's (bw_GBps)
    # only where a row has no median.
    gd: Dict[Tuple[str, str, int], float] = {}
    for csv_name in COPY_CSVS:
        if not os.path.exists(os.path.join(raw.path("copies"), csv_name)):
            continue
        try:
            for row in gd_rows(raw.text("copies", csv_name)):
                if row.get("benchmark") != "copy_bw" or row.get("status") != "ok":
                    continue
                size, p50, bw = num(row.get("size_bytes", "")), num(row.get("lat_p50_us", "")), num(row.get("bw_GBps", ""))
                if size is not None and p50 is not None and p50 > 0:
                    bw = size / (p50 * 1e3)
                if size is not None and bw is not None:
                    gd[row.get("mem", ""), row.get("path", ""), int(size)] = bw
        except Unreadable as e:
            out.append("- gdrb_copy_bw's CSV %s unreadable: %s" % (csv_name, cell(str(e))))
    ref: Dict[int, Dict[str, object]] = {}
    try:
        names = sorted(os.listdir(raw.path("copies")))
    except OSError:
        names = []
    for name in sorted(names, key=lambda n: (len(n), n)):
        m = re.match(r"nvb-b([0-9]+)\.txt$", name)
        if not m:
            continue
        size = int(m.group(1)) << 20
        try:
            ref[size] = parse_nvbandwidth(raw.text("copies", name))
        except Unreadable as e:
            out.append("- nvbandwidth output %s unreadable: %s" % (cell(name), cell(str(e))))
            ref[size] = {"": "nvbandwidth output unreadable (above)"}
    absent = "nvbandwidth " + ("not carried" if any("nvbandwidth: not carried" in ln for ln in raw.status("copies"))
                               else "not run at this size")
    out.append("")
    out.append("GB/s (1e9 B/s), each the size over the median time of one copy; gdrbench copies with "
               "cudaMemcpyAsync from pinned host memory, which the copy engines carry, so it is set beside "
               "nvbandwidth's copy-engine testcases; its row is --copy-timing events' where there is one "
               "(copies batched between CUDA events on a held stream, as nvbandwidth times), else the "
               "per-copy default's; ratio = gdrbench / nvbandwidth; a gap over 5% is flagged.")
    out.append("")
    out.append("| copy | size | gdrbench GB/s | nvbandwidth GB/s | ratio | verdict | gdrbench row |")
    out.append("|---|---:|---:|---:|---:|---|---|")
    sizes = sorted(set(ref) | {k[2] for k in gd if k[2] >= 1 << 20})
    for case, mem, paths, what in COPY_PAIRS:
        for size in sizes:
            path = next((p for p in paths if (mem, p, size) in gd), paths[0])
            g = gd.get((mem, path, size))
            r = ref.get(size, {})
            v = r.get(case, r.get("", absent if not r else "not in nvbandwidth's output"))
            n = v if isinstance(v, float) else None
            ratio, verdict = judge(g, n, lower_is_better=False)
            if n is None:
                verdict = cell(str(v))
            elif g is None:
                verdict = "gdrbench gave no figure"
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                what, size_fmt(size, " "), sig3(g) if g is not None else "-", sig3(n) if n is not None else "-",
                ratio, verdict, "%s %s" % (mem, path) if g is not None else "-"))
    out.append("")
    readable = sorted(size for size in ref if "" not in ref[size])
    if not readable:
        return
    out.append("nvbandwidth's other copies at the same sizes (gdrbench measures the copy engines, one "
               "direction at a time):")
    out.append("")
    out.append("| copy | size | nvbandwidth GB/s | beside the copy engine's one-way figure |")
    out.append("|---|---:|---:|---|")
    one_way = {"host to device": "host_to_device_memcpy_ce", "device to host": "device_to_host_memcpy_ce"}
    for case, what in COPY_ONLY_REF:
        for size in readable:
            v = ref[size].get(case, "not in nvbandwidth's output")
            base = ref[size].get(one_way[what.split(",")[0].split(" while")[0]])
            if isinstance(v, float):
                rel = "%.3f x" % (v / base) if isinstance(base, float) and base > 0 else "-"
                out.append("| %s | %s | %s | %s |" % (what, size_fmt(size, " "), sig3(v), rel))
            else:
                out.append("| %s | %s | - | %s |" % (what, size_fmt(size, " "), cell(str(v))))
    out.append("")


_TRANSPORTS = {"cuda_ipc": "CUDA IPC", "gdr_copy": "GDRCopy", "cuda_copy": "cuda_copy (copies through host memory)",
               "sysv": "shared memory (sysv)", "posix": "shared memory (posix)", "cma": "CMA", "tcp": "TCP",
               "rc_mlx5": "RDMA rc_mlx5", "dc_mlx5": "RDMA dc_mlx5", "ud_mlx5": "RDMA ud_mlx5",
               "rc_verbs": "RDMA rc_verbs", "ud_verbs": "RDMA ud_verbs", "self": "self"}
_LOG_PREFIX = re.compile(r"^\[[0-9.]+\] \[[^]]*\]\s*")
_TL = re.compile(r"([A-Za-z0-9_]+)/")


def mpi_transport(log: str) -> str:
    """What UCX's protocol tables (UCX_PROTO_INFO=y; src/ucp/proto/proto_debug.c: a one-cell line
    naming the operation and its memory, "... from cuda/GPU0", then rows "| range | description |
    config |", each line after UCX's "[time] [host:pid:thread]" prefix) name for sends from GPU
    memory: the transports of the config column, and "a pipeline" where a description says so;
    "unknown" when the log holds no such table."""
    seen: List[str] = []
    pipeline = False
    cuda = False
    for raw in log.split("\n"):
        line = _LOG_PREFIX.sub("", raw.strip())
        if not line.startswith("|"):
            if not line.startswith("+"):
                cuda = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 1:
            if " from " in cells[0] or " into " in cells[0]:
                cuda = re.search(r" (from|into) cuda", cells[0]) is not None
            continue
        if not cuda or len(cells) < 3 or cells[0] == "Range":
            continue
        if "pipeline" in cells[1]:
            pipeline = True
        for tl in _TL.findall(cells[-1]):
            name = _TRANSPORTS.get(tl, tl)
            if name not in seen:
                seen.append(name)
    if not seen:
        return "unknown"
    return ", ".join(seen) + (" (a pipeline)" if pipeline else "")


def fig(v: str) -> str:
    """A CSV figure in three digits, or the status that stood in its place."""
    n = num(v)
    return sig3(n) if n is not None else cell(v)


def mpi_section(raw: Raw, out: List[str]) -> None:
    out.append("## MPI: two ranks on one GPU, direct beside staged")
    out.append("")
    for line in raw.status("mpi"):
        out.append("- " + cell(line))
    try:
        names = sorted(n for n in os.listdir(raw.path("mpi")) if n.endswith(".csv"))
    except OSError:
        names = []
    if not names:
        out.append("- no MPI CSV")
        out.append("")
        return
    out.append("")
    out.append("Bandwidth benchmarks in GB/s, the others' time per operation in us (avg); ratio = "
               "direct / staged (above 1 for bandwidth, below 1 for time: direct is faster). The "
               "transport is what UCX's protocol table named for GPU memory (UCX_PROTO_INFO=y), "
               "\"unknown\" when its log says nothing; a direct row never assumes one.")
    out.append("")
    out.append("| binary | size | direct | staged (pipelined) | staged (serial) | direct / pipelined | transport |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        binary = name[:-4]
        try:
            log = raw.text("mpi", binary + ".txt")
        except Unreadable:
            log = ""
        transport = mpi_transport(log)
        try:
            rows = gd_rows(raw.text("mpi", name))
        except Unreadable as e:
            out.append("| %s | - | - | - | - | - | %s |" % (cell(binary), cell(str(e))))
            continue
        by: Dict[int, Dict[str, str]] = {}
        bw = "bw" in binary
        for row in rows:
            size = num(row.get("size_bytes", ""))
            if size is None:
                continue
            path = row.get("path", "")
            key = path if path in ("direct", "staged", "staged-serial") else ""
            if not key or key in by.get(int(size), {}):
                continue
            v = row.get("bw_GBps" if bw else "lat_avg_us", "") if row.get("status") == "ok" else row.get("status", "")
            by.setdefault(int(size), {})[key] = v
        for size in sorted(by):
            d, s, sr = (by[size].get(k, "-") for k in ("direct", "staged", "staged-serial"))
            dn, sn = num(d), num(s)
            ratio = "%.3f" % (dn / sn) if dn is not None and sn else "-"
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                cell(binary), size_fmt(size, " "), fig(d), fig(s), fig(sr), ratio,
                cell(transport) if dn is not None else "-"))
    out.append("")


def report(root: str) -> str:
    raw = Raw(root)
    out = ["# gdrbench beside its reference tools", ""]
    try:
        for line in raw.text("parts.txt").split("\n"):
            if line.strip():
                out.append("- " + cell(line))
        out.append("")
    except Unreadable:
        pass
    nccl_section(raw, out)
    copies_section(raw, out)
    mpi_section(raw, out)
    out.append("## Staging")
    out.append("")
    out.append("staging.md: scripts/measure/measure-staging under MPS, pipelined and serial staging "
               "against their model." if os.path.isfile(raw.path("staging.md")) else "- no staging.md")
    out.append("")
    return "\n".join(out)


def main(argv: List[str]) -> int:
    out_path = None
    args = list(argv)
    if len(args) >= 2 and args[0] == "--out":
        out_path = args[1]
        args = args[2:]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write("reference: usage: python3 -m gdrbtool.reference [--out FILE] RAW_DIR (a directory)\n")
        return 2
    text = report(args[0])
    if out_path is None:
        sys.stdout.write(text)
        return 0
    tmp = out_path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out_path)
    except OSError as e:
        sys.stderr.write("reference: %s: cannot write: %s\n" % (out_path, e.strerror or "error"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
