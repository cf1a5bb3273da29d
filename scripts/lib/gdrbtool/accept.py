"""Check a results directory against the rules of a profile: PASS or FAIL per rule, with the
measured value, the threshold and the sizes concerned.

  gdrb accept [options] RESULTS_DIR PROFILE

RESULTS_DIR is what gdrb-sweep wrote (results.csv, meta.json); PROFILE is a shipped profile
name (gdr-effectiveness, nccl-gdr, ib-ndr400, ib-hdr200, roce-200g, roce-400g, pairs) or a
profile file.
Rules (one per line in the profile, documented in README.md, "Profiles"):

  rule NAME BENCH COLUMN OP THRESHOLD [key=value ...]

  rule bw-large  write_bw  bw_GBps    >= 45 GB/s       mem=device path=direct sizes=1M:
  rule lat-p99   write_lat lat_p99_us <= 5 us          mem=device path=direct sizes=8
  rule port      write_bw  bw_GBps    >= 90% of link   mem=device path=direct sizes=1M:
  rule gdr-lat   write_lat lat_p50_us <= 50% of staged mem=device sizes=8:4K
  rule gdr-reg   write_bw  reg        in dmabuf,peermem mem=device path=direct
  rule gdr-used  nccl_allreduce gdr_connections all    path=direct
  rule gdr-bw    nccl_allreduce busbw_GBps >= predicted of staged sizes=256M: reference=130%

Keys after the threshold select rows: mem, path, reg, pair (default all; pair=*: each pair's
own rows, a GPU pair's peer copies gpu0->gpu1, each judged alone and named where it fails),
layer, ranks, placement (out-of-place, in-place: a collective's --in-place) and sizes. "% of staged" pairs
each direct row with the staged row of the same size, mem, pair, ranks and placement (in
place or not).

"predicted of staged" pairs them the same way and judges direct/staged against the node's
topology (docs/nccl.md, "What GPUDirect should be worth here"): busbw_GBps >= fails a ratio
below what doctor.json's NIC rate, GPU-NIC distance and PCIe links predict, less tolerance=
(default 10%), and is NODATA, naming what is missing, where they are not recorded; a latency
column <= fails direct above staged by more than the tolerance. reference=P% prints P% of
staged beside the measured ratios, never judged.

"gdr_connections all" (NCCL rows) passes a row whose G/N has G = N > 0: every network
connection used GPUDirect RDMA; it fails G < N with the binary's note (GPUDirect allowed but
NCCL used NET/IB without GDRDMA on X of N connections), unless the evidence shows NCCL itself
declines GPUDirect there (a GPU-NIC distance, from the row or doctor.json, beyond the note's
NCCL_NET_GDR_LEVEL or its default PXB; the sends of a GPU before Ampere: then at least half
must use it), 0/0 as no network connection (nothing to judge), and a transport 'unknown' with
the note's reason. Rows measured on the simulated
GPU or NCCL (gpu "simulated", library "(simulated)") make the verdict SIMULATED: never a pass.

All-pairs matrices (pairs-*.csv of gdrb_mpi_pairs, in RESULTS_DIR; docs/pairs.md) are judged
relative to the fabric, and the verdict names the suspect node, link or rail:

  pairs bw  below=80%median size=8M       a pair below 80% of the median pair fails
  pairs lat above=2.1xbest  size=8        a pair above 2.1x the best pair fails

A directory with matrices but no results.csv (gdrb_mpi_pairs run by hand) is judged on them.
Each suspect node or link ends with the causes found on its ends in the counter files
(*.counters.csv) and doctor.json of RESULTS_DIR, or "no counter or check explains it"
(docs/counters.md, "Judging"):

  counters errors                         NIC error counters that rose on a node fail: any
                                          rise on hardware (mlx5), 10x the other nodes' rate
                                          per packet on software RDMA (rxe, siw); so does a
                                          counter that vanished during a run; a counter's
                                          fall (state reset) is named, never a rise

Evidence is read fail-closed: every file is read only when it is a regular file (never
through a symbolic link, never waited on, within a size bound), and a row a rule needs and
cannot read (another number of fields, CR or CRLF line ends, a last line cut short, a count
that is empty, negative, not digits, not finite or beyond 2^64-1, an unknown state, a file
of another header, an error or packet counter in state unreadable) makes the counters rule
INVALID, naming how many rows and the first (file:line: why); a counters rule that judged
no node is NODATA; a pairs rule is INVALID where pairs.csv is there and cannot be read; a
doctor.json there that cannot be read makes the whole verdict INVALID.

Where a sweep measured a failing step again (gdrb sweep --repeat-failed; meta.json's steps
say which lines each attempt wrote), a check's attempts are its step's rows of one memory
kind, path, pair and size: the check passes when one attempt passes and fails only when
every attempt fails (a repeat that measured nothing is no pass); the rule's message and
verdict.json's "attempts" give each attempt's figure and their spread. spread=P% on a
numeric rule makes a check whose attempts differ by more than P% ((max - min) / min)
INVALID, an unstable figure (docs/sweeps.md, "Repeats").

Every row the rule selects must pass (pair=all rows unless pair= says otherwise); a row
whose status is not ok, or whose value is empty (no figure), fails; a rule that selects no
row at all fails as NODATA. A value a rule reads that is not a number as the binaries write
it (sizes: at most 20 ASCII digits; latencies and bandwidths: a non-negative decimal such as
1.627, at most 30 digits each side of the point; not "nan", "-5", "0x10", "8x" or 400 nines)
makes the rule and the verdict INVALID, and is listed with its file, line and column.

Options:
  --link-rate GBITS  port rate in Gb/s for "% of link" rules, instead of the rate recorded
                     in the rows' nic column or in meta.json
  --verdict FILE     verdict as JSON (default RESULTS_DIR/verdict.json)
  --junit FILE       verdict as JUnit XML for CI systems (default RESULTS_DIR/verdict.xml)
  -q, --quiet        print only the overall line
  -h, --help         this help
Exit: 0 every rule passes, 1 a rule fails or has no data (or the verdict could not be
written: the verdict is printed, then one line naming the file; INVALID keeps 3), 2 bad
usage or input (one line naming the option, or the file and line), 3 INVALID: a value a
rule reads is not a number, or evidence it needs could not be read.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple, Union

from . import common, counters, evidence, gdr_model, pairs
from . import profile as profiles
from .common import Json, awk_num, decimal, json_str, num_fmt, size_fmt, term, usage_error, write_all, xml_str

# A measured value or threshold: None where the row has none (no figure, no rate), a float for
# the numeric rules, the text itself for the text rules.
Value = Union[None, float, str]

KEPT = 50                    # failures and invalid values each rule keeps for its message and the JSON
FILTER_KEYS = ("mem", "path", "reg", "pair", "layer", "ranks", "placement")
_NIC_RATE = re.compile(r"([0-9]+(\.[0-9]+)?) ?Gb/s")
_NO_RATE = "no link rate recorded (nic column and meta.json name none; give --link-rate)"
_HUGE = 1e300
TEXT_KINDS = ("text", "gdr")   # rules whose values are text, not numbers
NO_NETWORK = "no network connection: nothing to judge (ranks on one node? use --nccl-net-only)"
NUMERIC_KINDS = ("abs", "link", "staged", "predicted")
# A check's attempts (gdrb sweep --repeat-failed): the rows one step of the sweep wrote, on
# each attempt, for one memory kind, path, pair and size (meta.json's steps say which lines).
IDENT_COLUMNS = ("benchmark", "mem", "path", "pair", "size_bytes")
# pair=* in a rule: every row of a pair of its own (a GPU pair's peer copies, gpu0->gpu1), the
# aggregate row (pair all) left out; each is a check of its own.
EACH_PAIR = ",*,"


def attempt_note(n: int) -> str:
    """The note part gdrb sweep gives the rows of attempt N (N >= 2), for people."""
    return "attempt %d" % n


def attempt_spans(meta: Optional[Json]) -> Dict[int, Tuple[int, int]]:
    """results.csv's line -> (step, attempt), from meta.json's steps in the order they ran (each
    appended its rows and filled rows); {} where no step ran twice."""
    if meta is None:
        return {}
    spans: Dict[int, Tuple[int, int]] = {}
    line, repeated = 2, False
    for k in range(meta.count("steps")):
        st = meta.at("steps", k)
        # The one reader of evidence keeps numbers as written: a count is ASCII digits.
        n, attempt, rows, filled, all_pairs = (common.integer(v) if isinstance(v, str) else None
                                               for v in (st.get(x) for x in ("n", "attempt", "rows", "filled",
                                                                             "all_pairs")))
        if n is None or rows is None or filled is None:
            return {}
        attempt = attempt or 1
        if all_pairs:
            continue        # an all-pairs binary's rows are in pairs.csv (the sweep's step says so)
        repeated = repeated or attempt > 1
        for ln in range(line, line + rows + filled):
            spans[ln] = (n, attempt)
        line += rows + filled
    return spans if repeated else {}


def json_num(v: float) -> str:
    """V as a JSON number (awk's form); null where it is not finite: JSON has no NaN or Infinity."""
    return awk_num(v) if math.isfinite(v) else "null"


def ratio_fmt(v: float) -> str:
    """A ratio of two figures (direct/staged) for people: two decimals."""
    return "%.2f" % v


def plural(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def status_why(status: str, note: str) -> str:
    return "status " + status + (" (%s)" % note if note and status != "ok" else "")


# What a failed check says of its value and threshold: the rule's operator negated (a value
# equal to a strict threshold is ">=" or "<=" it, not beyond it).
NOT = {">=": "<", "<=": ">", ">": "<=", "<": ">="}


def compare(v: float, op: str, t: float) -> bool:
    if op == ">=":
        return v >= t
    if op == "<=":
        return v <= t
    if op == ">":
        return v > t
    if op == "<":
        return v < t
    return False


def margin(v: float, op: str, t: float) -> float:
    """Relative distance to the threshold, negative when the check fails (for "worst")."""
    if t == 0:
        return v if ">" in op else -v
    return ((v - t) if ">" in op else (t - v)) / abs(t)


@dataclass
class Check:
    """One checked row (or direct/staged pair) of a rule: its size, value, threshold and,
    when it failed, why."""
    size: int
    value: Value
    threshold: Value
    why: str


@dataclass
class Try:
    """One attempt of a check: the rows of one configuration measured again by a repeat."""
    attempt: int
    ok: bool
    value: Value
    threshold: Value
    why: str
    size: int
    lines: Tuple[int, ...]


def spread_pct(values: List[float]) -> Optional[float]:
    """(max - min) / min of VALUES in percent; None for fewer than two; inf where min is 0 < max."""
    if len(values) < 2:
        return None
    lo, hi = min(values), max(values)
    if lo <= 0:
        return 0.0 if hi <= 0 else math.inf
    return (hi - lo) / lo * 100


def pct_fmt(v: float) -> str:
    return "%.0f%%" % v if math.isfinite(v) else "unbounded (a figure of 0)"


@dataclass
class InvalidValue:
    """A value a rule read that is not a number of its column's form."""
    file: str
    line: int
    column: str
    value: str
    text: str          # "FILE:LINE: COLUMN 'VALUE' is WHY"
    row: bool = False  # a row of evidence that could not be read (evidence.Fault), not a value


@dataclass
class RuleResult:
    """What one rule of the profile selected and found."""
    rule: profiles.Rule
    threshold: str                 # the rule's value in awk's number form (awk_num)
    limit: float = 0.0             # that value as a number (numeric rules)
    filters: Dict[str, str] = field(default_factory=dict)   # mem path reg pair layer ranks placement
    size_list: Optional[Set[int]] = None
    size_lo: Optional[int] = None
    size_hi: Optional[int] = None  # None: no upper end
    checked: int = 0
    failed: int = 0
    failures: List[Check] = field(default_factory=list)     # the first KEPT
    worst: Optional[Check] = None
    worst_margin: float = 0.0
    ratios: List[float] = field(default_factory=list)   # kind "predicted": the lowest and highest ratio measured
    invalids: int = 0
    invalid_texts: List[str] = field(default_factory=list)  # the first KEPT
    sizes: Set[int] = field(default_factory=set)
    min_size: Optional[int] = None
    max_size: Optional[int] = None
    # "% of staged": the rows of each (mem, pair, ranks, size, in place), in order, as (value, status, note).
    direct: Dict[tuple, List[Tuple[str, str, str]]] = field(default_factory=dict)
    staged: Dict[tuple, List[Tuple[str, str, str]]] = field(default_factory=dict)
    direct_any: Set[tuple] = field(default_factory=set)
    verdict: str = ""
    message: str = ""
    notes: List[str] = field(default_factory=list)       # what the evidence explained (gdr), each once
    # kind "predicted": the topology's prediction (None: not predictable, `why` says what is missing).
    prediction: Optional[gdr_model.Prediction] = None
    ref_low: int = 0               # checks below (busbw) or above (latency) the reference, which is not judged
    # Attempts: each check's rows, by its configuration, until conclude() settles them.
    tries: Dict[tuple, List[Try]] = field(default_factory=dict)
    repeated: List[Tuple[str, List[Try], Optional[float]]] = field(default_factory=list)  # outcome, attempts, spread
    rescued: int = 0               # checks that failed and passed on a repeat
    unstable: int = 0              # checks whose attempts spread beyond the rule's spread=
    unstable_texts: List[str] = field(default_factory=list)   # the first KEPT
    failed_lines: Set[int] = field(default_factory=set)   # the rows of the checks that failed (gdrb sweep repeats them)
    row_pair: str = ""             # pair=*: the pair of the row being judged, named in its failure
    tries_pair: Dict[tuple, str] = field(default_factory=dict)   # pair=*: each check's pair

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 4:
            self.notes.append(text)

    @classmethod
    def of(cls, rule: profiles.Rule) -> "RuleResult":
        textual = rule.kind in TEXT_KINDS
        text = rule.value if textual else awk_num(float(rule.value))
        r = cls(rule, text, 0.0 if textual else float(text))
        for k, v in rule.filters.items():
            if k == "sizes":
                if ":" in v:
                    lo, hi = v.split(":")
                    r.size_lo, r.size_hi = int(lo), None if hi == "inf" else int(hi)
                else:
                    r.size_list = {int(s) for s in v.split(",")}
            elif k in FILTER_KEYS and not (k == "path" and rule.kind in ("staged", "predicted")):
                r.filters[k] = "," + v + ","
        return r

    # --- selection -------------------------------------------------------------

    def filters_match(self, fields: List[str], index: Dict[str, int]) -> bool:
        for k, v in self.filters.items():
            field_value = fields[index[k]]
            if k == "pair" and v == EACH_PAIR:
                if field_value == "all":
                    return False
            elif "," + field_value + "," not in v:
                return False
        return True

    @property
    def per_pair(self) -> bool:
        """pair=*: each pair's own rows are judged, and a failure names its pair."""
        return self.filters.get("pair") == EACH_PAIR

    def size_ok(self, size: int) -> bool:
        if self.size_list is not None:
            return size in self.size_list
        if self.size_lo is not None and size < self.size_lo:
            return False
        return self.size_hi is None or size <= self.size_hi

    def sizes_text(self) -> str:
        rule = self.rule
        if "sizes" in rule.filters and ":" not in rule.filters["sizes"]:
            return ", ".join(size_fmt(int(s)) for s in rule.filters["sizes"].split(","))
        if self.size_lo is None:
            return "all sizes"
        if self.size_hi is None:
            return size_fmt(self.size_lo) + " and up"
        if self.size_lo == self.size_hi:
            return size_fmt(self.size_lo)
        return "%s..%s" % (size_fmt(self.size_lo), size_fmt(self.size_hi))

    def filters_text(self) -> str:
        words = [w for w in self.rule.filter_text().split(" ")
                 if w and not w.startswith("sizes=") and w != "pair=all"]
        s = " ".join(words)
        return s + (", " if s else "") + self.sizes_text()

    def rule_text(self) -> str:
        r = self.rule
        if r.kind == "gdr":
            return "%s %s all (%s)" % (r.bench, r.column, self.filters_text())
        return "%s %s %s %s (%s)" % (r.bench, r.column, r.op, r.text, self.filters_text())

    def unit(self) -> str:
        if self.rule.column.endswith("_us"):
            return " us"
        if self.rule.column.endswith("_GBps"):
            return " GB/s"
        return ""

    # --- outcomes --------------------------------------------------------------

    def record(self, size: int, ok: bool, value: Value, threshold: Value, why: str, ident: Optional[tuple] = None,
               attempt: int = 1, lines: Tuple[int, ...] = ()) -> None:
        """A check's outcome; with IDENT, one attempt of the check IDENT, settled with its other
        attempts at the end (settle)."""
        if ident is not None:
            self.tries.setdefault(ident, []).append(Try(attempt, ok, value, threshold, why, size, lines))
            if self.row_pair:
                self.tries_pair[ident] = self.row_pair
            return
        if why and self.row_pair:
            why = "%s: %s" % (self.row_pair, why)
        self.count(size, ok, value, threshold, why, lines)

    def settle(self) -> None:
        """Each check's attempts to one outcome (docs/sweeps.md, "Repeats"): it passes when an
        attempt passes and fails when every attempt fails; with spread=, attempts whose figures
        differ by more are an unstable figure, neither."""
        for ident, ts in self.tries.items():
            ts.sort(key=lambda t: t.attempt)
            who = self.tries_pair.get(ident, "")
            if len(ts) == 1:
                t = ts[0]
                self.count(t.size, t.ok, t.value, t.threshold, "%s: %s" % (who, t.why) if who and t.why else t.why,
                           t.lines)
                continue
            nums = [t.value for t in ts if isinstance(t.value, float)] if self.rule.kind in NUMERIC_KINDS else []
            spread = spread_pct(nums) if len(nums) == len(ts) else None
            seen = self.attempts_text(ts, spread)
            first_ok = next((t for t in ts if t.ok), None)
            if self.rule.spread is not None and spread is not None and spread > self.rule.spread:
                self.unstable += 1
                self.repeated.append(("unstable", ts, spread))
                self.checked += 1
                self.sizes.add(ts[0].size)
                if self.unstable <= KEPT:
                    self.unstable_texts.append("%s: %s%s, beyond spread=%s" % (
                        size_fmt(ts[0].size), who + ": " if who else "", seen, pct_fmt(self.rule.spread)))
                continue
            if first_ok is not None:
                self.rescued += not ts[0].ok
                self.repeated.append(("pass", ts, spread))
                self.count(first_ok.size, True, first_ok.value, first_ok.threshold, "", ())
            else:
                last = ts[-1]
                self.repeated.append(("fail", ts, spread))
                self.count(last.size, False, last.value, last.threshold,
                           (who + ": " if who else "") + "every attempt failed: " + seen,
                           tuple(n for t in ts for n in t.lines))
        self.tries = {}

    def attempts_text(self, ts: List[Try], spread: Optional[float]) -> str:
        """"attempts 1: 12.3 GB/s (fail), 2: 45.6 GB/s, spread 271%": what each attempt measured."""
        u = self.unit()
        parts = []
        for t in ts:
            if isinstance(t.value, float) and self.rule.kind != "predicted":
                shown = num_fmt(t.value) + u
            elif isinstance(t.value, float):
                shown = "direct/staged " + ratio_fmt(t.value)
            else:
                shown = "'%s'" % t.value if t.value else "no figure"
            parts.append("%d: %s%s" % (t.attempt, shown, "" if t.ok else " (fail: %s)" % t.why if not
                                       isinstance(t.value, float) else " (fail)"))
        return "attempts " + ", ".join(parts) + (", spread %s" % pct_fmt(spread) if spread is not None else "")

    def count(self, size: int, ok: bool, value: Value, threshold: Value, why: str,
              lines: Tuple[int, ...] = ()) -> None:
        self.checked += 1
        self.sizes.add(size)
        if self.min_size is None or size < self.min_size:
            self.min_size = size
        if self.max_size is None or size > self.max_size:
            self.max_size = size
        if value is None or threshold is None or self.rule.kind in TEXT_KINDS:
            m = _HUGE if ok else -_HUGE
        else:
            m = margin(value, self.rule.op, threshold)
        if self.worst is None or m < self.worst_margin:
            self.worst, self.worst_margin = Check(size, value, threshold, why), m
        if ok:
            return
        self.failed_lines.update(lines)
        self.failed += 1
        if self.failed <= KEPT:
            self.failures.append(Check(size, value, threshold, why))

    def range_text(self) -> str:
        if self.min_size is None:
            return ""
        if self.min_size == self.max_size:
            return size_fmt(self.min_size)
        return "%s..%s" % (size_fmt(self.min_size), size_fmt(self.max_size))

    def worst_text(self) -> str:
        w, u, rule = self.worst, self.unit(), self.rule
        if rule.kind in TEXT_KINDS:
            return "%s %s at %s" % (rule.column, "'%s'" % w.value if w.value else "empty", size_fmt(w.size))
        if rule.kind == "predicted":
            return "worst direct/staged %s against %s %s at %s" % (
                ratio_fmt(w.value), "the floor" if rule.op == ">=" else "the ceiling", ratio_fmt(w.threshold),
                size_fmt(w.size))
        if rule.kind == "staged":
            return "worst %s%s against %s%s (%s%% of staged) at %s" % (
                num_fmt(w.value), u, num_fmt(w.threshold), u, self.threshold, size_fmt(w.size))
        return "worst %s%s against %s%s at %s" % (num_fmt(w.value), u, num_fmt(w.threshold), u, size_fmt(w.size))

    def predicted_text(self) -> str:
        """What a "predicted of staged" rule compared with: the prediction, the tolerance and
        the reference, for its message."""
        rule, p = self.rule, self.prediction
        if rule.op == "<=":
            text = "predicted direct/staged at most 1 (NCCL's LL protocol keeps send buffers in host memory " \
                   "either way: GPUDirect should not be slower), ceiling %s with %s%% tolerance" % (
                       ratio_fmt(1 + rule.tolerance / 100), awk_num(rule.tolerance))
        elif p is not None and p.ratio is not None:
            text = "predicted %s (%s), floor %s with %s%% tolerance" % (
                ratio_fmt(p.ratio), p.why, ratio_fmt(p.ratio * (1 - rule.tolerance / 100)), awk_num(rule.tolerance))
        else:
            text = ""
        if rule.reference is not None:
            text += "%sreference %s (%s%% of staged, not judged): %s" % (
                "; " if text else "", ratio_fmt(rule.reference / 100), awk_num(rule.reference),
                "%d of %d %s it" % (self.ref_low, self.checked, "below" if rule.op == ">=" else "above")
                if self.ref_low else "every check meets it")
        return text

    def conclude(self) -> None:
        """The rule's verdict and the message that explains it."""
        self.settle()
        self.conclude_verdict()
        if self.rule.kind == "predicted" and self.checked and self.verdict != "INVALID":
            self.message += "; " + self.predicted_text()
        if self.notes and self.verdict in ("PASS", "FAIL"):
            self.message += "; " + "; ".join(self.notes)
        if self.verdict in ("PASS", "FAIL") and self.repeated:
            self.message += "; " + self.repeats_text()

    def repeats_text(self) -> str:
        """What the repeats measured: the checks measured more than once, each attempt's figure."""
        passed = [(o, ts, sp) for o, ts, sp in self.repeated if o == "pass" and not ts[0].ok]
        text = "%s measured more than once%s" % (
            plural(len(self.repeated), "check"),
            ", %d failed and passed on a repeat" % self.rescued if self.rescued else "")
        if passed:
            text += ": " + "; ".join("%s: %s" % (size_fmt(ts[0].size), self.attempts_text(ts, sp))
                                     for _, ts, sp in passed[:3])
            if len(passed) > 3:
                text += "; and %d more" % (len(passed) - 3)
        return text

    def conclude_verdict(self) -> None:
        p = self.prediction
        if not self.invalids and self.checked and self.rule.kind == "predicted" and self.rule.op == ">=" and \
                (p is None or p.ratio is None):
            # Measured, but nothing to measure it against: never a pass.
            self.verdict = "NODATA"
            w = self.ratios
            self.message = "no prediction from the node's topology: %s; measured direct/staged %s at %s" % (
                p.why if p is not None else "not read", "%s..%s" % (ratio_fmt(w[0]), ratio_fmt(w[1])) if w else "none",
                plural(len(self.sizes), "size"))
            return
        if self.unstable and not self.invalids:
            self.verdict = "INVALID"
            self.message = "unstable: %d of %s measured figures whose attempts differ by more than spread=%s: %s" % (
                self.unstable, plural(self.checked, "check"), pct_fmt(self.rule.spread),
                "; ".join(self.unstable_texts[:3]))
            if self.unstable > 3:
                self.message += "; and %d more" % (self.unstable - 3)
        elif self.invalids:
            self.verdict = "INVALID"
            shown = self.invalid_texts[:3]
            self.message = "%d of %s read a value that is not a number: %s" % (
                self.invalids, plural(self.checked, "check"), "; ".join(shown))
            if self.invalids > 3:
                self.message += "; and %d more" % (self.invalids - 3)
        elif not self.checked:
            self.verdict = "NODATA"
            self.message = "no data: no row of %s with %s in the results (not run, not built, or skipped here)" % (
                self.rule.bench, self.filters_text())
        elif self.failed:
            self.verdict = "FAIL"
            self.failures.sort(key=lambda c: c.size)     # stable: rows of one size keep their order
            self.message = "%d of %s failed: %s" % (self.failed, plural(self.checked, "check"), "; ".join(
                "%s: %s" % (size_fmt(c.size), c.why) for c in self.failures[:5]))
            if self.failed > 5:
                self.message += "; and %d more" % (self.failed - 5)
        else:
            self.verdict = "PASS"
            self.message = "%s at %s (%s), %s" % (plural(self.checked, "check"), plural(len(self.sizes), "size"),
                                                  self.range_text(), self.worst_text())


@dataclass
class PairsResult(RuleResult):
    """A "pairs" rule: each matrix it selects, its low pairs and the suspects that explain them."""
    analyses: List[pairs.Analysis] = field(default_factory=list)
    unread: str = ""      # why pairs.csv, there, could not be read: its notes are not known

    def rule_text(self) -> str:
        r = self.rule
        return "%s %s pairs %s (%s)" % (r.bench, "bw" if r.column.endswith("_GBps") else "lat", r.text,
                                        self.filters_text())

    def selects(self, m: pairs.Matrix) -> bool:
        if (m.metric == "bw") != self.rule.column.endswith("_GBps") or not self.size_ok(m.size):
            return False
        for k, v in (("mem", m.mem), ("path", m.xpath)):
            if k in self.filters and "," + v + "," not in self.filters[k]:
                return False
        return True

    def judge(self, mats: List[pairs.Matrix], ranks: Optional[List[pairs.Rank]],
              evidence: Optional[counters.Evidence] = None) -> None:
        rule = self.rule
        for m in mats:
            if not self.selects(m):
                continue
            a = pairs.analyse(m, ranks, rule.ref, float(rule.value), rule.node_frac)
            self.analyses.append(a)
            # A suspect node or link: what its ends' counters and doctor say (docs/counters.md).
            for x in a.suspects:
                if x.kind in ("node", "link") and ranks and all(0 <= r < len(ranks) for r in x.ranks):
                    why = counters.explain(evidence, list(dict.fromkeys(ranks[r].host for r in x.ranks)))
                    if why:
                        x.text += ": " + why
            if not a.measured:
                continue
            self.checked += a.measured
            self.sizes.add(m.size)
            self.min_size = m.size if self.min_size is None else min(self.min_size, m.size)
            self.max_size = m.size if self.max_size is None else max(self.max_size, m.size)
            name = pairs.Namer(ranks, m.n)
            u, cmp = a.unit(), "<" if m.metric == "bw" else ">"
            for s, d, v in a.low:
                self.failed += 1
                if len(self.failures) < KEPT:
                    self.failures.append(Check(m.size, v, a.limit, "%s: %s -> %s: %s %s %s %s %s (%s)" % (
                        m.name, name(s), name(d), num_fmt(v), u, cmp, num_fmt(a.limit), u, a.rel(v))))
            if a.worst is not None:
                s, d, v = a.worst
                mg = margin(v, ">=" if m.metric == "bw" else "<=", a.limit)
                if self.worst is None or mg < self.worst_margin:
                    self.worst, self.worst_margin = Check(m.size, v, a.limit, "%s: %s -> %s (%s)" % (
                        m.name, name(s), name(d), a.rel(v))), mg

    def conclude(self) -> None:
        parts = []
        for a in self.analyses:
            if not a.measured:
                continue
            u = a.unit()
            if a.low:
                shown = [x.text for x in a.suspects[:8]]
                if len(a.suspects) > 8:
                    shown.append("and %d more" % (len(a.suspects) - 8))
                parts.append("%s: %d of %d pairs %s %s %s (%s, %s %s %s): suspects: %s" % (
                    a.matrix.name, len(a.low), a.measured, "below" if a.matrix.metric == "bw" else "above",
                    num_fmt(a.limit), u, self.rule.text.split(" ", 1)[1], a.ref_name, num_fmt(a.ref), u,
                    "; ".join(shown)))
            else:
                s, d, v = a.worst
                parts.append("%s: %d pairs%s, none %s %s %s; worst %s -> %s %s %s (%s)" % (
                    a.matrix.name, a.measured, " (%d not measured)" % a.empty if a.empty else "",
                    "below" if a.matrix.metric == "bw" else "above", num_fmt(a.limit), u, a.names(s), a.names(d),
                    num_fmt(v), u, a.rel(v)))
        if not self.checked:
            self.verdict = "NODATA"
            self.message = "no data: no %s matrix (pairs-*.csv) with %s in the results%s" % (
                "bandwidth" if self.rule.column.endswith("_GBps") else "latency", self.filters_text(),
                " (only empty ones)" if self.analyses else "")
        elif self.unread:
            # Its notes say whether the matrices were measured on a simulated GPU or with a test hook.
            self.verdict = "INVALID"
            self.invalids = 1
            self.message = "%s (its notes, which say whether a simulated GPU or a test hook measured the " \
                           "matrices, are not known) | %s" % (self.unread, " | ".join(parts))
        else:
            self.verdict = "FAIL" if self.failed else "PASS"
            self.message = " | ".join(parts)         # "; " separates the suspects of one matrix

    def suspects_json(self) -> str:
        items = ["{\"matrix\": %s, \"kind\": %s, \"ranks\": [%s], \"text\": %s}" % (
            json_str(a.matrix.name), json_str(x.kind), ", ".join(str(r) for r in x.ranks), json_str(x.text))
            for a in self.analyses for x in a.suspects][:KEPT]
        mats = ["{\"matrix\": %s, \"n\": %d, \"measured\": %d, \"not_measured\": %d, \"reference\": %s, "
                "\"limit\": %s, \"low\": %d}" % (json_str(a.matrix.name), a.matrix.n, a.measured, a.empty,
                                                  json_num(a.ref), json_num(a.limit), len(a.low))
                for a in self.analyses]
        return "     \"matrices\": [%s],\n     \"suspects\": [%s],\n" % (", ".join(mats), ", ".join(items))


@dataclass
class CountersResult(RuleResult):
    """A "counters errors" rule: fails when a node's NIC error counters rose beyond what its
    provider allows (counters.Evidence.named) or a counter vanished during a run, naming node,
    device, port and counter; INVALID when a row it needs could not be read or a counter was
    unreadable; NODATA when no node could be judged."""
    evidence: Optional[counters.Evidence] = None

    def rule_text(self) -> str:
        return "counters errors"

    def conclude(self) -> None:
        ev = self.evidence
        if ev is None or (ev.files == 0 and not ev.faults):
            self.verdict = "NODATA"
            self.message = "no data: no counter file (*.counters.csv) in the results"
            return
        named, nodes = ev.named(), ev.judged_nodes()
        vanished, unreadable, resets = ev.states("vanished"), ev.states("unreadable"), ev.states("reset")
        self.checked = len(nodes)
        notes = []
        alone = ev.unjudged()
        if alone:
            notes.append("rose on software RDMA, not judged (no other node to compare with): "
                         + "; ".join(alone[:4]))
        if resets:
            notes.append("fell (state reset: a 32-bit counter wrapped or the NIC was reset; not an error rise): "
                         + _few(resets))
        tail = "; " + "; ".join(notes) if notes else ""
        found = []
        if named:
            found.append("NIC error counters rose on %s: %s" % (
                plural(len(named), "node"), "; ".join("%s: %s" % (h, named[h]) for h in sorted(named))))
        if vanished:
            found.append("%s vanished during the run (a NIC, port or counter that went away): %s" % (
                plural(len(vanished), "counter"), _few(vanished)))
        if ev.faults or unreadable:
            self.verdict = "INVALID"
            self.invalids = len(ev.faults) + len(unreadable)
            why = [ev.faults.message("counter evidence")] if ev.faults else []
            if unreadable:
                why.append("%s in state unreadable (a reading failed: its rise is not known): %s" % (
                    plural(len(unreadable), "counter"), _few(unreadable)))
            self.message = "the counters cannot be judged: %s%s%s" % (
                "; ".join(why), "; " + "; ".join(found) if found else "", tail)
        elif found:
            self.failed = len(set(named) | {v.split(": ", 1)[0] for v in vanished})
            self.verdict = "FAIL"
            self.message = "; ".join(found) + tail
        elif not nodes:
            self.verdict = "NODATA"
            self.message = "no data: the counter files hold no error counter read in state ok: judged on 0 nodes%s" \
                % tail
        else:
            self.verdict = "PASS"
            self.message = "no error counter rose beyond what its provider allows on %s%s" % (
                plural(len(nodes), "node"), tail)


def _unreadable(path: str) -> str:
    """"PATH: why" where PATH is there and the evidence reader would refuse it (a link, not a
    regular file, over its size bound: opened and measured, not read); "" otherwise."""
    if not os.path.lexists(path):
        return ""
    try:
        with common.open_regular(path, nofollow=True, mode="rb") as f:
            if os.fstat(f.fileno()).st_size > evidence.LIMIT:
                raise OSError(0, "larger than %d bytes" % evidence.LIMIT)
    except OSError as e:
        return "%s: cannot read: %s" % (path, e.strerror or "read error")
    return ""


def _few(items: List[str], most: int = 4) -> str:
    """The first MOST of ITEMS, "; " between them, and how many more."""
    return "; ".join(items[:most]) + ("; and %d more" % (len(items) - most) if len(items) > most else "")


class At:
    """Where a row stands among the attempts: the check it is an attempt of (None: a check
    without attempts), which attempt, and its lines."""

    def __init__(self, ident: Optional[tuple], attempt: int, *lines: int):
        self.ident, self.attempt, self.lines = ident, attempt, lines

    def of(self) -> Tuple[Optional[tuple], int, Tuple[int, ...]]:
        """record()'s ident, attempt and lines."""
        return self.ident, self.attempt, self.lines


class Judge:
    """Reads the rows of a results CSV against the rules and keeps what each rule found."""

    def __init__(self, rules: Iterable[profiles.Rule], csv_path: str, link_rate: Optional[float] = None,
                 meta: Optional[Json] = None, results_dir: str = "",
                 spans: Optional[Dict[int, Tuple[int, int]]] = None):
        self.schema = common.schema()
        self.index = self.schema.index
        self.csv_path = csv_path
        self.link_rate = link_rate
        self.results_dir = results_dir or _dirname(csv_path)
        self.results = [PairsResult.of(r) if r.kind == "pairs" else CountersResult.of(r) if r.kind == "counters"
                        else RuleResult.of(r) for r in rules]
        self.by_bench: Dict[str, List[RuleResult]] = {}
        for r in self.results:
            if r.rule.kind not in ("pairs", "counters"):
                self.by_bench.setdefault(r.rule.bench, []).append(r)
        self.invalid_values: List[InvalidValue] = []
        self._invalid_seen: Set[str] = set()
        self.simulated = ""
        self.test_hook = ""
        self.gpu_shared = ""
        self.default_rate = 0.0
        self.port_rate: Dict[str, float] = {}
        if meta is not None:
            self._rates(meta)
        self._rate_of: Dict[Tuple[str, str], float] = {}
        self._topo: Optional[gdr_model.Topology] = None
        self.topo_faults = evidence.Faults()    # doctor.json there and unreadable, read for the topology
        self._ident_columns = [self.index[c] for c in IDENT_COLUMNS]
        self._occurrences: Dict[tuple, int] = {}
        # Which step and attempt wrote each line (attempt_spans); {}: every row a check of its own.
        self.spans = attempt_spans(meta) if spans is None else spans

    def topology(self) -> gdr_model.Topology:
        """The doctor's topology of the results (read once); an unreadable doctor.json is a
        fault (the verdict INVALID) and no topology."""
        if self._topo is None:
            path = os.path.join(self.results_dir, "doctor.json")
            doctor = None
            if os.path.lexists(path):
                try:
                    doctor = evidence.read_json(path)
                except (OSError, ValueError) as e:
                    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                    self.topo_faults.add(path, 0, why)
                    self._topo = gdr_model.Topology(why="%s could not be read: %s" % (path, why))
                    return self._topo
            self._topo = gdr_model.topology(doctor, path)
        return self._topo

    # --- the port rates of meta.json ----------------------------------------------

    def _rates(self, meta: Json) -> None:
        """meta.json (its numbers kept as written): link_rate_gbps, and the rate of each NIC
        port (NAME:PORT), and of each NIC by its first active port (NAME)."""
        # A rate that is not a finite decimal (inf, 400 digits) is no rate: never one that passes.
        self.default_rate = decimal(meta.text("link_rate_gbps")) or 0.0
        for n in range(meta.count("nodes")):
            for k in range(meta.count("nodes", n, "nics")):
                nic = meta.at("nodes", n, "nics", k)
                name = nic.text("name")
                for p in range(nic.count("ports")):
                    port = nic.at("ports", p)
                    rate = decimal(port.text("rate_gbps"))
                    if rate is None:
                        continue
                    self.port_rate.setdefault(name + ":" + port.text("port"), rate)
                    if name not in self.port_rate and "ACTIVE" in port.text("state"):
                        self.port_rate[name] = rate

    def nic_rate(self, gbps: str, nic: str) -> float:
        """The port rate in Gb/s for a row's link_gbps and nic columns; 0 if none is known."""
        if self.link_rate is not None:
            return self.link_rate
        key = (gbps, nic)
        rate = self._rate_of.get(key)
        if rate is None:
            m = _NIC_RATE.search(nic)
            nic_rate = decimal(m.group(1)) if m else None
            if (decimal(gbps) or 0) > 0:
                rate = float(gbps)
            elif nic_rate is not None:
                rate = nic_rate
            elif nic in self.port_rate:
                rate = self.port_rate[nic]
            else:
                rate = self.port_rate.get(re.sub(r":[0-9]+$", "", nic), self.default_rate)
            self._rate_of[key] = rate
        return rate

    # --- the rows ------------------------------------------------------------------

    def read(self, rows: Iterable[Tuple[int, List[str]]]) -> None:
        ix = self.index
        i_bench, i_size, i_gpu, i_note = ix["benchmark"], ix["size_bytes"], ix["gpu"], ix["note"]
        i_lib = ix["library"]
        for lineno, f in rows:
            # A GPU or an NCCL that is the test suite's simulator proves behaviour, never speed.
            if "simulated" in f[i_gpu]:
                self.simulate(f[i_gpu])
            if "(simulated)" in f[i_lib]:
                self.simulate(f[i_lib])
            # A row measured with a test hook active (its note names it) is a test's, never judged.
            if not self.test_hook:
                hook = pairs.note_part(f[i_note], pairs.TEST_HOOK_MARK)
                self.test_hook = "" if hook is None else pairs.TEST_HOOK_MARK + hook
            # Ranks of one host on one GPU (docs/gpu-sharing.md): said with the verdict.
            if not self.gpu_shared:
                self.gpu_shared = pairs.note_match(f[i_note], pairs.GPU_SHARED) or ""
            rules = self.by_bench.get(f[i_bench])
            if not rules:
                continue
            size_text = f[i_size]
            why = "empty" if size_text == "" else self.schema.value_fault("size_bytes", size_text)
            if why:
                # Every rule selects by size: a size that is not one leaves the row to no rule, so
                # each rule that would select it on its other filters is INVALID.
                for r in rules:
                    if r.filters_match(f, ix):
                        self.invalid(r, None, lineno, "size_bytes", size_text, why)
                continue
            size = int(size_text)
            at = self.attempt(f, lineno)
            for r in rules:
                if r.filters_match(f, ix) and r.size_ok(size):
                    self.check_row(r, f, size, lineno, at)

    def attempt(self, f: List[str], lineno: int) -> "At":
        """The check a row is an attempt of: its step, memory kind, path, pair and size, and
        which of that step's rows of them it is on this attempt."""
        step, attempt = self.spans.get(lineno, (0, 1))
        if not self.spans:
            return At(None, 1, lineno)
        config = (step,) + tuple(f[i] for i in self._ident_columns)
        nth = self._occurrences.get((config, attempt), 0)
        self._occurrences[(config, attempt)] = nth + 1
        return At(config + (nth,), attempt, lineno)

    def simulate(self, name: str) -> None:
        """NAME (a simulated GPU or library) among what the rows were measured on, each once."""
        if name not in self.simulated.split(" and "):
            self.simulated = name if not self.simulated else self.simulated + " and " + name

    def invalid(self, r: RuleResult, size: Optional[int], lineno: int, column: str, value: str, why: str) -> None:
        """Rule R read a value that is not a number of its column's form; each value is listed
        once however many rules read it."""
        text = "%s:%d: %s '%s' is %s" % (self.csv_path, lineno, column, value, why)
        r.checked += 1
        if size is not None:
            r.sizes.add(size)
        r.invalids += 1
        if r.invalids <= KEPT:
            r.invalid_texts.append(text)
        if text not in self._invalid_seen:
            self._invalid_seen.add(text)
            self.invalid_values.append(InvalidValue(self.csv_path, lineno, column, value, text))

    def value_ok(self, r: RuleResult, size: int, lineno: int, column: str, v: str) -> bool:
        why = self.schema.value_fault(column, v)
        if not why:
            return True
        self.invalid(r, size, lineno, column, v, why)
        return False

    def check_row(self, r: RuleResult, f: List[str], size: int, lineno: int, at: Optional["At"] = None) -> None:
        rule, ix = r.rule, self.index
        status, note = f[ix["status"]], f[ix["note"]]
        v = f[ix[rule.column]]
        at = at or At(None, 1, lineno)
        r.row_pair = f[ix["pair"]] if r.per_pair else ""
        if rule.kind == "gdr":
            self.check_gdr(r, f, size, lineno, at)
            return
        paired = rule.kind in ("staged", "predicted")
        bad = rule.kind != "text" and not self.value_ok(r, size, lineno, rule.column, v)
        if bad and not paired:
            return
        if rule.kind == "link" and self.link_rate is None and \
                not self.value_ok(r, size, lineno, "link_gbps", f[ix["link_gbps"]]):
            return
        if rule.kind == "text":
            if status != "ok" and rule.column != "status":
                r.record(size, False, v, r.threshold, status_why(status, note), *at.of())
                return
            if rule.op == "=":
                ok = v == r.threshold
            elif rule.op == "!=":
                ok = v != r.threshold
            else:
                ok = "," + v + "," in "," + r.threshold + ","
            r.record(size, ok, v, r.threshold, "" if ok else "%s is '%s'" % (rule.column, v), *at.of())
            return
        if paired:
            path = f[ix["path"]]
            if path != "direct" and path != "staged":
                return
            key = (f[ix["mem"]], f[ix["pair"]], f[ix["ranks"]], size, f[ix["placement"]] == common.IN_PLACE,
                   at.attempt)
            if path == "direct":
                r.direct_any.add(key)
            if bad:           # judged INVALID already: paired with nothing
                return
            (r.direct if path == "direct" else r.staged).setdefault(key, []).append((v, status, note, lineno))
            return
        if status != "ok":
            r.record(size, False, None, None, status_why(status, note), *at.of())
            return
        if v == "":
            r.record(size, False, None, None, rule.column + " is empty (no figure)", *at.of())
            return
        value = float(v)
        extra = ""
        if rule.kind == "abs":
            limit = r.limit
        else:
            rate = self.nic_rate(f[ix["link_gbps"]], f[ix["nic"]])
            if rate <= 0:
                r.record(size, False, value, None, _NO_RATE, *at.of())
                return
            limit = r.limit / 100 * rate / 8
            extra = " (%s%% of %s Gb/s)" % (r.threshold, awk_num(rate))
        ok = compare(value, rule.op, limit)
        u = r.unit()
        r.record(size, ok, value, limit, "" if ok else "%s%s %s %s%s%s" % (
            num_fmt(value), u, NOT[rule.op], num_fmt(limit), u, extra), *at.of())

    def check_gdr(self, r: RuleResult, f: List[str], size: int, lineno: int, at: "At") -> None:
        """"gdr_connections all": the row's network connections all used GPUDirect RDMA (G/N
        with G = N > 0); otherwise the binary's note says why, or this says there was no
        network connection to judge."""
        ix = self.index
        status, note, v = f[ix["status"]], f[ix["note"]], f[ix["gdr_connections"]]
        if status != "ok":
            r.record(size, False, v, r.threshold, status_why(status, note), *at.of())
            return
        if f[ix["transport"]] == "unknown":
            why = pairs.note_part(note, common.NCCL_TRANSPORT_UNKNOWN)
            r.record(size, False, v, r.threshold, common.NCCL_TRANSPORT_UNKNOWN + (why or "the note gives no reason"), *at.of())
            return
        if v == "":
            r.record(size, False, v, r.threshold, "gdr_connections is empty (not an NCCL row, or a version 1 CSV)", *at.of())
            return
        counts, why = evidence.connections(v)
        if counts is None:
            self.invalid(r, size, lineno, "gdr_connections", v, why[len("is "):])
            return
        used, total = counts
        if total == 0:
            r.record(size, False, v, r.threshold, NO_NETWORK, *at.of())
            return
        if used == total:
            r.record(size, True, v, r.threshold, "", *at.of())
            return
        # Fewer: a fault only where NCCL itself would have used GPUDirect (gdr_model.expect_gdr).
        want = gdr_model.expect_gdr(f[ix["gpu_nic_dist"]], self.topology(), note, f[ix["gpu"]])
        if want.need and want.judge(used, total):
            r.note(want.why)
            r.record(size, True, v, r.threshold, "", *at.of())
            return
        why = pairs.note_part(note, common.NCCL_GDR_UNUSED)
        r.note(want.why)
        r.record(size, False, v, r.threshold, common.NCCL_GDR_UNUSED + why if why is not None else
                 "GDRDMA on %d of %d network connections (%s)" % (used, total, f[ix["transport"]] or "transport empty"),
                 *at.of())

    def pair_staged(self, r: RuleResult) -> None:
        """"% of staged": each direct row against the staged row of the same size, memory kind,
        pair, rank count and placement (in place or not), in the order they were written."""
        rule, u = r.rule, r.unit()
        for key, directs in r.direct.items():
            size, staged = key[3], r.staged.get(key, [])
            r.row_pair = key[1] if r.per_pair else ""       # the key's pair, not the last row read
            for k, (dv, dst, dnote, dline) in enumerate(directs):
                # The check: the k-th direct row of its key; the attempt: key[-1].
                at = At(key[:-1] + (k,), key[-1], dline)
                if dst != "ok":
                    r.record(size, False, None, None, "direct " + status_why(dst, dnote), *at.of())
                    continue
                if k >= len(staged):
                    r.record(size, False, float(dv or 0), None, "no staged row at this size", *at.of())
                    continue
                sv, sst, snote, sline = staged[k]
                at = At(at.ident, at.attempt, dline, sline)
                if sst != "ok":
                    r.record(size, False, float(dv or 0), None, "staged " + status_why(sst, snote), *at.of())
                    continue
                # An empty value is no figure, never 0 (which would pass any "<=").
                if dv == "" or sv == "":
                    r.record(size, False, None, None,
                             "%s %s is empty (no figure)" % ("direct" if dv == "" else "staged", rule.column), *at.of())
                    continue
                d, s = float(dv), float(sv)
                if rule.kind == "predicted":
                    self.judge_ratio(r, size, d, s, at)
                    continue
                limit = r.limit / 100 * s
                ok = compare(d, rule.op, limit)
                r.record(size, ok, d, limit, "" if ok else "direct %s%s %s %s%s (%s%% of staged %s%s)" % (
                    num_fmt(d), u, NOT[rule.op], num_fmt(limit), u, r.threshold, num_fmt(s), u), *at.of())
        # A staged row without a direct one: the direct path did not even write a row.
        for key in r.staged:
            if key not in r.direct_any and key not in r.direct:
                r.record(key[3], False, None, None, "no direct row at this size",
                         *At(key[:-1] + (0,), key[-1], *(x[3] for x in r.staged[key])).of())

    def judge_ratio(self, r: RuleResult, size: int, d: float, s: float, at: "At") -> None:
        """A "predicted of staged" check: direct/staged against the topology's prediction less
        the tolerance (busbw), or against 1 plus the tolerance (latency)."""
        rule = r.rule
        if s <= 0:
            r.record(size, False, None, None, "staged %s is 0: no ratio" % rule.column, *at.of())
            return
        ratio = d / s
        r.ratios = [min(r.ratios[0], ratio), max(r.ratios[1], ratio)] if r.ratios else [ratio, ratio]
        if rule.reference is not None and not compare(ratio, rule.op, rule.reference / 100):
            r.ref_low += 1
        if rule.op == "<=":
            limit = 1 + rule.tolerance / 100
        elif r.prediction is not None and r.prediction.ratio is not None:
            limit = r.prediction.ratio * (1 - rule.tolerance / 100)
        else:
            r.record(size, True, ratio, None, "", *at.of())       # counted; concluded NODATA: no prediction
            return
        ok = compare(ratio, rule.op, limit)
        u = r.unit()
        r.record(size, ok, ratio, limit, "" if ok else "direct/staged %s %s %s (direct %s%s, staged %s%s)" % (
            ratio_fmt(ratio), NOT[rule.op], ratio_fmt(limit), num_fmt(d), u, num_fmt(s), u), *at.of())

    def failed_lines(self) -> Set[int]:
        """After read(): the lines of the rows whose checks fail their rule on every attempt so
        far (gdrb sweep measures them again); pairs and counters rules are not repeated."""
        lines: Set[int] = set()
        for r in self.results:
            if isinstance(r, (PairsResult, CountersResult)):
                continue
            if r.rule.kind == "predicted" and r.rule.op == ">=":
                r.prediction = gdr_model.predict_busbw(self.topology(), self.link_rate or 0.0, self.default_rate)
            if r.rule.kind in ("staged", "predicted"):
                self.pair_staged(r)
            r.settle()
            lines |= r.failed_lines
        return lines

    def finish(self) -> "Verdict":
        judged = [r for r in self.results if isinstance(r, PairsResult)]
        # What the nodes' counters and the doctor say: each suspect's causes, the counters rule.
        counted = [r for r in self.results if isinstance(r, CountersResult)]
        ev = counters.load(self.results_dir) if judged or counted else None
        for r in counted:
            r.evidence = ev
        # The rows a counters rule needed and could not read: listed with the invalid values.
        if ev is not None and counted:
            for x in ev.faults.items[:KEPT]:
                self.invalid_values.append(InvalidValue(x.file, x.line, x.column, x.value, x.text(), True))
        # doctor.json, there and unreadable: the causes these rules give are not known, and the
        # results hold a report that nobody could read: never a pass.
        doctor = ev.doctor_faults if ev is not None else evidence.Faults()
        for x in doctor.items:
            self.invalid_values.append(InvalidValue(x.file, x.line, x.column, x.value, x.text(), True))
        if judged:
            mats, ranks = pairs.load_dir(self.results_dir)
            unread = _unreadable(os.path.join(self.results_dir, pairs.PAIRS_CSV))
            for r in judged:
                r.judge(mats, ranks, ev)
                r.unread = unread
            # The pairs CSV's note says where the matrices came from a simulated GPU.
            self.simulated = self.simulated or pairs.simulated_gpu(self.results_dir)
            self.test_hook = self.test_hook or pairs.test_hook(self.results_dir)
            self.gpu_shared = self.gpu_shared or pairs.gpu_shared(self.results_dir)
        for r in self.results:
            if r.rule.kind == "predicted":
                if r.rule.op == ">=":
                    r.prediction = gdr_model.predict_busbw(self.topology(), self.link_rate or 0.0, self.default_rate)
                self.pair_staged(r)
            elif r.rule.kind == "staged":
                self.pair_staged(r)
            r.conclude()
        if ev is None:        # counters.load read doctor.json, and counted its faults, where it ran
            for x in self.topo_faults.items:
                doctor.add(x.file, x.line, x.why, x.column, x.value)
                self.invalid_values.append(InvalidValue(x.file, x.line, x.column, x.value, x.text(), True))
        unread = len(ev.faults) if ev is not None and counted else 0
        return Verdict(self.results, self.invalid_values, self.simulated, self.test_hook, self.gpu_shared,
                       unread + len(doctor), [x.text() for x in doctor.items])


@dataclass
class Verdict:
    rules: List[RuleResult]
    invalid_values: List[InvalidValue]
    simulated: str
    test_hook: str = ""         # a note's "test hook NAME=VALUE": the run was a test's
    gpu_shared: str = ""        # a note's "N ranks share GPU BUS on HOST (MPS ...)"
    unread_rows: int = 0        # rows of evidence a rule needed and could not read (the first KEPT listed)
    doctor_unread: List[str] = field(default_factory=list)   # doctor.json's faults: the verdict INVALID

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.rules if r.verdict == verdict)

    @property
    def overall(self) -> str:
        # Values that are not numbers cannot be judged at all: that comes before any other outcome.
        if self.count("INVALID") or self.test_hook or self.doctor_unread:
            return "INVALID"
        if self.simulated:
            return "SIMULATED"
        return "FAIL" if self.count("FAIL") + self.count("NODATA") else "PASS"

    @property
    def status(self) -> int:
        return {"PASS": common.EXIT_OK, "INVALID": common.EXIT_INVALID}.get(self.overall, common.EXIT_FAIL)

    def summary(self) -> str:
        ninvalid = self.count("INVALID")
        nrows = self.unread_rows
        nvalues = sum(1 for v in self.invalid_values if not v.row)
        nunstable = sum(r.unstable for r in self.rules)
        why = ([plural(nvalues, "value") + " not a number of its column"] if nvalues else []) + (
            ["%s of evidence that could not be read" % plural(nrows, "row")] if nrows else []) + (
            ["%s whose attempts differ beyond the rule's spread=" % plural(nunstable, "unstable figure")]
            if nunstable else [])
        return "%s: %d rules, %d passed, %d failed, %d without data%s%s%s%s%s" % (
            self.overall, len(self.rules), self.count("PASS"), self.count("FAIL"), self.count("NODATA"),
            ", %d invalid (%s: the results cannot be judged)" % (
                ninvalid, ", ".join(why) or "evidence that could not be read") if ninvalid else "",
            "; doctor.json could not be read (%s): the suspects' causes are not known, the results "
            "cannot be judged" % plural(len(self.doctor_unread), "fault") if self.doctor_unread else "",
            "; measured on %s, which proves behaviour, never speed: never a pass; run on real GPUs"
            % self.simulated if self.simulated else "",
            "; measured with the %s active (GDRB_TEST_HOOKS=1): a test's rows, never judged; "
            "measure again without it" % self.test_hook if self.test_hook else "",
            "; ranks shared a GPU (%s): a GPU figure that fails may be the sharing's, not the node's; "
            "measure again with one rank per GPU (docs/gpu-sharing.md)" % self.gpu_shared
            if self.gpu_shared else "")

    def text(self) -> str:
        """What gdrb-accept prints: two lines per rule, each invalid value, the overall line."""
        # Names and values come from the profile and the CSV: no control character reaches a terminal.
        out = ["%-6s %s: %s\n       %s\n" % (r.verdict, term(r.rule.name), term(r.rule_text()), term(r.message))
               for r in self.rules]
        # The values that are not numbers, each once: the rows to fix or measure again.
        out += ["INVALID %s\n" % term(v.text) for v in self.invalid_values]
        out.append(term(self.summary()) + "\n")
        return "".join(out)

    def json(self, profile_name: str, results: str, now: float) -> str:
        def num(v: Value) -> str:
            return json_num(v) if isinstance(v, float) else "null" if v is None else json_str(v)

        def val(r: RuleResult, v: Value) -> str:
            if r.rule.kind in TEXT_KINDS:
                return "null" if not v else json_str(str(v))
            return num(v)

        out = ["{\n  \"schema\": \"gdrbench-verdict-1\",\n  \"verdict\": %s,\n  \"profile\": %s,\n  \"results\": %s,\n"
               % (json_str(self.overall), json_str(profile_name), json_str(results)),
               "  \"test_hook\": %s,\n" % (json_str(self.test_hook) if self.test_hook else "null"),
               "  \"gpu_shared\": %s,\n" % (json_str(self.gpu_shared) if self.gpu_shared else "null"),
               "  \"generated\": %s,\n  \"rules_total\": %d,\n  \"passed\": %d,\n  \"failed\": %d,\n  \"nodata\": %d,\n"
               % (json_str(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))), len(self.rules),
                  self.count("PASS"), self.count("FAIL"), self.count("NODATA")),
               "  \"invalid\": %d,\n  \"invalid_values\": [" % self.count("INVALID"),
               ",".join("\n    {\"file\": %s, \"line\": %d, \"column\": %s, \"value\": %s, \"message\": %s}"
                        % (json_str(v.file), v.line, json_str(v.column), json_str(v.value), json_str(v.text))
                        for v in self.invalid_values),
               "%s],\n  \"rules\": [" % ("\n  " if self.invalid_values else "")]
        rules = []
        for r in self.rules:
            rule = r.rule
            s = ("\n    {\"name\": %s, \"where\": %s, \"verdict\": %s,\n" % (
                json_str(rule.name), json_str(rule.where), json_str(r.verdict))
                + "     \"benchmark\": %s, \"column\": %s, \"op\": %s, \"kind\": %s, \"threshold\": %s, "
                  "\"selection\": %s,\n" % (json_str(rule.bench), json_str(rule.column), json_str(rule.op),
                                           json_str(rule.kind), json_str(rule.text), json_str(r.filters_text()))
                + "     \"checked\": %d, \"failed_checks\": %d, \"invalid_checks\": %d, \"sizes\": %s,\n" % (
                    r.checked, r.failed, r.invalids, json_str(r.range_text())))
            if r.worst is not None:
                w = r.worst
                s += "     \"worst\": {\"size_bytes\": %d, \"value\": %s, \"threshold\": %s, \"why\": %s},\n" % (
                    w.size, val(r, w.value), val(r, w.threshold), json_str(w.why))
            if isinstance(r, PairsResult):
                s += r.suspects_json()
            s += "     \"spread_bound_pct\": %s, \"repeated_checks\": %d, \"passed_on_repeat\": %d, " \
                 "\"unstable_checks\": %d,\n     \"attempts\": [%s],\n" % (
                     num(r.rule.spread), len(r.repeated), r.rescued, r.unstable, ", ".join(
                         "{\"size_bytes\": %d, \"outcome\": %s, \"spread_pct\": %s, \"attempts\": [%s]}" % (
                             ts[0].size, json_str(o), num(sp), ", ".join(
                                 "{\"attempt\": %d, \"pass\": %s, \"value\": %s, \"why\": %s}" % (
                                     t.attempt, "true" if t.ok else "false", val(r, t.value), json_str(t.why))
                                 for t in ts)) for o, ts, sp in r.repeated[:KEPT]))
            s += "     \"failures\": [%s],\n     \"message\": %s}" % (", ".join(
                "{\"size_bytes\": %d, \"value\": %s, \"threshold\": %s, \"why\": %s}" % (
                    c.size, val(r, c.value), val(r, c.threshold), json_str(c.why)) for c in r.failures),
                json_str(r.message))
            rules.append(s)
        out.append(",".join(rules))
        out.append("\n  ]\n}\n")
        return "".join(out)

    def junit(self, profile_name: str, now: float) -> str:
        nnodata, ninvalid = self.count("NODATA"), self.count("INVALID")
        nfail = self.count("FAIL")
        if self.test_hook:
            nfail, nnodata, ninvalid = 0, 0, len(self.rules)  # a test's rows: nothing could be judged
        elif self.simulated:
            nfail = len(self.rules) - nnodata - ninvalid      # nothing measured on a simulator passes
        # An unreadable doctor.json is a test case of its own, in error: CI must not read "all passed".
        extra = 1 if self.doctor_unread else 0
        out = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
               "<testsuites name=\"gdrbench\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n" % (
                   len(self.rules) + extra, nfail + nnodata, ninvalid + extra),
               "  <testsuite name=\"gdrb-accept %s\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" "
               "timestamp=\"%s\">\n" % (xml_str(profile_name), len(self.rules) + extra, nfail + nnodata,
                                        ninvalid + extra, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)))]
        if extra:
            why = xml_str("; ".join(self.doctor_unread)[:2000])
            out.append("    <testcase classname=\"gdrbench.evidence\" name=\"doctor.json\" time=\"0\">\n"
                       "      <error type=\"invalid\" message=\"doctor.json could not be read\">%s</error>\n"
                       "    </testcase>\n" % why)
        for r in self.rules:
            where, msg = xml_str(r.rule.where), xml_str(r.message)
            out.append("    <testcase classname=\"gdrbench.%s\" name=\"%s\" time=\"0\">\n" % (
                xml_str(r.rule.bench), xml_str(r.rule.name + ": " + r.rule_text())))
            # Data that are not numbers: a JUnit error (the test could not run), not a failure.
            if self.test_hook:
                hook = xml_str(self.test_hook)
                out.append("      <error type=\"test-hook\" message=\"measured with the %s active\">%s (%s)</error>\n"
                           % (hook, msg, where))
            elif r.verdict == "INVALID":
                out.append("      <error type=\"invalid\" message=\"%s\">%s (%s)</error>\n" % (msg, msg, where))
            elif self.simulated and r.verdict != "NODATA":
                out.append("      <failure type=\"simulated\" message=\"measured on a simulator\">%s (%s)</failure>\n"
                           % (msg, where))
            elif r.verdict != "PASS":
                out.append("      <failure type=\"%s\" message=\"%s\">%s (%s)</failure>\n" % (
                    "nodata" if r.verdict == "NODATA" else "threshold", msg, msg, where))
            else:
                out.append("      <system-out>%s</system-out>\n" % msg)
            out.append("    </testcase>\n")
        out.append("  </testsuite>\n</testsuites>\n")
        return "".join(out)


# --- the command ---------------------------------------------------------------------

@dataclass
class Options:
    link_rate: Optional[str] = None
    verdict: str = ""
    junit: str = ""
    quiet: bool = False
    args: List[str] = field(default_factory=list)
    help: bool = False


def parse_args(argv: List[str]) -> Options:
    o = Options()
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if a == "--link-rate":
            if not decimal(nxt):
                # A finite decimal above 0 (common.decimal: at most 30 digits each side of the point).
                raise usage_error("--link-rate: expected the port rate in Gb/s, e.g. 400, got '%s'"
                                  % (nxt if len(nxt) <= 40 else nxt[:40] + "..."))
            o.link_rate = nxt
            i += 1
        elif a in ("--verdict", "--junit"):
            if not nxt:
                raise usage_error("%s: expected a file name" % a)
            setattr(o, a[2:], nxt)
            i += 1
        elif a in ("-q", "--quiet"):
            o.quiet = True
        elif a in ("-h", "--help"):
            o.help = True
            return o
        elif a == "--":
            o.args += argv[i + 1:]
            break
        elif a.startswith("-"):
            raise usage_error("unknown option '%s'; see --help" % a)
        else:
            o.args.append(a)
        i += 1
    if len(o.args) != 2:
        raise usage_error("expected RESULTS_DIR PROFILE, e.g. 'gdrb accept results/20261121-quick gdr-effectiveness'; "
                          "see --help")
    return o


def _dirname(p: str) -> str:
    """dirname(1)'s answer."""
    s = p.rstrip("/")
    if not s:
        return "/"
    if "/" not in s:
        return "."
    return s[:s.rindex("/")].rstrip("/") or "/"


def _meta(path: str) -> Json:
    """meta.json (the port rates), read by the one reader of evidence; refused (exit 2) in
    one line where it cannot be read or is not JSON."""
    try:
        return evidence.read_json(path)
    except OSError as e:
        raise usage_error("%s: cannot read: %s" % (path, e.strerror or "read error"))
    except ValueError as e:
        raise usage_error("%s: not JSON: %s" % (path, e))


def main(argv: List[str]) -> int:
    o = parse_args(argv)
    if o.help:
        common.print_help(__doc__)
        return common.EXIT_OK
    arg = o.args[0]
    if os.path.isdir(arg) and not os.path.isfile(os.path.join(arg, "results.csv")) and pairs.matrix_files(arg):
        csv_path = ""        # gdrb_mpi_pairs run by hand: only its matrices
        results = arg.rstrip("/") or "/"
    else:
        csv_path = common.results_csv(arg)
        results = _dirname(csv_path)
    profile_file = common.resolve_profile(o.args[1])
    prof = profiles.load(profile_file)
    if not prof.rules:
        raise usage_error("%s: no rule lines: nothing to accept against (rules: see --help)" % profile_file)
    meta_path = results + "/meta.json"
    meta = _meta(meta_path) if os.path.lexists(meta_path) else None
    judge = Judge(prof.rules, csv_path, float(o.link_rate) if o.link_rate is not None else None, meta, results)
    if csv_path:
        rows = list(common.read_csv(csv_path))
        if judge.spans and set(judge.spans) != {n for n, _ in rows}:
            # Steps that do not account for the rows: no attempts, every row a check of its own.
            common.say("%s: its steps do not account for the rows of %s: each row judged on its own, "
                       "no attempts" % (meta_path, csv_path))
            judge.spans = {}
        judge.read(iter(rows))
    verdict = judge.finish()

    name = profile_file[:-len(".profile")] if profile_file.endswith(".profile") else profile_file
    name = os.path.basename(name.rstrip("/")) or "/"
    verdict_file = o.verdict or results + "/verdict.json"
    junit_file = o.junit or results + "/verdict.xml"
    now = time.time()
    # The verdict is printed first: files that cannot be written take nothing from it.
    sys.stdout.write(common.term(verdict.summary()) + "\n" if o.quiet else verdict.text())
    sys.stdout.flush()
    try:
        write_all([(verdict_file, verdict.json(name, results, now)), (junit_file, verdict.junit(name, now))],
                  devices=[f for f in (o.verdict, o.junit) if f])
    except common.Stop:
        # write_all said which file, in one line. INVALID stays 3: the results could not be judged.
        return common.EXIT_INVALID if verdict.status == common.EXIT_INVALID else common.EXIT_FAIL
    if not o.quiet:
        common.say("verdict in %s and %s" % (verdict_file, junit_file))
    return verdict.status
