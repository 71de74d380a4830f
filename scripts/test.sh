#!/usr/bin/env bash
# Builds modelc and runs every test: the lit suite, the runtime unit tests and
# the Python module's pytest suite (tests/python).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure
