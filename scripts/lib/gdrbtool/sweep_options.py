"""gdrb sweep's command line: its options, parsed and checked."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import List, Sequence

from . import common
from .common import sizes_expand, usage_error
from .profile import REPEAT_MAX, repeat_count


# Memory kinds are the binaries' (--describe): checked by form here, against them by the plan.
MEM_LIST = re.compile(r"^[a-z][a-z0-9_-]{0,63}(,[a-z][a-z0-9_-]{0,63})*$")


# --- options ---------------------------------------------------------------------------

@dataclass
class Options:
    profile: str = "quick"
    sku: str = ""
    launcher: str = ""
    hosts: str = ""
    hostfile: str = ""
    np: str = "2"
    launcher_args: str = ""
    mem: str = ""
    bench: str = ""
    sizes: str = ""
    time_per_size: str = ""
    validate: bool = False
    label: str = ""
    out: str = ""
    bin_dirs: List[str] = field(default_factory=list)
    link_rate: str = ""
    repeat_failed: str = ""      # "": the profile's repeat-failed, else profile.REPEAT_DEFAULT
    dry_run: bool = False
    help: bool = False


_VALUED = {"--profile": "profile", "--launcher": "launcher", "--hosts": "hosts", "--hostfile": "hostfile",
           "--np": "np", "--launcher-args": "launcher_args", "--mem": "mem", "--bench": "bench",
           "--sizes": "sizes", "--time-per-size": "time_per_size", "--label": "label", "--out": "out",
           "--link-rate": "link_rate", "--sku": "sku", "--repeat-failed": "repeat_failed"}
MAX_RANKS = 1 << 20
_HOSTS = re.compile(r"^[A-Za-z0-9._-]+(:[0-9]+)?(,[A-Za-z0-9._-]+(:[0-9]+)?)*$")
# A label lands in every row's note: it starts with a letter or digit, never as a formula would.
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def parse_args(argv: Sequence[str]) -> Options:
    """The options, checked; a bad one raises one line naming it and its accepted form (exit 2).
    -h stops at once (help=True): what follows it is not read."""
    o = Options()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _VALUED or a == "--bin-dir":
            if i + 1 >= len(argv) or argv[i + 1] == "":
                raise usage_error("%s needs a value; see --help" % a)
            if a == "--bin-dir":
                o.bin_dirs.append(argv[i + 1])
            else:
                setattr(o, _VALUED[a], argv[i + 1])
            i += 2
            continue
        if a == "--validate":
            o.validate = True
        elif a == "--dry-run":
            o.dry_run = True
        elif a in ("-h", "--help"):
            o.help = True
            return o
        else:
            raise usage_error("unknown option '%s'; see --help" % a)
        i += 1
    if o.sku:
        if "--profile" in argv:
            raise usage_error("--sku and --profile: give one of them (--sku runs the SKU's node profile)")
        from .inventory import sku
        o.profile = sku(o.sku).profile
    check_options(o)
    return o


def check_options(o: Options) -> None:
    np = common.integer(o.np, MAX_RANKS)
    if np is None or np < 2 or np % 2:
        raise usage_error("--np: expected an even number of ranks, at least 2, got '%s'" % o.np)
    if o.launcher not in ("", "mpirun", "srun"):
        raise usage_error("--launcher: expected mpirun or srun, got '%s'" % o.launcher)
    if o.hosts and o.hostfile:
        raise usage_error("--hosts and --hostfile: give one of them")
    if o.hosts and not _HOSTS.match(o.hosts):
        raise usage_error("--hosts: expected a comma list of host names, each optionally with :SLOTS "
                          "(a,b or a:8,b:8), got '%s'" % o.hosts)
    if o.hostfile and not os.access(o.hostfile, os.R_OK):
        raise usage_error("--hostfile: cannot read '%s'" % o.hostfile)
    if o.mem and not MEM_LIST.match(o.mem):
        raise usage_error("--mem: expected a comma list of memory kinds, e.g. host,device, got '%s'" % common.term(o.mem))
    if o.time_per_size and not common.decimal(o.time_per_size):
        raise usage_error("--time-per-size: expected seconds per size, e.g. 0.3, got '%s'" % o.time_per_size)
    if o.label and not LABEL.match(o.label):
        raise usage_error("--label: expected letters, digits, '.', '_' or '-', starting with a letter or digit, "
                          "got '%s'" % o.label)
    if o.link_rate and not common.decimal(o.link_rate):
        raise usage_error("--link-rate: expected the port rate in Gb/s, e.g. 400, got '%s'" % o.link_rate)
    if o.repeat_failed and repeat_count(o.repeat_failed) is None:
        raise usage_error("--repeat-failed: expected a count from 0 to %d, got '%s'"
                          % (REPEAT_MAX, o.repeat_failed if len(o.repeat_failed) <= 40 else o.repeat_failed[:40] + "..."))
    for d in o.bin_dirs:
        if not os.path.isdir(d):
            raise usage_error("--bin-dir: '%s' is not a directory" % d)
    if o.sizes and not sizes_expand(o.sizes):
        raise usage_error("--sizes: expected MIN:MAX (doubling) or a list A,B,C with sizes like 8, 64K, "
                          "1MiB, got '%s'" % o.sizes)
