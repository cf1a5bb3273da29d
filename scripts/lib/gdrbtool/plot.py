"""Plot a results directory with gnuplot: one figure per benchmark and memory kind (a
collective's in-place rows, placement in-place, one of their own: BENCH-MEM-in-place), as
PNG and SVG, in RESULTS_DIR/plots/.

  gdrb plot [--out DIR] [--format png,svg] RESULTS_DIR

Latency benchmarks: p50 (solid) and p99 (dashed) in us against message size, log-log.
Bandwidth benchmarks: GB/s (1e9 B/s; busbw for collectives) against size, log size axis.
Every path of a benchmark shares the axes (direct and staged; h2d, d2h and d2d for copies),
and where both direct and staged exist a lower panel shows staged time / direct time per
size (above 1: the direct path, GPUDirect, is faster). Titles name the hosts, ranks, GPU
and NIC (from meta.json, else the CSV); sizes are labelled 8B, 1KiB, 1MiB, 1GiB.
Only aggregate rows (pair=all) with status ok are drawn; repeated sizes plot their median.
An empty value (no figure) is a gap; a value that is not a number (nan, -5, 0x10, a size
8x) is a gap too, named on stderr with its file and line, never a 0.

All-pairs matrices (pairs-*.csv, gdrb_mpi_pairs; docs/pairs.md): a heat map each, rows the
sending rank, columns the receiving one, red the slow pairs (low bandwidth, high latency), an
empty cell (not measured) grey. Above 256 ranks each pixel is the worst of a block of pairs.

GPU to GPU inside a node (gdrb_copy_bw --p2p, rows of pair gpuI->gpuJ): a heat map per
benchmark, memory kind and path at the largest size measured (BENCH-MEM-PATH-SIZE-gpus), rows
the GPU copied from, columns the GPU copied to, GB/s; a pair whose path cannot run (n/a), did
not measure or was not measured grey.

Options:
  --out DIR        where the figures go (default RESULTS_DIR/plots)
  --format LIST    png, svg or png,svg (default png,svg)
  -h, --help       this help
Exit: 0 done (also when no row could be drawn: it says so), 1 gnuplot missing or failed, or
a figure could not be written (one line; nothing half-written is left in the output
directory), 2 bad usage or input (one line naming the option, or the file and line).
"""

from __future__ import annotations

import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from . import common, p2p, pairs
from .common import Json, awk_num, failure, file_name, is_latency, num_fmt, path_rank, usage_error, write_all

COLORS = ("#1f77b4", "#e6550d", "#2ca02c", "#9467bd", "#8c564b", "#d62728", "#17becf")
GNUPLOT_MISSING = "gnuplot not found: install gnuplot-nox (Debian) or gnuplot (RHEL); scripts/install-deps does"
# How many values left out are named one by one; the rest are counted.
NAMED_FAULTS = 5
_FORMATS = re.compile(r"^(png|svg)(,(png|svg))?$")
# --- what the CSV holds ------------------------------------------------------------

@dataclass
class Series:
    """One path of a figure: its sizes in the order first seen, and per size and metric
    (p50, p99, bw, busbw) the values kept, as written in the CSV."""
    sizes: List[float] = field(default_factory=list)
    seen: Set[float] = field(default_factory=set)
    values: Dict[Tuple[float, str], List[str]] = field(default_factory=dict)


@dataclass
class Group:
    """The rows of one figure: one benchmark and memory kind, every path; a collective's
    in-place rows are a figure of their own, so that its paths compare like with like."""
    bench: str
    mem: str
    in_place: bool = False
    paths: Dict[str, Series] = field(default_factory=dict)
    has_busbw: bool = False
    gpu: str = ""       # the first non-empty gpu and nic columns
    nic: str = ""
    ranks: str = ""     # ranks, hosts and layer of the first row
    hosts: str = ""
    layer: str = ""


@dataclass
class Data:
    groups: Dict[Tuple[str, str, bool], Group]
    faults: int = 0     # values left out (not a number of their column)


def median(values: List[str]) -> Tuple[str, Optional[float]]:
    """The median of VALUES as the .dat files write it and as a number: one value as written;
    ("NaN", None) when there is none (gnuplot: no point)."""
    if not values:
        return "NaN", None
    if len(values) == 1:
        return values[0], float(values[0])
    v = sorted(float(x) for x in values)
    m = len(v)
    mid = v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2
    return awk_num(mid), mid


def read_data(csv_path: str) -> Data:
    """The aggregate rows (pair=all) with status ok of CSV_PATH, grouped by benchmark and
    memory kind. A value that is not a number of its column is left out and named on stderr
    (the first NAMED_FAULTS; then their count); a row whose size is not one is left out."""
    s = common.schema()
    col = s.index
    i_pair, i_status, i_size = col["pair"], col["status"], col["size_bytes"]
    i_bench, i_mem, i_path = col["benchmark"], col["mem"], col["path"]
    i_p50, i_p99, i_bw, i_busbw = col["lat_p50_us"], col["lat_p99_us"], col["bw_GBps"], col["busbw_GBps"]
    i_gpu, i_nic, i_ranks, i_hosts, i_layer = col["gpu"], col["nic"], col["ranks"], col["hosts"], col["layer"]
    i_place = col["placement"]
    data = Data(groups={})
    latency: Dict[str, bool] = {}

    def fault(lineno: int, name: str, v: str, why: str) -> None:
        data.faults += 1
        if data.faults <= NAMED_FAULTS:
            sys.stderr.write("%s:%d: %s '%s' is %s: not plotted\n" % (csv_path, lineno, name, common.term(v), why))

    def keep(series: Series, key: Tuple[float, str], lineno: int, name: str, v: str) -> None:
        if v == "":
            return
        why = s.value_fault(name, v)
        if why:
            fault(lineno, name, v, why)
            return
        series.values.setdefault(key, []).append(v)

    for lineno, f in common.read_csv(csv_path):
        if f[i_pair] != "all" or f[i_status] != "ok":
            continue
        size_text = f[i_size]
        why = "empty" if size_text == "" else s.value_fault("size_bytes", size_text)
        if why:
            fault(lineno, "size_bytes", size_text, why)
            continue
        bench, mem, path = f[i_bench], f[i_mem], f[i_path]
        size = float(size_text)
        key = (bench, mem, f[i_place] == common.IN_PLACE)
        g = data.groups.get(key)
        if g is None:
            g = data.groups[key] = Group(bench, mem, key[2], ranks=f[i_ranks], hosts=f[i_hosts], layer=f[i_layer])
        series = g.paths.get(path)
        if series is None:
            series = g.paths[path] = Series()
        if size not in series.seen:
            series.seen.add(size)
            series.sizes.append(size)
        lat = latency.get(bench)
        if lat is None:
            lat = latency[bench] = is_latency(bench)
        if lat:
            keep(series, (size, "p50"), lineno, "lat_p50_us", f[i_p50])
            keep(series, (size, "p99"), lineno, "lat_p99_us", f[i_p99])
        else:
            keep(series, (size, "bw"), lineno, "bw_GBps", f[i_bw])
            if f[i_busbw] != "":
                keep(series, (size, "busbw"), lineno, "busbw_GBps", f[i_busbw])
                g.has_busbw = True
        if not g.gpu:
            g.gpu = f[i_gpu]
        if not g.nic:
            g.nic = f[i_nic]
    if data.faults > NAMED_FAULTS:
        sys.stderr.write("%s: and %d more values not plotted\n" % (csv_path, data.faults - NAMED_FAULTS))
    return data


# --- meta.json -----------------------------------------------------------------------

@dataclass
class Meta:
    """What the titles take from meta.json: hosts, the first node's GPU and active port, and
    the rate of every port (name:port -> Gb/s)."""
    hosts: str = ""
    gpu: str = ""
    nic: str = ""
    port_rate: Dict[str, str] = field(default_factory=dict)


def load_meta(path: str) -> Meta:
    """Host, GPU and NIC names for the titles; an empty Meta when PATH is not JSON."""
    meta = Meta()
    try:
        j = Json.load(path)
    except (OSError, ValueError):
        return meta
    nodes = j.count("nodes")
    if j.is_array("nodes"):
        hosts = [j.text("nodes", n, "hostname") for n in range(nodes)]
    else:
        hosts = [j.text("hosts", h) for h in range(j.count("hosts"))]
    meta.hosts = ", ".join(hosts)
    ngpus = j.count("nodes", 0, "gpus")
    if ngpus > 0:
        meta.gpu = j.text("nodes", 0, "gpus", 0, "name") + (" x%d" % ngpus if ngpus > 1 else "")
    for k in range(j.count("nodes", 0, "nics")):
        nic = j.at("nodes", 0, "nics", k)
        for p in range(nic.count("ports")):
            port = nic.at("ports", p)
            if "ACTIVE" in port.text("state"):
                rate = port.text("rate_gbps")
                meta.nic = nic.text("name") + ":" + port.text("port") + \
                    (" " + rate + " Gb/s" if rate not in ("", "null") else "")
                break
        if meta.nic:
            break
    for n in range(nodes):
        for k in range(j.count("nodes", n, "nics")):
            nic = j.at("nodes", n, "nics", k)
            for p in range(nic.count("ports")):
                port = nic.at("ports", p)
                rate = port.text("rate_gbps")
                name = nic.text("name") + ":" + port.text("port")
                if re.match(r"^[0-9.]+$", rate) and name not in meta.port_rate:
                    meta.port_rate[name] = rate
    parts = meta.hosts.split(", ")
    if meta.hosts and len(parts) > 4:
        meta.hosts = "%s, %s, %s, ... (%d hosts)" % (parts[0], parts[1], parts[2], len(parts))
    return meta


# --- the figures -----------------------------------------------------------------------

_GP_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def gp_str(s: str) -> str:
    """S as a gnuplot string literal that gnuplot never reads as code: single-quoted (no
    backquote command substitution, no @macro and no backslash escape inside; '' is a quote),
    on one line: control characters, line breaks among them, are spaces."""
    return "'" + _GP_CONTROL.sub(" ", s).replace("'", "''") + "'"


def gp_lines(s: str) -> str:
    """S as a gnuplot string expression whose line breaks stay line breaks: each line a
    gp_str(), joined by a double-quoted "\\n" (the only text gnuplot expands here is ours)."""
    return ' . "\\n" . '.join(gp_str(line) for line in s.split("\n"))


def xtics(lo: float, hi: float) -> str:
    """Major tics at powers of two whose exponent is a multiple of a step (so 1KiB, 1MiB,
    1GiB appear when the span is wide), minor tics at every other power of two."""
    elo = int(math.log(lo) / math.log(2) + 1e-9)
    ehi = int(math.log(hi) / math.log(2) + 0.999999)
    span = ehi - elo
    step = 1 if span <= 8 else (2 if span <= 16 else (5 if span <= 24 else 10))
    tics = []
    for e in range(elo, ehi + 1):
        # The smallest size gets a label too unless a major tic is next to it.
        if e % step == 0 or (step <= 2 and e in (elo, ehi)) or (e == elo and (int(e / step) + 1) * step - e >= 2):
            tics.append("%s %d 0" % (gp_str(common.size_fmt(2 ** e)), 2 ** e))
        else:
            tics.append('"" %d 1' % 2 ** e)
    return "set xtics (" + ", ".join(tics) + ")"


def index_line(*fields: str) -> str:
    """One line of index.tsv: a tab or line break in a field (a name from the data, a title of
    two lines) is a space."""
    return "\t".join(_GP_CONTROL.sub(" ", f) for f in fields) + "\n"


@dataclass
class Figure:
    base: str                   # file name without extension: BENCH-MEM (common.figure_name)
    index_line: str             # its line of index.tsv
    data: Dict[str, str]        # data/NAME.dat -> its text
    body: str                   # its part of plots.gp


def figure(g: Group, meta: Meta) -> Figure:
    lat = is_latency(g.bench)
    metric = "p50" if lat else ("busbw" if g.has_busbw else "bw")
    # Paths in a stable order: direct, staged, then the rest by name.
    paths = [p for _, p in sorted((path_rank(p), p) for p in g.paths)]
    # The file names come from the data: kept within plots/ and plots/data/ (common.file_name).
    base = common.figure_name(g.bench, g.mem, g.in_place)
    data: Dict[str, str] = {}
    point: Dict[Tuple[str, float], Optional[float]] = {}
    lo = hi = 0.0
    for path in paths:
        series = g.paths[path]
        lines = ["# size %s\n" % ("p50_us p99_us" if lat else metric + "_GBps")]
        for size in series.sizes:
            v, point[path, size] = median(series.values.get((size, metric), []))
            if lat:
                lines.append("%.0f %s %s\n" % (size, v, median(series.values.get((size, "p99"), []))[0]))
            else:
                lines.append("%.0f %s\n" % (size, v))
            if lo == 0 or size < lo:
                lo = size
            if size > hi:
                hi = size
        data["data/%s.dat" % file_name(base + "." + path)] = "".join(lines)
    ratio = "direct" in g.paths and "staged" in g.paths
    if ratio:
        lines = ["# size staged_time/direct_time\n"]
        for size in g.paths["direct"].sizes:
            direct, staged = point["direct", size], point.get(("staged", size))
            if direct is None or staged is None or direct <= 0 or staged <= 0:
                continue
            r = staged / direct if lat else direct / staged
            lines.append("%.0f %.6g\n" % (size, r))
        data["data/%s.ratio.dat" % base] = "".join(lines)
        ratio = len(lines) > 1

    what = "latency" if lat else ("bus bandwidth" if metric == "busbw" else "bandwidth")
    t1 = "%s, %s memory%s: %s%s" % (g.bench, g.mem, ", in place" if g.in_place else "", what,
                                     " by path" if len(paths) > 1 else "")
    hosts = meta.hosts if meta.hosts else g.hosts + " host(s)"
    local = g.layer == "local"
    if local:
        hosts = hosts.split(",", 1)[0]
    # Name only what the run used: no GPU for host memory, no NIC on one host or locally.
    gpu = g.gpu if g.gpu else (meta.gpu if g.mem == "device" and meta.gpu else "none used")
    if g.nic:
        nic = g.nic + (" " + meta.port_rate[g.nic] + " Gb/s" if g.nic in meta.port_rate else "")
    elif local or g.hosts == "1":
        nic = "none used (%s)" % ("local copies" if local else "one host")
    else:
        nic = meta.nic if meta.nic else "none recorded"
    t2 = ("host %s; one process" % hosts if local else "hosts %s; %s ranks" % (hosts, g.ranks)) + \
        "; GPU %s; NIC %s" % (gpu, nic)

    b = ["reset\nset encoding utf8\nset grid xtics ytics mytics lc rgb '#dddddd'\nset border lc rgb '#555555'\n",
         "set lmargin 12\nset rmargin 4\nset logscale x 2\n", xtics(lo, hi) + "\n",
         "set xrange [%.0f:%.0f]\n" % (lo / 1.3, hi * 1.3), "set multiplot\n",
         "set size 1,0.7\nset origin 0,0.3\n" if ratio else "set size 1,1\nset origin 0,0\n",
         "set title %s noenhanced\n" % gp_lines(t1 + "\n" + t2),
         'set xlabel ""\n' if ratio else 'set xlabel "message size (bytes, binary units)"\n']
    if lat:
        b.append('set logscale y 10\nset ylabel "latency (us)"\nset format y "%g"\nset key top left noenhanced\n')
    else:
        b.append('unset logscale y\nset yrange [0:*]\nset ylabel "%s (GB/s, 1 GB = 1e9 B)"\n'
                 'set key top left noenhanced\n' % what)
    plot = []
    for j, path in enumerate(paths):
        file = gp_str("data/%s.dat" % file_name(base + "." + path))
        color = COLORS[j % len(COLORS)]
        points = "%s using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' title " % (file, color)
        if lat:
            plot.append(points + gp_str(path + " p50"))
            plot.append("%s using 1:3 with lines lw 1.5 dt 2 lc rgb '%s' title %s"
                        % (file, color, gp_str(path + " p99")))
        else:
            plot.append(points + gp_str(path))
    b.append("plot " + ", ".join(plot) + "\n")
    if ratio:
        b.append('set size 1,0.3\nset origin 0,0\nset xlabel "message size (bytes, binary units)"\n')
        b.append("set title %s font \",9\"\n" % gp_str(
            "staged p50 / direct p50: above 1, the direct path is faster" if lat else
            "direct GB/s / staged GB/s (= staged time / direct time): above 1, the direct path is faster"))
        b.append('unset logscale y\nset yrange [0:*]\nset format y "%g"\nunset key\n')
        b.append('set ylabel "staged / direct (x)"\n')
        b.append("plot %s using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#333333', "
                 "1 with lines lc rgb '#999999' dt 3\n" % gp_str("data/%s.ratio.dat" % base))
    b.append("unset multiplot\n")
    return Figure(base, index_line(base, g.bench, g.mem, "%s (%s)" % (t1, t2)), data, "".join(b))


def figures(data: Data, meta: Meta) -> List[Figure]:
    """One figure per benchmark and memory kind (and in place), in the order of their names."""
    return [figure(data.groups[k], meta) for k in sorted(data.groups, key=lambda k: (k[0] + "\x1c" + k[1], k[2]))]


HEAT_PIXELS = 256           # at most this many pixels a side: bigger matrices show the worst of each block


def heatmap(m: pairs.Matrix, ranks: Optional[List[pairs.Rank]], meta: Meta) -> Figure:
    """The heat map of one matrix: data/NAME.dat in gnuplot's matrix format (NaN: not measured)."""
    n, bw = m.n, m.metric == "bw"
    block = -(-n // HEAT_PIXELS)
    side = -(-n // block)
    lines = ["# %s: %s; rows: source rank / %d, columns: destination rank / %d; NaN: not measured\n"
             % (m.name, "GB/s" if bw else "us", block, block)]
    pick = min if bw else max
    measured: List[float] = []
    for bs in range(side):
        rows = m.rows[bs * block:(bs + 1) * block]
        out = []
        for bd in range(side):
            lo, hi = bd * block, (bd + 1) * block
            cells = [v for r in rows for v in r[lo:hi] if v == v]
            out.append("%.6g" % pick(cells) if cells else "NaN")
            if cells:
                measured.append(pick(cells))
        lines.append(" ".join(out) + "\n")
    data = {"data/%s.dat" % m.name: "".join(lines)}
    if block == 1:
        med = median(["%.6g" % v for v in measured])[1] if measured else 0.0
        lo, hi = (min(measured), max(measured)) if measured else (0.0, 1.0)
    else:
        # Blocks show their worst pair: the range of every pair is read from the rows.
        ends = [(min(v), max(v)) for v in ([x for x in r if x == x] for r in m.rows) if v]
        lo, hi = (min(e[0] for e in ends), max(e[1] for e in ends)) if ends else (0.0, 1.0)
    what = "bandwidth (GB/s, 1 GB = 1e9 B)" if bw else "latency (us, one-way)"
    t1 = "all pairs: %s" % m.title()
    hosts = meta.hosts or ("%d hosts" % len({r.host for r in ranks}) if ranks else "")
    t2 = "%d ranks%s; rows send, columns receive; min %s, %smax %s %s" % (
        n, ", " + hosts if hosts else "", num_fmt(lo), "median %s, " % num_fmt(med) if block == 1 else "",
        num_fmt(hi), "GB/s" if bw else "us")
    if block > 1:
        t2 += "\neach pixel: the %s of %d x %d pairs" % ("lowest" if bw else "highest", block, block)
    b = ["reset\nset encoding utf8\nset size ratio -1\nset border lc rgb '#555555'\n",
         "set title %s noenhanced\n" % gp_lines(t1 + "\n" + t2),
         'set xlabel "destination rank"\nset ylabel "source rank"\nset cblabel %s\n' % gp_str(what),
         "set xrange [%s:%s]\nset yrange [%s:%s]\nset tics out nomirror\n" % (
             "-0.5", awk_num(side * block - 0.5), awk_num(side * block - 0.5), "-0.5"),
         # Slow pairs red: the low end for bandwidth, the high end for latency.
         "set palette defined %s\n" % ("(0 '#b2182b', 0.5 '#fddbc7', 0.8 '#f7f7f7', 1 '#2166ac')" if bw else
                                        "(0 '#2166ac', 0.2 '#f7f7f7', 0.5 '#fddbc7', 1 '#b2182b')"),
         # Bandwidth from 0 (white at 80% of the best pair); latency from the best to 3x it or the worst.
         "set cbrange [%s:%s]\n" % (("0", awk_num(hi if hi > 0 else 1)) if bw else
                                    (awk_num(lo), awk_num(max(hi, 3 * lo, lo + 1e-3))))]
    if ranks is not None and n <= 32 and block == 1:
        labels = ", ".join("%s %d" % (gp_str(pairs.Namer(ranks, n)(r)), r) for r in range(n))
        b.append("set xtics (%s) rotate by 90 right\nset ytics (%s)\n" % (labels, labels))

    # Grey behind the image: a pair not measured (NaN) is no colour of the scale.
    b.append("set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#d0d0d0' "
             "fillstyle solid noborder\n")
    # A pixel of a block of ranks sits over those ranks.
    b.append("plot %s matrix using ($1*%d+%s):($2*%d+%s):3 with image notitle\n" % (
        gp_str("data/%s.dat" % m.name), block, awk_num((block - 1) / 2), block, awk_num((block - 1) / 2)))
    return Figure(m.name, index_line(m.name, "pairs", m.mem, "%s (%s)" % (t1, t2)), data, "".join(b))


def gpu_heatmap(node: p2p.Node, path: str, meta: Meta) -> Figure:
    """The heat map of one GPU-to-GPU path at the largest size measured: data/NAME.dat in
    gnuplot's matrix format, NaN where the pair has no figure (n/a, not measured, the diagonal)."""
    size = node.largest()
    base = p2p.figure_name(node.bench, node.mem, path, size)
    order = node.order()
    s = common.schema()

    def value(c: p2p.Cell) -> str:
        return c.bw if c.status == "ok" and c.bw != "" and not s.value_fault("bw_GBps", c.bw) else "NaN"

    grid = node.grid(path, size, value)
    rows = [[x if x not in ("-", "") else "NaN" for x in row] for row in grid]
    measured = [float(x) for row in rows for x in row if x != "NaN"]
    lines = ["# %s: GB/s; rows: from GPU, columns: to GPU (%s); NaN: no figure\n"
             % (base, " ".join("gpu%d" % g for g in order))]
    lines += [" ".join(row) + "\n" for row in rows]
    hi = max(measured) if measured else 1.0
    t1 = "GPU to GPU: %s, %s, %s memory" % (path, common.size_fmt(size), node.mem)
    t2 = "%d GPUs%s; rows copy from, columns copy to; %s" % (
        len(order), ", " + meta.hosts if meta.hosts else "",
        "min %s, median %s, max %s GB/s" % (num_fmt(min(measured)), num_fmt(median(["%.6g" % v for v in measured])[1]),
                                            num_fmt(hi)) if measured else "no figure")
    if node.simulated:
        t2 += "\nsimulated GPU: behaviour, never speed"
    labels = ", ".join("%s %d" % (gp_str("gpu%d" % g), k) for k, g in enumerate(order))
    n = len(order)
    b = ["reset\nset encoding utf8\nset size ratio -1\nset border lc rgb '#555555'\n",
         "set title %s noenhanced\n" % gp_lines(t1 + "\n" + t2),
         'set xlabel "to GPU"\nset ylabel "from GPU"\nset cblabel %s\n' % gp_str("bandwidth (GB/s, 1 GB = 1e9 B)"),
         "set xrange [-0.5:%s]\nset yrange [%s:-0.5]\nset tics out nomirror\n" % (awk_num(n - 0.5), awk_num(n - 0.5)),
         "set xtics (%s)\nset ytics (%s)\n" % (labels, labels),
         # As the all-pairs bandwidth maps: slow pairs red, white at 80% of the best.
         "set palette defined (0 '#b2182b', 0.5 '#fddbc7', 0.8 '#f7f7f7', 1 '#2166ac')\n",
         "set cbrange [0:%s]\n" % awk_num(hi if hi > 0 else 1),
         "set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#d0d0d0' "
         "fillstyle solid noborder\n",
         "plot %s matrix with image notitle\n" % gp_str("data/%s.dat" % base)]
    return Figure(base, index_line(base, node.bench, node.mem, "%s (%s)" % (t1, t2)),
                  {"data/%s.dat" % base: "".join(lines)}, "".join(b))


def gp_script(figs: List[Figure], formats: str, png_term: str) -> str:
    """plots.gp: every figure in each format, in the scratch directory's relative names."""
    out = []
    for fmt in formats.split(","):
        if fmt == "png" and png_term == "pngcairo":
            out.append('set terminal pngcairo size 1000,760 font "sans,10" noenhanced\n')
        elif fmt == "png":
            out.append("set terminal png size 1000,760 noenhanced\n")
        else:
            out.append('set terminal svg size 1000,760 dynamic font "sans,10" noenhanced\n')
        for fig in figs:
            out.append("set output %s\n%s" % (gp_str(fig.base + "." + fmt), fig.body))
        out.append("set output\n")
    return "".join(out)


# --- gnuplot and the output directory ----------------------------------------------------

def png_terminal() -> str:
    """pngcairo where this gnuplot has it, else png."""
    try:
        listing = subprocess.run(["gnuplot", "-e", "set terminal"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).stdout
    except OSError:
        return "png"
    return "pngcairo" if re.search(rb"^ *pngcairo ", listing, re.M) else "png"


def complete(path: str, fmt: str) -> bool:
    """gnuplot says little or nothing when a figure cannot be written (a full disk): a PNG
    ends with its IEND chunk, an SVG with </svg>."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            n = f.tell()
            if n == 0:
                return False
            f.seek(max(0, n - 64))
            tail = f.read()
    except OSError:
        return False
    if fmt == "png":
        return tail[-12:] == bytes.fromhex("0000000049454e44ae426082")
    return b"</svg>" in tail


def _first_line(path: str) -> Optional[str]:
    """The first line of PATH; None when it is empty."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return text.split("\n", 1)[0] if text else None


def install(work: str, out: str, files: List[str]) -> None:
    """Copy FILES from WORK into OUT, all whole or none (common.write_all); then the data
    files of an earlier run that are not among them go. OUT and OUT/data are directories of
    their own: a link there is refused, never written through."""
    for d in (out, out + "/data"):
        try:
            common.make_dir(d)
        except OSError as e:
            raise failure("cannot create %s: %s" % (d, e.strerror))
    contents = []
    for f in files:
        try:
            with open(os.path.join(work, f), "rb") as src:
                contents.append((out + "/" + f, src.read()))
        except OSError as e:
            raise failure("cannot read %s: %s" % (os.path.join(work, f), e.strerror))
    write_all(contents)
    for old in glob.glob(glob.escape(out) + "/data/*.dat"):
        if os.path.relpath(old, out) not in files:
            try:
                os.unlink(old)
            except OSError:
                pass


def parse_args(argv: List[str]) -> Tuple[str, str, str]:
    """(RESULTS_DIR, --out, --format) from the command line; a bad option raises one line (exit 2)."""
    out, formats, args = "", "png,svg", []
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if a == "--out":
            if not nxt:
                raise usage_error("--out: expected a directory")
            out = nxt
            i += 1
        elif a == "--format":
            if not _FORMATS.match(nxt) or nxt.endswith("\n"):
                raise usage_error("--format: expected png, svg or png,svg, got '%s'" % nxt)
            formats = nxt
            i += 1
        elif a in ("-h", "--help"):
            common.print_help(__doc__)
            raise common.Stop(common.EXIT_OK)
        elif a.startswith("-"):
            raise usage_error("unknown option '%s'; see --help" % a)
        else:
            args.append(a)
        i += 1
    if len(args) != 1:
        raise usage_error("expected one RESULTS_DIR, e.g. 'gdrb plot results/20261121-quick'; see --help")
    return args[0], out, formats


def main(argv: List[str]) -> int:
    results, out, formats = parse_args(argv)
    if os.path.isdir(results) and not os.path.isfile(os.path.join(results, "results.csv")) and \
            pairs.matrix_files(results):
        csv_path, results_dir = "", results.rstrip("/") or "/"      # gdrb_mpi_pairs run by hand
    else:
        csv_path = common.results_csv(results)
        results_dir = os.path.dirname(csv_path) or "."
    out = out or os.path.join(results_dir, "plots")
    if shutil.which("gnuplot") is None:
        raise failure(GNUPLOT_MISSING)
    png_term = png_terminal()
    # Read everything first, into a scratch directory: bad input leaves no trace in RESULTS_DIR.
    scratch = os.environ.get("TMPDIR") or "/tmp"
    try:
        work = tempfile.mkdtemp(prefix="gdrb-plot.", dir=scratch)
    except OSError as e:
        raise failure("cannot create a temporary directory in %s: %s" % (scratch, e.strerror))
    try:
        return _plot(csv_path, results_dir, out, formats, png_term, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _plot(csv_path: str, results_dir: str, out: str, formats: str, png_term: str, work: str) -> int:
    meta_path = os.path.join(results_dir, "meta.json")
    meta = load_meta(meta_path) if os.path.isfile(meta_path) else Meta()
    figs = figures(read_data(csv_path), meta) if csv_path else []
    nodes = p2p.read(csv_path, lambda line, name, v, why: sys.stderr.write(
        "%s:%d: %s '%s' is %s: not plotted\n" % (csv_path, line, name, common.term(v), why))) if csv_path else {}
    figs += [gpu_heatmap(node, path, meta) for node in nodes.values() for path in node.paths]
    mats, ranks = pairs.load_dir(results_dir)
    figs += [heatmap(m, ranks, meta) for m in mats]
    if not figs:
        common.say("%s: no aggregate row with status ok: nothing to plot" % csv_path)
        return common.EXIT_OK
    os.mkdir(os.path.join(work, "data"))
    texts = {"plots.gp": gp_script(figs, formats, png_term), "index.tsv": "".join(f.index_line for f in figs)}
    for fig in figs:
        texts.update(fig.data)
    write_all([(os.path.join(work, name), text) for name, text in texts.items()])
    # gnuplot draws in the scratch directory: a figure it could not write whole is never shown.
    log = os.path.join(work, "gnuplot.log")
    try:
        with open(log, "wb") as err:
            rc = subprocess.run(["gnuplot", "plots.gp"], cwd=work, stderr=err, stdin=subprocess.DEVNULL).returncode
    except OSError as e:
        raise failure("cannot run gnuplot: %s" % e.strerror)
    if rc != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            sys.stderr.write(f.read())
        raise failure("gnuplot failed on plots.gp (its messages above)")
    files = ["plots.gp", "index.tsv", "gnuplot.log"] + sorted(n for n in texts if n.startswith("data/"))
    for fig in figs:
        for fmt in formats.split(","):
            name = fig.base + "." + fmt
            if not complete(os.path.join(work, name), fmt):
                first = _first_line(log)
                raise failure("gnuplot could not write %s whole (a full %s?)%s" % (
                    name, os.environ.get("TMPDIR") or "/tmp", "" if first is None else ": " + first))
            files.append(name)
    install(work, out, files)
    # gnuplot reports bad data as warnings and still exits 0: show them.
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f.read().splitlines():
            if line.endswith("warning: matrix contains missing or undefined values"):
                continue         # a heat map's empty cells: pairs not measured, said in its title
            sys.stderr.write("%s: gnuplot: %s\n" % (common.prog, line))
    common.say("%d figures (%s) in %s" % (len(figs), formats, out))
    return common.EXIT_OK
