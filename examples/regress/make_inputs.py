#!/usr/bin/env python3
"""Writes the example inputs of spec.yaml (docs/regress.md) with the standard
library alone, so that no NumPy is needed to regenerate them:

  acts.npy   float32 (32, 64)  activations: N(0, 1) with a few outliers
  grads.npy  float32 (2048,)   gradients: signed log-normal over ~14 decades
  ref.npy    float64 (16, 16)  an fp64 reference C = A B, k = 64
  out.npy    float32 (16, 16)  "my kernel's output": the reference rounded to bf16

The .npy layout is NumPy's format version 1.0 (numpy.lib.format): the magic
b"\\x93NUMPY", version 1 0, a little-endian uint16 header length, a Python
dict literal padded with spaces to a multiple of 64 bytes ending in a
newline, then the data in C order.
"""
import math
import os
import random
import struct
import sys


def write_npy(path, dtype, shape, values):
    code = {"float32": ("<f4", "f"), "float64": ("<f8", "d")}[dtype]
    shape_text = "(%s)" % "".join("%d, " % s for s in shape).rstrip() if len(shape) == 1 else str(tuple(shape))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (code[0], shape_text)
    # magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code[1]), *values))


def to_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def to_bfloat16(x):
    """x (a float32 value) rounded to nearest-even into bfloat16, as float."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits += 0x7FFF + ((bits >> 16) & 1)  # round the low 16 bits to nearest, ties to even
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFF0000))[0]


def main(out_dir):
    rng = random.Random(20261122)
    acts = [rng.gauss(0.0, 1.0) for _ in range(32 * 64)]
    for i in rng.sample(range(len(acts)), 8):  # outliers, as LLM activations have
        acts[i] *= 40.0
    write_npy(os.path.join(out_dir, "acts.npy"), "float32", (32, 64), [to_float32(v) for v in acts])

    grads = [rng.choice((-1.0, 1.0)) * 1e-6 * math.exp(4.0 * rng.gauss(0.0, 1.0)) for _ in range(2048)]
    write_npy(os.path.join(out_dir, "grads.npy"), "float32", (2048,), [to_float32(v) for v in grads])

    m = n = 16
    k = 64
    a = [[rng.gauss(0.0, 1.0) for _ in range(k)] for _ in range(m)]
    b = [[rng.gauss(0.0, 1.0) for _ in range(n)] for _ in range(k)]
    ref = [math.fsum(a[i][t] * b[t][j] for t in range(k)) for i in range(m) for j in range(n)]
    write_npy(os.path.join(out_dir, "ref.npy"), "float64", (m, n), ref)
    write_npy(os.path.join(out_dir, "out.npy"), "float32", (m, n), [to_bfloat16(to_float32(v)) for v in ref])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
