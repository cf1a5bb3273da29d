"""What this host has, where the binaries are, and where and how gdrb sweep launches ranks."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from . import common
from .common import BIN_ROOT, LIB, usage_error
from .sweep_log import capture, log_entry
from .sweep_options import Options


NODE_INFO = LIB / "node-info"   # the probe of one host (bash: it runs on every host through the launcher)


# --- what this host has, and where the binaries are ---------------------------------------

@dataclass
class Host:
    """What planning needs to know of this host. probe() reads it; tests make one up."""
    gpu: bool
    rdma: bool
    sysfs: str = "/sys"
    launchers: Tuple[str, ...] = ()    # the launchers found on PATH
    log: List[str] = field(default_factory=list)   # what probe() ran, for logs/node-info.log


def probe(sysfs: str) -> Host:
    gpu = False
    log: List[str] = []
    if shutil.which("nvidia-smi"):
        rc, out, err = capture(["nvidia-smi", "-L"], timeout=60)
        log.append(log_entry(["nvidia-smi", "-L"], rc, err, 60))
        gpu = any(line.startswith("GPU ") for line in out.splitlines())
    try:
        rdma = any(not n.startswith(".") for n in os.listdir(os.path.join(sysfs, "class", "infiniband")))
    except OSError:
        rdma = False
    return Host(gpu, rdma, sysfs, tuple(n for n in ("mpirun", "srun") if shutil.which(n)), log)


def find_bin(name: str, bin_dirs: Sequence[str], root: str = str(BIN_ROOT)) -> str:
    """NAME in each --bin-dir (and its mpi/, bench/, nccl/), then the build tree (installed: the
    folder of gdrb itself), then PATH; "" if none."""
    for d in list(bin_dirs) + [root]:
        for sub in (".", "mpi", "bench", "nccl"):
            p = os.path.join(d, sub, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return os.path.join(os.path.abspath(os.path.join(d, sub)), name)
    return shutil.which(name) or ""


# --- where and how ranks are launched --------------------------------------------------------

@dataclass
class Placement:
    launcher: str                  # mpirun or srun
    source: str                    # local, hosts, hostfile or slurm
    specs: List[str]               # as given (with :slots)
    names: List[str]               # each host once, rank 0's first
    hosts_arg: str = ""
    hostfile: str = ""
    extra: List[str] = field(default_factory=list)
    slurm_nodes: str = ""          # SLURM_JOB_NUM_NODES
    root_user: bool = False
    log: List[str] = field(default_factory=list)   # what placement() ran, for logs/node-info.log

    def command(self, n: int) -> List[str]:
        """The launcher command for N ranks."""
        if self.launcher == "srun":
            nodes = min(len(self.names), n)
            cmd = ["srun", "--ntasks=%d" % n, "--distribution=block"]
            if self.source == "slurm" and not self.specs:
                if self.slurm_nodes:
                    count = common.integer(self.slurm_nodes)     # ASCII digits: isdigit() takes '\u00b2'
                    nodes = min(count, n) if count else nodes
                cmd.append("--nodes=%d" % nodes)
            else:
                cmd += ["--nodes=%d" % nodes, "--nodelist=" + ",".join(self.names[:nodes])]
        else:
            cmd = ["mpirun", "-np", str(n)]
            if self.root_user:
                cmd.append("--allow-run-as-root")
            if self.source == "hostfile":
                cmd += ["--hostfile", self.hostfile]
            elif self.source == "hosts" and ":" in self.hosts_arg:
                cmd += ["--host", self.hosts_arg]
            elif self.source == "hosts" or (self.source == "slurm" and self.specs):
                # As many slots on each host as it needs, filled in order: with N ranks on H hosts,
                # ranks 0..N/H-1 land on the first host, so rank i and i+N/2 are on different hosts.
                per = (n + len(self.names) - 1) // len(self.names)
                cmd += ["--host", ",".join("%s:%d" % (h, per) for h in self.names)]
            elif self.source == "local":
                # More ranks than cores on one host is allowed: this is a measurement, not a job.
                cmd.append("--oversubscribe")
        return cmd + self.extra

    def info_command(self) -> List[str]:
        """node-info once on each host."""
        return self.per_node(["bash", str(NODE_INFO)])

    def per_node(self, argv: List[str]) -> List[str]:
        """ARGV once on each host (node-info, gdrb_doctor_mpi)."""
        n = len(self.names)
        if self.launcher == "srun":
            cmd = ["srun", "--ntasks=%d" % n, "--ntasks-per-node=1", "--nodes=%d" % n]
            if self.source != "slurm":
                cmd.append("--nodelist=" + ",".join(self.names))
        else:
            cmd = ["mpirun", "-np", str(n), "--host", ",".join(self.names)]
            if self.root_user:
                cmd.append("--allow-run-as-root")
        return cmd + self.extra + argv


def placement(o: Options, env: Dict[str, str], this_host: str) -> Placement:
    slurm_job = env.get("SLURM_JOB_ID", "")
    launcher = o.launcher
    if not launcher:
        launcher = "srun" if slurm_job and shutil.which("srun") else "mpirun"
    specs: List[str] = []
    source = "local"
    log: List[str] = []
    if o.hosts:
        specs, source = o.hosts.split(","), "hosts"
    elif o.hostfile:
        try:
            text = common.read_regular(o.hostfile, 1 << 24)
        except OSError as e:
            raise usage_error("--hostfile: cannot read '%s': %s" % (o.hostfile, e.strerror))
        specs = [line.split()[0] for line in text.splitlines() if not re.match(r"^[ \t]*(#|$)", line) and line.split()]
        if not specs:
            raise usage_error("--hostfile: no host names in '%s'" % o.hostfile)
        source = "hostfile"
    elif slurm_job:
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
        if nodelist:
            if shutil.which("scontrol"):
                cmd = ["scontrol", "show", "hostnames", nodelist]
                rc, out, err = capture(cmd, timeout=60)
                log.append(log_entry(cmd, rc, err, 60))
                specs = out.splitlines() if rc == 0 else []
            # No scontrol, or one that cannot answer (installed without a configuration): a
            # list without ranges is its own expansion.
            if not specs and "[" not in nodelist:
                specs = nodelist.split(",")
        source = "slurm"
    names: List[str] = []
    for h in specs:
        h = h.split(":")[0].split(" ")[0]
        if h and h not in names:
            names.append(h)
    return Placement(launcher, source, specs, names or [this_host], o.hosts, o.hostfile,
                     o.launcher_args.split(), env.get("SLURM_JOB_NUM_NODES", ""), os.getuid() == 0, log)
