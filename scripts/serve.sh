#!/usr/bin/env bash
# Starts the server on its defaults on a fresh machine: installs what the build needs, builds
# the release binary and runs `gatehouse serve` with any arguments given (lines on
# 127.0.0.1:7411, HTTP on 127.0.0.1:7412, data in ./gatehouse-data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-packages.sh
swift build -c release --product gatehouse
exec .build/release/gatehouse serve "$@"
