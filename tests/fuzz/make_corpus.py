#!/usr/bin/env python3
"""make_corpus.py - writes the fuzzers' seed corpus (corpus/npy,
corpus/safetensors, corpus/descriptor): a few valid files and the malformed
cases of issue 15, and byte strings for the descriptor fuzzer.
The corpus is committed; rerun this only to change it (needs numpy)."""
import io
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path, data):
    full = os.path.join(HERE, "corpus", path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)


def npy(arr, **kw):
    b = io.BytesIO()
    np.lib.format.write_array(b, arr, **kw)
    return b.getvalue()


def npy_raw(header, data=b"", major=1):
    h = header.encode()
    length = struct.pack("<H" if major == 1 else "<I", len(h))
    return b"\x93NUMPY" + bytes([major, 0]) + length + h + data


def npy_dict(descr, shape, fortran="False"):
    return ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }\n"
            % (descr, fortran, shape))


def st(header, data=b""):
    h = header.encode()
    return struct.pack("<Q", len(h)) + h + data


def npy_corpus():
    write("npy/valid_f32_2x3", npy(np.arange(6, dtype="<f4").reshape(2, 3)))
    write("npy/valid_i64_scalar", npy(np.array(7, dtype="<i8")))
    write("npy/valid_bool_3", npy(np.array([True, False, True])))
    write("npy/valid_f16_v2", npy(np.ones((2, 2), dtype="<f2"),
                                  version=(2, 0)))
    write("npy/valid_i32_v3_empty", npy(np.zeros((0, 4), dtype="<i4"),
                                        version=(3, 0)))
    write("npy/bad_empty_descr", npy_raw(npy_dict("''", "(2,)"), bytes(8)))
    write("npy/bad_descr_no_value", npy_raw(npy_dict("", "(2,)"), bytes(8)))
    write("npy/bad_shape_text", npy_raw(npy_dict("'<f4'", "(2, x)")))
    write("npy/bad_shape_int64",
          npy_raw(npy_dict("'<f4'", "(99999999999999999999,)")))
    write("npy/bad_shape_overflow",
          npy_raw(npy_dict("'<f4'", "(4294967296, 4294967296)")))
    write("npy/bad_v2_header_4gib", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}")
    write("npy/bad_fortran",
          npy_raw(npy_dict("'<f4'", "(2,)", "True"), bytes(8)))
    write("npy/bad_truncated_data",
          npy_raw(npy_dict("'<f4'", "(3,)"), bytes(8)))


def safetensors_corpus():
    good = json.dumps({
        "__metadata__": {"format": "pt"},
        "fc.weight": {"dtype": "F32", "shape": [2, 2],
                      "data_offsets": [0, 16]},
        "fc.bias": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]},
        "step": {"dtype": "I64", "shape": [], "data_offsets": [24, 32]},
    }, separators=(",", ":"))
    write("safetensors/valid_three", st(good, bytes(range(32))))
    write("safetensors/valid_empty", st("{}"))
    write("safetensors/valid_dtypes", st(json.dumps({
        "h": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
        "b": {"dtype": "BF16", "shape": [1], "data_offsets": [4, 6]},
        "i": {"dtype": "I32", "shape": [1], "data_offsets": [6, 10]},
        "m": {"dtype": "BOOL", "shape": [2, 0], "data_offsets": [10, 10]},
        "t": {"dtype": "BOOL", "shape": [2], "data_offsets": [10, 12]},
    }), bytes(12)))
    write("safetensors/valid_escapes", st(
        '{"a\\u00e9\\"\\n\\ud83d\\ude00":{"dtype":"F32","shape":[1],'
        '"data_offsets":[0,4]},'
        '"__metadata__":{"n":[1,-2.5e3,true,null,{"x":[]}]}}', bytes(4)))
    one = '{"%s":{"dtype":"F32","shape":%s,"data_offsets":%s}}'
    write("safetensors/bad_escape", st(one % ("\\uZZZZ", "[1]", "[0,4]"),
                                       bytes(4)))
    write("safetensors/bad_int64",
          st(one % ("a", "[99999999999999999999]", "[0,4]"), bytes(4)))
    write("safetensors/bad_deep_metadata",
          st('{"__metadata__":' + "[" * 1000 + "]" * 999 + "}"))
    write("safetensors/bad_shape_overflow",
          st(one % ("a", "[4294967296,4294967296]", "[0,0]")))
    write("safetensors/bad_overlap", st(
        '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
        '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', bytes(12)))
    write("safetensors/bad_duplicate", st(
        '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        '"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', bytes(8)))
    write("safetensors/bad_truncated", st(good, bytes(20)))


def descriptor_corpus():
    # The descriptor fuzzer reads its bytes as choices (counts, codes,
    # dimensions): a few fixed-seed byte strings to start from.
    rng = np.random.default_rng(5)
    write("descriptor/zeros", bytes(64))
    write("descriptor/ones", bytes([1]) * 256)
    for i in range(3):
        write(f"descriptor/random{i}", rng.integers(0, 256, 512,
                                                     dtype=np.uint8).tobytes())


if __name__ == "__main__":
    npy_corpus()
    safetensors_corpus()
    descriptor_corpus()
