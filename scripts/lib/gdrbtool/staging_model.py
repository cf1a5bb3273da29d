"""scripts/measure/measure-staging's model of the staged path and its tables, from one gdrbench
CSV holding the rows of gdrb_copy_bw, gdrb_mpi_bw (--mem pinned and --mem device) and
gdrb_mpi_latency (--mem device).

    python3 -m gdrbtool.staging_model MODE --sizes "B ..." --chunks "B ..." [--target 0.9]
        [--lat-tol 1.05] CSV

    --sizes   message sizes in bytes, ascending; --chunks: fragment sizes, the first the one judged
    rates     C and W per size, Markdown
    bw        pipelined against its model per chunk and size, Markdown
    serial    serial against its model per size, Markdown
    lat       small-message p50, pipelined against serial, Markdown
    verdict   "key value" lines: bw_ratio, bw_verdict, lat_worst, lat_worst_size, lat_verdict
              (PASS, FAIL or NODATA), bad (rows neither ok nor unsupported)

Model (results/staging-model.md): a message of S bytes in fragments of f = min(chunk, S) passes
three stages, device->pinned copy (rate Cd), wire (W), pinned->device copy (Ch), each fragment
after the one before it. With the stages overlapped, the slowest one B = min(Cd, W, Ch) sets the
pace and the first fragment fills the other two:
  T_pipelined = f/Cd + f/W + f/Ch + (S - f)/B
  T_serial    = S/Cd + S/W + S/Ch
Cd and Ch are gdrb_copy_bw's pinned rates at the copy's own size (f for the pipeline, S for
serial), so the per-copy overhead is in them; W is gdrb_mpi_bw --mem pinned -W 1 at S.
Beside it, not judged, the same pipelined model with the wire's rate at the fragment with the
slots in flight (Wf: gdrb_mpi_bw --mem pinned -W 4 at f, the rows whose window is above 1): on an
H200's host the wire at S fell from 9.4 GB/s at 16 MiB to 5.9 at 64 MiB, where the pipeline, which
sends fragments, ran 1.2 to 1.35 times the model (results/gpu-h200/README.md, finding 11).

A size is keyed by its text: a row's as awk_num writes it, --sizes' and --chunks' as given."""

from __future__ import annotations

import argparse
import sys
from typing import Dict, List, Optional, Tuple

from .common import awk_num, awk_value, csv_split, sig3, size_fmt

Rate = Dict[str, float]


def size_text(size: str) -> str:
    return size_fmt(awk_value(size), " ") if size else " B"


def cell(v: Optional[float]) -> str:
    return "-" if v is None else sig3(v)


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b <= 0 else a / b


class Model:
    def __init__(self, text: str):
        self.Cd: Rate = {}        # copy device->pinned host, GB/s, by copy size
        self.Ch: Rate = {}        # copy pinned host->device
        self.W: Rate = {}         # the wire, pinned to pinned, by message size
        self.Wf: Rate = {}        # the wire with a window of messages in flight, by message size
        self.P: Dict[Tuple[str, str], float] = {}   # pipelined staging by (chunk, size)
        self.Ser: Rate = {}       # serial staging
        self.L: Dict[Tuple[str, str], float] = {}   # latency p50 by (path, size)
        self.lat_sizes: List[float] = []
        self.bad = 0
        self.read(text)

    def read(self, text: str) -> None:
        col: Dict[str, int] = {}
        fields: List[str] = []
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            if line.endswith("\r"):
                line = line[:-1]
            if line == "":
                continue
            got = csv_split(line)
            if line.startswith("benchmark,"):
                # The header comes once per file; gdrbench writes it only into an empty file.
                col.update((name, i) for i, name in enumerate(got))
                continue
            fields[:len(got)] = got

            def f(name: str) -> str:
                i = col.get(name)
                return fields[i] if i is not None and i < len(fields) else ""
            st = f("status")
            if st == "unsupported":
                continue
            if st != "ok":
                self.bad += 1
                continue
            b, mem, path = f("benchmark"), f("mem"), f("path")
            s = awk_num(awk_value(f("size_bytes")))
            bw = awk_value(f("bw_GBps"))
            if b == "copy_bw" and mem == "pinned" and path == "h2d":
                self.Ch[s] = bw
            elif b == "copy_bw" and mem == "pinned" and path == "d2h":
                self.Cd[s] = bw
            elif b == "mpi_bw" and mem == "pinned":
                window = awk_value(f("window")) if f("window") else 1
                (self.Wf if window > 1 else self.W)[s] = bw
            elif b == "mpi_bw" and mem == "device" and path == "staged":
                self.P[awk_num(awk_value(f("stage_chunk"))), s] = bw
            elif b == "mpi_bw" and mem == "device" and path == "staged-serial":
                self.Ser[s] = bw
            elif b == "mpi_latency" and mem == "device" and path in ("staged", "staged-serial"):
                if not any(awk_num(v) == s for v in self.lat_sizes):
                    self.lat_sizes.append(awk_value(f("size_bytes")))
                self.L[path, s] = awk_value(f("lat_p50_us"))

    @staticmethod
    def have(rates: Rate, k: str) -> bool:
        return rates.get(k, 0) > 0

    def rates_at(self, s: str, f: str) -> bool:
        return self.have(self.Cd, f) and self.have(self.Ch, f) and self.have(self.W, s)

    def pipe_time(self, s: str, f: str, w: Optional[float] = None) -> Tuple[float, float]:
        """The model's time for S in fragments of F, and its slowest stage's rate; the wire's
        rate W (default: W at S)."""
        ns, nf = awk_value(s), awk_value(f)
        w = self.W[s] if w is None else w
        b = min(min(self.Cd[f], self.Ch[f]), w)
        return nf / self.Cd[f] + nf / w + nf / self.Ch[f] + (ns - nf) / b, b

    def pipe_model(self, s: str, c: str) -> Optional[float]:
        """The model's pipelined bandwidth in GB/s; None where a rate is missing."""
        f = fragment(c, s)
        if not self.rates_at(s, f):
            return None
        return awk_value(s) / self.pipe_time(s, f)[0]

    def pipe_model_wf(self, s: str, c: str) -> Optional[float]:
        """The pipelined model with the wire at the fragment, slots in flight; None without its rates."""
        f = fragment(c, s)
        if not (self.have(self.Cd, f) and self.have(self.Ch, f) and self.have(self.Wf, f)):
            return None
        return awk_value(s) / self.pipe_time(s, f, self.Wf[f])[0]

    def bound(self, s: str, c: str) -> str:
        """The stage that sets the pipeline's pace."""
        f = fragment(c, s)
        if self.W[s] <= self.Cd[f] and self.W[s] <= self.Ch[f]:
            return "wire"
        return "copy D2H" if self.Cd[f] <= self.Ch[f] else "copy H2D"

    def fill_share(self, s: str, c: str) -> float:
        """The part of the model's time spent filling and draining the pipeline."""
        t, b = self.pipe_time(s, fragment(c, s))
        return (t - awk_value(s) / b) / t

    def serial_model(self, s: str) -> Optional[float]:
        if not self.rates_at(s, s):
            return None
        return 1 / (1 / self.Cd[s] + 1 / self.W[s] + 1 / self.Ch[s])

    def cw_min(self, s: str) -> Optional[float]:
        if not self.rates_at(s, s):
            return None
        return min(min(self.Cd[s], self.Ch[s]), self.W[s])


def fragment(c: str, s: str) -> str:
    return c if awk_value(c) < awk_value(s) else s


def rates(m: Model, sizes: List[str], chunks: List[str]) -> List[str]:
    # Every size a copy was measured at: the messages', and the fragments' too.
    use: Dict[str, str] = {}
    every: List[str] = []
    for s in sizes:
        use[s] = "message"
        every.append(s)
    for c in chunks:
        if c in use:
            if "fragment" not in use[c]:
                use[c] += ", fragment"
        else:
            use[c] = "fragment"
            every.append(c)
    out = ["| size | used as | C H2D pinned (GB/s) | C D2H pinned (GB/s) | W pinned to pinned (GB/s) | min(C, W) (GB/s) | Wf, 4 in flight (GB/s) |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    for s in sorted(every, key=awk_value):
        message = "message" in use[s]
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            size_text(s), use[s], cell(m.Ch.get(s)), cell(m.Cd.get(s)),
            cell(m.W.get(s)) if message else "-", cell(m.cw_min(s)) if message else "-",
            cell(m.Wf.get(s)) if "fragment" in use[s] else "-"))
    return out


def bw(m: Model, sizes: List[str], chunks: List[str], target: str) -> List[str]:
    out = ["| chunk | size | pipelined (GB/s) | model (GB/s) | measured / model | bound by | fill and drain in the model | staged / (" + target + " x min(C, W)) | model, Wf (GB/s) | measured / model, Wf |",
           "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for c in chunks:
        for s in sizes:
            model = m.pipe_model(s, c)
            wf = m.pipe_model_wf(s, c)
            v = m.P.get((c, s))
            lim = m.cw_min(s)
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                size_text(c), size_text(s), cell(v), cell(model), cell(ratio(v, model)),
                "-" if model is None else m.bound(s, c),
                "-" if model is None else "%.1f%%" % (100 * m.fill_share(s, c)),
                cell(ratio(v, None if lim is None else awk_value(target) * lim)),
                cell(wf), cell(ratio(v, wf))))
    return out


def serial(m: Model, sizes: List[str], chunks: List[str]) -> List[str]:
    first = chunks[0] if chunks else ""
    out = ["| size | serial (GB/s) | model (GB/s) | measured / model | pipelined (" + size_text(first) + ") / serial |",
           "|---:|---:|---:|---:|---:|"]
    for s in sizes:
        v = m.Ser.get(s)
        out.append("| %s | %s | %s | %s | %s |" % (size_text(s), cell(v), cell(m.serial_model(s)),
                                                  cell(ratio(v, m.serial_model(s))), cell(ratio(m.P.get((first, s)), v))))
    return out


def lat(m: Model) -> List[str]:
    out = ["| size | pipelined p50 (us) | serial p50 (us) | pipelined / serial |",
           "|---:|---:|---:|---:|"]
    for size in sorted(m.lat_sizes):
        s = awk_num(size)
        p, q = m.L.get(("staged", s)), m.L.get(("staged-serial", s))
        out.append("| %s | %s | %s | %s |" % (size_fmt(size, " "), cell(p), cell(q), cell(ratio(p, q))))
    return out


def verdict(m: Model, sizes: List[str], chunks: List[str], target: str, lat_tol: str) -> List[str]:
    big = sizes[-1] if sizes else ""
    lim = m.cw_min(big) if big else None
    r = ratio(m.P.get((chunks[0] if chunks else "", big)), None if lim is None else awk_value(target) * lim)
    out = ["bw_ratio " + ("-" if r is None else "%.3f" % r),
           "bw_verdict " + ("NODATA" if r is None else "PASS" if r >= 1 else "FAIL")]
    worst: Optional[float] = None
    wsize: Optional[float] = None
    for size in m.lat_sizes:
        s = awk_num(size)
        r = ratio(m.L.get(("staged", s)), m.L.get(("staged-serial", s)))
        if r is None:
            worst = wsize = None
            break
        if worst is None or r > worst:
            worst, wsize = r, size
    out += ["lat_worst " + ("-" if worst is None else "%.3f" % worst),
            "lat_worst_size " + ("-" if wsize is None else size_fmt(wsize, " ")),
            "lat_verdict " + ("NODATA" if worst is None else "PASS" if worst <= awk_value(lat_tol) else "FAIL"),
            "bad %d" % m.bad]
    return out


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="staging_model", allow_abbrev=False)
    p.add_argument("mode", choices=("rates", "bw", "serial", "lat", "verdict"))
    p.add_argument("--sizes", default="")
    p.add_argument("--chunks", default="")
    p.add_argument("--target", default="0.9")
    p.add_argument("--lat-tol", default="1.05")
    p.add_argument("csv")
    a = p.parse_args(argv)
    try:
        with open(a.csv, encoding="utf-8", errors="surrogateescape", newline="") as f:
            m = Model(f.read())
    except OSError as e:
        sys.stderr.write("staging_model: %s: %s\n" % (a.csv, e.strerror))
        return 2
    sizes, chunks = a.sizes.split(), a.chunks.split()
    if a.mode == "rates":
        out = rates(m, sizes, chunks)
    elif a.mode == "bw":
        out = bw(m, sizes, chunks, a.target)
    elif a.mode == "serial":
        out = serial(m, sizes, chunks)
    elif a.mode == "lat":
        out = lat(m)
    else:
        out = verdict(m, sizes, chunks, a.target, a.lat_tol)
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8", "surrogateescape"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
