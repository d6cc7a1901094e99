#!/usr/bin/env bash
# Runs the test suite on a fresh machine: installs what it needs, then `swift test` with any
# arguments given (for example `-Xswiftc -warnings-as-errors`, or `--filter HTTPListener`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-packages.sh
exec swift test "$@"
