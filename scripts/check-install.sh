#!/usr/bin/env bash
# Installs modelc into a temporary prefix, compiles examples/mlp.ir with the
# installed modelc, builds examples/cpp against the installed runtime with
# find_package(modelc), and runs it; then imports the installed Python module
# (where it was built) from the prefix, which compiles with the installed
# modelc and runs the result. Needs ./scripts/build.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install build --prefix "$work/prefix" > /dev/null
"$work/prefix/bin/modelc" examples/mlp.ir --random-weights=1 -o "$work/mlp.so"
cmake -S examples/cpp -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/example" > /dev/null
"$work/example/run_model" "$work/mlp.so"
echo "check-install: the installed runtime and the C++ example work"

# The build says whether the Python module was built, and so must be
# installed: then its package must be there, wherever the install put it.
if compgen -G "build/python/modelc/_core*.so" > /dev/null; then
  site=$(find "$work/prefix" -name '_core*.so' -path "*/modelc/*" -printf '%h\n' | head -n 1)
  site=${site%/modelc}
  if [ -z "$site" ]; then
    echo "check-install: FAILED: build/python/modelc/_core*.so was built, but cmake --install put no modelc/_core*.so under the prefix" >&2
    exit 1
  fi
  python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build/CMakeCache.txt)
  root=$PWD
  (cd "$work" && env -u MODELC PYTHONPATH="$site" "$python" -c "
import modelc, numpy as np
assert modelc.find_modelc() == '$work/prefix/bin/modelc', modelc.find_modelc()
m = modelc.load(modelc.compile('$root/examples/mlp.ir', output='mlp_py.so', random_weights=1))
assert m(np.zeros((64, 784), np.float32)).shape == (64, 10)
")
  echo "check-install: the installed Python module works (${site#"$work/prefix/"})"
else
  echo "check-install: no Python module in this build (build/python/modelc/_core*.so): not checked"
fi
