#!/bin/bash
# Fuzz tests/fuzz/fuzz_csv.py (tests/fuzz/lib.sh: replay, then atheris).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_py csv
