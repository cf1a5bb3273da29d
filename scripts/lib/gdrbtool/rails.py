"""Every rail of every node measured alone, then all of them at once: the node's aggregate and
each rail's efficiency under load, naming a rail that falls below --below, or below a per-NIC
floor (--sku, --floor).

  gdrb rails --hosts H1,H2,... --nics NIC0,NIC1,... [--layer mpi|verbs|nccl] [options] OUTDIR

A rail is GPU i of each node with its NIC i (the NIC nearest GPU i: gdrb_doctor's topology
check names it, docs/rails.md). Each rail is one job launched by mpirun, one rank per node on
GPU i (--gpu i), on NIC i; --layer says which benchmark (each binary's --describe says its
layer and options):
  mpi       gdrb_mpi_pairs, steered onto NIC i by the launcher variable of --nic-env
  verbs     gdrb_write_pairs (RDMA writes), given NIC i with --ib-dev
  nccl      gdrb_nccl_sendrecv --nccl-net-only, steered by --nic-env (default NCCL_IB_HCA={nic}
            with NCCL's '=': that device only); one figure per rail, every rank's bandwidth;
            a rail whose row's nic (the devices NCCL's log says rank 0 used) is not its NIC
            alone is not measured
In the all-pairs layers every node sends to and receives from every other one, in rounds,
all pairs of a round at once.
  alone     each rail's job by itself, one after the other
  all       every rail's job started together; a binary with --start-at (the all-pairs ones)
            is told to begin round i at one wall-clock second (--start-at, --lead seconds
            ahead, and --round-every, 3 x --time + 2 s): all rails of all nodes loaded at
            once, round by round, however slow one rail is (the nodes' clocks must agree to a
            fraction of --time: NTP or PTP); gdrb_nccl_sendrecv has no --start-at: its jobs
            start together and overlap as far as their launches do (the report says so)
A pair (rail, source -> destination; with nccl, the rail) whose bandwidth with all rails
loaded is below --below percent of its bandwidth alone is low. The all-rails run is measured
again, up to --attempts times in all, while a pair is low; only a pair low in every
attempt counts (a one-off dip passes), and every attempt's figure is shown. A rail is named:
  node    where all its sends, or all its receives, on a node are low, or else where a node
          is an end of two or more low pairs of the rail, the most first (3 nodes or more)
  link    a low pair no node explains (with 2 nodes: the one pair, both ends named); a low
          pair into or out of a named node is listed with it (a slowed rail slows what it
          receives too: its acknowledgements wait behind its sends)
with the rank's GPU and NIC (as the binary recorded them), the PCIe switch they share (from
--doctor, gdrb_doctor --json of a node of the same layout) and the NIC error counters the
binary read on the pairs (pairs.csv nic_errors), or what of these is not known.
With --sku or --floor, each rail's figure on each node (the median of its sends; with nccl,
the rail's) alone and with all rails loaded is also judged against the per-NIC floor: below
it alone, or in every all-rails attempt, the rail is named with its GPU, NIC, switch and the
floor's source.

Options:
  --hosts H1,H2,...   the nodes, 2 to 256, each once (host names as the launcher takes them)
  --nics N0,N1,...    rail i's NIC, 1 to 64 rails, as the --nic-env variable names it (mlx5_0)
  --layer LAYER       mpi (default), verbs or nccl: the benchmark each rail runs (above)
  --nic-env VAR=TEXT  the variable set for rail i's ranks, {nic} replaced by NIC i
                      (mpi: default UCX_NET_DEVICES={nic}:1: UCX, Open MPI's pml ucx; Open
                      MPI over TCP: OMPI_MCA_btl_tcp_if_include={nic}; nccl: default
                      NCCL_IB_HCA={nic} with a leading '='; verbs: not taken, --ib-dev is)
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
  --sku NAME          judge each rail also against the per-NIC GPUDirect write floor of the
                      SKU's node profile (a100, h100, h200, b200: docs/skus.md), which holds
                      for device memory, path direct, 1M messages: give those
  --floor GBPS        judge each rail also against this per-NIC floor, Gb/s (1 to 100000)
  --doctor FILE       gdrb_doctor --json of a node: each GPU's PCIe switch for the names
  --launcher-args A   more arguments for mpirun, split at spaces
  --mpirun PATH       the launcher (default mpirun; Open MPI's -x VAR=VALUE syntax)
  --bin-dir DIR       look for the layer's binary in DIR first (as gdrb sweep does)
  --lead SEC          how far ahead the all-rails start is set, 1 to 600 (default 15: enough
                      for the launcher to start every job)
  --timeout SEC       most seconds per job (default 600): past it the job is stopped
  -h, --help          this help
OUTDIR (created; it must not hold an earlier rails run) receives each job's output under
alone/rail-I/ and all-A/rail-I/ (pairs.csv, or results.csv with nccl; the matrices, stdout,
the launcher's log), then
rails.csv (one row per run, rail and pair) and verdict.txt, each written to a temporary
file and renamed. Before measuring, one process is started on each host (hostname): a host
the launcher cannot reach is bad usage.

Verdict: PASS no rail below --below (nor the floor); FAIL a rail named; INVALID a rail or pair
that could not be measured (named), a SKU whose profile has no per-NIC floor, or a run with a
test hook; SIMULATED rows from the simulated GPU or NCCL (the test suite's): never PASS.
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

from . import common, facts, pairs, rails_floor
from .common import csv_quote, csv_split, decimal, integer, say, term, usage_error
from .sweep_launch import find_bin
from .sweep_log import capture, log_append, new_log, stop_child

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$")
_NIC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$")
_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,63})=(.{0,200})$")
MEMS = ("device", "pinned", "host")
# Each layer's benchmark: an all-pairs binary where the layer has one, NCCL's send/receive
# else; what each takes (--start-at, --ib-dev, --nccl-net-only) its --describe says.
LAYER_BINARY = {"mpi": "gdrb_mpi_pairs", "verbs": "gdrb_write_pairs", "nccl": "gdrb_nccl_sendrecv"}
# The variable that steers a library onto rail i's NIC where the binary takes no NIC option:
# UCX's device list; NCCL_IB_HCA's '=' takes that device only (NCCL's env docs: a list of
# device-name prefixes, :port optional, '=' exact, '^' excluded).
NIC_ENV = {"mpi": ("UCX_NET_DEVICES", "{nic}:1"), "nccl": ("NCCL_IB_HCA", "={nic}")}
WHOLE = "all nodes"       # the one "pair" of a layer measured per rail, not per pair
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
    layer: str = "mpi"
    nic_env: Tuple[str, str] = ("", "")         # ("", ""): the layer's NIC_ENV
    sku: str = ""
    floor: Optional[rails_floor.Floor] = None
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
              "--below", "--window", "--doctor", "--launcher-args", "--mpirun", "--bin-dir", "--timeout", "--lead",
              "--layer", "--sku", "--floor")
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
    if o.sku and o.floor:
        raise usage_error("--floor: give --sku or --floor, not both")
    if o.layer == "verbs" and o.nic_env[0]:
        raise usage_error("--nic-env: the verbs layer gives each rail's NIC with --ib-dev; drop --nic-env")
    if not o.nic_env[0]:
        o.nic_env = NIC_ENV.get(o.layer, ("", ""))
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
    elif a in ("--layer", "--floor", "--sku"):
        _set_judged(o, a, v)
    elif a == "--launcher-args":
        o.launcher_args = v.split()
    elif a == "--bin-dir":
        o.bin_dirs.append(v)
    else:
        setattr(o, a[2:], v)


def _set_judged(o: Options, a: str, v: str) -> None:
    """--layer, --floor and --sku: what is measured and against what."""
    if a == "--layer":
        if v not in LAYER_BINARY:
            raise usage_error("--layer: expected %s, got '%s'" % (" or ".join(LAYER_BINARY), _shown(v)))
        o.layer = v
    elif a == "--floor":
        o.floor = rails_floor.given(v)
    else:
        o.sku = v


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


RESULTS_CSV = "results.csv"      # what a benchmark that is not an all-pairs one writes (--csv)


def read_run(run: RailRun, folder: str, mem: str, path: str, size: int, whole: bool = False) -> RailRun:
    """RUN's pairs from FOLDER/pairs.csv: bandwidth rows of MEM, PATH and SIZE with status ok;
    WHOLE (a benchmark measured per rail, not per pair): the row of FOLDER/results.csv as the
    one pair (WHOLE, WHOLE). A file that is not there or not readable is RUN's fault, never a
    figure."""
    name = os.path.join(folder, RESULTS_CSV if whole else pairs.PAIRS_CSV)
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
    need = ("mem", "path", "size_bytes", "bw_GBps", "status", "gpu", "library") if whole else \
        ("metric", "mem", "path", "size_bytes", "src_host", "dst_host", "bw_GBps", "status")
    if any(k not in head for k in need):
        run.fault = run.fault or "%s:1: not a gdrbench %s (no %s)" % (
            name, "results.csv" if whole else "pairs.csv", next(k for k in need if k not in head))
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
        if whole:
            _read_whole(run, get, mem, path, size)
            continue
        if get("metric") != "bw" or get("mem") != mem or get("path") != path or integer(get("size_bytes")) != size:
            continue
        bw = decimal(get("bw_GBps"))
        if get("status") != "ok" or bw is None:
            continue
        errors = integer(get("nic_errors")) if get("nic_errors") else None
        run.pairs[(get("src_host"), get("dst_host"))] = Pair(
            get("src_host"), get("dst_host"), bw, get("src_gpu"), get("src_nic"), get("dst_gpu"), get("dst_nic"), errors)
    if whole:
        _steered(run, name)
    return run


def _steered(run: RailRun, name: str) -> None:
    """A rail measured as one figure counts only where its row's nic (the devices NCCL's log
    says rank 0's connections used) is the rail's NIC alone: else RUN's fault, its figure dropped."""
    p = run.pairs.get((WHOLE, WHOLE))
    if p is None or run.fault:
        return
    used = sorted({part.split(":")[0] for part in p.src_nic.split("+") if part})
    if used != [run.nic]:
        run.fault = ("%s: the library used %s, not %s alone (its NIC variable not honoured?)" % (
            name, "+".join(used), run.nic) if used else
            "%s: which NIC the library used is not known (its log named none): the rail is not shown to be on %s"
            % (name, run.nic))
        run.pairs.clear()


def _read_whole(run: RailRun, get, mem: str, path: str, size: int) -> None:
    """A results.csv row as the rail's one pair; a simulated GPU or NCCL (the gpu and library
    columns say so, as gdrb accept reads them) marks the run."""
    if "simulated" in get("gpu") or "(simulated)" in get("library"):
        run.simulated = run.simulated or (get("gpu") if "simulated" in get("gpu") else get("library"))
    bw = decimal(get("bw_GBps"))
    if get("mem") != mem or get("path") != path or integer(get("size_bytes")) != size:
        return
    if get("status") == "ok" and bw is not None:
        run.pairs[(WHOLE, WHOLE)] = Pair(WHOLE, WHOLE, bw, "", get("nic"), "", get("nic"))


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
class FloorLow:
    """A rail on a node (WHOLE: the rail) below the per-NIC floor alone or in every attempt."""
    rail: int
    host: str
    alone: Optional[float]       # GB/s, the median of its sends alone; None: not measured
    loaded: List[float]          # GB/s, per all-rails attempt
    below_alone: bool
    below_loaded: bool
    parts: "Suspect"             # its GPU, NIC, switch and counters


@dataclass
class Verdict:
    overall: str
    invalid: List[str]
    suspects: List[Suspect]
    lines: List[str]         # the report before the overall line
    rows: List[str]          # rails.csv rows
    floor_low: List["FloorLow"] = field(default_factory=list)
    floor_again: bool = False    # a rail below the floor in every all-rails attempt so far

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


def _expected(hosts: Sequence[str]) -> List[Tuple[str, str]]:
    """The pairs a rail's run measures: every ordered pair of HOSTS, or the rail as one."""
    if list(hosts) == [WHOLE]:
        return [(WHOLE, WHOLE)]
    return [(s, d) for s in hosts for d in hosts if s != d]


def _missing(hosts: Sequence[str], run: RailRun, what: str) -> List[str]:
    """What RUN lacks: its fault, else each ordered pair of HOSTS with no measured row."""
    if run.fault:
        return ["rail %d (%s) %s: %s" % (run.rail, run.nic, what, run.fault)]
    gone = ["%s -> %s" % k if k != (WHOLE, WHOLE) else "the rail's figure" for k in _expected(hosts)
            if k not in run.pairs]
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
    s.switch = ",".join(sw) if sw else ("not known (give --doctor)" if not switch_of else
                                        "not known (no GPU address recorded)" if not gpus else "none shared with its NIC")
    errs = [p.nic_errors for p in rows]
    s.counters = ("NIC errors +%d on its pairs" % sum(e for e in errs if e is not None)
                  if all(e is not None for e in errs) and errs else "NIC error counters not read")


def judge(hosts: Sequence[str], alone: Sequence[RailRun], attempts: Sequence[Sequence[RailRun]],
          below: float, switch_of: Optional[Dict[str, str]] = None,
          floor: Optional[rails_floor.Floor] = None, no_floor: str = "") -> Verdict:
    """The verdict of ALONE (one run per rail) and ATTEMPTS (each a run of every rail at once),
    each rail judged against itself alone (BELOW %) and, with FLOOR, against the per-NIC floor;
    NO_FLOOR: why a floor asked for is not known (nothing is then judged PASS)."""
    switch_of = switch_of or {}
    invalid: List[str] = ["no per-NIC floor: %s" % no_floor] if no_floor else []
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
    floor_low, again = _floor(hosts, alone, attempts, floor, switch_of) if floor else ([], False)
    if invalid or hook:
        overall = "INVALID"
    elif sim:
        overall = "SIMULATED"
    else:
        overall = "FAIL" if suspects or floor_low else "PASS"
    if sim:
        lines.append("SIMULATED: measured on %s (the test suite's stand-in for CUDA): behaviour, never speed" % sim)
    if hook:
        lines.append("INVALID: %s was active: these rows are a test's, never a measurement" % hook)
    return Verdict(overall, invalid, suspects, lines, rows, floor_low, again)


def _floor(hosts: Sequence[str], alone: Sequence[RailRun], attempts: Sequence[Sequence[RailRun]],
           floor: rails_floor.Floor, switch_of: Dict[str, str]) -> Tuple[List[FloorLow], bool]:
    """Each rail on each node (the median of its sends) below FLOOR alone, or in every attempt
    with all rails loaded; and whether one is so in every attempt so far (measure again)."""
    out: List[FloorLow] = []
    again = False
    for k, run in enumerate(alone):
        for h in hosts:
            a = _sends(run, h)
            figure = _median(a) if a else None
            loaded = []
            for runs in attempts:
                b = _sends(runs[k], h) if k < len(runs) else []
                if b:
                    loaded.append(_median(b))
            below_alone = figure is not None and figure < floor.value
            below_loaded = bool(loaded) and len(loaded) == len(attempts) and all(x < floor.value for x in loaded)
            again = again or below_loaded
            if not (below_alone or below_loaded):
                continue
            parts = Suspect(run.rail, "floor", h, "", [])
            last = attempts[-1][k] if attempts and k < len(attempts[-1]) else run
            _name_parts(parts, [p for p in last.pairs.values() if p.src == h] or
                        [p for p in run.pairs.values() if p.src == h], "src", switch_of, run.nic)
            if h == WHOLE and parts.gpu == "not recorded":
                parts.gpu = "%d (--gpu) on each node" % run.rail
            out.append(FloorLow(run.rail, h, figure, loaded, below_alone, below_loaded, parts))
    return out, again


def floor_line(f: FloorLow, floor: rails_floor.Floor) -> str:
    def gb(v: float) -> str:
        return "%s Gb/s" % _fmt(v * 8)
    where = "rail %d (all nodes)" % f.rail if f.host == WHOLE else "node %s rail %d" % (f.host, f.rail)
    seen = "alone %s" % (gb(f.alone) if f.alone is not None else "not measured")
    if f.loaded:
        seen += ", all rails %s" % "; ".join("attempt %d: %s" % (a + 1, gb(v)) for a, v in enumerate(f.loaded))
    when = " and ".join(w for w, on in (("alone", f.below_alone), ("in every all-rails attempt", f.below_loaded)) if on)
    p = f.parts
    return ("FAIL %s below the per-NIC floor %s %s (%s); GPU %s, NIC %s, PCIe switch %s; %s"
            % (where, floor.cited(), when, seen, p.gpu, p.nic, p.switch, p.counters))


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
    what = "each rank's bandwidth" if list(hosts) == [WHOLE] else "median send per node"
    return "rail %d (%s), %s, alone -> all rails: %s" % (alone.rail, alone.nic, what, "; ".join(parts))


def _aggregate(hosts: Sequence[str], alone: Sequence[RailRun], loaded: Sequence[RailRun]) -> List[str]:
    out = []
    for h in hosts:
        a = [_median(_sends(r, h)) for r in alone if _sends(r, h)]
        b = [_median(_sends(r, h)) for r in loaded if _sends(r, h)]
        if len(a) == len(alone) and len(b) == len(alone) and a:
            out.append("%s: aggregate of %d rails %s GB/s with all rails loaded, %s GB/s as the sum of each alone (%.0f%%)"
                       % ("each node" if h == WHOLE else "node " + h, len(a), _fmt(sum(b)), _fmt(sum(a)), 100 * sum(b) / sum(a) if sum(a) > 0 else 0))
        else:
            out.append("%s: aggregate not known (a rail not measured)" % ("each node" if h == WHOLE else "node " + h))
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
        rows = [loaded.pairs[k]] if k in loaded.pairs else []
        if k == (WHOLE, WHOLE):
            s = Suspect(alone.rail, "rail", WHOLE, "", [[low[k][a]] for a in range(nattempts)])
            _name_parts(s, rows, "src", switch_of, alone.nic)
            if s.gpu == "not recorded":
                s.gpu = "%d (--gpu) on each node" % alone.rail
            out.append(s)
            continue
        s = Suspect(alone.rail, "link", "%s -> %s" % k, "", [[low[k][a]] for a in range(nattempts)])
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
            else "rail %d (all nodes)" % s.rail if s.kind == "rail" else "rail %d link %s" % (s.rail, s.where))
    if s.direction == "pairs":
        what += " (%s)" % ", ".join(s.also)
    also = "; also low on its rail: %s" % ", ".join(s.also) if s.also and s.direction != "pairs" else ""
    return ("FAIL %s: below %s%% of alone in every attempt (%s); GPU %s, NIC %s, PCIe switch %s; %s%s"
            % (what, _g(below), tries, s.gpu, s.nic, s.switch, s.counters, also))


def report(v: Verdict, o: Options, binary: str = "", together: str = "") -> str:
    """What is printed and kept in verdict.txt; BINARY the layer's benchmark, TOGETHER how the
    all-rails jobs were held together."""
    out = ["gdrb rails: %d nodes x %d rails, layer %s%s, %s memory, path %s, %s, --below %s%%%s\n" % (
        len(o.hosts), len(o.nics), o.layer, " (%s)" % binary if binary else "", o.mem, o.path,
        common.size_fmt(o.size), _g(o.below), " (gdrbench's own estimate)" if o.below == BELOW_DEFAULT else "")]
    if o.floor:
        out.append("per-NIC floor%s: %s\n" % (" of SKU " + o.sku if o.sku else "", term(o.floor.cited())))
    if together:
        out.append("all rails at once: %s\n" % term(together))
    out += ["%s\n" % term(line) for line in v.lines]
    out += ["INVALID %s\n" % term(x) for x in v.invalid]
    out += ["%s\n" % term(suspect_line(s, o.below)) for s in v.suspects]
    out += ["%s\n" % term(floor_line(f, o.floor)) for f in v.floor_low if o.floor]
    why = []
    if v.suspects:
        why.append("%s below %s%% of alone under load" % (
            ", ".join(sorted({"rail %d" % s.rail for s in v.suspects})), _g(o.below)))
    if v.floor_low:
        why.append("%s below the per-NIC floor %s" % (
            ", ".join(sorted({"rail %d" % f.rail for f in v.floor_low})), o.floor.text if o.floor else ""))
    floor_ok = " and at the per-NIC floor %s or above, alone and loaded" % o.floor.text if o.floor else ""
    out.append("rails: %s%s\n" % (v.overall, {
        "FAIL": ": " + "; ".join(why),
        "INVALID": ": %d thing(s) not measured, not known or a test hook active; nothing is judged on them"
                   % max(1, len(v.invalid)),
        "SIMULATED": ": simulated rows are never a PASS",
        "PASS": ": every rail at %s%% of alone or more with all rails loaded%s" % (_g(o.below), floor_ok)}[v.overall]))
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


def _command(o: Options, binary: str, fx: facts.Facts, rail: int, folder: str, start_at: int = 0) -> List[str]:
    """Rail RAIL's job: BINARY on its GPU and NIC, as its --describe (FX) says it takes them."""
    var, text = o.nic_env
    has = set(fx.options)
    cmd = [o.mpirun, "-np", str(len(o.hosts)), "--host", ",".join(o.hosts)]
    if os.getuid() == 0:
        cmd.append("--allow-run-as-root")
    if "ib-dev" not in has:
        cmd += ["-x", "%s=%s" % (var, text.replace("{nic}", o.nics[rail]))]
    cmd += o.launcher_args
    cmd += [binary, "-m", str(o.size), "-t", _g(o.time_s), "--mem", o.mem,
            "--csv", os.path.join(folder, pairs.PAIRS_CSV if fx.all_pairs else RESULTS_CSV)]
    if "metric" in has:
        cmd += ["--metric", "bw"]
    if "ib-dev" in has:
        cmd += ["--ib-dev", o.nics[rail]]
    if "nccl-net-only" in has:
        cmd.append("--nccl-net-only")
    if o.window:
        cmd += ["-W", str(o.window)]
    if o.mem != "host":
        cmd += ["--gpu", str(rail)]
    if start_at and "start-at" in has:
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


def run_rails(o: Options, binary: str, fx: facts.Facts, which: str) -> List[RailRun]:
    """One job per rail: WHICH "alone" runs them one after the other, "all-A" all at once."""
    runs = []
    folders = [os.path.join(o.outdir, which, "rail-%d" % r) for r in range(len(o.nics))]
    if which == "alone":
        faults = []
        for r, folder in enumerate(folders):
            child, fault = _start(_command(o, binary, fx, r, folder), folder)
            faults += _wait([(child, fault, folder)], o.timeout)
    else:
        start_at = int(time.time() + o.lead + 0.999)
        started = [_start(_command(o, binary, fx, r, f, start_at), f) + (f,) for r, f in enumerate(folders)]
        faults = _wait(started, o.timeout)
    for r, folder in enumerate(folders):
        run = RailRun(r, o.nics[r], fault=faults[r])
        runs.append(read_run(run, folder, o.mem, o.path, o.size, whole=not fx.all_pairs))
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


def layer_binary(o: Options) -> Tuple[str, facts.Facts]:
    """The layer's benchmark and what it says it is; one that is missing, of another layer, or
    without the memory, path or options the run needs is bad usage."""
    name = LAYER_BINARY[o.layer]
    binary = find_bin(name, o.bin_dirs)
    if not binary:
        raise usage_error("%s not found (build gdrbench with %s, or give --bin-dir)" % (name, o.layer.upper()))
    fx = facts.describe(binary)
    if fx.layer != o.layer:
        raise usage_error("--layer %s: %s says its layer is %s" % (o.layer, binary, term(fx.layer)))
    kind = fx.kind(o.mem)
    if kind is None:
        raise usage_error("--mem: %s takes %s, not %s" % (name, ", ".join(sorted(fx.kinds)), o.mem))
    if kind.paths is not None and o.path not in [p.path for p in kind.paths]:
        raise usage_error("--path: %s measures %s on %s memory, not %s" % (
            name, " and ".join(p.path for p in kind.paths), o.mem, o.path))
    if o.window and "window" not in fx.options:
        raise usage_error("--window: %s takes no window; drop --window with --layer %s" % (name, o.layer))
    return binary, fx


def _together(fx: facts.Facts) -> str:
    if "start-at" in fx.options:
        return "each job told to begin round i at one wall-clock second (--start-at, --round-every)"
    return ("%s has no --start-at: the jobs were started together and overlap as far as their launches "
            "and --time do; a rail whose job started late was loaded less" % fx.binary)


def main(argv: List[str]) -> int:
    o = parse_args(argv)
    if o is None:
        common.print_help(__doc__)
        return 0
    no_floor = ""
    if o.sku:
        o.floor, no_floor = rails_floor.of_sku(o.sku)
        if o.floor:
            rails_floor.check_run(o.floor, o.mem, o.path, o.size)
    switch_of = switches(o.doctor)
    binary, fx = layer_binary(o)
    if os.path.lexists(os.path.join(o.outdir, "alone")):
        raise usage_error("%s: holds an earlier rails run (alone/); give a new OUTDIR" % o.outdir)
    preflight(o)
    try:
        common.make_dir(o.outdir)
    except OSError as e:
        raise usage_error("%s: cannot make the output directory: %s" % (o.outdir, e.strerror))
    hosts = o.hosts if fx.all_pairs else [WHOLE]
    say("%d rails alone, one after the other, on %s (%s)" % (len(o.nics), ",".join(o.hosts), fx.binary))
    alone = run_rails(o, binary, fx, "alone")
    attempts: List[List[RailRun]] = []
    for a in range(1, o.attempts + 1):
        say("all %d rails at once, attempt %d of at most %d" % (len(o.nics), a, o.attempts))
        attempts.append(run_rails(o, binary, fx, "all-%d" % a))
        v = judge(hosts, alone, attempts, o.below, switch_of, o.floor, no_floor)
        # Again only while a pair is low (or a rail below the floor) in every attempt so far
        # and the runs measured all.
        if not (v.suspects or v.floor_again) or v.invalid:
            break
    text = report(v, o, fx.binary, _together(fx))
    common.write_all([(os.path.join(o.outdir, "rails.csv"), RAILS_CSV_HEADER + "".join(v.rows)),
                      (os.path.join(o.outdir, "verdict.txt"), text)])
    sys.stdout.write(text)
    return v.status
