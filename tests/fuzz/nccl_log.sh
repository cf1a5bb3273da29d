#!/bin/bash
# Fuzz tests/fuzz/fuzz_nccl_log.c (tests/fuzz/lib.sh: replay, then libFuzzer).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_c nccl_log
