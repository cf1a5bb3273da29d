"""Where gdrb's files are: the source tree it runs from, or the prefix it is installed in.

From the source tree: scripts/gdrb, this package in scripts/lib, the profiles in
scripts/profiles, the CSV definitions in common/core, the binaries in the build tree (mpi/,
bench/, nccl/ under the tree) and the results under the tree's results/.

Installed (make install; docs/install.md): make install writes _installed.py beside this file,
holding the version and each folder relative to this package's own, so that a prefix copied or
moved elsewhere keeps working; the results go under the current directory, never the prefix.
This module is the one place that knows either layout."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import List, Optional, Tuple

PACKAGE = Path(__file__).resolve().parent
LIB = PACKAGE.parent            # this package and node-info (with gdrb-lib.sh, which it sources)

try:
    from . import _installed    # type: ignore[attr-defined]  # written by make install only
except ImportError:
    _installed = None


def _at(rel: str) -> Path:
    """REL (a path relative to this package's folder, as make install wrote it) as a path."""
    return Path(os.path.normpath(os.path.join(str(PACKAGE), rel)))


INSTALLED = _installed is not None

TREE: Optional[Path]            # the source tree; None when installed
if _installed is not None:
    TREE = None
    BINDIR = _at(_installed.BINDIR)           # the binaries and gdrb
    GDRB = BINDIR / "gdrb"
    PROFILES = _at(_installed.PROFILES)
    DEFS = _at(_installed.DEFS)               # csv_schema.def and the other CSV definitions
    BIN_ROOT = BINDIR                         # where gdrb sweep looks for binaries after --bin-dir
    RESULTS_HOME: Optional[Path] = None       # the default results: ./results, never the prefix
else:
    TREE = LIB.parent.parent
    BINDIR = TREE
    GDRB = TREE / "scripts" / "gdrb"
    PROFILES = TREE / "scripts" / "profiles"
    DEFS = TREE / "common" / "core"
    BIN_ROOT = TREE                           # the build tree's mpi/, bench/, nccl/
    RESULTS_HOME = TREE / "results"           # when writable; else ./results

SCHEMA_DEF = DEFS / "csv_schema.def"


def version() -> str:
    """This gdrb's version: what make install wrote; from the source tree, configure.ac's AC_INIT
    ("" where it cannot be read)."""
    if _installed is not None:
        return str(_installed.VERSION)
    assert TREE is not None
    try:
        text = (TREE / "configure.ac").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    m = re.search(r"^AC_INIT\(\[[^]]*\], *\[([^]]*)\]", text, re.M)
    return m.group(1) if m else ""


def missing() -> List[str]:
    """What this installation (or source tree) lacks of the folders gdrb reads, as phrases."""
    out = []
    if not PROFILES.is_dir():
        out.append("the profile directory %s" % PROFILES)
    if not SCHEMA_DEF.is_file():
        out.append("the CSV schema %s" % SCHEMA_DEF)
    return out


def results_base() -> str:
    """Where a sweep without --out makes its results directory: the source tree's results/ when
    it is writable, else results/ under the current directory, made here when missing (never
    the prefix of an installed gdrb). Raises OSError (with its filename) when it cannot be made."""
    if RESULTS_HOME is not None and RESULTS_HOME.is_dir() and os.access(str(RESULTS_HOME), os.W_OK):
        return str(RESULTS_HOME)
    base = os.path.join(os.getcwd(), "results")
    try:
        os.mkdir(base)
    except FileExistsError:
        pass
    except OSError as e:
        raise OSError(e.errno, e.strerror, base)
    if not os.path.isdir(base) or os.path.islink(base):
        raise OSError(0, "not a directory of its own (a link is never followed)", base)
    if not os.access(base, os.W_OK | os.X_OK):
        raise OSError(0, "not writable", base)
    return base


def neighbour_version() -> Tuple[str, str]:
    """An installed gdrb's check of the binaries beside it: (a binary there, its version) when one
    answers --version with another version than this gdrb's, else ("", ""). The doctor is built
    in every configuration; without it, the first gdrb_* binary there answers."""
    if _installed is None:
        return "", ""
    try:
        names = sorted(n for n in os.listdir(str(BINDIR)) if n.startswith("gdrb_"))
    except OSError:
        return "", ""
    names.sort(key=lambda n: n != "gdrb_doctor")
    for name in names:
        path = str(BINDIR / name)
        if not os.access(path, os.X_OK):
            continue
        try:
            out = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, timeout=30).stdout.decode("utf-8", "replace")
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.match(r"[^\n]*\(gdrbench\) *([^\s]*)", out)
        if not m:
            continue
        return (path, m.group(1)) if m.group(1) != version() else ("", "")
    return "", ""
