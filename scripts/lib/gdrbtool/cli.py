"""scripts/gdrb: the subcommand dispatch. Each subcommand's module has main(argv) -> exit status
and parses its own options (one line naming the option and its accepted form, exit 2)."""

from __future__ import annotations

import importlib
import signal
import sys
from typing import List

from . import common

SUBCOMMANDS = ("sweep", "plot", "accept", "report")


def main(argv: List[str], doc: str) -> int:
    if argv and argv[0] in ("-h", "--help"):
        common.print_help(doc)
        return 0
    if not argv:
        sys.stderr.write("gdrb: expected a subcommand: %s; see --help\n" % ", ".join(SUBCOMMANDS))
        return common.EXIT_USAGE
    sub = argv[0]
    if sub not in SUBCOMMANDS:
        sys.stderr.write("gdrb: unknown subcommand '%s'; expected %s\n" % (sub, ", ".join(SUBCOMMANDS)))
        return common.EXIT_USAGE
    common.prog = "gdrb-" + sub
    module = importlib.import_module("gdrbtool." + sub)
    try:
        return module.main(argv[1:])
    except common.Stop as e:
        if e.message:
            common.say(e.message)
        return e.status
    except BrokenPipeError:
        # A reader that went away (gdrb accept ... | head): nothing more to say.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        return common.EXIT_FAIL
