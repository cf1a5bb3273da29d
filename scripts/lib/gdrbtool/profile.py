"""Profiles: what `gdrb sweep` runs and what `gdrb accept` requires.

One statement per line; '#' starts a comment; "double quotes" keep spaces in a value.

  description TEXT           shown in the summary
  include NAME|FILE          read another profile here (NAME: the shipped NAME.profile; FILE:
                             relative to this file; a regular file). Defaults set inside stay
                             inside. At most 8 deep and 64 includes in all.
  repeat-failed N            how many times gdrb sweep measures again a step whose rows fail
                             a rule, before the rule fails (0..10, default 2; --repeat-failed
                             overrides it; docs/sweeps.md, "Repeats")
  sizes SPEC | time SEC | iters N | validate on|off
                             defaults for the run lines below: -m SPEC (else 8:1G),
                             -t SEC, -n N, -c (else the binaries' own defaults)
  run BINARY [key=value ...] run BINARY (a gdrbench binary's name, gdrb_NAME: never a path)
                             once per memory kind; keys:
      mem=host,pinned,device   memory kinds (default: the binary's own, its --describe's
                               default_mem); the kinds each binary takes are its own
                               (--describe); one that needs a GPU only where a GPU is;
                               none: the binary takes no --mem (give paths=MEM:PATH,...)
      needs=gpu,rdma           skip the line where this host has no GPU / RDMA device
      launch=mpi|local         through the launcher (default) or as one local process
      sizes= time= iters= validate= np=   this line's own values
      bench=NAME layer=NAME    the CSV benchmark and layer (default: the binary without
                               "gdrb_", and the layer its --describe gives)
      paths=LIST               the rows a complete run writes at each size, as PATH or
                               MEM:PATH (default: the paths its --describe gives for the
                               kind and the line's args)
      args="..."               more arguments for the binary, split at spaces; an option's
                               value after '=' keeps it one word: args=--nccl-gdr=off
  NCCL binaries (gdrb_nccl_*) take mem=device (the default for them) or pinned, and measure
  one path a launch (NCCL reads its environment once): GPUDirect on and off are two run lines,
  args=--nccl-gdr=auto (or on) and args=--nccl-gdr=off, whose rows pair by size as the
  direct and staged rows of one MPI or verbs run do.
  doctor BINARY [args="..."]  run BINARY (gdrb_NAME, as for run) --json, keep its output as
                             doctor.json
  rule NAME BENCH COLUMN OP THRESHOLD [key=value ...]   see `gdrb accept --help`
      source="..."             where the threshold comes from: a published page or file
                               (its https:// address, and for a repository the path and
                               commit read), or "estimate: WHY" for gdrbench's own estimate
  sources required           every rule line of this file must carry source= (the node
                             profiles of docs/skus.md say it: a floor is published or an
                             estimate, never unexplained)
  rule NAME BENCH gdr_connections all [key=value ...]
                             NCCL rows: every network connection used GPUDirect RDMA
                             (G/N with G = N > 0) where NCCL would use it; path=direct
                             unless path= says otherwise
  rule NAME BENCH busbw_GBps >= predicted of staged [tolerance=P%] [reference=P%] [key=value ...]
  rule NAME BENCH LAT_us <= predicted of staged [tolerance=P%] [reference=P%] [key=value ...]
                             direct/staged against the node's topology (docs/nccl.md);
                             tolerance default 10%; reference printed, never judged
  spread=P% (any numeric rule) the attempts of a check (a repeat's rows, docs/sweeps.md)
                             may differ by at most P% ((max - min) / min); more is INVALID,
                             an unstable figure, never a PASS or a FAIL
  pairs METRIC below|above=FACTOR [key=value ...]   a rule on the all-pairs matrices, relative
                             to the fabric (docs/pairs.md), e.g.
                             pairs bw below=80%median size=8M
                             pairs lat above=2.1xbest size=8
  counters errors [name=NAME]  fails when a node's NIC error counters rose during the run
                             beyond what its provider allows (docs/counters.md: any rise on
                             hardware such as mlx5, 10x the other nodes' rate per packet on rxe
                             and siw), naming node, device, port and counter

Numbers are plain decimals (no exponent, inf or nan) of at most 30 digits each side of the
point; sizes at most a size_t. Errors: one line "FILE:LINE: ...", exit 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from . import gdr_model
from . import facts as facts_mod
from .common import PROFILES, decimal, integer, read_regular, schema, size_fmt, size_parse, sizes_expand, usage_error

MAX_DEPTH = 8
MAX_INCLUDES = 64           # in all: a fan-out of includes is bounded, not only their depth
MAX_BYTES = 1 << 20         # a profile is a page of text, not a device's stream
# What run and doctor lines may name: a gdrbench binary, found in the build tree or on PATH.
BINARY_NAME = re.compile(r"gdrb_[a-z0-9_]+")
# Memory kinds and layers are the binaries' (--describe): a profile names them by their form, and
# gdrb sweep checks each against the binary it runs (docs/describe.md).
WORDS = re.compile(r"^[a-z][a-z0-9_-]{0,63}(,[a-z][a-z0-9_-]{0,63})*$")
PLACEMENTS = "out-of-place,in-place"    # a collective's placement column (--in-place)
GDR_COLUMN = "gdr_connections"   # the one column the "all" rule form reads
REPEAT_MAX = 10             # repeat-failed (and gdrb sweep --repeat-failed): 0..REPEAT_MAX
REPEAT_DEFAULT = 2


@dataclass
class Run:
    where: str
    binary: str
    bench: str
    layer: str
    launch: str
    mems: str          # comma list, or "none"
    needs: str         # comma list, or ""
    sizes: str
    time: str          # "" = the binary's default
    iters: str
    np: str
    paths: str
    validate: str      # "", "on" or "off"
    args: str

    all_pairs: bool = False     # the binary says so (--describe), where load() found it


@dataclass
class Doctor:
    where: str
    binary: str
    args: str


@dataclass
class Rule:
    where: str
    name: str
    bench: str
    column: str
    op: str            # >= <= > < = != in
    kind: str          # abs, link, staged, predicted, text, pairs, gdr (gdr_connections all) or counters
    value: object      # float for abs/link/staged (the column's unit, or a percentage), str for text
                       # (predicted: 0, the prediction is the node's)
    text: str          # the threshold as written, for people
    filters: Dict[str, str] = field(default_factory=dict)   # sizes as "MIN:MAX" (MAX may be inf) or a comma list
    # kind "pairs": the reference pair (median or best), and the share of a node's pairs that
    # must be low to name the node rather than its links.
    ref: str = ""
    node_frac: float = 0.75
    # kind "predicted": the share (%) the ratio may fall short of the topology's prediction, and
    # a reference ratio (% of staged) printed beside the measured one, never judged.
    tolerance: float = 0.0
    reference: Optional[float] = None
    # Where the threshold comes from (source=): an https:// address or "estimate: WHY"; "" none.
    source: str = ""
    # The largest spread (%, (max - min) / min) a check's attempts may have; None: not judged.
    spread: Optional[float] = None

    def filter_text(self) -> str:
        return " ".join("%s=%s" % (k, self.filters[k]) for k in sorted(self.filters))


@dataclass
class Profile:
    file: str
    descriptions: List[str] = field(default_factory=list)
    runs: List[Run] = field(default_factory=list)
    doctors: List[Doctor] = field(default_factory=list)
    rules: List[Rule] = field(default_factory=list)
    repeat_failed: Optional[int] = None     # the profile's repeat-failed; None: not set

    @property
    def description(self) -> str:
        return self.descriptions[0] if self.descriptions else ""


def tokens(line: str) -> Optional[List[str]]:
    """Whitespace-separated words, "quotes" kept together, '#' to the end a comment; None for
    an unterminated quote."""
    out: List[str] = []
    w, inq, have = "", False, False
    for c in line:
        if inq:
            if c == '"':
                inq = False
            else:
                w += c
        elif c == '"':
            inq, have = True, True
        elif c == "#":
            break
        elif c in " \t":
            if have:
                out.append(w)
                w, have = "", False
        else:
            w += c
            have = True
    if inq:
        return None
    if have:
        out.append(w)
    return out


def _is_num(s: str) -> bool:
    """A plain decimal whose value is finite (common.decimal)."""
    return decimal(s) is not None


def _shown(s: str) -> str:
    """S for a message: its first 40 characters (a value of thousands of digits is one line)."""
    return s if len(s) <= 40 else s[:40] + "..."


def nccl_gdr(args: str) -> Optional[str]:
    """The value of the last --nccl-gdr in ARGS (as --nccl-gdr=V or --nccl-gdr V, as the
    binaries' getopt_long reads it); None when ARGS has none."""
    words, value = args.split(), None
    for i, w in enumerate(words):
        if w.startswith("--nccl-gdr="):
            value = w[len("--nccl-gdr="):]
        elif w == "--nccl-gdr":
            value = words[i + 1] if i + 1 < len(words) else ""
    return value


def repeat_count(text: str) -> Optional[int]:
    """TEXT as a repeat count, 0..REPEAT_MAX (ASCII digits); None otherwise."""
    return integer(text, REPEAT_MAX) if len(text) <= 2 else None


def read_lines(path: str) -> List[str]:
    """The lines of the profile PATH: a regular file of at most MAX_BYTES, never a FIFO waited
    on or a device read (common.read_regular); raises OSError."""
    return read_regular(path, MAX_BYTES).split("\n")


def _unit_scale(column: str, unit: str) -> float:
    if column.endswith("_us"):
        return {"us": 1, "ms": 1000, "ns": 0.001}.get(unit, 0)
    if column.endswith("_GBps"):
        return {"GB/s": 1, "Gb/s": 0.125, "MB/s": 0.001}.get(unit, 0)
    return 0


def _column_unit(column: str) -> str:
    return "us" if column.endswith("_us") else "GB/s" if column.endswith("_GBps") else ""


class _Parser:
    def __init__(self) -> None:
        self.profile: Optional[Profile] = None
        self.sizes, self.time, self.iters, self.validate = "8:1G", "", "", ""
        self.rule_where: Dict[str, str] = {}
        self.benches: Dict[str, bool] = {}
        self.includes = 0
        self.sources_required: Dict[str, bool] = {}    # files that said "sources required"

    @staticmethod
    def err(where: str, msg: str):
        # A value of thousands of digits is quoted by its first 40.
        return usage_error("%s: %s" % (where, re.sub(r"([0-9]{40})[0-9]+", r"\1...", msg)))

    def check_list(self, where: str, key: str, value: str, allowed: str) -> None:
        items = value.split(",") if value else []
        if not items:
            raise self.err(where, "%s= needs a value; accepted: %s" % (key, allowed))
        for item in items:
            if item not in allowed.split(","):
                raise self.err(where, "%s=: unknown value '%s'; accepted: %s" % (key, item, allowed))

    def check_words(self, where: str, key: str, value: str) -> None:
        """A comma list of names the binaries own (memory kinds, layers): checked by form here, against
        the binary by gdrb sweep."""
        if not WORDS.match(value):
            raise self.err(where, "%s=: expected a comma list of lower-case names, e.g. host,device (each binary's "
                                  "--describe says which it takes), got '%s'" % (key, _shown(value)))

    def check_sizes(self, where: str, key: str, spec: str) -> None:
        v = sizes_expand(spec)
        if not v:
            raise self.err(where, "%s: '%s' is not a size list; expected MIN:MAX (doubling) or A,B,C, "
                                  "e.g. 8:1G or 8,64K,1M" % (key, _shown(spec)))

    def resolve(self, name: str, frm: str) -> str:
        if "/" not in name:
            return str(PROFILES / (name + ".profile"))
        if name.startswith("/"):
            return name
        d = frm.rsplit("/", 1)[0] if "/" in frm else "."
        return d + "/" + name

    def binary(self, where: str, kw: str, name: str) -> str:
        """NAME when it names a gdrbench binary (run and doctor lines: never a path, never
        another program)."""
        if not BINARY_NAME.fullmatch(name):
            raise self.err(where, "%s: '%s' is not a gdrbench binary name; expected gdrb_NAME (no paths; binaries "
                                  "are found in the build tree or on PATH)" % (kw, name))
        return name

    def parse_file(self, file: str, depth: int, include_where: str = "") -> None:
        if depth > MAX_DEPTH:
            raise self.err(include_where or file, "includes nest deeper than 8 (an include loop?)")
        saved = (self.sizes, self.time, self.iters, self.validate)
        try:
            lines = read_lines(file)
        except OSError as e:
            why = e.strerror or "cannot read"
            raise self.err(include_where or file, "include: cannot read '%s': %s" % (file, why) if include_where
                           else "cannot read this profile: %s" % why)
        if lines and lines[-1] == "":
            lines.pop()
        for nr, line in enumerate(lines, start=1):
            where = "%s:%d" % (file, nr)
            if line.endswith("\r"):
                line = line[:-1]
            t = tokens(line)
            if t is None:
                raise self.err(where, 'unterminated "quote"')
            if not t:
                continue
            kw = t[0]
            if kw == "description":
                text = re.sub(r"^[ \t]*description[ \t]*", "", line)
                self.profile.descriptions.append(text)
            elif kw == "include":
                if len(t) != 2:
                    raise self.err(where, "include takes one profile name or file, e.g. 'include quick'")
                self.includes += 1
                if self.includes > MAX_INCLUDES:
                    raise self.err(where, "more than %d includes in all (an include fan-out?)" % MAX_INCLUDES)
                self.parse_file(self.resolve(t[1], file), depth + 1, where)
            elif kw in ("sizes", "time", "iters", "validate"):
                if len(t) != 2:
                    raise self.err(where, kw + " takes one value")
                v = t[1]
                if kw == "sizes":
                    self.check_sizes(where, "sizes", v)
                    self.sizes = v
                elif kw == "time":
                    if not _is_num(v) or float(v) <= 0:
                        raise self.err(where, "time: expected seconds per size, e.g. 0.3, got '%s'" % _shown(v))
                    self.time = v
                elif kw == "iters":
                    if not re.fullmatch(r"[1-9][0-9]*", v) or integer(v) is None:
                        raise self.err(where, "iters: expected a positive integer, got '%s'" % v)
                    self.iters = v
                else:
                    if v not in ("on", "off"):
                        raise self.err(where, "validate: expected on or off, got '%s'" % v)
                    self.validate = v
            elif kw == "repeat-failed":
                n = repeat_count(t[1]) if len(t) == 2 else None
                if n is None:
                    raise self.err(where, "repeat-failed: expected a count from 0 to %d, got '%s'"
                                   % (REPEAT_MAX, _shown(" ".join(t[1:]))))
                self.profile.repeat_failed = n
            elif kw == "run":
                self.parse_run(where, t)
            elif kw == "doctor":
                self.parse_doctor(where, t)
            elif kw == "rule":
                self.parse_rule(where, t)
            elif kw == "pairs":
                self.parse_pairs(where, t)
            elif kw == "counters":
                self.parse_counters(where, t)
            elif kw == "sources":
                if t[1:] != ["required"]:
                    raise self.err(where, "expected 'sources required' (every rule line of this file carries source=)")
                self.sources_required[file] = True
            else:
                raise self.err(where, "unknown statement '%s'; expected run, doctor, rule, pairs, counters, include, "
                                      "sizes, time, iters, validate, repeat-failed, sources or description" % kw)
        if self.sources_required.get(file):
            self.check_sources(file)
        self.sizes, self.time, self.iters, self.validate = saved

    def check_sources(self, file: str) -> None:
        """Every rule line of FILE, which says "sources required", names its source."""
        for rule in self.profile.rules:
            if rule.where.rsplit(":", 1)[0] == file and rule.kind in ("abs", "link", "staged", "predicted",
                                                                     "text", "gdr") and not rule.source:
                raise self.err(rule.where, "rule %s has no source=; this profile says 'sources required': give "
                                           "source=\"https://... (the page, or the repository file and commit)\" "
                                           "or source=\"estimate: WHY\"" % rule.name)

    def parse_run(self, where: str, t: List[str]) -> None:
        if len(t) < 2 or "=" in t[1]:
            raise self.err(where, "run needs a binary name first, e.g. 'run gdrb_mpi_bw mem=host,device'")
        binary = self.binary(where, "run", t[1])
        kv = {"mem": "", "needs": "", "launch": "mpi", "sizes": self.sizes, "time": self.time,
              "iters": self.iters, "validate": self.validate, "np": "", "paths": "", "bench": "",
              "layer": "", "args": ""}
        for word in t[2:]:
            m = re.match(r"^([a-z]+)=(.*)$", word, re.S)
            if not m:
                raise self.err(where, "run: expected key=value, got '%s'" % word)
            if m.group(1) not in kv:
                raise self.err(where, "run: unknown key '%s'; accepted: mem, needs, launch, sizes, time, iters, "
                                      "validate, np, paths, bench, layer, args" % m.group(1))
            kv[m.group(1)] = m.group(2)
        nccl = (kv["layer"] or ("nccl" if binary.startswith("gdrb_nccl_") else "")) == "nccl"
        # "": the binary's default kind (NCCL's: device memory), its --describe's.
        if kv["mem"] and kv["mem"] != "none":
            self.check_words(where, "mem", kv["mem"])
        if kv["needs"]:
            self.check_list(where, "needs", kv["needs"], "gpu,rdma")
        self.check_list(where, "launch", kv["launch"], "mpi,local")
        self.check_sizes(where, "sizes", kv["sizes"])
        if kv["time"] and (not _is_num(kv["time"]) or float(kv["time"]) <= 0):
            raise self.err(where, "time=: expected seconds per size, got '%s'" % _shown(kv["time"]))
        if kv["iters"] and (not re.fullmatch(r"[1-9][0-9]*", kv["iters"]) or integer(kv["iters"]) is None):
            raise self.err(where, "iters=: expected a positive integer, got '%s'" % kv["iters"])
        if kv["validate"] not in ("", "on", "off"):
            raise self.err(where, "validate=: expected on or off, got '%s'" % kv["validate"])
        if kv["np"] and (not re.fullmatch(r"[1-9][0-9]*", kv["np"]) or integer(kv["np"], 1 << 20) is None):
            raise self.err(where, "np=: expected a number of ranks, got '%s'" % kv["np"])
        if kv["paths"] and not re.match(r"^([a-z]+:)?[a-z0-9_][a-z0-9_-]*(,([a-z]+:)?[a-z0-9_][a-z0-9_-]*)*$", kv["paths"]):
            raise self.err(where, "paths=: expected a comma list of PATH or MEM:PATH, e.g. direct,staged or "
                                  "host:h2d,device:d2d")
        if kv["mem"] == "none" and not re.match(r"^[a-z]+:", kv["paths"]):
            raise self.err(where, "mem=none (the binary takes no --mem) needs paths=MEM:PATH,..., e.g. "
                                  "paths=host:h2d,device:d2d")
        bench = kv["bench"] or re.sub(r"^gdrb_", "", binary, count=1)
        if not re.match(r"^[a-z0-9_]+$", bench):
            raise self.err(where, "bench=: expected lower-case letters, digits and '_', got '%s'" % bench)
        layer = kv["layer"]     # "": the binary's, its --describe's
        if layer:
            self.check_words(where, "layer", layer)
        paths = kv["paths"]
        gdr = nccl_gdr(kv["args"])
        if gdr is not None and not nccl:
            raise self.err(where, "run: --nccl-gdr applies to the NCCL binaries (gdrb_nccl_*, layer=nccl), not %s"
                           % binary)
        if nccl:
            self.check_nccl(where, kv, gdr)     # its paths: the binary's, with the line's --nccl-gdr
        self.benches[bench] = True
        self.profile.runs.append(Run(where, binary, bench, layer, kv["launch"], kv["mem"], kv["needs"],
                                     kv["sizes"], kv["time"], kv["iters"], kv["np"], paths,
                                     kv["validate"], kv["args"]))

    def check_nccl(self, where: str, kv: Dict[str, str], gdr: Optional[str]) -> None:
        """An NCCL run line's memory kinds, launch, ranks and --nccl-gdr (NCCL reads its environment
        once per process: one path a launch, which the binary's --describe names)."""
        if kv["mem"] == "none" or "host" in kv["mem"].split(","):
            raise self.err(where, "run: NCCL refuses pageable host memory; mem=device (the default) or pinned")
        if kv["launch"] == "local":
            raise self.err(where, "run: NCCL ranks start through MPI (launch=mpi); launch=local does not apply")
        if kv["np"] == "1":
            raise self.err(where, "run: NCCL runs need at least 2 ranks on separate GPUs; np=1 does not apply")
        if gdr == "both":
            raise self.err(where, "run: --nccl-gdr both: NCCL reads its environment once per process; give two "
                                  "run lines, args=--nccl-gdr=auto and args=--nccl-gdr=off")
        if gdr not in (None, "auto", "on", "off"):
            raise self.err(where, "run: --nccl-gdr: expected auto, on or off, got '%s'" % _shown(gdr))

    def parse_doctor(self, where: str, t: List[str]) -> None:
        if len(t) < 2 or "=" in t[1]:
            raise self.err(where, "doctor needs a binary name, e.g. 'doctor gdrb_doctor'")
        args = ""
        if len(t) == 3 and t[2].startswith("args="):
            args = t[2][5:]
        elif len(t) > 2:
            raise self.err(where, 'doctor: only args="..." may follow the binary')
        self.profile.doctors.append(Doctor(where, self.binary(where, "doctor", t[1]), args))

    def parse_rule(self, where: str, t: List[str]) -> None:
        """A rule line: its name, benchmark, column and operator, threshold, key=value filters."""
        name, bench, column, op = self.rule_head(where, t)
        i = 5
        thr: List[str] = []
        while i < len(t) and "=" not in t[i]:
            thr.append(t[i])
            i += 1
        filters, extra, source = self.rule_keys(where, name, t[i:])
        kind, value, text = self.rule_threshold(where, name, column, op, thr, filters)
        if "spread" in extra and kind not in ("abs", "link", "staged", "predicted"):
            raise self.err(where, "rule %s: spread= bounds a numeric figure's attempts; %s %s is not one"
                           % (name, column, op))
        if set(extra) - {"spread"} and kind != "predicted":
            raise self.err(where, "rule %s: %s= applies to 'predicted of staged' only"
                           % (name, sorted(set(extra) - {"spread"})[0]))
        self.profile.rules.append(Rule(where, name, bench, column, op, kind, value, text, filters,
                                       tolerance=extra.get("tolerance", gdr_model.TOLERANCE),
                                       reference=extra.get("reference"), spread=extra.get("spread"),
                                       source=source))

    def rule_head(self, where: str, t: List[str]) -> Tuple[str, str, str, str]:
        """NAME BENCH COLUMN OP of a rule line, each checked; the name taken."""
        s = schema()
        if len(t) < 6 and not (len(t) == 5 and t[4] == "all"):
            raise self.err(where, "rule needs NAME BENCH COLUMN OP THRESHOLD, e.g. 'rule bw-large mpi_bw "
                                  "bw_GBps >= 20 GB/s sizes=1M:'")
        name, bench, column, op = t[1], t[2], t[3], t[4]
        if not re.match(r"^[A-Za-z0-9._-]+$", name):
            raise self.err(where, "rule name '%s': expected letters, digits, '.', '_' or '-'" % name)
        if name in self.rule_where:
            raise self.err(where, "rule name '%s' already used at %s" % (name, self.rule_where[name]))
        self.rule_where[name] = where
        if not re.match(r"^[a-z0-9_]+$", bench):
            raise self.err(where, "rule %s: '%s' is not a benchmark name (e.g. mpi_bw, write_lat)" % (name, bench))
        if column not in s.index:
            raise self.err(where, "rule %s: unknown column '%s'; the schema's columns: %s" % (name, column, s.header))
        return name, bench, column, op

    def rule_keys(self, where: str, name: str, words: List[str]) -> Tuple[Dict[str, str], Dict[str, float], str]:
        """The key=value words after the threshold: the filters, the percentages, source=."""
        filters = {"pair": "all"}
        extra: Dict[str, float] = {}
        source = ""
        for word in words:
            m = re.match(r"^([a-z]+)=(.+)$", word, re.S)
            if not m:
                raise self.err(where, "rule %s: expected key=value after the threshold, got '%s'" % (name, word))
            k, v = m.group(1), m.group(2)
            if k in ("tolerance", "reference", "spread"):
                extra[k] = self.percent(where, name, k, v)
                continue
            if k == "source":
                source = self.source(where, name, v)
                continue
            if k not in ("mem", "path", "reg", "pair", "layer", "sizes", "ranks", "placement"):
                raise self.err(where, "rule %s: unknown key '%s'; accepted: mem, path, reg, pair, layer, sizes, "
                                      "ranks, placement, spread, source (and tolerance, reference with 'predicted of "
                                      "staged')" % (name, k))
            if k == "mem":
                self.check_words(where, "mem", v)
            if k == "placement":
                self.check_list(where, "placement", v, PLACEMENTS)
            if k == "layer":
                self.check_words(where, "layer", v)
            if k == "sizes":
                v = self.rule_sizes(where, name, v)
            filters[k] = v
        return filters, extra, source

    def rule_sizes(self, where: str, name: str, v: str) -> str:
        """V of sizes=: MIN:MAX (either end may be left out) or a list, in bytes."""
        bad_sizes = ("rule %s: sizes=%%s: expected MIN:MAX, MIN: (and up), :MAX or A,B,C with sizes like 8, "
                     "4K, 1MiB" % name)
        m = re.match(r"^([^:,]*):([^:,]*)$", v)
        if m:
            lo = 1 if m.group(1) == "" else size_parse(m.group(1))
            hi = "inf" if m.group(2) == "" else size_parse(m.group(2))
            if lo < 0 or (hi != "inf" and (hi < 0 or lo > hi)):
                raise self.err(where, bad_sizes % v)
            v = "%s:%s" % (lo, hi)
        else:
            sizes = sizes_expand(v)
            if not sizes:
                raise self.err(where, bad_sizes % v)
            v = ",".join(str(x) for x in sizes)
        return v

    def rule_threshold(self, where: str, name: str, column: str, op: str, thr: List[str],
                       filters: Dict[str, str]) -> Tuple[str, object, str]:
        """What OP THRESHOLD judges: the rule's kind, value and the threshold as written."""
        s = schema()
        if op == "all":
            if column != GDR_COLUMN:
                raise self.err(where, "rule %s: 'all' judges %s (G/N: the NCCL network connections that used "
                                      "GPUDirect RDMA of all), not %s" % (name, GDR_COLUMN, column))
            if thr:
                raise self.err(where, "rule %s: expected '%s all' and no threshold, e.g. 'rule gdr-used "
                                      "nccl_allreduce %s all path=direct', got '%s'"
                               % (name, GDR_COLUMN, GDR_COLUMN, " ".join([op] + thr)))
            # The direct path is where GPUDirect is allowed: the staged rows are meant to have none.
            filters.setdefault("path", "direct")
            kind, value, text = "gdr", "all", ""
        elif op in (">=", "<=", ">", "<"):
            if column not in s.numeric:
                raise self.err(where, "rule %s: %s needs a numeric column; '%s' is text (use =, != or in)"
                               % (name, op, column))
            if not thr or len(thr) > 3:
                raise self.err(where, "rule %s: threshold: expected NUMBER [UNIT], PERCENT%% of link, "
                                      "PERCENT%% of staged or predicted of staged" % name)
            if thr[0] == "predicted":
                return self.predicted(where, name, column, op, thr, filters), 0.0, "predicted of staged"
            return self.rule_number(where, name, column, thr, filters)
        elif op in ("=", "!=", "in"):
            if column in s.numeric:
                raise self.err(where, "rule %s: %s compares text; '%s' is numeric (use >=, <=, > or <)"
                               % (name, op, column))
            if len(thr) != 1:
                raise self.err(where, "rule %s: %s takes one value%s" % (
                    name, op, " list, e.g. dmabuf,peermem" if op == "in" else ""))
            kind, value, text = "text", thr[0], thr[0]
        else:
            raise self.err(where, "rule %s: unknown operator '%s'; accepted: >= <= > < = != in, and all "
                                  "(gdr_connections)" % (name, op))
        return kind, value, text

    def rule_number(self, where: str, name: str, column: str, thr: List[str],
                    filters: Dict[str, str]) -> Tuple[str, object, str]:
        """A numeric threshold: NUMBER [UNIT], PERCENT% of link or PERCENT% of staged."""
        value: object
        if thr[0].endswith("%") and _is_num(thr[0][:-1]):
            target = thr[-1]
            if (len(thr) == 2 or (len(thr) == 3 and thr[1] == "of")) and target in ("link", "staged"):
                kind, value = target, float(thr[0][:-1])
            else:
                raise self.err(where, "rule %s: a percentage must say of what: '%s of link' or '%s of staged'"
                               % (name, thr[0], thr[0]))
            if kind == "link" and not column.endswith("_GBps"):
                raise self.err(where, "rule %s: '%% of link' compares a bandwidth column (bw_GBps, algbw_GBps, "
                                      "busbw_GBps) with the port rate" % name)
            if kind == "staged" and "path" in filters:
                raise self.err(where, "rule %s: '%% of staged' compares the direct path with the staged one; "
                                      "drop path=" % name)
            text = thr[0] + (" of link rate" if kind == "link" else " of staged")
        elif _is_num(thr[0]):
            kind, scale = "abs", 1.0
            if len(thr) == 2:
                scale = _unit_scale(column, thr[1])
                if scale == 0:
                    unit = _column_unit(column)
                    raise self.err(where, "rule %s: unit '%s' does not fit %s%s" % (
                        name, thr[1], column, " (in %s)" % unit if unit else " (a plain number)"))
            elif len(thr) > 2:
                raise self.err(where, "rule %s: threshold: expected NUMBER [UNIT], got '%s'" % (name, " ".join(thr)))
            value = float(thr[0]) * scale
            text = thr[0] + (" " + thr[1] if len(thr) == 2 else "")
        else:
            raise self.err(where, "rule %s: threshold '%s': expected a number (digits, optionally a point and "
                                  "digits, at most 30 each side), or PERCENT%% of link / of staged"
                           % (name, _shown(thr[0])))
        return kind, value, text

    def source(self, where: str, name: str, v: str) -> str:
        """V of source=: an https:// address with what was read there, or "estimate: WHY"."""
        v = " ".join(v.split())
        est = re.match(r"^estimate:\s*(.*)$", v)
        if (est and len(est.group(1)) >= 10) or (not est and re.search(r"https://[^ ]+", v)):
            if len(v) <= 1000 and v.isprintable():
                return v
        raise self.err(where, "rule %s: source=: expected \"https://... (what was read there)\" or \"estimate: WHY\" "
                              "(at least 10 characters of why), printable, at most 1000 characters, got '%s'"
                       % (name, _shown(v)))

    def percent(self, where: str, name: str, key: str, v: str) -> float:
        """V of KEY= as a percentage: tolerance 0..100%, reference above 0%."""
        n = decimal(v[:-1]) if v.endswith("%") else None
        if n is None or (key == "tolerance" and n >= 100) or (key != "tolerance" and n <= 0):
            raise self.err(where, "rule %s: %s=: expected a percentage%s, e.g. %s, got '%s'" % (
                name, key, " below 100%" if key == "tolerance" else " above 0%",
                {"tolerance": "tolerance=10%", "reference": "reference=130%"}.get(key, "spread=15%"), _shown(v)))
        return n

    def predicted(self, where: str, name: str, column: str, op: str, thr: List[str], filters: Dict[str, str]) -> str:
        """'predicted of staged': the kind, once its form is checked (busbw: >=, latency: <=)."""
        if thr[1:] != ["of", "staged"]:
            raise self.err(where, "rule %s: expected 'predicted of staged', got '%s'" % (name, " ".join(thr)))
        if not (column == "busbw_GBps" and op == ">=") and not (column.endswith("_us") and op == "<="):
            raise self.err(where, "rule %s: 'predicted of staged' judges busbw_GBps >= (the topology's ratio) or "
                                  "a latency column <= (not above staged), not %s %s" % (name, column, op))
        if "path" in filters:
            raise self.err(where, "rule %s: 'predicted of staged' compares the direct path with the staged one; "
                                  "drop path=" % name)
        return "predicted"


    def parse_pairs(self, where: str, t: List[str]) -> None:
        """pairs METRIC below|above=FACTOR [name= bench= size= mem= path= node=]"""
        if len(t) < 2 or t[1] not in ("bw", "lat"):
            raise self.err(where, "pairs needs a metric first, bw or lat, e.g. 'pairs bw below=80%median size=8M'")
        metric = t[1]
        kv = {"name": "", "bench": "", "size": "", "mem": "", "path": "", "node": "75%",
              "below": "", "above": ""}
        for word in t[2:]:
            m = re.match(r"^([a-z]+)=(.+)$", word, re.S)
            if not m or m.group(1) not in kv:
                raise self.err(where, "pairs: expected key=value with a key of name, bench, size, mem, path, node, "
                                      "below (bw) or above (lat), got '%s'" % word)
            kv[m.group(1)] = m.group(2)
        key = "below" if metric == "bw" else "above"
        other = "above" if key == "below" else "below"
        if kv[other]:
            raise self.err(where, "pairs %s: a %s pair is bad when it is %s the fabric: use %s=, not %s="
                           % (metric, "bandwidth" if metric == "bw" else "latency",
                              "below" if key == "below" else "above", key, other))
        m = re.fullmatch(r"([0-9.]+)(%|x)(median|best)", kv[key])
        if not m or not _is_num(m.group(1)) or float(m.group(1)) <= 0:
            raise self.err(where, "pairs %s: %s= expects PERCENT%%median, PERCENT%%best or FACTORxmedian, "
                                  "FACTORxbest, e.g. %s, got '%s'" % (
                                      metric, key, "80%median" if key == "below" else "2.1xbest", kv[key]))
        factor = float(m.group(1)) / (100 if m.group(2) == "%" else 1)
        ref = m.group(3)
        if key == "below" and factor > 1:
            raise self.err(where, "pairs bw: below=%s flags pairs faster than the %s; expected at most 100%%"
                           % (kv[key], ref))
        if key == "above" and factor < 1:
            raise self.err(where, "pairs lat: above=%s flags pairs faster than the %s; expected at least 1x"
                           % (kv[key], ref))
        nm = re.fullmatch(r"([0-9]{1,3})%", kv["node"])
        if not nm or not 0 < int(nm.group(1)) <= 100:
            raise self.err(where, "pairs: node= expects the share of a node's pairs that must be low to name "
                                  "the node, 1%%..100%%, e.g. 75%%, got '%s'" % kv["node"])
        filters: Dict[str, str] = {}
        if kv["size"]:
            sizes = sizes_expand(kv["size"])
            if not sizes:
                raise self.err(where, "pairs: size=%s: expected a size or a list, e.g. 8M or 8,8M" % kv["size"])
            filters["sizes"] = ",".join(str(x) for x in sizes)
        if kv["mem"]:
            self.check_words(where, "mem", kv["mem"])
            filters["mem"] = kv["mem"]
        if kv["path"]:
            if not re.match(r"^[a-z0-9_]+(,[a-z0-9_]+)*$", kv["path"]):
                raise self.err(where, "pairs: path= expects a comma list of paths, e.g. direct,staged")
            filters["path"] = kv["path"]
        if kv["bench"] and not re.match(r"^[a-z0-9_]+$", kv["bench"]):
            raise self.err(where, "pairs: bench=%s: expected lower-case letters, digits and '_'" % kv["bench"])
        name = kv["name"] or "-".join(["pairs", metric] + [size_fmt(int(x)) for x in filters.get("sizes", "").split(",")
                                                          if x] + [kv["mem"], kv["path"]]).rstrip("-").replace(",", "+")
        name = re.sub(r"-+", "-", name)
        self.claim_name(where, "pairs", name)
        what = "%s%s %s" % (m.group(1), "%" if m.group(2) == "%" else "x", ref)
        self.profile.rules.append(Rule(where, name, kv["bench"], "bw_GBps" if metric == "bw" else "lat_us",
                                       "<" if metric == "bw" else ">", "pairs", factor,
                                       "%s %s" % (key, what.replace("%", "% of", 1) if "%" in what else what),
                                       filters, ref, int(nm.group(1)) / 100))

    def claim_name(self, where: str, what: str, name: str) -> None:
        """NAME for the rule of a WHAT line (pairs, counters), which may take name=: valid, unused."""
        if not re.match(r"^[A-Za-z0-9._+-]+$", name):
            raise self.err(where, "%s: name '%s': expected letters, digits, '.', '_' or '-'" % (what, name))
        if name in self.rule_where:
            raise self.err(where, "rule name '%s' already used at %s; give this one name="
                           % (name, self.rule_where[name]))
        self.rule_where[name] = where

    def parse_counters(self, where: str, t: List[str]) -> None:
        """counters errors [name=NAME]"""
        if len(t) < 2 or t[1] != "errors" or len(t) > 3 or (len(t) == 3 and not t[2].startswith("name=")):
            raise self.err(where, "counters: expected 'counters errors [name=NAME]'")
        name = t[2][len("name="):] if len(t) == 3 else "counters-errors"
        self.claim_name(where, "counters", name)
        self.profile.rules.append(Rule(where, name, "", "", "=", "counters", 0.0, "no error counter rose"))


def one_all_pairs(file: str, runs: List[Run]) -> List[str]:
    """The all-pairs benchmarks RUNS give (each run's all_pairs set): one at most a profile, as the
    matrices of two would share their file names (Stop(2) naming FILE otherwise)."""
    pairs = sorted({r.bench for r in runs if r.all_pairs})
    if len(pairs) > 1:
        binaries = sorted({r.binary for r in runs if r.all_pairs})
        raise _Parser.err(file, "runs %s: a profile runs one all-pairs benchmark (their matrices share file "
                                "names); put each in a profile of its own" % " and ".join(binaries))
    return pairs


def load(file: str, find: Optional[Callable[[str], str]] = None) -> Profile:
    """Read and check the profile FILE (and what it includes); raises Stop(2) with one line
    "FILE:LINE: ..." on the first error. Which run lines are all-pairs ones their binaries say
    (--describe), where FIND (default: the build tree, then PATH) finds them; gdrb sweep asks
    again of the binaries it runs."""
    from .sweep_launch import find_bin     # a profile is read without the sweep's options too
    find = find or (lambda name: find_bin(name, ()))
    p = _Parser()
    p.profile = Profile(file)
    p.parse_file(file, 0)
    for r in p.profile.runs:
        binary = find(r.binary)
        r.all_pairs = bool(binary) and facts_mod.describe(binary).all_pairs
    pairs = one_all_pairs(file, p.profile.runs)
    for rule in p.profile.rules:
        if rule.kind == "pairs" and not rule.bench:
            rule.bench = pairs[0] if pairs else "mpi_pairs"     # a pairs rule without bench=
    # A rule may only check what the profile runs: a misspelt benchmark is an error, not a silent pass.
    for rule in sorted(p.profile.rules, key=lambda r: r.name):
        if rule.kind != "counters" and rule.bench not in p.benches:   # counters: every run's
            benches = ", ".join(sorted(p.benches)) or "(no run lines)"
            raise _Parser.err(rule.where, "rule %s: benchmark '%s' is not run by this profile; its run lines give: %s"
                              % (rule.name, rule.bench, benches))
    return p.profile
