"""What the nodes' NIC and PCIe counters and the doctor say about a run (docs/counters.md):
the counter files beside the results (results.counters.csv and any other *.counters.csv) and
doctor.json, read as untrusted input, turned into the evidence `gdrb accept` attaches to a
suspect node or link, and into the `counters` rule's judgement.

Error counters are judged two ways, as the provider allows:
  - hardware that counts zero on a healthy link (mlx5, efa and every other provider but the
    two below): any rise is named;
  - software RDMA (rxe, siw) retransmits even on a clean link: a node is named only when its
    errors per packet moved stand RELATIVE times above the median of the other nodes of the
    same run (at least MIN_SOFT errors); with fewer than two such nodes nothing is named, and
    the rises are reported as not judged.
And by pair, where the all-pairs latency rows say what each pair's two ends counted while it
alone was measured (pairs.csv's nic_errors and nic_packets): a node whose every pair counted
errors per packet RELATIVE_PAIRS times above the median of the pairs without it (at least
MIN_PAIRS errors in them on software RDMA; any on hardware) is named, whatever its whole-run rate:
with three nodes a lossy node's peers meet it in half their pairs and retry as often as it does.
A pair's rate is its own pair's, not a node's mixed over its peers, so the bar is lower.
Congestion counters (pause frames and ECN marks from the RoCE netdev's ethtool statistics,
CNPs from hw_counters/) are never judged: where they rose on a suspect's node, the suspect's
causes say "congestion", apart from its errors."""
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, List, Optional, Tuple

from . import common, evidence, pairs
from .common import Json

SOFT = re.compile(r"(rxe|siw)")       # software RDMA devices: rxe0, siw_eth0, ...
RELATIVE = 10.0                       # a soft node's errors per packet over the others' median
MIN_SOFT = 100                        # fewer errors than that on a soft device: never named
RELATIVE_PAIRS = 3.0                  # each of a node's pairs' errors per packet over the pairs without it
MIN_PAIRS = 20                        # fewer errors than that in a soft node's pairs: never named by pair
PACKETS = re.compile(r"(packets|pkts)$")
LIMIT = 256 << 20                     # the largest counter file accept reads
_schema: List[common.Schema] = []


def counters_schema() -> common.Schema:
    """The counter file's columns, from their one definition (common/core/counters_schema.def)."""
    if not _schema:
        _schema.append(common.Schema(common.SCHEMA_DEF.parent / "counters_schema.def", "GDRB_COUNTERS_COL"))
    return _schema[0]


def counter_lines(path: str, limit: Optional[int] = None) -> List[str]:
    """The rows of the counter file PATH as lines, for the sweep to gather (evidence.read_bytes:
    undecodable bytes kept as surrogates): its header checked, a last line without its newline
    (a run cut short, whose rows the sweep does not keep) left out. Raises FileNotFoundError
    where there is none, OSError with the reason where it is a link, not a regular file (never
    waited on), over LIMIT bytes or not a counter file."""
    data = evidence.read_bytes(path, LIMIT if limit is None else limit)
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    if lines[0] not in counters_schema().versions:
        raise OSError(0, "not a counter file of this gdrbench (another header)")
    if lines[0] != counters_schema().header:
        raise OSError(0, "a counter file of an older gdrbench (another header)")
    return [line for line in lines[1:-1] if line]


STATES = ("ok", "unreadable", "reset", "vanished")     # counters_schema.def's state column
CLASSES = ("error", "congestion", "traffic", "other", "link")


@dataclass
class Node:
    """One node's readings over every run of the results."""
    errors: Dict[Tuple[str, str, str], int] = field(default_factory=dict)   # (device, port, counter)
    # The congestion counters' rises (pause frames, ECN marks, CNPs: the fabric slowing this
    # node's traffic by design), a cause of a slow rail that is not an error.
    congestion: Dict[Tuple[str, str, str], int] = field(default_factory=dict)
    packets: Dict[Tuple[str, str], int] = field(default_factory=dict)       # (device, port)
    links: Dict[Tuple[str, str], Dict[str, int]] = field(default_factory=dict)   # (device, PCI): name -> value
    judged: bool = False    # an error counter of this node was read (state ok)
    # "mlx5_0 port 1 symbol_error" of each error or packet counter in state vanished,
    # unreadable, reset, each once, in the order read.
    vanished: Dict[str, None] = field(default_factory=dict)
    unreadable: Dict[str, None] = field(default_factory=dict)
    resets: Dict[str, None] = field(default_factory=dict)

    def soft(self) -> bool:
        """Every device that counted errors here is software RDMA."""
        devs = {d for d, _, _ in self.errors}
        return bool(devs) and all(SOFT.match(d) for d in devs)

    def soft_nic(self) -> bool:
        """Some device that counted here (errors or packets) is software RDMA."""
        return any(SOFT.match(d) for d, _, _ in self.errors) or any(SOFT.match(d) for d, _ in self.packets)

    def error_total(self) -> int:
        return sum(self.errors.values())

    def rate(self) -> float:
        """Errors per packet moved (0 with no packet counted)."""
        moved = sum(self.packets.values())
        return self.error_total() / moved if moved else 0.0

    def rises(self, most: int = 4, which: str = "errors") -> str:
        """"mlx5_3 port 1 link_downed +2, symbol_error +880": the largest rises of the error
        (or, WHICH "congestion", congestion) counters first."""
        items = sorted(getattr(self, which).items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join("%s port %s %s +%d" % (d, p, c, v) for (d, p, c), v in items[:most])
        return text + (", and %d more" % (len(items) - most) if len(items) > most else "")

    def downtrained(self) -> List[str]:
        """"PCIe 0000:1b:00.0 (gpu) x8 of x16" for each link below what both of its ends allow."""
        out = []
        for (dev, pci), v in sorted(self.links.items()):
            cur, most = v.get("current_link_width"), min(
                [w for w in (v.get("max_link_width"), v.get("upstream_max_link_width")) if w] or [0])
            if cur and most and cur < most:
                out.append("PCIe %s (%s) x%d of x%d" % (pci, dev, cur, most))
        return out


@dataclass
class Pair:
    """What the two ends of one pair of nodes counted while that pair's latency was measured."""
    errors: int = 0
    packets: int = 0
    soft: bool = False          # either end's NIC is software RDMA

    def rate(self) -> float:
        return self.errors / self.packets if self.packets else 0.0


@dataclass
class Evidence:
    """The counters and the doctor of a results directory, by node."""
    nodes: Dict[str, Node] = field(default_factory=dict)
    doctor: Dict[str, List[str]] = field(default_factory=dict)   # node -> "FAIL acs" ...
    pairs: Dict[Tuple[str, str], Pair] = field(default_factory=dict)   # (node, node), sorted
    files: int = 0              # counter files read
    has_doctor: bool = False
    # What a rule needed and could not read (evidence.Fault): the counter files' and the pairs
    # CSV's rows (the counters rule's evidence), doctor.json (a suspect's causes).
    faults: evidence.Faults = field(default_factory=evidence.Faults)
    doctor_faults: evidence.Faults = field(default_factory=evidence.Faults)

    def judged_nodes(self) -> List[str]:
        """The nodes an error counter was read on (state ok), or that moved packets."""
        return sorted(h for h, n in self.nodes.items() if n.judged or n.packets or n.errors)

    def states(self, which: str) -> List[str]:
        """"node: mlx5_0 port 1 symbol_error" of each error or packet counter in state WHICH
        (vanished, unreadable, reset), each once."""
        return ["%s: %s" % (h, c) for h in sorted(self.nodes)
                for c in getattr(self.nodes[h], "resets" if which == "reset" else which)]

    def looked(self) -> bool:
        """Whether there was anything to look at: without it a suspect's causes are not said."""
        return self.files > 0 or self.has_doctor or bool(self.pairs)

    def named(self) -> Dict[str, str]:
        """The nodes whose error counters rose beyond what their provider allows, with why."""
        return self._judged[0]

    def unjudged(self) -> List[str]:
        """Software RDMA nodes whose errors rose with no other node to compare them with."""
        return self._judged[1]

    def by_pair(self) -> Dict[str, str]:
        """The nodes whose every pair counted errors per packet RELATIVE_PAIRS times above the
        pairs without them, with why (module docstring)."""
        return self._pair_judged

    @cached_property
    def _pair_judged(self) -> Dict[str, str]:
        out: Dict[str, str] = {}
        # Software RDMA anywhere in the results (its NIC column, or its counters): relative only.
        soft = any(p.soft for p in self.pairs.values()) or any(n.soft_nic() for n in self.nodes.values())
        for h in sorted({h for k in self.pairs for h in k}):
            mine = [p for k, p in self.pairs.items() if h in k]
            others = sorted(p.rate() for k, p in self.pairs.items() if h not in k and p.packets)
            errors, moved = sum(p.errors for p in mine), sum(p.packets for p in mine)
            if not others or not all(p.packets for p in mine):
                continue
            if errors < (MIN_PAIRS if soft else 1):
                continue
            median = others[len(others) // 2]
            if all(p.errors and p.rate() > RELATIVE_PAIRS * median for p in mine):
                factor = "%.0fx the pairs without it" % (errors / moved / median) if median > 0 else \
                    "the pairs without it none"
                out[h] = "in its %d pairs' latency phases %d errors in %d packets (%s per packet: %s)" % (
                    len(mine), errors, moved, common.sig3(errors / moved), factor)
        return out

    @cached_property
    def _judged(self) -> Tuple[Dict[str, str], List[str]]:
        """Every node judged once, after load() has read them all."""
        out: Dict[str, str] = {}
        alone: List[str] = []
        soft = {h: n for h, n in self.nodes.items() if n.errors and n.soft()}
        for h, n in self.nodes.items():
            if n.errors and h not in soft:
                out[h] = n.rises()
        for h, n in soft.items():
            # The other nodes that moved packets over software RDMA in the same results.
            others = sorted(m.rate() for k, m in self.nodes.items() if k != h and m.packets
                            and all(SOFT.match(d) for d, _ in m.packets))
            if not others:
                alone.append("%s: %s" % (h, n.rises()))
                continue
            if n.error_total() < MIN_SOFT:
                continue
            median = others[len(others) // 2]
            if n.rate() > RELATIVE * median:
                factor = "%.0fx" % (n.rate() / median) if median > 0 else "the others none"
                out[h] = "%s (%s errors per packet: %s the other nodes' median)" % (
                    n.rises(), common.sig3(n.rate()), factor)
        # By pair: a node the whole-run rates could not single out, with what rose on it.
        for h, why in self._pair_judged.items():
            n = self.nodes.get(h)
            if h in out:
                out[h] += "; " + why
            else:
                out[h] = (n.rises() + " over the run; " if n is not None and n.errors else "") + why
        alone = [a for a in alone if a.split(": ", 1)[0] not in self._pair_judged]
        return out, sorted(alone)

    def causes(self, host: str) -> List[str]:
        """What the counters and the doctor found on HOST."""
        out = []
        named = self.named()
        n = self.nodes.get(host)
        if host in named:
            out.append(named[host])
        if n is not None and n.congestion:
            out.append("congestion (not errors): " + n.rises(which="congestion"))
        if n is not None:
            out += n.downtrained()
        if self.doctor.get(host):
            out.append("doctor: " + ", ".join(self.doctor[host]))
        return out


def _read_counter_file(ev: Evidence, path: str, seen: Dict[Tuple[str, ...], int]) -> None:
    """Every row of the counter file PATH; what a row holds that the counters rule cannot read
    is a fault of EV (evidence.Faults), never skipped."""
    s = counters_schema()
    ix = s.index
    faults = ev.faults
    version, rows = evidence.read_table(path, s, faults, "a counter file")
    for lineno, f in rows:
        host = Json(f[ix["node"]]).text()
        dev, port, counter, cls = (Json(f[ix[k]]).text() for k in ("device", "port", "counter", "class"))
        state = f[ix["state"]]
        if not host:
            faults.add(path, lineno, "is empty: whose counter it is is not known", "node", f[ix["node"]])
            continue
        if state not in STATES:
            faults.add(path, lineno, "is not one of %s" % ", ".join(STATES), "state", state)
            continue
        if cls not in CLASSES:
            faults.add(path, lineno, "is not one of %s" % ", ".join(CLASSES), "class", cls)
            continue
        n = ev.nodes.setdefault(host, Node())
        if state != "ok":
            # The rule reads the error counters and the packets moved: theirs is its evidence.
            if cls == "error" or (cls == "traffic" and PACKETS.search(counter)):
                getattr(n, "resets" if state == "reset" else state)["%s port %s %s" % (dev, port, counter)] = None
            continue
        if cls == "link":
            after = faults.count(path, lineno, "after", f[ix["after"]])
            if after is not None:
                n.links.setdefault((dev, port), {})[counter] = after
            continue
        delta = faults.count(path, lineno, "delta", f[ix["delta"]])
        if delta is None:
            continue
        if cls == "error":
            n.judged = True
        if not delta:
            continue
        # Ranks of one node that read one port read the same counter: once per run. A run is
        # its run_id (one per launch); a version 1 file has none, and its run_start stands in.
        run = f[ix["run_id"]] if version > 1 else "start " + f[ix["run_start"]]
        key = (run, f[ix["benchmark"]], host, dev, port, f[ix["source"]], counter)
        if seen.get(key, 0) >= delta:
            continue
        add = delta - seen.get(key, 0)
        seen[key] = delta
        if cls == "error":
            n.errors[(dev, port, counter)] = n.errors.get((dev, port, counter), 0) + add
        elif cls == "congestion":
            n.congestion[(dev, port, counter)] = n.congestion.get((dev, port, counter), 0) + add
        elif cls == "traffic" and PACKETS.search(counter):
            n.packets[(dev, port)] = n.packets.get((dev, port), 0) + add


def _read_pairs_csv(ev: Evidence, path: str) -> None:
    """The latency rows of an all-pairs CSV that say what their pair's ends counted. An empty
    nic_errors or nic_packets is no counter read there (claims nothing); a figure that is not
    a count, or a row that cannot be read, is a fault of EV."""
    s = pairs.pairs_schema()
    faults = ev.faults
    version, rows = evidence.read_table(path, s, faults, "a pairs CSV")
    ix = s.index
    for lineno, f in rows:
        if f[ix["metric"]] != "lat" or (f[ix["nic_errors"]] == "" and f[ix["nic_packets"]] == ""):
            continue
        errors = faults.count(path, lineno, "nic_errors", f[ix["nic_errors"]])
        packets = faults.count(path, lineno, "nic_packets", f[ix["nic_packets"]])
        a, b = Json(f[ix["src_host"]]).text(), Json(f[ix["dst_host"]]).text()
        if errors is None or packets is None:
            continue
        if a == b or not a or not b:
            if not a or not b:
                faults.add(path, lineno, "is empty: whose pair it is is not known", "src_host" if not a else "dst_host")
            continue
        p = ev.pairs.setdefault((min(a, b), max(a, b)), Pair())
        p.errors += errors
        p.packets += packets
        p.soft = p.soft or any(SOFT.match(f[ix[k]]) for k in ("src_nic", "dst_nic"))


def _doctor_checks(d: Json, path: str, faults: evidence.Faults) -> None:
    """Where doctor.json is not of either shape (below), a fault: what it says is not read."""
    if d.is_array("nodes"):
        for i in range(d.count("nodes")):
            if not isinstance(d.get("nodes", i, "checks"), dict) or not d.text("nodes", i, "host"):
                faults.add(path, 0, "nodes[%d] has no host and checks object: not a doctor's report" % i)
                return
        return
    if not d.is_array("checks") or not d.text("host"):
        faults.add(path, 0, "neither \"nodes\" nor \"host\" and \"checks\": not a doctor's report")
        return
    for i in range(d.count("checks")):
        if not isinstance(d.get("checks", i), dict) or d.text("checks", i, "verdict") == "":
            faults.add(path, 0, "checks[%d] has no verdict: not a doctor's report" % i)
            return


def _read_doctor(ev: Evidence, path: str) -> None:
    d = evidence.read_json(path)
    ev.has_doctor = True
    _doctor_checks(d, path, ev.doctor_faults)
    if d.count("nodes"):            # gdrb_doctor_mpi: each node's checks by name
        for i in range(d.count("nodes")):
            checks = d.get("nodes", i, "checks")
            bad = ["%s %s" % (v, k) for k, v in (checks.items() if isinstance(checks, dict) else [])
                   if isinstance(k, str) and v in ("FAIL", "WARN")]
            if bad:
                ev.doctor[d.text("nodes", i, "host")] = [Json(b).text() for b in sorted(bad)]
        return
    bad = ["%s %s: %s" % (d.text("checks", i, "verdict"), d.text("checks", i, "name"), d.text("checks", i, "evidence"))
           for i in range(d.count("checks")) if d.text("checks", i, "verdict") in ("FAIL", "WARN")]
    if bad:
        ev.doctor[d.text("host")] = bad


def load(results_dir: str) -> Evidence:
    """The evidence of RESULTS_DIR: every *.counters.csv in it, pairs.csv and doctor.json. A
    file or a row that cannot be read is a fault (Evidence.faults, doctor_faults), never
    taken as "nothing rose"."""
    ev = Evidence()
    try:
        names = sorted(os.listdir(results_dir))
    except OSError:
        return ev
    seen: Dict[Tuple[str, ...], int] = {}
    for name in names:
        path = os.path.join(results_dir, name)
        faults = ev.doctor_faults if name == "doctor.json" else ev.faults
        try:
            if name.endswith(".counters.csv"):
                ev.files += 1
                _read_counter_file(ev, path, seen)
            elif name == "doctor.json":
                _read_doctor(ev, path)
            elif name == pairs.PAIRS_CSV:
                _read_pairs_csv(ev, path)
        except (OSError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            faults.add(path, 0, why)
    return ev


def explain(ev: Optional[Evidence], hosts: List[str]) -> str:
    """The causes found on HOSTS (a node's one, a link's two), or that none explains it, and
    what of the evidence could not be read; "" when the results hold neither counters nor a
    doctor's report."""
    if ev is None or not (ev.looked() or ev.faults or ev.doctor_faults):
        return ""
    found = ["%s: %s" % (h, " / ".join(c)) for h in hosts for c in [ev.causes(h)] if c]
    text = "causes: " + " and ".join(found) if found else "no counter or check explains it"
    unread = evidence.Faults(ev.faults.items + ev.doctor_faults.items, len(ev.faults) + len(ev.doctor_faults))
    return text + (" (%s)" % unread.message() if unread else "")
