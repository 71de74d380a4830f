# lit configuration of the modelc test suite.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "modelc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "runtime", "Inputs"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.modelc_obj_root, "tests")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.modelc_src_root, "examples")))
config.substitutions.append(("%srcroot", config.modelc_src_root))
config.substitutions.append(("%objroot", config.modelc_obj_root))
config.substitutions.append(("%fixtures", os.path.join(config.modelc_obj_root, "tests", "fixtures")))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.modelc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["modelc", "modelc-opt", "modelc-run", "modelc-run-lite", "modelc-onnx-fuzz", "modelc-ir-fuzz", "modelc-seal"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# long-tests: tests that write gigabytes or take minutes (big weights), run
# with MODELC_LONG_TESTS=1.
if os.environ.get("MODELC_LONG_TESTS") == "1":
    config.available_features.add("long-tests")

# nvcc: tests of GPU code that must compile where the CUDA toolkit exists.
if shutil.which("nvcc") or os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
    config.available_features.add("nvcc")

# mpi: Open MPI's mpirun and the communication plugin built against it
# (runtime/plugins/mpi; setup-debian.sh installs openmpi-bin and
# libopenmpi-dev). %mpirun runs local ranks as root (CI runs as root) and on
# more ranks than cores.
if shutil.which("mpirun") and os.path.exists(os.path.join(
        config.modelc_obj_root, "lib", "modelc", "libmodelc_comm_mpi.so")):
    config.available_features.add("mpi")
config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
# Shared-memory copies without cross-memory attach, which containers often
# forbid (ptrace): slower, works everywhere; the tests move kilobytes.
config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
config.substitutions.append(("%mpirun", "mpirun --oversubscribe"))

# torch: /usr/bin/python3 has Debian's python3-torch and python3-numpy, which
# tests/torch compares modelc's numerics with (scripts/setup-debian.sh
# installs them, so CI runs those tests). Looked up rather than imported:
# importing torch takes seconds, and a torch that is there but broken makes
# those tests fail instead of being skipped.
if os.access("/usr/bin/python3", os.X_OK) and subprocess.run(
        ["/usr/bin/python3", "-c", "import importlib.util as u, sys; "
         "sys.exit(not (u.find_spec('torch') and u.find_spec('numpy')))"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")

# onnx: /usr/bin/python3 has Debian's python3-onnx, which tests/onnx uses to
# write test models (setup-debian.sh installs it).
if os.access("/usr/bin/python3", os.X_OK) and subprocess.run(
        ["/usr/bin/python3", "-c", "import importlib.util as u, sys; "
         "sys.exit(not u.find_spec('onnx'))"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("onnx")

# torchvision: Debian's python3-torchvision, for the real models
# tests/onnx/models.test exports (ResNet-18, MobileNetV2/V3).
if os.access("/usr/bin/python3", os.X_OK) and subprocess.run(
        ["/usr/bin/python3", "-c", "import importlib.util as u, sys; "
         "sys.exit(not u.find_spec('torchvision'))"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torchvision")

# The entry points of an IR file (its func.func names), one a line: e2e loops
# over tests/e2e/Inputs/ops.ir run every entry found there, so a new entry is
# tested on every device path without being listed anywhere.
# (lit applies substitutions with re.sub: no backslash in the text.)
config.substitutions.append(
    ("%{ir-entries}", "awk -F '[@(]' '/^func[.]func @/ { print $2 }'"))

# The stand-in CUDA driver's adversarial mode (streams on threads of their
# own, graphs replayed in any order their dependencies allow: see
# tests/runtime/fixtures/fake_libcuda.c): FAKE_CUDA_ADVERSARIAL=SEED in the
# environment of lit runs every emulated-GPU test under it;
# tests/e2e/gpu-adversarial.test always does, for several seeds.
if "FAKE_CUDA_ADVERSARIAL" in os.environ:
    config.environment["FAKE_CUDA_ADVERSARIAL"] = os.environ["FAKE_CUDA_ADVERSARIAL"]

# Without --target, modelc builds 'cpu' plus a one-GPU plan where nvcc exists;
# the suite asks for its targets explicitly (tests/Driver/default-targets.test
# checks the default set itself).
config.environment["MODELC_DEFAULT_TARGETS"] = "cpu"

# modelc's precompiled headers (docs/cli.md) in the build folder, not the
# user's cache: made once per compiler and flags, then used by every test.
config.environment["MODELC_CACHE_DIR"] = os.path.join(
    config.modelc_obj_root, "tests", "modelc-cache")

# Generated code at -O1 instead of modelc's -O3 (tests/fast-cxx): the suite
# spends most of its time compiling models, and -O1 halves that with the
# same results bit for bit (tests/Driver/opt-levels.test compares the two).
# MODELC_TEST_O3=1 keeps modelc's -O3.
if os.environ.get("MODELC_TEST_O3") != "1":
    config.environment["CXX"] = os.path.join(config.test_source_root,
                                             "fast-cxx")
