#!/usr/bin/env python3
"""Golden vectors for lplab's E8M0 scale rules (kernels/scale_rules.h), from
torchao 0.18.0's MX reference, torchao.prototype.mx_formats.mx_tensor.to_mx,
run eagerly on the CPU under each ScaleCalculationMode: FLOOR, RCEIL, CEIL,
EVEN (lplab's floor, rceil, ceil_amax, even).

Runs in a development environment with torch and torchao; CI never runs it,
it reads the file this writes (python/tests/test_torchao_goldens.py):

    python3 -m venv build/devenv
    build/devenv/bin/pip install torch numpy
    build/devenv/bin/pip install --no-deps torchao==0.18.0
    build/devenv/bin/python scripts/torchao-goldens.py tests/data/torchao/goldens.txt

Every case is a rows x 128 float32 tensor (four blocks of 32 per row),
quantized to each element format (float8_e4m3fn, float8_e5m2, fp6_e2m3,
fp6_e3m2, float4_e2m1fn) under each mode: N(0,1) activations, heavy tails,
blocks whose amax sits on and beside the powers of two and on max_elem times
them (where the rules part), blocks in float32's subnormal range and near
its maximum, zero blocks, and blocks holding an infinity or a NaN. The file
is text, one record per line:

    case NAME ELEM ROWS COLS
    x HEX32 ...          (the input, row-major, float32 bits)
    then for each mode:
    mode MODE
    s HEX2 ...           (E8M0 scale codes, one per block of 32)
    q HEX2HEX2...        (element codes, two hex digits each, unseparated;
                          FP4 unpacked from torchao's pairs, the even
                          element in the low nibble)
"""
import math
import sys

import numpy as np
import torch
import torchao
from torchao.prototype.mx_formats.mx_tensor import to_mx
from torchao.prototype.mx_formats.config import ScaleCalculationMode

ROWS, COLS, BLOCK = 4, 128, 32
ELEMS = [("float8_e4m3fn", torch.float8_e4m3fn, 448.0), ("float8_e5m2", torch.float8_e5m2, 57344.0),
         ("float6_e2m3fn", "fp6_e2m3", 7.5), ("float6_e3m2fn", "fp6_e3m2", 28.0),
         ("float4_e2m1fn", torch.float4_e2m1fn_x2, 6.0)]
MODES = ["FLOOR", "RCEIL", "CEIL", "EVEN"]


def f32(v):
    """v rounded to float32 (inf past its range)."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def next_up(v, n=1):
    return float(np.nextafter(np.float32(v), np.float32(np.inf)) if n == 1 else next_up(next_up(v), n - 1))


def next_down(v):
    return float(np.nextafter(np.float32(v), np.float32(-np.inf)))


def boundary_amaxes(max_elem):
    """amax values on and beside 2^k and max_elem * 2^k: where floor, ceil,
    rceil and even part."""
    out = []
    for k in (-130, -127, -126, -100, -20, -3, 0, 1, 7, 20, 100, 120, 127):
        for base in (2.0 ** k, max_elem * 2.0 ** k):
            b = f32(base)
            if not math.isfinite(b) or b == 0:
                continue
            out += [b, next_up(b), next_down(b), next_up(b, 3)]
    return out


def blocks_with_amax(amaxes, rng):
    """One block per amax: N(0,1) values scaled below it, the amax at a random
    position with a random sign."""
    rows = []
    for a in amaxes:
        block = rng.standard_normal(BLOCK).astype(np.float32)
        block = (block / np.max(np.abs(block)) * np.float32(a) * np.float32(0.999)).astype(np.float32)
        i = rng.integers(BLOCK)
        block[i] = np.float32(a) * (1 if rng.integers(2) else -1)
        rows.append(block)
    while len(rows) % (COLS // BLOCK):
        rows.append(np.zeros(BLOCK, np.float32))
    return np.concatenate(rows).reshape(-1, COLS)


def cases(max_elem, rng):
    yield "normal", rng.standard_normal((ROWS, COLS)).astype(np.float32)
    heavy = rng.standard_normal((ROWS, COLS)) * np.exp(2.0 * rng.standard_normal((ROWS, COLS)))
    yield "heavy_tails", heavy.astype(np.float32)
    yield "boundaries", blocks_with_amax(boundary_amaxes(max_elem), rng)
    tiny = [f32(2.0 ** -149), f32(2.0 ** -140), f32(3 * 2.0 ** -135), f32(2.0 ** -127), f32(1.5 * 2.0 ** -126)]
    huge = [f32(3.0e38), f32(np.finfo(np.float32).max), f32(2.0 ** 126), f32(1.5 * 2.0 ** 127)]
    yield "extremes", blocks_with_amax(tiny + huge + [0.0, 0.0, 0.0], rng)
    special = rng.standard_normal((2, COLS)).astype(np.float32)
    special[0, 3] = np.inf          # block 0: +inf
    special[0, 40] = -np.inf        # block 1: -inf
    special[0, 70] = np.nan         # block 2: NaN
    special[1, 100] = np.nan        # row 1, block 3: NaN beside finite values
    special[1, 5] = np.inf          # row 1, block 0: inf
    special[1, 6] = np.nan          # and a NaN in the same block
    yield "specials", special


def element_codes(data_lp, torch_elem):
    if torch_elem in (torch.float8_e4m3fn, torch.float8_e5m2):
        return data_lp.view(torch.uint8).flatten().tolist()
    if torch_elem == torch.float4_e2m1fn_x2:
        packed = data_lp.view(torch.uint8).flatten().tolist()
        out = []
        for b in packed:
            out += [b & 0xF, b >> 4]
        return out
    return data_lp.view(torch.uint8).flatten().tolist()  # fp6: one code per byte


def main():
    out_path = sys.argv[1]
    lines = [f"# torchao {torchao.__version__} prototype.mx_formats.mx_tensor.to_mx (eager, CPU), "
             f"torch {torch.__version__}; written by scripts/torchao-goldens.py"]
    for name, torch_elem, max_elem in ELEMS:
        rng = np.random.default_rng(20260 + len(lines))
        for case, x in cases(max_elem, rng):
            lines.append(f"case {case} {name} {x.shape[0]} {x.shape[1]}")
            lines.append("x " + " ".join(f"{v:08x}" for v in x.view(np.uint32).flatten()))
            for mode in MODES:
                scale, data_lp = to_mx(torch.from_numpy(x.copy()), torch_elem, BLOCK, ScaleCalculationMode[mode])
                s = scale.view(torch.uint8).flatten().tolist()
                q = element_codes(data_lp, torch_elem)
                assert len(s) == x.size // BLOCK and len(q) == x.size
                lines.append(f"mode {mode}")
                lines.append("s " + " ".join(f"{v:02x}" for v in s))
                lines.append("q " + "".join(f"{v:02x}" for v in q))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
