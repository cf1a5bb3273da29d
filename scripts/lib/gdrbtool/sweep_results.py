"""The results directory: a step's rows into results.csv, its counter file's rows into
results.counters.csv, an all-pairs step's files beside it, each written whole or not at all."""

from __future__ import annotations

import errno
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

from . import common, pairs as pairs_mod
from .common import (Refused, Stop, awk_value, csv_split, csv_text, failure, say, sizes_expand,
                     usage_error, write_all)
from .counters import counter_lines, counters_schema
from .layout import results_base
from .sweep_plan import Step


# --- a step's rows into results.csv ---------------------------------------------------------

def _reg_of(s: Step, mem: str, path: str) -> str:
    """The reg a row of PATH on MEM carries where the run could not say: the binary's (--describe);
    "" where it decides as it runs (gdrb_copy_bw) or the step was made up."""
    kind = s.facts.kind(mem) if s.facts else None
    return kind.reg(path) if kind else ""


def _on_gpu(s: Step, mem: str) -> bool:
    """A row of MEM names the GPU: the kind lives on it, or the binary measures one whatever --mem says."""
    kind = s.facts.kind(mem) if s.facts else None
    return kind.on_gpu if kind else bool(s.facts and s.facts.needs_gpu)


@dataclass
class Merged:
    """A step's rows fit to append to results.csv, and how many of each kind."""
    rows: List[str] = field(default_factory=list)      # the step's complete rows
    filled: List[str] = field(default_factory=list)    # a 'failed'/'unsupported' row per size not measured
    dropped: int = 0


def merge_rows(part: str, s: Step, fill: str, note: str, ranks: int, hosts: int, gpu: str, version: str,
               stamp: str = "") -> Merged:
    """The complete rows of the binary's CSV PART (a row cut short by Ctrl-C or a crash, one
    without its newline or with another field count, is dropped, never half-copied); an older
    version's PART (an older binary's) gives its rows with the newer columns empty, as read_csv
    reads such a file, so that results.csv holds one version; then, with FILL failed or unsupported, one row
    of that status for each expected (memory kind, path, size) without an aggregate row.
    Expected: the step's paths (PATH or MEM:PATH; default the binary's for the kind, its --describe)
    x its sizes."""
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
    width, pad = 0, ""    # the header's field count (0: not the schema's), what a row lacks of the schema's
    i_pair, i_mem, i_path, i_size = (sch.index[c] for c in ("pair", "mem", "path", "size_bytes"))
    for n, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if n == 0:
            width = sch.widths.get(sch.versions.get(line, 0), 0)
            pad = "," * (len(sch.columns) - width)
            if not width:
                say("%s:1: not the schema's header; its rows are not taken" % part)
            continue
        f = csv_split(line)
        if not width or (torn and n == len(lines) - 1) or len(f) != width:
            res.dropped += 1
            continue
        res.rows.append(line + pad)
        if f[i_pair] == "all":
            seen.add((f[i_mem], f[i_path], awk_value(f[i_size])))
    if fill not in ("failed", "unsupported"):
        return res
    stamp = stamp or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for p in s.default_paths():
        mem, path = p.split(":", 1) if ":" in p else (s.mem, p)
        path = path.split(":")[0]
        for size in sizes_expand(s.sizes) or []:
            if (mem, path, float(size)) in seen:
                continue
            row = dict.fromkeys(sch.columns, "")
            row.update(benchmark=s.bench, layer=s.layer, mem=mem, path=path, reg=_reg_of(s, mem, path),
                       pair="all", size_bytes=str(size), iterations="0", ranks=str(ranks), hosts=str(hosts),
                       gpu=gpu if _on_gpu(s, mem) else "", status=fill, errors="0", note=note, timestamp=stamp,
                       version=version)
            # Text from the profile, nvidia-smi and the binary's stderr: never a formula.
            res.filled.append(",".join(csv_text(row[c]) if c not in sch.numeric else row[c] for c in sch.columns))
    return res


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


def claim_dir(path: str) -> bool:
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


# --- a step's counter file beside it ------------------------------------------------------------

COUNTERS_CSV = "results.counters.csv"


def counters_path(csv_path: str) -> str:
    """The counter file a binary writes beside CSV_PATH: in its directory, its name with .csv
    replaced by .counters.csv (.counters.csv added to a name without it; docs/counters.md)."""
    directory, base = os.path.split(csv_path)
    stem = base[:-4] if len(base) > 4 and base.endswith(".csv") else base
    return os.path.join(directory, stem + ".counters.csv")


def keep_counters(part: str, out: str) -> Tuple[int, str]:
    """The counter file a step's binary wrote beside its CSV PART: its complete rows appended to
    OUT/results.counters.csv (made, with its header, by the first step that has one) and the
    file removed. It is no CSV of results: none of its rows reaches results.csv. (rows kept,
    why not: "" when done, or when the step wrote none) Where they cannot be kept (another
    header, a link, a full disk) the step's file stays where it is, and the caller says so."""
    src = counters_path(part)
    try:
        rows = counter_lines(src)
    except FileNotFoundError:
        return 0, ""
    except OSError as e:
        return 0, "%s: %s" % (src, e.strerror or "cannot read it")
    target = os.path.join(out, COUNTERS_CSV)
    if rows:
        try:
            if not os.path.lexists(target):
                write_all([(target, counters_schema().header + "\n")], quiet=True)
        except Stop:
            return 0, "%s: %s" % (target, _why_unwritable(out))
        why = append_atomically(target, rows)
        if why:
            return 0, "%s: %s" % (target, why)
    try:
        os.unlink(src)
    except OSError:
        pass
    return len(rows), ""


# --- the results directory --------------------------------------------------------------------

def claim_results_dir(out: str, label: str) -> str:
    """The results directory, claimed: its results.csv created O_EXCL, so that of two sweeps
    given one --out (or one default name) exactly one goes on; its path. The directory and logs/ are
    directories of their own: a link there is refused, never written through."""
    stem = ""
    if not out:
        try:
            base = results_base()
        except OSError as e:
            raise usage_error("no --out, and '%s' cannot hold the results: %s; run gdrb sweep from a writable "
                              "directory, or give --out DIR" % (e.filename, e.strerror))
        stem = out = os.path.join(base, time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + label)
    parent = os.path.dirname(out.rstrip("/") or "/") or "."
    if not os.path.isdir(parent):
        raise usage_error("--out: directory '%s' does not exist" % parent)
    n = 2
    while True:
        try:
            created = claim_dir(out)
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
    out = os.path.abspath(out)
    csv_path = os.path.join(out, "results.csv")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(common.schema().header + "\n")
    except OSError as e:
        raise failure("cannot write %s: %s" % (csv_path, e.strerror))
    make_dir(os.path.join(out, "logs"))
    try:
        common.open_new(os.path.join(out, "commands.txt")).close()
    except OSError as e:
        raise failure("cannot write %s: %s" % (os.path.join(out, "commands.txt"), e.strerror))
    return out

def make_dir(path: str) -> None:
    """A directory of the results directory (logs/, a step's own), never through a link."""
    try:
        common.make_dir(path)
    except OSError as e:
        raise failure("cannot create %s: %s" % (path, e.strerror))
