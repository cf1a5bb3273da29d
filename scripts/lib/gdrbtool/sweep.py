"""Run a profile of gdrbench benchmarks and collect everything in one results directory.

  scripts/gdrb-sweep [options]

With no options: this host, 2 ranks, the quick profile: every point-to-point benchmark that
applies here from 8 B to 1 GiB (device memory where nvidia-smi lists a GPU, the verbs
benchmarks where /sys/class/infiniband lists an RDMA device, binaries that are built).
Inside a Slurm allocation (SLURM_JOB_ID set) it launches with srun on the allocated nodes.
Writes results/<UTC date>-<label>/:
  results.csv   every row (schema: results/README.md), plus a 'failed' row for each size a
                failing benchmark did not measure; complete after Ctrl-C too
  meta.json     hosts, kernel, GPU driver, CUDA, MPI, rdma-core and gdrbench versions, GPUs
                and NICs with PCI ids, port rates, every command line and each step's outcome
  logs/         per step: NN-<bench>-<mem>.log (command line, stderr, exit status), .out (the
                table); the same for the doctor, the environment probes and the stages after
                the steps: doctor.log, node-info.log, plot.log, accept.log, report.log
  plots/        gdrb-plot's figures (PNG and SVG)
  summary.md, report.html   gdrb-report: environment, a table per benchmark with both paths
                side by side, the figures embedded in the HTML, the verdict on top
  verdict.json, verdict.xml when the profile has rules (gdrb-accept; JUnit XML for CI)
  doctor.json   gdrb_doctor --json, where the profile names it and it is built
  pairs.csv, pairs-ranks.csv, pairs-[lat-]<mem>-<size>-<path>.csv   an all-pairs benchmark's
                (gdrb_mpi_pairs) rows, rank table and matrices (docs/pairs.md); its rows are
                not in results.csv
Progress on stderr: [3/24] gdrb_write_bw mem=device 8B..1GiB  41 s  ETA 3 min

Options:
  --profile P        quick (default), full, a shipped acceptance profile (gdr-effectiveness,
                     ib-ndr400, ib-hdr200, roce-200g, roce-400g, pairs) or a profile file
  --launcher L       mpirun or srun (default srun inside a Slurm allocation, else mpirun)
  --hosts A,B        hosts, optionally with slots (A:8,B:8); rank i pairs with rank i+N/2,
                     so with N ranks spread evenly each pair crosses hosts
  --hostfile F       hosts from a file (Open MPI or Slurm format; first word of each line)
  --np N             ranks (default 2; even)
  --launcher-args S  more arguments for mpirun or srun, split at spaces (e.g. "--mpi=pmix")
  --mem LIST         only these memory kinds of the profile (host,pinned,device)
  --bench LIST       only these benchmarks (mpi_bw, write_lat, ... or binary names; the MPI
                     point-to-point ones also as latency, bw, bibw)
  --sizes SPEC       sizes for every benchmark instead of the profile's (e.g. 8,64K or 8:1M)
  --time-per-size S  time budget per size instead of the profile's (-t)
  --validate         check every byte (-c) in every benchmark
  --label TEXT       run label (default: the profile name)
  --out DIR          results directory (default results/<UTC date>-<label>)
  --bin-dir DIR      look for the binaries in DIR (and DIR/mpi, DIR/bench) first; then the
                     build tree next to this script, then PATH (may be given more than once)
  --link-rate GBITS  port rate for "% of link" rules instead of the one read from sysfs
  --dry-run          print what would run and why anything is skipped; run nothing
  -h, --help         this help
Exit: 0 every step ok or unsupported here (and the verdict passes), 1 a step failed, a row
is failed or invalid-data, the verdict fails or is INVALID, or an output (meta.json, the
plots, the verdict, summary.md, report.html) could not be written (said once; the results
already written stay, and the last line names only the files written), or a step's rows
could not be appended to results.csv (the sweep stops: they stay in its logs/ file, named),
2 bad usage (one line naming the option and the accepted form), 130 interrupted (the CSV
holds every row measured until then).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import common, pairs as pairs_mod, profile as profile_mod
from .common import (EXIT_FAIL, EXIT_INTERRUPTED, LIB, SCRIPTS, TREE, Refused, Stop, awk_value, csv_split,
                     csv_text, duration, failure, say, shell_join, size_fmt, sizes_expand, usage_error, write_all)

NODE_INFO = LIB / "node-info"   # the probe of one host (bash: it runs on every host through the launcher)
MEMS = ("host", "pinned", "device")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# --- options ---------------------------------------------------------------------------

@dataclass
class Options:
    profile: str = "quick"
    launcher: str = ""
    hosts: str = ""
    hostfile: str = ""
    np: str = "2"
    launcher_args: str = ""
    mem: str = ""
    bench: str = ""
    sizes: str = ""
    time_per_size: str = ""
    validate: bool = False
    label: str = ""
    out: str = ""
    bin_dirs: List[str] = field(default_factory=list)
    link_rate: str = ""
    dry_run: bool = False
    help: bool = False


_VALUED = {"--profile": "profile", "--launcher": "launcher", "--hosts": "hosts", "--hostfile": "hostfile",
           "--np": "np", "--launcher-args": "launcher_args", "--mem": "mem", "--bench": "bench",
           "--sizes": "sizes", "--time-per-size": "time_per_size", "--label": "label", "--out": "out",
           "--link-rate": "link_rate"}
MAX_RANKS = 1 << 20
_HOSTS = re.compile(r"^[A-Za-z0-9._-]+(:[0-9]+)?(,[A-Za-z0-9._-]+(:[0-9]+)?)*$")
# A label lands in every row's note: it starts with a letter or digit, never as a formula would.
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def parse_args(argv: Sequence[str]) -> Options:
    """The options, checked; a bad one raises one line naming it and its accepted form (exit 2).
    -h stops at once (help=True), as the old parser did."""
    o = Options()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _VALUED or a == "--bin-dir":
            if i + 1 >= len(argv) or argv[i + 1] == "":
                raise usage_error("%s needs a value; see --help" % a)
            if a == "--bin-dir":
                o.bin_dirs.append(argv[i + 1])
            else:
                setattr(o, _VALUED[a], argv[i + 1])
            i += 2
            continue
        if a == "--validate":
            o.validate = True
        elif a == "--dry-run":
            o.dry_run = True
        elif a in ("-h", "--help"):
            o.help = True
            return o
        else:
            raise usage_error("unknown option '%s'; see --help" % a)
        i += 1
    check_options(o)
    return o


def check_options(o: Options) -> None:
    np = common.integer(o.np, MAX_RANKS)
    if np is None or np < 2 or np % 2:
        raise usage_error("--np: expected an even number of ranks, at least 2, got '%s'" % o.np)
    if o.launcher not in ("", "mpirun", "srun"):
        raise usage_error("--launcher: expected mpirun or srun, got '%s'" % o.launcher)
    if o.hosts and o.hostfile:
        raise usage_error("--hosts and --hostfile: give one of them")
    if o.hosts and not _HOSTS.match(o.hosts):
        raise usage_error("--hosts: expected a comma list of host names, each optionally with :SLOTS "
                          "(a,b or a:8,b:8), got '%s'" % o.hosts)
    if o.hostfile and not os.access(o.hostfile, os.R_OK):
        raise usage_error("--hostfile: cannot read '%s'" % o.hostfile)
    if o.mem and any(m not in MEMS for m in o.mem.split(",")):
        raise usage_error("--mem: expected a comma list of host, pinned, device, got '%s'" % o.mem)
    if o.time_per_size and not common.decimal(o.time_per_size):
        raise usage_error("--time-per-size: expected seconds per size, e.g. 0.3, got '%s'" % o.time_per_size)
    if o.label and not _LABEL.match(o.label):
        raise usage_error("--label: expected letters, digits, '.', '_' or '-', starting with a letter or digit, "
                          "got '%s'" % o.label)
    if o.link_rate and not common.decimal(o.link_rate):
        raise usage_error("--link-rate: expected the port rate in Gb/s, e.g. 400, got '%s'" % o.link_rate)
    for d in o.bin_dirs:
        if not os.path.isdir(d):
            raise usage_error("--bin-dir: '%s' is not a directory" % d)
    if o.sizes and not sizes_expand(o.sizes):
        raise usage_error("--sizes: expected MIN:MAX (doubling) or a list A,B,C with sizes like 8, 64K, "
                          "1MiB, got '%s'" % o.sizes)


# --- what this host has, and where the binaries are ---------------------------------------

@dataclass
class Host:
    """What planning needs to know of this host. probe() reads it; tests make one up."""
    gpu: bool
    rdma: bool
    sysfs: str = "/sys"
    launchers: Tuple[str, ...] = ()    # the launchers found on PATH
    log: List[str] = field(default_factory=list)   # what probe() ran, for logs/node-info.log


def probe(sysfs: str) -> Host:
    gpu = False
    log: List[str] = []
    if shutil.which("nvidia-smi"):
        rc, out, err = capture(["nvidia-smi", "-L"], timeout=60)
        log.append(log_entry(["nvidia-smi", "-L"], rc, err, 60))
        gpu = any(line.startswith("GPU ") for line in out.splitlines())
    try:
        rdma = any(not n.startswith(".") for n in os.listdir(os.path.join(sysfs, "class", "infiniband")))
    except OSError:
        rdma = False
    return Host(gpu, rdma, sysfs, tuple(n for n in ("mpirun", "srun") if shutil.which(n)), log)


def find_bin(name: str, bin_dirs: Sequence[str], root: str = str(TREE)) -> str:
    """NAME in each --bin-dir (and its mpi/, bench/), then the build tree, then PATH; "" if none."""
    for d in list(bin_dirs) + [root]:
        for sub in (".", "mpi", "bench"):
            p = os.path.join(d, sub, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return os.path.join(os.path.abspath(os.path.join(d, sub)), name)
    return shutil.which(name) or ""


def capture(cmd: Sequence[str], timeout: float, env: Optional[Dict[str, str]] = None) -> Tuple[int, str, str]:
    """Run CMD with no input: (exit status, stdout, stderr); 124 when it ran past TIMEOUT (as
    timeout(1) says), 127 when it cannot be started."""
    try:
        p = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    except OSError as e:
        return 127, "", "%s: %s" % (cmd[0], e.strerror)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = 124
    return (128 - rc if rc < 0 else rc), out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line), "")


def exit_line(rc: int, why: str = "") -> str:
    """The last line of a child's log in logs/: its exit status, as a shell says it."""
    return "# exit status %d%s\n" % (rc, " (%s)" % why if why else "")


def log_entry(cmd: Sequence[str], rc: int, err: str, timeout: float = 0) -> str:
    """A child run by capture() as a log says it: its command line, its stderr, its exit status."""
    if err and not err.endswith("\n"):
        err += "\n"
    why = "stopped after %d s" % timeout if rc == 124 and timeout else ""
    return "# %s\n%s%s" % (shell_join(cmd), err, exit_line(rc, why))


def log_append(path: str, text: Union[str, bytes]) -> None:
    """TEXT appended to the log PATH as far as it fits: a log that cannot be written costs the
    log, never the sweep (an output that cannot be written is said by the stage that lost it)."""
    data = common.encode(text) if isinstance(text, str) else text
    try:
        with common.open_append(path) as f:
            f.write(data)
    except OSError:
        pass


# --- where and how ranks are launched --------------------------------------------------------

@dataclass
class Placement:
    launcher: str                  # mpirun or srun
    source: str                    # local, hosts, hostfile or slurm
    specs: List[str]               # as given (with :slots)
    names: List[str]               # each host once, rank 0's first
    hosts_arg: str = ""
    hostfile: str = ""
    extra: List[str] = field(default_factory=list)
    slurm_nodes: str = ""          # SLURM_JOB_NUM_NODES
    root_user: bool = False
    log: List[str] = field(default_factory=list)   # what placement() ran, for logs/node-info.log

    def command(self, n: int) -> List[str]:
        """The launcher command for N ranks."""
        if self.launcher == "srun":
            nodes = min(len(self.names), n)
            cmd = ["srun", "--ntasks=%d" % n, "--distribution=block"]
            if self.source == "slurm" and not self.specs:
                if self.slurm_nodes:
                    count = common.integer(self.slurm_nodes)     # ASCII digits: isdigit() takes '\u00b2'
                    nodes = min(count, n) if count else nodes
                cmd.append("--nodes=%d" % nodes)
            else:
                cmd += ["--nodes=%d" % nodes, "--nodelist=" + ",".join(self.names[:nodes])]
        else:
            cmd = ["mpirun", "-np", str(n)]
            if self.root_user:
                cmd.append("--allow-run-as-root")
            if self.source == "hostfile":
                cmd += ["--hostfile", self.hostfile]
            elif self.source == "hosts" and ":" in self.hosts_arg:
                cmd += ["--host", self.hosts_arg]
            elif self.source == "hosts" or (self.source == "slurm" and self.specs):
                # As many slots on each host as it needs, filled in order: with N ranks on H hosts,
                # ranks 0..N/H-1 land on the first host, so rank i and i+N/2 are on different hosts.
                per = (n + len(self.names) - 1) // len(self.names)
                cmd += ["--host", ",".join("%s:%d" % (h, per) for h in self.names)]
            elif self.source == "local":
                # More ranks than cores on one host is allowed: this is a measurement, not a job.
                cmd.append("--oversubscribe")
        return cmd + self.extra

    def info_command(self) -> List[str]:
        """node-info once on each host."""
        n = len(self.names)
        if self.launcher == "srun":
            cmd = ["srun", "--ntasks=%d" % n, "--ntasks-per-node=1", "--nodes=%d" % n]
            if self.source != "slurm":
                cmd.append("--nodelist=" + ",".join(self.names))
        else:
            cmd = ["mpirun", "-np", str(n), "--host", ",".join(self.names)]
            if self.root_user:
                cmd.append("--allow-run-as-root")
        return cmd + self.extra + ["bash", str(NODE_INFO)]


def placement(o: Options, env: Dict[str, str], this_host: str) -> Placement:
    slurm_job = env.get("SLURM_JOB_ID", "")
    launcher = o.launcher
    if not launcher:
        launcher = "srun" if slurm_job and shutil.which("srun") else "mpirun"
    specs: List[str] = []
    source = "local"
    log: List[str] = []
    if o.hosts:
        specs, source = o.hosts.split(","), "hosts"
    elif o.hostfile:
        try:
            text = common.read_regular(o.hostfile, 1 << 24)
        except OSError as e:
            raise usage_error("--hostfile: cannot read '%s': %s" % (o.hostfile, e.strerror))
        specs = [line.split()[0] for line in text.splitlines() if not re.match(r"^[ \t]*(#|$)", line) and line.split()]
        if not specs:
            raise usage_error("--hostfile: no host names in '%s'" % o.hostfile)
        source = "hostfile"
    elif slurm_job:
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
        if nodelist:
            if shutil.which("scontrol"):
                cmd = ["scontrol", "show", "hostnames", nodelist]
                rc, out, err = capture(cmd, timeout=60)
                log.append(log_entry(cmd, rc, err, 60))
                specs = out.splitlines()
            elif "[" not in nodelist:
                specs = nodelist.split(",")
        source = "slurm"
    names: List[str] = []
    for h in specs:
        h = h.split(":")[0].split(" ")[0]
        if h and h not in names:
            names.append(h)
    return Placement(launcher, source, specs, names or [this_host], o.hosts, o.hostfile,
                     o.launcher_args.split(), env.get("SLURM_JOB_NUM_NODES", ""), os.getuid() == 0, log)


# --- the plan ---------------------------------------------------------------------------------

@dataclass
class Step:
    n: int
    bin: str          # the path found
    name: str         # the binary's name
    bench: str
    layer: str
    launch: str
    mem: str          # "" for mem=none
    sizes: str
    time: str
    iters: str
    np: str
    paths: str
    validate: str
    args: str
    range: str = ""
    estimate: int = 0

    @property
    def base(self) -> str:
        return "%02d-%s%s" % (self.n, self.bench, "-" + self.mem if self.mem else "")

    @property
    def title(self) -> str:
        return self.name + (" mem=" + self.mem if self.mem else "")


@dataclass
class Skip:
    binary: str
    mem: str
    reason: str

    def text(self) -> str:
        return "%s%s: %s" % (self.binary, " mem=" + self.mem if self.mem else "", self.reason)


@dataclass
class Plan:
    profile_file: str
    profile_name: str
    label: str
    description: str
    steps: List[Step]
    skipped: List[Skip]
    doctor: Optional[profile_mod.Doctor]
    has_rules: bool
    version: str
    estimate: int = 0


def _in_list(item: str, comma_list: str) -> bool:
    return item in comma_list.split(",")


def _version_of(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=10).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():
        m = re.match(r".*\(gdrbench\) *(.*)", line)
        if m:
            return m.group(1)
    return ""


def plan(o: Options, prof: profile_mod.Profile, profile_file: str, host: Host, launcher: str,
         root: str = str(TREE), find: Callable[[str], str] = None) -> Plan:
    """Which steps run, in order, and why each line or memory kind that does not run is skipped."""
    find = find or (lambda name: find_bin(name, o.bin_dirs, root))
    profile_name = os.path.basename(profile_file)
    if profile_name.endswith(".profile"):
        profile_name = profile_name[:-len(".profile")]
    label = o.label or profile_name
    if not _LABEL.match(label):
        label = "sweep"
    wanted = o.bench.split(",") if o.bench else []
    matched: List[str] = []
    steps: List[Step] = []
    skipped: List[Skip] = []
    version = ""
    for r in prof.runs:
        if wanted:
            short = r.binary[len("gdrb_"):] if r.binary.startswith("gdrb_") else r.binary
            short = short[len("mpi_"):] if short.startswith("mpi_") else short
            hits = [b for b in wanted if b in (r.bench, r.binary, short)]
            matched += hits
            if not hits:
                continue
        binary = find(r.binary)
        for m in r.mems.split(","):
            if m != "none" and o.mem and not _in_list(m, o.mem):
                continue
            if m == "none":
                m = ""
            if r.needs and _in_list("gpu", r.needs) and not host.gpu:
                skipped.append(Skip(r.binary, m, "needs a GPU: nvidia-smi -L lists none here"))
            elif r.needs and _in_list("rdma", r.needs) and not host.rdma:
                skipped.append(Skip(r.binary, m, "needs an RDMA device: %s/class/infiniband is empty here"
                                    % host.sysfs))
            elif m == "device" and not host.gpu:
                skipped.append(Skip(r.binary, m, "device memory needs a GPU: nvidia-smi -L lists none here"))
            elif not binary:
                skipped.append(Skip(r.binary, m, "not built here (not in %sthe build tree or on PATH)"
                                    % (" ".join(o.bin_dirs) + ", " if o.bin_dirs else "")))
            elif r.launch == "mpi" and launcher not in host.launchers:
                skipped.append(Skip(r.binary, m, "launcher %s not found on PATH" % launcher))
            else:
                steps.append(Step(len(steps) + 1, binary, r.binary, r.bench, r.layer, r.launch, m,
                                  o.sizes or r.sizes, o.time_per_size or r.time, r.iters, r.np, r.paths,
                                  "on" if o.validate else r.validate, r.args))
                version = version or _version_of(binary)
    for b in wanted:
        if b not in matched:
            raise usage_error("--bench: '%s' is not run by profile %s; its run lines: %s"
                              % (b, profile_name, ", ".join(r.bench for r in prof.runs)))
    if not version:
        try:
            with open(os.path.join(root, "configure.ac"), encoding="utf-8") as f:
                m = re.search(r"^AC_INIT\(\[gdrbench\], \[([^]]*)\]", f.read(), re.M)
            version = m.group(1) if m else ""
        except OSError:
            pass
    p = Plan(profile_file, profile_name, label, prof.description, steps, skipped,
             prof.doctors[-1] if prof.doctors else None, bool(prof.rules), version)
    for s in steps:
        estimate(s, int(s.np or o.np))
        p.estimate += s.estimate
    return p


def estimate(s: Step, ranks: int = 2) -> None:
    """The step's size range, and its time estimate (for the ETA): sizes x paths x (budget +
    warm-up) + launch; an all-pairs step spends the budget in each round (n - 1, or --rounds K)
    and for each metric (latency: two phases a round)."""
    sizes = sizes_expand(s.sizes) or [0]
    first, last = size_fmt(sizes[0]), size_fmt(sizes[-1])
    s.range = first if first == last else first + ".." + last
    npaths = len(s.paths.split(",")) if s.paths else (2 if s.mem == "device" else 1)
    budget = float(s.time) if s.time else 0.3
    per_size = npaths * (budget * 1.15 + 0.05)
    if is_pairs(s):
        args = s.args.split()
        rounds = max(ranks - 1, 1)
        m = re.search(r"--rounds[ =]([0-9]{1,9})(?![0-9])", s.args)
        if m:
            rounds = min(int(m.group(1)), rounds)
        metrics = args[args.index("--metric") + 1].split(",") if "--metric" in args[:-1] else ["bw"]
        per_size *= rounds * sum(2 if x == "lat" else 1 for x in metrics)
    s.estimate = int(len(sizes) * per_size + 2)


def step_command(s: Step, part: str, label: str, where: Placement, np: str) -> List[str]:
    args = ["-m", s.sizes, "--csv", part, "--label", label]
    if s.mem:
        args += ["--mem", s.mem]
    if s.time:
        args += ["-t", s.time]
    if s.iters:
        args += ["-n", s.iters]
    if s.validate == "on":
        args.append("-c")
    args += s.args.split()
    if s.launch == "local":
        return [s.bin] + args
    return where.command(int(s.np or np)) + [s.bin] + args


def dry_run(p: Plan, where: Placement, o: Options) -> None:
    out = ["profile %s (%s): %d steps, about %s; launcher %s, %s ranks, hosts %s"
           % (p.profile_name, p.profile_file, len(p.steps), duration(p.estimate), where.launcher, o.np,
              ",".join(where.names))]
    for s in p.steps:
        out.append("[%d/%d] %s" % (s.n, len(p.steps),
                                   shell_join(step_command(s, "OUT/logs/%s.csv" % s.base, p.label, where, o.np))))
    out += ["skip: " + k.text() for k in p.skipped]
    if p.doctor:
        out.append("doctor: " + (find_bin(p.doctor.binary, o.bin_dirs) or p.doctor.binary + ": not built here"))
    sys.stdout.write("\n".join(out) + "\n")


# --- a step's rows into results.csv ---------------------------------------------------------

def _reg_of(mem: str, path: str, layer: str) -> str:
    if path in ("staged", "staged-serial"):
        return "staged"
    if layer == "local":
        return "none"
    if mem in ("host", "pinned"):
        return "host"
    return "mpi-cuda" if layer == "mpi" else "none"


@dataclass
class Merged:
    """A step's rows fit to append to results.csv, and how many of each kind."""
    rows: List[str] = field(default_factory=list)      # the step's complete rows
    filled: List[str] = field(default_factory=list)    # a 'failed'/'unsupported' row per size not measured
    dropped: int = 0


def merge_rows(part: str, s: Step, fill: str, note: str, ranks: int, hosts: int, gpu: str, version: str,
               stamp: str = "") -> Merged:
    """The complete rows of the binary's CSV PART (a row cut short by Ctrl-C or a crash, one
    without its newline or with another field count, is dropped, never half-copied); then, with
    FILL failed or unsupported, one row of that status for each expected (memory kind, path,
    size) without an aggregate row. Expected: the step's paths (PATH or MEM:PATH; default
    direct, and staged for device memory) x its sizes."""
    sch = common.schema()
    res = Merged()
    try:
        with open(part, "rb") as f:
            text = f.read().decode("utf-8", "surrogateescape")
    except OSError:
        text = ""
    lines = text.split("\n")
    torn = lines.pop()   # "" when the file ends with a newline
    if torn:
        lines.append(torn)
    seen = set()
    header_ok = False
    i_pair, i_mem, i_path, i_size = (sch.index[c] for c in ("pair", "mem", "path", "size_bytes"))
    for n, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if n == 0:
            header_ok = line == sch.header
            if not header_ok:
                say("%s:1: not the schema's header; its rows are not taken" % part)
            continue
        f = csv_split(line)
        if not header_ok or (torn and n == len(lines) - 1) or len(f) != len(sch.columns):
            res.dropped += 1
            continue
        res.rows.append(line)
        if f[i_pair] == "all":
            seen.add((f[i_mem], f[i_path], awk_value(f[i_size])))
    if fill not in ("failed", "unsupported"):
        return res
    stamp = stamp or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    paths = s.paths or ("direct,staged" if s.mem == "device" else "direct")
    for p in paths.split(","):
        mem, path = p.split(":", 1) if ":" in p else (s.mem, p)
        path = path.split(":")[0]
        for size in sizes_expand(s.sizes) or []:
            if (mem, path, float(size)) in seen:
                continue
            row = dict.fromkeys(sch.columns, "")
            row.update(benchmark=s.bench, layer=s.layer, mem=mem, path=path, reg=_reg_of(mem, path, s.layer),
                       pair="all", size_bytes=str(size), iterations="0", ranks=str(ranks), hosts=str(hosts),
                       gpu=gpu if mem == "device" else "", status=fill, errors="0", note=note, timestamp=stamp,
                       version=version)
            # Text from the profile, nvidia-smi and the binary's stderr: never a formula.
            res.filled.append(",".join(csv_text(row[c]) if c not in sch.numeric else row[c] for c in sch.columns))
    return res


def is_pairs(s: Step) -> bool:
    """An all-pairs benchmark (gdrb_mpi_pairs): its own CSV schema, rank table and matrices."""
    return s.bench.endswith("_pairs")


_STEP_MATRIX = re.compile(r"^pairs-(lat-)?([0-9]+)-([a-z0-9_]+)\.csv$")


def _append_pairs_csv(src: str, target: str) -> Tuple[int, int, str]:
    """The complete rows of the pairs CSV SRC appended to TARGET (created with the header), through
    a copy renamed over it, streamed: at 2048 ranks a matrix is 4.2 million rows. A row without
    its newline (cut short) or with another field count is dropped (text fields never hold a
    comma). (rows appended, rows dropped, why they could not be: "" when they were)"""
    header = pairs_mod.pairs_header().encode()
    commas = header.count(b",")
    rows = dropped = 0
    if not os.path.exists(src):
        return 0, 0, ""
    staged = None
    try:
        with open(src, "rb") as f:
            first = f.readline()
            if not first:
                return 0, 0, ""
            if first.rstrip(b"\r\n") != header:
                say("%s:1: not the pairs schema's header; its rows are not taken" % src)
                return 0, sum(1 for _ in f), ""
            staged = common.Staged(target)
            w = staged.file
            if os.path.exists(target):
                with open(target, "rb") as old:
                    shutil.copyfileobj(old, w)
            else:
                w.write(header + b"\n")
            for line in f:
                if line.endswith(b"\n") and line.count(b",") == commas:
                    w.write(line)
                    rows += 1
                else:
                    dropped += 1
        if rows:
            staged.commit()
        else:
            staged.discard()
    except OSError as e:
        if staged is not None:
            staged.discard()
        return rows, dropped, e.strerror or "cannot write it"
    return rows, dropped, ""


def keep_pairs(step_dir: str, mem: str, out: str) -> Tuple[int, int]:
    """What an all-pairs step wrote in STEP_DIR into the results directory OUT: its complete
    rows appended to OUT/pairs.csv, its rank table as OUT/pairs-ranks.csv, each matrix as
    OUT/pairs-[lat-]MEM-SIZE-PATH.csv (the memory kind added: host and device memory both have
    a direct path). STEP_DIR is removed. (rows kept, incomplete rows dropped) When the rows cannot
    be appended, STEP_DIR is left whole (the only copy of what was measured) and the sweep stops:
    Stop(1) with one line saying where they are."""
    src, target = os.path.join(step_dir, pairs_mod.PAIRS_CSV), os.path.join(out, pairs_mod.PAIRS_CSV)
    rows, dropped, why = _append_pairs_csv(src, target)
    if why:
        raise failure("cannot append the rows of %s to %s: %s; they stay in %s, with its matrices"
                      % (src, target, why, step_dir))
    moves = []
    try:
        names = sorted(os.listdir(step_dir))
    except OSError:
        names = []
    for name in names:
        m = _STEP_MATRIX.match(name)
        if m:
            moves.append((name, "pairs-%s%s%s-%s.csv" % (m.group(1) or "", mem + "-" if mem else "", m.group(2),
                                                         m.group(3))))
        elif name == pairs_mod.RANKS_FILE:
            moves.append((name, name))
    for name, target in moves:
        try:
            os.replace(os.path.join(step_dir, name), os.path.join(out, target))
        except OSError as e:
            say("cannot keep %s as %s: %s" % (os.path.join(step_dir, name), os.path.join(out, target), e.strerror))
    shutil.rmtree(step_dir, ignore_errors=True)
    return rows, dropped


def _claim_dir(path: str) -> bool:
    """PATH created as a directory (True), or there already as one (False); a link or anything
    else there raises common.Refused."""
    try:
        os.mkdir(path)
        return True
    except FileExistsError:
        pass
    common.make_dir(path)
    return False


def append_atomically(csv_path: str, lines: Sequence[str]) -> str:
    """Append LINES to CSV_PATH through a copy renamed over it (common.write_all): the file is
    always whole. "" when done, else why not (the caller says so)."""
    try:
        with open(csv_path, "rb") as f:
            text = f.read() + "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
        write_all([(csv_path, text)], quiet=True)
    except OSError as e:
        return e.strerror or "cannot read it"
    except Stop:
        return _why_unwritable(os.path.dirname(csv_path))
    return ""


def _why_unwritable(directory: str) -> str:
    """Why a file in DIRECTORY could not be written, as far as can be told afterwards."""
    if not os.path.isdir(directory):
        return "the results directory is gone"
    try:
        st = os.statvfs(directory)
        if st.f_bavail == 0 or st.f_favail == 0:
            return os.strerror(errno.ENOSPC)
    except OSError:
        pass
    return "cannot write it"


# --- meta.json --------------------------------------------------------------------------------

def _js(s: str) -> Optional[str]:
    """Unknown (empty) is null."""
    return s if s else None


def _jn(s: str):
    if re.match(r"^-?[0-9]+$", s):
        return int(s)
    if re.match(r"^-?[0-9]+\.[0-9]+$", s):
        return float(s)
    return None


def meta_text(meta: Dict[str, object]) -> str:
    """meta.json: one key a line; nodes and steps one object a line (as gdrb-sweep wrote it)."""
    def dump(v, compact=False):
        # allow_nan=False: NaN and Infinity are not JSON (every number here was made finite).
        return json.dumps(v, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":") if compact else (", ", ": "))

    def objects(items, compact):
        return "[" + ",".join("\n    " + dump(x, compact) for x in items) + "\n  ]"

    lines = []
    for k, v in meta.items():
        if k == "nodes":
            text = objects(v, True)
        elif k == "steps":
            text = objects(v, False)
        elif k in ("skipped", "hosts"):
            text = dump(v, True)
        else:
            text = dump(v)
        lines.append('  "%s": %s' % (k, text))
    # A path or command line of bytes that are not UTF-8 (lone surrogates) as U+FFFD: JSON is UTF-8.
    return common.utf8_text("{\n" + ",\n".join(lines) + "\n}\n")


def link_rate_of(node: Dict[str, object]) -> Optional[float]:
    """The fastest active port of a node: what "% of link" rules compare against."""
    best = 0
    for nic in node.get("nics") or []:
        for port in (nic.get("ports") or []) if isinstance(nic, dict) else []:
            rate = port.get("rate_gbps") if isinstance(port, dict) else None
            if "ACTIVE" in str(port.get("state") or "") and isinstance(rate, (int, float)) and rate > best:
                best = rate
    return best or None


def _finite(text: str) -> Optional[float]:
    """A JSON number as a float; None (null) past a double (1e999, 400 digits): meta.json
    stays JSON, which has no Infinity."""
    v = float(text)
    return v if v not in (float("inf"), float("-inf")) else None


def _json_lines(text: str) -> List[Tuple[str, dict]]:
    """The JSON objects of TEXT, one a line (node-info's output): a line that is not one (or
    nests past the recursion limit, or has an integer past int()'s 4300 digits) is left out;
    NaN, Infinity and numbers past a double are null."""
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                obj = json.loads(line, parse_float=_finite, parse_constant=lambda word: None)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                out.append((line, obj))
    return out


# --- the sweep --------------------------------------------------------------------------------

class Sweep:
    def __init__(self, o: Options, p: Plan, host: Host, where: Placement, command: str):
        self.o, self.p, self.host, self.where, self.command = o, p, host, where, command
        self.interrupted = False
        self.stop_signal = ""       # the signal that interrupted the sweep: SIGINT, SIGTERM or SIGHUP
        self.meta_failed = False
        self.meta: Dict[str, object] = {}
        self.tty = sys.stderr.isatty()
        self.out = self.csv = ""
        self.stage_logs: List[Tuple[str, bytes]] = []   # written after the last stage

    def log_path(self, name: str) -> str:
        return os.path.join(self.out, "logs", name)

    def probed(self, cmd: List[str], timeout: float) -> Tuple[int, str, str]:
        """capture() of a probe of the environment, kept in logs/node-info.log."""
        rc, out, err = capture(cmd, timeout)
        log_append(self.log_path("node-info.log"), log_entry(cmd, rc, err, timeout))
        return rc, out, err

    # Ctrl-C (or SIGTERM, SIGHUP) ends the sweep cleanly: the step running is stopped, its
    # complete rows are kept, and meta.json, the plots and the summary are still written.
    def _on_signal(self, signum, frame) -> None:
        self.interrupted = True
        # The first one names the interruption: a scheduler's SIGTERM is not a Ctrl-C.
        self.stop_signal = self.stop_signal or signal.Signals(signum).name

    def trap_signals(self) -> None:
        for sig in STOP_SIGNALS:
            # A signal ignored when the sweep started stays ignored (as a shell's trap leaves it).
            if signal.getsignal(sig) != signal.SIG_IGN:
                signal.signal(sig, self._on_signal)

    def results_dir(self) -> None:
        """The results directory, claimed: its results.csv created O_EXCL, so that of two sweeps
        given one --out (or one default name) exactly one goes on. The directory and logs/ are
        directories of their own: a link there is refused, never written through."""
        out = self.o.out
        label = self.p.label
        stem = ""
        if not out:
            base = os.path.join(str(TREE), "results")
            if not (os.path.isdir(base) and os.access(base, os.W_OK)):
                base = os.path.join(os.getcwd(), "results")
            stem = out = os.path.join(base, time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + label)
        parent = os.path.dirname(out.rstrip("/") or "/") or "."
        if not os.path.isdir(parent):
            raise usage_error("--out: directory '%s' does not exist" % parent)
        n = 2
        while True:
            try:
                created = _claim_dir(out)
            except Refused as e:
                raise usage_error("--out: '%s' is %s" % (out, e.strerror))
            except OSError as e:
                raise usage_error("--out: cannot create '%s': %s" % (out, e.strerror))
            if stem and not created:
                # The default name is taken (a sweep started in the same second): the next one.
                out = "%s-%d" % (stem, n)
                n += 1
                continue
            try:
                fd = os.open(os.path.join(out, "results.csv"),
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
                break
            except FileExistsError:
                if not stem:
                    raise usage_error("--out: '%s' already holds results; give a new directory" % out)
            except OSError as e:
                raise usage_error("--out: cannot write in '%s': %s" % (out, e.strerror))
            out = "%s-%d" % (stem, n)
            n += 1
        self.out = os.path.abspath(out)
        self.csv = os.path.join(self.out, "results.csv")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(common.schema().header + "\n")
        except OSError as e:
            raise failure("cannot write %s: %s" % (self.csv, e.strerror))
        self.make_dir(os.path.join(self.out, "logs"))
        try:
            common.open_new(os.path.join(self.out, "commands.txt")).close()
        except OSError as e:
            raise failure("cannot write %s: %s" % (os.path.join(self.out, "commands.txt"), e.strerror))

    def make_dir(self, path: str) -> None:
        """A directory of the results directory (logs/, a step's own), never through a link."""
        try:
            common.make_dir(path)
        except OSError as e:
            raise failure("cannot create %s: %s" % (path, e.strerror))

    def command_line(self, line: str) -> None:
        """LINE appended to commands.txt, as far as it can be (log_append)."""
        log_append(os.path.join(self.out, "commands.txt"), line + "\n")

    @staticmethod
    def new_log(path: str, text: str) -> None:
        """The log PATH started anew with TEXT (an earlier one replaced, a link refused: lost, as
        a log that cannot be written is)."""
        try:
            with common.open_new(path) as f:
                f.write(common.encode(text))
        except OSError:
            pass

    def write_meta(self) -> None:
        """meta.json, whole or not at all; a failure is said once, and the sweep then exits 1."""
        try:
            # Said once: the first failure is the one to fix.
            write_all([(os.path.join(self.out, "meta.json"), meta_text(self.meta))], quiet=self.meta_failed)
        except Stop:
            self.meta_failed = True

    def nodes(self) -> Tuple[List[dict], str]:
        """This node, and every other host through the launcher (one rank per host)."""
        names = self.where.names
        say("reading the environment of " + " ".join(names))
        nodes = [obj for _, obj in _json_lines(self.probed([str(NODE_INFO)], timeout=120)[1])]
        this = socket.gethostname()
        others = any(h not in (this, this.split(".")[0], "localhost") for h in names)
        error = ""
        if others and self.where.launcher in self.host.launchers:
            rc, out, err = self.probed(self.where.info_command(), timeout=120)
            found = _json_lines(out)
            if rc == 0 and found:
                # rank 0's host first, then the others in the order given, then any the names missed
                order = []
                for h in names:
                    order += [x for x in found if str(x[1].get("hostname")) == h
                              or str(x[1].get("hostname")).startswith(h + ".")][:1]
                seen = set()
                nodes = []
                for line, obj in order + found:
                    if line not in seen:
                        seen.add(line)
                        nodes.append(obj)
            else:
                error = "could not run node-info on every host through %s: %s" % (self.where.launcher,
                                                                                   first_line(err))
                say(error + "; meta.json describes this host only (all it said: logs/node-info.log)")
        return nodes, error

    def skip(self, binary: str, mem: str, reason: str) -> None:
        self.p.skipped.append(Skip(binary, mem, reason))
        self.meta["skipped"] = self.skipped_json()

    def skipped_json(self) -> List[Dict[str, Optional[str]]]:
        return [{"binary": _js(k.binary), "mem": _js(k.mem), "reason": _js(k.reason)} for k in self.p.skipped]

    def run_child(self, cmd: List[str], stdout: str, log: str, on_tick: Optional[Callable[[], None]] = None,
                  timeout: float = 0) -> int:
        """CMD in a session of its own (Ctrl-C reaches this tool only, which then stops the
        whole benchmark, launcher and ranks, and keeps what it measured). Its exit status, as a
        shell says it (128+N for signal N); 124 past TIMEOUT."""
        out = err = None
        try:
            out = common.open_new(stdout)
            err = common.open_append(log)
        except OSError as e:
            if err is None and out is not None:
                out.close()
            say("cannot write %s: %s" % (log if out else stdout, e.strerror))
            return 127
        try:
            with out, err:
                child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         start_new_session=True)
        except OSError as e:
            log_append(log, "%s: cannot run %s: %s\n%s" % (common.prog, cmd[0], e.strerror, exit_line(127)))
            return 127
        start = time.monotonic()
        ticked = start
        why = ""
        while True:
            try:
                rc = child.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            if self.interrupted or (timeout and time.monotonic() - start > timeout):
                stop_child(child)
                if self.interrupted:
                    rc, why = child.returncode, "stopped: the sweep was interrupted by " + self.stop_signal
                else:
                    rc, why = 124, "stopped after %d s" % timeout
                break
            if on_tick and time.monotonic() - ticked >= 1:
                ticked = time.monotonic()
                on_tick()
        rc = 128 - rc if rc < 0 else rc
        log_append(log, exit_line(rc, why))
        return rc

    def doctor(self) -> None:
        d = self.p.doctor
        dbin = find_bin(d.binary, self.o.bin_dirs)
        if not dbin:
            self.skip(d.binary, "", "not built here (not in the build tree or on PATH)")
            return
        cmd = [dbin, "--json"] + d.args.split()
        self.command_line(shell_join(cmd))
        report = os.path.join(self.out, "doctor.json")
        log = os.path.join(self.out, "logs", "doctor.log")
        self.new_log(log, "# %s\n" % shell_join(cmd))
        drc = self.run_child(cmd, report, log, timeout=300)
        if not os.path.islink(report) and os.path.isfile(report) and os.path.getsize(report) > 0:
            self.meta["doctor"] = {"binary": dbin, "exit": drc, "file": "doctor.json"}
            say("gdrb_doctor: exit %d%s, kept as doctor.json" % (drc, " (a check fails)" if drc == 1 else ""))
        else:
            try:
                os.unlink(report)
            except OSError:
                pass
            self.meta["doctor"] = {"binary": dbin, "exit": drc, "file": None}
            say("gdrb_doctor wrote nothing (exit %d); see logs/doctor.log" % drc)
        self.write_meta()

    def progress(self, text: str, final: bool) -> None:
        """A progress line on stderr: refreshed in place on a terminal, one line each otherwise."""
        if self.tty:
            sys.stderr.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def steps(self, gpu_name: str, run_start: float) -> Tuple[int, bool]:
        """Run every step; (the index of the first step not run, whether one failed)."""
        steps = self.p.steps
        total = len(steps)
        est_done = 0
        failed = False
        i = 0
        for s in steps:
            if self.interrupted:
                return i, failed
            i = s.n
            log = os.path.join(self.out, "logs", s.base + ".log")
            part = os.path.join(self.out, "logs", s.base + ".csv")
            if is_pairs(s):
                # Its rank table and matrices are written beside its CSV: a directory of its own.
                self.make_dir(os.path.join(self.out, "logs", s.base))
                part = os.path.join(self.out, "logs", s.base, pairs_mod.PAIRS_CSV)
            cmd = step_command(s, part, self.p.label, self.where, self.o.np)
            cmdline = shell_join(cmd)
            self.command_line(cmdline)
            self.new_log(log, "# %s\n" % cmdline)

            elapsed = int(time.monotonic() - run_start)
            # Scale the remaining estimate by how the finished steps compared with theirs.
            remaining = self.p.estimate - est_done
            if est_done > 0 and elapsed > 0:
                remaining = remaining * elapsed // est_done
            step_start = time.monotonic()

            def line(remaining=remaining) -> str:
                now = time.monotonic()
                left = max(remaining - int(now - step_start), 0)
                return "[%d/%d] %s %s  %d s  ETA %s" % (s.n, total, s.title, s.range, int(now - run_start),
                                                        duration(left))

            self.progress(line(), False)
            rc = self.run_child(cmd, os.path.join(self.out, "logs", s.base + ".out"), log,
                                on_tick=(lambda: self.progress(line(), False)) if self.tty else None)
            secs = int(time.monotonic() - step_start)
            est_done += s.estimate

            ranks = int(s.np or self.o.np)
            step_hosts = min(len(self.where.names), ranks)
            if s.launch == "local":
                ranks = step_hosts = 1
            reason = self.reason(log, s.name)
            if self.interrupted:
                fill, note, status = "none", "", "interrupted"
            elif rc == 77:
                fill, status = "unsupported", "unsupported"
                note = "unsupported here: " + (reason or "see logs/%s.log" % s.base)
            else:
                fill = "failed"
                note = "gdrb-sweep: %s exited %d without a row for this size; %ssee logs/%s.log" % (
                    s.name, rc, reason + "; " if reason else "", s.base)
                status = "failed" if rc != 0 else "ok"
            if is_pairs(s):
                rows, dropped = keep_pairs(os.path.dirname(part), s.mem, self.out)
                filled = 0
                if status == "ok" and not rows:
                    status = "failed"
            else:
                m = merge_rows(part, s, fill, note, ranks, step_hosts, gpu_name, self.p.version)
                why = append_atomically(self.csv, m.rows + m.filled)
                if why:
                    # The step file is the only copy of what was measured: kept, and the sweep
                    # stops (the next steps would meet the same disk).
                    raise failure("cannot append the rows of step %d (%s) to %s: %s; %s" % (
                        s.n, s.title, self.csv, why,
                        "its rows stay in %s (%d measured)" % (part, len(m.rows)) if os.path.isfile(part)
                        else "nothing of it is left to keep"))
                try:
                    os.unlink(part)
                except OSError:
                    pass
                rows, filled, dropped = len(m.rows), len(m.filled), m.dropped
            if status in ("ok", "unsupported") and filled and (status == "ok" or rows):
                status = "failed"
            if status == "ok" and not is_pairs(s) and any(",invalid-data," in r for r in m.rows):
                status = "invalid-data"
            failed = failed or status in ("failed", "invalid-data")

            detail = "%s, %d row%s" % (status, rows, "" if rows == 1 else "s")
            if filled:
                detail += ", %d missing rows written as %s" % (filled, fill)
            if dropped:
                detail += ", %d incomplete rows dropped" % dropped
            if status != "ok":
                detail += " (exit %d; logs/%s.log)" % (rc, s.base)
            self.progress("[%d/%d] %s: %s, %d s" % (s.n, total, s.title, detail, secs), True)
            self.show_table(os.path.join(self.out, "logs", s.base + ".out"))

            self.meta["steps"].append({
                "n": s.n, "binary": _js(s.name), "benchmark": _js(s.bench), "mem": _js(s.mem),
                "sizes": _js(s.sizes), "command": _js(cmdline), "exit": rc, "status": status, "rows": rows,
                "filled": filled, "dropped": dropped, "seconds": secs, "log": "logs/%s.log" % s.base})
            self.write_meta()
            i = s.n + 1
        return i, failed

    def stage(self, name: str, cmd: List[str], keep_stdout: bool = False) -> Tuple[int, bytes]:
        """A stage after the steps (gdrb-plot, gdrb-accept, gdrb-report): its stderr on the
        terminal and, with its command line and exit status, in logs/NAME.log (written after the
        last stage). (exit status, its stdout when KEEP_STDOUT; else that goes to the terminal,
        or nowhere for the report)"""
        text = [("# %s\n" % shell_join(cmd)).encode("utf-8", "surrogateescape")]
        stdout = b""
        sink = subprocess.PIPE if keep_stdout else (subprocess.DEVNULL if name == "report" else None)
        sys.stderr.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE)
        except OSError as e:
            proc = None
            line = "%s: cannot run %s: %s\n" % (common.prog, cmd[0], e.strerror)
            sys.stderr.write(line)
            text.append(line.encode("utf-8", "surrogateescape"))
            rc = 127
        if proc and keep_stdout:
            # A short stderr: said whole once the stage ends, before its stdout is shown.
            stdout, err = proc.communicate()
            text.append(err)
            sys.stderr.buffer.write(err)
        elif proc:
            for line in proc.stderr:       # as it comes
                text.append(line)
                sys.stderr.buffer.write(line)
                sys.stderr.flush()
            proc.stderr.close()
        if proc:
            rc = proc.wait()
            rc = 128 - rc if rc < 0 else rc
        sys.stderr.flush()
        if text[-1] and not text[-1].endswith(b"\n"):
            text.append(b"\n")
        text.append(exit_line(rc).encode())
        self.stage_logs.append((self.log_path(name + ".log"), b"".join(text)))
        return rc, stdout

    @staticmethod
    def reason(log: str, name: str) -> str:
        """The binary's own word on why: its first "NAME: ..." line on stderr."""
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    line = line.rstrip("\n")
                    if not line.startswith("#") and line.startswith(name + ":"):
                        return re.sub(r"^[^:]*: ", "", line, count=1)
        except OSError:
            pass
        return ""

    @staticmethod
    def show_table(path: str) -> None:
        try:
            with open(path, "rb") as f:
                table = f.read()
        except OSError:
            return
        if table:
            show(table + b"\n")

    def run(self) -> int:
        p, o = self.p, self.o
        self.results_dir()
        say("profile %s: %d steps, about %s; results in %s" % (p.profile_name, len(p.steps),
                                                              duration(p.estimate), self.out))
        # What planning ran (nvidia-smi -L, scontrol) before the results directory existed.
        log_append(self.log_path("node-info.log"), "".join(self.host.log + self.where.log))
        self.trap_signals()
        launcher = self.where.launcher
        git = ""
        if os.path.exists(os.path.join(str(TREE), ".git")):
            rc, git, _ = self.probed(["git", "-C", str(TREE), "describe", "--always", "--dirty"], timeout=60)
            git = first_line(git) if rc == 0 else ""
        lv = ""
        if launcher in self.host.launchers:
            lv = first_line(self.probed([launcher, "--version"], timeout=60)[1])
        self.meta = {
            "schema": "gdrbench-meta-1", "gdrbench_version": _js(p.version), "gdrbench_git": _js(git),
            "label": _js(p.label), "profile": _js(p.profile_name), "profile_file": _js(p.profile_file),
            "profile_description": _js(p.description), "sweep_command": _js(self.command),
            "status": "running", "exit_status": None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "finished": None,
            "launcher": launcher, "launcher_version": _js(lv), "launcher_args": _js(o.launcher_args),
            "np": int(o.np), "hosts": list(self.where.names),
            "slurm_job_id": _js(os.environ.get("SLURM_JOB_ID", "")), "link_rate_gbps": None,
            "capabilities": {"gpu": self.host.gpu, "rdma": self.host.rdma},
            "nodes": [], "node_info_error": None, "doctor": None, "steps": [], "skipped": self.skipped_json()}

        nodes, error = self.nodes()
        self.meta["nodes"], self.meta["node_info_error"] = nodes, _js(error)
        self.meta["link_rate_gbps"] = _jn(o.link_rate) if o.link_rate else (link_rate_of(nodes[0]) if nodes else None)
        self.write_meta()

        if p.doctor and not self.interrupted:
            self.doctor()

        gpu_name = ""
        if self.host.gpu:
            gpu_name = first_line(self.probed(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                              timeout=60)[1])
        run_start = time.monotonic()
        i, failed = self.steps(gpu_name, run_start)
        return self.finish(i, failed, run_start)

    def finish(self, i: int, failed: bool, run_start: float) -> int:
        p, o, out = self.p, self.o, self.out
        self.meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if self.interrupted:
            self.meta["status"] = "interrupted"
            self.meta["interrupted_by"] = self.stop_signal
            for s in p.steps[max(i, 1) - 1:]:
                self.skip(s.name, s.mem, "not run: the sweep was interrupted by " + self.stop_signal)
            say("interrupted by %s: %s keeps every row measured so far" % (self.stop_signal, self.csv))
        else:
            self.meta["status"] = "complete"
        exit_status = EXIT_FAIL if failed else 0
        if not p.steps:
            say("nothing ran: every line of profile %s was skipped here (reasons in %s/summary.md)"
                % (p.profile_name, out))
            exit_status = EXIT_FAIL
        if self.interrupted:
            exit_status = EXIT_INTERRUPTED
        self.meta["exit_status"] = exit_status
        self.write_meta()

        # Each stage says itself what it could not write; an output lost is a failed sweep.
        sys.stdout.flush()
        lost = False
        if shutil.which("gnuplot"):
            lost = self.stage("plot", [str(SCRIPTS / "gdrb-plot"), out])[0] != 0
        else:
            text = "gnuplot not found: no plots (install gnuplot-nox; then scripts/gdrb-plot %s)" % out
            say(text)
            self.stage_logs.append((self.log_path("plot.log"), ("# %s\n" % text).encode()))
        if p.has_rules:
            cmd = [str(SCRIPTS / "gdrb-accept")] + (["--link-rate", o.link_rate] if o.link_rate else [])
            vrc, verdict = self.stage("accept", cmd + [out, p.profile_file], keep_stdout=True)
            show(verdict)
            # 1: a rule fails (or the verdict could not be written: it said so); 3: INVALID values.
            if vrc in (1, 3):
                exit_status = EXIT_INTERRUPTED if self.interrupted else EXIT_FAIL
            if vrc == 2 or vrc > 3 or vrc < 0:
                say("no verdict (gdrb-accept exit %d)" % (128 - vrc if vrc < 0 else vrc))
            if verdict:
                try:
                    write_all([(os.path.join(out, "verdict.txt"), verdict)])
                except Stop:
                    lost = True
            self.write_meta()
        if self.stage("report", [str(SCRIPTS / "gdrb-report"), out])[0] != 0:
            lost = True
        # The stages' logs last: on a full disk an output gets the space before a log does.
        for path, text in self.stage_logs:
            log_append(path, text)
        if (lost or self.meta_failed) and exit_status == 0:
            exit_status = EXIT_FAIL
        # Name only what is there: a stage that could not write said so above.
        written = [os.path.join(out, f) for f in ("summary.md", "report.html")
                   if os.path.isfile(os.path.join(out, f)) and os.path.getsize(os.path.join(out, f)) > 0]
        say("done in %s: %s" % (duration(time.monotonic() - run_start),
                                ", ".join(written) or self.csv + " (no summary.md or report.html: see above)"))
        return exit_status


def show(data: bytes) -> None:
    """DATA on stdout, a copy of what the results directory holds: a reader that went away
    (gdrb sweep | head) costs the copy, never the sweep. stdout then goes to /dev/null, for the
    stages after the steps too."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except OSError:
            pass


def stop_child(child: subprocess.Popen) -> None:
    """End a running benchmark and everything it started (its own process group)."""
    def kill(sig: int) -> None:
        try:
            os.killpg(child.pid, sig)
        except OSError:
            try:
                child.send_signal(sig)
            except OSError:
                pass
    kill(signal.SIGTERM)
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        kill(signal.SIGKILL)
        child.wait()


def main(argv: List[str]) -> int:
    # Until the results directory exists, Ctrl-C just ends the tool (no traceback).
    if signal.getsignal(signal.SIGINT) == signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    o = parse_args(argv)
    if o.help:
        common.print_help(__doc__)
        return 0
    profile_file = common.resolve_profile(o.profile)
    prof = profile_mod.load(profile_file)
    this_host = socket.gethostname()
    where = placement(o, dict(os.environ), this_host)
    host = probe(os.environ.get("GDRB_SYSFS", "/sys"))
    p = plan(o, prof, profile_file, host, where.launcher)
    if o.dry_run:
        dry_run(p, where, o)
        return 0
    command = shell_join([sys.argv[0], "sweep"] + list(argv))
    return Sweep(o, p, host, where, command).run()
