"""All-pairs matrices (gdrb_mpi_pairs): reading the matrix files and the rank table of a
results directory, and the "relative to the fabric" analysis that names the suspects.

Files (docs/pairs.md, docs/csv-schema.md "Pairs CSV"):
  pairs-<size>-<path>.csv, pairs-lat-<size>-<path>.csv   bandwidth (GB/s) / latency (us), n x n,
      rows = sources, columns = destinations, first row and column the rank numbers; an
      empty cell is not measured. gdrb-sweep adds the memory kind: pairs-[lat-]<mem>-<size>-<path>.csv
  pairs-ranks.csv    the rank table: a row per rank (common/core/pairs_ranks.def)
  pairs.csv          one row per pair (the memory kind of a matrix without one in its name)

The analysis: a pair is low when its bandwidth is below FACTOR x the reference (the median
pair or the best), or its latency above FACTOR x the reference. Low pairs are explained, in
this order, by a rail (GPU i of every node low), a node (most of its sends and/or receives
low: node= share, default 75%), a round (every pair of one shift low), a partly bad node,
a link (one source -> destination), and what cannot be
told apart: an endpoint whose only measured peer in a direction is the low one (n = 2, or
sampled rounds) cannot be told from that link; a node low with several peers but not most
of them is "a partly bad node or several bad links".
"""

from __future__ import annotations

import os
import re
from array import array
from dataclasses import dataclass, field
from typing import IO, Dict, List, Optional, Sequence, Set, Tuple

from .common import (MAX_DIGITS, SCHEMA_DEF, Schema, csv_split, decimal, integer, num_fmt, open_regular, size_fmt,
                     usage_error)

# Which binaries are all-pairs ones (their rows follow the pairs schema, beside their matrices, and
# never go into results.csv) each says itself: --describe's all_pairs (facts.py).

# The size: a size_t's 20 digits at most (a longer one is not a matrix this tool wrote). The memory
# kind is any the binaries have (--describe): a name that starts with a letter.
MATRIX_NAME = re.compile(r"pairs-(lat-)?(?:([a-z][a-z0-9_]{0,63})-)?([0-9]{1,20})-([a-z0-9_]+)\.csv")
RANKS_FILE = "pairs-ranks.csv"
PAIRS_CSV = "pairs.csv"
# Beside csv_schema.def: the pairs CSV's and the rank table's one definitions.
PAIRS_SCHEMA_DEF = SCHEMA_DEF.parent / "pairs_schema.def"
RANKS_SCHEMA_DEF = SCHEMA_DEF.parent / "pairs_ranks.def"
_schemas: Dict[str, Schema] = {}


def pairs_schema() -> Schema:
    """The pairs CSV's columns, from their one definition (common/core/pairs_schema.def)."""
    if "pairs" not in _schemas:
        _schemas["pairs"] = Schema(PAIRS_SCHEMA_DEF, "GDRB_PAIRS_COL")
    return _schemas["pairs"]


def ranks_schema() -> Schema:
    """The rank table's columns, from their one definition (common/core/pairs_ranks.def)."""
    if "ranks" not in _schemas:
        _schemas["ranks"] = Schema(RANKS_SCHEMA_DEF, "GDRB_RANKS_COL")
    return _schemas["ranks"]


def pairs_header() -> str:
    """The pairs CSV's header."""
    return pairs_schema().header


def ranks_header() -> str:
    """The rank table's header (pairs-ranks.csv)."""
    return ranks_schema().header


# --- the files ---------------------------------------------------------------------------

@dataclass
class Rank:
    rank: int
    host: str
    local_rank: int
    gpu: str
    nic: str


@dataclass
class Matrix:
    """One matrix file: rows[src][dst] is the value, NaN where not measured."""
    path: str
    metric: str          # bw or lat
    mem: str             # host, pinned, device; "" when neither the name nor pairs.csv says
    size: int
    xpath: str           # direct, staged, ...
    rows: List[array] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def name(self) -> str:
        return os.path.basename(self.path)[:-4]

    def title(self) -> str:
        what = "bandwidth" if self.metric == "bw" else "latency"
        return "%s %s, %s%s path" % (size_fmt(self.size), what, self.mem + " memory, " if self.mem else "", self.xpath)


def _text(path: str) -> IO[str]:
    """PATH opened as text under the rule of evidence (common.open_regular: a regular file,
    never through a link, never waited on), read line by line; raises OSError with the reason
    otherwise."""
    return open_regular(path, nofollow=True, mode="r", encoding="utf-8", errors="replace", newline="")


def matrix_files(results: str) -> List[str]:
    """The matrix files of a results directory, sorted by name."""
    try:
        names = os.listdir(results)
    except OSError:
        return []
    return sorted(os.path.join(results, f) for f in names if MATRIX_NAME.fullmatch(f))


def _mem_of_pairs_csv(results: str) -> str:
    """The memory kind of the first row of RESULTS/pairs.csv ("" if none)."""
    try:
        with _text(os.path.join(results, PAIRS_CSV)) as f:
            header, first = f.readline().rstrip("\r\n").split(","), f.readline().rstrip("\r\n")
    except OSError:
        return ""
    if "mem" not in header or not first:
        return ""
    fields = csv_split(first)
    i = header.index("mem")
    return fields[i] if i < len(fields) and re.fullmatch(r"[a-z][a-z0-9_]{0,63}", fields[i]) else ""


SIMULATED_MARK = "simulated GPU: "     # the binary's note on a row measured on tests/support/simgpu
TEST_HOOK_MARK = "test hook GDRB_"      # the binary's note on a row with a test hook (GDRB_INJECT_*) active


def note_part(note: str, mark: str) -> Optional[str]:
    """The first part ("; " between parts) of NOTE that starts with MARK, less MARK; None if
    none does."""
    return next((part[len(mark):] for part in note.split("; ") if part.startswith(mark)), None)


def note_match(note: str, pattern: "re.Pattern[str]") -> Optional[str]:
    """The first part ("; " between parts) of NOTE that PATTERN matches at its start, as it is;
    None if none does."""
    return next((part for part in note.split("; ") if pattern.match(part)), None)


def _note_part(results: str, mark: str, whole: Optional["re.Pattern[str]"] = None) -> Optional[str]:
    """The first part ("; " between parts) of a note of RESULTS/pairs.csv that starts with
    MARK, less MARK; with WHOLE, the first part that WHOLE matches at its start, as it is (MARK
    then only picks the lines to read). None if no note has one."""
    try:
        with _text(os.path.join(results, PAIRS_CSV)) as f:
            header = f.readline().rstrip("\r\n").split(",")
            if "note" not in header:
                return None
            i = header.index("note")
            for line in f:
                if mark not in line:
                    continue
                fields = csv_split(line.rstrip("\r\n"))
                note = fields[i] if i < len(fields) else ""
                part = note_part(note, mark) if whole is None else note_match(note, whole)
                if part is not None:
                    return part
    except OSError:
        return None
    return None


def simulated_gpu(results: str) -> str:
    """The simulated GPU (the test suite's, tests/support/simgpu) that rows of RESULTS/pairs.csv were
    measured on, as their note names it ("simulated GPU: NAME"); "" if none was."""
    name = _note_part(results, SIMULATED_MARK)
    return "" if name is None else name or "a simulated GPU"


GPU_SHARED = re.compile(r"[0-9]+ ranks share GPU ")


def gpu_shared(results: str) -> str:
    """Where ranks of one host ran on one GPU in RESULTS/pairs.csv, the note's part that says so
    ("2 ranks share GPU 0000:17:00.0 on node3 (MPS off)"); "" if none did."""
    return _note_part(results, " ranks share GPU ", GPU_SHARED) or ""


def test_hook(results: str) -> str:
    """The test hook active in a run of RESULTS/pairs.csv, as the binary's note names it
    ("test hook GDRB_INJECT_HOSTS=a_b"); "" if none was."""
    hook = _note_part(results, TEST_HOOK_MARK)
    return "" if hook is None else TEST_HOOK_MARK + hook


_NOT_DECIMAL = re.compile(r"[^0-9.,]")
_LONG_RUN = re.compile(r"[0-9]{%d}" % (MAX_DIGITS + 1))


def _shown(s: str) -> str:
    return s if len(s) <= 40 else s[:40] + "..."


def _bad_cell(v: str) -> bool:
    return decimal(v) is None


def load_matrix(path: str, mem_default: str = "") -> Matrix:
    """The matrix file PATH; a file that is not one (no header, not square, a ragged row, a
    value that is not a non-negative decimal) is refused with one line "FILE:LINE: ...", exit 2."""
    m = MATRIX_NAME.fullmatch(os.path.basename(path))
    if not m:
        raise usage_error("%s: not a matrix file name; expected pairs-[lat-][MEM-]SIZE-PATH.csv" % path)
    mat = Matrix(path, "lat" if m.group(1) else "bw", m.group(2) or mem_default, int(m.group(3)), m.group(4))
    try:
        f = _text(path)
    except OSError as e:
        raise usage_error("%s: cannot read: %s" % (path, e.strerror))
    with f:
        head = f.readline().rstrip("\r\n").split(",")
        n = len(head) - 1
        if head[0] != "src\\dst" or n < 2 or head[1:] != [str(i) for i in range(n)]:
            raise usage_error("%s:1: not a pairs matrix: the first line must be 'src\\dst,0,1,...,N-1' "
                              "with N >= 2 ranks" % path)
        for lineno, line in enumerate(f, start=2):
            line = line.rstrip("\r\n")
            fields = line.split(",")
            r = len(mat.rows)
            if len(fields) != n + 1:
                raise usage_error("%s:%d: has %d fields, the header %d: a ragged matrix" % (
                    path, lineno, len(fields), n + 1))
            if fields[0] != str(r):
                raise usage_error("%s:%d: row '%s' where row %d was due: rows must be the ranks 0..%d in order"
                                  % (path, lineno, fields[0], r, n - 1))
            # Digits, dots and commas only (one C-level scan): no nan, inf, sign or exponent; an
            # empty cell (not measured) is NaN.
            if _NOT_DECIMAL.search(line, len(fields[0])):
                bad = next(k for k, x in enumerate(fields[1:]) if x and _bad_cell(x))
                raise usage_error("%s:%d: column %d: '%s' is not a non-negative decimal number" % (
                    path, lineno, bad, fields[1 + bad]))
            try:
                vals = list(map(float, [x or "nan" for x in fields[1:]]))
            except ValueError:
                bad = next(k for k, x in enumerate(fields[1:]) if x and _bad_cell(x))
                raise usage_error("%s:%d: column %d: '%s' is not a non-negative decimal number" % (
                    path, lineno, bad, fields[1 + bad]))
            # More digits than common.decimal takes (a C-level scan): 400 digits are inf to
            # float(), 300 make a reference whose limit overflows.
            if _LONG_RUN.search(line, len(fields[0])):
                bad = next(k for k, x in enumerate(fields[1:]) if x and _bad_cell(x))
                raise usage_error("%s:%d: column %d: '%s' is not a finite decimal number (at most 30 digits each "
                                  "side of the point)" % (path, lineno, bad, _shown(fields[1 + bad])))
            mat.rows.append(array("d", vals))
            if len(mat.rows) > n:
                break
    if mat.n != n:
        raise usage_error("%s: %d rows for %d columns: not a square matrix" % (path, mat.n, n))
    return mat


def load_ranks(results: str, n: int) -> Optional[List[Rank]]:
    """RESULTS/pairs-ranks.csv for N ranks; None when there is none (ranks are then named by
    number); a table that does not fit is refused, one line, exit 2."""
    path = os.path.join(results, RANKS_FILE)
    if not os.path.lexists(path):
        return None
    try:
        with _text(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise usage_error("%s: cannot read: %s" % (path, e.strerror))
    s = ranks_schema()
    if not lines or lines[0] != s.header:
        raise usage_error("%s:1: not a rank table: the first line must be '%s'" % (path, s.header))
    col = s.index
    ranks: List[Rank] = []
    for lineno, line in enumerate(lines[1:], start=2):
        f = line.split(",")
        # ASCII digits: str.isdigit() takes '\u00b2', which int() then refuses.
        if len(f) != len(s.columns) or f[col["rank"]] != str(len(ranks)) or integer(f[col["local_rank"]]) is None:
            raise usage_error("%s:%d: expected rank %d,%s" % (path, lineno, len(ranks),
                                                              ",".join(c.upper() for c in s.columns[1:])))
        ranks.append(Rank(int(f[col["rank"]]), f[col["host"]], int(f[col["local_rank"]]), f[col["gpu"]],
                          f[col["nic"]]))
    if len(ranks) != n:
        raise usage_error("%s: %d ranks, the matrices %d" % (path, len(ranks), n))
    return ranks


def load_dir(results: str) -> Tuple[List[Matrix], Optional[List[Rank]]]:
    """Every matrix of RESULTS and its rank table."""
    mem = _mem_of_pairs_csv(results)
    mats = [load_matrix(p, mem) for p in matrix_files(results)]
    ranks = None
    if mats:
        n = mats[0].n
        for m in mats:
            if m.n != n:
                raise usage_error("%s: %d ranks, %s: %d: the matrices of one directory have one rank count"
                                  % (m.path, m.n, mats[0].path, n))
        ranks = load_ranks(results, n)
    return mats, ranks


# --- the analysis ---------------------------------------------------------------------------

@dataclass
class Suspect:
    kind: str            # rail, fabric, node, round, partial, link, ambiguous
    text: str
    ranks: List[int] = field(default_factory=list)


@dataclass
class Analysis:
    matrix: Matrix
    ref_name: str        # median or best
    factor: float
    ref: float = 0.0     # the median or best pair
    limit: float = 0.0   # a pair beyond it is low
    measured: int = 0
    empty: int = 0       # off-diagonal cells not measured
    lo: float = 0.0
    median: float = 0.0
    hi: float = 0.0
    low: List[Tuple[int, int, float]] = field(default_factory=list)
    worst: Optional[Tuple[int, int, float]] = None
    suspects: List[Suspect] = field(default_factory=list)
    names: "Namer" = None

    def unit(self) -> str:
        return "GB/s" if self.matrix.metric == "bw" else "us"

    def rel(self, v: float) -> str:
        """V against the reference: "42% of median" (bandwidth), "3.1x best" (latency)."""
        if self.ref <= 0:
            return "reference 0"
        if self.matrix.metric == "bw":
            return "%.0f%% of %s" % (100 * v / self.ref, self.ref_name)
        return "%.1fx %s" % (v / self.ref, self.ref_name)

    def summary(self) -> str:
        m = self.matrix
        u = self.unit()
        return "%s: %d x %d, %d pairs measured%s, min %s, median %s, max %s %s" % (
            m.name, m.n, m.n, self.measured, ", %d not" % self.empty if self.empty else "",
            num_fmt(self.lo), num_fmt(self.median), num_fmt(self.hi), u)


def _median(v: List[float]) -> float:
    v.sort()
    k = len(v)
    return v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2


class Namer:
    """How a rank is named: its host (one rank per host), "host GPUi" (a rank per GPU), or
    "rank r" without a rank table."""

    def __init__(self, ranks: Optional[Sequence[Rank]], n: int):
        self.ranks = ranks
        per_host: Dict[str, int] = {}
        for r in ranks or []:
            per_host[r.host] = per_host.get(r.host, 0) + 1
        self.per_host = per_host
        self.rails = ranks is not None and len({r.local_rank for r in ranks}) > 1
        self.n = n

        self.gpus = any(r.gpu for r in ranks or [])

    def __call__(self, r: int) -> str:
        if self.ranks is None:
            return "rank %d" % r
        rk = self.ranks[r]
        if self.per_host.get(rk.host, 0) > 1:
            # Several ranks on a host: its GPU where one is recorded, else host:local rank.
            return "%s GPU%d" % (rk.host, rk.local_rank) if self.gpus else "%s:%d" % (rk.host, rk.local_rank)
        return rk.host

    def rail(self, local: int) -> str:
        nics = {r.nic for r in self.ranks or [] if r.local_rank == local}
        nic = nics.pop() if len(nics) == 1 else ""
        return ("GPU%d" if self.gpus else "local rank %d") % local + ("/" + nic if nic else "")


def _shift_groups(mat: Matrix, ranks: Optional[Sequence[Rank]]) -> Tuple[List[int], List[int]]:
    """Each rank's shift group (its rail where ranks meet only the same local rank, else one
    group) and its position in it: the pair s -> d ran in round (pos[d] - pos[s]) mod size."""
    n = mat.n
    group = [0] * n
    if ranks is not None and len({r.local_rank for r in ranks}) > 1:
        row0 = mat.rows[0]
        local0 = ranks[0].local_rank
        # Rail layout: rank 0 has no measured pair with another local rank.
        if not any(row0[d] == row0[d] for d in range(n) if ranks[d].local_rank != local0):
            group = [r.local_rank for r in ranks]
    pos, seen = [0] * n, {}
    for r in range(n):
        pos[r] = seen.get(group[r], 0)
        seen[group[r]] = pos[r] + 1
    return group, pos


def analyse(mat: Matrix, ranks: Optional[Sequence[Rank]], ref_name: str, factor: float,
            node_frac: float = 0.75) -> Analysis:
    """The low pairs of MAT against FACTOR x its median or best pair, and who explains them."""
    a = summarise(mat, ranks, ref_name, factor)
    n, bw = mat.n, mat.metric == "bw"
    if not a.measured:
        return a
    a.ref = a.median if ref_name == "median" else (a.hi if bw else a.lo)
    a.limit = limit = factor * a.ref
    sent_m, recv_m = [n - 1] * n, [n - 1] * n
    for s, row in enumerate(mat.rows):
        if bw:
            a.low.extend((s, d, v) for d, v in enumerate(row) if v < limit and d != s)
        else:
            a.low.extend((s, d, v) for d, v in enumerate(row) if v > limit and d != s)
        for d in [d for d, v in enumerate(row) if v != v and d != s]:
            sent_m[s] -= 1
            recv_m[d] -= 1
    a.suspects = attribute(a, ranks, sent_m, recv_m, node_frac)
    return a


def summarise(mat: Matrix, ranks: Optional[Sequence[Rank]] = None, ref_name: str = "median",
              factor: float = 1.0) -> Analysis:
    """MAT's pairs measured, its min, median, max and worst pair (no suspects)."""
    a = Analysis(mat, ref_name, factor, names=Namer(ranks, mat.n))
    n, bw = mat.n, mat.metric == "bw"
    values: List[float] = []
    worst: Optional[Tuple[int, int, float]] = None
    pick = min if bw else max
    for s, row in enumerate(mat.rows):
        vals = [v for d, v in enumerate(row) if v == v and d != s]
        if vals:
            w = pick(vals)
            if worst is None or (w < worst[2] if bw else w > worst[2]):
                worst = (s, next(d for d, v in enumerate(row) if v == w and d != s), w)
        values.extend(vals)
    a.worst = worst
    a.measured = len(values)
    a.empty = n * (n - 1) - a.measured
    if not values:
        return a
    a.lo, a.hi = min(values), max(values)
    a.median = _median(values)
    return a


def _pct(a: Analysis, vals: List[float]) -> str:
    return a.rel(_median(list(vals)))


@dataclass
class _Lows:
    """The low pairs seen from each endpoint, and the endpoints low on most of their pairs."""
    a: Analysis
    ranks: Optional[Sequence[Rank]]
    name: Namer
    sent_m: List[int]            # pairs measured per sender
    recv_m: List[int]            # pairs measured per receiver
    sent_low: Dict[int, List[Tuple[int, float]]]
    recv_low: Dict[int, List[Tuple[int, float]]]
    node_send: Set[int]          # most of its sends low
    node_recv: Set[int]          # most of its receives low


def _lows(a: Analysis, ranks: Optional[Sequence[Rank]], sent_m: List[int], recv_m: List[int],
          node_frac: float) -> _Lows:
    sent_low: Dict[int, List[Tuple[int, float]]] = {}
    recv_low: Dict[int, List[Tuple[int, float]]] = {}
    for s, d, v in a.low:
        sent_low.setdefault(s, []).append((d, v))
        recv_low.setdefault(d, []).append((s, v))
    node_send = {r for r, lows in sent_low.items() if sent_m[r] >= 2 and len(lows) >= node_frac * sent_m[r]}
    node_recv = {r for r, lows in recv_low.items() if recv_m[r] >= 2 and len(lows) >= node_frac * recv_m[r]}
    return _Lows(a, ranks, Namer(ranks, a.matrix.n), sent_m, recv_m, sent_low, recv_low, node_send, node_recv)


def _rail_suspects(lw: _Lows) -> Tuple[List[Suspect], Set[int]]:
    """A rail: every rank of GPU i (on every node) low in a direction, the other rails not."""
    out: List[Suspect] = []
    explained: Set[int] = set()
    if not lw.name.rails or lw.ranks is None:
        return out, explained
    by_local: Dict[int, List[int]] = {}
    for rk in lw.ranks:
        by_local.setdefault(rk.local_rank, []).append(rk.rank)
    for local in sorted(by_local):
        members = by_local[local]
        if len(members) >= 2 and all(r in lw.node_send or r in lw.node_recv for r in members):
            vals = [v for r in members for _, v in lw.sent_low.get(r, [])]
            out.append(Suspect("rail", "rail %s on every node (%d of %d nodes, %s on %d pairs)" % (
                lw.name.rail(local), len(members), len(members), _pct(lw.a, vals), len(vals)), list(members)))
            explained.update(members)
    return out, explained


def _fabric_suspect(lw: _Lows, node_ranks: List[int]) -> Optional[Suspect]:
    """Most ranks low on most pairs: no node stands out from the fabric."""
    a, n = lw.a, lw.a.matrix.n
    if not (n >= 4 and len(node_ranks) > n / 2):
        return None
    return Suspect("fabric", "the fabric, not one node: %d of %d ranks are low on most of their pairs "
                             "(%s); the fabric is uniformly slow, or the reference (%s %s %s) stands "
                             "far apart from the rest" % (
                                 len(node_ranks), n, _pct(a, [v for _, _, v in a.low]), a.ref_name,
                                 num_fmt(a.ref), a.unit()), node_ranks)


def _node_suspect(lw: _Lows, host: str, g: List[int], whole: bool) -> Suspect:
    """One node (or one host's GPUs together, whole) low on most of its pairs."""
    both = all(r in lw.node_send and r in lw.node_recv for r in g)
    sends = all(r in lw.node_send for r in g)
    direction = "both directions" if both else "sends" if sends else "receives" \
        if all(r in lw.node_recv for r in g) else "sends or receives"
    peers_low: Set[Tuple[int, int]] = set()
    peers_all = 0
    vals: List[float] = []
    for r in g:
        lows = set()
        if r in lw.node_send:
            lows |= {p for p, _ in lw.sent_low.get(r, [])}
            vals += [v for _, v in lw.sent_low.get(r, [])]
        if r in lw.node_recv:
            lows |= {p for p, _ in lw.recv_low.get(r, [])}
            vals += [v for _, v in lw.recv_low.get(r, [])]
        peers_low |= {(r, p) for p in lows}
        peers_all += max(lw.sent_m[r] if r in lw.node_send else 0, lw.recv_m[r] if r in lw.node_recv else 0)
    label = ("node %s (all %d %s, " % (host, len(g), "GPUs" if lw.name.gpus else "ranks")) if whole \
        else "node %s (" % lw.name(g[0])
    return Suspect("node", "%s%s, %s on %d of %d pairs)" % (
        label, direction, _pct(lw.a, vals), len(peers_low), max(peers_all, len(peers_low))), list(g))


def _node_suspects(lw: _Lows, node_ranks: List[int]) -> List[Suspect]:
    """Nodes: most of their sends or receives low. A host all of whose GPUs are suspect is one node."""
    ranks, name = lw.ranks, lw.name
    by_host: Dict[str, List[int]] = {}
    for r in node_ranks:
        by_host.setdefault(ranks[r].host if ranks else str(r), []).append(r)
    out: List[Suspect] = []
    for host, members in by_host.items():
        whole = ranks is not None and name.per_host.get(host, 1) > 1 and len(members) == name.per_host[host]
        groups = [members] if whole else [[r] for r in members]
        out += [_node_suspect(lw, host, g, whole) for g in groups]
    return out


def _unexplained(lw: _Lows, explained: Set[int], node_ranks: List[int]) -> List[Tuple[int, int, float]]:
    """The low pairs no rail or node explains."""
    return [(s, d, v) for s, d, v in lw.a.low
            if not (s in lw.node_send and (s in explained or s in node_ranks))
            and not (d in lw.node_recv and (d in explained or d in node_ranks))]


def _round_suspects(lw: _Lows, rest: List[Tuple[int, int, float]]) -> Tuple[List[Suspect], Set[Tuple[int, int]]]:
    """A round: every pair of one shift low (and not one node's) is what ran at the same time."""
    a, ranks, name, n = lw.a, lw.ranks, lw.name, lw.a.matrix.n
    out: List[Suspect] = []
    taken: Set[Tuple[int, int]] = set()
    if len(rest) < 3:
        return out, taken
    group, pos = _shift_groups(a.matrix, ranks)
    size: Dict[int, int] = {}
    for g in group:
        size[g] = size.get(g, 0) + 1
    by_round: Dict[Tuple[int, int], List[Tuple[int, int, float]]] = {}
    for s, d, v in rest:
        if group[s] == group[d]:
            by_round.setdefault((group[s], (pos[d] - pos[s]) % size[group[s]]), []).append((s, d, v))
    members: Dict[int, List[int]] = {}
    for r in range(n):
        members.setdefault(group[r], []).append(r)
    for (g, k), items in sorted(by_round.items()):
        m = size[g]
        if len(items) < 3:
            continue
        ms = members[g]
        measured = sum(1 for i in range(m) if a.matrix.rows[ms[i]][ms[(i + k) % m]] ==
                       a.matrix.rows[ms[i]][ms[(i + k) % m]])
        if len(items) < measured:
            continue
        rail = " of rail %s" % name.rail(ranks[ms[0]].local_rank) if len(members) > 1 and ranks else ""
        out.append(Suspect("round", "round %d%s (every pair i -> i+%d low: %d of %d pairs, %s): what ran at the "
                                    "same time, a disturbance during that round or the fabric's routes for that "
                                    "shift, not one node or link" % (
                                        k, rail, k, len(items), measured, _pct(a, [v for _, _, v in items])),
                           sorted({r for s, d, _ in items for r in (s, d)})))
        taken |= {(s, d) for s, d, _ in items}
    return out, taken


def _partial_suspects(lw: _Lows, rest: List[Tuple[int, int, float]],
                      done: Set[Tuple[int, int]]) -> List[Suspect]:
    """An endpoint low with several peers, but not most: a partly bad node or several bad links."""
    name = lw.name
    out: List[Suspect] = []
    per_end: Dict[Tuple[int, str], List[Tuple[int, int, float]]] = {}
    for s, d, v in rest:
        per_end.setdefault((s, "sends"), []).append((s, d, v))
        per_end.setdefault((d, "receives"), []).append((s, d, v))
    for (r, direction), items in sorted(per_end.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        items = [it for it in items if (it[0], it[1]) not in done]
        if len(items) < 3:
            continue
        peers = [d if direction == "sends" else s for s, d, _ in items]
        measured = lw.sent_m[r] if direction == "sends" else lw.recv_m[r]
        shown = ", ".join(name(p) for p in peers[:4]) + (", ..." if len(peers) > 4 else "")
        out.append(Suspect("partial", "node %s or its links: %s low with %d of %d peers (%s), %s: neither all its "
                                      "pairs nor one peer, cannot tell a partly bad node from %d bad links" % (
                                          name(r), direction, len(peers), measured, shown,
                                          _pct(lw.a, [v for _, _, v in items]), len(peers)), [r]))
        done |= {(s, d) for s, d, _ in items}
    return out


def _link_suspect(lw: _Lows, s: int, d: int, v: float, back: Optional[float]) -> Suspect:
    """One low pair (and its way back, when low too): a link, or a node that cannot be told from it."""
    name, n, sent_m, recv_m = lw.name, lw.a.matrix.n, lw.sent_m, lw.recv_m
    single = [r for r in (s, d) if (sent_m[r] <= 1 and (r == s or back is not None))
              or (recv_m[r] <= 1 and (r == d or back is not None))]
    arrow = "<->" if back is not None else "->"
    rel = _pct(lw.a, [v] + ([back] if back is not None else []))
    if not single:
        if back is not None:
            return Suspect("link", "link %s <-> %s (both directions, %s)" % (name(s), name(d), rel), [s, d])
        return Suspect("link", "link %s -> %s only (%s)" % (name(s), name(d), rel), [s, d])
    if len(single) == 2:
        why = "neither %s nor %s has another measured peer%s" % (
            name(s), name(d), " (n = 2)" if n == 2 else "")
        text = "node %s, node %s or the link between them: cannot tell (%s; %s)" % (
            name(s), name(d), why, rel)
    else:
        r = single[0]
        other = d if r == s else s
        text = "node %s or link %s %s %s: cannot tell (%s's only measured peer%s is %s; %s)" % (
            name(r), name(s), arrow, name(d), name(r), "" if back is not None else
            " for its " + ("sends" if r == s else "receives"), name(other), rel)
    return Suspect("ambiguous", text, [s, d])


def _link_suspects(lw: _Lows, rest: List[Tuple[int, int, float]], done: Set[Tuple[int, int]]) -> List[Suspect]:
    """What is left: links, or what the evidence cannot tell from a link."""
    low_at = {(s, d): v for s, d, v in rest}
    out: List[Suspect] = []
    for s, d, v in rest:
        if (s, d) in done:
            continue
        back = low_at.get((d, s)) if (d, s) not in done else None
        done.add((s, d))
        if back is not None:
            done.add((d, s))
        out.append(_link_suspect(lw, s, d, v, back))
    return out


def attribute(a: Analysis, ranks: Optional[Sequence[Rank]], sent_m: List[int], recv_m: List[int],
              node_frac: float) -> List[Suspect]:
    """Who explains the low pairs: rails, nodes, links, and what the evidence cannot tell apart."""
    if not a.low:
        return []
    lw = _lows(a, ranks, sent_m, recv_m, node_frac)
    out, explained = _rail_suspects(lw)
    node_ranks = sorted((lw.node_send | lw.node_recv) - explained)
    fabric = _fabric_suspect(lw, node_ranks)
    if fabric is not None:
        return out + [fabric]
    out += _node_suspects(lw, node_ranks)
    rest = _unexplained(lw, explained, node_ranks)
    rounds, taken = _round_suspects(lw, rest)
    out += rounds
    rest = [x for x in rest if (x[0], x[1]) not in taken]
    done: Set[Tuple[int, int]] = set()
    out += _partial_suspects(lw, rest, done)
    return out + _link_suspects(lw, rest, done)
