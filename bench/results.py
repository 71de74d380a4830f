"""What the bench scripts share: running a command from the repository
root, and adding a dated table to bench/RESULTS.md."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    """Runs `cmd` in the repository root; its stdout, or exits with its
    output on failure."""
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def record(table, no_record):
    """Prints `table` and, unless `no_record`, adds it above the older runs
    in bench/RESULTS.md."""
    print(table)
    if no_record:
        return
    path = os.path.join(ROOT, "bench", "RESULTS.md")
    text = open(path).read()
    marker = "Figures are dated and kept; newer runs are added above older ones.\n"
    text = text.replace(marker, marker + "\n" + table, 1)
    open(path, "w").write(text)
    print(f"appended to {path}")


def torch_blas():
    """The BLAS library PyTorch's matrix products load (Debian's torch links
    libblas.so.3, whichever package provides it). Exits when that is the
    reference BLAS: PyTorch's products would then run 20x slower than with
    OpenBLAS (a 64x1024 by 1024x1024 product: 16 ms against 0.7 ms on two
    cores), and every ratio against it would flatter modelc."""
    # Debian's torch and numpy both load the system's libblas.so.3; a
    # BLAS inside a pip-installed torch (MKL) is not a separate mapping:
    # torch's own configuration says so then.
    code = ("import torch\n"
            "torch.ones(64, 64) @ torch.ones(64, 64)\n"
            "maps = [l.split()[-1] for l in open('/proc/self/maps')]\n"
            "hit = [m for m in maps if 'blas' in m or 'mkl' in m]\n"
            "cfg = torch.__config__.show()\n"
            "print(hit[0] if hit else ('mkl' if 'BLAS_INFO=mkl' in cfg else ''))")
    path = subprocess.run([sys.executable if os.path.basename(sys.executable)
                           .startswith("python") else "/usr/bin/python3",
                           "-c", code], capture_output=True, text=True).stdout.strip()
    path = os.path.realpath(path) if path.startswith("/") else path
    if "openblas" not in path and "mkl" not in path:
        sys.exit(f"bench: PyTorch uses the reference BLAS ({path or 'none found'}): "
                 "its products would be unfairly slow; install OpenBLAS "
                 "(apt-get install libopenblas0-pthread) and run again")
    return os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)


def cpu_flags(names):
    """The CPU's model name (lscpu) and which of the CPU flags `names` it
    has, for the machine line every recorded figure carries."""
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = re.search(r"Model name:\s*(.*)", cpu)
    return (model.group(1).strip() if model else "unknown CPU",
            [f for f in names if re.search(rf"\b{f}\b", cpu)])


def training_machine(blas):
    """The machine line of the training benches (train_step.py,
    ddp_step.py): the CPU, its vector and matrix flags, PyTorch's BLAS."""
    cpu, flags = cpu_flags(("avx2", "avx512f", "avx512_bf16", "amx_tile"))
    return f"{cpu} ({', '.join(flags) or 'no AVX2'}); PyTorch's BLAS {blas}"
