"""What a binary says it is (its --describe, docs/describe.md): the memory kinds it takes and what
each needs, its layer, the paths and reg names a run measures, whether it is an all-pairs binary,
its CSV schema version and its version. The tool asks the binaries it is about to run, once per
binary and command line in a process, instead of keeping copies of these facts."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .common import term, usage_error

FORMAT = 1                  # the describe_format this reader knows
LIMIT = 1 << 20             # a description is a few kB; more is not one
TIMEOUT = 60


@dataclass
class PathFact:
    path: str
    reg: str


@dataclass
class MemKind:
    name: str
    needs_gpu: bool
    on_gpu: bool
    staged: bool
    paths: Optional[List[PathFact]]     # None: the binary decides them as it runs

    def reg(self, path: str) -> str:
        """The reg column of a row of PATH on this kind where the run could not say more ("" unknown)."""
        return next((p.reg for p in self.paths or [] if p.path == path), "")


@dataclass
class Facts:
    binary: str
    benchmark: str
    layer: str
    all_pairs: bool
    needs_gpu: bool
    default_mem: str            # "" where the binary takes no --mem
    kinds: Dict[str, MemKind]
    csv_schema: int
    version: str
    options: Tuple[str, ...] = ()   # the long names of its options ("start-at", "ib-dev")

    def kind(self, mem: str) -> Optional[MemKind]:
        return self.kinds.get(mem)


_cache: Dict[Tuple[str, Tuple[str, ...]], Facts] = {}


def _bad(binary: str, why: str) -> Exception:
    return usage_error("%s --describe: %s; is it a gdrbench binary of this version?" % (term(binary), why))


def _field(d: dict, key: str, kind: type, binary: str) -> object:
    v = d.get(key)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise _bad(binary, "no %s '%s' in its answer" % (kind.__name__, key))
    return v


def _kind(k: object, binary: str) -> MemKind:
    if not isinstance(k, dict):
        raise _bad(binary, "a memory kind that is not an object")
    paths = k.get("paths")
    if paths is not None and not isinstance(paths, list):
        raise _bad(binary, "memory kind paths that are not a list")
    facts = None
    if paths is not None:
        facts = []
        for p in paths:
            if not isinstance(p, dict):
                raise _bad(binary, "a path that is not an object")
            facts.append(PathFact(str(_field(p, "path", str, binary)), str(_field(p, "reg", str, binary))))
    return MemKind(str(_field(k, "name", str, binary)), bool(_field(k, "needs_gpu", bool, binary)),
                   bool(_field(k, "on_gpu", bool, binary)), bool(_field(k, "staged", bool, binary)), facts)


def parse(binary: str, text: bytes) -> Facts:
    """The facts of BINARY's --describe output TEXT; raises Stop(2) naming the binary when it is not one."""
    try:
        d = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _bad(binary, "its answer is not JSON") from None
    if not isinstance(d, dict):
        raise _bad(binary, "its answer is not a JSON object")
    if d.get("describe_format") != FORMAT:
        raise _bad(binary, "describe_format %s, this tool reads %d" % (term(str(d.get("describe_format"))), FORMAT))
    kinds = _field(d, "mem_kinds", list, binary)
    default_mem = d.get("default_mem")
    options = d.get("options")
    names = tuple(o["name"] for o in options if isinstance(o, dict) and isinstance(o.get("name"), str)) \
        if isinstance(options, list) else ()
    return Facts(os.path.basename(binary), str(_field(d, "benchmark", str, binary)),
                 str(_field(d, "layer", str, binary)), bool(_field(d, "all_pairs", bool, binary)),
                 bool(_field(d, "needs_gpu", bool, binary)), default_mem if isinstance(default_mem, str) else "",
                 {m.name: m for m in (_kind(k, binary) for k in kinds)},
                 int(_field(d, "csv_schema", int, binary)), str(_field(d, "version", str, binary)), names)


def describe(binary: str, args: Sequence[str] = ()) -> Facts:
    """BINARY's facts with ARGS on its command line (they decide its paths: --nccl-gdr, --staging),
    asked once per process. A binary that cannot answer or answers garbage: Stop(2), one line."""
    key = (binary, tuple(args))
    if key not in _cache:
        try:
            out = subprocess.run([binary] + list(args) + ["--describe"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise _bad(binary, "no answer in %d s" % TIMEOUT) from None
        except OSError as e:
            raise _bad(binary, "cannot run it: %s" % e.strerror) from None
        if out.returncode != 0:
            said = out.stderr.decode("utf-8", "replace").strip().splitlines()
            raise _bad(binary, "exit %d%s" % (out.returncode, ": " + term(said[-1][:200]) if said else ""))
        if len(out.stdout) > LIMIT:
            raise _bad(binary, "an answer over %d bytes" % LIMIT)
        _cache[key] = parse(binary, out.stdout)
    return _cache[key]
