"""scripts/gdrb: the subcommand dispatch. Each subcommand's module has main(argv) -> exit status
and parses its own options (one line naming the option and its accepted form, exit 2).

Before a subcommand runs, the installation is checked (layout.py): a profile directory or CSV
schema that is not there, or, for the sweep, binaries beside an installed gdrb that are of
another version, end it with one line and exit 2 before anything is written.

This is the one entry of every subcommand, so it also holds the
last resort: an error no subcommand turned into its own line is still one line and exit 1,
never a Python traceback. Each such error is a bug to fix where it arises; this only keeps
the user's terminal readable meanwhile."""

from __future__ import annotations

import codecs
import importlib
import os
import signal
import sys
from typing import List

from . import common, layout

SUBCOMMANDS = ("sweep", "plot", "accept", "report", "inventory", "rails")


def _unencodable(e: UnicodeError):
    """What a terminal or pipe cannot encode: a file name's bytes that are not UTF-8 (held as
    lone surrogates) as those bytes; any other character as a \\u escape."""
    try:
        return codecs.lookup_error("surrogateescape")(e)
    except UnicodeError:
        return codecs.lookup_error("backslashreplace")(e)


codecs.register_error("gdrb", _unencodable)


def _stdio() -> None:
    """stdout and stderr that take any text: a non-UTF-8 locale (LC_ALL=C, EUC-JP) or a file
    name of other bytes never makes a message raise."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="gdrb")
            except (ValueError, OSError):
                pass


def _stdout_gone() -> None:
    """A reader that went away (gdrb accept ... | head): what is still buffered goes nowhere,
    so that the interpreter's last flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def main(argv: List[str], doc: str) -> int:
    _stdio()
    try:
        status = _run(argv, doc)
        sys.stdout.flush()       # here, where a reader gone is caught, not at the interpreter's exit
        return status
    except common.Stop as e:
        if e.message:
            common.say(e.message)
        return e.status
    except BrokenPipeError:
        _stdout_gone()
        return common.EXIT_FAIL
    except KeyboardInterrupt:
        # Ctrl-C before a subcommand traps it (the sweep does, once its directory exists).
        common.say("interrupted")
        return common.EXIT_INTERRUPTED
    except Exception as e:      # the last resort: see the docstring
        what = str(e).splitlines()[0] if str(e) else ""
        if len(what) > 200:
            what = what[:200] + "..."
        common.say("internal error: %s%s (a bug: please report it with the command line)"
                   % (type(e).__name__, ": " + what if what else ""))
        return common.EXIT_FAIL


def _run(argv: List[str], doc: str) -> int:
    if argv and argv[0] in ("-h", "--help"):
        common.print_help(doc)
        return 0
    if argv and argv[0] in ("-V", "--version"):
        sys.stdout.write("gdrb (gdrbench) %s\n" % (layout.version() or "unknown"))
        return 0
    if not argv:
        sys.stderr.write("gdrb: expected a subcommand: %s; see --help\n" % ", ".join(SUBCOMMANDS))
        return common.EXIT_USAGE
    sub = argv[0]
    if sub not in SUBCOMMANDS:
        sys.stderr.write("gdrb: unknown subcommand '%s'; expected %s\n" % (sub, ", ".join(SUBCOMMANDS)))
        return common.EXIT_USAGE
    common.prog = "gdrb-" + sub
    if not (len(argv) > 1 and argv[1] in ("-h", "--help")):
        _check_layout(sub)
    return importlib.import_module("gdrbtool." + sub).main(argv[1:])


def _check_layout(sub: str) -> None:
    """What the subcommand needs of the installation is there (see the module's docstring)."""
    gone = layout.missing()
    if gone:
        raise common.usage_error("%s not there: %s is incomplete; reinstall gdrbench (docs/install.md)"
                                 % (" and ".join(gone), "this installation" if layout.INSTALLED
                                    else "this source tree"))
    if sub == "sweep":
        binary, theirs = layout.neighbour_version()
        if binary:
            raise common.usage_error("this gdrb is gdrbench %s, but %s beside it is gdrbench %s: one "
                                     "installation holds both; reinstall it, or run the gdrb installed with those binaries"
                                     % (layout.version() or "unknown", binary, theirs))
