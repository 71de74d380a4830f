#!/usr/bin/env bash
# Builds modelc and runs every test: the lit suite and the runtime unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure
