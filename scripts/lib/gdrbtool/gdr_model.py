"""What a node's topology predicts of NCCL with GPUDirect RDMA (docs/nccl.md, "What GPUDirect
should be worth here"): whether NCCL itself would use GPUDirect on a network connection, and
the ratio of direct to staged bus bandwidth that the wire, the PCIe links and the GPU-NIC
distance allow.

The evidence is the doctor's report (doctor.json "topology": each GPU's distance to its nearest
NIC, the NIC's port rates, and where recorded each GPU's and NIC's PCIe link, the uplink a GPU
shares with its NIC and the GPU's compute capability) and the rows themselves (gpu_nic_dist, the GPU's name, the NCCL_* variables
in the note). Every piece is untrusted: a value that is not of its form is no evidence, and a
prediction that lacks a piece says which piece, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .common import Json, decimal, num_fmt

# NCCL's path types (src/include/graph.h): the distance classes a GPU-NIC path can have, and the
# NCCL_NET_GDR_LEVEL names ncclGetLevel accepts (src/graph/paths.cc, exact strings).
NCCL_LEVELS = {"LOC": 0, "NVL": 1, "NVB": 2, "C2C": 3, "PIX": 4, "PXB": 5, "P2C": 6, "PXN": 7, "PHB": 8, "SYS": 9}
_OLD_LEVELS = (0, 4, 5, 8, 9, 9)     # a numeric NCCL_NET_GDR_LEVEL, as NCCL maps it
# gdrbench's classes (nvidia-smi's) as NCCL's path types: NCCL has no NODE, a path through a
# CPU (another host bridge of the same NUMA node) is its PHB.
DIST_TO_NCCL = {"PIX": 4, "PXB": 5, "PHB": 8, "NODE": 8, "SYS": 9}
# NCCL's default: PXB, or P2C where NCCL_NET_GDR_C2C is on (its default from NCCL 2.27); for the
# classes above both allow PIX and PXB and decline PHB, NODE and SYS.
DEFAULT_LEVEL = NCCL_LEVELS["PXB"]
SHARED = ("PIX", "PXB")              # GPU and NIC under one PCIe switch (or a tree of them)

# GPUs before Ampere (compute capability below 8.0), on which NCCL by default turns GPUDirect off
# on the send side (the NIC reading GPU memory) unless NVLink joins the node's GPUs; and those of
# Ampere and later. A name matching neither is of an unknown generation.
_PRE_AMPERE = re.compile(r"\b(Tesla [KMP][0-9]+|V100|P100|P40|P4|T4|TITAN (V|RTX|Xp?)|Quadro (RTX|GV100|GP100|"
                         r"[PMK][0-9]+)|GeForce (GTX|RTX 20[0-9]0))\b", re.I)
_AMPERE_ON = re.compile(r"\b(A100|A800|A30|A40|A10G?|A16|A2|H100|H800|H200|H20|GH200|B100|B200|B300|GB200|GB300|"
                        r"L40S?|L4|L20|RTX A[0-9]+|RTX [0-9]+ Ada|RTX PRO|GeForce RTX [345]0[0-9]0)\b", re.I)

PCIE_PAYLOAD = 0.9     # share of a PCIe link's raw rate that carries data (TLP and DLLP framing)
TOLERANCE = 10.0       # % a measured ratio may fall short of the prediction (run to run noise)


def generation(gpu_name: str) -> str:
    """"pre-Ampere", "Ampere or later" or "" (not known) for a GPU's name as CUDA gives it."""
    if _PRE_AMPERE.search(gpu_name):
        return "pre-Ampere"
    if _AMPERE_ON.search(gpu_name):
        return "Ampere or later"
    return ""


def cc_generation(cc: str) -> str:
    """"pre-Ampere", "Ampere or later" or "" (not a compute capability) for CC as the doctor
    records it ("9.0")."""
    m = re.fullmatch(r"([0-9]{1,2})\.[0-9]{1,2}", cc)
    if not m:
        return ""
    return "pre-Ampere" if int(m.group(1)) < 8 else "Ampere or later"


def gpu_generation(gpu_name: str, topo: "Topology") -> Tuple[str, str]:
    """The generation of a row's GPU and how to name it: from the compute capability CUDA gave
    the doctor where every GPU of its report has one and all are of one generation (the node's
    GPUs), else from GPU_NAME."""
    ccs = sorted({g.cc for g in topo.gpus})
    gens = {cc_generation(cc) for cc in ccs}
    if ccs and len(gens) == 1 and "" not in gens:
        return gens.pop(), "%s (compute capability %s)" % (gpu_name, ", ".join(ccs))
    return generation(gpu_name), gpu_name


def note_env(note: str, name: str) -> Optional[str]:
    """The value of NCCL variable NAME among the note's NCCL_* variables in force ("NAME=VALUE",
    space separated); None where the note has none."""
    m = re.search(r"(?:^|[ ;])%s=([^ ;]*)" % re.escape(name), note)
    return m.group(1) if m else None


def gdr_level(note: str) -> Tuple[int, str]:
    """NCCL_NET_GDR_LEVEL in force (the note), as NCCL reads it: its path type and how to say
    it. An unknown value leaves NCCL's default, as ncclGetLevel does."""
    text = note_env(note, "NCCL_NET_GDR_LEVEL")
    if text is not None:
        if text in NCCL_LEVELS and NCCL_LEVELS[text] <= NCCL_LEVELS["SYS"]:
            return NCCL_LEVELS[text], "NCCL_NET_GDR_LEVEL=" + text
        m = re.match(r"[0-9]+", text)
        if m:
            lvl = _OLD_LEVELS[min(int(m.group(0)[:3]), len(_OLD_LEVELS) - 1)]
            return lvl, "NCCL_NET_GDR_LEVEL=%s (%s)" % (text, _level_name(lvl))
    return DEFAULT_LEVEL, "NCCL_NET_GDR_LEVEL PXB (NCCL's default)"


def _level_name(level: int) -> str:
    return next(k for k, v in NCCL_LEVELS.items() if v == level)


# --- the doctor's topology -------------------------------------------------------------------

@dataclass
class Link:
    """A PCIe link: GT/s per lane and lanes."""
    gts: float
    width: int

    def gbytes(self) -> float:
        """Data per direction in GB/s: the line code (8b/10b to 5 GT/s, 128b/130b to 32 GT/s,
        FLIT from 64 GT/s) and PCIE_PAYLOAD."""
        code = 0.8 if self.gts <= 5.0 else 128 / 130 if self.gts <= 32.0 else 236 / 256
        return self.gts * code * self.width / 8 * PCIE_PAYLOAD

    def text(self) -> str:
        return "%s GT/s x%d" % (num_fmt(self.gts), self.width)


def _link(j: Json) -> Optional[Link]:
    """{"gts": 32.0, "width": 16} as a Link; None where either is missing or not a positive number."""
    gts, width = decimal(j.text("gts")), decimal(j.text("width"))
    if not gts or not width or width != int(width) or gts > 1000 or width > 64:
        return None
    return Link(gts, int(width))


@dataclass
class Gpu:
    pci: str
    distance: str                 # PIX PXB PHB NODE SYS, or "" (unknown)
    nic: str                      # its nearest NIC
    link: Optional[Link] = None
    uplink: Optional[Link] = None  # the narrowest link above the switch it shares with its NIC
    cc: str = ""                   # compute capability from CUDA ("9.0"); "" not recorded


@dataclass
class Topology:
    """What doctor.json says of the node the doctor ran on; `why` says why there is none."""
    gpus: List[Gpu] = field(default_factory=list)
    nic_rate: Dict[str, float] = field(default_factory=dict)   # NIC -> Gb/s of its first ACTIVE port
    nic_link: Dict[str, Link] = field(default_factory=dict)
    why: str = ""

    def distances(self) -> List[str]:
        return sorted({g.distance or "unknown" for g in self.gpus})


def topology(doctor: Optional[Json], path: str = "doctor.json") -> Topology:
    """The topology of DOCTOR (gdrb_doctor --json); a Topology whose `why` says what is missing
    where it holds none (no doctor.json, a gdrb_doctor_mpi report, no GPU)."""
    if doctor is None:
        return Topology(why="no doctor.json in the results (a profile's doctor line runs gdrb_doctor)")
    if not isinstance(doctor.get("topology"), dict):
        return Topology(why="%s has no topology (gdrb_doctor_mpi reports checks only; run gdrb_doctor)" % path)
    t = Topology()
    for k in range(doctor.count("topology", "nics")):
        nic = doctor.at("topology", "nics", k)
        name = nic.text("name")
        for p in range(nic.count("ports")):
            m = re.match(r"([0-9]+(\.[0-9]+)?) Gb/sec", nic.text("ports", p, "rate"))
            if m and nic.text("ports", p, "state") == "ACTIVE" and name not in t.nic_rate:
                t.nic_rate[name] = float(m.group(1))
        link = _link(nic.at("link"))
        if link:
            t.nic_link[name] = link
    for i in range(doctor.count("topology", "gpus")):
        g = doctor.at("topology", "gpus", i)
        dist = g.text("distance")
        cc = g.j("compute_capability")
        t.gpus.append(Gpu(g.text("pci"), dist if dist in DIST_TO_NCCL else "", g.j("nearest_nic"),
                          _link(g.at("link")), _link(g.at("shared_uplink")), cc if cc_generation(cc) else ""))
    if not t.gpus:
        t.why = "%s lists no GPU" % path
    return t


# --- (a) would NCCL use GPUDirect on these connections? ---------------------------------------

@dataclass
class Expect:
    """What share of a row's network connections NCCL would give GPUDirect RDMA: "all", "half"
    (the receives: NCCL declines it on sends), "none" (NCCL declines it at this distance), or
    "" (not known: `why` says which evidence is missing); `why` explains the first three too."""
    need: str
    why: str

    def judge(self, used: int, total: int) -> bool:
        if self.need == "none":
            return True
        if self.need == "half":
            return 2 * used >= total
        return used == total


def expect_gdr(distance: str, topo: Topology, note: str, gpu_name: str) -> Expect:
    """What NCCL's ncclTopoCheckGdr (src/graph/paths.cc) decides for a direct row: DISTANCE is
    the row's gpu_nic_dist ("" where it has none: TOPO's GPUs then), NOTE its NCCL_* variables,
    GPU_NAME its gpu column."""
    level, level_text = gdr_level(note)
    if distance not in DIST_TO_NCCL:
        dists = topo.distances()
        if topo.why:
            src = topo.why
        elif len(dists) > 1:
            src = "the doctor's GPUs sit at different distances from their NICs (%s)" % ", ".join(dists)
        elif dists == ["unknown"]:
            src = "the doctor gives no GPU-NIC distance"
        else:
            src = ""
        distance = dists[0] if not src else ""
    else:
        src = ""
    if not distance and level < NCCL_LEVELS["SYS"]:
        return Expect("", "whether NCCL declines GPUDirect at this GPU-NIC distance is not known: " + src)
    if distance and DIST_TO_NCCL[distance] > level:
        return Expect("none", "NCCL declines GPUDirect here: GPU-NIC distance %s is beyond %s"
                      % (distance, level_text))
    read = note_env(note, "NCCL_NET_GDR_READ")
    where = "NCCL would use GPUDirect here: " + (
        "GPU-NIC distance %s within %s" % (distance, level_text) if distance else "%s allows any distance" % level_text)
    if read is not None and re.match(r"-?[0-9]+$", read) and int(read) == 0:
        return Expect("half", "%s; NCCL_NET_GDR_READ=0: no GPUDirect on sends" % where)
    if read is not None and re.match(r"[0-9]+$", read) and int(read) > 0:
        return Expect("all", "%s; NCCL_NET_GDR_READ=%s" % (where, read))
    gen, gpu = gpu_generation(gpu_name, topo)
    if gen == "pre-Ampere":
        return Expect("half", "%s; %s is %s: NCCL declines GPUDirect on sends unless NVLink joins its GPUs"
                      % (where, gpu, gen))
    if gen:
        return Expect("all", "%s; %s is %s" % (where, gpu, gen))
    return Expect("all", "%s; the GPU's generation is not known from '%s' (before Ampere NCCL declines "
                         "GPUDirect on sends unless NVLink joins the GPUs)" % (where, gpu_name))


# --- (b) what should direct/staged busbw be? --------------------------------------------------

@dataclass
class Prediction:
    """The predicted direct/staged busbw ratio of a node (None: not predictable, `why` says
    what is missing) and how it was derived."""
    ratio: Optional[float]
    why: str


def _gpu_rates(g: Gpu, topo: Topology, wire: float) -> Tuple[Optional[Tuple[float, float]], str]:
    """(direct, staged) GB/s per direction for GPU G and its NIC; None and what is missing."""
    shared = g.distance in SHARED
    missing = [what for what, have in (("the NIC's line rate", wire > 0), ("the GPU's PCIe link", g.link),
                                       ("the NIC's PCIe link", g.nic in topo.nic_link),
                                       ("the PCIe uplink GPU and NIC share", g.uplink))
               if not have and (shared or what == "the NIC's line rate")]
    if missing:
        return None, "GPU %s (%s to %s): %s not recorded" % (g.pci, g.distance, g.nic or "its NIC", ", ".join(missing))
    links = [x.gbytes() for x in (g.link, topo.nic_link.get(g.nic)) if x]
    device = min([wire / 8] + links)
    if not shared:
        # Both paths cross the GPU's link, the NIC's link and the root complex (or the socket
        # link) once each way: the topology gives GPUDirect no bandwidth to win.
        return (device, device), ""
    # Staged, each byte crosses the shared uplink twice the same way (the GPU's write into host
    # memory and the NIC's read from it going up, and the reverse going down).
    return (device, min(device, g.uplink.gbytes() / 2)), ""


def predict_busbw(topo: Topology, wire_gbps: float, default_gbps: float = 0.0) -> Prediction:
    """Direct/staged busbw of NCCL's ring through the network (--nccl-net-only) on TOPO's
    node, its NICs at WIRE_GBPS (0: each at its port's rate in the doctor's report, else at
    DEFAULT_GBPS, meta.json's link_rate_gbps). A ring runs at its slowest
    member: the ratio of the slowest direct to the slowest staged rate of the node's GPUs."""
    if topo.why:
        return Prediction(None, topo.why)
    if any(not g.distance for g in topo.gpus):
        return Prediction(None, "the doctor gives no GPU-NIC distance for GPU %s"
                          % next(g.pci for g in topo.gpus if not g.distance))
    if all(g.distance not in SHARED for g in topo.gpus):
        return Prediction(1.0, "no GPU shares a PCIe switch with its NIC (%s): both paths cross the same "
                               "links once each way" % ", ".join(topo.distances()))
    direct, staged, parts = [], [], []
    for g in topo.gpus:
        wire = wire_gbps or topo.nic_rate.get(g.nic, 0.0) or default_gbps
        rates, why = _gpu_rates(g, topo, wire)
        if rates is None:
            return Prediction(None, why)
        direct.append(rates[0])
        staged.append(rates[1])
        if g.distance in SHARED:
            parts.append("GPU %s %s to %s: wire %s GB/s, GPU %s, NIC %s, shared uplink %s: staged %s of direct %s GB/s"
                         % (g.pci, g.distance, g.nic, num_fmt(wire / 8), g.link.text(), topo.nic_link[g.nic].text(),
                            g.uplink.text(), num_fmt(rates[1]), num_fmt(rates[0])))
        else:
            parts.append("GPU %s %s to %s: no shared link, %s GB/s both ways" % (g.pci, g.distance, g.nic or "its NIC",
                                                                                num_fmt(rates[0])))
    return Prediction(min(direct) / min(staged), "; ".join(parts))
