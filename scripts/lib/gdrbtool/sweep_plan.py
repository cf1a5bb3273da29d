"""The plan of a sweep: which steps run, in order, their commands and time estimates, and why
anything else is skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from . import facts as facts_mod, profile as profile_mod
from .common import BIN_ROOT, duration, shell_join, size_fmt, sizes_expand, term, usage_error
from .sweep_launch import Host, Placement, find_bin
from .sweep_options import LABEL, Options


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
    attempt: int = 1  # 2 and up: a repeat of step n at the sizes whose rows failed a rule
    # What the binary says of itself with this step's --mem and args (--describe); None: a step made up.
    facts: Optional[facts_mod.Facts] = None

    @property
    def kind(self) -> Optional[facts_mod.MemKind]:
        return self.facts.kind(self.mem) if self.facts else None

    def default_paths(self) -> List[str]:
        """The paths a complete run writes at each size: the profile's, else the binary's for the kind."""
        if self.paths:
            return self.paths.split(",")
        k = self.kind
        return [p.path for p in k.paths] if k and k.paths else ["direct"]

    @property
    def base(self) -> str:
        return "%02d-%s%s%s" % (self.n, self.bench, "-" + self.mem if self.mem else "",
                                ".attempt%d" % self.attempt if self.attempt > 1 else "")

    @property
    def title(self) -> str:
        # The arguments tell two runs of one binary apart (NCCL with GPUDirect on and off).
        args = " ".join(self.args.split())
        return self.name + (" mem=" + self.mem if self.mem else "") + (" " + term(args) if args else "") + (
            " (attempt %d)" % self.attempt if self.attempt > 1 else "")


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


def plan(o: Options, prof: profile_mod.Profile, profile_file: str, host: Host, launcher: str,
         root: str = str(BIN_ROOT), find: Callable[[str], str] = None) -> Plan:
    """Which steps run, in order, and why each line or memory kind that does not run is skipped."""
    find = find or (lambda name: find_bin(name, o.bin_dirs, root))
    profile_name = os.path.basename(profile_file)
    if profile_name.endswith(".profile"):
        profile_name = profile_name[:-len(".profile")]
    label = o.label or profile_name
    if not LABEL.match(label):
        label = "sweep"
    wanted = o.bench.split(",") if o.bench else []
    matched: List[str] = []
    steps: List[Step] = []
    skipped: List[Skip] = []
    version = ""
    kinds_taken: set = set()
    for r in prof.runs:
        if wanted:
            short = r.binary[len("gdrb_"):] if r.binary.startswith("gdrb_") else r.binary
            short = short[len("mpi_"):] if short.startswith("mpi_") else short
            hits = [b for b in wanted if b in (r.bench, r.binary, short)]
            matched += hits
            if not hits:
                continue
        binary = find(r.binary)
        bare = facts_mod.describe(binary) if binary else None
        kinds_taken.update(bare.kinds if bare else ())
        r.all_pairs = bool(bare and bare.all_pairs)
        mems = r.mems or (bare.default_mem if bare else "") or "none"
        for m in mems.split(","):
            if m != "none" and o.mem and not _in_list(m, o.mem):
                continue
            if m == "none":
                m = ""
            kind = bare.kind(m) if bare and m else None
            if bare and m and not kind:
                raise usage_error("%s: run %s mem=%s: %s takes --mem %s (its --describe)"
                                  % (r.where, r.binary, m, r.binary, ", ".join(bare.kinds) or "none"))
            if r.needs and _in_list("gpu", r.needs) and not host.gpu:
                skipped.append(Skip(r.binary, m, "needs a GPU: nvidia-smi -L lists none here"))
            elif r.needs and _in_list("rdma", r.needs) and not host.rdma:
                skipped.append(Skip(r.binary, m, "needs an RDMA device: %s/class/infiniband is empty here"
                                    % host.sysfs))
            elif kind and kind.needs_gpu and not host.gpu:
                skipped.append(Skip(r.binary, m, "%s memory needs a GPU: nvidia-smi -L lists none here" % m))
            elif not binary:
                skipped.append(Skip(r.binary, m, "not built here (not in %sthe build tree or on PATH)"
                                    % (" ".join(o.bin_dirs) + ", " if o.bin_dirs else "")))
            elif r.launch == "mpi" and launcher not in host.launchers:
                skipped.append(Skip(r.binary, m, "launcher %s not found on PATH" % launcher))
            else:
                # The paths are those of this kind with this line's args (--nccl-gdr, --staging).
                facts = facts_mod.describe(binary, (["--mem", m] if m else []) + r.args.split())
                steps.append(Step(len(steps) + 1, binary, r.binary, r.bench, r.layer or facts.layer, r.launch, m,
                                  o.sizes or r.sizes, o.time_per_size or r.time, r.iters, r.np, r.paths,
                                  "on" if o.validate else r.validate, r.args, facts=facts))
                version = version or facts.version
    profile_mod.one_all_pairs(profile_file, prof.runs)
    for m in o.mem.split(",") if o.mem and kinds_taken else []:
        if m not in kinds_taken:
            raise usage_error("--mem: no binary of profile %s takes '%s'; they take: %s (their --describe)"
                              % (profile_name, m, ", ".join(sorted(kinds_taken))))
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


def is_pairs(s: Step) -> bool:
    """An all-pairs benchmark (its --describe says so): its own CSV schema, rank table and matrices."""
    return bool(s.facts and s.facts.all_pairs)


def estimate(s: Step, ranks: int = 2) -> None:
    """The step's size range, and its time estimate (for the ETA): sizes x paths x (budget +
    warm-up) + launch; an all-pairs step spends the budget in each round (n - 1, or --rounds K)
    and for each metric (latency: two phases a round)."""
    sizes = sizes_expand(s.sizes) or [0]
    first, last = size_fmt(sizes[0]), size_fmt(sizes[-1])
    s.range = first if first == last else first + ".." + last
    npaths = len(s.default_paths())
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
    # A repeat's rows say which attempt they are in their note, for people (meta.json's steps, for gdrb accept).
    args = ["-m", s.sizes, "--csv", part, "--label", label + ("; attempt %d" % s.attempt if s.attempt > 1 else "")]
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
