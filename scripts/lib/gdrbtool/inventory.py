"""Check a node's parts against its SKU before measuring anything.

  gdrb inventory --sku NAME [DOCTOR_JSON | --doctor] [--bin-dir DIR]

Reads what gdrb_doctor --json found on the node (DOCTOR_JSON, or with --doctor a run of
gdrb_doctor --json --fast here) and compares it with what an HGX node of that SKU holds
(docs/skus.md):
  gpus    the SKU's number of GPUs of its model (PCI device ID, the doctor's gpus[].device)
  nics    the SKU's number of RDMA NICs with a port ACTIVE at its rate (a node may hold more,
          e.g. storage NICs; a NIC below the rate is named)
  pcie    every GPU and every counted NIC at the SKU's PCIe width or wider; a NIC at its
          speed or faster; a GPU below its speed is named but passes (an idle GPU lowers its
          link speed to save power; the host<->GPU copies of the SKU profile judge the rate)
  nvlink  every GPU of the SKU with the SKU's NVLinks up (18 on H100, H200, B200; 12 on A100),
          from the NVML state the doctor read on the live node; a GPU with fewer is named
A part the doctor could not read (a link null, a device ID missing, NVLink state where NVML
was absent or failed) fails, named as not known: the inventory never passes what it did not
see. A report of a fixture tree (NVML not asked) or of a doctor without NVLink says NVLink
NOT KNOWN, not judged, and the overall line says so.

SKUs: a100, h100, h200, b200 (the node profiles hgx-a100, hgx-h100, hgx-h200, hgx-b200).
gdrb sweep --sku NAME runs this check on the sweep's doctor.json before the first benchmark.

Options:
  --sku NAME         the SKU to check against
  --doctor           run gdrb_doctor --json --fast here instead of reading DOCTOR_JSON
  --bin-dir DIR      look for gdrb_doctor in DIR first (as gdrb sweep does)
  -h, --help         this help
Output: one line per part on stdout (PASS, FAIL, NOTE or NOT KNOWN, then what was found and
what the SKU expects), and the overall line.
Exit: 0 every part matches, 1 a part differs or could not be read (each named), 2 bad usage: an
unknown SKU (the known ones listed), a DOCTOR_JSON that cannot be read or is not the doctor's
JSON, gdrb_doctor not found.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from . import common, evidence
from .common import term, usage_error


@dataclass(frozen=True)
class Sku:
    """What one HGX node of a SKU holds; each fact's source is in docs/skus.md."""
    name: str
    title: str
    profile: str               # the node profile with its floors (scripts/profiles/NAME.profile)
    gpus: int
    devices: Dict[str, str]    # PCI device ID -> model (the PCI ID Repository's name)
    gpu_link: Tuple[int, int]  # (GT/s per lane, lanes): Gen4 x16 is (16, 16)
    nics: int
    nic_gbps: int              # port rate of each compute NIC
    nic_link: Tuple[int, int]
    nvlinks: int               # NVLinks up on each GPU (the board wires every one)


SKUS: Dict[str, Sku] = {s.name: s for s in (
    Sku("a100", "HGX A100", "hgx-a100", 8, {"0x20b0": "A100 SXM4 40GB", "0x20b2": "A100 SXM4 80GB"},
        (16, 16), 8, 200, (16, 16), 12),
    Sku("h100", "HGX H100", "hgx-h100", 8, {"0x2330": "H100 SXM5 80GB"}, (32, 16), 8, 400, (32, 16), 18),
    Sku("h200", "HGX H200", "hgx-h200", 8, {"0x2335": "H200 SXM 141GB"}, (32, 16), 8, 400, (32, 16), 18),
    Sku("b200", "HGX B200", "hgx-b200", 8, {"0x2901": "B200"}, (32, 16), 8, 400, (32, 16), 18),
)}
_RATE = re.compile(r"^\s*([0-9]+(\.[0-9]+)?) Gb/sec")


def sku(name: str) -> Sku:
    """The SKU NAME; an unknown one is refused with the known ones (exit 2)."""
    if name not in SKUS:
        raise usage_error("--sku: unknown SKU '%s'; known: %s" % (term(name[:40]), ", ".join(sorted(SKUS))))
    return SKUS[name]


def _gen(gts: float) -> str:
    gens = {2.5: 1, 5: 2, 8: 3, 16: 4, 32: 5, 64: 6}
    return "Gen%d" % gens[gts] if gts in gens else "%g GT/s" % gts


def _link(v: Any) -> Optional[Tuple[float, int]]:
    """A doctor link {"gts": "32", "width": "16"} as numbers; None where it is not known."""
    if not isinstance(v, dict):
        return None
    gts, width = common.decimal(str(v.get("gts", ""))), common.integer(str(v.get("width", "")), 64)
    if gts is None or width is None or width <= 0:
        return None
    return float(gts), width


def _link_text(link: Tuple[float, int]) -> str:
    return "%s x%d" % (_gen(link[0]), link[1])


@dataclass
class Part:
    status: str        # PASS, FAIL, NOTE, NOT KNOWN
    what: str          # gpus, nics, gpu BDF, nic NAME, nvlink
    text: str


class Check:
    def __init__(self, s: Sku):
        self.sku = s
        self.parts: List[Part] = []

    def add(self, status: str, what: str, text: str) -> None:
        self.parts.append(Part(status, what, text))

    def link(self, kind: str, name: str, v: Any, want: Tuple[int, int]) -> None:
        """KIND NAME's link V against WANT: width below fails; speed below fails a NIC and is
        a NOTE for a GPU (idle GPUs lower their speed)."""
        link = _link(v)
        if link is None:
            self.add("FAIL", "%s %s" % (kind, name), "PCIe link not known (the doctor could not read it); "
                     "expected %s" % _link_text(want))
            return
        gts, width = link
        if width < want[1]:
            self.add("FAIL", "%s %s" % (kind, name), "PCIe %s, expected x%d: down-trained width"
                     % (_link_text(link), want[1]))
        elif gts < want[0] and kind == "nic":
            self.add("FAIL", "%s %s" % (kind, name), "PCIe %s, expected %s: below its speed"
                     % (_link_text(link), _gen(want[0])))
        elif gts < want[0]:
            self.add("NOTE", "%s %s" % (kind, name), "PCIe %s, expected %s: an idle GPU lowers its speed; "
                     "the host<->GPU copies judge the rate" % (_link_text(link), _gen(want[0])))

    def gpus(self, gpus: List[Any]) -> List[Any]:
        """The SKU's GPUs among GPUS, each checked; the others named."""
        s = self.sku
        ours = []
        for g in gpus:
            bdf = str(g.get("pci", "?")) if isinstance(g, dict) else "?"
            dev = str(g.get("device", "")) if isinstance(g, dict) else ""
            if dev in s.devices:
                ours.append(g)
            elif not dev or dev == "None":
                self.add("FAIL", "gpu " + bdf, "model not known (the doctor reports no PCI device ID); expected %s"
                         % " or ".join(sorted(set(s.devices.values()))))
            else:
                self.add("FAIL", "gpu " + bdf, "PCI device %s, not a %s GPU (%s)"
                         % (dev, s.title, ", ".join("%s %s" % kv for kv in sorted(s.devices.items()))))
        models = ", ".join(sorted({s.devices[str(g.get("device"))] for g in ours})) or "none"
        self.add("PASS" if len(ours) == s.gpus else "FAIL", "gpus",
                 "%d GPUs of %s (%s), expected %d" % (len(ours), s.title, models, s.gpus))
        for g in ours:
            self.link("gpu", str(g.get("pci", "?")), g.get("link"), s.gpu_link)
        return ours

    def nics(self, nics: List[Any]) -> None:
        s = self.sku
        ours, below = [], []
        for n in nics:
            if not isinstance(n, dict):
                continue
            name = str(n.get("name", "?"))
            best, seen = 0.0, []
            for p in n.get("ports") or []:
                if not isinstance(p, dict):
                    continue
                m = _RATE.match(str(p.get("rate", "")))
                rate = float(m.group(1)) if m else 0.0
                seen.append("port %s %s %s" % (p.get("port", "?"), p.get("state", "?"), p.get("rate", "?")))
                if str(p.get("state")) == "ACTIVE":
                    best = max(best, rate)
            if best >= s.nic_gbps:
                ours.append(n)
            else:
                below.append("%s (%s)" % (name, "; ".join(seen) or "no port"))
        self.add("PASS" if len(ours) >= s.nics else "FAIL", "nics",
                 "%d RDMA NICs with a port ACTIVE at %d Gb/s or more, expected %d%s"
                 % (len(ours), s.nic_gbps, s.nics, "; below: " + ", ".join(below) if below and len(ours) < s.nics
                    else ""))
        for n in ours:
            self.link("nic", str(n.get("name", "?")), n.get("link"), s.nic_link)

    def nvlink(self, nv: Any, gpus: List[Any]) -> None:
        """The NVLinks up on each of GPUS (the SKU's GPUs) in the doctor's "nvlink" report NV."""
        s = self.sku
        want = "expected %d NVLinks up on each GPU" % s.nvlinks
        if not isinstance(nv, dict):
            self.add("NOT KNOWN", "nvlink", "the doctor's report has no NVLink state (a gdrb_doctor that "
                     "does not read it); %s; not checked" % want)
            return
        if nv.get("asked") is not True:
            self.add("NOT KNOWN", "nvlink", "NVML not asked: the doctor read a fixture tree, not this node; "
                     "%s; not checked" % want)
            return
        if nv.get("known") is not True:
            self.add("FAIL", "nvlink", "NVLink state not known: %s; %s" % (str(nv.get("why"))[:200], want))
            return
        if not gpus:
            self.add("NOT KNOWN", "nvlink", "no GPU of %s to check (gpus above); %s" % (s.title, want))
            return
        listed = {str(g.get("pci", "")).lower(): g for g in nv.get("gpus") or [] if isinstance(g, dict)}
        ok, names = 0, set()
        for g in gpus:
            bdf = str(g.get("pci", "?"))
            n = listed.get(bdf.lower())
            up = common.integer(str(n.get("up", "")), 1024) if n else None
            links = common.integer(str(n.get("links", "")), 1024) if n else None
            if n is None or up is None or links is None:
                self.add("FAIL", "nvlink " + bdf, "not known: %s; expected %d NVLinks up"
                         % ("NVML does not list this GPU" if n is None else "NVML's link count not read", s.nvlinks))
                continue
            names.add(str(n.get("name") or "name not read")[:60])
            down = [str(x) for x in n.get("down") or [] if isinstance(x, str)]
            if up != s.nvlinks:
                self.add("FAIL", "nvlink " + bdf, "%d of %d NVLinks up%s, expected %d"
                         % (up, links, " (down: %s)" % ", ".join(down[:18]) if down else "", s.nvlinks))
            else:
                ok += 1
        self.add("PASS" if ok == len(gpus) else "FAIL", "nvlink", "%d of %d GPUs with %d NVLinks up (NVML: %s)"
                 % (ok, len(gpus), s.nvlinks, ", ".join(sorted(names)) or "none"))

    @property
    def failed(self) -> List[Part]:
        return [p for p in self.parts if p.status == "FAIL"]

    def text(self) -> str:
        out = ["%-9s %-16s %s" % (p.status, p.what, p.text) for p in self.parts]
        bad = self.failed
        if bad:
            out.append("inventory %s: FAIL (%d part%s differ%s: %s)" % (
                self.sku.name, len(bad), "" if len(bad) == 1 else "s", "s" if len(bad) == 1 else "",
                "; ".join("%s: %s" % (p.what, p.text) for p in bad[:3]) + ("; ..." if len(bad) > 3 else "")))
        else:
            unknown = [p.what for p in self.parts if p.status == "NOT KNOWN"]
            out.append("inventory %s: PASS (%s as expected%s)" % (
                self.sku.name, self.sku.title, "; NVLink not known" if "nvlink" in unknown else ""))
        return "\n".join(term(line) for line in out) + "\n"


def check(s: Sku, doctor: Any) -> Check:
    """The node of the doctor's report DOCTOR (its JSON, numbers as text) against S."""
    c = Check(s)
    topo = doctor.get("topology") if isinstance(doctor, dict) else None
    if not isinstance(topo, dict) or not isinstance(topo.get("gpus"), list) or not isinstance(topo.get("nics"), list):
        raise usage_error("the doctor's report has no topology.gpus and topology.nics (gdrb_doctor --json of one node "
                          "is expected)")
    ours = c.gpus(topo["gpus"])
    c.nics(topo["nics"])
    c.nvlink(doctor.get("nvlink"), ours)
    return c


def read_doctor(path: str) -> Any:
    """The doctor's JSON at PATH; one line and exit 2 where it cannot be read."""
    try:
        return evidence.read_json(path).value
    except OSError as e:
        raise usage_error("%s: cannot read: %s" % (path, e.strerror or "read error"))
    except ValueError as e:
        raise usage_error("%s: not JSON: %s" % (path, e))


def run_doctor(bin_dirs: List[str]) -> Any:
    """gdrb_doctor --json --fast on this node; its report."""
    from .sweep_launch import find_bin
    dbin = find_bin("gdrb_doctor", bin_dirs)
    if not dbin:
        raise usage_error("--doctor: gdrb_doctor not found (build tree, --bin-dir or PATH)")
    with tempfile.TemporaryDirectory(prefix="gdrb-inventory.") as d:
        out = os.path.join(d, "doctor.json")
        with open(out, "wb") as f:
            rc = subprocess.run([dbin, "--json", "--fast"], stdout=f, stderr=subprocess.DEVNULL,
                                timeout=300).returncode
        if rc not in (0, 1):
            raise common.failure("--doctor: gdrb_doctor --json --fast exited %d" % rc)
        return read_doctor(out)


def main(argv: List[str]) -> int:
    name, source, use_doctor, bin_dirs = "", "", False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            common.print_help(__doc__)
            return 0
        if a in ("--sku", "--bin-dir"):
            if i + 1 >= len(argv) or not argv[i + 1]:
                raise usage_error("%s needs a value; see --help" % a)
            if a == "--sku":
                name = argv[i + 1]
            else:
                bin_dirs.append(argv[i + 1])
            i += 2
            continue
        if a == "--doctor":
            use_doctor = True
        elif a.startswith("-"):
            raise usage_error("unknown option '%s'; see --help" % term(a[:40]))
        elif source:
            raise usage_error("expected one DOCTOR_JSON, got '%s' too" % term(a[:80]))
        else:
            source = a
        i += 1
    if not name:
        raise usage_error("--sku: expected a SKU, one of %s, e.g. 'gdrb inventory --sku h200 doctor.json'"
                          % ", ".join(sorted(SKUS)))
    s = sku(name)
    if use_doctor == bool(source):
        raise usage_error("expected DOCTOR_JSON (gdrb_doctor --json's output) or --doctor, one of them")
    doctor = run_doctor(bin_dirs) if use_doctor else read_doctor(source)
    c = check(s, doctor)
    sys.stdout.write(c.text())
    return common.EXIT_FAIL if c.failed else common.EXIT_OK
