#!/bin/bash
# The unittest suite of scripts/gdrb (tests/tooling/py/test_*.py), Python 3.8+ standard library only.
# A planted failing test shows the runner reports failures.
# shellcheck source=../support/lib.sh
. "$(dirname "$0")/../support/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "python3 is older than 3.8"

mkdir -p "$WORK/planted"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.fail("planted")\n' \
	>"$WORK/planted/test_planted.py"
! python3 -m unittest discover -s "$WORK/planted" >/dev/null 2>&1 || fail "unittest passes a planted failure"

export GDRB_TEST_BUILDDIR=$top_builddir
PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s "$top_srcdir/tests/tooling/py" -t "$top_srcdir/tests/tooling/py" -v 2>&1 ||
	fail "the unittest suite reports the failures above"
pass "tests/tooling/py: every unittest passes"
