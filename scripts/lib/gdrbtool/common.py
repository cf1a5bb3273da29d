"""What every subcommand of scripts/gdrb shares: errors and exit codes, the CSV schema read
from its one definition (common/core/csv_schema.def), a results CSV reader that refuses what does
not follow it, message sizes in the binaries' syntax, JSON read as text values (Json), the
all-or-nothing writer, and the small formatting helpers."""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

# Where the files are, from the source tree or installed: layout.py, their one place.
from .layout import BIN_ROOT, GDRB, LIB, PROFILES, RESULTS_HOME, SCHEMA_DEF, TREE  # noqa: F401

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# The name messages start with ("gdrb-accept: ..."); set by the subcommand.
prog = "gdrb"


class Stop(Exception):
    """Ends the subcommand: one line on stderr (when there is one) and an exit status."""

    def __init__(self, status: int, message: str = ""):
        # A message quotes what it refuses: a line break or an escape sequence in it stays inert.
        message = term(message)
        super().__init__(message)
        self.status = status
        self.message = message


def usage_error(message: str) -> Stop:
    """Bad usage or input: one line, exit 2 (raise what this returns)."""
    return Stop(EXIT_USAGE, message)


def failure(message: str) -> Stop:
    """A failure: one line, exit 1 (raise what this returns)."""
    return Stop(EXIT_FAIL, message)


# Control characters, C0, DEL and C1: what a terminal or a renderer may act on.
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def term(s: str) -> str:
    """S fit for a terminal on one line: control characters (an escape sequence read from the
    data would move the cursor, retitle the window, or hide what follows) and line breaks as '?'."""
    return CONTROLS.sub("?", s)


class ArgParser(argparse.ArgumentParser):
    """argparse that refuses bad usage as every gdrbench tool does: one line, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        message = re.sub(r"^argument ([^ ]+): ", r"\1: ", message)
        message = re.sub(r"^unrecognized arguments: (.*)", r"unknown option '\1'", message)
        say(message + "; see --help")
        sys.exit(EXIT_USAGE)


def say(message: str) -> None:
    # A value of thousands of digits is quoted by its first 40: the line stays a line.
    sys.stderr.write("%s: %s\n" % (prog, term(_LONG_DIGITS.sub(r"\1...", message))))
    sys.stderr.flush()


_LONG_DIGITS = re.compile(r"([0-9]{40})[0-9]+")


def open_regular(path: str, nofollow: bool = False, **kw: Any) -> IO[Any]:
    """PATH opened for reading (open()'s keywords KW) when it is a regular file; raises OSError
    with its reason otherwise. Opened without blocking and checked with fstat after the open:
    a FIFO is refused, never waited on; a device or a directory is never read. NOFOLLOW (every
    file a verdict reads as evidence): a symbolic link there is refused, never followed."""
    if "\0" in path:
        raise OSError(errno.EINVAL, "a NUL byte in the file name")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (os.O_NOFOLLOW if nofollow else 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if nofollow and e.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link (never followed)")
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        return open(fd, **kw)
    except BaseException:
        os.close(fd)
        raise


def read_regular_bytes(path: str, limit: int, nofollow: bool = False) -> bytes:
    """The bytes of PATH, a regular file (open_regular) of at most LIMIT bytes; raises OSError
    with its reason otherwise."""
    with open_regular(path, nofollow, mode="rb") as f:
        if os.fstat(f.fileno()).st_size > limit:
            raise OSError(0, "larger than %d bytes" % limit)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(0, "larger than %d bytes" % limit)
    return data


def read_regular(path: str, limit: int) -> str:
    """The text of PATH, a regular file (open_regular) of at most LIMIT bytes (UTF-8,
    undecodable bytes as U+FFFD); raises OSError with its reason otherwise."""
    return read_regular_bytes(path, limit).decode("utf-8", "replace")


# --- the CSV schema ------------------------------------------------------------

class Schema:
    """The columns of common/core/csv_schema.def: names in order and their types. The other CSVs'
    definitions beside it are read the same way, each with its macro (pairs_schema.def:
    GDRB_PAIRS_COL, pairs_ranks.def: GDRB_RANKS_COL)."""

    def __init__(self, path: Path = SCHEMA_DEF, macro: str = "GDRB_CSV_COL"):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise failure("%s: cannot read the CSV schema: %s" % (path, e.strerror))
        self.columns: List[str] = []
        self.types: Dict[str, str] = {}
        # Each version's column count: a version only appends columns (GDRB_CSV_VERSION_END(N)
        # follows its last), so an older file's header is a prefix of this one's.
        self.widths: Dict[int, int] = {}
        for m in re.finditer(r"^(?:%s\(([A-Za-z0-9_]+), (text|integer|decimal)\)|GDRB_CSV_VERSION_END\(([0-9]+)\))$"
                             % macro, text, re.M):
            if m.group(3):
                self.widths[int(m.group(3))] = len(self.columns)
                continue
            self.columns.append(m.group(1))
            self.types[m.group(1)] = m.group(2)
        if not self.columns:
            raise failure("%s: no %s lines: not the CSV schema" % (path, macro))
        self.header = ",".join(self.columns)
        self.version = max(self.widths, default=1)
        self.widths[self.version] = len(self.columns)
        # The header each version's files start with.
        self.versions = {",".join(self.columns[:n]): v for v, n in self.widths.items()}
        self.index = {name: i for i, name in enumerate(self.columns)}
        self.numeric = {n for n, t in self.types.items() if t != "text"}
        self.integer = {n for n, t in self.types.items() if t == "integer"}

    def value_fault(self, name: str, v: str) -> str:
        """Why V is not a value of column NAME as the binaries write it; "" when it is one.
        An empty field is the binaries' "no figure": valid here, the reader decides."""
        if v == "" or name not in self.numeric:
            return ""
        long = _LONG.fullmatch(v) is not None
        if name in self.integer:
            if _DIGITS.fullmatch(v):
                return ""
            return "more than %d digits: not a 64-bit count" % MAX_INT_DIGITS if long else "not a non-negative integer"
        if decimal(v) is not None:
            return ""
        return ("more than %d digits each side of the point: not a finite number" % MAX_DIGITS if long
                else "not a finite non-negative decimal number")


# Numbers as the binaries write them: ASCII digits only (float() and int() also take '１２',
# '1_000', 'inf', 'nan' and '1e999'), and no more digits than a double or a uint64_t holds,
# so that every number read is finite and int() never meets its 4300-digit limit.
MAX_INT_DIGITS = 20          # 2^64 - 1 has 20
MAX_DIGITS = 30              # each side of the point: 1e30 is far inside a double
MAX_SIZE = (1 << 64) - 1     # a size_t
_DIGITS = re.compile(r"[0-9]{1,%d}" % MAX_INT_DIGITS)
_DECIMAL = re.compile(r"[0-9]{1,%d}(\.[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))
_LONG = re.compile(r"[0-9]+(\.[0-9]+)?")     # digits, of any length


def decimal(text: str) -> Optional[float]:
    """TEXT as a float when it is a plain non-negative decimal (digits, optionally a point and
    digits) of at most MAX_DIGITS digits each side of the point; None otherwise."""
    return float(text) if _DECIMAL.fullmatch(text) else None


def integer(text: str, limit: int = MAX_SIZE) -> Optional[int]:
    """TEXT as an int when it is ASCII digits worth at most LIMIT; None otherwise."""
    return int(text) if _DIGITS.fullmatch(text) and int(text) <= limit else None
_schema: Optional[Schema] = None


def schema() -> Schema:
    global _schema
    if _schema is None:
        _schema = Schema()
    return _schema


def csv_split(line: str) -> List[str]:
    """The fields of one CSV line: a quote opens or closes a quoted part anywhere in a field,
    "" inside one is a quote (as csv_split of tests/support/csv_split.awk, the test suite's awk splitter,
    reads them)."""
    if '"' not in line:
        return line.split(",")
    fields, cur, inq, i = [], [], False, 0
    while i < len(line):
        c = line[i]
        if inq:
            if c == '"':
                if line[i + 1:i + 2] == '"':
                    cur.append('"')
                    i += 1
                else:
                    inq = False
            else:
                cur.append(c)
        elif c == '"':
            inq = True
        elif c == ",":
            fields.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    fields.append("".join(cur))
    return fields


def read_csv(path: str) -> Iterator[Tuple[int, List[str]]]:
    """The data rows of a results CSV as (line number, fields), read by the one reader of
    evidence (evidence.read_table: a regular file, never a link; lines may end in CRLF).
    Refuses, with one line "FILE:LINE: ..." and exit 2, a file whose first line is not the
    header of a version of the schema, or a row it cannot read (another number of fields, a
    CR inside a line, a last line cut short without its line end). An older version's rows
    come with the newer columns empty."""
    from . import evidence
    faults = evidence.Faults()
    try:
        _, rows = evidence.read_table(path, schema(), faults, "a gdrbench results CSV", crlf=True,
                                      limit=RESULTS_LIMIT)
    except evidence.OtherHeader:
        raise usage_error("%s:1: not a gdrbench results CSV: the first line must be the schema's "
                          "header (results/README.md), starting 'benchmark,layer,mem,path,'" % path)
    except OSError as e:
        raise usage_error("%s: cannot read: %s" % (path, e.strerror or "read error"))
    if faults:
        raise usage_error(faults.items[0].text())
    return iter(rows)


RESULTS_LIMIT = 1 << 30      # the largest results.csv read (a sweep writes a few MB)


def csv_quote(s: str) -> str:
    """S as one CSV field."""
    if not re.search(r'[,"\r\n]', s):
        return s
    return '"' + re.sub(r"[\r\n]", " ", s.replace('"', '""')) + '"'


# What a spreadsheet takes for the start of a formula (=HYPERLINK, =cmd|...): a text cell that
# starts with one gets a leading apostrophe, as the binaries write theirs (GDRB_CSV_FORMULA_LEAD,
# gdrb_report.h).
CSV_FORMULA_LEAD = "=+-@\t\r"


def csv_text(s: str) -> str:
    """Text S (a note, a GPU name: never a number) as one CSV field, inert for spreadsheets.
    Every text field the tools write goes through here."""
    return csv_quote("'" + s if s and s[0] in CSV_FORMULA_LEAD else s)


def results_csv(arg: str) -> str:
    """The results.csv of a results directory (or ARG itself when it is a file)."""
    if not arg:
        raise usage_error("expected a results directory (results/<date>-<label>/); see --help")
    if os.path.isfile(arg):
        csv_path = arg
    elif os.path.isdir(arg):
        csv_path = os.path.join(arg.rstrip("/") or "/", "results.csv")
    else:
        raise usage_error("%s: no such results directory" % arg)
    if not os.path.isfile(csv_path):
        raise usage_error("%s: no results.csv in this directory; expected a 'gdrb sweep' results directory" % arg)
    if os.path.getsize(csv_path) == 0:
        raise usage_error("%s:1: empty file; expected the header of the CSV schema (results/README.md)" % csv_path)
    return csv_path


# --- a collective's placement (docs/csv-schema.md) -----------------------------------

# The placement column's value of a row measured in place. Rows are compared like with like:
# an in-place row only with in-place rows; out-of-place rows and rows without the choice
# (point to point, files older than the column) with one another, as they always were.
IN_PLACE = "in-place"


# --- NCCL rows (docs/nccl.md) ----------------------------------------------------

# The NCCL binaries' note parts that say why GPUDirect RDMA did not carry the bytes as asked,
# or why NCCL's log could not be read (common/nccl/nccl_readback.c writes them).
NCCL_GDR_UNUSED = "GPUDirect allowed but "
NCCL_GDR_OFF_USED = "GPUDirect switched off but "
NCCL_TRANSPORT_UNKNOWN = "transport unknown: "
_GDR_CONNECTIONS = re.compile(r"([0-9]{1,9})/([0-9]{1,9})")


def gdr_connections(v: str) -> Optional[Tuple[int, int]]:
    """The gdr_connections column G/N (network connections with GPUDirect RDMA of all) as
    (G, N); None where V is not of that form."""
    m = _GDR_CONNECTIONS.fullmatch(v)
    return (int(m.group(1)), int(m.group(2))) if m else None


# --- sizes ---------------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}


def size_parse(text: str) -> int:
    """Bytes for "8", "64K", "1MiB", "2g" (binary suffixes, any case); -1 if not a size (or
    more than a size_t holds)."""
    m = re.fullmatch(r"([0-9]{1,%d})([A-Za-z]*)" % MAX_INT_DIGITS, text)
    if not m or m.group(2).lower() not in _UNITS:
        return -1
    v = int(m.group(1)) * _UNITS[m.group(2).lower()]
    return v if 0 < v <= MAX_SIZE else -1


def sizes_expand(spec: str) -> Optional[List[int]]:
    """The sizes a binary measures for -m SPEC ("MIN:MAX" doubles from MIN and always ends at
    MAX; "A,B,C" is a list); None if SPEC is not a size list."""
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 2:
            return None
        lo, hi = size_parse(parts[0]), size_parse(parts[1])
        if lo < 0 or hi < 0 or lo > hi:
            return None
        out = []
        v = lo
        while v <= hi:
            out.append(v)
            v *= 2
        if out[-1] != hi:
            out.append(hi)
        return out
    out = [size_parse(p) for p in spec.split(",")]
    return None if any(v < 0 for v in out) else out


def size_fmt(v: float, sep: str = "") -> str:
    """"8B", "4KiB", "1MiB", "1GiB" (SEP between number and unit: "4 KiB"); sizes that are not
    whole units keep the smaller one."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while u < 4 and v >= 1024 and v % 1024 == 0:
        v = v // 1024 if isinstance(v, int) else v / 1024
        u += 1
    return awk_num(v) + sep + units[u]


def size_arg(v: int) -> str:
    """The shortest form the binaries' -m reads: "4M", "512K", "100"."""
    for suffix, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if v >= 1 << shift and v % (1 << shift) == 0:
            return "%d%s" % (v >> shift, suffix)
    return "%d" % v


# --- output helpers ------------------------------------------------------------

def utf8_text(s: str) -> str:
    """S with the lone surrogates that hold a file name's non-UTF-8 bytes as U+FFFD: JSON and
    XML files are UTF-8."""
    return _SURROGATE.sub("\ufffd", s)


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_str(s: str) -> str:
    """S as a JSON string literal (control characters other than tab, LF and CR as spaces)."""
    s = utf8_text(s).replace("\\", "\\\\").replace('"', '\\"')
    s = s.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return '"' + re.sub(r"[\x00-\x1f]", " ", s) + '"'


def xml_str(s: str) -> str:
    """S escaped for XML text and attributes."""
    s = utf8_text(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", " ", s)


def num_fmt(v: float) -> str:
    """A measured value for people: 4 significant digits, no exponent below 1e9."""
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    if a >= 1:
        return "%.3f" % v
    return "%.4g" % v


def sig3(v: float) -> str:
    """Three significant digits, no exponent below 1000: 0.000842, 3.31, 24.7, 1234."""
    if v >= 1000 or v <= 0:
        return "%.0f" % v
    s, d = v, 0
    while s < 100 and d < 12:
        s *= 10
        d += 1
    return "%.*f" % (d, v)


def duration(seconds: float) -> str:
    """"41 s" or "3 min"."""
    seconds = int(seconds)
    return "%d s" % seconds if seconds < 90 else "%d min" % ((seconds + 30) // 60)


_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./:=,+@%-]+$")


def shell_join(words: Sequence[str]) -> str:
    """One command line that a shell reads back as WORDS (quoted where needed)."""
    return " ".join(w if _PLAIN_WORD.match(w) else "'" + w.replace("'", "'\\''") + "'" for w in words)


def awk_num(v: float) -> str:
    """V as gawk turns a number into text (print, %s, concatenation): integral values whole at
    any size, others %.6g (CONVFMT)."""
    if v == v and v not in (float("inf"), float("-inf")) and v == int(v):
        return "%d" % int(v)
    return "%.6g" % v


_AWK_NUMBER = re.compile(r"[ \t\n\v\f\r]*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")


def awk_value(s: str) -> float:
    """awk's S + 0: the number S starts with (after white space), 0 when none."""
    m = _AWK_NUMBER.match(s)
    return float(m.group(0)) if m else 0.0


_LATENCY = re.compile(r"(^|_)(lat|latency|barrier)$")


def is_latency(bench: str) -> bool:
    """A benchmark whose figure is a latency (lower is better), not a bandwidth."""
    return _LATENCY.search(bench) is not None


def path_rank(p: str) -> str:
    """The order paths are shown in: direct, staged, then the others by name."""
    return ("0" if p == "direct" else "1" if p == "staged" else "2") + p


# --- JSON ----------------------------------------------------------------------

class Json:
    """A JSON value read as text: text(path...) is the value as written
    ("null", "true", numbers as in the file), "" where there is none or it is an object or
    array; j(path...) is the same with null as ""; count(path...) an array's length, 0 when it
    is not an array; at(path...) the value below PATH, itself a Json."""

    def __init__(self, value: Any = None):
        self.value = value

    @staticmethod
    def load(path: str) -> "Json":
        """The JSON of PATH; raises OSError, or ValueError (the reason and where) when it is
        not JSON."""
        with open_regular(path, mode="r", encoding="utf-8", errors="replace") as f:
            return Json.parse(f.read())

    @staticmethod
    def parse(text: str) -> "Json":
        """TEXT as JSON; raises ValueError (the reason and where) when it is not JSON."""
        try:
            # Numbers stay as written; NaN and Infinity are not JSON.
            return Json(json.loads(text, strict=False, parse_int=str, parse_float=str,
                                   parse_constant=_not_json))
        except json.JSONDecodeError as e:
            raise ValueError("%s at character %d" % (e.msg, e.pos + 1))
        except RecursionError:
            raise ValueError("arrays or objects nested too deeply")

    def get(self, *path: Any) -> Any:
        v = self.value
        for k in path:
            if isinstance(k, int) and isinstance(v, list) and 0 <= k < len(v):
                v = v[k]
            elif isinstance(k, str) and isinstance(v, dict) and k in v:
                v = v[k]
            else:
                return _MISSING
        return v

    def at(self, *path: Any) -> "Json":
        return Json(self.get(*path))

    def text(self, *path: Any) -> str:
        v = self.get(*path)
        if v is None:
            return "null"
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, str):
            return _clean(v)
        return ""

    def j(self, *path: Any) -> str:
        return "" if self.get(*path) is None else self.text(*path)

    def count(self, *path: Any) -> int:
        v = self.get(*path)
        return len(v) if isinstance(v, list) else 0

    def is_array(self, *path: Any) -> bool:
        return isinstance(self.get(*path), list)


_MISSING = object()


def _not_json(word: str) -> Any:
    raise json.JSONDecodeError("unexpected '%s'" % word[0], word, 0)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _clean(s: str) -> str:
    """S fit for every output: \\b and \\f as spaces, other control characters (but tab, LF
    and CR) and lone surrogates as '?'."""
    s = s.replace("\b", " ").replace("\f", " ")
    s = _CONTROL.sub("?", s)
    return s.encode("utf-8", "replace").decode("utf-8")


def load_json(path: str) -> Json:
    """PATH's JSON; refuses (exit 2) a file that cannot be read or is not JSON, in one line."""
    try:
        return Json.load(path)
    except OSError as e:
        raise usage_error("%s: not JSON: %s" % (path, e.strerror))
    except ValueError as e:
        raise usage_error("%s: not JSON: %s" % (path, e))


# --- writing -------------------------------------------------------------------

class Refused(OSError):
    """A target that is there and is not a regular file: never written through."""


def _refuse_odd(st: os.stat_result) -> None:
    """Raises Refused when ST (an lstat) is not a regular file."""
    if stat.S_ISLNK(st.st_mode):
        raise Refused(errno.ELOOP, "a symbolic link (never followed; remove it or choose another file)")
    if not stat.S_ISREG(st.st_mode):
        raise Refused(errno.EINVAL, "not a regular file (remove it or choose another file)")


class Staged:
    """A file written beside PATH under a name of its own (created O_EXCL, never a planted
    link), then renamed over PATH by commit(): PATH is whole or as it was, and a link or
    anything but a regular file at PATH is refused, never followed. Raises OSError (Refused
    for such a target). The directory is held open: renamed within the one it was opened in."""

    def __init__(self, path: str):
        self.path = path
        folder, self.name = os.path.split(path)
        self.tmp = ""
        self.file: Optional[Any] = None
        self.dfd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self.check()
            # A name of its own: a dot (hidden), PATH's name cut short, random letters.
            for _ in range(100):
                tmp = ".%s.%s.tmp" % (self.name[:120], secrets.token_hex(6))
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                                 dir_fd=self.dfd)
                except FileExistsError:
                    continue
                self.tmp = tmp
                self.file = os.fdopen(fd, "wb")
                break
            else:
                raise OSError(errno.EEXIST, "no free temporary name beside it")
        except BaseException:
            os.close(self.dfd)
            raise

    def check(self) -> None:
        try:
            st = os.stat(self.name, dir_fd=self.dfd, follow_symlinks=False)
        except FileNotFoundError:
            return
        _refuse_odd(st)

    def commit(self) -> None:
        """The file closed and renamed over PATH (what a link there pointed to is untouched)."""
        self.file.close()
        self.check()
        os.rename(self.tmp, self.name, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
        self.tmp = ""
        self.close()

    def discard(self) -> None:
        """The temporary file gone, PATH untouched."""
        if self.file is not None and not self.file.closed:
            try:
                self.file.close()
            except OSError:
                pass
        if self.tmp:
            try:
                os.unlink(self.tmp, dir_fd=self.dfd)
            except OSError:
                pass
            self.tmp = ""
        self.close()

    def close(self) -> None:
        if self.dfd >= 0:
            os.close(self.dfd)
            self.dfd = -1


def encode(text: str) -> bytes:
    """TEXT as UTF-8 for a file: bytes read undecodable go back as they were read
    (surrogateescape), any other lone surrogate as '?'."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _device(path: str) -> bool:
    """PATH is (or links to) a character device or a pipe (/dev/stdout on a terminal or a pipe)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def write_all(files: Sequence[Tuple[str, Union[str, bytes]]], quiet: bool = False,
              devices: Sequence[str] = ()) -> None:
    """Every (FILE, CONTENT) whole, or none of them: each is written beside FILE (Staged),
    and all are renamed once every one is complete. A FILE that is a link or not a regular
    file is refused, never written through; only a FILE among DEVICES (one the user named in
    an option) that is a device or a pipe is written in place. The first that cannot be
    written is said once as "FILE: cannot write: why" (no program name: scripts anchor on it;
    QUIET: not said); then no temporary file is left and Stop(1) is raised. CONTENT is text
    (UTF-8) or bytes."""
    staged: List[Staged] = []

    def give_up(path: str, e: OSError) -> Stop:
        for st in staged:
            st.discard()
        if not quiet:
            sys.stderr.write("%s: cannot write: %s\n" % (path, e.strerror or "write error"))
            sys.stderr.flush()
        return Stop(EXIT_FAIL)

    direct = []
    for path, content in files:
        data = content if isinstance(content, bytes) else encode(content)
        if path in devices and _device(path):
            direct.append((path, data))
            continue
        try:
            st = Staged(path)
            staged.append(st)
            st.file.write(data)
            st.file.flush()
        except OSError as e:
            raise give_up(path, e)
    for path, data in direct:
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise give_up(path, e)
    for st in staged:
        try:
            st.file.close()
        except OSError as e:
            raise give_up(st.path, e)
    for st in staged:
        try:
            st.commit()
        except OSError as e:
            raise give_up(st.path, e)


def open_new(path: str) -> Any:
    """PATH created anew for writing (binary), as Staged does: a link or a file that is not
    regular at PATH is refused (Refused), never followed; an earlier regular file is replaced."""
    st = Staged(path)
    try:
        # Renamed at once: the caller (a log, a child's output) writes into the file in place.
        os.rename(st.tmp, st.name, src_dir_fd=st.dfd, dst_dir_fd=st.dfd)
    except BaseException:
        st.discard()
        raise
    st.tmp = ""
    st.close()
    return st.file


def open_append(path: str) -> Any:
    """PATH opened to append (binary), created when missing; a link there is refused (O_NOFOLLOW),
    so is anything but a regular file (a FIFO is not waited on)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
                 | os.O_CLOEXEC, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab")


_FILE_NAME = re.compile(r"^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,99}$")


def file_name(name: str) -> str:
    """NAME (a benchmark and memory kind from the data) as one file name that stays where it is
    put: NAME itself when it is letters, digits, '.', '_', '+' and '-' (not first a dot or a
    dash), at most 100 characters; else those characters kept, every other as '_', cut to 80,
    and a hash of NAME added, so that two names never meet in one file."""
    if _FILE_NAME.match(name):
        return name
    kept = re.sub(r"[^A-Za-z0-9._+-]", "_", name)[:80]
    kept = "_" + kept[1:] if kept[:1] in ("", ".", "-") else kept
    return "%s~%s" % (kept, hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12])


def figure_name(bench: str, mem: str, in_place: bool) -> str:
    """The file name, without extension, of the figure of one benchmark and memory kind, its
    in-place rows apart (BENCH-MEM, BENCH-MEM-in-place): gdrb-plot writes it, gdrb-report
    embeds it."""
    return file_name("%s-%s%s" % (bench, mem, "-" + IN_PLACE if in_place else ""))


def make_dir(path: str) -> None:
    """PATH a directory, created when missing (with its parents); one that is there as a link
    (or as anything but a directory) is refused (Refused): what is written below it stays below
    it. The parents are the caller's choice and are not checked."""
    parent = os.path.dirname(path.rstrip("/"))
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path)
        return
    except FileExistsError:
        pass
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise Refused(errno.ELOOP, "a symbolic link (never followed; give a directory)")
    if not stat.S_ISDIR(st.st_mode):
        raise Refused(errno.ENOTDIR, "not a directory")


def resolve_profile(p: str) -> str:
    """The profile's file: P itself when it is a file, else the shipped profile of that name."""
    if os.path.isfile(p):
        return p
    name = p[:-len(".profile")] if p.endswith(".profile") else p
    if "/" not in p and (PROFILES / (name + ".profile")).is_file():
        return str(PROFILES / (name + ".profile"))
    shipped = ", ".join(sorted(f.name[:-len(".profile")] for f in PROFILES.glob("*.profile")))
    raise usage_error("%s: no such profile; expected a file or a shipped profile: %s" % (p, shipped or "none"))


def cuda_toolkit_version() -> str:
    """The CUDA Toolkit's version from nvcc (on PATH, else under CUDA_HOME or /usr/local/cuda)."""
    for nvcc in (shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if not nvcc or not os.access(nvcc, os.X_OK):
            continue
        try:
            out = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"release [0-9.]*, V([0-9.]*)", out)
        if m:
            return m.group(1)
    return ""


def print_help(doc: str) -> None:
    sys.stdout.write(doc.strip("\n") + "\n")
