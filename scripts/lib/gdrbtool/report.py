"""Write summary.md and report.html for a results directory: the verdict on top (when
gdrb-accept has written verdict.json), the run and its command, the environment of each
node (from meta.json), the steps of the sweep, and per benchmark and memory kind (a
collective's in-place rows apart) a table with every path side by side and the
staged/direct ratio, next to its figure. report.html
is self-contained: the PNG figures are embedded (base64), so it can be mailed or attached.
NCCL rows get a table of the path NCCL took (transport, gdr_connections, library: whether
GPUDirect RDMA carried the bytes), a line per run. All-pairs matrices (pairs-*.csv,
docs/pairs.md) get a section: each matrix's summary, the suspects the verdict named, its
heat map, and the matrix itself up to 16 ranks. GPU-to-GPU rows (gdrb_copy_bw --p2p, pair
gpuI->gpuJ; p2p.py) get a section too: at the largest size measured, a matrix per path from
GPU to GPU, the ratio direct / staged, why a pair could not run, and the heat maps.
gdrb-sweep runs this last; run it by hand after gdrb-accept or gdrb-plot to refresh.

  gdrb report RESULTS_DIR

An empty value shows as n/a, a value that is not a number as invalid (listed with its file and
line), never as 0.

Exit: 0 done, 1 cannot write (one line naming the file; nothing half-written is left),
2 bad usage or input (one line naming the file and line).
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple, Union

from . import common, p2p, pairs
from .common import Json, awk_value, is_latency, path_rank, write_all

# Tables use the aggregate rows (pair=all), the GPU-to-GPU section the rows of GPU pairs; when a size was measured more than once, the last
# row is shown. An empty value (no figure) shows as "n/a"; a value that is not a number of its
# column as "invalid 'VALUE'", listed below the table with its file and line; a row whose size
# is not one is left out and listed. Never a 0 for either.

SHOWN = ("lat_p50_us", "lat_p99_us", "bw_GBps", "busbw_GBps")

STYLE = (
    "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}\n"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:90%}\n"
    "th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0}\n"
    "table.num td,table.num th{text-align:right}table.num td:first-child,table.num th:first-child{text-align:left}\n"
    "tr.fail td{background:#fde0dc}tr.nodata td{background:#fff3cd}\n"
    ".verdict{font-size:150%;font-weight:bold;padding:0.4em 0.6em;margin:0.5em 0;border-radius:4px}\n"
    ".verdict span{font-size:60%;font-weight:normal}.pass{background:#d4edda}.fail{background:#f8d7da}\n"
    ".invalid{background:#f8d7da}tr.invalid td{background:#fde0dc}\n"
    "img{max-width:100%;border:1px solid #eee}\n")


# --- the results -----------------------------------------------------------------

@dataclass
class Point:
    """The last aggregate row of one path and size."""
    status: str
    note: str
    p50: str
    p99: str
    bw: str
    busbw: str


@dataclass
class Group:
    """One benchmark and memory kind: one table and one figure; a collective's in-place rows
    are a group of their own, so that its staged/direct ratio compares like with like."""
    bench: str
    mem: str
    in_place: bool = False
    paths: Set[str] = field(default_factory=set)
    points: Dict[Tuple[str, int], Point] = field(default_factory=dict)
    has_busbw: bool = False


@dataclass
class Transport:
    """Consecutive aggregate NCCL rows (one run, mostly) that say the same of the path NCCL
    took: their sizes, transport, gdr_connections, library and the note's word on it."""
    bench: str
    mem: str
    path: str
    status: str
    transport: str
    gdr: str
    library: str
    why: str                     # the note's "GPUDirect allowed but ..." or "transport unknown: ..."
    first: int = 0
    last: int = 0
    count: int = 0

    def key(self) -> Tuple[str, ...]:
        return (self.bench, self.mem, self.path, self.status, self.transport, self.gdr, self.library, self.why)

    def carried(self) -> str:
        """Whether GPUDirect RDMA carried the bytes, in words."""
        if self.status != "ok":
            return "not measured (status %s)" % self.status
        if self.transport == "unknown":
            return "unknown: " + (self.why or "NCCL's log could not be read")
        counts = common.gdr_connections(self.gdr)
        if counts is None:
            return "-" if self.gdr == "" else "invalid '%s'" % self.gdr
        used, total = counts
        if total == 0:
            return "no network connection"
        if self.path == "staged":
            if used == 0:
                return "no, as asked (GPUDirect off: staged through host memory)"
            return "yes, though switched off: " + (self.why or "GDRDMA on %d of %d network connections" % (used, total))
        if used == total:
            return "yes, every network connection"
        return "no: " + (self.why or "GDRDMA on %d of %d network connections" % (used, total))


# The NCCL note parts that say why GPUDirect did not carry the bytes (docs/nccl.md), whole.
_TRANSPORT_WHY = re.compile("|".join(re.escape(m) for m in (
    common.NCCL_GDR_UNUSED, common.NCCL_GDR_OFF_USED, common.NCCL_TRANSPORT_UNKNOWN)))


@dataclass
class Results:
    groups: List[Group] = field(default_factory=list)
    transports: List[Transport] = field(default_factory=list)    # NCCL rows, in file order
    # (column, value) -> "FILE:LINE: COLUMN 'VALUE' is WHY" where it was first read.
    bad_where: Dict[Tuple[str, str], str] = field(default_factory=dict)
    bad_sizes: List[str] = field(default_factory=list)
    p2p: p2p.Nodes = field(default_factory=dict)      # the GPU pairs (gdrb_copy_bw --p2p)


def read_results(csv_path: str) -> Results:
    s = common.schema()
    col = s.index
    i_pair, i_size, i_bench, i_mem, i_path = col["pair"], col["size_bytes"], col["benchmark"], col["mem"], col["path"]
    i_status, i_note = col["status"], col["note"]
    i_layer, i_transport, i_gdr, i_lib = col["layer"], col["transport"], col["gdr_connections"], col["library"]
    i_place = col["placement"]
    i_p50, i_p99, i_bw, i_busbw = (col[c] for c in SHOWN)
    shown = [(c, col[c]) for c in SHOWN]
    res = Results()
    groups: Dict[Tuple[str, str, bool], Group] = {}
    for lineno, f in common.read_csv(csv_path):
        gpus = p2p.gpu_pair(f[i_pair])
        if f[i_pair] != "all" and gpus is None:
            continue
        size = f[i_size]
        why = "empty" if size == "" else s.value_fault("size_bytes", size)
        if why:
            res.bad_sizes.append("%s:%d: size_bytes '%s' is %s" % (csv_path, lineno, size, why))
            continue
        if gpus is not None:
            p2p.add_row(res.p2p, f, col, int(size), gpus)
            v = f[i_bw]
            if v != "" and ("bw_GBps", v) not in res.bad_where and s.value_fault("bw_GBps", v):
                res.bad_where[("bw_GBps", v)] = "%s:%d: bw_GBps '%s' is %s" % (
                    csv_path, lineno, v, s.value_fault("bw_GBps", v))
            continue
        key = (f[i_bench], f[i_mem], f[i_place] == common.IN_PLACE)
        g = groups.get(key)
        if g is None:
            g = groups[key] = Group(*key)
            res.groups.append(g)
        status = f[i_status]
        g.paths.add(f[i_path])
        g.points[(f[i_path], int(size))] = Point(status, "" if status == "ok" else f[i_note],
                                                 f[i_p50], f[i_p99], f[i_bw], f[i_busbw])
        if f[i_busbw] != "":
            g.has_busbw = True
        if f[i_layer] == "nccl" or f[i_transport] != "":
            why = pairs.note_match(f[i_note], _TRANSPORT_WHY) or ""
            t = Transport(f[i_bench], f[i_mem], f[i_path], status, f[i_transport], f[i_gdr], f[i_lib], why)
            last = res.transports[-1] if res.transports else None
            if last is None or last.key() != t.key():
                t.first = int(size)
                res.transports.append(t)
                last = t
            last.last, last.count = int(size), last.count + 1
        for name, i in shown:
            v = f[i]
            if v != "" and (name, v) not in res.bad_where:
                why = s.value_fault(name, v)
                if why:
                    res.bad_where[(name, v)] = "%s:%d: %s '%s' is %s" % (csv_path, lineno, name, v, why)
    return res


# --- both files at once ------------------------------------------------------------

def esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# What Markdown (CommonMark, GFM tables) reads as markup inside a line: a backslash, code,
# emphasis (an underscore only at a word's edge: inside a word it never is), links and
# images, table cells, strikethrough. '<' (a tag, an autolink) and an '&' that starts an
# entity are written as entities: every renderer shows those as text, none passes raw HTML.
_MD_MARKUP = re.compile(r"[\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def md(s: str) -> str:
    """S (from the data) as Markdown text within a line that renders as S itself: no HTML, no
    link, no emphasis, no table cell ends; control characters (line breaks among them) as
    spaces."""
    s = _MD_ENTITY.sub("&amp;", common.CONTROLS.sub(" ", s)).replace("<", "&lt;")
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), s)


def md_line(s: str) -> str:
    """md(S) for a line of its own: nor a heading, list, quote or setext line it starts."""
    s = md(s)
    return "\\" + s if s[:1] in ("#", "+", "-", "=", ">") or re.match(r"[0-9]+[.)]", s) else s


def verdict_class(verdict: str) -> str:
    """A table row's class for a doctor's verdict: FAIL red, WARN yellow."""
    return {"FAIL": "fail", "WARN": "nodata"}.get(verdict, "")


class Report:
    """summary.md and report.html, written side by side: out(MD, HTML) adds a line to each
    (None: nothing to that one)."""

    def __init__(self, meta: Json, verdict: Optional[Json], results: Results, plots: str):
        self.meta = meta
        self.verdict = verdict
        self.results = results
        self.plots = plots
        self.md: List[str] = []
        self.html: List[str] = []
        self.bad_seen: Set[Tuple[str, str]] = set()
        self.bad_list: List[str] = []
        self.matrices: Optional[Tuple[List[pairs.Matrix], Optional[List[pairs.Rank]]]] = None
        self.simulated = ""      # the simulated GPU the matrices were measured on (pairs.csv's note)
        self.doctor: Union[Json, str, None] = None   # doctor.json, or why it cannot be read

    def out(self, md: Optional[str], html: Optional[str]) -> None:
        if md is not None:
            self.md.append(md + "\n")
        if html is not None:
            self.html.append(html + "\n")

    def para(self, text: str) -> None:
        self.out(md_line(text) + "\n", "<p>" + esc(text) + "</p>")

    def item(self, key: str, value: str) -> None:
        self.out("- %s: %s" % (md(key), md(value)), "<li><b>%s</b>: %s</li>" % (esc(key), esc(value)))

    def table_head(self, cells: List[str], numeric: bool) -> None:
        """NUMERIC: the columns after the first hold numbers (right-aligned in Markdown)."""
        self.out("|" + "".join(" %s |" % md(c) for c in cells),
                 "<table%s><tr>" % (' class="num"' if numeric else "")
                 + "".join("<th>%s</th>" % esc(c) for c in cells) + "</tr>")
        self.out("|" + "".join("---:|" if i > 0 and numeric else "---|" for i in range(len(cells))), None)

    def table_row(self, cells: List[str], cls: str = "") -> None:
        self.out("|" + "".join(" %s |" % md(c) for c in cells),
                 "<tr%s>" % (' class="%s"' % esc(cls) if cls else "")
                 + "".join("<td>%s</td>" % esc(c) for c in cells) + "</tr>")

    def table_end(self) -> None:
        self.out("", "</table>")

    # --- sections ----------------------------------------------------------------

    def build(self, name: str) -> None:
        self.out("# gdrbench results: %s\n" % md(name),
                 '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>gdrbench %s</title><style>\n'
                 '%s</style></head><body>\n<h1>gdrbench results: %s</h1>' % (esc(name), STYLE, esc(name)))
        if self.meta.j("status") == "interrupted":
            by = self.meta.j("interrupted_by")      # a signal's name, or nothing (an older sweep)
            self.para("This run was interrupted%s: the tables hold what was measured before."
                      % (" by " + by if re.fullmatch(r"SIG[A-Z0-9]{1,12}", by) else ""))
        # What an operator reads first: the verdict, what the doctor found on each node, the
        # suspects, the GPUDirect speedup; then the details of the run.
        self.verdict_section()
        self.doctor_section()
        self.pairs_section()
        self.p2p_section()
        self.results_section()
        self.transport_section()
        self.run_section()
        self.env_section()
        self.steps_section()
        self.out(None, "</body></html>")

    def verdict_section(self) -> None:
        v = self.verdict
        if v is None:
            return
        word = v.text("verdict")
        inv = ", %s invalid (values that are not numbers)" % v.text("invalid") if awk_value(v.text("invalid")) else ""
        counts = "%s of %s rules passed, %s failed, %s without data" % (
            v.text("passed"), v.text("rules_total"), v.text("failed"), v.text("nodata"))
        self.out("**Verdict: %s** (profile %s): %s%s.\n" % (md(word), md(v.text("profile")), md(counts), md(inv)),
                 '<div class="verdict %s">Verdict: %s <span>(profile %s): %s%s</span></div>'
                 % (esc(word.lower()), esc(word), esc(v.text("profile")), esc(counts), esc(inv)))
        for i in range(v.count("invalid_values")):
            self.para("Invalid: " + v.text("invalid_values", i, "message"))
        self.table_head(["verdict", "rule", "check", "result"], False)
        for i in range(v.count("rules")):
            def r(key: str) -> str:
                return v.text("rules", i, key)
            check = "%s (%s)" % (" ".join(w for w in (r("benchmark"), r("column"), r("op"), r("threshold")) if w),
                                 r("selection"))
            if r("kind") == "pairs":
                check = "%s %s pairs %s (%s)" % (r("benchmark"), "bw" if r("column").endswith("_GBps") else "lat",
                                                 r("threshold"), r("selection"))
            self.table_row([r("verdict"), r("name"), check, r("message")], r("verdict").lower())
        self.table_end()

    def doctor_section(self) -> None:
        """The doctor's checks (doctor.json): one table of every check and what it found for
        gdrb_doctor's one node; one row per node and a column per check for gdrb_doctor_mpi."""
        if self.doctor is None:
            return
        d = self.doctor
        self.out("\n## Doctor\n", "<h2>Doctor</h2>")
        if isinstance(d, str):
            self.para("doctor.json cannot be read: %s." % d)
            return
        if d.count("nodes") > 0:
            names: List[str] = []
            for i in range(d.count("nodes")):
                checks = d.get("nodes", i, "checks")
                for k in (checks if isinstance(checks, dict) else {}):
                    if k not in names:
                        names.append(k)
            self.para("gdrb_doctor_mpi on every node of the job: %s (docs/doctor.md says what each check means "
                      "and how to fix it)." % (d.text("verdict") or "no verdict"))
            self.table_head(["node", "verdict"] + [Json(k).text() for k in names], False)
            for i in range(d.count("nodes")):
                verdict = d.text("nodes", i, "verdict") or re.sub(r"^[^:]*: *([A-Z]+).*", r"\1",
                                                                  d.text("nodes", i, "summary"))
                self.table_row([d.text("nodes", i, "host") or "rank " + d.text("nodes", i, "rank"), verdict]
                               + [d.text("nodes", i, "checks", k) or "-" for k in names],
                               verdict_class(verdict))
            self.table_end()
            return
        self.para("gdrb_doctor on %s: %s (docs/doctor.md says what each check means)."
                  % (d.text("host") or "this node", d.text("verdict") or "no verdict"))
        self.table_head(["check", "verdict", "evidence", "fix"], False)
        for i in range(d.count("checks")):
            verdict = d.text("checks", i, "verdict")
            self.table_row(["%s: %s" % (d.text("checks", i, "id"), d.text("checks", i, "title")
                                        or d.text("checks", i, "name")),
                            verdict, d.text("checks", i, "evidence"),
                            d.text("checks", i, "fix") if verdict in ("FAIL", "WARN") else ""],
                           verdict_class(verdict))
        self.table_end()

    def run_section(self) -> None:
        j = self.meta.j

        def orq(s: str) -> str:
            return s or "unknown"

        desc = j("profile_description")
        self.out("## Run\n", "<h2>Run</h2><ul>")
        self.item("profile", orq(j("profile")) + (": " + desc if desc else ""))
        self.item("command", orq(j("sweep_command")))
        self.item("time", "%s to %s (%s%s)" % (orq(j("started")), j("finished") or "(not finished)", orq(j("status")),
                                              ", exit " + j("exit_status") if j("exit_status") else ""))
        hosts = ", ".join(self.meta.text("hosts", i) for i in range(self.meta.count("hosts")))
        self.item("launcher", "%s%s, %s ranks, hosts %s%s" % (
            orq(j("launcher")), " (%s)" % j("launcher_version") if j("launcher_version") else "", orq(j("np")),
            orq(hosts), ", Slurm job " + j("slurm_job_id") if j("slurm_job_id") else ""))
        self.item("gdrbench", orq(j("gdrbench_version")) + (" (git %s)" % j("gdrbench_git") if j("gdrbench_git") else ""))
        if j("doctor", "file"):
            self.item("gdrb_doctor", "exit %s, see %s" % (j("doctor", "exit"), j("doctor", "file")))
        self.out("", "</ul>")

    def env_section(self) -> None:
        m = self.meta
        n = m.count("nodes")
        if n == 0:
            return
        self.out("\n## Environment\n", "<h2>Environment</h2>")
        self.table_head(["host", "OS, kernel", "GPU driver", "CUDA driver / toolkit", "MPI", "rdma-core", "GPUs",
                         "RDMA ports"], False)
        for i in range(n):
            def t(*path: Any) -> str:
                return m.text("nodes", i, *path)

            def j(key: str) -> str:
                return m.j("nodes", i, key)

            gpus = "; ".join("%s: %s (%s, %s)" % (t("gpus", k, "index"), t("gpus", k, "name"), t("gpus", k, "pci_bus_id"),
                                                  t("gpus", k, "pci_id"))
                             for k in range(m.count("nodes", i, "gpus")))
            ports = []
            for k in range(m.count("nodes", i, "nics")):
                for p in range(m.count("nodes", i, "nics", k, "ports")):
                    ports.append("%s:%s %s %s %s (%s, %s)" % (
                        t("nics", k, "name"), t("nics", k, "ports", p, "port"), t("nics", k, "ports", p, "link_layer"),
                        t("nics", k, "ports", p, "rate"), re.sub(r"^[0-9]+: *", "", t("nics", k, "ports", p, "state")),
                        t("nics", k, "pci_bus_id"), t("nics", k, "pci_id")))
            self.table_row([j("hostname") or "unknown",
                            "%s, %s" % (j("os") or "unknown", j("kernel") or "unknown"),
                            j("gpu_driver") or "none",
                            "%s / %s" % (j("cuda_driver") or "none", j("cuda_toolkit") or "none"),
                            j("mpi") or "unknown",
                            j("rdma_core") or "none",
                            gpus or "none",
                            "; ".join(ports) or "none"])
        self.table_end()
        if m.j("node_info_error"):
            self.para("Node information: " + m.j("node_info_error"))

    def steps_section(self) -> None:
        m = self.meta
        n, nskipped = m.count("steps"), m.count("skipped")
        if n == 0 and nskipped == 0:
            return
        self.out("\n## Steps\n", "<h2>Steps</h2>")
        if n > 0:
            self.table_head(["#", "binary", "memory", "status", "rows", "time", "log"], False)
            for i in range(n):
                def t(key: str) -> str:
                    return m.text("steps", i, key)
                status, code = t("status"), t("exit")
                args = " ".join(t("args").split())      # two runs of one binary: NCCL's GPUDirect on and off
                self.table_row([t("n"), t("binary") + (" " + args if args else ""), t("mem"),
                                status + (" (exit %s)" % code if code not in ("0", "") else ""),
                                t("rows"), t("seconds") + " s", t("log")],
                               "" if status == "ok" else "fail" if status == "failed" else "nodata")
            self.table_end()
        if nskipped > 0:
            self.out("Skipped here:\n", "<p>Skipped here:</p><ul>")
            for i in range(nskipped):
                mem = m.j("skipped", i, "mem")
                self.item(m.text("skipped", i, "binary") + (" mem=" + mem if mem else ""),
                          m.text("skipped", i, "reason"))
            self.out("", "</ul>")

    def cell(self, column: str, v: str) -> str:
        """V for the tables: "n/a" when empty (no figure), "invalid 'V'" when not a number."""
        if v == "":
            return "n/a"
        if not common.schema().value_fault(column, v):
            return common.num_fmt(float(v))
        if (column, v) not in self.bad_seen:
            self.bad_seen.add((column, v))
            self.bad_list.append(self.results.bad_where.get((column, v), ""))
        return "invalid '%s'" % v

    @staticmethod
    def figure(column: str, v: str) -> Optional[float]:
        """V as a number when it is a figure (a valid value above 0), else None."""
        if v == "" or common.schema().value_fault(column, v):
            return None
        x = float(v)
        return x if x > 0 else None

    def pairs_section(self) -> None:
        """Each all-pairs matrix: its summary, the suspects the verdict named, its heat map, and
        the matrix itself up to 16 ranks."""
        if not self.matrices:
            return
        mats, ranks = self.matrices
        self.out("\n## All pairs\n", "<h2>All pairs</h2>")
        self.para("Rows send, columns receive (docs/pairs.md); an empty cell was not measured.")
        if self.simulated:
            self.para("Measured on %s, the test suite's simulated GPU: these matrices prove behaviour, "
                      "never speed." % self.simulated)
        suspects: Dict[str, List[str]] = {}
        v = self.verdict
        for i in range(v.count("rules") if v is not None else 0):
            for k in range(v.count("rules", i, "suspects")):
                suspects.setdefault(v.text("rules", i, "suspects", k, "matrix"), []).append(
                    "%s (rule %s)" % (v.text("rules", i, "suspects", k, "text"), v.text("rules", i, "name")))
        for m in mats:
            a = pairs.summarise(m, ranks)
            self.out("### %s\n" % md(m.title()), "<h3>%s</h3>" % esc(m.title()))
            self.para(a.summary() + ".")
            if m.name in suspects:
                self.out("Suspects:\n", "<p>Suspects:</p><ul>")
                for text in suspects[m.name]:
                    self.out("- " + md(text), "<li>%s</li>" % esc(text))
                self.out("", "</ul>")
            png = self.embed("%s/%s.png" % (self.plots, m.name))
            if png is not None:
                self.out("![%s](plots/%s.png)\n" % (md(m.title()), m.name),
                         '<img alt="%s" src="data:image/png;base64,%s">' % (esc(m.title()), png))
            if m.n <= 16:
                name = pairs.Namer(ranks, m.n)
                self.table_head(["src \\ dst"] + [name(d) for d in range(m.n)], True)
                for s_, row in enumerate(m.rows):
                    self.table_row([name(s_)] + ["" if x != x else common.num_fmt(x) for x in row])
                self.table_end()

    def p2p_section(self) -> None:
        """GPU to GPU inside a node, per benchmark and memory kind: at the largest size measured,
        a matrix per path and the ratio of each direct path to its staged twin, as the binary
        prints them, why a pair could not run, and each path's heat map."""
        if not self.results.p2p:
            return
        self.out("\n## GPU to GPU\n", "<h2>GPU to GPU</h2>")
        self.para("Copies between the node's GPUs (gdrb_copy_bw --p2p, docs/benchmarks.md): rows copy from, "
                  "columns copy to, GB/s; n/a where the path cannot run (no peer access), an empty cell was "
                  "not measured.")
        for node in self.results.p2p.values():
            size = node.largest()
            if node.simulated:
                self.para("Measured on %s, the test suite's simulated GPU: these matrices prove behaviour, "
                          "never speed." % node.simulated)
            for path in node.paths:
                self.p2p_matrix(node, "%s, %s memory, %s: %s GB/s" % (node.bench, node.mem, common.size_fmt(size), path),
                                node.grid(path, size, self.p2p_cell))
                count, first = node.why_not(path, size)
                if count:
                    self.para("%s: %d pair%s could not run (n/a); the note of %s" % (
                        path, count, "" if count == 1 else "s", first))
            for path in node.paths:
                twin = node.twin(path)
                if twin:
                    self.p2p_matrix(node, "%s, %s memory, %s: %s / %s" % (node.bench, node.mem, common.size_fmt(size),
                                                                         path, twin),
                                    node.ratio_grid(path, twin, size, lambda v: self.figure("bw_GBps", v)))
            for path in node.paths:
                base = p2p.figure_name(node.bench, node.mem, path, size)
                png = self.embed("%s/%s.png" % (self.plots, base))
                if png is not None:
                    title = "%s %s, %s" % (path, common.size_fmt(size), node.mem)
                    self.out("![%s](plots/%s.png)\n" % (md(title), base),
                             '<img alt="%s" src="data:image/png;base64,%s">' % (esc(title), png))

    def p2p_cell(self, c: p2p.Cell) -> str:
        """A GPU pair's cell: its figure, or what stands for it (as the binary's matrices show it)."""
        if c.status == "ok":
            return self.cell("bw_GBps", c.bw)
        return {"unsupported": "n/a", "invalid-data": "INVALID"}.get(c.status, c.status or "-")

    def p2p_matrix(self, node: p2p.Node, title: str, rows: List[List[str]]) -> None:
        self.out("### %s\n" % md(title), "<h3>%s</h3>" % esc(title))
        names = ["gpu%d" % g for g in node.order()]
        self.table_head(["from \\ to"] + names, True)
        for name, row in zip(names, rows):
            self.table_row([name] + row)
        self.table_end()

    def results_section(self) -> None:
        self.out("\n## Results\n", "<h2>Results</h2>")
        if not self.results.groups and self.matrices:
            self.para("No aggregate rows in results.csv (or none): the all-pairs matrices are below.")
            return
        if not self.results.groups:
            self.para("No aggregate rows in results.csv%s." % (
                ": the GPU-to-GPU matrices are above" if self.results.p2p else ""))
        for g in self.results.groups:
            self.group_table(g)
        for where in self.bad_list:
            self.para("Invalid: %s (shown as invalid, never as a number)" % where)
        for where in self.results.bad_sizes:
            self.para("Invalid: %s (row not shown)" % where)

    def transport_section(self) -> None:
        """What NCCL's own log says its connections used, run by run: whether GPUDirect RDMA
        carried the bytes (docs/nccl.md)."""
        runs = self.results.transports
        if not runs:
            return
        self.out("\n## NCCL: the path NCCL took\n", "<h2>NCCL: the path NCCL took</h2>")
        self.para("From NCCL's INFO log, every rank's, after every size (docs/nccl.md): on the direct path "
                  "GPUDirect RDMA should carry every network connection (gdr_connections G/N with G = N); on the "
                  "staged path none. Rows of one run that say the same are one line.")
        self.table_head(["benchmark", "memory", "path", "sizes", "transport", "gdr_connections", "library",
                         "GPUDirect RDMA carried the bytes"], False)
        for t in runs:
            sizes = common.size_fmt(t.first) if t.first == t.last else "%s..%s (%d)" % (
                common.size_fmt(t.first), common.size_fmt(t.last), t.count)
            carried = t.carried()
            good = carried.startswith("yes, every") if t.path == "direct" else carried.startswith("no, as asked")
            cls = "" if good or t.status != "ok" else "fail"
            self.table_row([t.bench, t.mem, t.path, sizes, t.transport or "-", t.gdr or "-", t.library or "-",
                            carried], cls)
        self.table_end()

    def group_table(self, g: Group) -> None:
        lat = is_latency(g.bench)
        busbw = not lat and g.has_busbw
        paths = sorted(g.paths, key=path_rank)
        title = "%s, %s memory%s" % (g.bench, g.mem, ", in place" if g.in_place else "")
        self.out("### %s\n" % md(title), "<h3>%s</h3>" % esc(title))
        png_name = common.figure_name(g.bench, g.mem, g.in_place) + ".png"     # as gdrb-plot names it
        png = self.embed(self.plots + "/" + png_name)
        if png is not None:
            self.out("![%s](plots/%s)\n" % (md(title), png_name), None)
            if png:
                self.out(None, '<img alt="%s" src="data:image/png;base64,%s">' % (esc(title), png))
        head = ["size"]
        for p in paths:
            if lat:
                head += [p + " p50 us", p + " p99 us"]
            else:
                head.append(p + (" busbw GB/s" if busbw else " GB/s"))
        ratio = "direct" in g.paths and "staged" in g.paths
        if ratio:
            head.append("staged/direct p50" if lat else "direct/staged GB/s")
        self.table_head(head, True)
        notes: List[str] = []
        noted: Set[str] = set()
        for size in sorted({s for _, s in g.points}):
            row = [common.size_fmt(size)]
            for p in paths:
                pt = g.points.get((p, size))
                status = pt.status if pt else ""
                if status == "ok":
                    if lat:
                        row += [self.cell("lat_p50_us", pt.p50), self.cell("lat_p99_us", pt.p99)]
                    else:
                        row.append(self.cell("busbw_GBps", pt.busbw) if busbw else self.cell("bw_GBps", pt.bw))
                else:
                    row += [status or "-"] * (2 if lat else 1)
                    if status and pt.note and pt.note not in noted:
                        noted.add(pt.note)
                        notes.append("%s: %s" % (p, pt.note))
            if ratio:
                row.append(self.ratio(g, size, lat))
            self.table_row(row)
        self.table_end()
        for note in notes:
            self.para("Note, " + note)

    def ratio(self, g: Group, size: int, lat: bool) -> str:
        d, s = g.points.get(("direct", size)), g.points.get(("staged", size))
        if not (d and s and d.status == "ok" and s.status == "ok"):
            return "-"
        col, dv, sv = ("lat_p50_us", d.p50, s.p50) if lat else ("bw_GBps", d.bw, s.bw)
        dx, sx = self.figure(col, dv), self.figure(col, sv)
        if dx is None or sx is None:
            return "-"
        return "%.2fx" % (sx / dx if lat else dx / sx)

    @staticmethod
    def embed(path: str) -> Optional[str]:
        """The PNG at PATH in base64; None when it cannot be read, or is a link or not a regular
        file (what a planted link points to never lands in the report; a FIFO is not waited on)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    return None
                return base64.b64encode(f.read()).decode("ascii")
        except OSError:
            return None


# --- the command ---------------------------------------------------------------------

def main(argv: List[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        common.print_help(__doc__)
        return 0
    if argv and argv[0].startswith("-"):
        raise common.usage_error("unknown option '%s'; see --help" % argv[0])
    if len(argv) != 1:
        raise common.usage_error("expected one RESULTS_DIR, e.g. 'gdrb report results/20261121-quick'; see --help")
    arg = argv[0]
    only_pairs = os.path.isdir(arg) and not os.path.isfile(os.path.join(arg, "results.csv")) and \
        bool(pairs.matrix_files(arg))
    csv_path = "" if only_pairs else common.results_csv(arg)
    if not os.path.isdir(arg):
        raise common.usage_error("%s: expected a results directory, not a file" % arg)
    out_dir = arg[:-1] if arg.endswith("/") else arg

    meta, verdict = Json(), None
    meta_path, verdict_path = out_dir + "/meta.json", out_dir + "/verdict.json"
    if os.path.isfile(meta_path):
        meta = common.load_json(meta_path)
    if os.path.isfile(verdict_path):
        # A verdict that cannot be read is left out, as before: gdrb-accept rewrites it.
        try:
            verdict = Json.load(verdict_path)
        except (OSError, ValueError):
            verdict = None

    report = Report(meta, verdict, read_results(csv_path) if csv_path else Results(), out_dir + "/plots")
    doctor_path = out_dir + "/doctor.json"
    if meta.j("doctor", "file") == "doctor.json" or os.path.lexists(doctor_path):
        try:
            report.doctor = Json.load(doctor_path)
        except (OSError, ValueError) as e:
            report.doctor = common.utf8_text(str(e.strerror if isinstance(e, OSError) and e.strerror else e))
    mats, ranks = pairs.load_dir(out_dir)
    if mats:
        report.matrices = (mats, ranks)
        report.simulated = pairs.simulated_gpu(out_dir)
    report.build(common.utf8_text(re.sub(r".*/", "", out_dir.rstrip("/"))))   # summary.md and report.html are UTF-8
    md, html = out_dir + "/summary.md", out_dir + "/report.html"
    write_all([(md, "".join(report.md)), (html, "".join(report.html))])
    common.say("%s and %s" % (md, html))
    return 0
