#!/usr/bin/env bash
# Regenerates the op and pass reference in docs/reference/ from the ODS and
# pass definitions (the `docs-current` test fails until this is run after a
# change to a .td file).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target mlir-doc
for f in GraphOps DeviceOps SchedOps ModelcPasses; do
  cp "build/docs/$f.md" "docs/reference/$f.md"
done
