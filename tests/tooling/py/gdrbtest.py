"""What the unittest files share: scripts/lib on sys.path, the source tree and its fixtures."""
import os
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[3]
SCRIPTS = SRC / "scripts"
DATA = SRC / "tests" / "support" / "data"
GDRB = SCRIPTS / "gdrb"
BUILD = Path(os.environ.get("GDRB_TEST_BUILDDIR") or SRC)

sys.path.insert(0, str(SCRIPTS / "lib"))
