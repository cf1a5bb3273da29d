"""Every rail of every node measured alone, then all of them at once: the node's aggregate and
each rail's efficiency under load, naming a rail that falls below --below.

  gdrb rails --hosts H1,H2,... --nics NIC0,NIC1,... [options] OUTDIR

A rail is GPU i of each node with its NIC i (the NIC nearest GPU i: gdrb_doctor's topology
check names it, docs/rails.md). Each rail is an MPI job of gdrb_mpi_pairs, one rank per node
on GPU i (--gpu i), steered onto NIC i by the launcher variable of --nic-env: every node
sends to and receives from every other one, in rounds, all pairs of a round at once.
  alone     each rail's job by itself, one after the other
  all       every rail's job started together, each told to begin round i at one
            wall-clock second (gdrb_mpi_pairs --start-at, --lead seconds ahead, and
            --round-every, 3 x --time + 2 s): all rails of all nodes loaded at once, round
            by round, however slow one rail is (the nodes' clocks must agree to a fraction
            of --time: NTP or PTP)
A pair (rail, source -> destination) whose bandwidth with all rails loaded is below --below
percent of its bandwidth alone is low. The all-rails run is measured again, up to --attempts
times in all, while a pair is low; only a pair low in every attempt counts (a one-off dip
passes), and every attempt's figure is shown. A rail is named:
  node    where all its sends, or all its receives, on a node are low, or else where a node
          is an end of two or more low pairs of the rail, the most first (3 nodes or more)
  link    a low pair no node explains (with 2 nodes: the one pair, both ends named); a low
          pair into or out of a named node is listed with it (a slowed rail slows what it
          receives too: its acknowledgements wait behind its sends)
with the rank's GPU and NIC (as the binary recorded them), the PCIe switch they share (from
--doctor, gdrb_doctor --json of a node of the same layout) and the NIC error counters the
binary read on the pairs (pairs.csv nic_errors), or what of these is not known.

Options:
  --hosts H1,H2,...   the nodes, 2 to 256, each once (host names as the launcher takes them)
  --nics N0,N1,...    rail i's NIC, 1 to 64 rails, as the --nic-env variable names it (mlx5_0)
  --nic-env VAR=TEXT  the variable set for rail i's ranks, {nic} replaced by NIC i
                      (default UCX_NET_DEVICES={nic}:1: UCX, Open MPI's pml ucx; Open MPI
                      over TCP: OMPI_MCA_btl_tcp_if_include={nic})
  --mem KIND          device (default: GPU i's memory), pinned or host
  --path PATH         the path judged: direct (default, GPUDirect) or staged
  --size SIZE         message size (default 8M)
  --time SEC          seconds per size of each job (gdrb_mpi_pairs -t; default 1)
  --window N          messages in flight per iteration, 1 to 1024 (gdrb_mpi_pairs -W; default
                      its own): keep an iteration short beside --time, so that a rail slowed
                      under load is timed while the others still load it
  --attempts N        all-rails runs at most, 1 to 9 (default 2)
  --below PCT         a pair below PCT percent of its bandwidth alone is low, 1 to 100
                      (default 80: gdrbench's own estimate, no published figure; a NIC with
                      its own PCIe switch uplink should keep 90% and more under load)
  --doctor FILE       gdrb_doctor --json of a node: each GPU's PCIe switch for the names
  --launcher-args A   more arguments for mpirun, split at spaces
  --mpirun PATH       the launcher (default mpirun; Open MPI's -x VAR=VALUE syntax)
  --bin-dir DIR       look for gdrb_mpi_pairs in DIR first (as gdrb sweep does)
  --lead SEC          how far ahead the all-rails start is set, 1 to 600 (default 15: enough
                      for the launcher to start every job)
  --timeout SEC       most seconds per job (default 600): past it the job is stopped
  -h, --help          this help
OUTDIR (created; it must not hold an earlier rails run) receives each job's output under
alone/rail-I/ and all-A/rail-I/ (pairs.csv, the matrices, stdout, the launcher's log), then
rails.csv (one row per run, rail and pair) and verdict.txt, each written to a temporary
file and renamed. Before measuring, one process is started on each host (hostname): a host
the launcher cannot reach is bad usage.

Verdict: PASS no rail below --below; FAIL a rail named; INVALID a rail or pair that could not
be measured (named), or a run with a test hook; SIMULATED rows from the simulated GPU (the
test suite's): never PASS.
Exit: 0 PASS, 1 FAIL or SIMULATED, 2 bad usage (one line naming the option and its accepted
form; nothing written), 3 INVALID.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from . import common, pairs
from .common import csv_quote, csv_split, decimal, integer, say, term, usage_error
from .sweep_launch import find_bin
from .sweep_log import capture, log_append, new_log, stop_child

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$")
_NIC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$")
_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,63})=(.{0,200})$")
MEMS = ("device", "pinned", "host")
PATHS = ("direct", "staged")
BELOW_DEFAULT = 80.0
ATTEMPTS_MAX = 9
CSV_LIMIT = 1 << 26
RAILS_CSV_HEADER = ("run,attempt,rail,nic,src_host,dst_host,src_gpu,src_nic,dst_gpu,dst_nic,"
                    "bw_GBps,alone_GBps,efficiency_pct,low,nic_errors\n")


@dataclass
class Options:
    hosts: List[str] = field(default_factory=list)
    nics: List[str] = field(default_factory=list)
    nic_env: Tuple[str, str] = ("UCX_NET_DEVICES", "{nic}:1")
    mem: str = "device"
    path: str = "direct"
    size: int = 8 << 20
    time_s: float = 1.0
    window: int = 0
    attempts: int = 2
    below: float = BELOW_DEFAULT
    doctor: str = ""
    launcher_args: List[str] = field(default_factory=list)
    mpirun: str = "mpirun"
    bin_dirs: List[str] = field(default_factory=list)
    timeout: float = 600.0
    lead: float = 15.0
    outdir: str = ""


def _shown(v: str) -> str:
    return term(v if len(v) <= 60 else v[:60] + "...")


def _number(opt: str, v: str, lo: float, hi: float, form: str) -> float:
    x = decimal(v)
    if x is None or not lo <= x <= hi:
        raise usage_error("%s: expected %s, got '%s'" % (opt, form, _shown(v)))
    return x


def _list(opt: str, v: str, pat: "re.Pattern[str]", lo: int, hi: int, what: str) -> List[str]:
    items = v.split(",")
    if not lo <= len(items) <= hi:
        raise usage_error("%s: expected %d to %d %s separated by commas, got %d" % (opt, lo, hi, what, len(items)))
    for x in items:
        if not pat.match(x):
            raise usage_error("%s: '%s' is not a %s (letters, digits, '.', '-'%s)"
                              % (opt, _shown(x), what[:-1], ", '_', ':', '/'" if what == "NICs" else ""))
    if len(set(items)) != len(items):
        dup = next(x for x in items if items.count(x) > 1)
        raise usage_error("%s: '%s' given twice; name each once" % (opt, _shown(dup)))
    return items


def parse_args(argv: Sequence[str]) -> Optional[Options]:
    """The options, or None for --help; bad usage raises one line (exit 2)."""
    o = Options()
    args: List[str] = []
    i = 0
    valued = ("--hosts", "--nics", "--nic-env", "--mem", "--path", "--size", "--time", "--attempts",
              "--below", "--window", "--doctor", "--launcher-args", "--mpirun", "--bin-dir", "--timeout", "--lead")
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            return None
        if a in valued:
            if i + 1 >= len(argv) or argv[i + 1] == "":
                raise usage_error("%s needs a value; see --help" % a)
            _set(o, a, argv[i + 1])
            i += 2
            continue
        if a.startswith("-"):
            raise usage_error("unknown option '%s'; see --help" % _shown(a))
        args.append(a)
        i += 1
    if len(args) != 1:
        raise usage_error("expected one OUTDIR, e.g. 'gdrb rails --hosts n1,n2 --nics mlx5_0,mlx5_1 rails-run'; see --help")
    o.outdir = args[0]
    if not o.hosts:
        raise usage_error("--hosts: expected the nodes, e.g. --hosts n1,n2,n3")
    if not o.nics:
        raise usage_error("--nics: expected each rail's NIC in GPU order, e.g. --nics mlx5_0,mlx5_1")
    return o


def _set(o: Options, a: str, v: str) -> None:
    if a == "--hosts":
        o.hosts = _list(a, v, _HOST, 2, 256, "hosts")
    elif a == "--nics":
        o.nics = _list(a, v, _NIC, 1, 64, "NICs")
    elif a == "--nic-env":
        m = _ENV.match(v)
        if not m or "{nic}" not in m.group(2) or common.CONTROLS.search(v):
            raise usage_error("--nic-env: expected VAR=TEXT with {nic} in TEXT, e.g. UCX_NET_DEVICES={nic}:1, got '%s'"
                              % _shown(v))
        o.nic_env = (m.group(1), m.group(2))
    elif a in ("--mem", "--path"):
        allowed = MEMS if a == "--mem" else PATHS
        if v not in allowed:
            raise usage_error("%s: expected %s, got '%s'" % (a, " or ".join(allowed), _shown(v)))
        setattr(o, a[2:], v)
    elif a == "--size":
        o.size = common.size_parse(v)
        if not 1 <= o.size <= 1 << 30:
            raise usage_error("--size: expected a size from 1 to 1G (8M, 64K), got '%s'" % _shown(v))
    elif a == "--time":
        o.time_s = _number(a, v, 0.01, 60, "seconds from 0.01 to 60")
    elif a == "--attempts":
        n = integer(v, ATTEMPTS_MAX)
        if n is None or n < 1:
            raise usage_error("--attempts: expected a whole number from 1 to %d, got '%s'" % (ATTEMPTS_MAX, _shown(v)))
        o.attempts = n
    elif a == "--below":
        o.below = _number(a, v, 1, 100, "a percentage from 1 to 100")
    elif a == "--window":
        n = integer(v, 1024)
        if n is None or n < 1:
            raise usage_error("--window: expected a whole number from 1 to 1024, got '%s'" % _shown(v))
        o.window = n
    elif a == "--lead":
        o.lead = _number(a, v, 1, 600, "seconds from 1 to 600")
    elif a == "--timeout":
        o.timeout = _number(a, v, 1, 86400, "seconds from 1 to 86400")
    elif a == "--launcher-args":
        o.launcher_args = v.split()
    elif a == "--bin-dir":
        o.bin_dirs.append(v)
    else:
        setattr(o, a[2:], v)


# --- what a job measured ------------------------------------------------------------------

@dataclass
class Pair:
    """One measured pair of one rail in one run."""
    src: str
    dst: str
    bw: float
    src_gpu: str = ""
    src_nic: str = ""
    dst_gpu: str = ""
    dst_nic: str = ""
    nic_errors: Optional[int] = None     # None: not read


@dataclass
class RailRun:
    """One rail's job, alone or with all rails."""
    rail: int
    nic: str
    pairs: Dict[Tuple[str, str], Pair] = field(default_factory=dict)
    fault: str = ""          # why it could not be measured; "" when it was
    simulated: str = ""      # the simulated GPU's name where the rows say so
    hook: str = ""           # a test hook the rows name


def read_run(run: RailRun, folder: str, mem: str, path: str, size: int) -> RailRun:
    """RUN's pairs from FOLDER/pairs.csv: bandwidth rows of MEM, PATH and SIZE with status ok;
    a file that is not there or not readable is RUN's fault, never a figure."""
    name = os.path.join(folder, pairs.PAIRS_CSV)
    try:
        text = common.read_regular(name, CSV_LIMIT)
    except OSError as e:
        run.fault = run.fault or "%s: cannot read: %s" % (name, e.strerror)
        return run
    lines = text.splitlines()
    if not lines:
        run.fault = run.fault or "%s: empty" % name
        return run
    head = lines[0].split(",")
    need = ("metric", "mem", "path", "size_bytes", "src_host", "dst_host", "bw_GBps", "status")
    if any(k not in head for k in need):
        run.fault = run.fault or "%s:1: not gdrb_mpi_pairs' pairs.csv (no %s)" % (
            name, next(k for k in need if k not in head))
        return run
    col = {k: i for i, k in enumerate(head)}
    for lineno, line in enumerate(lines[1:], start=2):
        f = csv_split(line)
        if len(f) != len(head):
            run.fault = run.fault or "%s:%d: %d fields, the header %d" % (name, lineno, len(f), len(head))
            continue
        get = lambda k: f[col[k]] if k in col else ""  # noqa: E731
        note = get("note")
        sim = pairs.note_part(note, pairs.SIMULATED_MARK)
        if sim is not None:
            run.simulated = sim or "a simulated GPU"
        hook = pairs.note_part(note, pairs.TEST_HOOK_MARK)
        if hook is not None:
            run.hook = pairs.TEST_HOOK_MARK + hook
        if get("metric") != "bw" or get("mem") != mem or get("path") != path or integer(get("size_bytes")) != size:
            continue
        bw = decimal(get("bw_GBps"))
        if get("status") != "ok" or bw is None:
            continue
        errors = integer(get("nic_errors")) if get("nic_errors") else None
        run.pairs[(get("src_host"), get("dst_host"))] = Pair(
            get("src_host"), get("dst_host"), bw, get("src_gpu"), get("src_nic"), get("dst_gpu"), get("dst_nic"), errors)
    return run


# --- the verdict ------------------------------------------------------------------------------

@dataclass
class Suspect:
    rail: int
    kind: str                # "node" or "link"
    where: str               # the node, or "A -> B"
    direction: str           # "sends", "receives" or "" (a link)
    effs: List[List[float]]  # per attempt, the efficiencies (%) of its low pairs
    gpu: str = ""
    nic: str = ""
    switch: str = ""
    counters: str = ""
    also: List[str] = field(default_factory=list)   # other low pairs of a named node, with their figures


@dataclass
class Verdict:
    overall: str
    invalid: List[str]
    suspects: List[Suspect]
    lines: List[str]         # the report before the overall line
    rows: List[str]          # rails.csv rows

    @property
    def status(self) -> int:
        return {"PASS": common.EXIT_OK, "INVALID": common.EXIT_INVALID}.get(self.overall, common.EXIT_FAIL)


def _median(v: List[float]) -> float:
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _g(v: float) -> str:
    """80, 72.5: a setting as given."""
    return "%g" % v


def _fmt(v: float) -> str:
    return common.sig3(v)


def _missing(hosts: Sequence[str], run: RailRun, what: str) -> List[str]:
    """What RUN lacks: its fault, else each ordered pair of HOSTS with no measured row."""
    if run.fault:
        return ["rail %d (%s) %s: %s" % (run.rail, run.nic, what, run.fault)]
    gone = ["%s -> %s" % (s, d) for s in hosts for d in hosts if s != d and (s, d) not in run.pairs]
    if not gone:
        return []
    return ["rail %d (%s) %s: %d pair(s) not measured: %s%s" % (
        run.rail, run.nic, what, len(gone), ", ".join(gone[:4]), ", ..." if len(gone) > 4 else "")]


def _name_parts(s: Suspect, rows: Sequence[Pair], end: str, switch_of: Dict[str, str], given: str) -> None:
    """The GPU, NIC, switch and counters of S from its pairs (END: the src or dst side); the
    NIC as --nics gave it (GIVEN) where the binary recorded none."""
    gpus = sorted({getattr(p, end + "_gpu") for p in rows if getattr(p, end + "_gpu")})
    nics = sorted({getattr(p, end + "_nic") for p in rows if getattr(p, end + "_nic")})
    s.gpu = ",".join(gpus) or "not recorded"
    s.nic = ",".join(nics) or "%s (--nics)" % given
    sw = sorted({switch_of[g] for g in gpus if switch_of.get(g)})
    s.switch = ",".join(sw) if sw else ("not known (give --doctor)" if not switch_of else "none shared with its NIC")
    errs = [p.nic_errors for p in rows]
    s.counters = ("NIC errors +%d on its pairs" % sum(e for e in errs if e is not None)
                  if all(e is not None for e in errs) and errs else "NIC error counters not read")


def judge(hosts: Sequence[str], alone: Sequence[RailRun], attempts: Sequence[Sequence[RailRun]],
          below: float, switch_of: Optional[Dict[str, str]] = None) -> Verdict:
    """The verdict of ALONE (one run per rail) and ATTEMPTS (each a run of every rail at once)."""
    switch_of = switch_of or {}
    invalid: List[str] = []
    for run in alone:
        invalid += _missing(hosts, run, "alone")
    for a, runs in enumerate(attempts, start=1):
        for run in runs:
            invalid += _missing(hosts, run, "with all rails, attempt %d" % a)
    sim = next((r.simulated for rs in [alone] + list(attempts) for r in rs if r.simulated), "")
    hook = next((r.hook for rs in [alone] + list(attempts) for r in rs if r.hook), "")
    rows, lines, suspects = [], [], []
    low_all: Dict[int, Dict[Tuple[str, str], List[float]]] = {}
    for k, run in enumerate(alone):
        low_all[run.rail] = {}
        for key, p in sorted(run.pairs.items()):
            rows.append(_row("alone", 0, run, p, p.bw))
        for a, runs in enumerate(attempts, start=1):
            if k >= len(runs):
                continue
            loaded = runs[k]
            for key, p in sorted(loaded.pairs.items()):
                ref = run.pairs.get(key)
                eff = 100.0 * p.bw / ref.bw if ref and ref.bw > 0 else None
                low = eff is not None and eff < below
                rows.append(_row("all", a, loaded, p, ref.bw if ref else None, eff, low))
                if low and (a == 1 or key in low_all[run.rail]):
                    low_all[run.rail].setdefault(key, []).append(eff)
                elif key in low_all[run.rail]:
                    del low_all[run.rail][key]       # recovered in a later attempt: a one-off dip
    nattempts = len(attempts)
    steady = {r: {k: v for k, v in d.items() if len(v) == nattempts} for r, d in low_all.items()}
    last = attempts[-1] if attempts else []
    for k, run in enumerate(alone):
        loaded = last[k] if k < len(last) else RailRun(run.rail, run.nic)
        lines.append(_rail_line(hosts, run, loaded))
        suspects += _attribute(hosts, run, loaded, steady.get(run.rail, {}), nattempts, switch_of)
    lines += _aggregate(hosts, alone, last)
    if invalid or hook:
        overall = "INVALID"
    elif sim:
        overall = "SIMULATED"
    else:
        overall = "FAIL" if suspects else "PASS"
    if sim:
        lines.append("SIMULATED: measured on %s (the test suite's stand-in for CUDA): behaviour, never speed" % sim)
    if hook:
        lines.append("INVALID: %s was active: these rows are a test's, never a measurement" % hook)
    return Verdict(overall, invalid, suspects, lines, rows)


def _row(kind: str, attempt: int, run: RailRun, p: Pair, alone: Optional[float],
         eff: Optional[float] = None, low: bool = False) -> str:
    return ",".join([kind, str(attempt), str(run.rail), csv_quote(run.nic), csv_quote(p.src), csv_quote(p.dst),
                     csv_quote(p.src_gpu), csv_quote(p.src_nic), csv_quote(p.dst_gpu), csv_quote(p.dst_nic),
                     _fmt(p.bw), _fmt(alone) if alone is not None else "",
                     "%.1f" % eff if eff is not None else "", "yes" if low else ("no" if eff is not None else ""),
                     "" if p.nic_errors is None else str(p.nic_errors)]) + "\n"


def _sends(run: RailRun, host: str) -> List[float]:
    return [p.bw for (s, _), p in run.pairs.items() if s == host]


def _rail_line(hosts: Sequence[str], alone: RailRun, loaded: RailRun) -> str:
    parts = []
    for h in hosts:
        a, b = _sends(alone, h), _sends(loaded, h)
        if a and b:
            parts.append("%s %s -> %s GB/s (%.0f%%)" % (h, _fmt(_median(a)), _fmt(_median(b)),
                                                       100 * _median(b) / _median(a) if _median(a) > 0 else 0))
        else:
            parts.append("%s not measured" % h)
    return "rail %d (%s), median send per node, alone -> all rails: %s" % (alone.rail, alone.nic, "; ".join(parts))


def _aggregate(hosts: Sequence[str], alone: Sequence[RailRun], loaded: Sequence[RailRun]) -> List[str]:
    out = []
    for h in hosts:
        a = [_median(_sends(r, h)) for r in alone if _sends(r, h)]
        b = [_median(_sends(r, h)) for r in loaded if _sends(r, h)]
        if len(a) == len(alone) and len(b) == len(alone) and a:
            out.append("node %s: aggregate of %d rails %s GB/s with all rails loaded, %s GB/s as the sum of each alone (%.0f%%)"
                       % (h, len(a), _fmt(sum(b)), _fmt(sum(a)), 100 * sum(b) / sum(a) if sum(a) > 0 else 0))
        else:
            out.append("node %s: aggregate not known (a rail not measured)" % h)
    return out


def _attribute(hosts: Sequence[str], alone: RailRun, loaded: RailRun, low: Dict[Tuple[str, str], List[float]],
               nattempts: int, switch_of: Dict[str, str]) -> List[Suspect]:
    """The nodes whose every send, or every receive, on this rail is low (3 nodes or more),
    then each low pair no such node explains."""
    out: List[Suspect] = []
    explained = set()
    if len(hosts) >= 3:
        for h in hosts:
            for direction, end, mine in (("sends", "src", lambda k: k[0] == h), ("receives", "dst", lambda k: k[1] == h)):
                keys = [(s, d) for s in hosts for d in hosts if s != d and mine((s, d))]
                if keys and all(k in low for k in keys):
                    s = Suspect(alone.rail, "node", h, direction,
                                [[low[k][a] for k in keys] for a in range(nattempts)])
                    _name_parts(s, [loaded.pairs[k] for k in keys if k in loaded.pairs], end, switch_of, alone.nic)
                    out.append(s)
                    explained.update(keys)
        # Then the node at an end of the most low pairs left, two or more: a slowed rail slows
        # what it receives too (its acknowledgements wait behind its sends).
        while True:
            left = [k for k in low if k not in explained]
            ends = {h: [k for k in left if h in k] for h in hosts}
            h = max(hosts, key=lambda x: len(ends[x]))
            if len(ends[h]) < 2 or h in {s.where for s in out}:
                break
            keys = sorted(ends[h])
            s = Suspect(alone.rail, "node", h, "pairs", [[low[k][a] for k in keys] for a in range(nattempts)])
            rows = [loaded.pairs[k] for k in keys if k in loaded.pairs]
            _name_parts(s, [p for p in rows if p.src == h] or rows, "src" if any(p.src == h for p in rows) else "dst",
                        switch_of, alone.nic)
            s.also = ["%s -> %s" % k for k in keys]
            out.append(s)
            explained.update(keys)
    # A low pair into or out of a node named on this rail is that node's.
    named = {s.where: s for s in out}
    for k in sorted(low):
        if k in explained:
            continue
        owner = named.get(k[0]) or named.get(k[1])
        if owner:
            owner.also.append("%s -> %s %s" % (k[0], k[1], "/".join("%.0f%%" % e for e in low[k])))
            continue
        s = Suspect(alone.rail, "link", "%s -> %s" % k, "", [[low[k][a]] for a in range(nattempts)])
        rows = [loaded.pairs[k]] if k in loaded.pairs else []
        _name_parts(s, rows, "src", switch_of, alone.nic)
        if rows:
            d = Suspect(0, "", "", "", [])
            _name_parts(d, rows, "dst", switch_of, alone.nic)
            s.gpu, s.nic = "%s -> %s" % (s.gpu, d.gpu), "%s -> %s" % (s.nic, d.nic)
            s.switch = "%s -> %s" % (s.switch, d.switch)
        out.append(s)
    return out


def suspect_line(s: Suspect, below: float) -> str:
    tries = "; ".join("attempt %d: %s" % (a + 1, ", ".join("%.0f%%" % e for e in effs)) for a, effs in enumerate(s.effs))
    what = ("node %s rail %d, its %s" % (s.where, s.rail, s.direction) if s.kind == "node"
            else "rail %d link %s" % (s.rail, s.where))
    if s.direction == "pairs":
        what += " (%s)" % ", ".join(s.also)
    also = "; also low on its rail: %s" % ", ".join(s.also) if s.also and s.direction != "pairs" else ""
    return ("FAIL %s: below %s%% of alone in every attempt (%s); GPU %s, NIC %s, PCIe switch %s; %s%s"
            % (what, _g(below), tries, s.gpu, s.nic, s.switch, s.counters, also))


def report(v: Verdict, o: Options) -> str:
    out = ["gdrb rails: %d nodes x %d rails, %s memory, path %s, %s, --below %s%%%s\n" % (
        len(o.hosts), len(o.nics), o.mem, o.path, common.size_fmt(o.size), _g(o.below),
        " (gdrbench's own estimate)" if o.below == BELOW_DEFAULT else "")]
    out += ["%s\n" % term(line) for line in v.lines]
    out += ["INVALID %s\n" % term(x) for x in v.invalid]
    out += ["%s\n" % term(suspect_line(s, o.below)) for s in v.suspects]
    named = ", ".join(sorted({"rail %d" % s.rail for s in v.suspects}))
    out.append("rails: %s%s\n" % (v.overall, {
        "FAIL": ": %s below %s%% of alone under load" % (named, _g(o.below)),
        "INVALID": ": %d thing(s) not measured or a test hook active; nothing is judged on them" % max(1, len(v.invalid)),
        "SIMULATED": ": simulated rows are never a PASS",
        "PASS": ": every rail at %s%% of alone or more with all rails loaded" % _g(o.below)}[v.overall]))
    return "".join(out)


# --- running the jobs -------------------------------------------------------------------------

def switches(path: str) -> Dict[str, str]:
    """GPU PCI address -> its rail's PCIe switch, from gdrb_doctor --json (gpus[].switch)."""
    if not path:
        return {}
    gpus = common.load_json(path).get("topology", "gpus")
    if not isinstance(gpus, list):
        raise usage_error("--doctor: %s has no topology.gpus (gdrb_doctor --json of one node)" % path)
    return {g["pci"]: g["switch"] for g in gpus
            if isinstance(g, dict) and isinstance(g.get("pci"), str) and isinstance(g.get("switch"), str)}


def _command(o: Options, binary: str, rail: int, folder: str, start_at: int = 0) -> List[str]:
    var, text = o.nic_env
    cmd = [o.mpirun, "-np", str(len(o.hosts)), "--host", ",".join(o.hosts)]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += ["-x", "%s=%s" % (var, text.replace("{nic}", o.nics[rail]))] + o.launcher_args
    cmd += [binary, "-m", str(o.size), "-t", _g(o.time_s), "--mem", o.mem, "--metric", "bw",
            "--csv", os.path.join(folder, pairs.PAIRS_CSV)]
    if o.window:
        cmd += ["-W", str(o.window)]
    if o.mem != "host":
        cmd += ["--gpu", str(rail)]
    if start_at:
        cmd += ["--start-at", str(start_at), "--round-every", _g(3 * o.time_s + 2)]
    return cmd


def _start(cmd: List[str], folder: str) -> Tuple[Optional[subprocess.Popen], str]:
    common.make_dir(folder)
    log = os.path.join(folder, "launch.log")
    new_log(log, "# %s\n" % common.shell_join(cmd))
    try:
        with common.open_new(os.path.join(folder, "stdout.txt")) as out, common.open_append(log) as err:
            return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True), ""
    except OSError as e:
        return None, "cannot run %s: %s" % (cmd[0], e.strerror)


def _wait(children: List[Tuple[Optional[subprocess.Popen], str, str]], timeout: float) -> List[str]:
    """Each child waited for (stopped past TIMEOUT); why each failed, "" where it did not."""
    deadline = time.monotonic() + timeout
    why: List[str] = []
    try:
        for child, fault, folder in children:
            why.append(_wait_one(child, fault, folder, deadline, timeout))
    except KeyboardInterrupt:
        # Ctrl-C: every job stopped, launcher and ranks, before the tool says so.
        for child, _, _ in children:
            if child is not None and child.poll() is None:
                stop_child(child)
        raise
    return why


def _wait_one(child: Optional[subprocess.Popen], fault: str, folder: str, deadline: float, timeout: float) -> str:
    if child is None:
        return fault
    try:
        rc = child.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        stop_child(child)
        rc = 124
    log = os.path.join(folder, "launch.log")
    log_append(log, "# exit status %d\n" % rc)
    return ("" if rc == 0 else "the job exited %d (%s)" % (rc, log) if rc != 124 else
            "stopped after --timeout %s s (%s)" % (_g(timeout), log))


def run_rails(o: Options, binary: str, which: str) -> List[RailRun]:
    """One job per rail: WHICH "alone" runs them one after the other, "all-A" all at once."""
    runs = []
    folders = [os.path.join(o.outdir, which, "rail-%d" % r) for r in range(len(o.nics))]
    if which == "alone":
        faults = []
        for r, folder in enumerate(folders):
            child, fault = _start(_command(o, binary, r, folder), folder)
            faults += _wait([(child, fault, folder)], o.timeout)
    else:
        start_at = int(time.time() + o.lead + 0.999)
        started = [_start(_command(o, binary, r, f, start_at), f) + (f,) for r, f in enumerate(folders)]
        faults = _wait(started, o.timeout)
    for r, folder in enumerate(folders):
        run = RailRun(r, o.nics[r], fault=faults[r])
        runs.append(read_run(run, folder, o.mem, o.path, o.size))
    return runs


def preflight(o: Options) -> None:
    """One process on each host: a host the launcher cannot reach is bad usage."""
    cmd = [o.mpirun, "-np", str(len(o.hosts)), "--host", ",".join(o.hosts)]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    rc, out, err = capture(cmd + o.launcher_args + ["hostname"], timeout=min(o.timeout, 120))
    if rc != 0:
        line = next((x for x in err.splitlines() if x.strip() and not x.startswith("---")), "")
        raise usage_error("--hosts: cannot start a process on every host of '%s' (%s exited %d%s); "
                          "give host names the launcher reaches" % (",".join(o.hosts), o.mpirun, rc,
                                                                    ": " + line.strip()[:160] if line else ""))


def main(argv: List[str]) -> int:
    o = parse_args(argv)
    if o is None:
        common.print_help(__doc__)
        return 0
    switch_of = switches(o.doctor)
    binary = find_bin("gdrb_mpi_pairs", o.bin_dirs)
    if not binary:
        raise usage_error("gdrb_mpi_pairs not found (build gdrbench with MPI, or give --bin-dir)")
    if os.path.lexists(os.path.join(o.outdir, "alone")):
        raise usage_error("%s: holds an earlier rails run (alone/); give a new OUTDIR" % o.outdir)
    preflight(o)
    try:
        common.make_dir(o.outdir)
    except OSError as e:
        raise usage_error("%s: cannot make the output directory: %s" % (o.outdir, e.strerror))
    say("%d rails alone, one after the other, on %s" % (len(o.nics), ",".join(o.hosts)))
    alone = run_rails(o, binary, "alone")
    attempts: List[List[RailRun]] = []
    for a in range(1, o.attempts + 1):
        say("all %d rails at once, attempt %d of at most %d" % (len(o.nics), a, o.attempts))
        attempts.append(run_rails(o, binary, "all-%d" % a))
        v = judge(o.hosts, alone, attempts, o.below, switch_of)
        # Again only while a pair is low in every attempt so far and the runs measured all.
        if not v.suspects or v.invalid:
            break
    text = report(v, o)
    common.write_all([(os.path.join(o.outdir, "rails.csv"), RAILS_CSV_HEADER + "".join(v.rows)),
                      (os.path.join(o.outdir, "verdict.txt"), text)])
    sys.stdout.write(text)
    return v.status

