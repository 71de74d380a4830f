#!/usr/bin/python3
"""tests/e2e/Inputs/ops.ir with a dynamic leading dimension, for
tests/e2e/dynamic.test (docs/dynamic.md).

  dynamic_ops.py split OPS_IR DIR       one file per entry: DIR/ENTRY.ir
  dynamic_ops.py join OPS_IR OUT ENTRY...   the entries named, in one file

Each entry gets its own dimension, b_ENTRY, from 1 to the size of its first
argument's dimension 0; every argument whose dimension 0 has that size
takes it (the others, broadcast along it, stay static)."""
import re
import sys

FUNC = re.compile(r"^func\.func @(\w+)\((.*?)\)(\s*->.*)?$")
ARG = re.compile(r"(%\w+): tensor<([^>]*)>")


def entries(text):
    """(name, the lines of the entry) in the file's order."""
    out, current = [], None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            current = [m.group(1), [line]]
            out.append(current)
        elif current is not None:
            current[1].append(line)
            if line.startswith("}"):
                current = None
    return out


def dynamic(name, lines):
    """The entry with dimension b_NAME, and its declaration."""
    m = FUNC.match(lines[0])
    args = ARG.findall(m.group(2))
    dims = [a[1].split("x")[:-1] for a in args]
    if not dims or not dims[0]:
        return None
    size = dims[0][0]

    def named(match):
        shape = match.group(2).split("x")[:-1]
        if not shape or shape[0] != size:
            return match.group(0)
        axes = ", ".join(['"b_%s"' % name] + ['""'] * (len(shape) - 1))
        return "%s: tensor<%s> {graph.dims = [%s]}" % (
            match.group(1), match.group(2), axes)

    head = FUNC.match(lines[0])
    first = "func.func @%s(%s)%s" % (name, ARG.sub(named, head.group(2)),
                                      head.group(3) or "")
    decl = "graph.dim @b_%s 1 to %s at %s" % (name, size, size)
    return decl + "\n" + "\n".join([first] + lines[1:]) + "\n"


def main():
    mode, ops = sys.argv[1], open(sys.argv[2]).read()
    preamble = ops[:ops.index("func.func")]
    found = [(n, dynamic(n, l)) for n, l in entries(ops)]
    if mode == "split":
        for name, text in found:
            if text:
                with open("%s/%s.ir" % (sys.argv[3], name), "w") as f:
                    f.write(preamble + text)
            print(name if text else "%s (no leading dimension)" % name)
    else:
        wanted = sys.argv[4:]
        with open(sys.argv[3], "w") as f:
            f.write(preamble)
            for name, text in found:
                if name in wanted:
                    f.write(text + "\n")


if __name__ == "__main__":
    main()
