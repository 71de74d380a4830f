"""Runs the Python module's pytest suite (ctest's `python` test). Exits 77,
which ctest counts as skipped, when pytest or numpy is not installed."""

import os
import sys

for module, package in (("pytest", "python3-pytest"), ("numpy", "python3-numpy")):
    try:
        __import__(module)
    except ImportError:
        print("python tests skipped: %s is not installed (Debian: %s)"
              % (module, package))
        sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main([here, "-p", "no:cacheprovider", "-rs"] + sys.argv[1:]))
