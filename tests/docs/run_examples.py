#!/usr/bin/python3
"""Runs the code examples of README.md and docs/*.md that are marked to run
(issue 30: what a new user reads is what they get).

    run_examples.py ROOT BUILD WORK

A fenced block whose info string is `cpp example`, `python example` or
`sh example` is run in WORK, where examples/ is linked, mlp.so is
examples/mlp.ir compiled for the CPU (random weights, seed 1),
other.safetensors holds other weights for it, and tests/docs/fixtures/*
are copied:

* cpp: compiled against the runtime installed from BUILD (find_package,
  as a user's project does); a block without `int main` is the body of one
  (<modelc/runtime.hpp>, <vector> and <iostream> included); it must exit 0.
* python: run by the interpreter the module was built for, with the
  build's module on PYTHONPATH; it must exit 0.
* sh: lines starting with `$ ` are commands (BUILD/bin first on PATH);
  the lines after each, up to the next command, are its expected output
  (stdout and stderr), compared exactly; a block without `$ ` runs as a
  script that must exit 0.

Prints one line per example (FILE:LINE LANG ok|FAIL) and exits 1 when one
fails.
"""
import glob
import os
import re
import shutil
import subprocess
import sys


def blocks(root):
    """(file, line, lang, text) of every block marked `example`."""
    paths = [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    for path in paths:
        lines = open(path).read().split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w+)\s+example\s*$", lines[i])
            if not m:
                i += 1
                continue
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield (os.path.relpath(path, root), start, m.group(1),
                   "\n".join(lines[start:j]) + "\n")
            i = j + 1


def python_of(build):
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("Python3_EXECUTABLE:"):
            return line.split("=", 1)[1].strip()
    return "/usr/bin/python3"


def run(command, work, env, **kwargs):
    return subprocess.run(command, cwd=work, env=env, capture_output=True,
                          text=True, timeout=600, **kwargs)


def main():
    root, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.symlink(os.path.join(root, "examples"), os.path.join(work, "examples"))
    for fixture in glob.glob(os.path.join(root, "tests", "docs", "fixtures", "*")):
        shutil.copy(fixture, work)
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.path.join(build, "python")
    env["MODELC_DEFAULT_TARGETS"] = "cpu"
    modelc = os.path.join(build, "bin", "modelc")
    for args in (["--random-weights=1", "-o", "mlp.so"],
                 ["--random-weights=2", "--emit=so", "-o", "other.so",
                  "--save-weights", "other.safetensors"]):
        r = run([modelc, "examples/mlp.ir", "--target=cpu"] + args, work, env)
        if r.returncode:
            sys.exit("run_examples.py: cannot build mlp.so: " + r.stderr)

    found = list(blocks(root))
    failures = 0
    cpp = [b for b in found if b[2] == "cpp"]
    results = {}
    if cpp:
        results.update(build_cpp(cpp, build, work, env))
    for path, line, lang, text in found:
        where = "%s:%d %s" % (path, line, lang)
        if lang == "cpp":
            ok, why = results[(path, line)]
        elif lang == "python":
            r = run([python_of(build), "-c", text], work, env)
            ok, why = r.returncode == 0, r.stdout + r.stderr
        elif lang == "sh":
            ok, why = run_sh(text, work, env)
        else:
            ok, why = False, "unknown language " + lang
        print("%s %s" % (where, "ok" if ok else "FAIL"))
        if not ok:
            failures += 1
            print("  " + why.replace("\n", "\n  "))
    print("%d examples, %d failed" % (len(found), failures))
    sys.exit(1 if failures or not found else 0)


def build_cpp(cpp, build, work, env):
    """Installs the runtime from BUILD and builds and runs each example."""
    prefix = os.path.join(work, "prefix")
    r = run(["cmake", "--install", build, "--prefix", prefix], work, env)
    if r.returncode:
        return {(p, l): (False, "cmake --install: " + r.stderr)
                for p, l, _, _ in cpp}
    project = os.path.join(work, "cpp")
    os.makedirs(project)
    cmake = ["cmake_minimum_required(VERSION 3.20)",
             "project(doc_examples CXX)",
             "find_package(modelc REQUIRED)"]
    for k, (path, line, _, text) in enumerate(cpp):
        source = text
        if "int main" not in text:
            source = ("#include <modelc/runtime.hpp>\n#include <iostream>\n"
                      "#include <vector>\n\nint main() {\n" + text +
                      "  return 0;\n}\n")
        with open(os.path.join(project, "example%d.cpp" % k), "w") as f:
            f.write("// %s:%d\n%s" % (path, line, source))
        cmake.append("add_executable(example%d example%d.cpp)" % (k, k))
        cmake.append("target_link_libraries(example%d PRIVATE modelc::runtime)"
                     % k)
    with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
        f.write("\n".join(cmake) + "\n")
    out = os.path.join(work, "cpp-build")
    r = run(["cmake", "-S", project, "-B", out, "-G", "Ninja",
             "-DCMAKE_PREFIX_PATH=" + prefix], work, env)
    if r.returncode == 0:
        r = run(["cmake", "--build", out], work, env)
    results = {}
    for k, (path, line, _, _) in enumerate(cpp):
        binary = os.path.join(out, "example%d" % k)
        if not os.path.exists(binary):
            results[(path, line)] = (False, r.stdout + r.stderr)
            continue
        e = run([binary], work, env)
        results[(path, line)] = (e.returncode == 0, e.stdout + e.stderr)
    return results


def run_sh(text, work, env):
    lines = text.rstrip("\n").split("\n")
    if not any(l.startswith("$ ") for l in lines):
        r = run(["bash", "-euo", "pipefail", "-c", text], work, env)
        return r.returncode == 0, r.stdout + r.stderr
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            return False, "output before any command: " + lines[i]
        command = lines[i][2:]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        r = run(["bash", "-o", "pipefail", "-c", command + " 2>&1"], work,
                env)
        got = r.stdout.rstrip("\n").split("\n") if r.stdout else []
        if got != expected:
            return False, ("$ %s\nexpected:\n%s\ngot:\n%s"
                           % (command, "\n".join(expected), "\n".join(got)))
    return True, ""


if __name__ == "__main__":
    main()
