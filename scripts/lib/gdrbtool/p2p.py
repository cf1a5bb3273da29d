"""GPU to GPU inside a node (gdrb_copy_bw --p2p, docs/benchmarks.md): the rows of results.csv
whose pair is gpuI->gpuJ, gathered per benchmark and memory kind into matrices from GPU (rows)
to GPU (columns), one per path and size, and the ratio of each direct path to its staged twin
(the path of the same name with "staged" for "direct": p2p-direct and p2p-staged), as the
binary prints them. gdrb report shows them at the largest size measured; gdrb plot draws a heat
map of each path there.

The rows come from the one reader of evidence (common.read_csv); a pair that is not
gpuI->gpuJ (I, J up to 3 digits, I not J) is no GPU pair and is not read here. When a pair,
path and size was measured more than once, the last row holds, as in the report's tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from . import common
from .common import file_name

PAIR = re.compile(r"gpu([0-9]{1,3})->gpu([0-9]{1,3})")


def gpu_pair(pair: str) -> Optional[Tuple[int, int]]:
    """PAIR's GPUs (I, J) when it is gpuI->gpuJ with I not J; None otherwise."""
    m = PAIR.fullmatch(pair)
    if not m:
        return None
    i, j = int(m.group(1)), int(m.group(2))
    return (i, j) if i != j else None


@dataclass
class Cell:
    """One row's say on a pair, path and size: its status and bw_GBps as written."""
    status: str
    bw: str
    note: str


@dataclass
class Node:
    """The GPU pairs of one benchmark and memory kind."""
    bench: str
    mem: str
    paths: List[str] = field(default_factory=list)          # in the order first seen
    gpus: Set[int] = field(default_factory=set)
    sizes: Set[int] = field(default_factory=set)
    cells: Dict[Tuple[str, int, int, int], Cell] = field(default_factory=dict)   # (path, size, src, dst)
    simulated: str = ""      # the gpu column where it names the test suite's simulated GPU

    def add(self, path: str, size: int, src: int, dst: int, cell: Cell, gpu: str) -> None:
        if path not in self.paths:
            self.paths.append(path)
        self.gpus.update((src, dst))
        self.sizes.add(size)
        self.cells[(path, size, src, dst)] = cell
        if not self.simulated and re.search(r"\bsimulated\b", gpu):
            self.simulated = gpu

    def largest(self) -> int:
        return max(self.sizes)

    def twin(self, path: str) -> Optional[str]:
        """The staged path a direct PATH is compared with, where it was measured."""
        if "direct" not in path:
            return None
        staged = path.replace("direct", "staged")
        return staged if staged in self.paths else None

    def order(self) -> List[int]:
        return sorted(self.gpus)

    def grid(self, path: str, size: int, shown: Callable[[Cell], str]) -> List[List[str]]:
        """PATH's matrix at SIZE, a row per GPU: "-" on the diagonal, "" for a pair with no row,
        else SHOWN(its cell)."""
        order = self.order()
        return [["-" if s == d else "" if (path, size, s, d) not in self.cells
                 else shown(self.cells[(path, size, s, d)]) for d in order] for s in order]

    def ratio_grid(self, path: str, twin: str, size: int,
                   figure: Callable[[str], Optional[float]]) -> List[List[str]]:
        """PATH over TWIN at SIZE, as the binary prints it: the ratio of two measured figures
        (FIGURE: a valid value above 0, else None), "n/a" where either path cannot run
        (unsupported), the status where a row did not measure (failed, invalid-data), "" for a
        pair with a row missing or without a figure."""
        order = self.order()
        out = []
        for s in order:
            row = []
            for d in order:
                a, b = self.cells.get((path, size, s, d)), self.cells.get((twin, size, s, d))
                if s == d:
                    row.append("-")
                elif a is None or b is None:
                    row.append("")
                elif "unsupported" in (a.status, b.status):
                    row.append("n/a")
                elif a.status != "ok" or b.status != "ok":
                    row.append(a.status if a.status != "ok" else b.status)
                else:
                    x, y = figure(a.bw), figure(b.bw)
                    row.append("%.2f" % (x / y) if x is not None and y is not None else "")
            out.append(row)
        return out

    def why_not(self, path: str, size: int) -> Tuple[int, str]:
        """How many pairs of PATH at SIZE could not run (unsupported), and the first one's note."""
        cells = [(k, c) for k, c in sorted(self.cells.items()) if k[0] == path and k[1] == size
                 and c.status == "unsupported"]
        return len(cells), ("gpu%d->gpu%d: %s" % (cells[0][0][2], cells[0][0][3], cells[0][1].note) if cells else "")


Nodes = Dict[Tuple[str, str], Node]     # (benchmark, mem) -> its GPU pairs, in the order first seen


def add_row(nodes: Nodes, f: List[str], col: Dict[str, int], size: int, gpus: Tuple[int, int]) -> None:
    """Row F (its fields by COL) of the GPU pair GPUS, its size SIZE read, into NODES."""
    key = (f[col["benchmark"]], f[col["mem"]])
    node = nodes.get(key)
    if node is None:
        node = nodes[key] = Node(*key)
    node.add(f[col["path"]], size, gpus[0], gpus[1],
             Cell(f[col["status"]], f[col["bw_GBps"]], f[col["note"]]), f[col["gpu"]])


def read(csv_path: str, fault: Callable[[int, str, str, str], None]) -> Nodes:
    """The GPU pairs of the results CSV CSV_PATH (common.read_csv: the one reader of evidence);
    a row whose size is not one is left out and given to FAULT(line, column, value, why)."""
    s = common.schema()
    col = s.index
    nodes: Nodes = {}
    for lineno, f in common.read_csv(csv_path):
        gpus = gpu_pair(f[col["pair"]])
        if gpus is None:
            continue
        size = f[col["size_bytes"]]
        why = "empty" if size == "" else s.value_fault("size_bytes", size)
        if why:
            fault(lineno, "size_bytes", size, why)
            continue
        add_row(nodes, f, col, int(size), gpus)
    return nodes


def figure_name(bench: str, mem: str, path: str, size: int) -> str:
    """The heat map's file name, without extension (BENCH-MEM-PATH-SIZE-gpus): gdrb plot writes
    it, gdrb report embeds it."""
    return file_name("%s-%s-%s-%d-gpus" % (bench, mem, path, size))
