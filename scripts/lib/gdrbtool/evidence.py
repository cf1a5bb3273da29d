"""The one reader of evidence: every file a verdict reads (results.csv, the counter files, the
pairs CSV, the matrices, doctor.json) is opened here and its rows split here, under one rule.

A file is opened only when it is a regular file: never through a symbolic link (O_NOFOLLOW),
never waited on (O_NONBLOCK: a FIFO is refused), never more than its size bound. A table's
first line must be a header of its schema; after it, each row a rule needs and cannot read is
a Fault (file, line, column, why), never skipped in silence:
  - a line that does not end in LF: a CR in it (CRLF or CR-only line ends, which no gdrbench
    binary writes), or the last line without its LF (the file was cut while being written: a
    cut run's row is not read, and says so);
  - an empty line, or a row with another number of fields than its header;
  - a count that is empty, negative, not ASCII digits, not finite or beyond what its column
    allows (at most 2^64 - 1), read through count().
The caller decides what a fault does to its verdict (docs/counters.md, "Judging"): a rule whose
evidence is partly unreadable is INVALID, never PASS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .common import Json, Schema, csv_split, read_regular_bytes

LIMIT = 256 << 20            # the largest counter file, pairs CSV or doctor.json read
MAX_COUNT = (1 << 64) - 1    # a uint64_t: the largest count a binary writes
SHOWN = 3                    # faults a message names
KEPT = 50                    # faults kept to list (verdict.json, stdout); the rest are counted


class OtherHeader(OSError):
    """A file whose first line is no header of its schema (or that is empty)."""


def read_bytes(path: str, limit: int = LIMIT) -> bytes:
    """The bytes of PATH, a regular file of at most LIMIT bytes; raises OSError with its reason
    otherwise (a link: never followed; a FIFO or a device: never read or waited on)."""
    return read_regular_bytes(path, limit, nofollow=True)


def read_json(path: str, limit: int = LIMIT) -> Json:
    """The JSON of PATH (read_bytes' rule; numbers kept as written, Json.parse); raises OSError,
    or ValueError (the reason and where) when it is not JSON."""
    return Json.parse(read_bytes(path, limit).decode("utf-8", "replace"))


@dataclass(frozen=True)
class Fault:
    """A row (LINE > 0) or a whole file (LINE 0) a rule needed and could not read; COLUMN and
    VALUE where one field of the row is at fault."""
    file: str
    line: int
    why: str
    column: str = ""
    value: str = ""

    def text(self) -> str:
        """"FILE:LINE: COLUMN 'VALUE' WHY" ("FILE:LINE: WHY" for a row, "FILE: WHY" for a file)."""
        where = "%s:%d" % (self.file, self.line) if self.line else self.file
        what = "%s '%s' " % (self.column, self.value if len(self.value) <= 40 else self.value[:40] + "...") \
            if self.column else ""
        return "%s: %s%s" % (where, what, self.why)


@dataclass
class Faults:
    """The faults met while reading evidence: how many, and the first KEPT in the order met
    (a file of a million bad rows is counted, not held)."""
    items: List[Fault] = field(default_factory=list)
    n: int = 0

    def __len__(self) -> int:
        return self.n

    def add(self, file: str, line: int, why: str, column: str = "", value: str = "") -> None:
        self.n += 1
        if len(self.items) < KEPT:
            self.items.append(Fault(file, line, why, column, value[:200]))

    def message(self, what: str = "evidence") -> str:
        """"3 rows of the evidence could not be read: A; B; C; and 1 more" (a whole file counts
        as one)."""
        n = self.n
        shown = "; ".join(f.text() for f in self.items[:SHOWN])
        more = "; and %d more" % (n - SHOWN) if n > SHOWN else ""
        return "%d %s of the %s could not be read: %s%s" % (n, "row" if n == 1 else "rows", what, shown, more)

    def count(self, file: str, line: int, column: str, text: str, limit: int = MAX_COUNT) -> Optional[int]:
        """TEXT (column COLUMN of FILE:LINE) as a count; None, and a fault, where it is not one."""
        value, why = count(text, limit)
        if why:
            self.add(file, line, why, column, text)
        return value


_DIGITS = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")
_NOT_FINITE = re.compile(r"[-+]?(nan|inf|infinity)", re.I)


def count(text: str, limit: int = MAX_COUNT) -> Tuple[Optional[int], str]:
    """TEXT as a count (ASCII digits worth at most LIMIT) and ""; or None and why it is not one."""
    if text == "":
        return None, "is empty"
    if _DIGITS.fullmatch(text):
        # 2^64 - 1 has 20 digits: a longer run is out of range without int() reading it.
        if len(text) <= 20 and int(text) <= limit:
            return int(text), ""
        return None, "is beyond %d" % limit
    if _NOT_FINITE.fullmatch(text):
        return None, "is not finite"
    if text[0] == "-" and _NUMBER.fullmatch(text[1:]):
        return None, "is negative"
    return None, "is not a non-negative integer"


def connections(text: str) -> Tuple[Optional[Tuple[int, int]], str]:
    """TEXT, NCCL's gdr_connections G/N (network connections with GPUDirect RDMA of all), as
    (G, N) and ""; or None and why it is not one (each a count() of at most 10^9 - 1, G at
    most N)."""
    what = "is not G/N (connections with GPUDirect RDMA of all, G at most N)"
    parts = text.split("/")
    if len(parts) != 2:
        return None, what
    got = [count(p, 10 ** 9 - 1) for p in parts]
    for name, (_, why) in zip("GN", got):
        if why:
            return None, "%s: %s %s" % (what, name, why)
    g, n = got[0][0], got[1][0]
    if g > n:
        return None, "%s: G above N" % what
    return (g, n), ""


def read_table(path: str, schema: Schema, faults: Faults, what: str, crlf: bool = False,
               limit: int = LIMIT) -> Tuple[int, List[Tuple[int, List[str]]]]:
    """The rows of the CSV PATH of SCHEMA (WHAT names it: "a counter file") as (line number,
    fields), an older version's padded with its newer columns empty, and its schema version.
    Rows that cannot be read are FAULTS, never returned. CRLF: each line may end in CRLF (a
    results.csv saved by a spreadsheet); without it only LF ends a line. Raises OSError where
    the file cannot be read, OtherHeader where its first line is no header of SCHEMA."""
    text = read_bytes(path, limit).decode("utf-8", "replace")
    lines = text.split("\n")
    torn = lines.pop()               # "" when the file ends in LF
    head = lines[0] if lines else torn
    if crlf and head.endswith("\r"):
        head = head[:-1]
    version = schema.versions.get(head)
    if version is None:
        if schema.versions.get(head.rstrip("\r")) is not None:
            raise OtherHeader(0, "not %s as gdrbench writes it: its lines end in CR or CRLF, not LF" % what)
        raise OtherHeader(0, "not %s of this gdrbench (another header)" % what)
    nf = schema.widths[version]
    pad = [""] * (len(schema.columns) - nf)
    which = "the schema" if version == schema.version else "version %d of the schema" % version
    rows: List[Tuple[int, List[str]]] = []
    for lineno, line in enumerate(lines[1:], start=2):
        if crlf and line.endswith("\r"):
            line = line[:-1]
        if "\r" in line:
            faults.add(path, lineno, "ends in CR or CRLF, not LF (not as gdrbench writes it)")
            continue
        if not line:
            faults.add(path, lineno, "is empty")
            continue
        fields = csv_split(line)
        if len(fields) != nf:
            faults.add(path, lineno, "has %d fields, %s has %d" % (len(fields), which, nf))
            continue
        rows.append((lineno, fields + pad))
    if torn and lines:
        faults.add(path, len(lines) + 1, "has no line end: the file was cut while it was written (a cut run)")
    return version, rows

