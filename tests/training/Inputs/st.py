"""Reads and writes safetensors files with numpy alone, for the training tests.

    save_safetensors(path, {name: numpy array})
    load_safetensors(path) -> {name: numpy array}

The format: an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}} (offsets relative to
the end of the header), then the tensors' raw little-endian bytes. Names are
written sorted and the tensors back to back. No dependency on the
`safetensors` module.
"""
import json
import os
import struct

import numpy as np

_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U8": np.uint8, "BOOL": np.bool_,
}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name])
        if a.dtype not in _NAMES:
            raise TypeError(f"{name}: dtype {a.dtype} has no safetensors name")
        data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    body = raw[8 + n:]
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        a = np.frombuffer(body[begin:end], dtype=dtype).reshape(info["shape"])
        out[name] = a.astype(dtype.newbyteorder("="))
    return out


def load_tensors(path):
    """A safetensors file's tensors, or those of a directory of NAME.npy
    files (modelc-run --output-dir of the gradients entry point), by name."""
    if os.path.isdir(path):
        return {f[:-4]: np.load(os.path.join(path, f))
                for f in os.listdir(path) if f.endswith(".npy")}
    return load_safetensors(path)
