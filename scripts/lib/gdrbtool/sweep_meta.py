"""meta.json: the run and its environment as JSON, and what node-info said of each host."""

from __future__ import annotations

import json
import re
import socket
from typing import Callable, Dict, List, Optional, Tuple

from . import common
from .common import say
from .sweep_launch import Host, NODE_INFO, Placement
from .sweep_log import first_line


# --- meta.json --------------------------------------------------------------------------------

def js(s: str) -> Optional[str]:
    """Unknown (empty) is null."""
    return s if s else None


def jn(s: str):
    if re.match(r"^-?[0-9]+$", s):
        return int(s)
    if re.match(r"^-?[0-9]+\.[0-9]+$", s):
        return float(s)
    return None


def meta_text(meta: Dict[str, object]) -> str:
    """meta.json: one key a line; nodes and steps one object a line (as gdrb-sweep wrote it)."""
    def dump(v, compact=False):
        # allow_nan=False: NaN and Infinity are not JSON (every number here was made finite).
        return json.dumps(v, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":") if compact else (", ", ": "))

    def objects(items, compact):
        return "[" + ",".join("\n    " + dump(x, compact) for x in items) + "\n  ]"

    lines = []
    for k, v in meta.items():
        if k == "nodes":
            text = objects(v, True)
        elif k == "steps":
            text = objects(v, False)
        elif k in ("skipped", "hosts"):
            text = dump(v, True)
        else:
            text = dump(v)
        lines.append('  "%s": %s' % (k, text))
    # A path or command line of bytes that are not UTF-8 (lone surrogates) as U+FFFD: JSON is UTF-8.
    return common.utf8_text("{\n" + ",\n".join(lines) + "\n}\n")


def link_rate_of(node: Dict[str, object]) -> Optional[float]:
    """The fastest active port of a node: what "% of link" rules compare against."""
    best = 0
    for nic in node.get("nics") or []:
        for port in (nic.get("ports") or []) if isinstance(nic, dict) else []:
            rate = port.get("rate_gbps") if isinstance(port, dict) else None
            if "ACTIVE" in str(port.get("state") or "") and isinstance(rate, (int, float)) and rate > best:
                best = rate
    return best or None


def _finite(text: str) -> Optional[float]:
    """A JSON number as a float; None (null) past a double (1e999, 400 digits): meta.json
    stays JSON, which has no Infinity."""
    v = float(text)
    return v if v not in (float("inf"), float("-inf")) else None


def json_lines(text: str) -> List[Tuple[str, dict]]:
    """The JSON objects of TEXT, one a line (node-info's output): a line that is not one (or
    nests past the recursion limit, or has an integer past int()'s 4300 digits) is left out;
    NaN, Infinity and numbers past a double are null."""
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                obj = json.loads(line, parse_float=_finite, parse_constant=lambda word: None)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                out.append((line, obj))
    return out


def read_nodes(where: Placement, host: Host, probed: Callable[[List[str], float], Tuple[int, str, str]]
               ) -> Tuple[List[dict], str]:
    """This node, and every other host through the launcher (one rank per host), each read by
    PROBED; the nodes, and why the other hosts could not be read ("" when they could)."""
    names = where.names
    say("reading the environment of " + " ".join(names))
    nodes = [obj for _, obj in json_lines(probed([str(NODE_INFO)], 120)[1])]
    this = socket.gethostname()
    others = any(h not in (this, this.split(".")[0], "localhost") for h in names)
    error = ""
    if others and where.launcher in host.launchers:
        rc, out, err = probed(where.info_command(), 120)
        found = json_lines(out)
        if rc == 0 and found:
            # rank 0's host first, then the others in the order given, then any the names missed
            order = []
            for h in names:
                order += [x for x in found if str(x[1].get("hostname")) == h
                          or str(x[1].get("hostname")).startswith(h + ".")][:1]
            seen = set()
            nodes = []
            for line, obj in order + found:
                if line not in seen:
                    seen.add(line)
                    nodes.append(obj)
        else:
            error = "could not run node-info on every host through %s: %s" % (where.launcher, first_line(err))
            say(error + "; meta.json describes this host only (all it said: logs/node-info.log)")
    return nodes, error
