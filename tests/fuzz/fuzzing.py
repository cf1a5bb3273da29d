"""What the Python fuzz harnesses (tests/fuzz/fuzz_*.py) share: the contract they check, the
files an input becomes, and the two ways they run.

The contract of a reader of untrusted text: it returns, or it raises the tool's own Stop with
one of its documented exit statuses and a message of one line. Any other exception, or a Stop
with a message that is empty or spans lines, is a crash.

  python3 fuzz_X.py --replay FILE|DIR...   each input once, plain Python (no atheris needed):
                                           the seeds and the regression corpus
  python3 fuzz_X.py [libFuzzer flags] DIR...   coverage-guided, with atheris (exit 77 without)
"""

import atexit
import io
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Callable, Dict, Iterable, List

TOP = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(TOP / "scripts" / "lib"))

SKIP = 77
REPLAY = "--replay" in sys.argv[1:2]


class Broken(Exception):
    """The reader broke its contract on this input."""


def modules(*names: str) -> List[object]:
    """The gdrbtool modules NAMES, instrumented for coverage when fuzzing."""
    import importlib
    if REPLAY:
        return [importlib.import_module("gdrbtool." + n) for n in names]
    try:
        import atheris
    except ImportError as e:
        sys.stdout.write("SKIP: atheris is not installed for %s (%s): scripts/install-deps installs it\n"
                         % (sys.executable, e))
        sys.exit(SKIP)
    with atheris.instrument_imports(include=["gdrbtool"]):
        return [importlib.import_module("gdrbtool." + n) for n in names]


_work = ""


def workdir() -> str:
    """An empty directory for this input's files (the same one each time, emptied)."""
    global _work
    if not _work:
        _work = tempfile.mkdtemp(prefix="gdrb-fuzz.")
        atexit.register(shutil.rmtree, _work, True)
    for name in os.listdir(_work):
        p = os.path.join(_work, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
    return _work


def write(path: str, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return path


def split_files(data: bytes, allowed: Iterable[str]) -> Dict[str, bytes]:
    """A multi-file input: each file starts with a line "@@ NAME" (NAME one of ALLOWED; a line
    naming another starts nothing); what comes before the first is ignored."""
    allowed = set(allowed)
    files: Dict[str, bytes] = {}
    name = None
    for line in data.splitlines(keepends=True):
        if line.startswith(b"@@ "):
            cand = line[3:].strip().decode("ascii", "replace")
            if cand in allowed:
                name = cand
                files[name] = b""
                continue
        if name is not None:
            files[name] += line
    return files


def check(reader: Callable[[bytes], None], statuses: Iterable[int]) -> Callable[[bytes], None]:
    """READER wrapped in the contract: Stop with a status of STATUSES and one line, or nothing."""
    from gdrbtool.common import Stop
    statuses = tuple(statuses)

    def one_input(data: bytes) -> None:
        # The readers name faults on stderr as they go: kept out of the fuzzer's output.
        saved = sys.stderr
        sys.stderr = io.StringIO()
        try:
            reader(data)
        except Stop as e:
            if e.status not in statuses:
                raise Broken("Stop(%d): not a documented status %s; message %r" % (e.status, statuses, e.message))
            if not e.message or "\n" in e.message or "\r" in e.message:
                raise Broken("Stop(%d) with a message that is not one line: %r" % (e.status, e.message))
        finally:
            sys.stderr = saved
    return one_input


def _inputs(args: List[str]) -> List[str]:
    out: List[str] = []
    for a in args:
        if os.path.isdir(a):
            out.extend(os.path.join(a, n) for n in sorted(os.listdir(a))
                       if not n.startswith(".") and os.path.isfile(os.path.join(a, n)))
        else:
            out.append(a)
    return out


def main(one_input: Callable[[bytes], None]) -> None:
    if REPLAY:
        files = _inputs(sys.argv[2:])
        broken = 0
        for path in files:
            with open(path, "rb") as f:
                data = f.read()
            try:
                one_input(data)
            except Exception:
                broken += 1
                sys.stdout.write("CRASH: %s\n%s" % (path, traceback.format_exc()))
        sys.stdout.write("replayed %d inputs, %d crashed\n" % (len(files), broken))
        sys.exit(1 if broken else 0)
    import atheris
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
