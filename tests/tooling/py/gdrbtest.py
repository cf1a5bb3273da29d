"""What the unittest files share: scripts/lib on sys.path, the source tree and its fixtures."""
import os
import re
import sys
import zlib
from pathlib import Path

SRC = Path(__file__).resolve().parents[3]
SCRIPTS = SRC / "scripts"
DATA = SRC / "tests" / "support" / "data"
GDRB = SCRIPTS / "gdrb"
BUILD = Path(os.environ.get("GDRB_TEST_BUILDDIR") or SRC)

sys.path.insert(0, str(SCRIPTS / "lib"))


def describe_doc(name, version="9.9.9"):
    """What a made-up binary NAME answers to --describe (docs/describe.md), as the real ones shape it:
    the layer from its name (fake binaries: local), all-pairs for *_pairs, host, pinned and device
    memory (device on the GPU, with a staged path), none for gdrb_copy_bw."""
    import json
    layer = ("nccl" if name.startswith("gdrb_nccl_") else "mpi" if name.startswith("gdrb_mpi_") else
             "verbs" if name.split("_")[1:2] in (["write"], ["read"], ["send"]) else "local")
    gpu_reg = {"mpi": "mpi-cuda", "nccl": "nccl"}.get(layer, "none")
    direct = "nccl" if layer == "nccl" else "host"
    kinds = [] if name == "gdrb_copy_bw" else [
        {"name": "host", "opens_gpu": False, "needs_gpu": False, "on_gpu": False, "staged": False,
         "paths": [{"path": "direct", "label": "direct", "reg": direct, "staged": False, "pipelined": False}]},
        {"name": "pinned", "opens_gpu": True, "needs_gpu": False, "on_gpu": False, "staged": False,
         "paths": [{"path": "direct", "label": "direct", "reg": direct, "staged": False, "pipelined": False}]},
        {"name": "device", "opens_gpu": True, "needs_gpu": True, "on_gpu": True, "staged": True,
         "paths": [{"path": "direct", "label": "direct", "reg": gpu_reg, "staged": False, "pipelined": False}] +
         ([] if layer == "nccl" else
          [{"path": "staged", "label": "staged", "reg": "staged", "staged": True, "pipelined": True}])}]
    # The options the tools ask about, as the real binaries name them (docs/options.md).
    options = ["sizes", "time-per-size", "csv", "label", "mem", "gpu", "verbose"]
    options += (["window", "granularity", "start-at", "round-every", "metric"] if name.endswith("_pairs") else [])
    options += {"verbs": ["ib-dev", "gid-index"], "nccl": ["nccl-gdr", "nccl-net-only"]}.get(layer, [])
    return json.dumps({"describe_format": 1, "binary": name, "package": "gdrbench", "version": version,
                       "csv_schema": 4, "benchmark": name[len("gdrb_"):], "bidir_benchmark": None,
                       "layer": layer, "summary": "made up", "metric": "latency", "traffic": "pingpong",
                       "all_pairs": name.endswith("_pairs"), "needs_gpu": name == "gdrb_copy_bw",
                       "default_mem": "device" if layer == "nccl" else None if not kinds else "host",
                       "mem_kinds": kinds, "options": [{"name": o} for o in options]})


def describe_stub(name):
    """Shell lines a stub binary NAME starts with: --describe anywhere answers describe_doc(NAME)."""
    doc = describe_doc(name).replace("'", "")
    return "for a in \"$@\"; do [ \"$a\" = --describe ] && { echo '%s'; exit 0; }; done\n" % doc


def described_bins(folder, names):
    """Made-up binaries NAMES in FOLDER, each answering --describe as describe_doc shapes it, and
    the find function profile.load takes: the tool's facts come from these, never from whatever
    the build tree holds (a VPATH build keeps its binaries out of the source tree; a build without
    verbs has no gdrb_write_pairs)."""
    os.makedirs(folder, exist_ok=True)
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + describe_stub(name) + "exit 1\n")
        os.chmod(path, 0o755)

    def find(name):
        path = os.path.join(folder, name)
        return path if os.path.isfile(path) else ""
    return find


def png_bytes() -> bytes:
    """A 1x1 PNG, made here (no image library needed): a figure gdrb report embeds."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + (zlib.crc32(kind + data) & 0xffffffff).to_bytes(4, "big"))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", bytes([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def run_tool(prog, main, argv, quiet_stdout=True):
    """MAIN(ARGV) in this process as scripts/gdrb runs it (common.prog PROG, a Stop's message
    said and its status returned): (exit status, stderr). stdout is dropped unless quiet_stdout
    is false."""
    import contextlib
    import io
    from gdrbtool import common
    common.prog = prog
    err = io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stderr(err))
        if quiet_stdout:
            stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        try:
            status = main(list(argv))
        except common.Stop as e:
            if e.message:
                common.say(e.message)
            status = e.status
    return status, err.getvalue()


def report_files(d):
    """What gdrb report wrote into D: (summary.md, report.html) as text."""
    with open(os.path.join(d, "summary.md"), encoding="utf-8") as f:
        md = f.read()
    with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
        html = f.read()
    return md, html


def rendered(md):
    """MD's text as a Markdown reader sees it: backslash escapes taken out (a temporary
    directory's name may hold a '_' that summary.md escapes)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md)
