#!/bin/sh
# Generate configure and Makefile.in from configure.ac and Makefile.am.
# Needs autoconf, automake and pkg-config (scripts/install-deps installs them).
set -e
cd "$(dirname "$0")"
exec autoreconf -fi
