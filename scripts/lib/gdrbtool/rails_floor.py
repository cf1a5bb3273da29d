"""The per-NIC floor `gdrb rails` judges every rail against, alone and with all rails loaded:
--floor GBPS as given, or the GPUDirect write floor of a SKU's node profile (--sku NAME: the
profile's write_bw rule on bw_GBps, with its source; docs/skus.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import common, inventory, profile
from .common import term, usage_error

# The profile rule that holds a SKU's per-NIC GPUDirect floor: the verbs write bandwidth with
# GPU memory on both sides, as Azure's ib_write_bw check measures it (docs/skus.md).
FLOOR_BENCH = "write_bw"
FLOOR_COLUMN = "bw_GBps"
FLOOR_MAX_GBPS = 100000.0      # Gb/s: above any NIC port (a 1.6 Tb/s port is 1600)


@dataclass
class Floor:
    value: float        # GB/s, the unit of bw_GBps
    text: str           # as written ("380 Gb/s")
    origin: str         # "--floor" or "rule NAME of PROFILE"
    source: str         # the rule's source=, or "given with --floor"
    mem: str = ""       # the rule's filters; "" where any
    path: str = ""
    sizes: str = ""     # "N,M" or "MIN:MAX" in bytes (MAX may be inf)

    @property
    def estimate(self) -> bool:
        return self.source.startswith("estimate")

    def cited(self) -> str:
        """The floor and where it comes from, for the report."""
        return "%s (%s; %s)" % (self.text, self.origin, "gdrbench's own estimate: " + self.source[len("estimate:"):].strip()
                                if self.estimate else "source: " + self.source)

    def size_ok(self, size: int) -> bool:
        if not self.sizes:
            return True
        if ":" in self.sizes:
            lo, hi = self.sizes.split(":", 1)
            return int(lo) <= size and (hi == "inf" or size <= int(hi))
        return str(size) in self.sizes.split(",")


def given(v: str) -> Floor:
    """--floor GBPS: Gb/s per NIC, a number from 1 to FLOOR_MAX_GBPS (bad usage otherwise)."""
    x = common.decimal(v)
    if x is None or not 1 <= x <= FLOOR_MAX_GBPS:
        raise usage_error("--floor: expected Gb/s per NIC, a number from 1 to %g (e.g. 380), got '%s'"
                          % (FLOOR_MAX_GBPS, term(v[:40])))
    return Floor(x / 8, "%g Gb/s" % x, "--floor", "given with --floor")


def of_sku(name: str) -> Tuple[Optional[Floor], str]:
    """The per-NIC floor of SKU NAME's node profile, or None and why there is none. An unknown
    SKU is bad usage (the known ones listed)."""
    sku = inventory.sku(name)
    file = common.resolve_profile(sku.profile)
    prof = profile.load(file, lambda _: "")      # the rules only: no binary is asked
    rules = [r for r in prof.rules if r.bench == FLOOR_BENCH and r.column == FLOOR_COLUMN and r.kind == "abs"
             and r.op in (">=", ">") and isinstance(r.value, float)]
    if not rules:
        return None, "the %s profile has no per-NIC GPUDirect floor (a rule on %s %s >= ...)" % (
            sku.profile, FLOOR_BENCH, FLOOR_COLUMN)
    r = rules[0]
    return Floor(float(r.value), r.text, "rule %s of %s" % (r.name, sku.profile), r.source,
                 r.filters.get("mem", ""), r.filters.get("path", ""), r.filters.get("sizes", "")), ""


def check_run(f: Floor, mem: str, path: str, size: int) -> None:
    """A floor of a profile rule judges only what the rule measures: another memory, path or
    size is bad usage, naming the options that match it."""
    bad: List[str] = []
    if f.mem and f.mem != mem:
        bad.append("--mem %s" % f.mem)
    if f.path and f.path != path:
        bad.append("--path %s" % f.path)
    if not f.size_ok(size):
        bad.append("--size %s" % (common.size_fmt(int(f.sizes.split(",")[0].split(":")[0]))))
    if bad:
        raise usage_error("--sku: its floor %s is for %s; run with %s" % (
            f.text, " ".join("%s=%s" % (k, v) for k, v in (("mem", f.mem), ("path", f.path), ("sizes", f.sizes)) if v),
            " ".join(bad)))
